"""Records of the indexing ops: index_select and its gradient op index_select_backward, advanced
indexing (index.Tensor: x[i, :, j] is kiln.index(x, [i, None, j])), index_put (and, through the
schema, index_put_) and nonzero.

Index arguments are int64 arrays (one int32 sample each: kiln takes int32 indices too), with
negative, repeated and empty indices, and bool masks where the op takes them."""
import numpy as np

from .record import ALL, NUMERIC, ErrorInput, OpRecord, Sample, always, values

FAMILY = "indexing"


def _i(*v):
    return np.array(v, dtype=np.int64)


def _mask(shape, seed=3):
    return values(shape, "bool", seed=seed)


def _expanded(dtype, base_shape, shape, seed=0):
    return np.broadcast_to(values(base_shape, dtype, seed=seed), shape)


# ----------------------------------------------------------------------------- index_select
def _index_select_samples(dtype):
    x34, x234 = values((3, 4), dtype), values((2, 3, 4), dtype, seed=1)
    return [
        Sample((x34, 0, _i(2, 0, 2)), note="repeated index"),
        Sample((x34, 1, _i(3, 0, 3, 0)), note="first and last indices"),
        Sample((x34, -1, _i(1)), note="negative dim"),
        Sample((x34, 1, np.array(2, dtype=np.int64)), note="0-dim index keeps the dim"),
        Sample((x234, 2, np.array([3, 1, 1], dtype=np.int32)), note="int32 index"),
        Sample((x234, -2, _i(2, 1, 0)), note="3-D, middle dim"),
        Sample((values((5,), dtype), 0, _i()), note="empty index"),
        Sample((values((5,), dtype), 0, _i(4, 4, 4, 4, 4, 4)), note="one row, many times"),
        Sample((values((), dtype), 0, _i(0)), note="0-dim self"),
        Sample((values((), dtype), -1, np.array(0, dtype=np.int64)), note="0-dim self, dim -1, 0-dim index"),
        Sample((values((2, 0, 3), dtype), 2, _i(1, 0)), note="zero-size self"),
        Sample((values((2, 0, 3), dtype), 1, _i()), note="zero-size dim, empty index"),
        Sample((_expanded(dtype, (3, 1), (3, 4)), 1, _i(3, 0)), note="expanded self"),
    ]


def _index_select_ref(a, dim, index):
    if a.ndim == 0:
        return a.copy()  # index 0: the one element
    return np.take(a, np.atleast_1d(index), axis=dim)


def _index_select_errors():
    return [
        ErrorInput(lambda k: k.index_select(k.zeros(3, 4), 0, k.tensor([3])), IndexError, "index out of range in self",
                   "index == size (torch: IndexError 'index out of range in self')"),
        ErrorInput(lambda k: k.index_select(k.zeros(3, 4), 1, k.tensor([-1])), RuntimeError,
                   "out of DATA bounds", "negative index along dim 1 (torch 1.13's dim-1 path: RuntimeError)"),
        ErrorInput(lambda k: k.index_select(k.zeros(3, 4, 2), 2, k.tensor([-1])), IndexError,
                   "index out of range in self", "negative index (torch does not count from the end here)"),
        ErrorInput(lambda k: k.index_select(k.tensor(1.0), 0, k.tensor(-1)), IndexError,
                   "index out of range in self", "0-dim self, index -1"),
        ErrorInput(lambda k: k.index_select(k.zeros(3, 4), 0, k.tensor([0.0])), RuntimeError,
                   "Expected dtype int32.*int64 for index", "float index"),
        ErrorInput(lambda k: k.index_select(k.zeros(3, 4), 0, k.tensor([True])), RuntimeError,
                   "Expected dtype int32.*int64 for index", "bool index"),
        ErrorInput(lambda k: k.index_select(k.zeros(3, 4), 0, k.tensor([[0]])), IndexError,
                   "Index is supposed to be a vector", "2-D index"),
        ErrorInput(lambda k: k.index_select(k.zeros(0, 4), 0, k.tensor([0])), RuntimeError, "axis dim should be positive",
                   "any index into an empty dim of a 2-D self"),
        ErrorInput(lambda k: k.index_select(k.zeros(0), 0, k.tensor([0])), IndexError, "index out of range in self",
                   "any index into an empty 1-D self"),
        # kiln writes one element per index into the 1-element result (heap overflow; 10**6 indices
        # crash the process). torch 2 raises this IndexError (torch 1.13 returned the element).
        ErrorInput(lambda k: k.index_select(k.tensor(1.0), 0, k.tensor([0, 0])), IndexError,
                   "Index to scalar can have only 1 value", "0-dim self, two indices (kiln: heap overflow, bug)"),
    ]


