"""The __torch_function__ protocol (torch.overrides), torch 2.x's semantics.

Where the checks sit, so that plain tensors pay nothing:
- public functions (kiln.add, kiln.nn.functional.relu, kiln.linalg.*, ...) are wrapped in C
  (runtime/python/torch_function.cc): an argument of exactly kiln.Tensor costs a pointer compare;
  an argument whose type overrides __torch_function__ (or an active TorchFunctionMode) sends the call
  to `_handle` here;
- Tensor methods, operators and properties: kiln.Tensor itself is untouched; a subclass gets
  wrappers of them when it is created (Tensor.__init_subclass__ -> `install`), which run the
  protocol with the public function (kiln.Tensor.add, kiln.Tensor.grad.__get__) as `func`.
  A subclass whose __torch_function__ is _disabled_torch_function_impl (nn.Parameter) gets none.

The default Tensor.__torch_function__ runs func under DisableTorchFunctionSubclass and turns tensor
results into the subclass (`_convert`), as torch's.
"""
import contextlib
import threading

from . import _C


# ---- the disabled state (thread-local, kept in C so the wrappers read it cheaply) ----

class _DisabledTorchFunctionImpl:
    """torch._C._disabled_torch_function_impl: as a class's __torch_function__ it means "no override";
    called, it runs func with subclass dispatch off and returns the result unconverted. An instance of
    a class without __get__, so a class attribute does not bind (as torch's builtin)."""
    __slots__ = ()

    def __call__(self, func, types, args=(), kwargs=None):
        with DisableTorchFunctionSubclass():
            return func(*args, **(kwargs or {}))

    def __repr__(self):
        return "<built-in function _disabled_torch_function_impl>"

    def __reduce__(self):
        return "_disabled_torch_function_impl"


_disabled_torch_function_impl = _DisabledTorchFunctionImpl()


class _DisableState:
    _subclass = False
    _all = False

    def __init__(self):
        self._saved = []

    def __enter__(self):
        sub, all_, depth = _C._torch_function_state()
        self._saved.append((sub, all_))
        _C._set_torch_function_state(sub or self._subclass, all_ or self._all, depth)
        return self

    def __exit__(self, *exc):
        sub, all_ = self._saved.pop()
        _C._set_torch_function_state(sub, all_, _C._torch_function_state()[2])
        return False


class DisableTorchFunctionSubclass(_DisableState):
    """torch._C.DisableTorchFunctionSubclass: subclasses' and tensor-likes' overrides are skipped
    (modes still run)."""
    _subclass = True


class DisableTorchFunction(_DisableState):
    """torch._C.DisableTorchFunction: no __torch_function__ runs, modes included."""
    _all = True


# ---- TorchFunctionMode and its (thread-local) stack ----

_local = threading.local()


def _mode_stack():
    stack = getattr(_local, "modes", None)
    if stack is None:
        stack = _local.modes = []
    return stack


def _set_depth(n):
    sub, all_, _ = _C._torch_function_state()
    _C._set_torch_function_state(sub, all_, n)


def _push_mode(mode):
    stack = _mode_stack()
    stack.append(mode)
    _set_depth(len(stack))


def _pop_mode():
    stack = _mode_stack()
    if not stack:
        raise RuntimeError("Trying to pop from an empty mode stack")
    mode = stack.pop()
    _set_depth(len(stack))
    return mode


@contextlib.contextmanager
def _pop_mode_temporarily():
    mode = _pop_mode()
    try:
        yield mode
    finally:
        _push_mode(mode)


def _get_current_function_mode():
    stack = _mode_stack()
    return stack[-1] if stack else None


def _get_current_function_mode_stack():
    return list(_mode_stack())


def _len_torch_function_stack():
    return len(_mode_stack())


class TorchFunctionMode:
    """torch.overrides.TorchFunctionMode: while entered, every overridable call goes to this object's
    __torch_function__(func, types, args, kwargs) first (the mode is off inside it)."""
    inner = None

    def __init__(self, inner=None):
        pass

    def __torch_function__(self, func, types, args=(), kwargs=None):
        raise NotImplementedError()

    def __enter__(self):
        _push_mode(self)
        return self

    def __exit__(self, exc_type, exc_val, exc_tb):
        _pop_mode()

    @classmethod
    def push(cls, *args, **kwargs):
        return cls(*args, **kwargs)


