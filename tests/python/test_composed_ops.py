"""The torch functions kiln composes in Python (python/kiln/_composed_ops.py) against torch 1.13:
values, dtypes, shapes, which results are views, gradients, and the errors of bad arguments."""
import numpy as np
import pytest
import torch

import kiln


def pair(array):
    return kiln.tensor(array), torch.tensor(array)


def same(k, t):
    if isinstance(t, (tuple, list)):
        assert isinstance(k, tuple) and len(k) == len(t)
        for a, b in zip(k, t):
            same(a, b)
        return
    assert tuple(k.shape) == tuple(t.shape)
    assert str(k.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]
    np.testing.assert_array_equal(k.detach().numpy(), t.detach().numpy())


X = np.arange(24, dtype=np.float32).reshape(2, 3, 4)


@pytest.mark.parametrize("arg, dim", [(3, 2), (4, 2), (5, -1), ([1, 3], 2), ([0, -1, 9], 2), ([2, 1], 1), (2, 0),
                                      ((1,), 1)])
def test_tensor_split(arg, dim):
    k, t = pair(X)
    same(kiln.tensor_split(k, arg, dim), torch.tensor_split(t, arg, dim))
    same(k.tensor_split(arg, dim=dim), t.tensor_split(arg, dim=dim))
    parts = kiln.tensor_split(k, arg, dim)
    k_end = k.data_ptr() + k.numel() * k.element_size()
    # views into k's memory (an empty part has no data: data_ptr() 0, as torch's)
    assert all(p.numel() == 0 or k.data_ptr() <= p.data_ptr() <= k_end for p in parts)


def test_tensor_split_by_tensor_and_errors():
    k, t = pair(X)
    same(kiln.tensor_split(k, kiln.tensor([1, 2]), 1), torch.tensor_split(t, torch.tensor([1, 2]), 1))
    same(kiln.tensor_split(k, kiln.tensor(2), 2), torch.tensor_split(t, torch.tensor(2), 2))
    for bad in (lambda m, x: m.tensor_split(x, 0), lambda m, x: m.tensor_split(x[0, 0, 0], 2),
                lambda m, x: m.tensor_split(x, 2, 3)):
        with pytest.raises(Exception) as kerr:
            bad(kiln, k)
        with pytest.raises(Exception) as terr:
            bad(torch, t)
        assert kerr.type is terr.type


@pytest.mark.parametrize("name, arg", [("hsplit", 2), ("hsplit", [1]), ("vsplit", 2), ("dsplit", 2), ("dsplit", [1, 3])])
def test_hsplit_vsplit_dsplit(name, arg):
    a = np.arange(48, dtype=np.float32).reshape(2, 4, 6)
    k, t = pair(a)
    same(getattr(kiln, name)(k, arg), getattr(torch, name)(t, arg))
    with pytest.raises(RuntimeError):
        getattr(kiln, name)(k, 5)


@pytest.mark.parametrize("n", [1, 2, 3])
def test_atleast_nd(n):
    tensors = [np.float32(1.5), np.arange(3, dtype=np.float32), np.ones((2, 3), np.float32),
               np.ones((2, 3, 4), np.float32)]
    ks = [kiln.tensor(a) for a in tensors]
    ts = [torch.tensor(a) for a in tensors]
    fk, ft = getattr(kiln, f"atleast_{n}d"), getattr(torch, f"atleast_{n}d")
    for k, t in zip(ks, ts):
        same(fk(k), ft(t))
    same(fk(*ks), ft(*ts))
    same(fk(ks), ft(ts))


@pytest.mark.parametrize("dim", [None, 0, 1, -1])
def test_take_along_dim(dim):
    rng = np.random.default_rng(0)
    a = rng.standard_normal((3, 4)).astype(np.float32)
    idx = np.argsort(a, axis=1 if dim is None else dim)
    k, t = pair(a)
    ki, ti = kiln.tensor(idx), torch.tensor(idx)
    same(kiln.take_along_dim(k, ki, dim), torch.take_along_dim(t, ti, dim))
    # broadcasting the other dims
    same(kiln.take_along_dim(k, kiln.tensor([[0], [2], [1]]), 1), torch.take_along_dim(t, torch.tensor([[0], [2], [1]]), 1))


