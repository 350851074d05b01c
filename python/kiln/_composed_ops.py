"""torch functions that are compositions of kiln's ops, written as torch documents them (the
argument forms, the views they return, the errors): splitting (tensor_split, hsplit, vsplit,
dsplit), shaping (atleast_1d/2d/3d, block_diag, cartesian_prod, diagflat), selecting
(take_along_dim, kthvalue, msort, argwhere), quantile/nanquantile, and small products (inner, addr,
addmv, dist, trapezoid). tests/python/test_composed_ops.py compares each with torch."""
import collections
import numbers

from . import _C

KthvalueResult = collections.namedtuple("kthvalue", ["values", "indices"])


def _kiln():
    import kiln
    return kiln


def _dim(dim, ndim, name):
    if not -max(ndim, 1) <= dim < max(ndim, 1):
        raise IndexError(f"{name}(): Dimension out of range (expected to be in range of "
                         f"[{-max(ndim, 1)}, {max(ndim, 1) - 1}], but got {dim})")
    return dim % max(ndim, 1)


_NO_PARTS = object()


def _dimname_error(op, name):
    """torch's error for a name where an op with a Dimname overload takes a dim, on an unnamed tensor
    (runtime/python/arg_parser.cc raises the same for the C++ bindings)."""
    if name is None:
        return RuntimeError(f"{op}(): Please look up dimensions by name, got: name = None.")
    return RuntimeError(f"{op}(): Name '{name}' not found in the tensor: kiln has no named tensors, pass a dimension index")


def tensor_split(input, indices_or_sections=_NO_PARTS, dim=0, *, indices=_NO_PARTS, sections=_NO_PARTS):
    """Views of `input` along dim: n nearly equal parts (the first size % n one longer), or the
    pieces between the given indices (clamped to the size, as Python slicing). torch's overloads also
    name them: tensor_split(x, sections=2), tensor_split(x, indices=[1, 3])."""
    given = [v for v in (indices_or_sections, indices, sections) if v is not _NO_PARTS]
    if len(given) != 1 or (sections is not _NO_PARTS and not isinstance(sections, numbers.Integral)) \
            or (indices is not _NO_PARTS and not isinstance(indices, (list, tuple))):
        raise TypeError("tensor_split() received an invalid combination of arguments: expected "
                        "(Tensor input, int sections, int dim), (Tensor input, tuple of ints indices, int dim) or "
                        "(Tensor input, Tensor tensor_indices_or_sections, int dim)")
    indices_or_sections = given[0]
    if isinstance(indices_or_sections, float):  # no overload takes a float (torch's parser)
        raise TypeError("tensor_split(): argument 'sections' must be int, not float")
    if input.dim() == 0:
        raise RuntimeError("tensor_split expected at least a 1-dimensional tensor, but got a tensor with 0 dims")
    d = _dim(dim, input.dim(), "tensor_split")
    size = input.shape[d]
    if isinstance(indices_or_sections, _C.TensorBase):
        if indices_or_sections.dtype != _C.int64 or indices_or_sections.dim() > 1:
            raise RuntimeError("tensor_split expected tensor_indices_or_sections to have a single dimension and "
                               "be of type long")
        indices_or_sections = (indices_or_sections.item() if indices_or_sections.dim() == 0
                               else indices_or_sections.tolist())
    if isinstance(indices_or_sections, numbers.Integral) and not isinstance(indices_or_sections, bool):
        n = int(indices_or_sections)
        if n <= 0:
            raise RuntimeError(f"number of sections must be larger than 0, got {n}")
        if n >= 2 ** 63:
            raise RuntimeError("Overflow when unpacking long")
        if n > 2 ** 31:  # torch builds a vector of n views: bad_alloc (RuntimeError), not an endless loop
            raise RuntimeError(f"tensor_split(): {n} sections: too many views to create")
        small, extra = divmod(size, n)
        bounds, start = [], 0
        for i in range(n):
            length = small + (1 if i < extra else 0)
            bounds.append((start, start + length))
            start += length
    else:
        if isinstance(indices_or_sections, (str, bytes)) or not all(
                isinstance(i, numbers.Integral) and not isinstance(i, bool) for i in indices_or_sections):
            raise TypeError("tensor_split(): argument 'indices' must be tuple of ints")  # torch's parser
        points = [int(i) for i in indices_or_sections]
        edges = [0] + points + [size]
        bounds = []
        for a, b in zip(edges[:-1], edges[1:]):
            a = min(max(a + size if a < 0 else a, 0), size)
            b = min(max(b + size if b < 0 else b, 0), size)
            bounds.append((a, max(a, b)))
    return tuple(input.narrow(d, a, b - a) for a, b in bounds)


