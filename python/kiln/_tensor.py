"""kiln.Tensor: the C++ TensorBase plus the parts that are clearer in Python
(operators, indexing, repr, NumPy conversion, backward)."""
import numbers

from . import _C
from ._tensor_str import tensor_repr


def _is_number(x):
    return isinstance(x, numbers.Number) and not isinstance(x, complex)


class Tensor(_C.TensorBase):
    __module__ = "kiln"
    __array_priority__ = 1000  # NumPy defers binary operators to us

    # ---- display and conversion ----
    def __repr__(self):
        return tensor_repr(self)

    def numpy(self):
        """A NumPy array sharing this tensor's memory (CPU tensors that don't require grad)."""
        import numpy as np
        return np.asarray(self)

    def tolist(self):
        if self.dim() == 0:
            return self.item()
        return self.detach().numpy().tolist()

    def __len__(self):
        if self.dim() == 0:
            raise TypeError("len() of a 0-d tensor")
        return self.shape[0]

    def __iter__(self):
        if self.dim() == 0:
            raise TypeError("iteration over a 0-d tensor")
        return (self.select(0, i) for i in range(self.shape[0]))

    def __bool__(self):
        if self.numel() != 1:
            raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
        return bool(self.item())

    def __float__(self):
        return float(self.item())

    def __int__(self):
        return int(self.item())

    def __index__(self):
        if self.numel() != 1 or self.is_floating_point() or self.dtype == _C.bool:
            raise TypeError("only integer tensors of a single element can be converted to an index")
        return int(self.item())

    __hash__ = _C.TensorBase.__hash__

    # ---- conversions ----
    def to(self, *args, **kwargs):
        """to(dtype), to(device), to(device, dtype), to(other_tensor); copy=False returns self when nothing changes."""
        from ._device import device as _device
        dtype, dev = kwargs.pop("dtype", None), kwargs.pop("device", None)
        copy = kwargs.pop("copy", False)
        kwargs.pop("non_blocking", None)
        if kwargs:
            raise TypeError(f"to() got unexpected keyword arguments {sorted(kwargs)}")
        for a in args:
            if isinstance(a, _C.dtype):
                dtype = a
            elif isinstance(a, (str, _device)):
                dev = a
            elif isinstance(a, _C.TensorBase):
                dtype, dev = a.dtype, a.device
            else:
                raise TypeError(f"to() received an invalid argument of type {type(a).__name__}")
        if dev is not None and _device(dev).type != "cpu":
            raise RuntimeError(f"to(): device {dev} is not available (kiln has no CUDA backend yet)")
        if dtype is None:
            return self.clone() if copy else self
        return _C.TensorBase.to(self, dtype, False, copy)

    def cpu(self):
        return self

    @property
    def T(self):
        """The dims in reverse order (t() for matrices)."""
        return self.permute(list(range(self.dim() - 1, -1, -1)))

    @property
    def mT(self):
        return self.transpose(-2, -1)

    def float(self):
        return self.to(_C.float32)

    def double(self):
        return self.to(_C.float64)

    def long(self):
        return self.to(_C.int64)

    def int(self):
        return self.to(_C.int32)

    def bool(self):
        return self.to(_C.bool)

    # ---- autograd ----
    def backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
        from . import autograd
        autograd.backward(self, gradient, retain_graph, create_graph, inputs=inputs)

    def register_hook(self, hook):
        """Calls hook(grad) when this tensor's gradient is computed; it may return a replacement."""
        handle = _RemovableHandle()

        def run(grad):
            return None if handle.removed else hook(grad)
        self._register_hook(run)
        return handle

    # ---- operators ----
    def __add__(self, other):
        return _C.add(self, other)

    __radd__ = __add__

    def __iadd__(self, other):
        return self.add_(other)

    def __sub__(self, other):
        return _C.sub(self, other)

    def __rsub__(self, other):
        return _C.sub(_wrap(other), self)

    def __isub__(self, other):
        return self.sub_(other)

    def __mul__(self, other):
        return _C.mul(self, other)

    __rmul__ = __mul__

    def __imul__(self, other):
        return self.mul_(other)

    def __truediv__(self, other):
        return _C.div(self, other)

    def __rtruediv__(self, other):
        return _C.div(_wrap(other), self)

    def __itruediv__(self, other):
        return self.div_(other)

    def __neg__(self):
        return _C.neg(self)

    def __abs__(self):
        return _C.abs(self)

    # Comparisons are elementwise and give bool tensors (so Tensor keeps identity hashing).
    def __eq__(self, other):
        if other is None:
            return False
        return _C.eq(self, other)

    def __ne__(self, other):
        if other is None:
            return True
        return _C.ne(self, other)

    def __lt__(self, other):
        return _C.lt(self, other)

    def __le__(self, other):
        return _C.le(self, other)

    def __gt__(self, other):
        return _C.gt(self, other)

    def __ge__(self, other):
        return _C.ge(self, other)

    def __pos__(self):
        return self

    def __pow__(self, exponent):
        return _C.pow(self, exponent)

    def __rpow__(self, base):
        return _C.pow(base, self)

    def __ipow__(self, exponent):
        return self.pow_(exponent)

    def __floordiv__(self, other):
        return _C.floor_divide(self, other)

    def __rfloordiv__(self, other):
        return _C.floor_divide(_wrap(other), self)

    def __ifloordiv__(self, other):
        return self.floor_divide_(other)

    def __mod__(self, other):
        return _C.remainder(self, other)

    def __rmod__(self, other):
        return _C.remainder(_wrap(other), self)

    def __imod__(self, other):
        return self.remainder_(other)

    def __invert__(self):
        if self.dtype != _C.bool:
            raise TypeError("~ (bitwise not) is only supported for bool tensors in kiln")
        return _C.logical_not(self)

    def __matmul__(self, other):
        return _C.matmul(self, other)

    # ---- indexing (basic: ints, slices, None, ...) ----
    def __getitem__(self, index):
        return _index(self, index)

    def __setitem__(self, index, value):
        if isinstance(index, _C.TensorBase) and index.dtype == _C.bool and _is_number(value):
            mask = index
            if tuple(mask.shape) != tuple(self.shape):
                mask = mask.view(list(mask.shape) + [1] * (self.dim() - mask.dim())).expand(list(self.shape))
            self.masked_fill_(mask, value)
            return
        parts = index if isinstance(index, tuple) else (index,)
        if any(isinstance(i, list) or (isinstance(i, _C.TensorBase) and (i.dim() > 0 or i.dtype == _C.bool))
               for i in parts):
            # Advanced indexing makes a copy: writing into it would silently not reach self.
            raise NotImplementedError("assignment through integer lists/tensors (index_put_) is not supported yet; "
                                      "bool masks with a number value are")
        target = _index(self, index)
        if isinstance(value, _C.TensorBase):
            target.copy_(value)
        elif _is_number(value):
            target.fill_(value)
        else:
            raise TypeError(f"can't assign a {type(value).__name__} to a Tensor")


