"""torch.distributions.utils: broadcast_all, logits <-> probs, lazy_property."""
from numbers import Number

import kiln
import kiln.nn.functional as F


def broadcast_all(*values):
    """Numbers become tensors of the default dtype (or the dtype of the tensors given), then all are
    broadcast to one shape."""
    if not all(isinstance(v, (kiln.Tensor, Number)) for v in values):
        raise ValueError("Input arguments must all be instances of numbers.Number or torch.tensor.")
    if not all(isinstance(v, kiln.Tensor) for v in values):
        dtype = kiln.get_default_dtype()
        for v in values:
            if isinstance(v, kiln.Tensor):
                dtype = v.dtype
                break
        values = [v if isinstance(v, kiln.Tensor) else kiln.tensor(v, dtype=dtype) for v in values]
    return kiln.broadcast_tensors(*values)


def _standard_normal(shape, dtype, device):
    return kiln.empty(shape, dtype=dtype, device=device).normal_()


def logits_to_probs(logits, is_binary=False):
    if is_binary:
        return kiln.sigmoid(logits)
    return F.softmax(logits, dim=-1)


def clamp_probs(probs):
    eps = kiln.finfo(probs.dtype).eps
    return probs.clamp(min=eps, max=1 - eps)


def probs_to_logits(probs, is_binary=False):
    ps_clamped = clamp_probs(probs)
    if is_binary:
        return kiln.log(ps_clamped) - kiln.log1p(-ps_clamped)
    return kiln.log(ps_clamped)


class lazy_property:
    """Computed on first access, then stored on the instance (as torch's)."""

    def __init__(self, wrapped):
        self.wrapped = wrapped
        self.__doc__ = wrapped.__doc__

    def __get__(self, instance, obj_type=None):
        if instance is None:
            return self
        with kiln.enable_grad():
            value = self.wrapped(instance)
        setattr(instance, self.wrapped.__name__, value)
        return value


def params_shape(*values):
    """The batch shape of parameters given as numbers or tensors: () when all are numbers."""
    if all(isinstance(v, Number) for v in values):
        return kiln.Size()
    return kiln.broadcast_shapes(*[tuple(v.shape) for v in values if isinstance(v, kiln.Tensor)])


def sum_rightmost(value, dim):
    """value summed over its `dim` rightmost dimensions (a number stays a number)."""
    if dim == 0 or not isinstance(value, kiln.Tensor):
        return value
    return value.reshape(tuple(value.shape[:value.dim() - dim]) + (-1,)).sum(-1)


def batch_mv(mat, vec):
    """Matrix times vector over broadcast batch dimensions."""
    return kiln.matmul(mat, vec.unsqueeze(-1)).squeeze(-1)


def tiny(t):
    return kiln.finfo(t.dtype).tiny


def eps(t):
    return kiln.finfo(t.dtype).eps


def tril_matrix_to_vec(mat, diag=0):
    """The entries of the lower triangle (offset diag) of the last two dimensions, row by row."""
    n = mat.shape[-1]
    rows, cols = kiln.tril_indices(n, n, offset=diag)
    return mat[..., rows, cols]


def vec_to_tril_matrix(vec, diag=0):
    """The inverse of tril_matrix_to_vec: a square matrix with vec in its lower triangle, zeros above."""
    m = vec.shape[-1]
    # m = n (n + 1) / 2 + n diag entries for an n x n matrix; solve for n
    n = round((-(1 + 2 * diag) + ((1 + 2 * diag) ** 2 + 8 * m + 4 * abs(diag) * (diag + 1)) ** 0.5) / 2)
    rows, cols = kiln.tril_indices(n, n, offset=diag)
    if rows.numel() != m:
        raise ValueError("incorrect number of elements for a lower triangle")
    mat = vec.new_zeros(tuple(vec.shape[:-1]) + (n, n))
    mat[..., rows, cols] = vec
    return mat
