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


@pytest.mark.parametrize("name", ["list", "list_and_list", "lists_separated_by_slice"])
def test_getitem_with_python_lists_matches_tensors(name):
    make = GET_CASES[name]
    t = kiln.tensor(A)
    np.testing.assert_array_equal(t[make(lambda x: np.asarray(x).tolist())].numpy(), t[make(as_kiln)].numpy())


def test_getitem_list_of_lists_is_a_tuple_of_indices():
    # torch (and NumPy's legacy rule): a list holding sequences indexes as a tuple, so a nested
    # bool list is one mask per dim, not a 2-D mask
    t = kiln.tensor(A)
    with pytest.raises(IndexError, match="shape of the mask"):
        t[np.asarray(M01).tolist()]
    np.testing.assert_array_equal(t[[[0, 1], [2, 1]]].numpy(), A[[0, 1], [2, 1]])


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
    # torch assigns tensors and numbers only: a list is a TypeError ("can't assign a list to a
    # torch.FloatTensor"), unlike NumPy
    with pytest.raises(TypeError):
        t[0, 0] = [1, 2, 3, 4, 5]
    expected[0, 0] = [1, 2, 3, 4, 5]
    t[0, 0] = kiln.tensor([1, 2, 3, 4, 5])
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


# ============================================================================= more index mixes
# A 4-D array with distinct sizes, so that misplaced result dims change the shape.
B = np.arange(2 * 3 * 4 * 5).reshape(2, 3, 4, 5)
MB01 = np.array([[False, True, False], [False, False, True]])  # mask over the leading two dims (2 set)
MB123 = (B[0] % 3) == 0                 # mask over the trailing three dims

GET_CASES_4D = {
    "negative_ints": lambda c: (-1, -2, -3),
    "slice_negative_bounds": lambda c: (slice(-2, None), slice(None, -1), slice(-3, -1)),
    "slice_step_3": lambda c: (Ellipsis, slice(None, None, 3)),
    "slice_start_step": lambda c: (slice(1, None), slice(2, 0, 1), slice(1, 4, 2)),
    "none_front_back": lambda c: (None, slice(None), None, Ellipsis, None),
    "ellipsis_then_int": lambda c: (Ellipsis, -1),
    "adv_first_and_third": lambda c: (c([0, 1]), slice(None), c([1, 2])),       # broadcast dims go first
    "adv_second_and_third": lambda c: (slice(None), c([0, 1]), c([1, 2])),      # broadcast dims stay in place
    "adv_second_and_fourth": lambda c: (slice(None), c([0, 2]), slice(None), c([4, 0])),
    "adv_with_slices_around": lambda c: (slice(None), slice(1, 3), c([3, 0, 3])),
    "adv_2d_index_tensor": lambda c: (slice(None), c([[0, 1, 2], [2, 2, 0]])),
    "adv_2d_and_1d_broadcast": lambda c: (c([[0], [1]]), c([2, 0, 1])),
    "adv_2d_2d_separated": lambda c: (c([[1], [0]]), slice(None), c([[3, 0]])),
    "adv_three_adjacent": lambda c: (c([1, 0]), c([2, 2]), c([3, 0])),
    "adv_all_four": lambda c: (c([1, 0]), c([2, 2]), c([3, 0]), c([-1, 0])),
    "adv_then_ellipsis": lambda c: (c([1, 1, 0]), Ellipsis),
    "ellipsis_then_adv": lambda c: (Ellipsis, c([4, 0, 4])),
    "negative_index_tensor": lambda c: (slice(None), c([-1, -3, 0])),
    "adv_with_none_first": lambda c: (None, c([1, 0])),
    "mask_leading_two": lambda c: c(MB01),
    "mask_leading_two_then_slice": lambda c: (c(MB01), slice(1, 3)),
    "mask_leading_two_then_list": lambda c: (c(MB01), slice(None), c([0, 4])),
    "mask_trailing_three": lambda c: (slice(None), c(MB123)),
    "mask_full": lambda c: c(B % 5 == 2),
    "mask_after_slice": lambda c: (slice(None), c(np.array([False, True, True]))),
    "mask_after_two_slices": lambda c: (slice(None), slice(None), c(np.array([True, False, False, True]))),
    "mask_all_false": lambda c: c(np.zeros((2, 3), dtype=bool)),
    "mask_and_adv_separated": lambda c: (c(np.array([True, True])), slice(None), slice(None), c([1, 2])),
    "python_bool_list": lambda c: [True, False],
    "true_scalar": lambda c: True,
    "false_scalar": lambda c: False,
    "true_after_slice": lambda c: (slice(None), True),
    "empty_index_tensor_after_slice": lambda c: (slice(None), c(np.array([], dtype=np.int64))),
}


