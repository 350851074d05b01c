"""Records of the elementwise ops: arithmetic, unary math, rounding, logical and bitwise ops,
clamp, where, masked_fill and isclose."""
import math
import operator

import numpy as np

from .record import (ALL, FLOATS, INTEGRAL, INTS, NUMERIC, wrap_int_scalar, ErrorInput, OpRecord, Sample, always, promoted,
                     promoted_float, same_dtype, shape_samples, values)

FAMILY = "pointwise"


def _binary_samples(dtype, declared, domain="real", other_domain=None, kwargs=None, mixed=True):
    other_domain = other_domain or domain
    out = []
    for s in shape_samples(dtype, 2, domain, kwargs=kwargs):
        a, b = s.args[:2]
        if other_domain != domain:
            b = _redraw(b, dtype, other_domain)
        out.append(Sample((a, b) + s.args[2:], s.kwargs, s.note))
    if mixed:  # type promotion: the other operand in each other declared dtype
        for d2 in declared:
            if d2 != dtype:
                out.append(Sample((values((2, 3), dtype, domain), values((2, 3), d2, other_domain, seed=1)),
                                  dict(kwargs or {}), note=f"{dtype} with {d2}"))
    return out


def _f(fn):
    """A float reference: integral inputs computed in float64 (NumPy would pick float16 for bool)."""
    return lambda *xs, **kw: fn(*[x.astype(np.float64) if isinstance(x, np.ndarray) else x for x in xs], **kw)


def _num(x):
    return x.astype(np.int64) if isinstance(x, np.ndarray) and x.dtype == bool else x


def _add(a, b, alpha=1):
    return _num(a) + alpha * _num(b)   # bool + bool: 1 + 1 = 2, cast to True


def _mul(a, b):
    return _num(a) * _num(b)


def _redraw(b, dtype, domain):
    """b's shape and broadcast layout, with values from another domain (e.g. nonzero divisors)."""
    if b.ndim and b.size > 1 and 0 in b.strides:
        base_shape = tuple(1 if st == 0 else n for st, n in zip(b.strides, b.shape))
        return np.broadcast_to(values(base_shape, dtype, domain, seed=1), b.shape)
    return values(b.shape, dtype, domain, seed=1)


def _shape_mismatch(name):
    return lambda: [ErrorInput(lambda k: getattr(k, name)(k.ones(2, 3), k.ones(4)), RuntimeError,
                               "must match the size", "shapes (2,3) and (4,) do not broadcast")]



def _shift_operands(a, b):
    dt = np.result_type(a, b)
    return np.asarray(a).astype(dt), np.asarray(b).astype(dt), dt, dt.itemsize * 8


def _left_shift_ref(a, b):
    """torch's <<: counts below 0 or of the type's width and more give 0; the bits wrap."""
    a, b, dt, bits = _shift_operands(a, b)
    inside = (b >= 0) & (b < bits)
    return np.where(inside, np.left_shift(a, np.where(inside, b, 0)), 0).astype(dt)


def _right_shift_ref(a, b):
    """torch's >>: counts out of range shift by the width (less the sign bit: -1 or 0 remains)."""
    a, b, dt, bits = _shift_operands(a, b)
    most = bits - (1 if dt.kind == "i" else 0)
    return np.right_shift(a, np.where((b >= 0) & (b < most), b, most).astype(dt)).astype(dt)

def unary(name, ref, dtypes=ALL, result=same_dtype, domain="real", **kw):
    return OpRecord(name, FAMILY, dtypes, lambda d: shape_samples(d, 1, domain), ref=ref, result_dtype=result,
                    domain=domain, **kw)


def binary(name, ref, dtypes=ALL, result=promoted, domain="real", other_domain=None, kwargs=None, mixed=True,
           **kw):
    kw.setdefault("error_inputs", _shape_mismatch(name.split(".")[0]))
    return OpRecord(name, FAMILY, dtypes,
                    lambda d: _binary_samples(d, dtypes, domain, other_domain, kwargs, mixed),
                    ref=ref, result_dtype=result, domain=domain, **kw)


