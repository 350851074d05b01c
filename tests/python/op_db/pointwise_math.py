"""Records of the math formula ops beyond exp/log/sin/cos: log2, log10, exp2, the inverse and
hyperbolic trigonometric functions, tan, erfc, erfinv, lgamma, digamma, sgn,
deg2rad/rad2deg, logit, hypot and copysign. References: NumPy in float64, Python's math.erf/erfc
for the error functions, SciPy's gammaln/digamma/polygamma for the gamma family."""
import math

import numpy as np
import scipy.special

from .record import ALL, FLOATS, ErrorInput, OpRecord, Sample, promoted_float, shape_samples
from .pointwise import _f, binary, scalar_other, unary

FAMILY = "pointwise_math"

_erfc = np.vectorize(math.erfc, otypes=[np.float64])


def _erfinv_one(y):
    """erf's inverse by bisection on Python's math.erf (correctly rounded to within an ulp or two),
    then one Newton step: float64-accurate, independent of any erfinv implementation."""
    if math.isnan(y) or abs(y) > 1:
        return math.nan
    if abs(y) == 1:
        return math.copysign(math.inf, y)
    lo, hi = -6.0, 6.0
    for _ in range(80):
        mid = 0.5 * (lo + hi)
        if math.erf(mid) < y:
            lo = mid
        else:
            hi = mid
    x = 0.5 * (lo + hi)
    d = 2 / math.sqrt(math.pi) * math.exp(-x * x)
    return x - (math.erf(x) - y) / d if d > 0 else x


_erfinv = np.vectorize(_erfinv_one, otypes=[np.float64])


def _polygamma_samples(dtype):
    """polygamma(n, x) for n = 0, 1 (digamma's and trigamma's algorithms) and 2, 3 (the zeta series)."""
    return [Sample((n,) + sample.args, note=f"n={n}, {sample.note}")
            for n in (0, 1, 2, 3) for sample in shape_samples(dtype, 1, "positive")]


def _logit_ref(x, eps=None):
    x = np.asarray(x, dtype=np.float64)
    if eps is not None:
        x = np.clip(x, eps, 1 - eps)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.log(x / (1 - x))


def _logit_samples(d):
    return [Sample(s.args, dict(kw), note=f"{s.note} {kw}") for kw in ({}, {"eps": 0.2}, {"eps": 0.01})
            for s in shape_samples(d, 1, "probability")]


def _sgn_ref(a):
    return a.copy() if a.dtype == np.bool_ else np.sign(a)


RECORDS = [
    unary("log2", _f(np.log2), result=promoted_float, domain="positive"),
    unary("log10", _f(np.log10), result=promoted_float, domain="positive"),
    unary("exp2", _f(np.exp2), result=promoted_float),
    unary("asin", _f(np.arcsin), result=promoted_float, domain="unit"),
    unary("acos", _f(np.arccos), result=promoted_float, domain="unit"),
    unary("atan", _f(np.arctan), result=promoted_float),
    unary("sinh", _f(np.sinh), result=promoted_float),
    unary("cosh", _f(np.cosh), result=promoted_float),
    unary("tan", _f(np.tan), result=promoted_float, domain="unit"),
    unary("asinh", _f(np.arcsinh), result=promoted_float),
    unary("acosh", _f(np.arccosh), result=promoted_float, domain="above one"),
    unary("atanh", _f(np.arctanh), result=promoted_float, domain="unit"),
    unary("erfc", _f(_erfc), result=promoted_float),
    unary("erfinv", _f(_erfinv), result=promoted_float, domain="unit",
          error_inputs=lambda: [ErrorInput(lambda k: k.ones(2, dtype=k.int64).erfinv_(), RuntimeError, "",
                                           "an int64 tensor cannot hold erfinv's float result")]),
    unary("lgamma", _f(scipy.special.gammaln), result=promoted_float, domain="positive"),
    unary("digamma", _f(scipy.special.digamma), result=promoted_float, domain="positive"),
    OpRecord("polygamma", FAMILY, ALL, _polygamma_samples, ref=_f(lambda n, x: scipy.special.polygamma(n, x)),
             result_dtype=promoted_float, domain="positive",
             error_inputs=lambda: [ErrorInput(lambda k: k.polygamma(-1, k.ones(2)), RuntimeError, "negative n",
                                              "a negative order")]),
    unary("deg2rad", _f(np.deg2rad), result=promoted_float),
    unary("rad2deg", _f(np.rad2deg), result=promoted_float),
    unary("sgn", _sgn_ref, dtypes=ALL),
    OpRecord("logit", FAMILY, ALL, _logit_samples, ref=_f(_logit_ref), result_dtype=promoted_float,
             domain="probability",
             error_inputs=lambda: [ErrorInput(lambda k: k.ones(2, dtype=k.int64).logit_(), RuntimeError, "",
                                              "an int64 tensor cannot hold logit's float result"),
                                   ErrorInput(lambda k: k.logit(k.ones(2), eps="a"), TypeError, "",
                                              "eps must be a number")]),
    binary("hypot", np.hypot, dtypes=FLOATS,
           error_inputs=lambda: [ErrorInput(lambda k: k.hypot(k.ones(2), k.ones(3)), RuntimeError, "size",
                                            "shapes that do not broadcast")]),
    binary("_special_zeta", _f(scipy.special.zeta), result=promoted_float, domain="above one",
           other_domain="positive", api="_C._special_zeta",
           error_inputs=lambda: [ErrorInput(lambda k: k._C._special_zeta(k.ones(2, 3), k.ones(4)), RuntimeError,
                                            "must match the size", "shapes (2,3) and (4,) do not broadcast")],
           derivative_not_implemented="kiln.special.zeta's autograd Function gives torch's gradients (q's, not x's)"),
    binary("copysign.Tensor", _f(np.copysign), result=promoted_float),
    scalar_other("copysign.Scalar", _f(np.copysign), result=promoted_float, scalars=(-2, 2.5)),
]
