"""More torch functions composed of kiln's ops, as torch 2.x computes them (its CPU code ported, the
argument checks and messages included): mode, renorm, combinations, cov, corrcoef, histogram,
vander / linalg.vander, scatter with reduce=, index_reduce. tests/python/test_ops_part2_more.py
compares each with torch."""
import collections
import itertools
import numbers

from . import _C
from ._composed_ops import _dim, _kiln

ModeResult = collections.namedtuple("mode", ["values", "indices"])
HistogramResult = collections.namedtuple("histogram", ["hist", "bin_edges"])

_TORCH_DTYPE_NAMES = {"float32": "Float", "float64": "Double", "float16": "Half", "bfloat16": "BFloat16",
                      "int64": "Long", "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte",
                      "bool": "Bool"}


def _name(dtype):
    return _TORCH_DTYPE_NAMES.get(str(dtype).replace("kiln.", ""), str(dtype))


def _is_floating(t):
    return t.dtype in (_C.float16, _C.bfloat16, _C.float32, _C.float64)


def mode(input, dim=-1, keepdim=False):
    """The most frequent value along dim (the smallest of equally frequent ones) and the index of its
    last occurrence, as torch's CPU kernel (a sort of (value, index) pairs, then a scan of the runs)."""
    if isinstance(dim, str) or dim is None:
        from ._composed_ops import _dimname_error
        raise _dimname_error("mode", dim)
    d = _dim(dim, input.dim(), "mode")
    if input.dim() == 0:
        return ModeResult(input.clone(), _C.zeros([], dtype=_C.int64))
    if input.numel() == 0 and input.shape[d] == 0:
        raise IndexError(f"mode(): Expected reduction dim {d} to have non-zero size.")
    x = input.movedim(d, -1)
    if x.numel() == 0:
        shape = list(x.shape[:-1])
        values, indices = x.new_empty(shape), _C.empty(shape, dtype=_C.int64)
    else:
        s, order = _C.sort(x.detach(), -1, stable=True)
        s = (s.to(_C.uint8) if s.dtype == _C.bool else s).contiguous()  # searchsorted takes no bool
        # each sorted element's count: the length of its run of equal values
        counts = _C.searchsorted(s, s, right=True) - _C.searchsorted(s, s)
        most = counts == counts.amax(-1, keepdim=True)
        first = most.to(_C.uint8).argmax(-1, keepdim=True)  # the smallest value of the greatest count
        value = s.gather(-1, first).contiguous()
        last = _C.searchsorted(s, value, right=True) - 1
        indices = order.gather(-1, last)
        values = x.gather(-1, indices).squeeze(-1)  # gathered from x, so the gradient reaches input
        indices = indices.squeeze(-1)
    if keepdim:
        values, indices = values.unsqueeze(d), indices.unsqueeze(d)
    return ModeResult(values, indices)


def renorm(input, p, dim, maxnorm):
    """Each slice along dim rescaled to p-norm maxnorm where its norm exceeds it (torch's factor
    maxnorm / (norm + 1e-7))."""
    if p <= 0:
        raise RuntimeError("renorm: non-positive-norm not supported")
    if maxnorm < 0:
        raise RuntimeError(f"renorm: expected maxnorm to be >= 0 but got {float(maxnorm):g}")
    if input.dim() <= 1:
        raise RuntimeError(f"renorm: input needs at least 2 dimensions, got {input.dim()} dimensions")
    d = _dim(dim, input.dim(), "renorm")
    if not _is_floating(input):
        raise RuntimeError(f"linalg.vector_norm: Expected a floating point or complex tensor as input. "
                           f"Got {_name(input.dtype)}")
    from . import linalg
    dims = [i for i in range(input.dim()) if i != d]
    norm = linalg.vector_norm(input, p, dims, keepdim=True)
    factor = _C.where(norm > maxnorm, maxnorm / (norm + 1e-7), _C.ones_like(norm))
    return input * factor


def combinations(input, r=2, with_replacement=False):
    """The r-length combinations of a 1-D tensor's elements, in itertools' order, as rows."""
    if input.dim() != 1:
        raise RuntimeError(f"Expect a 1D vector, but got shape {list(input.shape)}")
    if r < 0:
        raise RuntimeError(f"Expect a non-negative number, but got {r}")
    if r == 0:
        return input.new_empty([0])
    pick = itertools.combinations_with_replacement if with_replacement else itertools.combinations
    rows = list(pick(range(input.shape[0]), r))
    index = _kiln().tensor([i for row in rows for i in row], dtype=_C.int64)
    return input.index_select(0, index).view(len(rows), r)


