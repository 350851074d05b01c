"""kiln.profiler and kiln.autograd.profiler against torch's: the same operator events (names,
nesting, input shapes) for the same calls, the same autograd node events, the same schedule and
on_trace_ready steps, the same table header and errors; times checked against time.sleep."""
import json
import os
import time

import pytest
import torch

import kiln
import kiln.profiler as KP
import torch.profiler as TP


def names(events, top_level=False):
    return [e.name for e in events if not top_level or e.cpu_parent is None]


def run_block(lib):
    a = lib.ones(2, 3)
    b = lib.ones(3, 4)
    a.mm(b)
    lib.cat([a, a])
    a.add(a).relu()
    lib.sum(b)


def test_top_level_operator_events_are_torchs():
    with KP.profile(activities=[KP.ProfilerActivity.CPU]) as kp:
        run_block(kiln)
    with TP.profile(activities=[TP.ProfilerActivity.CPU]) as tp:
        run_block(torch)
    called = ["aten::ones", "aten::ones", "aten::mm", "aten::cat", "aten::add", "aten::relu", "aten::sum"]
    assert names(kp.events(), top_level=True) == called
    # torch's own list holds these calls in this order too, among stray extras of its own (1.13 adds a
    # top-level aten::fill_ after torch.ones, and in some process states a second aten::sum).
    remaining = iter(names(tp.events(), top_level=True))
    assert all(any(n == c for n in remaining) for c in called)
    # Nested events are the operators an op runs (kiln's ones: empty + fill_, as torch's).
    ones = next(e for e in kp.events() if e.name == "aten::ones")
    assert [c.name for c in ones.cpu_children] == ["aten::empty", "aten::fill_"]


def test_input_shapes_of_tensor_arguments_are_torchs():
    def block(lib):
        x = lib.ones(2, 3)
        w = lib.ones(3, 5)
        x.mm(w)
        lib.cat([x, x])

    with KP.profile(record_shapes=True) as kp:
        block(kiln)
    with TP.profile(record_shapes=True) as tp:
        block(torch)
    mm_k = [e for e in kp.events() if e.name == "aten::mm"]
    mm_t = [e for e in tp.events() if e.name == "aten::mm"]
    assert [e.input_shapes for e in mm_k] == [e.input_shapes for e in mm_t] == [[[2, 3], [3, 5]]]
    # Without record_shapes no shapes are kept, as torch.
    with KP.profile() as kp2:
        block(kiln)
    assert all(e.input_shapes == [] for e in kp2.events())


def test_call_counts_and_key_averages():
    x = kiln.ones(4)
    with kiln.autograd.profiler.profile() as prof:
        for _ in range(5):
            x.add(1.0)
        for _ in range(3):
            kiln.mul(x, x)
    avg = {e.key: e for e in prof.key_averages()}
    assert avg["aten::add"].count == 5
    assert avg["aten::mul"].count == 3
    assert avg["aten::add"].cpu_time_total == pytest.approx(
        sum(e.cpu_time_total for e in prof.function_events if e.name == "aten::add"))
    assert avg["aten::add"].cpu_time == pytest.approx(avg["aten::add"].cpu_time_total / 5)


def test_backward_node_events_are_torchs():
    def block(lib):
        a = lib.ones(2, 3, requires_grad=True)
        b = lib.ones(3, 4)
        y = a.mm(b).relu().sum()
        y.backward()

    with KP.profile() as kp:
        block(kiln)
    with TP.profile() as tp:
        block(torch)

    def engine_events(events):
        out = [e.name.replace("torch::autograd::", "") for e in events
               if e.name.startswith("autograd::engine::evaluate_function")]
        return out

    assert engine_events(kp.events()) == engine_events(tp.events())
    # Each node's own event sits inside the engine's, as torch's.
    node = next(e for e in kp.events() if e.name == "MmBackward0")
    assert node.cpu_parent.name == "autograd::engine::evaluate_function: MmBackward0"
    # The operators a node runs are its children (torch: aten::mm under MmBackward0).
    assert "aten::mm" in [c.name for c in node.cpu_children]