def scalar_other(name, ref, dtypes=ALL, result=promoted, scalars=(2, 2.5), domain="real", kwargs=None, **kw):
    """Tensor op Python-scalar overloads (add.Scalar, eq.Scalar, ...)."""
    def samples(d):
        return [Sample((values(s, d, domain), c), dict(kwargs or {}), note=f"shape {s}, scalar {c!r}")
                for s in [(), (0,), (3, 4)] for c in scalars]
    return OpRecord(name, FAMILY, dtypes, samples, ref=ref, result_dtype=result, domain=domain, **kw)


def _int_div_by_zero(name, **kwargs):
    return ErrorInput(lambda k: getattr(k, name)(k.tensor([1, 2]), k.tensor([1, 0]), **kwargs), RuntimeError,
                      "ZeroDivisionError", f"{name} of integers by zero")


def _floor_div_ref(a, b):
    return np.floor_divide(a, b)


def _div_mode_ref(a, b, rounding_mode=None):
    b = wrap_int_scalar(a, b)
    if rounding_mode is None:
        return np.true_divide(a, b)
    if rounding_mode == "floor":
        return np.floor_divide(a, b)
    q = np.true_divide(a, b)
    return np.trunc(q) if a.dtype.kind == "f" else (np.abs(a) // np.abs(b)) * np.sign(a) * np.sign(b)


def _div_mode_result(sample, dtype):
    return promoted(sample, dtype) if sample.kwargs.get("rounding_mode") else promoted_float(sample, dtype)


def _div_mode_samples(d):
    out = []
    for mode in ("floor", "trunc", None):  # floor first: bool raises there
        out += _binary_samples(d, NUMERIC, "real", "nonzero", kwargs={"rounding_mode": mode}, mixed=False)
    return out


def _div_mode_inplace_samples(d):
    # In place the quotient keeps self's dtype: integers only with a rounding mode, and `other`
    # broadcasts to self's shape.
    modes = ("floor", "trunc") if d in INTEGRAL else ("floor", "trunc", None)
    return [Sample((values(s, d), values(o, d, "nonzero", seed=1)), {"rounding_mode": m}, note=f"{s} / {o}, {m}")
            for m in modes for s, o in [((), ()), ((0,), (0,)), ((3, 4), (3, 4)), ((3, 4), (4,))]]


def _div_mode_scalar_samples(d):
    return [Sample((values(s, d), c), {"rounding_mode": m}, note=f"shape {s} / {c!r}, {m}")
            for m in ("floor", "trunc", None) for s in [(), (0,), (3, 4)] for c in (2, -2.5)]


def _div_mode_scalar_inplace_samples(d):
    modes = ("floor", "trunc") if d in INTEGRAL else ("floor", "trunc", None)
    return [Sample((values(s, d), c), {"rounding_mode": m}, note=f"shape {s} / {c!r}, {m}")
            for m in modes for s in [(), (0,), (3, 4)] for c in ((2, -3) if d in INTEGRAL else (2, -2.5))]


def _div_mode_out_samples(d):
    return [s for s in _div_mode_samples(d)]


def _round_decimals_ref(a, decimals):
    return np.round(a, decimals) if a.dtype.kind == "f" else a.copy()


def _round_decimals_samples(d):
    x = (values((3, 4), d) * 37.3).astype(d)
    return [Sample((x,), {"decimals": n}, note=f"decimals={n}") for n in (0, 1, 2, -1)] + \
        [Sample((values((), d),), {"decimals": 2}, note="0-dim"), Sample((values((0,), d),), {"decimals": 1}, note="empty")]


def _pow_scalar_samples(d):
    exps = (0, 1, 2, 3) if d in INTEGRAL else (2, 0.5, -1.5, 3)
    domain = "positive"
    return [Sample((values(s, d, domain), e), note=f"shape {s} ** {e!r}") for s in [(), (0,), (3, 4)] for e in exps]


def _pow_tensor_samples(d):
    if d in FLOATS:
        return _binary_samples(d, FLOATS, "positive", "real")
    out = [Sample((values(s, d, "real"), _small_exponent(values(s, d, "real", seed=1))), note=f"shape {s}")
           for s in [(), (0,), (5,), (3, 4)]]
    return out + [Sample((values((4,), d, "real"), _small_exponent(values((3, 4), d, "real", seed=1))),
                         note="exponent broadcasts self")]


def _small_exponent(x):
    """Integer exponents in [0, 3], in x's dtype (negative integer powers raise)."""
    return x if x.dtype.kind in "fb" else (np.abs(x) % 4).astype(x.dtype)


def _scalar_base_samples(d):
    exps = lambda s: _small_exponent(values(s, d, "real"))  # noqa: E731
    return [Sample((b, exps(s)), note=f"{b!r} ** shape {s}") for s in [(), (0,), (3, 4)] for b in (2, 1.5)]


def _clamp_samples(d):
    lo, hi = (-1, 2) if d != "bool" else (False, True)
    out = []
    for s in [(), (0,), (5,), (3, 4)]:
        x = values(s, d)
        out += [Sample((x, lo, hi), note=f"shape {s}, [{lo}, {hi}]"), Sample((x,), {"min": lo}, note="min only"),
                Sample((x,), {"max": hi}, note="max only")]
    if d in FLOATS:
        out.append(Sample((values((3, 4), d), 1.5, -1.5), note="min > max gives max"))
    return out


def _clamp_ref(x, min=None, max=None):
    min, max = wrap_int_scalar(x, min), wrap_int_scalar(x, max)
    if min is not None:
        x = np.maximum(x, min)
    if max is not None:
        x = np.minimum(x, max)
    return x


def _clamp_tensor_samples(d):
    out = []
    for s in [(), (0,), (3, 4)]:
        x = values(s, d)
        lo, hi = values(s, d, seed=1), values(s, d, seed=2)
        # two bool bounds: no kernel in torch (clamp_cpu); one is maximum/minimum, which has one
        out += [Sample((x, lo, hi), note=f"shape {s}")] if d != "bool" else []
        out += [Sample((x,), {"min": lo}, note="min only"), Sample((x,), {"max": hi}, note="max only")]
    out.append(Sample((values((3, 4), d), values((4,), d, seed=1)), note="broadcast min"))
    return out


def _where_samples(d):
    out = []
    for s in [(), (0,), (5,), (3, 4)]:
        out.append(Sample((values(s, "bool", seed=3), values(s, d), values(s, d, seed=1)), note=f"shape {s}"))
    out.append(Sample((values((3, 1), "bool", seed=3), values((1, 4), d), values((4,), d, seed=1)),
                      note="all three broadcast"))
    return out


def _where_result(sample, dtype):
    from .record import result_type
    return result_type(Sample(sample.args[1:]))


def _masked_fill_samples(d):
    v = True if d == "bool" else (2 if d in INTEGRAL else -2.5)
    out = [Sample((values(s, d), values(s, "bool", seed=3), v), note=f"shape {s}") for s in [(), (0,), (5,), (3, 4)]]
    out.append(Sample((values((3, 4), d), values((4,), "bool", seed=3), v), note="broadcast mask"))
    out.append(Sample((values((4,), d), values((3, 4), "bool", seed=3), v), note="mask broadcasts self"))
    return out


def _masked_fill_ref(x, mask, value):
    return np.where(mask, np.asarray(value, dtype=x.dtype), x)


def _masked_fill_tensor_samples(d):
    """The Scalar samples with the value as a 0-dim tensor (its gradient sums the filled positions)."""
    return [Sample((s.args[0], s.args[1], values((), d, seed=5)), note=s.note) for s in _masked_fill_samples(d)]


def _isclose_samples(d):
    out = []
    for s in [(), (0,), (5,), (3, 4)]:
        a = values(s, d)
        b = a.copy()
        if d in FLOATS and a.size:
            b = (a * (1 + np.where(values(s, "bool", seed=2), 1e-6, 1e-3))).astype(a.dtype)
        out.append(Sample((a, b), note=f"shape {s}"))
        out.append(Sample((a, b), {"rtol": 1e-2, "atol": 0.0}, note="looser rtol"))
    if d in FLOATS:
        nan = np.array([np.nan, 1.0, np.inf], dtype=d)
        out += [Sample((nan, nan.copy()), note="nan, inf"),
                Sample((nan, nan.copy()), {"equal_nan": True}, note="equal_nan")]
    return out


def _with_special_values(d):
    """shape_samples plus, for floats, NaN, infinities and signed zeros."""
    out = shape_samples(d, 1)
    if d in FLOATS:
        out.append(Sample((np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1.5, -2.5], dtype=d),),
                          note="NaN, inf, -inf, zeros"))
    return out


