"""Records of the matrix products: matmul (every rank combination and broadcast batches), mm, bmm.

Both operands have one dtype (mm and bmm refuse mixed dtypes, as torch). bool is accepted by
kiln (torch refuses it): a bool product is NumPy's, any(a and b). float32 products are summed
by BLAS in float32 and compared with float64 sums: over the samples' inner dims (at most 5) the
error stays below 1.5e-6, within the default tolerance, so no `tol` is set.
"""
import numpy as np

from .record import ALL, NUMERIC, ErrorInput, OpRecord, Sample, values

FAMILY = "linalg"
NO_ZERO_DIM = "matrix products need operands of at least 1 (mm, bmm: 2, 3) dims"


def _pair(d, a, b, note, expand_a=None):
    x = values(a, d) if expand_a is None else np.broadcast_to(values(expand_a, d), a)
    return Sample((x, values(b, d, seed=1)), note=note)


def _matmul_samples(d):
    cases = [
        ((5,), (5,), "1-D . 1-D"),
        ((0,), (0,), "1-D . 1-D, zero-size"),
        ((3, 4), (4,), "2-D . 1-D"),
        ((4,), (4, 3), "1-D . 2-D"),
        ((3, 4), (4, 2), "2-D . 2-D"),
        ((0, 4), (4, 2), "2-D . 2-D, no rows"),
        ((3, 0), (0, 2), "2-D . 2-D, inner dim 0"),
        ((3, 4), (4, 0), "2-D . 2-D, no columns"),
        ((2, 3, 4), (2, 4, 2), "batched"),
        ((2, 3, 4), (4, 2), "3-D . 2-D (batch folded into rows)"),
        ((2, 3, 4), (4,), "3-D . 1-D"),
        ((4,), (2, 4, 3), "1-D . 3-D"),
        ((3, 4), (2, 4, 2), "2-D . 3-D"),
        ((2, 1, 2, 3), (3, 3, 2), "broadcast batches (2, 1) with (3,)"),
        ((1, 3, 4), (2, 4, 2), "broadcast batch 1 with 2"),
        ((0, 2, 3), (3, 2), "zero batch"),
        ((0, 1, 2, 3), (4, 3, 2), "zero batch broadcast with 4"),
        ((2, 3, 0), (2, 0, 2), "batched, inner dim 0"),
    ]
    out = [_pair(d, a, b, note) for a, b, note in cases]
    out.append(_pair(d, (3, 4), (4, 2), "expanded self (stride 0 rows)", expand_a=(1, 4)))
    out.append(_pair(d, (2, 3, 4), (2, 4, 2), "expanded batch (stride 0)", expand_a=(1, 3, 4)))
    return out


def _mm_samples(d):
    cases = [((3, 4), (4, 2), "(3, 4) @ (4, 2)"), ((1, 1), (1, 1), "1 x 1"), ((5, 1), (1, 3), "outer product"),
             ((1, 5), (5, 1), "inner product"), ((0, 4), (4, 2), "no rows"), ((3, 0), (0, 2), "inner dim 0"),
             ((3, 4), (4, 0), "no columns"), ((0, 0), (0, 0), "0 x 0")]
    out = [_pair(d, a, b, note) for a, b, note in cases]
    out.append(_pair(d, (3, 4), (4, 2), "expanded self (stride 0 rows)", expand_a=(1, 4)))
    out.append(_pair(d, (3, 4), (4, 2), "expanded self (stride 0 columns)", expand_a=(3, 1)))
    return out


def _bmm_samples(d):
    cases = [((2, 3, 4), (2, 4, 2), "batch 2"), ((1, 2, 3), (1, 3, 2), "batch 1"),
             ((3, 1, 4), (3, 4, 1), "1 x 1 results"), ((0, 3, 4), (0, 4, 2), "zero batch"),
             ((2, 0, 4), (2, 4, 3), "no rows"), ((2, 3, 0), (2, 0, 2), "inner dim 0"),
             ((2, 3, 4), (2, 4, 0), "no columns")]
    out = [_pair(d, a, b, note) for a, b, note in cases]
    out.append(_pair(d, (2, 3, 4), (2, 4, 2), "expanded batch (stride 0)", expand_a=(1, 3, 4)))
    return out


