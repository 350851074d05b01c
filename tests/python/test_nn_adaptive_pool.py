"""F.adaptive_avg_pool1d/3d, F.adaptive_max_pool1d/2d/3d and their modules against torch 1.13: values,
indices, gradients (float64) and torch's errors."""
import warnings

import numpy as np
import pytest

import kiln
import kiln.nn.functional as F

torch = pytest.importorskip("torch")
TF = torch.nn.functional


def _check(kfn, tfn, shape, dtype=np.float64, tol=1e-10):
    a = np.random.default_rng(len(shape)).uniform(-2, 2, size=shape).astype(dtype)
    k, t = kiln.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)
    ko, to = kfn(k), tfn(t)
    assert tuple(ko.shape) == tuple(to.shape)
    np.testing.assert_allclose(ko.detach().numpy(), to.detach().numpy(), rtol=tol, atol=tol)
    if to.numel():
        w = np.random.default_rng(7).uniform(-1, 1, size=tuple(to.shape)).astype(dtype)
        (ko * kiln.tensor(w)).sum().backward()
        (to * torch.tensor(w)).sum().backward()
        np.testing.assert_allclose(k.grad.numpy(), t.grad.numpy(), rtol=tol, atol=tol)


CASES = [
    ("adaptive_avg_pool1d", (2, 3, 7), 3), ("adaptive_avg_pool1d", (3, 7), (5,)), ("adaptive_avg_pool1d", (2, 3, 4), 9),
    ("adaptive_avg_pool1d", (0, 2, 7), 3),
    ("adaptive_avg_pool3d", (2, 3, 5, 7, 4), (2, 3, 3)), ("adaptive_avg_pool3d", (2, 5, 7, 4), 3),
    ("adaptive_avg_pool3d", (1, 2, 3, 4, 2), (5, None, 3)), ("adaptive_avg_pool3d", (0, 2, 3, 3, 3), 2),
    ("adaptive_max_pool1d", (2, 3, 7), 3), ("adaptive_max_pool1d", (3, 4), 7),
    ("adaptive_max_pool2d", (2, 3, 7, 5), (3, None)), ("adaptive_max_pool2d", (3, 4, 5), 6),
    ("adaptive_max_pool2d", (0, 3, 4, 5), 2),
    ("adaptive_max_pool3d", (2, 3, 5, 7, 4), (2, 3, 3)), ("adaptive_max_pool3d", (2, 3, 4, 2), (5, None, 3)),
    ("adaptive_max_pool3d", (0, 2, 3, 3, 3), 2),
]


