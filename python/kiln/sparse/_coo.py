"""Sparse COO tensors: torch's layout=torch.sparse_coo, held as two dense kiln tensors.

A SparseCooTensor is `indices` (int64, [sparse_dim, nnz]: one column per stored element), `values`
([nnz, *dense_sizes]: the elements, in the values' dtype) and a size, as torch's SparseTensorImpl. It
is a Python type, not a C++ layout (docs/ARCHITECTURE.md, "Sparse COO tensors" says why): every
operation here is written with dense kiln ops on `indices` and `values`, so autograd comes from those
ops. In particular the gradient of `values` through mm, matmul, to_dense, coalesce and sum is the
gradient of a sparse input with its own pattern (torch.sparse.mm's documented rule), and a sparse tensor
made with requires_grad=True gets a sparse .grad of that pattern.

Operators that have no sparse version here are refused: a kiln operator given a sparse tensor raises
torch's NotImplementedError naming the SparseCPU backend (runtime/python/arg_parser.cc), and so does
any Tensor method this class does not define (__getattr__ below).
"""
import numbers

from .. import _C
from .._layout import sparse_coo


def _unsupported(name):
    return NotImplementedError(
        f"Could not run '{name}' with arguments from the 'SparseCPU' backend: kiln's sparse_coo layout supports "
        "only the operations of kiln.sparse (docs/ARCHITECTURE.md, \"Sparse COO tensors\"); call .to_dense() first")


def _as_tensor(data, dtype=None):
    from .._creation import tensor
    from .._tensor import Tensor
    if isinstance(data, Tensor):
        return data if dtype is None or data.dtype == dtype else data.to(dtype)
    return tensor(data, dtype=dtype)