class _RemovableHandle:
    def __init__(self):
        self.removed = False

    def remove(self):
        self.removed = True


def _wrap(x):
    if _is_number(x):
        return _C._wrap_scalar(x)
    raise TypeError(f"unsupported operand type: '{type(x).__name__}'")


def _as_index_tensor(i):
    """A list/tuple of ints or an integer tensor as a 1-D int64 tensor; None if `i` isn't one."""
    if isinstance(i, _C.TensorBase):
        if i.dtype in (_C.int64, _C.int32) and i.dim() == 1:
            return i
        return None
    if isinstance(i, list) and all(isinstance(v, numbers.Integral) and not isinstance(v, bool) for v in i):
        from ._creation import tensor
        return tensor(i, dtype=_C.int64) if i else _C.zeros(0, dtype=_C.int64)
    return None


def _mask_indices(t, mask):
    """x[mask]: the rows of x (flattened over the mask's dims) where mask is True."""
    import numpy as np
    if tuple(mask.shape) != tuple(t.shape[:mask.dim()]):
        raise IndexError(f"The shape of the mask {list(mask.shape)} does not match the shape of the indexed tensor "
                         f"{list(t.shape)}")
    flat = t.reshape([-1] + list(t.shape[mask.dim():]))
    from ._creation import tensor
    positions = tensor(np.flatnonzero(mask.numpy()).astype(np.int64))
    return _C.index_select(flat, 0, positions)


def _index(t, index):
    """Basic indexing (ints, slices, None, ...) as views; one integer list/tensor or a
    bool mask as a copy (index_select), as PyTorch resolves them."""
    if isinstance(index, _C.TensorBase) and index.dtype == _C.bool:
        return _mask_indices(t, index)
    if not isinstance(index, tuple):
        index = (index,)
    n_ellipsis = sum(1 for i in index if i is Ellipsis)
    if n_ellipsis > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    consumed = sum(1 for i in index if i is not None and i is not Ellipsis)
    if consumed > t.dim():
        raise IndexError(f"too many indices for tensor of dimension {t.dim()}")
    result, dim, advanced = t, 0, 0
    for i in index:
        if i is Ellipsis:
            dim += t.dim() - consumed
        elif i is None:
            result = result.unsqueeze(dim)
            dim += 1
        elif isinstance(i, slice):
            step = 1 if i.step is None else i.step
            if step <= 0:
                raise ValueError("step must be greater than zero")
            result = result.slice(dim, i.start, i.stop, step)
            dim += 1
        elif isinstance(i, bool):
            raise IndexError("indexing with a Python bool is not supported")
        elif isinstance(i, numbers.Integral) or (isinstance(i, _C.TensorBase) and i.dim() == 0
                                                  and i.dtype in (_C.int64, _C.int32)):
            result = result.select(dim, int(i))
        else:
            positions = _as_index_tensor(i)
            if positions is None:
                raise IndexError("only integers, slices (`:`), ellipsis (`...`), None, integer lists or tensors and "
                                 f"bool masks are valid indices (got {type(i).__name__})")
            advanced += 1
            if advanced > 1:
                raise IndexError("indexing with more than one integer list/tensor is not supported yet")
            result = _C.index_select(result, dim, positions)
            dim += 1
    return result
