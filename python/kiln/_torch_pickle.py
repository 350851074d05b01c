"""torch.save's checkpoint format: a zip archive holding a pickle and the raw tensor bytes.

Layout (what torch.save writes since 1.6; kiln.save writes the same):

    <archive>/data.pkl    protocol-2 pickle of the object; each tensor is reduced to
                          torch._utils._rebuild_tensor_v2(storage, offset, size, stride,
                          requires_grad, OrderedDict()), the storage a persistent id
                          ('storage', torch.FloatStorage, '<key>', 'cpu', numel)
    <archive>/byteorder   'little' (torch >= 2.0 writes it; older torch ignores it)
    <archive>/data/<key>  the storage's elements, raw little-endian bytes
    <archive>/version     '3\\n'

`<archive>` is the file name's stem (or 'archive' for a file object) and any single top-level
directory is read. Records are stored uncompressed and their data starts 64-byte aligned, as
torch writes them. torch 2.x adds `.format_version`, `.storage_alignment` and
`.data/serialization_id` records, which carry nothing kiln needs; kiln does not write them,
because with `.format_version` >= 1 torch 2.x may compute record offsets from its own
writer's exact layout instead of reading the zip headers.

Reading never imports anything by the names in a file unless weights_only=False: the
restricted unpickler maps the handful of torch names a state_dict uses to kiln's own rebuild
functions and refuses every other global (torch 2.x's rules, torch/_weights_only_unpickler.py).
"""
import _compat_pickle
import codecs
import contextlib
import io
import os
import pickle
import struct
import zipfile
import zlib
from collections import Counter, OrderedDict

import numpy as np

from . import _C

# ---- dtypes: torch's storage class names <-> kiln dtypes ----

# torch storage class -> (kiln dtype name, little-endian NumPy dtype of the raw bytes).
# bfloat16 has no NumPy type: its bytes are read and written as uint16 bit patterns.
_STORAGES = {
    "BoolStorage": ("bool", "|u1"),
    "ByteStorage": ("uint8", "|u1"),
    "CharStorage": ("int8", "|i1"),
    "ShortStorage": ("int16", "<i2"),
    "IntStorage": ("int32", "<i4"),
    "LongStorage": ("int64", "<i8"),
    "HalfStorage": ("float16", "<f2"),
    "BFloat16Storage": ("bfloat16", "<u2"),
    "FloatStorage": ("float32", "<f4"),
    "DoubleStorage": ("float64", "<f8"),
}
# Storages torch has and kiln cannot hold (named in the TypeError).
_UNSUPPORTED_STORAGES = {
    "ComplexHalfStorage": "torch.complex32", "ComplexFloatStorage": "torch.complex64",
    "ComplexDoubleStorage": "torch.complex128", "QUInt8Storage": "torch.quint8", "QInt8Storage": "torch.qint8",
    "QInt32Storage": "torch.qint32", "QUInt4x2Storage": "torch.quint4x2", "QUInt2x4Storage": "torch.quint2x4",
    "UntypedStorage": "torch.uint8 (an untyped storage)", "Float8_e5m2Storage": "torch.float8_e5m2",
    "Float8_e4m3fnStorage": "torch.float8_e4m3fn", "Float8_e5m2fnuzStorage": "torch.float8_e5m2fnuz",
    "Float8_e4m3fnuzStorage": "torch.float8_e4m3fnuz",
}
_KILN_DTYPES = {name: getattr(_C, name) for name, _ in _STORAGES.values()}
_STORAGE_OF = {_KILN_DTYPES[kiln_name]: (storage, np_dtype) for storage, (kiln_name, np_dtype) in _STORAGES.items()}

# torch dtype names (canonical and aliases, as `torch.<name>` globals in a pickle) -> kiln dtype
_TORCH_DTYPES = {
    "bool": "bool", "uint8": "uint8", "int8": "int8", "int16": "int16", "short": "int16", "int32": "int32", "int": "int32", "int64": "int64", "long": "int64",
    "float16": "float16", "half": "float16", "bfloat16": "bfloat16", "float32": "float32",
    "float": "float32", "float64": "float64", "double": "float64",
}
_UNSUPPORTED_DTYPES = {
    "uint16", "uint32", "uint64", "complex32", "chalf", "complex64", "cfloat",
    "complex128", "cdouble", "quint8", "qint8", "qint32", "quint4x2", "quint2x4", "float8_e5m2", "float8_e4m3fn",
    "float8_e5m2fnuz", "float8_e4m3fnuz", "bits8", "bits16", "bits1x8", "bits2x4", "bits4x2",
} | {f"uint{n}" for n in range(1, 8)} | {f"int{n}" for n in range(1, 8)}

_MAX_DIMS = 64            # torch's limit on tensor dimensions
_INT64_MAX = 2 ** 63 - 1
_ALIGNMENT = 64           # where record data starts, as torch's writer aligns it
_FILE_FORMAT_VERSION = b"3\n"  # kProducedFileFormatVersion of torch.save


class CheckpointTypeError(TypeError):
    """A TypeError kiln raises on purpose while loading (a dtype or tensor kind it cannot hold, a
    bad map_location result); the restricted unpickler passes it through, where it turns other
    TypeErrors (a file's wrong arguments, unhashable keys) into UnpicklingError."""


def _dtype_name(dtype):
    return str(dtype).replace("kiln.", "torch.")


# ---- writing ----