@pytest.mark.parametrize("name", sorted(GET_CASES_4D))
def test_getitem_4d_matches_numpy(name):
    make = GET_CASES_4D[name]
    expected = B[make(as_np)]
    got = kiln.tensor(B)[make(as_kiln)]
    assert tuple(got.shape) == expected.shape
    np.testing.assert_array_equal(got.numpy(), expected)


def test_getitem_adjacency_rule_by_hand():
    # x[[0,1], :, [1,2]]: the advanced indices are separated, their broadcast dim goes first
    t = kiln.tensor(A)
    r = t[[0, 1], :, [1, 2]]
    assert tuple(r.shape) == (2, 4)
    assert r.tolist() == [[A[0, j, 1] for j in range(4)], [A[1, j, 2] for j in range(4)]]
    # x[:, [0,1], [1,2]]: adjacent, the broadcast dim stays where they were
    r = t[:, [0, 1], [1, 2]]
    assert tuple(r.shape) == (3, 2)
    assert r.tolist() == [[A[i, 0, 1], A[i, 1, 2]] for i in range(3)]


@pytest.mark.parametrize("name", ["adv_first_and_third", "adv_second_and_third", "adv_2d_index_tensor",
                                  "mask_leading_two_then_list", "mask_after_slice", "slice_start_step"])
def test_getitem_on_non_contiguous_tensor_matches_numpy(name):
    base = np.ascontiguousarray(B.transpose(3, 1, 2, 0))  # (5, 3, 4, 2)
    t = kiln.tensor(base).permute(3, 1, 2, 0)            # same values as B, strided
    assert not t.is_contiguous()
    make = GET_CASES_4D[name]
    np.testing.assert_array_equal(t[make(as_kiln)].numpy(), B[make(as_np)])


def test_getitem_index_dtypes_and_bool_tensor_scalar():
    t = kiln.tensor(A)
    with pytest.raises(IndexError, match="must be long, byte or bool"):  # torch 1.13 (torch 2 takes int32)
        t[kiln.tensor([2, 0], dtype=kiln.int32)]
    np.testing.assert_array_equal(t[kiln.tensor(1)].numpy(), A[1])       # 0-dim integer tensor
    np.testing.assert_array_equal(t[kiln.tensor(True)].numpy(), A[True])
    np.testing.assert_array_equal(t[kiln.tensor(False)].numpy(), A[False])
    assert tuple(t[None, True].shape) == (1, 1, 3, 4, 5)


def test_advanced_getitem_copies_basic_getitem_views():
    a = A.copy()
    t = kiln.tensor(a)
    adv = t[[0, 1]]
    adv.fill_(-5)                 # a copy: t is unchanged
    np.testing.assert_array_equal(t.numpy(), A)
    masked = t[t > 10]
    masked.fill_(-5)
    np.testing.assert_array_equal(t.numpy(), A)
    basic = t[1:, ::2, -1]        # a view: writes go through
    basic.fill_(-5)
    a[1:, ::2, -1] = -5
    np.testing.assert_array_equal(t.numpy(), a)


@pytest.mark.parametrize("index", [
    (3,), (-4,), (0, 4), (0, 0, 5), (0, 0, -6),   # int out of range
    ([0, 3],), (slice(None), [4]), (Ellipsis, [-6]),  # list out of range
])
def test_getitem_out_of_range_is_index_error(index):
    with pytest.raises(IndexError):
        kiln.tensor(A)[index]


@pytest.mark.parametrize("index", [
    (0, 0, 0, 0), (slice(None),) * 4, (Ellipsis, 0, 0, 0, 0), ([0], [0], [0], [0]),
])
def test_getitem_too_many_indices(index):
    with pytest.raises(IndexError, match="too many indices"):
        kiln.tensor(A)[index]


def test_getitem_float_and_mask_errors():
    t = kiln.tensor(A)
    with pytest.raises(IndexError):
        t[0.0]
    with pytest.raises(IndexError):
        t[1, 2.5]
    with pytest.raises(IndexError):
        t[kiln.tensor([0.0, 1.0])]
    with pytest.raises(IndexError, match="does not match the shape"):
        t[kiln.tensor([True, False, True, True])]                 # dim 0 has size 3
    with pytest.raises(IndexError, match="does not match the shape"):
        t[:, kiln.tensor([True, False])]                          # dim 1 has size 4
    with pytest.raises(IndexError, match="does not match the shape"):
        t[kiln.tensor(np.ones((3, 5), dtype=bool))]               # covers dims (3, 4)
    with pytest.raises(IndexError):
        t[[0, 1], [0, 1, 2]]                                      # indices do not broadcast


