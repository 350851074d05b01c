"""torch.special.i0e / i1e (exponentially scaled modified Bessel functions), erfcx (the scaled complementary
error function) and gammainc / gammaincc (the regularized incomplete gamma functions, torch.igamma / igammac
and their Tensor methods), as kiln's i0 / i1 are: computed in float64 with NumPy and Python's math module,
rounded once to the result dtype, as autograd Functions whose backward is built from the family's functions
(so double backward works). torch's edge values: i0e(+-inf) = 0, erfcx(-inf) = inf, and igamma's SciPy-style
boundaries (NaN for a negative argument, 1 / 0 at a = 0 or x = inf, ...). Like i0 and i1 these loop in
Python where there is no closed form, for the sizes programs use, not for hot loops."""
import math

import numpy as np

from .. import _C
from ..autograd.function import Function

_SQRT_PI = math.sqrt(math.pi)


def _f64(t):
    return t.detach().to(_C.float64).contiguous().numpy()


def _wrap(values, dtype):
    values = np.asarray(values, dtype=np.float64)
    return _C.from_numpy(np.ascontiguousarray(values).reshape(values.shape)).to(dtype)


def _float(x):
    return x if x.is_floating_point() else x.to(_C.get_default_dtype())


def _scaled_bessel(nu, x):
    """exp(-|x|) I_nu(x) for nu in (0, 1): the power series below 20, the asymptotic expansion above
    (whose terms shrink to ~exp(-2|x|) before they grow)."""
    if math.isnan(x):
        return math.nan
    ax = abs(x)
    if ax == math.inf:
        return math.copysign(0.0, x) if nu == 1 else 0.0
    if ax < 20:
        half = ax / 2
        term = 1.0 if nu == 0 else half
        total = term
        k = 0
        while True:
            k += 1
            term *= half * half / (k * (k + nu))
            total += term
            if term <= total * 1e-17:
                break
        result = total * math.exp(-ax)
    else:
        total, term, k = 1.0, 1.0, 0
        mu = 4 * nu * nu
        while k < 60:
            k += 1
            new = term * -(mu - (2 * k - 1) ** 2) / (k * 8 * ax)
            if abs(new) >= abs(term):
                break
            term = new
            total += term
            if abs(term) < 1e-17 * abs(total):
                break
        result = total / math.sqrt(2 * math.pi * ax)
    return math.copysign(result, x) if nu == 1 else result


_bessel = {0: np.frompyfunc(lambda v: _scaled_bessel(0, v), 1, 1),
           1: np.frompyfunc(lambda v: _scaled_bessel(1, v), 1, 1)}


def _bessel_values(nu, x):
    return np.asarray(_bessel[nu](x), dtype=np.float64)


def _erfcx_values(x):
    """exp(x^2) erfc(x): the product below 2 (exp's argument is small enough not to magnify x^2's rounding),
    the continued fraction erfc(x) = exp(-x^2) / sqrt(pi) / (x + (1/2) / (x + 1 / (x + (3/2) / ...))) above."""
    x = np.asarray(x, dtype=np.float64)
    out = np.empty_like(x)
    small = ~(x >= 2)  # NaN goes here: erfc(nan) is nan
    with np.errstate(over="ignore", invalid="ignore"):
        xs = x[small]
        # below -26.6, exp(x^2) overflows: erfcx is inf there (torch's too)
        out[small] = np.where(xs < -26.7, np.inf, np.exp(xs * xs) * np.vectorize(math.erfc, otypes=[float])(xs)
                              if xs.size else xs)
    xl = x[~small]
    if xl.size:
        t = xl.copy()
        for n in range(300, 0, -1):
            t = xl + (n / 2) / t
        out[~small] = 1 / (_SQRT_PI * t)
    return out


def _igamma_scalar(a, x, upper):
    """P(a, x) (upper=False) or Q(a, x): the series below x < a + 1, Lentz's continued fraction above."""
    if math.isnan(a) or math.isnan(x):
        return math.nan
    if x < 0 or a < 0:
        return math.nan
    if a == 0:
        return (0.0 if upper else 1.0) if x > 0 else math.nan
    if x == 0:
        return 1.0 if upper else 0.0
    if math.isinf(a):
        return math.nan if math.isinf(x) else (1.0 if upper else 0.0)
    if math.isinf(x):
        return 0.0 if upper else 1.0
    log_prefix = a * math.log(x) - x - math.lgamma(a)
    if x < a + 1:
        term = total = 1.0 / a
        ap = a
        for _ in range(100000):
            ap += 1
            term *= x / ap
            total += term
            if abs(term) < abs(total) * 1e-17:
                break
        p = total * math.exp(log_prefix)
        return 1.0 - p if upper else p
    tiny = 1e-300
    b = x + 1 - a
    c = 1 / tiny
    d = 1 / b
    h = d
    for i in range(1, 100000):
        an = -i * (i - a)
        b += 2
        d = an * d + b
        d = tiny if abs(d) < tiny else d
        c = b + an / c
        c = tiny if abs(c) < tiny else c
        d = 1 / d
        delta = d * c
        h *= delta
        if abs(delta - 1) < 1e-16:
            break
    q = math.exp(log_prefix) * h
    return q if upper else 1.0 - q


