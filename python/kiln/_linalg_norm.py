"""kiln.norm with torch.norm's Python signature: p may be a number, 'fro' (the 2-norm, over
all dims or two given dims), inf or -inf; dim=None reduces every dim."""

from . import _C


def norm(input, p="fro", dim=None, keepdim=False, dtype=None):
    if dtype is not None:
        input = input.to(dtype)
    if p == "fro":
        # torch takes the Frobenius norm over at most 2 dims (more go to its matrix norm, which refuses)
        if dim is not None and not isinstance(dim, int) and len(dim) > 2:
            raise RuntimeError(f"Expected at most 2 dimensions, but got {len(dim)} dimensions instead.")
        p = 2
    elif p == "nuc":
        raise NotImplementedError("norm(): the nuclear norm (p='nuc') is not supported by kiln yet")
    elif isinstance(p, str):
        raise RuntimeError(f"norm(): unknown p '{p}'")
    if p == 0:  # torch's norm_backward gives p = 0 no gradient (None), though the result requires one
        from ._no_derivative import with_undefined_gradient
        return with_undefined_gradient(lambda x: _norm(x, 0, dim, keepdim), input)
    return _norm(input, p, dim, keepdim)


def _norm(input, p, dim, keepdim):
    if dim is None:
        result = _C.norm(input, p)
        if keepdim:
            result = result.reshape([1] * input.dim())
        return result
    dims = [dim] if isinstance(dim, int) else list(dim)
    return _C.norm(input, p, dims, keepdim)
