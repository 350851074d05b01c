"""The matrix functions parametrizations.orthogonal needs, as compositions of kiln's differentiable
ops (kiln has no linalg.matrix_exp, householder_product or geqrf ops yet). Their gradients are
those of the composition, so they also support double backward. Sizes in orthogonal layers are
small (a weight matrix), where Python-level loops over columns are cheap enough.

The QR factorizations used only to initialize a parametrization (under no_grad, never
differentiated) call NumPy's LAPACK, which gives the same reflectors as torch.geqrf."""
import math

import numpy as np

import kiln


def matrix_exp(A):
    """exp(A) for a (batch of) square matrices: scaling and squaring around a degree-18 Taylor
    polynomial. A is scaled by 2^-s so that its 1-norm is at most 1/2; the truncation error is then
    below 0.5^19 / 19! (~1e-23), under float64's rounding."""
    if A.dim() < 2:
        raise RuntimeError("linalg.matrix_exp: The input tensor A must have at least 2 dimensions.")
    if A.size(-1) != A.size(-2):
        raise RuntimeError(f"linalg.matrix_exp: A must be batches of square matrices, but they are {A.size(-2)} by "
                           f"{A.size(-1)} matrices")
    n = A.size(-1)
    with kiln.no_grad():
        norm = A.detach().abs().sum(-2).max().item() if A.numel() else 0.0
    s = max(0, math.ceil(math.log2(norm / 0.5))) if norm > 0.5 else 0
    X = A / (2.0 ** s)
    eye = kiln.eye(n, dtype=A.dtype).expand(A.shape)
    result, term = eye, eye
    for k in range(1, 19):
        term = kiln.matmul(term, X) / k
        result = result + term
    for _ in range(s):
        result = kiln.matmul(result, result)
    return result


def householder_product(A, tau):
    """torch.linalg.householder_product: the first k columns of H_1 ... H_k, H_i = I - tau_i v_i v_i^T,
    v_i = (0, ..., 0, 1, A[i+1:, i]) for A of shape (..., n, k)."""
    _check_householder(A, tau)
    n, k = A.size(-2), tau.size(-1)  # tau's length: the number of reflectors (k <= A's columns)
    batch = A.shape[:-2]
    Q = kiln.eye(n, dtype=A.dtype).expand(*batch, n, n)
    for i in range(k):
        head = kiln.cat([kiln.zeros(*batch, i, dtype=A.dtype), kiln.ones(*batch, 1, dtype=A.dtype)], dim=-1)
        v = kiln.cat([head, A[..., i + 1:, i]], dim=-1).unsqueeze(-1)  # (..., n, 1)
        Q = Q - (kiln.matmul(Q, v) * tau[..., i, None, None]) * v.transpose(-2, -1)
    return Q[..., :, :A.size(-1)]


def _check_householder(A, tau):
    """torch's checks of householder_product's arguments, in its order."""
    name = "torch.linalg.householder_product"
    if A.dim() < 2:
        raise RuntimeError(f"{name}: input must have at least 2 dimensions.")
    if A.size(-2) < A.size(-1):
        raise RuntimeError(f"{name}: input.shape[-2] must be greater than or equal to input.shape[-1]")
    if A.size(-1) < tau.size(-1) if tau.dim() else False:
        raise RuntimeError(f"{name}: input.shape[-1] must be greater than or equal to tau.shape[-1]")
    if A.dim() - tau.dim() != 1:
        raise RuntimeError(f"{name}: Expected tau to have one dimension less than input, but got tau.ndim equal to "
                           f"{tau.dim()} and input.ndim is equal to {A.dim()}")
    if tuple(A.shape[:-2]) != tuple(tau.shape[:-1]):
        raise RuntimeError(f"{name}: Expected batch dimensions of tau to be equal to input.shape[:-2], but got "
                           f"{tuple(tau.shape[:-1])}")
    if A.dtype != tau.dtype:
        raise RuntimeError(f"{name}: tau dtype {_cname(tau.dtype)} does not match input dtype {_cname(A.dtype)}")


def _cname(dtype):
    return {"float32": "Float", "float64": "Double", "float16": "Half", "bfloat16": "BFloat16", "int64": "Long",
            "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte", "bool": "Bool"}[str(dtype).split(".")[1]]


def _numpy(t):
    return np.array(t.detach().float().numpy() if t.dtype not in (kiln.float32, kiln.float64) else t.detach().numpy())


def geqrf(A):
    """torch.geqrf (no gradient): the reflectors below R's diagonal and R on and above it, and tau."""
    a = _numpy(A)
    batch = a.shape[:-2]
    flat = a.reshape(-1, *a.shape[-2:])
    hs, taus = [], []
    for m in flat:
        h, tau = np.linalg.qr(m, mode="raw")  # LAPACK's geqrf, h transposed
        hs.append(h.T)
        taus.append(tau)
    h = np.stack(hs).reshape(*batch, *a.shape[-2:])
    tau = np.stack(taus).reshape(*batch, -1)
    return kiln.tensor(h, dtype=A.dtype), kiln.tensor(tau, dtype=A.dtype)


def make_orthogonal(A):
    """The Q of A = QR (A tall) with R's diagonal made non-negative, as torch's _make_orthogonal."""
    X, tau = geqrf(A)
    Q = householder_product(X, tau)
    return Q * X.diagonal(dim1=-2, dim2=-1).sign().unsqueeze(-2)