# ---- finding the overrides and calling them ----

def _tensor_class():
    from ._tensor import Tensor
    return Tensor


def _overrides(t):
    if t is _Tensor or t in _BASIC:
        return False
    tf = getattr(t, "__torch_function__", None)
    return tf is not None and tf is not _disabled_torch_function_impl


_BASIC = frozenset([int, float, bool, complex, str, type(None), _C.TensorBase, list, tuple, dict])
_Tensor = None  # kiln.Tensor, set by _init


def _relevant(args, kwargs):
    """The arguments torch looks at: each argument, and the elements of a list/tuple argument."""
    for a in args:
        if type(a) is list or type(a) is tuple:
            yield from a
        else:
            yield a
    if kwargs:
        for a in kwargs.values():
            if type(a) is list or type(a) is tuple:
                yield from a
            else:
                yield a


def _get_overloaded_args(relevant_args):
    """The overriding arguments, one per type, subclasses before their bases (else left to right)."""
    types, overloaded = set(), []
    for arg in relevant_args:
        t = type(arg)
        if t in types or not _overrides(t):
            continue
        index = len(overloaded)
        for i, old in enumerate(overloaded):
            if issubclass(t, type(old)):
                index = i
                break
        types.add(t)
        overloaded.insert(index, arg)
    return overloaded


def _subclasses_enabled():
    sub, all_, _ = _C._torch_function_state()
    return not sub and not all_


def _mode_enabled():
    return _C._is_torch_function_mode_enabled()


def _dispatch(public_api, overloaded, args, kwargs):
    """torch.overrides.handle_torch_function's loop: the mode, then each override in order."""
    types = tuple(type(a) for a in overloaded)
    if _mode_enabled():
        with _pop_mode_temporarily() as mode:
            result = mode.__torch_function__(public_api, types, args, kwargs)
        if result is not NotImplemented:
            return result
    for arg in overloaded:
        result = arg.__torch_function__(public_api, types, args, kwargs)
        if result is not NotImplemented:
            return result
    name = f"{getattr(public_api, '__module__', None) or 'kiln'}.{getattr(public_api, '__name__', public_api)}"
    msg = (f"no implementation found for '{name}' on types that implement __torch_function__: "
           f"{[type(a) for a in overloaded]}")
    if _mode_enabled():
        msg += f" nor in mode {_get_current_function_mode()}"
    raise TypeError(msg)


def _handle(public_api, impl, args, kwargs):
    """Called by a wrapped public function (C) when an argument may override or a mode is on."""
    overloaded = _get_overloaded_args(_relevant(args, kwargs)) if _subclasses_enabled() else []
    if not overloaded and not _mode_enabled():
        return impl(*args, **kwargs)
    return _dispatch(public_api, overloaded, args, kwargs)


def _call(public_api, args, kwargs):
    """A Tensor method/property of a subclass instance (or a Python-level check): the protocol, or the
    call itself when nothing overrides."""
    overloaded = _get_overloaded_args(_relevant(args, kwargs)) if _subclasses_enabled() else []
    if not overloaded and not _mode_enabled():
        return public_api(*args, **kwargs)
    return _dispatch(public_api, overloaded, args, kwargs)


# ---- the default Tensor.__torch_function__ ----

def _convert(ret, cls):
    if cls is _Tensor:
        return ret
    if isinstance(ret, _Tensor) and not isinstance(ret, cls):
        ret = ret.as_subclass(cls)
    if isinstance(ret, (tuple, list)):
        items = [_convert(r, cls) for r in ret]
        t = type(ret)
        if t is tuple or t is list:
            return t(items)
        make = getattr(t, "_make", None)  # a collections.namedtuple
        return make(items) if make is not None else t(items)
    return ret


_nowrap = None


def _nowrap_functions():
    """torch's get_default_nowrap_functions: getters whose result the default leaves as it is."""
    global _nowrap
    if _nowrap is None:
        T = _Tensor
        _nowrap = (T._base.__get__, T.grad.__get__) + ((T._grad.__get__,) if hasattr(T, "_grad") else ())
    return _nowrap