def _split_along(name, input, indices_or_sections, dim, min_dims):
    if input.dim() < min_dims:
        raise RuntimeError(f"torch.{name} requires a tensor with at least {min_dims} dimension, but got a tensor "
                           f"with {input.dim()} dimensions!")
    if isinstance(indices_or_sections, numbers.Integral) and not isinstance(indices_or_sections, bool):
        if indices_or_sections == 0 or input.shape[dim] % indices_or_sections != 0:
            raise RuntimeError(f"torch.{name} attempted to split along dimension {dim}, but the size of the "
                               f"dimension {input.shape[dim]} is not divisible by the split_size "
                               f"{indices_or_sections}!")
    return tensor_split(input, indices_or_sections, dim)


def hsplit(input, indices_or_sections):
    return _split_along("hsplit", input, indices_or_sections, 0 if input.dim() == 1 else 1, 1)


def vsplit(input, indices_or_sections):
    return _split_along("vsplit", input, indices_or_sections, 0, 2)


def dsplit(input, indices_or_sections):
    return _split_along("dsplit", input, indices_or_sections, 2, 3)


def _atleast(n, tensors):
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
        many = True
    else:
        many = len(tensors) != 1
    out = []
    for t in tensors:
        if t.dim() == 0:
            t = t.reshape([1] * n)
        elif n >= 2 and t.dim() == 1:
            t = t.unsqueeze(0) if n == 2 else t.unsqueeze(0).unsqueeze(-1)
        elif n == 3 and t.dim() == 2:
            t = t.unsqueeze(-1)
        out.append(t)
    return tuple(out) if many else out[0]


def atleast_1d(*tensors):
    return _atleast(1, tensors)


def atleast_2d(*tensors):
    return _atleast(2, tensors)


def atleast_3d(*tensors):
    return _atleast(3, tensors)


def take_along_dim(input, indices, dim=None):
    """input's values at `indices` along dim (gather after broadcasting all dims but dim); with no
    dim, over the flattened input."""
    if indices.dtype != _C.int64:
        raise RuntimeError(f"torch.take_along_dim(): dtype of indices should be Long but got "
                           f"{str(indices.dtype).split('.')[-1].capitalize()}")
    if dim is None:
        return input.reshape(-1).gather(0, indices.reshape(-1))
    if input.dim() != indices.dim():
        raise RuntimeError("torch.take_along_dim(): input and indices should have the same number of dimensions, "
                           f"but got {input.dim()} dimensions for input, and {indices.dim()} dimensions for indices")
    d = _dim(dim, input.dim(), "take_along_dim")
    shape_in, shape_ix = list(input.shape), list(indices.shape)
    shape_in[d] = shape_ix[d] = 1
    common = list(_kiln().broadcast_shapes(shape_in, shape_ix))
    want_in, want_ix = list(common), list(common)
    want_in[d], want_ix[d] = input.shape[d], indices.shape[d]
    return input.broadcast_to(want_in).gather(d, indices.broadcast_to(want_ix))


def msort(input):
    return input.sort(dim=0).values


def argwhere(input):
    return input.nonzero()


