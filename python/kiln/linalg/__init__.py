"""torch.linalg: LAPACK-backed ops with derivatives (solve, inv, det, slogdet, cholesky, qr, eigh,
eigvalsh, svd, svdvals, the LU family, lstsq and the *_ex variants), with out= (_out.py), the
norms, cross, matrix_exp / householder_product (composed in Python,
kiln/nn/utils/_orthogonal_maps.py) and the compositions of _more.py."""
from .. import _C
from .._C import _LinAlgError
from .._C import linalg_cross as cross  # noqa: F401
from ..nn.utils._orthogonal_maps import householder_product, matrix_exp  # noqa: F401
from ._lstsq import lstsq as _lstsq
from ._more import cond, diagonal, matrix_power, matrix_rank, multi_dot, pinv, solve_triangular, vecdot  # noqa: F401
from ._norms import matrix_norm, norm, vector_norm  # noqa: F401
from .._composed_ops_more import linalg_vander as vander  # noqa: E402,F401
from ._out import with_out
from ._tensor_ops import matmul, tensorinv, tensorsolve  # noqa: F401

# torch.linalg.LinAlgError (torch._C._LinAlgError): a RuntimeError subclass raised for singular
# or not positive-definite inputs and non-converging factorizations.
LinAlgError = _LinAlgError

# The name is torch's in out='s messages (inv and solve run their *_ex forms in torch).
solve = with_out(_C.linalg_solve, "linalg_solve_ex")
solve_ex = with_out(_C.linalg_solve_ex, "linalg_solve_ex", 2)
inv = with_out(_C.linalg_inv, "linalg_inv_ex")
inv_ex = with_out(_C.linalg_inv_ex, "linalg_inv_ex", 2)
det = with_out(_C.linalg_det, "linalg_det")
slogdet = with_out(_C.linalg_slogdet, "linalg_slogdet", 2)
cholesky = with_out(_C.linalg_cholesky, "linalg_cholesky_ex")
cholesky_ex = with_out(_C.linalg_cholesky_ex, "linalg_cholesky_ex", 2)
eigh = with_out(_C.linalg_eigh, "linalg_eigh", 2)
eigvalsh = with_out(_C.linalg_eigvalsh, "linalg_eigvalsh")
svd = with_out(_C.linalg_svd, "linalg_svd", 3)
svdvals = with_out(_C.linalg_svdvals, "linalg_svdvals")
qr = with_out(_C.linalg_qr, "linalg_qr", 2)
lu_factor = with_out(_C.linalg_lu_factor, "linalg_lu_factor", 2)
lu_factor_ex = with_out(_C.linalg_lu_factor_ex, "linalg_lu_factor_ex", 3)
lu = with_out(_C.linalg_lu, "linalg_lu", 3)
lu_solve = with_out(_C.linalg_lu_solve, "linalg_lu_solve")
lstsq = with_out(_lstsq, "linalg_lstsq", 4, castable=[("torch.linalg.lstsq", "solution"), None,
                                                       ("torch.linalg.lstsq", "rank"), None])

__all__ = ["LinAlgError", "cholesky", "cholesky_ex", "cond", "cross", "det", "diagonal", "eigh", "eigvalsh",
           "householder_product", "inv", "inv_ex", "lstsq", "lu", "lu_factor", "lu_factor_ex", "lu_solve",
           "matmul", "matrix_exp", "matrix_norm", "matrix_power", "matrix_rank", "multi_dot", "norm", "pinv", "qr", "slogdet",
           "solve", "solve_ex", "solve_triangular", "svd", "svdvals", "tensorinv", "tensorsolve", "vander", "vecdot", "vector_norm"]


# Python-level functions raise torch's TypeError for an argument of the wrong type (_arg_errors.py).
from .._arg_errors import type_namespace as _type_namespace  # noqa: E402
_type_namespace(globals(), list(globals()))
