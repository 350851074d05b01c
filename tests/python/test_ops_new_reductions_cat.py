"""max/min over a dim, prod, cat/stack, narrow/unflatten, bmm and batched/broadcast matmul,
nonzero: values against NumPy (np.max/np.argmax, np.prod, np.concatenate/np.stack,
np.matmul, np.argwhere), PyTorch's edge cases and error types, gradients by gradcheck and
by hand."""
import numpy as np
import pytest

import kiln
from kiln.autograd import gradcheck, gradgradcheck

F64 = kiln.float64
DTYPES = [kiln.bool, kiln.int32, kiln.int64, kiln.float32, kiln.float64]
FLOATS = [kiln.float32, kiln.float64]
NP = {kiln.bool: np.bool_, kiln.int32: np.int32, kiln.int64: np.int64,
      kiln.float32: np.float32, kiln.float64: np.float64}
GTOL = dict(eps=1e-6, atol=1e-5, rtol=1e-3)


# ----------------------------------------------------------------------------- helpers
def sample(shape, dtype, seed=0, lo=-3, hi=4):
    """Small integers (so that max/min see many ties), cast to dtype."""
    rng = np.random.default_rng(seed)
    if dtype == kiln.bool:
        return np.asarray(rng.random(shape) < 0.5)
    return np.asarray(rng.integers(lo, hi, size=shape)).astype(NP[dtype])


def uniform(shape, seed=0, lo=-1.0, hi=1.0, dtype=np.float64):
    return np.asarray(np.random.default_rng(seed).uniform(lo, hi, shape)).astype(dtype)


def kt(a, **kwargs):
    return kiln.tensor(np.array(a, order="C"), **kwargs)


def leaf(a):
    """A float64 leaf that requires grad."""
    return kiln.tensor(np.array(a, dtype=np.float64), dtype=F64, requires_grad=True)


def assert_same(t, expected, dtype=None, rtol=None):
    assert isinstance(t, kiln.Tensor)
    expected = np.asarray(expected)
    assert tuple(t.shape) == expected.shape, f"shape {tuple(t.shape)}, expected {expected.shape}"
    if dtype is not None:
        assert t.dtype == dtype, f"dtype {t.dtype}, expected {dtype}"
    if rtol is None:
        np.testing.assert_array_equal(t.numpy(), expected)
    else:
        np.testing.assert_allclose(t.numpy(), expected, rtol=rtol, atol=rtol)


# ============================================================================= max / min (dim)
NP_VAL = {"max": np.max, "min": np.min}
NP_ARG = {"max": np.argmax, "min": np.argmin}


def np_max_min(name, a, dim, keepdim):
    values = NP_VAL[name](a, axis=dim, keepdims=keepdim)
    indices = NP_ARG[name](a, axis=dim)  # NumPy: first index on ties, and the first NaN
    if keepdim:
        indices = np.expand_dims(indices, dim)
    return values, indices


@pytest.mark.parametrize("keepdim", [False, True])
@pytest.mark.parametrize("dim", [0, 1, 2, -1, -3])
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("name", ["max", "min"])
def test_max_min_dim_match_numpy(name, dtype, dim, keepdim):
    a = sample((3, 4, 5), dtype, seed=11)  # values in [-3, 3]: plenty of ties
    t = kt(a)
    want_v, want_i = np_max_min(name, a, dim, keepdim)
    forms = {
        "function": getattr(kiln, name)(t, dim, keepdim),
        "function_kw": getattr(kiln, name)(t, dim=dim, keepdim=keepdim),
        "method": getattr(t, name)(dim, keepdim),
        "method_kw": getattr(t, name)(dim=dim, keepdim=keepdim),
    }
    for form, r in forms.items():
        assert_same(r.values, want_v, dtype)
        assert_same(r.indices, want_i, kiln.int64)
        v, i = r  # unpacks like a tuple
        assert_same(v, want_v, dtype)
        assert_same(i, want_i, kiln.int64)
        assert_same(r[0], want_v)
        assert_same(r[1], want_i)


@pytest.mark.parametrize("name", ["max", "min"])
def test_max_min_dim_default_keepdim_and_result_type(name):
    a = sample((2, 3), kiln.float32, seed=1)
    r = getattr(kt(a), name)(1)
    assert isinstance(r, tuple) and len(r) == 2
    assert type(r).__name__ == name
    assert tuple(r.values.shape) == (2,) and tuple(r.indices.shape) == (2,)
    r = getattr(kt(a), name)(dim=0, keepdim=True)
    assert tuple(r.values.shape) == (1, 3) and tuple(r.indices.shape) == (1, 3)


@pytest.mark.parametrize("name", ["max", "min"])
def test_max_min_dim_ties_pick_the_first_index(name):
    a = np.array([[2, 7, 7, 1], [5, 5, 5, 5], [0, 1, 0, 1], [-4, 9, -4, 9]], dtype=np.int64)
    for dim in (0, 1):
        r = getattr(kiln, name)(kt(a), dim)
        assert_same(r.values, NP_VAL[name](a, axis=dim))
        assert_same(r.indices, NP_ARG[name](a, axis=dim))
    # by hand, independent of NumPy
    assert kiln.max(kt(a), 1).indices.tolist() == [1, 0, 1, 1]
    assert kiln.min(kt(a), 1).indices.tolist() == [3, 0, 0, 0]


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
@pytest.mark.parametrize("name", ["max", "min"])
def test_max_min_dim_nan_propagates_with_its_index(name, dtype):
    nan = np.nan
    a = np.array([[1.0, nan, 5.0, nan],
                  [nan, -2.0, 3.0, 0.0],
                  [4.0, 2.0, 9.0, -1.0],
                  [0.5, 0.25, 8.0, nan]], dtype=NP[dtype])
    for dim in (0, 1, -1):
        r = getattr(kt(a), name)(dim)
        np.testing.assert_array_equal(r.values.numpy(), NP_VAL[name](a, axis=dim))  # NaN == NaN here
        np.testing.assert_array_equal(r.indices.numpy(), NP_ARG[name](a, axis=dim))
    r = getattr(kt(a), name)(1)
    assert r.indices.tolist()[:2] == [1, 0] and r.indices.tolist()[3] == 3
    assert np.isnan(r.values.numpy()[[0, 1, 3]]).all() and not np.isnan(r.values.numpy()[2])


