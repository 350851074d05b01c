"""kiln.Tensor: the C++ TensorBase plus the parts that are clearer in Python
(operators, indexing, repr, NumPy conversion, backward)."""
import numbers
import operator

from . import _C
from . import _arg_errors, _inplace_views, _layout, _memory_format, _shared_memory
from . import _device as _device_mod, _tensor_set, _torch_function
from ._tensor_str import tensor_repr

try:
    from numpy import ndarray as _ndarray
except ImportError:  # pragma: no cover - kiln needs NumPy for from_numpy; operators work without it
    class _ndarray:  # noqa: N801 - nothing is an instance
        pass


def _is_number(x):
    # not a complex one (Python's or NumPy's: kiln has no complex dtype)
    return isinstance(x, numbers.Number) and (isinstance(x, numbers.Real) or not isinstance(x, numbers.Complex))


_dense_grad = _C.TensorBase.__dict__["grad"]  # the C++ .grad (dense)
_dense_grad_get = _dense_grad.__get__


def _no_grad():
    from .autograd.grad_mode import no_grad
    return no_grad()


class Tensor(_C.TensorBase):
    __module__ = "kiln"
    __array_priority__ = 1000  # NumPy defers binary operators to us

    # ---- Tensor subclasses and the __torch_function__ protocol (python/kiln/_torch_function.py) ----
    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        """The default: func's result, tensors in it as instances of cls (torch's)."""
        return _torch_function.default_torch_function(cls, func, types, args, kwargs)

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        _torch_function.install(cls)

    @staticmethod
    def _make_subclass(cls, data, require_grad=False, **kwargs):
        """torch.Tensor._make_subclass: an instance of cls aliasing data (detached)."""
        return _C._make_subclass(cls, data, require_grad)

    # ---- display and conversion ----
    def __repr__(self):
        return tensor_repr(self)

    def numpy(self, *, force=False):
        """A NumPy array sharing this tensor's memory (CPU tensors that don't require grad). force=True:
        of self.detach() (torch's force also copies off the GPU and resolves conjugation)."""
        import numpy as np
        return np.asarray(self.detach() if force else self)

    def __len__(self):
        if self.dim() == 0:
            raise TypeError("len() of a 0-d tensor")
        return self.shape[0]

    def __iter__(self):
        if self.dim() == 0:
            raise TypeError("iteration over a 0-d tensor")
        return iter(self.unbind(0))  # torch's: a tuple iterator over unbind's views

    def __reversed__(self):
        return self if self.dim() == 0 else self.flip(0)  # torch's Tensor.__reversed__

    def __bool__(self):
        if self.numel() != 1:
            raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
        return bool(self.item())

    def __new__(cls, *args):
        """Legacy constructor: Tensor(2, 3) is uninitialised float32 of that shape, Tensor([1, 2]) copies data."""
        from ._creation import _legacy_data_check, tensor
        if len(args) == 1 and not isinstance(args[0], numbers.Integral):
            _legacy_data_check(args[0])  # a float, None, a dict...: torch's TypeError
        if len(args) == 1 and not isinstance(args[0], numbers.Integral):
            t = tensor(args[0], dtype=_C.float32) if not isinstance(args[0], _C.TensorBase) else args[0]
        elif all(isinstance(a, numbers.Integral) for a in args):
            t = _C.empty(list(args) if args else [0], dtype=_C.float32)
        else:
            raise TypeError("Tensor(): expected sizes (ints) or data (a list, array or tensor)")
        return t if cls is Tensor else _C._make_subclass(cls, t, t.requires_grad)

    def _single_element(self, kind):
        if self.numel() != 1:
            raise ValueError(f"only one element tensors can be converted to Python scalars (got {self.numel()} "
                             f"elements, converting to {kind})")
        return self.item()

    def __float__(self):
        return float(self._single_element("float"))

    def __int__(self):
        return int(self._single_element("int"))

    def __complex__(self):
        return complex(self._single_element("complex"))

    def __format__(self, spec):
        if self.dim() == 0:
            return self.item().__format__(spec)
        return object.__format__(self, spec)

    # ---- NumPy: np.asarray(t) works, and np_array + t defers to Tensor.__radd__ ----
    __array_priority__ = 1000

    def __array__(self, dtype=None):
        a = self.numpy()
        return a if dtype is None else a.astype(dtype, copy=False)

    def __array_wrap__(self, array, *args, **kwargs):
        """A NumPy ufunc of a tensor gives a tensor, as torch's (bool results as uint8, as there)."""
        import numpy as np
        array = np.asarray(array)
        if array.dtype == bool:
            array = array.astype("uint8")
        return _C.from_numpy(np.ascontiguousarray(array)) if array.ndim else _C.from_numpy(array.reshape(()))

    def __contains__(self, element):
        """`element in tensor`: (element == tensor).any(), for a tensor or a number (torch's)."""
        if isinstance(element, (_C.TensorBase, numbers.Number)):
            return bool((element == self).any().item())
        raise RuntimeError("Tensor.__contains__ only supports Tensor or scalar, but you passed in a "
                           f"{type(element)}.")

    # ---- pickling and copying (by value, through NumPy; never shares memory) ----
    def __reduce_ex__(self, proto):
        if self.dtype == _C.bfloat16:  # NumPy has no bfloat16: float32 holds every value exactly
            rebuild = (_rebuild_tensor, (self.detach().float().numpy().copy(), self.requires_grad, "bfloat16"))
        else:
            rebuild = (_rebuild_tensor, (self.detach().numpy().copy(), self.requires_grad))
        state = self.__dict__
        if type(self) is Tensor and not state:
            return rebuild
        # a subclass, or attributes: torch 2.x's _rebuild_from_type_v2 restores the class and __dict__
        return (_rebuild_from_type_v2, (rebuild[0], type(self), rebuild[1], state))

    def __deepcopy__(self, memo):
        if id(self) in memo:
            return memo[id(self)]
        if not self.is_leaf:
            raise RuntimeError("Only Tensors created explicitly by the user (graph leaves) support the deepcopy "
                               "protocol at the moment")
        import copy
        new = self.detach().clone()
        if type(self) is not Tensor:
            new = _C._make_subclass(type(self), new, False)
        new.requires_grad_(self.requires_grad)
        if self.grad is not None:
            new.grad = copy.deepcopy(self.grad, memo)
        memo[id(self)] = new
        if self.__dict__:  # a subclass's (or any tensor's) Python attributes, deep-copied (torch 2.x)
            new.__dict__.update(copy.deepcopy(self.__dict__, memo))
        return new

    # ---- torch's small conveniences ----
    def diff(self, n=1, dim=-1, prepend=None, append=None):
        from ._functional_extra import diff
        return diff(self, n, dim, prepend, append)

    def aminmax(self, *, dim=None, keepdim=False):
        from ._functional_extra import aminmax
        return aminmax(self, dim=dim, keepdim=keepdim)

    @property
    def nbytes(self):
        return self.numel() * self.element_size()

    @property
    def itemsize(self):
        return self.element_size()

    def untyped_storage(self):
        from .storage import UntypedStorage
        return UntypedStorage(self)

    def storage(self):
        from .storage import TypedStorage
        return TypedStorage(self)

    # CPU tensors: never pinned; shared memory is a no-op (DataLoader workers get pickled copies).
    def is_pinned(self, device=None):
        return False

    def is_shared(self):
        return _shared_memory.is_shared(self)

    def share_memory_(self):
        """Moves the elements into shared memory (kiln/_shared_memory.py); a no-op when they are there."""
        return _shared_memory.share(self)

    def split(self, split_size, dim=0):
        """Chunks of split_size along dim, or one piece per listed size; a 0-dim integer tensor is a
        chunk size (torch's Tensor.split reads it with int())."""
        if isinstance(split_size, _C.TensorBase) and split_size.dim() == 0:
            split_size = int(split_size)
        return _C.TensorBase.split(self, split_size, dim)

    def fill_(self, value):
        """Fills with a number or a 0-dim tensor (torch's fill_.Tensor refuses any other tensor)."""
        if isinstance(value, _C.TensorBase) and value.dim() != 0:
            raise RuntimeError(f"fill_ only supports 0-dimension value tensor but got tensor with {value.dim()} "
                               "dimensions.")
        return _C.TensorBase.fill_(self, value)

    def clip(self, min=None, max=None):
        """Alias of clamp (bounds may be numbers or tensors)."""
        return self.clamp(min, max)

    def clip_(self, min=None, max=None):
        return self.clamp_(min, max)

    def clamp_(self, min=None, max=None):
        """In-place clamp; the bounds may be tensors (broadcast to self; the result must keep
        self's shape and be castable to its dtype, as torch's in-place ops)."""
        if not isinstance(min, _C.TensorBase) and not isinstance(max, _C.TensorBase):
            return _C.TensorBase.clamp_(self, min, max)
        # on a copy: clamp saves its input for backward, and copy_ below overwrites self
        result = _C.clamp(self.clone(), min, max)
        if tuple(result.shape) != tuple(self.shape):
            raise RuntimeError(f"output with shape {list(self.shape)} doesn't match the broadcast shape "
                               f"{list(result.shape)}")
        kind = {"bool": 0, "uint8": 1, "int8": 1, "int16": 1, "int32": 1, "int64": 1}
        src, dst = str(result.dtype).split(".")[1], str(self.dtype).split(".")[1]
        if kind.get(src, 2) > kind.get(dst, 2):
            raise RuntimeError(f"result type {_LEGACY_DTYPES[src]} can't be cast to the desired output type "
                               f"{_LEGACY_DTYPES[dst]}")
        return self.copy_(result)

    def where(self, condition, other):
        return _C.where(condition, self, other)

    def unique(self, sorted=True, return_inverse=False, return_counts=False, dim=None):
        """torch.unique: the unique elements (or slices along dim), with the outputs asked for."""
        from ._functional import unique
        return unique(self, sorted, return_inverse, return_counts, dim)

    def unique_consecutive(self, return_inverse=False, return_counts=False, dim=None):
        from ._functional import unique_consecutive
        return unique_consecutive(self, return_inverse, return_counts, dim)

    def lu(self, pivot=True, get_infos=False):
        """torch.Tensor.lu (deprecated): torch.lu of self."""
        from ._lu_legacy import lu
        return lu(self, pivot, get_infos)

    def norm(self, p="fro", dim=None, keepdim=False, dtype=None):
        """torch.norm: the p-norm over dim (all dims when None); 'fro' is the 2-norm."""
        from ._linalg_norm import norm
        return norm(self, p, dim, keepdim, dtype)

    def equal(self, other):
        return _equal(self, other)

    def allclose(self, other, rtol=1e-05, atol=1e-08, equal_nan=False):
        return bool(_C.isclose(self, other, rtol, atol, equal_nan).all())

    def swapaxes(self, axis0, axis1):
        return self.transpose(axis0, axis1)

    def swapdims(self, dim0, dim1):  # torch's names: swapdims(dim0, dim1), swapaxes(axis0, axis1)
        return self.transpose(dim0, dim1)

    # Memory formats (python/kiln/_memory_format.py): memory_format= on top of the C++ methods.
    contiguous = _memory_format.contiguous
    is_contiguous = _memory_format.is_contiguous
    clone = _memory_format.clone

    # In-place view methods: self takes the view's geometry and history (python/kiln/_inplace_views.py).
    t_ = _inplace_views.t_
    transpose_ = swapdims_ = swapaxes_ = _inplace_views.transpose_
    unsqueeze_ = _inplace_views.unsqueeze_
    squeeze_ = _inplace_views.squeeze_
    as_strided_ = _inplace_views.as_strided_
    resize_ = _inplace_views.resize_
    resize_as_ = _inplace_views.resize_as_
    set_ = _tensor_set.set_

    def ravel(self):
        """A 1-D view when the tensor is contiguous, else a contiguous copy (torch.ravel)."""
        return self.contiguous().view([-1])

    def broadcast_to(self, *size):
        if len(size) == 1 and not isinstance(size[0], int):  # torch's one int[] parameter takes varargs too
            size = size[0]
        return self.expand(list(size))

    def view_as(self, other):
        return self.view(list(other.shape))

    def reshape_as(self, other):
        return self.reshape(list(other.shape))

    def expand_as(self, other):
        return self.expand(list(other.shape))

    def new_empty(self, *size, dtype=None, device=None, requires_grad=False, **kwargs):
        _device_mod.check_cpu(device, factory=True)
        return _C.empty(_new_sizes(size, kwargs, "new_empty"), dtype=dtype or self.dtype, requires_grad=requires_grad)

    def new_zeros(self, *size, dtype=None, device=None, requires_grad=False, **kwargs):
        _device_mod.check_cpu(device, factory=True)
        return _C.zeros(_new_sizes(size, kwargs, "new_zeros"), dtype=dtype or self.dtype, requires_grad=requires_grad)

    def new_ones(self, *size, dtype=None, device=None, requires_grad=False, **kwargs):
        _device_mod.check_cpu(device, factory=True)
        return _C.ones(_new_sizes(size, kwargs, "new_ones"), dtype=dtype or self.dtype, requires_grad=requires_grad)

    def new_full(self, size, fill_value, *, dtype=None, device=None, requires_grad=False):
        _device_mod.check_cpu(device, factory=True)
        return _C.full(_sizes((size,)), fill_value, dtype=dtype or self.dtype, requires_grad=requires_grad)

    def new_tensor(self, data, dtype=None, device=None, requires_grad=False):
        from ._creation import tensor
        _device_mod.check_cpu(device)
        return tensor(data, dtype=dtype or self.dtype, requires_grad=requires_grad, _caller="tensor.new_tensor")

    def new(self, *args, **kwargs):
        """The legacy constructor: new() an empty tensor, new(*sizes) / new(Size) uninitialised, new(data) a
        tensor of `data`, new(tensor) an alias of it; self's dtype unless dtype= is given."""
        dtype = kwargs.pop("dtype", None) or self.dtype
        dev = kwargs.pop("device", None)
        if dev is not None and _device_mod.device(dev).type != "cpu":  # torch's legacy constructor check
            raise RuntimeError(f"legacy constructor expects device type: cpu but device type: "
                               f"{_device_mod.device(dev).type} was passed")
        if kwargs:
            raise TypeError(f"new() got unexpected keyword arguments {sorted(kwargs)}")
        if not args:
            return _C.empty([0], dtype=dtype)
        if len(args) == 1 and isinstance(args[0], _C.TensorBase):
            return args[0]
        if len(args) == 1 and isinstance(args[0], (list, tuple)) and not isinstance(args[0], _size_type()):
            from ._creation import tensor
            return tensor(args[0], dtype=dtype)
        return _C.empty(_sizes(args), dtype=dtype)

    def square(self):
        return _C.pow(self, 2)

    def square_(self):
        return self.pow_(2)

    @property
    def is_cpu(self):
        return True

    # Devices, layouts and kinds kiln has none of (code asks before special-casing them).
    is_meta = is_quantized = is_nested = is_mkldnn = is_sparse_csr = False
    is_xpu = is_mps = is_ipu = is_vulkan = is_ort = False

    # ---- layout: a dense tensor is strided; sparse COO tensors are kiln.sparse.SparseCooTensor ----
    layout = _layout.strided
    is_sparse = False

    def to_sparse(self, sparse_dim=None):
        """A sparse COO copy of the nonzero elements (differentiable)."""
        from .sparse import to_sparse
        return to_sparse(self, sparse_dim)

    def to_dense(self):
        return self

    def sparse_mask(self, mask):
        """A sparse COO tensor of this tensor's elements at mask's (coalesced) indices."""
        from .sparse import SparseCooTensor
        if not isinstance(mask, SparseCooTensor):
            raise RuntimeError("sparse_mask(): expected mask to be a sparse COO tensor")
        if tuple(mask.shape) != tuple(self.shape):
            raise RuntimeError("sparse_mask(): operands have incompatible sizes; self has size "
                               f"{list(self.shape)} but mask has size {list(mask.shape)}")
        if not mask.is_coalesced():
            raise RuntimeError("sparse_mask: mask is uncoalesced")
        indices = mask._indices()
        values = self[tuple(indices)] if mask._nnz() else \
            _C.zeros([0] + list(self.shape[mask.sparse_dim():]), dtype=self.dtype)
        return SparseCooTensor(indices, values, self.shape, True)

    def is_signed(self):
        return self.dtype not in (_C.bool, _C.uint8)

    def get_device(self):
        return -1  # torch's answer for a CPU tensor

    def is_same_size(self, other):
        return list(self.shape) == list(other.shape)

    # The deprecated add(Number alpha, Tensor other) / sub(...) overloads of old scripts
    # (`p.data.add_(-lr, p.grad.data)`), which torch 1.13 still takes with a warning.
    # With alpha != 1 (optimizers, `p.data.add_(p.grad, alpha=-lr)`) they round as torch's fused
    # multiply-add where torch fuses it (_fused_alpha).
    def add(self, *args, **kwargs):
        if args and getattr(args[0], "is_sparse", False):  # dense + sparse_coo: dense (torch's add_out_dense_sparse)
            from .sparse._grad import dense_add_sparse_
            return dense_add_sparse_(self.clone(), args[0], kwargs.get("alpha", 1))
        fused = _fused_alpha(self, args, kwargs, 1) if kwargs else None  # (no keyword: no alpha)
        if fused is not None:
            return fused
        try:
            return _C.TensorBase.add(self, *args, **kwargs)
        except TypeError:
            return _deprecated_alpha_first(self, "add", args, kwargs)

    def add_(self, *args, **kwargs):
        if args and getattr(args[0], "is_sparse", False):  # p.add_(sparse_grad, alpha=-lr) in optimizers
            from .sparse._grad import dense_add_sparse_
            return dense_add_sparse_(self, args[0], kwargs.get("alpha", 1))
        # (an expanded self raises in the op itself, as torch)
        if kwargs and not _expanded(self) and _fused_in_place(_fused_alpha, self, args, kwargs, 1):
            return self
        try:
            return _C.TensorBase.add_(self, *args, **kwargs)
        except TypeError:
            return _deprecated_alpha_first(self, "add_", args, kwargs)

    def sub(self, *args, **kwargs):
        fused = _fused_alpha(self, args, kwargs, -1) if kwargs else None
        if fused is not None:
            return fused
        try:
            return _C.TensorBase.sub(self, *args, **kwargs)
        except TypeError:
            return _deprecated_alpha_first(self, "sub", args, kwargs)

    def addcmul(self, tensor1, tensor2, *, value=1):
        fused = _fused_addcmul(self, tensor1, tensor2, value)
        return fused if fused is not None else _C.TensorBase.addcmul(self, tensor1, tensor2, value=value)

    def addcmul_(self, tensor1, tensor2, *, value=1):
        if not _expanded(self) and _fused_in_place(_fused_addcmul, self, tensor1, tensor2, value):
            return self
        return _C.TensorBase.addcmul_(self, tensor1, tensor2, value=value)

    def sub_(self, *args, **kwargs):
        if kwargs and not _expanded(self) and _fused_in_place(_fused_alpha, self, args, kwargs, -1):
            return self
        try:
            return _C.TensorBase.sub_(self, *args, **kwargs)
        except TypeError:
            return _deprecated_alpha_first(self, "sub_", args, kwargs)

    def multiply(self, other):
        return self.mul(other)

    def multiply_(self, other):
        return self.mul_(other)

    def subtract(self, other, *, alpha=1):
        return self.sub(other, alpha=alpha)

    def subtract_(self, other, *, alpha=1):
        return self.sub_(other, alpha=alpha)

    def divide(self, other, *, rounding_mode=None):
        return self.div(other, rounding_mode=rounding_mode)

    def divide_(self, other, *, rounding_mode=None):
        return self.div_(other, rounding_mode=rounding_mode)

    def true_divide(self, other):
        return self.div(other)

    def true_divide_(self, other):
        return self.div_(other)

    def negative(self):
        return self.neg()

    def negative_(self):
        return self.neg_()

    def absolute(self):
        return self.abs()

    def arcsin(self):
        return self.asin()

    def arcsin_(self):
        return self.asin_()

    def arccos(self):
        return self.acos()

    def arccos_(self):
        return self.acos_()

    def arctan(self):
        return self.atan()

    def arctan_(self):
        return self.atan_()

    def arcsinh(self):
        return self.asinh()

    def arcsinh_(self):
        return self.asinh_()

    def arccosh(self):
        return self.acosh()

    def arccosh_(self):
        return self.acosh_()

    def arctanh(self):
        return self.atanh()

    def arctanh_(self):
        return self.atanh_()

    def absolute_(self):
        return self.abs_()

    def greater(self, other):
        return self.gt(other)

    def greater_equal(self, other):
        return self.ge(other)

    def less(self, other):
        return self.lt(other)

    def less_equal(self, other):
        return self.le(other)

    def not_equal(self, other):
        return self.ne(other)

    def count_nonzero(self, *dim, **kwargs):
        # count_nonzero(0, 1) is count_nonzero((0, 1)): torch's one positional int[] takes varargs
        if "dim" in kwargs:
            if dim:
                raise TypeError("count_nonzero() got multiple values for argument 'dim'")
            return _count_nonzero(self, kwargs.pop("dim"))
        if kwargs:
            raise TypeError(f"count_nonzero() got an unexpected keyword argument '{next(iter(kwargs))}'")
        return _count_nonzero(self, None if not dim else dim[0] if len(dim) == 1 else dim)

    def type(self, dtype=None, non_blocking=False, **kwargs):
        """With no argument, the legacy type name ('kiln.FloatTensor'); else a conversion."""
        if dtype is None:
            return "kiln." + _LEGACY_NAMES[str(self.dtype)] + "Tensor"
        if isinstance(dtype, str):
            if ".cuda." in dtype:
                raise AssertionError("kiln not compiled with CUDA enabled")
            prefix, _, name = dtype.rpartition(".")
            matches = [getattr(_C, d) for d, n in _LEGACY_DTYPES.items() if name == n + "Tensor"]
            if not matches or prefix not in ("torch", "kiln"):
                raise ValueError(f"invalid type: '{dtype}'")
            dtype = matches[0]
        elif isinstance(dtype, type):  # kiln.FloatTensor, ...; kiln.cuda.FloatTensor raises (no CUDA)
            if not (dtype.__module__ or "").startswith("kiln"):
                raise ValueError(f"invalid type: '{dtype.__module__ + '.' if dtype.__module__ != 'builtins' else ''}"
                                 f"{dtype.__name__}'")
            if not isinstance(getattr(dtype, "dtype", None), _C.dtype):
                dtype()
            dtype = dtype.dtype
        return self.to(dtype)

    def as_subclass(self, cls):
        """The same elements as an instance of the Tensor subclass cls; gradients flow back to self."""
        return _C._as_subclass(self, cls)

    def type_as(self, other):
        """This tensor cast to other's type (torch: self.type(other.type()))."""
        if not isinstance(other, _C.TensorBase):
            raise TypeError(f"type_as(): argument 'other' (position 1) must be Tensor, not {type(other).__name__}")
        return self.to(other.dtype)

    def __index__(self):
        if self.numel() != 1 or self.is_floating_point():  # a bool is an index too (torch: True is 1)
            raise TypeError("only integer tensors of a single element can be converted to an index")
        return int(self.item())

    __hash__ = _C.TensorBase.__hash__

    # ---- conversions ----
    def to(self, *args, **kwargs):
        """to(dtype), to(device), to(device, dtype), to(other_tensor); copy=False returns self when nothing changes."""
        if not kwargs and len(args) == 1 and type(args[0]) is _C.dtype:
            return _C.TensorBase.to(self, args[0], False, False)  # the common to(dtype)
        from ._device import device as _device, check_cpu as _check_cpu
        dtype, dev = kwargs.pop("dtype", None), kwargs.pop("device", None)
        copy = kwargs.pop("copy", False)
        kwargs.pop("non_blocking", None)
        memory_format = kwargs.pop("memory_format", None)
        if kwargs:
            raise TypeError(f"to() got unexpected keyword arguments {sorted(kwargs)}")
        for a in args:
            if isinstance(a, _C.dtype):
                dtype = a
            elif isinstance(a, (str, _device)) or (isinstance(a, int) and not isinstance(a, bool)):
                dev = a  # an int is a CUDA ordinal, as torch's device(0)
            elif isinstance(a, _C.TensorBase):
                dtype, dev = a.dtype, a.device
            else:
                raise TypeError(f"to() received an invalid argument of type {type(a).__name__}")
        _check_cpu(dev)  # torch's CPU-only builds: cuda AssertionError, xla ... RuntimeError
        if memory_format is not None:
            converted = _memory_format.to_memory_format(self, dtype, memory_format, copy)
            if converted is not None:
                return converted
        if dtype is None:
            return self.clone() if copy else self
        return _C.TensorBase.to(self, dtype, False, copy)

    def cpu(self, *, memory_format=None):
        return self if memory_format is None else self.to(memory_format=memory_format)

    def cuda(self, device=None, non_blocking=False, *, memory_format=None):
        if device is not None and _device_mod.device(device).type != "cuda":  # a bad string raises there
            raise RuntimeError("Invalid device, must be cuda device")
        raise AssertionError("kiln not compiled with CUDA enabled")  # torch's CPU-only builds

    @property
    def T(self):
        """The dims in reverse order (t() for matrices)."""
        return self.permute(list(range(self.dim() - 1, -1, -1)))

    @property
    def mT(self):
        if self.dim() == 1:
            raise RuntimeError("tensor.mT is only supported on matrices or batches of matrices. Got 1-D tensor.")
        if self.dim() == 0:  # torch 1.13 returns a 0-dim view
            return self.view(())
        return self.transpose(-2, -1)

    def _cast(self, dtype, memory_format):
        """float(), long(), ...: to(dtype), in memory_format when one is given (torch's keyword)."""
        if memory_format is not None:
            converted = _memory_format.to_memory_format(self, dtype, memory_format, False)
            if converted is not None:
                return converted
        return _C.TensorBase.to(self, dtype, False, False)

    def float(self, *, memory_format=None):
        return self._cast(_C.float32, memory_format)

    def double(self, *, memory_format=None):
        return self._cast(_C.float64, memory_format)

    def half(self, *, memory_format=None):
        return self._cast(_C.float16, memory_format)

    def bfloat16(self, *, memory_format=None):
        return self._cast(_C.bfloat16, memory_format)

    def long(self, *, memory_format=None):
        return self._cast(_C.int64, memory_format)

    def int(self, *, memory_format=None):
        return self._cast(_C.int32, memory_format)

    def short(self, *, memory_format=None):
        return self._cast(_C.int16, memory_format)

    def char(self, *, memory_format=None):
        return self._cast(_C.int8, memory_format)

    def byte(self, *, memory_format=None):
        return self._cast(_C.uint8, memory_format)

    def bool(self, *, memory_format=None):
        return self._cast(_C.bool, memory_format)

    # ---- autograd ----
    # .grad: the C++ slot (dense gradients, which the engine's AccumulateGrad fills), or the sparse COO
    # gradient embedding(sparse=True) accumulates on the Python side (kiln/sparse/_grad.py;
    # docs/ARCHITECTURE.md, "Sparse gradients"). A tensor holds at most one of the two, except for the
    # moment after a dense gradient arrived on top of a sparse one: reading .grad then sums them into a
    # dense one (torch's AccumulateGrad: dense + sparse is dense).
    _sparse_grad = None

    @property
    def grad(self):
        if self._sparse_grad is None:
            return _dense_grad_get(self)
        sparse = self._sparse_grad
        dense = _dense_grad_get(self)
        if dense is None:
            return sparse
        from .sparse._grad import dense_add_sparse_
        with _no_grad():
            dense = dense.clone()
            dense_add_sparse_(dense, sparse, 1)
        del self.__dict__["_sparse_grad"]
        _dense_grad.__set__(self, dense)
        return dense

    @grad.setter
    def grad(self, value):
        from .sparse import SparseCooTensor
        if isinstance(value, SparseCooTensor):
            if tuple(value.shape) != tuple(self.shape):
                raise RuntimeError("assigned grad has data of a different size")
            if value.dtype != self.dtype:
                raise RuntimeError("assigned grad has data of a different type")
            _dense_grad.__set__(self, None)
            self.__dict__["_sparse_grad"] = value
            return
        if value is not None:  # torch's checks and messages (THPVariable_set_grad)
            if not isinstance(value, _C.TensorBase):
                raise TypeError("assigned grad expected to be a Tensor or None but got grad of type"
                                + type(value).__name__)
            if value is self:
                raise RuntimeError("can't assign Variable as its own grad")
            if value.dtype != self.dtype:
                raise RuntimeError("assigned grad has data of a different type")
            if value.device != self.device:
                raise RuntimeError("assigned grad has data located on a different device")
            if tuple(value.shape) != tuple(self.shape):
                raise RuntimeError("assigned grad has data of a different size")
        if self._sparse_grad is not None:
            del self.__dict__["_sparse_grad"]
        _dense_grad.__set__(self, value)

    @grad.deleter
    def grad(self):
        self.grad = None

    def backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
        from . import autograd
        autograd.backward(self, gradient, retain_graph, create_graph, inputs=inputs)

    def register_hook(self, hook):
        """Calls hook(grad) when this tensor's gradient is computed; it may return a replacement."""
        handle = _RemovableHandle()

        def run(grad):
            return None if handle.removed else hook(grad)
        self._register_hook(run)
        if self.grad_fn is None:  # a leaf's hooks also see its sparse gradients (kiln/sparse/_grad.py)
            self.__dict__.setdefault("_leaf_grad_hooks", []).append(run)
        return handle

    def register_post_accumulate_grad_hook(self, hook):
        """Calls hook(tensor) on this leaf after its .grad has been accumulated in backward (torch 2.1; e.g.
        an optimizer step per parameter inside backward)."""
        if not self.requires_grad:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        if self.grad_fn is not None:
            raise RuntimeError("post accumulate grad hooks cannot be registered on non-leaf tensors")
        handle = _RemovableHandle()

        def run(tensor):
            if not handle.removed:
                hook(tensor)
        self._register_post_accumulate_grad_hook(run)
        self.__dict__.setdefault("_post_accumulate_hooks", []).append(run)
        return handle

    # ---- operators ----
    def __add__(self, other):
        if isinstance(other, _ndarray):
            return NotImplemented  # as torch: NumPy computes t + array (the tensor converts), array + t is a TypeError
        try:
            return _C.add(self, other)
        except NotImplementedError:
            # dense + sparse_coo is dense, as torch (`torch.eye(V) + adj` in pytorch/examples gat);
            # the sparse tensor is a Python type the C++ op refuses
            if getattr(other, "is_sparse", False):
                return other.add(self)
            raise

    __radd__ = __add__

    def __iadd__(self, other):
        if isinstance(other, _ndarray):
            return NotImplemented  # as torch: NumPy computes t + array (the tensor converts), array + t is a TypeError
        return self.add_(other)

    def __sub__(self, other):
        if isinstance(other, _ndarray):
            return NotImplemented  # as torch: NumPy computes t + array (the tensor converts), array + t is a TypeError
        try:
            return _C.sub(self, other)
        except NotImplementedError:
            if getattr(other, "is_sparse", False):  # dense - sparse_coo: dense, as __add__
                return _C.sub(self, other.to_dense())
            raise

    def __rsub__(self, other):
        if isinstance(other, _ndarray):
            return NotImplemented  # as torch: NumPy computes t + array (the tensor converts), array + t is a TypeError
        return _C.sub(_wrap(other), self)

    def __isub__(self, other):
        if isinstance(other, _ndarray):
            return NotImplemented  # as torch: NumPy computes t + array (the tensor converts), array + t is a TypeError
        return self.sub_(other)

    def __mul__(self, other):
        if isinstance(other, _ndarray):
            return NotImplemented  # as torch: NumPy computes t + array (the tensor converts), array + t is a TypeError
        try:
            return _C.mul(self, other)
        except NotImplementedError:
            # dense * sparse_coo is sparse, as torch (the sparse tensor's values times this tensor's elements)
            if getattr(other, "is_sparse", False):
                return other.mul(self)
            raise
        except TypeError:
            # as torch's operators: an operand of another type gives NotImplemented, so Python tries the
            # other side (a sequence repeats by the tensor's __index__: [1, 2] * torch.tensor(2))
            if isinstance(other, (list, tuple, str, bytes, bytearray)):
                return NotImplemented
            raise

    __rmul__ = __mul__

    def __imul__(self, other):
        if isinstance(other, _ndarray):
            return NotImplemented  # as torch: NumPy computes t + array (the tensor converts), array + t is a TypeError
        return self.mul_(other)

    def __truediv__(self, other):
        if isinstance(other, _ndarray):
            return NotImplemented  # as torch: NumPy computes t + array (the tensor converts), array + t is a TypeError
        return _C.div(self, other)

    def __rtruediv__(self, other):
        if isinstance(other, _ndarray):
            return self.reciprocal() * other  # torch's __rdiv__: the product is NumPy's (a float64 tensor)
        # as torch's Tensor.__rdiv__: self.reciprocal() * other, two roundings (max_norm / (norm + 1e-6)
        # in clip_grad_norm_ gets torch's coefficient)
        return _C.mul(self.reciprocal(), _wrap(other))

    __rdiv__ = __rtruediv__

    def __itruediv__(self, other):
        if isinstance(other, _ndarray):
            return NotImplemented  # as torch: NumPy computes t + array (the tensor converts), array + t is a TypeError
        return self.div_(other)

    def __neg__(self):
        return _C.neg(self)

    def __abs__(self):
        return _C.abs(self)

    # Comparisons are elementwise and give bool tensors (so Tensor keeps identity hashing).
    def __eq__(self, other):
        if not isinstance(other, _C.TensorBase) and not _is_number(other) and not _is_numpy_bool(other):
            if isinstance(other, numbers.Complex):
                return _complex_compare(self, other, _C.eq)
            return NotImplemented  # as torch: t == None, t == 'a', t == [1, 2] are plain False
        return _C.eq(self, other)

    def __ne__(self, other):
        if not isinstance(other, _C.TensorBase) and not _is_number(other) and not _is_numpy_bool(other):
            if isinstance(other, numbers.Complex):
                return _complex_compare(self, other, _C.ne)
            return NotImplemented
        return _C.ne(self, other)

    def __lt__(self, other):
        if isinstance(other, _ndarray):
            return NotImplemented  # as torch: NumPy computes t + array (the tensor converts), array + t is a TypeError
        return _C.lt(self, other)

    def __le__(self, other):
        if isinstance(other, _ndarray):
            return NotImplemented  # as torch: NumPy computes t + array (the tensor converts), array + t is a TypeError
        return _C.le(self, other)

    def __gt__(self, other):
        if isinstance(other, _ndarray):
            return NotImplemented  # as torch: NumPy computes t + array (the tensor converts), array + t is a TypeError
        return _C.gt(self, other)

    def __ge__(self, other):
        if isinstance(other, _ndarray):
            return NotImplemented  # as torch: NumPy computes t + array (the tensor converts), array + t is a TypeError
        return _C.ge(self, other)

    def __pos__(self):
        if self.dtype == _C.bool:  # torch's positive(): +bool_tensor raises
            raise RuntimeError("The `+` operator, on a bool tensor is not supported.")
        return self

    def __pow__(self, exponent):
        if isinstance(exponent, _ndarray):
            return NotImplemented  # as torch: NumPy computes t + array (the tensor converts), array + t is a TypeError
        return _C.pow(self, exponent)

    def __rpow__(self, base):
        if isinstance(base, _ndarray):
            return NotImplemented  # as torch: NumPy computes t + array (the tensor converts), array + t is a TypeError
        if isinstance(base, numbers.Integral) and not isinstance(base, bool) and self.dtype in _SMALL_INTS:
            # the result has self's integer dtype: torch converts the base to it with an overflow check
            hi = _SMALL_INTS[self.dtype]
            if not (-hi if self.dtype == _C.uint8 else -hi - 1) <= int(base) <= hi:
                raise RuntimeError(f"value cannot be converted to type {str(self.dtype).split('.')[-1]} without overflow")
        return _C.pow(base, self)

    def __ipow__(self, exponent):
        if isinstance(exponent, _ndarray):
            return NotImplemented  # as torch: NumPy computes t + array (the tensor converts), array + t is a TypeError
        return self.pow_(exponent)

    def __floordiv__(self, other):
        if isinstance(other, _ndarray):
            return NotImplemented  # as torch: NumPy computes t + array (the tensor converts), array + t is a TypeError
        from ._no_derivative import without_derivative  # torch 1.13: floor_divide has no derivative
        return without_derivative("floor_divide", _C.floor_divide, self, other)

    def __rfloordiv__(self, other):
        if isinstance(other, _ndarray):
            return NotImplemented  # as torch: NumPy computes t + array (the tensor converts), array + t is a TypeError
        from ._no_derivative import without_derivative
        return without_derivative("floor_divide", _C.floor_divide, _wrap(other), self)

    def __ifloordiv__(self, other):
        if isinstance(other, _ndarray):
            return NotImplemented  # as torch: NumPy computes t + array (the tensor converts), array + t is a TypeError
        return self.floor_divide_(other)

    def __mod__(self, other):
        if isinstance(other, _ndarray):
            return NotImplemented  # as torch: NumPy computes t + array (the tensor converts), array + t is a TypeError
        return _C.remainder(self, other)

    def __rmod__(self, other):
        if isinstance(other, _ndarray):
            return NotImplemented  # as torch: NumPy computes t + array (the tensor converts), array + t is a TypeError
        from ._no_derivative import without_derivative  # torch 1.13: remainder.Scalar_Tensor has none
        return without_derivative("remainder", _C.remainder, _wrap(other), self)

    def __imod__(self, other):
        if isinstance(other, _ndarray):
            return NotImplemented  # as torch: NumPy computes t + array (the tensor converts), array + t is a TypeError
        return self.remainder_(other)

    def __invert__(self):
        if self.is_floating_point():  # torch's Tensor.__invert__ checks before the op
            raise TypeError("~ (operator.invert) is only implemented on integer and Boolean-type tensors")
        return _C.bitwise_not(self)

    def __and__(self, other):
        if isinstance(other, _ndarray):
            return NotImplemented  # as torch: NumPy computes t + array (the tensor converts), array + t is a TypeError
        return _C.bitwise_and(self, other)

    def __or__(self, other):
        if isinstance(other, _ndarray):
            return NotImplemented  # as torch: NumPy computes t + array (the tensor converts), array + t is a TypeError
        return _C.bitwise_or(self, other)

    def __xor__(self, other):
        if isinstance(other, _ndarray):
            return NotImplemented  # as torch: NumPy computes t + array (the tensor converts), array + t is a TypeError
        return _C.bitwise_xor(self, other)

    __rand__, __ror__, __rxor__ = __and__, __or__, __xor__

    def __lshift__(self, other):
        if isinstance(other, _ndarray):
            return NotImplemented  # as torch: NumPy computes t + array (the tensor converts), array + t is a TypeError
        return _C.bitwise_left_shift(self, other)

    def __rshift__(self, other):
        if isinstance(other, _ndarray):
            return NotImplemented  # as torch: NumPy computes t + array (the tensor converts), array + t is a TypeError
        return _C.bitwise_right_shift(self, other)

    def __rlshift__(self, other):
        if isinstance(other, _ndarray):
            return NotImplemented  # as torch: NumPy computes t + array (the tensor converts), array + t is a TypeError
        return _C.bitwise_left_shift(_wrap(other), self)

    def __rrshift__(self, other):
        if isinstance(other, _ndarray):
            return NotImplemented  # as torch: NumPy computes t + array (the tensor converts), array + t is a TypeError
        return _C.bitwise_right_shift(_wrap(other), self)

    def __ilshift__(self, other):
        if isinstance(other, _ndarray):
            return NotImplemented  # as torch: NumPy computes t + array (the tensor converts), array + t is a TypeError
        return self.bitwise_left_shift_(other)

    def __irshift__(self, other):
        if isinstance(other, _ndarray):
            return NotImplemented  # as torch: NumPy computes t + array (the tensor converts), array + t is a TypeError
        return self.bitwise_right_shift_(other)

    def __iand__(self, other):
        if isinstance(other, _ndarray):
            return NotImplemented  # as torch: NumPy computes t + array (the tensor converts), array + t is a TypeError
        return self.bitwise_and_(other)

    def __ior__(self, other):
        if isinstance(other, _ndarray):
            return NotImplemented  # as torch: NumPy computes t + array (the tensor converts), array + t is a TypeError
        return self.bitwise_or_(other)

    def __ixor__(self, other):
        if isinstance(other, _ndarray):
            return NotImplemented  # as torch: NumPy computes t + array (the tensor converts), array + t is a TypeError
        return self.bitwise_xor_(other)

    def __matmul__(self, other):
        if isinstance(other, _ndarray):
            return NotImplemented  # as torch: NumPy computes t + array (the tensor converts), array + t is a TypeError
        return _C.matmul(self, other)

    def __rmatmul__(self, other):
        return _C.matmul(other, self)

    def nonzero(self, *, as_tuple=False):
        positions = _C.TensorBase.nonzero(self)
        if not as_tuple:
            return positions
        if self.dim() == 0:
            return (_C.zeros(positions.shape[0], dtype=_C.int64),)  # as torch: index 0 per hit
        return tuple(positions[:, d] for d in range(self.dim()))

    # ---- indexing: ints, slices, None, ..., bool masks, integer lists/tensors (see _resolve_index) ----
    def __getitem__(self, index):
        if isinstance(index, _C.TensorBase) and index.dtype in _INDEX_TENSORS and index.dim() and self.dim():
            return _C.index(self, [index])  # x[idx], x[mask]: the one advanced index, no general pass
        view = _basic_view(self, index)
        if view is not None:
            return view
        view, indices = _resolve_index(self, index)
        return view if indices is None else _C.index(view, indices)

    def __setitem__(self, index, value):
        if not isinstance(value, _C.TensorBase):
            value = _setitem_value(self, value)  # as torch: the value is checked before any index is read
        if isinstance(index, _C.TensorBase) and index.dtype == _C.bool and value.dim() == 0 \
                and not value.requires_grad and tuple(index.shape) == tuple(self.shape):
            self.masked_fill_(index, value)  # the common x[x < 0] = 0, without materialising indices
            return
        view = _basic_view(self, index)
        view, indices = (view, None) if view is not None else _resolve_index(self, index)
        # torch's copy_to fills only for a value that is 0-dim before its leading 1s are dropped
        # (a (1,)-shaped value is copied: into an expanded view that raises)
        value_0dim = isinstance(value, _C.TensorBase) and value.dim() == 0
        # `x[i] += 1` writes the view onto itself: as torch's copy_ of a fully overlapping source, nothing to do
        itself = indices is None and isinstance(value, _C.TensorBase) and value.data_ptr() == view.data_ptr() \
            and value.dtype == view.dtype and tuple(value.shape) == tuple(view.shape) \
            and all(a == b for a, b, n in zip(value.stride(), view.stride(), view.shape) if n > 1)
        if isinstance(value, _C.TensorBase) and value.dim() and value.shape[0] == 1:
            # torch drops the value's leading size-1 dims (x[0] = t of shape (1, n) fills a row)
            k = next((i for i, n in enumerate(value.shape) if n != 1), value.dim())
            value = value.reshape(tuple(value.shape[k:]))
        if indices is None:
            if value_0dim and view.dim() != 0 and not value.requires_grad:
                view.fill_(value)  # as torch's copy_to: a 0-dim value fills (an expanded view too)
            elif isinstance(value, _C.TensorBase):
                if not itself:
                    view.copy_(value)
            elif _is_number(value):
                view.fill_(value)
            else:
                view.copy_(_as_value_tensor(value, self))
            return
        if not isinstance(value, _C.TensorBase):
            value = _as_value_tensor(value, self)
        elif value.dtype != self.dtype and value.numel() == 1 and _one_bool_mask(indices):
            value = value.to(self.dtype)  # torch's index_put_ takes masked_fill_(mask, value.item()) here
        # (another dtype: index_put_ raises, after the masks' shape checks, as torch 1.13 does not convert)
        view.index_put_(indices, value)