def test_record_function_scopes_time_and_nesting():
    x = kiln.ones(8)
    with KP.profile() as prof:
        with KP.record_function("outer"):
            time.sleep(0.02)
            with kiln.autograd.profiler.record_function("inner"):
                x.exp()
    events = prof.events()
    outer = next(e for e in events if e.name == "outer")
    inner = next(e for e in events if e.name == "inner")
    exp = next(e for e in events if e.name == "aten::exp")
    assert inner.cpu_parent is outer and exp.cpu_parent is inner
    assert outer.cpu_time_total >= 20000  # microseconds: the sleep is inside
    assert outer.self_cpu_time_total == pytest.approx(outer.cpu_time_total - inner.cpu_time_total)
    assert inner.time_range.start >= outer.time_range.start and inner.time_range.end <= outer.time_range.end


def test_record_function_as_decorator_and_outside_a_profile():
    @KP.record_function("step_fn")
    def step(t):
        return t * 2

    step(kiln.ones(2))  # no profile: nothing recorded, nothing raised
    with KP.profile() as prof:
        out = step(kiln.ones(2))
    assert out.tolist() == [2.0, 2.0]
    scope = next(e for e in prof.events() if e.name == "step_fn")
    assert [c.name for c in scope.cpu_children] == ["aten::mul"]


def test_nothing_recorded_after_the_profile_ends():
    x = kiln.ones(3)
    with KP.profile() as prof:
        x.neg()
    n = len(prof.events())
    x.neg()
    assert len(prof.events()) == n and not kiln._C._profiler_enabled()


@pytest.mark.filterwarnings("ignore:Profiler won.t be using warmup")
@pytest.mark.parametrize("kwargs", [dict(wait=1, warmup=1, active=2), dict(wait=0, warmup=2, active=1, repeat=3),
                                    dict(wait=2, warmup=1, active=3, repeat=1, skip_first=3),
                                    dict(wait=1, warmup=0, active=1, repeat=2)])
def test_schedule_is_torchs(kwargs):
    with _maybe_warns(kwargs):
        ks = KP.schedule(**kwargs)
    ts = TP.schedule(**kwargs)
    assert [ks(i).name for i in range(30)] == [ts(i).name for i in range(30)]


def _maybe_warns(kwargs):
    if kwargs.get("warmup") == 0:
        return pytest.warns(UserWarning, match="warmup")
    import contextlib
    return contextlib.nullcontext()


def test_schedule_rejects_what_torch_rejects():
    for bad in [dict(wait=-1, warmup=1, active=1), dict(wait=1, warmup=1, active=0)]:
        with pytest.raises(AssertionError):
            TP.schedule(**bad)
        with pytest.raises(AssertionError):
            KP.schedule(**bad)


def steps_and_traces(lib, P):
    calls = []

    def handler(p):
        calls.append((p.step_num, sorted({e.trace_name for e in p.events() if e.name == "ProfilerStep*"}),
                      sum(1 for e in p.events() if e.name == "aten::add")))

    with P.profile(schedule=P.schedule(wait=1, warmup=1, active=2, repeat=2), on_trace_ready=handler) as prof:
        for _ in range(10):
            lib.ones(2).add(1)
            prof.step()
    return calls


def test_on_trace_ready_steps_and_step_events_are_torchs():
    kiln_calls = steps_and_traces(kiln, KP)
    # When the trace is ready and how many adds it holds: torch's.
    assert [(n, adds) for n, _, adds in kiln_calls] == [(n, adds) for n, _, adds in steps_and_traces(torch, TP)]
    # Each recorded step's scope is named after its own step, as torch 2.x (1.13 named it one lower).
    assert [steps for _, steps, _ in kiln_calls] == [["ProfilerStep#2", "ProfilerStep#3"],
                                                    ["ProfilerStep#6", "ProfilerStep#7"]]


