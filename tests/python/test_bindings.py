"""The Python binding layer: the Tensor type, repr, metadata, NumPy interop,
kiln.tensor, argument parsing, error mapping, Python protocols and indexing."""
import numpy as np
import pytest

import kiln

F32, F64 = kiln.float32, kiln.float64


# ---------------------------------------------------------------- subclassing (nn.Parameter's path)

class P(kiln.Tensor):
    pass


class Q(kiln.Tensor):
    def twice(self):
        return self * 2


def test_make_subclass_instance_and_aliasing():
    base = kiln.tensor([1.0, 2.0, 3.0])
    p = kiln._C._make_subclass(P, base, True)
    assert type(p) is P
    assert isinstance(p, P) and isinstance(p, kiln.Tensor) and isinstance(p, kiln._C.TensorBase)
    assert p.requires_grad and p.is_leaf and p.grad_fn is None
    assert not base.requires_grad  # the alias got the flag, not the original
    assert p.data_ptr() == base.data_ptr()  # same memory
    with kiln.no_grad():
        p.mul_(2)
    np.testing.assert_array_equal(base.numpy(), [2.0, 4.0, 6.0])


def test_make_subclass_without_grad_and_methods():
    q = kiln._C._make_subclass(Q, kiln.tensor([1.0, 2.0]), False)
    assert type(q) is Q and not q.requires_grad
    np.testing.assert_array_equal(q.twice().numpy(), [2.0, 4.0])


def test_subclass_grad_identity_and_attributes():
    p = kiln._C._make_subclass(P, kiln.tensor([1.0, 2.0, 3.0]), True)
    (p * p).sum().backward()
    g = p.grad
    assert g is p.grad  # the same Python object each time
    assert p.grad is p.grad
    np.testing.assert_array_equal(g.numpy(), [2.0, 4.0, 6.0])
    p.name = "weight"  # instances carry a __dict__, like torch.Tensor
    assert p.name == "weight"


def test_subclass_identity_preserved_through_inplace():
    p = kiln._C._make_subclass(P, kiln.tensor([1.0, 2.0]), True)
    with kiln.no_grad():
        r = p.add_(1)
        q = p
        q -= 1
    assert r is p and q is p and type(q) is P


def test_make_subclass_argument_errors():
    t = kiln.tensor([1.0])
    with pytest.raises(TypeError):
        kiln._C._make_subclass(int, t, True)
    with pytest.raises(TypeError):
        kiln._C._make_subclass(P, [1.0], True)


def test_python_object_identity():
    x = kiln.tensor([1.0, 2.0])
    assert x.add_(1) is x
    y = x
    y += 1
    assert y is x
    assert x.view(2) is not x


# ---------------------------------------------------------------- hashing

def test_hash_by_identity():
    a = kiln.tensor([1.0, 2.0])
    b = kiln.tensor([1.0, 2.0])  # equal values, different tensors
    assert hash(a) == hash(a)
    d = {a: "a", b: "b"}
    assert d[a] == "a" and d[b] == "b" and len(d) == 2
    s = {a, b, a}
    assert len(s) == 2 and a in s
    assert a.view(2) not in {a}


def test_subclass_is_hashable():
    p = kiln._C._make_subclass(P, kiln.tensor([1.0]), True)
    assert {p: 1}[p] == 1


# ---------------------------------------------------------------- repr (torch's format)

