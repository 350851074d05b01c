"""Reductions (sum, mean) against NumPy: all/dim/negative dims/keepdim/dtype=/out=,
non-contiguous inputs, zero-size inputs, and float32 accuracy on long inputs."""
import numpy as np
import pytest

import kiln

DTYPES = [kiln.bool, kiln.int32, kiln.int64, kiln.float32, kiln.float64]
FLOATS = [kiln.float32, kiln.float64]
NP = {kiln.bool: np.bool_, kiln.int32: np.int32, kiln.int64: np.int64,
      kiln.float32: np.float32, kiln.float64: np.float64}
TOL = {kiln.float32: dict(rtol=1e-5, atol=1e-5), kiln.float64: dict(rtol=1e-12, atol=1e-12)}


# ----------------------------------------------------------------------------- helpers
def rand(shape, dtype, seed=0):
    rng = np.random.default_rng(seed)
    if dtype == kiln.bool:
        return np.asarray(rng.random(shape) < 0.5)
    if dtype in (kiln.int32, kiln.int64):
        return np.asarray(rng.integers(-50, 51, size=shape), dtype=NP[dtype])
    return np.asarray(rng.uniform(-2, 2, size=shape), dtype=NP[dtype])


def kt(a):
    return kiln.tensor(np.array(a, order="C"))


def is_float(dt):
    return dt in FLOATS


def sum_dtype(dtype):
    """PyTorch: sum of bool/int promotes to int64; floats keep their dtype."""
    return dtype if is_float(dtype) else kiln.int64


def np_reduce(name, a_np, dim, keepdim, dtype):
    """NumPy's sum/mean after casting to the result dtype (accumulated in float64 for floats)."""
    axis = None if dim is None or dim == () or dim == [] else (dim if isinstance(dim, int) else tuple(dim))
    acc = np.float64 if is_float(dtype) else np.int64
    a = a_np.astype(NP[dtype]).astype(acc)
    with np.errstate(all="ignore"):
        r = np.sum(a, axis=axis, keepdims=keepdim) if name == "sum" else np.mean(a, axis=axis, keepdims=keepdim)
    return np.asarray(r).astype(NP[dtype])


def assert_tensor(t, expected, dtype, tol=None):
    assert isinstance(t, kiln.Tensor)
    assert t.dtype == dtype, f"dtype {t.dtype}, expected {dtype}"
    expected = np.asarray(expected)
    assert tuple(t.shape) == expected.shape
    if is_float(dtype):
        np.testing.assert_allclose(t.numpy(), expected, **(tol or TOL[dtype]))
    else:
        np.testing.assert_array_equal(t.numpy(), expected)


def reduce_forms(name, t, *args, **kwargs):
    return {"function": getattr(kiln, name)(t, *args, **kwargs), "method": getattr(t, name)(*args, **kwargs)}


# ----------------------------------------------------------------------------- full reductions
@pytest.mark.parametrize("shape", [(), (1,), (7,), (3, 4), (2, 3, 4), (2, 1, 3, 5)], ids=str)
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_sum_all(dtype, shape):
    a_np = rand(shape, dtype, seed=1)
    rt = sum_dtype(dtype)
    expected = np_reduce("sum", a_np, None, False, rt)
    for form, r in reduce_forms("sum", kt(a_np)).items():
        assert r.dim() == 0
        assert_tensor(r, expected, rt)


@pytest.mark.parametrize("shape", [(), (7,), (3, 4), (2, 3, 4)], ids=str)
@pytest.mark.parametrize("dtype", FLOATS, ids=str)
def test_mean_all(dtype, shape):
    a_np = rand(shape, dtype, seed=2)
    expected = np_reduce("mean", a_np, None, False, dtype)
    for form, r in reduce_forms("mean", kt(a_np)).items():
        assert_tensor(r, expected, dtype)


def test_sum_int32_and_bool_give_int64():
    assert_tensor(kiln.sum(kiln.tensor([1, 2, 3], dtype=kiln.int32)), 6, kiln.int64)
    assert_tensor(kiln.sum(kiln.tensor([True, False, True])), 2, kiln.int64)
    assert_tensor(kiln.sum(kiln.tensor([[True, True], [False, True]]), 0), [1, 2], kiln.int64)
    # a sum that overflows int32 is right in int64
    big = kiln.full_like(kiln.empty(4, dtype=kiln.int32), 2**30)
    assert_tensor(kiln.sum(big), 2**32, kiln.int64)


