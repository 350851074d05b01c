"""torch's bindings raise TypeError for an argument of the wrong type ("relu(): argument 'input'
(position 1) must be Tensor, not int"). kiln's functions written in Python would instead fail deep
inside with an AttributeError (`7 .dim()`); typed() wraps them so that exactly that case becomes
torch's TypeError, naming the function and the argument. Applied once, at import, to the public
Python functions of kiln's namespaces and to Tensor's Python methods."""
import functools
import inspect
import types

from ._C import TensorBase


def _argument_name(fn, args, kwargs, obj, method):
    """(name, position or None) of the argument that is `obj`, None when it is none of them; positions
    count from 1, after self for a method (as torch's messages)."""
    for key, value in kwargs.items():
        if value is obj:
            return key, None
    try:
        names = [p.name for p in inspect.signature(fn).parameters.values()
                 if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    except (TypeError, ValueError):
        names = []
    for i, value in enumerate(args):
        if value is obj and not (method and i == 0):
            return (names[i] if i < len(names) else f"arg{i}"), i if method else i + 1
    return None


def typed(fn, method=False):
    """fn, raising TypeError where a non-tensor argument made it fail with AttributeError."""
    if getattr(fn, "__kiln_typed__", False):
        return fn

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except AttributeError as e:
            obj = getattr(e, "obj", None)
            if obj is None and "'NoneType'" not in str(e):
                raise
            if isinstance(obj, (TensorBase, types.ModuleType, type)):
                raise  # a tensor without that attribute: a real AttributeError
            found = _argument_name(fn, args, kwargs, obj, method)
            if found is None:
                raise
            name, position = found
            where = f"argument '{name}'" + (f" (position {position})" if position else "")
            raise TypeError(f"{fn.__name__}(): {where} must be Tensor, not {type(obj).__name__}") from None
    wrapper.__kiln_typed__ = True
    return wrapper


def type_namespace(namespace, names):
    """Wraps namespace[name] (a dict: a module's globals) for each public Python function named."""
    for name in names:
        fn = namespace.get(name)
        if isinstance(fn, types.FunctionType) and not name.startswith("_"):
            namespace[name] = typed(fn)


def _takes_arguments(fn):
    """Whether fn takes anything besides self."""
    code = fn.__code__
    return code.co_argcount + code.co_kwonlyargcount > 1 or bool(
        code.co_flags & (inspect.CO_VARARGS | inspect.CO_VARKEYWORDS))


def type_methods(cls):
    """Wraps cls's public Python methods (not dunders: operators keep their NotImplemented rules; not
    those that take nothing but self, such as float(), which no argument can make fail)."""
    for name, fn in list(vars(cls).items()):
        if isinstance(fn, types.FunctionType) and not name.startswith("_") and _takes_arguments(fn):
            setattr(cls, name, typed(fn, method=True))