# ----------------------------------------------------------------------------- index_select_backward
def _index_select_backward_samples(dtype):
    g = lambda shape, seed=0: values(shape, dtype, seed=seed)  # noqa: E731
    return [
        Sample((g((3, 4)), [3, 4], 0, _i(2, 0, 2)), note="repeated index: gradients add up"),
        Sample((g((3, 4), 1), [3, 4], 1, _i(3, 0, 3, 0)), note="first and last indices"),
        Sample((g((2, 3, 2), 2), [2, 3, 4], -1, np.array([3, 1], dtype=np.int32)), note="int32 index, dim -1"),
        Sample((g((1,), 3), [5], 0, np.array(4, dtype=np.int64)), note="0-dim index"),
        Sample((g(()), [], 0, _i(0)), note="0-dim grad and self"),
        Sample((g((0,)), [5], 0, _i()), note="empty index"),
        Sample((g((2, 0, 2)), [2, 0, 3], 2, _i(1, 0)), note="zero-size grad"),
        Sample((_expanded(dtype, (3, 1), (3, 2)), [3, 4], 1, _i(3, 3)), note="expanded grad, repeated index"),
    ]


def _index_select_backward_ref(grad, self_sizes, dim, index):
    if not self_sizes:
        return grad.copy()
    out = np.zeros(self_sizes, dtype=grad.dtype)
    np.add.at(out, (slice(None),) * (dim % len(self_sizes)) + (np.atleast_1d(index),), grad)
    return out


def _index_select_backward_errors():
    return [
        ErrorInput(lambda k: k.index_select_backward(k.ones(2), [3], 0, k.tensor([3, 1])), IndexError,
                   "index out of range in self", "index == size"),
        ErrorInput(lambda k: k.index_select_backward(k.ones(3), [3], 0, k.tensor([0, 1])), RuntimeError,
                   "grad has shape", "grad of the wrong shape"),
        ErrorInput(lambda k: k.index_select_backward(k.ones(2), [3], 0, k.tensor([0.0, 1.0])), RuntimeError,
                   "Expected dtype int32/int64 for index", "float index"),
        # kiln reads one grad element per index from the 1-element grad (heap over-read).
        ErrorInput(lambda k: k.index_select_backward(k.tensor(1.0), [], 0, k.tensor([0, 0])), IndexError,
                   "Index to scalar can have only 1 value", "0-dim self, two indices (kiln: heap over-read, bug)"),
    ]


# ----------------------------------------------------------------------------- index.Tensor
def _index_samples(dtype):
    x5, x34, x234 = values((5,), dtype), values((3, 4), dtype, seed=1), values((2, 3, 4), dtype, seed=2)
    z = lambda v: np.array(v, dtype=np.int64)  # noqa: E731  a 0-dim index
    return [
        Sample((x5, [_i(-1, 0, 3, 3)]), note="negative and repeated"),
        Sample((x34, [_i(2, 0, -3)]), note="rows"),
        Sample((x34, [None, _i(2, 0, -1, 2)]), note="columns: None keeps dim 0"),
        Sample((x34, [_i(2, 0), _i(-1, 1)]), note="element pairs"),
        Sample((x234, [_i(1, 0), None, _i(3, -4)]), note="indexed dims apart: broadcast dims first"),
        Sample((x234, [None, _i(0, 2).reshape(2, 1), _i(1, 3, 0)]), note="adjacent, broadcast (2,1) with (3,)"),
        Sample((x234, [None, None, _i(1, 1).reshape(1, 2)]), note="a 2-D index on the last dim"),
        Sample((x234, [z(1), z(2), z(-1)]), note="0-dim indices: a 0-dim result"),
        Sample((x234, [z(1), None, _i(0, 3)]), note="a 0-dim index broadcast"),
        Sample((x34, [_i()]), note="empty index"),
        Sample((x34, [None, _i()]), note="empty index, dim 1"),
        Sample((x234, [np.array([1, 0, 1], dtype=np.int32).reshape(3, 1), np.array([2, 0], dtype=np.int32)]),
               note="int32 indices"),
        Sample((x34, [_mask((3,))]), note="bool mask on dim 0"),
        Sample((x34, [_mask((3, 4), seed=4)]), note="bool mask over the whole tensor"),
        Sample((x234, [None, _mask((3, 4), seed=5)]), note="bool mask over the last two dims"),
        Sample((x34, [np.zeros(3, dtype=bool)]), note="all-false mask"),
        Sample((x34, [None, np.ones(4, dtype=bool)]), note="all-true mask"),
        Sample((values((2, 0, 3), dtype), [_i(1, 0, 1)]), note="zero-size self"),
        Sample((values((2, 0, 3), dtype), [None, None, _i(2)]), note="zero-size self, last dim"),
        Sample((_expanded(dtype, (3, 1), (3, 4)), [None, _i(3, 1)]), note="expanded self"),
    ]


