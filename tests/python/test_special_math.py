"""The math ops torch programs call beside exp/log/sin/cos (log2 ... erfinv, logit, hypot, copysign),
their torch.special aliases and the arc* aliases, against Debian's torch 1.13 on the same inputs;
erfinv's accuracy against a float64 reference."""
import math

import numpy as np
import pytest

import kiln

torch = pytest.importorskip("torch")

UNARY = ["log2", "log10", "exp2", "asin", "acos", "atan", "sinh", "cosh", "tan", "asinh", "acosh", "atanh",
         "erfc", "erfinv", "sgn", "deg2rad", "rad2deg", "logit"]


def _inputs(dtype="float32"):
    rng = np.random.default_rng(0)
    x = rng.uniform(-3, 3, 4096)
    x = np.concatenate([x, [0.0, -0.0, 1.0, -1.0, 0.5, np.inf, -np.inf, np.nan, 1e-30, 100.0]])
    return x.astype(dtype)


def _close(got, want, rtol):
    got, want = got.astype(np.float64), want.astype(np.float64)
    np.testing.assert_allclose(got, want, rtol=rtol, atol=0, equal_nan=True)


@pytest.mark.parametrize("name", UNARY)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_unary_matches_torch(name, dtype):
    x = _inputs(dtype)
    with np.errstate(all="ignore"):
        got = getattr(kiln, name)(kiln.tensor(x)).numpy()
        want = getattr(torch, name)(torch.tensor(x)).numpy()
    assert got.dtype == want.dtype
    _close(got, want, 4e-6 if dtype == "float32" else 1e-13)


@pytest.mark.parametrize("name", UNARY)
def test_integer_inputs_promote_like_torch(name):
    x = [0, 1, 2, -3] if name not in ("acosh",) else [1, 2, 3]
    got, want = getattr(kiln, name)(kiln.tensor(x)), getattr(torch, name)(torch.tensor(x))
    assert str(got.dtype) == str(want.dtype).replace("torch", "kiln")
    _close(got.numpy(), want.numpy(), 1e-6)


def test_logit_eps_matches_torch():
    x = np.linspace(-0.1, 1.1, 1201).astype(np.float32)
    for eps in (None, 0.0, 1e-3, 0.25, -0.5):
        got = kiln.logit(kiln.tensor(x), eps).numpy()
        want = torch.logit(torch.tensor(x), eps).numpy()
        _close(got, want, 2e-6)
        g = kiln.tensor(x[100:-100].astype(np.float64), requires_grad=True)
        t = torch.tensor(x[100:-100].astype(np.float64), requires_grad=True)
        kiln.logit(g, eps).sum().backward()
        torch.logit(t, eps).sum().backward()
        _close(g.grad.numpy(), t.grad.numpy(), 1e-12)


def test_hypot_copysign_match_torch():
    rng = np.random.default_rng(1)
    a, b = rng.normal(size=(3, 4)).astype(np.float32), rng.normal(size=(4,)).astype(np.float32)
    _close(kiln.hypot(kiln.tensor(a), kiln.tensor(b)).numpy(), torch.hypot(torch.tensor(a), torch.tensor(b)).numpy(), 1e-7)
    _close(kiln.copysign(kiln.tensor(a), kiln.tensor(b)).numpy(),
           torch.copysign(torch.tensor(a), torch.tensor(b)).numpy(), 0)
    assert kiln.copysign(kiln.tensor([1, -2]), -1.5).tolist() == torch.copysign(torch.tensor([1, -2]), -1.5).tolist()
    assert kiln.copysign(kiln.tensor([1.0, 2.0]), kiln.tensor([-0.0, float("nan")])).tolist() == \
        torch.copysign(torch.tensor([1.0, 2.0]), torch.tensor([-0.0, float("nan")])).tolist()
    with pytest.raises(RuntimeError):
        kiln.hypot(kiln.tensor([1, 2]), kiln.tensor([3, 4]))  # torch: not implemented for 'Long'
    x = kiln.tensor([3.0, -4.0], dtype=kiln.float64, requires_grad=True)
    y = kiln.tensor([4.0, 3.0], dtype=kiln.float64, requires_grad=True)
    kiln.hypot(x, y).sum().backward()
    assert np.allclose(x.grad.numpy(), [0.6, -0.8]) and np.allclose(y.grad.numpy(), [0.8, 0.6])


def test_erfinv_is_as_accurate_as_torch():
    y = np.random.default_rng(2).uniform(-1, 1, 1 << 16).astype(np.float32)
    x64 = kiln.erfinv(kiln.tensor(y.astype(np.float64))).numpy()
    erf = np.vectorize(math.erf)
    assert np.max(np.abs(erf(x64) - y.astype(np.float64))) < 1e-15  # the float64 inverse is exact enough
    ours = kiln.erfinv(kiln.tensor(y)).numpy().astype(np.float64)
    theirs = torch.erfinv(torch.tensor(y)).numpy().astype(np.float64)
    ulp = np.spacing(np.abs(x64).astype(np.float32)).astype(np.float64)
    assert np.max(np.abs(ours - x64) / ulp) <= np.max(np.abs(theirs - x64) / ulp) + 1e-9
    np.testing.assert_array_equal(ours, theirs)  # torch's algorithm, rounded as its CPU kernel rounds


def test_special_namespace_and_arc_aliases():
    x = _inputs()[:200]
    p = np.linspace(0.01, 0.99, 50).astype(np.float32)
    for name, arg in [("erf", x), ("erfc", x), ("erfinv", x / 4), ("expit", x), ("exp2", x), ("expm1", x),
                      ("log1p", np.abs(x)), ("logit", p)]:
        with np.errstate(all="ignore"):
            _close(getattr(kiln.special, name)(kiln.tensor(arg)).numpy(),
                   getattr(torch.special, name)(torch.tensor(arg)).numpy(), 4e-6)
    out = kiln.empty(0)
    kiln.special.erfinv(kiln.tensor(p), out=out)
    _close(out.numpy(), torch.special.erfinv(torch.tensor(p)).numpy(), 1e-7)
    for arc, base in [("arcsin", "asin"), ("arccos", "acos"), ("arctan", "atan"), ("arcsinh", "asinh"),
                      ("arctanh", "atanh")]:
        t = kiln.tensor(p)
        _close(getattr(kiln, arc)(t).numpy(), getattr(torch, arc)(torch.tensor(p)).numpy(), 4e-6)
        _close(getattr(t, arc)().numpy(), getattr(kiln, base)(t).numpy(), 0)
        getattr(t, arc + "_")()
        _close(t.numpy(), getattr(torch, base)(torch.tensor(p)).numpy(), 4e-6)
    q = kiln.tensor(p + 1)
    _close(kiln.arccosh(q).numpy(), torch.arccosh(torch.tensor(p + 1)).numpy(), 4e-6)


def test_in_place_and_out_forms():
    x = kiln.tensor([0.25, 0.5])
    x.asin_()
    _close(x.numpy(), torch.tensor([0.25, 0.5]).asin_().numpy(), 0)
    with pytest.raises(RuntimeError):
        kiln.tensor([1, 2]).log2_()  # an int tensor cannot hold the float result
    out = kiln.empty(2, dtype=kiln.float64)
    kiln.tan(kiln.tensor([0.1, 0.2], dtype=kiln.float64), out=out)
    _close(out.numpy(), np.tan([0.1, 0.2]), 1e-15)
