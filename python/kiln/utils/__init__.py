"""kiln.utils: data loading (kiln.utils.data), as torch.utils."""
from . import data

__all__ = ["data"]
