"""torch.overrides: the __torch_function__ protocol's public API (implementation: _torch_function.py).

Functions of kiln, kiln.nn.functional, kiln.linalg and kiln.special whose torch counterparts are
overridable dispatch to an argument's __torch_function__ (and to an active TorchFunctionMode); Tensor
methods, operators and properties do for instances of Tensor subclasses.
"""
import functools

from . import _C, _overridable
from ._torch_function import (TorchFunctionMode, _get_current_function_mode,  # noqa: F401
                              _get_current_function_mode_stack, _get_overloaded_args, _len_torch_function_stack,
                              _pop_mode_temporarily, _disabled_torch_function_impl, _call, _dispatch,
                              _subclasses_enabled, _mode_enabled, _relevant, _overrides)

__all__ = ["get_ignored_functions", "get_overridable_functions", "get_testing_overrides", "handle_torch_function",
           "has_torch_function", "TorchFunctionMode", "is_tensor_like", "is_tensor_method_or_property",
           "wrap_torch_function", "enable_reentrant_dispatch"]

_overridable_functions = {}  # namespace -> [wrapped functions], filled by _wrap_public_functions


def has_torch_function(relevant_args):
    """Whether an argument (or an element of a list/tuple argument) overrides __torch_function__ and the
    protocol is enabled, or a TorchFunctionMode is active."""
    if _mode_enabled():
        return True
    if not _subclasses_enabled():
        return False
    return any(_overrides(type(a)) for a in _relevant(relevant_args, None))


def has_torch_function_unary(arg):
    return has_torch_function((arg,))


def has_torch_function_variadic(*args):
    return has_torch_function(args)


def handle_torch_function(public_api, relevant_args, *args, **kwargs):
    """Runs the overrides of public_api for relevant_args (the mode first): what a Python function calls
    after has_torch_function(relevant_args) said yes."""
    overloaded = _get_overloaded_args(_relevant(relevant_args, None)) if _subclasses_enabled() else []
    return _dispatch(public_api, overloaded, args, kwargs)


def is_tensor_like(inp):
    """A Tensor, or an object whose type defines __torch_function__."""
    return isinstance(inp, _C.TensorBase) or hasattr(inp, "__torch_function__")


def is_tensor_method_or_property(func):
    """Whether func is a method or property of kiln.Tensor (such a func gets self as its first argument)."""
    from ._tensor import Tensor
    name = getattr(func, "__name__", None)
    if name == "__get__":
        return any(getattr(Tensor, n, None) is getattr(func, "__self__", None) for n in dir(Tensor))
    return name is not None and getattr(Tensor, name, None) is func


def get_ignored_functions():
    """Public functions that do not dispatch (they take no tensors, or make them)."""
    import kiln
    out = set()
    for name in ("tensor", "as_tensor", "from_numpy", "empty", "zeros", "ones", "full", "arange", "linspace",
                 "logspace", "eye", "rand", "randn", "randint", "randperm", "manual_seed", "is_tensor",
                 "is_storage", "set_default_dtype", "get_default_dtype", "set_printoptions", "is_grad_enabled",
                 "set_grad_enabled", "no_grad", "enable_grad", "compile", "load", "save"):
        fn = getattr(kiln, name, None)
        if fn is not None:
            out.add(fn)
    return out


def get_overridable_functions():
    """namespace (module or kiln.Tensor) -> the functions in it that dispatch."""
    from ._tensor import Tensor
    from ._torch_function import _make_wrappers, _public
    import kiln
    out = {ns: list(fns) for ns, fns in _overridable_functions.items()}
    methods = []
    for name, (kind, raw) in _make_wrappers().items():
        methods.append(raw.__get__ if kind == "property" else _public(name))
    out[Tensor] = methods
    out.setdefault(kiln, [])
    return out


def get_testing_overrides():
    """func -> a dummy override (returns -1) for every overridable function (torch's is signature-exact;
    these take any arguments)."""
    def dummy(*args, **kwargs):
        return -1
    return {f: dummy for fns in get_overridable_functions().values() for f in fns}


