"""kiln.backends.cudnn: torch.backends.cudnn without cuDNN: is_available() False, version() None,
and the flags scripts set (benchmark, deterministic, enabled, allow_tf32) settable, defaults as torch."""
import contextlib
import sys

from ._flag_module import install_flags

benchmark_limit = None  # torch leaves it None when cuDNN is absent


def is_available():
    return False


def version():
    return None


def is_acceptable(tensor):
    """Whether cuDNN could run on tensor: never."""
    return False


@contextlib.contextmanager
def flags(enabled=False, benchmark=False, benchmark_limit=10, deterministic=False, allow_tf32=True):
    """Sets the flags for a with-block and restores them after."""
    module = sys.modules[__name__]
    saved = dict(_flags)
    module.enabled, module.benchmark, module.deterministic, module.allow_tf32 = \
        enabled, benchmark, deterministic, allow_tf32
    try:
        yield
    finally:
        _flags.update(saved)


_flags = install_flags(__name__, {"enabled": True, "benchmark": False, "deterministic": False, "allow_tf32": True})