_SMALL_INTS = {_C.uint8: 255, _C.int8: 127, _C.int16: 2 ** 15 - 1, _C.int32: 2 ** 31 - 1}  # their largest values

_LEGACY_DTYPES = {"float32": "Float", "float64": "Double", "float16": "Half", "bfloat16": "BFloat16",
                  "int64": "Long", "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte", "bool": "Bool"}
_LEGACY_NAMES = {"kiln." + d: n for d, n in _LEGACY_DTYPES.items()}


def _equal(a, b):
    """torch.equal: same shape and same values (a Python bool)."""
    return tuple(a.shape) == tuple(b.shape) and bool((a == b).all())


def _new_sizes(size, kwargs, fn):
    """new_zeros(2, 3), new_zeros((2, 3)) and torch's keywords new_zeros(size=(2, 3), layout=, pin_memory=)."""
    if "size" in kwargs:
        if size:
            raise TypeError(f"{fn}() got multiple values for argument 'size'")
        size = (kwargs.pop("size"),)
    kwargs.pop("layout", None)
    kwargs.pop("pin_memory", None)
    if kwargs:
        raise TypeError(f"{fn}() got an unexpected keyword argument '{next(iter(kwargs))}'")
    return _sizes(size)


def _sizes(size):
    """new_zeros(2, 3) and new_zeros((2, 3)) alike."""
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        return list(size[0])
    return list(size)


