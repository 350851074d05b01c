"""kiln.jit: torch.jit's Python surface for programs that use it along the way. kiln's jit runs eagerly.

kiln has no TorchScript compiler: nothing here compiles, checks types or builds a graph. Every entry
point keeps the program's eager Python code running as it is, which is what a torch program that
scripts or traces a model for speed or deployment needs in order to run under kiln:

* ``script(fn)`` (also as a decorator, type annotations and all) returns a ``ScriptFunction`` that calls
  ``fn``; ``script(module)`` returns the module itself (still the same ``nn.Module``: parameters,
  ``state_dict``, hooks and training mode unchanged); a class is returned unchanged.
* ``trace(fn_or_module, example_inputs)`` and ``trace_module(module, {method: inputs})`` run the example
  once (with ``is_tracing()`` true during that call) and return the module, or a ``ScriptFunction`` for a
  function; later calls run the eager code, so data-dependent control flow keeps working (where torch's
  trace would have frozen the path the example took).
* ``ignore``, ``unused``, ``export``, ``interface``, ``script_method``, ``script_if_tracing``,
  ``_overload``, ``_overload_method`` return what they decorate; ``annotate(type, value)`` returns value;
  ``Final`` is ``typing.Final``; ``Attribute(value, type)`` is torch's named tuple, unwrapped when set
  on a ``ScriptModule``; ``is_scripting()`` is always False.
* ``fork(fn, *args)`` calls ``fn`` at once and returns a completed future; ``wait(future)`` returns its value.
* ``freeze`` (an eval-mode module, as torch requires) and ``optimize_for_inference`` return the module.
* ``save`` and ``load`` raise ``NotImplementedError``: ``torch.jit.save`` writes a TorchScript archive
  (code and graphs), which kiln cannot produce or run. Save the weights instead,
  ``kiln.save(model.state_dict(), path)``, and rebuild the model from its Python class with
  ``load_state_dict(kiln.load(path))``.
"""
import collections
import collections.abc
import functools
import inspect
import typing

from ..nn.modules.module import Module

__all__ = ["script", "trace", "trace_module", "ignore", "unused", "export", "is_scripting", "is_tracing",
           "annotate", "Final", "Attribute", "ScriptModule", "ScriptFunction", "interface", "fork", "wait",
           "freeze", "optimize_for_inference", "save", "load", "script_method", "script_if_tracing",
           "TracerWarning", "Error", "Future", "isinstance", "set_fusion_strategy", "enable_onednn_fusion",
           "onednn_fusion_enabled", "CompilationUnit"]

_builtin_isinstance = isinstance
Final = typing.Final
Attribute = collections.namedtuple("Attribute", ["value", "type"])

_tracing_depth = 0


class Error(RuntimeError):
    """torch.jit.Error: what a TorchScript `raise` becomes (kiln's jit runs eagerly, so programs see their own exceptions)."""


class TracerWarning(Warning):
    """torch.jit.TracerWarning (kiln's trace records nothing, so it never warns)."""

    @staticmethod
    def ignore_lib_warnings():
        pass


def _no_torchscript(what):
    raise NotImplementedError(
        f"{what}: kiln's jit runs eagerly and has no TorchScript code or graph. Save the weights with "
        "kiln.save(model.state_dict(), path) and rebuild the model from its Python class "
        "(model.load_state_dict(kiln.load(path))).")


class ScriptFunction:
    """What script(fn) and trace(fn, ...) return: calls the Python function (kiln's jit runs eagerly)."""

    def __init__(self, fn):
        self._fn = fn
        functools.update_wrapper(self, fn)
        self.name = getattr(fn, "__name__", type(fn).__name__)
        self.qualified_name = getattr(fn, "__qualname__", self.name)

    def __call__(self, *args, **kwargs):
        return self._fn(*args, **kwargs)

    def __get__(self, obj, objtype=None):  # a scripted function stored on a class binds as a method
        if obj is None:
            return self
        return functools.partial(self._fn, obj)

    def __repr__(self):
        return f"<kiln.jit.ScriptFunction {self.name} (runs eagerly)>"

    @property
    def graph(self):
        _no_torchscript("ScriptFunction.graph")

    @property
    def code(self):
        _no_torchscript("ScriptFunction.code")

    @property
    def inlined_graph(self):
        _no_torchscript("ScriptFunction.inlined_graph")

    @property
    def schema(self):
        return inspect.signature(self._fn)

    def save(self, *args, **kwargs):
        _no_torchscript("ScriptFunction.save")


class ScriptModule(Module):
    """torch.jit.ScriptModule: an nn.Module whose forward kiln runs eagerly; attributes set as
    ``kiln.jit.Attribute(value, type)`` hold the value, as on torch's script modules. (script() and trace()
    return the module they are given, not a ScriptModule.)"""

    def __setattr__(self, name, value):
        if _builtin_isinstance(value, Attribute):
            value = value.value
        super().__setattr__(name, value)

    def save(self, *args, **kwargs):
        _no_torchscript("ScriptModule.save")

    @property
    def code(self):
        _no_torchscript("ScriptModule.code")

    @property
    def graph(self):
        _no_torchscript("ScriptModule.graph")