def _matmul_ref(a, b):
    return np.matmul(a, b)


def _errors():
    e = ErrorInput
    return [
        e(lambda k: k.matmul(k.ones([]), k.ones([3])), RuntimeError, "at least 1D", "matmul of a 0-dim tensor"),
        e(lambda k: k.matmul(k.ones([3]), k.ones([4])), RuntimeError, "inconsistent tensor size",
          "matmul 1-D (3) . (4)"),
        e(lambda k: k.matmul(k.ones([2, 3]), k.ones([4, 2])), RuntimeError, "cannot be multiplied",
          "matmul (2, 3) @ (4, 2)"),
        e(lambda k: k.matmul(k.ones([2, 2, 3]), k.ones([4])), RuntimeError, "cannot be multiplied",
          "matmul (2, 2, 3) @ (4,)"),
        e(lambda k: k.matmul(k.ones([2, 2, 3]), k.ones([3, 3, 2])), RuntimeError, "must match",
          "matmul batches 2 and 3 do not broadcast"),
        e(lambda k: k.matmul(k.ones([2, 3]), k.ones([3, 2], dtype=k.float64)), RuntimeError, "dtype",
          "matmul 2-D of float32 and float64"),
        # torch: "dot : expected both vectors to have same dtype"; kiln promotes (see the report).
        e(lambda k: k.matmul(k.ones([3]), k.ones([3], dtype=k.float64)), RuntimeError, "dtype",
          "matmul 1-D of float32 and float64"),
        e(lambda k: k.mm(k.ones([2, 3]), k.ones([4, 2])), RuntimeError, r"shapes cannot be multiplied \(2x3 and 4x2\)",
          "mm shape mismatch"),
        e(lambda k: k.mm(k.ones([3]), k.ones([3, 2])), RuntimeError, "must be a matrix", "mm of a 1-D tensor"),
        e(lambda k: k.mm(k.ones([2, 3]), k.ones([1, 3, 2])), RuntimeError, "must be a matrix", "mm of a 3-D tensor"),
        e(lambda k: k.mm(k.ones([2, 3]), k.ones([3, 2], dtype=k.float64)), RuntimeError, "same dtype",
          "mm of float32 and float64"),
        e(lambda k: k.mm(k.ones([2, 3]), k.ones([3, 2]), out=k.empty([0], dtype=k.float64)), RuntimeError,
          "Expected out tensor to have dtype float32", "mm out= of another dtype"),
        e(lambda k: k.bmm(k.ones([2, 2, 3]), k.ones([3, 3, 2])), RuntimeError, "Expected size for first two dimensions",
          "bmm batch mismatch"),
        e(lambda k: k.bmm(k.ones([2, 2, 3]), k.ones([2, 4, 2])), RuntimeError, "Expected size for first two dimensions",
          "bmm inner dim mismatch"),
        e(lambda k: k.bmm(k.ones([2, 3]), k.ones([3, 2])), RuntimeError, "must be a 3D tensor", "bmm of 2-D tensors"),
        e(lambda k: k.bmm(k.ones([1, 2, 3]), k.ones([1, 3, 2], dtype=k.int64)), RuntimeError, "same dtype",
          "bmm of float32 and int64"),
    ]


def _linalg(name, samples):
    errors = (lambda: [e for e in _errors() if e.note.startswith(name)])
    return OpRecord(name, FAMILY, NUMERIC, samples, ref=_matmul_ref, no_zero_dim=NO_ZERO_DIM,  # no bool kernel (torch)
                    error_inputs=errors)


RECORDS = [
    _linalg("matmul", _matmul_samples),
    _linalg("mm", _mm_samples),
    _linalg("bmm", _bmm_samples),
]

# ----------------------------------------------------------------------------- dot, mv, outer, addmm
NUMERIC_LINALG = ("uint8", "int8", "int16", "int32", "int64", "float32", "float64")