class SparseCooTensor:
    """A sparse tensor in COO format (see the module docstring). Make one with kiln.sparse_coo_tensor,
    Tensor.to_sparse() or kiln.sparse.FloatTensor(indices, values, size)."""

    is_sparse = True
    is_cuda = False
    is_quantized = False
    is_meta = False
    layout = sparse_coo

    def __init__(self, indices, values, size, coalesced=False):
        from .._size import Size
        self._indices_t = indices
        self._values_t = values
        self._size = Size(size)
        self._coalesced = bool(coalesced) or values.shape[0] <= 1  # as torch: nothing to sum or sort

    # ---- what it is ----
    @property
    def shape(self):
        return self._size

    def size(self, dim=None):
        if dim is None:
            return self._size
        return self._size[_wrap_dim(dim, len(self._size), "size")]

    def dim(self):
        return len(self._size)

    ndimension = dim

    @property
    def ndim(self):
        return len(self._size)

    def numel(self):
        return self._size.numel()

    nelement = numel

    def __len__(self):
        if not self._size:
            raise TypeError("len() of a 0-d tensor")
        return self._size[0]

    @property
    def dtype(self):
        return self._values_t.dtype

    @property
    def device(self):
        return self._values_t.device

    def is_floating_point(self):
        return self._values_t.is_floating_point()

    def sparse_dim(self):
        return self._indices_t.shape[0]

    def dense_dim(self):
        return self._values_t.dim() - 1

    def _nnz(self):
        return self._values_t.shape[0]

    def is_coalesced(self):
        return self._coalesced

    def _indices(self):
        return self._indices_t

    def _values(self):
        return self._values_t

    def indices(self):
        if not self._coalesced:
            raise RuntimeError("Cannot get indices on an uncoalesced tensor, please call .coalesce() first")
        return self._indices_t

    def values(self):
        if not self._coalesced:
            raise RuntimeError("Cannot get values on an uncoalesced tensor, please call .coalesce() first")
        return self._values_t

    def __repr__(self):
        from .._tensor_str import sparse_repr
        return sparse_repr(self)

    # ---- autograd: carried by the values tensor ----
    @property
    def requires_grad(self):
        return self._values_t.requires_grad

    def requires_grad_(self, requires_grad=True):
        self._values_t.requires_grad_(requires_grad)
        return self

    @property
    def is_leaf(self):
        return self._values_t.is_leaf

    @property
    def grad_fn(self):
        return self._values_t.grad_fn

    @property
    def grad(self):
        """The gradient of a leaf: sparse, with this tensor's pattern (torch.sparse.mm's rule), coalesced.
        Duplicates of one index got one gradient each, the same (the gradient at that position), so the
        pattern keeps one of them rather than their sum."""
        g = self._values_t.grad
        if g is None:
            return None
        if self._coalesced:
            return SparseCooTensor(self._indices_t, g, self._size, True)
        positions, inverse = _unique_positions(self)
        values = _C.zeros([positions.shape[0]] + list(g.shape[1:]), dtype=g.dtype).index_copy(0, inverse, g)
        return SparseCooTensor(_unravel(positions, self._sparse_sizes()), values, self._size, True)

    @grad.setter
    def grad(self, value):
        if value is not None:
            raise RuntimeError("kiln: only None can be assigned to the .grad of a sparse tensor")
        self._values_t.grad = None

    def detach(self):
        return SparseCooTensor(self._indices_t, self._values_t.detach(), self._size, self._coalesced)

    def detach_(self):
        self._values_t = self._values_t.detach()
        return self

    @property
    def data(self):
        return self.detach()

    def __deepcopy__(self, memo):
        if id(self) not in memo:
            import copy
            memo[id(self)] = SparseCooTensor(copy.deepcopy(self._indices_t, memo), copy.deepcopy(self._values_t, memo),
                                             self._size, self._coalesced)
        return memo[id(self)]

    # ---- in place (what optimizers and gradient clipping do to a sparse .grad) ----
    def zero_(self):
        """No stored elements, the size kept (torch's sparse zero_)."""
        from ._grad import zero_sparse_
        return zero_sparse_(self)

    def mul_(self, other):
        """The values scaled in place by a number or a 0-dim tensor."""
        if not _is_scalar_like(other):
            raise _unsupported("mul_ (sparse_coo by a tensor)")
        self._values_t.mul_(other)
        return self

    def div_(self, other):
        if not _is_scalar_like(other):
            raise _unsupported("div_ (sparse_coo by a tensor)")
        self._values_t.div_(other)
        return self

    def add_(self, other, *, alpha=1):
        """self += alpha * other for a sparse other (torch's CPU sparse add: see kiln/sparse/_grad.py)."""
        if not isinstance(other, SparseCooTensor):
            raise RuntimeError("add(sparse, dense) is not supported. Use add(dense, sparse) instead.")
        from ._grad import add_sparse
        r = add_sparse(self, other, alpha)
        self._indices_t, self._values_t, self._coalesced = r._indices_t, r._values_t, r._coalesced
        return self

    def copy_(self, other):
        if not isinstance(other, SparseCooTensor):
            raise _unsupported("copy_ (sparse_coo from a dense tensor)")
        self._indices_t, self._values_t = other._indices_t.clone(), other._values_t.clone().to(self.dtype)
        self._size, self._coalesced = other._size, other._coalesced
        return self

    def norm(self, p=2):
        """The p-norm of the elements (of the coalesced values, as torch)."""
        return self.coalesce()._values_t.norm(p)

    def is_contiguous(self, memory_format=None):
        return True  # torch 1.13 answers True for every sparse COO tensor

    def clone(self):
        return SparseCooTensor(self._indices_t.clone(), self._values_t.clone(), self._size, self._coalesced)

    # ---- conversions ----
    def to_dense(self):
        """The dense tensor: duplicates add up (differentiable in the values)."""
        sparse_sizes = self._sparse_sizes()
        flat = _C.zeros([_prod(sparse_sizes)] + list(self._size[self.sparse_dim():]), dtype=self.dtype)
        if self._nnz():
            flat = flat.index_add(0, _linear_index(self._indices_t, sparse_sizes), self._values_t)
        return flat.view(list(self._size))

    def coalesce(self):
        """One entry per index, sorted (row-major), duplicates summed; self when it is coalesced already."""
        if self._coalesced:
            return self
        positions, inverse = _unique_positions(self)
        values = _C.zeros([positions.shape[0]] + list(self._values_t.shape[1:]), dtype=self.dtype)
        values = values.index_add(0, inverse, self._values_t)
        return SparseCooTensor(_unravel(positions, self._sparse_sizes()), values, self._size, True)

    def _sparse_sizes(self):
        return list(self._size[:self.sparse_dim()])

    def to(self, *args, **kwargs):
        """to(dtype) / to(device='cpu') / to(other): the values converted."""
        return self._with_values(self._values_t.to(*args, **kwargs))

    def type(self, dtype=None):
        if dtype is None:
            return "kiln.sparse." + self._values_t.type().split(".")[-1]
        return self._with_values(self._values_t.type(dtype))

    def float(self):
        return self.to(_C.float32)

    def double(self):
        return self.to(_C.float64)

    def half(self):
        return self.to(_C.float16)

    def long(self):
        return self.to(_C.int64)

    def int(self):
        return self.to(_C.int32)

    def bool(self):
        return self.to(_C.bool)

    def cpu(self):
        return self

    def cuda(self, device=None, non_blocking=False):
        raise AssertionError("kiln not compiled with CUDA enabled")

    def to_sparse(self, sparse_dim=None):
        if sparse_dim is not None and sparse_dim != self.sparse_dim():
            raise RuntimeError(f"to_sparse(): a sparse tensor of sparse_dim {self.sparse_dim()} cannot be "
                               f"converted to sparse_dim {sparse_dim}")
        return self

    def _with_values(self, values):
        if values is self._values_t:
            return self
        return SparseCooTensor(self._indices_t, values, self._size, self._coalesced)

    # ---- shape ----
    def transpose(self, dim0, dim1):
        """Swaps two sparse dims (two rows of indices); the result is not coalesced (torch's rules)."""
        n, sd = self.dim(), self.sparse_dim()
        d0, d1 = _wrap_dim(dim0, n, "transpose"), _wrap_dim(dim1, n, "transpose")
        if d0 >= sd or d1 >= sd:
            raise RuntimeError(f"sparse transpose: transposed dimensions must be sparse Got sparse_dim: {sd}, "
                               f"d0: {d0}, d1: {d1}")
        if d0 == d1:
            return self
        size = list(self._size)
        size[d0], size[d1] = size[d1], size[d0]
        order = list(range(sd))
        order[d0], order[d1] = order[d1], order[d0]
        return SparseCooTensor(self._indices_t[order], self._values_t, size, False)

    def t(self):
        if self.sparse_dim() > 2 or self.dense_dim() > 0:
            raise RuntimeError(f"t() expects a tensor with <= 2 sparse and 0 dense dimensions, but got "
                               f"{self.sparse_dim()} sparse and {self.dense_dim()} dense dimensions")
        return self if self.dim() < 2 else self.transpose(0, 1)

    @property
    def T(self):
        return self.t()

    # ---- products and sums ----
    def mm(self, mat2):
        return mm(self, mat2)

    def matmul(self, other):
        return matmul(self, other)

    __matmul__ = matmul

    def sum(self, dim=None, keepdim=False, dtype=None):
        if keepdim:
            raise _unsupported("sum(keepdim=True)")
        return sparse_sum(self, dim, dtype)

    # ---- arithmetic: by a number (or a 0-dim dense tensor), by a dense tensor, and sparse + sparse ----
    def mul(self, other):
        """By a number or a 0-dim tensor: the values scaled. By a dense tensor broadcastable to self's
        size: each stored value times the dense element at its index (torch's sparse * dense: same
        indices, duplicates kept, the dtypes promoted)."""
        if _is_scalar_like(other):
            return self._with_values(self._values_t * other)
        if isinstance(other, _C.TensorBase):
            dense = other.expand(list(self._size))
            picked = dense[tuple(self._indices_t)] if self._nnz() else \
                _C.zeros(list(self._values_t.shape), dtype=other.dtype)
            return self._with_values(self._values_t * picked)
        raise _unsupported("mul (sparse_coo by a sparse_coo tensor)")

    __mul__ = __rmul__ = mul

    def div(self, other):
        if _is_scalar_like(other):
            return self._with_values(self._values_t / other)
        if isinstance(other, _C.TensorBase):
            raise RuntimeError(f"Sparse division requires a scalar or zero-dim dense tensor divisor (got shape "
                               f"{list(other.shape)} for divisor)")
        raise _unsupported("div (sparse_coo by a tensor)")

    def pow(self, exponent):
        """Each value to a (non-zero) number's power, after coalescing (duplicates summed first)."""
        if not isinstance(exponent, numbers.Number):
            raise _unsupported("pow (sparse_coo to a tensor power)")
        if exponent == 0:
            raise RuntimeError("pow: cannot raise to zeroth power on sparse tensor; it would make the result tensor "
                               "dense")
        c = self.coalesce()
        return SparseCooTensor(c._indices_t, c._values_t.pow(exponent), self._size, True)

    __pow__ = pow

    def index_select(self, dim, index):
        """The slices index names along dim: for each entry of index in turn, the stored elements at that
        position, in their order (torch's order; the result is not coalesced)."""
        d = _wrap_dim(dim, self.dim(), "index_select")
        size = list(self._size)
        size[d] = index.numel()
        sd = self.sparse_dim()
        if d >= sd:
            return SparseCooTensor(self._indices_t, self._values_t.index_select(d - sd + 1, index), size,
                                   self._coalesced)
        pairs = (self._indices_t[d].unsqueeze(0) == index.reshape(-1, 1)).nonzero()
        which, k = pairs[:, 0], pairs[:, 1]
        indices = self._indices_t.index_select(1, k).clone()
        indices[d] = which
        return SparseCooTensor(indices, self._values_t.index_select(0, k), size, False)

    __truediv__ = div

    def __neg__(self):
        return self._with_values(-self._values_t)

    def _coalesced_unary(self, name):
        c = self.coalesce()
        return SparseCooTensor(c._indices_t, getattr(c._values_t, name)(), self._size, True)

    def abs(self):
        return self._coalesced_unary("abs")

    def sqrt(self):
        return self._coalesced_unary("sqrt")

    def sin(self):
        return self._coalesced_unary("sin")

    def tan(self):
        return self._coalesced_unary("tan")

    def tanh(self):
        return self._coalesced_unary("tanh")

    def sign(self):
        return self._coalesced_unary("sign")

    def expm1(self):
        return self._coalesced_unary("expm1")

    def log1p(self):
        return self._coalesced_unary("log1p")

    def relu(self):
        return self._coalesced_unary("relu")

    def neg(self):
        return -self

    def add(self, other, *, alpha=1):
        """sparse + sparse of one size (the entries of both, uncoalesced), or sparse + dense (dense)."""
        if isinstance(other, SparseCooTensor):
            if not (self.requires_grad or other.requires_grad):  # torch's CPU rule (merge or concatenation)
                from ._grad import add_sparse
                return add_sparse(self, other, alpha)
            if other.shape != self.shape:
                raise RuntimeError(f"add: expected sizes of 'self' and 'other' to match, but {list(self.shape)} "
                                   f"!= {list(other.shape)}")
            values = other._values_t if alpha == 1 else other._values_t * alpha
            return SparseCooTensor(_C.cat([self._indices_t, other._indices_t], 1),
                                   _C.cat([self._values_t, values.to(self.dtype)], 0), self._size, False)
        if isinstance(other, _C.TensorBase):
            return _C.add(self.to_dense(), other, alpha=alpha)
        raise _unsupported("add (sparse_coo and a number)")

    __add__ = add

    def __radd__(self, other):
        return self.add(other)

    def __sub__(self, other):
        return self.add(other, alpha=-1)

    # ---- what torch refuses too ----
    def __bool__(self):
        if self.numel() != 1:
            raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
        return bool(self.to_dense().item())

    def __iter__(self):
        raise _unsupported("__iter__")

    def __getitem__(self, index):
        raise _unsupported("index (__getitem__)")

    def __setitem__(self, index, value):
        raise _unsupported("index_put_ (__setitem__)")

    def __array__(self, dtype=None):
        raise TypeError("can't convert a sparse_coo tensor to a NumPy array: use .to_dense().numpy()")

    def numpy(self):
        raise TypeError("can't convert a sparse_coo tensor to a NumPy array: use .to_dense().numpy()")

    def __reduce_ex__(self, proto):
        # By value, torch's (indices, values, size); requires_grad is not kept, as torch. The coalesced
        # flag is kept, as torch 2.x (1.13 drops it: a coalesced tensor comes back uncoalesced).
        return (_rebuild_sparse, (self._indices_t.detach(), self._values_t.detach(), tuple(self._size),
                                  self._coalesced))

    def __getattr__(self, name):
        # Any other Tensor method (exp, view, sum_to_size...) exists only for dense tensors.
        from .._tensor import Tensor
        if not name.startswith("__") and hasattr(Tensor, name):
            raise _unsupported(name)
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    __hash__ = object.__hash__


