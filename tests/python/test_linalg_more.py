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
    its message torch's (or, with exact=False, starts with the same op name). Where torch's message
    names no op ('"lu_cpu" not implemented for 'Long''), kiln's is torch's after the op's name."""
    with pytest.raises(Exception) as t:
        tcall()
    with pytest.raises(Exception) as k:
        kcall()
    tk, kk = t.value, k.value
    assert isinstance(kk, kiln.linalg.LinAlgError) == isinstance(tk, torch.linalg.LinAlgError), (kk, tk)
    for cls in (TypeError, RuntimeError, ValueError, IndexError):
        assert isinstance(kk, cls) == isinstance(tk, cls), (type(kk), type(tk), kk, tk)
    if exact and str(kk) != str(tk):
        op, _, rest = str(kk).partition(": ")
        assert rest == str(tk) and op.startswith("torch.") and ": " not in str(tk), (str(kk), str(tk))
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


@pytest.mark.parametrize("shape", [(3, 3), (3, 5), (5, 3), (2, 4, 4)], ids=str)
def test_lu_factor_gradients_float32(shape):
    a = well_conditioned(shape, "float32") if shape[-1] == shape[-2] else rand(shape, "float32", seed=3)
    grads_close(lambda x: kiln.linalg.lu_factor(x)[0], lambda x: torch.linalg.lu_factor(x)[0], [a], "float32")


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


@pytest.mark.parametrize("shapes", [((2, 3, 3), (5, 3)), ((3, 3), (2,)), ((3, 3), ()), ((3,), (3,))], ids=str)
def test_lu_unpack_wrong_shapes_raise(shapes):
    """torch lets some of these through or reads out of bounds; kiln raises a RuntimeError naming lu_unpack."""
    with pytest.raises(RuntimeError, match="lu_unpack"):
        kiln.lu_unpack(kiln.randn(shapes[0]), kiln.ones(shapes[1], dtype=kiln.int32))


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


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shapes", [((2, 3, 3), (3, 2)), ((2, 1, 3, 3), (4, 3, 1)), ((3, 3), (2, 3, 2))], ids=str)
def test_lu_solve_gradients_broadcast(shapes, dtype):
    """Gradients summed back over the batch dims broadcasting added (to LU's or to B's)."""
    a, b = well_conditioned(shapes[0], dtype), rand(shapes[1], dtype, seed=4)
    grads_close(lambda x, y: kiln.linalg.lu_solve(*kiln.linalg.lu_factor(x), y),
                lambda x, y: torch.linalg.lu_solve(*torch.linalg.lu_factor(x), y), [a, b], dtype)


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


# ----------------------------------------------------------------------------- lstsq
DRIVERS = [None, "gels", "gelsy", "gelsd", "gelss"]
LSTSQ_SHAPES = [((5, 3), (5, 2)), ((3, 5), (3, 2)), ((4, 4), (4, 1)), ((5, 3), (5,)), ((2, 5, 3), (2, 5)),
                ((2, 5, 3), (1, 5, 2)), ((3, 1, 4, 2), (1, 2, 4, 3)), ((0, 4, 3), (0, 4, 2)), ((5, 3), (5, 0))]


def lstsq_close(k, t, dtype, rank_deficient=False):
    assert type(k).__name__ == "linalg_lstsq" and k._fields == ("solution", "residuals", "rank", "singular_values")
    close(k.solution, t.solution, dtype) if not rank_deficient else np.testing.assert_allclose(
        k.solution.numpy(), t.solution.numpy(), rtol=1e-3, atol=1e-4)
    for name in ("residuals", "singular_values"):
        a, b = getattr(k, name), getattr(t, name)
        assert tuple(a.shape) == tuple(b.shape), name
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-4, atol=1e-4 if rank_deficient else 1e-5)
    identical(k.rank, t.rank)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("driver", DRIVERS)
@pytest.mark.parametrize("shapes", LSTSQ_SHAPES, ids=str)
def test_lstsq_matches_torch(shapes, driver, dtype):
    if shapes[1][-1] == 0 and driver in ("gelsd", "gelss"):
        pytest.skip("torch 1.13 crashes on an empty right-hand side with gelsd/gelss")
    (ka, kb), (ta, tb) = pair(rand(shapes[0], dtype, seed=8), rand(shapes[1], dtype, seed=9))
    lstsq_close(kiln.linalg.lstsq(ka, kb, driver=driver), torch.linalg.lstsq(ta, tb, driver=driver), dtype)


