"""kiln.sparse (torch.sparse): sparse COO tensors and their products and sums.

    a = kiln.sparse_coo_tensor(indices, values, (n, n))   # or dense.to_sparse()
    y = kiln.sparse.mm(a, x)                              # also kiln.mm, kiln.matmul, a @ x

The tensor type and every operation live in kiln/sparse/_coo.py (a Python type over two dense tensors;
docs/ARCHITECTURE.md, "Sparse COO tensors").
"""
from .. import _C
from ._coo import SparseCooTensor, matmul, mm, sparse_coo_tensor, sparse_sum, to_sparse  # noqa: F401
from ._softmax import log_softmax, softmax  # noqa: F401


def sum(input, dim=None, dtype=None):  # noqa: A001  (torch.sparse.sum)
    """The sum of a sparse tensor's elements: a dense 0-dim tensor over every dim, else a sparse tensor
    over the sparse dims that remain (dense when none does)."""
    if not isinstance(input, SparseCooTensor):
        raise TypeError(f"sparse.sum(): expected a sparse_coo tensor, got {type(input).__name__}")
    return sparse_sum(input, dim, dtype)


def addmm(mat, mat1, mat2, *, beta=1, alpha=1):
    """beta * mat + alpha * (mat1 @ mat2), mat1 sparse and mat dense."""
    return mat * beta + mm(mat1, mat2) * alpha


def _legacy_constructor(name, dtype):
    def constructor(*args):
        """The legacy constructor: (indices, values[, size]), or (*sizes) for an empty sparse tensor."""
        if len(args) >= 2 and not isinstance(args[0], int):
            return sparse_coo_tensor(args[0], args[1], args[2] if len(args) > 2 else None, dtype=dtype)
        sizes = list(args[0]) if len(args) == 1 and isinstance(args[0], (tuple, list)) else list(args)
        return sparse_coo_tensor(_C.zeros([len(sizes), 0], dtype=_C.int64), _C.zeros([0], dtype=dtype), sizes)
    constructor.__name__ = constructor.__qualname__ = name
    return constructor


FloatTensor = _legacy_constructor("FloatTensor", _C.float32)
DoubleTensor = _legacy_constructor("DoubleTensor", _C.float64)
LongTensor = _legacy_constructor("LongTensor", _C.int64)
IntTensor = _legacy_constructor("IntTensor", _C.int32)

__all__ = ["SparseCooTensor", "mm", "matmul", "sum", "addmm", "softmax", "log_softmax", "FloatTensor",
           "DoubleTensor", "LongTensor", "IntTensor"]
