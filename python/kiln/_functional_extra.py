"""torch functions training scripts reach for that kiln builds from its ops in Python: diff,
aminmax, var_mean/std_mean, randint_like, tril_indices/triu_indices, and torch.compile (an
identity: kiln has no graph compiler, so the model runs as written)."""
import collections

from . import _C

aminmax_result = collections.namedtuple("aminmax", ["min", "max"])


def diff(input, n=1, dim=-1, prepend=None, append=None):
    """The n-th forward difference along `dim` (a logical xor for bool), after concatenating
    prepend and append there."""
    if input.dim() == 0:
        raise RuntimeError("diff expects input to be at least one-dimensional")
    # (torch 1.13 takes n <= 0 as no difference: the input with prepend/append; torch 2 raises for n < 0)
    parts = [t for t in (prepend, input, append) if t is not None]
    if len(parts) > 1:
        parts = [t if isinstance(t, _C.TensorBase) else _C.tensor(t) for t in parts]
        parts = [t.expand(*[s if d != dim % input.dim() else t.shape[d] for d, s in enumerate(input.shape)])
                 if t.dim() == input.dim() else t for t in parts]
        input = _C.cat(parts, dim)
    for _ in range(n):
        length = input.shape[dim]
        if length == 0:
            break
        after, before = input.narrow(dim, 1, length - 1), input.narrow(dim, 0, length - 1)
        input = after.logical_xor(before) if input.dtype == _C.bool else after - before
    return input


def aminmax(input, *, dim=None, keepdim=False):
    """(min, max) in one call, as torch.aminmax (a namedtuple with fields min and max)."""
    if input.numel() == 0 and dim is None:
        raise RuntimeError("aminmax(): cannot compute aminmax over an empty dimension as the operation has no "
                           "identity.")
    if isinstance(dim, (tuple, list, float)):  # torch's dim is an int? (no tuple of dims)
        raise TypeError(f"aminmax(): argument 'dim' must be int, not {type(dim).__name__}")
    if dim is None:
        lo, hi = _C.amin(input), _C.amax(input)
        if keepdim:
            lo, hi = lo.reshape([1] * input.dim()), hi.reshape([1] * input.dim())
        return aminmax_result(lo, hi)
    return aminmax_result(_C.amin(input, dim, keepdim), _C.amax(input, dim, keepdim))


def _welford_mean(input, dim, keepdim, mean):
    """torch computes var_mean's mean by Welford's update (mean += (x - mean) / n), so a slice with an
    infinity gives NaN unless that infinity is its last element and the only one (inf - inf on the next
    update); kiln's mean is the sum's. Only floating slices holding an infinity differ."""
    if not input.is_floating_point() or input.numel() == 0 or not bool(input.isinf().any()):
        return mean
    nd = input.dim()
    dims = list(range(nd)) if dim is None else ([dim] if isinstance(dim, int) else list(dim))
    dims = sorted({d % nd if nd else 0 for d in dims}) if nd else []
    keep = [d for d in range(nd) if d not in dims]
    x = input.permute(keep + dims).reshape([input.shape[d] for d in keep] + [-1]) if nd else input.reshape(1)
    inf = x.isinf()
    count = inf.sum(-1)
    bad = (count > 1) | ((count == 1) & ~inf[..., -1])
    return mean.masked_fill(bad.reshape(mean.shape), float("nan"))


def _var_and_mean(fn, input, dim, unbiased, keepdim, correction):
    if correction is not None:
        v = fn(input, dim, correction=correction, keepdim=keepdim) if dim is not None else \
            fn(input, correction=correction)
    elif dim is None:
        v = fn(input, unbiased=unbiased)
    else:
        v = fn(input, dim, unbiased=unbiased, keepdim=keepdim)
    m = _C.mean(input) if dim is None else _C.mean(input, dim, keepdim=keepdim)
    return v, _welford_mean(input, dim, keepdim, m)


def var_mean(input, dim=None, unbiased=True, keepdim=False, *, correction=None):
    """(var, mean) over dim (every dim when None); the mean as torch's Welford reduction gives it."""
    return _var_and_mean(_C.var, input, dim, unbiased, keepdim, correction)


def std_mean(input, dim=None, unbiased=True, keepdim=False, *, correction=None):
    """(std, mean) over dim (every dim when None); the mean as torch's Welford reduction gives it."""
    return _var_and_mean(_C.std, input, dim, unbiased, keepdim, correction)


def randint_like(input, low=0, high=None, *, dtype=None, generator=None, memory_format=None, requires_grad=False,
                 **kwargs):
    """torch's empty_like(input, memory_format=).random_(low, high): input's strides kept (preserve_format), so
    the numbers land where torch's do; randint_like(input, high) as torch's."""
    from ._memory_format import empty_like, preserve_format
    if high is None:
        low, high = 0, low
    kw = {} if generator is None else {"generator": generator}
    kwargs.pop("layout", None)
    kwargs.pop("pin_memory", None)
    t = empty_like(input, dtype=dtype or input.dtype, memory_format=memory_format or preserve_format, **kwargs)
    t.random_(low, high, **kw)
    return t.requires_grad_(True) if requires_grad else t


def _triangle_indices(row, col, offset, dtype, lower):
    r = _C.arange(row).unsqueeze(1)
    c = _C.arange(col).unsqueeze(0)
    mask = (c - r <= offset) if lower else (c - r >= offset)
    return mask.nonzero().t().contiguous().to(dtype)


def tril_indices(row, col, offset=0, *, dtype=None, device=None, layout=None):
    """2 x N (row, column) indices of the lower triangle, in row-major order."""
    return _triangle_indices(row, col, offset, dtype or _C.int64, True)


def triu_indices(row, col, offset=0, *, dtype=None, device=None, layout=None):
    """2 x N (row, column) indices of the upper triangle, in row-major order."""
    return _triangle_indices(row, col, offset, dtype or _C.int64, False)


def compile(model=None, *, fullgraph=False, dynamic=None, backend="inductor", mode=None, options=None,  # noqa: A001
            disable=False):
    """torch.compile's signature; kiln runs the model (or function) as it is: returned unchanged,
    or a decorator that returns its argument."""
    if model is None:
        return lambda m: m
    return model