def _vector_samples(d):
    return [_pair(d, (5,), (5,), "length 5"), _pair(d, (0,), (0,), "empty"),
            Sample((values((8,), d)[::2], values((4,), d, seed=1)), note="strided")]


def _mv_samples(d):
    return [_pair(d, (3, 4), (4,), "3x4 @ 4"), _pair(d, (0, 4), (4,), "no rows"), _pair(d, (3, 0), (0,), "empty inner"),
            Sample((values((4, 3), d).T, values((4,), d, seed=1)), note="transposed matrix")]


def _outer_samples(d):
    return [_pair(d, (3,), (4,), "3 x 4"), _pair(d, (0,), (2,), "empty"), _pair(d, (1,), (1,), "1 x 1")]


def _addmm_samples(d):
    m1, m2 = values((3, 4), d, seed=1), values((4, 2), d, seed=2)
    return [Sample((values((3, 2), d), m1, m2), note="self (3, 2)"),
            Sample((values((2,), d), m1, m2), {"beta": 2, "alpha": 3}, note="broadcast row, beta/alpha"),
            Sample((values((), d), m1, m2), note="0-dim self"),
            Sample((values((0, 2), d), values((0, 4), d), m2), note="no rows"),
            Sample((np.full((3, 2), np.nan, dtype=d) if d in ("float32", "float64") else values((3, 2), d), m1, m2),
                   {"beta": 0}, note="beta 0 ignores self")]


def _addmm_ref(x, a, b, beta=1, alpha=1):
    product = alpha * (a.astype(np.float64) @ b.astype(np.float64))
    return (product if beta == 0 else beta * x + product).astype(np.result_type(x, a))


def _product_errors():
    e = ErrorInput
    return [
        e(lambda k: k.dot(k.ones([2, 2]), k.ones([2])), RuntimeError, "1D tensors expected", "dot of a matrix"),
        e(lambda k: k.dot(k.ones([3]), k.ones([4])), RuntimeError, "inconsistent tensor size", "dot length mismatch"),
        e(lambda k: k.dot(k.ones([3]), k.ones([3], dtype=k.float64)), RuntimeError, "same dtype", "dot mixed dtypes"),
        e(lambda k: k.mv(k.ones([2, 3]), k.ones([2])), RuntimeError, "size mismatch", "mv size mismatch"),
        e(lambda k: k.mv(k.ones([3]), k.ones([3])), RuntimeError, "matrix @ vector expected", "mv of a vector"),
        e(lambda k: k.outer(k.ones([2, 2]), k.ones([2])), RuntimeError, "1D", "outer of a matrix"),
        e(lambda k: k.addmm(k.ones([3, 3]), k.ones([3, 4]), k.ones([4, 2])), RuntimeError, "must match|broadcast",
          "addmm self of another shape"),
        e(lambda k: k.addmm(k.ones([3, 2]), k.ones([3, 4]), k.ones([5, 2])), RuntimeError, "shapes cannot be multiplied|size",
          "addmm inner dim mismatch"),
    ]


def _numeric_record(name, samples, ref, no_zero_dim, dtypes=NUMERIC_LINALG):
    return OpRecord(name, FAMILY, dtypes, samples, ref=ref, no_zero_dim=no_zero_dim,
                    error_inputs=lambda: [e for e in _product_errors() if e.note.startswith(name)])


def _addmm_into_samples(d):
    m1, m2 = values((3, 4), d, seed=1), values((4, 2), d, seed=2)
    return [Sample((values((3, 2), d), m1, m2), note="self (3, 2)"),
            Sample((values((2,), d), m1, m2), note="broadcast row"),
            Sample((values((3, 1), d), m1, m2), note="broadcast column"),
            Sample((values((), d), m1, m2), note="0-dim self"),
            Sample((values((0, 2), d), values((0, 4), d), m2), note="no rows"),
            Sample((values((3, 2), d), values((3, 0), d), values((0, 2), d)), note="empty inner dim: self"),
            Sample((values((3, 2), d), values((4, 3), d, seed=1).T, values((2, 4), d, seed=2).T),
                   note="transposed operands")]


