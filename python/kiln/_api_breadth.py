"""torch-level names that torch 2.x programs use and kiln had under other names, or not at all, composed
of kiln's differentiable ops (tests/python/test_api_breadth*.py compare each with torch 1.13):
torch.conv1d and friends (nn.functional's), aliases (fix, arctan2, moveaxis, concatenate, ger, ...),
the in-place function forms (torch.exp_, ...), creation helpers (range, asarray, frombuffer,
scalar_tensor), the window functions, global switches (set_warn_always, set_flush_denormal, ...) and
Tensor methods (fill_diagonal_, eq_, cumsum_, exponential_, put_, sum_to_size, mT/mH/H, ...).
install(namespace) puts them into kiln's namespace and onto Tensor."""
import builtins
import collections
import math
import threading
import warnings

import numpy as np

from . import _C
from ._device import check_cpu
from ._tensor import Tensor

_kiln = None  # the kiln module, set by install()


# ---------------------------------------------------------------- small helpers
def _k():
    return _kiln


def _same_as(self, result):
    """self overwritten by result (an in-place method composed of out-of-place ops)."""
    return self.copy_(result)


# ---------------------------------------------------------------- torch-level aliases of nn.functional
def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    return _k().nn.functional.conv1d(input, weight, bias, stride, padding, dilation, groups)


def conv3d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    return _k().nn.functional.conv3d(input, weight, bias, stride, padding, dilation, groups)


def conv_transpose1d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    return _k().nn.functional.conv_transpose1d(input, weight, bias, stride, padding, output_padding, groups, dilation)


def conv_transpose2d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    return _k().nn.functional.conv_transpose2d(input, weight, bias, stride, padding, output_padding, groups, dilation)


def conv_transpose3d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    return _k().nn.functional.conv_transpose3d(input, weight, bias, stride, padding, output_padding, groups, dilation)


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-05, cudnn_enabled=True):
    _check_int("group_norm", "num_groups", 2, num_groups)
    return _k().nn.functional.group_norm(input, num_groups, weight, bias, eps)


def instance_norm(input, weight, bias, running_mean, running_var, use_input_stats, momentum, eps, cudnn_enabled):
    return _k().nn.functional.instance_norm(input, running_mean, running_var, weight, bias, use_input_stats,
                                            momentum, eps)


def bilinear(input1, input2, weight, bias=None):
    return _k().nn.functional.bilinear(input1, input2, weight, bias)


def cosine_similarity(x1, x2, dim=1, eps=1e-08):
    return _k().nn.functional.cosine_similarity(x1, x2, dim, eps)


def pairwise_distance(x1, x2, p=2.0, eps=1e-06, keepdim=False):
    return _k().nn.functional.pairwise_distance(x1, x2, p, eps, keepdim)


def pdist(input, p=2.0):
    return _k().nn.functional.pdist(input, p)