@pytest.mark.parametrize("dtype", [kiln.bool, kiln.int32, kiln.int64], ids=str)
@pytest.mark.parametrize("dim", [None, 0, (0, 1)], ids=str)
def test_mean_of_integral_raises(dtype, dim):
    t = kt(rand((2, 3), dtype))
    with pytest.raises(RuntimeError):
        kiln.mean(t) if dim is None else kiln.mean(t, dim)
    with pytest.raises(RuntimeError):
        t.mean() if dim is None else t.mean(dim)


# ----------------------------------------------------------------------------- over dims
DIMS_3D = [0, 1, 2, -1, -2, -3, (0, 1), (0, 2), (1, 2), (2, 0), (-1, 0), (0, 1, 2), [1], []]


@pytest.mark.parametrize("keepdim", [False, True])
@pytest.mark.parametrize("dim", DIMS_3D, ids=str)
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("name", ["sum", "mean"])
def test_reduce_dims(name, dtype, dim, keepdim):
    a_np = rand((2, 3, 4), dtype, seed=3)
    a = kt(a_np)
    if name == "mean" and not is_float(dtype):
        with pytest.raises(RuntimeError):
            kiln.mean(a, dim, keepdim)
        return
    rt = sum_dtype(dtype) if name == "sum" else dtype
    expected = np_reduce(name, a_np, dim, keepdim, rt)
    for form, r in reduce_forms(name, a, dim, keepdim).items():
        assert_tensor(r, expected, rt)
    assert_tensor(getattr(kiln, name)(a, dim=dim, keepdim=keepdim), expected, rt)


@pytest.mark.parametrize("name", ["sum", "mean"])
def test_reduce_keepdim_shapes(name):
    a = kiln.ones(2, 3, 4)
    assert tuple(getattr(kiln, name)(a, 1).shape) == (2, 4)
    assert tuple(getattr(kiln, name)(a, 1, True).shape) == (2, 1, 4)
    assert tuple(getattr(kiln, name)(a, (0, 2), keepdim=True).shape) == (1, 3, 1)
    assert tuple(getattr(kiln, name)(a, -1, keepdim=False).shape) == (2, 3)


@pytest.mark.parametrize("dim", [0, -1, (0,), []], ids=str)
@pytest.mark.parametrize("keepdim", [False, True])
@pytest.mark.parametrize("name", ["sum", "mean"])
def test_reduce_zero_dim_input(name, dim, keepdim):
    """A 0-dim tensor accepts dim 0 / -1 and stays 0-dim."""
    t = kiln.tensor(2.5, dtype=kiln.float64)
    r = getattr(kiln, name)(t, dim, keepdim)
    assert_tensor(r, 2.5, kiln.float64)


@pytest.mark.parametrize("name", ["sum", "mean"])
def test_reduce_dim_errors(name):
    a = kiln.ones(2, 3)
    for dim in (2, -3, (0, 5)):
        with pytest.raises(IndexError):
            getattr(kiln, name)(a, dim)
    with pytest.raises(IndexError):
        getattr(kiln, name)(kiln.tensor(1.0), 1)
    for dim in ((0, 0), (1, -1)):
        with pytest.raises(RuntimeError):
            getattr(kiln, name)(a, dim)


# ----------------------------------------------------------------------------- dtype=
@pytest.mark.parametrize("case", [
    # (input dtype, dtype=, dims)
    (kiln.int32, kiln.int32, None), (kiln.int32, kiln.float64, None), (kiln.int32, kiln.float32, 1),
    (kiln.int64, kiln.float64, 0), (kiln.bool, kiln.int32, None), (kiln.bool, kiln.float32, 1),
    (kiln.float32, kiln.float64, None), (kiln.float32, kiln.float64, (0, 1)), (kiln.float64, kiln.float32, 1),
    (kiln.float32, kiln.int64, None), (kiln.float64, kiln.int32, 0),
], ids=str)
def test_sum_dtype_arg(case):
    """dtype= casts the input first, then reduces in that dtype."""
    in_dtype, dtype, dim = case
    a_np = rand((3, 5), in_dtype, seed=4)
    a = kt(a_np)
    expected = np_reduce("sum", a_np, dim, False, dtype)
    if dim is None:
        forms = {"function": kiln.sum(a, dtype=dtype), "method": a.sum(dtype=dtype)}
    else:
        forms = {"function": kiln.sum(a, dim, dtype=dtype), "method": a.sum(dim, dtype=dtype)}
    for form, r in forms.items():
        assert_tensor(r, expected, dtype)


