"""torch.sparse.softmax / log_softmax: a softmax over the stored elements only (the others count as
-inf), so the result has the input's pattern. Written with dense ops on the values (differentiable)."""
from .. import _C
from ._coo import SparseCooTensor, _linear_index, _wrap_dim


def _groups(s, dim):
    """For each stored element, the number of its group: the elements that share every sparse index but
    the one along `dim`."""
    others = [d for d in range(s.sparse_dim()) if d != dim]
    if not others:
        return _C.zeros([s._nnz()], dtype=_C.int64), 1
    from .._functional import unique
    key = _linear_index(s._indices_t[others], [s.shape[d] for d in others])
    positions, inverse = unique(key, sorted=True, return_inverse=True)
    return inverse, positions.shape[0]


def _log_softmax_values(s, dim):
    if dim >= s.sparse_dim():  # a dense dim: an ordinary softmax of the values along it
        return _C.log_softmax(s._values_t, dim - s.sparse_dim() + 1)
    v = s._values_t
    group, n = _groups(s, dim)
    idx = group.view([-1] + [1] * (v.dim() - 1)).expand(list(v.shape))
    shape = [n] + list(v.shape[1:])
    amax = _C.full(shape, float("-inf"), dtype=v.dtype).scatter_reduce(0, idx, v, "amax", include_self=True)
    shifted = v - amax.detach().gather(0, idx)
    total = _C.zeros(shape, dtype=v.dtype).index_add(0, group, shifted.exp())
    return shifted - total.log().gather(0, idx)


def _check(input, dim, dtype):
    if not isinstance(input, SparseCooTensor):
        raise TypeError(f"sparse softmax: expected a sparse_coo tensor, got {type(input).__name__}")
    s = input.coalesce()
    if dtype is not None:
        s = s.to(dtype)
    if not s.is_floating_point():
        raise RuntimeError(f"softmax: expected a floating point tensor, got {s.dtype}")
    return s, _wrap_dim(dim, s.dim(), "softmax")


def log_softmax(input, dim, dtype=None):
    s, dim = _check(input, dim, dtype)
    if s._nnz() == 0:
        return s
    return SparseCooTensor(s._indices_t, _log_softmax_values(s, dim), s.shape, True)


def softmax(input, dim, dtype=None):
    s, dim = _check(input, dim, dtype)
    if s._nnz() == 0:
        return s
    return SparseCooTensor(s._indices_t, _log_softmax_values(s, dim).exp(), s.shape, True)
