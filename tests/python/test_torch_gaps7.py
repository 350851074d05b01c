"""Gaps earlier rounds left, each against torch 1.13 (the oracle installed here; where 1.13 has a bug that
torch 2.x fixed, 2.x's behaviour is checked and the reason given): Generator seeds and states, device
strings at every entry point, Tensor.set_(), RNN cells' hidden-state forms, Module.register_backward_hook,
ParameterList / ParameterDict holding any object, forward AD and torch.func.jvp under no_grad, sparse
gradients from autograd.grad and pickling sparse tensors."""
import copy
import pickle
import re
import warnings

import numpy as np
import pytest
import torch

import kiln


def outcome(fn):
    """(exception type name, message with the library's name neutralised) or ('ok', value)."""
    try:
        return "ok", fn()
    except Exception as e:  # noqa: BLE001 - the exception itself is what is compared
        return type(e).__name__, re.sub(r"\b(torch|kiln|PyTorch)\b", "LIB", str(e))


def same_error_type(make):
    """make(lib) raises in both libraries with the same exception type; returns kiln's message."""
    t, k = outcome(lambda: make(torch)), outcome(lambda: make(kiln))
    assert t[0] != "ok" and t[0] == k[0], (t, k)
    return k[1]


def same_error(make):
    """Same exception type and message (library names aside)."""
    t, k = outcome(lambda: make(torch)), outcome(lambda: make(kiln))
    assert t[0] != "ok" and t == k, (t, k)


# ---- 1. Generator ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("seed", [1.5, "3", None, True, 3.0, [1], "tensor"])
def test_generator_manual_seed_of_a_non_int_is_torchs_runtime_error(seed):
    same_error(lambda lib: lib.Generator().manual_seed(lib.tensor(3) if seed == "tensor" else seed))


@pytest.mark.parametrize("seed", [2 ** 64, -2 ** 63 - 1])
def test_generator_manual_seed_overflow(seed):
    same_error(lambda lib: lib.Generator().manual_seed(seed))


@pytest.mark.parametrize("seed", [-1, 2 ** 64 - 1, -2 ** 63, 2 ** 63, 0, 7])
def test_generator_seed_range_and_initial_seed(seed):
    got = [(lib.Generator().manual_seed(seed).initial_seed()) for lib in (torch, kiln)]
    assert got[0] == got[1]
    assert [lib.Generator().manual_seed(seed) is not None for lib in (torch, kiln)] == [True, True]


def test_generator_api_parity():
    for lib in (torch, kiln):
        g = lib.Generator()
        assert g.manual_seed(5) is g and g.set_state(g.get_state()) is g
        s = g.seed()
        assert isinstance(s, int) and g.initial_seed() == s
        assert g.device == lib.device("cpu") and str(g.get_state().dtype).endswith("uint8")


def test_generator_states_from_torch_continue_torchs_stream():
    g = torch.Generator().manual_seed(11)
    torch.randn(3, generator=g)  # a cached normal pending
    full = g.get_state()
    for size in (5056, 5048):  # torch's state and its legacy form (no cached float normal)
        k = kiln.Generator().set_state(kiln.tensor(full[:size].tolist(), dtype=kiln.uint8))
        t = torch.Generator().set_state(full[:size].clone())
        assert kiln.randn(6, generator=k).tolist() == torch.randn(6, generator=t).tolist()
        assert k.initial_seed() == t.initial_seed() == 11


@pytest.mark.parametrize("state", ["short", "float", "str", "none", "strided", "strided_full", "list"])
def test_generator_set_state_errors(state):
    def make(lib):
        good = lib.Generator().get_state()
        bad = {"short": lambda: good[:5], "float": lambda: lib.zeros(5056), "str": lambda: "x", "none": lambda: None,
               "strided": lambda: lib.zeros(5056, dtype=lib.uint8)[::2],
               "strided_full": lambda: lib.zeros(2 * 5056, dtype=lib.uint8)[::2], "list": lambda: good.tolist()}[state]()
        return lib.Generator().set_state(bad)
    message = same_error_type(make)
    expected = {"short": "CPUGeneratorImplStateLegacy of size 5048 or a CPUGeneratorImplState of size 5056",
                "strided": "must be contiguous", "strided_full": "must be contiguous", "float": "ByteTensor",
                "str": "ByteTensor, but got str", "none": "ByteTensor, but got NoneType", "list": "ByteTensor"}[state]
    assert expected in message


def test_generator_set_state_reads_the_bytes_whatever_the_shape():
    t = torch.Generator().manual_seed(3)
    k = kiln.Generator().set_state(kiln.tensor(t.get_state().tolist(), dtype=kiln.uint8).reshape(2, 2528))
    t.set_state(t.get_state().reshape(2, 2528))
    assert kiln.rand(4, generator=k).tolist() == torch.rand(4, generator=t).tolist()


