"""kiln.testing (assert_close, assert_allclose, make_tensor), kiln.autograd.functional (jacobian, hessian, vjp,
jvp, hvp, vhp), kiln.func (grad, vjp, jvp, jacrev, jacfwd, hessian, vmap, functional_call) and kiln.jit (eager),
each against torch 1.13 (functorch 1.13 for kiln.func): values, exception classes and messages."""
import collections
import typing
import warnings
from typing import Dict, List, Optional, Tuple

import numpy as np
import pytest

import kiln

torch = pytest.importorskip("torch")


def outcome(fn, lib):
    """fn(lib) as ("ok", value) or ("raise", exception class name, message with kiln named as torch)."""
    try:
        return ("ok", fn(lib))
    except Exception as e:  # noqa: BLE001  (the exception is the outcome under test)
        return ("raise", type(e).__name__, str(e).replace("kiln", "torch"))


def to_py(x):
    """Tensors (nested in tuples, lists, dicts) as NumPy float64 arrays, for comparison."""
    if isinstance(x, (kiln.Tensor, torch.Tensor)):
        return ("T", tuple(x.shape), x.detach().double().numpy().copy(), bool(x.requires_grad))
    if isinstance(x, (tuple, list)):
        return tuple(to_py(e) for e in x)
    if isinstance(x, dict):
        return {k: to_py(v) for k, v in x.items()}
    return x


def assert_same(a, b, rtol=1e-10, atol=1e-12, check_requires_grad=True):
    if isinstance(a, tuple) and a and a[0] == "T":
        assert isinstance(b, tuple) and b[0] == "T", (a, b)
        assert a[1] == b[1]
        np.testing.assert_allclose(a[2], b[2], rtol=rtol, atol=atol)
        if check_requires_grad:
            assert a[3] == b[3], "requires_grad differs"
    elif isinstance(a, tuple):
        assert isinstance(b, tuple) and len(a) == len(b), (a, b)
        for x, y in zip(a, b):
            assert_same(x, y, rtol, atol, check_requires_grad)
    elif isinstance(a, dict):
        assert a.keys() == b.keys()
        for k in a:
            assert_same(a[k], b[k], rtol, atol, check_requires_grad)
    else:
        assert a == b, (a, b)


def compare(fn, torch_lib=None, **kw):
    k = outcome(fn, kiln)
    t = outcome(fn, torch_lib or torch)
    assert k[0] == t[0], (k, t)
    if k[0] == "raise":
        assert k[1:] == t[1:], (k, t)
    else:
        assert_same(to_py(k[1]), to_py(t[1]), **kw)


# ---------------------------------------------------------------- kiln.testing
def _t(L):
    return L.tensor([1.0, 2.0, 3.0]), L.tensor([1.0, 2.5, 3.0])


