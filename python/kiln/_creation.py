"""kiln.tensor: a new tensor (a copy) from nested lists, numbers, NumPy arrays or tensors."""
import numbers

import os
import sys
import warnings

import numpy as np

from . import _C

# The 16-bit floats are built in float32 and rounded by kiln, once from float32 as torch does.
_NUMPY_OF = {"bool": np.bool_, "uint8": np.uint8, "int8": np.int8, "int16": np.int16, "int32": np.int32,
             "int64": np.int64, "float32": np.float32, "float64": np.float64, "float16": np.float32,
             "bfloat16": np.float32}
# The NumPy dtypes kiln.from_numpy shares.
_SHARED_NUMPY = tuple(np.dtype(t) for t in (np.bool_, np.uint8, np.int8, np.int16, np.int32, np.int64, np.float16,
                                             np.float32, np.float64))


def _from_numpy_values(data):
    """Whether `data` carries NumPy dtypes (an ndarray or NumPy scalar, or a list of them),
    which torch keeps (np.float64 -> float64) instead of applying Python-number rules."""
    if isinstance(data, (np.ndarray, np.generic)):
        return True
    return isinstance(data, (list, tuple)) and len(data) > 0 and all(
        isinstance(d, (np.ndarray, np.generic)) for d in data)


_NUMBERS_ONLY = object()


def _is_seq(x):
    return isinstance(x, (list, tuple)) or (hasattr(x, "__len__") and hasattr(x, "__getitem__") and not isinstance(x, (str, bytes)))


def _check_ragged(data):
    """Raise torch's error for nested sequences that are not rectangular: the shape comes from the
    first element at each depth; a sequence of another length is a ValueError, a number where a
    sequence belongs (or a sequence where a number belongs) a TypeError."""
    shape, x = [], data
    while _is_seq(x):
        shape.append(len(x))
        if not len(x):
            break
        x = x[0]

    def walk(x, d):
        if d == len(shape):
            if _is_seq(x):
                raise TypeError(f"'{type(x).__name__}' object cannot be interpreted as an integer")
            return
        if not _is_seq(x):
            raise TypeError("not a sequence")
        if len(x) != shape[d]:
            raise ValueError(f"expected sequence of length {shape[d]} at dim {d} (got {len(x)})")
        for v in x:
            walk(v, d + 1)
    walk(data, 0)