# ============================================================================= assignment
SET_CASES_4D = ["negative_ints", "slice_negative_bounds", "slice_step_3", "none_front_back", "adv_first_and_third",
                "adv_second_and_third", "adv_second_and_fourth", "adv_2d_index_tensor", "adv_2d_and_1d_broadcast",
                "adv_three_adjacent", "adv_all_four", "ellipsis_then_adv", "negative_index_tensor",
                "mask_leading_two", "mask_leading_two_then_slice", "mask_leading_two_then_list",
                "mask_trailing_three", "mask_full", "mask_after_slice", "mask_after_two_slices", "mask_all_false",
                "true_scalar", "false_scalar"]


@pytest.mark.parametrize("name", SET_CASES_4D)
def test_setitem_4d_matches_numpy(name):
    make = GET_CASES_4D[name]
    expected, t = B.copy(), kiln.tensor(B)
    expected[make(as_np)] = -3
    t[make(as_kiln)] = -3
    np.testing.assert_array_equal(t.numpy(), expected)
    shape = B[make(as_np)].shape
    # a value of the full indexed shape, then one that broadcasts along the leading dims
    full = np.arange(int(np.prod(shape))).reshape(shape) + 1000
    expected[make(as_np)] = full
    t[make(as_kiln)] = kiln.tensor(full)
    np.testing.assert_array_equal(t.numpy(), expected)
    if len(shape) >= 1:
        row = -np.arange(shape[-1]) - 1
        expected[make(as_np)] = row
        t[make(as_kiln)] = kiln.tensor(row)
        np.testing.assert_array_equal(t.numpy(), expected)


@pytest.mark.parametrize("name", ["adv_first_and_third", "mask_leading_two", "adv_2d_index_tensor", "slice_step_3"])
def test_setitem_through_a_non_contiguous_view_writes_the_base(name):
    base = np.ascontiguousarray(B.transpose(3, 1, 2, 0))  # (5, 3, 4, 2)
    t_base = kiln.tensor(base)
    view = t_base.permute(3, 1, 2, 0)                     # B's values, strided
    make = GET_CASES_4D[name]
    expected = B.copy()
    expected[make(as_np)] = -9
    view[make(as_kiln)] = -9
    np.testing.assert_array_equal(view.numpy(), expected)
    np.testing.assert_array_equal(t_base.numpy(), expected.transpose(3, 1, 2, 0))


def test_setitem_float_values_and_lists_of_values():
    a = np.zeros((3, 4))
    t = kiln.tensor(a)
    a[[0, 2], 1:3] = [[1.5, 2.5], [3.5, 4.5]]
    t[[0, 2], 1:3] = kiln.tensor([[1.5, 2.5], [3.5, 4.5]], dtype=kiln.float64)
    np.testing.assert_array_equal(t.numpy(), a)
    a[a > 2] = 0.25
    t[t > 2] = 0.25
    np.testing.assert_array_equal(t.numpy(), a)
    a[:, [True, False, True, False]] = 7.0
    t[:, [True, False, True, False]] = 7.0
    np.testing.assert_array_equal(t.numpy(), a)


def test_setitem_value_shape_mismatch_is_an_error():
    t = kiln.zeros(3, 4)
    with pytest.raises(RuntimeError, match="shape mismatch"):
        t[[0, 1]] = kiln.ones(3, 4)
    with pytest.raises(RuntimeError):
        t[t >= 0] = kiln.ones(5)
    with pytest.raises(IndexError):
        t[[0, 3]] = 1.0
    assert t.tolist() == [[0.0] * 4] * 3


@pytest.mark.parametrize("make_index", [
    lambda c: c([0, 2, 2, 0, 1]),
    lambda c: (slice(None), c([3, 3, 1])),
    lambda c: (c([1, 1]), c([0, 0])),
    lambda c: (c([[0, 0], [2, 0]]), slice(1, 3)),
], ids=["dup_rows", "dup_cols_after_slice", "dup_pairs", "dup_2d"])
def test_augmented_assignment_with_duplicates_increments_once(make_index):
    a = np.arange(12).reshape(3, 4)
    t = kiln.tensor(a)
    a[make_index(as_np)] += 1
    t[make_index(as_kiln)] += 1
    np.testing.assert_array_equal(t.numpy(), a)
    a[make_index(as_np)] -= 5
    t[make_index(as_kiln)] -= 5
    np.testing.assert_array_equal(t.numpy(), a)


