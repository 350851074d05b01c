"""Records of the shape ops: views (view, transpose, expand, select, slice, unsqueeze, squeeze,
permute, as_strided, detach, t, movedim, narrow), reshapes that may copy (reshape, flatten,
unflatten, contiguous), joins (cat, stack) and the gradient ops select_backward and slice_backward."""
from functools import reduce

import numpy as np

from .record import ALL, SHAPES, DType, ErrorInput, OpRecord, Sample, promote, values

FAMILY = "shape"


def _wrap(dim, ndim):
    """A dim as PyTorch wraps it (a 0-dim tensor takes dims 0 and -1)."""
    n = max(ndim, 1)
    return dim + n if dim < 0 else dim


def _expanded(dtype, base_shape, shape, seed=0):
    """A stride-0 (expanded) array: the harness keeps it expanded in kiln."""
    return np.broadcast_to(values(base_shape, dtype, seed=seed), shape)


def _sized(cases):
    """Samples (array shape, *args) for ops taking one tensor and plain arguments."""
    def samples(dtype):
        return [Sample((values(shape, dtype, seed=i),) + tuple(args), note=f"shape {shape}, {args}")
                for i, (shape, *args) in enumerate(cases)]
    return samples


# ----------------------------------------------------------------------------- view
# The harness re-lays each sample out non-contiguously by taking every other row of the first
# dim longer than 1. view (as torch) refuses to merge that dim with the next one, so the view
# samples split dims, merge dims after it, and add or drop size-1 dims; the refusal itself is
# an error input. Merging every dim of a contiguous tensor is sampled by reshape and flatten.
_VIEW_CASES = [
    ((2, 3, 4), [2, 12]),
    ((2, 3, 4), [2, -1]),
    ((2, 3, 4), [2, 3, 2, 2]),
    ((2, 3, 4), [1, 2, 1, 12, 1]),
    ((3, 4), [3, 2, 2]),
    ((3, 4), [3, 4, 1]),
    ((3, 4), [1, 3, 4]),
    ((1, 6), [6]),           # merging the leading size-1 dim: viewable in both layouts
    ((1, 6), [2, 3]),        # splitting a strided dim
    ((1, 6), [-1]),
    ((5,), [5, 1]),
    ((5,), [1, 5]),
    ((), []),
    ((), [1]),
    ((), [-1]),
    ((), [1, 1, 1]),
    ((0,), [0, 5]),
    ((0,), [-1]),
    ((2, 0, 3), [0, 6]),
    ((2, 0, 3), [-1, 3]),
    ((2, 0, 3), [3, 0, 2, 1]),
]


def _view_samples(dtype):
    out = _sized(_VIEW_CASES)(dtype)
    out.append(Sample((_expanded(dtype, (3, 1), (3, 4)), [3, 4, 1]), note="expanded self"))
    out.append(Sample((_expanded(dtype, (1, 4), (3, 4)), [3, 2, 2]), note="expanded self, split"))
    return out


def _view_ref(a, size):
    return np.reshape(a, size)


def _view_errors():
    return [
        ErrorInput(lambda k: k.ones(3, 4).t().view(12), RuntimeError, "view size is not compatible",
                   "merging dims of a transposed tensor"),
        ErrorInput(lambda k: k.zeros(6, 4)[::2].view(12), RuntimeError, "view size is not compatible",
                   "merging every other row with its columns (the harness's non-contiguous layout)"),
        ErrorInput(lambda k: k.ones(3, 4).view(5), RuntimeError, r"shape '\[5\]' is invalid for input of size 12",
                   "wrong numel"),
        ErrorInput(lambda k: k.ones(3, 4).view(-1, -1), RuntimeError, "only one dimension can be inferred",
                   "two -1 sizes"),
    ]


# ----------------------------------------------------------------------------- transpose, permute, t, movedim
_TRANSPOSE_CASES = [((3, 4), 0, 1), ((3, 4), 1, 0), ((2, 3, 4), 0, -1), ((2, 3, 4), -2, 2), ((2, 3, 4), 1, 1),
                    ((5,), 0, -1), ((), 0, -1), ((), 0, 0), ((2, 0, 3), 0, 2), ((0,), 0, 0)]


def _movedim_ref(a, source, destination):
    return a if a.ndim == 0 else np.moveaxis(a, source, destination)


def _movedim_list_ref(a, source, destination):
    return a if a.ndim == 0 else np.moveaxis(a, source, destination)


_MOVEDIM_LIST_CASES = [((2, 3, 4), [0, 1], [2, 0]), ((2, 3, 4, 5), [3, 0], [0, -1]), ((2, 3, 4), [], []),
                       ((2, 3), [0, 1], [1, 0]), ((), [0], [0]), ((2, 0, 3), [2], [0])]


