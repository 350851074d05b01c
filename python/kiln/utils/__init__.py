"""kiln.utils: data loading (kiln.utils.data), as torch.utils."""
from . import checkpoint, data, hooks

__all__ = ["checkpoint", "data", "hooks"]