@pytest.mark.parametrize("device", ["cuda", "cuda:1", 0, 3, "xla", "meta", "foo", "cpu:-1", -1])
def test_generator_devices(device):
    same_error(lambda lib: lib.Generator(device))


def test_generator_cpu_devices():
    for device in ("cpu", "cpu:0"):
        assert kiln.Generator(device).device.type == torch.Generator(device).device.type == "cpu"


# ---- 2. Device strings -----------------------------------------------------------------------------------------
BAD_DEVICE_STRINGS = ["cuda:x", "cpu:-1", "foo", "bogus", "cpu:", "cpu:0:1", "cpu:01", "CPU", " cpu", "cpu ",
                      "cuda:1a", "", "cpu::1", ":1", "cpu:-0", "cuda:0x1", "cpu:99999999999999999999"]


@pytest.mark.parametrize("spec", BAD_DEVICE_STRINGS)
def test_device_strings_torch_refuses(spec):
    same_error(lambda lib: lib.device(spec))


@pytest.mark.parametrize("spec", BAD_DEVICE_STRINGS)
@pytest.mark.parametrize("entry", ["to", "to_kw", "to_dtype", "empty", "zeros_like", "arange", "randn", "full",
                                   "eye", "empty_strided", "tensor", "as_tensor", "new_ones", "new_tensor",
                                   "module_to", "ones_like", "module_init", "zeros", "randint", "linspace",
                                   "empty_like", "new_zeros", "cuda"])
def test_bad_device_strings_at_every_entry_point(spec, entry):
    make = DEVICE_ENTRIES[entry]
    message = same_error_type(lambda lib: make(lib, spec))
    assert spec.strip() in message or "must not be empty" in message  # names the string


DEVICE_ENTRIES = {
    "to": lambda lib, d: lib.ones(2).to(d),
    "to_kw": lambda lib, d: lib.ones(2).to(device=d),
    "to_dtype": lambda lib, d: lib.ones(2).to(d, lib.float64),
    "empty": lambda lib, d: lib.empty(2, device=d),
    "zeros_like": lambda lib, d: lib.zeros_like(lib.ones(2), device=d),
    "ones_like": lambda lib, d: lib.ones_like(lib.ones(2), device=d),
    "arange": lambda lib, d: lib.arange(3, device=d),
    "randn": lambda lib, d: lib.randn(3, device=d),
    "full": lambda lib, d: lib.full((2,), 1.0, device=d),
    "eye": lambda lib, d: lib.eye(2, device=d),
    "empty_strided": lambda lib, d: lib.empty_strided((2,), (1,), device=d),
    "tensor": lambda lib, d: lib.tensor([1.0], device=d),
    "as_tensor": lambda lib, d: lib.as_tensor([1.0], device=d),
    "new_ones": lambda lib, d: lib.ones(2).new_ones(2, device=d),
    "new_tensor": lambda lib, d: lib.ones(2).new_tensor([1.0], device=d),
    "module_to": lambda lib, d: lib.nn.Linear(2, 2).to(d),
    "module_init": lambda lib, d: lib.nn.Linear(2, 2, device=d),
    "zeros": lambda lib, d: lib.zeros(2, device=d),
    "randint": lambda lib, d: lib.randint(0, 3, (2,), device=d),
    "linspace": lambda lib, d: lib.linspace(0, 1, 3, device=d),
    "empty_like": lambda lib, d: lib.empty_like(lib.ones(1), device=d),
    "new_zeros": lambda lib, d: lib.ones(1).new_zeros(2, device=d),
    "cuda": lambda lib, d: lib.ones(1).cuda(d),
}


@pytest.mark.parametrize("spec", ["xla", "mps", "xla:1", "cuda", "cuda:1", 0, 2, -1])
@pytest.mark.parametrize("entry", sorted(DEVICE_ENTRIES))
def test_devices_torch_knows_but_this_build_lacks(spec, entry):
    # torch's CPU-only build: cuda AssertionError, xla / mps RuntimeError from to() and tensor(),
    # NotImplementedError from factories, a negative ordinal RuntimeError
    if isinstance(spec, int) and entry in ("to_dtype", "module_to"):
        pytest.skip("an int device positionally in to() is covered by test_to_int_device (torch reads 0 as cuda:0)")
    same_error_type(lambda lib: DEVICE_ENTRIES[entry](lib, spec))


def test_torch_device_objects_of_other_types():
    for spec in ("xla", "xla:1", "mps", "meta", "hpu:0", "privateuseone"):
        k, t = kiln.device(spec), torch.device(spec)
        assert (k.type, k.index, str(k), repr(k).replace("kiln", "torch")) == (t.type, t.index, str(t), repr(t))
    assert kiln.device("xla", 0).index == torch.device("xla", 0).index == 0
    same_error(lambda lib: lib.device("cpu:0", 0))
    same_error(lambda lib: lib.device("cpu", -1))


