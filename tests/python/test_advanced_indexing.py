"""Indexing and assignment with every kind of index, and mixes of them, against NumPy on
the same array (PyTorch resolves them as NumPy does, including where the broadcast dims go)."""
import numpy as np
import pytest

import kiln

A = np.arange(60).reshape(3, 4, 5)
M0 = np.array([True, False, True])
M01 = (A[:, :, 0] % 3) == 0

# Each entry builds the same index for NumPy and kiln: f(module-agnostic converter).
GET_CASES = {
    "int": lambda c: 1,
    "negative_int": lambda c: -1,
    "tuple_ints": lambda c: (2, -3),
    "slice_steps": lambda c: (slice(None, None, 2), slice(1, None, 2)),
    "none_ellipsis": lambda c: (None, Ellipsis, 1),
    "ellipsis_middle": lambda c: (0, Ellipsis, slice(1, 3)),
    "list": lambda c: c([2, 0, 2]),
    "negative_list": lambda c: c([-1, -3]),
    "list_and_list": lambda c: (c([0, 1]), c([1, 2])),
    "lists_separated_by_slice": lambda c: (c([0, 1]), slice(None), c([1, 2])),
    "lists_after_slice": lambda c: (slice(None), c([0, 1]), c([1, 2])),
    "lists_with_none_between": lambda c: (slice(None), c([0, 1]), None, c([1, 2])),
    "two_d_index": lambda c: c([[0, 1], [2, 1]]),
    "broadcast_indices": lambda c: (slice(None), c([[0], [1]]), c([1, 2])),
    "mask_dim0": lambda c: c(M0),
    "mask_two_dims": lambda c: c(M01),
    "mask_after_slice": lambda c: (slice(None), c(np.array([True, False, True, False]))),
    "mask_and_list": lambda c: (c(M0), slice(None), c([0, 4])),
    "full_mask": lambda c: c(A % 7 == 0),
    "empty_list": lambda c: c(np.array([], dtype=np.int64)),
    "true_scalar": lambda c: True,
    "false_scalar": lambda c: False,
}


def as_kiln(x):
    return kiln.tensor(np.asarray(x))


def as_np(x):
    return np.asarray(x)


@pytest.mark.parametrize("name", sorted(GET_CASES))
def test_getitem_matches_numpy(name):
    make = GET_CASES[name]
    expected = A[make(as_np)]
    got = kiln.tensor(A)[make(as_kiln)]
    assert tuple(got.shape) == expected.shape
    np.testing.assert_array_equal(got.numpy(), expected)


def test_int_with_advanced_index_is_a_select_first():
    # Where PyTorch and NumPy differ: an int is applied as select() before the advanced
    # indices, so x[1, :, [0, 4]] is x[1][:, [0, 4]] (shape (4, 2); NumPy gives (2, 4)).
    got = kiln.tensor(A)[1, :, [0, 4]]
    np.testing.assert_array_equal(got.numpy(), A[1][:, [0, 4]])


@pytest.mark.parametrize("name", ["list", "list_and_list", "lists_separated_by_slice", "mask_two_dims"])
def test_getitem_with_python_lists_matches_tensors(name):
    make = GET_CASES[name]
    t = kiln.tensor(A)
    np.testing.assert_array_equal(t[make(lambda x: np.asarray(x).tolist())].numpy(), t[make(as_kiln)].numpy())


@pytest.mark.parametrize("bad, error", [
    ((kiln.tensor([0, 3]),), IndexError),                 # out of range
    ((kiln.tensor([-4]),), IndexError),                   # negative out of range
    ((0, 0, 0, 0), IndexError),                           # too many indices
    ((1.5,), IndexError),                                 # float index
    ((kiln.tensor([1.0]),), IndexError),                  # float tensor
    ((kiln.tensor([True, False]),), IndexError),          # mask shape mismatch
    ((kiln.tensor([0, 1]), kiln.tensor([0, 1, 2])), IndexError),  # indices do not broadcast
])
def test_getitem_errors(bad, error):
    with pytest.raises(error):
        kiln.tensor(A)[bad]


