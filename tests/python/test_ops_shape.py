"""View and copy ops (view, transpose, expand, select, slice, as_strided, detach,
contiguous, clone, copy_, to) against NumPy's equivalent views.

A kiln view must have NumPy's shape, strides (in elements) and offset into the
base's memory, read the same values, and share memory with its base.
"""
import numpy as np
import pytest

import kiln

DTYPES = [kiln.bool, kiln.int32, kiln.int64, kiln.float32, kiln.float64]
FLOATS = [kiln.float32, kiln.float64]
NP = {kiln.bool: np.bool_, kiln.int32: np.int32, kiln.int64: np.int64,
      kiln.float32: np.float32, kiln.float64: np.float64}


# ----------------------------------------------------------------------------- helpers
def rand(shape, dtype, seed=0):
    rng = np.random.default_rng(seed)
    if dtype == kiln.bool:
        return np.asarray(rng.random(shape) < 0.5)
    if dtype in (kiln.int32, kiln.int64):
        return np.asarray(rng.integers(-100, 100, size=shape), dtype=NP[dtype])
    return np.asarray(rng.uniform(-10, 10, size=shape), dtype=NP[dtype])


def kt(a):
    return kiln.tensor(np.array(a, order="C"))


def base_pair(shape=(2, 3, 4), dtype=kiln.int64, seed=0):
    """A contiguous kiln tensor and a NumPy array with the same values (distinct for int64)."""
    a_np = np.arange(int(np.prod(shape)), dtype=np.int64).reshape(shape) if dtype == kiln.int64 \
        else rand(shape, dtype, seed)
    return kt(a_np), a_np


