"""torch.svd_lowrank and torch.pca_lowrank: randomized low-rank SVD (Halko, Martinsson and Tropp 2009,
algorithm 4.4: a Gaussian test matrix, niter rounds of subspace iteration orthonormalised by QR, then the SVD of
the small projected matrix). The Gaussian draw is torch.randn(n, q) as torch's, so a seeded call gives torch's
factors. Dense inputs (batched too); M is a mean subtracted implicitly (A - M)."""
import kiln


def _floating_dtype(A):
    return A.dtype if A.dtype in (kiln.float16, kiln.bfloat16, kiln.float32, kiln.float64) else kiln.float32


def _mT(x):
    return None if x is None else x.transpose(-2, -1)


def _approximate_basis(A, q, niter, M):
    """Q with q orthonormal columns such that Q Q^T (A - M) approximates A - M."""
    n = A.shape[-1]
    R = kiln.randn(n, q, dtype=_floating_dtype(A))
    A_t, M_t = _mT(A), _mT(M)
    sub = (lambda X, Y, Z: X) if M is None else (lambda X, MM, Z: X - kiln.matmul(MM, Z))
    Q = kiln.linalg.qr(sub(kiln.matmul(A, R), M, R)).Q
    for _ in range(niter):
        Q = kiln.linalg.qr(sub(kiln.matmul(A_t, Q), M_t, Q)).Q
        Q = kiln.linalg.qr(sub(kiln.matmul(A, Q), M, Q)).Q
    return Q


def _svd_lowrank(A, q=6, niter=2, M=None):
    q = 6 if q is None else q
    niter = 2 if niter is None else niter
    m, n = A.shape[-2:]
    A_t, M_t = _mT(A), _mT(M)
    if m < n or n > q:
        # the basis of A^T's range: B^T = (A - M) Q has q columns
        Q = _approximate_basis(A_t, q, niter, M_t)
        B_t = kiln.matmul(A, Q) if M is None else kiln.matmul(A, Q) - kiln.matmul(M, Q)
        U, S, Vh = kiln.linalg.svd(B_t, full_matrices=False)
        V = Q.matmul(_mT(Vh))
    else:
        Q = _approximate_basis(A, q, niter, M)
        B = kiln.matmul(A_t, Q) if M is None else kiln.matmul(A_t, Q) - kiln.matmul(M_t, Q)
        U, S, Vh = kiln.linalg.svd(_mT(B), full_matrices=False)
        V = _mT(Vh)
        U = Q.matmul(U)
    return U, S, V


def svd_lowrank(A, q=6, niter=2, M=None):
    """(U, S, V) with A - M ~ U diag(S) V^T, U: (*, m, q), S: (*, q), V: (*, n, q)."""
    if getattr(A, "is_sparse", False):
        raise NotImplementedError("svd_lowrank: kiln takes dense inputs (A.to_dense())")
    return _svd_lowrank(A, q, niter, M)


def pca_lowrank(A, q=None, center=True, niter=2):
    """The principal directions of A's rows: (U, S, V) of the low-rank SVD of A (centered by its column means
    when center); S ** 2 / (m - 1) are the covariance's eigenvalues, V's columns the directions."""
    if getattr(A, "is_sparse", False):
        raise NotImplementedError("pca_lowrank: kiln takes dense inputs (A.to_dense())")
    m, n = A.shape[-2:]
    if q is None:
        q = min(6, m, n)
    elif not (q >= 0 and q <= min(m, n)):
        raise ValueError(f"q(={q}) must be non-negative integer and not greater than min(m, n)={min(m, n)}")
    if not niter >= 0:
        raise ValueError(f"niter(={niter}) must be non-negative integer")
    if not center:
        return _svd_lowrank(A, q, niter=niter, M=None)
    return _svd_lowrank(A - A.mean(dim=(-2,), keepdim=True), q, niter=niter, M=None)
