"""kiln.nn.Parameter: a Tensor that Modules register as a learnable parameter."""
from .. import _C
from .._tensor import Tensor
from .._torch_function import _disabled_torch_function_impl


class _ParameterMeta(type):
    # A Tensor subclass instance made a parameter keeps its class; it is marked instead (torch 2.x)
    def __instancecheck__(cls, instance):
        if cls is Parameter and isinstance(instance, _C.TensorBase) and getattr(instance, "_is_param", False):
            return True
        return super().__instancecheck__(instance)


class Parameter(Tensor, metaclass=_ParameterMeta):
    """Parameter(data=None, requires_grad=True): aliases `data` (detached) as a leaf parameter.

    Assigning a Parameter to a Module attribute registers it in the Module's parameters().
    Results of ops on a Parameter are plain Tensors (its __torch_function__ is disabled, as torch's).
    """
    __torch_function__ = _disabled_torch_function_impl

    def __new__(cls, data=None, requires_grad=True):
        if data is None:
            data = _C.empty([0])
        if type(data) is Tensor or type(data) is Parameter or not isinstance(data, Tensor) or \
                getattr(type(data), "__torch_function__", None) is _disabled_torch_function_impl:
            return _C._make_subclass(cls, data, requires_grad)
        # a Tensor subclass instance (torch 2.x): a detached alias of its own class, marked as a parameter
        t = data.detach().requires_grad_(requires_grad)
        if type(t) is not type(data):
            raise RuntimeError(f"Creating a Parameter from an instance of type {type(data).__name__} requires that "
                               f"detach() returns an instance of the same type, but return type "
                               f"{type(t).__name__} was found instead. To use the type as a Parameter, please "
                               f"correct the detach() semantics defined by its __torch_function__() "
                               "implementation.")
        t._is_param = True
        return t

    def __repr__(self):
        return "Parameter containing:\n" + super().__repr__()

    def __deepcopy__(self, memo):
        if id(self) not in memo:
            memo[id(self)] = type(self)(self.detach().clone(), self.requires_grad)
        return memo[id(self)]

    def __reduce_ex__(self, proto):
        return (Parameter, (self.detach().clone(), self.requires_grad))


class UninitializedParameter(Parameter):
    """A parameter whose shape is not known yet (lazy modules): materialize(shape) gives it storage and
    makes it a Parameter."""
    cls_to_become = Parameter

    def __new__(cls, requires_grad=True, device=None, dtype=None):
        data = _C.empty([0], **({"dtype": dtype} if dtype is not None else {}))
        return _C._make_subclass(cls, data, requires_grad)

    def materialize(self, shape, device=None, dtype=None):
        if dtype is None:
            dtype = self.dtype
        self.data = _C.empty(list(shape), dtype=dtype)
        self.__class__ = self.cls_to_become

    @property
    def shape(self):
        raise RuntimeError("Can't access the shape of an uninitialized parameter or buffer. This error usually "
                           "happens in `load_state_dict` when trying to load an uninitialized parameter into an "
                           "initialized one. Call `forward` to initialize the parameters before accessing their "
                           "attributes.")

    def __repr__(self):
        return "<UninitializedParameter>"

    def __deepcopy__(self, memo):
        if id(self) not in memo:
            memo[id(self)] = type(self)(self.requires_grad, None, self.dtype)
        return memo[id(self)]

    def __reduce_ex__(self, proto):
        return (UninitializedParameter, (self.requires_grad,))


class UninitializedBuffer(Tensor):
    """A buffer whose shape is not known yet (lazy norm layers): materialize(shape) makes it a Tensor."""
    cls_to_become = Tensor
    __torch_function__ = _disabled_torch_function_impl

    def __new__(cls, requires_grad=False, device=None, dtype=None):
        data = _C.empty([0], **({"dtype": dtype} if dtype is not None else {}))
        return _C._make_subclass(cls, data, requires_grad)

    materialize = UninitializedParameter.materialize
    shape = UninitializedParameter.shape

    def __repr__(self):
        return "<UninitializedBuffer>"


def is_lazy(param):
    return isinstance(param, (UninitializedParameter, UninitializedBuffer))


class _BufferMeta(type):
    def __instancecheck__(cls, instance):
        if cls is Buffer and isinstance(instance, _C.TensorBase) and getattr(instance, "_is_buffer", False):
            return True
        return super().__instancecheck__(instance)


class Buffer(Tensor, metaclass=_BufferMeta):
    """Buffer(data=None, *, persistent=True) (torch 2.5): marks a tensor (detached, keeping requires_grad)
    so that assigning it to a Module attribute registers a buffer; persistent buffers are in state_dict."""
    __torch_function__ = _disabled_torch_function_impl

    def __new__(cls, data=None, *, persistent=True):
        if data is None:
            data = _C.empty([0])
        t = data.detach().requires_grad_(data.requires_grad)
        t.persistent = persistent
        t._is_buffer = True
        return t