def cov(input, *, correction=1, fweights=None, aweights=None):
    """The covariance of the variables (rows) over the observations (columns), weighted by the
    frequency and/or observation weights (torch's at::cov)."""
    if input.dim() > 2:
        raise RuntimeError(f"cov(): expected input to have two or fewer dimensions but got an input with "
                           f"{input.dim()} dimensions")
    if input.dtype == _C.bool:
        raise RuntimeError("cov(): bool dtype is not supported for input")
    x = input.view(1, -1) if input.dim() < 2 else input
    n = x.shape[1]
    w = None
    if fweights is not None:
        w = fweights
        if w.dim() > 1:
            raise RuntimeError(f"cov(): expected fweights to have one or fewer dimensions but got fweights with "
                               f"{w.dim()} dimensions")
        if _is_floating(w) or w.dtype == _C.bool:
            raise RuntimeError(f"cov(): expected fweights to have integral dtype but got fweights with "
                               f"{_name(w.dtype)} dtype")
        if w.numel() != n:
            raise RuntimeError(f"cov(): expected fweights to have the same numel as there are observations in the "
                               f"input but got {w.numel()} != {n}")
        if n and bool(w.min() < 0):
            raise RuntimeError("cov(): fweights cannot be negative")
    if aweights is not None:
        aw = aweights
        if aw.dim() > 1:
            raise RuntimeError(f"cov(): expected aweights to have one or fewer dimensions but got aweights with "
                               f"{aw.dim()} dimensions")
        if not _is_floating(aw):
            raise RuntimeError(f"cov(): expected aweights to have floating point dtype but got aweights with "
                               f"{_name(aw.dtype)} dtype")
        if aw.numel() != n:
            raise RuntimeError(f"cov(): expected aweights to have the same numel as there are observations in the "
                               f"input but got {aw.numel()} != {n}")
        if n and bool(aw.min() < 0):
            raise RuntimeError("cov(): aweights cannot be negative")
        w = aw if w is None else w * aw
    w_sum = w.sum() if w is not None else _kiln().tensor(n, dtype=_C.int64)
    if w is not None and not bool(w_sum != 0):
        raise RuntimeError("cov(): weights sum to zero, can't be normalized")
    avg = (x * w if w is not None else x).sum(1) / w_sum
    if w is not None and aweights is not None and correction != 0:
        norm_factor = w_sum - correction * (w * aweights).sum() / w_sum
    else:
        norm_factor = w_sum - correction
    if bool(norm_factor <= 0):
        import warnings
        warnings.warn("cov(): degrees of freedom is <= 0. Correction should be strictly less than the number of "
                      "observations.")
        norm_factor = norm_factor * 0
    x = x - avg.unsqueeze(1)
    c = _C.mm(x, (x * w if w is not None else x).t())
    return (c / norm_factor).squeeze()  # true division, also of integers


def corrcoef(input):
    """Pearson's correlation coefficients of the rows (cov normalized by the standard deviations,
    clipped to [-1, 1])."""
    if input.dim() > 2:
        raise RuntimeError(f"corrcoef(): expected input to have two or fewer dimensions but got an input with "
                           f"{input.dim()} dimensions")
    c = cov(input)
    if c.dim() == 0:
        return c / c  # NaN for a variance of 0, inf or NaN, else 1
    stddev = _C.sqrt(c.diagonal())
    c = c / stddev.view(-1, 1)
    c = c / stddev.view(1, -1)
    return _C.clip(c, -1, 1)