def default_torch_function(cls, func, types, args=(), kwargs=None):
    if kwargs is None:
        kwargs = {}
    if not all(issubclass(cls, t) for t in types):
        return NotImplemented
    with DisableTorchFunctionSubclass():
        ret = func(*args, **kwargs)
        if func in _nowrap_functions():
            return ret
        return _convert(ret, cls)


# ---- a subclass's wrappers of the Tensor methods, operators and properties ----

# Not dispatched (torch.overrides.get_ignored_functions' Tensor entries, and Python's own machinery).
_NOT_WRAPPED = frozenset("""
__new__ __init__ __init_subclass__ __torch_function__ __torch_dispatch__ __class__ __dict__ __weakref__
__getattribute__ __getattr__ __setattr__ __delattr__ __subclasshook__ __reduce__ __sizeof__ __dir__ __doc__
__module__ __hash__ __delitem__ __iter__ __str__ __class_getitem__ __instancecheck__ __array_priority__
__getstate__ __setstate__ _make_subclass _make_wrapper_subclass as_subclass _fix_weakref _reduce_ex_internal
new new_empty new_empty_strided new_full new_ones new_tensor new_zeros stride unflatten
""".split())

# Operators whose `func` is the method (torch's C-level operators report torch.Tensor.add for `+`).
_OPERATOR_METHODS = {
    "__add__": "add", "__radd__": "add", "__iadd__": "add_", "__sub__": "sub", "__isub__": "sub_",
    "__mul__": "mul", "__rmul__": "mul", "__imul__": "mul_", "__truediv__": "div", "__itruediv__": "div_",
    "__mod__": "remainder", "__imod__": "remainder_", "__ifloordiv__": "floor_divide_", "__matmul__": "matmul", "__eq__": "eq", "__ne__": "ne", "__lt__": "lt", "__le__": "le",
    "__gt__": "gt", "__ge__": "ge", "__abs__": "abs", "__neg__": "neg", "__pos__": "positive",
    "__rand__": "bitwise_and", "__ror__": "bitwise_or", "__rxor__": "bitwise_xor",
}
_REFLECTED = {
    "__radd__": "__add__", "__rsub__": "__sub__", "__rmul__": "__mul__", "__rtruediv__": "__truediv__",
    "__rfloordiv__": "__floordiv__", "__rmod__": "__mod__", "__rpow__": "__pow__", "__rmatmul__": "__matmul__",
    "__rand__": "__and__", "__ror__": "__or__", "__rxor__": "__xor__", "__rlshift__": "__lshift__",
    "__rrshift__": "__rshift__",
}
# Binary operators: a TypeError becomes NotImplemented, so Python tries the other operand (torch's).
_BINARY = frozenset(n for n in list(_OPERATOR_METHODS) + list(_REFLECTED) + list(_REFLECTED.values())
                    if n not in ("__abs__", "__neg__", "__pos__")) | frozenset(
    "__iand__ __ior__ __ixor__ __ilshift__ __irshift__ __ifloordiv__".split())

_active = _C._torch_function_active
_wrappers = None  # name -> what a subclass gets, made on the first subclass


def _public(name):
    """What `func` is for a Tensor attribute: the attribute of kiln.Tensor (an operator: its method)."""
    target = _OPERATOR_METHODS.get(name, name)
    return getattr(_Tensor, target if hasattr(_Tensor, target) else name)


def _method(name):
    public = _public(name)

    def method(*args, **kwargs):
        if _active():
            return _call(public, args, kwargs)
        return public(*args, **kwargs)
    method.__name__ = method.__qualname__ = name
    method.__doc__ = getattr(public, "__doc__", None)
    return method


def _binary(name):
    public = _public(name)
    forward = _public(_REFLECTED[name]) if name in _REFLECTED else None
    TensorBase = _C.TensorBase

    def operator(self, other):
        try:
            if forward is not None and isinstance(other, TensorBase):
                # Python tried self's reflected method first only because self's class is a subclass
                # of other's: torch runs other.__op__(self) here
                args, func = (other, self), forward
            else:
                args, func = (self, other), public
            if _active():
                return _call(func, args, None)
            return func(*args)
        except TypeError:
            return NotImplemented
    operator.__name__ = operator.__qualname__ = name
    return operator