def _np_key(indices):
    """kiln's index list as a NumPy index: None keeps a dim whole (a bool mask stands for itself)."""
    return tuple(slice(None) if i is None else i for i in indices)


def _index_ref(a, indices):
    return a[_np_key(indices)]


def _index_errors():
    return [
        ErrorInput(lambda k: k.index(k.zeros(2, 3), [k.tensor([2])]), IndexError,
                   "index 2 is out of bounds for dimension 0 with size 2", "index == size"),
        ErrorInput(lambda k: k.index(k.zeros(2, 3), [None, k.tensor([-4])]), IndexError,
                   "index -4 is out of bounds for dimension 1 with size 3", "index < -size"),
        ErrorInput(lambda k: k.index(k.zeros(2, 3), [k.tensor([1.0])]), IndexError,
                   "tensors used as indices must be long, int or bool tensors", "float index"),
        ErrorInput(lambda k: k.index(k.zeros(2, 3), [k.tensor([True, False, True])]), IndexError,
                   "The shape of the mask", "mask of the wrong shape"),
        ErrorInput(lambda k: k.index(k.zeros(2, 3), [k.tensor([0, 1]), k.tensor([0, 1, 2])]), IndexError,
                   "could not be broadcast together", "indices that do not broadcast"),
        ErrorInput(lambda k: k.index(k.zeros(2, 3), [k.tensor([0])] * 3), IndexError, "too many indices",
                   "more indices than dims"),
        ErrorInput(lambda k: k.index(k.tensor(1.0), [k.tensor([0])]), IndexError, "too many indices",
                   "0-dim self"),
        ErrorInput(lambda k: k.index(k.zeros(2, 3), []), RuntimeError, "at least one index must be a tensor",
                   "no index tensor"),
    ]


# ----------------------------------------------------------------------------- index_put
def _index_put_samples(dtype):
    v = lambda shape, seed=7: values(shape, dtype, seed=seed)  # noqa: E731  the values
    x5, x34, x234 = values((5,), dtype), values((3, 4), dtype, seed=1), values((2, 3, 4), dtype, seed=2)
    m34 = _mask((3, 4), seed=4)
    # accumulate=False: unique positions (after wrapping), so the result is deterministic.
    return [
        Sample((x5, [_i(-1, 0, 2)], v((3,))), note="negative index"),
        Sample((x5, [_i(1, 1, -4, 3)], v((4,)), True), note="repeated indices accumulate"),
        Sample((x34, [None, _i(2, 0)], v((3, 2))), note="columns"),
        Sample((x34, [None, _i(2, 0)], v((2,), 8)), dict(accumulate=False), note="values broadcast (kwarg)"),
        Sample((x34, [_i(0, -1)], v(())), dict(accumulate=True), note="0-dim values, accumulate"),
        Sample((x34, [_i(2, 0), _i(-1, 1)], v((2,))), note="element pairs"),
        Sample((x234, [_i(1, 0), None, _i(3, -4)], v((2, 3))), note="indexed dims apart"),
        Sample((x234, [_i(0, 0, 1), _i(1, 1, 1)], v((3, 4)), True), note="repeated pairs accumulate"),
        Sample((x234, [None, _i(0, 2).reshape(2, 1), _i(1, 3)], v((2, 2, 2))), note="broadcast index shapes"),
        Sample((x234, [np.array([1], dtype=np.int32), np.array([2, 0], dtype=np.int32)], v((1, 4))),
               note="int32 indices, values broadcast"),
        Sample((x34, [m34], v((int(m34.sum()),))), note="bool mask"),
        Sample((x34, [_mask((3,))], v((4,)), True), note="bool mask on dim 0, accumulate"),
        Sample((x34, [None, np.zeros(4, dtype=bool)], v(())), note="all-false mask"),
        Sample((x34, [_i()], v((4,))), note="empty index"),
        Sample((x34, [_i()], v((0, 4))), dict(accumulate=True), note="empty index, accumulate"),
        Sample((values((2, 0, 3), dtype), [_i(1)], v((3,))), note="zero-size self"),
        Sample((x34, [_i(1, 2)], _expanded(dtype, (1, 4), (2, 4), seed=7)), note="expanded values"),
    ]


