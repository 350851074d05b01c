"""mvlgamma and i0 (torch's names, dtypes and derivatives), and polygamma's argument checks and method
forms. lgamma, digamma and polygamma are C++ ops (schema/native_functions.yaml); i0 and i1 are computed
here in float64 with NumPy and Python's math module and rounded once to the result dtype, as autograd
Functions whose backward calls the next function of the family (i0' = i1), so double backward works.
No vector kernels: these loop in Python over the elements, and are meant for the sizes tests and
losses use, not for hot loops."""
import math

import numpy as np

from . import _C
from .autograd.function import Function

_FLOATS = None


def _is_float(t):
    return t.is_floating_point()


def _result_dtype(t):
    return t.dtype if _is_float(t) else _C.get_default_dtype()


def _f64(t):
    return t.detach().to(_C.float64).contiguous().numpy()


def _wrap(values, dtype):
    values = np.asarray(values, dtype=np.float64)
    # (ascontiguousarray alone would turn a 0-dim array into a 1-element vector)
    return _C.from_numpy(np.ascontiguousarray(values).reshape(values.shape)).to(dtype)


def _i1_scalar(x):
    """Modified Bessel function I1: its power series below 20, the asymptotic expansion above."""
    ax = abs(x)
    if math.isnan(x):
        return math.nan
    if ax == math.inf:
        return math.copysign(math.inf, x)
    if ax < 20:
        half = ax / 2
        term = half
        total = term
        k = 0
        while True:
            k += 1
            term *= half * half / (k * (k + 1))
            total += term
            if term <= total * 1e-17:  # <=: at 0 both are 0
                break
        result = total
    else:
        total, term, k = 1.0, 1.0, 0
        while k < 40:
            k += 1
            new = term * -(4 - (2 * k - 1) ** 2) / (k * 8 * ax)
            if abs(new) >= abs(term):
                break
            term = new
            total += term
            if abs(term) < 1e-17 * abs(total):
                break
        try:
            result = math.exp(ax) / math.sqrt(2 * math.pi * ax) * total
        except OverflowError:
            result = math.inf
    return math.copysign(result, x)


_u = {"i1": np.frompyfunc(_i1_scalar, 1, 1)}
def _unary_values(name, x):
    # np.asarray: a ufunc of a 0-dim array gives a bare Python float
    if name == "i0":
        with np.errstate(over="ignore"):
            return np.asarray(np.i0(x), dtype=np.float64)
    return np.asarray(_u[name](x), dtype=np.float64)


class _Unary(Function):
    """name(x) from NumPy; its derivative from the next function of the family."""

    @staticmethod
    def forward(ctx, name, x):
        ctx.name = name
        ctx.save_for_backward(x)
        return _wrap(_unary_values(name, _f64(x)), _result_dtype(x))

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        if ctx.name == "i0":
            return None, grad * _I1.apply(x)
        raise RuntimeError(f"the derivative for '{ctx.name}' is not implemented.")


class _I1(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return _wrap(_unary_values("i1", _f64(x)), _result_dtype(x))

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        # I1' = I0 - I1 / x (1/2 at 0)
        i1 = _I1.apply(x)
        safe = x + (x == 0).to(x.dtype)
        ratio = _C.where(x == 0, _C.full([], 0.5, dtype=i1.dtype), i1 / safe)
        return grad * (_Unary.apply("i0", x) - ratio)


def _check_tensor(name, x):
    if not isinstance(x, _C.TensorBase):
        raise TypeError(f"{name}(): argument 'input' (position 1) must be Tensor, not {type(x).__name__}")


def _inplace(self, result):
    if not self.is_floating_point():
        raise RuntimeError(f"result type Float can't be cast to the desired output type "
                           f"{_int_name(self.dtype)}")
    return self.copy_(result)


def _float_name(dtype):
    return {_C.float16: "Half", _C.bfloat16: "BFloat16", _C.float32: "Float", _C.float64: "Double"}.get(dtype)


def _int_name(dtype):
    return {_C.bool: "Bool", _C.uint8: "Byte", _C.int8: "Char", _C.int16: "Short", _C.int32: "Int",
            _C.int64: "Long"}.get(dtype, str(dtype))


def _check_out(name, input, out):
    """torch's rule for out= forms: no autograd through them."""
    if out is not None and input.requires_grad and _C.is_grad_enabled():
        raise RuntimeError(f"{name}(): functions with out=... arguments don't support automatic differentiation, "
                           "but one of the arguments requires grad.")


def _out(result, out):
    if out is None:
        return result
    if out.is_floating_point() is False:  # a float result into an integer out=, as torch's unary ops refuse
        raise RuntimeError(f"result type {_float_name(result.dtype)} can't be cast to the desired output type "
                           f"{_int_name(out.dtype)}")
    out.resize_(list(result.shape))
    return out.copy_(result)


def polygamma(n, input, *, out=None):
    """torch.polygamma(n, input): the C++ op (runtime/kernels/cpu/polygamma_op.cc), with torch's
    argument errors."""
    _check_tensor("polygamma", input)
    if isinstance(n, bool) or not hasattr(n, "__index__") or (isinstance(n, _C.TensorBase) and n.is_floating_point()):
        raise TypeError(f"polygamma(): argument 'n' (position 1) must be int, not {type(n).__name__}")
    return _C.polygamma(n.__index__(), input, out=out)


def i0(input, *, out=None):
    _check_tensor("i0", input)
    _check_out("i0", input, out)
    return _out(_Unary.apply("i0", input), out)


def mvlgamma(input, p, *, out=None):
    """sum_{i < p} lgamma(x - i / 2) + p (p - 1) / 4 log(pi) (torch 1.13's formula and check: elements
    at most (p - 1) / 2 give inf, as there, not an error)."""
    _check_tensor("mvlgamma", input)
    _check_out("mvlgamma", input, out)
    if isinstance(p, bool) or not hasattr(p, "__index__") or (isinstance(p, _C.TensorBase) and p.is_floating_point()):
        raise TypeError(f"mvlgamma(): argument 'p' (position 2) must be int, not {type(p).__name__}")
    p = p.__index__()
    if p < 1:
        raise RuntimeError("p has to be greater than or equal to 1")
    x = input if input.is_floating_point() else input.to(_C.get_default_dtype())
    args = _C.arange(-p * 0.5 + 0.5, 0.5, 0.5, dtype=x.dtype)
    args = args + x.unsqueeze(-1)
    return _out(_C.lgamma(args).sum(-1) + p * (p - 1) * math.log(math.pi) * 0.25, out)


def install(namespace, tensor_cls):
    for fn in (polygamma, i0, mvlgamma):
        namespace.setdefault(fn.__name__, fn)
    tensor_cls.polygamma = lambda self, n: polygamma(n, self)
    tensor_cls.i0 = lambda self: i0(self)
    tensor_cls.mvlgamma = lambda self, p: mvlgamma(self, p)
    tensor_cls.polygamma_ = lambda self, n: _inplace(self, polygamma(n, self.clone() if self.requires_grad else self))
    tensor_cls.i0_ = lambda self: _inplace(self, i0(self.clone() if self.requires_grad else self))
    tensor_cls.mvlgamma_ = lambda self, p: _inplace(self, mvlgamma(self.clone() if self.requires_grad else self, p))
    for name in ("polygamma", "i0", "mvlgamma", "polygamma_", "i0_", "mvlgamma_"):
        fn = getattr(tensor_cls, name)
        fn.__name__ = fn.__qualname__ = name