def test_meta_device_is_refused_clearly():
    # torch has meta tensors; kiln has none, so making or moving a tensor there raises (not a CPU tensor)
    with pytest.raises(NotImplementedError, match="no meta backend"):
        kiln.empty(2, device="meta")
    with pytest.raises(NotImplementedError, match="no meta backend"):
        kiln.zeros_like(kiln.ones(2), device="meta")
    with pytest.raises(RuntimeError, match="meta devices"):
        kiln.ones(2).to("meta")


def test_device_index_range():
    # torch 1.13 wraps an index past 127 into int8 (cpu:300 is cpu:44), a bug; kiln refuses it
    assert str(torch.device("cpu:300")) == "cpu:44"
    with pytest.raises(RuntimeError, match="up to 127"):
        kiln.device("cpu:300")
    with pytest.raises(RuntimeError, match="up to 127"):
        kiln.empty(1, device="cpu:300")
    assert kiln.device("cpu:127").index == torch.device("cpu:127").index == 127


def test_good_devices_still_work():
    for spec in ("cpu", "cpu:0", kiln.device("cpu")):
        assert kiln.empty(2, device=spec).device.type == "cpu"
        assert kiln.ones(2).new_ones(2, device=spec).device.type == "cpu"
        assert kiln.ones(2).to(spec).device.type == "cpu"


def test_legacy_new_refuses_other_devices():
    for spec in ("cuda", "xla"):
        same_error(lambda lib: lib.ones(2).new(2, device=spec))


# ---- 3. Tensor.set_ ---------------------------------------------------------------------------------------------
def storage_of(lib, t):
    return t.untyped_storage() if hasattr(t, "untyped_storage") else t.storage().untyped()


def set_cases():
    return {
        "source": lambda lib: (lambda a, b: (b.set_(a), b.tolist(), tuple(b.shape), b.stride(), b.storage_offset()))(
            lib.arange(6.0), lib.zeros(2)),
        "view_source": lambda lib: (lambda c, d: (d.set_(c), d.tolist(), tuple(d.shape), d.stride(),
                                                  d.storage_offset()))(lib.arange(10.0)[2:].view(2, 4), lib.ones(3)),
        "transposed": lambda lib: (lambda d: d.stride())(lib.ones(1).set_(lib.arange(6.0).view(2, 3).t())),
        "expanded": lambda lib: lib.zeros(1).set_(lib.zeros(1).expand(3)).stride(),
        "empty": lambda lib: (lambda b: (b.set_() is b, tuple(b.shape), b.stride(), b.numel()))(lib.ones(3)),
        "storage": lambda lib: lib.ones(1).set_(storage_of(lib, lib.arange(8.0))).tolist(),
        "storage_2d": lambda lib: lib.ones(1).set_(storage_of(lib, lib.arange(8.0)), 1, (2, 3)).tolist(),
        "storage_strided": lambda lib: (lambda t: (t.tolist(), t.stride()))(
            lib.ones(1).set_(storage_of(lib, lib.arange(8.0)), 1, (2,), (3,))),
        "storage_kw": lambda lib: lib.ones(1).set_(source=storage_of(lib, lib.arange(8.0)), storage_offset=0,
                                                   size=(3,)).tolist(),
        "storage_double": lambda lib: lib.ones(1, dtype=lib.float64).set_(storage_of(lib, lib.arange(8.0))).tolist(),
        "storage_int8": lambda lib: tuple(lib.ones(1, dtype=lib.int8).set_(storage_of(lib, lib.arange(8.0))).shape),
        "storage_partial": lambda lib: tuple(lib.ones(1, dtype=lib.int16).set_(
            storage_of(lib, lib.ones(3, dtype=lib.int8))).shape),
        "tensor_offset": lambda lib: lib.ones(1).set_(lib.arange(4.0), 1, (2,)).tolist(),
        "tensor_offset_stride": lambda lib: lib.ones(1).set_(lib.arange(4.0), 1, (2,), (1,)).tolist(),
        "self": lambda lib: (lambda e: e.set_(e).tolist())(lib.arange(3.0)),
        "version": lambda lib: (lambda b: (b.set_(lib.ones(2)), b._version)[1])(lib.zeros(2)),
        "nograd_leaf": lambda lib: (lambda x: (x.requires_grad, x.is_leaf, tuple(x.shape)))(
            _set_under_no_grad(lib)),
        "view_base": lambda lib: (lambda v: (v.set_(lib.zeros(3)).tolist(), v._base is None))(lib.arange(4.0)[1:3]),
    }


