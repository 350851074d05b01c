"""kiln.linalg's LU family, lstsq, the *_ex variants, out= and slogdet's gradient at singular
matrices, against torch (the oracle): values, gradients (torch's, and gradcheck/gradgradcheck in
float64), infos, and the errors of bad inputs (torch's exception types and messages)."""
import warnings

import numpy as np
import pytest
import torch

import kiln
from kiln.autograd import gradcheck, gradgradcheck
from test_linalg import FLOATS, close, grads_close, pair, rand, well_conditioned

LinAlgErrors = (kiln.linalg.LinAlgError, torch.linalg.LinAlgError)


def same_error(kcall, tcall, exact=True):
    """Both raise; kiln's exception is of torch's kind (LinAlgError, RuntimeError, TypeError) and
    its message torch's (or, with exact=False, starts with the same op name)."""
    with pytest.raises(Exception) as t:
        tcall()
    with pytest.raises(Exception) as k:
        kcall()
    tk, kk = t.value, k.value
    assert isinstance(kk, kiln.linalg.LinAlgError) == isinstance(tk, torch.linalg.LinAlgError), (kk, tk)
    for cls in (TypeError, RuntimeError, ValueError, IndexError):
        assert isinstance(kk, cls) == isinstance(tk, cls), (type(kk), type(tk), kk, tk)
    if exact:
        assert str(kk) == str(tk)
    else:
        assert str(kk).split(":")[0] == str(tk).split(":")[0], (str(kk), str(tk))
    return kk


def identical(k, t):
    """Same dtype, shape and values, NaNs and infinities in the same places."""
    k = k.detach().numpy() if isinstance(k, kiln.Tensor) else np.asarray(k)
    t = t.detach().numpy()
    assert k.dtype == t.dtype and k.shape == t.shape, (k.dtype, t.dtype, k.shape, t.shape)
    np.testing.assert_array_equal(k, t)


# ----------------------------------------------------------------------------- lu_factor
LU_SHAPES = [(3, 3), (4, 4), (3, 5), (5, 3), (2, 4, 4), (2, 1, 3, 5), (0, 3, 3), (1, 1), (0, 0)]


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape", LU_SHAPES, ids=str)
def test_lu_factor_matches_torch(shape, dtype):
    (k,), (t,) = pair(rand(shape, dtype))
    kLU, kpiv, kinfo = kiln.linalg.lu_factor_ex(k)
    tLU, tpiv, tinfo = torch.linalg.lu_factor_ex(t)
    close(kLU, tLU, dtype)
    identical(kpiv, tpiv)
    identical(kinfo, tinfo)
    for a, b in zip(kiln.linalg.lu_factor(k), torch.linalg.lu_factor(t)):
        close(a, b, dtype)
    assert type(kiln.linalg.lu_factor(k)).__name__ == "linalg_lu_factor"
    assert kiln.linalg.lu_factor_ex(k)._fields if hasattr(kiln.linalg.lu_factor_ex(k), "_fields") else True
    assert kiln.linalg.lu_factor_ex(k).pivots.dtype == kiln.int32


def test_lu_factor_non_contiguous_input():
    a = rand((4, 6), "float64")
    (k,), (t,) = pair(a)
    for x, y in zip(kiln.linalg.lu_factor(k[:, ::2]), torch.linalg.lu_factor(t[:, ::2])):
        close(x, y, "float64")
    for x, y in zip(kiln.linalg.lu_factor(k.mT), torch.linalg.lu_factor(t.mT)):
        close(x, y, "float64")


SINGULAR = [np.zeros((2, 2)), np.array([[1.0, 2.0], [2.0, 4.0]]), np.array([[0.0, 1.0], [0.0, 1.0]]),
            np.array([[0.0, 1.0], [0.0, 0.0]]), np.ones((3, 3))]


@pytest.mark.parametrize("i", range(len(SINGULAR)))
def test_lu_factor_singular(i):
    (k,), (t,) = pair(SINGULAR[i])
    for x, y in zip(kiln.linalg.lu_factor_ex(k), torch.linalg.lu_factor_ex(t)):
        identical(x, y)
    for x, y in zip(kiln.linalg.lu(k), torch.linalg.lu(t)):  # linalg.lu does not raise
        identical(x, y)
    same_error(lambda: kiln.linalg.lu_factor(k), lambda: torch.linalg.lu_factor(t))
    same_error(lambda: kiln.linalg.lu_factor_ex(k, check_errors=True),
               lambda: torch.linalg.lu_factor_ex(t, check_errors=True))


def test_lu_factor_singular_batch_element():
    a = np.stack([np.eye(3), np.ones((3, 3))])
    (k,), (t,) = pair(a)
    identical(kiln.linalg.lu_factor_ex(k).info, torch.linalg.lu_factor_ex(t).info)
    same_error(lambda: kiln.linalg.lu_factor(k), lambda: torch.linalg.lu_factor(t))


