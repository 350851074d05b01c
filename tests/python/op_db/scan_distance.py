"""Records of cummax, cummin, logcumsumexp and cdist (with _cdist_forward and _cdist_backward).

cummax/cummin: ties and NaN move the index to the latest position, and a NaN stays once seen
(torch's rule). cdist's gradient is zero where a distance is zero; it is not twice differentiable
(_cdist_backward has no derivative, as in torch)."""
import numpy as np

from .record import ALL, FLOATS, ErrorInput, OpRecord, Sample, values

FAMILY = "scan_distance"


# ----------------------------------------------------------------------------- cummax / cummin / logcumsumexp
def _scan_samples(dtype):
    out = [Sample((values(s, dtype, seed=i), d), note=f"shape {s}, dim {d}")
           for i, (s, d) in enumerate([((5,), 0), ((), 0), ((0,), 0), ((3, 4), 1), ((3, 4), -2), ((2, 0, 3), 2),
                                       ((2, 3, 4), 1)])]
    out.append(Sample((np.array([[1, 0, 1, 2, 2, 0]]).astype(dtype), 1), note="ties"))
    if dtype in FLOATS:
        out.append(Sample((np.array([1.0, np.nan, 3.0, np.nan, -np.inf], dtype=dtype), 0), note="NaN stays"))
    return out


def _running(a, dim, better):
    if a.ndim == 0:
        return a.copy(), np.zeros((), dtype=np.int64)
    x = np.moveaxis(a, dim, -1)
    v, idx = np.empty_like(x), np.zeros(x.shape, dtype=np.int64)
    for pos in np.ndindex(x.shape[:-1]):
        best, at = None, 0
        for k, e in enumerate(x[pos]):
            if best is None or np.isnan(e) or (not np.isnan(best) and better(e, best)):
                best, at = e, k
            v[pos + (k,)], idx[pos + (k,)] = best, at
    return np.moveaxis(v, -1, dim), np.moveaxis(idx, -1, dim)


def _cummax_ref(a, dim):
    return _running(a, dim, lambda e, best: e >= best)


def _cummin_ref(a, dim):
    return _running(a, dim, lambda e, best: e <= best)


def _logcumsumexp_ref(a, dim):
    if a.ndim == 0:
        return a.copy()
    with np.errstate(invalid="ignore"):
        return np.logaddexp.accumulate(a, axis=dim)


def _values_indices(sample, dtype):
    return (sample.args[0].dtype.name, "int64")


def _distinct_grad_samples():
    """float64 samples without ties or NaN (finite differences must not swap the running extremum)."""
    return [s for s in _scan_samples("float64") if s.note not in ("ties", "NaN stays")]


def _logcumsumexp_grad_samples():
    return [s for s in _scan_samples("float64") if s.note != "NaN stays"]


# ----------------------------------------------------------------------------- cdist
def _cdist_ref(x1, x2, p=2.0, compute_mode=None):
    diff = np.abs(x1[..., :, None, :] - x2[..., None, :, :])
    if p == 0:
        return (diff != 0).sum(-1).astype(x1.dtype)
    if np.isinf(p):
        return diff.max(-1, initial=0.0)
    return (diff ** p).sum(-1) ** (1.0 / p)


def _pairs(dtype, seed=0):
    x1, x2 = values((2, 3, 4), dtype, seed=seed), values((2, 5, 4), dtype, seed=seed + 1)
    x2[0, 1] = x1[0, 2]  # one zero distance: its gradient is zero
    return x1, x2


def _cdist_samples(dtype):
    x1, x2 = _pairs(dtype)
    out = [Sample((x1[0], x2[0], p), note=f"2-D, p={p}") for p in (0.0, 0.5, 1.0, 1.5, 2.0, 3.0, np.inf)]
    out += [Sample((x1, x2), note="batched, default p"),
            Sample((x1[:1], x2), dict(p=1.0), note="batch broadcast"),
            Sample((values((4, 3), dtype), values((2, 1, 3), dtype, seed=2)), note="2-D against 3-D"),
            Sample((values((0, 3), dtype), values((2, 3), dtype)), note="zero-size x1"),
            Sample((values((2, 0), dtype), values((3, 0), dtype)), note="no columns: zeros")]
    return out


def _cdist_modes(dtype):
    x1, x2 = values((30, 3), dtype), values((4, 3), dtype, seed=1)
    return [Sample((x1, x2, 2.0, m), note=f"30 rows, compute_mode {m}") for m in (None, 0, 1, 2)]


def _cdist_forward_samples(dtype):
    x1, x2 = _pairs(dtype)
    return [Sample((x1, x2, p, None), note=f"p={p}") for p in (0.0, 1.0, 2.0, np.inf)] + _cdist_modes(dtype) + [
        Sample((values((0, 3), dtype), values((2, 3), dtype), 2.0, None), note="zero-size")]


def _smooth_grad_samples(samples):
    """float64 samples where the distance is differentiable: p != 0.5 has no kink at a zero diff
    off the zero distance; p = inf needs distinct |diff| (random values)."""
    return lambda: [s for s in samples("float64") if "p=0.5" not in s.note and "mode 1" not in s.note]


