"""manual_seed, rand, randn, randint, uniform_, normal_, random_: reproducibility,
ranges and moments (statistical checks with generous, fixed-seed bounds), errors."""
import numpy as np
import pytest

import kiln


def test_seed_reproduces_and_differs():
    kiln.manual_seed(123)
    a = kiln.randn(4, 5).numpy().copy()
    b = kiln.randn(4, 5).numpy().copy()
    kiln.manual_seed(123)
    np.testing.assert_array_equal(kiln.randn(4, 5).numpy(), a)
    assert not np.array_equal(a, b)
    assert kiln.initial_seed() == 123


def test_randn_moments():
    kiln.manual_seed(0)
    x = kiln.randn(200000, dtype=kiln.float64).numpy()
    assert abs(x.mean()) < 0.01 and abs(x.std() - 1) < 0.01
    # Box-Muller tails: about 0.27% beyond 3 sigma.
    assert 0.002 < np.mean(np.abs(x) > 3) < 0.0035


def test_rand_range_and_dtype():
    kiln.manual_seed(0)
    u = kiln.rand(100000)
    assert u.dtype == kiln.float32
    x = u.numpy()
    assert x.min() >= 0 and x.max() < 1 and abs(x.mean() - 0.5) < 0.01
    assert kiln.rand(2, 3, dtype=kiln.float64).dtype == kiln.float64
    assert kiln.rand((2, 3)).shape == (2, 3)


def test_randint_bounds_and_overloads():
    kiln.manual_seed(0)
    r = kiln.randint(3, 10, (20000,))
    assert r.dtype == kiln.int64
    x = r.numpy()
    assert x.min() == 3 and x.max() == 9
    counts = np.bincount(x - 3)
    assert counts.min() > 2500  # 7 values, ~2857 each
    assert kiln.randint(5, (2, 2)).numpy().max() < 5
    assert kiln.randint(0, 2, (4,), dtype=kiln.int32).dtype == kiln.int32


def test_in_place_fills_keep_strides_and_values_follow_row_major_order():
    w = kiln.empty(3, 2).transpose(0, 1)
    kiln.manual_seed(7)
    w.uniform_(-2, 2)
    kiln.manual_seed(7)
    ref = kiln.empty(2, 3).uniform_(-2, 2)
    np.testing.assert_array_equal(w.numpy(), ref.numpy())
    assert w.stride() == (1, 2)
    x = w.numpy()
    assert x.min() >= -2 and x.max() < 2


def test_normal_mean_std():
    kiln.manual_seed(3)
    x = kiln.empty(100000, dtype=kiln.float64).normal_(5.0, 0.5).numpy()
    assert abs(x.mean() - 5) < 0.01 and abs(x.std() - 0.5) < 0.01


def test_like_forms():
    base = kiln.zeros(2, 3, dtype=kiln.float64)
    assert kiln.rand_like(base).dtype == kiln.float64 and kiln.randn_like(base).shape == (2, 3)


def test_errors():
    with pytest.raises(RuntimeError, match="expects 'from' to be less than 'to'"):
        kiln.randint(5, 2, (3,))
    with pytest.raises(RuntimeError, match="floating point"):
        kiln.zeros(2, dtype=kiln.int64).uniform_()
    with pytest.raises(RuntimeError, match="std >= 0"):
        kiln.zeros(2).normal_(0, -1)
    with pytest.raises(RuntimeError, match="from=3"):
        kiln.zeros(2).uniform_(3, 1)
    with pytest.raises(RuntimeError, match="negative dimension"):
        kiln.randn(-1)


@pytest.mark.parametrize("fill", ["uniform_", "normal_"])
def test_random_fills_under_autograd(fill):
    leaf = kiln.zeros(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        getattr(leaf, fill)()
    with kiln.no_grad():
        getattr(leaf, fill)()  # how nn.init fills parameters
    # Overwriting a non-leaf cuts the gradient to what it held before: zero.
    x = kiln.ones(3, requires_grad=True)
    y = x * 2
    getattr(y, fill)()
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [0, 0, 0])


def test_random_integer_fill_gradient_is_zero():
    x = kiln.ones(3, requires_grad=True)
    y = x * 2
    y.random_(0, 5)
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [0, 0, 0])
