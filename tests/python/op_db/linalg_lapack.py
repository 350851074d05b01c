"""Records of the LAPACK-backed linalg ops (solve, inv, det, slogdet, cholesky, eigh, svd, qr and
their legacy names).

They take float32/float64 matrices only (torch refuses integer and half inputs, with messages
naming linalg.<op>; tests/python/test_linalg.py checks those against torch), so the samples of
other dtypes are empty. Matrices are drawn with a dominant diagonal so they are invertible and
well conditioned, and float32 results stay within the default tolerance of float64 references.
"""
import numpy as np

from .record import FLOATS, ErrorInput, OpRecord, Sample, values

FAMILY = "linalg_lapack"
NO_ZERO_DIM = "linalg ops take (batches of) matrices: at least 2 dims"


def matrices(shape, d, seed=0):
    """Well-conditioned square matrices: uniform entries plus 8 on the diagonal."""
    return (values(shape, d, seed=seed) + 8 * np.eye(shape[-1], dtype=d)).astype(d)


def only_floats(samples):
    return lambda d: samples(d) if d in FLOATS else []


def _solve_samples(d):
    cases = [((3, 3), (3,), "vector"), ((3, 3), (3, 2), "matrix"), ((2, 4, 4), (2, 4), "batch of vectors"),
             ((2, 3, 3), (2, 3, 2), "batch of matrices"), ((2, 1, 3, 3), (4, 3, 1), "broadcast batches"),
             ((3, 3), (2, 3, 2), "A broadcast over B"), ((0, 3, 3), (0, 3, 2), "zero batch")]
    out = [Sample((matrices(a, d), values(b, d, seed=1)), note=note) for a, b, note in cases]
    out.append(Sample((matrices((3, 3), d), values((2, 3), d, seed=1)), {"left": False}, note="left=False"))
    return out


def _solve_ref(a, b, left=True):
    vector = b.ndim == 1 or (b.ndim == a.ndim - 1 and b.shape == a.shape[:-1])
    bm = b[..., None] if vector else b
    if not left:
        x = np.swapaxes(np.linalg.solve(np.swapaxes(a, -1, -2), np.swapaxes(bm, -1, -2)), -1, -2)
    else:
        batch = np.broadcast_shapes(a.shape[:-2], bm.shape[:-2])
        x = np.linalg.solve(np.broadcast_to(a, batch + a.shape[-2:]), np.broadcast_to(bm, batch + bm.shape[-2:]))
    return x[..., 0] if vector else x


def _square_samples(d):
    shapes = [((3, 3), "3 x 3"), ((1, 1), "1 x 1"), ((2, 4, 4), "batch 2"), ((2, 1, 2, 2), "batch (2, 1)"),
              ((0, 3, 3), "zero batch")]
    return [Sample((matrices(s, d),), note=note) for s, note in shapes]


def _negative_det_samples(d):
    """Besides _square_samples: a matrix of negative determinant (slogdet's sign -1, logdet nan)."""
    m = matrices((3, 3), d)
    return _square_samples(d) + [Sample((m[[1, 0, 2]],), note="rows swapped: det < 0")]


def _slogdet_ref(a):
    sign, logabsdet = np.linalg.slogdet(a)
    return np.asarray(sign), np.asarray(logabsdet)


def _logdet_ref(a):
    sign, logabsdet = np.linalg.slogdet(a)
    return np.where(sign < 0, np.nan, logabsdet)


def _errors(name, call):
    e = ErrorInput
    return lambda: [
        e(lambda k: call(k)(k.ones([2, 3], dtype=k.float64)), RuntimeError, "square matrices", f"{name}: 2 x 3"),
        e(lambda k: call(k)(k.ones([3], dtype=k.float64)), RuntimeError, "at least 2 dimensions", f"{name}: 1-D"),
        e(lambda k: call(k)(k.ones([2, 2], dtype=k.int64)), RuntimeError, "Expected a floating point",
          f"{name}: int64"),
    ]