def _rebuild_from_type_v2(func, new_type, args, state):
    """Unpickles a Tensor subclass instance or a tensor with attributes (torch._tensor's name)."""
    ret = func(*args)
    if type(ret) is not new_type:  # a detached alias: stays a leaf
        ret = _C._make_subclass(new_type, ret, ret.requires_grad)
    setstate = getattr(new_type, "__setstate__", None)
    if setstate is not None and getattr(setstate, "__qualname__", "").split(".")[0] not in ("Tensor", "object"):
        ret.__setstate__(state)
    elif state:
        ret.__dict__.update(state)
    return ret


def _rebuild_tensor(array, requires_grad, dtype=None):
    """Unpickles a tensor (see Tensor.__reduce_ex__); dtype names the dtype when NumPy has none.
    The array is the tensor's own (fresh from unpickling, or copied by __reduce_ex__), so the tensor
    takes its memory rather than copying it (DataLoader workers send every batch this way)."""
    from ._creation import as_tensor
    t = as_tensor(array if array.flags.writeable else array.copy())
    if t.numel() == 0:  # a fresh empty tensor, row-major as torch's (NumPy's empty arrays have stride 0)
        t = _C.empty(list(t.shape), dtype=t.dtype)
    if dtype:
        t = t.to(getattr(_C, dtype))
    if requires_grad:
        t.requires_grad_(True)
    return t