@pytest.mark.parametrize("k_, dim, keepdim", [(1, -1, False), (2, 0, True), (3, 1, False), (4, 2, True)])
def test_kthvalue(k_, dim, keepdim):
    a = np.array([[[3.0, 1.0, 4.0, 1.5], [5.0, 9.0, 2.0, 6.0], [np.nan, 5.0, 3.0, 5.5]],
                  [[2.0, 7.0, 1.0, 8.0], [2.5, 8.0, 1.5, 8.5], [0.0, -1.0, 2.0, -3.0]]], np.float32)
    k, t = pair(a)
    kv, tv = kiln.kthvalue(k, k_, dim, keepdim), torch.kthvalue(t, k_, dim, keepdim)
    same(kv.values, tv.values)
    same(kv.indices, tv.indices)
    with pytest.raises(RuntimeError):
        kiln.kthvalue(k, 9, dim)


def test_kthvalue_gradient_matches_torch():
    a = np.array([[3.0, 1.0, 4.0], [5.0, 9.0, 2.0]], np.float64)
    k = kiln.tensor(a, requires_grad=True)
    t = torch.tensor(a, requires_grad=True)
    kiln.kthvalue(k, 2, 1).values.sum().backward()
    torch.kthvalue(t, 2, 1).values.sum().backward()
    same(k.grad, t.grad)


def test_msort_argwhere_diagflat_dist_inner():
    rng = np.random.default_rng(1)
    a = rng.standard_normal((4, 3)).astype(np.float32)
    b = rng.standard_normal((2, 3)).astype(np.float32)
    (k, t), (kb, tb) = pair(a), pair(b)
    same(kiln.msort(k), torch.msort(t))
    same(kiln.argwhere(k > 0), torch.argwhere(t > 0))
    same(kiln.diagflat(k[:2, :2], 1), torch.diagflat(t[:2, :2], 1))
    for p in (2, 1, 0, float("inf")):
        np.testing.assert_allclose(kiln.dist(k[:2], kb, p).numpy(), torch.dist(t[:2], tb, p).numpy(), rtol=1e-6)
    np.testing.assert_allclose(kiln.inner(k, kb).numpy(), torch.inner(t, tb).numpy(), rtol=1e-6)
    same(kiln.inner(k, kiln.tensor(2.0)), torch.inner(t, torch.tensor(2.0)))
    with pytest.raises(RuntimeError):
        kiln.inner(k, kiln.ones(4))


@pytest.mark.parametrize("beta, alpha", [(1, 1), (0.5, 2), (0, 1)])
def test_addr_addmv(beta, alpha):
    rng = np.random.default_rng(2)
    m = rng.standard_normal((3, 4))
    m[0, 0] = np.nan  # beta = 0 ignores it
    v1, v2, mat, vec = (rng.standard_normal(s) for s in ((3,), (4,), (3, 4), (4,)))
    kr = kiln.addr(kiln.tensor(m), kiln.tensor(v1), kiln.tensor(v2), beta=beta, alpha=alpha)
    tr = torch.addr(torch.tensor(m), torch.tensor(v1), torch.tensor(v2), beta=beta, alpha=alpha)
    np.testing.assert_allclose(kr.numpy(), tr.numpy(), rtol=1e-12)
    km = kiln.addmv(kiln.tensor(m[:, 0]), kiln.tensor(mat), kiln.tensor(vec), beta=beta, alpha=alpha)
    tm = torch.addmv(torch.tensor(m[:, 0]), torch.tensor(mat), torch.tensor(vec), beta=beta, alpha=alpha)
    np.testing.assert_allclose(km.numpy(), tm.numpy(), rtol=1e-12)


def test_block_diag_and_cartesian_prod():
    parts = [np.ones((2, 2), np.float32), np.arange(3, dtype=np.int64), np.float32(5.0), np.ones((1, 2), np.float32)]
    same(kiln.block_diag(*[kiln.tensor(p) for p in parts]), torch.block_diag(*[torch.tensor(p) for p in parts]))
    a, b, c = np.array([1, 2]), np.array([3, 4, 5]), np.array([6])
    same(kiln.cartesian_prod(kiln.tensor(a), kiln.tensor(b), kiln.tensor(c)),
         torch.cartesian_prod(torch.tensor(a), torch.tensor(b), torch.tensor(c)))
    with pytest.raises(RuntimeError):
        kiln.block_diag(kiln.ones(2, 2, 2))


