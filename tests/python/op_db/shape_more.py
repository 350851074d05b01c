"""Records of the shape ops built on views and copies: split (int and list of sizes),
split_with_sizes, chunk and unbind (tuples of views), diagonal and unfold (as_strided views),
flip, roll, repeat, and tril/triu (with tril_/triu_ and out=)."""
import numpy as np

from .record import ALL, ErrorInput, OpRecord, Sample, values

FAMILY = "shape_more"


def _wrap(dim, ndim):
    n = max(ndim, 1)
    return dim + n if dim < 0 else dim


def _expanded(dtype, base_shape, shape, seed=0):
    return np.broadcast_to(values(base_shape, dtype, seed=seed), shape)


def _sized(cases):
    """Samples (array shape, *args) for ops taking one tensor and plain arguments."""
    def samples(dtype):
        return [Sample((values(shape, dtype, seed=i),) + tuple(args), note=f"shape {shape}, {args}")
                for i, (shape, *args) in enumerate(cases)]
    return samples


def _grad_sized(cases):
    return lambda: _sized(cases)("float64")


def _per_output(ref):
    """result_dtype of an op returning a tuple: self's dtype for each output the reference gives."""
    def rule(sample, dtype):
        n = len(ref(*sample.args, **sample.kwargs))
        return (sample.args[0].dtype.name,) * n
    return rule


# ----------------------------------------------------------------------------- split, chunk, unbind
def _split_ref(a, split_size, dim=0):
    d = _wrap(dim, a.ndim)
    n = a.shape[d]
    if split_size == 0:
        return (a.copy(),)
    return tuple(np.split(a, list(range(split_size, n, split_size)), axis=d))


def _split_sizes_ref(a, split_sizes, dim=0):
    d = _wrap(dim, a.ndim)
    return tuple(np.split(a, list(np.cumsum(split_sizes)[:-1]), axis=d))


def _chunk_ref(a, chunks, dim=0):
    d = _wrap(dim, a.ndim)
    n = a.shape[d]
    size = (n + chunks - 1) // chunks
    if size == 0:
        return tuple(a.copy() for _ in range(chunks))
    return _split_ref(a, size, d)


def _unbind_ref(a, dim=0):
    d = _wrap(dim, a.ndim)
    return tuple(np.take(a, i, axis=d) for i in range(a.shape[d]))


_SPLIT_CASES = [((5,), 2), ((5,), 5), ((5,), 7), ((6,), 3), ((3, 4), 3, 1), ((3, 4), 1, -1), ((2, 3, 4), 2, -2),
                ((2, 0, 3), 2, 1), ((2, 0, 3), 0, 1), ((0,), 3), ((2, 3), 1, 0)]
_SPLIT_SIZES_CASES = [((5,), [2, 3]), ((5,), [5]), ((5,), [1, 0, 4]), ((3, 4), [1, 2, 1], 1),
                      ((2, 3, 4), [2, 1], -2), ((2, 0, 3), [0, 0], 1), ((0,), [0])]
_CHUNK_CASES = [((5,), 2), ((5,), 5), ((5,), 9), ((6,), 4), ((3, 4), 3, 1), ((3, 4), 2, -1), ((2, 3, 4), 2, 2),
                ((2, 0, 3), 3, 1), ((0,), 2)]
_UNBIND_CASES = [((5,),), ((3, 4),), ((3, 4), 1), ((2, 3, 4), -1), ((2, 3, 4), 1), ((2, 0, 3), 0), ((2, 0, 3), 1),
                 ((1,), 0)]
# Gradients: samples with at least one output (gradcheck needs an output to differentiate).
_SPLIT_GRAD = [((5,), 2), ((3, 4), 3, 1), ((2, 3, 4), 2, -2)]
_SPLIT_SIZES_GRAD = [((5,), [2, 3]), ((3, 4), [1, 0, 3], 1), ((2, 3, 4), [2, 1], -2)]
_CHUNK_GRAD = [((5,), 2), ((3, 4), 3, 1), ((2, 3, 4), 2, 2)]
_UNBIND_GRAD = [((5,),), ((3, 4), 1), ((2, 3, 4), -1)]


def _split_errors():
    return [
        ErrorInput(lambda k: k.split(k.tensor(1.0), 1), RuntimeError, "split expects at least a 1-dimensional tensor",
                   "0-dim self"),
        ErrorInput(lambda k: k.split(k.ones(4), -1), RuntimeError, "split_size be non-negative", "negative size"),
        ErrorInput(lambda k: k.split(k.ones(4), 0), RuntimeError, "split_size can only be 0 if dimension size is 0",
                   "size 0 of a non-empty dim"),
    ]