@pytest.mark.parametrize("case", ["1d", "rows_of_2d", "pairs", "2d_index", "mask", "with_int_dtype"])
def test_index_put_accumulate_matches_add_at(case):
    rng = np.random.default_rng(3)
    if case == "1d":
        x, idx = np.zeros(6), (np.array([0, 5, 0, 0, 2, 5]),)
    elif case == "rows_of_2d":
        x, idx = rng.standard_normal((4, 3)), (np.array([3, 1, 3, 3]),)
    elif case == "pairs":
        x, idx = rng.standard_normal((3, 4)), (np.array([0, 2, 0, 0]), np.array([1, 3, 1, 2]))
    elif case == "2d_index":
        x, idx = rng.standard_normal((5, 2)), (np.array([[1, 1, 4], [0, 1, 4]]),)
    elif case == "mask":
        x = rng.standard_normal((3, 4))
        idx = (x > 0,)
    else:
        x, idx = np.arange(10, dtype=np.int64), (np.array([9, 9, 9, 0]),)
    values = np.asarray(rng.integers(-5, 6, x[idx].shape)).astype(x.dtype)
    expected = x.copy()
    np.add.at(expected, idx, values)
    t = kiln.tensor(x)
    r = t.index_put_(tuple(kiln.tensor(i) for i in idx), kiln.tensor(values), accumulate=True)
    assert r is t
    np.testing.assert_allclose(t.numpy(), expected, rtol=1e-12)
    # a broadcast value accumulates once per (repeated) position as well
    expected2 = x.copy()
    np.add.at(expected2, idx, np.ones(x[idx].shape, dtype=x.dtype) * 2)
    t2 = kiln.tensor(x)
    t2.index_put_(tuple(kiln.tensor(i) for i in idx), kiln.tensor(np.array(2, dtype=x.dtype)), accumulate=True)
    np.testing.assert_allclose(t2.numpy(), expected2, rtol=1e-12)


def test_index_put_without_accumulate_and_functional_forms():
    x_np = np.arange(12.0).reshape(4, 3)
    idx = np.array([3, 0])
    v = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    x = kiln.tensor(x_np)
    y = kiln.index_put(x, (kiln.tensor(idx),), kiln.tensor(v))
    expected = x_np.copy()
    expected[idx] = v
    np.testing.assert_array_equal(y.numpy(), expected)
    np.testing.assert_array_equal(x.numpy(), x_np)         # input unchanged
    y2 = x.index_put((kiln.tensor([1, 1]),), kiln.tensor(v), accumulate=True)
    expected2 = x_np.copy()
    np.add.at(expected2, [1, 1], v)
    np.testing.assert_array_equal(y2.numpy(), expected2)
    np.testing.assert_array_equal(x.numpy(), x_np)
    x.index_put_((kiln.tensor(idx),), kiln.tensor(v))
    np.testing.assert_array_equal(x.numpy(), expected)


# ============================================================================= gradients
def _leaf(a):
    return kiln.tensor(np.asarray(a, dtype=np.float64), dtype=kiln.float64, requires_grad=True)


GTOL = dict(eps=1e-6, atol=1e-5, rtol=1e-3)


def test_assignment_into_a_copy_zeroes_the_gradient_of_overwritten_rows():
    a = _leaf(np.random.default_rng(0).standard_normal((4, 3)))
    y = a * 1
    y[[0, 2]] = 0
    y.sum().backward()
    np.testing.assert_array_equal(a.grad.numpy(), [[0.0] * 3, [1.0] * 3, [0.0] * 3, [1.0] * 3])
    b = _leaf(np.random.default_rng(1).standard_normal((3, 4)))
    z = b * 2
    z[z.detach() > 0] = 0
    z.sum().backward()
    np.testing.assert_array_equal(b.grad.numpy(), np.where(b.detach().numpy() * 2 > 0, 0.0, 2.0))