class _Global:
    """A global written into the pickle by name (GLOBAL opcode) without importing its module,
    so kiln can write `torch._utils._rebuild_tensor_v2` without torch installed."""
    __slots__ = ("module", "name")
    _cache = {}

    def __new__(cls, module, name):  # one object per name, so the pickle memo writes it once
        key = (module, name)
        if key not in cls._cache:
            obj = object.__new__(cls)
            obj.module, obj.name = module, name
            cls._cache[key] = obj
        return cls._cache[key]

    def __call__(self, *args):  # pickle's save_reduce wants a callable; this one is never called
        raise TypeError(f"{self.module}.{self.name} is a name written to a checkpoint, not a function")


_REBUILD_TENSOR_V2 = _Global("torch._utils", "_rebuild_tensor_v2")
_REBUILD_PARAMETER = _Global("torch._utils", "_rebuild_parameter")
_REBUILD_SPARSE = _Global("torch._utils", "_rebuild_sparse_tensor")
_GET_LAYOUT = _Global("torch.serialization", "_get_layout")


class _SparseCooLayout:
    """Written as torch writes the layout of a sparse tensor: _get_layout('torch.sparse_coo')."""
    __slots__ = ()


_SPARSE_COO_LAYOUT = _SparseCooLayout()


class _StorageRef:
    """Stands for one storage in the pickle; persistent_id turns it into torch's storage tuple."""
    __slots__ = ("group",)

    def __init__(self, group):
        self.group = group


class _StorageGroup:
    """The tensors that view one kiln storage, and the elements [0, extent) they reach."""

    def __init__(self, key, tensor):
        self.key = key
        self.dtype = tensor.dtype
        self.tensor = tensor.detach()  # the bytes are read through it (see _Storages.add)
        self.extent = 0
        self.ref = _StorageRef(self)


class _Storages:
    """Finds the storage each tensor views, so views of one tensor share one storage record.

    kiln does not expose storage objects, so a storage is identified by its start address:
    data_ptr() - storage_offset() * element_size(). Two live storages never start at the same
    address, and the tensors being saved keep theirs alive. The size written is the furthest
    element any saved view reaches (torch writes the whole storage; elements no saved tensor
    can reach are left out).
    """

    def __init__(self):
        self.groups = {}

    def add(self, t):
        if t.dtype not in _STORAGE_OF:
            raise TypeError(f"save(): cannot save a tensor of dtype {t.dtype}")
        start = t.data_ptr() - t.storage_offset() * t.element_size()
        # An empty tensor holds no data: it gets an empty record of its own dtype.
        key = start if t.numel() > 0 else ("empty", start, t.dtype)
        group = self.groups.get(key)
        if group is None:
            group = self.groups[key] = _StorageGroup(str(len(self.groups)), t)
        elif group.dtype != t.dtype:
            raise RuntimeError("Cannot save multiple tensors or storages that view the same data as different types")
        if t.numel() > 0:
            end = t.storage_offset() + sum((s - 1) * st for s, st in zip(t.shape, t.stride())) + 1
            if end > group.extent:
                # read through the tensor that reaches furthest: its storage surely holds [0, end)
                # (two from_numpy tensors may start at one address with storages of different sizes)
                group.extent, group.tensor = end, t.detach()
        return group

    def data(self, group):
        """The group's elements [0, extent) as a little-endian NumPy array (the record's bytes)."""
        storage, np_dtype = _STORAGE_OF[group.dtype]
        if group.extent == 0:
            return np.zeros(0, np_dtype)
        flat = group.tensor.as_strided((group.extent,), (1,), 0).contiguous()
        if storage == "BFloat16Storage":  # exact: a bfloat16 is the top half of its float32
            return (flat.float().numpy().view("<u4") >> 16).astype("<u2")
        return np.ascontiguousarray(flat.numpy()).astype(np_dtype, copy=False)


class _Pickler(pickle._Pickler):
    """The pure-Python pickler, which (unlike the C one) lets `_Global` names through unchecked."""

    dispatch = pickle._Pickler.dispatch.copy()

    def __init__(self, file, protocol, storages, legacy=False):
        from ._device import device
        from ._size import Size
        from .nn.parameter import Parameter
        super().__init__(file, protocol)
        self.storages = storages
        self.legacy = legacy  # the legacy stream's storage ids carry a sixth field, view_metadata (None)
        self._device, self._size, self._parameter = device, Size, Parameter

    def _save_global_name(self, obj):
        self.write(pickle.GLOBAL + obj.module.encode("utf-8") + b"\n" + obj.name.encode("utf-8") + b"\n")
        self.memoize(obj)

    dispatch[_Global] = _save_global_name

    def _save_dtype(self, obj):  # kiln.float32 is written as torch.float32, so torch reads it
        self._save_global_name(_Global("torch", str(obj).split(".", 1)[1]))

    dispatch[_C.dtype] = _save_dtype

    def persistent_id(self, obj):
        if type(obj) is not _StorageRef:
            return None
        group = obj.group
        pid = ("storage", _Global("torch", _STORAGE_OF[group.dtype][0]), group.key, "cpu", group.extent)
        return pid + (None,) if self.legacy else pid

    def reducer_override(self, obj):
        if isinstance(obj, _C.TensorBase):
            if isinstance(obj, self._parameter):  # torch's Parameter.__reduce_ex__
                return (_REBUILD_PARAMETER, (obj.detach(), obj.requires_grad, OrderedDict()))
            group = self.storages.add(obj)
            offset = obj.storage_offset() if obj.numel() > 0 else 0
            return (_REBUILD_TENSOR_V2, (group.ref, offset, tuple(obj.shape), tuple(obj.stride()),
                                         obj.requires_grad, OrderedDict()))
        if getattr(obj, "is_sparse", False) is True and type(obj).__name__ == "SparseCooTensor":
            # torch's sparse Tensor.__reduce_ex__: (layout, (indices, values, size))
            return (_REBUILD_SPARSE, (_SPARSE_COO_LAYOUT, (obj._indices(), obj._values().detach(), obj.shape)))
        if type(obj) is _SparseCooLayout:
            return (_GET_LAYOUT, ("torch.sparse_coo",))
        if type(obj) is self._size:
            return (_Global("torch", "Size"), (tuple(obj),))
        if type(obj) is self._device:
            return (_Global("torch", "device"), (obj.type,) if obj.index is None else (obj.type, obj.index))
        return NotImplemented


