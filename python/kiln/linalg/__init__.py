"""torch.linalg: LAPACK-backed ops with derivatives (solve, inv, det, slogdet, cholesky, qr, eigh,
eigvalsh, svd, svdvals), the norms, cross, matrix_exp / householder_product (composed in Python,
kiln/nn/utils/_orthogonal_maps.py) and the compositions of _more.py."""
from .._C import _LinAlgError
from .._C import linalg_cholesky as cholesky  # noqa: F401
from .._C import linalg_cross as cross  # noqa: F401
from .._C import linalg_det as det  # noqa: F401
from .._C import linalg_eigh as eigh  # noqa: F401
from .._C import linalg_eigvalsh as eigvalsh  # noqa: F401
from .._C import linalg_inv as inv  # noqa: F401
from .._C import linalg_qr as qr  # noqa: F401
from .._C import linalg_slogdet as slogdet  # noqa: F401
from .._C import linalg_solve as solve  # noqa: F401
from .._C import linalg_svd as svd  # noqa: F401
from .._C import linalg_svdvals as svdvals  # noqa: F401
from ..nn.utils._orthogonal_maps import householder_product, matrix_exp  # noqa: F401
from ._more import cond, diagonal, matrix_power, matrix_rank, multi_dot, pinv, solve_triangular, vecdot  # noqa: F401
from ._norms import matrix_norm, norm, vector_norm  # noqa: F401

# torch.linalg.LinAlgError (torch._C._LinAlgError): a RuntimeError subclass raised for singular
# or not positive-definite inputs and non-converging factorizations.
LinAlgError = _LinAlgError

__all__ = ["LinAlgError", "cholesky", "cond", "cross", "det", "diagonal", "eigh", "eigvalsh", "householder_product",
           "inv", "matrix_exp", "matrix_norm", "matrix_power", "matrix_rank", "multi_dot", "norm", "pinv", "qr",
           "slogdet", "solve", "solve_triangular", "svd", "svdvals", "vecdot", "vector_norm"]
