"""torch.meshgrid and torch.tensordot: the argument forms torch accepts in Python (tensors as
varargs or one list; dims as an int, two lists or a tensor), over the schema ops."""
import warnings

from . import _C


def meshgrid(*tensors, indexing=None):
    """Coordinate grids of 0-D/1-D tensors; indexing 'ij' (the default, with torch's warning when
    not given) or 'xy'."""
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tensors[0]
    if indexing is None:
        warnings.warn("torch.meshgrid: in an upcoming release, it will be required to pass the indexing argument.",
                      UserWarning, stacklevel=2)
        indexing = "ij"
    return tuple(_C.meshgrid(list(tensors), indexing=indexing))


def tensordot(a, b, dims=2, out=None):
    """Sums the products of a's and b's elements over the dims given: the last `dims` of a with the
    first of b, or the pairs of lists ([dims of a], [dims of b])."""
    if hasattr(dims, "tolist") and not isinstance(dims, (list, tuple)):
        dims = dims.tolist()  # a tensor: one number, or two lists
    if isinstance(dims, (list, tuple)):
        if len(dims) != 2:
            raise RuntimeError("tensordot expects dims to be a pair of lists or an int")
        dims_a, dims_b = ([d] if isinstance(d, int) else list(d) for d in dims)
    elif isinstance(dims, int):
        if dims < 0:
            raise RuntimeError(f"tensordot expects dims >= 0, but got dims={dims}")
        if dims > min(a.dim(), b.dim()):
            raise RuntimeError(f"tensordot expects dims < ndim_a or ndim_b, but got dims={dims}")
        dims_a, dims_b = list(range(a.dim() - dims, a.dim())), list(range(dims))
    else:
        raise TypeError(f"tensordot expects dims to be an int, a pair of lists or a tensor, got {type(dims).__name__}")
    if out is not None:
        return _C.tensordot(a, b, dims_a, dims_b, out=out)
    return _C.tensordot(a, b, dims_a, dims_b)
