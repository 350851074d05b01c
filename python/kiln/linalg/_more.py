"""More of torch.linalg, composed in Python from the LAPACK-backed ops (their gradients come from
those ops): matrix_power, multi_dot, solve_triangular, pinv, matrix_rank, cond, diagonal, vecdot."""
import math

import kiln

from .. import _C
from ._norms import matrix_norm


def _eps(dtype):
    return kiln.finfo(dtype).eps


def matrix_power(A, n):
    if A.dim() < 2 or A.size(-1) != A.size(-2):
        raise RuntimeError("linalg.matrix_power: A must be batches of square matrices, "
                           f"but they are {A.size(-2) if A.dim() >= 2 else ''} by {A.size(-1) if A.dim() else ''} "
                           "matrices")
    if n == 0:  # the identity, with A's graph (a zero gradient), as torch
        return A.clone().copy_(kiln.eye(A.size(-1), dtype=A.dtype).expand(A.shape))
    if n < 0:
        A, n = _C.linalg_inv(A), -n
    result, base = None, A
    while n:  # binary powering, as torch
        if n & 1:
            result = base if result is None else kiln.matmul(result, base)
        n >>= 1
        if n:
            base = kiln.matmul(base, base)
    return result


def multi_dot(tensors):
    if len(tensors) < 2:
        raise RuntimeError(f"multi_dot(): expected at least 2 tensors but got {len(tensors)}")
    first, last = tensors[0], tensors[-1]
    mats = list(tensors)
    if first.dim() == 1:
        mats[0] = first.unsqueeze(0)
    if last.dim() == 1:
        mats[-1] = last.unsqueeze(-1)
    for i, t in enumerate(mats):
        if t.dim() != 2:
            raise RuntimeError(f"multi_dot(): tensor {i} must be 2D but got {t.dim()}D")
    result = mats[0]
    for t in mats[1:]:
        result = kiln.mm(result, t)
    if first.dim() == 1:
        result = result.squeeze(0)
    if last.dim() == 1:
        result = result.squeeze(-1)
    return result


def solve_triangular(A, B, *, upper, left=True, unitriangular=False):
    """A's other triangle (and its diagonal with unitriangular) is not read, as torch."""
    if B.dim() < 2:
        raise RuntimeError("linalg.solve_triangular: The input tensor B must have at least 2 dimensions.")
    T = A.triu(1 if unitriangular else 0) if upper else A.tril(-1 if unitriangular else 0)
    if unitriangular:
        T = T + kiln.eye(A.size(-1), dtype=A.dtype)
    if B.dim() == A.dim() - 1:  # a matrix B broadcast over A's batch, never linalg.solve's vector case
        B = B.unsqueeze(0)
    try:
        return _C.linalg_solve(T, B, left=left)
    except _C._LinAlgError:
        # torch's trsm checks no pivot: a zero on the diagonal gives inf/nan, not an error
        if left:
            return _substitute(T, B, upper)
        return _substitute(T.transpose(-2, -1), B.transpose(-2, -1), not upper).transpose(-2, -1)


def _substitute(T, B, upper):
    """X with T @ X = B by forward (lower) or back (upper) substitution, one row at a time, as
    BLAS's trsm: no pivoting, so a zero pivot divides by zero. Only singular triangles come here."""
    n = T.size(-1)
    rows = [None] * n
    for i in (reversed(range(n)) if upper else range(n)):
        lo, hi = (i + 1, n) if upper else (0, i)
        b = B[..., i:i + 1, :]
        if hi > lo:
            b = b - kiln.matmul(T[..., i:i + 1, lo:hi], kiln.cat(rows[lo:hi], dim=-2))
        rows[i] = b / T[..., i:i + 1, i:i + 1]
    return kiln.cat(rows, dim=-2)


def _tolerance(S, A, atol, rtol):
    """torch's rule: max(atol, rtol * largest singular value); rtol defaults to eps * max(m, n)
    unless atol is given."""
    if rtol is None:
        rtol = _eps(A.dtype) * max(A.size(-2), A.size(-1)) if atol is None or (
            isinstance(atol, (int, float)) and atol <= 0) else 0.0
    smax = S.amax(-1, keepdim=True) if S.size(-1) else kiln.zeros(*S.shape[:-1], 1, dtype=S.dtype)
    tol = smax * rtol
    if atol is not None:
        tol = kiln.maximum(tol, atol if isinstance(atol, kiln.Tensor) else kiln.full_like(tol, atol))
    return tol