ASSERT_CLOSE_CASES = {
    "mismatch": lambda L: L.testing.assert_close(*_t(L)),
    "equal": lambda L: L.testing.assert_close(_t(L)[0], _t(L)[0].clone()),
    "dtype": lambda L: L.testing.assert_close(_t(L)[0], _t(L)[0].double()),
    "dtype_off": lambda L: L.testing.assert_close(_t(L)[0], _t(L)[0].double(), check_dtype=False),
    "shape": lambda L: L.testing.assert_close(_t(L)[0], L.tensor([1.0, 2.0])),
    "scalars_close": lambda L: L.testing.assert_close(1.0, 1.0 + 1e-9),
    "scalars": lambda L: L.testing.assert_close(1.0, 1.1),
    "ints": lambda L: L.testing.assert_close(1, 2),
    "int_float": lambda L: L.testing.assert_close(1, 1.0),
    "int_float_dtype": lambda L: L.testing.assert_close(1, 1.0, check_dtype=True),
    "tensor_vs_number": lambda L: L.testing.assert_close(_t(L)[0], 1.0),
    "only_rtol": lambda L: L.testing.assert_close(*_t(L), rtol=1e-3),
    "loose": lambda L: L.testing.assert_close(*_t(L), rtol=0.5, atol=0),
    "msg": lambda L: L.testing.assert_close(*_t(L), msg="custom"),
    "msg_callable": lambda L: L.testing.assert_close(*_t(L), msg=lambda m: "pre " + m),
    "nested": lambda L: L.testing.assert_close([_t(L)[0], 1, {"x": _t(L)[0]}], [_t(L)[0], 1, {"x": _t(L)[1]}]),
    "keys": lambda L: L.testing.assert_close({"x": _t(L)[0]}, {"y": _t(L)[0]}),
    "lengths": lambda L: L.testing.assert_close((_t(L)[0],), (_t(L)[0], _t(L)[0])),
    "numpy": lambda L: L.testing.assert_close(np.array([1.0, 2.0]), np.array([1.0, 2.1])),
    "numpy_vs_tensor": lambda L: L.testing.assert_close(np.array([1.0, 2.0]), _t(L)[0]),
    "nan": lambda L: L.testing.assert_close(L.tensor([float("nan"), 1.0]), L.tensor([float("nan"), 1.0])),
    "nan_equal": lambda L: L.testing.assert_close(L.tensor([float("nan"), 1.0]), L.tensor([float("nan"), 1.0]),
                                                  equal_nan=True),
    "zero_dim": lambda L: L.testing.assert_close(L.tensor(1.0), L.tensor(1.5)),
    "int_tensors": lambda L: L.testing.assert_close(L.tensor([1, 2, 3]), L.tensor([1, 2, 4])),
    "matrix": lambda L: L.testing.assert_close(L.arange(12.).reshape(3, 4), L.arange(12.).reshape(3, 4) * 1.01),
    "stride": lambda L: L.testing.assert_close(L.ones(2, 3), L.ones(3, 2).t(), check_stride=True),
    "stride_off": lambda L: L.testing.assert_close(L.ones(2, 3), L.ones(3, 2).t()),
    "bools": lambda L: L.testing.assert_close(True, False),
    "none": lambda L: L.testing.assert_close(None, _t(L)[0]),
    "none_none": lambda L: L.testing.assert_close(None, None),
    "half": lambda L: L.testing.assert_close(_t(L)[0].half(), _t(L)[1].half()),
    "bfloat16_close": lambda L: L.testing.assert_close(_t(L)[0].bfloat16(), (_t(L)[0] * 1.001).bfloat16()),
    "bool_tensors": lambda L: L.testing.assert_close(L.tensor([True, False]), L.tensor([True, True])),
    "inf": lambda L: L.testing.assert_close(L.tensor([float("inf")]), L.tensor([float("inf")])),
    "inf_neg": lambda L: L.testing.assert_close(L.tensor([float("inf")]), L.tensor([-float("inf")])),
    "strings": lambda L: L.testing.assert_close("a", "a"),
    "ordered_dict": lambda L: L.testing.assert_close(collections.OrderedDict(w=_t(L)[0]), {"w": _t(L)[0]}),
    "requires_grad": lambda L: L.testing.assert_close(_t(L)[0].requires_grad_(), _t(L)[0]),
    "float64_tol": lambda L: L.testing.assert_close(L.tensor([1.0], dtype=L.float64),
                                                    L.tensor([1.0 + 2e-7], dtype=L.float64)),
    "sparse": lambda L: L.testing.assert_close(L.eye(3).to_sparse(), (L.eye(3) * 1.5).to_sparse()),
    "sparse_vs_dense": lambda L: L.testing.assert_close(L.eye(3).to_sparse(), L.eye(3), check_layout=False),
}


@pytest.mark.parametrize("case", sorted(ASSERT_CLOSE_CASES))
def test_assert_close(case):
    compare(ASSERT_CLOSE_CASES[case])


def test_assert_close_message_layout():
    with pytest.raises(AssertionError) as info:
        kiln.testing.assert_close(kiln.tensor([1.0, 2.0, 3.0]), kiln.tensor([1.0, 2.5, 3.0]))
    assert str(info.value) == (
        "Tensor-likes are not close!\n\n"
        "Mismatched elements: 1 / 3 (33.3%)\n"
        "Greatest absolute difference: 0.5 at index (1,) (up to 1e-05 allowed)\n"
        "Greatest relative difference: 0.2 at index (1,) (up to 1.3e-06 allowed)")