@pytest.mark.parametrize("name", ["max", "min"])
def test_max_min_dim_non_contiguous_input(name):
    a = sample((4, 3, 5), kiln.float64, seed=3)
    t = kt(np.ascontiguousarray(a.transpose(2, 1, 0))).permute(2, 1, 0)  # same values as a, strided
    assert not t.is_contiguous()
    for dim in (0, 1, 2):
        want_v, want_i = np_max_min(name, a, dim, False)
        r = getattr(t, name)(dim)
        assert_same(r.values, want_v)
        assert_same(r.indices, want_i)


@pytest.mark.parametrize("name", ["max", "min"])
def test_max_min_dim_of_zero_dim_tensor(name):
    t = kiln.tensor(2.5, dtype=F64)
    for dim in (0, -1):
        for keepdim in (False, True):
            r = getattr(kiln, name)(t, dim, keepdim)
            assert r.values.dim() == 0 and r.indices.dim() == 0
            assert r.values.item() == 2.5 and r.indices.item() == 0
            assert r.indices.dtype == kiln.int64
    with pytest.raises(IndexError):
        getattr(t, name)(1)


@pytest.mark.parametrize("name", ["max", "min"])
def test_max_min_dim_errors_and_empty_inputs(name):
    # PyTorch raises IndexError ("Expected reduction dim 0 to have non-zero size") here.
    with pytest.raises(IndexError, match="non-zero size"):
        getattr(kiln, name)(kiln.zeros(0, 3), 0)
    with pytest.raises(IndexError, match="non-zero size"):
        getattr(kiln.zeros(2, 0), name)(-1)
    # reducing a non-empty dim of an empty tensor is fine
    r = getattr(kiln, name)(kiln.zeros(0, 3), 1)
    assert tuple(r.values.shape) == (0,) and tuple(r.indices.shape) == (0,)
    with pytest.raises(IndexError, match="Dimension out of range"):
        getattr(kiln, name)(kiln.zeros(2, 3), 2)
    with pytest.raises(IndexError, match="Dimension out of range"):
        getattr(kiln.zeros(2, 3), name)(-3)


@pytest.mark.parametrize("name, np_fn", [("max", np.maximum), ("min", np.minimum)])
def test_max_min_of_two_tensors_is_elementwise(name, np_fn):
    a, b = uniform((2, 3), seed=1), uniform((3,), seed=2)
    ta, tb = kt(a), kt(b)
    assert_same(getattr(kiln, name)(ta, tb), np_fn(a, b), F64)
    assert_same(getattr(ta, name)(tb), np_fn(a, b), F64)
    assert_same(getattr(kiln, name + "imum")(ta, tb), np_fn(a, b), F64)
    # promotion as for maximum: int64 with float32 -> float32
    ai, bf = np.array([1, 5, -2]), np.array([3.0, 2.0, -2.5], dtype=np.float32)
    assert_same(getattr(kiln, name)(kt(ai), kt(bf)), np_fn(ai, bf).astype(np.float32), kiln.float32)


@pytest.mark.parametrize("name", ["max", "min"])
def test_max_min_full_reduction_still_works(name):
    a = uniform((3, 4), seed=4)
    assert_same(getattr(kiln, name)(kt(a)), NP_VAL[name](a), F64)
    assert_same(getattr(kt(a), name)(), NP_VAL[name](a), F64)


# ------------------------------------------------------------------ max / min gradients
@pytest.mark.parametrize("dim, keepdim", [(0, False), (1, True), (-1, False), (2, True)])
@pytest.mark.parametrize("name", ["max", "min"])
def test_max_min_dim_gradcheck(name, dim, keepdim):
    x = leaf(uniform((2, 3, 4), seed=5))  # distinct values: differentiable everywhere
    assert gradcheck(lambda a: getattr(kiln, name)(a, dim, keepdim).values, (x,), **GTOL)
    assert gradcheck(lambda a: getattr(a, name)(dim=dim, keepdim=keepdim)[0], (x,), **GTOL)
    assert gradgradcheck(lambda a: getattr(kiln, name)(a, dim, keepdim).values, (x,), **GTOL)


@pytest.mark.parametrize("name", ["max", "min"])
def test_max_min_dim_gradient_by_hand(name):
    a = uniform((3, 5), seed=6)
    x = leaf(a)
    g = np.arange(1.0, 4.0)
    getattr(x, name)(1).values.backward(kt(g, dtype=F64))
    expected = np.zeros((3, 5))
    expected[np.arange(3), NP_ARG[name](a, axis=1)] = g
    np.testing.assert_array_equal(x.grad.numpy(), expected)


@pytest.mark.parametrize("name", ["max", "min"])
def test_max_min_dim_gradient_with_ties_goes_to_the_selected_index_only(name):
    sign = 1.0 if name == "max" else -1.0
    a = sign * np.array([[1.0, 3.0, 3.0, 3.0], [5.0, 2.0, 5.0, 0.0], [7.0, 7.0, 7.0, 7.0]])
    x = leaf(a)
    r = getattr(x, name)(1)
    assert r.indices.tolist() == [1, 0, 0]
    assert not r.indices.requires_grad
    (r.values * kt([1.0, 2.0, 3.0], dtype=F64)).sum().backward()
    assert x.grad.tolist() == [[0.0, 1.0, 0.0, 0.0], [2.0, 0.0, 0.0, 0.0], [3.0, 0.0, 0.0, 0.0]]
    # along dim 0, keepdim
    x2 = leaf(a)
    getattr(x2, name)(0, keepdim=True).values.sum().backward()
    expected = np.zeros_like(a)
    expected[NP_ARG[name](a, axis=0), np.arange(4)] = 1.0
    np.testing.assert_array_equal(x2.grad.numpy(), expected)


