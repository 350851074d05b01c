"""kiln.cuda.amp: torch.cuda.amp's autocast and GradScaler, at torch's module paths; both disable
themselves (with a warning) when enabled, since kiln has no CUDA."""
from .autocast_mode import autocast, custom_bwd, custom_fwd
from .grad_scaler import GradScaler

__all__ = ["autocast", "GradScaler", "custom_fwd", "custom_bwd"]