@pytest.mark.parametrize("make,expected", [
    (lambda: kiln.tensor([1.0, 2.0, 3.0]), "tensor([1., 2., 3.])"),
    (lambda: kiln.tensor([1, 2]), "tensor([1, 2])"),
    (lambda: kiln.tensor([1.0, 2.0], dtype=F64), "tensor([1., 2.], dtype=kiln.float64)"),
    (lambda: kiln.tensor([1, 2], dtype=kiln.int32), "tensor([1, 2], dtype=kiln.int32)"),
    (lambda: kiln.tensor([True, False]), "tensor([ True, False])"),
    (lambda: kiln.tensor([1.0, 2.0], requires_grad=True), "tensor([1., 2.], requires_grad=True)"),
    (lambda: kiln.tensor([1.0, 2.0], requires_grad=True) * 2, "tensor([2., 4.], grad_fn=<MulBackward0>)"),
    (lambda: kiln.tensor([1.0, 2.0], dtype=F64, requires_grad=True) + 1,
     "tensor([2., 3.], dtype=kiln.float64, grad_fn=<AddBackward0>)"),
    (lambda: kiln.tensor(3.5), "tensor(3.5000)"),
    (lambda: kiln.tensor(3), "tensor(3)"),
    (lambda: kiln.zeros([0, 3]), "tensor([], size=(0, 3))"),
    (lambda: kiln.zeros([0]), "tensor([])"),
    (lambda: kiln.tensor([1.5, 2.0]), "tensor([1.5000, 2.0000])"),
    (lambda: kiln.tensor([[1.0, 2.0], [3.0, 4.0]]), "tensor([[1., 2.],\n        [3., 4.]])"),
    (lambda: kiln.tensor([[1, 22], [333, 4]]), "tensor([[  1,  22],\n        [333,   4]])"),
    (lambda: kiln.tensor([-1.0, 2.5]), "tensor([-1.0000,  2.5000])"),
])
def test_repr(make, expected):
    assert repr(make()) == expected


# ---------------------------------------------------------------- metadata

def test_metadata_contiguous():
    x = kiln.zeros([2, 3, 4])
    assert x.shape == (2, 3, 4) and isinstance(x.shape, kiln.Size) and isinstance(x.shape, tuple)
    assert x.size() == (2, 3, 4)
    assert x.size(0) == 2 and x.size(2) == 4 and x.size(-1) == 4 and x.size(-3) == 2
    assert x.stride() == (12, 4, 1)
    assert x.stride(0) == 12 and x.stride(-1) == 1
    assert x.storage_offset() == 0
    assert x.dim() == 3 and x.ndim == 3
    assert x.numel() == 24
    assert x.dtype == F32
    assert x.device == kiln.device("cpu") and str(x.device) == "cpu" and x.device.type == "cpu"
    assert x.is_contiguous()
    assert x.element_size() == 4


def test_metadata_views_match_numpy():
    a = np.arange(24.0).reshape(2, 3, 4)
    x = kiln.tensor(a, dtype=F64)
    v = x.transpose(0, 2)
    assert v.shape == (4, 3, 2)
    assert tuple(s * 8 for s in v.stride()) == a.transpose(2, 1, 0).strides
    assert not v.is_contiguous()
    w = x[1, 1:]
    assert w.shape == (2, 4) and w.storage_offset() == 12 + 4
    assert w.data_ptr() == x.data_ptr() + (12 + 4) * 8
    u = x[:, :, ::2]
    assert u.stride() == (12, 4, 2)
    np.testing.assert_array_equal(u.numpy(), a[:, :, ::2])


def test_size_out_of_range():
    with pytest.raises(IndexError):
        kiln.zeros([2, 3]).size(2)


def test_item_and_tolist():
    assert kiln.tensor([2.5]).item() == 2.5 and isinstance(kiln.tensor([2.5]).item(), float)
    v = kiln.tensor([[7]]).item()
    assert v == 7 and isinstance(v, int)
    b = kiln.tensor([True]).item()
    assert b is True
    assert kiln.tensor(3.25, dtype=F64).item() == 3.25
    assert kiln.tensor([[1, 2], [3, 4]]).tolist() == [[1, 2], [3, 4]]
    assert kiln.tensor([1.5, -2.0]).tolist() == [1.5, -2.0]
    assert kiln.tensor(3).tolist() == 3
    with pytest.raises(ValueError):  # as torch
        kiln.tensor([1.0, 2.0]).item()


def test_tolist_of_requires_grad_tensor():
    assert kiln.tensor([1.0, 2.0], requires_grad=True).tolist() == [1.0, 2.0]


# ---------------------------------------------------------------- NumPy interop

def test_from_numpy_shares_memory_both_ways():
    a = np.arange(6.0).reshape(2, 3)
    x = kiln.from_numpy(a)
    assert x.dtype == F64 and x.shape == (2, 3) and x.stride() == (3, 1)
    a[0, 0] = 100.0
    assert x[0, 0].item() == 100.0
    x[1, 2] = -5.0
    assert a[1, 2] == -5.0