@pytest.mark.parametrize("driver", ["gelsy", "gelsd", "gelss"])
@pytest.mark.parametrize("rcond", [None, 1e-3, 0.5])
def test_lstsq_rank_deficient(driver, rcond):
    """Rank 2 (two equal columns): the minimum-norm solution. torch's gelsy leaves LAPACK's column
    pivots uninitialized (its rank of such a matrix changes with rcond at random), so gelsy is
    held to torch's gelsd."""
    a = np.ones((5, 3), "float64")
    a[:, 2] = np.arange(5)
    (ka, kb), (ta, tb) = pair(a, rand((5, 2), "float64", seed=3))
    k = kiln.linalg.lstsq(ka, kb, rcond, driver=driver)
    t = torch.linalg.lstsq(ta, tb, rcond, driver="gelsd" if driver == "gelsy" else driver)
    if driver == "gelsy":  # (cut to rank 1 by rcond=0.5, QR and SVD truncate differently: the rank only)
        if rcond != 0.5:
            np.testing.assert_allclose(k.solution.numpy(), t.solution.numpy(), rtol=1e-6, atol=1e-8)
        identical(k.rank, t.rank)
        assert k.singular_values.numel() == 0
    else:
        lstsq_close(k, t, "float64", rank_deficient=True)
    assert k.residuals.numel() == 0  # rank < n: no residuals, as torch


@pytest.mark.parametrize("shapes", [((5, 3), (5, 2)), ((3, 5), (3, 2)), ((2, 4, 4), (2, 4)), ((5, 3), (5,))], ids=str)
def test_lstsq_gradients(shapes):
    a, b = rand(shapes[0], "float64", seed=1), rand(shapes[1], "float64", seed=2)
    vector = len(shapes[1]) == len(shapes[0]) - 1

    def t(x, y):  # torch 1.13's backward fails on a vector B; torch 2's treats it as a column
        return torch.linalg.lstsq(x, y.unsqueeze(-1)).solution.squeeze(-1) if vector else torch.linalg.lstsq(x, y).solution

    grads_close(lambda x, y: kiln.linalg.lstsq(x, y).solution, t, [a, b], "float64")
    xs = [kiln.from_numpy(a).requires_grad_(), kiln.from_numpy(b).requires_grad_()]
    assert gradgradcheck(lambda x, y: kiln.linalg.lstsq(x, y).solution, xs)
    r = kiln.linalg.lstsq(*xs, driver="gelsd")
    assert r.solution.requires_grad and not r.residuals.requires_grad and not r.singular_values.requires_grad


@pytest.mark.parametrize("call", [
    lambda m: m.linalg.lstsq(m.ones(5, 3), m.ones(5, 2), driver="foo"),
    lambda m: m.linalg.lstsq(m.ones(5, 3), m.ones(4, 2)),
    lambda m: m.linalg.lstsq(m.ones(5, 3), m.ones(5, 2, dtype=m.float64)),
    lambda m: m.linalg.lstsq(m.ones(5), m.ones(5, 2)),
    lambda m: m.linalg.lstsq(m.ones(2, 5, 3), m.ones(5, 2)),
    lambda m: m.linalg.lstsq(m.ones(5, 3), m.ones(1, 1, 5, 2)),
    lambda m: m.linalg.lstsq(m.ones(5, 3, dtype=m.int64), m.ones(5, 2, dtype=m.int64)),
])
def test_lstsq_bad_input(call):
    same_error(lambda: call(kiln), lambda: call(torch))


# ----------------------------------------------------------------------------- *_ex
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape", [(3, 3), (2, 4, 4), (0, 2, 2)], ids=str)
def test_ex_variants_match_torch(shape, dtype):
    a, b = well_conditioned(shape, dtype), rand(shape[:-1], dtype)
    spd = a @ np.swapaxes(a, -1, -2)
    for fk, ft, args in [(kiln.linalg.inv_ex, torch.linalg.inv_ex, [a]),
                         (kiln.linalg.solve_ex, torch.linalg.solve_ex, [a, b]),
                         (kiln.linalg.cholesky_ex, torch.linalg.cholesky_ex, [spd])]:
        ks, ts = pair(*args)
        k, t = fk(*ks), ft(*ts)
        assert type(k).__name__ == type(t).__name__ and k._fields == t._fields if hasattr(k, "_fields") else True
        close(k[0], t[0], dtype)
        identical(k.info, t.info)
    ks, ts = pair(spd)
    close(kiln.linalg.cholesky_ex(ks[0], upper=True).L, torch.linalg.cholesky_ex(ts[0], upper=True).L, dtype)