def _float_class(name, ref):
    """isnan, isinf, isfinite: bool results, every dtype, no gradient."""
    return OpRecord(name, FAMILY, ALL, _with_special_values, ref=_f(ref), result_dtype=always("bool"))


_erf = np.vectorize(math.erf, otypes=[np.float64])  # NumPy has no erf; Python's libm does


def _gelu_ref(x, approximate="none"):
    if approximate == "tanh":
        return 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x ** 3)))
    return 0.5 * x * (1 + _erf(x / np.sqrt(2)))


def _softplus_ref(x, beta=1, threshold=20):
    z = beta * x
    with np.errstate(over="ignore"):
        return np.where(z > threshold, x, np.log1p(np.exp(z)) / beta)


_SELU_ALPHA, _SELU_SCALE = 1.6732632423543772848170429916717, 1.0507009873554804934193349852946


def _elu_ref(x, alpha=1.0, scale=1.0, input_scale=1.0):
    return np.where(x > 0, x * scale, alpha * scale * np.expm1(x * input_scale))


def _with_kwargs(*variants):
    """shape_samples, repeated with each kwargs dict (the first is usually the defaults)."""
    return lambda d: [Sample(s.args, dict(kw), note=f"{s.note} {kw}") for kw in variants for s in shape_samples(d)]


