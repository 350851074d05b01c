"""kiln.norm with torch.norm's Python signature: p may be a number, 'fro' (the 2-norm, over
all dims or two given dims), 'nuc' (the matrix nuclear norm), inf or -inf; dim=None reduces every dim."""

from . import _C


def norm(input, p="fro", dim=None, keepdim=False, dtype=None):
    if p is None:  # torch.norm(x, None): the 2-norm (torch's _VF.norm with p=None)
        if not input.is_floating_point():
            raise RuntimeError(f"norm(): input dtype should be either floating point or complex. Got "
                               f"{str(input.dtype).split('.')[-1]} instead.")
        p = 2
    if p == "nuc":
        return _nuclear(input, dim, keepdim, dtype)
    if dtype is not None:
        input = input.to(dtype)
    if p == "fro":
        # torch takes the Frobenius norm over at most 2 dims (more go to its matrix norm, which refuses)
        if dim is not None and not isinstance(dim, int) and len(dim) > 2:
            raise RuntimeError(f"Expected at most 2 dimensions, but got {len(dim)} dimensions instead.")
        p = 2
    elif isinstance(p, str):
        raise RuntimeError(f"norm(): unknown p '{p}'")
    if p == 0:  # torch's norm_backward gives p = 0 no gradient (None), though the result requires one
        from ._no_derivative import with_undefined_gradient
        return with_undefined_gradient(lambda x: _norm(x, 0, dim, keepdim), input)
    return _norm(input, p, dim, keepdim)


def _nuclear(input, dim, keepdim, dtype):
    """torch.norm(p='nuc'): the matrix nuclear norm of a 2-D input, or over two given dims."""
    from . import linalg
    if dtype is not None:
        raise ValueError("dtype argument is not supported in nuclear norm")
    if dim is None:
        if input.dim() != 2:
            raise RuntimeError(f"Expected a tensor with 2 dimensions, but got a tensor with {input.dim()} "
                               f"dimension{'s' if input.dim() != 1 else ''} instead.")
        dim = (0, 1)
    dims = [dim] if isinstance(dim, int) else list(dim)
    if len(dims) != 2:
        raise RuntimeError("nuclear norm requires a 'dim' argument of size 2")
    return linalg.matrix_norm(input, "nuc", dims, keepdim)


def _norm(input, p, dim, keepdim):
    if dim is None:
        result = _C.norm(input, p)
        if keepdim:
            result = result.reshape([1] * input.dim())
        return result
    dims = [dim] if isinstance(dim, int) else list(dim)
    return _C.norm(input, p, dims, keepdim)