class _RemovableHandle:
    def __init__(self):
        self.removed = False

    def remove(self):
        self.removed = True


def _is_numpy_bool(x):
    return type(x).__module__ == "numpy" and type(x).__name__ in ("bool_", "bool")


def _complex_compare(self, other, op):
    """t == 1j / t != 1j elementwise, as torch's (kiln has no complex dtype): a real element equals a
    complex number when its imaginary part is 0 and the real parts are equal."""
    if other.imag == 0:
        return op(self, other.real)
    return _C.zeros_like(self, dtype=_C.bool) if op is _C.eq else _C.ones_like(self, dtype=_C.bool)


def _wrap(x):
    if _is_number(x):
        return _C._wrap_scalar(x)
    if _is_numpy_bool(x):  # a bool, as torch 2.x's is_numpy_bool (np.True_ - t: bool's RuntimeError)
        return _C._wrap_scalar(bool(x))
    raise TypeError(f"unsupported operand type: '{type(x).__name__}'")


def _setitem_value(self, value):
    """The right-hand side of `x[i] = value` as torch's valueToTensor makes it: a Python int, bool or
    float (np.float64 is one) or a NumPy integer becomes a 0-dim tensor of x's dtype, with fill_'s
    overflow check (`x[i] = 1e300` into float32 raises, whatever the index); anything else, NumPy
    float32/bool scalars and lists included, is a TypeError."""
    if isinstance(value, (int, float)) or (isinstance(value, numbers.Integral) and hasattr(type(value), "__index__")):
        t = _C.empty([], dtype=self.dtype)
        t.fill_(value)
        return t
    kind = type(value)
    name = kind.__name__ if kind.__module__ == "builtins" else f"{kind.__module__}.{kind.__name__}"
    raise TypeError(f"can't assign a {name} to a {self.type()}")


