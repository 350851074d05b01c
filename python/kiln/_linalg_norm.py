"""kiln.norm with torch.norm's Python signature: p may be a number, 'fro' (the 2-norm, over
all dims or two given dims), inf or -inf; dim=None reduces every dim."""

from . import _C


def norm(input, p="fro", dim=None, keepdim=False, dtype=None):
    if dtype is not None:
        input = input.to(dtype)
    if p == "fro":
        p = 2
    elif p == "nuc":
        raise NotImplementedError("norm(): the nuclear norm (p='nuc') is not supported by kiln yet")
    elif isinstance(p, str):
        raise RuntimeError(f"norm(): unknown p '{p}'")
    if p in (float("inf"), float("-inf")) and input.numel() == 0 and input.is_floating_point():
        # max/min over an empty set: torch gives 0 (its sum-like reduction), kiln's amax raises
        nd = input.dim()
        dims = list(range(nd)) if dim is None else [dim] if isinstance(dim, int) else list(dim)
        if all(-max(nd, 1) <= d < max(nd, 1) for d in dims) and any(input.shape[d] == 0 for d in dims if nd):
            return input.abs().sum(dims, keepdim=keepdim)   # 0 everywhere, connected to the graph
    if dim is None:
        result = _C.norm(input, p)
        if keepdim:
            result = result.reshape([1] * input.dim())
        return result
    dims = [dim] if isinstance(dim, int) else list(dim)
    return _C.norm(input, p, dims, keepdim)
