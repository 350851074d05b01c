"""split/chunk/unbind return views of self with working autograd; diagonal and unfold are views
that share self's storage, and writes through them follow kiln's in-place-on-view rules."""
import numpy as np
import pytest

import kiln
from kiln.autograd import gradcheck


def leaf(a):
    return kiln.tensor(np.asarray(a, dtype=np.float64), requires_grad=True)


def test_grad_through_a_subset_of_split_outputs():
    x = leaf(np.arange(15.0).reshape(5, 3))
    a, b, c = x.split(2)
    assert [tuple(p.shape) for p in (a, b, c)] == [(2, 3), (2, 3), (1, 3)]
    (a * 2).sum().backward()  # b and c unused: their rows get zeros
    want = np.zeros((5, 3))
    want[:2] = 2
    np.testing.assert_array_equal(x.grad.numpy(), want)
    x.grad = None
    a, b, c = x.split(2)
    (c * 5).sum().backward()
    want = np.zeros((5, 3))
    want[4] = 5
    np.testing.assert_array_equal(x.grad.numpy(), want)


def test_grad_through_split_with_sizes_and_chunk_on_dim_1():
    x = leaf(np.ones((2, 6)))
    p, q = kiln.split(x, [1, 5], 1)
    r0, r1, r2 = x.chunk(3, dim=1)
    ((p * 3).sum() + (r2 * 7).sum()).backward()
    want = np.zeros((2, 6))
    want[:, 0] += 3
    want[:, 4:] += 7
    np.testing.assert_array_equal(x.grad.numpy(), want)


def test_huge_arguments_do_not_overflow():
    parts = kiln.ones(4).chunk(2 ** 63 - 1)  # as torch: one chunk per element
    assert [tuple(p.shape) for p in parts] == [(1,)] * 4
    assert len(kiln.ones(4).split(2 ** 63 - 1)) == 1
    np.testing.assert_array_equal(kiln.roll(kiln.arange(4), -2 ** 63).numpy(), [0, 1, 2, 3])
    assert tuple(kiln.ones(2, 3).diagonal(-2 ** 63).shape) == (0,)
    with pytest.raises(RuntimeError, match="overflows"):
        kiln.ones(2, 3).repeat(2 ** 40, 2 ** 40)


def test_unbind_then_stack_backward():
    x = leaf(np.arange(12.0).reshape(3, 4))
    parts = kiln.unbind(x, 1)
    assert len(parts) == 4 and tuple(parts[0].shape) == (3,)
    y = kiln.stack([p * i for i, p in enumerate(parts)], 1)
    np.testing.assert_array_equal(y.detach().numpy(), np.arange(12.0).reshape(3, 4) * np.arange(4))
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), np.broadcast_to(np.arange(4.0), (3, 4)))
    assert gradcheck(lambda t: kiln.stack(kiln.unbind(t, 0)[::-1], 1), [leaf(np.random.rand(3, 2))])


def test_split_outputs_share_storage_with_self():
    x = kiln.tensor(np.arange(6.0))
    parts = x.chunk(3)
    for i, p in enumerate(parts):
        assert p.data_ptr() == x.data_ptr() + 2 * i * 8
    parts[1].mul_(10)  # a write through one output shows in self
    np.testing.assert_array_equal(x.numpy(), [0, 1, 20, 30, 4, 5])


def test_inplace_on_a_tensor_split_output_with_autograd():
    # tensor_split's outputs are ordinary slices (split's refuse in-place writes under autograd, as
    # torch: tests/python/test_view_creation_rules.py).
    x = leaf(np.arange(8.0).reshape(4, 2))
    y = x.clone()
    a, b = y.tensor_split(2)
    a.mul_(3)  # y's history becomes a CopySlices node
    np.testing.assert_array_equal(y.detach().numpy()[:2], np.arange(4.0).reshape(2, 2) * 3)
    y.sum().backward()
    want = np.ones((4, 2))
    want[:2] = 3
    np.testing.assert_array_equal(x.grad.numpy(), want)
    # A sibling output used after the write: its history is refreshed from y's, and it still gets
    # only its own rows' gradient.
    x.grad = None
    y = x.clone()
    a, b = y.tensor_split(2)
    a.mul_(3)
    (b * 2 + a.sum()).sum().backward()
    want = np.full((4, 2), 2.0)
    want[:2] = 3 * 4  # a.sum() is used once per element of b (4 of them)
    np.testing.assert_array_equal(x.grad.numpy(), want)


