"""out= for the kiln.linalg functions, with torch's rules: out must have the result's dtype
(torch's C++ type names in the message), a wrongly shaped out is resized (with torch's warning
when it had elements), no input may require grad, and an op with several results takes a tuple
of that many tensors and returns them in its named tuple."""
import functools
import warnings

import kiln

_CPP_NAMES = {kiln.float32: "float", kiln.float64: "double", kiln.int32: "int", kiln.int64: "long int",
              kiln.int16: "short int", kiln.int8: "signed char", kiln.uint8: "unsigned char", kiln.bool: "bool",
              kiln.float16: "c10::Half", kiln.bfloat16: "c10::BFloat16"}


def _cpp(dtype):
    return _CPP_NAMES.get(dtype, str(dtype))


def _write(out, result):
    if out.dtype != result.dtype:
        raise RuntimeError(f"Expected out tensor to have dtype {_cpp(result.dtype)}, but got {_cpp(out.dtype)} instead")
    if tuple(out.shape) != tuple(result.shape):
        if out.numel() != 0:
            warnings.warn(f"An output with one or more elements was resized since it had shape {list(out.shape)}, "
                          f"which does not match the required output shape {list(result.shape)}. This behavior is "
                          "deprecated, and in a future PyTorch release outputs will not be resized unless they have "
                          "zero elements. You can explicitly reuse an out tensor t by resizing it, inplace, to zero "
                          "elements with t.resize_(0).", UserWarning, stacklevel=4)
        out.resize_(result.shape)
    with kiln.no_grad():
        out.copy_(result)


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


def with_out(fn, name, n_outputs=1):
    """fn with an out= keyword; `name` is the op's name in torch's messages (linalg_inv_ex...)."""

    @functools.wraps(fn)
    def wrapper(*args, out=None, **kwargs):
        if out is None:
            return fn(*args, **kwargs)
        outs = _check_outs(name, out, n_outputs)
        inputs = [a for a in list(args) + list(kwargs.values()) if isinstance(a, kiln.Tensor)]
        if kiln.is_grad_enabled() and any(t.requires_grad for t in inputs + outs):
            raise RuntimeError(f"{name}(): functions with out=... arguments don't support automatic differentiation, "
                               "but one of the arguments requires grad.")
        result = fn(*args, **kwargs)
        results = [result] if n_outputs == 1 else list(result)
        for o, r in zip(outs, results):
            _write(o, r)
        return outs[0] if n_outputs == 1 else type(result)(tuple(outs))

    return wrapper