def test_max_dim_gradient_goes_to_the_nan():
    x = leaf([[1.0, np.nan, 3.0], [2.0, 5.0, -1.0]])
    x.max(1).values.sum().backward()
    assert x.grad.tolist() == [[0.0, 1.0, 0.0], [0.0, 1.0, 0.0]]
    y = leaf(2.0)
    y.min(0).values.backward()
    assert y.grad.item() == 1.0


# ============================================================================= prod
def prod_dtype(dtype):
    """PyTorch: prod of bool/int promotes to int64; floats keep their dtype."""
    return dtype if dtype in FLOATS else kiln.int64


@pytest.mark.parametrize("shape", [(), (1,), (6,), (3, 4), (2, 3, 4)], ids=str)
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_prod_all_matches_numpy(dtype, shape):
    a = sample(shape, dtype, seed=7, lo=-2, hi=3)
    rt = prod_dtype(dtype)
    expected = np.prod(a.astype(np.float64 if dtype in FLOATS else np.int64)).astype(NP[rt])
    for r in (kiln.prod(kt(a)), kt(a).prod()):
        assert r.dim() == 0
        assert_same(r, expected, rt, rtol=1e-6 if dtype == kiln.float32 else None)


@pytest.mark.parametrize("keepdim", [False, True])
@pytest.mark.parametrize("dim", [0, 1, 2, -1, -2])
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_prod_dim_matches_numpy(dtype, dim, keepdim):
    a = sample((2, 3, 4), dtype, seed=8, lo=-2, hi=3)
    rt = prod_dtype(dtype)
    expected = np.prod(a.astype(np.float64 if dtype in FLOATS else np.int64), axis=dim,
                       keepdims=keepdim).astype(NP[rt])
    tol = 1e-6 if dtype == kiln.float32 else None
    assert_same(kiln.prod(kt(a), dim, keepdim), expected, rt, tol)
    assert_same(kiln.prod(kt(a), dim=dim, keepdim=keepdim), expected, rt, tol)
    assert_same(kt(a).prod(dim, keepdim=keepdim), expected, rt, tol)


def test_prod_int_and_bool_give_int64_by_hand():
    assert_same(kiln.tensor([1, 2, 3, 4], dtype=kiln.int32).prod(), 24, kiln.int64)
    assert_same(kiln.tensor([True, True, True]).prod(), 1, kiln.int64)
    assert_same(kiln.tensor([True, False, True]).prod(), 0, kiln.int64)
    assert_same(kiln.tensor([[True, True], [False, True]]).prod(0), [0, 1], kiln.int64)
    # a product that overflows int32 is right in int64
    assert_same(kiln.tensor([2**20, 2**20, 4], dtype=kiln.int32).prod(), 2**42, kiln.int64)


def test_prod_dtype_argument():
    a = np.array([[1, 2, 3], [4, 5, 6]], dtype=np.int32)
    assert_same(kiln.prod(kt(a), dtype=kiln.float64), 720.0, F64)
    assert_same(kt(a).prod(1, dtype=kiln.float32), [6.0, 120.0], kiln.float32)
    assert_same(kt(a).prod(0, keepdim=True, dtype=kiln.int32), [[4, 10, 18]], kiln.int32)
    assert_same(kiln.prod(kt([1.5, 2.5]), 0, dtype=F64), 3.75, F64)


def test_prod_out_and_edge_cases():
    a = uniform((3, 4), seed=9)
    out = kiln.empty(0, dtype=F64)
    r = kiln.prod(kt(a), 1, out=out)
    assert r is out
    assert_same(out, np.prod(a, axis=1), F64, rtol=1e-12)
    out = kiln.empty(0, dtype=F64)
    kiln.prod(kt(a), 0, True, out=out)
    assert_same(out, np.prod(a, axis=0, keepdims=True), F64, rtol=1e-12)
    # 0-dim input with dim 0; empty products are 1
    assert_same(kiln.prod(kiln.tensor(3.0), 0), 3.0, kiln.float32)
    assert_same(kiln.zeros(0).prod(), 1.0, kiln.float32)
    assert_same(kiln.zeros(2, 0).prod(1), [1.0, 1.0], kiln.float32)
    assert_same(kiln.zeros(0, 3, dtype=kiln.int64).prod(0), [1, 1, 1], kiln.int64)
    # non-contiguous input
    t = kt(a).t()
    assert_same(t.prod(1), np.prod(a.T, axis=1), F64, rtol=1e-12)
    with pytest.raises(IndexError, match="Dimension out of range"):
        kiln.prod(kiln.ones(2, 3), 2)


# ------------------------------------------------------------------ prod gradients
@pytest.mark.parametrize("dim, keepdim", [(None, False), (0, False), (1, True), (-1, False)])
def test_prod_gradcheck(dim, keepdim):
    x = leaf(uniform((3, 4), seed=10, lo=0.5, hi=1.5) * np.sign(uniform((3, 4), seed=11)))
    fn = (lambda a: a.prod()) if dim is None else (lambda a: kiln.prod(a, dim, keepdim))
    assert gradcheck(fn, (x,), **GTOL)
    assert gradgradcheck(fn, (x,), **GTOL)


def _with_zeros():
    # row 0: one zero, row 1: two zeros, row 2: no zero, row 3: all zeros
    return np.array([[2.0, 0.0, 3.0, -0.5],
                     [0.0, 1.5, 0.0, 4.0],
                     [1.0, -2.0, 0.5, 3.0],
                     [0.0, 0.0, 0.0, 0.0]])