def _as_value_tensor(value, like):
    """The right-hand side of an assignment as a tensor of `like`'s dtype."""
    if _is_number(value) or isinstance(value, (list, tuple)):
        from ._creation import tensor
        return tensor(value, dtype=like.dtype)
    raise TypeError(f"can't assign a {type(value).__name__} to a Tensor")


def _is_integer(i):
    return isinstance(i, numbers.Integral) and not isinstance(i, bool)


def _slice_index(v):
    """A slice bound as an int: Python's rule (an int, or an object with __index__), as torch's."""
    try:
        v = operator.index(v)
    except TypeError:
        raise TypeError("slice indices must be integers or None or have an __index__ method") from None
    # beyond int64 clamps, as Python's PySlice_Unpack in torch (x[1:2**70] is x[1:])
    return max(min(v, 2 ** 63 - 1), -2 ** 63)


def _as_index_tensor(i):
    """A list/tuple of ints or bools (nested too) or a tensor as an index tensor; None if `i` isn't one."""
    if isinstance(i, _C.TensorBase):
        return i if (i.dtype in (_C.int64, _C.bool) and i.dim() > 0) else None
    if isinstance(i, (list, tuple)):
        from ._creation import tensor
        if not i:
            return _C.zeros(0, dtype=_C.int64)
        try:
            t = tensor(i)
        except (TypeError, ValueError):
            return None
        if t.is_floating_point():  # torch's indexing_tensor_from_data: any non-bool list becomes int64
            return t.to(_C.int64)
        if t.dtype == _C.uint8:  # a list of np.uint8: a (deprecated) byte mask, as torch reads it
            return _byte_mask_as_bool(t)
        if t.dtype in (_C.int8, _C.int16, _C.int32):  # lists of np.int32 (scipy's indices, ...): int64 positions
            return t.to(_C.int64)
        return t if t.dtype in (_C.int64, _C.bool) else None
    return None


