"""no_grad, enable_grad and set_grad_enabled: context managers that are also decorators."""
import functools

from .. import _C


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
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with inference_mode(not self.enabled):
                return fn(*args, **kwargs)
        return wrapper
