"""More of torch.special, composed from kiln's ops (their gradients follow from those): entr, ndtr,
ndtri, log_ndtr, xlog1py, i1, zeta."""
import math

from .. import _C
from ..autograd.function import Function

__all__ = ["entr", "ndtr", "ndtri", "log_ndtr", "xlog1py", "i1", "zeta"]


def _float(x):
    return x if x.is_floating_point() else x.to(_C.get_default_dtype())


def _check(name, x):
    if not isinstance(x, _C.TensorBase):
        raise TypeError(f"special_{name}(): argument 'input' (position 1) must be Tensor, not {type(x).__name__}")


_CNAMES = {"bool": "Bool", "uint8": "Byte", "int8": "Char", "int16": "Short", "int32": "Int", "int64": "Long",
           "float16": "Half", "bfloat16": "BFloat16", "float32": "Float", "float64": "Double"}


def _with_out(result, out):
    if out is None:
        return result
    from .. import can_cast
    if not can_cast(result.dtype, out.dtype):  # torch's structured out= check (xlog1py(int, out=int64))
        name = lambda d: _CNAMES.get(str(d).split(".")[-1], str(d))  # noqa: E731
        raise RuntimeError(f"result type {name(result.dtype)} can't be cast to the desired output type "
                           f"{name(out.dtype)}")
    out.resize_(list(result.shape))
    return out.copy_(result)


