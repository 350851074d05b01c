"""torch.functional: the ops torch writes in Python (torch/functional.py), re-exported from kiln, and
the module's own `F` (torch/functional.py imports torch.nn.functional as F, so programs write
`from torch.functional import F`)."""
from . import nn as _nn  # noqa: F401  (kiln.nn is set up before this module is imported)
from .nn import functional as F  # noqa: F401
from . import (atleast_1d, atleast_2d, atleast_3d, block_diag, broadcast_shapes, broadcast_tensors,  # noqa: F401
               cartesian_prod, cdist, einsum, lu, meshgrid, norm, split, tensordot, unique, unique_consecutive)

# torch's __all__ less what kiln does not have (align_tensors, chain_matmul, istft, stft, pca_lowrank,
# svd_lowrank)
__all__ = ['atleast_1d', 'atleast_2d', 'atleast_3d', 'broadcast_shapes', 'broadcast_tensors', 'cartesian_prod',
           'block_diag', 'cdist', 'einsum', 'lu', 'norm', 'meshgrid', 'split', 'tensordot', 'unique',
           'unique_consecutive']
