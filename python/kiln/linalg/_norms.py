"""torch.linalg's vector_norm, matrix_norm and norm, composed from kiln.norm (its derivative
included), reductions and svdvals (the spectral and nuclear norms)."""
import math

from .. import _C


def vector_norm(x, ord=2, dim=None, keepdim=False, *, dtype=None):
    if isinstance(ord, str):  # torch's parser: ord is a Number
        raise TypeError(f"linalg_vector_norm(): argument 'ord' must be Number, not str")
    if dtype is not None:
        x = x.to(dtype)
    if not x.is_floating_point():
        raise RuntimeError(f"linalg.vector_norm: Expected a floating point or complex tensor as input. Got {x.dtype}")
    if x.numel() == 0 and (ord < 0 or ord == math.inf):  # no identity (kiln.norm gives 0, as torch.norm)
        if dim is None:
            raise RuntimeError(f"linalg.vector_norm cannot compute the {ord} norm on an empty tensor because "
                               "the operation does not have an identity")
        for d in ([dim] if isinstance(dim, int) else list(dim)):
            if x.shape[d] == 0:
                raise RuntimeError(f"linalg.vector_norm cannot compute the {ord} norm on the dimension {d} "
                                   "because this dimension is empty and the operation does not have an identity")
    if ord == 0:  # torch's norm_backward gives ord = 0 no gradient (None)
        from .._no_derivative import with_undefined_gradient
        return with_undefined_gradient(lambda t: _vector_norm(t, 0, dim, keepdim), x)
    return _vector_norm(x, ord, dim, keepdim)


def _vector_norm(x, ord, dim, keepdim):
    if dim is None:
        result = _C.norm(x, ord)
        return result.reshape([1] * x.dim()) if keepdim else result
    dims = [dim] if isinstance(dim, int) else list(dim)
    return _C.norm(x, ord, dims, keepdim)


def _to_end(A, dim):
    """A with the two matrix dims `dim` moved last (rows, then columns)."""
    d0, d1 = (d % A.dim() for d in dim)
    rest = [d for d in range(A.dim()) if d not in (d0, d1)]
    return A.permute(*rest, d0, d1), (d0, d1)


def _keep(result, dims, keepdim):
    if keepdim:
        for d in sorted(dims):
            result = result.unsqueeze(d)
    return result


def matrix_norm(A, ord="fro", dim=(-2, -1), keepdim=False, *, dtype=None):
    if dtype is not None:
        A = A.to(dtype)
    if A.dim() < 2:
        raise RuntimeError(f"linalg.matrix_norm: The input tensor A must have at least 2 dimensions.")
    if not A.is_floating_point():
        from ..nn.utils._orthogonal_maps import _cname
        raise RuntimeError(f"linalg.matrix_norm: Expected a floating point or complex tensor as input. Got "
                           f"{_cname(A.dtype)}")
    dim = tuple(dim)
    if len(dim) != 2:
        raise RuntimeError(f"linalg.matrix_norm: dim must be a 2-tuple. Got {' '.join(map(str, dim))}")
    if ord == "fro":
        return vector_norm(A, 2, dim, keepdim)
    if ord == "nuc" or ord in (2, -2):
        M, dims = _to_end(A, dim)
        s = _C.linalg_svdvals(M)
        result = s.sum(-1) if ord == "nuc" else s.amax(-1) if ord == 2 else s.amin(-1)
        return _keep(result, dims, keepdim)
    if isinstance(ord, str) or ord not in (1, -1, math.inf, -math.inf):
        raise RuntimeError(f"linalg.matrix_norm: Order {ord} not supported.")
    # 1 / -1: the largest / smallest column sum; inf / -inf: the same over rows.
    d0, d1 = (d % A.dim() for d in dim)
    summed, reduced = (d0, d1) if ord in (1, -1) else (d1, d0)
    s = A.abs().sum(summed, keepdim=True)
    result = s.amax(reduced, keepdim=True) if ord > 0 else s.amin(reduced, keepdim=True)
    return result if keepdim else result.squeeze(max(d0, d1)).squeeze(min(d0, d1))


def norm(A, ord=None, dim=None, keepdim=False, *, dtype=None):
    if isinstance(ord, str):  # torch's str overload: always the matrix norm (dim=(0,) is its error)
        if dim is None and A.dim() not in (1, 2):
            raise RuntimeError(f"linalg.norm: If dim is not specified but ord is, the input must be 1D or 2D. "
                               f"Got {A.dim()}D.")
        dims = (-2, -1) if dim is None else (dim,) if isinstance(dim, int) else tuple(dim)
        return matrix_norm(A, ord, dims, keepdim, dtype=dtype)
    if dim is not None:
        dims = (dim,) if isinstance(dim, int) else tuple(dim)
        if len(dims) == 1:
            return vector_norm(A, 2 if ord is None else ord, dims, keepdim, dtype=dtype)
        return matrix_norm(A, "fro" if ord is None else ord, dims, keepdim, dtype=dtype)
    if ord is None:
        return vector_norm(A, 2, None, keepdim, dtype=dtype)
    if A.dim() == 1:
        return vector_norm(A, ord, None, keepdim, dtype=dtype)
    if A.dim() == 2:
        return matrix_norm(A, ord, (-2, -1), keepdim, dtype=dtype)
    raise RuntimeError(f"linalg.norm: If dim is not specified but ord is, the input must be 1D or 2D. "
                       f"Got {A.dim()}D.")
