"""kiln.backends: torch.backends' switches and availability checks, answered for kiln's CPU build."""
from . import cuda, cudnn, mkl, mkldnn, mps, openmp  # noqa: F401

__all__ = ["cuda", "cudnn", "mkl", "mkldnn", "mps", "openmp"]