class _Entr(Function):
    """-x ln x (0 at 0, -inf below 0); its derivative -(1 + ln x), as torch's (inf at 0)."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        positive = x > 0
        safe = _C.where(positive, x, _C.ones_like(x))
        value = _C.where(positive, -safe * safe.log(), _C.where(x == 0, _C.zeros_like(x), _C.full_like(x, -math.inf)))
        return _C.where(x.isnan(), x, value)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * -(x.log() + 1)


def entr(input, *, out=None):
    _check("entr", input)
    return _with_out(_Entr.apply(_float(input)), out)


def ndtr(input, *, out=None):
    """The standard normal CDF: 0.5 erfc(-x / sqrt 2) below -1 (the lower tail does not underflow),
    0.5 + 0.5 erf(x / sqrt 2) above (torch 2.x's split)."""
    _check("ndtr", input)
    x = _float(input)
    t = x * math.sqrt(0.5)
    return _with_out(_C.where(x < -1, 0.5 * _C.erfc(-t), 0.5 + 0.5 * _C.erf(t)), out)


class _Ndtri(Function):
    """sqrt 2 erfinv(2p - 1), except in the lower tail, where 2p - 1 has lost p's bits: there Newton's
    method on log_ndtr(x) = log p, from the erfinv estimate (or -sqrt(-2 log p) where that is -inf).
    Its derivative is 1 / pdf(x) = sqrt(2 pi) exp(x^2 / 2)."""

    @staticmethod
    def forward(ctx, p):
        q = p.detach().to(_C.float64)
        x = math.sqrt(2.0) * _C.erfinv(2 * q - 1)
        tail = (q > 0) & (q < 1e-3)
        if bool(tail.any()):
            qt = _C.where(tail, q, _C.full_like(q, 1e-3))
            guess = _C.where(x.isfinite() & tail, x, -(-2 * qt.log()).sqrt())
            log_q = qt.log()
            for _ in range(8):
                log_cdf = log_ndtr(guess)
                log_pdf = -0.5 * guess * guess - 0.5 * math.log(2 * math.pi)
                guess = guess - (log_cdf - log_q) * (log_cdf - log_pdf).exp()
            x = _C.where(tail, guess, x)
        x = x.to(p.dtype)
        ctx.save_for_backward(x)
        return x

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * math.sqrt(2 * math.pi) * (0.5 * x * x).exp()


def ndtri(input, *, out=None):
    """The standard normal quantile (-inf at 0, inf at 1, NaN outside [0, 1])."""
    _check("ndtri", input)
    return _with_out(_Ndtri.apply(_float(input)), out)


def log_ndtr(input, *, out=None):
    """log of the standard normal CDF: log1p(-ndtr(-x)) above -1, log(ndtr(x)) down to -10, and below,
    where ndtr underflows (float32's erfc(t) is 0 past t = 10.05, x = -14.2: log_ndtr(-20.) was -inf),
    log(erfc(t) / 2) with erfc(t) = exp(-t^2) erfcx(t) and erfcx from its continued fraction (fast to
    converge there: t > 7)."""
    _check("log_ndtr", input)
    x = _float(input)
    t = -x * math.sqrt(0.5)
    upper = (-0.5 * _C.erfc(-t)).log1p()
    middle = (0.5 * _C.erfc(t)).log()
    t_far = _C.where(x < -10, t, _C.full_like(t, 20.0))
    # erfcx(t) = 1/sqrt(pi) / (t + (1/2) / (t + 1 / (t + (3/2) / (t + 2 / ...))))
    frac = t_far
    for k in range(40, 0, -1):
        frac = t_far + (k * 0.5) / frac
    far = -t_far * t_far - frac.log() - 0.5 * math.log(math.pi) - math.log(2.0)
    return _with_out(_C.where(x < -10, far, _C.where(x < -1, middle, upper)), out)


def xlog1py(input, other, *, out=None):
    """x * log1p(y), 0 where x is 0 (unless y is NaN)."""
    from .. import result_type, tensor
    # torch's promotion (a number is a wrapped scalar: xlog1py(float32 x, 1e308) is float32, an int x with a
    # number float32); a number is read in double, then as a value of the result dtype
    dtype = result_type(input, other)
    dtype = dtype if dtype.is_floating_point else _C.get_default_dtype()
    x = (input if isinstance(input, _C.TensorBase) else tensor(float(input), dtype=_C.float64)).to(dtype)
    y = (other if isinstance(other, _C.TensorBase) else tensor(float(other), dtype=_C.float64)).to(dtype)
    value = x * y.log1p()
    return _with_out(_C.where((x == 0) & ~y.isnan(), _C.zeros_like(value), value), out)


def i1(input, *, out=None):
    """The modified Bessel function of the first kind, order 1."""
    _check("i1", input)
    from .._special_numpy import _I1
    return _with_out(_I1.apply(input), out)


class _Zeta(Function):
    """The C++ op _special_zeta (runtime/kernels/cpu/zeta_op.cc) with torch's derivatives: in q,
    -x zeta(x + 1, q); in x none (torch raises NotImplementedError when one is asked for)."""

    @staticmethod
    def forward(ctx, x, q):
        ctx.save_for_backward(x, q)
        return _C._special_zeta(x, q)

    @staticmethod
    def backward(ctx, grad):
        x, q = ctx.saved_tensors
        if ctx.needs_input_grad[0]:
            raise NotImplementedError("the derivative for 'zeta' is not implemented.")
        return None, grad * -x * zeta(x + 1, q) if ctx.needs_input_grad[1] else None


def zeta(input, other, *, out=None):
    """The Hurwitz zeta function sum_k (k + q)^-x (torch.special.zeta(x, q)) in the promoted float dtype."""
    from .. import result_type, tensor
    # torch's TensorIterator promotion: a 0-dim q does not widen a float32 x (zeta(f32, tensor(2.)) is float32),
    # a Python number is a wrapped scalar (its category counts, not its size)
    dtype = result_type(input, other) if isinstance(input, _C.TensorBase) or isinstance(other, _C.TensorBase) \
        else _C.get_default_dtype()
    dtype = dtype if dtype.is_floating_point else _C.get_default_dtype()
    # a number is read in double first: zeta(float64 x, 1e308) takes q = 1e308, not float32's inf
    x = input if isinstance(input, _C.TensorBase) else tensor(float(input), dtype=_C.float64)
    q = other if isinstance(other, _C.TensorBase) else tensor(float(other), dtype=_C.float64)
    return _with_out(_Zeta.apply(x.to(dtype), q.to(dtype)), out)
