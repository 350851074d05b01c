"""kiln.multiprocessing and shared memory against torch: pytorch/examples mnist_hogwild run as a
script under both (one process: the same losses; two: hogwild training reaches the parent's model),
and the sharing itself (fork, spawn, forkserver, a Queue, mp.spawn's errors)."""
import json
import os
import subprocess
import sys

import numpy as np
import pytest
import torch

import kiln
import kiln.multiprocessing as kmp
from mp_children import add_one, big_sum, fail, put_back
from programs.swap import swap_imports

HERE = os.path.dirname(os.path.abspath(__file__))
ENV = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))


def run_script(tmp_path, lib, args):
    """The hogwild program with its imports pointed at lib, run as a script (spawned children import
    it by path); its JSON summary."""
    source = open(os.path.join(HERE, "programs", "mnist_hogwild.py")).read()
    path = tmp_path / f"hogwild_{lib}.py"
    path.write_text(swap_imports(source, lib))
    out = subprocess.run([sys.executable, str(path)] + args, capture_output=True, text=True, timeout=600,
                         cwd=str(tmp_path), env=ENV)
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


ARGS = ["--epochs", "2", "--lr", "0.1", "--samples", "640", "--log-interval", "5"]


def test_hogwild_one_process_matches_torch(tmp_path):
    t = run_script(tmp_path, "torch", ARGS + ["--num-processes", "1"])
    k = run_script(tmp_path, "kiln", ARGS + ["--num-processes", "1"])
    assert k["exitcodes"] == t["exitcodes"] == [0]
    assert k["initial_sum"] == t["initial_sum"]  # the same initial weights
    assert k["shared"] and t["shared"]
    assert k["moved"] == pytest.approx(t["moved"], rel=1e-4)  # the child's training reached the parent
    assert k["test_loss"] == pytest.approx(t["test_loss"], rel=1e-4)
    assert k["correct"] == t["correct"]


@pytest.mark.parametrize("method", ["spawn", "fork"])
def test_hogwild_two_processes_train_the_parents_model(tmp_path, method):
    # lr 0.05 on 1280 images: hogwild's races leave the result varying, but far from chance (2.3 nats)
    args = ["--epochs", "2", "--lr", "0.05", "--samples", "1280", "--log-interval", "10"]
    k = run_script(tmp_path, "kiln", args + ["--num-processes", "2", "--start-method", method])
    assert k["exitcodes"] == [0, 0] and k["shared"]
    assert k["moved"] > 0
    assert k["test_loss"] < 0.5 and k["correct"] > 180  # of 200


@pytest.mark.parametrize("method", ["fork", "spawn", "forkserver"])
def test_shared_tensor_is_written_by_children(method):
    # torch as the reference under fork (a spawned child would spend seconds importing torch)
    for lib, mp in ((torch, torch.multiprocessing), (kiln, kmp)) if method == "fork" else ((kiln, kmp),):
        ctx = mp.get_context(method)
        t = lib.zeros(2, 3).share_memory_()
        assert t.is_shared()
        view = t[1]  # a view of a shared tensor is shared and goes by reference too
        ps = [ctx.Process(target=add_one, args=(r, view)) for r in range(2)]
        for p in ps:
            p.start()
        for p in ps:
            p.join()
        assert [p.exitcode for p in ps] == [0, 0]
        np.testing.assert_array_equal(t.numpy(), [[0, 0, 0], [3, 3, 3]])


def test_unshared_tensor_goes_by_value():
    ctx = kmp.get_context("spawn")
    t = kiln.zeros(3)
    assert not t.is_shared()
    p = ctx.Process(target=add_one, args=(0, t))
    p.start()
    p.join()
    assert p.exitcode == 0 and t.tolist() == [0.0, 0.0, 0.0]


def test_shared_tensor_through_a_queue():
    ctx = kmp.get_context("spawn")
    q_in, q_out = ctx.Queue(), ctx.Queue()
    p = ctx.Process(target=put_back, args=(q_in, q_out))
    p.start()
    t = kiln.arange(4.0).share_memory_()
    q_in.put(t)
    assert q_out.get(timeout=120) is True
    p.join()
    assert t.tolist() == [0.0, 2.0, 4.0, 6.0]


def test_share_memory_keeps_the_parameter():
    m = kiln.nn.Linear(3, 2)
    w = m.weight
    before = w.detach().clone()
    assert m.share_memory() is m
    assert m.weight is w and w.is_shared() and m.bias.is_shared() and w.is_leaf and w.requires_grad
    assert kiln.equal(w.detach(), before)
    m(kiln.ones(4, 3)).sum().backward()
    assert w.grad is not None and not w.grad.is_shared()  # gradients are allocated lazily, unshared


def test_spawn_raises_the_childs_error():
    with pytest.raises(kmp.ProcessRaisedException, match="child 1 failed|child 0 failed"):
        kmp.spawn(fail, nprocs=2)


def test_spawn_runs_each_rank():
    t = kiln.zeros(2, 3).share_memory_()
    kmp.spawn(add_one, args=(t,), nprocs=3)
    np.testing.assert_array_equal(t.numpy(), np.full((2, 3), 6.0))  # 1 + 2 + 3


def test_sharing_strategy():
    assert kmp.get_sharing_strategy() == "file_descriptor"
    assert "file_descriptor" in kmp.get_all_sharing_strategies()
    with pytest.raises(ValueError):
        kmp.set_sharing_strategy("file_system")


def test_forked_child_runs_after_the_parents_parallel_kernels():
    # libgomp's thread pool does not survive fork: without kiln's at-fork hook the child hangs in
    # its first parallel region (torch's does)
    threads = kiln.get_num_threads()
    kiln.set_num_threads(2)
    try:
        (kiln.ones(4_000_000) * 3).sum()  # a parallel region in the parent
        ctx = kmp.get_context("fork")
        q = ctx.Queue()
        p = ctx.Process(target=big_sum, args=(q,))
        p.start()
        p.join(60)
        alive = p.is_alive()
        if alive:
            p.kill()
        assert not alive and p.exitcode == 0 and q.get(timeout=5) == 8_000_000.0
    finally:
        kiln.set_num_threads(threads)


def test_adagrad_share_memory_shares_its_sums():
    for lib in (torch, kiln):
        p = lib.nn.Parameter(lib.ones(3))
        opt = lib.optim.Adagrad([p], lr=0.1)
        opt.share_memory()
        assert opt.state[p]["sum"].is_shared()