SparseCooTensor.__module__ = "kiln.sparse"


# ---------------------------------------------------------------- construction

def sparse_coo_tensor(indices, values, size=None, *, dtype=None, device=None, requires_grad=False):
    """torch.sparse_coo_tensor: indices (sparse_dim x nnz, cast to int64), values (nnz x dense sizes) and
    the size (inferred when omitted: one past the largest index of each sparse dim, then the values'
    dense sizes). The result is not coalesced; the values are used as given (no copy) unless dtype= casts
    them; requires_grad=True makes them a leaf that requires grad."""
    if device is not None:
        from .._device import check_cpu
        check_cpu(device)
    indices = _as_tensor(indices)
    values = _as_tensor(values, dtype)
    if indices.dim() != 2:
        raise RuntimeError(f"indices must be sparse_dim x nnz, but got: {list(indices.shape)}")
    if indices.dtype != _C.int64:
        indices = indices.to(_C.int64)
    if values.dim() == 0:
        raise RuntimeError("values must be at least 1-dimensional (nnz x dense sizes), got a 0-dim tensor")
    sparse_dim, nnz = indices.shape
    if values.shape[0] != nnz:
        raise RuntimeError(f"indices and values must have same nnz, but got nnz from indices: {nnz}, nnz from "
                           f"values: {values.shape[0]}")
    if nnz and bool((indices < 0).any()):
        d = int((indices < 0).any(1).nonzero()[0, 0])
        raise RuntimeError(f"found negative index {int(indices[d].min())} for dim {d}")
    dense_sizes = list(values.shape[1:])
    max_index = [int(indices[d].max()) if nnz else -1 for d in range(sparse_dim)]
    if size is None:
        size = [m + 1 for m in max_index] + dense_sizes
    else:
        size = [int(s) for s in size]
        if len(size) != sparse_dim + len(dense_sizes):
            raise RuntimeError(f"number of dimensions must be sparse_dim ({sparse_dim}) + dense_dim "
                               f"({len(dense_sizes)}), but got {len(size)}")
        if any(s < 0 for s in size):
            raise RuntimeError(f"sparse_coo_tensor(): negative size in {size}")
        for d in range(sparse_dim):
            if max_index[d] >= size[d]:
                raise RuntimeError(f"size is inconsistent with indices: for dim {d}, size is {size[d]} but found "
                                   f"index {max_index[d]}")
        if size[sparse_dim:] != dense_sizes:
            raise RuntimeError(f"values has incorrect size, expected {[nnz] + size[sparse_dim:]}, got "
                               f"{list(values.shape)}")
    if requires_grad:
        if not values.is_floating_point():
            raise RuntimeError("Only Tensors of floating point dtype can require gradients")
        values = values.detach().requires_grad_()
    return SparseCooTensor(indices, values, size, coalesced=False)


