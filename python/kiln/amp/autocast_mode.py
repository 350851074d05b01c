"""kiln.autocast: torch's automatic mixed precision context manager / decorator.

CPU autocast (bfloat16) is real: while it is on, this thread's calls include the Autocast dispatch
key, and the ops the schema gives an `autocast:` policy recast their inputs as torch's CPU autocast
does (lower precision: mm, bmm, addmm, matmul, conv2d, and so linear; float32: prod and the losses;
promote: cat, stack); every other op runs in its inputs' dtype. The state is thread-local and
nests (each `with` restores what it found). As in torch 1.13 without CUDA, autocast('cuda') warns
and disables itself, and CPU autocast supports only bfloat16.
"""
import functools
import warnings

from .. import _C

_DEVICE_TYPES = ("cuda", "cpu")


def is_autocast_enabled():
    """Whether CUDA autocast is on (never: kiln has no CUDA device)."""
    return False


def is_autocast_cpu_enabled():
    """Whether CPU autocast is on in this thread."""
    return _C._is_autocast_cpu_enabled()


def set_autocast_cpu_enabled(enabled):
    _C._set_autocast_cpu_enabled(bool(enabled))


def get_autocast_gpu_dtype():
    return _C.float16


def get_autocast_cpu_dtype():
    return _C._get_autocast_cpu_dtype()


def set_autocast_cpu_dtype(dtype):
    _C._set_autocast_cpu_dtype(dtype)


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
        if self.device != "cpu":
            return self
        self._prev = (is_autocast_cpu_enabled(), get_autocast_cpu_dtype())
        set_autocast_cpu_enabled(self._enabled)
        set_autocast_cpu_dtype(self.fast_dtype if self._enabled else self._prev[1])
        return self

    def __exit__(self, exc_type, exc_val, exc_tb):
        if self.device == "cpu":
            set_autocast_cpu_enabled(self._prev[0])
            set_autocast_cpu_dtype(self._prev[1])
        return False

    def __call__(self, func):
        @functools.wraps(func)
        def decorate_autocast(*args, **kwargs):
            with self:
                return func(*args, **kwargs)
        return decorate_autocast