def _cdist_backward_samples(dtype):
    out = []
    for i, p in enumerate((0.0, 0.5, 1.0, 1.5, 2.0, 3.0, np.inf)):
        # On a 1/32 grid: differences are exact, so p = inf's |diff| == dist test is the same in NumPy
        x1, x2 = ((np.round(x * 32) / 32).astype(dtype) for x in _pairs(dtype, seed=i))
        d = _cdist_ref(x1.astype(np.float64), x2.astype(np.float64), p).astype(dtype)
        out.append(Sample((values(d.shape, dtype, seed=7), x1, x2, p, d), note=f"p={p}"))
    x1, x2 = values((0, 3), dtype), values((2, 3), dtype)
    out.append(Sample((values((0, 2), dtype), x1, x2, 2.0, values((0, 2), dtype)), note="zero-size"))
    return out


def _cdist_backward_ref(grad, x1, x2, p, dist):
    diff = x1[..., :, None, :] - x2[..., None, :, :]
    dd = dist[..., None]
    with np.errstate(divide="ignore", invalid="ignore"):
        if p == 0:
            f = np.zeros_like(diff)
        elif p == 1:
            f = np.sign(diff)
        elif np.isinf(p):
            f = np.sign(diff) * (np.abs(diff) == dd)
        elif p < 2:
            f = np.sign(diff) * np.abs(diff) ** (p - 1) / dd ** (p - 1)
            f = np.where((dd == 0) | ((p < 1) & (diff == 0)), 0.0, f)
        else:
            f = np.where(dd == 0, 0.0, diff * np.abs(diff) ** (p - 2) / dd ** (p - 1))
    return (grad[..., None] * f).sum(-2)


def _cdist_errors():
    return [
        ErrorInput(lambda k: k.cdist(k.ones(2, 3, dtype=k.int64), k.ones(2, 3)), RuntimeError,
                   "cdist only supports floating-point dtypes, X1 got", "int x1"),
        ErrorInput(lambda k: k.cdist(k.ones(3), k.ones(2, 3)), RuntimeError, "at least 2D tensors, X1 got: 1D",
                   "1-D x1"),
        ErrorInput(lambda k: k.cdist(k.ones(2, 3), k.ones(2, 4)), RuntimeError,
                   "X1 and X2 must have the same number of columns. X1: 3 X2: 4", "columns differ"),
        ErrorInput(lambda k: k.cdist(k.ones(2, 3), k.ones(2, 3), -1.0), RuntimeError, "non-negative p", "p < 0"),
        ErrorInput(lambda k: k.cdist(k.ones(2, 2, 3), k.ones(3, 2, 3)), RuntimeError, "must match", "batch dims"),
        ErrorInput(lambda k: k.cdist(k.ones(2, 3), k.ones(2, 3), compute_mode="fast"), ValueError,
                   "is not a valid value for compute_mode", "bad compute_mode"),
        ErrorInput(lambda k: k._C._cdist_forward(k.ones(2, 3), k.ones(2, 3), 2.0, 3), RuntimeError,
                   "possible modes: 0, 1, 2", "mode 3"),
        ErrorInput(lambda k: k.cummax(k.ones(3), 1), IndexError, "Dimension out of range", "cummax dim 1 of 1-D"),
        ErrorInput(lambda k: k.logcumsumexp(k.tensor([1, 2]), 0), RuntimeError, "not implemented for 'int64'",
                   "logcumsumexp of ints"),
    ]


_TWO_D = "cdist takes tensors of at least 2 dims"
_NOT_TWICE = "_cdist_backward has no derivative (torch's neither)"

RECORDS = [
    OpRecord("cummax", FAMILY, ALL, _scan_samples, ref=_cummax_ref, result_dtype=_values_indices,
             grad_samples=_distinct_grad_samples, error_inputs=_cdist_errors),
    OpRecord("cummin", FAMILY, ALL, _scan_samples, ref=_cummin_ref, result_dtype=_values_indices,
             grad_samples=_distinct_grad_samples),
    OpRecord("logcumsumexp", FAMILY, FLOATS, _scan_samples, ref=_logcumsumexp_ref,
             grad_samples=_logcumsumexp_grad_samples),
    OpRecord("cdist", FAMILY, FLOATS, _cdist_samples, ref=_cdist_ref, no_zero_dim=_TWO_D, gradgrad=_NOT_TWICE,
             grad_samples=_smooth_grad_samples(_cdist_samples), tol={"float32": dict(rtol=1e-5, atol=1e-5)}),
    OpRecord("_cdist_forward", FAMILY, FLOATS, _cdist_forward_samples, ref=_cdist_ref, api="_C._cdist_forward",
             no_zero_dim=_TWO_D, gradgrad=_NOT_TWICE, grad_samples=_smooth_grad_samples(_cdist_forward_samples),
             tol={"float32": dict(rtol=1e-5, atol=1e-4)}),
    OpRecord("_cdist_backward", FAMILY, FLOATS, _cdist_backward_samples, ref=_cdist_backward_ref,
             api="_C._cdist_backward", no_zero_dim=_TWO_D, tol={"float32": dict(rtol=1e-5, atol=1e-5)}),
]