def test_getitem_gradient_with_duplicates_accumulates_like_add_at():
    rng = np.random.default_rng(2)
    a = _leaf(rng.standard_normal((4, 5)))
    rows = np.array([0, 2, 2, 3, 0, 0])
    g = rng.standard_normal((6, 3))
    a[kiln.tensor(rows), 1:4].backward(kiln.tensor(g, dtype=kiln.float64))
    expected = np.zeros((4, 5))
    np.add.at(expected, (rows, slice(1, 4)), g)
    np.testing.assert_allclose(a.grad.numpy(), expected, rtol=1e-12)
    b = _leaf(rng.standard_normal((3, 4)))
    r, c = np.array([[0, 2], [0, 2]]), np.array([1, 1])
    g2 = rng.standard_normal((2, 2))
    b[kiln.tensor(r), kiln.tensor(c)].backward(kiln.tensor(g2, dtype=kiln.float64))
    expected = np.zeros((3, 4))
    np.add.at(expected, (r, c), g2)
    np.testing.assert_allclose(b.grad.numpy(), expected, rtol=1e-12)


def test_index_gradcheck():
    from kiln.autograd import gradcheck, gradgradcheck
    rng = np.random.default_rng(4)
    a = _leaf(rng.standard_normal((3, 4)))
    assert gradcheck(lambda x: x[[0, 2, 2], 1:], (a,), **GTOL)
    assert gradcheck(lambda x: x[:, [3, 0, 3]], (a,), **GTOL)
    assert gradcheck(lambda x: x[[0, 1], [1, 1]], (a,), **GTOL)
    assert gradcheck(lambda x: x[kiln.tensor([[True, False, True, True]] * 3)], (a,), **GTOL)
    assert gradgradcheck(lambda x: x[[0, 2, 2], 1:], (a,), **GTOL)
    c = _leaf(rng.standard_normal((2, 3, 4)))
    assert gradcheck(lambda x: x[[1, 0], :, [2, 2]], (c,), **GTOL)


def test_index_put_gradcheck_wrt_both():
    from kiln.autograd import gradcheck, gradgradcheck
    rng = np.random.default_rng(5)
    a = _leaf(rng.standard_normal((4, 3)))
    v = _leaf(rng.standard_normal((3, 3)))
    idx = kiln.tensor([0, 2, 0])
    assert gradcheck(lambda x, w: x.index_put((idx,), w, accumulate=True), (a, v), **GTOL)
    assert gradcheck(lambda x, w: kiln.index_put(x, (idx,), w, accumulate=True), (a, v), **GTOL)
    assert gradgradcheck(lambda x, w: x.index_put((idx,), w, accumulate=True), (a, v), **GTOL)
    u = _leaf(rng.standard_normal((2, 3)))
    assert gradcheck(lambda x, w: kiln.index_put(x, (kiln.tensor([3, 1]),), w), (a, u), **GTOL)
    row = _leaf(rng.standard_normal(3))  # broadcast value
    assert gradcheck(lambda x, w: x.index_put((idx,), w, accumulate=True), (a, row), **GTOL)


def test_index_put_accumulate_gradients_by_hand():
    a = _leaf(np.zeros((3, 2)))
    v = _leaf(np.ones((4, 2)))
    idx = kiln.tensor([2, 0, 2, 2])
    g = np.arange(6.0).reshape(3, 2)
    a.index_put((idx,), v, accumulate=True).backward(kiln.tensor(g, dtype=kiln.float64))
    np.testing.assert_array_equal(a.grad.numpy(), g)          # self: the identity
    np.testing.assert_array_equal(v.grad.numpy(), g[[2, 0, 2, 2]])  # values: the gradient gathered at idx


def test_setitem_gradient_flows_to_the_values():
    v = _leaf([1.0, 2.0])
    w = kiln.zeros(3, 3, dtype=kiln.float64)
    w[kiln.tensor([0, 2]), 1] = v * 3
    (w * kiln.tensor(np.arange(9.0).reshape(3, 3), dtype=kiln.float64)).sum().backward()
    assert v.grad.tolist() == [3.0 * 1, 3.0 * 7]


def test_index_put_requires_matching_dtypes_but_assignment_converts():
    x = kiln.zeros(3)
    with pytest.raises(RuntimeError, match="Index put requires the source and destination dtypes match"):
        x.index_put_((kiln.tensor([0]),), kiln.tensor([1.0], dtype=kiln.float64))
    with pytest.raises(RuntimeError, match="Index put requires the source and destination dtypes match"):
        x[kiln.tensor([0, 2])] = kiln.tensor([1, 2])  # torch 1.13's x[i] = v does not convert either
    x[kiln.tensor([0, 2])] = 3  # a Python number is converted
    x[x == 3] = kiln.tensor([5])  # one bool mask and one value: torch's masked_fill_ path converts
    assert x.tolist() == [5.0, 0.0, 5.0] and x.dtype == kiln.float32
