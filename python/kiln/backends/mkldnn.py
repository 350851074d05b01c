"""kiln.backends.mkldnn: kiln is built with oneDNN (MKL-DNN), so is_available() is True, as in torch's
builds. `enabled` (default True) switches kiln's oneDNN kernels where torch calls oneDNN: float32
convolutions and gelu. Off, they run kiln's own loops, as torch's native kernels do with it off."""
import contextlib
import sys
import types

from .. import _C


def is_available():
    return True


class _MkldnnModule(types.ModuleType):
    @property
    def enabled(self):
        return _C._get_mkldnn_enabled()

    @enabled.setter
    def enabled(self, value):
        _C._set_mkldnn_enabled(value)  # a non-bool: torch's RuntimeError


def set_flags(_enabled):
    """Sets `enabled` and returns the previous value in a tuple, as torch's set_flags."""
    previous = (_C._get_mkldnn_enabled(),)
    _C._set_mkldnn_enabled(_enabled)
    return previous


@contextlib.contextmanager
def flags(enabled=False):
    """`enabled` for a with-block, restored after."""
    previous = set_flags(enabled)
    try:
        yield
    finally:
        set_flags(previous[0])


sys.modules[__name__].__class__ = _MkldnnModule
