"""index_select, where, masked_fill and Python indexing with integer lists/tensors and
bool masks, against NumPy; gradients by gradcheck."""
import numpy as np
import pytest

import kiln
from kiln.autograd import gradcheck, gradgradcheck

DTYPES = [kiln.bool, kiln.int32, kiln.int64, kiln.float32, kiln.float64]
NP = {kiln.bool: np.bool_, kiln.int32: np.int32, kiln.int64: np.int64, kiln.float32: np.float32,
      kiln.float64: np.float64}


def sample(shape, dtype, seed=0):
    return (np.random.default_rng(seed).integers(-5, 6, size=shape)).astype(NP[dtype])


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_index_select(dtype, dim):
    a = sample((3, 4, 5), dtype)
    idx = np.array([2, 0, 2, 1])[: a.shape[dim] and 4] % a.shape[dim]
    t = kiln.transpose(kiln.tensor(np.ascontiguousarray(np.swapaxes(a, 0, 2))), 0, 2)  # non-contiguous
    for index in (kiln.tensor(idx), kiln.tensor(idx.astype(np.int32))):
        out = kiln.index_select(t, dim, index)
        np.testing.assert_array_equal(out.numpy(), np.take(a, idx, axis=dim))
    # torch does not count from the end here; its dim-1 path of a 2+-dim self raises RuntimeError
    with pytest.raises(RuntimeError if dim == 1 else IndexError, match="index out of range|out of DATA bounds"):
        t.index_select(dim, kiln.tensor([-1]))
    assert kiln.index_select(t, dim, kiln.zeros(0, dtype=kiln.int64)).shape[dim] == 0


def test_index_select_errors():
    t = kiln.zeros(3, 4)
    with pytest.raises(IndexError, match="index out of range in self"):
        kiln.index_select(t, 0, kiln.tensor([3]))
    with pytest.raises(RuntimeError, match="out of DATA bounds"):  # torch 1.13's dim-1 path
        kiln.index_select(t, 1, kiln.tensor([-5]))
    with pytest.raises(RuntimeError, match="dtype int32.*int64"):
        kiln.index_select(t, 0, kiln.tensor([0.0]))
    with pytest.raises(IndexError, match="Dimension out of range"):
        kiln.index_select(t, 2, kiln.tensor([0]))


def test_index_select_gradients_accumulate_repeats():
    x = kiln.tensor(np.random.default_rng(1).standard_normal((3, 4)), requires_grad=True)
    idx = kiln.tensor([1, 1, 0])
    kiln.index_select(x, 0, idx).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [[1] * 4, [2] * 4, [0] * 4])
    assert gradcheck(lambda a: kiln.index_select(a, 1, kiln.tensor([3, 0, 3])), (x,))
    assert gradgradcheck(lambda a: kiln.index_select(a, 0, idx), (x,))


@pytest.mark.parametrize("dtypes", [(kiln.float32, kiln.float32), (kiln.int64, kiln.float64), (kiln.bool, kiln.int32)],
                         ids=str)
def test_where(dtypes):
    rng = np.random.default_rng(2)
    cond = rng.random((3, 4)) < 0.5
    a, b = sample((3, 4), dtypes[0], 3), sample((4,), dtypes[1], 4)  # b broadcasts
    out = kiln.where(kiln.tensor(cond), kiln.tensor(a), kiln.tensor(b))
    expected = np.where(cond, a, b)
    assert NP[out.dtype] == expected.dtype
    np.testing.assert_array_equal(out.numpy(), expected)


def test_where_gradients_and_errors():
    rng = np.random.default_rng(5)
    a = kiln.tensor(rng.standard_normal((2, 3)), requires_grad=True)
    b = kiln.tensor(rng.standard_normal(3), requires_grad=True)
    cond = kiln.tensor(rng.random((2, 3)) < 0.5)
    assert gradcheck(lambda x, y: kiln.where(cond, x, y), (a, b))
    assert gradgradcheck(lambda x, y: kiln.where(cond, x, y), (a, b))
    with pytest.raises(RuntimeError, match="bool tensor"):
        kiln.where(kiln.tensor([1, 0]), kiln.zeros(2), kiln.ones(2))


@pytest.mark.parametrize("dtype", [kiln.int64, kiln.float32], ids=str)
def test_masked_fill(dtype):
    a = sample((3, 4), dtype)
    mask = a > 0
    expected = np.where(mask, 7, a).astype(NP[dtype])
    np.testing.assert_array_equal(kiln.tensor(a).masked_fill(kiln.tensor(mask), 7).numpy(), expected)
    t = kiln.tensor(a)
    ptr = t.data_ptr()
    t.masked_fill_(kiln.tensor(mask), 7)
    assert t.data_ptr() == ptr and t.dtype == dtype
    np.testing.assert_array_equal(t.numpy(), expected)


def test_masked_fill_gradient():
    x = kiln.tensor([1.0, -2.0, 3.0], requires_grad=True)
    y = kiln.masked_fill(x, x.detach() < 0, 0.0) * 2
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [2, 0, 2])


def test_python_advanced_indexing_matches_numpy():
    a = np.arange(24).reshape(2, 3, 4)
    t = kiln.tensor(a)
    for index in ([1, 0, 1], (slice(None), [2, 0]), (Ellipsis, [1]), (slice(None), kiln.tensor([1, 2]))):
        np_index = tuple(i.numpy() if isinstance(i, kiln.Tensor) else i for i in index) \
            if isinstance(index, tuple) else index
        np.testing.assert_array_equal(t[index].numpy(), a[np_index], err_msg=str(index))


def test_python_int_index_is_basic_indexing():
    # PyTorch applies integers as select() before the advanced index, so (unlike NumPy,
    # which would move the advanced dims first) x[0, :, list] == x[0][:, list].
    a = np.arange(24).reshape(2, 3, 4)
    np.testing.assert_array_equal(kiln.tensor(a)[0, :, [3, 3, 1]].numpy(), a[0][:, [3, 3, 1]])


def test_python_mask_indexing_and_assignment():
    a = np.arange(12).reshape(3, 4)
    t = kiln.tensor(a)
    np.testing.assert_array_equal(t[t > 5].numpy(), a[a > 5])
    rows = np.array([True, False, True])
    np.testing.assert_array_equal(t[kiln.tensor(rows)].numpy(), a[rows])
    t[t > 8] = -1
    a[a > 8] = -1
    np.testing.assert_array_equal(t.numpy(), a)
    t[kiln.tensor(rows)] = 0
    a[rows] = 0
    np.testing.assert_array_equal(t.numpy(), a)
    with pytest.raises(IndexError, match="does not match the shape"):
        t[kiln.tensor([True, False])]
    t[[0, 1]] = 5  # writes through (index_put_), not into a copy
    a[[0, 1]] = 5
    np.testing.assert_array_equal(t.numpy(), a)


def test_mask_indexing_gradient():
    x = kiln.tensor([1.0, -2.0, 3.0, -4.0], requires_grad=True)
    y = x[x.detach() > 0]
    (y * y).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [2, 0, 6, 0])