def _aligned_info(zf, name, size):
    """A ZipInfo whose data will start on a 64-byte boundary: torch pads the local header's
    extra field (id 'FB') the same way, so its reader can map records in place."""
    info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
    info.compress_type = zipfile.ZIP_STORED
    info.file_size = size
    zip64_extra = 20 if size * 1.05 > zipfile.ZIP64_LIMIT else 0  # zipfile adds it to the local header
    header_end = zf.fp.tell() + 30 + len(name.encode("utf-8")) + zip64_extra + 4
    info.extra = b"FB" + struct.pack("<H", -header_end % _ALIGNMENT) + b"Z" * (-header_end % _ALIGNMENT)
    return info


def pickle_checkpoint(obj, protocol, legacy=False):
    """`obj` as torch's data.pkl (legacy: as the object pickle of the legacy stream), and the storages its
    tensors view (written by write_checkpoint / _legacy_format.write_legacy)."""
    storages = _Storages()
    # Pass 1 finds every tensor, so each storage's size is known before pass 2 writes it.
    _Pickler(io.BytesIO(), protocol, storages, legacy).dump(obj)
    data = io.BytesIO()
    _Pickler(data, protocol, storages, legacy).dump(obj)
    return data.getvalue(), storages


def write_checkpoint(f, archive_name, data_pkl, storages, byteorder_record=True):
    """The zip archive, to the binary file object `f`, records in the order torch writes them."""
    with zipfile.ZipFile(f, "w", zipfile.ZIP_STORED) as zf:
        for name, payload in (("data.pkl", data_pkl), ("byteorder", b"little"))[:2 if byteorder_record else 1]:
            zf.writestr(_aligned_info(zf, f"{archive_name}/{name}", len(payload)), payload)
        for group in storages.groups.values():
            array = storages.data(group)
            with zf.open(_aligned_info(zf, f"{archive_name}/data/{group.key}", array.nbytes), "w") as dst:
                dst.write(memoryview(array).cast("B"))  # no bytes copy of a large tensor
        zf.writestr(_aligned_info(zf, f"{archive_name}/version", 2), _FILE_FORMAT_VERSION)


# ---- reading ----

class _StorageType:
    """What a `torch.FloatStorage`-style global in a file becomes: the storage's dtype."""

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return f"torch.{self.name}"

    def __call__(self, *args, **kwargs):
        raise pickle.UnpicklingError(f"torch.{self.name} cannot be called while loading")


class _LoadedStorage:
    """One storage record, read into a flat kiln tensor that the saved tensors view."""
    __slots__ = ("flat", "numel")

    def __init__(self, flat):
        self.flat = flat
        self.numel = flat.numel()


def _short(value):
    """A value from the file for an error message: its repr if a short plain value, else its type
    (a hostile file's objects may be huge or nested too deep for repr)."""
    if type(value) in (int, float, bool, str, bytes, type(None)):
        return f"{value!r:.80}"
    if type(value) is tuple and len(value) <= 8 and all(type(v) in (int, float, bool, str, bytes) for v in value):
        return f"{value!r:.120}"
    return f"a {type(value).__name__}"


def _int(value, what, lo=0):
    if type(value) is not int or not lo <= value <= _INT64_MAX:
        raise RuntimeError(f"invalid tensor {what}: {_short(value)}")
    return value


def _sizes(value, what):
    if not isinstance(value, tuple) or len(value) > _MAX_DIMS:
        raise RuntimeError(f"invalid tensor {what}: expected a tuple of at most {_MAX_DIMS} ints, "
                           f"got {type(value).__name__}")
    return tuple(_int(v, what) for v in value)


def _view(storage, storage_offset, size, stride):
    """The tensor (size, stride, storage_offset) over a loaded storage, checked first: the
    file's numbers are untrusted, so a view that would reach past the storage is refused."""
    if type(storage) is not _LoadedStorage:
        raise pickle.UnpicklingError(f"expected a storage, got {type(storage).__name__}")
    offset = _int(storage_offset, "storage offset")
    size, stride = _sizes(size, "size"), _sizes(stride, "stride")
    if len(size) != len(stride):
        raise RuntimeError(f"invalid tensor: {len(size)} sizes but {len(stride)} strides")
    numel = 1
    for s in size:
        numel *= s
    if numel > _INT64_MAX:
        raise RuntimeError(f"invalid tensor size {list(size)}: too many elements")
    if numel == 0:
        return _C.empty(list(size), dtype=storage.flat.dtype)
    last = offset + sum((s - 1) * st for s, st in zip(size, stride))
    if last >= storage.numel:
        raise RuntimeError(f"tensor of size {list(size)}, stride {list(stride)} and storage offset {offset} is "
                           f"out of bounds for storage of {storage.numel} elements")
    return storage.flat.as_strided(list(size), list(stride), offset)