SINGULAR_BATCH = np.stack([np.eye(2), np.zeros((2, 2)), [[1.0, 2.0], [2.0, 4.0]], [[0.0, 1.0], [0.0, 1.0]]])


@pytest.mark.parametrize("layout", ["contiguous", "transposed"])
def test_ex_variants_on_singular_matrices(layout):
    """info > 0 and torch's infinities/NaNs where a pivot is zero (contiguous inputs are factored
    as A^T by torch, others as A), no error."""
    (k,), (t,) = pair(SINGULAR_BATCH)
    if layout == "transposed":
        k, t = k.mT.contiguous().mT, t.mT.contiguous().mT
    for x, y in zip(kiln.linalg.inv_ex(k), torch.linalg.inv_ex(t)):
        identical(x, y)
    kb, tb = kiln.ones(4, 2, dtype=kiln.float64), torch.ones(4, 2, dtype=torch.float64)
    for x, y in zip(kiln.linalg.solve_ex(k, kb), torch.linalg.solve_ex(t, tb)):
        identical(x, y)
    not_pd = np.stack([np.eye(3), -np.eye(3), np.diag([1.0, -1.0, 1.0])])
    (k,), (t,) = pair(not_pd)
    for x, y in zip(kiln.linalg.cholesky_ex(k), torch.linalg.cholesky_ex(t)):
        identical(x, y)


@pytest.mark.parametrize("call", [
    lambda m: m.linalg.inv_ex(m.zeros(2, 2), check_errors=True),
    lambda m: m.linalg.inv_ex(m.stack([m.eye(2), m.zeros(2, 2)]), check_errors=True),
    lambda m: m.linalg.solve_ex(m.zeros(2, 2), m.ones(2), check_errors=True),
    lambda m: m.linalg.solve_ex(m.zeros(3, 2, 2), m.ones(2), check_errors=True),
    lambda m: m.linalg.cholesky_ex(-m.eye(2), check_errors=True),
    lambda m: m.linalg.cholesky_ex(m.stack([m.eye(2), -m.eye(2)]), check_errors=True),
    lambda m: m.linalg.inv_ex(m.ones(2, 3)),
    lambda m: m.linalg.inv_ex(m.ones(3)),
    lambda m: m.linalg.inv_ex(m.ones(2, 2, dtype=m.int64)),
    lambda m: m.linalg.solve_ex(m.eye(2), m.ones(3)),
    lambda m: m.linalg.solve_ex(m.eye(2), m.ones(2), left=False),
    lambda m: m.linalg.solve_ex(m.eye(2), m.ones(2, dtype=m.float64)),
    lambda m: m.linalg.cholesky_ex(m.ones(2, 3)),
    lambda m: m.linalg.cholesky_ex(m.ones(2, 2, dtype=m.int32)),
])
def test_ex_variants_errors(call):
    same_error(lambda: call(kiln), lambda: call(torch))


def test_ex_variants_gradients():
    a, b = well_conditioned((2, 3, 3), "float64"), rand((2, 3, 2), "float64")
    spd = a @ np.swapaxes(a, -1, -2)
    grads_close(lambda x: kiln.linalg.inv_ex(x).inverse, lambda x: torch.linalg.inv_ex(x).inverse, [a], "float64")
    grads_close(lambda x, y: kiln.linalg.solve_ex(x, y).result, lambda x, y: torch.linalg.solve_ex(x, y).result,
                [a, b], "float64")
    grads_close(lambda x: kiln.linalg.cholesky_ex(x).L, lambda x: torch.linalg.cholesky_ex(x).L, [spd], "float64")
    x = kiln.from_numpy(a).requires_grad_()
    assert not kiln.linalg.inv_ex(x).info.requires_grad
    assert gradgradcheck(lambda y: kiln.linalg.inv_ex(y).inverse, [x])


# ----------------------------------------------------------------------------- out=
def _spd(m):
    return m.tensor(well_conditioned((3, 3), "float32") @ well_conditioned((3, 3), "float32").T)


