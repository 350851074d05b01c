"""Records of var and std (full, over dims, with correction), logsumexp, norm, cumsum and cumprod.

var divides the sum of squared deviations by max(N - correction, 0) (NumPy's ddof), so N <=
correction gives inf or nan, as torch. logsumexp of integers computes in float32 (torch 2).
cumsum and cumprod of bool and integers accumulate in int64 (the result dtype), as torch.
"""
import numpy as np

from .record import FLOATS, INTEGRAL, NUMERIC, SHAPES, DType, ErrorInput, OpRecord, Sample, always, values
from .reduction import _axes, _multi_dim_samples

FAMILY = "statistics"


def _ddof_var(x, axis, ddof, keepdim):
    """Sum of squared deviations over axis / max(N - ddof, 0), computed in float64."""
    n = x.size if axis is None else int(np.prod([x.shape[a] for a in axis]))
    dev = x - x.mean(axis=axis, keepdims=True) if x.size else x
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.asarray((dev ** 2).sum(axis=axis, keepdims=keepdim) / max(n - ddof, 0))


def _var_full_ref(root):
    def ref(x, unbiased=True):
        v = _ddof_var(x, None, 1 if unbiased else 0, False)
        return np.sqrt(v) if root else v
    return ref


def _var_dim_ref(root):
    def ref(x, dim=None, unbiased=True, keepdim=False, correction=None):
        ddof = (1 if unbiased else 0) if correction is None else correction
        v = _ddof_var(x, _axes(x, dim), ddof, keepdim and x.ndim > 0)
        return np.sqrt(v) if root else v
    return ref


def _full_samples(d):
    return [Sample((values(s, d),), note=f"shape {s}") for s in SHAPES] + [
        Sample((values((3, 4), d), False), note="unbiased=False")]


def _dim_samples(d):
    out = [Sample((x, dim, unbiased, keepdim), note=s.note + f", unbiased {unbiased}")
           for s in _multi_dim_samples(d, allow_empty_dim=False) if len(s.args) == 3
           for x, dim, keepdim in [s.args] for unbiased in (True, False)]
    return out


def _correction_samples(d):
    x = values((3, 4), d)
    return [Sample((x,), {"dim": 1, "correction": 0}, note="correction 0"),
            Sample((x,), {"dim": [0, 1], "correction": 2, "keepdim": True}, note="correction 2, keepdim"),
            Sample((x,), {"correction": 1.5}, note="float correction, all dims"),
            Sample((values((), d),), {"correction": 0}, note="0-dim"),
            Sample((values((2, 0, 3), d),), {"dim": 2}, note="zero-size, non-empty dim"),
            Sample((values((4, 1), d),), {"dim": 1}, note="N - correction = 0: inf or nan")]


def _grad(samples_of):
    def make():
        return [s for s in samples_of("float64") if all(0 < a.size <= 24 for a in s.arrays())
                and "= 0" not in s.note and _enough(s)]
    return make


def _enough(s):
    """var's gradient needs N > correction (else the result is inf/nan): the samples reduce
    at least two elements when the input has more than two."""
    return s.args[0].size > 2


def _errors(name):
    e = ErrorInput
    return [e(lambda k: getattr(k, name)(k.ones([3], dtype=k.int64)), RuntimeError, "floating point",
              f"{name} of int64"),
            e(lambda k: getattr(k, name)(k.ones([2, 3]), [0, 0]), RuntimeError, "appears multiple times|twice",
              f"{name} over a repeated dim")]


def _logsumexp_ref(x, dim, keepdim=False):
    x = x.astype(np.float64)
    axis = _axes(x, dim)
    m = np.max(x, axis=axis, keepdims=True) if x.size else np.zeros((1,) * x.ndim)
    m = np.where(np.isinf(m), 0, m)
    with np.errstate(divide="ignore"):
        r = np.log(np.exp(x - m).sum(axis=axis, keepdims=True)) + m
    if keepdim:
        return r
    return r.reshape([n for i, n in enumerate(x.shape) if axis is not None and i not in axis]) if axis else r.reshape(())


def _logsumexp_samples(d):
    out = [Sample((x, dim, keepdim), note=s.note) for s in _multi_dim_samples(d) if len(s.args) == 3
           for x, dim, keepdim in [s.args]]
    if d in FLOATS:
        out.append(Sample((np.asarray([[1e3, 1e3 + 1], [-np.inf, -np.inf], [np.inf, 1.0]], dtype=d), 1),
                          note="large values, -inf row, +inf"))
    return out


