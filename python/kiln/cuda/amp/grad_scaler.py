"""kiln.cuda.amp.GradScaler: kiln.amp.GradScaler('cuda', ...) with torch 1.13's signature (no device
argument): enabled, it warns that CUDA is not available and disables itself, a pass-through."""
from ...amp import grad_scaler as _grad_scaler


class GradScaler(_grad_scaler.GradScaler):
    def __init__(self, init_scale=2.0 ** 16, growth_factor=2.0, backoff_factor=0.5, growth_interval=2000,
                 enabled=True):
        super().__init__("cuda", init_scale, growth_factor, backoff_factor, growth_interval, enabled)
