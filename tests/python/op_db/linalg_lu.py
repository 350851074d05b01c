"""Records of the LU family (linalg_lu_factor(_ex), linalg_lu, linalg_lu_solve, lu_unpack, lu_solve,
_lu_pivots_to_permutation), the *_ex variants (inv_ex, solve_ex, cholesky_ex) and _linalg_lstsq.

The LU reference is LAPACK's getf2 written in NumPy (partial pivoting on the first largest entry
of the column, 1-based pivots, info the first zero pivot); lu_solve's samples are such factors
of random matrices, and its reference solves with P L U rebuilt from them. tests/python/
test_linalg_more.py compares all of them with torch.
"""
import numpy as np

from .linalg_lapack import (NO_HALF, NO_ZERO_DIM, _solve_ref, _solve_samples, _spd_samples, matrices, only_floats,
                            symmetrize)
from .record import FLOATS, DType, ErrorInput, OpRecord, Sample, values

FAMILY = "linalg_lu"


def np_lu(a):
    """(LU, pivots, info) of each (m, n) matrix of a, as LAPACK's getrf."""
    x = np.array(a, dtype=np.float64, copy=True)
    m, n = x.shape[-2:]
    k = min(m, n)
    flat = x.reshape(-1, m, n)
    piv = np.zeros((flat.shape[0], k), np.int32)
    info = np.zeros(flat.shape[0], np.int32)
    for b, y in enumerate(flat):
        for j in range(k):
            p = j + int(np.argmax(np.abs(y[j:, j])))
            piv[b, j] = p + 1
            if y[p, j] != 0:
                y[[j, p]] = y[[p, j]]
                y[j + 1:, j] /= y[j, j]
            elif info[b] == 0:
                info[b] = j + 1
            y[j + 1:, j + 1:] -= np.outer(y[j + 1:, j], y[j, j + 1:])
    return flat.reshape(x.shape), piv.reshape(x.shape[:-2] + (k,)), info.reshape(x.shape[:-2])


def np_permutation(piv, m, dtype=np.float64):
    piv = np.asarray(piv)
    k = piv.shape[-1]
    flat = piv.reshape(-1, k)
    P = np.zeros((flat.shape[0], m, m), dtype)
    for b, p in enumerate(flat):
        perm = list(range(m))
        for i in range(k):
            perm[i], perm[p[i] - 1] = perm[p[i] - 1], perm[i]
        for j in range(m):
            P[b, perm[j], j] = 1
    return P.reshape(piv.shape[:-1] + (m, m))


def np_unpack(LU, piv, unpack_data=True, unpack_pivots=True):
    m, n = LU.shape[-2:]
    k = min(m, n)
    P = np_permutation(piv, m) if unpack_pivots else np.zeros(0)
    if not unpack_data:
        return P, np.zeros(0), np.zeros(0)
    return P, np.tril(LU[..., :, :k], -1) + np.eye(m, k), np.triu(LU[..., :k, :])


SHAPES = [((3, 3), "3 x 3"), ((3, 5), "wide"), ((5, 3), "tall"), ((2, 4, 4), "batch 2"), ((1, 1), "1 x 1"),
          ((0, 3, 3), "zero batch")]


def _lu_samples(d):
    return [Sample((values(s, d, seed=3),), note=note) for s, note in SHAPES]


def _lu_ref(a):
    LU, piv, info = np_lu(a)
    return LU, piv, info


def _factors(shape, d, seed=0):
    """LU and pivots of a random matrix (the arrays lu_factor returns)."""
    LU, piv, _ = np_lu(values(shape, d, seed=seed))
    return LU.astype(d), piv


def _lu_solve_samples(d):
    out = []
    for a, b, kw, note in [((3, 3), (3, 2), {}, "3 x 3"), ((2, 4, 4), (2, 4, 1), {}, "batch"),
                           ((3, 3), (2, 3, 2), {}, "LU broadcast over B"), ((2, 3, 3), (3, 2), {}, "B broadcast"),
                           ((3, 3), (3, 2), {"adjoint": True}, "adjoint"), ((3, 3), (2, 3), {"left": False}, "right"),
                           ((3, 3), (2, 3), {"left": False, "adjoint": True}, "right adjoint"),
                           ((0, 3, 3), (0, 3, 2), {}, "zero batch")]:
        LU, piv = _factors(a, d)
        out.append(Sample((LU, piv, values(b, d, seed=1)), kw, note=note))
    return out