def _running_ref(fn):
    def ref(x, dim, dtype=None):
        if dtype is not None:
            x = x.astype(np.dtype(dtype))
        elif x.dtype.kind in "biu":
            x = x.astype(np.int64)
        return fn(x, axis=dim % x.ndim) if x.ndim else x.copy()
    return ref


def _cumprod_samples(d):
    out = _cumsum_samples(d)
    zeros = values((3, 4), d)
    zeros[1, 2] = zeros[2, 0] = zeros[2, 3] = 0
    return out + [Sample((zeros, 1), note="zeros, dim 1"), Sample((zeros, 0), note="zeros, dim 0")]


def _cumsum_samples(d):
    out = [Sample((values(s, d), dim), note=f"shape {s}, dim {dim}") for s in SHAPES
           for dim in ([0, -1] if not s else [0, len(s) - 1, -1])]
    out.append(Sample((values((3, 4), d), 1), {"dtype": DType("float64")}, note="dtype="))
    return out


def _cumsum_result(sample, dtype):
    if "dtype" in sample.kwargs:
        return str(sample.kwargs["dtype"])
    return "int64" if dtype in INTEGRAL else dtype


def _private_samples(d):
    """_var/_std(self, dim, correction, keepdim): dims given or None, float corrections."""
    x = values((3, 4), d)
    return [Sample((x, [1], 1.0, False), note="dim 1"), Sample((x, [0, 1], 0.0, True), note="all dims, keepdim"),
            Sample((x, None, 1.5, False), note="dim None, correction 1.5"),
            Sample((values((2, 3, 4), d), [0, 2], 1.0, False), note="dims 0 and 2 of 3-D"),
            Sample((values((4, 1), d), [1], 1.0, False), note="N - correction = 0: inf or nan"),
            Sample((values((0, 3), d), [1], 1.0, False), note="zero-size")]


def _private_var_ref(root):
    def ref(x, dim, correction, keepdim):
        v = _ddof_var(x, _axes(x, dim), correction, keepdim)
        return np.sqrt(v) if root else v
    return ref


def _private_logsumexp_samples(d):
    out = [Sample((values((3, 4), d), [1], False), note="dim 1"), Sample((values((3, 4), d), [0, 1], True), note="keepdim"),
           Sample((values((0, 3), d), [1], False), note="zero-size")]
    if d in FLOATS:
        out.append(Sample((np.asarray([[1e3, 1e3 + 1], [-np.inf, -np.inf], [np.inf, 1.0]], dtype=d), [1], False),
                          note="large values, -inf row, +inf"))
    return out


RECORDS = [
    OpRecord("var", FAMILY, FLOATS, _full_samples, ref=_var_full_ref(False), error_inputs=lambda: _errors("var")[:1],
             grad_samples=_grad(_full_samples)),
    OpRecord("var.dim", FAMILY, FLOATS, _dim_samples, ref=_var_dim_ref(False), error_inputs=lambda: _errors("var"),
             grad_samples=_grad(_dim_samples)),
    OpRecord("var.correction", FAMILY, FLOATS, _correction_samples, ref=_var_dim_ref(False),
             grad_samples=_grad(_correction_samples)),
    OpRecord("std", FAMILY, FLOATS, _full_samples, ref=_var_full_ref(True), error_inputs=lambda: _errors("std")[:1],
             grad_samples=_grad(_full_samples)),
    OpRecord("std.dim", FAMILY, FLOATS, _dim_samples, ref=_var_dim_ref(True), error_inputs=lambda: _errors("std"),
             grad_samples=_grad(_dim_samples)),
    OpRecord("std.correction", FAMILY, FLOATS, _correction_samples, ref=_var_dim_ref(True),
             grad_samples=_grad(_correction_samples)),
    OpRecord("logsumexp", FAMILY, ("bool",) + NUMERIC, _logsumexp_samples, ref=_logsumexp_ref,
             result_dtype=lambda s, d: d if d in FLOATS else "float32",
             grad_samples=lambda: [s for s in _logsumexp_samples("float64") if 0 < s.args[0].size <= 24
                                   and np.isfinite(s.args[0]).all()]),
    # the private ops behind var/std/logsumexp (their own derivatives: torch's var_backward,
    # std_backward and logsumexp_backward, schema comment)
    OpRecord("_var", FAMILY, FLOATS, _private_samples, ref=_private_var_ref(False), api="_C._var",
             no_zero_dim="_var's samples name their shapes", grad_samples=_grad(_private_samples)),
    OpRecord("_std", FAMILY, FLOATS, _private_samples, ref=_private_var_ref(True), api="_C._std",
             no_zero_dim="_std's samples name their shapes", grad_samples=_grad(_private_samples)),
    OpRecord("_logsumexp", FAMILY, FLOATS, _private_logsumexp_samples, ref=_logsumexp_ref, api="_C._logsumexp",
             no_zero_dim="_logsumexp's samples name their shapes",
             grad_samples=lambda: [s for s in _private_logsumexp_samples("float64") if 0 < s.args[0].size <= 24
                                   and np.isfinite(s.args[0]).all()]),
    OpRecord("cumsum", FAMILY, ("bool",) + NUMERIC, _cumsum_samples, ref=_running_ref(np.cumsum),
             result_dtype=_cumsum_result, out_sets_dtype=True,  # out= of another dtype computes in it (torch)
             error_inputs=lambda: [ErrorInput(lambda k: k.cumsum(k.ones(3), 1), IndexError, "Dimension out of range",
                                              "dim 1 of a 1-D tensor")]),
    OpRecord("cumprod", FAMILY, ("bool",) + NUMERIC, _cumprod_samples, ref=_running_ref(np.cumprod),
             result_dtype=_cumsum_result, out_sets_dtype=True,  # out= of another dtype computes in it (torch)
             grad_samples=lambda: [s for s in _cumprod_samples("float64") if s.args[0].size <= 24 and not s.kwargs],
             error_inputs=lambda: [ErrorInput(lambda k: k.cumprod(k.ones(3), -2), IndexError, "Dimension out of range",
                                              "dim -2 of a 1-D tensor")]),
]