def histogram(input, bins=100, *, range=None, weight=None, density=False):
    """Counts (or summed weights) of input's elements in bins: `bins` equal ones (100 by default, as torch's
    histogram.bin_ct) over `range` (default:
    input's min and max, widened by 0.5 each way when equal) or the edges a 1-D tensor gives. Elements
    outside the edges are left out; the last bin includes its right edge (torch's histogramdd). out=
    (hist, bin_edges): kiln/__init__.py wraps it."""
    if not _is_floating(input) or input.dtype in (_C.float16, _C.bfloat16):
        raise RuntimeError(f"\"histogramdd\" not implemented for '{_name(input.dtype)}'")
    if weight is not None and (weight.dtype != input.dtype or list(weight.shape) != list(input.shape)):
        raise RuntimeError("torch.histogramdd: if weight tensor is provided it should have the same shape as the "
                           "input tensor excluding its innermost dimension and the same dtype")
    if isinstance(bins, _C.TensorBase):
        if bins.dtype != input.dtype:
            raise RuntimeError(f"torch.histogramdd: input tensor and bins tensors should have the same dtype, but "
                               f"got input with dtype {str(input.dtype).replace('kiln.', '')} and bins for "
                               f"dimension 0 with dtype {str(bins.dtype).replace('kiln.', '')}")
        if bins.dim() != 1 or bins.numel() == 0:
            raise RuntimeError("torch.histogramdd: bins tensor should have one dimension and at least 1 entry")
        edges = bins.detach().clone()
    else:
        if not isinstance(bins, numbers.Integral) or isinstance(bins, bool):
            raise TypeError(f"histogram(): argument 'bins' must be int or Tensor, not {type(bins).__name__}")
        if bins <= 0:
            raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {bins} for dimension 0")
        if range is not None:
            lo, hi = float(range[0]), float(range[1])
        elif input.numel() > 0:
            lo, hi = float(input.min()), float(input.max())
        else:
            lo, hi = 0.0, 1.0  # torch's range for an empty input
        if lo > hi:
            raise RuntimeError(f"torch.histogramdd: min should not exceed max, but got min {lo:g} max {hi:g} for "
                               f"dimension 0")
        if not (abs(lo) < float("inf") and abs(hi) < float("inf")):
            raise RuntimeError(f"torch.histogramdd: dimension 0's range [{lo:g}, {hi:g}] is not finite")
        if lo == hi:
            lo, hi = lo - 0.5, hi + 0.5
        edges = _C.linspace(lo, hi, bins + 1, dtype=input.dtype)
    nbins = edges.numel() - 1
    x = input.detach().reshape(-1)
    inside = (x >= edges[0]) & (x <= edges[-1])
    pos = (_C.searchsorted(edges.contiguous(), x.contiguous(), right=True) - 1).clamp(0, max(nbins - 1, 0))
    counts = weight.detach().reshape(-1) if weight is not None else _C.ones_like(x)
    hist = _C.zeros([max(nbins, 0)], dtype=input.dtype)
    if nbins > 0:
        hist = hist.index_add(0, pos[inside], counts[inside])
    if density:
        hist = hist / hist.sum() / (edges[1:] - edges[:-1])
    return HistogramResult(hist, edges)


def _promote_long(dtype):
    return dtype if dtype in (_C.float16, _C.bfloat16, _C.float32, _C.float64) else _C.int64


def vander(x, N=None, increasing=False):
    """Columns x ** (N-1) ... x ** 0 (or increasing), of x's dtype promoted with int64 (torch's cumprod)."""
    if x.dim() != 1:
        raise RuntimeError("x must be a one-dimensional tensor.")
    n = x.shape[0] if N is None else N
    if n < 0:
        raise RuntimeError("N must be non-negative.")
    dtype = _promote_long(x.dtype)
    ones = _C.ones([x.shape[0], min(n, 1)], dtype=dtype)
    cols = [ones]
    if n > 1:
        cols.append(_C.cumprod(x.to(dtype).unsqueeze(1).expand(x.shape[0], n - 1), 1))
    result = _C.cat(cols, 1)
    return result if increasing else result.flip([1])


def linalg_vander(x, *, N=None):
    """Batched increasing Vandermonde matrices: x ** 0 ... x ** (N-1) along a new last dim."""
    if x.dtype in (_C.bool, _C.float16, _C.bfloat16):
        raise RuntimeError(f"linalg.vander supports floating point, complex, and integer tensors, but got "
                           f"{_name(x.dtype)}")
    x_ = x.unsqueeze(-1) if x.dim() == 0 else x
    n = x_.shape[-1] if N is None else N
    if n <= 1:
        raise RuntimeError("N must be greater than 1.")
    shape = list(x_.shape) + [n - 1]
    powers = _C.cumprod(x_.unsqueeze(-1).expand(*shape), -1)
    return _C.cat([_C.ones(list(x_.shape) + [1], dtype=powers.dtype), powers], -1)


def _no_scatter_derivative():
    from .autograd import Function

    class ScatterReduceBackward(Function):
        """torch defines no derivative for scatter with reduce=: backward raises as torch's does."""
        @staticmethod
        def forward(ctx, input, dim, index, src, op):
            return input.scatter_reduce(dim, index, src, op, include_self=True)

        @staticmethod
        def backward(ctx, grad):
            raise RuntimeError("derivative for aten::scatter is not implemented")
    return ScatterReduceBackward


_SCATTER_REDUCE = {}