def _solve_errors():
    e = ErrorInput
    return [
        e(lambda k: k.linalg_solve(k.zeros([2, 2]), k.ones([2])), RuntimeError, "input matrix is singular",
          "singular"),
        e(lambda k: k.linalg_solve(k.eye(2), k.ones([3])), RuntimeError, "Incompatible shapes", "shape mismatch"),
        e(lambda k: k.linalg_solve(k.eye(2), k.ones([2], dtype=k.float64)), RuntimeError, "same dtype",
          "float32 A and float64 B"),
    ]


NO_HALF = "torch's CPU LAPACK kernels have no float16/bfloat16 versions; kiln raises as torch does"


def _record(name, samples, ref, **kw):
    return OpRecord(name, FAMILY, FLOATS, only_floats(samples), ref=ref, no_zero_dim=NO_ZERO_DIM,
                    no_reduced_precision=NO_HALF, **kw)


def _pair(s, d):
    return (d, d)


RECORDS = [
    _record("linalg_solve", _solve_samples, _solve_ref, error_inputs=_solve_errors),
    _record("linalg_inv", _square_samples, np.linalg.inv,
            error_inputs=_errors("linalg_inv", lambda k: k.linalg_inv)),
    _record("inverse", _square_samples, np.linalg.inv),
    _record("linalg_det", _negative_det_samples, lambda a: np.asarray(np.linalg.det(a)),
            error_inputs=_errors("linalg_det", lambda k: k.linalg_det)),
    _record("det", _square_samples, lambda a: np.asarray(np.linalg.det(a))),
    _record("linalg_slogdet", _negative_det_samples, _slogdet_ref, result_dtype=_pair,
            error_inputs=_errors("linalg_slogdet", lambda k: k.linalg_slogdet)),
    _record("slogdet", _negative_det_samples, _slogdet_ref, result_dtype=_pair),
    _record("logdet", _negative_det_samples, _logdet_ref,
            grad_samples=lambda: [s for s in _square_samples("float64") if s.args[0].size <= 24]),
]



# ----------------------------------------------------------------------------- factorizations
def spd(shape, d, seed=0):
    """Symmetric positive-definite matrices (A A^T + n I)."""
    a = values(shape, d, seed=seed).astype(np.float64)
    n = shape[-1]
    return (a @ np.swapaxes(a, -1, -2) + n * np.eye(n)).astype(d)


def symmetrize(i, x):
    return (x + x.transpose(-2, -1)) / 2


def lower_factor(i, x):
    """cholesky_solve reads the factor's lower triangle (upper=False) and differentiates it as a
    full matrix, as torch: gradcheck it on triangular factors."""
    return x.tril() if i == 1 else x


def _spd_samples(d):
    shapes = [((3, 3), "3 x 3"), ((1, 1), "1 x 1"), ((2, 4, 4), "batch 2"), ((0, 2, 2), "zero batch")]
    return [Sample((spd(s, d),), note=note) for s, note in shapes]


def _cholesky_samples(d):
    return _spd_samples(d) + [Sample((spd((2, 3, 3), d),), {"upper": True}, note="upper")]


def _cholesky_ref(a, upper=False):
    L = np.linalg.cholesky(a.astype(np.float64))
    return np.swapaxes(L, -1, -2) if upper else L


def _cholesky_solve_samples(d):
    out = []
    for upper in (False, True):
        L = _cholesky_ref(spd((3, 3), d), upper).astype(d)
        out.append(Sample((values((3, 2), d, seed=1), L, upper), note=f"upper={upper}"))
    L = _cholesky_ref(spd((2, 3, 3), d)).astype(d)
    out.append(Sample((values((3, 1), d, seed=1), L), note="B broadcast over the factor's batch"))
    out.append(Sample((values((0, 3, 2), d, seed=1), np.zeros((0, 3, 3), d) + np.eye(3, dtype=d)), note="zero batch"))
    return out


def _cholesky_solve_ref(b, factor, upper=False):
    f = factor.astype(np.float64)
    a = np.swapaxes(f, -1, -2) @ f if upper else f @ np.swapaxes(f, -1, -2)
    batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    return np.linalg.solve(np.broadcast_to(a, batch + a.shape[-2:]), np.broadcast_to(b, batch + b.shape[-2:]))