def test_prod_gradcheck_with_one_and_two_zeros():
    a = _with_zeros()
    assert gradcheck(lambda t: kiln.prod(t, 1), (leaf(a),), **GTOL)
    assert gradcheck(lambda t: t.prod(0, keepdim=True), (leaf(a[:3]),), **GTOL)  # columns with 0/1/2 zeros
    assert gradcheck(lambda t: t.prod(), (leaf(a[0]),), **GTOL)  # one zero, full reduction
    assert gradcheck(lambda t: t.prod(), (leaf(a[1]),), **GTOL)  # two zeros, full reduction
    # The second derivative is exact for lines with one zero.
    assert gradgradcheck(lambda t: kiln.prod(t, 1), (leaf(a[[0, 2]]),), **GTOL)


def test_prod_gradient_with_zeros_is_exact():
    a = _with_zeros()
    x = leaf(a)
    x.prod(1).sum().backward()
    expected = np.empty_like(a)
    for i in range(a.shape[0]):
        for j in range(a.shape[1]):
            expected[i, j] = np.prod(np.delete(a[i], j))  # product of the others
    np.testing.assert_array_equal(expected[0], [0.0, -3.0, 0.0, 0.0])  # the zero gets the others' product
    np.testing.assert_array_equal(expected[1], [0.0, 0.0, 0.0, 0.0])   # two zeros: all zero
    np.testing.assert_allclose(x.grad.numpy(), expected, rtol=1e-15, atol=0)
    # full reduction of a line with exactly one zero
    y = leaf([4.0, 0.0, -2.5])
    y.prod().backward()
    assert y.grad.tolist() == [0.0, -10.0, 0.0]
    z = leaf([0.0, 3.0, 0.0])
    z.prod().backward()
    assert z.grad.tolist() == [0.0, 0.0, 0.0]


def test_prod_with_dtype_gives_gradient_in_the_input_dtype():
    x = kiln.tensor([[1.0, 2.0, 3.0], [0.5, -4.0, 2.0]], requires_grad=True)  # float32
    y = x.prod(1, dtype=F64)
    assert y.dtype == F64
    y.sum().backward()
    assert x.grad.dtype == kiln.float32
    np.testing.assert_array_equal(x.grad.numpy(), [[6.0, 3.0, 2.0], [-8.0, 1.0, -2.0]])


# ============================================================================= cat / stack
CAT_SHAPES = {  # dim -> shapes of three inputs that agree except along dim (for a 3-D cat)
    0: [(1, 3, 4), (2, 3, 4), (3, 3, 4)],
    1: [(2, 1, 4), (2, 3, 4), (2, 2, 4)],
    2: [(2, 3, 2), (2, 3, 1), (2, 3, 4)],
}


@pytest.mark.parametrize("dim", [0, 1, 2, -1, -2, -3])
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_cat_matches_numpy(dtype, dim):
    arrays = [sample(s, dtype, seed=20 + k) for k, s in enumerate(CAT_SHAPES[dim % 3])]
    expected = np.concatenate(arrays, axis=dim)
    ts = [kt(a) for a in arrays]
    assert_same(kiln.cat(ts, dim), expected, dtype)
    assert_same(kiln.cat(tuple(ts), dim=dim), expected, dtype)
    assert_same(kiln.cat(ts[:2], dim), np.concatenate(arrays[:2], axis=dim), dtype)
    assert_same(kiln.cat(ts[1:2], dim), arrays[1], dtype)


def test_cat_default_dim_and_non_contiguous_inputs():
    a, b = uniform((2, 3), seed=1), uniform((4, 3), seed=2)
    assert_same(kiln.cat([kt(a), kt(b)]), np.concatenate([a, b]), F64)
    ta = kt(np.ascontiguousarray(a.T)).t()  # strided view with a's values
    tb = kt(b)[::2]
    assert not ta.is_contiguous() and not tb.is_contiguous()
    assert_same(kiln.cat([ta, tb, ta], 0), np.concatenate([a, b[::2], a]), F64)
    assert_same(kiln.cat([ta, ta], 1), np.concatenate([a, a], axis=1), F64)


@pytest.mark.parametrize("dim", [0, 1, 2, -1, -2, -3])
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_stack_matches_numpy(dtype, dim):
    arrays = [sample((2, 3), dtype, seed=30 + k) for k in range(3)]
    expected = np.stack(arrays, axis=dim)
    ts = [kt(a) for a in arrays]
    assert_same(kiln.stack(ts, dim), expected, dtype)
    assert_same(kiln.stack(tuple(ts), dim=dim), expected, dtype)
    assert_same(kiln.stack(ts[:1], dim), np.stack(arrays[:1], axis=dim), dtype)


def test_stack_default_dim_zero_dim_and_strided_inputs():
    a, b = uniform((3, 2), seed=3), uniform((3, 2), seed=4)
    assert_same(kiln.stack([kt(a), kt(b)]), np.stack([a, b]), F64)
    assert_same(kiln.stack([kt(a).t(), kt(b).t()], 1), np.stack([a.T, b.T], axis=1), F64)
    assert_same(kiln.stack([kiln.tensor(1.0), kiln.tensor(2.0)]), [1.0, 2.0], kiln.float32)