@pytest.mark.parametrize("case", ["list", "mismatch", "nan"])
def test_assert_allclose_deprecated(case):
    calls = {"list": lambda L: L.testing.assert_allclose(_t(L)[0], [1.0, 2.0, 3.0]),
             "mismatch": lambda L: L.testing.assert_allclose(*_t(L)),
             "nan": lambda L: L.testing.assert_allclose(L.tensor([float("nan")]), L.tensor([float("nan")]))}

    def go(L):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            r = outcome(calls[case], L)
        return r, [x.category.__name__ for x in w]
    compare(go)


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16", "int64", "int32", "int8",
                                   "uint8", "bool"])
def test_make_tensor_draws_torchs_values(dtype):
    def go(L):
        L.manual_seed(0)
        dt = getattr(L, dtype)
        a = L.testing.make_tensor(3, 4, dtype=dt, device="cpu")
        b = L.testing.make_tensor((2, 5), dtype=dt, device="cpu", low=-2, high=3, noncontiguous=True)
        c = L.testing.make_tensor([6], dtype=dt, device="cpu", exclude_zero=True, low=0, high=2)
        return a.float(), a.stride(), b.float(), b.stride(), b.is_contiguous(), c.float(), L.get_rng_state()
    compare(go, rtol=0, atol=0)


def test_make_tensor_errors_and_requires_grad():
    compare(lambda L: L.testing.make_tensor(3, dtype=L.int64, device="cpu", requires_grad=True))
    compare(lambda L: L.testing.make_tensor(3, dtype=L.float32, device="cpu", low=2, high=1))
    compare(lambda L: L.testing.make_tensor(3, dtype=L.float32, device="cpu", low=float("nan")))
    compare(lambda L: L.testing.make_tensor(2, 2, dtype=L.float32, device="cpu", requires_grad=True).requires_grad)
    compare(lambda L: L.testing.make_tensor(3, dtype=L.float32, device="cpu", low=-1e40, high=1e40).abs().max() < 4e38)
    m = kiln.testing.make_tensor(2, 3, 4, 5, dtype=kiln.float32, memory_format=kiln.channels_last)
    assert m.is_contiguous(memory_format=kiln.channels_last)


# ---------------------------------------------------------------- kiln.autograd.functional
def _data(L):
    L.manual_seed(0)
    return L.randn(3, dtype=L.float64), L.randn(2, 3, dtype=L.float64), L.randn(3, dtype=L.float64)


def _f(a):
    return a.exp() * a.sum()


def _g(a, b):
    return (a * b).sum(0), b.tanh()


def _s(a):
    return (a ** 3).sum() + a.prod()


def _s2(a, b):
    return (a.sin() * b).sum()