def to_sparse(dense, sparse_dim=None):
    """Tensor.to_sparse(): the nonzero elements (coalesced); with sparse_dim=k < dim, the trailing dims
    stay dense and a slice is stored when any of its elements is nonzero."""
    n = dense.dim()
    k = n if sparse_dim is None else int(sparse_dim)
    if not 0 <= k <= n:
        raise RuntimeError(f"sparse_dim must be in [0, {n}], got {sparse_dim}")
    mask = dense.ne(0)
    if k < n:
        mask = mask.sum(list(range(k, n))).ne(0) if k > 0 else mask.any().reshape([1])
    indices = mask.nonzero().t().contiguous() if k > 0 else _C.zeros([0, int(mask.sum())], dtype=_C.int64)
    values = dense[tuple(indices[d] for d in range(k))] if k > 0 else dense.unsqueeze(0)[:indices.shape[1]]
    return SparseCooTensor(indices, values, list(dense.shape), coalesced=True)


# ---------------------------------------------------------------- products and sums

def mm(mat1, mat2):
    """sparse (2 sparse dims) x dense matrix -> dense: one index_add of value * row of mat2 per stored
    element, in their order (torch's CPU loop's order). Differentiable in both; the values' gradient is
    the sparse gradient with mat1's pattern."""
    if not isinstance(mat1, SparseCooTensor):
        if isinstance(mat2, SparseCooTensor):
            raise _unsupported("mm (dense x sparse_coo)")
        return _C.mm(mat1, mat2)
    if isinstance(mat2, SparseCooTensor):
        raise _unsupported("mm (sparse_coo x sparse_coo)")
    if mat1.dim() != 2 or mat1.sparse_dim() != 2:
        raise RuntimeError(f"addmm: matrices expected, got {mat1.dim()}D tensor" if mat1.dim() != 2 else
                           "mm: a sparse matrix with 2 sparse dims expected (dense_dim must be 0)")
    if not isinstance(mat2, _C.TensorBase):
        raise TypeError(f"mm(): argument 'mat2' (position 2) must be Tensor, not {type(mat2).__name__}")
    if mat2.dim() != 2:
        raise RuntimeError(f"addmm: matrices expected, got {mat2.dim()}D tensor")
    if mat2.shape[0] != mat1.shape[1]:
        raise RuntimeError(f"addmm: Argument #3 (dense): Expected dim 0 size {mat1.shape[1]}, got {mat2.shape[0]}")
    if mat2.dtype != mat1.dtype:
        raise RuntimeError(f"expected scalar type {_legacy(mat1.dtype)} but found {_legacy(mat2.dtype)}")
    rows, cols = mat1._indices_t[0], mat1._indices_t[1]
    out = _C.zeros([mat1.shape[0], mat2.shape[1]], dtype=mat2.dtype)
    if mat1._nnz() == 0:
        return out
    return out.index_add(0, rows, mat1._values_t.unsqueeze(1) * mat2.index_select(0, cols))