@pytest.mark.parametrize("case", [
    (kiln.int32, kiln.float32, None), (kiln.int64, kiln.float64, 1), (kiln.bool, kiln.float32, 0),
    (kiln.float32, kiln.float64, None), (kiln.float32, kiln.float64, (0, 1)), (kiln.float64, kiln.float32, 1),
], ids=str)
def test_mean_dtype_arg(case):
    in_dtype, dtype, dim = case
    a_np = rand((3, 5), in_dtype, seed=5)
    a = kt(a_np)
    expected = np_reduce("mean", a_np, dim, False, dtype)
    r = kiln.mean(a, dtype=dtype) if dim is None else kiln.mean(a, dim, dtype=dtype)
    assert_tensor(r, expected, dtype)
    r = a.mean(dtype=dtype) if dim is None else a.mean(dim, keepdim=True, dtype=dtype)
    assert_tensor(r, expected if dim is None else np_reduce("mean", a_np, dim, True, dtype), dtype)


def test_mean_integral_with_integral_dtype_raises():
    with pytest.raises(RuntimeError):
        kiln.mean(kiln.arange(6), dtype=kiln.int64)


# ----------------------------------------------------------------------------- non-contiguous
def noncontiguous(kind, dtype, seed):
    """(kiln view, NumPy view) of logical shape (4, 5, 6), built the same way in both."""
    if kind == "permuted":  # memory order (6, 4, 5): every dim strided differently
        base = rand((6, 4, 5), dtype, seed)
        t = kiln.transpose(kiln.transpose(kt(base), 0, 1), 1, 2)
        return t, base.transpose(1, 2, 0)
    if kind == "transposed_inner":  # last two dims swapped
        base = rand((4, 6, 5), dtype, seed)
        return kiln.transpose(kt(base), 1, 2), base.transpose(0, 2, 1)
    if kind == "step":  # step 2 in the middle dim, step 3 in the last, with an offset
        base = rand((4, 10, 19), dtype, seed)
        return kiln.slice(kiln.slice(kt(base), 1, 0, None, 2), 2, 1, None, 3), base[:, ::2, 1::3]
    if kind == "expanded":  # stride 0 in the middle dim
        base = rand((4, 1, 6), dtype, seed)
        return kt(base).expand([4, 5, 6]), np.broadcast_to(base, (4, 5, 6))
    raise ValueError(kind)


NAME_DTYPE = [("sum", d) for d in DTYPES] + [("mean", d) for d in FLOATS]  # mean of ints raises
DIM_KEEPDIM = [(None, False)] + [(d, k) for d in (0, 1, 2, -1, (0, 1), (1, 2), (0, 2)) for k in (False, True)]


@pytest.mark.parametrize("dim_keepdim", DIM_KEEPDIM, ids=str)
@pytest.mark.parametrize("kind", ["permuted", "transposed_inner", "step", "expanded"])
@pytest.mark.parametrize("name_dtype", NAME_DTYPE, ids=str)
def test_reduce_noncontiguous(name_dtype, kind, dim_keepdim):
    (name, dtype), (dim, keepdim) = name_dtype, dim_keepdim
    t, a_np = noncontiguous(kind, dtype, seed=6)
    assert not t.is_contiguous()
    assert tuple(t.shape) == (4, 5, 6)
    rt = sum_dtype(dtype) if name == "sum" else dtype
    r = getattr(kiln, name)(t) if dim is None else getattr(kiln, name)(t, dim, keepdim)
    assert_tensor(r, np_reduce(name, a_np, dim, keepdim, rt), rt)


# ----------------------------------------------------------------------------- out=
@pytest.mark.parametrize("name_dtype", NAME_DTYPE, ids=str)
def test_reduce_out_resized(name_dtype):
    name, dtype = name_dtype
    a_np = rand((3, 4, 5), dtype, seed=7)
    rt = sum_dtype(dtype) if name == "sum" else dtype
    for dim, keepdim in ((1, False), (1, True), ((0, 2), False), (-1, True)):
        out = kiln.empty(0, dtype=rt)
        r = getattr(kiln, name)(kt(a_np), dim, keepdim, out=out)
        assert r is out
        assert_tensor(out, np_reduce(name, a_np, dim, keepdim, rt), rt)