def kthvalue(input, k, dim=-1, keepdim=False):
    """The k-th smallest value along dim (NaN is the largest) and its index; torch's order of checks
    (the dim, then a 0-dim input is its own answer, then an empty dim, then the dtype, then k)."""
    if isinstance(dim, str) or dim is None:
        raise _dimname_error("kthvalue", dim)
    for name, v in (("k", k), ("dim", dim)):
        if isinstance(v, bool) or not (isinstance(v, numbers.Integral) or (
                isinstance(v, _C.TensorBase) and v.dim() == 0 and not v.is_floating_point() and v.dtype != _C.bool)):
            raise TypeError(f"kthvalue(): argument '{name}' must be int, not {type(v).__name__}")  # torch's parser
    if not isinstance(keepdim, bool):
        raise TypeError(f"kthvalue(): argument 'keepdim' must be bool, not {type(keepdim).__name__}")
    k, dim = int(k), int(dim)
    d = _dim(dim, input.dim(), "kthvalue")
    size = input.shape[d] if input.dim() > 0 else 1
    if size == 0:
        raise IndexError(f"kthvalue(): Expected reduction dim {d} to have non-zero size.")
    if input.dim() > 0 and input.dtype == _C.bool:
        raise RuntimeError("\"kthvalue_cpu\" not implemented for 'Bool'")
    if not 1 <= k <= size:
        raise RuntimeError(f"kthvalue(): selected number k out of range for dimension {d}")
    if input.dim() == 0:
        return KthvalueResult(input.clone(), _C.zeros([], dtype=_C.int64))
    # the position torch's quickselect picks among equal values; the values gathered there, so the
    # gradient reaches that element
    i = _C._kthvalue_index(input, k, d)
    v = input.gather(d, i)
    if not keepdim:
        v, i = v.squeeze(d), i.squeeze(d)
    return KthvalueResult(v, i)


def dist(input, other, p=2):
    if not isinstance(other, _C.TensorBase):  # torch.dist(t, 2): TypeError (other is a Tensor)
        raise TypeError(f"dist(): argument 'other' (position 2) must be Tensor, not {type(other).__name__}")
    return (input - other).norm(p)


def inner(input, other):
    if input.dim() == 0 or other.dim() == 0:
        return input * other
    if input.shape[-1] != other.shape[-1]:
        raise RuntimeError(f"inner() the last dimension must match on both input tensors but got shapes "
                           f"{list(input.shape)} and {list(other.shape)}")
    return _kiln().tensordot(input, other, dims=([input.dim() - 1], [other.dim() - 1]))


def _scaled(t, factor):
    return t if factor == 1 else t * factor


def addr(input, vec1, vec2, *, beta=1, alpha=1):
    """beta * input + alpha * outer(vec1, vec2); beta = 0 ignores input (NaN included)."""
    if vec1.dim() != 1 or vec2.dim() != 1:
        raise RuntimeError(f"addr: Expected 1-D argument vec1, but got {vec1.dim()}-D" if vec1.dim() != 1 else
                           f"addr: Expected 1-D argument vec2, but got {vec2.dim()}-D")
    product = _scaled(_kiln().outer(vec1, vec2), alpha)
    if beta == 0:
        return product + _kiln().zeros_like(input).broadcast_to(product.shape)
    return _scaled(input, beta) + product


def addmv(input, mat, vec, *, beta=1, alpha=1):
    """beta * input + alpha * (mat @ vec); beta = 0 ignores input (NaN included)."""
    product = _scaled(_kiln().mv(mat, vec), alpha)
    if beta == 0:
        return product + _kiln().zeros_like(input).broadcast_to(product.shape)
    return _scaled(input, beta) + product


def diagflat(input, offset=0):
    return _kiln().diag(input.reshape(-1), offset)


def block_diag(*tensors):
    """The tensors (0-, 1- or 2-D) along the diagonal of one matrix, zeros elsewhere."""
    k = _kiln()
    mats = []
    for i, t in enumerate(tensors):
        if t.dim() > 2:
            raise RuntimeError(f"torch.block_diag: Input tensors must have 2 or fewer dimensions. Input {i} has "
                               f"{t.dim()} dimensions")
        mats.append(t.reshape(1, -1) if t.dim() < 2 else t)
    if not mats:
        return k.zeros(1, 0)
    dtype = mats[0].dtype
    for m in mats[1:]:
        dtype = k.promote_types(dtype, m.dtype)
    cols = sum(m.shape[1] for m in mats)
    rows, before = [], 0
    for m in mats:
        left = k.zeros(m.shape[0], before, dtype=dtype)
        right = k.zeros(m.shape[0], cols - before - m.shape[1], dtype=dtype)
        rows.append(k.cat([left, m.to(dtype), right], dim=1))
        before += m.shape[1]
    return k.cat(rows, dim=0)