def _set_under_no_grad(lib):
    x = lib.ones(2, requires_grad=True)
    with lib.no_grad():
        x.set_(lib.zeros(3))
    return x


@pytest.mark.parametrize("case", sorted(set_cases()))
def test_set_as_torch(case):
    make = set_cases()[case]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # kiln's storage() gives torch 2.x's TypedStorage warning
        t, k = make(torch), make(kiln)
    norm = (lambda v: v) if case != "source" and case != "view_source" else (lambda v: v[1:])
    assert norm(k) == norm(t)


def test_set_shares_memory_both_ways():
    for lib in (torch, kiln):
        a, b = lib.arange(6.0), lib.zeros(2)
        b.set_(a)
        b[0] = 100
        a[1] = 50
        assert a[0].item() == 100 and b[1].item() == 50
        s = storage_of(lib, a)
        c = lib.ones(1).set_(s, 2, (2,))
        c[0] = -1
        assert a[2].item() == -1


def test_set_grows_the_storage_as_torch():
    def run(lib):
        a = lib.arange(8.0)
        s = storage_of(lib, a)
        t = lib.ones(1).set_(s, 6, (2, 2))
        t.fill_(3)
        return tuple(t.shape), t.tolist(), s.nbytes(), a.tolist()
    assert run(kiln) == run(torch)


@pytest.mark.parametrize("case", ["double", "int", "number", "list", "offset_only", "int_size", "bad_offset",
                                  "too_many", "neg_offset", "stride_len", "neg_stride", "typed_double", "leaf",
                                  "leaf_empty", "float_size"])
def test_set_errors(case):
    def make(lib):
        s = storage_of(lib, lib.arange(8.0))
        return {
            "double": lambda: lib.ones(2).set_(lib.ones(2, dtype=lib.float64)),
            "int": lambda: lib.ones(2).set_(lib.ones(2, dtype=lib.int64)),
            "number": lambda: lib.ones(2).set_(3),
            "list": lambda: lib.ones(2).set_([1.0]),
            "offset_only": lambda: lib.ones(1).set_(s, 1),
            "int_size": lambda: lib.ones(1).set_(s, 0, 2),
            "bad_offset": lambda: lib.ones(1).set_(s, 1.5, (2,)),
            "too_many": lambda: lib.ones(1).set_(s, 1, (2,), (1,), 5),
            "neg_offset": lambda: lib.ones(1).set_(s, -1, (2,)),
            "stride_len": lambda: lib.ones(1).set_(s, 0, (2, 3), (1,)),
            "neg_stride": lambda: lib.ones(1).set_(s, 4, (2,), (-1,)),
            "typed_double": lambda: _typed_double(lib),
            "leaf": lambda: lib.ones(2, requires_grad=True).set_(lib.zeros(2)),
            "leaf_empty": lambda: lib.ones(2, requires_grad=True).set_(),
            "float_size": lambda: lib.ones(1).set_(lib.ones(3), 0, (2.0,)),
        }[case]()
    message = same_error_type(make)
    if case in ("double", "int"):
        assert "dtype" in message  # torch 1.13: an INTERNAL ASSERT (a bug); kiln names the dtypes
    if case == "neg_offset":
        assert "invalid storage offset -1" in message


def _typed_double(lib):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return lib.zeros(1, dtype=lib.float64).set_(lib.arange(4.0).storage())


def test_set_records_a_node_without_derivative():
    for lib in (torch, kiln):
        y = lib.ones(2, requires_grad=True) * 2
        y.set_(lib.zeros(3))
        assert y.requires_grad and y.grad_fn is not None and y.tolist() == [0.0, 0.0, 0.0]
        with pytest.raises(RuntimeError, match="derivative for .*set_ is not implemented"):
            y.sum().backward()
        z = lib.zeros(2)
        z.set_(lib.ones(2, requires_grad=True))
        assert z.requires_grad and z.grad_fn is not None