FUNCTIONAL_CASES = {
    "jac": lambda L, x, y, v: L.autograd.functional.jacobian(_f, x),
    "jac_tuple": lambda L, x, y, v: L.autograd.functional.jacobian(_g, (x, y)),
    "jac_create_graph": lambda L, x, y, v: L.autograd.functional.jacobian(_f, x, create_graph=True),
    "jac_vectorize": lambda L, x, y, v: L.autograd.functional.jacobian(_f, x, vectorize=True),
    "jac_forward": lambda L, x, y, v: L.autograd.functional.jacobian(_f, x, vectorize=True, strategy="forward-mode"),
    "jac_forward_novec": lambda L, x, y, v: L.autograd.functional.jacobian(_f, x, strategy="forward-mode"),
    "jac_forward_graph": lambda L, x, y, v: L.autograd.functional.jacobian(_f, x, create_graph=True,
                                                                           strategy="forward-mode"),
    "jac_bad_strategy": lambda L, x, y, v: L.autograd.functional.jacobian(_f, x, strategy="x"),
    "jac_strict_const": lambda L, x, y, v: L.autograd.functional.jacobian(lambda a: L.ones(2, dtype=L.float64), x,
                                                                          strict=True),
    "jac_const": lambda L, x, y, v: L.autograd.functional.jacobian(lambda a: L.ones(2, dtype=L.float64), x),
    "jac_strict_unused": lambda L, x, y, v: L.autograd.functional.jacobian(lambda a, b: a * 2, (x, v), strict=True),
    "jac_unused": lambda L, x, y, v: L.autograd.functional.jacobian(lambda a, b: a * 2, (x, v)),
    "jac_strict_vectorize": lambda L, x, y, v: L.autograd.functional.jacobian(_f, x, strict=True, vectorize=True),
    "jac_list_input": lambda L, x, y, v: L.autograd.functional.jacobian(lambda a, b: a * b, [x, v]),
    "jac_number_input": lambda L, x, y, v: L.autograd.functional.jacobian(_f, (x, 2)),
    "hessian": lambda L, x, y, v: L.autograd.functional.hessian(_s, x),
    "hessian_tuple": lambda L, x, y, v: L.autograd.functional.hessian(_s2, (x, v)),
    "hessian_graph": lambda L, x, y, v: L.autograd.functional.hessian(_s, x, create_graph=True),
    "hessian_nonscalar": lambda L, x, y, v: L.autograd.functional.hessian(lambda a: a * 2, x),
    "hessian_tuple_out": lambda L, x, y, v: L.autograd.functional.hessian(lambda a: (a.sum(),), x),
    "hessian_linear_strict": lambda L, x, y, v: L.autograd.functional.hessian(lambda a: a.sum(), x, strict=True),
    "vjp": lambda L, x, y, v: L.autograd.functional.vjp(_f, x, v),
    "vjp_no_v": lambda L, x, y, v: L.autograd.functional.vjp(lambda a: a.sum(), x),
    "vjp_no_v_bad": lambda L, x, y, v: L.autograd.functional.vjp(_f, x),
    "vjp_bad_size": lambda L, x, y, v: L.autograd.functional.vjp(_f, x, L.ones(2, dtype=L.float64)),
    "vjp_tuple": lambda L, x, y, v: L.autograd.functional.vjp(_g, (x, y), (v, y)),
    "vjp_tuple_bad_len": lambda L, x, y, v: L.autograd.functional.vjp(_g, (x, y), (v,)),
    "vjp_graph": lambda L, x, y, v: L.autograd.functional.vjp(_f, x, v, create_graph=True),
    "vjp_strict_const": lambda L, x, y, v: L.autograd.functional.vjp(lambda a: a.detach() * 2, x, v, strict=True),
    "jvp": lambda L, x, y, v: L.autograd.functional.jvp(_f, x, v),
    "jvp_tuple": lambda L, x, y, v: L.autograd.functional.jvp(_g, (x, y), (v, y)),
    "jvp_graph": lambda L, x, y, v: L.autograd.functional.jvp(_f, x, v, create_graph=True),
    "jvp_no_v_bad": lambda L, x, y, v: L.autograd.functional.jvp(_f, x),
    "hvp": lambda L, x, y, v: L.autograd.functional.hvp(_s, x, v),
    "hvp_tuple": lambda L, x, y, v: L.autograd.functional.hvp(_s2, (x, v), (v, x)),
    "hvp_graph": lambda L, x, y, v: L.autograd.functional.hvp(_s, x, v, create_graph=True),
    "vhp": lambda L, x, y, v: L.autograd.functional.vhp(_s, x, v),
    "vhp_tuple": lambda L, x, y, v: L.autograd.functional.vhp(_s2, (x, v), (v, x)),
    "vhp_nonscalar": lambda L, x, y, v: L.autograd.functional.vhp(_f, x, v),
    "hvp_tuple_out": lambda L, x, y, v: L.autograd.functional.hvp(lambda a: (a.sum(),), x, v),
}