@pytest.mark.parametrize("name", ["sum", "mean"])
def test_reduce_out_noncontiguous_keeps_strides(name):
    a_np = rand((3, 4, 5), kiln.float64, seed=8)
    base = kiln.zeros(5, 3, dtype=kiln.float64)
    out = kiln.transpose(base, 0, 1)  # (3, 5), strides (1, 3)
    getattr(kiln, name)(kt(a_np), 1, out=out)
    assert out.stride() == (1, 3)
    expected = np_reduce(name, a_np, 1, False, kiln.float64)
    assert_tensor(out, expected, kiln.float64)
    assert_tensor(base, expected.T, kiln.float64)


@pytest.mark.parametrize("name", ["sum", "mean"])
def test_reduce_out_dtype_is_the_result_dtype(name):
    """As in PyTorch, out= decides the result dtype (the input is reduced in it)."""
    a_np = rand((3, 4), kiln.float32, seed=9)
    out = kiln.empty(0, dtype=kiln.float64)
    getattr(kiln, name)(kt(a_np), 0, out=out)
    assert_tensor(out, np_reduce(name, a_np, 0, False, kiln.float64), kiln.float64, tol=dict(rtol=1e-6))


def test_sum_out_with_dtype_arg():
    a_np = rand((3, 4), kiln.int32, seed=10)
    out = kiln.empty(0, dtype=kiln.int64)
    kiln.sum(kt(a_np), 1, dtype=kiln.int64, out=out)
    assert_tensor(out, np_reduce("sum", a_np, 1, False, kiln.int64), kiln.int64)


# ----------------------------------------------------------------------------- zero-size
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_sum_zero_size(dtype):
    rt = sum_dtype(dtype)
    t = kiln.zeros(0, 3, dtype=dtype)
    assert_tensor(kiln.sum(t), 0, rt)
    assert_tensor(kiln.sum(t, 0), np.zeros(3), rt)
    assert_tensor(kiln.sum(t, 0, keepdim=True), np.zeros((1, 3)), rt)
    assert_tensor(kiln.sum(t, 1), np.zeros(0), rt)
    assert_tensor(kiln.sum(t, 1, True), np.zeros((0, 1)), rt)
    assert_tensor(kiln.sum(kiln.zeros(2, 0, 4, dtype=dtype), (0, 1)), np.zeros(4), rt)


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
def test_mean_zero_size_is_nan(dtype):
    t = kiln.zeros(0, 3, dtype=dtype)
    assert_tensor(kiln.mean(t), np.nan, dtype)
    assert_tensor(kiln.mean(t, 0), np.full(3, np.nan), dtype)
    assert_tensor(kiln.mean(t, 1), np.zeros(0), dtype)
    assert_tensor(kiln.mean(kiln.zeros(0, dtype=dtype), 0, True), np.full(1, np.nan), dtype)


# ----------------------------------------------------------------------------- accuracy
def test_float32_sum_of_a_million_is_close_to_float64():
    a_np = np.random.default_rng(11).uniform(0, 1, size=1_000_000).astype(np.float32)
    ref = a_np.astype(np.float64).sum()
    got = kiln.sum(kt(a_np)).item()
    assert abs(got - ref) <= 1e-5 * abs(ref)
    got_mean = kiln.mean(kt(a_np)).item()
    assert abs(got_mean - ref / a_np.size) <= 1e-5 * abs(ref / a_np.size)
    # the same along a dim of a 2-D tensor, and over a strided view
    m = kt(a_np.reshape(1000, 1000))
    np.testing.assert_allclose(kiln.sum(m, 1).numpy(), a_np.reshape(1000, 1000).astype(np.float64).sum(1),
                               rtol=1e-5)
    np.testing.assert_allclose(kiln.sum(m, 0).numpy(), a_np.reshape(1000, 1000).astype(np.float64).sum(0),
                               rtol=1e-5)
    np.testing.assert_allclose(kiln.sum(kiln.transpose(m, 0, 1)).item(), ref, rtol=1e-5)


def test_float32_sum_past_2_to_the_24():
    """A naive float32 running sum of ones stops at 2**24; PyTorch's cascade sum does not."""
    n = 2**24 + 1000
    assert kiln.sum(kiln.ones(n)).item() == float(n)
    assert kiln.sum(kiln.ones(2, n // 2), (0, 1)).item() == float(n)


def test_float32_mean_of_constant_is_accurate():
    assert kiln.mean(kiln.full_like(kiln.empty(3_000_001), 0.1)).item() == pytest.approx(0.1, rel=1e-6)