def _as_array(data, dtype=None):
    if isinstance(data, np.ndarray):
        arr = data
        if arr.dtype.kind in "OUSVM" or (arr.dtype.kind == "f" and arr.dtype.itemsize > 8):
            # torch converts only arrays of its own dtypes (object, str and long double arrays: TypeError)
            raise TypeError(f"can't convert np.ndarray of type numpy.{arr.dtype.type.__name__}. The only supported "
                            "types are: float64, float32, float16, int64, int32, int16, int8, uint8, and bool.")
    else:
        if isinstance(data, (str, bytes)):
            raise TypeError(f"new(): invalid data type '{type(data).__name__}'")
        try:
            arr = np.array(data)
        except (ValueError, TypeError) as e:
            _check_ragged(data)
            raise ValueError(f"tensor(): could not build a tensor from the data: {e}") from None
        if arr.dtype.kind in "USV":
            # torch takes its shape from the first elements: a str there is one dim too many, a str
            # anywhere else an element of a type it cannot store
            first = data
            while isinstance(first, (list, tuple)) and first:
                first = first[0]
            if isinstance(first, (str, bytes)):
                raise ValueError(f"too many dimensions '{type(first).__name__}'")
            bad = next(x for x in np.ravel(np.array(data, dtype=object)) if isinstance(x, (str, bytes)))
            raise TypeError(f"new(): invalid data type '{type(bad).__name__}'")
        # Python ints beyond int64: torch reads them as doubles for a floating or bool dtype
        big_ints_ok = dtype is not None and str(dtype).split(".")[1] not in ("uint8", "int8", "int16", "int32", "int64")
        if arr.dtype == object:
            flat = [data] if not isinstance(data, (list, tuple)) else list(np.ravel(np.array(data, dtype=object)))
            bad = next((d for d in flat if not isinstance(d, (int, float, bool))), _NUMBERS_ONLY)
            if bad is _NUMBERS_ONLY:   # only numbers: some int too big for int64
                bad = next(d for d in flat if isinstance(d, int) and not isinstance(d, bool) and not -2 ** 63 <= d < 2 ** 63)
            if isinstance(bad, int) and big_ints_ok:
                arr = np.array(data, dtype=np.float64)
            elif isinstance(bad, int):
                raise RuntimeError("Overflow when unpacking long")
            elif dtype is not None:
                raise _not_a_number(bad, dtype)  # torch converts each item to the dtype: its TypeError
            else:
                raise RuntimeError(f"Could not infer dtype of {type(bad).__name__}")
        elif arr.dtype.kind == "c" and dtype is not None:
            leaves = list(np.ravel(np.array(data, dtype=object)))
            np_complex = next((d for d in leaves if isinstance(d, np.complexfloating)), None)
            if np_complex is not None:  # torch reads a NumPy complex scalar as an index: TypeError
                raise TypeError(f"'numpy.{type(np_complex).__name__}' object cannot be interpreted as an integer")
            if dtype != _C.bool:  # (a Python complex is a bool)
                raise _not_a_number(next(d for d in leaves if isinstance(d, complex)), dtype)
        elif arr.dtype == np.float64 and not big_ints_ok and not _from_numpy_values(data) \
                and (np.abs(arr) >= 2 ** 63).any():
            # NumPy makes doubles of ints beyond int64 mixed with smaller ones ([1, 2**63]); torch infers
            # int64 for ints only and refuses them (a float among them makes it float32: no error)
            leaves = list(np.ravel(np.array(data, dtype=object)))
            if all(isinstance(d, int) for d in leaves) and any(not -2 ** 63 <= d < 2 ** 63 for d in leaves):
                raise RuntimeError("Overflow when unpacking long")
        if arr.dtype.kind == "u" and arr.dtype.itemsize == 8 and not _from_numpy_values(data):
            if not big_ints_ok:
                raise RuntimeError("Overflow when unpacking long")  # a Python int above int64's range
            arr = arr.astype(np.float64)
    if dtype is not None:  # convert once, straight from the values
        target = np.dtype(_NUMPY_OF[str(dtype).split(".")[1]])
        if isinstance(data, np.ndarray) and target.kind in "iu" and arr.dtype in _SHARED_NUMPY:
            # torch converts a whole array without range checks, as Tensor.to does (300 -> uint8 44):
            # kiln's cast after from_numpy gives the same values (NumPy's astype differs out of range).
            return arr
        if target.kind in "iu" and arr.dtype.kind in "fiu" and arr.size:
            info = np.iinfo(target)
            if arr.dtype.kind == "f" and not np.isfinite(arr).all():
                raise RuntimeError(f"value cannot be converted to type {str(dtype).split('.')[1]} without overflow")
            # As torch: an unsigned type takes negative ints down to -max, wrapping (uint8 -1 -> 255).
            lowest = -info.max if target.kind == "u" and arr.dtype.kind != "f" else info.min
            if arr.min() < lowest or arr.max() > info.max:
                raise RuntimeError(f"value cannot be converted to type {str(dtype).split('.')[1]} without overflow")
        return arr.astype(target) if target.kind != "u" else arr.astype(np.int64).astype(target)
    if _from_numpy_values(data):
        return arr
    # Python numbers follow torch's rules: float -> default dtype, int -> int64.
    if arr.dtype.kind == "f":
        arr = arr.astype(_NUMPY_OF[str(_C.get_default_dtype()).split(".")[1]])
    elif arr.dtype.kind in "iu":
        arr = arr.astype(np.int64)
    elif arr.dtype.kind != "b":
        raise TypeError(f"new(): unsupported data type '{arr.dtype}'")
    return arr


def _not_a_number(item, dtype):
    """torch's error for an item of tensor(data, dtype=) that is no real number (None, a dict, a complex)."""
    name = type(item).__name__
    if dtype in (_C.float16, _C.bfloat16, _C.float32, _C.float64):
        return TypeError(f"must be real number, not {name}")
    return TypeError(f"'{name}' object cannot be interpreted as an integer")


def _legacy_data_check(data):
    """torch's legacy constructors (Tensor(...), FloatTensor(...)) take sizes or a sequence of data: a lone
    float, None, a dict, a set or a NumPy float scalar is a TypeError."""
    if isinstance(data, (_C.TensorBase, np.ndarray, list, tuple, range, str, bytes)):
        return
    if hasattr(type(data), "__len__") and hasattr(type(data), "__getitem__") and not isinstance(data, dict):
        return
    kind = type(data)
    name = kind.__name__ if kind.__module__ == "builtins" else f"{kind.__module__}.{kind.__name__}"
    raise TypeError(f"new(): data must be a sequence (got {name})")