def cartesian_prod(*tensors):
    """Every combination of the 1-D tensors' elements, one per row (itertools.product's order)."""
    k = _kiln()
    for t in tensors:
        if t.dim() != 1:
            raise RuntimeError(f"Expect a 1D vector, but got shape {list(t.shape)}")
    if len(tensors) == 1:
        return tensors[0]
    grids = k.meshgrid(*tensors, indexing="ij")
    return k.stack([g.reshape(-1) for g in grids], dim=1)


def trapezoid(y, x=None, *, dx=None, dim=-1):
    """The trapezoid rule along dim, rounded as torch's: with a spacing dx (default 1),
    (sum - (first + last) / 2) * dx; with sample points x, sum(diff(x) * (left + right)) / 2."""
    if x is None and y.dtype == _C.bool:
        raise RuntimeError("trapezoid: received a bool input for `y`, but bool is not supported")
    if x is not None and _C.bool in (x.dtype, y.dtype):
        raise RuntimeError("trapezoid: received a bool input for `x` or `y`, but bool is not supported")
    d = _dim(dim, y.dim(), "trapezoid")
    n = y.shape[d]
    if n == 0:
        return y.sum(d) * 0
    if x is None:
        return (y.sum(d) - (y.select(d, 0) + y.select(d, -1)) * 0.5) * (1 if dx is None else dx)
    left, right = y.narrow(d, 0, n - 1), y.narrow(d, 1, n - 1)
    if x.dim() == 1:
        if x.shape[0] != n:
            raise RuntimeError("trapezoid: There must be one `x` value for each sample point")
        shape = [1] * y.dim()
        shape[d] = n - 1
        spacing = (x[1:] - x[:-1]).reshape(shape)
    else:
        spacing = x.narrow(d, 1, n - 1) - x.narrow(d, 0, n - 1)
    return (spacing * (right + left)).sum(d) / 2


def trapz(y, x=None, *, dx=None, dim=-1):
    return trapezoid(y, x, dx=dx, dim=dim)


_QUANTILE_MODES = ("linear", "lower", "higher", "midpoint", "nearest")


def _quantile(name, input, q, dim, keepdim, interpolation, ignore_nan):
    """torch's quantile_compute: the sorted values along dim, the rank q * (n - 1) (of the non-NaN
    count for nanquantile; a row holding NaN takes the last, NaN, value for quantile), adjusted by
    the interpolation mode, and lerp between the neighbours."""
    k = _kiln()
    # torch's order: a number q's range, the interpolation, then the tensors
    scalar_q = not isinstance(q, _C.TensorBase)
    if scalar_q and not 0 <= q <= 1:
        raise RuntimeError(f"{name}() q must be in the range [0, 1] but got {q}")
    if interpolation not in _QUANTILE_MODES:
        raise RuntimeError(f"{name}() interpolation must be one of linear, lower, higher, midpoint or nearest, "
                           f"but got {interpolation}")
    if input.dtype not in (_C.float32, _C.float64):
        raise RuntimeError(f"{name}() input tensor must be either float or double dtype")
    if scalar_q:
        qt = k.tensor(float(q), dtype=input.dtype)
    else:
        if q.dtype != input.dtype:
            raise RuntimeError(f"{name}() q tensor must be same dtype as the input tensor")
        if q.dim() > 1:
            raise RuntimeError(f"{name}() q must be a scalar or 1D tensor")
        if q.numel() and bool(((q < 0) | (q > 1)).any()):
            raise RuntimeError(f"{name}() q values must be in the range [0, 1]")
        qt = q
    if dim is None:
        x = input.reshape(-1)
    else:
        d = _dim(dim, input.dim(), name)
        x = input.reshape(1) if input.dim() == 0 else input.movedim(d, -1)
    if x.shape[-1] == 0:
        raise RuntimeError(f"{name}() input tensor must be non-empty")
    sorted_ = x.sort(-1).values
    n = sorted_.shape[-1]
    qq = qt.reshape(-1)
    lead = list(sorted_.shape[:-1])
    if ignore_nan:
        count = (~sorted_.isnan()).sum(-1, keepdim=True)
        ranks = qq * (count - 1).to(input.dtype)
        ranks = ranks.masked_fill(ranks < 0, n - 1)
    else:
        ranks = (qq * (n - 1)).expand(lead + [qq.shape[0]])
        ranks = ranks.masked_fill(sorted_.isnan().any(-1, keepdim=True), n - 1)
    if interpolation == "lower":
        ranks = ranks.floor()
    elif interpolation == "higher":
        ranks = ranks.ceil()
    elif interpolation == "nearest":
        ranks = ranks.round()
    below = ranks.to(_C.int64)
    values = sorted_.gather(-1, below)
    if interpolation in ("linear", "midpoint"):
        weights = k.full_like(ranks, 0.5) if interpolation == "midpoint" else ranks - below.to(ranks.dtype)
        values = values.lerp(sorted_.gather(-1, ranks.ceil().to(_C.int64)), weights)
    if keepdim:
        if dim is None:
            values = values.reshape([1] * input.dim() + [qq.shape[0]])
        elif input.dim() > 0:
            values = values.unsqueeze(-2).movedim(-2, d)
    values = values.squeeze(-1) if qt.dim() == 0 else values.movedim(-1, 0)
    return values