def _set_requires_grad(t, requires_grad):
    if type(requires_grad) is not bool:
        raise pickle.UnpicklingError(f"requires_grad must be a bool, got {type(requires_grad).__name__}")
    if requires_grad:
        if not t.is_floating_point():
            raise RuntimeError(f"only Tensors of floating point dtype can require gradients, got {t.dtype}")
        t.requires_grad_(True)
    return t


def _rebuild_tensor(storage, storage_offset, size, stride):
    return _view(storage, storage_offset, size, stride)


def _rebuild_tensor_v2(storage, storage_offset, size, stride, requires_grad, backward_hooks, metadata=None):
    # backward_hooks are never saved by torch (always an empty OrderedDict); metadata holds
    # flags of tensor subclasses kiln does not have.
    return _set_requires_grad(_view(storage, storage_offset, size, stride), requires_grad)


def _rebuild_tensor_v3(storage, storage_offset, size, stride, requires_grad, backward_hooks, dtype, metadata=None):
    if type(storage) is _LoadedStorage and dtype != storage.flat.dtype:
        raise CheckpointTypeError(f"kiln cannot view a {_dtype_name(storage.flat.dtype)} storage as "
                               f"{_dtype_name(dtype)}")
    return _rebuild_tensor_v2(storage, storage_offset, size, stride, requires_grad, backward_hooks, metadata)


def _rebuild_parameter(data, requires_grad, backward_hooks):
    from .nn.parameter import Parameter
    if not isinstance(data, _C.TensorBase):
        raise pickle.UnpicklingError(f"a Parameter's data must be a tensor, got {type(data).__name__}")
    _set_requires_grad(data.detach(), requires_grad)  # checks the dtype can require grad
    return Parameter(data, requires_grad)


def _set_state(obj, state):
    """Attributes a tensor subclass carried (torch._utils._set_obj_state); dunder names are refused."""
    if state is None:
        return obj
    if isinstance(state, tuple) and len(state) == 2:
        dict_state, slots_state = state
    else:
        dict_state, slots_state = state, None
    for part in (dict_state, slots_state):
        if part is None:
            continue
        if not isinstance(part, dict):
            raise pickle.UnpicklingError(f"tensor state must be a dict, got {type(part).__name__}")
        for k, v in part.items():
            if type(k) is not str or k.startswith("__"):
                raise pickle.UnpicklingError(f"cannot set attribute {_short(k)} on a loaded tensor")
            setattr(obj, k, v)
    return obj


def _rebuild_parameter_with_state(data, requires_grad, backward_hooks, state):
    return _set_state(_rebuild_parameter(data, requires_grad, backward_hooks), state)


_REBUILD_FUNCTIONS = (_rebuild_tensor, _rebuild_tensor_v2, _rebuild_tensor_v3, _rebuild_parameter,
                      _rebuild_parameter_with_state)


def _rebuild_from_type_v2(func, new_type, args, state):
    """torch._tensor._rebuild_from_type_v2: a tensor of a subclass, or one with Python attributes."""
    from ._tensor import Tensor
    from .nn.parameter import Parameter
    if func not in _REBUILD_FUNCTIONS or not isinstance(args, tuple):
        raise pickle.UnpicklingError("_rebuild_from_type_v2 needs one of torch's tensor rebuild functions")
    ret = func(*args)
    if type(ret) is not new_type:
        if new_type is Parameter:
            ret = Parameter(ret, ret.requires_grad)
        elif new_type is not Tensor:
            shown = getattr(new_type, "__name__", type(new_type).__name__)
            raise CheckpointTypeError(f"kiln cannot load a tensor of type {shown!s:.80}")
    return _set_state(ret, state)


def _unsupported(what):
    def rebuild(*args, **kwargs):
        raise CheckpointTypeError(f"kiln cannot load {what}")
    rebuild.__name__ = f"unsupported_{what.replace(' ', '_')}"
    return rebuild


def _make_size(*args):
    from ._size import Size
    if len(args) != 1 or not isinstance(args[0], (tuple, list)):
        raise pickle.UnpicklingError("torch.Size takes one tuple of ints")
    return Size(_int(v, "size") for v in args[0])


def _make_device(*args):
    from ._device import device
    if not 1 <= len(args) <= 2 or type(args[0]) is not str or (len(args) == 2 and args[1] is not None
                                                                 and type(args[1]) is not int):
        raise pickle.UnpicklingError("torch.device takes a type string and an optional index")
    try:
        return device(*args)
    except ValueError as e:
        raise CheckpointTypeError(f"kiln has no device {args!r:.80}: {e}") from None


def _encode(text, encoding="utf-8"):
    # _codecs.encode is how protocol-2 pickles spell bytes: encode(str, 'latin1')
    if type(text) is not str or encoding not in ("latin1", "latin-1", "utf-8", "utf8"):
        raise pickle.UnpicklingError("_codecs.encode is only allowed for bytes (str, 'latin1')")
    return codecs.encode(text, encoding)


def _get_layout(name):
    if name == "torch.sparse_coo":
        from ._layout import sparse_coo
        return sparse_coo
    raise CheckpointTypeError(f"kiln has no layout {_short(name)}; cannot load it")


