"""max/min(dim), prod, cat/stack, narrow/unflatten/movedim, bmm and batched matmul, nonzero:
values against NumPy, PyTorch's edge cases and error types."""
import numpy as np
import pytest

import kiln

RNG = np.random.default_rng(0)


def arr(*shape, dtype=np.float64):
    return RNG.standard_normal(shape).astype(dtype)


# ---------------------------------------------------------------- max / min with dim
@pytest.mark.parametrize("name, np_val, np_idx", [("max", np.max, np.argmax), ("min", np.min, np.argmin)])
@pytest.mark.parametrize("dim", [0, 1, -1])
@pytest.mark.parametrize("keepdim", [False, True])
def test_max_min_dim_values_and_indices(name, np_val, np_idx, dim, keepdim):
    a = arr(3, 4)
    r = getattr(kiln, name)(kiln.tensor(a), dim, keepdim=keepdim)
    values, indices = r  # unpacks like a tuple
    np.testing.assert_array_equal(r.values.numpy(), np_val(a, axis=dim, keepdims=keepdim))
    np.testing.assert_array_equal(r.indices.numpy(), np.expand_dims(np_idx(a, axis=dim), dim) if keepdim
                                  else np_idx(a, axis=dim))
    assert indices.dtype == kiln.int64 and values.dtype == kiln.float64
    assert type(r).__name__ == name and "values=" in repr(r)
    m = getattr(kiln.tensor(a), name)(dim=dim)
    np.testing.assert_array_equal(m[0].numpy(), values.numpy() if not keepdim else values.squeeze(dim).numpy())


def test_max_dim_ties_nan_and_edge_cases():
    r = kiln.tensor([[1, 3, 3], [2, 2, 0]]).max(1)
    assert r.values.tolist() == [3, 2] and r.indices.tolist() == [1, 0]  # first of the ties
    r = kiln.tensor([1.0, float("nan"), 5.0]).max(0)
    assert np.isnan(r.values.item()) and r.indices.item() == 1
    r = kiln.tensor(4.0).max(0)
    assert r.values.item() == 4.0 and r.indices.item() == 0 and r.values.dim() == 0
    assert kiln.tensor([True, False]).max(0).values.item() is True
    with pytest.raises(IndexError, match="non-zero size"):
        kiln.zeros(0, 3).max(0)
    with pytest.raises(IndexError, match="Dimension out of range"):
        kiln.zeros(2, 3).min(2)
    np.testing.assert_array_equal(kiln.max(kiln.tensor([1.0, 5.0]), kiln.tensor([3.0, 2.0])).numpy(), [3.0, 5.0])
    np.testing.assert_array_equal(kiln.tensor([1.0, 5.0]).min(kiln.tensor([3.0, 2.0])).numpy(), [1.0, 2.0])


def test_max_dim_gradient_goes_to_the_selected_element():
    x = kiln.tensor([[1.0, 3.0, 3.0], [5.0, 2.0, 0.0]], requires_grad=True)
    x.max(1).values.sum().backward()
    assert x.grad.tolist() == [[0.0, 1.0, 0.0], [1.0, 0.0, 0.0]]
    assert not x.max(1).indices.requires_grad


# ---------------------------------------------------------------- prod
@pytest.mark.parametrize("dtype, np_dtype", [(kiln.float32, np.float32), (kiln.float64, np.float64),
                                             (kiln.int64, np.int64), (kiln.int32, np.int32)])
def test_prod_values_and_dtypes(dtype, np_dtype):
    a = (RNG.integers(-3, 4, (3, 4))).astype(np_dtype)
    t = kiln.tensor(a, dtype=dtype)
    expect_dtype = kiln.int64 if dtype in (kiln.int32, kiln.int64) else dtype
    assert t.prod().dtype == expect_dtype and t.prod(1).dtype == expect_dtype
    np.testing.assert_allclose(t.prod().numpy(), np.prod(a.astype(np.float64)), rtol=1e-6)
    np.testing.assert_allclose(kiln.prod(t, 1).numpy(), np.prod(a.astype(np.float64), axis=1), rtol=1e-6)
    np.testing.assert_allclose(t.prod(0, keepdim=True).numpy(), np.prod(a.astype(np.float64), 0, keepdims=True),
                               rtol=1e-6)


def test_prod_bool_dtype_argument_out_and_empty():
    assert kiln.tensor([True, True, False]).prod().item() == 0 and kiln.tensor([True]).prod().dtype == kiln.int64
    assert kiln.tensor([1, 2, 3]).prod(dtype=kiln.float64).dtype == kiln.float64
    out = kiln.empty(0)
    kiln.prod(kiln.tensor([[1.0, 2.0], [3.0, 4.0]]), 1, out=out)
    assert out.tolist() == [2.0, 12.0]
    assert kiln.zeros(0).prod().item() == 1.0  # empty product
    assert kiln.zeros(2, 0).prod(1).tolist() == [1.0, 1.0]