def quantile(input, q, dim=None, keepdim=False, *, interpolation="linear", out=None):
    result = _quantile("quantile", input, q, dim, keepdim, interpolation, ignore_nan=False)
    return result if out is None else out.resize_(result.shape).copy_(result)


def nanquantile(input, q, dim=None, keepdim=False, *, interpolation="linear", out=None):
    result = _quantile("nanquantile", input, q, dim, keepdim, interpolation, ignore_nan=True)
    return result if out is None else out.resize_(result.shape).copy_(result)


TriangularSolveResult = collections.namedtuple("triangular_solve", ["solution", "cloned_coefficient"])


def triangular_solve(input, A, upper=True, transpose=False, unitriangular=False, *, out=None):
    """The deprecated torch.triangular_solve: X with A X = input (A^T X = input with transpose), as
    linalg.solve_triangular(A, input); returns (X, a clone of A)."""
    k = _kiln()
    if not isinstance(input, _C.TensorBase) or not isinstance(A, _C.TensorBase):
        bad = input if not isinstance(input, _C.TensorBase) else A
        raise TypeError(f"triangular_solve(): argument 'A' must be Tensor, not {type(bad).__name__}")
    if input.dim() < 2 or A.dim() < 2:
        raise RuntimeError(f"torch.triangular_solve: Expected b to have at least 2 dimensions, but it has "
                           f"{input.dim()} dimensions instead" if input.dim() < 2 else
                           f"torch.triangular_solve: Expected A to have at least 2 dimensions, but it has "
                           f"{A.dim()} dimensions instead")
    coefficient = A.mT if transpose else A
    solution = k.linalg.solve_triangular(coefficient, input, upper=upper != transpose, unitriangular=unitriangular)
    result = TriangularSolveResult(solution, A.clone())
    if out is not None:
        from .linalg._out import _write
        return TriangularSolveResult(_write(out[0], result[0]), _write(out[1], result[1]))
    return result


def logspace(start, end, steps, base=10.0, *, out=None, dtype=None, layout=None, device=None, requires_grad=False):
    """base ** linspace(start, end, steps): the exponents as torch's linspace spaces them, the powers
    taken in double and rounded once to the result's dtype (the default dtype, or int64 ... as given)."""
    k = _kiln()
    if isinstance(steps, _C.TensorBase) and steps.dim() == 0 and not steps.is_floating_point() \
            and steps.dtype != _C.bool:
        steps = int(steps)  # torch's parser takes a 0-dim integer tensor for an int
    if not isinstance(steps, numbers.Integral) or isinstance(steps, bool):
        raise TypeError(f"logspace(): argument 'steps' must be int, not {type(steps).__name__}")
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    result_dtype = dtype if dtype is not None else (out.dtype if out is not None else _C.get_default_dtype())
    exponents = k.linspace(start, end, steps, dtype=_C.float64)
    values = k.pow(k.full([], float(base), dtype=_C.float64), exponents)
    values = values.to(result_dtype) if result_dtype.is_floating_point else values.trunc().to(result_dtype)
    if out is not None:
        from .linalg._out import _write
        return _write(out, values)
    return values.requires_grad_(True) if requires_grad else values