def _eigh_samples(d):
    out = [Sample((spd(s, d) - 2 * np.eye(s[-1], dtype=d),), note=note)
           for s, note in [((3, 3), "3 x 3"), ((2, 4, 4), "batch 2"), ((1, 1), "1 x 1"), ((0, 2, 2), "zero batch")]]
    a = values((3, 3), d, seed=2)
    out.append(Sample((a,), {"UPLO": "U"}, note="upper triangle of a non-symmetric matrix"))
    return out


def _sym_from(a, UPLO="L"):
    t = np.tril(a) if UPLO == "L" else np.triu(a)
    return t + np.swapaxes(t, -1, -2) - t * np.eye(a.shape[-1])


def _eigh_check(k, result, sample):
    a = sample.args[0].astype(np.float64)
    sym = _sym_from(a, sample.kwargs.get("UPLO", "L"))
    L, V = (r.numpy().astype(np.float64) for r in result)
    tol = 1e-4 if sample.args[0].dtype == np.float32 else 1e-10
    np.testing.assert_allclose(L, np.linalg.eigvalsh(sym), rtol=tol, atol=tol * 10)
    np.testing.assert_allclose(V @ (L[..., None] * np.swapaxes(V, -1, -2)), sym, rtol=tol, atol=tol * 100)
    np.testing.assert_allclose(np.swapaxes(V, -1, -2) @ V, np.broadcast_to(np.eye(a.shape[-1]), V.shape),
                               atol=tol * 10)
    assert all(r.dtype == k.from_numpy(sample.args[0]).dtype for r in result)


def _eigvalsh_ref(a, UPLO="L"):
    return np.linalg.eigvalsh(_sym_from(a.astype(np.float64), UPLO))


def _general_samples(d):
    shapes = [((3, 3), "3 x 3"), ((4, 3), "tall"), ((3, 4), "wide"), ((2, 3, 2), "batch 2, tall"),
              ((0, 3, 3), "zero batch")]
    return [Sample((values(s, d, seed=3),), note=note) for s, note in shapes]


def _svd_samples(d):
    return _general_samples(d) + [Sample((values((4, 3), d, seed=3),), {"full_matrices": False}, note="reduced"),
                                  Sample((values((2, 2, 3), d, seed=3), False), note="reduced, batch")]


def _svd_grad_samples():
    return [Sample((values(s, "float64", seed=3), False), note=f"{s} reduced")
            for s in [(3, 3), (4, 3), (2, 3, 2), (2, 4)]]


def _svd_check(k, result, sample, legacy=False):
    a = sample.args[0].astype(np.float64)
    U, S, V = (r.numpy().astype(np.float64) for r in result)
    Vh = np.swapaxes(V, -1, -2) if legacy else V
    tol = 1e-4 if sample.args[0].dtype == np.float32 else 1e-10
    kdim = min(a.shape[-2:])
    np.testing.assert_allclose(S, np.linalg.svd(a, compute_uv=False), rtol=tol, atol=tol * 10)
    if legacy and not sample.kwargs.get("compute_uv", True):
        assert not U.any() and not V.any()
        return
    rebuilt = (U[..., :, :kdim] * S[..., None, :]) @ Vh[..., :kdim, :]
    np.testing.assert_allclose(rebuilt, a, rtol=tol, atol=tol * 100)
    for Q in (U, np.swapaxes(Vh, -1, -2)):  # orthonormal columns
        np.testing.assert_allclose(np.swapaxes(Q, -1, -2) @ Q, np.broadcast_to(np.eye(Q.shape[-1]),
                                   Q.shape[:-2] + (Q.shape[-1],) * 2), atol=tol * 10)


def _legacy_svd_samples(d):
    a = values((4, 3), d, seed=3)
    return [Sample((a,), note="some=True"), Sample((a,), {"some": False}, note="some=False"),
            Sample((values((2, 3, 4), d, seed=3),), {"compute_uv": False}, note="compute_uv=False"),
            Sample((values((0, 3, 3), d, seed=3),), note="zero batch")]