def _rebuild_sparse_tensor(layout, data):
    """torch._utils._rebuild_sparse_tensor for the COO layout: (indices, values, size), not coalesced."""
    from ._layout import sparse_coo
    from ._tensor import Tensor
    from .sparse import SparseCooTensor
    if layout is not sparse_coo:
        raise CheckpointTypeError("kiln loads sparse tensors of the sparse_coo layout only")
    if type(data) is not tuple or len(data) != 3 or not all(isinstance(t, Tensor) for t in data[:2]):
        raise pickle.UnpicklingError("_rebuild_sparse_tensor expects (indices, values, size)")
    indices, values, size = data
    if indices.dim() != 2 or indices.dtype != _C.int64 or values.dim() < 1 or values.shape[0] != indices.shape[1] \
            or len(size) != indices.shape[0] + values.dim() - 1:
        raise pickle.UnpicklingError("_rebuild_sparse_tensor: inconsistent indices, values and size")
    return SparseCooTensor(indices, values, list(size), False)


def torch_globals():
    """The torch names a file may use -> what kiln loads them as; shared by both unpicklers."""
    from ._tensor import Tensor
    from .nn.parameter import Parameter
    table = {
        ("torch._utils", "_rebuild_tensor"): _rebuild_tensor,
        ("torch._utils", "_rebuild_tensor_v2"): _rebuild_tensor_v2,
        ("torch._utils", "_rebuild_tensor_v3"): _rebuild_tensor_v3,
        ("torch._utils", "_rebuild_parameter"): _rebuild_parameter,
        ("torch._utils", "_rebuild_parameter_with_state"): _rebuild_parameter_with_state,
        ("torch._tensor", "_rebuild_from_type_v2"): _rebuild_from_type_v2,
        ("torch._utils", "_rebuild_sparse_tensor"): _rebuild_sparse_tensor,
        ("torch._utils", "_rebuild_sparse_csr_tensor"): _unsupported("sparse tensors"),
        ("torch._utils", "_rebuild_qtensor"): _unsupported("quantized tensors"),
        ("torch._utils", "_rebuild_nested_tensor"): _unsupported("nested tensors"),
        ("torch._utils", "_rebuild_meta_tensor_no_storage"): _unsupported("meta tensors"),
        ("torch._utils", "_rebuild_wrapper_subclass"): _unsupported("tensor subclasses"),
        ("torch._utils", "_rebuild_device_tensor_from_numpy"): _unsupported("tensors of other devices"),
        ("torch._utils", "_rebuild_device_tensor_from_cpu_tensor"): _unsupported("tensors of other devices"),
        ("torch._utils", "_rebuild_xla_tensor"): _unsupported("tensors of other devices"),
        ("torch.serialization", "_get_layout"): _get_layout,
        ("torch", "Size"): _make_size,
        ("torch", "device"): _make_device,
        ("torch", "Tensor"): Tensor,
        ("torch.nn.parameter", "Parameter"): Parameter,
    }
    for module in ("torch", "torch.cuda", "torch.storage"):
        for name in list(_STORAGES) + list(_UNSUPPORTED_STORAGES) + ["TypedStorage"]:
            table[(module, name)] = _StorageType(name)
    for name, kiln_name in _TORCH_DTYPES.items():
        table[("torch", name)] = _KILN_DTYPES[kiln_name]
    return table


def _safe_bytes(kind):
    def make(*args):
        # bytes(n) / bytearray(n) would allocate n bytes: only the forms pickle writes are accepted
        if args and not isinstance(args[0], (str, bytes, bytearray, list)):
            raise pickle.UnpicklingError(f"{kind.__name__}() of {type(args[0]).__name__} is not allowed")
        return kind(*args)
    make.__name__ = kind.__name__
    return make


_SAFE_BUILTINS = {
    ("collections", "OrderedDict"): OrderedDict,
    ("collections", "Counter"): Counter,
    ("_codecs", "encode"): _encode,
    ("builtins", "set"): set,
    ("builtins", "frozenset"): frozenset,
    ("builtins", "complex"): complex,
    ("builtins", "slice"): slice,
    ("builtins", "range"): range,
    ("builtins", "bytearray"): _safe_bytes(bytearray),
    ("builtins", "bytes"): _safe_bytes(bytes),  # protocol 2 writes b'' as bytes()
}

# Modules never loaded in weights_only mode, even when allowlisted (torch blocks the first four).
_BLOCKED_MODULES = {"sys", "os", "posix", "nt", "subprocess", "shutil"}


def _py3_name(module, name):
    """Python 2 names (protocol 2 writes `__builtin__.set`) -> Python 3 ones, as pickle does."""
    if (module, name) in _compat_pickle.NAME_MAPPING:
        return _compat_pickle.NAME_MAPPING[(module, name)]
    return _compat_pickle.IMPORT_MAPPING.get(module, module), name


def _kiln_global(module, name):
    """torch.X.Y -> kiln.X.Y (the module layouts match); a clear error where kiln has no such name."""
    import importlib
    kiln_module = "kiln" + module[len("torch"):]
    try:
        obj = importlib.import_module(kiln_module)
        for part in name.split("."):
            obj = getattr(obj, part)
        return obj
    except (ImportError, AttributeError):
        raise pickle.UnpicklingError(f"cannot load {module}.{name}: kiln has no {kiln_module}.{name}") from None


