"""no_grad, enable_grad and set_grad_enabled: context managers that are also decorators."""
import functools
import inspect
import sys

from .. import _C


def _wrap_generator(make_mode, fn):
    """A generator function decorated by a grad mode runs each of its steps in that mode (torch's
    _DecoratorContextManager); the caller's mode holds between the steps."""
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        gen = fn(*args, **kwargs)
        try:
            with make_mode():
                response = gen.send(None)
            while True:
                try:
                    request = yield response
                except GeneratorExit:
                    with make_mode():
                        gen.close()
                    raise
                except BaseException:
                    with make_mode():
                        response = gen.throw(*sys.exc_info())
                else:
                    with make_mode():
                        response = gen.send(request)
        except StopIteration as e:
            return e.value
    return wrapper


class _GradMode:
    enabled = None  # set by subclasses

    def __enter__(self):
        self.prev = _C.is_grad_enabled()
        _C._set_grad_enabled(self.enabled)
        return self

    def __exit__(self, *exc):
        _C._set_grad_enabled(self.prev)
        return False

    def __call__(self, fn):
        if inspect.isgeneratorfunction(fn):
            return _wrap_generator(self.__class__, fn)

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with self.__class__():
                return fn(*args, **kwargs)
        return wrapper


class no_grad(_GradMode):
    """Disables gradient recording inside the block (or the decorated function)."""
    enabled = False


class enable_grad(_GradMode):
    """Enables gradient recording inside the block (or the decorated function)."""
    enabled = True


class set_grad_enabled(_GradMode):
    """set_grad_enabled(mode): sets grad mode now; as a context manager, restores it on exit."""

    def __init__(self, mode):
        if not isinstance(mode, bool):  # torch's _C._set_grad_enabled takes a bool only
            raise TypeError(f"enabled must be a bool (got {type(mode).__name__})")
        self.prev = _C.is_grad_enabled()
        self.enabled = bool(mode)
        _C._set_grad_enabled(self.enabled)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        _C._set_grad_enabled(self.prev)
        return False

    def __call__(self, fn):
        _C._set_grad_enabled(self.prev)
        mode = self.enabled
        if inspect.isgeneratorfunction(fn):
            return _wrap_generator(lambda: set_grad_enabled(mode), fn)

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with set_grad_enabled(mode):
                return fn(*args, **kwargs)
        return wrapper


class inference_mode(_GradMode):
    """inference_mode(mode=True): in kiln the same as no_grad (no separate inference tensors)."""

    def __init__(self, mode=True):
        self.enabled = not mode

    def __enter__(self):
        from .. import _api_breadth
        _api_breadth._push_inference(not self.enabled)
        return super().__enter__()

    def __exit__(self, *exc):
        from .. import _api_breadth
        _api_breadth._pop_inference()
        return super().__exit__(*exc)

    def __call__(self, fn):
        if inspect.isgeneratorfunction(fn):
            return _wrap_generator(lambda: inference_mode(not self.enabled), fn)

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with inference_mode(not self.enabled):
                return fn(*args, **kwargs)
        return wrapper