def _lu_solve_ref(LU, piv, B, left=True, adjoint=False):
    P, L, U = np_unpack(LU, piv)
    A = P @ L @ U
    if adjoint:
        A = np.swapaxes(A, -1, -2)
    if left:
        batch = np.broadcast_shapes(A.shape[:-2], B.shape[:-2])
        return np.linalg.solve(np.broadcast_to(A, batch + A.shape[-2:]), np.broadcast_to(B, batch + B.shape[-2:]))
    return np.swapaxes(_lu_solve_ref(LU, piv, np.swapaxes(B, -1, -2), True, not adjoint), -1, -2)


def _unpack_samples(d):
    out = []
    for s, note in SHAPES:
        LU, piv = _factors(s, d, seed=3)
        out.append(Sample((LU, piv), note=note))
    LU, piv = _factors((3, 3), d, seed=3)
    out.append(Sample((LU, piv, False, True), note="unpack_data=False"))
    out.append(Sample((LU, piv, True, False), note="unpack_pivots=False"))
    return out


def _permutation_samples(d):
    if d != "int32":
        return []
    return [Sample((np.array([3, 3, 3], np.int32), 3, DType("float64")), note="3 swaps"),
            Sample((np.array([[2, 2], [1, 2]], np.int32), 4, DType("float32")), note="batch, 4 rows"),
            Sample((np.zeros((0, 2), np.int32), 2, DType("float64")), note="zero batch")]


def _permutation_ref(piv, m, dtype):
    return np_permutation(piv, m)


def _legacy_lu_solve_samples(d):
    out = []
    for a, b, note in [((3, 3), (3, 2), "3 x 3"), ((2, 4, 4), (2, 4, 1), "batch"), ((0, 2, 2), (0, 2, 1), "zero batch")]:
        LU, piv = _factors(a, d)
        out.append(Sample((values(b, d, seed=1), LU, piv), note=note))
    return out


def _ex_ref(f):
    def ref(a, *rest, **kw):
        return f(a, *rest, **kw), np.zeros(a.shape[:-2], np.int32)
    return ref


def _cholesky_ex_ref(a, upper=False):
    L = np.linalg.cholesky(a)
    return (np.swapaxes(L, -1, -2) if upper else L), np.zeros(a.shape[:-2], np.int32)


def _lstsq_samples(d):
    out = []
    for a, b, kw, note in [((5, 3), (5, 2), {}, "tall, gelsy"), ((5, 3), (5, 2), {"driver": "gelsd"}, "gelsd"),
                           ((5, 3), (5, 2), {"driver": "gelss"}, "gelss"), ((5, 3), (5, 2), {"driver": "gels"}, "gels"),
                           ((3, 5), (3, 2), {"driver": "gelsd"}, "wide"), ((2, 4, 3), (2, 4), {}, "batch of vectors"), ((2, 4, 3), (1, 4, 2), {}, "B broadcast"),
                           ((0, 4, 3), (0, 4, 2), {"driver": "gelsd"}, "zero batch")]:
        out.append(Sample((values(a, d, seed=2), values(b, d, seed=5)), kw, note=note))
    return out


def _lstsq_check(kiln, result, sample):
    """The solution minimizes |A X - B| (it is lstsq's from NumPy, which has full-rank samples),
    and the empty or filled outputs follow torch's rules per driver."""
    A, B = (np.asarray(x, np.float64) for x in sample.args[:2])
    driver = sample.kwargs.get("driver", "gelsy")
    solution, residuals, rank, sv = result
    vector = B.ndim == A.ndim - 1
    Bm = B[..., None] if vector else B
    batch = np.broadcast_shapes(A.shape[:-2], Bm.shape[:-2])
    Ab, Bb = np.broadcast_to(A, batch + A.shape[-2:]), np.broadcast_to(Bm, batch + Bm.shape[-2:])
    m, n = A.shape[-2:]
    want = np.zeros(batch + (n, Bm.shape[-1]))
    for i in np.ndindex(*batch):
        want[i] = np.linalg.lstsq(Ab[i], Bb[i], rcond=None)[0]
    tol = 1e-3 if solution.dtype == kiln.float32 else 1e-9
    np.testing.assert_allclose(solution.numpy(), want[..., 0] if vector else want, rtol=tol, atol=tol)
    assert rank.dtype == kiln.int64
    assert tuple(rank.shape) == ((0,) if driver == "gels" else batch)
    assert tuple(sv.shape) == (batch + (min(m, n),) if driver in ("gelsd", "gelss") else (0,))
    if m > n and driver != "gelsy":
        res = ((Ab @ want - Bb) ** 2).sum(-2)
        np.testing.assert_allclose(residuals.numpy(), res, rtol=tol, atol=tol)
    else:
        assert tuple(residuals.shape) == (0,)