_INDEX_INTEGERS = (_C.int64, _C.int32, _C.int16, _C.int8)  # 0-dim tensors of these index as ints
_INDEX_TENSORS = (_C.int64, _C.bool)  # tensors with dims of these index as they are


def _byte_mask_as_bool(i):
    """torch 1.13 still reads a uint8 tensor index as a bool mask, with a deprecation warning; an
    int8 or int16 tensor with dims is no index at all (0-dim ones are integers, as torch's)."""
    if not isinstance(i, _C.TensorBase):
        return i
    if i.dtype == _C.uint8:
        import warnings
        warnings.warn("indexing with dtype kiln.uint8 is now deprecated, please use a dtype kiln.bool instead.",
                      UserWarning, stacklevel=5)
        return i.to(_C.bool)
    if i.dtype in (_C.int8, _C.int16, _C.int32) and i.dim() > 0:  # torch 1.13 takes no int32 index either
        raise IndexError("tensors used as indices must be long, byte or bool tensors")
    return i


def _one_bool_mask(indices):
    """Whether the advanced index is one bool mask (other dims whole): torch's canDispatchToMaskedFill."""
    given = [e for e in indices if e is not None]
    return len(given) == 1 and given[0].dtype == _C.bool


def _sequence_index(i):
    """A range or a NumPy array (with dims) indexes as the tensor of its values, as in torch."""
    if isinstance(i, range):
        from ._creation import tensor
        return tensor(list(i), dtype=_C.int64)
    if _is_ndarray(i):
        # torch's indexing_tensor_from_data: a bool (or uint8) array stays a mask, any other becomes int64
        # (float arrays truncate); a 0-dim one then indexes as a number or a bool
        if i.ndim == 0 and i.dtype.kind in "iuf":
            return int(i)
        if i.ndim == 0 and i.dtype.kind == "b":
            return bool(i)
        if i.ndim > 0:
            from ._creation import tensor
            t = tensor(i)
            return t if t.dtype in (_C.bool, _C.uint8, _C.int64) or i.dtype.kind not in "iuf" else t.to(_C.int64)
    return i