@pytest.mark.parametrize("case", sorted(FUNCTIONAL_CASES))
def test_autograd_functional(case):
    compare(lambda L: FUNCTIONAL_CASES[case](L, *_data(L)))


def test_autograd_functional_under_no_grad_and_double_backward():
    def go(L):
        x, y, v = _data(L)
        with L.no_grad():
            out = L.autograd.functional.vjp(_f, x, v)
        xr = x.clone().requires_grad_()
        L.autograd.functional.jacobian(_f, xr, create_graph=True).sum().backward()
        g1 = xr.grad.clone()
        xr.grad = None
        L.autograd.functional.hessian(_s, xr, create_graph=True).pow(2).sum().backward()
        return out, g1, xr.grad
    compare(go)


# ---------------------------------------------------------------- kiln.func (functorch 1.13 as the oracle)
functorch = pytest.importorskip("functorch")


class _FuncTorch:
    """torch with torch.func's names from functorch 1.13 (torch.func arrived in 2.0)."""

    def __getattr__(self, name):
        return getattr(torch, name)

    @property
    def func(self):
        from torch.nn.utils.stateless import functional_call

        class F:
            pass
        f = F()
        for n in ("grad", "grad_and_value", "vjp", "jvp", "jacrev", "jacfwd", "hessian", "vmap"):
            setattr(f, n, getattr(functorch, n))
        f.functional_call = functional_call
        return f


def _vjp_apply(r, ct):
    return r[0], r[1](ct)


FUNC_CASES = {
    "grad": lambda L, x, y, v: L.func.grad(_s)(x),
    "grad_argnums": lambda L, x, y, v: L.func.grad(_s2, argnums=(0, 1))(x, v),
    "grad_argnum1": lambda L, x, y, v: L.func.grad(_s2, argnums=1)(x, v),
    "grad_aux": lambda L, x, y, v: L.func.grad(lambda a: (_s(a), a * 2), has_aux=True)(x),
    "grad_grad": lambda L, x, y, v: L.func.grad(lambda a: L.func.grad(lambda b: (b ** 3).sum())(a).sum())(x),
    "grad_nonscalar": lambda L, x, y, v: L.func.grad(lambda a: a * 2)(x),
    "grad_dict": lambda L, x, y, v: L.func.grad(lambda d: (d["a"] * d["b"]).sum())({"a": x, "b": v}),
    "grad_and_value": lambda L, x, y, v: L.func.grad_and_value(_s)(x),
    "vjp": lambda L, x, y, v: _vjp_apply(L.func.vjp(_f, x), v),
    "vjp_tuple": lambda L, x, y, v: _vjp_apply(L.func.vjp(_g, x, y), (v, y)),
    "jvp": lambda L, x, y, v: L.func.jvp(_f, (x,), (v,)),
    "jvp_two": lambda L, x, y, v: L.func.jvp(lambda a, b: (a * b).sum(0), (x, y), (v, y)),
    "jacrev": lambda L, x, y, v: L.func.jacrev(_f)(x),
    "jacrev_argnums": lambda L, x, y, v: L.func.jacrev(lambda a, b: (a * b).sum(0), argnums=(0, 1))(x, y),
    "jacrev_tuple_out": lambda L, x, y, v: L.func.jacrev(lambda a: (a.sin(), a.sum()))(x),
    "jacfwd": lambda L, x, y, v: L.func.jacfwd(_f)(x),
    "hessian": lambda L, x, y, v: L.func.hessian(_s)(x),
    "hessian_argnum": lambda L, x, y, v: L.func.hessian(_s2, argnums=1)(x, v),
    "vmap": lambda L, x, y, v: L.func.vmap(lambda a: a.sum() * a)(y),
    "vmap_in_dims": lambda L, x, y, v: L.func.vmap(lambda a, b: a * b, in_dims=(1, None))(y, v[:2]),
    "vmap_out_dims": lambda L, x, y, v: L.func.vmap(lambda a: (a, a.sum()), out_dims=(1, 0))(y),
    "vmap_mismatch": lambda L, x, y, v: L.func.vmap(lambda a, b: a + b)(y, L.ones(3, 3, dtype=L.float64)),
    "vmap_grad": lambda L, x, y, v: L.func.vmap(L.func.grad(lambda a: (a ** 2).sum()))(y),
    "vmap_jacrev": lambda L, x, y, v: L.func.vmap(L.func.jacrev(lambda a: a.sin()))(y),
}


