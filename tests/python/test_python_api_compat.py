"""Python conveniences PyTorch programs rely on: legacy constructors, as_tensor, new_*,
*_as, type(), pickling and deepcopy, format(), axis= for dim=, NumPy dtypes kept, and
constructor errors. Expected values are written out by hand."""
import copy
import pickle

import numpy as np
import pytest

import kiln


def test_legacy_constructors():
    assert kiln.Tensor(2, 3).shape == (2, 3) and kiln.Tensor(2, 3).dtype == kiln.float32
    assert kiln.Tensor([1, 2]).dtype == kiln.float32 and kiln.Tensor([1, 2]).tolist() == [1.0, 2.0]
    assert kiln.Tensor().shape == (0,)
    assert kiln.LongTensor([1, 2]).dtype == kiln.int64
    assert kiln.DoubleTensor(3).shape == (3,) and kiln.DoubleTensor(3).dtype == kiln.float64
    assert kiln.BoolTensor([True]).dtype == kiln.bool and kiln.IntTensor([1]).dtype == kiln.int32


def test_as_tensor_shares_numpy_memory_when_it_can():
    a = np.arange(3.0)
    t = kiln.as_tensor(a)
    a[0] = 7.0
    assert t[0].item() == 7.0 and t.dtype == kiln.float64
    assert kiln.as_tensor([1, 2]).dtype == kiln.int64
    x = kiln.ones(2)
    assert kiln.as_tensor(x) is x


def test_new_and_as_helpers():
    x = kiln.ones(2, 3, dtype=kiln.float64)
    assert x.new_zeros(2).dtype == kiln.float64 and x.new_zeros(2).tolist() == [0.0, 0.0]
    assert x.new_ones((2, 2)).shape == (2, 2)
    assert x.new_full((3,), 7).tolist() == [7.0, 7.0, 7.0]
    assert x.new_tensor([1, 2]).dtype == kiln.float64
    assert x.new_empty(4).shape == (4,)
    assert kiln.arange(6).view_as(x).shape == (2, 3)
    assert kiln.arange(6).reshape_as(x).shape == (2, 3)
    assert kiln.ones(3).expand_as(x).shape == (2, 3)
    assert x.type() == "kiln.DoubleTensor" and kiln.ones(1, dtype=kiln.int64).type() == "kiln.LongTensor"
    assert x.type(kiln.int32).dtype == kiln.int32


def test_pickle_and_deepcopy_copy_values():
    t = kiln.tensor([[1.5, 2.0], [3.0, -4.0]], requires_grad=True)
    u = pickle.loads(pickle.dumps(t))
    assert u.tolist() == t.tolist() and u.requires_grad and u.data_ptr() != t.data_ptr()
    i = pickle.loads(pickle.dumps(kiln.tensor([1, 2], dtype=kiln.int32)))
    assert i.dtype == kiln.int32
    (t * 2).sum().backward()
    d = copy.deepcopy(t)
    assert d.requires_grad and d.grad.tolist() == [[2.0, 2.0], [2.0, 2.0]] and d.data_ptr() != t.data_ptr()
    p = pickle.loads(pickle.dumps(kiln.nn.Parameter(kiln.ones(2))))
    assert isinstance(p, kiln.nn.Parameter) and p.requires_grad
    with pytest.raises(RuntimeError, match="graph leaves"):
        copy.deepcopy(t * 2)


def test_format_and_python_number_conversions():
    assert f"{kiln.tensor(3.14159):.2f}" == "3.14"
    assert f"{kiln.tensor(7):03d}" == "007"
    with pytest.raises(ValueError, match="only one element tensors"):
        float(kiln.ones(2))
    with pytest.raises(ValueError, match="cannot be converted to Scalar"):
        kiln.ones(2).item()


def test_axis_is_accepted_for_dim():
    x = kiln.tensor([[1.0, 2.0], [3.0, 4.0]])
    assert x.sum(axis=0).tolist() == [4.0, 6.0]
    assert kiln.mean(x, axis=1).tolist() == [1.5, 3.5]


def test_numpy_dtypes_are_kept_and_bad_data_is_refused():
    assert kiln.tensor(np.float64(1.5)).dtype == kiln.float64
    assert kiln.tensor(np.int32(3)).dtype == kiln.int32
    assert kiln.tensor([np.array([1.0, 2.0]), np.array([3.0, 4.0])]).dtype == kiln.float64
    assert kiln.tensor([1.5]).dtype == kiln.float32  # Python floats: the default dtype
    with pytest.raises(RuntimeError, match="Overflow"):
        kiln.tensor(2**63)
    with pytest.raises(RuntimeError, match="without overflow"):
        kiln.tensor([float("nan")], dtype=kiln.int64)
    with pytest.raises(RuntimeError, match="without overflow"):
        kiln.tensor([2**40], dtype=kiln.int32)
    with pytest.raises(RuntimeError, match="Could not infer dtype of NoneType"):
        kiln.tensor(None)
    with pytest.raises(ValueError):
        kiln.tensor(["a"])


