"""kiln.compiler: torch.compiler's functions for code that asks about or steers torch.compile. kiln's
compile runs models as they are (eagerly), so nothing is ever being compiled: is_compiling() is
False, disable() and the graph-marking decorators return what they are given."""
from .._functional_extra import compile  # noqa: A004,F401

__all__ = ["compile", "reset", "allow_in_graph", "substitute_in_graph", "assume_constant_result", "disable",
           "set_stance", "cudagraph_mark_step_begin", "is_compiling", "is_dynamo_compiling", "is_exporting"]


def reset():
    """Clears compiled state: kiln keeps none."""


def allow_in_graph(fn):
    return fn


def substitute_in_graph(original_fn, *, can_constant_fold_through=False, skip_signature_check=False):
    return lambda fn: fn


def assume_constant_result(fn):
    return fn


def disable(fn=None, recursive=True, *, reason=None):
    """Marks fn as never compiled (kiln compiles nothing); usable as @disable or @disable()."""
    if fn is None:
        return lambda f: f
    return fn


def set_stance(stance="default", *, skip_guard_eval_unsafe=False, force_backend=None):
    import contextlib
    return contextlib.nullcontext()


def cudagraph_mark_step_begin():
    """No CUDA graphs in kiln."""


def is_compiling():
    return False


def is_dynamo_compiling():
    return False


def is_exporting():
    return False