def matmul(input, other):
    """matmul with a sparse first operand: sparse matrix x dense matrix or vector."""
    if not isinstance(input, SparseCooTensor):
        if isinstance(other, SparseCooTensor):
            raise _unsupported("matmul (dense x sparse_coo)")
        return _C.matmul(input, other)
    if isinstance(other, _C.TensorBase) and other.dim() == 1:
        return mm(input, other.unsqueeze(1)).squeeze(1)
    return mm(input, other)


def sparse_sum(input, dim=None, dtype=None):
    """torch.sparse.sum: over every dim a dense 0-dim sum; over some dims, a sparse tensor of the sparse
    dims that remain (coalesced), or a dense one when no sparse dim remains."""
    values = input._values_t if dtype is None else input._values_t.to(dtype)
    if dim is None:
        return values.sum()
    n, sd = input.dim(), input.sparse_dim()
    dims = sorted({_wrap_dim(d, n, "sparse.sum") for d in (dim if isinstance(dim, (list, tuple)) else [dim])})
    dense_dims = [d - sd + 1 for d in dims if d >= sd]
    if dense_dims:
        values = values.sum(dense_dims)
    kept = [d for d in range(sd) if d not in dims]
    size = [input.shape[d] for d in range(n) if d not in dims]
    if not kept:
        return values.sum(0)
    return SparseCooTensor(input._indices_t[kept], values, size, False).coalesce()


