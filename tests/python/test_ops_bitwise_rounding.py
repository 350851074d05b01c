"""Bitwise/logical ops and operators (& | ^ ~), rounding (floor ceil trunc round),
div(rounding_mode=...), clamp with tensor bounds and clip: values against NumPy."""
import numpy as np
import pytest

import kiln

X = np.array([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 3.7, -3.7])
I = np.array([-7, -3, 0, 1, 5, 6, 12, 2**40])


@pytest.mark.parametrize("op, np_op", [("__and__", np.bitwise_and), ("__or__", np.bitwise_or),
                                        ("__xor__", np.bitwise_xor)])
def test_bitwise_operators_on_ints_and_bools(op, np_op):
    a, b = I, I[::-1].copy()
    np.testing.assert_array_equal(getattr(kiln.tensor(a), op)(kiln.tensor(b)).numpy(), np_op(a, b))
    m, n = a > 0, b > 2
    got = getattr(kiln.tensor(m), op)(kiln.tensor(n))
    assert got.dtype == kiln.bool
    np.testing.assert_array_equal(got.numpy(), np_op(m, n))
    np.testing.assert_array_equal(getattr(kiln.tensor(a), op)(6).numpy(), np_op(a, 6))


def test_invert_and_inplace_bitwise():
    np.testing.assert_array_equal((~kiln.tensor(I)).numpy(), ~I)
    np.testing.assert_array_equal((~kiln.tensor(I > 0)).numpy(), ~(I > 0))
    t = kiln.tensor(I.copy())
    ptr = t.data_ptr()
    t &= 5
    t |= 8
    t ^= 3
    assert t.data_ptr() == ptr
    np.testing.assert_array_equal(t.numpy(), ((I & 5) | 8) ^ 3)


def test_bitwise_refuses_floats():
    with pytest.raises(RuntimeError, match="not implemented for 'float32'"):
        kiln.tensor(X, dtype=kiln.float32) & kiln.tensor(X, dtype=kiln.float32)
    with pytest.raises(RuntimeError, match="bitwise_not"):
        kiln.tensor(X).bitwise_not()
    with pytest.raises(TypeError, match="invert"):  # torch 1.13's Tensor.__invert__: a TypeError
        ~kiln.tensor(X)


@pytest.mark.parametrize("name", ["logical_and", "logical_or", "logical_xor"])
def test_logical_ops_read_nonzero_and_give_bool(name):
    a, b = X, np.where(I > 0, I, 0).astype(np.float64)
    got = getattr(kiln, name)(kiln.tensor(a), kiln.tensor(b))
    assert got.dtype == kiln.bool
    np.testing.assert_array_equal(got.numpy(), getattr(np, name)(a, b))
    t = kiln.tensor(a)
    getattr(t, name + "_")(kiln.tensor(b))  # in place keeps self's dtype
    assert t.dtype == kiln.float64
    np.testing.assert_array_equal(t.numpy(), getattr(np, name)(a, b).astype(np.float64))


@pytest.mark.parametrize("name", ["floor", "ceil", "trunc", "round"])
def test_rounding_matches_numpy(name):
    ref = {"floor": np.floor, "ceil": np.ceil, "trunc": np.trunc, "round": np.round}[name]  # round: half to even
    np.testing.assert_array_equal(getattr(kiln, name)(kiln.tensor(X)).numpy(), ref(X))
    np.testing.assert_array_equal(getattr(kiln.tensor(I), name)().numpy(), I)  # integers are kept
    x = kiln.tensor(X, requires_grad=True)
    getattr(x, name)().sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), np.zeros_like(X))


def test_div_rounding_modes():
    a, b = np.array([7, -7, 7, -7, 6, -1]), np.array([2, 2, -2, -2, 3, 4])
    ta, tb = kiln.tensor(a), kiln.tensor(b)
    np.testing.assert_array_equal(kiln.div(ta, tb, rounding_mode="floor").numpy(), a // b)
    np.testing.assert_array_equal(kiln.div(ta, tb, rounding_mode="trunc").numpy(), np.trunc(a / b).astype(np.int64))
    assert kiln.div(ta, tb, rounding_mode="trunc").dtype == kiln.int64
    np.testing.assert_allclose(kiln.div(ta, tb, rounding_mode=None).numpy(), a / b, rtol=1e-6)
    np.testing.assert_array_equal(ta.div(2.5, rounding_mode="trunc").numpy(), np.trunc(a / 2.5).astype(np.float32))
    with pytest.raises(RuntimeError, match="division by zero"):
        kiln.div(ta, kiln.zeros(6, dtype=kiln.int64), rounding_mode="trunc")
    with pytest.raises(RuntimeError, match="rounding_mode"):
        kiln.div(ta, tb, rounding_mode="nearest")


def test_clamp_with_tensor_bounds_and_clip():
    lo, hi = np.linspace(-2, 0, 8), np.linspace(1, 3, 8)
    np.testing.assert_array_equal(kiln.clamp(kiln.tensor(X), kiln.tensor(lo), kiln.tensor(hi)).numpy(),
                                  np.minimum(np.maximum(X, lo), hi))
    np.testing.assert_array_equal(kiln.tensor(X).clamp(max=kiln.tensor(1.0)).numpy(), np.minimum(X, 1.0))
    np.testing.assert_array_equal(kiln.tensor(X).clip(-1, 1).numpy(), np.clip(X, -1, 1))
    with pytest.raises(RuntimeError, match="At least one of 'min' or 'max'"):
        kiln.clamp(kiln.tensor(X), None, None)
