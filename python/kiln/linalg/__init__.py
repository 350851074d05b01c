"""torch.linalg: the ops kiln has so far (cross)."""
from .._C import linalg_cross as cross  # noqa: F401

__all__ = ["cross"]