def _split_sizes_errors():
    return [
        ErrorInput(lambda k: k.split(k.ones(4), [1, 2]), RuntimeError, r"split_sizes to sum exactly to 4 .*\[1, 2\]",
                   "sizes do not sum to the dim"),
        ErrorInput(lambda k: k.split(k.ones(4), [5, -1]), RuntimeError, "only non-negative entries",
                   "negative size"),
        ErrorInput(lambda k: k.split(k.tensor(1.0), [1]), RuntimeError, "at least a 1-dimensional tensor",
                   "0-dim self"),
    ]


def _split_with_sizes_errors():
    return [
        ErrorInput(lambda k: k.split_with_sizes(k.ones(3, 4), [1, 1], 1), RuntimeError,
                   r"sum exactly to 4 \(input tensor's size at dimension 1\)", "sizes do not sum to the dim"),
        ErrorInput(lambda k: k.ones(4).split_with_sizes([2, -1, 3]), RuntimeError, "only non-negative entries",
                   "negative size (method)"),
    ]


def _chunk_errors():
    return [
        ErrorInput(lambda k: k.chunk(k.tensor(1.0), 1), RuntimeError, "chunk expects at least a 1-dimensional tensor",
                   "0-dim self"),
        ErrorInput(lambda k: k.chunk(k.ones(4), 0), RuntimeError, "chunk expects `chunks` to be greater than 0, got: 0",
                   "zero chunks"),
        ErrorInput(lambda k: k.ones(4).chunk(-2), RuntimeError, "greater than 0, got: -2", "negative chunks"),
    ]


def _unbind_errors():
    return [
        ErrorInput(lambda k: k.unbind(k.tensor(1.0)), IndexError, "Dimension specified as 0 but tensor has no "
                   "dimensions", "0-dim self"),
        ErrorInput(lambda k: k.ones(2, 3).unbind(2), IndexError, "Dimension out of range", "dim past the end"),
    ]


# ----------------------------------------------------------------------------- diagonal, unfold
_DIAGONAL_CASES = [((3, 4),), ((3, 4), 1), ((3, 4), -1), ((3, 4), 3), ((3, 4), 4), ((3, 4), -3), ((3, 4), -5),
                   ((4, 3), 0, 1, 0), ((2, 3, 4),), ((2, 3, 4), 1, -1, 0), ((2, 3, 4), -1, 1, 2),
                   ((2, 0, 3), 0, 0, 2), ((2, 0, 3), 0, 1, 2), ((0, 0),)]
_DIAGONAL_GRAD = [((3, 4), 1), ((3, 4), -1), ((2, 3, 4), 1, -1, 0), ((3, 4), 4)]


def _diagonal_ref(a, offset=0, dim1=0, dim2=1):
    return np.diagonal(a, offset, _wrap(dim1, a.ndim), _wrap(dim2, a.ndim)).copy()


def _diagonal_errors():
    return [
        ErrorInput(lambda k: k.diagonal(k.ones(3, 4), 0, 1, 1), RuntimeError,
                   "diagonal dimensions cannot be identical 1, 1", "same dims"),
        ErrorInput(lambda k: k.diagonal(k.ones(3, 4), 0, 0, -2), RuntimeError, "cannot be identical 0, -2",
                   "same dim, once negative"),
        ErrorInput(lambda k: k.diagonal(k.ones(3)), IndexError, "Dimension out of range", "1-D self"),
        ErrorInput(lambda k: k.tensor(1.0).diagonal(), IndexError, "Dimension out of range", "0-dim self"),
    ]


_UNFOLD_CASES = [((7,), 0, 2, 1), ((7,), 0, 3, 2), ((7,), 0, 7, 1), ((7,), -1, 1, 3), ((7,), 0, 0, 2),
                 ((3, 5), 1, 2, 2), ((3, 5), 0, 3, 1), ((2, 3, 4), 1, 2, 1), ((2, 3, 4), -1, 4, 5),
                 ((2, 0, 3), 2, 2, 1), ((2, 0, 3), 1, 0, 1), ((), 0, 1, 1), ((), -1, 0, 2)]
_UNFOLD_GRAD = [((7,), 0, 3, 2), ((7,), 0, 2, 1), ((3, 5), 1, 2, 2), ((2, 3, 4), 1, 2, 1)]


def _unfold_ref(a, dimension, size, step):
    if a.ndim == 0:
        return a.reshape(1)[:size].copy()
    d = _wrap(dimension, a.ndim)
    windows = np.lib.stride_tricks.sliding_window_view(a, size, axis=d)
    return windows[(slice(None),) * d + (slice(None, None, step),)].copy()