def _property(name, descr):
    def fget(self):
        getter = descr.__get__
        return _call(getter, (self,), None) if _active() else getter(self)

    def fset(self, value):
        setter = descr.__set__
        if _active():
            _call(setter, (self, value), None)
        else:
            setter(self, value)

    def fdel(self):
        deleter = descr.__delete__
        if _active():
            _call(deleter, (self,), None)
        else:
            deleter(self)
    return property(fget, fset, fdel, getattr(descr, "__doc__", None))


def _raw(cls, name):
    for k in cls.__mro__:
        if name in k.__dict__:
            return k, k.__dict__[name]
    return None, None


def _make_wrappers():
    import types
    methods = (types.FunctionType, types.MethodDescriptorType, types.WrapperDescriptorType, types.BuiltinFunctionType)
    data = (property, types.GetSetDescriptorType, types.MemberDescriptorType)
    out = {}
    for name in dir(_Tensor):
        if name in _NOT_WRAPPED:
            continue
        owner, raw = _raw(_Tensor, name)
        if owner is None or owner is object:
            continue
        if isinstance(raw, data):
            out[name] = ("property", raw)
        elif isinstance(raw, methods):
            out[name] = ("binary" if name in _BINARY else "method", raw)
    return out


_wrapper_base = None  # the class holding the wrappers, made on the first subclass


def _add_wrappers(cls, skip=()):
    global _wrappers
    if _wrappers is None:
        _wrappers = _make_wrappers()
    for name, (kind, raw) in _wrappers.items():
        if any(name in k.__dict__ for k in skip):
            continue  # the subclass's own
        if kind == "property":
            setattr(cls, name, _property(name, raw))
        elif kind == "binary":
            setattr(cls, name, _binary(name))
        else:
            setattr(cls, name, _method(name))


def install(cls):
    """Gives a new Tensor subclass the wrappers that run the protocol (Tensor.__init_subclass__): the
    subclass's base kiln.Tensor becomes a class holding them, a subclass of kiln.Tensor, so a method
    of the subclass calling super().add(...) runs the protocol too (torch's C methods do)."""
    global _wrapper_base
    if _wrapper_base is False:
        return  # making _wrapper_base itself
    if getattr(cls, "__torch_function__", None) is _disabled_torch_function_impl:
        return
    if _wrapper_base is None:
        _wrapper_base = False
        try:
            base = type("Tensor", (_Tensor,), {"__module__": __name__, "__qualname__": "Tensor",
                                                "__doc__": "kiln.Tensor's methods, running the __torch_function__ "
                                                           "protocol (the base of Tensor subclasses)"})
            _add_wrappers(base)
        except BaseException:
            _wrapper_base = None
            raise
        _wrapper_base = base
    if issubclass(cls, _wrapper_base):
        return  # a base subclass has them
    below = cls.__mro__[:cls.__mro__.index(_Tensor)]
    if any("_kiln_torch_function_wrappers" in k.__dict__ for k in below):
        return
    if _Tensor in cls.__bases__:
        try:
            cls.__bases__ = tuple(_wrapper_base if b is _Tensor else b for b in cls.__bases__)
            return
        except TypeError:
            pass
    # kiln.Tensor is not a direct base (a subclass of nn.Parameter turning the protocol back on), or the
    # bases could not change: the wrappers go on the class itself
    _add_wrappers(cls, skip=below)
    type.__setattr__(cls, "_kiln_torch_function_wrappers", True)


# ---- public functions: which get the C wrapper ----

def wrap_namespace(namespace, module_name, names):
    """Replaces each function `name` of `namespace` by its protocol-running wrapper."""
    wrapped = []
    for name in names:
        fn = namespace.__dict__.get(name) if hasattr(namespace, "__dict__") else None
        if fn is None or isinstance(fn, (type, _C._TorchFunctionDispatcher)) or not callable(fn):
            continue
        w = _C._wrap_torch_function(fn, module_name, name)
        setattr(namespace, name, w)
        wrapped.append(w)
    return wrapped


def _init(tensor_class):
    global _Tensor
    _Tensor = tensor_class
    _C._set_torch_function_handler(_handle, _disabled_torch_function_impl)
    _C._disabled_torch_function_impl = _disabled_torch_function_impl
    _C.DisableTorchFunctionSubclass = DisableTorchFunctionSubclass
    _C.DisableTorchFunction = DisableTorchFunction
    _C._get_function_stack_at = lambda i: _mode_stack()[i]
    _C._len_torch_function_stack = _len_torch_function_stack