RecursiveScriptModule = ScriptModule
TopLevelTracedModule = ScriptModule


def _is_module(obj):
    return _builtin_isinstance(obj, Module)


def script(obj, optimize=None, _frames_up=0, _rcb=None, example_inputs=None):
    """torch.jit.script, eagerly: a module comes back as itself, a function as a ScriptFunction calling it,
    a class unchanged. Nothing is compiled or type-checked."""
    if optimize is not None:
        import warnings
        warnings.warn("`optimize` is deprecated and has no effect. Use `with torch.jit.optimized_execution() "
                      "instead", FutureWarning, stacklevel=2)
    if _is_module(obj) or inspect.isclass(obj):
        return obj
    if _builtin_isinstance(obj, ScriptFunction):
        return obj
    if callable(obj):
        return ScriptFunction(obj)
    raise RuntimeError(f"script(): cannot script an object of type {type(obj).__name__}: expected a function, "
                       "an nn.Module or a class")


def _as_inputs(example_inputs):
    if example_inputs is None:
        return ()
    if _builtin_isinstance(example_inputs, tuple):
        return example_inputs
    return (example_inputs,)


def _run_traced(fn, args, kwargs=None):
    global _tracing_depth
    from ..autograd.grad_mode import no_grad
    _tracing_depth += 1
    try:
        with no_grad():
            return fn(*args, **(kwargs or {}))
    finally:
        _tracing_depth -= 1


def trace(func, example_inputs=None, optimize=None, check_trace=True, check_inputs=None, check_tolerance=1e-5,
          strict=True, _force_outplace=False, _module_class=None, _compilation_unit=None,
          example_kwarg_inputs=None, _store_inputs=True):
    """torch.jit.trace, eagerly: runs func (a module or function) once on the example inputs, then returns the
    module itself or a ScriptFunction calling the function. Later calls run the Python code as written."""
    if example_inputs is None and example_kwarg_inputs is None:
        raise RuntimeError("trace(): give example_inputs (a tuple of arguments, or one tensor) or "
                           "example_kwarg_inputs (a dict)")
    kwargs = example_kwarg_inputs if _builtin_isinstance(example_kwarg_inputs, dict) else None
    if _builtin_isinstance(example_inputs, dict) and kwargs is None:
        kwargs, args = example_inputs, ()
    else:
        args = _as_inputs(example_inputs)
    if _is_module(func):
        _run_traced(func, args, kwargs)
        return func
    if _builtin_isinstance(func, ScriptFunction):
        return func
    if not callable(func):
        raise RuntimeError(f"trace(): expected a module or a function, got {type(func).__name__}")
    _run_traced(func, args, kwargs)
    return ScriptFunction(func)


def trace_module(mod, inputs, optimize=None, check_trace=True, check_inputs=None, check_tolerance=1e-5,
                 strict=True, _force_outplace=False, _module_class=None, _compilation_unit=None,
                 example_inputs_is_kwarg=False, _store_inputs=True):
    """torch.jit.trace_module, eagerly: runs each named method once on its example inputs, returns mod."""
    if not _is_module(mod):
        raise AttributeError("expected torch.nn.Module as the first argument")
    if not _builtin_isinstance(inputs, dict):
        raise AttributeError("expected a dictionary of (method_name, input) pairs")
    for method_name, example in inputs.items():
        method = getattr(mod, method_name)
        if example_inputs_is_kwarg:
            _run_traced(method, (), example)
        else:
            _run_traced(method, _as_inputs(example))
    return mod


def ignore(drop=False, **kwargs):
    """torch.jit.ignore: leaves the function to Python (kiln: always); usable bare or as ignore(drop=True)."""
    if callable(drop):
        return drop
    if drop:
        import warnings
        warnings.warn("ignore(True) has been deprecated. TorchScript will now drop the function call on "
                      "compilation. Use torch.jit.unused now. {}", category=FutureWarning, stacklevel=2)
    return lambda fn: fn


def unused(fn):
    """torch.jit.unused: returns fn (kiln never compiles it)."""
    return fn


def export(fn):
    """torch.jit.export: returns fn."""
    return fn


def interface(obj):
    """torch.jit.interface: returns obj."""
    return obj


def script_method(fn):
    """The legacy torch.jit.script_method decorator: returns fn."""
    return fn


def script_if_tracing(fn):
    """torch.jit.script_if_tracing: returns fn."""
    return fn


def _overload(fn):
    return fn


def _overload_method(fn):
    return fn


def is_scripting():
    """False: kiln never runs code as TorchScript."""
    return False


def is_tracing():
    """True only while trace()/trace_module() run their example inputs."""
    return _tracing_depth > 0


class _TracingState:
    """What torch._C._get_tracing_state() returns while a trace runs (truthy; None otherwise)."""


