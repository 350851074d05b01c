"""torch.linalg: solve, inv, det, slogdet (LAPACK kernels with derivatives), cross, and the
functions composed in Python (matrix_exp, householder_product)."""
from .._C import _LinAlgError
from .._C import linalg_cross as cross  # noqa: F401
from .._C import linalg_det as det  # noqa: F401
from .._C import linalg_inv as inv  # noqa: F401
from .._C import linalg_slogdet as slogdet  # noqa: F401
from .._C import linalg_solve as solve  # noqa: F401

# torch.linalg.LinAlgError (torch._C._LinAlgError): a RuntimeError subclass raised for singular
# or not positive-definite inputs and non-converging factorizations.
LinAlgError = _LinAlgError

__all__ = ["LinAlgError", "cross", "det", "inv", "slogdet", "solve"]