# ---- 4. RNN cells -----------------------------------------------------------------------------------------------
def cell_cases(lib):
    x, h, c = lib.ones(2, 3), lib.zeros(2, 4), lib.zeros(2, 4)
    return {
        "lstm_tensor_hx": ("LSTMCell", lambda m: m(x, h)),
        "lstm_int_hx": ("LSTMCell", lambda m: m(x, 3)),
        "lstm_1_tuple": ("LSTMCell", lambda m: m(x, (h,))),
        "lstm_3_tuple": ("LSTMCell", lambda m: m(x, (h, c, c))),
        "lstm_none_in_tuple": ("LSTMCell", lambda m: m(x, (None, c))),
        "lstm_h_batch": ("LSTMCell", lambda m: m(x, (lib.zeros(3, 4), c))),
        "lstm_h_size": ("LSTMCell", lambda m: m(x, (lib.zeros(2, 5), c))),
        "lstm_c_size": ("LSTMCell", lambda m: m(x, (h, lib.zeros(2, 5)))),
        "lstm_x_size": ("LSTMCell", lambda m: m(lib.ones(2, 5), (h, c))),
        "lstm_unbatched_batched_h": ("LSTMCell", lambda m: m(lib.ones(3), (h, c))),
        "lstm_batched_unbatched_h": ("LSTMCell", lambda m: m(x, (lib.zeros(4), lib.zeros(4)))),
        "lstm_double_h": ("LSTMCell", lambda m: m(x, (h.double(), c))),
        "gru_tuple_hx": ("GRUCell", lambda m: m(x, (h,))),
        "gru_int_hx": ("GRUCell", lambda m: m(x, 3)),
        "gru_h_batch": ("GRUCell", lambda m: m(x, lib.zeros(3, 4))),
        "gru_h_size": ("GRUCell", lambda m: m(x, lib.zeros(2, 5))),
        "gru_x_size": ("GRUCell", lambda m: m(lib.ones(2, 5), h)),
        "gru_unbatched_batched_h": ("GRUCell", lambda m: m(lib.ones(3), h)),
        "gru_batched_unbatched_h": ("GRUCell", lambda m: m(x, lib.zeros(4))),
        "rnn_tuple_hx": ("RNNCell", lambda m: m(x, (h, h))),
        "rnn_h_batch": ("RNNCell", lambda m: m(x, lib.zeros(3, 4))),
        "rnn_h_size": ("RNNCell", lambda m: m(x, lib.zeros(2, 5))),
        "rnn_x_size": ("RNNCell", lambda m: m(lib.ones(2, 5), h)),
        "rnn_batched_unbatched_h": ("RNNCell", lambda m: m(x, lib.zeros(4))),
    }


@pytest.mark.parametrize("case", sorted(cell_cases(torch)))
def test_rnn_cell_hidden_state_forms(case):
    def make(lib):
        name, call = cell_cases(lib)[case]
        lib.manual_seed(0)
        return call(getattr(lib.nn, name)(3, 4))
    message = same_error_type(make)
    if case.endswith(("_h_size", "_x_size", "_h_batch", "_tuple")) and not case.startswith(("gru_tuple", "rnn_tuple")):
        t = outcome(lambda: make(torch))[1]
        assert t in message  # torch's words (kiln prefixes the op's name)


@pytest.mark.parametrize("name", ["LSTMCell", "GRUCell", "RNNCell"])
@pytest.mark.parametrize("batched", [True, False])
def test_rnn_cells_good_forms_match_torch(name, batched):
    def run(lib):
        lib.manual_seed(0)
        m = getattr(lib.nn, name)(3, 4)
        x = lib.arange(6.0).reshape(2, 3) / 6 if batched else lib.arange(3.0) / 3
        h = lib.ones(2, 4) / 2 if batched else lib.ones(4) / 2
        hx = [h, h * 2] if name == "LSTMCell" else h  # a list of two works for LSTMCell, as torch
        out = m(x, hx)
        none = m(x)
        flat = lambda o: [v.tolist() for v in o] if isinstance(o, tuple) else o.tolist()
        return flat(out), flat(none)
    t, k = run(torch), run(kiln)
    np.testing.assert_allclose(np.array(k[0], dtype=float), np.array(t[0], dtype=float), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(np.array(k[1], dtype=float), np.array(t[1], dtype=float), rtol=1e-5, atol=1e-6)


# ---- 5. Module.register_backward_hook ---------------------------------------------------------------------------------
def rounded(g):
    return None if g is None else np.round(g.detach().numpy().astype(float), 4).tolist()


def run_legacy(lib, build, make_input, replace=None):
    lib.manual_seed(0)
    module = build(lib)
    records = []

    def hook(m, grad_input, grad_output):
        records.append((type(m).__name__, [rounded(g) for g in grad_input], [rounded(g) for g in grad_output]))
        return replace(grad_input) if replace else None
    handle = module.register_backward_hook(hook)
    x = make_input(lib)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = module(x)
    first = out[0] if isinstance(out, tuple) else out
    first.sum().backward()
    leaves = [rounded(x.grad)] if getattr(x, "grad", None) is not None else []
    handle.remove()
    return records, [str(w.message) for w in caught], leaves


LEGACY_CASES = {
    "relu": (lambda lib: lib.nn.ReLU(), lambda lib: lib.tensor([1.0, -1.0, 2.0], requires_grad=True) * 1),
    "linear_leaf_input": (lambda lib: _linear(lib), lambda lib: lib.ones(4, 3, requires_grad=True)),
    "linear_nonleaf_input": (lambda lib: _linear(lib), lambda lib: lib.ones(4, 3, requires_grad=True) * 2),
    "sequential": (lambda lib: lib.nn.Sequential(_linear(lib), lib.nn.ReLU()), lambda lib: lib.ones(4, 3) * 1),
    "sigmoid": (lambda lib: lib.nn.Sigmoid(), lambda lib: lib.tensor([0.5, -1.0], requires_grad=True) * 1),
    "two_outputs": (lambda lib: _Two(lib), lambda lib: lib.ones(2, requires_grad=True)),
}


class _Two:
    def __new__(cls, lib):
        class Two(lib.nn.Module):
            def forward(self, a):
                return a * 2, a * 3
        return Two()


def _linear(lib):
    lin = lib.nn.Linear(3, 2)
    with lib.no_grad():
        lin.weight.copy_(lib.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]))
        lin.bias.fill_(0.5)
    return lin