def _qr_samples(d):
    out = _general_samples(d)
    a = values((4, 3), d, seed=3)
    out += [Sample((a, "complete"), note="complete, tall"), Sample((a, "r"), note="r"),
            Sample((values((3, 4), d, seed=3), "complete"), note="complete, wide")]
    return out


def _qr_ref(a, mode="reduced"):
    if mode == "r":
        return np.zeros((0,), a.dtype), np.linalg.qr(a.astype(np.float64), mode="r")
    return np.linalg.qr(a.astype(np.float64), mode=mode)


def _qr_grad_samples():
    return [Sample((values(s, "float64", seed=3),), note=str(s)) for s in [(3, 3), (4, 3), (3, 4), (2, 3, 2)]] + \
           [Sample((values((3, 4), "float64", seed=3), "complete"), note="complete, wide")]


def _legacy_qr_samples(d):
    a = values((4, 3), d, seed=3)
    return [Sample((a,), note="some=True"), Sample((a, False), note="some=False"),
            Sample((values((0, 3, 3), d, seed=3),), note="zero batch")]


def _legacy_qr_ref(a, some=True):
    return _qr_ref(a, "reduced" if some else "complete")


def _factorization_errors():
    e = ErrorInput
    return [
        e(lambda k: k.linalg_cholesky(-k.eye(2)), RuntimeError, "not positive-definite", "cholesky: -I"),
        e(lambda k: k.linalg_cholesky(k.ones([2, 3])), RuntimeError, "square matrices", "cholesky: 2 x 3"),
        e(lambda k: k.linalg_eigh(k.eye(2), "X"), RuntimeError, "UPLO argument to be 'L' or 'U'", "eigh: UPLO"),
        e(lambda k: k.linalg_svd(k.ones([3])), RuntimeError, "at least 2 dimensions", "svd: 1-D"),
        e(lambda k: k.linalg_qr(k.ones([2, 2]), "x"), RuntimeError, "unrecognized mode", "qr: mode"),
        e(lambda k: k.linalg_qr(k.ones([2, 2], dtype=k.int64)), RuntimeError, "Expected a floating point",
          "qr: int64"),
    ]


def _triple(s, d):
    return (d, d, d)


RECORDS += [
    _record("linalg_cholesky", _cholesky_samples, _cholesky_ref, gradcheck_wrapper=symmetrize,
            error_inputs=_factorization_errors),
    _record("cholesky", _cholesky_samples, _cholesky_ref, gradcheck_wrapper=symmetrize),
    _record("cholesky_solve", _cholesky_solve_samples, _cholesky_solve_ref, gradcheck_wrapper=lower_factor,
            grad_samples=lambda: [s for s in _cholesky_solve_samples("float64") if len(s.args) < 3 or not s.args[2]]),
    _record("linalg_eigh", _eigh_samples, None, check=_eigh_check, gradcheck_wrapper=symmetrize,
            grad_samples=lambda: [s for s in _eigh_samples("float64") if 0 < s.args[0].size <= 16]),
    _record("linalg_eigvalsh", _eigh_samples, _eigvalsh_ref, gradcheck_wrapper=symmetrize),
    _record("linalg_svd", _svd_samples, None, check=_svd_check, grad_samples=_svd_grad_samples),
    _record("linalg_svdvals", _general_samples, lambda a: np.linalg.svd(a.astype(np.float64), compute_uv=False)),
    _record("svd", _legacy_svd_samples, None, check=lambda k, r, s: _svd_check(k, r, s, legacy=True),
            grad_samples=lambda: [s for s in _legacy_svd_samples("float64") if s.note != "some=False"]),
    _record("linalg_qr", _qr_samples, _qr_ref, result_dtype=_pair, grad_samples=_qr_grad_samples),
    _record("qr", _legacy_qr_samples, _legacy_qr_ref, result_dtype=_pair, grad_samples=lambda: _legacy_qr_samples("float64")[:1]),
]

assert all(isinstance(r, OpRecord) and r.family == FAMILY for r in RECORDS)
