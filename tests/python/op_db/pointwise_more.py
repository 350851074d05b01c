"""Records of the pointwise ops torch programs use beside the basic arithmetic: clamp_min/clamp_max,
logaddexp, heaviside, frac, xlogy, nan_to_num and addcmul/addcdiv."""
import numpy as np

from .record import (ALL, FLOATS, NUMERIC, ErrorInput, OpRecord, Sample, always, promoted, promoted_float,
                     shape_samples, values)
from .pointwise import _binary_samples, _f, binary, scalar_other, unary

FAMILY = "pointwise_more"


def _num(x):
    return x.astype(np.int64) if isinstance(x, np.ndarray) and x.dtype == bool else x


def _clamp_min_ref(x, m):
    return np.where(np.isnan(m) | (x < m), m, x) if x.dtype.kind == "f" else np.maximum(x, m)


def _clamp_max_ref(x, m):
    return np.where(np.isnan(m) | (x > m), m, x) if x.dtype.kind == "f" else np.minimum(x, m)


def _xlogy_ref(x, y):
    x, y = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(np.isnan(y), y, np.where(x == 0, 0.0, x * np.log(y)))


def _special(d):
    """NaN, infinities and ordinary values, in d."""
    return np.array([np.nan, np.inf, -np.inf, 0.0, -2.5, 3.25], dtype=d)


def _nan_to_num_samples(d):
    out = [Sample(s.args, {"nan": 1.5}, note=s.note) for s in shape_samples(d)]
    if d in FLOATS:
        out.append(Sample((_special(d),), {"nan": -1.0, "posinf": 7.0, "neginf": -7.0}, note="all replaced"))
        out.append(Sample((_special(d)[[0, 3, 4]],), note="defaults, NaN only"))
    return out


def _nan_to_num_ref(x, nan=0.0, posinf=None, neginf=None):
    return np.nan_to_num(x, nan=nan, posinf=posinf, neginf=neginf)


def _xlogy_samples(d):
    return _binary_samples(d, ALL, "real", "positive", mixed=False) + [
        Sample((np.array([0.0, 0.0, 1.0, 2.0], dtype=d), np.array([0.0, np.nan, np.inf, 0.5], dtype=d)),
               note="0 * log(0), NaN other")] if d in FLOATS else _binary_samples(d, ALL, "real", "positive", mixed=False)


def _ternary_samples(d, third_domain="real", value=None):
    kw = {} if value is None else {"value": value}
    return [Sample(s.args, dict(kw), note=s.note) for s in shape_samples(d, 3, "real")] if third_domain == "real" else [
        Sample(s.args[:2] + (_nonzero_like(s.args[2], d),), dict(kw), note=s.note) for s in shape_samples(d, 3, "real")]


def _nonzero_like(a, d):
    base = values(a.shape, d, "nonzero", seed=2)
    return base


def _addc_samples(d, div):
    value = 2 if d not in FLOATS else 0.5
    dom = "nonzero" if div else "real"
    return _ternary_samples(d, dom) + _ternary_samples(d, dom, value)


def _addcmul_ref(s, a, b, value=1):
    return _num(s) + value * _num(a) * _num(b)


def _addcdiv_ref(s, a, b, value=1):
    return s + value * a / b


RECORDS = [
    scalar_other("clamp_min", _clamp_min_ref, dtypes=ALL, scalars=(1, -0.5)),
    scalar_other("clamp_max", _clamp_max_ref, dtypes=ALL, scalars=(1, -0.5)),
    binary("clamp_min.Tensor", _clamp_min_ref, dtypes=ALL),
    binary("clamp_max.Tensor", _clamp_max_ref, dtypes=ALL),
    binary("logaddexp", np.logaddexp, dtypes=FLOATS),
    binary("heaviside", lambda x, v: np.heaviside(x, v).astype(x.dtype), dtypes=ALL, mixed=False,
           error_inputs=lambda: [ErrorInput(lambda k: k.heaviside(k.ones(2), k.ones(2, dtype=k.float64)), RuntimeError,
                                            "different dtypes", "self and values of two dtypes")]),
    unary("frac", lambda x: x - np.trunc(x), dtypes=FLOATS),
    OpRecord("xlogy.Tensor", FAMILY, ALL, _xlogy_samples, ref=_xlogy_ref, result_dtype=promoted_float,
             domain="other positive",
             grad_samples=lambda: [s for s in _xlogy_samples("float64") if "NaN" not in s.note and s.arrays()[0].size <= 24]),
    OpRecord("xlogy.Scalar_Self", FAMILY, ALL,
             lambda d: [Sample((c, values(s, d, "positive")), note=f"{c!r}, shape {s}") for s in [(), (0,), (3, 4)]
                        for c in (2, 0.5)],
             ref=_xlogy_ref, result_dtype=promoted_float, domain="other positive"),
    scalar_other("xlogy.Scalar_Other", _xlogy_ref, result=promoted_float, scalars=(2, 0.5)),
    scalar_other("xlogy_.Scalar_Other", _xlogy_ref, dtypes=FLOATS, scalars=(2, 0.5)),
    OpRecord("nan_to_num", FAMILY, ALL, _nan_to_num_samples, ref=_nan_to_num_ref),
    OpRecord("nan_to_num_", FAMILY, ALL, _nan_to_num_samples, ref=_nan_to_num_ref),
    OpRecord("_nan_to_num", FAMILY, ALL,
             # (uint8 takes no negative float: torch refuses -9.0 as a uint8 Scalar)
             lambda d: [Sample((_special(d) if d in FLOATS else values((5,), d), 0.5, 9.0,
                                -9.0 if d != "uint8" else 1.0), note="special")] +
             [Sample((s.args[0], 0.5, 9.0, -9.0 if d != "uint8" else 1.0), note=s.note) for s in shape_samples(d)],
             ref=lambda x, n, p, m: np.nan_to_num(x, nan=n, posinf=p, neginf=m) if x.dtype.kind == "f" else x.copy(),
             api="_C._nan_to_num"),
    OpRecord("addcmul", FAMILY, NUMERIC, lambda d: _addc_samples(d, False), ref=_addcmul_ref, result_dtype=promoted),
    OpRecord("addcdiv", FAMILY, FLOATS, lambda d: _addc_samples(d, True), ref=_addcdiv_ref, result_dtype=promoted,
             domain="divisors nonzero",
             error_inputs=lambda: [ErrorInput(lambda k: k.addcdiv(k.ones(2), k.ones(2, dtype=k.int64), k.ones(2, dtype=k.int64)),
                                              RuntimeError, "Integer division", "integer tensor1 / tensor2")]),
]
