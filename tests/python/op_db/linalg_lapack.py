"""Records of the LAPACK-backed linalg ops (solve, inv, det, slogdet and their legacy names).

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


def _record(name, samples, ref, **kw):
    return OpRecord(name, FAMILY, FLOATS, only_floats(samples), ref=ref, no_zero_dim=NO_ZERO_DIM, **kw)


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

assert all(isinstance(r, OpRecord) and r.family == FAMILY for r in RECORDS)
