"""out= for torch functions kiln composes in Python without one (square, msort, inner, aminmax, ...).
out=None (what code that forwards its arguments passes) is the plain call; a given out takes the
result as torch's kernels check it: the exact dtype, or one the result casts to safely ('cast'), a
tuple of tensors for the functions that return several; out= refuses autograd, as torch's do."""
from . import _C

_CNAME = {"float32": "Float", "float64": "Double", "float16": "Half", "bfloat16": "BFloat16", "int64": "Long",
          "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte", "bool": "Bool"}

# name -> 'exact' (out's dtype must be the result's) or 'cast' (the result must cast to it safely)
RULES = {"addmv": "exact", "msort": "exact", "renorm": "exact", "take_along_dim": "exact", "index_reduce": "exact",
         "square": "exact", "inner": "exact", "matrix_power": "exact", "nonzero": "exact", "signbit": "exact",
         "addr": "cast", "sinc": "cast"}  # (aminmax, kthvalue, mode have theirs)


def _cname(dtype):
    return _CNAME[str(dtype).split(".")[-1]]


def _can_cast(a, b):
    from ._api_breadth import can_cast
    return can_cast(a, b)


def _into(name, rule, result, out):
    from . import _tensor
    if not isinstance(out, _C.TensorBase):
        raise TypeError(f"{name}(): argument 'out' must be Tensor, not {type(out).__name__}")
    if rule == "exact" and out.dtype != result.dtype:
        raise RuntimeError(f"Expected out tensor to have dtype {_cname(result.dtype)}, but got "
                           f"{_cname(out.dtype)} instead")
    if rule == "cast" and not _can_cast(result.dtype, out.dtype):
        raise RuntimeError(f"result type {_cname(result.dtype)} can't be cast to the desired output type "
                           f"{_cname(out.dtype)}")
    if tuple(out.shape) != tuple(result.shape):
        out.resize_(list(result.shape))
    with _tensor._no_grad():
        out.copy_(result)
    return out


def with_out(fn, name, rule):
    def wrapper(*args, out=None, **kwargs):
        if out is None:
            return fn(*args, **kwargs)
        if _C.is_grad_enabled() and any(isinstance(a, _C.TensorBase) and a.requires_grad
                                        for a in (*args, *kwargs.values())):
            raise RuntimeError(f"{name}(): functions with out=... arguments don't support automatic "
                               "differentiation, but one of the arguments requires grad.")
        result = fn(*args, **kwargs)
        if isinstance(result, tuple):
            if not isinstance(out, (tuple, list)) or len(out) != len(result):
                raise TypeError(f"{name}(): argument 'out' must be tuple of Tensors, not {type(out).__name__}")
            filled = [_into(name, rule, r, o) for r, o in zip(result, out)]
            return type(result)(*filled) if hasattr(result, "_fields") else tuple(filled)
        return _into(name, rule, result, out)
    wrapper.__name__ = wrapper.__qualname__ = name
    wrapper.__doc__ = fn.__doc__
    wrapper.__wrapped__ = fn
    return wrapper


def install(namespace):
    for name, rule in RULES.items():
        fn = namespace.get(name)
        if fn is not None:
            namespace[name] = with_out(fn, name, rule)
