"""out= for the kiln.linalg functions, and for the kiln functions whose bindings take none (sort,
topk, max/min over a dim, kthvalue, ...: kiln/__init__.py), with torch's rules: out must have the
result's dtype (torch's C++ type names in the message; lstsq's solution and rank only one they can
be cast to), a wrongly shaped out is resized (with torch's warning when it had elements), no input
may require grad, and an op with several results takes a tuple of that many tensors and returns
them in torch's `<op>_out` named tuple."""
import collections
import functools
import os
import sys
import warnings

import kiln

_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # kiln's

_CPP_NAMES = {kiln.float32: "float", kiln.float64: "double", kiln.int32: "int", kiln.int64: "long int",
              kiln.int16: "short int", kiln.int8: "signed char", kiln.uint8: "unsigned char", kiln.bool: "bool",
              kiln.float16: "c10::Half", kiln.bfloat16: "c10::BFloat16"}


_TORCH_NAMES = {kiln.float32: "Float", kiln.float64: "Double", kiln.int32: "Int", kiln.int64: "Long",
                kiln.int16: "Short", kiln.int8: "Char", kiln.uint8: "Byte", kiln.bool: "Bool", kiln.float16: "Half",
                kiln.bfloat16: "BFloat16"}
_OUT_TYPES = {}


def _kind(dtype):
    return 0 if dtype == kiln.bool else 2 if dtype.is_floating_point else 1


def _can_cast(src, dst):
    """torch.can_cast: never to a lower kind (float -> int -> bool); any width within a kind."""
    return _kind(dst) >= _kind(src)


def _cpp(dtype):
    return _CPP_NAMES.get(dtype, str(dtype))


def _out_type(result):
    """torch.return_types.<op>_out: the result's fields under the name torch gives out= results."""
    name = type(result).__name__ + "_out"
    if name not in _OUT_TYPES:
        fields = getattr(type(result), "_fields", None) or type(result).__match_args__
        _OUT_TYPES[name] = collections.namedtuple(name, fields)
        _OUT_TYPES[name].__module__ = "kiln.return_types"
    return _OUT_TYPES[name]


def _caller_stacklevel():
    """The stacklevel of the first frame outside kiln's package: the warning names the user's line,
    however many of kiln's wrappers lie between."""
    level, frame = 1, sys._getframe(1)
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(_PACKAGE_DIR):
        frame = frame.f_back
        level += 1
    return level


def _write(out, result, castable=None):
    """castable: (op, field) where out may be any dtype the result casts to safely."""
    if castable is not None:
        if not _can_cast(result.dtype, out.dtype):
            op, field = castable
            raise RuntimeError(f"{op}: Expected {field} to be safely castable from {_TORCH_NAMES[result.dtype]} dtype, "
                               f"but got {field} with dtype {_TORCH_NAMES[out.dtype]}")
    elif out.dtype != result.dtype:
        raise RuntimeError(f"Expected out tensor to have dtype {_cpp(result.dtype)}, but got {_cpp(out.dtype)} instead")
    if tuple(out.shape) != tuple(result.shape):
        if out.numel() != 0:
            warnings.warn(kiln._C._out_resized_message(list(out.shape), list(result.shape)), UserWarning,
                          stacklevel=_caller_stacklevel())
        out.resize_(result.shape)
    with kiln.no_grad():
        out.copy_(result)
    return out


def _check_outs(name, out, n):
    if n == 1:
        if not isinstance(out, kiln.Tensor):
            raise TypeError(f"{name}(): argument 'out' must be Tensor, not {type(out).__name__}")
        return [out]
    if not isinstance(out, (tuple, list)):
        raise TypeError(f"{name}(): argument 'out' must be tuple of Tensors, not {type(out).__name__}")
    if len(out) != n:
        raise TypeError(f"expected tuple of {n} elements but got {len(out)}")
    for t in out:
        if not isinstance(t, kiln.Tensor):
            raise TypeError(f"{name}(): argument 'out' must be tuple of Tensors, not {type(t).__name__}")
    return list(out)


# torch refuses out= under autograd for differentiable ops only: argmax(x, out=) writes its indices.
_NOT_DIFFERENTIABLE = {"argmax", "argmin"}


def with_out(fn, name, n_outputs=1, castable=None):
    """fn with an out= keyword; `name` is the op's name in torch's messages (linalg_inv_ex...);
    n_outputs None: the result decides (max(x, dim) is a pair, max(x) one tensor), and out is checked
    against it after the op ran; castable: per output, None (its exact dtype) or (op, field) (any
    dtype it casts to)."""

    @functools.wraps(fn)
    def wrapper(*args, out=None, **kwargs):
        if out is None:
            return fn(*args, **kwargs)
        outs = _check_outs(name, out, n_outputs) if n_outputs is not None else \
            [o for o in (out if isinstance(out, (tuple, list)) else [out]) if isinstance(o, kiln.Tensor)]
        inputs = [a for a in list(args) + list(kwargs.values()) if isinstance(a, kiln.Tensor)]
        if name not in _NOT_DIFFERENTIABLE and kiln.is_grad_enabled() and any(t.requires_grad for t in inputs + outs):
            raise RuntimeError(f"{name}(): functions with out=... arguments don't support automatic differentiation, "
                               "but one of the arguments requires grad.")
        result = fn(*args, **kwargs)
        n = n_outputs if n_outputs is not None else (len(result) if isinstance(result, tuple) else 1)
        if n_outputs is None:
            outs = _check_outs(name, out, n)
        results = [result] if n == 1 else list(result)
        for i, (o, r) in enumerate(zip(outs, results)):
            _write(o, r, castable[i] if castable else None)
        return outs[0] if n == 1 else _out_type(result)(*outs)

    return wrapper