def test_on_trace_ready_at_exit_without_schedule():
    seen = []
    with KP.profile(on_trace_ready=lambda p: seen.append(len(p.events()))):
        kiln.ones(2).add(1)
    assert len(seen) == 1 and seen[0] > 0


def test_table_header_and_rows_are_torchs():
    with KP.profile() as kp:
        kiln.ones(3).exp()
    with TP.profile() as tp:
        torch.ones(3).exp()
    k_table = kp.key_averages().table(sort_by="cpu_time_total", row_limit=10)
    t_table = tp.key_averages().table(sort_by="cpu_time_total", row_limit=10)
    header = lambda table: table.splitlines()[1].split()  # noqa: E731
    assert header(k_table) == header(t_table)
    assert "aten::exp" in k_table and k_table.strip().splitlines()[-1].startswith("Self CPU time total:")
    rows = [line.split()[0] for line in k_table.splitlines()[3:-3]]
    assert rows[0] in ("aten::ones", "aten::exp")
    # Sorted by total time, descending.
    avgs = sorted(kp.key_averages(), key=lambda e: e.cpu_time_total, reverse=True)
    assert rows == [e.key for e in avgs][:len(rows)]


def test_group_by_input_shape():
    with KP.profile(record_shapes=True) as prof:
        kiln.ones(2).add(1)
        kiln.ones(3).add(1)
        kiln.ones(3).add(1)
    groups = {(e.key, str(e.input_shapes)): e.count for e in prof.key_averages(group_by_input_shape=True)}
    assert groups[("aten::add", "[[2]]")] == 1 and groups[("aten::add", "[[3]]")] == 2
    table = prof.key_averages(group_by_input_shape=True).table()
    assert "Input Shapes" in table and "[[3]]" in table


def test_chrome_trace_and_tensorboard_handler(tmp_path):
    with KP.profile() as prof:
        kiln.ones(2, 2).mm(kiln.ones(2, 2))
    path = tmp_path / "trace.json"
    prof.export_chrome_trace(str(path))
    trace = json.loads(path.read_text())
    mm = [e for e in trace["traceEvents"] if e["name"] == "aten::mm"]
    assert len(mm) == 1 and mm[0]["ph"] == "X" and mm[0]["dur"] >= 0
    out_dir = tmp_path / "tb"
    with KP.profile(schedule=KP.schedule(wait=0, warmup=1, active=1),
                    on_trace_ready=KP.tensorboard_trace_handler(str(out_dir), worker_name="w")) as prof:
        for _ in range(2):
            kiln.ones(2).add(1)
            prof.step()
    files = os.listdir(out_dir)
    assert len(files) == 1 and files[0].startswith("w.") and files[0].endswith(".pt.trace.json")
    assert json.loads((out_dir / files[0]).read_text())["traceEvents"]


def test_errors_are_torchs():
    for lib in (kiln, torch):
        p = lib.autograd.profiler.profile()
        p.__enter__()
        with pytest.raises(RuntimeError, match="Profiler didn't finish running"):
            p.key_averages()
        with pytest.raises(RuntimeError, match="already enabled"):
            lib.autograd.profiler.profile().__enter__()
        p.__exit__(None, None, None)
        assert p.key_averages() is not None


def test_disabled_profile_records_nothing():
    with kiln.autograd.profiler.profile(enabled=False) as prof:
        kiln.ones(2).add(1)
    assert prof.function_events is None and not kiln._C._profiler_enabled()


def test_supported_activities_and_import_paths():
    assert KP.supported_activities() == {KP.ProfilerActivity.CPU}
    from kiln.autograd.profiler import record_function, profile  # noqa: F401
    from kiln.autograd.profiler_util import EventList, FunctionEvent  # noqa: F401
    assert kiln.profiler.ProfilerAction.RECORD_AND_SAVE.name == "RECORD_AND_SAVE"