def max_pool1d(input, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
    return _k().nn.functional.max_pool1d(input, kernel_size, stride if stride != () else None, padding, dilation,
                                         ceil_mode)


def max_pool1d_with_indices(input, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
    return _k().nn.functional.max_pool1d(input, kernel_size, stride if stride != () else None, padding, dilation,
                                         ceil_mode, return_indices=True)


def max_pool3d(input, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
    return _k().nn.functional.max_pool3d(input, kernel_size, stride if stride != () else None, padding, dilation,
                                         ceil_mode)


def avg_pool1d(input, kernel_size, stride=(), padding=0, ceil_mode=False, count_include_pad=True):
    return _k().nn.functional.avg_pool1d(input, kernel_size, stride if stride != () else None, padding, ceil_mode,
                                         count_include_pad)


def adaptive_avg_pool1d(input, output_size):
    return _k().nn.functional.adaptive_avg_pool1d(input, output_size)


def adaptive_max_pool1d(input, output_size):
    """torch.adaptive_max_pool1d returns (output, indices), as the ATen op."""
    return _k().nn.functional.adaptive_max_pool1d(input, output_size, return_indices=True)


def channel_shuffle(input, groups):
    return _k().nn.functional.channel_shuffle(input, groups)


native_channel_shuffle = channel_shuffle


# ---------------------------------------------------------------- dropout variants (torch's _dropout_impl)
_ALPHA = 1.7580993408473766


def _dropout_impl(input, p, train, feature, alpha, inplace):
    """torch's ATen _dropout_impl: a bernoulli(1 - p) draw of input's dtype (of shape (N, C, 1, ...) for the
    feature variants) from the default generator, so the numbers are torch's."""
    kiln = _k()
    if p < 0 or p > 1:
        raise RuntimeError(f"dropout probability has to be between 0 and 1, but got {p}")
    if p == 0 or not train or input.numel() == 0:
        return input
    if p == 1:
        zero = kiln.zeros([], dtype=input.dtype)
        return input.mul_(zero) if inplace else input * zero
    if feature:
        if input.dim() < 2:
            raise RuntimeError("Feature dropout requires at least 2 dimensions in the input")
        noise = kiln.empty(list(input.shape[:2]) + [1] * (input.dim() - 2), dtype=input.dtype)
    else:
        noise = kiln.empty(list(input.shape), dtype=input.dtype)
    noise.bernoulli_(1 - p)
    if alpha:
        a = 1.0 / math.sqrt((_ALPHA * _ALPHA * p + 1) * (1 - p))
        b = noise.add(-1).mul_(_ALPHA * a).add_(_ALPHA * a * p)
        noise.mul_(a)
        out = input.mul_(noise) if inplace else input * noise
        return out.add_(b)
    noise.div_(1 - p)
    return input.mul_(noise) if inplace else input * noise


def dropout_(input, p, train):
    return _dropout_impl(input, p, train, False, False, True)


def feature_dropout(input, p, train):
    return _dropout_impl(input, p, train, True, False, False)


def feature_dropout_(input, p, train):
    return _dropout_impl(input, p, train, True, False, True)


def alpha_dropout(input, p, train):
    return _dropout_impl(input, p, train, False, True, False)


def alpha_dropout_(input, p, train):
    return _dropout_impl(input, p, train, False, True, True)


def feature_alpha_dropout(input, p, train):
    return _dropout_impl(input, p, train, True, True, False)


def feature_alpha_dropout_(input, p, train):
    return _dropout_impl(input, p, train, True, True, True)


# ---------------------------------------------------------------- aliases and small functions
def broadcast_to(input, size):
    return input.broadcast_to(size)


def moveaxis(input, source, destination):
    return input.movedim(source, destination)


def concatenate(tensors, dim=None, *, out=None, axis=None):
    """torch.concatenate(tensors, dim=0, *, out=None); torch's parser takes NumPy's `axis` for `dim`."""
    if dim is not None and axis is not None:
        raise TypeError("concatenate() received an invalid combination of arguments - got both dim and axis")
    dim = axis if axis is not None else 0 if dim is None else dim
    if out is not None:
        return _k().cat(tensors, dim, out=out)
    return _k().cat(tensors, dim)


def positive(input):
    if input.dtype == _k().bool:
        raise RuntimeError("The `+` operator, on a bool tensor is not supported.")
    return input


def negative_(input):
    return input.neg_()


def fix(input, *, out=None):
    return _k().trunc(input) if out is None else _k().trunc(input, out=out)


def fix_(input):
    return input.trunc_()


def arctan2(input, other, *, out=None):
    return _k().atan2(input, other) if out is None else _k().atan2(input, other, out=out)


def rsub(input, other, alpha=1):
    """other - alpha * input (torch.rsub); a number other is a 0-dim tensor, as torch wraps it."""
    kiln = _k()
    if not isinstance(other, Tensor):
        if isinstance(other, builtins.bool):
            other = kiln.tensor(other)
        elif isinstance(other, int):
            other = kiln.tensor(other, dtype=kiln.int64)
        else:  # a float beside an integer tensor is the default dtype, as a wrapped number
            other = kiln.tensor(float(other), dtype=kiln.float64 if input.is_floating_point()
                                else kiln.get_default_dtype())
    return kiln.sub(other, input, alpha=alpha)


def scalar_tensor(s, *, dtype=None, layout=None, device=None, pin_memory=None, requires_grad=False):
    check_cpu(device)
    kiln = _k()
    t = kiln.full([], s, dtype=dtype if dtype is not None else kiln.get_default_dtype())
    return t.requires_grad_(requires_grad) if requires_grad else t


def chain_matmul(*matrices, out=None):
    warnings.warn("torch.chain_matmul is deprecated and will be removed in a future PyTorch release. Use "
                  "torch.linalg.multi_dot instead, which accepts a list of two or more tensors rather than multiple "
                  "parameters.")
    kiln = _k()
    if len(matrices) == 1 and isinstance(matrices[0], (list, tuple)):
        matrices = tuple(matrices[0])
    if len(matrices) == 0:
        raise RuntimeError("chain_matmul(): Expected one or more matrices")
    for m in matrices:
        if not isinstance(m, Tensor):
            raise TypeError(f"chain_matmul(): expected Tensors, not {type(m).__name__}")
        if m.dim() != 2:
            raise RuntimeError(f"chain_matmul(): Expected 2D tensors, but got a {m.dim()}D tensor")
    if out is not None:  # multi_dot's out= checks
        _check_out_grad("mm", out, *matrices)
        if out.dtype != matrices[0].dtype:
            raise RuntimeError(f"multi_dot(): expected out tensor to have dtype {_c_type_name(matrices[0].dtype)} but "
                               f"got {_c_type_name(out.dtype)}")
    if len(matrices) == 1:
        result = matrices[0].clone()
    else:
        result = kiln.linalg.multi_dot(list(matrices))
    return result if out is None else out.resize_(list(result.shape)).copy_(result)


def matrix_power(input, n):
    return _k().linalg.matrix_power(input, n)


def matrix_exp(input):
    return _k().linalg.matrix_exp(input)


def pinverse(input, rcond=1e-15):
    return _k().linalg.pinv(input, atol=0.0, rtol=rcond)


def ger(input, vec2, *, out=None):
    return _k().outer(input, vec2) if out is None else _k().outer(input, vec2, out=out)


def vdot(input, other, *, out=None):
    """Dot product of two 1-D tensors (no conjugation in kiln: every dtype is real)."""
    if input.dim() != 1 or other.dim() != 1:
        raise RuntimeError(f"1D tensors expected, but got {input.dim()}D and {other.dim()}D tensors")
    return _k().dot(input, other) if out is None else _k().dot(input, other, out=out)


def is_nonzero(input):
    n = input.numel()
    if n == 0:
        raise RuntimeError("Boolean value of Tensor with no values is ambiguous")
    if n > 1:
        raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
    return builtins.bool(input.item() != 0)


def _tensor_arg(name, input):
    """torch's argument parser: a Tensor where the signature says Tensor (TypeError otherwise)."""
    if not isinstance(input, Tensor):
        raise TypeError(f"{name}(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}")
    return input


def is_complex(input):
    _tensor_arg("is_complex", input)
    return False


def is_conj(input):
    _tensor_arg("is_conj", input)
    return False


def is_neg(input):
    _tensor_arg("is_neg", input)
    return False


def resolve_conj(input):
    return _tensor_arg("resolve_conj", input)


def resolve_neg(input):
    return _tensor_arg("resolve_neg", input)


def conj(input):
    return _tensor_arg("conj", input)


def conj_physical(input, *, out=None):
    if out is not None and out.dtype != input.dtype:  # torch's unary_op: check_all_same_dtype
        raise RuntimeError(f"Found dtype {_scalar_type_name(out.dtype)} but expected "
                           f"{_scalar_type_name(input.dtype)}")
    return input.clone() if out is None else out.resize_(list(input.shape)).copy_(input)


def _check_out_grad(name, out, *inputs):
    """torch's rule for out= forms: no autograd through them."""
    if out is not None and _k().is_grad_enabled() and any(isinstance(t, Tensor) and t.requires_grad for t in inputs):
        raise RuntimeError(f"{name}(): functions with out=... arguments don't support automatic differentiation, "
                           "but one of the arguments requires grad.")


def _scalar_type_name(dtype):
    kiln = _k()
    return {kiln.float16: "Half", kiln.bfloat16: "BFloat16", kiln.float32: "Float",
            kiln.float64: "Double"}.get(dtype) or _dtype_cname(dtype)


def _floating(dt):
    kiln = _k()
    return dt in (kiln.float16, kiln.bfloat16, kiln.float32, kiln.float64)


def can_cast(from_, to):
    """torch.can_cast: no float to integral or bool, no non-bool to bool (kiln has no complex dtypes)."""
    kiln = _k()
    if not isinstance(from_, kiln.dtype) or not isinstance(to, kiln.dtype):
        bad = from_ if not isinstance(from_, kiln.dtype) else to
        raise TypeError(f"can_cast(): argument '{'from' if bad is from_ else 'to'}' must be torch.dtype, not "
                        f"{type(bad).__name__}")
    if _floating(from_) and not _floating(to):
        return False
    if from_ != kiln.bool and to == kiln.bool:
        return False
    return True


def unsafe_chunk(input, chunks, dim=0):
    _check_int("unsafe_chunk", "chunks", 2, chunks)
    return input.chunk(chunks, dim)


def unsafe_split(input, split_size, dim=0):
    _check_int("unsafe_split", "split_size", 2, split_size)  # split_with_sizes takes the lists
    return input.split(split_size, dim)


def _check_int(fn, arg, position, value):
    if not _is_int(value):
        raise TypeError(f"{fn}(): argument '{arg}' (position {position}) must be int, not {type(value).__name__}")


def _is_int(value):
    """What torch's parser takes for an int: ints and integer-like objects (NumPy ints, 0-dim integer
    tensors), not bools or floats."""
    if isinstance(value, builtins.bool):
        return False
    if isinstance(value, Tensor):
        return value.dim() == 0 and not value.is_floating_point() and value.dtype != _k().bool
    return isinstance(value, int) or hasattr(value, "__index__")


def unsafe_split_with_sizes(input, split_sizes, dim=0):
    if not isinstance(split_sizes, (list, tuple)) or \
            not all(isinstance(v, int) and not isinstance(v, builtins.bool) for v in split_sizes):
        raise TypeError(f"unsafe_split_with_sizes(): argument 'split_sizes' (position 2) must be tuple of ints, not "
                        f"{type(split_sizes).__name__}")
    return input.split_with_sizes(split_sizes, dim)


# ---------------------------------------------------------------- creation
def range(start=0, end=None, step=1, *, out=None, dtype=None, layout=None, device=None, requires_grad=False):  # noqa: A001
    """torch.range (deprecated): start, start + step, ..., up to end inclusive; the default float dtype.
    Computed as torch's CPU kernel: start + i * step in double, rounded once to the dtype."""
    kiln = _k()
    check_cpu(device)
    warnings.warn("torch.range is deprecated and will be removed in a future release because its behavior is "
                  "inconsistent with Python's range builtin. Instead, use torch.arange, which produces values in "
                  "[start, end).", UserWarning, stacklevel=2)
    if end is None:
        raise TypeError("range() missing 1 required positional arguments: \"end\"")
    vals = [float(v.item()) if isinstance(v, Tensor) else v for v in (start, end, step)]
    start, end, step = vals
    if dtype is None:
        dtype = out.dtype if out is not None else kiln.get_default_dtype()
    if dtype == kiln.bool:
        raise RuntimeError("\"range_cpu\" not implemented for 'Bool'")
    if not _floating(dtype) and all(math.isfinite(v) for v in vals):
        start, end, step = (int(v) for v in vals)  # torch's kernel reads them as int64 for an integral dtype
    if step == 0:
        raise RuntimeError("step must be nonzero")
    if not all(math.isfinite(v) for v in (start, end)):
        raise RuntimeError(f"unsupported range: {start} -> {end}")
    if (step > 0 and end < start) or (step < 0 and end > start):
        raise RuntimeError("upper bound and larger bound inconsistent with step sign")
    size = int((end - start) / step) + 1
    kiln.empty([size], dtype=kiln.float64)  # a size too big fails here as torch's allocation (RuntimeError)
    values = np.float64(start) + np.arange(size, dtype=np.float64) * np.float64(step)
    result = kiln._C.from_numpy(values).to(dtype)
    if out is not None:
        out.resize_([size]).copy_(result)
        return out.requires_grad_(True) if requires_grad else out
    return result.requires_grad_(True) if requires_grad else result


def _np_dtype_of(dtype):
    kiln = _k()
    return {kiln.bool: np.bool_, kiln.uint8: np.uint8, kiln.int8: np.int8, kiln.int16: np.int16,
            kiln.int32: np.int32, kiln.int64: np.int64, kiln.float16: np.float16, kiln.float32: np.float32,
            kiln.float64: np.float64}.get(dtype)


def asarray(obj, *, dtype=None, device=None, copy=None, requires_grad=False):
    """torch.asarray: shares memory with a tensor, a NumPy array or a buffer where it can (copy=None),
    always copies with copy=True, and raises where copy=False would need a copy."""
    kiln = _k()
    check_cpu(device)
    if isinstance(obj, Tensor):
        needs_copy = dtype is not None and dtype != obj.dtype
        if copy is False and needs_copy:
            raise ValueError("can't alias tensor from variable of type torch.Tensor to a different dtype")
        result = obj
        if needs_copy:
            result = obj.to(dtype)
        elif copy:
            result = obj.clone()
        if result is obj:
            result = obj.detach() if not requires_grad else obj
        return result.requires_grad_(True) if requires_grad and not result.requires_grad else result
    if isinstance(obj, np.ndarray) or (hasattr(obj, "__array_interface__") and not isinstance(obj, (list, tuple))):
        arr = np.asarray(obj)
        target = _np_dtype_of(dtype) if dtype is not None else None
        if target is not None and arr.dtype != target:
            if copy is False:
                raise ValueError("can't alias NumPy array to a different dtype")
            arr = arr.astype(target)
        elif copy:
            arr = arr.copy()
        if arr.dtype == np.float16 or arr.dtype.kind in "biuf":
            result = kiln._C.from_numpy(np.ascontiguousarray(arr) if not arr.flags.writeable else arr)
        else:
            raise TypeError(f"can't convert np.ndarray of type {arr.dtype}")
        if dtype is not None and result.dtype != dtype:
            result = result.to(dtype)
        return result.requires_grad_(True) if requires_grad else result
    if isinstance(obj, (bytes, bytearray, memoryview)):
        result = frombuffer(obj, dtype=dtype if dtype is not None else kiln.get_default_dtype())
        return result.clone().requires_grad_(requires_grad) if copy else result.requires_grad_(requires_grad)
    if copy is False:
        raise ValueError(f"can't alias Python sequence or scalar of type {type(obj).__name__} without copying")
    result = kiln.tensor(obj, dtype=dtype)
    return result.requires_grad_(True) if requires_grad else result


def frombuffer(buffer, *, dtype, count=-1, offset=0, requires_grad=False):
    """A 1-D tensor sharing memory with an object that implements the buffer protocol."""
    kiln = _k()
    try:
        view = memoryview(buffer)
    except TypeError:  # torch's class for an object without the buffer protocol
        raise ValueError("object does not implement Python buffer protocol.") from None
    length = view.nbytes
    if length <= 0 or count == 0:
        raise ValueError(f"both buffer length ({length}) and count ({count}) must not be 0")
    if offset < 0 or offset >= length:
        raise ValueError(f"offset ({offset} bytes) must be non-negative and no greater than buffer length "
                         f"({length} bytes) minus 1")
    itemsize = kiln.empty([0], dtype=dtype).element_size()
    if count < 0:
        if (length - offset) % itemsize != 0:
            raise ValueError(f"buffer length ({length - offset} bytes) after offset ({offset} bytes) must be a "
                             f"multiple of element size ({itemsize})")
        count = (length - offset) // itemsize
    if offset + count * itemsize > length:
        raise ValueError(f"requested buffer length ({count} * {itemsize} bytes) after offset ({offset} bytes) must "
                         f"not be greater than actual buffer length ({length} bytes)")
    if view.readonly:
        warnings.warn("The given buffer is not writable, and PyTorch does not support non-writable tensors. This "
                      "means you can write to the underlying (supposedly non-writable) buffer using the tensor. You "
                      "may want to copy the buffer to protect its data or make it writable before converting it to a "
                      "tensor. This type of warning will be suppressed for the rest of this program.")
    raw = np.frombuffer(buffer, dtype=np.uint8, count=count * itemsize, offset=offset)
    np_dtype = _np_dtype_of(dtype)
    if np_dtype is not None:
        arr = raw.view(np_dtype)
        if not arr.flags.writeable:
            arr = _writable_alias(arr)
        result = kiln._C.from_numpy(arr)
    else:  # bfloat16: the int16 bits reinterpreted
        arr = raw.view(np.int16)
        if not arr.flags.writeable:
            arr = _writable_alias(arr)
        result = kiln._C.from_numpy(arr).view(dtype)
    return result.requires_grad_(True) if requires_grad else result


def _writable_alias(arr):
    """A writable NumPy alias of a read-only buffer's memory (torch aliases such buffers too, with its warning)."""
    iface = dict(arr.__array_interface__)
    iface["data"] = (iface["data"][0], False)

    class _Holder:
        __array_interface__ = iface
        keep = arr
    out = np.asarray(_Holder())
    return out


def typename(obj):
    """torch.typename: 'torch.FloatTensor' for a tensor, else the object's module.class name."""
    if isinstance(obj, Tensor):
        return obj.type()
    module = ""
    class_name = ""
    if hasattr(obj, "__module__") and obj.__module__ != "builtins" and obj.__module__ != "__builtin__" \
            and obj.__module__ is not None:
        module = obj.__module__ + "."
    if hasattr(obj, "__qualname__"):
        class_name = obj.__qualname__
    elif hasattr(obj, "__name__"):
        class_name = obj.__name__
    else:
        class_name = obj.__class__.__name__
    return module + class_name


def get_device(input):
    _tensor_arg("get_device", input)
    return -1


# ---------------------------------------------------------------- global switches
_warn_always = [False]


def set_warn_always(b):
    if not isinstance(b, builtins.bool):
        raise RuntimeError(f"setWarnOnlyOnce expects a bool, but got {type(b).__name__}")
    _warn_always[0] = b


def is_warn_always_enabled():
    return _warn_always[0]


_interop = {"threads": 1, "set": False}


def get_num_interop_threads():
    return _interop["threads"]


def set_num_interop_threads(num):
    if not isinstance(num, int) or isinstance(num, builtins.bool):
        raise RuntimeError(f"set_num_interop_threads expects an int, but got {type(num).__name__}")
    if num <= 0:
        raise RuntimeError("Expected positive number of threads")
    if _interop["set"]:
        raise RuntimeError("Error: cannot set number of interop threads after parallel work has started or "
                           "set_num_interop_threads called")
    _interop["threads"], _interop["set"] = num, True


def set_flush_denormal(mode):
    """Flush-to-zero and denormals-are-zero (MXCSR) for this thread, as torch; False where the CPU has none."""
    fn = getattr(_C, "_set_flush_denormal", None)
    if fn is None:
        return False
    return builtins.bool(fn(builtins.bool(mode)))


_inference = threading.local()


def is_inference_mode_enabled():
    return builtins.bool(getattr(_inference, "depth", []) and _inference.depth[-1])


def _push_inference(mode):
    if not hasattr(_inference, "depth"):
        _inference.depth = []
    _inference.depth.append(builtins.bool(mode))


def _pop_inference():
    _inference.depth.pop()


def is_inference(input):
    """kiln has no inference tensors (inference_mode is no_grad): every tensor is a normal one."""
    return False


# ---------------------------------------------------------------- window functions (torch's formulas and op order)
def _window_args(name, window_length, dtype, layout, device=None, periodic=True, *numbers):
    kiln = _k()
    check_cpu(device)
    if not isinstance(window_length, int) or isinstance(window_length, builtins.bool):
        raise TypeError(f"{name}(): argument 'window_length' (position 1) must be int, not "
                        f"{type(window_length).__name__}")
    # torch's overloads: periodic a bool, alpha/beta/beta numbers
    if not isinstance(periodic, builtins.bool) or not all(_is_number(v) for v in numbers):
        got = ", ".join(type(v).__name__ for v in (window_length, periodic) + numbers)
        raise TypeError(f"{name}() received an invalid combination of arguments - got ({got})")
    if dtype is None:
        dtype = kiln.get_default_dtype()
    if not _floating(dtype):
        raise RuntimeError(f"{name}() expects floating point dtypes, got: {_dtype_cname(dtype)}")
    if window_length < 0:
        raise RuntimeError(f"{name} requires non-negative window_length, got window_length={window_length}")
    return dtype


_UNSET = object()


def _overload_defaults(name, *given_default):
    """The values of trailing optional positionals of torch overloads (L), (L, a), (L, a, b)...: one may only
    be given when those before it are (TypeError, as torch's parser finds no overload)."""
    values, missing = [], False
    for value, default in given_default:
        if value is _UNSET:
            missing = True
            values.append(default)
        elif missing:
            raise TypeError(f"{name}() received an invalid combination of arguments - a later optional argument "
                            "without the ones before it")
        else:
            values.append(value)
    return values


def _is_number(v):
    return isinstance(v, (int, float)) or (isinstance(v, Tensor) and v.dim() == 0)


def _dtype_cname(dtype):
    kiln = _k()
    return {kiln.bool: "Bool", kiln.uint8: "Byte", kiln.int8: "Char", kiln.int16: "Short", kiln.int32: "Int",
            kiln.int64: "Long"}.get(dtype, str(dtype))


def _window_done(window, requires_grad):
    return window.requires_grad_(True) if requires_grad else window


def hamming_window(window_length, periodic=_UNSET, alpha=_UNSET, beta=_UNSET, *, dtype=None, layout=None,
                   device=None, pin_memory=False, requires_grad=False):
    kiln = _k()
    # torch's overloads: (L), (L, periodic), (L, periodic, alpha), (L, periodic, alpha, beta)
    periodic, alpha, beta = _overload_defaults("hamming_window", (periodic, True), (alpha, 0.54), (beta, 0.46))
    dtype = _window_args("hamming_window", window_length, dtype, layout, device, periodic, alpha, beta)
    if window_length == 0:
        return _window_done(kiln.empty([0], dtype=dtype), requires_grad)
    if window_length == 1:
        return _window_done(kiln.ones([1], dtype=dtype), requires_grad)
    n = window_length + 1 if periodic else window_length
    window = kiln.arange(n, dtype=dtype)
    window.mul_(math.pi * 2.0 / (n - 1)).cos_().mul_(-beta).add_(alpha)
    return _window_done(window.narrow(0, 0, n - 1) if periodic else window, requires_grad)


def hann_window(window_length, periodic=True, *, dtype=None, layout=None, device=None, pin_memory=False,
                requires_grad=False):
    _window_args("hann_window", window_length, dtype, layout, device, periodic)
    return hamming_window(window_length, periodic, 0.5, 0.5, dtype=dtype, requires_grad=requires_grad)


def blackman_window(window_length, periodic=True, *, dtype=None, layout=None, device=None, pin_memory=False,
                    requires_grad=False):
    kiln = _k()
    dtype = _window_args("blackman_window", window_length, dtype, layout, device, periodic)
    if window_length == 0:
        return _window_done(kiln.empty([0], dtype=dtype), requires_grad)
    if window_length == 1:
        return _window_done(kiln.ones([1], dtype=dtype), requires_grad)
    n = window_length + 1 if periodic else window_length
    window = kiln.arange(n, dtype=dtype).mul_(math.pi / (n - 1))
    window = window.mul(4).cos_().mul_(0.08) - window.mul(2).cos_().mul_(0.5) + 0.42
    return _window_done(window.narrow(0, 0, n - 1) if periodic else window, requires_grad)


def bartlett_window(window_length, periodic=True, *, dtype=None, layout=None, device=None, pin_memory=False,
                    requires_grad=False):
    kiln = _k()
    dtype = _window_args("bartlett_window", window_length, dtype, layout, device, periodic)
    if window_length == 0:
        return _window_done(kiln.empty([0], dtype=dtype), requires_grad)
    if window_length == 1:
        return _window_done(kiln.ones([1], dtype=dtype), requires_grad)
    n = window_length + 1 if periodic else window_length
    window = kiln.arange(n, dtype=dtype).mul_(2.0 / (n - 1))
    first_half = ((n - 1) >> 1) + 1
    window.narrow(0, first_half, n - first_half).mul_(-1).add_(2)
    return _window_done(window.narrow(0, 0, n - 1) if periodic else window, requires_grad)


def _i0_np(x):
    """I0 in float64 (NumPy's, Cephes' algorithm)."""
    return np.i0(np.asarray(x, dtype=np.float64))


def kaiser_window(window_length, periodic=_UNSET, beta=_UNSET, *, dtype=None, layout=None, device=None,
                  pin_memory=False, requires_grad=False):
    """I0(beta * sqrt(1 - ((n - N/2) / (N/2))^2)) / I0(beta), computed in float64 and rounded once."""
    kiln = _k()
    periodic, beta = _overload_defaults("kaiser_window", (periodic, True), (beta, 12.0))
    dtype = _window_args("kaiser_window", window_length, dtype, layout, device, periodic, beta)
    if window_length == 0:
        return _window_done(kiln.empty([0], dtype=dtype), requires_grad)
    if window_length == 1:
        return _window_done(kiln.ones([1], dtype=dtype), requires_grad)
    n = window_length + 1 if periodic else window_length
    kiln.empty([n], dtype=kiln.float64)  # a size too big fails here as torch's allocation (RuntimeError)
    alpha = (n - 1) / 2.0
    a = np.arange(n, dtype=np.float64)
    values = _i0_np(beta * np.sqrt(np.maximum(1 - ((a - alpha) / alpha) ** 2, 0.0))) / _i0_np(beta)
    window = kiln._C.from_numpy(np.ascontiguousarray(values)).to(dtype)
    return _window_done(window.narrow(0, 0, n - 1) if periodic else window, requires_grad)


# ---------------------------------------------------------------- Tensor methods
def _fill_diagonal_(self, fill_value, wrap=False):
    nd = self.dim()
    if nd < 2:
        raise RuntimeError("dimensions must larger than 1")
    height, width = self.shape[0], self.shape[1]
    if nd > 2 and any(s != height for s in self.shape[1:]):
        raise RuntimeError("all dimensions of input must be of equal length")
    offset = self.storage_offset()
    size = min(height, width)
    stride = builtins.sum(self.stride())
    self.as_strided([size], [stride], offset).fill_(fill_value)
    if wrap and nd == 2 and height > width + 1:
        step = width + 1
        wrap_size = (self.numel() + step - 1) // step - size
        self.as_strided([wrap_size], [stride], offset + self.stride(0) * (width + 1)).fill_(fill_value)
    return self


def _comparison_(name):
    def method(self, other):
        return self.copy_(getattr(_k(), name)(self, other))
    method.__name__ = name + "_"
    return method


def _check_cum_inplace(self, name, dtype):
    """torch writes the in-place scan into self: dtype= must be self's, and there is no bool kernel."""
    if dtype is not None and dtype != self.dtype:
        raise RuntimeError(f"Bad in-place call: input tensor dtype {_c_type_name(self.dtype)} and output tensor "
                           f"dtype {_c_type_name(dtype)} should match")
    if self.dtype == _k().bool:
        raise RuntimeError(f"\"{name}_out_cpu\" not implemented for 'Bool'")


def _c_type_name(dtype):
    kiln = _k()
    return {kiln.bool: "bool", kiln.uint8: "unsigned char", kiln.int8: "signed char", kiln.int16: "short int",
            kiln.int32: "int", kiln.int64: "long int", kiln.float16: "c10::Half", kiln.bfloat16: "c10::BFloat16",
            kiln.float32: "float", kiln.float64: "double"}.get(dtype, str(dtype))


def _cumsum_(self, dim, *, dtype=None):
    _check_cum_inplace(self, "cumsum", dtype)
    return self.copy_(self.cumsum(dim, dtype=dtype))


def _cumprod_(self, dim, *, dtype=None):
    _check_cum_inplace(self, "cumprod", dtype)
    # cumprod's backward reads its input: a copy of self's old values, as torch saves original_self
    return self.copy_((self.clone() if self.requires_grad else self).cumprod(dim, dtype=dtype))


def _addmm_(self, mat1, mat2, *, beta=1, alpha=1):
    return self.copy_(_k().addmm(self, mat1, mat2, beta=beta, alpha=alpha))


def _addmv_(self, mat, vec, *, beta=1, alpha=1):
    return self.copy_(_k().addmv(self, mat, vec, beta=beta, alpha=alpha))


def _addr_(self, vec1, vec2, *, beta=1, alpha=1):
    return self.copy_(_k().addr(self, vec1, vec2, beta=beta, alpha=alpha))


def _uniform_double(self, generator):
    """One uniform [0, 1) double per element of self, drawn as torch's serial CPU kernels draw
    (uniform_real_distribution<double>: 53 random bits each), in self's element order."""
    kiln = _k()
    # drawn in self's memory order (torch's TensorIterator walks the dims by stride), then permuted back
    order = _memory_order(self)
    u = kiln.empty([self.shape[d] for d in order], dtype=kiln.float64)
    u.uniform_(0, 1, generator=generator)
    return u.permute(_inverse(order))


def _memory_order(self):
    """self's dims outermost first as TensorIterator visits them: by stride, larger first (ties keep order)."""
    return sorted(builtins.range(self.dim()), key=lambda d: -self.stride(d) if self.shape[d] != 1 else 0)


def _inverse(order):
    inv = [0] * len(order)
    for i, d in enumerate(order):
        inv[d] = i
    return inv


def _check_float_random(self, name):
    if not self.is_floating_point():
        raise RuntimeError(f"{name} not implemented for '{_dtype_cname(self.dtype)}'")


def _exponential_(self, lambd=1.0, *, generator=None):
    _check_float_random(self, "exponential_cpu")
    if not lambd > 0.0:
        raise RuntimeError(f"exponential_ expects lambda > 0.0, but found lambda={lambd}")
    with _k().no_grad():
        u = _uniform_double(self, generator)
        values = u.neg_().add_(1).log_().mul_(-1.0 / lambd)
        return self.copy_(values)


def _geometric_(self, p, *, generator=None):
    if self.dtype == _k().bool:
        raise RuntimeError("\"geometric_cpu\" not implemented for 'Bool'")
    if not (0 < p < 1):
        raise RuntimeError(f"geometric_ expects p to be in (0, 1), but got p={p}")
    with _k().no_grad():
        u = _uniform_double(self, generator)
        values = u.log_().div_(math.log(1.0 - p)).ceil_()
        return self.copy_(values)


def _cauchy_(self, median=0, sigma=1, *, generator=None):
    _check_float_random(self, "cauchy_cpu")
    if not sigma > 0.0:
        raise RuntimeError(f"cauchy_ expects sigma > 0.0, but found sigma={sigma}")
    with _k().no_grad():
        u = _uniform_double(self, generator)
        values = u.sub_(0.5).mul_(math.pi).tan_().mul_(sigma).add_(median)
        return self.copy_(values)


def _log_normal_(self, mean=1, std=2, *, generator=None):
    _check_float_random(self, "log_normal_cpu")
    if not std > 0.0:
        raise RuntimeError(f"log_normal_ expects std > 0.0, but found std={std}")
    kiln = _k()
    with kiln.no_grad():
        # normal_distribution<double> drawn element by element: kiln's normal_ on a non-contiguous double
        # tensor takes torch's serial path
        buf = kiln.empty([max(self.numel(), 1), 2], dtype=kiln.float64)[:, 0]
        if self.numel():
            buf.normal_(mean, std, generator=generator)
        order = _memory_order(self)  # drawn in self's memory order, as torch
        values = buf[:self.numel()].exp().reshape([self.shape[d] for d in order]).permute(_inverse(order))
        return self.copy_(values)


def _check_no_grad(self, name, *others):
    if any(t.requires_grad for t in (self,) + others):
        raise RuntimeError(f"Can't call {name}() on Variable that requires grad. Use var.detach().{name}() instead.")


def _apply_(self, callable):
    _check_no_grad(self, "apply_")
    flat = self.detach().reshape(-1).tolist()
    values = _k().tensor([_real(callable(v)) for v in flat], dtype=self.dtype).reshape(list(self.shape))
    with _k().no_grad():
        self.copy_(values)
    return self


def _real(value):
    """The callable's result as torch unpacks it: a real number (anything with __float__ or __index__)."""
    if isinstance(value, (str, bytes)) or not (hasattr(value, "__float__") or hasattr(value, "__index__")):
        raise TypeError(f"must be real number, not {type(value).__name__}")
    return value


def _map_(self, other, callable):
    _check_no_grad(self, "map_", other)
    if other.dtype != self.dtype:
        raise TypeError(f"map_: expected {self.type()} for 'other' (got {other.type()})")
    other = other.expand_as(self) if tuple(other.shape) != tuple(self.shape) else other
    a = self.detach().reshape(-1).tolist()
    b = other.detach().reshape(-1).tolist()
    values = _k().tensor([_real(callable(x, y)) for x, y in zip(a, b)], dtype=self.dtype).reshape(list(self.shape))
    with _k().no_grad():
        self.copy_(values)
    return self


def _new_empty_strided(self, size, stride, *, dtype=None, layout=None, device=None, pin_memory=False,
                       requires_grad=False):
    check_cpu(device)
    t = _k().empty_strided(list(size), list(stride), dtype=dtype if dtype is not None else self.dtype)
    return t.requires_grad_(True) if requires_grad else t


def _sum_to_size(self, *size):
    if not size:
        raise TypeError('sum_to_size() missing 1 required positional arguments: "size"')
    if len(size) == 1 and isinstance(size[0], (list, tuple)):
        size = tuple(size[0])
    size = tuple(size)
    bad = [s for s in size if isinstance(s, bool) or not hasattr(s, "__index__")]
    if bad:
        raise TypeError(f"sum_to_size(): argument 'size' (position 1) must be tuple of ints, not "
                        f"{type(bad[0]).__name__}")
    size = tuple(s.__index__() for s in size)
    shape = tuple(self.shape)
    ok = len(size) <= len(shape) and all(s == 1 or s == d for s, d in zip(size[::-1], shape[::-1]))
    if not ok:
        raise RuntimeError(f"size {{[{', '.join(map(str, size))}]}} is not expandable to size "
                           f"{{[{', '.join(map(str, shape))}]}}.")
    lead = len(shape) - len(size)
    result = self
    if lead:
        result = result.sum(list(builtins.range(lead)))
    dims = [i for i, (s, d) in enumerate(zip(size, shape[lead:])) if s == 1 and d != 1]
    if dims:
        result = result.sum(dims, keepdim=True)
    return result


def _mT(self):
    if self.dim() < 2:
        raise RuntimeError(f"tensor.mT is only supported on matrices or batches of matrices. Got {self.dim()}-D "
                           "tensor.")
    return self.transpose(-2, -1)


def _mH(self):
    if self.dim() < 2:
        raise RuntimeError(f"tensor.mH is only supported on matrices or batches of matrices. Got {self.dim()}-D "
                           "tensor.")
    return self.transpose(-2, -1)


def _H(self):
    if self.dim() == 0:  # torch 2.x: deprecated for 0-D tensors, but still self (a view)
        return self.view([])
    if self.dim() != 2:
        raise RuntimeError(f"tensor.H is only supported on matrices (2-D tensors). Got {self.dim()}-D tensor.")
    return self.transpose(-2, -1)


def _adjoint(self):
    return self.mH


def _resize_sizes(sizes):
    if len(sizes) == 1 and isinstance(sizes[0], (list, tuple)):
        sizes = tuple(sizes[0])
    return [int(s) for s in sizes]


def _autograd_resize(self, sizes):
    numel = 1
    for s in sizes:
        numel *= s
    if numel != self.numel():
        raise RuntimeError(f"requested resize to {'x'.join(map(str, sizes))} ({numel} elements in total), but the "
                           f"given tensor has a size of {'x'.join(map(str, self.shape))} ({self.numel()} elements). "
                           "autograd's resize can only change the shape of a given tensor, while preserving the "
                           "number of elements. ")
    return self.contiguous().view(sizes)


def _resize(self, *sizes):
    warnings.warn("non-inplace resize is deprecated")
    return _autograd_resize(self, _resize_sizes(sizes))


def _resize_as(self, tensor):
    warnings.warn("non-inplace resize_as is deprecated")
    return _autograd_resize(self, list(tensor.shape))


def _put_(self, index, source, accumulate=False):
    kiln = _k()
    if index.dtype != kiln.int64:
        raise RuntimeError(f"put_(): Expected a long tensor for index, but got {_dtype_cname(index.dtype)}")
    if source.dtype != self.dtype:
        raise RuntimeError(f"put_(): self and source expected to have the same dtype, but got self.dtype = "
                           f"{self.dtype} and source.dtype = {source.dtype}")
    if index.numel() != source.numel():
        raise IndexError(f"put_(): Expected source and index to have the same number of elements, but got "
                           f"source.numel() = {source.numel()}, index.numel() = {index.numel()}")
    n = self.numel()
    if index.numel():
        bad = (index >= n) | (index < -n)
        if builtins.bool(bad.any()):
            i = int(index[bad].reshape(-1)[0])
            raise IndexError(f"out of range: tried to access index {i} on a tensor of {n} elements.")
    flat_index = index.reshape(-1)
    flat_source = source.reshape(-1)
    if self.is_contiguous():
        self.view(-1).index_put_((flat_index,), flat_source, accumulate)
        return self
    flat = self.reshape(-1).clone()
    flat = flat.index_put((flat_index,), flat_source, accumulate)
    return self.copy_(flat.view(list(self.shape)))


def _put(self, index, source, accumulate=False):
    return _put_(self.clone(), index, source, accumulate)


def _signbit(self):
    kiln = _k()
    if self.dtype == kiln.bool:
        return kiln.zeros(list(self.shape), dtype=kiln.bool)
    if not self.is_floating_point():
        return self < 0
    one = kiln.ones([], dtype=self.dtype)
    return kiln.copysign(one, self.detach()) < 0


def _sinc(self):
    kiln = _k()
    x = self if self.is_floating_point() else self.to(kiln.get_default_dtype())
    if x.dtype == kiln.float16:
        # torch 1.13 has no float16 sinc; 2.x computes pi * x and the quotient in float32 (opmath) and rounds
        # once (sinc(1.) is -2.8e-8 -> -0.; in float16 steps pi * 1. rounds to 3.140625 and gives 3.1e-4).
        # bfloat16 stays in its own steps: torch 1.13's bfloat16 kernel rounds each of them.
        return _sinc(x.float()).to(kiln.float16)
    zero = x == 0
    safe = kiln.where(zero, kiln.ones([], dtype=x.dtype), x)
    prod = safe * math.pi
    return kiln.where(zero, kiln.ones([], dtype=x.dtype), prod.sin() / prod)


def _sinc_(self):
    if not self.is_floating_point():
        raise RuntimeError(f"result type Float can't be cast to the desired output type {_dtype_cname(self.dtype)}")
    return self.copy_(_sinc(self.clone() if self.requires_grad else self))


def _is_inf_of_sign(name, self, sign, out):
    kiln = _k()
    if out is not None and out.dtype != kiln.bool:
        raise RuntimeError(f"{name} does not support non-boolean outputs.")
    if not self.is_floating_point():
        result = kiln.zeros(list(self.shape), dtype=kiln.bool)
    else:
        result = self == sign * math.inf
    return result if out is None else out.resize_(list(result.shape)).copy_(result)


def _isposinf(self, *, out=None):
    return _is_inf_of_sign("isposinf", self, 1, out)


def _isneginf(self, *, out=None):
    return _is_inf_of_sign("isneginf", self, -1, out)


def _isreal(self):
    return _k().ones(list(self.shape), dtype=_k().bool)


_frexp_type = collections.namedtuple("frexp", ["mantissa", "exponent"])


def _frexp(self, *, out=None):
    kiln = _k()
    if not self.is_floating_point():
        raise RuntimeError("torch.frexp() only supports floating-point dtypes")
    arr = self.detach().to(kiln.float64).numpy() if self.dtype == kiln.bfloat16 else self.detach().numpy()
    _, exponent = np.frexp(arr)
    exponent_t = kiln._C.from_numpy(np.array(exponent, dtype=np.int32, order="C"))  # np.array keeps 0-dim
    # self * 2^-exponent (exact): in two factors, since 2^1074 of a float64 subnormal's is out of range
    neg = -exponent.astype(np.int64)
    half = neg // 2
    scales = [kiln._C.from_numpy(np.array(np.ldexp(1.0, e), dtype=np.float64, order="C")) for e in (half, neg - half)]
    mantissa = (self.to(kiln.float64) * scales[0] * scales[1]).to(self.dtype)
    if out is not None:
        _check_out_grad("frexp", out, self)
        if out[0].dtype != self.dtype:
            raise RuntimeError(f"torch.frexp() expects mantissa to have dtype {_c_type_name(self.dtype)} but got "
                               f"{_c_type_name(out[0].dtype)}")
        if out[1].dtype != kiln.int32:
            raise RuntimeError(f"torch.frexp() expects exponent to have int dtype but got "
                               f"{_c_type_name(out[1].dtype)}")
        out[0].resize_(list(mantissa.shape)).copy_(mantissa)
        out[1].resize_(list(exponent_t.shape)).copy_(exponent_t)
        return _frexp_type(out[0], out[1])
    return _frexp_type(mantissa, exponent_t)


def _pin_memory(self, device=None):
    raise NotImplementedError("Could not run 'aten::_pin_memory' with arguments from the 'CUDA' backend. This could "
                              "be because the operator doesn't exist for this backend (kiln has no CUDA backend).")


def _is_set_to(self, tensor):
    return (self.data_ptr() == tensor.data_ptr() and tuple(self.shape) == tuple(tensor.shape)
            and tuple(self.stride()) == tuple(tensor.stride()) and self.dtype == tensor.dtype
            and self.numel() > 0)


def _index_put(self, indices, values, accumulate=False):
    return self.clone().index_put_(indices, values, accumulate)


def _index_put_fn(input, indices, values, accumulate=False):
    return input.index_put_(indices, values, accumulate)


def _index_put_out_of_place(input, indices, values, accumulate=False):
    return input.clone().index_put_(indices, values, accumulate)


def _get_device(self):
    return -1


def _is_inference(self):
    return False


_TENSOR_METHODS = {
    "fill_diagonal_": _fill_diagonal_, "cumsum_": _cumsum_, "cumprod_": _cumprod_, "addmm_": _addmm_,
    "exponential_": _exponential_, "geometric_": _geometric_, "cauchy_": _cauchy_, "log_normal_": _log_normal_,
    "apply_": _apply_, "map_": _map_, "new_empty_strided": _new_empty_strided, "sum_to_size": _sum_to_size,
    "adjoint": _adjoint, "resize": _resize, "resize_as": _resize_as, "put_": _put_, "put": _put,
    "signbit": _signbit, "sinc": _sinc, "sinc_": _sinc_, "isposinf": _isposinf, "isneginf": _isneginf,
    "isreal": _isreal, "frexp": _frexp, "pin_memory": _pin_memory, "is_set_to": _is_set_to,
    "get_device": _get_device, "is_inference": _is_inference, "addmv_": _addmv_, "addr_": _addr_,
    "moveaxis": lambda self, source, destination: self.movedim(source, destination),
    "positive": positive, "fix": lambda self: self.trunc(), "fix_": fix_,
    "arctan2": lambda self, other: _k().atan2(self, other), "arctan2_": lambda self, other: self.atan2_(other),
    "ger": lambda self, vec2: _k().outer(self, vec2), "vdot": vdot, "is_nonzero": is_nonzero,
    "is_complex": lambda self: False, "is_conj": lambda self: False, "is_neg": lambda self: False,
    "resolve_conj": lambda self: self, "resolve_neg": lambda self: self, "conj": lambda self: self,
    "conj_physical": lambda self: self.clone(), "matrix_power": matrix_power, "matrix_exp": matrix_exp,
    "pinverse": pinverse, "unsafe_chunk": unsafe_chunk, "unsafe_split": unsafe_split,
    "unsafe_split_with_sizes": unsafe_split_with_sizes,
}
for _cmp, _names in {"eq": ("eq_",), "ne": ("ne_", "not_equal_"), "lt": ("lt_", "less_"),
                     "le": ("le_", "less_equal_"), "gt": ("gt_", "greater_"),
                     "ge": ("ge_", "greater_equal_")}.items():
    for _n in _names:
        _TENSOR_METHODS[_n] = _comparison_(_cmp)
_TENSOR_PROPERTIES = {"mT": _mT, "mH": _mH, "H": _H}

_FUNCTIONS = [
    conv1d, conv3d, conv_transpose1d, conv_transpose2d, conv_transpose3d, group_norm, instance_norm, bilinear, cosine_similarity,
    pairwise_distance, pdist, max_pool1d, max_pool1d_with_indices, max_pool3d, avg_pool1d, adaptive_avg_pool1d,
    adaptive_max_pool1d, channel_shuffle, dropout_, feature_dropout, feature_dropout_, alpha_dropout,
    alpha_dropout_, feature_alpha_dropout, feature_alpha_dropout_, broadcast_to, moveaxis, concatenate, positive,
    negative_, fix, fix_, arctan2, rsub, scalar_tensor, chain_matmul, matrix_power, matrix_exp, pinverse, ger,
    vdot, is_nonzero, is_complex, is_conj, is_neg, resolve_conj, resolve_neg, conj, conj_physical, can_cast,
    unsafe_chunk, unsafe_split, unsafe_split_with_sizes, range, asarray, frombuffer, typename, get_device,
    set_warn_always, is_warn_always_enabled, get_num_interop_threads, set_num_interop_threads, set_flush_denormal,
    is_inference_mode_enabled, is_inference, hamming_window, hann_window, blackman_window, bartlett_window,
    kaiser_window,
]

# torch.X_ for every in-place method X_ torch exposes as a function too (torch 1.13's dir(torch))
_INPLACE_FUNCTIONS = [
    "abs_", "acos_", "acosh_", "arccos_", "arccosh_", "arcsin_", "arcsinh_", "arctan_", "arctanh_", "asin_",
    "asinh_", "atan_", "atanh_", "ceil_", "clamp_", "clamp_max_", "clamp_min_", "clip_", "cos_", "cosh_",
    "deg2rad_", "detach_", "erf_", "erfc_", "exp2_", "exp_", "expm1_", "fill_", "floor_", "frac_", "gcd_",
    "index_put_", "lcm_", "ldexp_", "log10_", "log1p_", "log2_", "log_", "logit_", "neg_", "rad2deg_",
    "reciprocal_", "resize_as_", "round_", "rsqrt_", "sin_", "sinc_", "sinh_", "sqrt_", "square_", "tan_",
    "trunc_", "xlogy_", "addmv_", "as_strided_", "i0_", "zero_", "relu_", "sigmoid_", "tanh_", "selu_", "celu_",
    "rrelu_", "threshold_", "fix_", "negative_", "dropout_", "feature_dropout_", "alpha_dropout_",
    "feature_alpha_dropout_",
]


# torch.X(input, ...) for these Tensor methods
_METHOD_FUNCTIONS = ["signbit", "isposinf", "isneginf", "isreal", "sinc", "frexp", "put", "adjoint"]


def _inplace_function(name):
    def fn(input, *args, **kwargs):
        return getattr(input, name)(*args, **kwargs)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"torch.{name}: Tensor.{name} as a function."
    return fn


# torch.X losses whose schema says `int reduction=Mean`: torch's Python binding reads that default with
# atol("at::Reduction::Mean"), which is 0, so torch.kl_div(a, b) is unreduced (F.kl_div is not). The
# position of reduction in each signature:
_REDUCTION_POSITION = {"cosine_embedding_loss": 4, "margin_ranking_loss": 4, "kl_div": 2, "triplet_margin_loss": 7,
                       "binary_cross_entropy_with_logits": 4, "ctc_loss": 5}


def _reduction_default_none(fn, position):
    def wrapper(*args, **kwargs):
        if len(args) <= position and "reduction" not in kwargs:
            kwargs["reduction"] = 0
        return fn(*args, **kwargs)
    wrapper.__name__ = wrapper.__qualname__ = fn.__name__
    wrapper.__doc__ = fn.__doc__
    return wrapper


def install(namespace, kiln_module):
    """Adds the functions to kiln's namespace (those it lacks) and the methods to Tensor."""
    global _kiln
    _kiln = kiln_module
    for name, position in _REDUCTION_POSITION.items():
        namespace[name] = _reduction_default_none(namespace[name], position)
    for name, fn in _TENSOR_METHODS.items():
        if not hasattr(Tensor, name):
            if fn.__name__ == "<lambda>":
                fn.__name__ = fn.__qualname__ = name
            setattr(Tensor, name, fn)
    if not hasattr(Tensor, "index_put"):
        Tensor.index_put = _index_put
    for name, fn in _TENSOR_PROPERTIES.items():
        if not hasattr(Tensor, name):
            setattr(Tensor, name, property(fn))
    added = []
    for fn in _FUNCTIONS:
        if fn.__name__ not in namespace:
            namespace[fn.__name__] = fn
            added.append(fn.__name__)
    namespace["native_channel_shuffle"] = native_channel_shuffle
    for name in _METHOD_FUNCTIONS:
        if name not in namespace:
            namespace[name] = _inplace_function(name)
            added.append(name)
    namespace["index_put"] = _index_put_out_of_place if "index_put" not in namespace else namespace["index_put"]
    for name in _INPLACE_FUNCTIONS:
        if name not in namespace and hasattr(Tensor, name):
            namespace[name] = _inplace_function(name)
            added.append(name)
    return added


# ---------------------------------------------------------------- scatter-into-view, *_copy and small extras
def _scatter_into(input, src, view):
    """input's copy with view(copy) overwritten by src: differentiable for both (a slice copy)."""
    out = input.clone()
    target = view(out)
    if tuple(target.shape) != tuple(src.shape):
        raise RuntimeError(f"expected src to have a size equal to the slice of self. src size = {list(src.shape)}, "
                           f"slice size = {list(target.shape)}")
    target.copy_(src)
    return out


def slice_scatter(input, src, dim=0, start=None, end=None, step=1):
    def view(t):
        size = t.shape[dim]
        s = 0 if start is None else start
        e = size if end is None else end
        return t[(slice(None),) * (dim % t.dim()) + (slice(s, e, step),)]
    return _scatter_into(input, src, view)


def select_scatter(input, src, dim, index):
    return _scatter_into(input, src, lambda t: t.select(dim, index))


def diagonal_scatter(input, src, offset=0, dim1=0, dim2=1):
    return _scatter_into(input, src, lambda t: t.diagonal(offset, dim1, dim2))


def as_strided_scatter(input, src, size, stride, storage_offset=None):
    # torch's output is input.clone(): input's strides kept, so the offsets read in them
    return _scatter_into(input, src,
                         lambda t: t.as_strided(list(size), list(stride), 0 if storage_offset is None else storage_offset))


def _copy_of(view_name):
    def fn(input, *args, **kwargs):
        try:
            result = getattr(input, view_name)(*args, **kwargs)
        except RuntimeError:
            if view_name != "view" or (len(args) == 1 and isinstance(args[0], _k().dtype)):
                raise
            return input.reshape(*args, **kwargs)  # torch's view_copy reshapes (a copy) where a view is impossible
        own = (lambda r: r.contiguous() if not r.is_contiguous() else r.clone())  # contiguous, as torch's
        if isinstance(result, (tuple, list)):
            return [own(r) for r in result]
        return own(result)
    fn.__name__ = fn.__qualname__ = view_name + "_copy"
    fn.__doc__ = f"torch.{view_name}_copy: Tensor.{view_name}'s result as a tensor of its own."
    return fn


_COPY_VIEWS = ["as_strided", "detach", "diagonal", "expand", "permute", "select", "split", "split_with_sizes",
               "squeeze", "t", "transpose", "unbind", "unfold", "unsqueeze", "view", "narrow"]


def alias_copy(input):
    return input.clone()


def cumulative_trapezoid(y, x=None, *, dx=None, dim=-1):
    """Cumulative trapezoidal rule along dim (torch's: spacing dx, default 1, or the sample points x)."""
    kiln = _k()
    if y.dtype == kiln.bool:
        raise RuntimeError("cumulative_trapezoid: received a bool input for `y`, but bool is not supported")
    if x is not None and x.dtype == kiln.bool:
        raise RuntimeError("cumulative_trapezoid: received a bool input for `x`, but bool is not supported")
    n = y.shape[dim]
    dim = dim % max(y.dim(), 1)  # torch wraps dim for y, and slices x along that same index
    if x is not None and x.dim() == 1 and x.shape[0] != n:
        raise RuntimeError("cumulative_trapezoid: There must be one `x` value for each sample point")
    if n == 0:
        return kiln.zeros_like(y).narrow(dim, 0, 0)
    left, right = y.narrow(dim, 0, n - 1), y.narrow(dim, 1, n - 1)
    if x is not None:
        if dx is not None:
            raise RuntimeError("cumulative_trapezoid: received both x and dx")
        if x.dim() == 1:
            shape = [1] * y.dim()
            shape[dim] = x.shape[0]
            x = x.view(shape)
        elif x.dim() < y.dim():  # leading size-1 dims
            x = x.view([1] * (y.dim() - x.dim()) + list(x.shape))
        d = x.narrow(dim, 1, x.shape[dim] - 1) - x.narrow(dim, 0, x.shape[dim] - 1)
        return ((left + right) * d / 2).cumsum(dim)
    return ((left + right) * (1.0 if dx is None else dx) / 2).cumsum(dim)


def fill(input, value):
    """input's shape filled with value (a number or a 0-dim tensor, whose gradient is the sum); input's
    gradient is zero, as torch's."""
    kiln = _k()
    if isinstance(value, Tensor):
        if value.dim() != 0:
            raise RuntimeError(f"fill only supports 0-dimension value tensor but got tensor with {value.dim()} "
                               "dimensions.")
        value = value.to(input.dtype)
    else:
        value = kiln.full([], value, dtype=input.dtype)
    return kiln.where(kiln.ones([], dtype=kiln.bool), value, input)


_ALL_DIMS = object()  # frobenius_norm(input) reduces every dim; an explicit dim=None is torch's TypeError


def frobenius_norm(input, dim=_ALL_DIMS, keepdim=False, *, out=None):
    kiln = _k()
    if dim is None:
        raise TypeError("frobenius_norm(): argument 'dim' (position 2) must be tuple of ints, not NoneType")
    if dim is _ALL_DIMS:
        dim = list(builtins.range(input.dim()))
    result = kiln.linalg.vector_norm(input, 2, dim, keepdim)
    return result if out is None else out.resize_(list(result.shape)).copy_(result)


def nuclear_norm(input, dim=None, keepdim=False, *, out=None):
    kiln = _k()
    if isinstance(dim, builtins.bool):
        dim, keepdim = None, dim
    result = kiln.linalg.matrix_norm(input, "nuc", (-2, -1) if dim is None else dim, keepdim)
    return result if out is None else out.resize_(list(result.shape)).copy_(result)


def angle(input, *, out=None):
    """Real tensors: pi where negative, 0 elsewhere, NaN kept; integers give the default float dtype."""
    kiln = _k()
    x = input if input.is_floating_point() else input.to(kiln.get_default_dtype())
    zero = kiln.zeros([], dtype=x.dtype)
    _check_out_grad("angle", out, input)
    if out is not None and not can_cast(x.dtype, out.dtype):
        raise RuntimeError(f"result type {_scalar_type_name(x.dtype)} can't be cast to the desired output type "
                           f"{_scalar_type_name(out.dtype)}")
    result = kiln.where(kiln.isnan(x), x, kiln.where(x < 0, kiln.full([], math.pi, dtype=x.dtype), zero))
    return result if out is None else out.resize_(list(result.shape)).copy_(result)


def real(input):
    return _tensor_arg("real", input)


def imag(input):
    _tensor_arg("imag", input)
    raise RuntimeError("imag is not implemented for tensors with non-complex dtypes.")


def cholesky_inverse(input, upper=False, *, out=None):
    """(L L^T)^-1 from its Cholesky factor (cholesky_solve of the identity)."""
    kiln = _k()
    if input.dim() < 2 or input.shape[-1] != input.shape[-2]:
        raise RuntimeError("cholesky_inverse: The input tensor A must be a batch of square matrices")
    _check_out_grad("cholesky_inverse", out, input)
    if out is not None and not can_cast(input.dtype, out.dtype):
        raise RuntimeError(f"cholesky_inverse: Expected result to be safely castable from "
                           f"{_scalar_type_name(input.dtype)} dtype, but got result with dtype "
                           f"{_scalar_type_name(out.dtype)}")
    eye = kiln.eye(input.shape[-1], dtype=input.dtype).expand(list(input.shape))
    result = kiln.cholesky_solve(eye, input, upper)
    return result if out is None else out.resize_(list(result.shape)).copy_(result)


def is_storage(obj):
    """torch.is_storage: True for a storage (tensor.storage() / untyped_storage()), False for anything else."""
    from .storage import TypedStorage, UntypedStorage
    return isinstance(obj, (TypedStorage, UntypedStorage))


def is_distributed(input):
    _tensor_arg("is_distributed", input)
    return False


_EXTRA_FUNCTIONS = [slice_scatter, select_scatter, diagonal_scatter, as_strided_scatter, alias_copy,
                    cumulative_trapezoid, fill, frobenius_norm, nuclear_norm, angle, real, imag, cholesky_inverse,
                    is_storage, is_distributed] + [_copy_of(v) for v in _COPY_VIEWS]
_FUNCTIONS.extend(_EXTRA_FUNCTIONS)
_TENSOR_METHODS.update({
    "angle": angle, "cholesky_inverse": cholesky_inverse, "is_distributed": is_distributed,
    "slice_scatter": slice_scatter, "select_scatter": select_scatter, "diagonal_scatter": diagonal_scatter,
    "as_strided_scatter": as_strided_scatter, "narrow_copy": _copy_of("narrow"),
    "cov": lambda self, *, correction=1, fweights=None, aweights=None: _k().cov(self, correction=correction,
                                                                                  fweights=fweights,
                                                                                  aweights=aweights),
    "corrcoef": lambda self: _k().corrcoef(self),
    "histogram": lambda self, bins=100, *, range=None, weight=None, density=False: _k().histogram(
        self, bins, range=range, weight=weight, density=density),
    "renorm_": lambda self, p, dim, maxnorm: self.copy_(_k().renorm(self.clone() if self.requires_grad else self,
                                                                    p, dim, maxnorm)),
    "triangular_solve": lambda self, A, upper=True, transpose=False, unitriangular=False: _k().triangular_solve(
        self, A, upper, transpose, unitriangular),
})


# ---------------------------------------------------------------- ATen-level entry points programs call
def hinge_embedding_loss(input, target, margin=1.0, reduction=0):
    """torch.hinge_embedding_loss: reduction as ATen's enum (1 mean, 2 sum, anything else none). The default is
    0: torch's binding reads the schema's default `Mean` as atol("at::Reduction::Mean"), which is 0."""
    names = {1: "mean", 2: "sum"}
    return _k().nn.functional.hinge_embedding_loss(input, target, margin, reduction=names.get(reduction, "none"))


def convolution(input, weight, bias, stride, padding, dilation, transposed, output_padding, groups):
    """torch.convolution: conv1d/2d/3d or conv_transpose1d/2d/3d by the weight's rank."""
    F = _k().nn.functional
    nd = weight.dim() - 2
    if nd not in (1, 2, 3):
        raise RuntimeError(f"Expected 3D, 4D or 5D weight, but got {weight.dim()}D weight")
    if transposed:
        fn = (F.conv_transpose1d, F.conv_transpose2d, F.conv_transpose3d)[nd - 1]
        return fn(input, weight, bias, stride, padding, output_padding, groups, dilation)
    fn = (F.conv1d, F.conv2d, F.conv3d)[nd - 1]
    return fn(input, weight, bias, stride, padding, dilation, groups)


def grid_sampler(input, grid, interpolation_mode, padding_mode, align_corners):
    kiln = _k()
    op = kiln.grid_sampler_2d if input.dim() == 4 else kiln.grid_sampler_3d
    return op(input, grid, interpolation_mode, padding_mode, align_corners)


def rms_norm(input, normalized_shape, weight=None, eps=None):
    return _k().nn.functional.rms_norm(input, normalized_shape, weight, eps)


def embedding_renorm_(input, indices, max_norm, norm_type):
    """Rows of input (an embedding weight) that indices pick, scaled in place to norm max_norm where longer."""
    for position, arg, v in ((3, "max_norm", max_norm), (4, "norm_type", norm_type)):
        if not _is_number(v):
            raise TypeError(f"embedding_renorm_(): argument '{arg}' (position {position}) must be float, not "
                            f"{type(v).__name__}")
    _k().nn.functional._embedding_renorm_(input, indices, max_norm, norm_type)
    return input


def norm_except_dim(v, pow=2, dim=0):
    """The norm over every dim but dim, kept as size-1 dims (weight_norm's g)."""
    _check_int("norm_except_dim", "pow", 2, pow)
    _check_int("norm_except_dim", "dim", 3, dim)
    if dim == -1:
        return v.norm(pow)
    if dim == 0:
        return v.contiguous().view(v.shape[0], -1).norm(pow, 1).view([v.shape[0]] + [1] * (v.dim() - 1))
    if dim == v.dim() - 1:
        return v.contiguous().view(-1, v.shape[-1]).norm(pow, 0).view([1] * (v.dim() - 1) + [v.shape[-1]])
    return norm_except_dim(v.transpose(0, dim), pow, 0).transpose(0, dim)


_FUNCTIONS.extend([hinge_embedding_loss, convolution, grid_sampler, norm_except_dim, embedding_renorm_, rms_norm])
_TENSOR_PROPERTIES["real"] = lambda self: self
_TENSOR_PROPERTIES["imag"] = imag