# ---------------------------------------------------------------- helpers

def _unique_positions(s):
    """The distinct row-major positions of s's entries (sorted) and, per entry, the number of its own."""
    from .._functional import unique
    return unique(_linear_index(s._indices_t, s._sparse_sizes()), sorted=True, return_inverse=True)


def _prod(sizes):
    n = 1
    for s in sizes:
        n *= s
    return n


def _linear_index(indices, sparse_sizes):
    """Each column of indices as its row-major position among the sparse dims."""
    linear = indices[0].clone() if len(sparse_sizes) else _C.zeros([indices.shape[1]], dtype=_C.int64)
    for d in range(1, len(sparse_sizes)):
        linear = linear * sparse_sizes[d] + indices[d]
    return linear


def _unravel(linear, sparse_sizes):
    rows = []
    for s in reversed(sparse_sizes):
        rows.append(_C.remainder(linear, s))
        linear = _C.div(linear, s, rounding_mode="floor")
    return _C.stack(rows[::-1], 0) if rows else _C.zeros([0, linear.shape[0]], dtype=_C.int64)


def _wrap_dim(dim, n, op):
    if not -n <= dim < max(n, 1):
        raise IndexError(f"{op}(): Dimension out of range (expected to be in range of [{-max(n, 1)}, "
                         f"{max(n, 1) - 1}], but got {dim})")
    return dim + n if dim < 0 else dim


def _is_scalar_like(x):
    if isinstance(x, numbers.Number) and not isinstance(x, complex):
        return True
    return isinstance(x, _C.TensorBase) and x.dim() == 0


def _legacy(dtype):
    from .._tensor import _LEGACY_DTYPES
    return _LEGACY_DTYPES[str(dtype).split(".")[1]]


def _rebuild_sparse(indices, values, size, coalesced):
    """What pickle calls to rebuild a SparseCooTensor (its __reduce_ex__)."""
    return SparseCooTensor(indices, values, list(size), coalesced)