@pytest.mark.parametrize("dtypes, result", [
    ((kiln.int64, kiln.float32), kiln.float32),
    ((kiln.float32, kiln.int64), kiln.float32),
    ((kiln.bool, kiln.int32), kiln.int32),
    ((kiln.int32, kiln.int64), kiln.int64),
    ((kiln.float32, kiln.float64), kiln.float64),
    ((kiln.bool, kiln.int64, kiln.float32), kiln.float32),
], ids=str)
def test_cat_and_stack_promote_dtypes(dtypes, result):
    arrays = [sample((2, 2), dt, seed=40 + k) for k, dt in enumerate(dtypes)]
    expected_cat = np.concatenate([a.astype(NP[result]) for a in arrays])
    expected_stack = np.stack([a.astype(NP[result]) for a in arrays])
    assert_same(kiln.cat([kt(a) for a in arrays]), expected_cat, result)
    assert_same(kiln.stack([kt(a) for a in arrays]), expected_stack, result)


def test_cat_skips_legacy_1d_empty_tensors():
    b = uniform((2, 3), seed=5)
    assert_same(kiln.cat([kiln.zeros(0, dtype=F64), kt(b)]), b, F64)
    assert_same(kiln.cat([kt(b), kiln.zeros(0, dtype=F64), kt(b)]), np.concatenate([b, b]), F64)
    assert_same(kiln.cat([kt(b), kiln.zeros(0, dtype=F64)], 1), b, F64)
    assert tuple(kiln.cat([kiln.zeros(0), kiln.zeros(0)]).shape) == (0,)
    # empty but not 1-D: the sizes must still match
    assert_same(kiln.cat([kt(b), kiln.zeros(0, 3, dtype=F64)]), b, F64)
    assert_same(kiln.cat([kt(b), kiln.zeros(2, 0, dtype=F64)], 1), b, F64)
    with pytest.raises(RuntimeError, match="Sizes of tensors must match"):
        kiln.cat([kt(b), kiln.zeros(0, 2)])


def test_cat_out():
    a, b = uniform((2, 3), seed=6), uniform((1, 3), seed=7)
    out = kiln.empty(0, dtype=F64)
    r = kiln.cat([kt(a), kt(b)], out=out)
    assert r is out
    assert_same(out, np.concatenate([a, b]), F64)
    out = kiln.zeros(2, 6, dtype=F64)  # right size already
    kiln.cat([kt(a), kt(a)], 1, out=out)
    assert_same(out, np.concatenate([a, a], axis=1), F64)
    out = kiln.empty(0, dtype=F64)  # float32 inputs written into a float64 out
    kiln.cat([kiln.ones(2), kiln.zeros(1)], dim=0, out=out)
    assert_same(out, [1.0, 1.0, 0.0], F64)
    with pytest.raises(RuntimeError, match="can't be cast"):
        kiln.cat([kiln.ones(2)], out=kiln.empty(0, dtype=kiln.int64))


def test_cat_errors():
    with pytest.raises(RuntimeError, match="non-empty list"):
        kiln.cat([])
    with pytest.raises(RuntimeError, match="Sizes of tensors must match except in dimension 0"):
        kiln.cat([kiln.ones(2, 3), kiln.ones(2, 4)])
    with pytest.raises(RuntimeError, match="Sizes of tensors must match except in dimension 1"):
        kiln.cat([kiln.ones(2, 3), kiln.ones(3, 2)], -1)
    with pytest.raises(RuntimeError, match="same number of dimensions"):
        kiln.cat([kiln.ones(2, 3), kiln.ones(3)])
    with pytest.raises(RuntimeError, match="zero-dimensional tensor"):
        kiln.cat([kiln.tensor(1.0), kiln.tensor(2.0)])
    with pytest.raises(RuntimeError, match="zero-dimensional tensor"):
        kiln.cat([kiln.ones(2), kiln.tensor(2.0)])
    with pytest.raises(IndexError, match="Dimension out of range"):
        kiln.cat([kiln.ones(2, 3)], 2)
    with pytest.raises(IndexError, match="Dimension out of range"):
        kiln.cat([kiln.ones(2, 3)], -3)


def test_stack_errors():
    with pytest.raises(RuntimeError, match="non-empty"):
        kiln.stack([])
    with pytest.raises(RuntimeError, match="stack expects each tensor to be equal size"):
        kiln.stack([kiln.ones(2), kiln.ones(3)])
    with pytest.raises(RuntimeError, match="stack expects each tensor to be equal size"):
        kiln.stack([kiln.ones(2, 3), kiln.ones(3, 2)])
    with pytest.raises(RuntimeError, match="stack expects each tensor to be equal size"):
        kiln.stack([kiln.ones(2, 3), kiln.ones(2, 3), kiln.ones(6)])
    with pytest.raises(IndexError, match="Dimension out of range"):
        kiln.stack([kiln.ones(2)], 2)
    with pytest.raises(IndexError, match="Dimension out of range"):
        kiln.stack([kiln.ones(2)], -3)


# ------------------------------------------------------------------ cat / stack gradients
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_cat_gradcheck(dim):
    shapes = {0: [(1, 3, 2), (2, 3, 2), (3, 3, 2)], 1: [(2, 1, 2), (2, 3, 2), (2, 2, 2)],
              -1: [(2, 3, 2), (2, 3, 1), (2, 3, 3)]}[dim]
    xs = tuple(leaf(uniform(s, seed=50 + k)) for k, s in enumerate(shapes))
    assert gradcheck(lambda a, b: kiln.cat([a, b], dim), xs[:2], **GTOL)
    assert gradcheck(lambda a, b, c: kiln.cat((a, b, c), dim=dim), xs, **GTOL)
    assert gradgradcheck(lambda a, b, c: kiln.cat([a, b, c], dim), xs, **GTOL)


@pytest.mark.parametrize("dim", [0, 1, 2, -1])
def test_stack_gradcheck(dim):
    xs = tuple(leaf(uniform((2, 3), seed=60 + k)) for k in range(3))
    assert gradcheck(lambda a, b: kiln.stack([a, b], dim), xs[:2], **GTOL)
    assert gradcheck(lambda a, b, c: kiln.stack((a, b, c), dim=dim), xs, **GTOL)
    assert gradgradcheck(lambda a, b, c: kiln.stack([a, b, c], dim), xs, **GTOL)


