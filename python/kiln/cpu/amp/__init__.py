"""kiln.cpu.amp: torch.cpu.amp.autocast, at torch's module path."""
from .autocast_mode import autocast

__all__ = ["autocast"]