def _addmm_into_errors():
    e = ErrorInput
    return [
        e(lambda k: k._addmm_into(k.ones([3, 3]), k.ones([3, 4]), k.ones([4, 2])), RuntimeError,
          "cannot be broadcast", "_addmm_into self of another shape"),
        e(lambda k: k._addmm_into(k.ones([3, 2]), k.ones([3, 4]), k.ones([5, 2])), RuntimeError,
          "shapes cannot be multiplied", "_addmm_into inner dim mismatch"),
        e(lambda k: k._addmm_into(k.ones([2], dtype=k.int64), k.ones([3, 4], dtype=k.int64),
                                  k.ones([4, 2], dtype=k.int64)), RuntimeError, "not implemented for",
          "_addmm_into of int64"),
    ]


def _blas_mv_samples(d):
    m = values((6, 4), d)
    return _mv_samples(d) + [Sample((m[::2], values((4,), d, seed=1)), note="rows strided"),
                             Sample((m[:, ::2], values((8,), d, seed=1)[::4]), note="columns and vector strided"),
                             Sample((values((1, 5), d), values((5,), d, seed=1)), note="one row"),
                             Sample((values((5, 1), d), values((1,), d, seed=1)), note="one column")]


def _blas_errors(name):
    e = ErrorInput
    f = getattr
    if name == "_blas_dot":
        return [e(lambda k: f(k, name)(k.ones([2, 2]), k.ones([2])), RuntimeError, "1D tensors expected",
                  "_blas_dot of a matrix"),
                e(lambda k: f(k, name)(k.ones([3]), k.ones([4])), RuntimeError, "inconsistent tensor size",
                  "_blas_dot length mismatch"),
                e(lambda k: f(k, name)(k.ones([3]), k.ones([3], dtype=k.float64)), RuntimeError, "same dtype",
                  "_blas_dot mixed dtypes")]
    return [e(lambda k: f(k, name)(k.ones([2]), k.ones([2])), RuntimeError, "matrix @ vector expected",
              "_blas_mv of a vector"),
            e(lambda k: f(k, name)(k.ones([2, 3]), k.ones([4])), RuntimeError, "size mismatch", "_blas_mv mismatch"),
            e(lambda k: f(k, name)(k.ones([2, 3], dtype=k.int64), k.ones([3], dtype=k.int64)), RuntimeError,
              "float32 or float64 expected", "_blas_mv of int64")]


def _fma_samples(d):
    return [Sample((values((3, 4), d), values((3, 4), d, seed=1), values((3, 4), d, seed=2)), note="(3, 4)"),
            Sample((values((5,), d), values((5,), d, seed=1), values((), d, seed=2)), note="one-element tensor2"),
            Sample((values((2, 3), d), values((3, 2), d, seed=1).T, values((1,), d, seed=2)),
                   note="transposed tensor1, (1,) tensor2"),
            Sample((values((3, 1), d), values((3, 4), d, seed=1), values((4,), d, seed=2)),
                   note="(3, 1) self: broadcast, so _fma_ refuses it"),
            Sample((values((0, 2), d), values((0, 2), d), values((0, 2), d)), note="empty")]


def _fma_ref(a, x, b):
    return (a.astype(np.float64) + x.astype(np.float64) * b.astype(np.float64)).astype(a.dtype)


def _fma_errors():
    e = ErrorInput
    return [
        e(lambda k: k._fma(k.ones([2, 2]), k.ones([2, 3]), k.ones([2, 2])), RuntimeError, "must match",
          "_fma of shapes that do not broadcast"),
        e(lambda k: k._fma(k.ones([2], dtype=k.int64), k.ones([2], dtype=k.int64), k.ones([2], dtype=k.int64)),
          RuntimeError, "not implemented for 'int64'", "_fma of integers"),
    ]


def _norm2_samples(d):
    return [Sample((values((3, 4), d),), note="(3, 4)"), Sample((values((37,), d),), note="a tail of 5"),
            Sample((values((), d),), note="0-dim"), Sample((values((0, 3), d),), note="empty"),
            Sample((values((4, 3), d).T,), note="transposed: copied first")]