class Reader:
    """State of one load: the zip, its archive prefix, the storages read so far, map_location."""

    def __init__(self, zf, prefix, byteorder, restore, where, archive_size):
        self.zf, self.prefix, self.byteorder, self.restore, self.where = zf, prefix, byteorder, restore, where
        self.archive_size = archive_size
        self.storages = {}

    def persistent_load(self, pid):
        if not isinstance(pid, tuple) or len(pid) != 5 or _ascii(pid[0]) != "storage":
            raise pickle.UnpicklingError(f"only storages can be persistent ids, got {_short(pid)}")
        _, storage_type, key, location, numel = pid
        key, location = _ascii(key), _ascii(location)
        if type(storage_type) is not _StorageType:
            raise pickle.UnpicklingError(f"expected a torch storage type in a persistent id, got "
                                         f"{type(storage_type).__name__}")
        if type(key) is not str or type(location) is not str or type(numel) is not int or numel < 0:
            raise pickle.UnpicklingError(f"invalid storage persistent id {_short(pid)}")
        if storage_type.name not in _STORAGES:
            dtype = _UNSUPPORTED_STORAGES.get(storage_type.name, f"of torch.{storage_type.name}")
            supported = ", ".join(_dtype_name(d) for d in _STORAGE_OF)
            raise CheckpointTypeError(f"{self.where}: storage {key!r:.40} has dtype {dtype}, which kiln does not "
                                      f"support (supported: {supported})")
        cached = self.storages.get(key)
        if cached is not None:
            if cached.flat.dtype != _KILN_DTYPES[_STORAGES[storage_type.name][0]]:
                raise RuntimeError(f"{self.where}: storage {key!r:.40} is used with two dtypes")
            return cached
        try:
            flat = self.restore(self.read_storage(storage_type.name, key, numel), location)
        except TypeError as e:  # from map_location
            raise CheckpointTypeError(str(e)) from None
        storage = _LoadedStorage(flat)
        self.storages[key] = storage
        return storage

    def read_storage(self, storage_name, key, numel):
        kiln_name, np_dtype = _STORAGES[storage_name]
        name = f"{self.prefix}data/{key}"
        try:
            info = self.zf.getinfo(name)
        except KeyError:
            raise RuntimeError(f"{self.where}: the archive has no record {name!r:.120} for storage {key!r:.40}") \
                from None
        np_dtype = np.dtype(np_dtype)
        nbytes = numel * np_dtype.itemsize
        # Checked before anything is allocated: the sizes in the zip directory are untrusted too.
        if info.file_size != nbytes:
            raise RuntimeError(f"{self.where}: record {name!r:.120} has {info.file_size} bytes but its storage "
                               f"of {numel} elements needs {nbytes}")
        if info.compress_size > self.archive_size or (info.compress_type == zipfile.ZIP_STORED and
                                                      info.compress_size != info.file_size):
            raise RuntimeError(f"{self.where}: record {name!r:.120} claims more bytes than the file holds")
        if info.file_size > 1100 * max(info.compress_size, 1):  # beyond what deflate can reach
            raise RuntimeError(f"{self.where}: record {name!r:.120} has an implausible compression ratio")
        array = np.empty(numel, dtype=np_dtype)
        with zip_errors(self.where):
            with self.zf.open(info) as src:
                got = src.readinto(memoryview(array).cast("B")) if nbytes else 0
        if got != nbytes:
            raise RuntimeError(f"{self.where}: record {name!r:.120} is truncated")
        if self.byteorder == "big" and np_dtype.itemsize > 1:
            array = array.byteswap()
        if kiln_name == "bfloat16":
            return _C.from_numpy((array.astype("<u4") << 16).view("<f4")).to(_C.bfloat16)
        if kiln_name == "bool":
            return _C.from_numpy(array != 0)
        return _C.from_numpy(array.astype(np_dtype.newbyteorder("="), copy=False))


def _ascii(value):
    return value.decode("ascii") if isinstance(value, bytes) else value


class FullUnpickler(pickle.Unpickler):
    """weights_only=False: any global, as pickle would, with torch's names mapped to kiln's."""

    def __init__(self, file, reader, table, **kwargs):
        super().__init__(file, **kwargs)
        self._reader, self._table = reader, table

    def find_class(self, module, name):
        module, name = _py3_name(module, name)
        if (module, name) in self._table:
            return self._table[(module, name)]
        if module == "torch" or module.startswith("torch."):
            return _kiln_global(module, name)
        return super().find_class(module, name)

    def persistent_load(self, pid):
        return self._reader.persistent_load(pid)


