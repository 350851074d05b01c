"""kiln.autocast: torch's automatic mixed precision context manager / decorator.

As in torch 1.13 without CUDA, autocast('cuda') warns and disables itself and enabled=False is a
no-op, so scripts written for GPUs run unchanged. Enabled CPU autocast (bfloat16) would have to
recast the inputs of every op it covers; that needs an Autocast key in the dispatcher, which kiln
does not have yet, so entering it raises NotImplementedError.
"""
import functools
import warnings

from .. import _C

_DEVICE_TYPES = ("cuda", "cpu")


def is_autocast_enabled():
    """Whether CUDA autocast is on (never, in kiln)."""
    return False


def is_autocast_cpu_enabled():
    """Whether CPU autocast is on (never: kiln cannot enable it yet)."""
    return False


def get_autocast_gpu_dtype():
    return _C.float16


def get_autocast_cpu_dtype():
    return _C.bfloat16


def is_autocast_cache_enabled():
    return True


class autocast:
    """autocast(device_type, dtype=None, enabled=True, cache_enabled=None): a context manager or
    decorator under which ops would run in a lower precision."""

    def __init__(self, device_type, dtype=None, enabled=True, cache_enabled=None):
        if device_type not in _DEVICE_TYPES:
            raise RuntimeError("User specified autocast device_type must be 'cuda' or 'cpu'")
        self.device = device_type
        self.fast_dtype = dtype if dtype is not None else (
            get_autocast_gpu_dtype() if device_type == "cuda" else get_autocast_cpu_dtype())
        self._cache_enabled = is_autocast_cache_enabled() if cache_enabled is None else cache_enabled
        if enabled and device_type == "cuda":
            warnings.warn("User provided device_type of 'cuda', but CUDA is not available. Disabling")
            enabled = False
        if enabled and device_type == "cpu" and self.fast_dtype != _C.bfloat16:
            warnings.warn("In CPU autocast, but the target dtype is not supported. Disabling autocast.\n"
                          "CPU Autocast only supports dtype of kiln.bfloat16 currently.")
            enabled = False
        self._enabled = enabled

    def __enter__(self):
        if self._enabled:
            raise NotImplementedError(
                "kiln.autocast: enabled CPU autocast (ops recast to bfloat16) is not implemented yet; it needs "
                "an Autocast dispatch key, which comes with the dispatch-key-set work. "
                "Use enabled=False, or cast the model and inputs with .bfloat16() yourself.")

    def __exit__(self, exc_type, exc_val, exc_tb):
        return False

    def __call__(self, func):
        @functools.wraps(func)
        def decorate_autocast(*args, **kwargs):
            with self:
                return func(*args, **kwargs)
        return decorate_autocast