def _flat_numbers(data):
    """The tensor torch.tensor makes of a flat list of Python floats and ints (no bools, tensors or
    nesting: the common `torch.tensor([ix[w] for w in words])`) without tensor()'s general pass;
    None for anything else."""
    kinds = set(map(type, data))
    if kinds == {int}:
        try:
            return _C.from_numpy(np.array(data, dtype=np.int64)).clone()
        except OverflowError:
            return None  # an int beyond int64: the general path's error
    if kinds and kinds <= {float, int}:
        default = _C.get_default_dtype()
        if default in (_C.float32, _C.float64):  # a copy in the default dtype, rounded once from the doubles
            return _C.TensorBase.to(_C.from_numpy(np.array(data, dtype=np.float64)), default, False, True)
    return None


_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))
_COPY_CONSTRUCT = ("To copy construct from a tensor, it is recommended to use sourceTensor.clone().detach() or "
                   "sourceTensor.clone().detach().requires_grad_(True), rather than {}(sourceTensor).")


def _called_by_user():
    """Whether the code calling kiln.tensor / Tensor.new_tensor is the user's (kiln's own copies, such as the
    legacy FloatTensor(t) constructors, do not warn, as torch's do not)."""
    frame = sys._getframe(2)
    while frame is not None:
        name = os.path.abspath(frame.f_code.co_filename)
        if not name.startswith(_PACKAGE_DIR):
            return True
        if os.path.basename(name) not in ("_arg_errors.py", "_tensor.py") or frame.f_code.co_name not in (
                "wrapper", "new_tensor"):
            return False
        frame = frame.f_back
    return True


def tensor(data, *, dtype=None, device=None, requires_grad=False, pin_memory=False, _caller="torch.tensor"):
    """Like torch.tensor: always copies `data` (pin_memory is accepted: kiln has only the CPU)."""
    if isinstance(data, _C.TensorBase) and _called_by_user():  # torch warns on each copy construction
        from .linalg._out import _caller_stacklevel
        warnings.warn(_COPY_CONSTRUCT.format(_caller), UserWarning, stacklevel=_caller_stacklevel())
    if device is not None:
        from ._device import check_cpu
        check_cpu(device)  # 'cuda': AssertionError, as torch's CPU-only builds
        device = None
    if not isinstance(requires_grad, bool):
        raise TypeError(f"tensor(): argument 'requires_grad' must be bool, not {type(requires_grad).__name__}")
    if isinstance(data, np.ndarray) and any(st < 0 for st in data.strides):
        raise ValueError("At least one stride in the given numpy array is negative, and tensors with negative "
                         "strides are not currently supported. (You can probably work around this by making a "
                         "copy of your array  with array.copy().) ")
    if dtype is None and _C.get_default_dtype() in (_C.float16, _C.bfloat16) and not _from_numpy_values(data) \
            and not isinstance(data, _C.TensorBase):
        # Python floats take a 16-bit default dtype too, rounded once from the doubles (the general
        # path infers float32 for them)
        t = _default_16bit(data, requires_grad)
        if t is not None:
            return t
    if type(data) is list and dtype is None and device is None:
        t = _flat_numbers(data)
        if t is not None:
            return t.requires_grad_(True) if requires_grad else t
    from ._tensor import Tensor
    if isinstance(data, Tensor):
        t = data.detach().clone()
    else:
        if isinstance(data, (list, tuple)):
            if _first_elements_cycle(data):
                raise ValueError(f"too many dimensions '{type(data).__name__}'")
            data, inferred = _tensor_leaves_as_numbers(data, dtype)
            dtype = dtype if dtype is not None or inferred is None else inferred
        arr = np.asarray(_as_array(data, dtype), order="C")
        if arr.size == 0:  # an array's own strides (kept by the copy, as torch's); nested lists row-major
            src = _C.from_numpy(arr)
            t = _numpy_strides(src, arr).clone() if isinstance(data, np.ndarray) else _C.empty(list(arr.shape), dtype=src.dtype)
        else:
            t = _C.from_numpy(arr).clone()
            if isinstance(data, np.ndarray) and data.ndim > 1 and not data.flags.c_contiguous:
                t = _array_layout(t, data)
    if dtype is not None and t.dtype != dtype:
        t = t.to(dtype)
    if requires_grad:
        t.requires_grad_(True)
    return t


_FLOATING = (_C.float16, _C.bfloat16, _C.float32, _C.float64)