def test_numpy_shares_memory_both_ways():
    x = kiln.tensor([[1.0, 2.0], [3.0, 4.0]])
    n = x.numpy()
    assert n.dtype == np.float32 and n.shape == (2, 2)
    n[0, 1] = 42.0
    assert x[0, 1].item() == 42.0
    x[1, 0] = 7.0
    assert n[1, 0] == 7.0


def test_numpy_of_non_contiguous_view():
    a = np.arange(6.0).reshape(2, 3)
    x = kiln.from_numpy(a.copy())
    n = x.transpose(0, 1).numpy()
    np.testing.assert_array_equal(n, a.T)
    assert n.strides == (8, 24)


@pytest.mark.parametrize("np_dtype,kiln_dtype", [
    (np.float32, F32), (np.float64, F64), (np.int32, kiln.int32), (np.int64, kiln.int64), (np.bool_, kiln.bool)])
def test_from_numpy_dtypes(np_dtype, kiln_dtype):
    a = np.array([1, 0, 1], dtype=np_dtype)
    x = kiln.from_numpy(a)
    assert x.dtype == kiln_dtype
    assert x.numpy().dtype == np_dtype
    assert x.tolist() == a.tolist()


def test_from_numpy_non_contiguous_strides():
    a = np.arange(12.0).reshape(3, 4)
    x = kiln.from_numpy(a[:, ::2])
    assert x.stride() == (4, 2)
    np.testing.assert_array_equal(x.numpy(), a[:, ::2])
    f = np.asfortranarray(a)
    y = kiln.from_numpy(f)
    assert y.stride() == (1, 3)
    np.testing.assert_array_equal(y.numpy(), a)


def test_from_numpy_0d():
    x = kiln.from_numpy(np.array(2.5))
    assert x.dim() == 0 and x.item() == 2.5


def test_from_numpy_negative_strides_raises_valueerror():
    with pytest.raises(ValueError, match="negative"):
        kiln.from_numpy(np.arange(5.0)[::-1])
    with pytest.raises(ValueError, match="negative"):
        kiln.from_numpy(np.arange(12.0).reshape(3, 4)[:, ::-1])


@pytest.mark.parametrize("np_dtype", [np.uint16, np.uint32, np.complex64])
def test_from_numpy_unsupported_dtype_raises_typeerror(np_dtype):
    with pytest.raises(TypeError):
        kiln.from_numpy(np.zeros(3, dtype=np_dtype))


def test_from_numpy_non_array():
    with pytest.raises(TypeError):
        kiln.from_numpy([1.0, 2.0])


def test_from_numpy_keeps_array_alive():
    x = kiln.from_numpy(np.arange(4.0))  # the only reference to the array is the tensor
    import gc
    gc.collect()
    assert x.tolist() == [0.0, 1.0, 2.0, 3.0]


def test_numpy_of_requires_grad_raises():
    with pytest.raises(RuntimeError, match="detach"):
        kiln.tensor([1.0], requires_grad=True).numpy()


# ---------------------------------------------------------------- kiln.tensor

@pytest.mark.parametrize("data,dtype,values", [
    ([True, False], kiln.bool, [True, False]),
    ([1, 2, 3], kiln.int64, [1, 2, 3]),
    ([1.0, 2.5], F32, [1.0, 2.5]),
    ([1, 2.5], F32, [1.0, 2.5]),
    ([[1, 2], [3, 4]], kiln.int64, [[1, 2], [3, 4]]),
    (((1.5, 2.5), (3.5, 4.5)), F32, [[1.5, 2.5], [3.5, 4.5]]),
    (7, kiln.int64, 7),
    (2.5, F32, 2.5),
    (True, kiln.bool, True),
    ([[[1], [2]]], kiln.int64, [[[1], [2]]]),
])
def test_tensor_dtype_inference(data, dtype, values):
    x = kiln.tensor(data)
    assert x.dtype == dtype
    assert x.shape == np.array(data).shape
    assert x.tolist() == values


def test_tensor_empty_list():
    x = kiln.tensor([])
    assert x.shape == (0,) and x.dtype == F32