def test_grad_fn_classes_are_named_after_the_node():
    x = kiln.ones(2, requires_grad=True)
    y = (x * 2).sum()
    assert type(y.grad_fn).__name__ == "SumBackward0" and isinstance(y.grad_fn, kiln._C.Node)
    mul = y.grad_fn.next_functions[0][0]
    assert type(mul).__name__ == "MulBackward0"
    assert type(mul.next_functions[0][0]).__name__ == "AccumulateGrad"
    assert y.grad_fn == y.grad_fn


def test_max_gradient_goes_to_a_nan_maximum():
    a = kiln.tensor([1.0, float("nan"), 3.0], requires_grad=True)
    a.max().backward()
    assert a.grad.tolist() == [0.0, 1.0, 0.0]


def test_zero_dim_tensors_are_accepted_as_numbers():
    assert kiln.arange(kiln.tensor(4)).tolist() == [0, 1, 2, 3]
    assert kiln.ones(2).fill_(kiln.tensor(2.5)).tolist() == [2.5, 2.5]
    mask = kiln.tensor([True, False])
    assert kiln.zeros(2).masked_fill(mask, kiln.tensor(3.0)).tolist() == [3.0, 0.0]


def test_comparison_with_other_objects_is_plain_python():
    t = kiln.ones(2)
    assert (t == "a") is False and (t == [1, 1]) is False and (t != None) is True  # noqa: E711
    assert kiln.Size([1]) + (2,) == (1, 2) and isinstance(kiln.Size([1]) + (2,), kiln.Size)


def test_inference_mode_records_no_graph():
    x = kiln.ones(2, requires_grad=True)
    with kiln.inference_mode():
        assert not (x * 2).requires_grad

    @kiln.inference_mode()
    def f(t):
        return t * 2
    assert not f(x).requires_grad and (x * 2).requires_grad


def test_empty_reductions_raise_index_error():
    with pytest.raises(IndexError, match="non-zero size"):
        kiln.zeros(0).argmax()
    with pytest.raises(IndexError, match="non-zero size"):
        kiln.zeros(0, 3).amax(0)


def test_numpy_arrays_mix_with_tensors():
    t = kiln.tensor([1.0, 2.0])
    r = t + np.array([1.0, 2.0])
    assert isinstance(r, kiln.Tensor) and r.dtype == kiln.float64 and r.tolist() == [2.0, 4.0]
    # NumPy defers to Tensor.__radd__, which (as torch's) gives NotImplemented for an array: TypeError
    # (compared with torch in test_differential_fixes7.py)
    with pytest.raises(TypeError):
        np.array([1.0, 2.0]) + t
    r = np.array([1.0, 2.0]) / t  # torch's __rdiv__ is t.reciprocal() * array: NumPy's product
    assert isinstance(r, kiln.Tensor) and r.dtype == kiln.float64 and r.tolist() == [1.0, 1.0]
    np.testing.assert_array_equal(np.asarray(kiln.tensor([[1, 2]])), [[1, 2]])


def test_where_equal_and_small_aliases():
    c = kiln.tensor([True, False, True])
    x, y = kiln.tensor([1.0, 2.0, 3.0]), kiln.zeros(3)
    assert kiln.where(c, x, y).tolist() == [1.0, 0.0, 3.0]
    assert x.where(c, y).tolist() == [1.0, 0.0, 3.0]
    assert [t.tolist() for t in kiln.where(c)] == [[0, 2]]
    assert kiln.equal(x, x.clone()) and not kiln.equal(x, y) and not kiln.equal(x, x[:2])
    assert x.allclose(x + 1e-9) and not x.allclose(y)
    m = kiln.arange(6).view(2, 3)
    assert m.swapaxes(0, 1).shape == (3, 2) and m.swapdims(0, 1).shape == (3, 2)
    assert m.ravel().tolist() == [0, 1, 2, 3, 4, 5] and x.broadcast_to((2, 3)).shape == (2, 3)
    assert kiln.numel(m) == 6 and kiln.is_floating_point(x) and not kiln.is_floating_point(m)
    assert kiln.arange(3)._version == 0


def test_python_ints_beyond_int64_raise_overflow():
    with pytest.raises(RuntimeError, match="Overflow when unpacking long"):
        kiln.ones(3)[2**63]
    with pytest.raises(RuntimeError, match="Overflow when unpacking long"):
        kiln.ones(3) + 2**70