def _default_16bit(data, requires_grad):
    """tensor(data) under a float16/bfloat16 default dtype: what the float32 default would give,
    remade in the default dtype when that is floating (None: not the case, build as usual)."""
    default = _C.get_default_dtype()
    _C.set_default_dtype(_C.float32)
    try:
        t = tensor(data)
    finally:
        _C.set_default_dtype(default)
    if t.dtype != _C.float32:
        return None
    return tensor(data, dtype=default, requires_grad=requires_grad)


_NUMPY_SCALAR_DTYPES = {"bool": _C.bool, "uint8": _C.uint8, "int8": _C.int8, "int16": _C.int16, "int32": _C.int32,
                        "int64": _C.int64, "float16": _C.float16, "float32": _C.float32, "float64": _C.float64}


def _first_elements_cycle(data):
    """Whether following first elements from `data` comes back to a list already seen: torch's size
    inference then finds ever more dims (ValueError "too many dimensions")."""
    seen = set()
    while isinstance(data, (list, tuple)) and data:
        if id(data) in seen:
            return True
        seen.add(id(data))
        data = data[0]
    return False


def _tensor_leaves_as_numbers(data, target=None):
    """torch.tensor([t0, t1]) reads one-element tensors inside a list as numbers (a ValueError for
    others), and the dtype as the promotion of theirs with the numbers' (int64, the default float,
    bool). Returns (data with numbers for tensors, that dtype or None when no tensor was found)."""
    from ._dtype_info import promote_types
    from ._tensor import Tensor
    found, kinds = [], set()
    path = set()  # ids of the lists being walked: a list inside itself

    def convert(x):
        if isinstance(x, np.generic) and x.dtype.name in _NUMPY_SCALAR_DTYPES:
            found.append(_NUMPY_SCALAR_DTYPES[x.dtype.name])  # torch infers a NumPy scalar's own dtype
            return x
        if isinstance(x, np.ndarray) and x.ndim == 0:
            raise TypeError("len() of unsized object")  # torch reads an array inside a list as a sequence
        if isinstance(x, Tensor):
            if x.numel() != 1:
                raise ValueError("only one element tensors can be converted to Python scalars")
            found.append(x.dtype)
            if target is not None and target not in _FLOATING and target != _C.bool and x.dtype in _FLOATING:
                raise TypeError("only integer tensors of a single element can be converted to an index")
            return x.item()
        if isinstance(x, (list, tuple)):
            if id(x) in path:
                raise TypeError("new(): self-referential lists are incompatible")
            path.add(id(x))
            try:
                return [convert(e) for e in x]
            finally:
                path.discard(id(x))
        kinds.add(_C.bool if isinstance(x, bool) else _C.int64 if isinstance(x, int) else
                  _C.get_default_dtype() if isinstance(x, float) else None)
        return x

    converted = convert(data)
    if not found:
        return data, None
    result = found[0]
    for d in found[1:] + [k for k in kinds if k is not None]:
        result = promote_types(result, d)
    return converted, result