def np_strides(arr):
    return tuple(s // arr.itemsize for s in arr.strides)


def np_offset(view, base):
    return (view.__array_interface__["data"][0] - base.__array_interface__["data"][0]) // base.itemsize


def assert_view_of(t, base, v_np, base_np):
    """t is a view of `base` laid out exactly like the NumPy view v_np of base_np."""
    assert tuple(t.shape) == v_np.shape
    assert t.dtype == base.dtype
    if v_np.size > 0:
        assert t.stride() == np_strides(v_np), f"strides {t.stride()} vs NumPy {np_strides(v_np)}"
        assert t.storage_offset() - base.storage_offset() == np_offset(v_np, base_np)
        assert t.data_ptr() == base.data_ptr() + np_offset(v_np, base_np) * base.element_size()
    np.testing.assert_array_equal(t.numpy(), v_np)


def assert_writes_through(view, base, v_np_of):
    """Filling the view changes exactly the base elements NumPy's view covers."""
    expected = base.numpy().copy()
    value = True if base.dtype == kiln.bool and not expected.all() else 0 if base.dtype == kiln.bool else 7
    v_np_of(expected)[...] = value
    view.fill_(value)
    np.testing.assert_array_equal(base.numpy(), expected)


def assert_tensor(t, expected, dtype):
    assert t.dtype == dtype
    expected = np.asarray(expected)
    assert tuple(t.shape) == expected.shape
    np.testing.assert_array_equal(t.numpy(), expected.astype(NP[dtype]))


def c_strides(shape):
    strides, acc = [], 1
    for n in reversed(shape):
        strides.append(acc)
        acc *= max(n, 1)
    return tuple(reversed(strides))


# ----------------------------------------------------------------------------- view
VIEW_CASES = [
    ((2, 3, 4), [-1, 4]), ((2, 3, 4), [4, -1, 2]), ((2, 3, 4), [24]), ((2, 3, 4), [-1]),
    ((2, 3, 4), [2, 12]), ((2, 3, 4), [1, 24, 1]), ((2, 3, 4), [2, 3, 2, 2]), ((6,), [2, -1]),
    ((), [1]), ((), [-1]), ((1,), []), ((1, 1), []), ((0, 3), [-1]), ((0, 3), [3, 0]), ((0, 3), [0, 5]),
]


@pytest.mark.parametrize("case", VIEW_CASES, ids=str)
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_view(dtype, case):
    shape, size = case
    base, base_np = base_pair(shape, dtype, seed=1)
    v = base.view(size)
    assert_view_of(v, base, base_np.reshape(size), base_np)
    if v.numel():
        assert_writes_through(v, base, lambda arr: arr.reshape(size))


def test_view_spellings():
    base = kiln.arange(24)
    for v in (base.view(6, 4), base.view((6, 4)), base.view([6, 4]), base.view(6, -1)):
        assert tuple(v.shape) == (6, 4) and v.stride() == (4, 1) and v.data_ptr() == base.data_ptr()


def test_view_of_transposed_splitting_a_dim():
    """A view of a non-contiguous tensor is fine when no dim spans two memory runs."""
    base, base_np = base_pair((4, 6))
    t = kiln.transpose(base, 0, 1)  # (6, 4), strides (1, 6)
    v = t.view([2, 3, 4])
    v_np = base_np.T.reshape(2, 3, 4)
    assert np.shares_memory(v_np, base_np)
    assert_view_of(v, base, v_np, base_np)
    assert_writes_through(v.select(0, 1), base, lambda arr: arr.T.reshape(2, 3, 4)[1])


@pytest.mark.parametrize("size", [[5, -1], [-1, -1], [25], [24, 0], [7, 3], [2, -2, 6]], ids=str)
def test_view_bad_size_raises(size):
    with pytest.raises(RuntimeError):
        kiln.arange(24).view(size)


def test_view_incompatible_strides_raises():
    with pytest.raises(RuntimeError):
        kiln.transpose(kiln.arange(24).view([2, 3, 4]), 0, 2).view([24])
    with pytest.raises(RuntimeError):
        kiln.slice(kiln.arange(12).view([3, 4]), 1, 0, 3).view([9])


# ----------------------------------------------------------------------------- transpose
@pytest.mark.parametrize("dims", [(0, 1), (1, 0), (0, 2), (-1, 0), (1, -1), (1, 1), (-3, -2)], ids=str)
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_transpose(dtype, dims):
    base, base_np = base_pair((2, 3, 4), dtype, seed=2)
    v_np = np.swapaxes(base_np, *dims)
    for v in (kiln.transpose(base, *dims), base.transpose(*dims)):
        assert_view_of(v, base, v_np, base_np)
    assert_writes_through(kiln.transpose(base, *dims).select(0, 1), base,
                          lambda arr: np.swapaxes(arr, *dims)[1])


def test_transpose_of_views_composes():
    base, base_np = base_pair((4, 5, 6))
    v = kiln.transpose(kiln.slice(kiln.select(base, 2, 1), 0, 1, None, 2), 0, 1)
    assert_view_of(v, base, base_np[:, :, 1][1::2].T, base_np)


@pytest.mark.parametrize("dims", [(0, 3), (-4, 0), (3, 3)], ids=str)
def test_transpose_dim_out_of_range_raises(dims):
    with pytest.raises(IndexError):
        kiln.transpose(kiln.zeros(2, 3, 4), *dims)


# ----------------------------------------------------------------------------- expand
EXPAND_CASES = [
    ((3, 1), [3, 5]), ((3, 1), [-1, 5]), ((3,), [2, 3]), ((3,), [4, 2, 3]), ((1, 1), [2, 3]),
    ((2, 1, 4), [2, 3, 4]), ((2, 1, 4), [5, 2, 3, -1]), ((), [2, 3]), ((), []), ((2, 3), [2, 3]),
    ((1, 3), [0, 3]),
]


@pytest.mark.parametrize("case", EXPAND_CASES, ids=str)
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_expand(dtype, case):
    shape, size = case
    base, base_np = base_pair(shape, dtype, seed=3)
    target = tuple(n if n != -1 else shape[i - (len(size) - len(shape))] for i, n in enumerate(size))
    v_np = np.broadcast_to(base_np, target)
    v = base.expand(size)
    assert_view_of(v, base, v_np, base_np)
    if v.numel():  # the view follows writes to the base
        base.fill_(True if dtype == kiln.bool else 3)
        np.testing.assert_array_equal(v.numpy(), np.full(target, base.numpy().reshape(-1)[0]))


def test_expand_spellings():
    t = kiln.ones(3, 1)
    for v in (t.expand(3, 4), t.expand((3, 4)), t.expand([3, 4]), t.expand(-1, 4)):
        assert tuple(v.shape) == (3, 4) and v.stride() == (1, 0)


@pytest.mark.parametrize("case", [((3, 2), [3, 5]), ((3, 1), [5]), ((3, 1), [-1, 3, 5]), ((2,), [3]),
                                  ((3, 1), [3, -2])], ids=str)
def test_expand_mismatch_raises(case):
    shape, size = case
    with pytest.raises(RuntimeError):
        kiln.ones(*shape).expand(size)


# ----------------------------------------------------------------------------- select
@pytest.mark.parametrize("dim_index", [(0, 0), (0, 1), (0, -1), (1, 2), (1, -3), (2, 3), (-1, 0), (-2, 1)],
                         ids=str)
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_select(dtype, dim_index):
    dim, index = dim_index
    base, base_np = base_pair((2, 3, 4), dtype, seed=4)
    take = lambda arr: arr[(slice(None),) * (dim % 3) + (index,)]  # noqa: E731
    for v in (kiln.select(base, dim, index), base.select(dim, index)):
        assert_view_of(v, base, take(base_np), base_np)
    assert_writes_through(kiln.select(base, dim, index), base, take)


def test_select_to_zero_dim():
    base, base_np = base_pair((5,))
    v = kiln.select(base, 0, 3)
    assert v.dim() == 0 and v.item() == 3 and v.storage_offset() == 3
    v.fill_(-1)
    assert base.numpy()[3] == -1


@pytest.mark.parametrize("index", [3, -4, 100])
def test_select_index_out_of_range_raises(index):
    with pytest.raises(IndexError):
        kiln.select(kiln.zeros(2, 3, 4), 1, index)


@pytest.mark.parametrize("dim", [3, -4])
def test_select_dim_out_of_range_raises(dim):
    with pytest.raises(IndexError):
        kiln.select(kiln.zeros(2, 3, 4), dim, 0)
    with pytest.raises(IndexError):
        kiln.select(kiln.tensor(1.0), 0, 0)


# ----------------------------------------------------------------------------- slice
SLICE_CASES = [  # (dim, start, end, step)
    (0, None, None, 1), (1, 1, None, 1), (1, None, 2, 1), (2, 1, 3, 1), (2, None, None, 2),
    (2, 1, None, 2), (2, 0, 4, 3), (-1, -3, -1, 1), (-1, -100, 100, 1), (1, 5, 10, 1), (1, 3, 1, 1),
    (2, -1, None, 1), (2, 2, 2, 1), (-3, 1, 2, 5), (1, -2, None, 2),
]


@pytest.mark.parametrize("case", SLICE_CASES, ids=str)
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_slice(dtype, case):
    dim, start, end, step = case
    base, base_np = base_pair((2, 3, 4), dtype, seed=5)
    take = lambda arr: arr[(slice(None),) * (dim % 3) + (slice(start, end, step),)]  # noqa: E731
    v_np = take(base_np)
    for v in (kiln.slice(base, dim, start, end, step), base.slice(dim, start, end, step)):
        assert_view_of(v, base, v_np, base_np)
    if v_np.size:
        assert_writes_through(kiln.slice(base, dim, start, end, step), base, take)


def test_slice_defaults_and_keywords():
    base, base_np = base_pair((4, 3))
    assert_view_of(kiln.slice(base), base, base_np, base_np)
    assert_view_of(kiln.slice(base, 1, 1), base, base_np[:, 1:], base_np)
    assert_view_of(kiln.slice(base, dim=0, start=1, end=None, step=2), base, base_np[1::2], base_np)


def test_slice_of_slice_accumulates_offset():
    base, base_np = base_pair((10, 10))
    v = kiln.slice(kiln.slice(base, 0, 2, None, 3), 1, 1, 8, 2)
    assert_view_of(v, base, base_np[2::3, 1:8:2], base_np)
    assert_view_of(kiln.slice(v, 0, 1), base, base_np[2::3, 1:8:2][1:], base_np)


@pytest.mark.parametrize("step", [0, -1])
def test_slice_nonpositive_step_raises(step):
    with pytest.raises(RuntimeError):
        kiln.slice(kiln.zeros(4), 0, 0, 4, step)


def test_slice_dim_out_of_range_raises():
    with pytest.raises(IndexError):
        kiln.slice(kiln.zeros(2, 3), 2, 0, 1)
    with pytest.raises(IndexError):
        kiln.slice(kiln.zeros(2, 3), -3, 0, 1)


# ----------------------------------------------------------------------------- as_strided
AS_STRIDED_CASES = [  # (size, stride, storage_offset) on a 24-element base
    ([2, 2], [1, 2], 3), ([3, 4], [4, 1], None), ([4, 3], [1, 4], 0), ([24], [1], 0), ([], [], 23),
    ([0, 5], [5, 1], 24), ([2, 2, 2], [12, 4, 1], 6), ([2, 3], [1, 8], 5),
    ([3, 3], [1, 1], 2), ([2, 3], [0, 5], 1),  # overlapping: read-only checks (writes to them raise)
]


def np_as_strided(base_np, size, stride, offset):
    flat = base_np.reshape(-1)[offset or 0:]
    return np.lib.stride_tricks.as_strided(flat, shape=size, strides=[s * base_np.itemsize for s in stride])


@pytest.mark.parametrize("form", ["function", "method"])
@pytest.mark.parametrize("case", AS_STRIDED_CASES, ids=str)
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_as_strided(dtype, case, form):
    size, stride, offset = case
    base, base_np = base_pair((2, 3, 4), dtype, seed=6)
    v = kiln.as_strided(base, size, stride, offset) if form == "function" else base.as_strided(size, stride, offset)
    v_np = np_as_strided(base_np, size, stride, offset)
    assert_view_of(v, base, v_np, base_np)
    addresses = {sum(i * s for i, s in zip(idx, stride)) for idx in np.ndindex(*size)}
    overlapping = len(addresses) < v_np.size
    if v_np.size and not overlapping:
        assert_writes_through(v, base, lambda arr: np_as_strided(arr, size, stride, offset))


def test_as_strided_default_offset_is_the_views_offset():
    base, base_np = base_pair((24,))
    v = kiln.slice(base, 0, 5)
    for s in (kiln.as_strided(v, [2, 2], [1, 3]), v.as_strided([2, 2], [1, 3])):
        assert s.storage_offset() == 5
        np.testing.assert_array_equal(s.numpy(), [[5, 8], [6, 9]])


@pytest.mark.parametrize("case", [([2, 2], [1, 2], 30), ([5, 5], [5, 1], 0), ([24], [1], 1), ([2], [30], 0)],
                         ids=str)
def test_as_strided_out_of_bounds_raises(case):
    with pytest.raises(RuntimeError):
        kiln.as_strided(kiln.arange(24), *case)


def test_as_strided_bad_arguments_raise():
    t = kiln.arange(24)
    for args in (([2, 2], [1, 2], -1), ([2, 2], [1]), ([2, 2], [-1, 2], 5)):
        with pytest.raises(RuntimeError):
            kiln.as_strided(t, *args)


# ----------------------------------------------------------------------------- indexing
INDEX_CASES = [
    (0,), (-1,), (slice(1, 3),), (slice(None), 1), (Ellipsis, 2), (Ellipsis, slice(None, None, 2)),
    (1, slice(None), slice(1, None, 2)), (slice(None, None, 3), -1, -2), (0, 1, 2),
    (None,), (slice(None), None), (0, Ellipsis, None), (None, 1, None, slice(2, 4)), (Ellipsis,),
]


@pytest.mark.parametrize("index", INDEX_CASES, ids=str)
def test_getitem_matches_numpy(index):
    base, base_np = base_pair((3, 4, 5))
    v = base[index if len(index) > 1 else index[0]]
    if Ellipsis not in index:
        index = index + (Ellipsis,)  # so that NumPy gives a 0-dim view, not a scalar
    v_np = base_np[index]
    assert tuple(v.shape) == v_np.shape
    np.testing.assert_array_equal(v.numpy(), v_np)
    if None not in index:  # NumPy gives a new axis stride 0, PyTorch does not: compare layouts without None
        assert_view_of(v, base, v_np, base_np)
    assert_writes_through(v, base, lambda arr: arr[index])


@pytest.mark.parametrize("index", [(None,), (slice(None), None), (Ellipsis, None), (None, 0)], ids=str)
def test_getitem_none_on_noncontiguous_is_a_view(index):
    """t[None] is unsqueeze in PyTorch: a view, whatever t's strides."""
    base, base_np = base_pair((4, 3))
    t = kiln.transpose(base, 0, 1)
    v = t[index]
    np.testing.assert_array_equal(v.numpy(), base_np.T[index])
    assert_writes_through(v, base, lambda arr: arr.T[index])


def test_setitem_writes_into_base():
    base, base_np = base_pair((3, 4))
    base[1] = 100
    base[:, ::2] = kiln.full_like(kiln.empty(3, 2, dtype=kiln.int64), -5)
    base_np[1] = 100
    base_np[:, ::2] = -5
    np.testing.assert_array_equal(base.numpy(), base_np)


def test_getitem_errors():
    t = kiln.zeros(2, 3)
    with pytest.raises(IndexError):
        t[2]
    with pytest.raises(IndexError):
        t[0, 0, 0]
    with pytest.raises(IndexError):
        t[:, -4]


# ----------------------------------------------------------------------------- detach / contiguous / clone
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_detach_shares_memory(dtype):
    base, base_np = base_pair((4, 3), dtype, seed=7)
    t = kiln.transpose(base, 0, 1)
    for d in (kiln.detach(t), t.detach()):
        assert_view_of(d, base, base_np.T, base_np)
        assert d.requires_grad is False
    assert_writes_through(kiln.detach(t), base, lambda arr: arr.T)


def test_detach_drops_requires_grad():
    x = kiln.ones(2, 3, requires_grad=True)
    y = x * 2
    d = y.detach()
    assert y.requires_grad and not d.requires_grad and d.grad_fn is None
    assert d.data_ptr() == y.data_ptr()


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_contiguous(dtype):
    base, base_np = base_pair((2, 3, 4), dtype, seed=8)
    assert base.contiguous() is base
    for t, t_np in ((kiln.transpose(base, 0, 2), base_np.transpose(2, 1, 0)),
                    (kiln.slice(base, 2, 0, None, 3), base_np[:, :, ::3]),
                    (kiln.select(base, 1, 1).expand([5, 2, 4]), np.broadcast_to(base_np[:, 1], (5, 2, 4)))):
        assert not t.is_contiguous()
        c = t.contiguous()
        assert c.is_contiguous() and c.stride() == c_strides(t_np.shape)
        assert c.dtype == dtype
        np.testing.assert_array_equal(c.numpy(), t_np)
        c.fill_(False if dtype == kiln.bool else 0)  # a copy: the base is untouched
        np.testing.assert_array_equal(base.numpy(), base_np)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_clone(dtype):
    base, base_np = base_pair((2, 3, 4), dtype, seed=9)
    for t, t_np in ((base, base_np), (kiln.slice(base, 2, 1, None, 2), base_np[:, :, 1::2]),
                    (kiln.select(base, 0, 1), base_np[1]), (base.view([24])[5:11], base_np.reshape(-1)[5:11])):
        for c in (kiln.clone(t), t.clone()):
            assert c.dtype == dtype and c.data_ptr() != t.data_ptr()
            assert c.is_contiguous()
            np.testing.assert_array_equal(c.numpy(), t_np)
            c.fill_(False if dtype == kiln.bool else 0)
            np.testing.assert_array_equal(base.numpy(), base_np)


def test_clone_preserves_strides_of_dense_permuted_tensor():
    """PyTorch's clone() uses memory_format=preserve_format: a non-overlapping, dense
    tensor (e.g. a transpose) keeps its strides; anything else becomes contiguous."""
    base = kiln.arange(24).view([2, 3, 4])
    assert kiln.clone(base.transpose(0, 1)).stride() == (4, 12, 1)
    assert kiln.clone(base.transpose(0, 2)).stride() == (1, 4, 12)
    assert kiln.clone(kiln.slice(base, 2, 0, None, 2)).stride() == (6, 2, 1)


def test_clone_zero_dim_and_zero_size():
    c = kiln.clone(kiln.tensor(2.5))
    assert c.dim() == 0 and c.item() == 2.5
    z = kiln.clone(kiln.zeros(0, 3))
    assert tuple(z.shape) == (0, 3)


# ----------------------------------------------------------------------------- copy_
@pytest.mark.parametrize("src_dtype", DTYPES, ids=str)
@pytest.mark.parametrize("dst_dtype", DTYPES, ids=str)
def test_copy_casts(dst_dtype, src_dtype):
    src_np = rand((3, 4), src_dtype, seed=10)
    if src_dtype in FLOATS:
        src_np[0, :3] = [0.0, -0.7, 2.9]  # truncation toward zero, and 0 -> False
    dst = kiln.zeros(3, 4, dtype=dst_dtype)
    ptr = dst.data_ptr()
    r = dst.copy_(kt(src_np))
    assert r is dst and dst.data_ptr() == ptr and dst.dtype == dst_dtype
    expected = np.zeros((3, 4), NP[dst_dtype])
    expected[...] = src_np.astype(NP[dst_dtype])  # C casts: what PyTorch does too
    assert_tensor(dst, expected, dst_dtype)


@pytest.mark.parametrize("src_shape", [(4,), (3, 1), (1, 4), (), (1,)], ids=str)
@pytest.mark.parametrize("dtype", [kiln.int64, kiln.float32], ids=str)
def test_copy_broadcasts_src(dtype, src_shape):
    src_np = rand(src_shape, dtype, seed=11)
    dst = kiln.zeros(3, 4, dtype=dtype)
    dst.copy_(kt(src_np))
    assert_tensor(dst, np.broadcast_to(src_np, (3, 4)), dtype)


def test_copy_broadcast_with_cast():
    dst = kiln.zeros(2, 3, dtype=kiln.int32)
    dst.copy_(kiln.tensor([1.7, -1.7, 2.5], dtype=kiln.float64))
    assert_tensor(dst, [[1, -1, 2], [1, -1, 2]], kiln.int32)


def test_copy_into_noncontiguous_dst_writes_base():
    base = kiln.zeros(4, 3)
    src_np = rand((3, 4), kiln.float32, seed=12)
    kiln.transpose(base, 0, 1).copy_(kt(src_np))
    np.testing.assert_array_equal(base.numpy(), src_np.T)
    base2 = kiln.zeros(3, 8, dtype=kiln.int64)
    kiln.slice(base2, 1, 1, None, 2).copy_(kt(src_np).to(kiln.int64))
    expected = np.zeros((3, 8), np.int64)
    expected[:, 1::2] = src_np.astype(np.int64)
    np.testing.assert_array_equal(base2.numpy(), expected)


def test_copy_from_noncontiguous_src():
    src_np = rand((5, 6), kiln.float64, seed=13)
    src = kiln.slice(kiln.transpose(kt(src_np), 0, 1), 1, 1, None, 2)  # (6, 2)
    dst = kiln.empty(6, 2, dtype=kiln.float32)
    dst.copy_(src)
    np.testing.assert_array_equal(dst.numpy(), src_np.T[:, 1::2].astype(np.float32))


@pytest.mark.parametrize("shapes", [((3,), (2, 3)), ((2, 3), (3, 2)), ((2, 3), (2,)), ((1, 3), (2, 3))], ids=str)
def test_copy_shape_mismatch_raises(shapes):
    dst_shape, src_shape = shapes
    with pytest.raises(RuntimeError):
        kiln.zeros(*dst_shape).copy_(kiln.ones(*src_shape))


# ----------------------------------------------------------------------------- to(dtype)
@pytest.mark.parametrize("dst_dtype", DTYPES, ids=str)
@pytest.mark.parametrize("src_dtype", DTYPES, ids=str)
def test_to_dtype(src_dtype, dst_dtype):
    src_np = rand((3, 4), src_dtype, seed=14)
    t = kt(src_np)
    r = t.to(dst_dtype)
    if src_dtype == dst_dtype:
        assert r is t  # copy=False returns self when nothing changes
    else:
        assert r.data_ptr() != t.data_ptr()
    assert_tensor(r, src_np.astype(NP[dst_dtype]), dst_dtype)
    c = t.to(dst_dtype, copy=True)
    assert c is not t and c.data_ptr() != t.data_ptr()
    assert_tensor(c, src_np.astype(NP[dst_dtype]), dst_dtype)
    assert_tensor(t.to(dtype=dst_dtype), src_np.astype(NP[dst_dtype]), dst_dtype)


def test_to_dtype_of_noncontiguous():
    src_np = rand((4, 6), kiln.float64, seed=15)
    t = kiln.slice(kiln.transpose(kt(src_np), 0, 1), 0, 1, None, 2)
    assert_tensor(t.to(kiln.int32), src_np.T[1::2].astype(np.int32), kiln.int32)
    assert_tensor(t.to(kiln.float32), src_np.T[1::2].astype(np.float32), kiln.float32)


def test_to_dtype_preserves_strides_of_dense_permuted_tensor():
    """to() copies with memory_format=preserve_format in PyTorch, like clone()."""
    t = kiln.arange(12).view([3, 4]).transpose(0, 1)
    assert t.to(kiln.float32).stride() == (1, 4)