def test_prod_gradient_with_zeros_by_hand():
    x = kiln.tensor([[2.0, 0.0, 3.0], [0.0, 0.0, 4.0], [1.0, 2.0, 5.0]], requires_grad=True)
    x.prod(1).sum().backward()
    # one zero: it gets the product of the others; two zeros: nothing; none: prod / x_i.
    assert x.grad.tolist() == [[0.0, 6.0, 0.0], [0.0, 0.0, 0.0], [10.0, 5.0, 2.0]]


# ---------------------------------------------------------------- cat / stack
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_cat_and_stack_match_numpy(dim):
    a, b, c = arr(2, 3), arr(2, 3), arr(2, 3)
    ts = [kiln.tensor(x) for x in (a, b, c)]
    np.testing.assert_array_equal(kiln.cat(ts, dim).numpy(), np.concatenate([a, b, c], axis=dim))
    np.testing.assert_array_equal(kiln.concat(ts, dim=dim).numpy(), np.concatenate([a, b, c], axis=dim))
    np.testing.assert_array_equal(kiln.stack(ts, dim).numpy(), np.stack([a, b, c], axis=dim))
    np.testing.assert_array_equal(kiln.stack(tuple(ts), dim=dim).numpy(), np.stack([a, b, c], axis=dim))


def test_cat_promotes_skips_legacy_empty_and_writes_out():
    r = kiln.cat([kiln.tensor([1, 2]), kiln.tensor([0.5])])
    assert r.dtype == kiln.float32 and r.tolist() == [1.0, 2.0, 0.5]
    r = kiln.cat([kiln.zeros(0), kiln.ones(2, 3)])  # a 1-D empty tensor is skipped whatever the shapes
    assert r.shape == (2, 3)
    assert kiln.cat([kiln.zeros(0), kiln.zeros(0)]).shape == (0,)
    t = kiln.tensor([[1.0, 2.0]]).t()  # non-contiguous input
    assert kiln.cat([t, t], 1).tolist() == [[1.0, 1.0], [2.0, 2.0]]
    out = kiln.empty(0)
    kiln.cat([kiln.ones(2), kiln.zeros(1)], out=out)
    assert out.tolist() == [1.0, 1.0, 0.0]
    with pytest.raises(RuntimeError, match="can't be cast"):
        kiln.cat([kiln.ones(2)], out=kiln.empty(0, dtype=kiln.int64))


def test_cat_and_stack_errors():
    with pytest.raises(RuntimeError, match="non-empty list"):
        kiln.cat([])
    with pytest.raises(RuntimeError, match="Sizes of tensors must match except in dimension 0"):
        kiln.cat([kiln.ones(2, 3), kiln.ones(2, 4)])
    with pytest.raises(RuntimeError, match="same number of dimensions"):
        kiln.cat([kiln.ones(2, 3), kiln.ones(3)])
    with pytest.raises(RuntimeError, match="zero-dimensional tensor"):
        kiln.cat([kiln.tensor(1.0), kiln.tensor(2.0)])
    with pytest.raises(IndexError, match="Dimension out of range"):
        kiln.cat([kiln.ones(2, 3)], 2)
    with pytest.raises(RuntimeError, match="stack expects each tensor to be equal size"):
        kiln.stack([kiln.ones(2), kiln.ones(3)])
    with pytest.raises(RuntimeError, match="non-empty"):
        kiln.stack([])
    with pytest.raises(TypeError):
        kiln.cat([kiln.ones(2), [1.0]])


def test_cat_gradients_keep_each_input_dtype():
    a = kiln.ones(2, requires_grad=True)
    b = kiln.ones(3, dtype=kiln.float64, requires_grad=True)
    y = kiln.cat([a, b])
    assert y.dtype == kiln.float64
    (y * kiln.arange(5.0, dtype=kiln.float64)).sum().backward()
    assert a.grad.dtype == kiln.float32 and a.grad.tolist() == [0.0, 1.0]
    assert b.grad.tolist() == [2.0, 3.0, 4.0]