def _lerp_samples(d, tensor_weight):
    out = []
    for s in _binary_samples(d, FLOATS, mixed=False):
        w = values(np.broadcast(*s.args).shape, d, "unit", seed=5) if tensor_weight else 0.3
        out.append(Sample(s.args + (w,), note=s.note))
    if tensor_weight:
        out.append(Sample((values((3, 4), d), values((3, 4), d, seed=1), values((4,), d, "unit", seed=5)),
                          note="broadcast weight"))
    return out

RECORDS = [
    # arithmetic
    binary("add.Tensor", _add, operator=operator.add),
    scalar_other("add.Scalar", _add),
    scalar_other("add_.Scalar", lambda a, b, alpha=1: a + b, dtypes=NUMERIC, result=same_dtype, scalars=(2,)),
    binary("sub.Tensor", lambda a, b, alpha=1: a - alpha * b, dtypes=NUMERIC, operator=operator.sub,
           undeclared_error=(RuntimeError,)),
    scalar_other("sub.Scalar", lambda a, b, alpha=1: a - b, dtypes=NUMERIC, undeclared_error=(RuntimeError,)),
    scalar_other("sub_.Scalar", lambda a, b, alpha=1: a - b, dtypes=NUMERIC, result=same_dtype, scalars=(2,)),
    binary("mul.Tensor", _mul, operator=operator.mul),
    scalar_other("mul.Scalar", _mul),
    scalar_other("mul_.Scalar", lambda a, b: a * b, dtypes=NUMERIC, result=same_dtype, scalars=(2,)),
    binary("div.Tensor", _f(np.true_divide), result=promoted_float, other_domain="nonzero", operator=operator.truediv),
    scalar_other("div.Scalar", np.true_divide, result=promoted_float),
    scalar_other("div_.Scalar", np.true_divide, dtypes=FLOATS, result=same_dtype),
    OpRecord("div_.Tensor_mode", FAMILY, NUMERIC, _div_mode_inplace_samples, ref=_div_mode_ref,
             result_dtype=same_dtype, domain="divisor nonzero"),
    OpRecord("div.Scalar_mode", FAMILY, ALL, _div_mode_scalar_samples, ref=lambda a, b, **kw: _div_mode_ref(_num(a), b, **kw),
             result_dtype=_div_mode_result),
    OpRecord("div_.Scalar_mode", FAMILY, NUMERIC, _div_mode_scalar_inplace_samples, ref=_div_mode_ref,
             result_dtype=same_dtype),
    OpRecord("div.out_mode", FAMILY, NUMERIC, _div_mode_out_samples, ref=_div_mode_ref, result_dtype=_div_mode_result,
             domain="divisor nonzero"),
    OpRecord("round.decimals", FAMILY, FLOATS, _round_decimals_samples, ref=_round_decimals_ref),
    OpRecord("round_.decimals", FAMILY, FLOATS, _round_decimals_samples, ref=_round_decimals_ref),
    OpRecord("div.Tensor_mode", FAMILY, NUMERIC, _div_mode_samples, ref=_div_mode_ref, result_dtype=_div_mode_result,
             domain="divisor nonzero",
             error_inputs=lambda: [_int_div_by_zero("div", rounding_mode="floor"),
                                   _int_div_by_zero("div", rounding_mode="trunc"),
                                   ErrorInput(lambda k: k.div(k.ones(2), k.ones(2), rounding_mode="round"),
                                              RuntimeError, "rounding_mode", "unknown rounding mode")]),
    binary("floor_divide", _floor_div_ref, dtypes=NUMERIC, other_domain="nonzero", operator=operator.floordiv,
           error_inputs=lambda: [_int_div_by_zero("floor_divide")]),
    binary("remainder.Tensor", np.remainder, dtypes=NUMERIC, other_domain="nonzero", operator=operator.mod,
           error_inputs=lambda: [_int_div_by_zero("remainder")]),
    binary("fmod.Tensor", np.fmod, dtypes=NUMERIC, other_domain="nonzero",
           error_inputs=lambda: [_int_div_by_zero("fmod")]),
    scalar_other("fmod.Scalar", np.fmod, dtypes=ALL, scalars=(2, -1.5)),  # bool promotes to the scalar
    binary("atan2", _f(np.arctan2), result=promoted_float),
    OpRecord("pow.Tensor_Tensor", FAMILY, NUMERIC, _pow_tensor_samples, ref=np.power, result_dtype=promoted,
             domain="base positive", operator=operator.pow),
    # unary
    unary("neg", np.negative, dtypes=NUMERIC, operator=operator.neg, undeclared_error=(RuntimeError,)),
    unary("exp", _f(np.exp), result=promoted_float),
    unary("tanh", _f(np.tanh), result=promoted_float),
    unary("sigmoid", _f(lambda x: 1 / (1 + np.exp(-x))), result=promoted_float),
    unary("abs", np.abs, dtypes=NUMERIC, operator=operator.abs),
    unary("log", _f(np.log), result=promoted_float, domain="positive"),
    unary("sqrt", _f(np.sqrt), result=promoted_float, domain="positive"),
    unary("rsqrt", _f(lambda x: 1 / np.sqrt(x)), result=promoted_float, domain="positive"),
    unary("reciprocal", _f(np.reciprocal), result=promoted_float, domain="nonzero"),
    unary("log1p", _f(np.log1p), result=promoted_float, domain="positive"),
    unary("expm1", _f(np.expm1), result=promoted_float),
    unary("sin", _f(np.sin), result=promoted_float),
    unary("cos", _f(np.cos), result=promoted_float),
    unary("erf", _f(_erf), result=promoted_float),
    # activations (composites: gradients from the ops they are written with)
    OpRecord("gelu", FAMILY, FLOATS, _with_kwargs({}, {"approximate": "tanh"}), ref=_gelu_ref,
             error_inputs=lambda: [ErrorInput(lambda k: k.gelu(k.ones(2), approximate="fast"), RuntimeError,
                                              "approximate", "unknown approximation")]),
    OpRecord("silu", FAMILY, FLOATS, _with_kwargs({}), ref=lambda x: x / (1 + np.exp(-x))),
    OpRecord("leaky_relu", FAMILY, FLOATS, _with_kwargs({}, {"negative_slope": 0.2}),
             ref=lambda x, negative_slope=0.01: np.where(x > 0, x, x * negative_slope)),
    OpRecord("hardtanh", FAMILY, NUMERIC, lambda d: (_with_kwargs({})(d) if d != "uint8" else
                                                     _with_kwargs({"min_val": 1, "max_val": 3})(d)) + (
        _with_kwargs({"min_val": -2.5, "max_val": 0.5})(d) if d in FLOATS else []),
        ref=lambda x, min_val=-1, max_val=1: np.clip(x, min_val, max_val),
        error_inputs=lambda: [ErrorInput(lambda k: k.hardtanh(k.ones(2, dtype=k.uint8)), RuntimeError,
                                         "cannot do hardtanh on an unsigned type with negative limits",
                                         "uint8 with the default limits")]),
    OpRecord("softplus", FAMILY, FLOATS, _with_kwargs({}, {"beta": 2, "threshold": 1}), ref=_softplus_ref),
    OpRecord("elu", FAMILY, FLOATS, _with_kwargs({}, {"alpha": 0.5, "scale": 2.0, "input_scale": 1.5}), ref=_elu_ref),
    *[OpRecord(name, FAMILY, FLOATS, _with_kwargs({}), ref=lambda x: _elu_ref(x, _SELU_ALPHA, _SELU_SCALE))
      for name in ("selu", "selu_")],
    *[OpRecord(name, FAMILY, FLOATS, _with_kwargs({}, {"alpha": 2.0}),
               ref=lambda x, alpha=1.0: _elu_ref(x, alpha, 1.0, 1.0 / alpha),
               error_inputs=lambda name=name: [ErrorInput(lambda k: getattr(k, name)(k.ones(2), 0.0), RuntimeError,
                                                          "alpha cannot be 0 for CELU", "alpha 0")])
      for name in ("celu", "celu_")],
    OpRecord("mish", FAMILY, FLOATS, _with_kwargs({}), ref=lambda x: x * np.tanh(np.logaddexp(0, x))),
    OpRecord("hardswish", FAMILY, FLOATS, _with_kwargs({}), ref=lambda x: x * np.clip(x + 3, 0, 6) / 6),
    OpRecord("hardsigmoid", FAMILY, FLOATS, _with_kwargs({}), ref=lambda x: np.clip(x + 3, 0, 6) / 6),
    OpRecord("log_sigmoid", FAMILY, FLOATS, _with_kwargs({}), ref=lambda x: -np.logaddexp(0, -x)),
    OpRecord("softshrink", FAMILY, FLOATS, _with_kwargs({}, {"lambd": 1.5}),
             ref=lambda x, lambd=0.5: np.where(x > lambd, x - lambd, np.where(x < -lambd, x + lambd, 0 * x)),
             error_inputs=lambda: [ErrorInput(lambda k: k.softshrink(k.ones(2), -1.0), RuntimeError,
                                              "lambda must be greater or equal to 0", "negative lambd")]),
    OpRecord("hardshrink", FAMILY, FLOATS, _with_kwargs({}, {"lambd": 1.5}),
             ref=lambda x, lambd=0.5: np.where(np.abs(x) <= lambd, 0 * x, x)),
    OpRecord("threshold", FAMILY, NUMERIC, lambda d: shape_samples(d, 1, extra=(1, 20)),
             ref=lambda x, threshold, value: np.where(x <= threshold, value, x).astype(x.dtype)),
    OpRecord("lerp.Scalar", FAMILY, FLOATS, lambda d: _lerp_samples(d, False),
             ref=lambda a, b, w: a + w * (b - a), domain="weight in [-0.9, 0.9]"),
    OpRecord("lerp.Tensor", FAMILY, FLOATS, lambda d: _lerp_samples(d, True),
             ref=lambda a, b, w: a + w * (b - a), domain="weight in [-0.9, 0.9]"),
    _float_class("isnan", np.isnan),
    _float_class("isinf", np.isinf),
    _float_class("isfinite", np.isfinite),
    unary("relu", lambda x: np.maximum(x, 0), dtypes=NUMERIC),
    unary("sign", lambda a: a.copy() if a.dtype == np.bool_ else np.sign(a), dtypes=ALL),  # sign(bool) is itself
    unary("floor", np.floor, dtypes=NUMERIC),
    unary("ceil", np.ceil, dtypes=NUMERIC),
    unary("trunc", np.trunc, dtypes=NUMERIC),
    unary("round", np.round, dtypes=NUMERIC),
    OpRecord("pow.Tensor_Scalar", FAMILY, ALL, _pow_scalar_samples, ref=np.power, result_dtype=promoted,
             domain="positive", operator=operator.pow),
    OpRecord("pow.Scalar", FAMILY, ALL, _scalar_base_samples, ref=np.power, result_dtype=promoted,
             operator=operator.pow),
    # extrema and clamping
    binary("maximum", np.maximum),
    binary("fmax", np.fmax),
    binary("fmin", np.fmin),
    binary("minimum", np.minimum),
    OpRecord("clamp", FAMILY, NUMERIC, _clamp_samples, ref=_clamp_ref, result_dtype=promoted),
    OpRecord("clip", FAMILY, NUMERIC, _clamp_samples, ref=_clamp_ref, result_dtype=promoted),
    OpRecord("clamp.Tensor", FAMILY, ALL, _clamp_tensor_samples, ref=_clamp_ref, result_dtype=promoted,
             error_inputs=lambda: [ErrorInput(lambda k: k.clamp(k.tensor([True]), k.tensor([False]), k.tensor([True])),
                                              RuntimeError, "clamp_cpu", "two bool bounds")]),
    # logical and bitwise
    binary("logical_and", np.logical_and, result=always("bool")),
    binary("logical_or", np.logical_or, result=always("bool")),
    binary("logical_xor", np.logical_xor, result=always("bool")),
    unary("logical_not", np.logical_not, result=always("bool")),
    binary("bitwise_and.Tensor", np.bitwise_and, dtypes=INTEGRAL, operator=operator.and_),
    binary("bitwise_or.Tensor", np.bitwise_or, dtypes=INTEGRAL, operator=operator.or_),
    binary("bitwise_xor.Tensor", np.bitwise_xor, dtypes=INTEGRAL, operator=operator.xor),
    unary("bitwise_not", np.invert, dtypes=INTEGRAL, operator=operator.invert),
    binary("bitwise_left_shift.Tensor", _left_shift_ref, dtypes=INTS, operator=operator.lshift),
    binary("bitwise_right_shift.Tensor", _right_shift_ref, dtypes=INTS, operator=operator.rshift),
    # selection
    OpRecord("where.self", FAMILY, ALL, _where_samples, ref=np.where, result_dtype=_where_result),
    OpRecord("masked_fill.Scalar", FAMILY, ALL, _masked_fill_samples, ref=_masked_fill_ref),
    OpRecord("masked_fill.Tensor", FAMILY, ALL, _masked_fill_tensor_samples, ref=_masked_fill_ref),
    OpRecord("masked_fill_.Tensor", FAMILY, ALL,
             lambda d: [s for s in _masked_fill_tensor_samples(d) if s.note != "mask broadcasts self"],
             ref=_masked_fill_ref),
    OpRecord("masked_fill_.Scalar", FAMILY, ALL,
             lambda d: [s for s in _masked_fill_samples(d) if s.note != "mask broadcasts self"],
             ref=_masked_fill_ref),
    OpRecord("isclose", FAMILY, ALL, _isclose_samples, ref=np.isclose, result_dtype=always("bool")),
]