def _pinv_value(A, atol, rtol, hermitian):
    if hermitian:
        L, V = _C.linalg_eigh(A)
        tol = _tolerance(L.abs(), A, atol, rtol)
        Linv = kiln.where(L.abs() > tol, 1.0 / L, kiln.zeros_like(L))
        return kiln.matmul(V * Linv.unsqueeze(-2), V.transpose(-2, -1))
    U, S, Vh = _C.linalg_svd(A, False)
    tol = _tolerance(S, A, atol, rtol)
    Sinv = kiln.where(S > tol, 1.0 / S, kiln.zeros_like(S))
    return kiln.matmul(Vh.transpose(-2, -1) * Sinv.unsqueeze(-2), U.transpose(-2, -1))


def _pinv_backward(grad, P, A):
    """torch's pinv_backward: the derivative of the Moore-Penrose inverse at constant rank, written
    with ops (so it is differentiable again), smallest products first."""
    mT = lambda X: X.transpose(-2, -1)  # noqa: E731
    Ph, gh = mT(P), mT(grad)
    if A.size(-2) <= A.size(-1):
        K = kiln.matmul(gh, P)
        KPh = kiln.matmul(K, Ph)
        return (-mT(kiln.matmul(P, K)) + KPh - kiln.matmul(kiln.matmul(A, P), KPh)
                + kiln.matmul(kiln.matmul(Ph, P), gh - kiln.matmul(K, A)))
    K = kiln.matmul(P, gh)
    PhK = kiln.matmul(Ph, K)
    return (-mT(kiln.matmul(K, P)) + kiln.matmul(kiln.matmul(gh - kiln.matmul(A, K), P), Ph) + PhK
            - kiln.matmul(kiln.matmul(PhK, P), A))


class _Pinv(kiln.autograd.Function):
    """pinv with torch's gradient (which differs from the truncated SVD's where singular values are
    cut off)."""

    @staticmethod
    def forward(ctx, A, atol, rtol, hermitian):
        P = _pinv_value(A, atol, rtol, hermitian)
        ctx.save_for_backward(A, P)
        return P

    @staticmethod
    def backward(ctx, grad):
        A, P = ctx.saved_tensors
        return _pinv_backward(grad, P, A), None, None, None


def pinv(A, *, atol=None, rtol=None, hermitian=False):
    if isinstance(atol, kiln.Tensor) or isinstance(rtol, kiln.Tensor) or not A.requires_grad:
        return _pinv_value(A, atol, rtol, hermitian)
    return _Pinv.apply(A, atol, rtol, hermitian)


def matrix_rank(A, tol=None, hermitian=False, *, atol=None, rtol=None):
    if tol is not None:  # torch's (deprecated) matrix_rank(A, tol, hermitian) overload: atol=tol, rtol=0
        if atol is not None or rtol is not None:
            raise TypeError("linalg_matrix_rank(): tol cannot be combined with atol or rtol")
        atol, rtol = tol, 0.0
    if A.dim() < 2:
        raise RuntimeError("torch.linalg.matrix_rank: The input tensor input must have at least 2 dimensions.")
    S = _C.linalg_eigvalsh(A).abs() if hermitian else _C.linalg_svdvals(A)
    return (S > _tolerance(S, A, atol, rtol)).sum(-1)


def cond(A, p=None):
    if A.dim() < 2:
        raise RuntimeError("linalg.cond: The input tensor must have at least 2 dimensions.")
    if A.numel() == 0:  # torch (as NumPy leaves it undefined): 0 for 0x0 matrices
        return kiln.zeros(A.shape[:-2], dtype=A.dtype)
    if p is None or p in (2, -2):
        S = _C.linalg_svdvals(A)
        largest, smallest = S.amax(-1), S.amin(-1)
        return smallest / largest if p == -2 else largest / smallest
    if p == "nuc":  # torch: sum(s) * sum(1 / s) (a singular matrix: inf, or 0 * inf = nan for 0)
        S = _C.linalg_svdvals(A)
        return S.sum(-1) * S.reciprocal().sum(-1)
    # torch's _linalg_cond_helper: a singular matrix's inverse is taken as infinite (cond = inf)
    inverse, info = kiln.linalg.inv_ex(A)
    inverse = inverse.masked_fill((info > 0).unsqueeze(-1).unsqueeze(-1), math.inf)
    return (matrix_norm(A, p) * matrix_norm(inverse, p)).masked_fill(info > 0, math.inf)  # (0 * inf too)


def diagonal(A, *, offset=0, dim1=-2, dim2=-1):
    return kiln.diagonal(A, offset, dim1, dim2)


def vecdot(x, y, *, dim=-1):
    return (x * y).sum(dim)