# ---------------------------------------------------------------- narrow / unflatten / movedim
def test_narrow_is_a_view_with_bounds_checks():
    x = kiln.arange(12.0).view(3, 4)
    n = x.narrow(1, 1, 2)
    assert n.tolist() == [[1.0, 2.0], [5.0, 6.0], [9.0, 10.0]]
    n.fill_(0)
    assert x[0].tolist() == [0.0, 0.0, 0.0, 3.0]  # shares memory
    assert kiln.narrow(x, 0, -1, 1).tolist() == [[8.0, 0.0, 0.0, 11.0]]
    with pytest.raises(RuntimeError, match="exceeds dimension size"):
        x.narrow(1, 3, 2)
    with pytest.raises(IndexError, match="start out of range"):
        x.narrow(0, 5, 0)
    with pytest.raises(RuntimeError, match="0-dim"):
        kiln.tensor(1.0).narrow(0, 0, 1)


def test_unflatten_and_movedim():
    x = kiln.arange(24)
    assert x.unflatten(0, (2, -1, 4)).shape == (2, 3, 4)
    assert kiln.unflatten(x.view(4, 6), 1, [2, 3]).shape == (4, 2, 3)
    with pytest.raises(RuntimeError, match="don't multiply up to the size of dim"):
        x.unflatten(0, (5, 5))
    a = arr(2, 3, 4)
    np.testing.assert_array_equal(kiln.tensor(a).movedim(0, -1).numpy(), np.moveaxis(a, 0, -1))
    np.testing.assert_array_equal(kiln.movedim(kiln.tensor(a), 2, 0).numpy(), np.moveaxis(a, 2, 0))


# ---------------------------------------------------------------- bmm / batched matmul
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64])
def test_bmm_matches_numpy(dtype):
    a = (RNG.integers(-3, 4, (3, 2, 4))).astype(dtype)
    b = (RNG.integers(-3, 4, (3, 4, 5))).astype(dtype)
    np.testing.assert_allclose(kiln.bmm(kiln.tensor(a), kiln.tensor(b)).numpy(), np.matmul(a, b), rtol=1e-6)
    np.testing.assert_allclose(kiln.tensor(a).bmm(kiln.tensor(b).transpose(1, 2).contiguous().transpose(1, 2)).numpy(),
                               np.matmul(a, b), rtol=1e-6)
    out = kiln.empty(0, dtype=kiln.tensor(a).dtype)
    kiln.bmm(kiln.tensor(a), kiln.tensor(b), out=out)
    np.testing.assert_allclose(out.numpy(), np.matmul(a, b), rtol=1e-6)


def test_bmm_errors():
    with pytest.raises(RuntimeError, match="batch1 must be a 3D tensor"):
        kiln.bmm(kiln.ones(2, 3), kiln.ones(2, 3, 4))
    with pytest.raises(RuntimeError, match="Expected size for first two dimensions of batch2"):
        kiln.bmm(kiln.ones(2, 3, 4), kiln.ones(3, 4, 5))
    with pytest.raises(RuntimeError, match="same dtype"):
        kiln.bmm(kiln.ones(1, 2, 2), kiln.ones(1, 2, 2, dtype=kiln.float64))


@pytest.mark.parametrize("sa, sb", [((2, 3, 4), (2, 4, 5)), ((3, 4), (2, 4, 5)), ((4,), (2, 4, 5)),
                                    ((2, 3, 4), (4,)), ((2, 1, 3, 4), (5, 4, 2)), ((1, 3, 4), (2, 1, 4, 2)),
                                    ((2, 3, 4), (4, 5))])
def test_matmul_broadcasts_batches_like_numpy(sa, sb):
    a, b = arr(*sa), arr(*sb)
    np.testing.assert_allclose((kiln.tensor(a) @ kiln.tensor(b)).numpy(), a @ b, rtol=1e-12)


def test_matmul_shape_error():
    with pytest.raises(RuntimeError, match="cannot be multiplied"):
        kiln.ones(2, 3, 4) @ kiln.ones(2, 5, 4)


# ---------------------------------------------------------------- nonzero
@pytest.mark.parametrize("a", [np.array(0.0), np.array(3), np.array([0, 1, 0, 2]),
                               RNG.integers(0, 2, (2, 3, 4)).astype(bool), np.zeros((2, 3)),
                               np.array([[0.0, -0.5], [np.nan, 0.0]])])
def test_nonzero_matches_argwhere(a):
    r = kiln.nonzero(kiln.tensor(a))
    assert r.dtype == kiln.int64 and r.shape == np.argwhere(a).shape
    np.testing.assert_array_equal(r.numpy(), np.argwhere(a))
    for got, want in zip(kiln.tensor(a).nonzero(as_tuple=True), np.nonzero(a) if a.ndim else (np.zeros(int(a != 0)),)):
        np.testing.assert_array_equal(got.numpy(), want)