class WeightsOnlyUnpickler(pickle._Unpickler):
    """weights_only=True: torch 2.x's restricted unpickler, on the pure-Python pickle machinery.

    Globals come only from the tables above and the user's allowlist (add_safe_globals);
    REDUCE calls and NEWOBJ constructions only those; BUILD, APPEND and SETITEM act only on the
    types torch allows. Opcodes that import or call by other routes (INST, OBJ, EXT*) are refused.
    """

    dispatch = pickle._Unpickler.dispatch.copy()

    def __init__(self, file, reader, table, user_globals, **kwargs):
        super().__init__(file, **kwargs)
        self._reader, self._table, self._user = reader, table, user_globals
        from ._tensor import Tensor
        # What REDUCE may call: the rebuild functions and constructors, not dtypes, storage types or Tensor
        self._allowed = {id(v) for v in (*table.values(), *_SAFE_BUILTINS.values(), *user_globals.values())
                         if callable(v) and not isinstance(v, (_StorageType, _C.dtype)) and v is not Tensor}
        self._user_classes = {id(v) for v in user_globals.values() if isinstance(v, type)}

    def find_class(self, module, name):
        module, name = _py3_name(module, name)
        full = f"{module}.{name}"
        if module.split(".")[0] in _BLOCKED_MODULES:
            raise pickle.UnpicklingError(f"Unsupported global: GLOBAL {full} was not an allowed global, and its "
                                         f"module {module} is blocked: not even add_safe_globals can allow it.")
        for table in (self._table, _SAFE_BUILTINS):
            if (module, name) in table:
                return table[(module, name)]
        if full in self._user:
            return self._user[full]
        if module == "torch" and name in _UNSUPPORTED_DTYPES:
            raise CheckpointTypeError(f"the file uses dtype torch.{name}, which kiln does not support")
        # the name to allowlist: kiln's class for a torch name, the bare name for a builtin
        if module == "builtins":
            shown = name
        elif module == "torch" or module.startswith("torch."):
            shown = "kiln" + full[len("torch"):]
        else:
            shown = full
        raise pickle.UnpicklingError(
            f"Unsupported global: GLOBAL {full} was not an allowed global by default. Please use "
            f"`kiln.serialization.add_safe_globals([{shown}])` or the `kiln.serialization.safe_globals([{shown}])` "
            f"context manager to allowlist this global if you trust this class/function.")

    def persistent_load(self, pid):
        return self._reader.persistent_load(pid)

    def _check_callable(self, func, op):
        if id(func) not in self._allowed:
            raise pickle.UnpicklingError(f"{op}: {type(func).__name__} {getattr(func, '__name__', '')!s:.80} is "
                                         f"not an allowed global")

    def load_reduce(self):
        args = self.stack.pop()
        func = self.stack[-1]
        self._check_callable(func, "REDUCE")
        if not isinstance(args, tuple):
            raise pickle.UnpicklingError("REDUCE arguments must be a tuple")
        try:
            self.stack[-1] = func(*args)
        except TypeError as e:  # wrong arguments in the file, e.g. set(5)
            if isinstance(e, CheckpointTypeError):
                raise
            raise pickle.UnpicklingError(f"REDUCE {getattr(func, '__name__', '')!s:.80}: {e}") from None

    def load_bytearray8(self):
        # pickle's own allocates the claimed length before reading it
        (size,) = struct.unpack("<Q", self.read(8))
        data = self.read(size)
        if len(data) != size:
            raise pickle.UnpicklingError("BYTEARRAY8 runs past the end of the pickle")
        self.append(bytearray(data))

    def load_newobj(self):
        args = self.stack.pop()
        cls = self.stack.pop()
        self._newobj(cls, args, {})

    def load_newobj_ex(self):
        kwargs = self.stack.pop()
        args = self.stack.pop()
        cls = self.stack.pop()
        self._newobj(cls, args, kwargs)

    def _newobj(self, cls, args, kwargs):
        from .nn.parameter import Parameter
        if not isinstance(args, tuple) or not isinstance(kwargs, dict):
            raise pickle.UnpicklingError("NEWOBJ arguments must be a tuple (and a dict)")
        if cls is Parameter:
            self.append(Parameter(*args, **kwargs))
        elif id(cls) in self._user_classes:
            self.append(cls.__new__(cls, *args, **kwargs))
        else:
            shown = getattr(cls, "__name__", type(cls).__name__)
            raise pickle.UnpicklingError(f"Can only create new object for nn.Parameter or classes allowlisted via "
                                         f"`add_safe_globals` but got {shown!s:.80}")

    def load_build(self):
        from .nn.parameter import Parameter
        state = self.stack.pop()
        inst = self.stack[-1]
        kind = type(inst)
        if kind is OrderedDict or kind is Counter:  # a state_dict's `_metadata`
            if not isinstance(state, dict):
                raise pickle.UnpicklingError(f"BUILD of {kind.__name__} needs a dict")
            inst.__dict__.update(state)
        elif kind is Parameter:
            _set_state(inst, state)
        elif kind in self._user.values():
            if hasattr(inst, "__setstate__") and type(inst).__setstate__ is not getattr(object, "__setstate__", None):
                inst.__setstate__(state)
            else:
                slotstate = None
                if isinstance(state, tuple) and len(state) == 2:
                    state, slotstate = state
                if state:
                    inst.__dict__.update(state)
                if slotstate:
                    for k, v in slotstate.items():
                        setattr(inst, k, v)
        else:
            raise pickle.UnpicklingError(f"Can only build Tensor, Parameter, OrderedDict or types allowlisted via "
                                         f"`add_safe_globals`, but got {kind.__name__}")

    def load_append(self):
        value = self.stack.pop()
        self._check_list(self.stack[-1]).append(value)

    def load_appends(self):
        items = self.pop_mark()
        self._check_list(self.stack[-1]).extend(items)

    def _check_list(self, obj):
        if type(obj) is not list and not (isinstance(obj, list) and type(obj) in self._user.values()):
            raise pickle.UnpicklingError(f"Can only append to lists, but got {type(obj).__name__}")
        return obj

    def _check_dict(self, op):
        target = self.stack[-1]
        if type(target) not in (dict, OrderedDict, Counter) and type(target) not in self._user.values():
            raise pickle.UnpicklingError(f"Can only {op} for dict, collections.OrderedDict, collections.Counter, "
                                         f"but got {type(target).__name__}")
        return target

    def load_setitem(self):
        value = self.stack.pop()
        key = self.stack.pop()
        self._check_dict("SETITEM")[key] = value

    def load_setitems(self):
        items = self.pop_mark()
        target = self._check_dict("SETITEMS")
        for i in range(0, len(items) - 1, 2):
            target[items[i]] = items[i + 1]

    def load_additems(self):
        items = self.pop_mark()
        target = self.stack[-1]
        if type(target) is not set:
            raise pickle.UnpicklingError(f"Can only add items to a set, but got {type(target).__name__}")
        target.update(items)

    def _refuse(self):
        raise pickle.UnpicklingError("Unsupported operand: INST, OBJ and EXT opcodes are not allowed in weights_only "
                                     "mode")

    for _op, _fn in ((pickle.REDUCE, load_reduce), (pickle.BYTEARRAY8, load_bytearray8),
                     (pickle.NEWOBJ, load_newobj), (pickle.NEWOBJ_EX, load_newobj_ex),
                     (pickle.BUILD, load_build), (pickle.APPEND, load_append), (pickle.APPENDS, load_appends),
                     (pickle.SETITEM, load_setitem), (pickle.SETITEMS, load_setitems),
                     (pickle.ADDITEMS, load_additems), (pickle.INST, _refuse), (pickle.OBJ, _refuse),
                     (pickle.EXT1, _refuse), (pickle.EXT2, _refuse), (pickle.EXT4, _refuse)):
        dispatch[_op[0]] = _fn
    del _op, _fn

    def load(self):
        try:
            return super().load()
        except EOFError:
            raise  # a pickle that ends early: EOFError, as torch 2.x's unpickler (resume loops catch it)
        except (IndexError, KeyError, struct.error, UnicodeDecodeError, ValueError, AttributeError,
                OverflowError, TypeError) as e:
            if isinstance(e, (pickle.UnpicklingError, CheckpointTypeError)):
                raise
            raise pickle.UnpicklingError(f"the pickle data is corrupted or truncated ({type(e).__name__}: "
                                         f"{str(e)[:200]})") from e


