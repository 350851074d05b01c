"""out= on the named-tuple functions (sort, topk, max/min over a dim, argmax, kthvalue, ...), logspace,
the deprecated triangular_solve, and the in-place function aliases (relu_, F.relu_, ...) against torch."""
import warnings

import numpy as np
import pytest
import torch

import kiln

X = np.array([[3.0, 1.0, 2.0, 2.5], [0.0, 5.0, 4.0, -1.0], [7.0, 6.0, 1.0, 0.5]], dtype=np.float32)  # no ties

CALLS = {
    "sort": lambda L, x, out: L.sort(x, 1, out=out),
    "sort descending": lambda L, x, out: L.sort(x, 0, descending=True, out=out),
    "topk": lambda L, x, out: L.topk(x, 2, out=out),
    "max dim": lambda L, x, out: L.max(x, 1, out=out),
    "min dim keepdim": lambda L, x, out: L.min(x, 0, keepdim=True, out=out),
    "kthvalue": lambda L, x, out: L.kthvalue(x, 2, 1, out=out),
}


def _outs(L, n_tensors):
    return (L.empty(5), L.empty(0, dtype=L.int64)) if n_tensors == 2 else L.empty(0, dtype=L.int64)


@pytest.mark.parametrize("name", list(CALLS))
def test_tuple_out_matches_torch(name):
    results = []
    for L in (torch, kiln):
        out = _outs(L, 2)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            r = CALLS[name](L, L.tensor(X), out)
        assert r[0] is out[0] and r[1] is out[1]
        assert any("was resized" in str(w.message) for w in caught)  # out[0] had 5 elements
        results.append([t.numpy() for t in r])
    for got, want in zip(results[1], results[0]):
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("name", ["argmax", "argmin"])
def test_argmax_out(name):
    got = []
    for L in (torch, kiln):
        out = L.empty(0, dtype=L.int64)
        assert getattr(L, name)(L.tensor(X), 1, out=out) is out
        got.append(out.numpy())
    np.testing.assert_array_equal(got[1], got[0])


def test_histogram_out():
    got = []
    for L in (torch, kiln):
        x = L.tensor(X)
        hist, edges = L.empty(3), L.empty(4)
        r = L.histogram(x, 3, range=(0.0, 8.0), out=(hist, edges))
        assert r.hist is hist and r.bin_edges is edges and type(r).__name__ == "histogram_out"
        h2, e2 = L.empty(5), L.empty(0)  # resized: with the warning for the one that had elements
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            L.histogram(x, L.tensor([0.0, 1.5, 4.0]), weight=x, out=(h2, e2))
        assert sum("was resized" in str(w.message) for w in caught) == 1
        with pytest.raises(RuntimeError):
            L.histogram(x, 3, out=(L.empty(3, dtype=L.int64), L.empty(4)))
        with pytest.raises(TypeError):
            L.histogram(x, 3, out=hist)
        got.append([t.numpy() for t in (hist, edges, h2, e2)])
    for k, t in zip(got[1], got[0]):
        np.testing.assert_allclose(k, t, rtol=1e-6)


def test_out_errors_match_torch():
    for L in (torch, kiln):
        x = L.tensor(X)
        with pytest.raises(RuntimeError, match="Expected out tensor to have dtype float, but got double instead"):
            L.sort(x, 1, out=(L.empty(0, dtype=L.float64), L.empty(0, dtype=L.int64)))
        with pytest.raises(RuntimeError, match="don't support automatic differentiation"):
            L.sort(x.clone().requires_grad_(), 1, out=(L.empty(0), L.empty(0, dtype=L.int64)))
        with pytest.raises(TypeError):
            L.sort(x, 1, out=L.empty(0))


@pytest.mark.parametrize("args", [(0, 2, 5), (-1, 1, 4, 2.0), (0, 3, 4), (2, 2, 1), (0, 1, 0), (1, -1, 3, 0.5)])
@pytest.mark.parametrize("dtype", [None, "float64", "int64"])
def test_logspace(args, dtype):
    kw = {} if dtype is None else {"dtype": getattr(torch, dtype)}
    t = torch.logspace(*args, **kw)
    k = kiln.logspace(*args, **({} if dtype is None else {"dtype": getattr(kiln, dtype)}))
    assert str(k.dtype).split(".")[1] == str(t.dtype).split(".")[1] and tuple(k.shape) == tuple(t.shape)
    np.testing.assert_allclose(k.numpy(), t.numpy(), rtol=2e-7 if t.dtype == torch.float32 else 1e-15)


@pytest.mark.parametrize("upper,transpose,unitriangular", [(True, False, False), (False, False, False),
                                                            (True, True, False), (False, True, True)])
def test_triangular_solve(upper, transpose, unitriangular):
    rng = np.random.default_rng(0)
    a = (rng.standard_normal((2, 3, 3)) + 4 * np.eye(3)).astype(np.float64)
    b = rng.standard_normal((2, 3, 2))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t = torch.triangular_solve(torch.tensor(b), torch.tensor(a), upper, transpose, unitriangular)
    k = kiln.triangular_solve(kiln.tensor(b), kiln.tensor(a), upper, transpose, unitriangular)
    np.testing.assert_allclose(k.solution.numpy(), t.solution.numpy(), rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(k.cloned_coefficient.numpy(), t.cloned_coefficient.numpy())


@pytest.mark.parametrize("call", [lambda L, x: L.relu_(x), lambda L, x: L.sigmoid_(x), lambda L, x: L.tanh_(x),
                                  lambda L, x: L.nn.functional.relu_(x),
                                  lambda L, x: L.nn.functional.leaky_relu_(x, 0.2),
                                  lambda L, x: L.nn.functional.hardtanh_(x, -0.5, 0.5)])
def test_in_place_function_aliases(call):
    got = []
    for L in (torch, kiln):
        x = L.tensor([-2.0, -0.25, 0.0, 0.75, 3.0])
        assert call(L, x) is x
        got.append(x.numpy())
    np.testing.assert_allclose(got[1], got[0], rtol=1e-6)