def wrap_torch_function(dispatcher):
    """Decorator: the function runs the protocol on the arguments dispatcher(*args, **kwargs) returns."""
    def inner(func):
        @functools.wraps(func)
        def wrapped(*args, **kwargs):
            relevant_args = dispatcher(*args, **kwargs)
            if has_torch_function(relevant_args):
                return handle_torch_function(wrapped, relevant_args, *args, **kwargs)
            return func(*args, **kwargs)
        return wrapped
    return inner


def enable_reentrant_dispatch():
    """torch's enable_reentrant_dispatch (a __torch_dispatch__ helper): kiln has no __torch_dispatch__,
    so this is a context manager that changes nothing."""
    import contextlib
    return contextlib.nullcontext()


# torch._C's names of the checks
_C._has_torch_function = has_torch_function
_C._has_torch_function_unary = has_torch_function_unary
_C._has_torch_function_variadic = has_torch_function_variadic


def _wrap_public_functions():
    import sys
    import kiln
    from ._torch_function import wrap_namespace
    namespaces = [(kiln, "kiln", _overridable.TORCH)]
    for mod, names in (("kiln.nn.functional", _overridable.NN_FUNCTIONAL), ("kiln.linalg", _overridable.LINALG),
                       ("kiln.special", _overridable.SPECIAL), ("kiln.fft", _overridable.FFT)):
        if mod in sys.modules:
            namespaces.append((sys.modules[mod], mod, names))
    wrappers = {}  # id(original) -> its wrapper: one per function, whichever namespaces name it
    for ns, mod_name, names in namespaces:
        fresh = []
        for name in names:
            fn = ns.__dict__.get(name)
            if fn is None:
                continue
            if id(fn) in wrappers:
                setattr(ns, name, wrappers[id(fn)][1])
                fresh.append(wrappers[id(fn)][1])
                continue
            done = wrap_namespace(ns, mod_name, [name])
            if done:
                wrappers[id(fn)] = (fn, done[0])
                fresh.extend(done)
        _overridable_functions[ns] = fresh
    _retarget({id(fn): w for fn, w in wrappers.values()}, [fn for fn, _ in wrappers.values()])


def _retarget(wrapper_of, keep_alive):
    """kiln's own references to the functions just wrapped become the wrappers, as if torch's objects had
    been there from the start: names imported into other kiln modules (`from .functional import relu`),
    and default arguments (`activation=F.relu`, which TransformerEncoderLayer compares with `is F.relu`)."""
    import sys
    import types

    def fix_defaults(fn):
        seen = 0
        while isinstance(getattr(fn, "__wrapped__", None), types.FunctionType) and seen < 8:
            fix_defaults_of(fn)
            fn, seen = fn.__wrapped__, seen + 1  # (Module.__init_subclass__ wraps __init__)
        fix_defaults_of(fn)

    def fix_defaults_of(fn):
        if not isinstance(fn, types.FunctionType):
            return
        if fn.__defaults__ and any(id(d) in wrapper_of for d in fn.__defaults__):
            fn.__defaults__ = tuple(wrapper_of.get(id(d), d) for d in fn.__defaults__)
        if fn.__kwdefaults__ and any(id(d) in wrapper_of for d in fn.__kwdefaults__.values()):
            fn.__kwdefaults__ = {k: wrapper_of.get(id(d), d) for k, d in fn.__kwdefaults__.items()}

    for mod_name, mod in list(sys.modules.items()):
        if mod is None or not (mod_name == "kiln" or mod_name.startswith("kiln.")) or mod_name == "kiln._C":
            continue  # (kiln._C keeps the raw bindings, which kiln's own code calls)
        for name, value in list(vars(mod).items()):
            if id(value) in wrapper_of:
                setattr(mod, name, wrapper_of[id(value)])
            elif isinstance(value, types.FunctionType):
                fix_defaults(value)
            elif isinstance(value, type) and value.__module__ == mod_name:
                for attr in vars(value).values():
                    fix_defaults(getattr(attr, "__func__", attr))
    del keep_alive  # (the originals stayed alive while ids were compared)