@pytest.mark.parametrize("call", [
    lambda m, x: m.linalg.lu_factor(x.ones(3)),
    lambda m, x: m.linalg.lu_factor(x.ones(3, 3, dtype=x.int64)),
    lambda m, x: m.linalg.lu_factor_ex(x.ones(2, 2, dtype=x.int32)),
    lambda m, x: m.linalg.lu_factor(x.ones(3, 3, dtype=x.float16)),
    lambda m, x: m.linalg.lu_factor(x.ones(3, 3), pivot=False),
    lambda m, x: m.linalg.lu(x.ones(3)),
    lambda m, x: m.linalg.lu(x.ones(3, 3, dtype=x.int64)),
    lambda m, x: m.linalg.lu(x.ones(3, 3), pivot=False),
])
def test_lu_factor_bad_input(call):
    same_error(lambda: call(kiln, kiln), lambda: call(torch, torch))


@pytest.mark.parametrize("shape", [(3, 3), (3, 5), (5, 3), (2, 3, 3)], ids=str)
def test_lu_factor_gradients(shape):
    a = rand(shape, "float64", seed=3)
    grads_close(lambda x: kiln.linalg.lu_factor(x)[0], lambda x: torch.linalg.lu_factor(x)[0], [a], "float64")
    grads_close(lambda x: kiln.linalg.lu_factor_ex(x)[0], lambda x: torch.linalg.lu_factor_ex(x)[0], [a], "float64")
    x = kiln.from_numpy(a).requires_grad_()
    assert gradcheck(lambda y: kiln.linalg.lu_factor(y)[0], [x])
    assert gradgradcheck(lambda y: kiln.linalg.lu_factor(y)[0], [x])


@pytest.mark.parametrize("shape", [(3, 3), (3, 5), (5, 3), (2, 4, 4)], ids=str)
def test_lu_matches_torch(shape):
    a = rand(shape, "float64", seed=4)
    grads_close(lambda x: tuple(kiln.linalg.lu(x)), lambda x: tuple(torch.linalg.lu(x)), [a], "float64")
    x = kiln.from_numpy(a).requires_grad_()
    assert gradgradcheck(lambda y: kiln.linalg.lu(y)[1:], [x])
    assert type(kiln.linalg.lu(x)).__name__ == "linalg_lu"


# ----------------------------------------------------------------------------- lu_unpack
@pytest.mark.parametrize("shape", [(3, 3), (3, 5), (5, 3), (2, 4, 4), (0, 2, 2)], ids=str)
@pytest.mark.parametrize("flags", [(True, True), (False, True), (True, False)])
def test_lu_unpack_matches_torch(shape, flags):
    a = rand(shape, "float32", seed=6)
    kLU, kpiv = kiln.linalg.lu_factor(kiln.from_numpy(a))
    tLU, tpiv = torch.linalg.lu_factor(torch.from_numpy(a))
    for x, y in zip(kiln.lu_unpack(kLU, kpiv, *flags), torch.lu_unpack(tLU, tpiv, *flags)):
        close(x, y, "float32")


def test_lu_unpack_gradient():
    a = rand((4, 3), "float64", seed=7)
    LU, piv = torch.linalg.lu_factor(torch.from_numpy(a))
    kpiv = kiln.from_numpy(piv.numpy())
    grads_close(lambda x: kiln.lu_unpack(x, kpiv)[1:], lambda x: torch.lu_unpack(x, piv)[1:], [LU.numpy()],
                "float64")


@pytest.mark.parametrize("pivots", [np.array([1, 2, 3], np.int64), np.array([4, 3, 3], np.int32),
                                    np.array([0, 3, 3], np.int32)], ids=["int64", "too large", "zero"])
def test_lu_unpack_bad_pivots(pivots):
    a = rand((3, 3), "float32")
    same_error(lambda: kiln.lu_unpack(kiln.from_numpy(a), kiln.from_numpy(pivots)),
               lambda: torch.lu_unpack(torch.from_numpy(a), torch.from_numpy(pivots)))


# ----------------------------------------------------------------------------- lu_solve
SOLVE_CASES = [((3, 3), (3, 2)), ((2, 4, 4), (2, 4, 3)), ((3, 3), (2, 3, 1)), ((2, 3, 3), (3, 2)), ((0, 2, 2), (0, 2, 1))]


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("left", [True, False])
@pytest.mark.parametrize("adjoint", [False, True])
@pytest.mark.parametrize("shapes", SOLVE_CASES, ids=str)
def test_lu_solve_matches_torch(shapes, left, adjoint, dtype):
    a_shape, b_shape = shapes
    if not left:
        b_shape = b_shape[:-2] + (b_shape[-1], b_shape[-2])
    a, b = well_conditioned(a_shape, dtype), rand(b_shape, dtype)
    (ka, kb), (ta, tb) = pair(a, b)
    kLU, kpiv = kiln.linalg.lu_factor(ka)
    tLU, tpiv = torch.linalg.lu_factor(ta)
    close(kiln.linalg.lu_solve(kLU, kpiv, kb, left=left, adjoint=adjoint),
          torch.linalg.lu_solve(tLU, tpiv, tb, left=left, adjoint=adjoint), dtype)


