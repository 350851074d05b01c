"""out= for the functions whose results are named tuples or that the bindings take without out:
sort, topk, max/min over a dim, argmax/argmin, kthvalue. The op runs as usual, then its results go
into the out tensors as torch's out= variants do: each out must have the result's dtype
(RuntimeError otherwise), is resized to the result's shape (with torch's warning when it had
elements), and the out tensors come back in the same named tuple."""
import os
import sys
import warnings

from . import _C

_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))


def _caller_stacklevel():
    """The stacklevel of the first frame outside kiln's package: the warning names the user's line."""
    level, frame = 1, sys._getframe(1)
    while frame is not None and os.path.dirname(os.path.abspath(frame.f_code.co_filename)).startswith(_PACKAGE_DIR):
        frame = frame.f_back
        level += 1
    return level

_LEGACY = {"float32": "float", "float64": "double", "float16": "Half", "bfloat16": "BFloat16", "int64": "long",
           "int32": "int", "int16": "short", "int8": "signed char", "uint8": "unsigned char", "bool": "bool"}


def _dtype_name(t):
    return _LEGACY.get(str(t.dtype).split(".")[1], str(t.dtype))


def _write(result, out):
    if result.dtype != out.dtype:
        raise RuntimeError(f"Expected out tensor to have dtype {_dtype_name(result)}, but got {_dtype_name(out)} "
                           f"instead")
    if tuple(out.shape) != tuple(result.shape):
        if out.numel():
            warnings.warn(f"An output with one or more elements was resized since it had shape {list(out.shape)}, "
                          f"which does not match the required output shape {list(result.shape)}. This behavior is "
                          "deprecated, and in a future PyTorch release outputs will not be resized unless they have "
                          "zero elements. You can explicitly reuse an out tensor t by resizing it, inplace, to zero "
                          "elements with t.resize_(0).", UserWarning, stacklevel=_caller_stacklevel())
        out.resize_(tuple(result.shape))
    out.copy_(result)
    return out


def _requires_grad(args, kwargs):
    if not _C.is_grad_enabled():
        return False
    return any(isinstance(a, _C.TensorBase) and a.requires_grad for a in list(args) + list(kwargs.values()))


def with_out(name, fn):
    """fn with an out= keyword: a tensor for a tensor result, a tuple of tensors for a named tuple."""
    def wrapper(*args, out=None, **kwargs):
        if out is None:
            return fn(*args, **kwargs)
        if _requires_grad(args, kwargs):
            raise RuntimeError(f"{name}(): functions with out=... arguments don't support automatic differentiation, "
                               "but one of the arguments requires grad.")
        result = fn(*args, **kwargs)
        if isinstance(result, tuple):
            if not isinstance(out, (tuple, list)) or len(out) != len(result) or \
                    not all(isinstance(o, _C.TensorBase) for o in out):
                raise TypeError(f"{name}(): argument 'out' must be tuple of {len(result)} Tensors, "
                                f"not {type(out).__name__}")
            written = tuple(_write(r, o) for r, o in zip(result, out))
            make = getattr(type(result), "_make", type(result))  # a namedtuple, or a C struct sequence
            return make(written)
        if not isinstance(out, _C.TensorBase):
            raise TypeError(f"{name}(): argument 'out' must be Tensor, not {type(out).__name__}")
        return _write(result, out)
    wrapper.__name__ = wrapper.__qualname__ = name
    wrapper.__doc__ = getattr(fn, "__doc__", None)
    return wrapper