def _view_dtype_ref(a, dtype):
    # `dtype` is a NumPy dtype and floating inputs arrive widened to float64, so the float samples
    # (and bool) view their tensor as its own dtype: the same values.
    if (a.dtype.kind == "f" and np.dtype(dtype).kind == "f") or a.dtype == np.bool_:
        return a.copy()
    a = np.array(a, order="C")
    if a.ndim == 0:
        return a.reshape(1).view(np.dtype(dtype)).reshape(())
    return a.view(np.dtype(dtype))


def _view_dtype_samples(dtype):
    # (float32 arrives at the reference as float64, so its samples view it as itself; int32 covers
    # the 4-byte reinterpretation.)
    same_size = {"float32": "float32", "int32": "float32", "float64": "int64", "int64": "float64",
                 "uint8": "int8", "int8": "bool", "int16": "int16",
                 "float16": "float16", "bfloat16": "bfloat16", "bool": "bool"}
    other = same_size[dtype]
    out = [Sample((values(s, dtype), DType(other)), note=f"shape {s} as {other}") for s in [(), (0,), (3, 4)]]
    if dtype in ("float64", "int64"):  # 8-byte elements read as pairs of 4-byte ones
        out.append(Sample((values((3, 4), dtype), DType("int32")), note="(3, 4) as int32: the last dim doubles"))
    return out


def _view_dtype_errors():
    e = ErrorInput
    return [e(lambda k: k.ones(3, 4, dtype=k.float64).t().view(k.int32), RuntimeError, "stride\\(-1\\) must be 1",
              "transposed, other element size"),
            e(lambda k: k.ones(3, dtype=k.int32).view(k.float64), RuntimeError, "must be divisible",
              "odd last dim into a wider dtype"),
            e(lambda k: k.tensor(1.0, dtype=k.float64).view(k.int32), RuntimeError, "cannot be 0", "0-dim, other size")]


def _transpose_ref(a, d0, d1):
    return a if a.ndim == 0 else np.swapaxes(a, d0, d1)


_PERMUTE_CASES = [((2, 3, 4), [2, 0, 1]), ((2, 3, 4), [-1, 0, -2]), ((2, 3, 4), [0, 1, 2]), ((3, 4), [1, 0]),
                  ((5,), [0]), ((5,), [-1]), ((), []), ((2, 0, 3), [1, 2, 0]), ((1, 3, 1), [2, 1, 0])]


def _permute_errors():
    return [ErrorInput(lambda k: k.permute(k.ones(3, 4), [0, 0]), RuntimeError, "repeated dim", "repeated dim"),
            ErrorInput(lambda k: k.permute(k.ones(3, 4), [0]), RuntimeError, "number of dims don't match",
                       "too few dims")]


_T_CASES = [((3, 4),), ((1, 4),), ((5,),), ((),), ((0, 3),), ((2, 0),), ((0,),)]


def _t_errors():
    return [ErrorInput(lambda k: k.t(k.ones(2, 3, 4)), RuntimeError, "expects a tensor with <= 2 dimensions",
                       "3-D input")]


_MOVEDIM_CASES = [((2, 3, 4), 0, -1), ((2, 3, 4), -1, 0), ((2, 3, 4), 1, 1), ((2, 3, 4), 2, 1), ((3, 4), 0, 1),
                  ((5,), 0, -1), ((), 0, 0), ((), -1, 0), ((2, 0, 3), 2, 0)]


# ----------------------------------------------------------------------------- expand
def _expand_samples(dtype):
    cases = [((3, 1), [3, 4]), ((3, 1), [-1, 5]), ((1, 4), [2, 3, 4]), ((1, 4), [2, -1, -1]), ((4,), [3, 4]),
             ((2, 1, 3), [2, 4, 3]), ((3, 4), [3, 4]), ((), [2, 3]), ((), []), ((), [1]), ((3, 1), [3, 0]),
             ((0,), [2, 0]), ((2, 0, 1), [2, 0, 5])]
    out = _sized(cases)(dtype)
    out.append(Sample((_expanded(dtype, (3, 1), (3, 4)), [2, 3, 4]), note="expanded self, expanded again"))
    return out


def _expand_ref(a, size, implicit=False):
    lead = len(size) - a.ndim
    shape = [a.shape[i - lead] if s == -1 else s for i, s in enumerate(size)]
    return np.broadcast_to(a, shape)


def _expand_errors():
    return [
        ErrorInput(lambda k: k.ones(3, 4).expand(2, 4), RuntimeError, "must match the existing size",
                   "non-singleton dim changed"),
        ErrorInput(lambda k: k.ones(3, 4).expand(4), RuntimeError, "number of sizes provided", "too few sizes"),
        ErrorInput(lambda k: k.ones(3, 4).expand(-1, 3, 4), RuntimeError, "leading, non-existing dimension",
                   "-1 in a new leading dim"),
    ]


# ----------------------------------------------------------------------------- select, slice, narrow
_SELECT_CASES = [((3, 4), 0, 1), ((3, 4), 1, -1), ((3, 4), -1, 0), ((2, 3, 4), -2, 2), ((2, 3, 4), 2, -4),
                 ((5,), 0, -5), ((5,), 0, 4), ((2, 0, 3), 0, 1), ((2, 0, 3), 2, -1)]