def test_tensor_explicit_dtype_keeps_float64_precision():
    # torch.tensor([0.1], dtype=torch.float64) is exactly 0.1, not 0.1 rounded through float32
    assert kiln.tensor([0.1, 0.7], dtype=F64).tolist() == [0.1, 0.7]
    assert kiln.tensor(0.1, dtype=F64).item() == 0.1
    assert kiln.tensor([2 ** 53 + 1], dtype=kiln.int64).item() == 2 ** 53 + 1


def test_tensor_from_numpy_array_keeps_dtype_and_copies():
    a = np.array([0.1, 0.2])
    x = kiln.tensor(a)
    assert x.dtype == F64 and x.tolist() == [0.1, 0.2]
    a[0] = 5.0
    assert x[0].item() == 0.1


def test_tensor_copies_tensor():
    x = kiln.tensor([1.0, 2.0], requires_grad=True)
    y = kiln.tensor(x)
    assert y.data_ptr() != x.data_ptr() and not y.requires_grad and y.tolist() == [1.0, 2.0]


@pytest.mark.parametrize("data,exc", [([[1, 2], [3]], ValueError), ([[1, 2], 3], TypeError),
                                      ([[[1]], [[2], [3]]], ValueError), ([1, [2]], TypeError)])
def test_tensor_ragged_raises_like_torch(data, exc):
    # torch: a sequence of another length is a ValueError; a number where a sequence belongs, or a
    # sequence where a number belongs, a TypeError
    with pytest.raises(exc):
        kiln.tensor(data)


def test_tensor_invalid_data_raises_like_torch():
    with pytest.raises(TypeError):
        kiln.tensor("abc")
    with pytest.raises(RuntimeError, match="Could not infer dtype of NoneType"):
        kiln.tensor([1, None])
    with pytest.raises(RuntimeError, match="Could not infer dtype of dict"):
        kiln.tensor({"a": 1})


def test_tensor_requires_grad_and_dtype():
    x = kiln.tensor([1, 2], dtype=F64, requires_grad=True)
    assert x.dtype == F64 and x.requires_grad and x.is_leaf


# ---------------------------------------------------------------- argument parsing

def test_no_matching_overload_lists_signatures():
    with pytest.raises(TypeError, match="expected one of") as info:
        kiln.add(kiln.zeros([3]), "a")
    msg = str(info.value)
    assert "(Tensor input, Tensor other" in msg and "Number other" in msg


def test_no_matching_overload_for_methods_and_keywords():
    with pytest.raises(TypeError, match="expected one of"):
        kiln.zeros([3]).view("x")
    with pytest.raises(TypeError, match="expected one of"):
        kiln.add(kiln.zeros([3]), kiln.zeros([3]), bogus=1)
    with pytest.raises(TypeError):
        kiln.mm(kiln.zeros([2, 2]))


def test_overloads_tensor_and_scalar():
    x = kiln.tensor([1.0, 2.0])
    np.testing.assert_array_equal(kiln.add(x, x, alpha=2).numpy(), [3.0, 6.0])
    np.testing.assert_array_equal(kiln.add(x, 1.5).numpy(), [2.5, 3.5])
    np.testing.assert_array_equal(kiln.add(x, 1, 3).numpy(), [4.0, 5.0])
    np.testing.assert_array_equal(x.sub(x, alpha=0.5).numpy(), [0.5, 1.0])


def test_int_list_arguments_as_varargs_list_and_tuple():
    assert kiln.zeros(2, 3).shape == (2, 3)
    assert kiln.zeros([2, 3]).shape == (2, 3)
    assert kiln.zeros((2, 3)).shape == (2, 3)
    x = kiln.zeros([6])
    assert x.view(2, 3).shape == (2, 3) and x.view([3, 2]).shape == (3, 2) and x.view((1, 6)).shape == (1, 6)
    assert kiln.zeros([3, 1]).expand(2, 3, 4).shape == (2, 3, 4)