def _unfold_errors():
    return [
        ErrorInput(lambda k: k.ones(3, 4).unfold(1, 5, 1), RuntimeError,
                   "maximum size for tensor at dimension 1 is 4 but size is 5", "size past the dim"),
        ErrorInput(lambda k: k.ones(4).unfold(0, -1, 1), RuntimeError, "size is -1 but must be >= 0",
                   "negative size"),
        ErrorInput(lambda k: k.ones(4).unfold(0, 2, 0), RuntimeError, "step is 0 but must be > 0", "step 0"),
        ErrorInput(lambda k: k.tensor(1.0).unfold(0, 2, 1), RuntimeError,
                   "maximum size for tensor at dimension 0 is 1 but size is 2", "0-dim self, size 2"),
        ErrorInput(lambda k: k.ones(4).unfold(1, 2, 1), IndexError, "Dimension out of range", "dimension past the end"),
    ]


# ----------------------------------------------------------------------------- flip, roll, repeat
_FLIP_CASES = [((5,), [0]), ((5,), [-1]), ((3, 4), [0, 1]), ((3, 4), [1]), ((3, 4), []), ((2, 3, 4), [0, 2]),
               ((2, 3, 4), [-2]), ((2, 0, 3), [1, 2]), ((0,), [0]), ((), [0]), ((), [])]


def _flip_ref(a, dims):
    if a.ndim == 0 or not dims:
        return a.copy()
    return np.flip(a, axis=tuple(_wrap(d, a.ndim) for d in dims)).copy()


def _flip_errors():
    return [
        ErrorInput(lambda k: k.flip(k.ones(3, 4), [0, -2]), RuntimeError, "dim 0 appears multiple times",
                   "one dim twice"),
        ErrorInput(lambda k: k.ones(3, 4).flip([2]), IndexError, "Dimension out of range", "dim past the end"),
    ]


_ROLL_CASES = [((5,), 2), ((5,), -1), ((5,), 7), ((5,), [3], [0]), ((3, 4), 1), ((3, 4), 1, 0), ((3, 4), -5, 1),
               ((3, 4), [1, 2], [0, 1]), ((3, 4), [2, -1], [1, 1]), ((2, 3, 4), [1, -2], [-1, 0]),
               ((2, 0, 3), 1, 2), ((2, 0, 3), 2), ((0,), 1), ((), 3), ((3, 4), 0, 1)]
_ROLL_GRAD = [((5,), 2), ((3, 4), -5, 1), ((3, 4), [1, 2], [0, 1]), ((2, 3, 4), 5), ((), 1)]


def _roll_ref(a, shifts, dims=()):
    if isinstance(dims, int):
        dims = [dims]
    if not dims:
        return np.roll(a, shifts)
    shifts = [shifts] if isinstance(shifts, int) else shifts
    return np.roll(a, shifts, axis=tuple(_wrap(d, a.ndim) for d in dims))


def _roll_errors():
    return [
        ErrorInput(lambda k: k.roll(k.ones(3, 4), [1, 2], [0]), RuntimeError,
                   "shifts and dimensions must align. shifts: 2, dims:1", "more shifts than dims"),
        ErrorInput(lambda k: k.roll(k.ones(3, 4), [1, 2]), RuntimeError, "shifts and dimensions must align",
                   "two shifts, no dims"),
        ErrorInput(lambda k: k.roll(k.ones(3, 4), [], []), RuntimeError, "`shifts` required", "no shifts"),
        ErrorInput(lambda k: k.ones(3, 4).roll(1, 2), IndexError, "Dimension out of range", "dim past the end"),
    ]


_REPEAT_CASES = [((3,), [2]), ((3,), [2, 3]), ((3, 4), [1, 1]), ((3, 4), [2, 1]), ((3, 4), [1, 2, 3]),
                 ((2, 3, 4), [1, 2, 1]), ((3, 4), [0, 2]), ((2, 0, 3), [2, 2, 2]), ((0,), [3]), ((), []),
                 ((), [2, 3])]
_REPEAT_GRAD = [((3,), [2, 3]), ((3, 4), [2, 1]), ((2, 3), [1, 2, 2]), ((), [3])]


def _repeat_samples(dtype):
    out = _sized(_REPEAT_CASES)(dtype)
    out.append(Sample((_expanded(dtype, (3, 1), (3, 4)), [2, 1]), note="expanded self"))
    return out


def _repeat_errors():
    return [
        ErrorInput(lambda k: k.ones(3, 4).repeat([2]), RuntimeError, "Number of dimensions of repeat dims can not be "
                   "smaller than number of dimensions of tensor", "fewer repeats than dims"),
        ErrorInput(lambda k: k.ones(3).repeat([-1, 3]), RuntimeError, "negative dimension -1", "negative repeat"),
    ]


