"""kiln.amp: automatic mixed precision (torch.amp): autocast and GradScaler, both inert in kiln
for now (see autocast_mode and grad_scaler for why)."""
from .autocast_mode import autocast
from .grad_scaler import GradScaler

__all__ = ["autocast", "GradScaler"]
