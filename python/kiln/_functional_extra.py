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
        for name, t in (("prepend", prepend), ("append", append)):
            if t is not None and not isinstance(t, _C.TensorBase):  # torch's parser (kiln had _C.tensor: AttributeError)
                raise TypeError(f"diff(): argument '{name}' must be Tensor, not {type(t).__name__}")
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
    dims = list(range(nd)) if dim is None or (not isinstance(dim, int) and len(dim) == 0) else \
        ([dim] if isinstance(dim, int) else list(dim))  # dim=() reduces every dim, as None
    dims = sorted({d % nd if nd else 0 for d in dims}) if nd else []
    keep = [d for d in range(nd) if d not in dims]
    x = input.permute(keep + dims).reshape([input.shape[d] for d in keep] + [-1]) if nd else input.reshape(1)
    inf = x.isinf()
    count = inf.sum(-1)
    bad = (count > 1) | ((count == 1) & ~inf[..., -1])
    return mean.masked_fill(bad.reshape(mean.shape), float("nan"))


def _double_mean(input, dim, keepdim):
    """The mean torch's Welford reduction (in double) gives: float32/16-bit slices averaged in double and
    rounded once (a float32 sum of 3.4e38s overflows; Welford's does not), and a slice of one repeated
    float64 value has exactly that value as its mean (+0.0 for -0.0s)."""
    x = input.double() if input.dtype in (_C.float32, _C.float16, _C.bfloat16) else input
    m = _C.mean(x) if dim is None else _C.mean(x, dim, keepdim=keepdim)
    if x.dtype == _C.float64 and x.numel() > 0:
        lo = _C.amin(x) if dim is None else _C.amin(x, dim, keepdim=keepdim)
        hi = _C.amax(x) if dim is None else _C.amax(x, dim, keepdim=keepdim)
        m = _C.where(lo == hi, lo, m)
    # Welford's mean starts at +0 and adds to it: a slice of -0.0s has mean +0.0
    return (m + 0.0).to(input.dtype)


def _var_and_mean(fn, input, dim, unbiased, keepdim, correction):
    if correction is not None:
        v = fn(input, dim, correction=correction, keepdim=keepdim) if dim is not None else \
            fn(input, correction=correction)
    elif dim is None:
        v = fn(input, unbiased=unbiased)
    else:
        v = fn(input, dim, unbiased=unbiased, keepdim=keepdim)
    m = _welford_mean(input, dim, keepdim, _double_mean(input, dim, keepdim))
    if dim is None and keepdim:  # every dim reduced, kept as 1s (torch: var_mean(x, None, keepdim=True))
        v, m = v.reshape([1] * input.dim()), m.reshape([1] * input.dim())
    return v, m


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


def _triangle_indices(name, row, col, offset, dtype, lower):
    """Row by row, without a row x col mask: only the rows holding indices are visited (torch counts them
    analytically too: tril_indices(2**40, 0) is empty, not a 2**40-row allocation)."""
    import numbers

    import numpy as np
    import operator
    values = []
    for arg, v in (("row", row), ("col", col), ("offset", offset)):
        try:  # torch's parser: ints, or what has __index__ (a 0-dim integer tensor), never a bool or float
            if isinstance(v, (bool, float)):
                raise TypeError
            values.append(operator.index(v))
        except TypeError:
            raise TypeError(f"{name}(): argument '{arg}' must be int, not {type(v).__name__}") from None
    row, col, offset = values
    if row < 0:
        raise RuntimeError(f"row must be non-negative, got{row}")
    if col < 0:
        raise RuntimeError(f"col must be non-negative, got{col}")
    # Rows with at least one index: tril r + offset >= 0, triu r + offset <= col - 1.
    first, last = (max(0, -offset), row - 1) if lower else (0, min(row - 1, col - 1 - offset))
    if col == 0 or first > last:
        return _C.empty([2, 0], dtype=dtype)
    if last - first + 1 > 2 ** 31:
        raise RuntimeError(f"{name}(): {last - first + 1} rows of indices: too many to allocate")
    rows = np.arange(first, last + 1, dtype=np.int64)
    lo = np.zeros_like(rows) if lower else np.maximum(rows + offset, 0)
    hi = np.minimum(rows + offset + 1, col) if lower else np.full_like(rows, col)
    counts = hi - lo
    n = int(counts.sum())
    out = _C.empty([2, n], dtype=_C.int64)  # kiln's allocator raises RuntimeError when it can't
    a = out.numpy()
    a[0] = np.repeat(rows, counts)
    starts = np.repeat(np.cumsum(counts) - counts, counts)
    a[1] = np.arange(n, dtype=np.int64) - starts + np.repeat(lo, counts)
    return out.to(dtype)


def tril_indices(row, col, offset=0, *, dtype=None, device=None, layout=None):
    """2 x N (row, column) indices of the lower triangle, in row-major order."""
    return _triangle_indices("tril_indices", row, col, offset, dtype or _C.int64, True)


def triu_indices(row, col, offset=0, *, dtype=None, device=None, layout=None):
    """2 x N (row, column) indices of the upper triangle, in row-major order."""
    return _triangle_indices("triu_indices", row, col, offset, dtype or _C.int64, False)


def compile(model=None, *, fullgraph=False, dynamic=None, backend="inductor", mode=None, options=None,  # noqa: A001
            disable=False):
    """torch.compile's signature; kiln runs the model (or function) as it is: returned unchanged,
    or a decorator that returns its argument."""
    if model is None:
        return lambda m: m
    return model