def _select_ref(a, dim, index):
    return np.take(a, index, axis=dim)


def _select_errors():
    return [
        ErrorInput(lambda k: k.select(k.tensor(1.0), 0, 0), IndexError, "cannot be applied to a 0-dim tensor",
                   "0-dim self"),
        ErrorInput(lambda k: k.select(k.ones(3, 4), 1, 4), IndexError, "index 4 out of range", "index == size"),
        ErrorInput(lambda k: k.select(k.ones(3, 4), 1, -5), IndexError, "index -5 out of range", "index < -size"),
        ErrorInput(lambda k: k.select(k.ones(0, 4), 0, 0), IndexError, "out of range", "index into an empty dim"),
    ]


def _slice_samples(dtype):
    x5, x34, x234 = values((5,), dtype), values((3, 4), dtype, seed=1), values((2, 3, 4), dtype, seed=2)
    return [
        Sample((x5,), note="defaults: the whole tensor"),
        Sample((x5, 0, 1, 4), note="1:4"),
        Sample((x5, 0, -3), note="-3: (end None)"),
        Sample((x5, 0, None, -1), note=":-1"),
        Sample((x5, 0, 1, 100), note="end past the size clamps"),
        Sample((x5, 0, -100, 2), note="start before 0 clamps"),
        Sample((x5, 0, 4, 1), note="start > end: empty"),
        Sample((x5, 0, 5, 5), note="start == size: empty"),
        Sample((x34, 1, -3, None, 2), note="dim 1, step 2"),
        Sample((x34,), dict(dim=1, start=1, step=3), note="kwargs, step 3"),
        Sample((x34, -2, 0, 2), note="negative dim"),
        Sample((x234, -1, -10, -1, 3), note="3-D, step 3"),
        Sample((x234, 1, 1, 2), note="3-D, one row"),
        Sample((values((2, 0, 3), dtype), 1, 0, 1), note="zero-size dim"),
        Sample((values((2, 0, 3), dtype), 2, 1, None, 2), note="zero-size tensor"),
        Sample((_expanded(dtype, (3, 1), (3, 4)), 1, 1, 3), note="expanded self"),
    ]


def _slice_ref(a, dim=0, start=None, end=None, step=1):
    return a[(slice(None),) * _wrap(dim, a.ndim) + (slice(start, end, step),)]


def _slice_errors():
    return [
        ErrorInput(lambda k: k.slice(k.tensor(1.0), 0, 0, 1), IndexError, "cannot be applied to a 0-dim tensor",
                   "0-dim self"),
        ErrorInput(lambda k: k.slice(k.ones(5), 0, 0, 5, 0), RuntimeError, "step must be positive", "step 0"),
        ErrorInput(lambda k: k.slice(k.ones(5), 0, 0, 5, -1), RuntimeError, "step must be positive",
                   "negative step"),
    ]


_NARROW_CASES = [((5,), 0, 1, 3), ((5,), 0, -2, 2), ((5,), -1, 0, 5), ((3, 4), 1, 0, 0), ((3, 4), -1, 4, 0),
                 ((3, 4), 0, -3, 1), ((2, 3, 4), 1, 1, 2), ((2, 3, 4), 2, -4, 3), ((2, 0, 3), 1, 0, 0),
                 ((2, 0, 3), 2, 1, 2)]


def _narrow_ref(a, dim, start, length):
    d = _wrap(dim, a.ndim)
    start = start + a.shape[d] if start < 0 else start
    return a[(slice(None),) * d + (slice(start, start + length),)]


def _narrow_errors():
    return [
        ErrorInput(lambda k: k.narrow(k.tensor(1.0), 0, 0, 1), RuntimeError, "cannot be applied to a 0-dim tensor",
                   "0-dim self"),
        ErrorInput(lambda k: k.narrow(k.ones(3, 4), 1, 2, 3), RuntimeError, r"start \(2\) \+ length \(3\) exceeds",
                   "start + length past the end"),
        ErrorInput(lambda k: k.narrow(k.ones(3, 4), 1, -5, 1), IndexError, "start out of range", "start < -size"),
        ErrorInput(lambda k: k.narrow(k.ones(3, 4), 1, 5, 0), IndexError, "start out of range", "start > size"),
        ErrorInput(lambda k: k.narrow(k.ones(3, 4), 1, 0, -1), RuntimeError, "length must be non-negative",
                   "negative length"),
    ]


# ----------------------------------------------------------------------------- unsqueeze, squeeze
_UNSQUEEZE_CASES = [((), 0), ((), -1), ((5,), 0), ((5,), 1), ((5,), -1), ((5,), -2), ((3, 4), 1), ((2, 3, 4), 3),
                    ((2, 3, 4), -4), ((2, 0, 3), 1), ((0,), 0)]


def _squeeze_samples(dtype):
    return [Sample((values(s, dtype),), note=f"shape {s}")
            for s in [(1, 3, 1, 4), (1,), (1, 1), (), (5,), (3, 4), (2, 0, 1), (1, 0), (1, 1, 3)]]