def test_cat_gradient_by_hand_and_with_a_constant_input():
    a, b = leaf(uniform((2, 2), seed=1)), leaf(uniform((1, 2), seed=2))
    c = kiln.ones(1, 2, dtype=F64)  # does not require grad
    g = np.arange(8.0).reshape(4, 2)
    kiln.cat([a, c, b]).backward(kt(g, dtype=F64))
    np.testing.assert_array_equal(a.grad.numpy(), g[:2])
    np.testing.assert_array_equal(b.grad.numpy(), g[3:])
    x = leaf(uniform((2, 3), seed=3))
    kiln.stack([x, x * 2.0], 1).backward(kt(np.ones((2, 2, 3)), dtype=F64))
    np.testing.assert_array_equal(x.grad.numpy(), np.full((2, 3), 3.0))


def test_cat_gradient_with_a_legacy_empty_input():
    e = kiln.zeros(0, dtype=F64, requires_grad=True)
    x = leaf(uniform((2, 3), seed=4))
    kiln.cat([e, x, e]).backward(kt(np.arange(6.0).reshape(2, 3), dtype=F64))
    assert tuple(e.grad.shape) == (0,)
    np.testing.assert_array_equal(x.grad.numpy(), np.arange(6.0).reshape(2, 3))


@pytest.mark.parametrize("op", ["cat", "stack"])
def test_mixed_dtype_inputs_get_gradients_in_their_own_dtype(op):
    a = kiln.ones(3, requires_grad=True)                    # float32
    b = kiln.ones(3, dtype=F64, requires_grad=True)         # float64
    y = getattr(kiln, op)([a, b])
    assert y.dtype == F64 and y.requires_grad
    w = np.arange(6.0).reshape(tuple(y.shape))
    (y * kt(w, dtype=F64)).sum().backward()
    assert a.grad.dtype == kiln.float32 and b.grad.dtype == F64
    np.testing.assert_array_equal(a.grad.numpy(), w.reshape(2, 3)[0])
    np.testing.assert_array_equal(b.grad.numpy(), w.reshape(2, 3)[1])


# ============================================================================= narrow / unflatten
@pytest.mark.parametrize("dim, start, length", [(0, 0, 2), (0, 1, 2), (1, 2, 3), (1, -3, 2), (-1, 0, 2),
                                                (2, 1, 1), (-2, -2, 2), (1, 5, 0), (0, -3, 0)])
def test_narrow_matches_slicing(dim, start, length):
    a = uniform((3, 5, 2), seed=70)
    s = start % a.shape[dim] if start < 0 else start
    expected = np.take(a, range(s, s + length), axis=dim)
    for r in (kt(a).narrow(dim, start, length), kiln.narrow(kt(a), dim, start, length)):
        assert_same(r, expected, F64)


def test_narrow_is_a_view():
    a = np.arange(20.0).reshape(4, 5)
    x = kt(a)
    n = x.narrow(1, 1, 3)
    assert_same(n, a[:, 1:4])
    n.fill_(-1.0)  # writes through to x
    a[:, 1:4] = -1.0
    assert_same(x, a)
    x[2, 2] = 99.0  # and x's writes are visible in n
    assert n[2, 1].item() == 99.0
    m = kiln.narrow(x, 0, -2, 2)
    m.mul_(0)
    a[2, 2] = 99.0
    a[-2:] = 0
    assert_same(x, a)
    # a narrow of a non-contiguous view
    t = kt(np.arange(12.0).reshape(3, 4)).t()
    assert_same(t.narrow(1, 1, 2), np.arange(12.0).reshape(3, 4).T[:, 1:3])


def test_narrow_errors():
    x = kiln.zeros(3, 4)
    with pytest.raises(RuntimeError, match="exceeds dimension size"):
        x.narrow(1, 3, 2)
    with pytest.raises(RuntimeError, match="exceeds dimension size"):
        kiln.narrow(x, 0, -1, 2)
    with pytest.raises(IndexError):
        x.narrow(1, 5, 0)   # start out of range
    with pytest.raises(IndexError):
        x.narrow(0, -4, 1)  # negative start out of range
    with pytest.raises(IndexError, match="Dimension out of range"):
        x.narrow(2, 0, 1)


def test_narrow_and_unflatten_gradients():
    x = leaf(uniform((3, 5), seed=71))
    assert gradcheck(lambda a: a.narrow(1, 1, 3), (x,), **GTOL)
    assert gradcheck(lambda a: kiln.narrow(a, 0, -2, 2), (x,), **GTOL)
    assert gradcheck(lambda a: a.unflatten(1, (5, 1)).transpose(0, 1), (x,), **GTOL)
    y = leaf(np.ones((2, 3)))
    (y.narrow(1, 1, 2) * kt([2.0, 3.0], dtype=F64)).sum().backward()
    assert y.grad.tolist() == [[0.0, 2.0, 3.0], [0.0, 2.0, 3.0]]


@pytest.mark.parametrize("dim, sizes", [(0, (2, 3)), (0, [3, -1]), (1, (2, 2, 5)), (-1, (4, -1)),
                                        (1, (-1, 1, 5)), (0, (6,)), (1, (20,))])
def test_unflatten_matches_reshape(dim, sizes):
    a = np.arange(120.0).reshape(6, 20)
    d = dim % a.ndim
    sizes_np = list(sizes)
    if -1 in sizes_np:
        sizes_np[sizes_np.index(-1)] = a.shape[d] // int(np.prod([s for s in sizes_np if s != -1]))
    expected = a.reshape(a.shape[:d] + tuple(sizes_np) + a.shape[d + 1:])
    t = kt(a)
    for r in (t.unflatten(dim, sizes), kiln.unflatten(t, dim, sizes)):
        assert_same(r, expected, F64)