def test_reduction_dim_and_keepdim_positional():
    a = np.arange(6.0).reshape(2, 3)
    x = kiln.tensor(a)
    np.testing.assert_array_equal(x.sum(1).numpy(), a.sum(1))
    np.testing.assert_array_equal(x.sum(-1, keepdim=True).numpy(), a.sum(-1, keepdims=True))
    np.testing.assert_array_equal(kiln.sum(x, 0, True).numpy(), a.sum(0, keepdims=True))
    # torch: x.sum(1, True) and x.mean([0, 1], True) (dim, keepdim given positionally)
    np.testing.assert_array_equal(x.sum(1, True).numpy(), a.sum(1, keepdims=True))
    np.testing.assert_array_equal(x.mean([0, 1], True).numpy(), a.mean((0, 1), keepdims=True))


def test_as_strided_method():
    a = np.arange(6.0)
    x = kiln.tensor(a)
    expected = np.lib.stride_tricks.as_strided(a[1:], (2, 2), (8, 16))
    np.testing.assert_array_equal(kiln.as_strided(x, [2, 2], [1, 2], 1).numpy(), expected)
    np.testing.assert_array_equal(x.as_strided((2, 2), (1, 2), 1).numpy(), expected)
    np.testing.assert_array_equal(x.as_strided([2, 2], [1, 2]).numpy(), np.lib.stride_tricks.as_strided(a, (2, 2), (8, 16)))


def test_dtype_and_device_arguments():
    assert kiln.zeros([2], dtype=F64).dtype == F64
    assert kiln.zeros([2], device="cpu").device.type == "cpu"
    assert kiln.ones([2], dtype=kiln.int32).tolist() == [1, 1]
    assert kiln.tensor([1.5]).to(F64).dtype == F64


# ---------------------------------------------------------------- C++ errors -> Python exceptions

def test_index_error_for_select_out_of_range():
    x = kiln.zeros([3, 2])
    with pytest.raises(IndexError, match="out of range"):
        x.select(0, 3)
    with pytest.raises(IndexError):
        kiln.select(x, 1, -3)
    with pytest.raises(IndexError):
        x[3]


def test_runtime_error_for_shape_mismatch():
    with pytest.raises(RuntimeError, match="must match"):
        kiln.zeros([3]) + kiln.zeros([4])
    with pytest.raises(RuntimeError):
        kiln.zeros([2, 3]).mm(kiln.zeros([2, 3]))
    with pytest.raises(RuntimeError):
        kiln.zeros([6]).view(4, 2)


def test_negative_sizes():
    # PyTorch raises RuntimeError ('Trying to create tensor with negative dimension'), as
    # docs/ARCHITECTURE.md records for kiln; not ValueError.
    with pytest.raises(RuntimeError, match="negative dimension"):
        kiln.empty([-1])
    with pytest.raises(RuntimeError, match="negative dimension"):
        kiln.zeros([2, -3])


def test_value_error_mapping():
    with pytest.raises(ValueError):
        kiln.from_numpy(np.arange(3.0)[::-1])
    with pytest.raises(ValueError):
        kiln.set_num_threads(0)


def test_type_error_mapping():
    with pytest.raises(TypeError):
        kiln.zeros([2]).view(1.5)


# ---------------------------------------------------------------- Python protocols

def test_len_and_iteration():
    a = np.arange(6).reshape(3, 2)
    x = kiln.tensor(a)
    assert len(x) == 3
    rows = list(x)
    assert len(rows) == 3 and all(isinstance(r, kiln.Tensor) for r in rows)
    assert [r.tolist() for r in rows] == a.tolist()
    assert [float(v) for v in kiln.tensor([1.5, 2.5])] == [1.5, 2.5]
    with pytest.raises(TypeError):
        len(kiln.tensor(1.0))
    with pytest.raises(TypeError):
        iter(kiln.tensor(1.0))


def test_bool_of_one_element_and_error_for_many():
    assert bool(kiln.tensor([1.0])) is True
    assert bool(kiln.tensor([0.0])) is False
    assert bool(kiln.tensor(3)) is True
    assert bool(kiln.tensor([[False]])) is False
    with pytest.raises(RuntimeError, match="ambiguous"):
        bool(kiln.tensor([1.0, 2.0]))
    with pytest.raises(RuntimeError):
        bool(kiln.zeros([0]))


