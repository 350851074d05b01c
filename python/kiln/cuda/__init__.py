"""kiln.cuda: torch.cuda as a CPU-only torch 1.13 build has it, since kiln has no CUDA backend yet.

Scripts call these on every machine (seeding, `if torch.cuda.is_available()`, memory logging), so
each one succeeds or raises exactly where torch 1.13 without CUDA does: queries about the absent
device return 0 / False / empty, seeding is a silent no-op, and anything that needs a device
raises AssertionError "kiln not compiled with CUDA enabled" (torch's message, kiln's name).
"""
import contextlib
import warnings
from collections import OrderedDict

from .._device import device as _device
from . import amp  # noqa: F401

_NO_CUDA = "kiln not compiled with CUDA enabled"


class OutOfMemoryError(RuntimeError):
    """Raised when the CUDA allocator runs out of memory (never, without CUDA)."""


def _lazy_init():
    """Where torch initializes CUDA, which fails without it."""
    raise AssertionError(_NO_CUDA)


def _no_allocator(name):
    # torch 1.13 CPU raises AttributeError here (its _C lacks the allocator binding): same type.
    raise AttributeError(f"{_NO_CUDA}: cuda.{name} needs the CUDA caching allocator")


def _device_index(dev, optional=False):
    """torch.cuda._utils._get_device_index: a CUDA device (int, 'cuda:i', kiln.device) -> its index."""
    if isinstance(dev, str):
        dev = _device(dev)
    if isinstance(dev, _device):
        if dev.type != "cuda":
            raise ValueError(f"Expected a cuda device, but got: {dev}")
        dev = dev.index
    if isinstance(dev, int) and not isinstance(dev, bool):
        return dev
    if dev is None and optional:
        return None
    raise ValueError(f"Expected a kiln.device with a specified index or an integer, but got:{dev}")


def is_available():
    return False


def device_count():
    return 0


def is_initialized():
    return False


def init():
    _lazy_init()


def is_bf16_supported():
    _lazy_init()


# Random numbers: torch queues CUDA seeding until CUDA starts, so these succeed; reading a CUDA
# generator needs the device.
def manual_seed(seed):
    int(seed)  # the same TypeError/ValueError as torch for a bad seed


def manual_seed_all(seed):
    int(seed)


def seed():
    pass


def seed_all():
    pass


def initial_seed():
    _lazy_init()


def get_rng_state(device="cuda"):
    _lazy_init()


def get_rng_state_all():
    return []


def set_rng_state(new_state, device="cuda"):
    pass


def set_rng_state_all(new_states):
    pass


default_generators = ()


# Devices and streams.
def current_device():
    _lazy_init()


def set_device(device):
    if _device_index(device) >= 0:
        _no_allocator("set_device")


def get_device_name(device=None):
    _lazy_init()


def get_device_capability(device=None):
    _lazy_init()


def get_device_properties(device):
    _lazy_init()


def get_arch_list():
    return []


def get_gencode_flags():
    return ""


def synchronize(device=None):
    _lazy_init()


def ipc_collect():
    _lazy_init()


def current_stream(device=None):
    _lazy_init()


def default_stream(device=None):
    _lazy_init()


def get_sync_debug_mode():
    _lazy_init()


def set_sync_debug_mode(debug_mode):
    _lazy_init()


class device:
    """Context manager that makes a CUDA device current; index -1 (or a CPU tensor's device) is a no-op."""

    def __init__(self, device):
        self.idx = _device_index(device, optional=True)
        self.prev_idx = -1

    def __enter__(self):
        if self.idx != -1:
            _lazy_init()

    def __exit__(self, *exc):
        return False


class device_of(device):
    """device(obj.get_device()) for a CUDA tensor; a no-op for a CPU one."""

    def __init__(self, obj):
        super().__init__(-1 if not getattr(obj, "is_cuda", False) else obj.get_device())


@contextlib.contextmanager
def stream(stream):
    """Selects a stream; stream=None is a no-op."""
    if stream is not None:
        _lazy_init()
    yield


class _Unavailable:
    """Types that need the device: referencing them works, creating one raises TypeError."""

    def __new__(cls, *args, **kwargs):
        raise TypeError(f"type kiln.cuda.{cls.__name__} not available. {_NO_CUDA}.")


class Stream(_Unavailable):
    pass


class Event(_Unavailable):
    pass


FloatTensor = type("FloatTensor", (_Unavailable,), {})
DoubleTensor = type("DoubleTensor", (_Unavailable,), {})
HalfTensor = type("HalfTensor", (_Unavailable,), {})
BFloat16Tensor = type("BFloat16Tensor", (_Unavailable,), {})
LongTensor = type("LongTensor", (_Unavailable,), {})
IntTensor = type("IntTensor", (_Unavailable,), {})
BoolTensor = type("BoolTensor", (_Unavailable,), {})


# Memory: nothing is ever allocated, so the counters are 0 and the stats empty.
def empty_cache():
    pass


def memory_allocated(device=None):
    return 0


def max_memory_allocated(device=None):
    return 0


def memory_reserved(device=None):
    return 0


def max_memory_reserved(device=None):
    return 0


def memory_cached(device=None):
    warnings.warn("kiln.cuda.memory_cached has been renamed to kiln.cuda.memory_reserved", FutureWarning)
    return 0


def max_memory_cached(device=None):
    warnings.warn("kiln.cuda.max_memory_cached has been renamed to kiln.cuda.max_memory_reserved", FutureWarning)
    return 0


def memory_stats(device=None):
    return OrderedDict()


def mem_get_info(device=None):
    _lazy_init()


def set_per_process_memory_fraction(fraction, device=None):
    _lazy_init()


def reset_peak_memory_stats(device=None):
    _no_allocator("reset_peak_memory_stats")


def reset_max_memory_allocated(device=None):
    _no_allocator("reset_max_memory_allocated")


def reset_accumulated_memory_stats(device=None):
    _no_allocator("reset_accumulated_memory_stats")


def memory_snapshot():
    _no_allocator("memory_snapshot")