SET_CASES = ["int", "slice_steps", "list", "list_and_list", "lists_separated_by_slice", "lists_after_slice",
             "mask_dim0", "mask_two_dims", "mask_after_slice", "full_mask", "two_d_index", "broadcast_indices"]


@pytest.mark.parametrize("name", SET_CASES)
def test_setitem_number_and_broadcast_tensor_match_numpy(name):
    make = GET_CASES[name]
    expected, t = A.copy(), kiln.tensor(A)
    expected[make(as_np)] = -7
    t[make(as_kiln)] = -7
    np.testing.assert_array_equal(t.numpy(), expected)
    shape = A[make(as_np)].shape
    if len(shape) == 0:
        return
    values = np.arange(shape[-1]) * 10  # broadcasts over the leading dims
    expected[make(as_np)] = values
    t[make(as_kiln)] = kiln.tensor(values)
    np.testing.assert_array_equal(t.numpy(), expected)


def test_setitem_with_lists_of_values_and_augmented_assignment():
    expected, t = A.copy(), kiln.tensor(A)
    expected[0, 0] = [1, 2, 3, 4, 5]
    t[0, 0] = [1, 2, 3, 4, 5]
    np.testing.assert_array_equal(t.numpy(), expected)
    idx = np.array([0, 2, 2])
    expected[idx] += 1  # like NumPy: a repeated index is incremented once
    t[kiln.tensor(idx)] += 1
    np.testing.assert_array_equal(t.numpy(), expected)
    expected[expected > 40] *= 2
    t[t > 40] *= 2
    np.testing.assert_array_equal(t.numpy(), expected)


def test_index_put_accumulates_repeated_indices():
    x = np.zeros(5)
    idx = np.array([0, 3, 0, 0, 4])
    v = np.array([1.0, 2.0, 3.0, 4.0, 5.0])
    np.add.at(x, idx, v)
    t = kiln.zeros(5, dtype=kiln.float64)
    r = t.index_put_((kiln.tensor(idx),), kiln.tensor(v), accumulate=True)
    assert r is t
    np.testing.assert_array_equal(t.numpy(), x)
    u = kiln.zeros(2, 3, dtype=kiln.int64)
    u.index_put_((kiln.tensor([1, 1]), kiln.tensor([2, 2])), kiln.tensor(5), accumulate=True)
    assert u.tolist() == [[0, 0, 0], [0, 0, 10]]


def test_functional_index_put_leaves_input_alone():
    x = kiln.zeros(4)
    y = kiln.index_put(x, (kiln.tensor([1, 3]),), kiln.tensor([5.0, 6.0]))
    assert x.tolist() == [0.0, 0.0, 0.0, 0.0] and y.tolist() == [0.0, 5.0, 0.0, 6.0]
    with pytest.raises(RuntimeError, match="shape mismatch"):
        kiln.index_put(x, (kiln.tensor([1, 3]),), kiln.tensor([1.0, 2.0, 3.0]))
    with pytest.raises(IndexError, match="out of bounds"):
        kiln.index_put(x, (kiln.tensor([4]),), kiln.tensor(1.0))


def test_gradients_through_indexing_and_assignment():
    a = kiln.ones(4, 3, requires_grad=True)
    idx = np.array([0, 0, 3])
    (a[kiln.tensor(idx), 1:] * 2).sum().backward()
    expected = np.zeros((4, 3))
    np.add.at(expected, (idx, slice(1, None)), 2.0)
    np.testing.assert_array_equal(a.grad.numpy(), expected)
    b = kiln.ones(4, 3, requires_grad=True)
    y = b * 1
    y[[0, 2]] = 0
    y.sum().backward()
    assert b.grad.tolist() == [[0.0] * 3, [1.0] * 3, [0.0] * 3, [1.0] * 3]
    v = kiln.ones(2, requires_grad=True)
    w = kiln.zeros(3, 3)
    w[kiln.tensor([0, 1]), kiln.tensor([1, 1])] = v * 3
    w.sum().backward()
    assert v.grad.tolist() == [3.0, 3.0]