def gradient(input, *, spacing=1, dim=None, edge_order=1):
    """torch.gradient: the derivative along each of `dim` (all dims by default) by second-order central
    differences inside and first- or second-order one-sided differences at the two ends. `spacing` is
    a number (the step of every dim), a list of numbers (one step per dim) or a list of 1-D tensors
    (each dim's coordinates, whose unequal steps give NumPy's weights). A tuple, one tensor per dim."""
    import numbers
    if not isinstance(input, _C.TensorBase):
        raise TypeError(f"gradient(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}")
    if dim is None:
        dims = list(range(input.dim()))
    elif isinstance(dim, int) and not isinstance(dim, bool):
        dims = [dim]
    else:
        dims = list(dim)
    nd = max(input.dim(), 1)
    wrapped = []
    for d in dims:
        if not -nd <= d < nd:
            raise IndexError(f"Dimension out of range (expected to be in range of [{-nd}, {nd - 1}], but got {d})")
        wrapped.append(d % nd)
    if len(set(wrapped)) != len(wrapped):
        raise RuntimeError("dim appears multiple times in the list of dims")
    if edge_order not in (1, 2):
        raise RuntimeError("torch.gradient only supports edge_order=1 and edge_order=2.")
    if isinstance(spacing, (numbers.Number, _C.TensorBase)) and not (
            isinstance(spacing, _C.TensorBase) and spacing.dim() > 0):
        steps = [spacing] * len(wrapped)
    else:
        steps = list(spacing)
        if len(steps) != len(wrapped):
            raise RuntimeError(
                "torch.gradient expected spacing to be unspecified, a scalar or it's spacing and dim arguments to "
                f"have the same length, but got a spacing argument of length {len(steps)} and a dim argument of "
                f"length {len(wrapped)}.")
    for d in wrapped:
        if input.shape[d] < edge_order + 1:
            raise RuntimeError("torch.gradient expected each dimension size to be at least edge_order+1")
    results = []
    for d, h in zip(wrapped, steps):
        n = input.shape[d]

        def part(start, stop=None):
            stop = n if stop is None else stop
            return input.narrow(d, start, stop - start)

        if isinstance(h, _C.TensorBase) and h.dim() == 1:  # coordinates: unequal steps
            if h.shape[0] != n:
                raise RuntimeError("torch.gradient expected each tensor to be on the same device and to have the "
                                   "size of its dim")
            shape = [1] * input.dim()
            shape[d] = -1
            dx = h.diff(1, 0)
            dx1, dx2 = dx[:-1], dx[1:]
            a = (-dx2 / (dx1 * (dx1 + dx2))).reshape(shape)
            b = ((dx2 - dx1) / (dx1 * dx2)).reshape(shape)
            c = (dx1 / (dx2 * (dx1 + dx2))).reshape(shape)
            center = a * part(0, n - 2) + b * part(1, n - 1) + c * part(2)
            if edge_order == 1:
                first = (part(1, 2) - part(0, 1)) / dx[0]
                last = (part(n - 1) - part(n - 2, n - 1)) / dx[-1]
            else:
                a = -(2.0 * dx[0] + dx[1]) / (dx[0] * (dx[0] + dx[1]))
                b = (dx[0] + dx[1]) / (dx[0] * dx[1])
                c = -dx[0] / (dx[1] * (dx[0] + dx[1]))
                first = a * part(0, 1) + b * part(1, 2) + c * part(2, 3)
                a = dx[-1] / (dx[-2] * (dx[-1] + dx[-2]))
                b = -(dx[-1] + dx[-2]) / (dx[-1] * dx[-2])
                c = (2 * dx[-1] + dx[-2]) / (dx[-1] * (dx[-1] + dx[-2]))
                last = a * part(n - 3, n - 2) + b * part(n - 2, n - 1) + c * part(n - 1)
        else:  # one step for the whole dim
            if isinstance(h, _C.TensorBase):
                h = h.item()
            center = (part(2) - part(0, n - 2)) / h / 2
            if edge_order == 1:
                first = (part(1, 2) - part(0, 1)) / h
                last = (part(n - 1) - part(n - 2, n - 1)) / h
            else:
                first = (-1.5 * part(0, 1) + 2 * part(1, 2) - 0.5 * part(2, 3)) / h
                last = (0.5 * part(n - 3, n - 2) - 2 * part(n - 2, n - 1) + 1.5 * part(n - 1)) / h
        results.append(_C.cat([first, center, last], d))
    return tuple(results)


def round(input, *, decimals=None, out=None):  # noqa: A001 - torch's name
    """torch.round(input), or at `decimals` places (half to even), optionally into out= (resized;
    with decimals, out must have the result's dtype, as torch 1.13's round.decimals_out)."""
    if out is None:
        return _C.round(input) if decimals is None else _C.round(input, decimals=decimals)
    if decimals is None:
        return _C.round(input, out=out)
    result = _C.round(input, decimals=decimals)
    if not isinstance(out, _C.TensorBase):
        raise TypeError(f"round(): argument 'out' must be Tensor, not {type(out).__name__}")
    if out.dtype != result.dtype:  # torch 1.13's round.decimals_out: exactly the result's dtype
        from ._tensor import _LEGACY_DTYPES
        raise RuntimeError(f"Found dtype {_LEGACY_DTYPES[str(out.dtype).split('.')[-1]]} but expected "
                           f"{_LEGACY_DTYPES[str(result.dtype).split('.')[-1]]}")
    if result.requires_grad or out.requires_grad:
        raise RuntimeError("round(): functions with out=... arguments don't support automatic differentiation, "
                           "but one of the arguments requires grad.")
    if tuple(out.shape) != tuple(result.shape):
        out.resize_(list(result.shape))
    return out.copy_(result)


def split(tensor, split_size_or_sections, dim=0):
    """torch.split (a Python function in torch, so its parameters have these names): chunks of
    split_size_or_sections along dim, or one piece per listed size."""
    return tensor.split(split_size_or_sections, dim)  # a non-tensor: AttributeError, as torch's