def test_diagonal_is_a_view_and_writes_go_through():
    x = kiln.zeros(3, 4)
    d = x.diagonal(1)
    assert tuple(d.shape) == (3,) and d.data_ptr() == x.data_ptr() + 4
    d.add_(1)
    np.testing.assert_array_equal(x.numpy(), np.eye(3, 4, 1))
    x.fill_(2.0)
    np.testing.assert_array_equal(d.numpy(), [2, 2, 2])


def test_inplace_through_diagonal_with_autograd():
    base = leaf(np.arange(9.0).reshape(3, 3))
    y = base.clone()
    y.diagonal().mul_(2)
    np.testing.assert_array_equal(y.detach().numpy(), np.arange(9.0).reshape(3, 3) * (1 + np.eye(3)))
    (y * y).sum().backward()
    np.testing.assert_allclose(base.grad.numpy(), 2 * np.arange(9.0).reshape(3, 3) * (1 + np.eye(3)) ** 2)


def test_diagonal_of_a_transposed_view():
    x = kiln.tensor(np.arange(12.0).reshape(3, 4))
    t = x.transpose(0, 1)
    np.testing.assert_array_equal(kiln.diagonal(t, -1).numpy(), np.diagonal(np.arange(12.0).reshape(3, 4).T, -1))


def test_unfold_is_a_view():
    x = kiln.tensor(np.arange(7.0))
    u = x.unfold(0, 3, 2)
    assert tuple(u.shape) == (3, 3) and tuple(u.stride()) == (2, 1) and u.data_ptr() == x.data_ptr()
    x.mul_(2)
    np.testing.assert_array_equal(u.numpy(), 2 * np.array([[0, 1, 2], [2, 3, 4], [4, 5, 6]]))


def test_unfold_writes_through_non_overlapping_windows():
    x = kiln.tensor(np.arange(6.0))
    x.unfold(0, 2, 2).add_(1)
    np.testing.assert_array_equal(x.numpy(), np.arange(6.0) + 1)
    x.unfold(0, 2, 3).mul_(-1)  # windows [0, 1] and [3, 4]; 2 and 5 are in none
    np.testing.assert_array_equal(x.numpy(), [-1, -2, 3, -4, -5, 6])


def test_unfold_backward_sums_overlapping_windows():
    x = leaf(np.arange(5.0))
    x.unfold(0, 3, 1).sum().backward()  # windows [0..2], [1..3], [2..4]
    np.testing.assert_array_equal(x.grad.numpy(), [1, 2, 3, 2, 1])


def test_roll_and_flip_and_repeat_gradients():
    x = leaf(np.arange(6.0).reshape(2, 3))
    w = kiln.tensor(np.arange(6.0).reshape(2, 3) + 1)
    (kiln.roll(x, 1, 1) * w).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), np.roll(np.arange(6.0).reshape(2, 3) + 1, -1, 1))
    x.grad = None
    x.repeat(2, 2).sum().backward()  # every element appears 4 times
    np.testing.assert_array_equal(x.grad.numpy(), np.full((2, 3), 4.0))
    x.grad = None
    (x.flip(0, 1) * w).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), np.flip(np.arange(6.0).reshape(2, 3) + 1))


def test_tril_triu_inplace_and_out():
    a = np.arange(12.0).reshape(3, 4)
    x = kiln.tensor(a)
    out = kiln.empty(0, dtype=kiln.float64)
    assert kiln.triu(x, 1, out=out) is out
    np.testing.assert_array_equal(out.numpy(), np.triu(a, 1))
    assert x.tril_(-1) is x
    np.testing.assert_array_equal(x.numpy(), np.tril(a, -1))
    g = leaf(a)
    (g.tril() * 3).sum().backward()
    np.testing.assert_array_equal(g.grad.numpy(), 3 * np.tril(np.ones((3, 4))))