def _norm_ref(x, p=2, dim=None, keepdim=False):
    axis = None if dim is None else _axes(x, dim)
    a = np.abs(x.astype(np.float64))
    kd = keepdim and x.ndim > 0
    if np.isinf(p):
        r = (np.max if p > 0 else np.min)(a, axis=axis, keepdims=kd)
    elif p == 0:
        r = (a != 0).sum(axis=axis, keepdims=kd).astype(np.float64)
    else:
        r = (a ** p).sum(axis=axis, keepdims=kd) ** (1.0 / p)
    return np.asarray(r)


_PS = [2, 1, 3, 0.5, float("inf"), float("-inf"), 0]


def _norm_samples(d):
    out = [Sample((values((3, 4), d), p), note=f"p {p}") for p in _PS]
    out += [Sample((values((), d),), note="0-dim"), Sample((values((0, 3), d), 2), note="empty, p 2"),
            Sample((np.zeros((3,), dtype=d),), note="zero vector")]
    return out


def _norm_dim_samples(d):
    x = values((2, 3, 4), d)
    out = [Sample((x, p, dim, keepdim), note=f"p {p}, dim {dim}, keepdim {keepdim}")
           for p in _PS for dim, keepdim in ((1, False), ([0, 2], True), (-1, True))]
    out += [Sample((values((), d), 2, 0), note="0-dim"), Sample((values((0, 3), d), 1, 1), note="empty rows"),
            Sample((np.zeros((2, 3), dtype=d), 2, 1), note="zero rows"), Sample((x, None, 0), note="p None is 2")]
    return out


def _norm_grad(samples_of):
    return lambda: [s for s in samples_of("float64") if "p 0," not in s.note + "," and 0 < s.args[0].size <= 24
                    and "inf" not in s.note and "zero" not in s.note]  # (second derivative infinite at 0)


def _norm_errors():
    e = ErrorInput
    return [e(lambda k: k.norm(k.ones([3], dtype=k.int64)), RuntimeError, "floating point", "norm of int64"),
            e(lambda k: k.linalg.vector_norm(k.ones([0]), float("inf")), RuntimeError, "identity",
              "infinity norm of nothing (torch.norm gives 0)")]


RECORDS += [
    OpRecord("norm.Scalar", FAMILY, FLOATS, _norm_samples, ref=_norm_ref, error_inputs=_norm_errors,
             grad_samples=_norm_grad(_norm_samples), tol={"float32": {"rtol": 1e-5, "atol": 1e-6}}),
    OpRecord("norm.ScalarOpt_dim", FAMILY, FLOATS, _norm_dim_samples,
             ref=lambda x, p, dim, keepdim=False: _norm_ref(x, 2 if p is None else p, dim, keepdim),
             grad_samples=_norm_grad(_norm_dim_samples), tol={"float32": {"rtol": 1e-5, "atol": 1e-6}}),
]


assert all(isinstance(r, OpRecord) and r.family == FAMILY for r in RECORDS)
