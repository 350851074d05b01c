"""kiln.cuda.amp.autocast: kiln.autocast('cuda', ...) with torch 1.13's signature; without CUDA it
warns and disables itself when enabled, as in torch."""
import functools

from ... import _C
from ...amp import autocast_mode as _autocast_mode


class autocast(_autocast_mode.autocast):
    def __init__(self, enabled=True, dtype=_C.float16, cache_enabled=True):
        super().__init__("cuda", dtype=dtype, enabled=enabled, cache_enabled=cache_enabled)


def custom_fwd(fwd=None, *, cast_inputs=None):
    """Decorator for a custom autograd Function's forward; autocast never runs, so it calls fwd as is."""
    if fwd is None:
        return functools.partial(custom_fwd, cast_inputs=cast_inputs)
    return fwd


def custom_bwd(bwd):
    """Decorator for a custom autograd Function's backward; returns bwd as is."""
    return bwd
