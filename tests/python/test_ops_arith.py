"""pow (tensor exponents, scalar base), maximum, minimum, clamp, reciprocal,
floor_divide, remainder (Python's sign rules), logical_not, against NumPy."""
import numpy as np
import pytest

import kiln

NP = {kiln.bool: np.bool_, kiln.int32: np.int32, kiln.int64: np.int64, kiln.float32: np.float32,
      kiln.float64: np.float64}
NUMERIC = [kiln.int32, kiln.int64, kiln.float32, kiln.float64]


def sample(shape, dtype, lo=-6, hi=7, seed=0):
    rng = np.random.default_rng(seed)
    if dtype in (kiln.float32, kiln.float64):
        return rng.uniform(lo, hi, size=shape).astype(NP[dtype])
    return rng.integers(lo, hi, size=shape).astype(NP[dtype])


def nonzero(a):
    return np.where(a == 0, 1, a).astype(a.dtype)


def check(out, expected):
    assert out.dtype == {np.dtype(v): k for k, v in NP.items()}[expected.dtype]
    if expected.dtype.kind == "f":
        np.testing.assert_allclose(out.numpy(), expected, rtol=2e-6, equal_nan=True)
    else:
        np.testing.assert_array_equal(out.numpy(), expected)


@pytest.mark.parametrize("dtype", NUMERIC, ids=str)
def test_floor_divide_and_remainder_follow_python(dtype):
    a = sample((4, 5), dtype, seed=1)
    b = nonzero(sample((5,), dtype, seed=2))  # broadcast divisor
    check(kiln.floor_divide(kiln.tensor(a), kiln.tensor(b)), np.floor_divide(a, b))
    check(kiln.tensor(a) // kiln.tensor(b), np.floor_divide(a, b))
    check(kiln.remainder(kiln.tensor(a), kiln.tensor(b)), np.remainder(a, b))
    check(kiln.tensor(a) % kiln.tensor(b), np.remainder(a, b))
    t = kiln.tensor(a)
    t %= kiln.tensor(b)
    check(t, np.remainder(a, b))


def test_python_scalar_operands():
    a = np.array([-7, 7, -8, 9])
    check(kiln.tensor(a) // 2, a // 2)
    check(kiln.tensor(a) % -3, a % -3)
    check(17 // kiln.tensor([5, -5]), np.array([17 // 5, 17 // -5]))
    check(2 ** kiln.tensor([1.0, 3.0]), np.array([2.0, 8.0], np.float32))
    check(2 ** kiln.tensor([1, 3]), np.array([2, 8]))


def test_integer_division_by_zero_raises():
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        kiln.tensor([1, 2]) // kiln.tensor([1, 0])
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        kiln.tensor([1, 2]) % 0
    assert np.isinf((kiln.tensor([1.0]) // 0).item())  # floats follow IEEE


def test_int_min_divided_by_minus_one_does_not_crash():
    big = np.iinfo(np.int64).min
    assert (kiln.tensor([big]) // -1).item() == big  # wraps, as PyTorch
    assert (kiln.tensor([big]) % -1).item() == 0


@pytest.mark.parametrize("dtype", NUMERIC, ids=str)
def test_pow_tensor_tensor(dtype):
    a = sample((3, 4), dtype, 1, 5)
    e = sample((4,), dtype, 0, 4, seed=3)
    check(kiln.pow(kiln.tensor(a), kiln.tensor(e)), np.power(a, e))
    check(kiln.tensor(a) ** kiln.tensor(e), np.power(a, e))


def test_pow_negative_integer_exponents():
    # A tensor of exponents follows torch's integer pow (1 and -1 stay, the rest truncate to 0);
    # a negative Scalar exponent of an integer tensor raises, as in torch.
    assert (kiln.tensor([2, 3, 1, -1, -1, 0]) ** kiln.tensor([1, -1, -5, -3, -2, -1])).tolist() == [2, 0, 1, -1, 1, 0]
    assert (2 ** kiln.tensor([-1, 2])).tolist() == [0, 4]
    with pytest.raises(RuntimeError, match="negative integer powers"):
        kiln.tensor([2, 3]) ** -1


@pytest.mark.parametrize("dtype", [kiln.bool] + NUMERIC, ids=str)
def test_maximum_minimum(dtype):
    a, b = sample((3, 4), dtype, seed=4), sample((3, 4), dtype, seed=5)
    if dtype == kiln.bool:
        a, b = a > 0, b > 0
    check(kiln.maximum(kiln.tensor(a), kiln.tensor(b)), np.maximum(a, b))
    check(kiln.tensor(a).minimum(kiln.tensor(b)), np.minimum(a, b))


def test_maximum_propagates_nan_and_promotes():
    x = kiln.maximum(kiln.tensor([1.0, float("nan")]), kiln.tensor([2, 0]))
    assert x.dtype == kiln.float32 and x[0].item() == 2 and np.isnan(x[1].item())


@pytest.mark.parametrize("dtype", NUMERIC, ids=str)
def test_clamp(dtype):
    a = sample((3, 5), dtype)
    check(kiln.clamp(kiln.tensor(a), -2, 3), np.clip(a, -2, 3))
    check(kiln.tensor(a).clamp(min=0), np.maximum(a, 0).astype(a.dtype))
    check(kiln.tensor(a).clamp(max=1), np.minimum(a, 1).astype(a.dtype))
    t = kiln.tensor(a)
    t.clamp_(-1, 1)
    check(t, np.clip(a, -1, 1))


def test_clamp_promotion_and_errors():
    assert kiln.arange(4).clamp(min=1.5).dtype == kiln.float32
    with pytest.raises(RuntimeError, match="At least one of 'min' or 'max'"):
        kiln.ones(2).clamp()
    with pytest.raises(RuntimeError, match="can't be cast"):
        kiln.arange(4).clamp_(min=1.5)
    assert np.isnan(kiln.tensor([float("nan")]).clamp(0, 1).item())


def test_reciprocal_and_logical_not():
    check(kiln.reciprocal(kiln.tensor([2.0, -4.0])), np.array([0.5, -0.25], np.float32))
    check(kiln.tensor([2, 4]).reciprocal(), np.array([0.5, 0.25], np.float32))
    check(kiln.logical_not(kiln.tensor([0, 3, -1])), np.array([True, False, False]))
    check(~kiln.tensor([True, False]), np.array([False, True]))
    out = kiln.logical_not(kiln.tensor([1.0, 0.0]))
    assert not out.requires_grad