def _record(name, samples, ref, **kw):
    return OpRecord(name, FAMILY, FLOATS, only_floats(samples), ref=ref, no_zero_dim=NO_ZERO_DIM,
                    no_reduced_precision=NO_HALF, **kw)


def _errors():
    e = ErrorInput
    return [
        e(lambda k: k.linalg_lu_factor(k.zeros([2, 2])), RuntimeError, r"U\[1,1\] is zero", "lu_factor: singular"),
        e(lambda k: k.linalg_lu_factor_ex(k.ones([3])), RuntimeError, "2 or more dimensions", "lu_factor: 1-D"),
        e(lambda k: k.linalg_lu_factor_ex(k.ones([2, 2], dtype=k.int64)), RuntimeError, "not implemented for 'Long'",
          "lu_factor: int64"),
        e(lambda k: k.linalg_lu_factor_ex(k.eye(2), pivot=False), RuntimeError, "without pivoting", "pivot=False"),
    ]


def _solve_errors():
    e = ErrorInput
    pivots = lambda k: k.ones([3], dtype=k.int32)  # noqa: E731
    return [
        e(lambda k: k.linalg_lu_solve(k.eye(3), pivots(k), k.ones([3])), RuntimeError, "at least 2 dimensions",
          "1-D B"),
        e(lambda k: k.linalg_lu_solve(k.eye(3), k.ones([3], dtype=k.int64), k.ones([3, 1])), RuntimeError,
          "torch.int32", "int64 pivots"),
        e(lambda k: k.linalg_lu_solve(k.eye(3), pivots(k), k.ones([4, 1])), RuntimeError, "Incompatible shapes",
          "shapes"),
        e(lambda k: k.linalg_lu_solve(k.ones([3, 4]), pivots(k), k.ones([3, 1])), RuntimeError, "square matrices",
          "3 x 4 LU"),
    ]


def _pair(s, d):
    return (d, "int32")


RECORDS = [
    _record("linalg_lu_factor_ex", _lu_samples, _lu_ref, result_dtype=lambda s, d: (d, "int32", "int32"),
            error_inputs=_errors),
    _record("linalg_lu_factor", _lu_samples, lambda a: _lu_ref(a)[:2], result_dtype=_pair),
    _record("linalg_lu", _lu_samples, lambda a: np_unpack(*_lu_ref(a)[:2])),
    _record("linalg_lu_solve", _lu_solve_samples, _lu_solve_ref, error_inputs=_solve_errors),
    _record("lu_solve", _legacy_lu_solve_samples, lambda b, LU, piv: _lu_solve_ref(LU, piv, b)),
    OpRecord("lu_unpack", FAMILY, FLOATS, only_floats(_unpack_samples), ref=np_unpack, no_zero_dim=NO_ZERO_DIM),
    OpRecord("_lu_pivots_to_permutation", FAMILY, ("int32",), _permutation_samples, ref=_permutation_ref,
             no_zero_dim="pivots are (batches of) vectors", api="_C._lu_pivots_to_permutation",
             result_dtype=lambda s, d: str(s.args[2])),
    _record("linalg_inv_ex", lambda d: [Sample((matrices(s, d),), note=n) for s, n in
                                        [((3, 3), "3 x 3"), ((2, 4, 4), "batch"), ((0, 3, 3), "zero batch")]],
            _ex_ref(np.linalg.inv), result_dtype=_pair),
    _record("linalg_solve_ex", _solve_samples, lambda a, b, left=True: (_solve_ref(a, b, left),
                                                                       np.zeros(a.shape[:-2], np.int32)),
            result_dtype=_pair),
    _record("linalg_cholesky_ex", _spd_samples, _cholesky_ex_ref, result_dtype=_pair, gradcheck_wrapper=symmetrize),
    OpRecord("_linalg_lstsq", FAMILY, FLOATS, only_floats(_lstsq_samples), check=_lstsq_check, no_zero_dim=NO_ZERO_DIM,
             api="_C._linalg_lstsq",
             derivative_not_implemented="kiln.linalg.lstsq adds the gradient (pinv(A) B's, as torch's) in Python"),
]

assert all(isinstance(r, OpRecord) and r.family == FAMILY for r in RECORDS)