@pytest.mark.parametrize("left", [True, False])
@pytest.mark.parametrize("adjoint", [False, True])
def test_lu_solve_gradients(left, adjoint):
    a, b = rand((3, 3), "float64", seed=2), rand((2, 3, 2) if left else (2, 2, 3), "float64", seed=3)

    def k(x, y):
        return kiln.linalg.lu_solve(*kiln.linalg.lu_factor(x), y, left=left, adjoint=adjoint)

    def t(x, y):
        return torch.linalg.lu_solve(*torch.linalg.lu_factor(x), y, left=left, adjoint=adjoint)

    grads_close(k, t, [a, b], "float64")
    LU, piv = torch.linalg.lu_factor(torch.from_numpy(a))
    kpiv = kiln.from_numpy(piv.numpy())
    grads_close(lambda x, y: kiln.linalg.lu_solve(x, kpiv, y, left=left, adjoint=adjoint),
                lambda x, y: torch.linalg.lu_solve(x, piv, y, left=left, adjoint=adjoint), [LU.numpy(), b], "float64")
    xs = [kiln.from_numpy(a).requires_grad_(), kiln.from_numpy(b).requires_grad_()]
    assert gradcheck(k, xs)
    assert gradgradcheck(k, xs)


def test_lu_solve_singular_gives_torchs_infinities():
    (k,), (t,) = pair(np.array([[0.0, 1.0], [0.0, 1.0]]))
    kf, tf = kiln.linalg.lu_factor_ex(k), torch.linalg.lu_factor_ex(t)
    for adjoint in (False, True):
        identical(kiln.linalg.lu_solve(kf.LU, kf.pivots, kiln.eye(2, dtype=kiln.float64), adjoint=adjoint),
                  torch.linalg.lu_solve(tf.LU, tf.pivots, torch.eye(2, dtype=torch.float64), adjoint=adjoint))


@pytest.mark.parametrize("call", [
    lambda m: m.linalg.lu_solve(m.eye(3), m.ones(3, dtype=m.int32), m.ones(3)),
    lambda m: m.linalg.lu_solve(m.eye(3), m.ones(3, dtype=m.int32), m.ones(4, 2)),
    lambda m: m.linalg.lu_solve(m.eye(3), m.ones(3, dtype=m.int32), m.ones(4, 2), left=False),
    lambda m: m.linalg.lu_solve(m.ones(3, 4), m.ones(3, dtype=m.int32), m.ones(3, 2)),
    lambda m: m.linalg.lu_solve(m.eye(3), m.ones(3, dtype=m.int32), m.ones(3, 2, dtype=m.float64)),
    lambda m: m.linalg.lu_solve(m.eye(3), m.ones(3, dtype=m.int64), m.ones(3, 2)),
    lambda m: m.linalg.lu_solve(m.eye(3), m.ones(2, dtype=m.int32), m.ones(3, 2)),
    lambda m: m.linalg.lu_solve(m.eye(3, dtype=m.int64), m.ones(3, dtype=m.int32), m.ones(3, 2, dtype=m.int64)),
    lambda m: m.linalg.lu_solve(m.eye(3), m.ones(2, 3, dtype=m.int32), m.ones(3, 2)),
])
def test_lu_solve_bad_input(call):
    same_error(lambda: call(kiln), lambda: call(torch))


def test_legacy_lu_and_lu_solve():
    a, b = well_conditioned((2, 3, 3), "float64"), rand((2, 3, 2), "float64")
    (ka, kb), (ta, tb) = pair(a, b)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tLU, tpiv = torch.lu(ta)
        tres = torch.lu(ta, get_infos=True)
        tsol = torch.lu_solve(tb, tLU, tpiv)
    kLU, kpiv = kiln.lu(ka)
    close(kLU, tLU, "float64")
    identical(kpiv, tpiv)
    for x, y in zip(kiln.lu(ka, get_infos=True), tres):
        close(x, y, "float64") if x.dtype == kiln.float64 else identical(x, y)
    for x, y in zip(ka.lu(), (tLU, tpiv)):
        close(x, y, "float64") if x.dtype == kiln.float64 else identical(x, y)
    close(kiln.lu_solve(kb, kLU, kpiv), tsol, "float64")
    close(kb.lu_solve(kLU, kpiv), tsol, "float64")
    identical(kiln.lu(kiln.zeros(2, 2))[0], torch.lu(torch.zeros(2, 2))[0])  # no error, as torch
