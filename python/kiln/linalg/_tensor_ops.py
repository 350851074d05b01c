"""torch.linalg.tensorinv / tensorsolve (a tensor viewed as a square matrix, then inv / solve) and
torch.linalg.matmul (an alias of torch.matmul)."""
import math

from .. import _C


def matmul(input, other, *, out=None):
    """torch.linalg.matmul: an alias of torch.matmul."""
    return _C.matmul(input, other) if out is None else _C.matmul(input, other, out=out)


def tensorinv(A, ind=2, *, out=None):
    """The inverse of A seen as a prod(A.shape[:ind]) x prod(A.shape[ind:]) matrix, shaped A.shape[ind:] +
    A.shape[:ind] (tensordot(A, tensorinv(A, ind), ind) is the identity)."""
    if not isinstance(ind, int) or ind <= 0:
        raise RuntimeError(f"Expected a strictly positive integer for 'ind', but got {ind}")
    shape = list(A.shape)
    rows, cols = math.prod(shape[:ind]), math.prod(shape[ind:])
    if rows != cols:
        raise RuntimeError("Expected self to satisfy the requirement prod(self.shape[ind:]) == "
                           f"prod(self.shape[:ind]), but got {cols} != {rows}")
    from . import inv
    result = inv(A.reshape(rows, cols)).reshape(shape[ind:] + shape[:ind])
    if out is not None:
        out.resize_(result.shape).copy_(result)
        return out
    return result


def tensorsolve(A, B, dims=None, *, out=None):
    """X with tensordot(A, X, X.ndim) == B: A (after moving `dims` to the end) as a
    prod(B.shape) x prod(A.shape[B.ndim:]) matrix solved against B flattened."""
    if dims is not None and len(dims) > 0:
        nd = A.dim()
        A = A.movedim(list(dims), list(range(nd - len(dims), nd)))
    shape = list(A.shape)
    result_shape = shape[B.dim():]
    result_product = math.prod(result_shape)
    other_product = math.prod(shape[:B.dim()])
    if result_product != other_product:
        raise RuntimeError("Expected self to satisfy the requirement prod(self.shape[other.ndim:]) == "
                           f"prod(self.shape[:other.ndim]), but got {result_product} != {other_product}")
    from . import solve
    result = solve(A.reshape(result_product, result_product), B.flatten()).reshape(result_shape)
    if out is not None:
        out.resize_(result.shape).copy_(result)
        return out
    return result