@pytest.mark.parametrize("case", sorted(FUNC_CASES))
def test_func_transforms(case):
    compare(lambda L: FUNC_CASES[case](L, *_data(L)), torch_lib=_FuncTorch())


def test_functional_call():
    def go(L):
        L.manual_seed(0)
        m = L.nn.Sequential(L.nn.Linear(3, 4), L.nn.BatchNorm1d(4), L.nn.Linear(4, 2)).double().eval()
        x = L.randn(5, 3, dtype=L.float64)
        params = {k: v.detach() * 2 for k, v in m.named_parameters()}
        buffers = {k: v.clone() for k, v in m.named_buffers()}
        out = L.func.functional_call(m, {**params, **buffers}, (x,))  # torch 1.13's takes one dict
        g = L.func.grad(lambda p: L.func.functional_call(m, {**p, **buffers}, (x,)).pow(2).sum())(params)
        return out, g, m(x), m[0].weight
    compare(go, torch_lib=_FuncTorch(), rtol=1e-9)


# ---------------------------------------------------------------- kiln.jit (eager)
def _scripted(L):
    Tensor = L.Tensor  # noqa: N806  (TorchScript resolves annotations through the closure)

    @L.jit.script
    def double_n(x: Tensor, n: int = 2) -> Tensor:
        for _ in range(n):
            x = x * 2
        return x

    @L.jit.script
    def maybe_add(x: Tensor, y: Optional[Tensor] = None) -> Tuple[Tensor, int]:
        if y is None:
            return x.relu(), 0
        return x + y, 1
    return double_n, maybe_add


def _module_class(L):
    class M(L.nn.Module):
        scale: L.jit.Final[int]

        def __init__(self):
            super().__init__()
            self.lin = L.nn.Linear(3, 2)
            self.scale = 3

        def forward(self, x):
            return self.helper(self.lin(x)) * self.scale

        @L.jit.ignore
        def helper(self, x):
            return x.tanh()

        @L.jit.export
        def total(self, x):
            return x.sum()

        @L.jit.unused
        def never(self):
            raise RuntimeError("unused")
    return M


def test_jit_script_function_decorator():
    def go(L):
        L.manual_seed(0)
        x = L.randn(2, 3)
        double_n, maybe_add = _scripted(L)
        return double_n(x), double_n(x, 3), maybe_add(x)[0], maybe_add(x, x), callable(double_n)
    compare(go)


def test_jit_script_and_trace_keep_modules():
    def go(L):
        L.manual_seed(0)
        x = L.randn(2, 3)
        m = _module_class(L)()
        sm = L.jit.script(m)
        tm = L.jit.trace(m, x)
        tm2 = L.jit.trace(m, (x,))
        tmod = L.jit.trace_module(_module_class(L)(), {"forward": x})
        tf = L.jit.trace(lambda a: a * 3, (x,))
        return (sm(x), isinstance(sm, L.nn.Module), sorted(sm.state_dict()), sm.total(x), len(list(sm.parameters())),
                tm(x), tm2(x), isinstance(tmod, L.nn.Module), tf(x))
    compare(go)