def test_unflatten_errors():
    x = kiln.arange(12)
    with pytest.raises(RuntimeError, match="don't multiply up to the size of dim"):
        x.unflatten(0, (5, 2))
    with pytest.raises(RuntimeError, match="don't multiply up to the size of dim"):
        x.unflatten(0, (5, -1))
    with pytest.raises(RuntimeError):
        x.unflatten(0, (-1, -1))
    with pytest.raises(RuntimeError):
        x.unflatten(0, ())
    with pytest.raises(IndexError, match="Dimension out of range"):
        x.unflatten(1, (3, 4))


# ============================================================================= bmm / matmul
BMM_DTYPES = [kiln.float32, kiln.float64, kiln.int64]


def matmul_ref(a, b):
    """np.matmul computed in float64 (int64 stays exact for these small values)."""
    if a.dtype == np.int64:
        return np.matmul(a, b)
    return np.matmul(a.astype(np.float64), b.astype(np.float64))


@pytest.mark.parametrize("shapes", [((3, 2, 4), (3, 4, 5)), ((1, 1, 1), (1, 1, 1)), ((2, 5, 3), (2, 3, 1)),
                                    ((4, 1, 7), (4, 7, 2)), ((2, 0, 3), (2, 3, 2)), ((2, 3, 0), (2, 0, 2))],
                         ids=str)
@pytest.mark.parametrize("dtype", BMM_DTYPES, ids=str)
def test_bmm_matches_numpy(dtype, shapes):
    a, b = sample(shapes[0], dtype, seed=80), sample(shapes[1], dtype, seed=81)
    expected = matmul_ref(a, b)
    tol = 1e-6 if dtype in FLOATS else None
    assert_same(kiln.bmm(kt(a), kt(b)), expected, dtype, tol)
    assert_same(kt(a).bmm(kt(b)), expected, dtype, tol)
    out = kiln.empty(0, dtype=dtype)
    r = kiln.bmm(kt(a), kt(b), out=out)
    assert r is out
    assert_same(out, expected, dtype, tol)


@pytest.mark.parametrize("dtype", BMM_DTYPES, ids=str)
def test_bmm_non_contiguous_inputs(dtype):
    a, b = sample((3, 4, 2), dtype, seed=82), sample((5, 4, 3), dtype, seed=83)
    ta = kt(a).transpose(1, 2)           # (3, 2, 4), strided
    tb = kt(b).permute(2, 0, 1)          # (3, 5, 4): not the right shape yet
    tb = tb.transpose(1, 2)              # (3, 4, 5)
    expected = matmul_ref(a.transpose(0, 2, 1), b.transpose(2, 1, 0))
    assert_same(kiln.bmm(ta, tb), expected, dtype, 1e-6 if dtype in FLOATS else None)


def test_bmm_errors():
    with pytest.raises(RuntimeError, match="batch1 must be a 3D tensor"):
        kiln.bmm(kiln.ones(2, 3), kiln.ones(2, 3, 4))
    with pytest.raises(RuntimeError, match="batch2 must be a 3D tensor"):
        kiln.bmm(kiln.ones(2, 2, 3), kiln.ones(2, 3))
    with pytest.raises(RuntimeError, match="batch1 must be a 3D tensor"):
        kiln.bmm(kiln.ones(1, 2, 2, 3), kiln.ones(1, 2, 3, 4))
    with pytest.raises(RuntimeError, match=r"Expected size for first two dimensions of batch2 tensor to be: \[2, 3\]"):
        kiln.bmm(kiln.ones(2, 2, 3), kiln.ones(3, 3, 4))  # batch sizes differ
    with pytest.raises(RuntimeError, match=r"Expected size for first two dimensions of batch2 tensor to be: \[2, 3\]"):
        kiln.bmm(kiln.ones(2, 2, 3), kiln.ones(2, 4, 4))  # inner sizes differ
    with pytest.raises(RuntimeError):
        kiln.bmm(kiln.ones(1, 2, 2, dtype=kiln.int64), kiln.ones(1, 2, 2))
    with pytest.raises(RuntimeError):
        kiln.bmm(kiln.ones(1, 2, 3), kiln.ones(1, 3, 1), out=kiln.empty(0, dtype=kiln.int64))


def test_bmm_gradcheck():
    a, b = leaf(uniform((2, 3, 4), seed=84)), leaf(uniform((2, 4, 2), seed=85))
    assert gradcheck(lambda x, y: kiln.bmm(x, y), (a, b), **GTOL)
    assert gradcheck(lambda x, y: x.transpose(1, 2).bmm(y.transpose(1, 2)),
                     (leaf(uniform((2, 4, 3), seed=86)), leaf(uniform((2, 2, 4), seed=87))), **GTOL)
    assert gradgradcheck(lambda x, y: kiln.bmm(x, y), (a, b), **GTOL)


MATMUL_SHAPES = [
    ((2, 3, 4), (2, 4, 5)),        # (b,n,k) @ (b,k,m)
    ((3, 4), (2, 4, 5)),           # (n,k) @ (b,k,m)
    ((4,), (2, 4, 5)),             # (k) @ (b,k,m)
    ((2, 3, 4), (4,)),             # (b,n,k) @ (k)
    ((2, 3, 4), (4, 5)),           # (b,n,k) @ (k,m)
    ((2, 1, 3, 4), (3, 4, 5)),     # (2,1,n,k) @ (3,k,m) -> (2,3,n,m)
    ((1, 3, 4), (2, 1, 4, 2)),
    ((2, 1, 3, 4), (1, 2, 4, 5)),
    ((4,), (4,)),
    ((3, 4), (4,)),
    ((4,), (4, 2)),
    ((3, 4), (4, 2)),
    ((5, 1, 4), (4,)),
    ((4,), (3, 2, 4, 1)),
]