_SQUEEZE_DIM_CASES = [((1, 3, 1, 4), 0), ((1, 3, 1, 4), 2), ((1, 3, 1, 4), -2), ((1, 3, 1, 4), 1), ((1,), 0),
                      ((1,), -1), ((), 0), ((), -1), ((5,), 0), ((2, 0, 1), -1), ((2, 0, 1), 1), ((1, 0), 0)]


def _squeeze_dim_ref(a, dim):
    if a.ndim == 0 or a.shape[_wrap(dim, a.ndim)] != 1:
        return a
    return np.squeeze(a, axis=dim)


# ----------------------------------------------------------------------------- as_strided
def _as_strided_samples(dtype):
    x34 = values((3, 4), dtype)
    return [
        Sample((x34, [2, 2], [1, 2]), note="a sub-grid"),
        Sample((x34, [4, 3], [1, 4]), note="the transpose"),
        Sample((x34, [3, 3], [1, 1], 1), note="overlapping windows, offset 1"),
        Sample((x34, [2, 3], [0, 2], 2), note="stride 0: rows repeated, offset 2"),
        Sample((x34, [12], [1]), note="the whole storage"),
        Sample((values((12,), dtype, seed=1), [3, 4], [4, 1]), note="1-D to 2-D"),
        Sample((values((2, 3, 4), dtype, seed=2), [2, 2, 2], [12, 4, 2], 1), note="3-D, offset 1"),
        Sample((values((5,), dtype), [], [], 2), note="a 0-dim view at offset 2"),
        Sample((values((), dtype), [], []), note="0-dim self"),
        Sample((values((), dtype), [2], [0]), note="0-dim self, stride 0"),
        Sample((values((2, 0, 3), dtype), [0, 2], [1, 1]), note="zero-size self, zero-size view"),
        Sample((x34, [3, 0], [4, 1], 11), note="zero-size view at the last offset"),
    ]


def _as_strided_ref(a, size, stride, storage_offset=None):
    """On a contiguous copy of a: its storage is its elements in order (NumPy strides are bytes)."""
    flat = np.ascontiguousarray(a).reshape(-1)[storage_offset or 0:]
    return np.lib.stride_tricks.as_strided(flat, shape=size, strides=[s * flat.itemsize for s in stride]).copy()


def _as_strided_errors():
    return [
        ErrorInput(lambda k: k.as_strided(k.ones(3, 4), [4, 4], [4, 1]), RuntimeError, "out of bounds for storage",
                   "past the storage"),
        ErrorInput(lambda k: k.as_strided(k.ones(3, 4), [2, 2], [-1, 1]), RuntimeError, "negative strides",
                   "negative stride"),
    ]


# ----------------------------------------------------------------------------- reshape, flatten, unflatten
_RESHAPE_CASES = [((2, 3, 4), [4, 6]), ((2, 3, 4), [-1]), ((2, 3, 4), [24]), ((2, 3, 4), [2, -1, 2]),
                  ((3, 4), [12]), ((3, 4), [4, 3]), ((3, 4), [2, 1, 6]), ((), []), ((), [1, 1]), ((), [-1]),
                  ((5,), [5, 1]), ((2, 0, 3), [3, 0, 2]), ((2, 0, 3), [-1, 3]), ((0,), [0, 4])]


def _reshape_samples(dtype):
    out = _sized(_RESHAPE_CASES)(dtype)
    out.append(Sample((_expanded(dtype, (3, 1), (3, 4)), [12]), note="expanded self: copies"))
    out.append(Sample((_expanded(dtype, (3, 1), (3, 4)), [3, 2, 2]), note="expanded self: a view"))
    return out


def _reshape_errors():
    return [ErrorInput(lambda k: k.reshape(k.ones(3, 4), [5]), RuntimeError, "is invalid for input of size 12",
                       "wrong numel")]


_FLATTEN_CASES = [((2, 3, 4),), ((2, 3, 4), 1), ((2, 3, 4), 0, 1), ((2, 3, 4), -2, -1), ((2, 3, 4), 1, 1),
                  ((2, 3, 4), 0, -1), ((3, 4),), ((5,),), ((),), ((), 0, -1), ((2, 0, 3), 0, 1), ((2, 0, 3),)]


def _flatten_ref(a, start_dim=0, end_dim=-1):
    if a.ndim == 0:
        return a.reshape(1)
    s, e = _wrap(start_dim, a.ndim), _wrap(end_dim, a.ndim)
    return a.reshape(a.shape[:s] + (int(np.prod(a.shape[s:e + 1], dtype=np.int64)),) + a.shape[e + 1:])


def _flatten_samples(dtype):
    out = _sized(_FLATTEN_CASES)(dtype)
    out.append(Sample((_expanded(dtype, (3, 1), (3, 4)),), note="expanded self: copies"))
    return out