def _lu(m):
    return m.linalg.lu_factor(m.tensor(well_conditioned((3, 3), "float32")))


# (name, call(module, **out)): every function with out= in torch, results of one or several tensors.
OUT_CASES = [
    ("solve", lambda m, **o: m.linalg.solve(m.tensor(well_conditioned((3, 3), "float32")), m.ones(3, 2), **o)),
    ("inv", lambda m, **o: m.linalg.inv(m.tensor(well_conditioned((2, 3, 3), "float32")), **o)),
    ("det", lambda m, **o: m.linalg.det(m.tensor(well_conditioned((2, 3, 3), "float32")), **o)),
    ("slogdet", lambda m, **o: m.linalg.slogdet(m.tensor(well_conditioned((3, 3), "float32")), **o)),
    ("cholesky", lambda m, **o: m.linalg.cholesky(_spd(m), **o)),
    ("eigh", lambda m, **o: m.linalg.eigh(_spd(m), **o)),
    ("eigvalsh", lambda m, **o: m.linalg.eigvalsh(_spd(m), **o)),
    ("svd", lambda m, **o: m.linalg.svd(m.tensor(rand((4, 3), "float32")), full_matrices=False, **o)),
    ("svdvals", lambda m, **o: m.linalg.svdvals(m.tensor(rand((4, 3), "float32")), **o)),
    ("qr", lambda m, **o: m.linalg.qr(m.tensor(rand((4, 3), "float32")), **o)),
    ("lu_factor", lambda m, **o: m.linalg.lu_factor(m.tensor(rand((3, 4), "float32")), **o)),
    ("lu_factor_ex", lambda m, **o: m.linalg.lu_factor_ex(m.tensor(rand((3, 4), "float32")), **o)),
    ("lu", lambda m, **o: m.linalg.lu(m.tensor(rand((3, 4), "float32")), **o)),
    ("lu_solve", lambda m, **o: m.linalg.lu_solve(*_lu(m), m.ones(3, 2), **o)),
    ("inv_ex", lambda m, **o: m.linalg.inv_ex(m.tensor(well_conditioned((3, 3), "float32")), **o)),
    ("solve_ex", lambda m, **o: m.linalg.solve_ex(m.tensor(well_conditioned((3, 3), "float32")), m.ones(3), **o)),
    ("cholesky_ex", lambda m, **o: m.linalg.cholesky_ex(_spd(m), **o)),
    ("lu_unpack", lambda m, **o: m.lu_unpack(*_lu(m), **o)),
    ("lstsq", lambda m, **o: m.linalg.lstsq(m.tensor(rand((5, 3), "float32")), m.ones(5, 2), driver="gelsd", **o)),
]


def _empties(m, result):
    results = result if isinstance(result, tuple) else (result,)
    outs = tuple(m.empty(0, dtype=r.dtype) for r in results)
    return outs if isinstance(result, tuple) else outs[0]


@pytest.mark.parametrize("name,call", OUT_CASES, ids=[c[0] for c in OUT_CASES])
def test_out_resizes_and_returns_the_outs(name, call):
    kres, tres = call(kiln), call(torch)
    kout, tout = _empties(kiln, kres), _empties(torch, tres)
    kgot, tgot = call(kiln, out=kout), call(torch, out=tout)
    if isinstance(kres, tuple):
        assert type(kgot).__name__ == type(tgot).__name__
        assert all(g is o for g, o in zip(kgot, kout))
        for g, r, t in zip(kgot, kres, tgot):
            assert tuple(g.shape) == tuple(t.shape) and g.dtype == r.dtype
            np.testing.assert_array_equal(g.numpy(), r.numpy())
    else:
        assert kgot is kout and tuple(kout.shape) == tuple(tout.shape)
        np.testing.assert_array_equal(kout.numpy(), kres.numpy())


@pytest.mark.parametrize("name,call", OUT_CASES, ids=[c[0] for c in OUT_CASES])
def test_out_errors_match_torch(name, call):
    kres, tres = call(kiln), call(torch)
    several = isinstance(kres, tuple)

    def wrong_dtype(m, res):  # the first float output of the exact dtype rule given as float64
        outs = list(_empties(m, res)) if several else [_empties(m, res)]
        outs[1 if name == "lstsq" else 0] = m.empty(0, dtype=m.float64)
        return tuple(outs) if several else outs[0]

    same_error(lambda: call(kiln, out=wrong_dtype(kiln, kres)), lambda: call(torch, out=wrong_dtype(torch, tres)))
    if several:  # a tuple one short, and a plain tensor
        same_error(lambda: call(kiln, out=_empties(kiln, kres)[:-1]), lambda: call(torch, out=_empties(torch, tres)[:-1]))
        same_error(lambda: call(kiln, out=kiln.empty(0)), lambda: call(torch, out=torch.empty(0)), exact=False)