def test_jit_small_helpers():
    def go(L):
        x = L.ones(2)
        fut = L.jit.fork(lambda a, b: a * b, x, 2)

        @L.jit.interface
        class I:
            def forward(self, x: L.Tensor) -> L.Tensor:
                pass

        class SM(L.jit.ScriptModule):
            def __init__(self):
                super().__init__()
                self.words = L.jit.Attribute([], List[str])
                self.lin = L.nn.Linear(2, 2)

            @L.jit.script_method
            def forward(self, a):
                return self.lin(a)
        sm = SM()
        return (L.jit.is_scripting(), L.jit.is_tracing(), L.jit.annotate(List[int], []), L.jit.wait(fut),
                fut.wait(), I.__name__, L.jit.Final is typing.Final, tuple(L.jit.Attribute(3, int)), sm.words,
                isinstance(sm, L.nn.Module), sm(x).shape == (2,),
                [L.jit.isinstance([1, 2], List[int]), L.jit.isinstance([1, "a"], List[int]),
                 L.jit.isinstance({"a": x}, Dict[str, L.Tensor]), L.jit.isinstance((1, x), Tuple[int, L.Tensor]),
                 L.jit.isinstance(None, Optional[int])],
                L.jit.ignore(lambda: 5)(), L.jit.unused(lambda: 6)(), L.jit.export(lambda: 7)())
    compare(go)


def test_jit_is_tracing_while_tracing():
    seen = []

    def fn(a):
        seen.append(kiln.jit.is_tracing())
        return a + 1
    traced = kiln.jit.trace(fn, (kiln.ones(1),))
    traced(kiln.ones(1))
    assert seen == [True, False]  # torch: True while tracing (and checking); traced calls run the graph


def test_jit_freeze_and_optimize():
    def go(L):
        m = _module_class(L)()
        frozen_train = outcome(lambda L_: L_.jit.freeze(L_.jit.script(m)), L)
        m.eval()
        x = L.ones(1, 3)
        return (frozen_train, L.jit.freeze(L.jit.script(m))(x).shape[0],
                L.jit.optimize_for_inference(L.jit.script(m))(x).shape[0])
    compare(go)


def test_jit_save_load_refuse_with_the_alternative(tmp_path):
    m = kiln.jit.script(kiln.nn.Linear(2, 2))
    with pytest.raises(NotImplementedError, match=r"state_dict\(\)"):
        kiln.jit.save(m, str(tmp_path / "m.pt"))
    assert not (tmp_path / "m.pt").exists()
    with pytest.raises(NotImplementedError, match="TorchScript"):
        kiln.jit.load(str(tmp_path / "m.pt"))
    assert "eager" in kiln.jit.__doc__


# ---------------------------------------------------------------- kiln.autograd.forward_ad, autograd.graph
def test_forward_ad_dual_tensors():
    def go(L):
        fw = L.autograd.forward_ad
        x, W, t = _data(L)[0], _data(L)[1], _data(L)[2]
        out = []
        with fw.dual_level():
            d = fw.make_dual(x, t)
            out.append(tuple(fw.unpack_dual(d)))
            out.append(tuple(fw.unpack_dual((d * 2).sin())))
            out.append(tuple(fw.unpack_dual(L.tanh(W @ d))))
            out.append(tuple(fw.unpack_dual(L.softmax(d, 0) * d.exp().sum())))
            out.append(tuple(fw.unpack_dual(x * 2)))
            out.append(tuple(fw.unpack_dual(d * 0)))
            out.append(outcome(lambda L_: fw.make_dual(x, L_.ones(2, dtype=L_.float64)), L))
            out.append(outcome(lambda L_: fw.enter_dual_level(), L))
        out.append(outcome(lambda L_: fw.make_dual(x, t), L))
        out.append(tuple(fw.unpack_dual(x)))
        out.append(type(fw.unpack_dual(x)).__name__)
        return out
    compare(go, check_requires_grad=False)  # kiln's dual tensors require grad (the double-backward trick)


def test_forward_ad_under_no_grad_is_refused_clearly():
    fw = kiln.autograd.forward_ad
    with kiln.no_grad(), fw.dual_level():
        with pytest.raises(RuntimeError, match="grad mode"):
            fw.make_dual(kiln.ones(2), kiln.ones(2))


def test_saved_tensors_hooks_and_save_on_cpu():
    def go(L):
        a = L.ones(2, requires_grad=True)
        with L.autograd.graph.save_on_cpu():
            (a * a * 3).sum().backward()
        return a.grad
    compare(go)  # saved_tensors_hooks itself: tests/python/test_saved_tensors_hooks.py