def _flatten_errors():
    return [ErrorInput(lambda k: k.flatten(k.ones(2, 3, 4), 2, 1), RuntimeError,
                       "start_dim cannot come after end_dim", "start_dim > end_dim")]


# The zero-size case comes first: test_op_errors.py's overflowing `sizes` ([2**40] * 3) replace the
# first sample's, and only over a dim of size 0 does their wrapped product (0) pass the "multiply up"
# check and reach view's overflow check (over a dim of 12 both kiln and torch say "don't multiply up").
_UNFLATTEN_CASES = [((2, 0, 3), 1, [0, 5]), ((2, 12), 1, [3, 4]), ((2, 12), -1, [2, -1, 3]), ((6,), 0, [2, 3]),
                    ((6,), 0, [6]), ((6,), -1, [-1, 1]), ((3, 4), 0, [1, 3, 1]), ((2, 0, 3), 2, [3, 1]),
                    ((2, 0, 3), 2, [-1, 3])]


def _unflatten_ref(a, dim, sizes):
    d = _wrap(dim, a.ndim)
    known = int(np.prod([s for s in sizes if s != -1], dtype=np.int64))
    sizes = tuple(a.shape[d] // known if s == -1 else s for s in sizes)  # NumPy cannot infer -1 at size 0
    return a.reshape(a.shape[:d] + sizes + a.shape[d + 1:])


def _unflatten_errors():
    return [
        ErrorInput(lambda k: k.unflatten(k.tensor(1.0), 0, [1]), IndexError, "Dimension specified as 0 but tensor "
                   "has no dimensions", "0-dim self (torch: IndexError)"),
        ErrorInput(lambda k: k.unflatten(k.ones(3, 4), 1, [3, 2]), RuntimeError, "don't multiply up",
                   "sizes of the wrong product"),
        ErrorInput(lambda k: k.unflatten(k.ones(3, 4), 1, [-1, -1]), RuntimeError, "only one dimension can be inferred",
                   "two -1 sizes"),
        ErrorInput(lambda k: k.unflatten(k.ones(3, 4), 1, []), RuntimeError, "sizes must be non-empty", "no sizes"),
    ]


# ----------------------------------------------------------------------------- cat, stack
def _cat_samples(dtype):
    v = lambda shape, seed=0, d=dtype: values(shape, d, seed=seed)  # noqa: E731
    out = [
        Sample(([v((2, 3)), v((4, 3), 1)],), note="dim 0"),
        Sample(([v((2, 3)), v((2, 1), 1), v((2, 4), 2)], 1), note="three, dim 1"),
        Sample(([v((2, 3, 4)), v((2, 3, 2), 1)],), dict(dim=-1), note="dim -1 (kwarg)"),
        Sample(([v((2, 3, 4)), v((2, 1, 4), 1)], -2), note="dim -2"),
        Sample(([v((5,)), v((5,), 1)],), note="1-D"),
        Sample(([v((3, 4))],), note="one tensor"),
        Sample(([v((2, 0, 3)), v((2, 2, 3), 1)], 1), note="a zero-size part"),
        Sample(([v((0, 3)), v((2, 3), 1), v((0, 3), 2)],), note="zero-size parts around"),
        Sample(([v((2, 0)), v((2, 0), 1)], 1), note="all zero-size"),
        Sample(([v((2, 3)), v((0,), 1)], 1), note="legacy: a 1-D empty part is skipped"),
        Sample(([v((0,)), v((2, 3), 1), v((0,), 2)],), note="legacy: 1-D empty parts first and last"),
        Sample(([v((0,)), v((0,), 1)],), note="all 1-D empty"),
        Sample(([_expanded(dtype, (3, 1), (3, 4)), v((1, 4), 1)],), note="an expanded part"),
    ]
    for d2 in ALL:  # cat promotes
        if d2 != dtype:
            out.append(Sample(([v((2, 3)), v((1, 3), 1, d2)],), note=f"{dtype} with {d2}"))
    out.append(Sample(([v((2, 3)), v((0,), 1, "float64" if dtype != "float64" else "int32")], 1),
                      note="a skipped legacy empty part still takes part in promotion"))
    return out


def _legacy_empty(a):
    return a.ndim == 1 and a.shape[0] == 0


def _cat_ref(tensors, dim=0):
    kept = [a for a in tensors if not _legacy_empty(a)]
    if not kept:
        return np.concatenate(tensors)
    return np.concatenate(kept, axis=_wrap(dim, kept[0].ndim))


def _list_result(sample, dtype):
    """cat and stack promote over every tensor of the list (skipped legacy empties included)."""
    return reduce(promote, [a.dtype.name for a in sample.args[0]])


def _cat_errors():
    return [
        ErrorInput(lambda k: k.cat([k.tensor(1.0), k.tensor(2.0)]), RuntimeError,
                   "zero-dimensional tensor .* cannot be concatenated", "0-dim parts"),
        ErrorInput(lambda k: k.cat([k.ones(2, 3), k.ones(3, 3)], 1), RuntimeError,
                   "Sizes of tensors must match except in dimension 1", "sizes differ off the cat dim"),
        ErrorInput(lambda k: k.cat([k.ones(2, 3), k.ones(2)]), RuntimeError,
                   "Tensors must have same number of dimensions", "ranks differ (and the 1-D part is not empty)"),
        ErrorInput(lambda k: k.cat([]), RuntimeError, "expected a non-empty list of Tensors", "empty list"),
    ]


def _stack_samples(dtype):
    v = lambda shape, seed=0, d=dtype: values(shape, d, seed=seed)  # noqa: E731
    out = [
        Sample(([v((3, 4)), v((3, 4), 1)],), note="dim 0"),
        Sample(([v((3, 4)), v((3, 4), 1)], 1), note="dim 1"),
        Sample(([v((3, 4)), v((3, 4), 1), v((3, 4), 2)], 2), note="three, dim 2"),
        Sample(([v((3, 4)), v((3, 4), 1)],), dict(dim=-1), note="dim -1 (kwarg)"),
        Sample(([v((3, 4)), v((3, 4), 1)], -3), note="dim -3"),
        Sample(([v((5,))],), note="one tensor"),
        Sample(([v(()), v((), 1), v((), 2)],), note="0-dim parts"),
        Sample(([v(()), v((), 1)], -1), note="0-dim parts, dim -1"),
        Sample(([v((2, 0)), v((2, 0), 1)], 1), note="zero-size parts"),
        Sample(([v((0,)), v((0,), 1)],), note="1-D empty parts (not skipped by stack)"),
        Sample(([_expanded(dtype, (3, 1), (3, 4)), v((3, 4), 1)], 1), note="an expanded part"),
    ]
    for d2 in ALL:
        if d2 != dtype:
            out.append(Sample(([v((2, 3)), v((2, 3), 1, d2)],), note=f"{dtype} with {d2}"))
    return out


def _stack_ref(tensors, dim=0):
    return np.stack(tensors, axis=_wrap(dim, tensors[0].ndim + 1))


def _stack_errors():
    return [
        ErrorInput(lambda k: k.stack([k.ones(2), k.ones(3)]), RuntimeError,
                   "stack expects each tensor to be equal size", "sizes differ"),
        ErrorInput(lambda k: k.stack([]), RuntimeError, "stack expects a non-empty TensorList", "empty list"),
    ]



# ----------------------------------------------------------------------------- hstack, vstack, dstack, column_stack
# Parts of mixed ranks each op joins (besides the equal-shape parts every one of them joins).
_JOINED_MIXED = {
    "hstack": [[(), (2,), ()], [(2, 3), (2, 1)], [(2, 1, 3), (2, 2, 3)]],
    "vstack": [[(3,), (2, 3)], [(1, 3), (3,)], [(), (1, 1)]],
    "dstack": [[(2, 3), (2, 3, 2)], [(3,), (1, 3, 2)], [(), (1, 1, 3)]],
    "column_stack": [[(), (1,), (1, 2)], [(3,), (3, 2)], [(2, 2, 3), (2, 1, 3)]],
}
_JOINED_MIXED["row_stack"] = _JOINED_MIXED["vstack"]


def _joined_stack_samples(name):
    """Lists of parts: each op raises them to at least 1, 2 or 3 dims first."""
    def samples(dtype):
        v = lambda shape, seed=0, d=dtype: values(shape, d, seed=seed)  # noqa: E731
        out = [Sample(([v(s), v(s, 1)],), note=f"two parts of shape {s}") for s in [(3,), (), (2, 3), (2, 3, 4)]]
        out += [Sample(([v((4,))],), note="one part"),
                Sample(([v((2, 0)), v((2, 0), 1)],), note="zero-size parts"),
                Sample(([_expanded(dtype, (3, 1), (3, 2)), v((3, 2), 1)],), note="an expanded part")]
        out += [Sample(([v(s, i) for i, s in enumerate(shapes)],), note=f"parts of shapes {shapes}")
                for shapes in _JOINED_MIXED[name]]
        for d2 in ALL:
            if d2 != dtype:
                out.append(Sample(([v((3,)), v((3,), 1, d2)],), note=f"{dtype} with {d2}"))
        return out
    return samples


def _joined_ref(fn):
    def ref(tensors):
        return fn(list(tensors))
    return ref


def _joined_errors(name, message_name=None):
    shown = message_name or name
    return lambda: [
        ErrorInput(lambda k: getattr(k, name)([]), RuntimeError, f"{shown} expects a non-empty TensorList",
                   "empty list"),
        ErrorInput(lambda k: getattr(k, name)([k.ones(2, 3, 4), k.ones(3, 4, 5)]), RuntimeError,
                   "Sizes of tensors must match", "parts whose sizes differ off the join dim"),
        ErrorInput(lambda k: getattr(k, name)(k.ones(2, 3)), TypeError, "", "a tensor, not a list of tensors"),
    ]


# ----------------------------------------------------------------------------- detach, contiguous
def _one_tensor_samples(dtype):
    out = [Sample((values(s, dtype),), note=f"shape {s}") for s in SHAPES]
    out.append(Sample((_expanded(dtype, (3, 1), (3, 4)),), note="expanded self"))
    return out


def _identity(a):
    return a


def _check_contiguous(kiln, result, sample):
    """contiguous(): self's values and dtype, in a contiguous tensor (a copy where self was not)."""
    a = sample.args[0]
    where = f"contiguous [{sample.note}]"
    assert isinstance(result, kiln.Tensor), where
    assert result.dtype == getattr(kiln, a.dtype.name), f"{where}: dtype {result.dtype}"
    assert result.is_contiguous(), f"{where}: strides {result.stride()} for shape {tuple(result.shape)}"
    np.testing.assert_array_equal(result.numpy(), a, err_msg=where)


# ----------------------------------------------------------------------------- select_backward, slice_backward
def _select_backward_samples(dtype):
    g = lambda shape, seed=0: values(shape, dtype, seed=seed)  # noqa: E731
    return [
        Sample((g((4,)), [3, 4], 0, 1), note="a row of a matrix"),
        Sample((g((3,), 1), [3, 4], 1, -1), note="the last column"),
        Sample((g((2, 4), 2), [2, 3, 4], -2, 2), note="3-D, negative dim"),
        Sample((g(()), [5], 0, -5), note="0-dim grad"),
        Sample((g((0, 3)), [2, 0, 3], 0, 1), note="zero-size grad"),
        Sample((g((2, 0)), [2, 0, 3], 2, -1), note="zero-size grad, last dim"),
        Sample((_expanded(dtype, (3, 1), (3, 4)), [3, 5, 4], 1, 2), note="expanded grad"),
    ]


def _select_backward_ref(grad, input_sizes, dim, index):
    out = np.zeros(input_sizes, dtype=grad.dtype)
    out[(slice(None),) * _wrap(dim, len(input_sizes)) + (index,)] = grad
    return out


def _select_backward_errors():
    return [
        ErrorInput(lambda k: k.select_backward(k.ones(4), [3, 4], 0, 3), IndexError, "index 3 out of range",
                   "index == size"),
        ErrorInput(lambda k: k.select_backward(k.ones(3), [3, 4], 0, 1), RuntimeError, "must match",
                   "grad of the wrong shape"),
        ErrorInput(lambda k: k.select_backward(k.tensor(2.0), [], 0, 0), IndexError,
                   "cannot be applied to a 0-dim tensor", "0-dim input_sizes"),
    ]


def _slice_backward_samples(dtype):
    g = lambda shape, seed=0: values(shape, dtype, seed=seed)  # noqa: E731
    return [
        Sample((g((2,)), [5], 0, 1, 3, 1), note="1:3"),
        Sample((g((2,), 1), [5], 0, -3, 100, 2), note="-3:100:2 (wraps and clamps, as slice)"),
        Sample((g((0,)), [5], 0, 4, 1, 1), note="start > end: empty grad"),
        Sample((g((3, 2), 2), [3, 4], 1, 0, 4, 2), note="dim 1, step 2"),
        Sample((g((2, 3, 1), 3), [2, 3, 4], -1, -10, -1, 3), note="3-D, negative dim, step 3"),
        Sample((g((1, 0, 3)), [2, 0, 3], 0, 1, 2, 1), note="zero-size grad"),
        Sample((_expanded(dtype, (3, 1), (3, 2)), [3, 4], 1, 1, 3, 1), note="expanded grad"),
    ]


def _slice_backward_ref(grad, input_sizes, dim, start, end, step):
    out = np.zeros(input_sizes, dtype=grad.dtype)
    out[(slice(None),) * _wrap(dim, len(input_sizes)) + (slice(start, end, step),)] = grad
    return out


def _slice_backward_errors():
    return [
        ErrorInput(lambda k: k.slice_backward(k.ones(2), [5], 0, 1, 3, 0), RuntimeError, "step must be positive",
                   "step 0"),
        ErrorInput(lambda k: k.slice_backward(k.ones(3), [5], 0, 1, 3, 1), RuntimeError, "must match",
                   "grad of the wrong shape"),
    ]


# ----------------------------------------------------------------------------- the records
_DIMS_ON_0_DIM = "torch refuses a 0-dim self here (IndexError); see the error inputs"

RECORDS = [
    OpRecord("view", FAMILY, ALL, _view_samples, ref=_view_ref, error_inputs=_view_errors),
    OpRecord("view.dtype", FAMILY, ALL, _view_dtype_samples, ref=_view_dtype_ref, result_dtype=lambda s, d: str(s.args[1]),
             error_inputs=_view_dtype_errors, reinterprets_bytes=True),
    OpRecord("transpose.int", FAMILY, ALL, _sized(_TRANSPOSE_CASES), ref=_transpose_ref),
    OpRecord("expand", FAMILY, ALL, _expand_samples, ref=_expand_ref, error_inputs=_expand_errors),
    OpRecord("select.int", FAMILY, ALL, _sized(_SELECT_CASES), ref=_select_ref,
             error_inputs=_select_errors, no_zero_dim=_DIMS_ON_0_DIM + " (select() cannot be applied to a 0-dim "
             "tensor); 0-dim results are sampled (select of a 1-D tensor)"),
    OpRecord("slice.Tensor", FAMILY, ALL, _slice_samples, ref=_slice_ref, error_inputs=_slice_errors,
             no_zero_dim=_DIMS_ON_0_DIM + " (slice() cannot be applied to a 0-dim tensor)"),
    OpRecord("unsqueeze", FAMILY, ALL, _sized(_UNSQUEEZE_CASES), ref=np.expand_dims),
    OpRecord("squeeze", FAMILY, ALL, _squeeze_samples, ref=np.squeeze),
    OpRecord("squeeze.dim", FAMILY, ALL, _sized(_SQUEEZE_DIM_CASES), ref=_squeeze_dim_ref),
    OpRecord("permute", FAMILY, ALL, _sized(_PERMUTE_CASES), ref=np.transpose,
             error_inputs=_permute_errors),
    OpRecord("as_strided", FAMILY, ALL, _as_strided_samples, ref=_as_strided_ref, error_inputs=_as_strided_errors,
             no_noncontiguous="as_strided indexes self's storage, not its elements: on the harness's re-laid out "
             "self the storage is the bigger buffer, every other row of it zeros, so the NumPy reference (on a "
             "contiguous copy) does not apply"),
    OpRecord("detach", FAMILY, ALL, _one_tensor_samples, ref=_identity),
    OpRecord("t", FAMILY, ALL, _sized(_T_CASES), ref=np.transpose, error_inputs=_t_errors),
    OpRecord("reshape", FAMILY, ALL, _reshape_samples, ref=np.reshape, error_inputs=_reshape_errors),
    OpRecord("flatten.using_ints", FAMILY, ALL, _flatten_samples, ref=_flatten_ref, error_inputs=_flatten_errors),
    OpRecord("unflatten.int", FAMILY, ALL, _sized(_UNFLATTEN_CASES), ref=_unflatten_ref,
             error_inputs=_unflatten_errors,
             no_zero_dim=_DIMS_ON_0_DIM + " (a 0-dim tensor has no dim to unflatten)"),
    OpRecord("movedim.int", FAMILY, ALL, _sized(_MOVEDIM_CASES), ref=_movedim_ref),
    OpRecord("movedim.intlist", FAMILY, ALL, _sized(_MOVEDIM_LIST_CASES), ref=_movedim_list_ref),
    OpRecord("narrow", FAMILY, ALL, _sized(_NARROW_CASES), ref=_narrow_ref, error_inputs=_narrow_errors,
             no_zero_dim="narrow() cannot be applied to a 0-dim tensor (RuntimeError, as torch); see the error "
             "inputs"),
    OpRecord("cat", FAMILY, ALL, _cat_samples, ref=_cat_ref, result_dtype=_list_result, error_inputs=_cat_errors,
             no_zero_dim="zero-dimensional tensors cannot be concatenated (RuntimeError, as torch); see the error "
             "inputs"),
    OpRecord("stack", FAMILY, ALL, _stack_samples, ref=_stack_ref, result_dtype=_list_result,
             error_inputs=_stack_errors),
    OpRecord("hstack", FAMILY, ALL, _joined_stack_samples("hstack"), ref=_joined_ref(np.hstack), result_dtype=_list_result,
             error_inputs=_joined_errors("hstack")),
    OpRecord("vstack", FAMILY, ALL, _joined_stack_samples("vstack"), ref=_joined_ref(np.vstack), result_dtype=_list_result,
             error_inputs=_joined_errors("vstack")),
    OpRecord("row_stack", FAMILY, ALL, _joined_stack_samples("row_stack"), ref=_joined_ref(np.vstack), result_dtype=_list_result,
             error_inputs=_joined_errors("row_stack", "vstack")),
    OpRecord("dstack", FAMILY, ALL, _joined_stack_samples("dstack"), ref=_joined_ref(np.dstack), result_dtype=_list_result,
             error_inputs=_joined_errors("dstack")),
    OpRecord("column_stack", FAMILY, ALL, _joined_stack_samples("column_stack"), ref=_joined_ref(np.column_stack),
             result_dtype=_list_result, error_inputs=_joined_errors("column_stack")),
    OpRecord("contiguous", FAMILY, ALL, _one_tensor_samples, check=_check_contiguous),
    OpRecord("select_backward", FAMILY, ALL, _select_backward_samples, ref=_select_backward_ref,
             error_inputs=_select_backward_errors),
    OpRecord("slice_backward", FAMILY, ALL, _slice_backward_samples, ref=_slice_backward_ref,
             error_inputs=_slice_backward_errors,
             no_zero_dim="a slice is never 0-dim, so neither is its grad (input_sizes [] raises as slice does)"),
]