def _index_put_ref(a, indices, values, accumulate=False):
    out = a.copy()
    # Masks as their coordinates, which ufunc.at takes in any NumPy.
    key = []
    for i in indices:
        is_mask = isinstance(i, np.ndarray) and i.dtype == bool
        key.extend(np.nonzero(i) if is_mask else [slice(None) if i is None else i])
    key = tuple(key)
    if accumulate:
        np.add.at(out, key, values)  # bool: True + True is True
    else:
        out[key] = values
    return out


def _index_put_errors():
    return [
        ErrorInput(lambda k: k.index_put(k.zeros(3, 4), [k.tensor([3])], k.ones(4)), IndexError,
                   "index 3 is out of bounds for dimension 0 with size 3", "index == size"),
        ErrorInput(lambda k: k.index_put(k.zeros(3, 4), [k.tensor([-4])], k.ones(4)), IndexError,
                   "index -4 is out of bounds for dimension 0 with size 3", "index < -size"),
        ErrorInput(lambda k: k.zeros(3, 4).index_put_([k.tensor([-4])], k.ones(4), True), IndexError,
                   "index -4 is out of bounds", "in place, accumulate, index < -size"),
        ErrorInput(lambda k: k.index_put(k.zeros(3, 4), [k.tensor([0.5])], k.ones(4)), IndexError,
                   "tensors used as indices must be long, int or bool tensors", "float index"),
        ErrorInput(lambda k: k.index_put(k.zeros(3, 4), [k.tensor([0, 1])], k.ones(3, 4)), RuntimeError,
                   r"shape mismatch: value tensor of shape \[3, 4\] cannot be broadcast to indexing result of "
                   r"shape \[2, 4\]", "values of the wrong shape"),
        ErrorInput(lambda k: k.index_put(k.zeros(3, 4), [k.tensor([0, 1])], k.ones(1, 2, 4)), RuntimeError,
                   "shape mismatch", "values with more dims than the indexing result"),
        ErrorInput(lambda k: k.index_put(k.zeros(3, 4), [k.tensor([0])], k.ones(4, dtype=k.float64)), RuntimeError,
                   "Index put requires the source and destination dtypes match", "values of another dtype"),
        ErrorInput(lambda k: k.index_put(k.zeros(3, 4), [k.tensor([True, False])], k.ones(4)), IndexError,
                   "The shape of the mask", "mask of the wrong shape"),
    ]


# ----------------------------------------------------------------------------- nonzero
def _nonzero_samples(dtype):
    out = []
    for i, s in enumerate([(), (0,), (5,), (3, 4), (2, 0, 3), (2, 3, 4)]):
        a = values(s, dtype, seed=i)
        out.append(Sample((np.where(_mask(s, seed=10 + i), a, np.zeros((), a.dtype)),), note=f"shape {s}, some zeros"))
    out += [
        Sample((np.zeros((3, 4), dtype=dtype),), note="all zero"),
        Sample((np.ones((2, 3), dtype=dtype),), note="all nonzero"),
        Sample((np.zeros((), dtype=dtype),), note="0-dim zero"),
        Sample((np.ones((), dtype=dtype),), note="0-dim nonzero"),
        Sample((_expanded(dtype, (3, 1), (3, 4), seed=2),), note="expanded"),
    ]
    if dtype in ("float32", "float64"):
        out.append(Sample((np.array([0.0, -0.0, np.nan, np.inf, 1e-30], dtype=dtype),), note="-0, nan, inf, tiny"))
    return out


def _nonzero_ref(a):
    return np.argwhere(a).astype(np.int64)


_0_DIM_SELF = ("a 0-dim self has no dim to index (IndexError 'too many indices', as torch): see the error inputs; "
               "0-dim index tensors and values are sampled")

RECORDS = [
    OpRecord("index_select", FAMILY, ALL, _index_select_samples, ref=_index_select_ref,
             error_inputs=_index_select_errors),
    OpRecord("index_select_backward", FAMILY, NUMERIC, _index_select_backward_samples,
             ref=_index_select_backward_ref, error_inputs=_index_select_backward_errors),
    OpRecord("index.Tensor", FAMILY, ALL, _index_samples, ref=_index_ref, error_inputs=_index_errors,
             no_zero_dim=_0_DIM_SELF),
    OpRecord("index_put", FAMILY, ALL, _index_put_samples, ref=_index_put_ref,
             error_inputs=_index_put_errors, no_zero_dim=_0_DIM_SELF,
             no_self_broadcast="the result always has self's shape (values broadcast to the indexed part)"),
    OpRecord("nonzero", FAMILY, ALL, _nonzero_samples, ref=_nonzero_ref, result_dtype=always("int64")),
]