@pytest.mark.parametrize("case", sorted(LEGACY_CASES))
def test_register_backward_hook_as_torch(case):
    build, make_input = LEGACY_CASES[case]
    assert run_legacy(kiln, build, make_input) == run_legacy(torch, build, make_input)


def test_register_backward_hook_replaces_the_node_input_gradient():
    def run(lib):
        relu = lib.nn.ReLU()
        relu.register_backward_hook(lambda m, gi, go: tuple(g * 2 for g in gi))
        y = lib.tensor([1.0, -1.0, 2.0], requires_grad=True)
        relu(y * 1).sum().backward()
        return y.grad.tolist()
    assert run(kiln) == run(torch) == [2.0, 0.0, 2.0]


def test_register_backward_hook_wrong_number_of_values():
    def make(lib):
        relu = lib.nn.ReLU()
        relu.register_backward_hook(lambda m, gi, go: (gi[0], gi[0]))
        relu(lib.tensor([1.0], requires_grad=True) * 1).sum().backward()
    same_error(make)


def test_one_kind_of_backward_hook_per_module():
    for lib in (torch, kiln):
        m = lib.nn.Linear(2, 2)
        assert m._is_full_backward_hook is None
        m.register_backward_hook(lambda *a: None)
        assert m._is_full_backward_hook is False
        with pytest.raises(RuntimeError, match="Cannot use both regular backward hooks and full backward hooks"):
            m.register_full_backward_hook(lambda *a: None)
        m2 = lib.nn.Linear(2, 2)
        m2.register_full_backward_hook(lambda *a: None)
        assert m2._is_full_backward_hook is True
        with pytest.raises(RuntimeError, match="Cannot use both regular backward hooks and full backward hooks"):
            m2.register_backward_hook(lambda *a: None)


def test_register_backward_hook_without_a_graph_never_runs():
    for lib in (torch, kiln):
        calls = []
        m = lib.nn.Identity()
        m.register_backward_hook(lambda *a: calls.append(a))
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            assert m(lib.ones(2)).shape == (2,)
        assert calls == [] and caught == []