def _norm2_ref(a):
    return np.asarray(np.sqrt((a.astype(np.float64) ** 2).sum())).astype(a.dtype)


def _norm2_errors():
    return [ErrorInput(lambda k: k._norm2(k.ones([2], dtype=k.int64)), RuntimeError, "not implemented for",
                       "_norm2 of int64")]


def _norm2_lastdim_samples(d):
    return [Sample((values((3, 4), d),), note="(3, 4)"), Sample((values((2, 37), d), True), note="a tail of 5, keepdim"),
            Sample((values((5,), d),), note="1-D"), Sample((values((0, 3), d),), note="no rows"),
            Sample((values((2, 3, 16), d),), note="3-D")]


def _norm2_lastdim_ref(a, keepdim=False):
    return np.sqrt((a.astype(np.float64) ** 2).sum(-1, keepdims=keepdim)).astype(a.dtype)


def _norm2_lastdim_errors():
    return [ErrorInput(lambda k: k._C._norm2_lastdim(k.ones([2], dtype=k.int64)), RuntimeError, "not implemented for",
                       "_norm2_lastdim of int64")]


RECORDS += [
    # torch's vectorized whole-tensor 2-norm (schema comment): norm(x) of float32 takes it
    OpRecord("_norm2", FAMILY, ("float32", "float64"), _norm2_samples, ref=_norm2_ref,
             no_zero_dim="_norm2's samples name their shapes", error_inputs=_norm2_errors,
             no_reduced_precision="float32/64 only: norm() of 16-bit floats keeps its own sum"),
    # the same per row of the last dim: norm(x, 2, dim=-1) of float32
    OpRecord("_norm2_lastdim", FAMILY, ("float32", "float64"), _norm2_lastdim_samples, ref=_norm2_lastdim_ref, api="_C._norm2_lastdim",
             no_zero_dim="_norm2_lastdim's samples name their shapes", error_inputs=_norm2_lastdim_errors,
             no_reduced_precision="float32/64 only: norm() of 16-bit floats keeps its own sum"),
    # not a product, but a multiply-add: torch's fused add/sub with alpha and addcmul (schema comment)
    OpRecord("_fma", FAMILY, ("float32", "float64"), _fma_samples, ref=_fma_ref,
             no_zero_dim="_fma's samples name their shapes", error_inputs=_fma_errors),
    OpRecord("_addmm_into", FAMILY, ("float32", "float64"), _addmm_into_samples, ref=_addmm_ref,
             no_zero_dim="_addmm_into takes matrices", error_inputs=_addmm_into_errors),
    # float32/float64 dot and mv through BLAS's dot and gemv, as torch's CPU kernels (schema comment)
    OpRecord("_blas_dot", FAMILY, ("float32", "float64"), _vector_samples, ref=lambda a, b: np.asarray(np.dot(a, b)),
             no_zero_dim="_blas_dot takes 1-D tensors", error_inputs=lambda: _blas_errors("_blas_dot"),
             no_reduced_precision="float32/float64 only: dot of 16-bit floats keeps the mm path"),
    OpRecord("_blas_mv", FAMILY, ("float32", "float64"), _blas_mv_samples, ref=lambda a, b: a @ b,
             no_zero_dim="_blas_mv takes a matrix and a vector", error_inputs=lambda: _blas_errors("_blas_mv"),
             no_reduced_precision="float32/float64 only: mv of 16-bit floats keeps the mm path"),
    _numeric_record("dot", _vector_samples, lambda a, b: np.asarray(np.dot(a, b)), "dot takes 1-D tensors"),
    _numeric_record("mv", _mv_samples, lambda a, b: a @ b, "mv takes a matrix and a vector"),
    _numeric_record("outer", _outer_samples, np.outer, "outer takes 1-D tensors", ALL),
    _numeric_record("addmm", _addmm_samples, _addmm_ref, None),
]


assert all(isinstance(r, OpRecord) and r.family == FAMILY for r in RECORDS)