@pytest.mark.parametrize("sa, sb", MATMUL_SHAPES, ids=str)
@pytest.mark.parametrize("dtype", BMM_DTYPES, ids=str)
def test_matmul_batched_and_broadcast_match_numpy(dtype, sa, sb):
    a, b = sample(sa, dtype, seed=90), sample(sb, dtype, seed=91)
    expected = matmul_ref(a, b)
    tol = 1e-6 if dtype in FLOATS else None
    assert_same(kt(a) @ kt(b), expected, dtype, tol)
    assert_same(kiln.matmul(kt(a), kt(b)), expected, dtype, tol)
    assert_same(kt(a).matmul(kt(b)), expected, dtype, tol)


def test_matmul_batched_by_matrix_with_empty_inner_dim():
    # Was a bug: folding the batch with view(-1, 0) failed instead of giving zeros (..., n, m).
    a, b = np.ones((2, 4, 0)), np.ones((0, 3))
    assert_same(kt(a) @ kt(b), np.matmul(a, b), F64)  # zeros of shape (2, 4, 3)


@pytest.mark.parametrize("sa, sb", [((2, 4, 0), (2, 0, 3)), ((4, 0), (2, 0, 3)), ((2, 4, 0), (0,)), ((0,), (2, 0, 3)),
                                    ((2, 0, 3), (3, 2)), ((0, 4, 3), (3, 2))], ids=str)
def test_matmul_empty_dims_match_numpy(sa, sb):
    a, b = np.ones(sa), np.ones(sb)
    assert_same(kt(a) @ kt(b), np.matmul(a, b), F64)


def test_matmul_broadcast_shape_by_hand():
    r = kiln.ones(2, 1, 3, 4) @ kiln.ones(3, 4, 5)
    assert tuple(r.shape) == (2, 3, 3, 5)
    assert (r.numpy() == 4.0).all()


def test_matmul_errors():
    with pytest.raises(RuntimeError):
        kiln.ones(2, 3, 4) @ kiln.ones(2, 5, 4)
    with pytest.raises(RuntimeError):
        kiln.ones(3) @ kiln.ones(2, 4, 2)
    with pytest.raises(RuntimeError):
        kiln.ones(2, 3, 4) @ kiln.ones(3)
    with pytest.raises(RuntimeError, match="must match the size"):
        kiln.ones(2, 1, 3, 4) @ kiln.ones(3, 3, 4, 2)  # batch dims 2 and 3 do not broadcast
    with pytest.raises(RuntimeError, match="at least 1D"):
        kiln.matmul(kiln.tensor(1.0), kiln.ones(3))


@pytest.mark.parametrize("sa, sb", [((2, 1, 2, 3), (3, 3, 2)), ((3,), (2, 3, 2)), ((2, 2, 3), (3,)),
                                    ((2, 3), (2, 3, 2)), ((2, 2, 3), (3, 2))], ids=str)
def test_matmul_broadcast_gradcheck(sa, sb):
    a, b = leaf(uniform(sa, seed=92)), leaf(uniform(sb, seed=93))
    assert gradcheck(lambda x, y: x @ y, (a, b), **GTOL)
    assert gradgradcheck(lambda x, y: kiln.matmul(x, y), (a, b), **GTOL)


def test_matmul_broadcast_gradient_by_hand():
    an, bn = uniform((2, 1, 3, 4), seed=94), uniform((3, 4, 5), seed=95)
    a, b = leaf(an), leaf(bn)
    (a @ b).sum().backward()
    g = np.ones((2, 3, 3, 5))
    np.testing.assert_allclose(a.grad.numpy(), (g @ np.swapaxes(bn, -1, -2)).sum(1, keepdims=True), rtol=1e-12)
    np.testing.assert_allclose(b.grad.numpy(), (np.swapaxes(an, -1, -2) @ g).sum(0), rtol=1e-12)


# ============================================================================= nonzero
NONZERO_CASES = {
    "0d_zero": np.array(0.0),
    "0d_nonzero": np.array(3),
    "0d_false": np.array(False),
    "1d_int": np.array([0, 1, 0, 2, -3, 0]),
    "1d_all_zero": np.zeros(5, dtype=np.int64),
    "1d_empty": np.zeros(0),
    "2d_float_special": np.array([[0.0, -0.5], [np.nan, -0.0], [np.inf, 1e-30]]),
    "3d_bool": np.asarray(np.random.default_rng(100).random((2, 3, 4)) < 0.4),
    "3d_int32": sample((3, 2, 4), kiln.int32, seed=101, lo=-1, hi=2),
    "3d_float_all_zero": np.zeros((2, 3, 4), dtype=np.float32),
    "3d_empty_dim": np.zeros((2, 0, 3)),
}


@pytest.mark.parametrize("name", sorted(NONZERO_CASES))
def test_nonzero_matches_argwhere(name):
    a = NONZERO_CASES[name]
    expected = np.argwhere(a)  # a 0-d array gives shape (0 or 1, 0)
    for r in (kiln.nonzero(kt(a)), kt(a).nonzero()):
        assert r.dtype == kiln.int64
        assert tuple(r.shape) == (int(np.count_nonzero(a)), a.ndim)
        assert_same(r, expected)


def test_nonzero_empty_result_shape_and_strided_input():
    assert tuple(kiln.nonzero(kiln.zeros(2, 3, 4)).shape) == (0, 3)
    assert tuple(kiln.nonzero(kiln.tensor(0.0)).shape) == (0, 0)
    assert tuple(kiln.nonzero(kiln.tensor(5)).shape) == (1, 0)
    a = np.array([[0, 1, 2], [3, 0, 5]])
    assert_same(kt(a).t().nonzero(), np.argwhere(a.T))
    assert kt(a).nonzero().tolist() == [[0, 1], [0, 2], [1, 0], [1, 2]]  # by hand, row-major order