def _is_ndarray(i):
    return type(i).__module__ == "numpy" and type(i).__name__ == "ndarray"


def _sequence_as_tuple(index):
    """torch's (and NumPy's legacy) treatSequenceAsTuple: a list shorter than 32 holding a tensor, a
    sequence, a slice, ... or None is read as a tuple of indices (x[[[0, 1]]] is x[[0, 1]])."""
    if _is_ndarray(index):  # an array is a sequence too: its rows are sequences when it has 2+ dims
        return index.ndim >= 2 and len(index) < 32
    if not isinstance(index, list) or len(index) >= 32:
        return False
    return any(isinstance(i, (_C.TensorBase, list, tuple, slice, str)) or i is Ellipsis or i is None for i in index)


def _basic_view(t, index):
    """x[i], x[a:b:c] and x[i, j, a:b] (Python ints and slices of ints, at most one entry per dim): the
    view _resolve_index would make, without its general pass (which costs microseconds a call); None
    for any other index."""
    if type(index) is not tuple:
        index = (index,)
    if len(index) > t.dim():
        return None  # 0-dim tensors and too many indices: _resolve_index's errors
    view, dim = t, 0
    for i in index:
        if type(i) is int:
            view = view.select(dim, i)
        elif type(i) is slice and type(i.start) in _INT_OR_NONE and type(i.stop) in _INT_OR_NONE \
                and (i.step is None or (type(i.step) is int and i.step > 0)):
            view = view.slice(dim, _clamp64(i.start), _clamp64(i.stop), 1 if i.step is None else _clamp64(i.step))
            dim += 1
        else:
            return None
    return view


_INT_OR_NONE = (int, type(None))


def _clamp64(v):
    """A slice bound beyond int64 clamps to it, as Python's PySlice_Unpack in torch."""
    if v is None or -2 ** 63 <= v < 2 ** 63:
        return v
    return 2 ** 63 - 1 if v > 0 else -2 ** 63


def _resolve_index(t, index):
    """PyTorch's indexing rules. Ints, slices, None and ... are applied as views; what remains
    is one entry per dim of that view: None (kept whole) or an index tensor / bool mask.
    Returns (view, entries), entries None when there is no advanced index."""
    if t.dim() == 0 and not isinstance(index, tuple):  # torch's own messages for x[0] / x[a:b] of a 0-dim x
        if isinstance(index, slice):
            raise IndexError("slice() cannot be applied to a 0-dim tensor.")
        if type(index) is int or (not isinstance(index, (bool, _C.TensorBase)) and _is_integer(index)):
            raise IndexError("invalid index of a 0-dim tensor. Use `tensor.item()` in Python or "
                             "`tensor.item<T>()` in C++ to convert a 0-dim tensor to a number")
    if not isinstance(index, tuple):
        index = tuple(index) if _sequence_as_tuple(index) else (index,)
    index = tuple(_byte_mask_as_bool(_sequence_index(i)) for i in index)
    if sum(1 for i in index if i is Ellipsis) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")

    def dims_used(i):
        if i is None or i is Ellipsis or isinstance(i, bool):
            return 0
        if isinstance(i, _C.TensorBase) and i.dtype == _C.bool:
            return i.dim()
        return 1
    consumed = sum(dims_used(i) for i in index)
    if consumed > t.dim():
        raise IndexError(f"too many indices for tensor of dimension {t.dim()}")
    view, dim, entries = t, 0, []
    for i in index:
        if i is Ellipsis:
            n = t.dim() - consumed
            entries += [None] * n
            dim += n
        elif i is None:
            view = view.unsqueeze(dim)
            entries.append(None)
            dim += 1
        elif isinstance(i, slice):
            step = 1 if i.step is None else _slice_index(i.step)
            if step <= 0:
                raise ValueError("step must be greater than zero")
            view = view.slice(dim, None if i.start is None else _slice_index(i.start),
                              None if i.stop is None else _slice_index(i.stop), step)
            entries.append(None)
            dim += 1
        elif _is_integer(i) or (isinstance(i, _C.TensorBase) and i.dim() == 0 and i.dtype in _INDEX_INTEGERS):
            view = view.select(dim, int(i))
        elif isinstance(i, bool) or (isinstance(i, _C.TensorBase) and i.dim() == 0 and i.dtype == _C.bool):
            # x[True] adds a dim of size 1, x[False] one of size 0.
            view = view.unsqueeze(dim)
            entries.append(_C.zeros(1 if bool(i) else 0, dtype=_C.int64))
            dim += 1
        elif not isinstance(i, (_C.TensorBase, list, tuple, str)) and hasattr(type(i), "__index__"):
            view = view.select(dim, operator.index(i))  # torch's last resort, PyNumber_Index: np.bool_ is 0 or 1
        else:
            positions = _as_index_tensor(i)
            if isinstance(i, str):
                raise TypeError(f"invalid index: a str ('{i}') cannot index a tensor")
            if positions is None:
                raise IndexError("only integers, slices (`:`), ellipsis (`...`), None and long or byte Variables are "
                                 f"valid indices (got {type(i).__name__})")
            entries.append(positions)  # a bool mask stands for as many dims as it has
            dim += positions.dim() if positions.dtype == _C.bool else 1
    if all(e is None for e in entries):
        return view, None
    while entries and entries[-1] is None:
        entries.pop()
    return view, entries