# ----------------------------------------------------------------------------- tril, triu
_TRI_CASES = [((3, 4),), ((3, 4), 1), ((3, 4), -1), ((3, 4), 5), ((3, 4), -5), ((4, 3), 2), ((2, 3, 4),),
              ((2, 3, 4), -2), ((2, 2, 3, 3), 1), ((2, 0, 3),), ((0, 0), 1), ((1, 1),)]


def _tri_samples(dtype):
    out = _sized(_TRI_CASES)(dtype)
    out.append(Sample((values((3, 4), dtype),), dict(diagonal=1), note="diagonal as keyword"))
    out.append(Sample((np.swapaxes(values((4, 3), dtype, seed=3), 0, 1),), note="transposed self"))
    return out


def _tri_errors(name):
    def errors():
        return [
            # IndexError, as torch (its dim -2 is out of range).
            ErrorInput(lambda k: getattr(k, name)(k.ones(3)), IndexError,
                       f"{name}\\(\\): Dimension out of range .*at least 2 dimensions", "1-D self"),
            ErrorInput(lambda k: getattr(k.tensor(1.0), name)(), IndexError, "at least 2 dimensions", "0-dim self"),
            ErrorInput(lambda k: getattr(k.ones(3), name + "_")(), IndexError, "at least 2 dimensions",
                       "1-D self, in place"),
            ErrorInput(lambda k: getattr(k.ones(3, 3), name + "_")(1.5), TypeError, name + "_", "float diagonal"),
        ]
    return errors


_NO_0DIM = "torch refuses a 0-dim self here; see the error inputs"

RECORDS = [
    OpRecord("split.Tensor", FAMILY, ALL, _sized(_SPLIT_CASES), ref=_split_ref, result_dtype=_per_output(_split_ref),
             grad_samples=_grad_sized(_SPLIT_GRAD), error_inputs=_split_errors, no_zero_dim=_NO_0DIM),
    OpRecord("split.sizes", FAMILY, ALL, _sized(_SPLIT_SIZES_CASES), ref=_split_sizes_ref,
             result_dtype=_per_output(_split_sizes_ref), grad_samples=_grad_sized(_SPLIT_SIZES_GRAD),
             error_inputs=_split_sizes_errors, no_zero_dim=_NO_0DIM),
    OpRecord("split_with_sizes", FAMILY, ALL, _sized(_SPLIT_SIZES_CASES), ref=_split_sizes_ref,
             result_dtype=_per_output(_split_sizes_ref), grad_samples=_grad_sized(_SPLIT_SIZES_GRAD),
             error_inputs=_split_with_sizes_errors, no_zero_dim=_NO_0DIM),
    OpRecord("chunk", FAMILY, ALL, _sized(_CHUNK_CASES), ref=_chunk_ref, result_dtype=_per_output(_chunk_ref),
             grad_samples=_grad_sized(_CHUNK_GRAD), error_inputs=_chunk_errors, no_zero_dim=_NO_0DIM),
    OpRecord("unbind.int", FAMILY, ALL, _sized(_UNBIND_CASES), ref=_unbind_ref, result_dtype=_per_output(_unbind_ref),
             grad_samples=_grad_sized(_UNBIND_GRAD), error_inputs=_unbind_errors,
             no_zero_dim=_NO_0DIM + " (IndexError, as torch)"),
    OpRecord("diagonal", FAMILY, ALL, _sized(_DIAGONAL_CASES), ref=_diagonal_ref,
             grad_samples=_grad_sized(_DIAGONAL_GRAD), error_inputs=_diagonal_errors,
             no_zero_dim="a 0-dim tensor has no two dims (IndexError, as torch); see the error inputs"),
    OpRecord("unfold", FAMILY, ALL, _sized(_UNFOLD_CASES), ref=_unfold_ref, grad_samples=_grad_sized(_UNFOLD_GRAD),
             error_inputs=_unfold_errors),
    OpRecord("flip", FAMILY, ALL, _sized(_FLIP_CASES), ref=_flip_ref, error_inputs=_flip_errors),
    OpRecord("roll", FAMILY, ALL, _sized(_ROLL_CASES), ref=_roll_ref, grad_samples=_grad_sized(_ROLL_GRAD),
             error_inputs=_roll_errors),
    OpRecord("repeat", FAMILY, ALL, _repeat_samples, ref=lambda a, repeats: np.tile(a, repeats),
             grad_samples=_grad_sized(_REPEAT_GRAD), error_inputs=_repeat_errors),
    OpRecord("tril", FAMILY, ALL, _tri_samples, ref=lambda a, diagonal=0: np.tril(a, diagonal),
             error_inputs=_tri_errors("tril"), no_zero_dim=_NO_0DIM),
    OpRecord("triu", FAMILY, ALL, _tri_samples, ref=lambda a, diagonal=0: np.triu(a, diagonal),
             error_inputs=_tri_errors("triu"), no_zero_dim=_NO_0DIM),
]