@pytest.mark.parametrize("form", ["dx", "x1d", "xnd", "default"])
def test_trapezoid(form):
    rng = np.random.default_rng(3)
    y = rng.standard_normal((3, 5)).astype(np.float32)
    x = np.sort(rng.standard_normal(5)).astype(np.float32)
    xn = np.sort(rng.standard_normal((3, 5)), axis=1).astype(np.float32)
    (ky, ty) = pair(y)
    if form == "dx":
        got, want = kiln.trapezoid(ky, dx=0.5), torch.trapezoid(ty, dx=0.5)
    elif form == "x1d":
        got, want = kiln.trapezoid(ky, kiln.tensor(x)), torch.trapezoid(ty, torch.tensor(x))
    elif form == "xnd":
        got, want = kiln.trapz(ky, kiln.tensor(xn), dim=1), torch.trapz(ty, torch.tensor(xn), dim=1)
    else:
        got, want = kiln.trapezoid(ky, dim=0), torch.trapezoid(ty, dim=0)
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("name", ["quantile", "nanquantile"])
@pytest.mark.parametrize("q", [0.3, 0.0, 1.0, [0.25, 0.5, 0.9]])
@pytest.mark.parametrize("dim, keepdim", [(None, False), (None, True), (1, False), (0, True), (-1, True)])
@pytest.mark.parametrize("interpolation", ["linear", "lower", "higher", "midpoint", "nearest"])
def test_quantile_and_nanquantile(name, q, dim, keepdim, interpolation):
    rng = np.random.default_rng(4)
    a = rng.standard_normal((3, 5, 4))
    a[0, 1, 2] = np.nan
    a[2, :, 3] = np.nan
    k, t = pair(a)
    kq, tq = (kiln.tensor(q, dtype=kiln.float64), torch.tensor(q, dtype=torch.float64)) if isinstance(q, list) else (q, q)
    got = getattr(kiln, name)(k, kq, dim=dim, keepdim=keepdim, interpolation=interpolation)
    want = getattr(torch, name)(t, tq, dim=dim, keepdim=keepdim, interpolation=interpolation)
    assert tuple(got.shape) == tuple(want.shape)
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-12, atol=0)


def test_quantile_gradient_and_errors_match_torch():
    a = np.array([[3.0, 1.0, 4.0, 1.5], [5.0, 9.0, 2.0, 6.0]])
    k = kiln.tensor(a, requires_grad=True)
    t = torch.tensor(a, requires_grad=True)
    kiln.quantile(k, kiln.tensor([0.2, 0.7], dtype=kiln.float64), dim=1).sum().backward()
    torch.quantile(t, torch.tensor([0.2, 0.7], dtype=torch.float64), dim=1).sum().backward()
    np.testing.assert_allclose(k.grad.numpy(), t.grad.numpy(), rtol=1e-12)
    for bad in (lambda m: m.quantile(m.ones(3, dtype=m.int64), 0.5), lambda m: m.quantile(m.ones(3), 1.5),
                lambda m: m.quantile(m.ones(3), m.tensor([0.5], dtype=m.float64)),
                lambda m: m.quantile(m.ones(3), m.tensor([[0.5]])), lambda m: m.quantile(m.ones(3), m.tensor([-0.1])),
                lambda m: m.quantile(m.ones(3), 0.5, interpolation="cubic"),
                lambda m: m.quantile(m.ones(3), 0.5, dim=2), lambda m: m.quantile(m.ones(0), 0.5)):
        with pytest.raises(Exception) as terr:
            bad(torch)
        with pytest.raises(Exception) as kerr:
            bad(kiln)
        assert kerr.type is terr.type, (kerr.value, terr.value)
    # torch checks the interpolation before the tensors
    for bad in (lambda m: m.quantile(m.ones(3, dtype=m.int64), 0.5, interpolation="cubic"),
                lambda m: m.quantile(m.ones(3), m.tensor([1.5]), interpolation="cubic")):
        with pytest.raises(RuntimeError) as terr:
            bad(torch)
        with pytest.raises(RuntimeError) as kerr:
            bad(kiln)
        assert str(kerr.value) == str(terr.value)
