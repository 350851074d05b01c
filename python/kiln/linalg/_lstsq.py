"""torch.linalg.lstsq: the values from LAPACK (kiln._C._linalg_lstsq: gelsy by default, gels,
gelsd, gelss), the gradient of the solution torch's: that of pinv(A) @ B (torch's
linalg_lstsq_backward), so it is differentiable again. residuals, rank and singular_values carry
no gradient."""
import collections

import kiln

from .. import _C
from ._more import pinv

linalg_lstsq = collections.namedtuple("linalg_lstsq", ["solution", "residuals", "rank", "singular_values"])
linalg_lstsq.__module__ = "kiln.return_types"


def lstsq(A, B, rcond=None, *, driver=None):
    if not isinstance(A, kiln.Tensor) or not isinstance(B, kiln.Tensor):
        raise TypeError(f"linalg_lstsq(): argument 'self' and 'b' must be Tensors, not {type(A).__name__} and "
                        f"{type(B).__name__}")
    with kiln.no_grad():
        solution, residuals, rank, singular_values = _C._linalg_lstsq(A, B, rcond, driver)
    if kiln.is_grad_enabled() and (A.requires_grad or B.requires_grad):
        vector = A.dim() - B.dim() == 1
        X = kiln.matmul(pinv(A), B.unsqueeze(-1) if vector else B)
        X = X.squeeze(-1) if vector else X
        solution = solution + (X - X.detach())  # the LAPACK values, pinv(A) B's gradient
    return linalg_lstsq(solution, residuals, rank, singular_values)
