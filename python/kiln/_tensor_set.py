"""Tensor.set_(): self takes another storage (and a geometry on it), sharing its memory, as torch.

set_() an empty storage of its own; set_(source_tensor) the source's storage, sizes, strides and
offset; set_(storage_or_tensor, storage_offset, size, stride=()) a geometry on that storage (grown
when the geometry reaches past its end, as torch). self keeps its identity and its version counter
(bumped once). In grad mode a leaf that requires grad refuses, as torch's in-place ops; a result
that records a gradient gets a node whose backward raises (torch has no derivative for set_)."""
from . import _C
from ._no_derivative import _NoDerivative
from .storage import TypedStorage, UntypedStorage, _whole_storage

_SIGNATURES = ("set_() received an invalid combination of arguments - got ({got}), but expected one of:\n"
               " * ()\n"
               " * (kiln.Storage source)\n"
               " * (kiln.Storage source, int storage_offset, tuple of ints size, tuple of ints stride)\n"
               " * (Tensor source)\n"
               " * (Tensor source, int storage_offset, tuple of ints size, tuple of ints stride)")


def _type_error(args, kwargs):
    got = [type(a).__name__ for a in args] + [f"{k}={type(v).__name__}" for k, v in kwargs.items()]
    return TypeError(_SIGNATURES.format(got=", ".join(got)))


def _is_int(x):
    return isinstance(x, int) and not isinstance(x, bool)


def _int_tuple(x):
    return isinstance(x, (tuple, list)) and all(_is_int(v) for v in x)


def _parse(args, kwargs):
    """(source, storage_offset, size, stride) with torch's overloads; TypeError for anything else."""
    names = ("source", "storage_offset", "size", "stride")
    if len(args) > 4 or any(k not in names for k in kwargs):
        raise _type_error(args, kwargs)
    values = dict(zip(names, args))
    for k, v in kwargs.items():
        if k in values:
            raise _type_error(args, kwargs)
        values[k] = v
    source = values.get("source")
    is_storage = isinstance(source, (TypedStorage, UntypedStorage))
    if source is None:
        if values:
            raise _type_error(args, kwargs)
        return None, None, None, None
    if not (is_storage or isinstance(source, _C.TensorBase)):
        raise _type_error(args, kwargs)
    if len(values) == 1:
        return source, None, None, None
    offset, size, stride = values.get("storage_offset"), values.get("size"), values.get("stride", ())
    if not (_is_int(offset) and _int_tuple(size) and _int_tuple(stride)):
        raise _type_error(args, kwargs)
    return source, offset, list(size), list(stride)


def _flat(source, dtype):
    """A flat alias of dtype `dtype` over the whole of source's storage (offset 0)."""
    if isinstance(source, _C.TensorBase):
        if source.dtype != dtype:
            raise RuntimeError(f"set_(): the source tensor has dtype {source.dtype} but self has dtype {dtype}; "
                               f"they must match")  # torch 1.13: an internal assert
        return _whole_storage(source)
    if isinstance(source, TypedStorage):
        if source.dtype != dtype:
            raise RuntimeError(f"Expected a Storage of type {dtype} or an UntypedStorage, but got type "
                               f"{source.dtype} for argument 1 'storage'")
        return _whole_storage(source._tensor)
    from . import uint8
    owner = source._tensor
    nbytes = owner._storage_nbytes()
    raw = owner.detach().as_strided((nbytes // owner.element_size(),), (1,), 0).view(uint8)
    itemsize = _C.empty([0], dtype=dtype).element_size()
    return raw[:nbytes // itemsize * itemsize].view(dtype)  # whole elements only, as torch


def _geometry(flat, offset, size, stride):
    """flat's storage seen with this geometry, the storage grown to hold it (torch's set_ resizes)."""
    if offset < 0:
        raise RuntimeError(f"Tensor: invalid storage offset {offset}")
    if stride and len(stride) != len(size):
        raise RuntimeError(f"unequal size length ({len(size)}) and stride length ({len(stride)})")
    if any(n < 0 for n in size):
        raise RuntimeError(f"set_(): negative size in {tuple(size)}")
    if any(s < 0 for s in stride):
        raise RuntimeError(f"Storage size calculation overflowed with sizes={size} and strides={stride}")
    if not stride:  # contiguous
        stride, step = [0] * len(size), 1
        for d in range(len(size) - 1, -1, -1):
            stride[d], step = step, step * max(size[d], 1)
    if all(n > 0 for n in size):
        needed = offset + 1 + sum((n - 1) * s for n, s in zip(size, stride))
        if needed > flat.numel():
            _C._resize_(flat, [needed])  # grows the shared storage: every tensor on it sees the new size
    return flat.as_strided(size, stride, offset)


def set_(self, *args, **kwargs):
    source, offset, size, stride = _parse(args, kwargs)
    if source is None:
        target = _C.empty([0], dtype=self.dtype)
    elif offset is None and isinstance(source, _C.TensorBase):
        _flat(source, self.dtype)  # the dtype check
        target = source.detach()
    else:
        flat = _flat(source, self.dtype)
        if offset is None:
            offset, size, stride = 0, [flat.numel()], [1]
        target = _geometry(flat, offset, size, stride)
    records = _C.is_grad_enabled() and (self.requires_grad or (isinstance(source, _C.TensorBase)
                                                                and source.requires_grad))
    if not records:
        _C._adopt_view_geometry(self, self.detach(), "set_")  # torch's in-place checks; bumps the version
        self.data = target
        return self
    if self.requires_grad and self.is_leaf:
        raise RuntimeError("a leaf Variable that requires grad is being used in an in-place operation.")
    if self._is_view():
        # torch rebases the base's history on a node without a derivative: its backward raises this
        raise RuntimeError("derivative for set_ is not implemented (set_ of a view of a tensor that requires grad)")
    inputs = [t for t in (self, source) if isinstance(t, _C.TensorBase) and t.requires_grad]
    node_out = _NoDerivative.apply("set_", [target], *inputs)
    self.data = target
    _C._adopt_view_geometry(self, node_out, "set_")  # self's history: the node; bumps the version
    return self