def find_archive(zf, where):
    """The prefix 'name/' of the archive's single top-level directory that holds data.pkl."""
    names = zf.namelist()
    tops = {n.split("/", 1)[0] for n in names}
    if not names or len(tops) != 1 or any("/" not in n for n in names):
        raise RuntimeError(f"{where}: not a torch checkpoint: expected every record in one top-level directory "
                           f"(PytorchStreamReader: file in archive is not in a subdirectory)")
    prefix = tops.pop() + "/"
    if prefix + "constants.pkl" in names:  # torch.jit.save's archives hold a data.pkl too
        raise RuntimeError(f"{where}: this is a TorchScript archive (torch.jit.save), which kiln cannot load")
    if prefix + "data.pkl" not in names:
        raise RuntimeError(f"{where}: not a torch checkpoint: the archive has no {prefix}data.pkl")
    _check_version(zf, prefix, names, where)
    return prefix


# The file format versions torch 2.x's PyTorchStreamReader reads (kMin/kMaxSupportedFileFormatVersion).
_MIN_VERSION, _MAX_VERSION = 1, 10


def _check_version(zf, prefix, names, where):
    """torch's reader refuses an archive without a version record, with one that is not a number, or with
    a version it does not know (a RuntimeError each)."""
    record = prefix + ".data/version" if prefix + ".data/version" in names else prefix + "version"
    if record not in names:
        raise RuntimeError(f"{where}: PytorchStreamReader: the archive has no version record "
                           f"(Expected hasRecord(\"version\") to be true, but got false.)")
    text = read_record(zf, record, where).decode("latin1")
    digits = text.lstrip()
    n = len(digits) - len(digits.lstrip("0123456789"))
    if n == 0:
        raise RuntimeError(f"{where}: Couldn't parse the version {text!r} as Long Long.")
    version = int(digits[:n])
    if version < _MIN_VERSION:
        raise RuntimeError(f"{where}: Attempted to read a PyTorch file with version {version}, but the minimum "
                           f"supported version for reading is {_MIN_VERSION}. Your PyTorch script module file is "
                           f"too old. Please regenerate it with latest version of PyTorch to mitigate this issue.")
    if version > _MAX_VERSION:
        raise RuntimeError(f"{where}: Attempted to read a PyTorch file with version {version}, but the maximum "
                           f"supported version for reading is {_MAX_VERSION}. Your PyTorch installation may be "
                           f"too old.")


def read_byteorder(zf, prefix, where):
    if prefix + "byteorder" not in zf.namelist():
        return "little"  # torch 2.x's default for files without the record
    order = read_record(zf, prefix + "byteorder", where)
    if order not in (b"little", b"big"):
        raise ValueError(f"{where}: Unknown endianness type: {order[:20].decode('latin1')}")
    return order.decode()


@contextlib.contextmanager
def zip_errors(where):
    """A record that does not match its directory entry (bad CRC, truncated, a bad offset or an
    unknown compression) is a RuntimeError naming the file, as torch's PytorchStreamReader raises."""
    try:
        yield
    except (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, zlib.error, NotImplementedError, ValueError,
            OSError) as e:
        raise RuntimeError(f"{where}: PytorchStreamReader failed reading zip archive: {e}") from None


@contextlib.contextmanager
def open_archive(fh, where):
    """The zip archive in the binary file object `fh` (from its current position), and its size."""
    with zip_errors(where):
        start = fh.tell()
        size = fh.seek(0, os.SEEK_END) - start
        fh.seek(start)
        zf = zipfile.ZipFile(fh)
    with zf:
        yield zf, size


def read_record(zf, name, where):
    with zip_errors(where):
        return zf.read(name)