def _get_tracing_state():
    """torch._C._get_tracing_state: a state object while trace()/trace_module() run, else None (code such as
    `if torch._C._get_tracing_state(): ...` takes its tracing branch exactly then)."""
    return _TracingState() if _tracing_depth > 0 else None


def annotate(the_type, the_value):
    """torch.jit.annotate: the value (the type is for the TorchScript compiler)."""
    return the_value


def isinstance(obj, target_type):
    """torch.jit.isinstance: isinstance that understands List[int], Dict[str, Tensor], Optional[...], Tuple[...]."""
    origin = typing.get_origin(target_type)
    targs = typing.get_args(target_type)
    if origin is None:
        if target_type is typing.Any:
            return True
        return _builtin_isinstance(obj, target_type)
    if origin is typing.Union:
        return any(isinstance(obj, t) for t in targs)
    if origin in (list, collections.abc.Sequence):
        return _builtin_isinstance(obj, list) and all(isinstance(e, targs[0]) for e in obj) if targs else \
            _builtin_isinstance(obj, list)
    if origin is tuple:
        if not _builtin_isinstance(obj, tuple):
            return False
        if len(targs) == 2 and targs[1] is Ellipsis:
            return all(isinstance(e, targs[0]) for e in obj)
        return len(obj) == len(targs) and all(isinstance(e, t) for e, t in zip(obj, targs))
    if origin is dict:
        return _builtin_isinstance(obj, dict) and all(isinstance(k, targs[0]) and isinstance(v, targs[1])
                                                     for k, v in obj.items())
    return _builtin_isinstance(obj, origin)


class Future:
    """A completed future (torch.jit.Future / torch.futures.Future for eager fork): wait() returns the value."""

    def __init__(self, value=None, exception=None):
        self._value = value
        self._exception = exception

    def wait(self):
        if self._exception is not None:
            raise self._exception
        return self._value

    def value(self):
        return self.wait()

    def done(self):
        return True

    def then(self, callback):
        try:
            return Future(callback(self))
        except Exception as e:  # noqa: BLE001 - the callback's error belongs to the new future
            return Future(exception=e)

    def add_done_callback(self, callback):
        callback(self)

    def set_result(self, result):
        self._value, self._exception = result, None

    def set_exception(self, exception):
        self._exception = exception


def fork(func, *args, **kwargs):
    """torch.jit.fork, eagerly: calls func(*args, **kwargs) now and returns a completed Future."""
    return Future(func(*args, **kwargs))


def wait(future):
    """torch.jit.wait: the future's value."""
    return future.wait()


def freeze(mod, preserved_attrs=None, optimize_numerics=True):
    """torch.jit.freeze: returns the module (kiln has no graph to fold constants into); as torch, only
    modules in eval mode."""
    if getattr(mod, "training", False):
        raise RuntimeError("Freezing is currently only implemented for modules in eval mode. "
                           "Please call .eval() on your module before freezing.")
    return mod


def optimize_for_inference(mod, other_methods=None):
    """torch.jit.optimize_for_inference: returns the module unchanged."""
    return mod


def save(m, f, _extra_files=None):
    """torch.jit.save writes a TorchScript archive, which kiln cannot produce: NotImplementedError."""
    raise NotImplementedError(
        "kiln.jit.save: kiln's jit runs eagerly and cannot write TorchScript archives (code and graphs). Save "
        "the weights with kiln.save(model.state_dict(), path) (torch.load reads that file) and rebuild the model "
        "from its Python class with model.load_state_dict(kiln.load(path)).")


def load(f, map_location=None, _extra_files=None):
    """torch.jit.load reads a TorchScript archive, which kiln cannot run: NotImplementedError."""
    raise NotImplementedError(
        "kiln.jit.load: kiln cannot run TorchScript archives. Load a state_dict instead: in torch, "
        "torch.save(scripted.state_dict(), path); in kiln, build the model from its Python class and call "
        "model.load_state_dict(kiln.load(path)).")


_fusion_strategy = [("STATIC", 2), ("DYNAMIC", 10)]
_onednn = False


def set_fusion_strategy(strategy):
    """Returns the previous strategy (kiln fuses nothing)."""
    global _fusion_strategy
    old, _fusion_strategy = _fusion_strategy, strategy
    return old


def enable_onednn_fusion(enabled):
    global _onednn
    _onednn = bool(enabled)


def onednn_fusion_enabled():
    return _onednn


class optimized_execution:
    """torch.jit.optimized_execution(should_optimize): a context manager that changes nothing here."""

    def __init__(self, should_optimize):
        self.should_optimize = should_optimize

    def __enter__(self):
        return None

    def __exit__(self, *exc):
        return False


class CompilationUnit:
    """torch.jit.CompilationUnit compiles TorchScript source, which kiln cannot: NotImplementedError."""

    def __init__(self, lang=None, _frames_up=0):
        if lang is not None:
            _no_torchscript("CompilationUnit")

    def define(self, src, rcb=None, _frames_up=0):
        _no_torchscript("CompilationUnit.define")