@pytest.mark.parametrize("name,shape,size", CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_matches_torch(name, shape, size):
    _check(lambda x: getattr(F, name)(x, size), lambda x: getattr(TF, name)(x, size), shape)
    _check(lambda x: getattr(F, name)(x, size), lambda x: getattr(TF, name)(x, size), shape, np.float32, 1e-5)


@pytest.mark.parametrize("name,shape", [("adaptive_max_pool1d", (2, 3, 9)), ("adaptive_max_pool2d", (2, 3, 7, 5)),
                                        ("adaptive_max_pool3d", (2, 3, 4, 7, 5))])
def test_max_pool_indices_match_torch(name, shape):
    a = np.random.default_rng(0).uniform(size=shape)
    a.reshape(-1)[::5] = np.nan  # torch's scan: a NaN beats every number, a later NaN the earlier one
    _, ki = getattr(F, name)(kiln.tensor(a), 3, return_indices=True)
    _, ti = getattr(TF, name)(torch.tensor(a), 3, return_indices=True)
    assert ki.dtype == kiln.int64
    np.testing.assert_array_equal(ki.numpy(), ti.numpy())


@pytest.mark.parametrize("make,shape", [
    (lambda m: m.AdaptiveAvgPool1d(3), (2, 3, 8)), (lambda m: m.AdaptiveAvgPool3d((2, None, 3)), (1, 2, 4, 5, 6)),
    (lambda m: m.AdaptiveMaxPool1d(4), (2, 3, 9)), (lambda m: m.AdaptiveMaxPool2d((3, 2)), (1, 2, 7, 5)),
    (lambda m: m.AdaptiveMaxPool3d((2, None, 3)), (1, 2, 4, 5, 6)),
])
def test_modules_match_torch(make, shape):
    km, tm = make(kiln.nn), make(torch.nn)
    assert repr(km) == repr(tm)
    _check(km, tm, shape)


def test_max_pool_module_returns_indices():
    x = np.random.default_rng(1).uniform(size=(1, 2, 7, 5))
    ko, ki = kiln.nn.AdaptiveMaxPool2d(3, return_indices=True)(kiln.tensor(x))
    to, ti = torch.nn.AdaptiveMaxPool2d(3, return_indices=True)(torch.tensor(x))
    np.testing.assert_array_equal(ki.numpy(), ti.numpy())
    np.testing.assert_allclose(ko.numpy(), to.numpy())


ERRORS = [
    (lambda f, m: f.adaptive_avg_pool3d(m.zeros(3, 4, 5), 2), RuntimeError, "Expected 4D or 5D tensor"),
    (lambda f, m: f.adaptive_avg_pool3d(m.zeros(1, 2, 3, 4, 5), (2, 2)), RuntimeError, "output_size must be 3"),
    (lambda f, m: f.adaptive_avg_pool3d(m.zeros(1, 0, 3, 4, 5), 2), RuntimeError, "non-zero size for non-batch"),
    (lambda f, m: f.adaptive_avg_pool3d(m.zeros(1, 2, 3, 4, 5, dtype=m.int64), 2), RuntimeError, "not implemented for"),
    (lambda f, m: f.adaptive_avg_pool1d(m.zeros(7), 3), RuntimeError, "Expected 2 to 3 dimensions"),
    (lambda f, m: f.adaptive_avg_pool1d(m.zeros(2, 3, 7), (3, 2)), RuntimeError, "should contain one int"),
    (lambda f, m: f.adaptive_avg_pool1d(m.zeros(2, 3, 7), (3, None)), TypeError, "must be tuple of ints"),
    (lambda f, m: f.adaptive_max_pool1d(m.zeros(2, 3, 7), 2.5), TypeError, "must be tuple of ints"),
    (lambda f, m: f.adaptive_avg_pool2d(m.zeros(2, 3, 7, 5), (3,)), RuntimeError, "output_size must be 2"),
    (lambda f, m: f.adaptive_avg_pool2d(m.zeros(2, 3, 7, 5), (3, 3, 3, 3)), ValueError, "Input dimension should be at least 5"),
    (lambda f, m: f.adaptive_avg_pool3d(m.zeros(2, 3, 7, 5, 4), None), TypeError, ""),
    (lambda f, m: f.adaptive_max_pool1d(m.zeros(1, 2, 3, 7), 3), RuntimeError, "Expected 2 to 3 dimensions"),
    (lambda f, m: f.adaptive_max_pool2d(m.zeros(7, 5), 3), RuntimeError, "Expected 3D or 4D tensor"),
    (lambda f, m: f.adaptive_max_pool2d(m.zeros(2, 0, 7, 5), 3), RuntimeError, "non-zero size for non-batch"),
    (lambda f, m: f.adaptive_max_pool2d(m.zeros(2, 3, 7, 5, dtype=m.int64), 3), RuntimeError, "not implemented for"),
    (lambda f, m: f.adaptive_max_pool3d(m.zeros(3, 4, 5), 2), RuntimeError, "Expected 4D or 5D tensor"),
    (lambda f, m: f.adaptive_max_pool3d(m.zeros(1, 2, 3, 4, 5), (2, 2)), RuntimeError, "output_size.size.. must be 3"),
    (lambda f, m: f.adaptive_max_pool3d(m.zeros(1, 0, 3, 4, 5), 2), RuntimeError, "non-zero size for non-batch"),
]


@pytest.mark.parametrize("name,ok", [("adaptive_avg_pool2d", False), ("adaptive_max_pool2d", False),
                                     ("adaptive_avg_pool3d", True), ("adaptive_max_pool3d", True)])
def test_gradient_of_an_empty_output_as_torch(name, ok):
    # torch's 2-D backward kernels refuse a grad_output with an empty spatial dim, its 3-D ones do not
    for m, f in ((kiln, F), (torch, TF)):
        x = m.ones((1, 2, 3, 4) if "2d" in name else (1, 2, 3, 4, 2), requires_grad=True)
        out = getattr(f, name)(x, (0, 2) if "2d" in name else (0, 2, 1))
        if ok:
            out.sum().backward()
            assert float(x.grad.abs().sum()) == 0
        else:
            with pytest.raises(RuntimeError, match="non-zero size for non-batch dimensions"):
                out.sum().backward()


@pytest.mark.parametrize("call,exc,match", ERRORS, ids=[f"error-{i}" for i in range(len(ERRORS))])
def test_errors_match_torch(call, exc, match):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(exc, match=match):
            call(F, kiln)
        with pytest.raises(exc, match=match):
            call(TF, torch)