def _size_type():
    from ._size import Size
    return Size


def _count_nonzero(input, dim=None):
    """torch.count_nonzero: the number of non-zero elements (over `dim`: an int or a tuple of ints), int64."""
    dims = list(dim) if isinstance(dim, (list, tuple)) else [dim]
    if dim is not None and not all(isinstance(d, numbers.Integral) or hasattr(d, "__index__") for d in dims):
        # torch's parser: count_nonzero has no Dimname overload
        raise TypeError(f"count_nonzero() received an invalid combination of arguments - got dim of type "
                        f"{type(dim).__name__}, but expected (Tensor input, int? dim) or (Tensor input, tuple of ints dim)")
    nz = input.ne(0)
    if dim is None:
        return nz.sum()
    return nz.sum(list(dim) if isinstance(dim, (list, tuple)) else dim)


_warned_overloads = set()


_FLOATS = (_C.float32, _C.float64)
# Whether torch's CPU kernels fuse `a * b + c` on this CPU (AVX2 + FMA, ATEN_CPU_CAPABILITY not
# "default"): only then do add/sub with alpha and addcmul take _fma; elsewhere torch rounds twice too.
_TORCH_FUSES = _C._torch_kernels_use_fma()


def _expanded(t):
    """Whether elements of t share memory (a zero stride over a dim of 2 or more): in-place ops raise there."""
    return not t.is_contiguous() and any(st == 0 and n > 1 for st, n in zip(t.stride(), t.shape))
_alpha_tensors = {}  # (alpha, dtype) -> its 0-dim tensor: an optimizer's few alphas, made once


def _alpha_tensor(alpha, dtype):
    key = (alpha, dtype)
    t = _alpha_tensors.get(key)
    if t is None:
        if len(_alpha_tensors) > 256:
            _alpha_tensors.clear()
        t = _alpha_tensors[key] = _C.full([], alpha, dtype=dtype)
    return t


def _fusable(a, b, c=None):
    """float32/float64 tensors of one dtype and shape, none of them recording a gradient, on a CPU where
    torch fuses: where kiln's add/sub/addcmul take _fma."""
    dt = a.dtype
    if not _TORCH_FUSES or dt not in _FLOATS or not isinstance(b, _C.TensorBase) or b.dtype != dt or b.shape != a.shape:
        return False
    if c is not None and (not isinstance(c, _C.TensorBase) or c.dtype != dt or c.shape != a.shape):
        return False
    return not (_C.is_grad_enabled() and (a.requires_grad or b.requires_grad or (c is not None and c.requires_grad)))


def _fused_alpha(self, args, kwargs, sign, fma=_C._fma):
    """self + sign * alpha * other as torch's add/sub kernel computes it on AVX2 + FMA CPUs (vec::fmadd:
    one rounding), through _fma (or _fma_, into self, for add_/sub_), when alpha != 1 and no gradient is
    recorded; None otherwise (the formula op then runs: alpha == 1 is a plain add there too)."""
    if len(args) != 1 or len(kwargs) != 1 or "alpha" not in kwargs:
        return None
    alpha = kwargs["alpha"]
    if isinstance(alpha, _C.TensorBase):  # a 0-dim tensor is a Scalar to torch (LBFGS: alpha=-al[i])
        if alpha.dim() != 0 or alpha.requires_grad:
            return None
        alpha = alpha.item()
    if alpha == 1 or isinstance(alpha, bool) or not isinstance(alpha, (int, float)) or not _fusable(self, args[0]):
        return None
    return fma(self, args[0], _alpha_tensor(sign * alpha, self.dtype))


def _fused_in_place(fused, self, *args):
    """fused(self, *args) into self by _fma_; False where it does not apply, or raises (an overlap of self
    and an operand): the plain in-place op then runs and raises with its own name."""
    try:
        return fused(self, *args, fma=_C.TensorBase._fma_) is not None
    except RuntimeError:
        return False


def _fused_addcmul(self, tensor1, tensor2, value, fma=_C._fma):
    """torch's addcmul as its CPU kernel computes it on AVX2 + FMA CPUs, (value * tensor1) * tensor2 + self
    with the last two fused (by _fma, or _fma_ into self), when no gradient is recorded; None otherwise.
    A bool value is its number (torch's `value.to<scalar_t>()`: value=True fuses as 1 does); a finite value
    float32 cannot hold goes to the formula op, which raises torch's overflow error."""
    if not isinstance(value, (int, float)) or not _fusable(self, tensor1, tensor2):
        return None
    if self.dtype == _C.float32 and abs(value) > _FLOAT32_MAX and value != _INF:
        return None
    return fma(self, tensor1 * value if value != 1 else tensor1, tensor2)


_FLOAT32_MAX = 3.4028234663852886e38
_INF = float("inf")


def _deprecated_alpha_first(self, name, args, kwargs):
    """add_(Number alpha, Tensor other) as add_(other, alpha=alpha), with torch's one-time warning; any other
    bad call raises the parser's TypeError again."""
    import numbers
    import warnings
    from . import _deprecated_overloads
    if (len(args) == 2 and not kwargs and isinstance(args[0], numbers.Number) and not isinstance(args[0], bool)
            and isinstance(args[1], _C.TensorBase)):
        if name not in _warned_overloads:
            _warned_overloads.add(name)
            warnings.warn(f"This overload of {name} is deprecated:\n\t{name}(Number alpha, Tensor other)\n"
                          f"Consider using one of the following signatures instead:\n"
                          f"\t{name}(Tensor other, *, Number alpha)", UserWarning,
                          stacklevel=_deprecated_overloads.user_stacklevel())
        # through the Python method: alpha= takes the fused multiply-add path torch's kernels take
        return getattr(self, name)(args[1], alpha=args[0])
    raise


def _attach_composed_methods():
    """Tensor methods of the composed functions (python/kiln/_composed_ops.py), as torch has them."""
    from . import _composed_ops as ops
    for name in ("tensor_split", "hsplit", "vsplit", "dsplit", "take_along_dim", "msort", "argwhere", "kthvalue",
                 "dist", "inner", "addr", "addmv", "diagflat", "quantile", "nanquantile"):
        if not hasattr(Tensor, name):
            setattr(Tensor, name, getattr(ops, name))
    from . import _composed_ops_more as more
    for name in ("mode", "renorm", "index_reduce", "index_reduce_", "scatter", "scatter_"):
        # scatter / scatter_ replace the bindings' methods: reduce= goes to the composite
        if name in ("scatter", "scatter_") or not hasattr(Tensor, name):
            setattr(Tensor, name, getattr(more, name))
    Tensor.float_power = more._float_power_method  # float64 inputs where a gradient is needed, as torch


_attach_composed_methods()


_arg_errors.type_methods(Tensor)  # torch's TypeError for an argument of the wrong type


_torch_function._init(Tensor)