def _scatter_with_reduce(input, dim, index, src, reduce):
    """scatter(..., reduce='add' | 'multiply'): a sum or product of input and the scattered values."""
    if reduce not in ("add", "multiply"):
        raise RuntimeError("reduce argument must be either add or multiply.")
    if not isinstance(src, _C.TensorBase):
        src = _C.full(list(index.shape), src, dtype=input.dtype)
    if "fn" not in _SCATTER_REDUCE:
        _SCATTER_REDUCE["fn"] = _no_scatter_derivative()
    op = "sum" if reduce == "add" else "prod"
    if input.requires_grad or src.requires_grad:
        return _SCATTER_REDUCE["fn"].apply(input, dim, index, src, op)
    return input.scatter_reduce(dim, index, src, op, include_self=True)


def scatter(input, dim, index, *args, reduce=None, **kwargs):
    """torch.scatter; with reduce= ('add' or 'multiply') the scattered values are added or multiplied in."""
    if reduce is None:
        return _C.scatter(input, dim, index, *args, **kwargs)
    src = args[0] if args else kwargs.pop("src", kwargs.pop("value", None))
    return _scatter_with_reduce(input, dim, index, src, reduce)


def scatter_(self, dim, index, *args, reduce=None, **kwargs):
    """Tensor.scatter_, reduce= as scatter's (in place: the result copied into self)."""
    if reduce is None:
        return _C.TensorBase.scatter_(self, dim, index, *args, **kwargs)
    src = args[0] if args else kwargs.pop("src", kwargs.pop("value", None))
    return self.copy_(_scatter_with_reduce(self, dim, index, src, reduce))


_INDEX_REDUCE = ("prod", "mean", "amax", "amin")


def index_reduce(input, dim, index, source, reduce, *, include_self=True):
    """input with source's slices along dim reduced into the slices `index` names (torch's
    index_reduce: prod, mean, amax, amin; include_self=False leaves input's own values out where an
    index lands)."""
    if reduce not in _INDEX_REDUCE:
        raise RuntimeError(f"index_reduce(): Expected reduce to be one of prod, mean, amax or amin but got {reduce}.")
    d = _dim(dim, input.dim(), "index_reduce")
    if input.dtype == _C.bool:  # torch's kernels have no bool instance
        kernel = "index_func_" if include_self else "index_reduce_func_exclude_input_init"
        raise RuntimeError(f"\"{kernel}\" not implemented for 'Bool'")
    if index.dim() > 1:
        raise IndexError("index_reduce_(): Index is supposed to be a vector")
    if index.dtype not in (_C.int64, _C.int32):
        raise RuntimeError(f"index_reduce_(): Expected a long or int tensor for index, but got {_name(index.dtype)}")
    if input.dtype != source.dtype:
        raise RuntimeError(f"index_reduce_(): self ({_name(input.dtype)}) and source ({_name(source.dtype)}) must "
                           "have the same scalar type")
    if max(source.dim(), 1) != max(input.dim(), 1):
        raise IndexError("index_reduce_(): Source/destination tensor must have same slice shapes.")
    src = source if source.dim() > 0 else source.view(1)
    if src.shape[d] != index.numel():
        raise RuntimeError(f"index_reduce_(): Number of indices ({index.numel()}) should be equal to "
                           f"source.size(dim) ({src.shape[d]})")
    x = input if input.dim() > 0 else input.view(1)
    for i in range(x.dim()):
        if i != d and x.shape[i] != src.shape[i]:
            raise IndexError("index_reduce_(): Source/destination tensor must have same slice shapes.")
    shape = [1] * src.dim()
    shape[d] = -1
    idx = index.to(_C.int64).reshape(shape).expand(*src.shape)
    out = x.scatter_reduce(d, idx, src, reduce, include_self=include_self)
    return out.view(input.shape)


def index_reduce_(self, dim, index, source, reduce, *, include_self=True):
    # the reduction's backward reads self as it was (torch saves a copy of it): reduce a clone where a
    # gradient can reach it, so that copying the result into self leaves what backward saved untouched
    grad = _C.is_grad_enabled() and (self.requires_grad or source.requires_grad)
    return self.copy_(index_reduce(self.clone() if grad else self, dim, index, source, reduce,
                                   include_self=include_self))


def _as_double(x):
    return x.double() if isinstance(x, _C.TensorBase) and x.dtype != _C.float64 else x


def float_power(input, exponent, *, out=None):
    """pow in float64 (the schema formula). Tensors that require grad are converted to float64 first,
    as torch does, so the gradients are float64 math too (log(self) of the exponent's gradient), and
    converted back to the inputs' dtypes."""
    if any(isinstance(x, _C.TensorBase) and x.requires_grad for x in (input, exponent)):
        input, exponent = _as_double(input), _as_double(exponent)
    return _C.float_power(input, exponent) if out is None else _C.float_power(input, exponent, out=out)


def _float_power_method(self, exponent):
    return float_power(self, exponent)