_igamma = {False: np.frompyfunc(lambda a, x: _igamma_scalar(a, x, False), 2, 1),
           True: np.frompyfunc(lambda a, x: _igamma_scalar(a, x, True), 2, 1)}


class _I0e(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return _wrap(_bessel_values(0, _f64(x)), x.dtype)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * (_I1e.apply(x) - _C.sign(x) * _I0e.apply(x))  # torch's i0e derivative


class _I1e(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return _wrap(_bessel_values(1, _f64(x)), x.dtype)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        # i1e' = i0e - i1e (sign(x) + 1 / x), 1/2 at 0
        i1e = _I1e.apply(x)
        safe = x + (x == 0).to(x.dtype)
        value = _I0e.apply(x) - i1e * (_C.sign(x) + 1 / safe)
        return grad * _C.where(x == 0, _C.full([], 0.5, dtype=x.dtype), value)


class _Erfcx(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return _wrap(_erfcx_values(_f64(x)), x.dtype)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * (2 * x * _Erfcx.apply(x) - 2 / _SQRT_PI)


class _Igamma(Function):
    """P(a, x) or Q(a, x); the derivative in x only (torch has none in a)."""

    @staticmethod
    def forward(ctx, a, x, upper):
        ctx.upper = upper
        ctx.save_for_backward(a, x)
        return _wrap(np.asarray(_igamma[upper](_f64(a), _f64(x)), dtype=np.float64), a.dtype)

    @staticmethod
    def backward(ctx, grad):
        a, x = ctx.saved_tensors
        name = "igammac" if ctx.upper else "igamma"
        if ctx.needs_input_grad[0]:
            raise NotImplementedError(f"the derivative for '{name}: input' is not implemented.")
        d = _C.exp((a - 1) * _C.log(x) - x - _C.lgamma(a))
        return None, grad * (-d if ctx.upper else d), None


def _check(name, x, arg="input", position=1):
    if not isinstance(x, _C.TensorBase):
        raise TypeError(f"{name}(): argument '{arg}' (position {position}) must be Tensor, not {type(x).__name__}")


def _with_out(result, out):
    if out is None:
        return result
    out.resize_(list(result.shape))
    return out.copy_(result)


def i0e(input, *, out=None):
    """exp(-|x|) I0(x)."""
    _check("special_i0e", input)
    return _with_out(_I0e.apply(_float(input)), out)


def i1e(input, *, out=None):
    """exp(-|x|) I1(x)."""
    _check("special_i1e", input)
    return _with_out(_I1e.apply(_float(input)), out)


def erfcx(input, *, out=None):
    """exp(x^2) erfc(x)."""
    _check("special_erfcx", input)
    return _with_out(_Erfcx.apply(_float(input)), out)


_INT_NAMES = {_C.bool: "Bool", _C.uint8: "Byte", _C.int8: "Char", _C.int16: "Short", _C.int32: "Int",
              _C.int64: "Long"}


def _igamma_op(name, input, other, upper, out):
    _check(name, input)
    _check(name, other, "other", 2)
    from .. import broadcast_tensors, promote_types
    dtype = promote_types(input.dtype, other.dtype)
    if not _C.empty(0, dtype=dtype).is_floating_point():
        raise RuntimeError(f"\"igamma{'c' if upper else ''}_cpu\" not implemented for '{_INT_NAMES.get(dtype, dtype)}'")
    a, x = broadcast_tensors(input.to(dtype), other.to(dtype))
    return _with_out(_Igamma.apply(a, x, upper), out)


def igamma(input, other, *, out=None):
    """The regularized lower incomplete gamma function P(input, other)."""
    return _igamma_op("igamma", input, other, False, out)


def igammac(input, other, *, out=None):
    """The regularized upper incomplete gamma function Q(input, other)."""
    return _igamma_op("igammac", input, other, True, out)


def gammainc(input, other, *, out=None):
    return _igamma_op("special_gammainc", input, other, False, out)


def gammaincc(input, other, *, out=None):
    return _igamma_op("special_gammaincc", input, other, True, out)


def _inplace(self, result):
    if tuple(result.shape) != tuple(self.shape):
        raise RuntimeError(f"output with shape {list(self.shape)} doesn't match the broadcast shape "
                           f"{list(result.shape)}")
    if not self.is_floating_point():
        raise RuntimeError(f"result type Float can't be cast to the desired output type "
                           f"{_INT_NAMES.get(self.dtype, self.dtype)}")
    return self.copy_(result)


def install(namespace, tensor_cls):
    """torch.igamma / igammac and the Tensor methods igamma(_), igammac(_)."""
    namespace.setdefault("igamma", igamma)
    namespace.setdefault("igammac", igammac)
    tensor_cls.igamma = lambda self, other: igamma(self, other)
    tensor_cls.igammac = lambda self, other: igammac(self, other)
    tensor_cls.igamma_ = lambda self, other: _inplace(self, igamma(self.clone() if self.requires_grad else self,
                                                                   other))
    tensor_cls.igammac_ = lambda self, other: _inplace(self, igammac(self.clone() if self.requires_grad else self,
                                                                     other))
    for name in ("igamma", "igammac", "igamma_", "igammac_"):
        fn = getattr(tensor_cls, name)
        fn.__name__ = fn.__qualname__ = name