def _numpy_strides(t, arr):
    """`t` (made by _C.from_numpy from `arr`) with an empty array's own strides, as torch reads them
    (PyArray_STRIDES: np.zeros((3, 0, 2)).strides is (0, 0, 0)); NumPy's buffer export, which kiln's
    C++ reads, gives C-contiguous ones. Kiln's own uses of _C.from_numpy keep those."""
    if arr.size == 0 and arr.ndim:
        st = [s // arr.itemsize for s in arr.strides]
        if st != list(t.stride()):
            return t.as_strided(list(t.shape), st)
    return t


def _array_layout(t, array):
    """`t` (row-major) laid out as torch copies `array` (preserve_format over the array's own strides:
    np.zeros((2, 3)).T stays column-major, a broadcast or sliced array becomes dense in its dims' order)."""
    try:
        like = _C.empty_like(_C.from_numpy(array))
    except (TypeError, ValueError, RuntimeError):  # a dtype or strides from_numpy refuses: row-major
        return t
    if list(like.stride()) == list(t.stride()):
        return t
    out = _C.empty_strided(list(t.shape), list(like.stride()), dtype=t.dtype)
    out.copy_(t)
    return out


def from_numpy(ndarray):
    """torch.from_numpy: a tensor sharing the array's memory, with its strides."""
    t = _C.from_numpy(ndarray)
    return _numpy_strides(t, ndarray)


def as_tensor(data, dtype=None, device=None):
    """Like torch.as_tensor: shares memory with a tensor or NumPy array when no conversion is needed."""
    from ._tensor import Tensor
    if device is not None:
        from ._device import check_cpu
        check_cpu(device)
        device = None
    if isinstance(data, Tensor):
        return data if dtype is None or data.dtype == dtype else data.to(dtype)
    if isinstance(data, np.ndarray) and data.flags.c_contiguous and data.dtype in _SHARED_NUMPY:
        t = _numpy_strides(_C.from_numpy(data), data)
        return t if dtype is None or t.dtype == dtype else t.to(dtype)
    return tensor(data, dtype=dtype, device=device)


_CPP_TYPE_NAMES = {"float32": "float", "float64": "double", "float16": "c10::Half", "bfloat16": "c10::BFloat16",
                   "int64": "long int", "int32": "int", "int16": "short int", "int8": "signed char",
                   "uint8": "unsigned char", "bool": "bool"}


def _options(dtype):
    """A CPU tensor type's TensorOptions as torch prints them in its legacy constructors' TypeError."""
    name = _CPP_TYPE_NAMES.get(str(dtype).split(".")[-1], str(dtype))
    return (f"TensorOptions(dtype={name}, device=cpu, layout=Strided, requires_grad=false (default), "
            "pinned_memory=false (default), memory_format=(nullopt))")


class _LegacyTensorType(type):
    """torch's legacy tensor types (torch.FloatTensor, ...): FloatTensor(2, 3) is uninitialised of that
    shape, FloatTensor([1, 2]) a copy of the data; isinstance(t, FloatTensor) asks t's dtype;
    t.type(FloatTensor) converts."""

    def __call__(cls, *args):
        if len(args) == 1 and not isinstance(args[0], numbers.Integral):
            _legacy_data_check(args[0])
            if isinstance(args[0], _C.TensorBase):
                # torch's new_with_tensor: the tensor itself (an alias) when its type is the constructor's,
                # a TypeError otherwise (torch.LongTensor(float_tensor) does not convert)
                if args[0].dtype != cls.dtype:
                    raise TypeError(f"expected {_options(cls.dtype)} (got {_options(args[0].dtype)})")
                return args[0]
            return tensor(args[0], dtype=cls.dtype)
        for i, a in enumerate(args):
            if not isinstance(a, int) or isinstance(a, bool):
                raise TypeError(f"new(): argument 'size' must be tuple of ints, but found element of type "
                                f"{type(a).__name__} at pos {i + 1}")
        return _C.empty(list(args) if args else [0], dtype=cls.dtype)

    def __instancecheck__(cls, obj):
        return isinstance(obj, _C.TensorBase) and obj.dtype == cls.dtype

    def __repr__(cls):
        return f"<class 'kiln.{cls.__name__}'>"


def _legacy_constructor(dtype, name):
    return _LegacyTensorType(name, (), {"dtype": dtype, "is_sparse": False, "is_cuda": False, "__module__": "kiln"})


FloatTensor = _legacy_constructor(_C.float32, "FloatTensor")
DoubleTensor = _legacy_constructor(_C.float64, "DoubleTensor")
LongTensor = _legacy_constructor(_C.int64, "LongTensor")
IntTensor = _legacy_constructor(_C.int32, "IntTensor")
ShortTensor = _legacy_constructor(_C.int16, "ShortTensor")
CharTensor = _legacy_constructor(_C.int8, "CharTensor")
ByteTensor = _legacy_constructor(_C.uint8, "ByteTensor")
BoolTensor = _legacy_constructor(_C.bool, "BoolTensor")
HalfTensor = _legacy_constructor(_C.float16, "HalfTensor")
BFloat16Tensor = _legacy_constructor(_C.bfloat16, "BFloat16Tensor")


def set_default_tensor_type(t):
    """torch.set_default_tensor_type (deprecated in torch 2.x for set_default_dtype): a legacy
    floating tensor type (kiln.DoubleTensor or its name 'torch.DoubleTensor') sets the default dtype."""
    if isinstance(t, str):
        name = t.rpartition(".")[2]
        legacy = globals().get(name)
        if not isinstance(legacy, _LegacyTensorType) or t.rpartition(".")[0] not in ("torch", "kiln"):
            raise TypeError(f"invalid type: '{t}'")
        t = legacy
    if not isinstance(t, _LegacyTensorType):
        raise TypeError("invalid type object")
    if t.dtype not in (_C.float16, _C.bfloat16, _C.float32, _C.float64):
        raise TypeError("only floating-point types are supported as the default type")
    _C.set_default_dtype(t.dtype)
