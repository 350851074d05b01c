"""kiln.cuda.amp: torch.cuda.amp's autocast and GradScaler, with torch 1.13's signatures (no device
argument). Without CUDA both disable themselves with a warning when enabled, as in torch."""
import functools

from ... import _C
from ...amp import autocast_mode as _autocast_mode, grad_scaler as _grad_scaler


class autocast(_autocast_mode.autocast):
    """kiln.autocast('cuda', ...)."""

    def __init__(self, enabled=True, dtype=_C.float16, cache_enabled=True):
        super().__init__("cuda", dtype=dtype, enabled=enabled, cache_enabled=cache_enabled)


class GradScaler(_grad_scaler.GradScaler):
    """kiln.amp.GradScaler('cuda', ...): disabled, a pass-through."""

    def __init__(self, init_scale=2.0 ** 16, growth_factor=2.0, backoff_factor=0.5, growth_interval=2000,
                 enabled=True):
        super().__init__("cuda", init_scale, growth_factor, backoff_factor, growth_interval, enabled)


def custom_fwd(fwd=None, *, cast_inputs=None):
    """Decorator for a custom autograd Function's forward; autocast never runs, so it calls fwd as is."""
    if fwd is None:
        return functools.partial(custom_fwd, cast_inputs=cast_inputs)
    return fwd


def custom_bwd(bwd):
    """Decorator for a custom autograd Function's backward; returns bwd as is."""
    return bwd


__all__ = ["autocast", "GradScaler", "custom_fwd", "custom_bwd"]