def test_grad_fn_register_hook():
    def run(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = x.exp() * 3
        seen = []
        handle = y.grad_fn.register_hook(lambda gi, go: seen.append(([rounded(g) for g in gi], [rounded(g) for g in go])))
        y.sum().backward(retain_graph=True)
        handle.remove()
        y.sum().backward()
        return seen, rounded(x.grad)
    assert run(kiln) == run(torch)


# ---- 6. ParameterList / ParameterDict ---------------------------------------------------------------------------------
def plist(lib):
    return lib.nn.ParameterList([lib.nn.Parameter(lib.ones(2)), lib.zeros(3), "hello", 3, None, lib.ones(2, 3)])


def pdict(lib):
    return lib.nn.ParameterDict({"b": lib.zeros(3), "a": lib.nn.Parameter(lib.ones(2)), "c": "str", "d": 7})


def norm_repr(text):
    return text.replace("kiln", "torch")


def test_parameter_list_holds_any_object():
    def run(lib):
        pl = plist(lib)
        pl.append(lib.ones(1))
        pl.append({"k": 1})
        pl.extend([lib.ones(1), 5])
        pl += [lib.ones(1)]
        pl[0] = lib.ones(4)
        return ([type(v).__name__ for v in pl], norm_repr(repr(pl)), norm_repr(pl.extra_repr()),
                {k: tuple(v.shape) for k, v in pl.state_dict().items()}, [n for n, _ in pl.named_parameters()],
                len(pl), pl[1].requires_grad, norm_repr(repr(pl[1:4])), type(pl[1:4]).__name__,
                sorted(k for k in vars(pl) if k.isdigit()))
    assert run(kiln) == run(torch)


def test_parameter_list_errors_and_modules():
    same_error(lambda lib: plist(lib).__setitem__(1, "x"))  # a registered Parameter takes Parameters only
    same_error_type(lambda lib: plist(lib)[10])
    same_error_type(lambda lib: lib.nn.ParameterList([lib.ones(1, dtype=lib.int64)]))
    same_error(lambda lib: plist(lib).extend(lib.ones(2)))
    same_error(lambda lib: plist(lib)(1))

    def with_module(lib):
        pl = plist(lib)
        pl.append(lib.nn.Linear(1, 1))
        return type(pl[-1]).__name__, [n for n, _ in pl.named_parameters()], norm_repr(repr(pl))
    assert with_module(kiln) == with_module(torch)


def test_parameter_dict_holds_any_object():
    def run(lib):
        pd = pdict(lib)
        pd["e"] = lib.ones(1)
        pd["f"] = None
        pd.update({"h": [1], "g": lib.ones(2)})  # a plain dict: in sorted key order, as torch
        out = [{k: type(v).__name__ for k, v in pd.items()}, list(pd.keys()), norm_repr(repr(pd)),
               norm_repr(pd.extra_repr()), {k: tuple(v.shape) for k, v in pd.state_dict().items()},
               [n for n, _ in pd.named_parameters()], ("c" in pd, "zz" in pd), pd.get("zz", 5), pd.pop("c")]
        del pd["d"]
        out += [list(pd.keys()), type(pd.setdefault("k", lib.ones(1))).__name__,
                norm_repr(repr(pd.fromkeys(["x", "y"], lib.ones(1)))), norm_repr(repr(pd.copy())),
                norm_repr(repr(pd | lib.nn.ParameterDict({"z": 1}))), pd.a is pd["a"], pd.popitem()[0], len(pd)]
        out.append(str(pd.load_state_dict({k: v.clone() for k, v in pd.state_dict().items()})))
        pd.clear()
        out.append(len(pd))
        return out
    assert run(kiln) == run(torch)


def test_parameter_dict_errors():
    same_error(lambda lib: pdict(lib).__setitem__(3, lib.ones(1)))
    same_error(lambda lib: pdict(lib)(1))
    same_error_type(lambda lib: pdict(lib)["missing"])
    same_error(lambda lib: pdict(lib).update(5))
    same_error(lambda lib: pdict(lib).update([("a", 1, 2)]))


def test_containers_in_a_module_state_dict_and_deepcopy():
    def run(lib):
        m = lib.nn.Module()
        m.pl = lib.nn.ParameterList([lib.ones(1), "s"])
        m.pd = lib.nn.ParameterDict({"w": lib.ones(2), "note": "text"})
        c = copy.deepcopy(m)
        return list(m.state_dict()), norm_repr(repr(m)), norm_repr(repr(c)), c.pl[1], c.pd["note"]
    assert run(kiln) == run(torch)


# ---- 7. Forward AD and torch.func.jvp ---------------------------------------------------------------------------------
def test_forward_ad_outside_no_grad_matches_torch():
    def run(lib):
        import importlib
        fwad = importlib.import_module(lib.__name__ + ".autograd.forward_ad")
        x, t = lib.tensor([1.0, 2.0]), lib.tensor([1.0, 0.5])
        with fwad.dual_level():
            d = fwad.make_dual(x, t)
            y = (d.sin() * d).sum()
            p, tan = fwad.unpack_dual(y)
            return rounded(p), rounded(tan)
    assert run(kiln) == run(torch)


def test_forward_ad_levels_as_torch():
    def make(lib, what):
        import importlib
        fwad = importlib.import_module(lib.__name__ + ".autograd.forward_ad")
        if what == "outside":
            return fwad.make_dual(lib.ones(1), lib.ones(1))
        with fwad.dual_level():
            with fwad.dual_level():
                pass
    same_error(lambda lib: make(lib, "outside"))
    same_error(lambda lib: make(lib, "nested"))


def test_forward_ad_under_no_grad_is_refused_clearly():
    # kiln computes forward-mode gradients by reverse mode (docs: forward_ad.py), which no_grad switches
    # off; torch's forward AD runs there. kiln refuses rather than return a tangent of None.
    from kiln.autograd import forward_ad as fwad
    with fwad.dual_level():
        with kiln.no_grad():
            with pytest.raises(RuntimeError, match="grad mode"):
                fwad.make_dual(kiln.ones(2), kiln.ones(2))


def test_func_jvp_under_no_grad():
    # torch 1.13 has no torch.func (2.x's jvp works under no_grad): checked against the derivative by hand
    x, t = kiln.tensor([1.0, 2.0]), kiln.tensor([1.0, 0.5])
    with kiln.no_grad():
        out, jv = kiln.func.jvp(lambda a: a.sin() * a, (x,), (t,))
        assert not kiln.is_grad_enabled()
    xs, ts = np.array([1.0, 2.0]), np.array([1.0, 0.5])
    np.testing.assert_allclose(out.numpy(), np.sin(xs) * xs, rtol=1e-6)
    np.testing.assert_allclose(jv.numpy(), (np.cos(xs) * xs + np.sin(xs)) * ts, rtol=1e-5)
    assert not out.requires_grad and not jv.requires_grad


# ---- 8. Sparse gradients ------------------------------------------------------------------------------------------
def embedding_pair(lib, **kw):
    lib.manual_seed(0)
    emb = lib.nn.Embedding(5, 3, sparse=True, **kw)
    with lib.no_grad():
        emb.weight.copy_(lib.arange(15.0).reshape(5, 3) / 10)
    return emb, lib.tensor([[0, 2, 0], [4, 2, 1]])


def sparse_summary(g):
    if g is None:
        return None
    if not g.is_sparse:
        return "dense", rounded(g)
    return "sparse", g._indices().tolist(), rounded(g._values()), tuple(g.shape)


@pytest.mark.parametrize("case", ["plain", "weighted", "with_dense", "two_inputs", "create_graph", "bag",
                                  "padding_idx", "backward_inputs", "nonleaf_only_input"])
def test_autograd_grad_of_a_sparse_embedding(case):
    def run(lib):
        emb, idx = embedding_pair(lib, padding_idx=2 if case == "padding_idx" else None)
        if case == "bag":
            bag = lib.nn.EmbeddingBag(5, 3, sparse=True, mode="sum")
            return [sparse_summary(g) for g in lib.autograd.grad(bag(idx).sum(), bag.weight)]
        if case == "nonleaf_only_input":
            w = emb.weight * 2
            out = lib.nn.functional.embedding(idx, w, sparse=True)
            return [sparse_summary(g) for g in lib.autograd.grad(out.sum(), w)]
        out = emb(idx)
        loss = (out * lib.arange(3.0)).sum() if case == "weighted" else out.sum()
        if case == "with_dense":
            loss = loss + (emb.weight ** 2).sum()
        if case == "backward_inputs":
            loss.backward(inputs=[emb.weight])
            loss2 = emb(idx).sum()
            loss2.backward(inputs=[emb.weight])
            return sparse_summary(emb.weight.grad)
        inputs = [emb.weight, lib.ones(2, requires_grad=True)] if case == "two_inputs" else emb.weight
        grads = lib.autograd.grad(loss, inputs, allow_unused=case == "two_inputs", create_graph=case == "create_graph")
        return [sparse_summary(g) for g in grads] + [emb.weight.grad]
    assert run(kiln) == run(torch)


def test_autograd_grad_unused_sparse_input_still_raises():
    def make(lib):
        emb, idx = embedding_pair(lib)
        other = lib.ones(1, requires_grad=True)
        return lib.autograd.grad((other * 2).sum(), [emb.weight])
    same_error(make)


def test_pickle_sparse_coo():
    def run(lib):
        s = lib.sparse_coo_tensor(lib.tensor([[0, 1, 1], [2, 0, 2]]), lib.tensor([3.0, 4.0, 5.0]), (2, 3))
        hybrid = lib.sparse_coo_tensor(lib.tensor([[0, 1]]), lib.ones(2, 2), (3, 2))
        rg = lib.sparse_coo_tensor(lib.tensor([[0, 1]]), lib.ones(2), (3,), requires_grad=True)
        back = [pickle.loads(pickle.dumps(v)) for v in (s, hybrid, rg)]
        return ([b.to_dense().tolist() for b in back], [sparse_summary(b) for b in back], back[2].requires_grad,
                back[0].is_coalesced(), copy.deepcopy(s).to_dense().tolist())
    assert run(kiln) == run(torch)


def test_pickle_keeps_the_coalesced_flag():
    # torch 1.13 drops it (a coalesced tensor comes back uncoalesced); torch 2.x keeps it, as kiln
    s = kiln.sparse_coo_tensor(kiln.tensor([[0, 1, 1], [2, 0, 2]]), kiln.tensor([3.0, 4.0, 5.0]), (2, 3)).coalesce()
    assert pickle.loads(pickle.dumps(s)).is_coalesced()


def test_a_grad_fn_hook_lives_no_longer_than_its_node():
    """What a grad_fn hook captures is freed with the graph (as torch's hooks, stored in the node), not at
    the next registration."""
    import gc
    gc.collect()
    before = kiln._C._live_tensor_count()

    def run():
        captured = kiln.ones(1000)
        x = kiln.ones(3, requires_grad=True)
        y = (x * 2).sum()
        y.grad_fn.register_hook(lambda grad_inputs, grad_outputs, keep=captured: None)
        y.backward()
    run()
    gc.collect()
    assert kiln._C._live_tensor_count() == before