def test_float_and_int_conversions():
    assert float(kiln.tensor([2.5])) == 2.5
    assert int(kiln.tensor([2.7])) == 2
    assert int(kiln.tensor([-2.7])) == -2
    assert float(kiln.tensor([3])) == 3.0 and isinstance(float(kiln.tensor([3])), float)
    assert int(kiln.tensor(5)) == 5
    with pytest.raises(ValueError, match="only one element tensors"):
        float(kiln.tensor([1.0, 2.0]))
    assert [10, 20, 30][kiln.tensor(1)] == 20  # __index__


def test_arithmetic_operators_match_numpy():
    a, b = np.array([1.0, 2.0, 4.0]), np.array([0.5, -1.0, 2.0])
    x, y = kiln.tensor(a, dtype=F64), kiln.tensor(b, dtype=F64)
    np.testing.assert_allclose((x + y).numpy(), a + b)
    np.testing.assert_allclose((x - y).numpy(), a - b)
    np.testing.assert_allclose((x * y).numpy(), a * b)
    np.testing.assert_allclose((x / y).numpy(), a / b)
    np.testing.assert_allclose((2 - x).numpy(), 2 - a)
    np.testing.assert_allclose((2 / x).numpy(), 2 / a)
    np.testing.assert_allclose((3 * x).numpy(), 3 * a)
    np.testing.assert_allclose((x ** 2).numpy(), a ** 2)
    np.testing.assert_allclose((-x).numpy(), -a)


# ---------------------------------------------------------------- indexing

A = np.arange(12).reshape(3, 4)


@pytest.mark.parametrize("index", [
    0, -1, (1,), (slice(None), slice(1, None)), (Ellipsis, None), (1, slice(None, None, 2)),
    (slice(1, 100),), (slice(-2, None),), (slice(None), slice(-3, -1)), (None,), (None, 0),
    (Ellipsis, 1), (Ellipsis, None, 1), (1, 2), (slice(None), None, slice(None)), (slice(0, 0),),
])
def test_basic_indexing_matches_numpy(index):
    x = kiln.tensor(A)
    r = x[index]
    expected = A[index]
    assert r.shape == expected.shape
    assert r.tolist() == expected.tolist()


def test_indexing_returns_views():
    x = kiln.tensor(A)
    v = x[:, 1:]
    v[0, 0] = 100
    assert x[0, 1].item() == 100
    assert x[1].data_ptr() == x.data_ptr() + 4 * 8


def test_indexing_errors():
    x = kiln.tensor(A)
    with pytest.raises(IndexError):
        x[0, 0, 0]
    with pytest.raises(IndexError):
        x[..., ...]
    with pytest.raises(IndexError):
        x[5]
    with pytest.raises(ValueError):
        x[::-1]


def test_setitem_scalar_row():
    a = np.zeros((2, 3))
    x = kiln.tensor(a)
    x[0] = 5
    a[0] = 5
    np.testing.assert_array_equal(x.numpy(), a)


def test_setitem_tensor_column():
    a = np.zeros((2, 3))
    x = kiln.tensor(a)
    x[:, 1] = kiln.tensor([7.0, 8.0], dtype=F64)
    a[:, 1] = [7.0, 8.0]
    np.testing.assert_array_equal(x.numpy(), a)


def test_setitem_misc():
    a = np.zeros((2, 3), dtype=np.float32)
    x = kiln.tensor(a)
    x[1] = kiln.tensor([1.0, 2.0, 3.0])
    x[..., 0] = 1.5
    x[0, ::2] = -1.0
    a[1] = [1.0, 2.0, 3.0]
    a[..., 0] = 1.5
    a[0, ::2] = -1.0
    np.testing.assert_array_equal(x.numpy(), a)


def test_setitem_broadcasts_value():
    # torch broadcasts the assigned tensor to the indexed region (copy_ semantics)
    a = np.zeros((2, 3), dtype=np.float32)
    x = kiln.tensor(a)
    x[:, 1:] = kiln.tensor([1.0, 2.0])
    a[:, 1:] = [1.0, 2.0]
    np.testing.assert_array_equal(x.numpy(), a)
    x[0] = kiln.tensor(9.0)
    a[0] = 9.0
    np.testing.assert_array_equal(x.numpy(), a)


def test_setitem_invalid_value():
    x = kiln.zeros([2])
    with pytest.raises(TypeError):
        x[0] = "a"