def test_lstsq_out_casts_solution_and_rank():
    """lstsq's solution and rank may be written to any dtype they cast to safely, as torch."""
    A, B = rand((5, 3), "float32"), rand((5, 2), "float32")

    def call(m, s_dtype, r_dtype):
        outs = (m.empty(0, dtype=s_dtype), m.empty(0), m.empty(0, dtype=r_dtype), m.empty(0))
        return m.linalg.lstsq(m.from_numpy(A), m.from_numpy(B), driver="gelsd", out=outs)

    k, t = call(kiln, kiln.float64, kiln.float32), call(torch, torch.float64, torch.float32)
    assert type(k).__name__ == type(t).__name__ == "linalg_lstsq_out"
    for x, y in zip(k, t):
        close(x, y, "float64" if x.dtype == kiln.float64 else "float32")
    same_error(lambda: call(kiln, kiln.int32, kiln.int64), lambda: call(torch, torch.int32, torch.int64))
    same_error(lambda: call(kiln, kiln.float32, kiln.bool), lambda: call(torch, torch.float32, torch.bool))


def test_out_refuses_autograd_and_warns_on_resizing():
    a = well_conditioned((3, 3), "float32")
    (k,), (t,) = pair(a, requires_grad=True)
    same_error(lambda: kiln.linalg.inv(k, out=kiln.empty(0)), lambda: torch.linalg.inv(t, out=torch.empty(0)))
    with pytest.warns(UserWarning, match="was resized since it had shape \\[2, 2\\]"):
        out = kiln.linalg.inv(k.detach(), out=kiln.empty(2, 2))
    assert tuple(out.shape) == (3, 3)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        kiln.linalg.inv(k.detach(), out=kiln.empty(3, 3))  # the right shape: no warning
    with torch.no_grad(), kiln.no_grad():
        close(kiln.linalg.inv(k, out=kiln.empty(0)), torch.linalg.inv(t, out=torch.empty(0)), "float32")


# ----------------------------------------------------------------------------- slogdet at singular matrices
@pytest.mark.parametrize("layout", ["contiguous", "transposed"])
@pytest.mark.parametrize("i", range(len(SINGULAR)))
def test_slogdet_gradient_at_a_singular_matrix(i, layout):
    """torch returns infinities and NaNs (lu_solve with the zero pivot), never an error."""
    for fk, ft in [(lambda x: kiln.linalg.slogdet(x)[1], lambda x: torch.linalg.slogdet(x)[1]),
                   (lambda x: kiln.slogdet(x)[1], lambda x: torch.slogdet(x)[1]), (kiln.logdet, torch.logdet)]:
        (k,), (t,) = pair(SINGULAR[i], requires_grad=True)
        kx, tx = (k.mT.contiguous().mT, t.mT.contiguous().mT) if layout == "transposed" else (k, t)
        fk(kx).backward()
        ft(tx).backward()
        identical(k.grad, t.grad)


def test_slogdet_gradient_batch_with_a_singular_matrix():
    (k,), (t,) = pair(SINGULAR_BATCH, requires_grad=True)
    kiln.linalg.slogdet(k)[1].sum().backward()
    torch.linalg.slogdet(t)[1].sum().backward()
    identical(k.grad, t.grad)


@pytest.mark.parametrize("dtype", FLOATS)
def test_slogdet_gradient_regular_matrices_unchanged(dtype):
    a = well_conditioned((2, 3, 3), dtype)
    grads_close(lambda x: tuple(kiln.linalg.slogdet(x)), lambda x: tuple(torch.linalg.slogdet(x)), [a], dtype)
    grads_close(kiln.logdet, torch.logdet, [np.abs(a) + 3 * np.eye(3, dtype=dtype)], dtype)
    x = kiln.from_numpy(well_conditioned((3, 3), "float64")).requires_grad_()
    assert gradgradcheck(lambda y: kiln.linalg.slogdet(y)[1], [x])
