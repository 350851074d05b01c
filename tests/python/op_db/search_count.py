"""Records of the searching and counting ops: searchsorted, bucketize, isin, bincount, histc and
unique (_unique2, _unique_dim, _unique_consecutive: kiln.unique picks their outputs).

References are NumPy, except unique's: NumPy merges NaNs (equal_nan) and, along an axis, tells
-0.0 from 0.0 by their bytes; torch 2 (and kiln) keep every NaN apart and merge -0.0 with 0.0."""
import math

import numpy as np

from .record import ALL, FLOATS, INTS, NUMERIC, ErrorInput, OpRecord, Sample, always, values

FAMILY = "search_count"


def _sorted(shape, dtype, seed=0):
    return np.sort(values(shape, dtype, seed=seed), axis=-1)


# ----------------------------------------------------------------------------- searchsorted / bucketize
def _searchsorted_samples(dtype):
    seq, seq2 = _sorted((6,), dtype), _sorted((2, 5), dtype, seed=1)
    ties = np.array([0, 1, 1, 1, 3, 3], dtype=dtype)
    out = [
        Sample((seq, values((3, 4), dtype, seed=2)), note="1-D sequence"),
        Sample((seq, values((), dtype, seed=3)), note="0-dim values"),
        Sample((seq, values((2, 0), dtype)), note="zero-size values"),
        Sample((seq2, values((2, 3), dtype, seed=4)), dict(right=True), note="a sequence per row, right"),
        Sample((ties, np.array([1, 3, 0, 4, -1], dtype=dtype)), dict(side="right"), note="ties, side='right'"),
        Sample((ties, np.array([1, 3, 0, 4, -1], dtype=dtype)), dict(out_int32=True), note="ties, out_int32"),
        Sample((np.zeros(0, dtype=dtype), values((3,), dtype)), note="empty sequence"),
        Sample((values((6,), dtype, seed=5), values((4,), dtype)),
               dict(sorter=np.argsort(values((6,), dtype, seed=5), kind="stable")), note="sorter"),
        Sample((seq, values((5,), "float64" if dtype in INTS else "int64", seed=6)), note="mixed dtypes"),
    ]
    if dtype in FLOATS:
        out.append(Sample((seq, np.array([np.nan, -np.inf, np.inf], dtype=dtype)), note="NaN goes last"))
    return out


def _searchsorted_ref(seq, v, out_int32=False, right=False, side=None, sorter=None):
    side = side or ("right" if right else "left")
    dt = np.int32 if out_int32 else np.int64
    if np.ndim(seq) == 1:
        return np.searchsorted(seq, v, side=side, sorter=sorter).astype(dt)
    rows = [np.searchsorted(s, r, side=side) for s, r in zip(seq.reshape(-1, seq.shape[-1]), v.reshape(-1, v.shape[-1]))]
    return np.array(rows, dtype=dt).reshape(v.shape)


def _index_dtype(sample, dtype):
    return "int32" if sample.kwargs.get("out_int32") else "int64"


def _searchsorted_scalar_samples(dtype):
    seq = _sorted((6,), dtype)
    return [Sample((seq, 1), note="int"), Sample((seq, 0.5), dict(right=True), note="float, right"),
            Sample((np.zeros(0, dtype=dtype), 2), note="empty sequence"),
            Sample((seq, -100), dict(side="left"), note="below everything")]


def _bucketize_samples(dtype):
    b = _sorted((5,), dtype)
    return [Sample((values((3, 4), dtype, seed=1), b), note="2-D input"),
            Sample((values((), dtype, seed=2), b), dict(right=True), note="0-dim input, right"),
            Sample((values((0, 3), dtype), b), note="zero-size input"),
            Sample((np.array([0, 1, 1, 3], dtype=dtype), np.array([1, 1, 3], dtype=dtype)), dict(out_int32=True),
                   note="ties, out_int32")]


def _bucketize_ref(v, b, out_int32=False, right=False):
    return _searchsorted_ref(b, v, out_int32, right)


def _bucketize_scalar_samples(dtype):
    b = _sorted((5,), dtype)
    return [Sample((1, b), note="int"), Sample((0.25, b), dict(right=True), note="float")]


def _search_errors():
    k1 = lambda k: k.tensor([1, 3, 5])  # noqa: E731
    return [
        ErrorInput(lambda k: k.searchsorted(k1(k), k.tensor([1]), side="middle"), RuntimeError,
                   "side can only be 'left' or 'right'", "bad side"),
        ErrorInput(lambda k: k.searchsorted(k1(k), k.tensor([1]), side="left", right=True), RuntimeError,
                   "side and right can't be set to opposites", "side against right"),
        ErrorInput(lambda k: k.searchsorted(k.tensor(1), k.tensor([1])), RuntimeError,
                   "boundaries tensor should have positive dimension", "0-dim sequence"),
        ErrorInput(lambda k: k.searchsorted(k.zeros(2, 3), k.zeros(3, 1)), RuntimeError,
                   "first N-1 dimensions of boundaries tensor and input value tensor must match", "rows differ"),
        ErrorInput(lambda k: k.searchsorted(k1(k), k.tensor([1]), sorter=k.tensor([0, 1])), RuntimeError,
                   "boundary and sorter must have the same size", "short sorter"),
        ErrorInput(lambda k: k.searchsorted(k1(k), k.tensor([1]), sorter=k.tensor([0, 1, 3])), IndexError,
                   "sorter index 3 is out of range", "sorter out of range"),
        ErrorInput(lambda k: k.searchsorted(k1(k), k.tensor([1]), out=k.empty(0)), RuntimeError,
                   "Expected out tensor to have dtype int64", "float out"),
        ErrorInput(lambda k: k.bucketize(k.tensor([1]), k.zeros(2, 2)), RuntimeError,
                   "boundaries tensor must be 1 dimension", "2-D boundaries"),
        ErrorInput(lambda k: k.isin(k.tensor([True]), k.tensor([True])), RuntimeError,
                   "Unsupported input type encountered for isin", "bool elements"),
    ]


# ----------------------------------------------------------------------------- isin
def _isin_samples(dtype):
    x = values((3, 4), dtype)
    out = [Sample((x, values((5,), dtype, seed=1)), note="1-D tests"),
           Sample((x, values((2, 3), dtype, seed=2)), dict(invert=True), note="2-D tests, invert"),
           Sample((values((), dtype), x), note="0-dim elements"),
           Sample((x, values((0,), dtype)), note="no tests"),
           Sample((values((0, 2), dtype), x), dict(assume_unique=True), note="zero-size elements"),
           Sample((np.array([1, 2, 3], dtype=dtype), np.array([2.0, 3.5])), note="compared as float64")]
    if dtype in FLOATS:
        out.append(Sample((np.array([1.0, np.nan, -0.0], dtype=dtype), np.array([np.nan, 0.0], dtype=dtype)),
                          note="NaN is in nothing, -0 == 0"))
    return out


def _isin_ref(a, b, assume_unique=False, invert=False):
    return np.isin(a, b, invert=invert)


def _isin_scalar_samples(dtype):
    x = values((3, 4), dtype)
    return [Sample((x, int(x.flat[3])), note="present"), Sample((x, 0.5), dict(invert=True), note="float, invert"),
            Sample((values((), dtype), 1), note="0-dim"), Sample((values((0,), dtype), 1), note="zero-size")]


def _scalar_isin_samples(dtype):
    x = values((3, 4), dtype)
    return [Sample((int(x.flat[5]), x), note="present"), Sample((7, x), dict(invert=True), note="absent, invert"),
            Sample((1, values((), dtype)), note="0-dim"), Sample((1, values((0,), dtype)), note="zero-size")]


# ----------------------------------------------------------------------------- bincount / histc
def _bincount_samples(dtype):
    x = np.array([0, 3, 1, 3, 3, 7], dtype=dtype)
    return [Sample((x,), note="counts"),
            Sample((x, values((6,), "float32")), note="float32 weights"),
            Sample((x, values((6,), "float64")), dict(minlength=10), note="float64 weights, minlength"),
            Sample((x, np.arange(6, dtype=np.int64)), note="int weights sum in float64"),
            Sample((x,), dict(minlength=3), note="minlength below the max"),
            Sample((np.zeros(0, dtype=dtype),), dict(minlength=4), note="empty: int64 zeros")]


def _bincount_ref(x, weights=None, minlength=0):
    if x.size == 0:
        return np.zeros(minlength, dtype=np.int64)
    return np.bincount(x, weights, minlength)


def _bincount_dtype(sample, dtype):
    w = sample.args[1] if len(sample.args) > 1 else None
    if w is None or sample.args[0].size == 0:
        return "int64"
    return "float32" if w.dtype == np.float32 else "float64"


def _bincount_errors():
    return [
        ErrorInput(lambda k: k.bincount(k.tensor([0, -1])), RuntimeError,
                   "bincount only supports 1-d non-negative integral inputs", "negative value"),
        ErrorInput(lambda k: k.bincount(k.tensor([[0, 1]])), RuntimeError,
                   "bincount only supports 1-d non-negative integral inputs", "2-D input"),
        ErrorInput(lambda k: k.bincount(k.tensor(1)), RuntimeError,
                   "bincount only supports 1-d non-negative integral inputs", "0-dim input"),
        ErrorInput(lambda k: k.bincount(k.tensor([0.0, 1.0])), RuntimeError, "not implemented for 'float32'",
                   "float input"),
        ErrorInput(lambda k: k.bincount(k.tensor([1]), minlength=-1), RuntimeError, "minlength should be >= 0",
                   "negative minlength"),
        ErrorInput(lambda k: k.bincount(k.tensor([1, 2]), k.tensor([1.0])), RuntimeError,
                   "weights should be 1-d and have the same length as input", "short weights"),
        ErrorInput(lambda k: k.histc(k.tensor([1.0]), bins=0), RuntimeError, "bins must be > 0", "bins = 0"),
        ErrorInput(lambda k: k.histc(k.tensor([1.0]), 4, 3, 1), RuntimeError, "max must be larger than min",
                   "max < min"),
        ErrorInput(lambda k: k.histc(k.tensor([1.0, math.nan])), RuntimeError, "is not finite", "NaN data range"),
        ErrorInput(lambda k: k.histc(k.tensor([1.0]), 4, 0, math.inf), RuntimeError, "is not finite", "inf max"),
        ErrorInput(lambda k: k.histc(k.tensor([1, 2])), RuntimeError, "not implemented for 'int64'", "int input"),
    ]


def _histc_samples(dtype):
    x = values((3, 5), dtype)
    return [Sample((x,), note="100 bins over the data's range"),
            Sample((x, 4, -4, 4), note="range given"),
            Sample((x, 3), dict(min=-1, max=1.5), note="values outside are left out"),
            Sample((np.array([1.0, 2.0, 1.0], dtype=dtype), 5, 3, 3), note="min == max: the data's range"),
            Sample((np.array([2.0, 2.0], dtype=dtype), 4), note="one value: [v - 1, v + 1]"),
            Sample((values((), dtype), 7), note="0-dim"),
            Sample((values((0, 2), dtype), 3), note="zero-size")] + ([
            Sample((np.array([1.0, np.inf, 2.0, -np.inf], dtype=dtype), 2, 0, 4), note="infinities left out")]
            if dtype in FLOATS else [])


def _histc_ref(a, bins=100, min=0, max=0):
    a = a.ravel().astype(np.float64)
    lo, hi = float(min), float(max)
    if lo == hi and a.size:
        lo, hi = a.min(), a.max()
    if lo == hi:
        lo, hi = lo - 1, hi + 1
    kept = a[(a >= lo) & (a <= hi)]
    pos = np.minimum(((kept - lo) * bins / (hi - lo)).astype(np.int64), bins - 1)
    return np.bincount(pos, minlength=bins).astype(np.float64)


# ----------------------------------------------------------------------------- unique
def _key(v):
    return (1, 0.0) if isinstance(v, float) and math.isnan(v) else (0, v)


def _group(rows, sort):
    """firsts (row positions), inverse and counts of equal rows (== per element: NaNs differ)."""
    order = sorted(range(len(rows)), key=lambda i: [_key(v) for v in rows[i]]) if sort else list(range(len(rows)))
    firsts, inverse, counts = [], [0] * len(rows), []
    for i in order:
        if not firsts or not all(a == b for a, b in zip(rows[firsts[-1]], rows[i])):
            firsts.append(i)
            counts.append(0)
        counts[-1] += 1
        inverse[i] = len(firsts) - 1
    return firsts, np.array(inverse, dtype=np.int64), np.array(counts, dtype=np.int64)


def _unique_along(a, dim, sort, return_inverse, return_counts):
    if dim is None:
        moved = a.reshape(-1, 1)
    else:
        moved = np.moveaxis(a, dim, 0).reshape(a.shape[dim], a.size // max(a.shape[dim], 1))
    firsts, inverse, counts = _group([list(r) for r in moved.tolist()], sort)
    if dim is None:
        out = a.reshape(-1)[firsts]
        inverse = inverse.reshape(a.shape)
    else:
        out = np.take(a, np.array(firsts, dtype=np.int64), axis=dim)
    empty = np.zeros(0, dtype=np.int64)
    return out, inverse if return_inverse else empty, counts if return_counts else empty


def _unique2_ref(a, sorted=True, return_inverse=False, return_counts=False):
    return _unique_along(a, None, True, return_inverse, return_counts)


def _unique_dim_ref(a, dim, sorted=True, return_inverse=False, return_counts=False):
    return _unique_along(a, dim, True, return_inverse, return_counts)


def _unique_consecutive_ref(a, return_inverse=False, return_counts=False, dim=None):
    return _unique_along(a, dim, False, return_inverse, return_counts)


def _repeats(dtype):
    return np.array([[3, 1, 3], [3, 1, 3], [0, 2, 2], [3, 1, 3]]).astype(dtype)


def _unique_samples(dtype):
    out = [Sample((_repeats(dtype), True, True, True), note="repeats, every output"),
           Sample((values((2, 3, 4), dtype),), dict(return_inverse=True), note="3-D, inverse"),
           Sample((values((), dtype), True, True, True), note="0-dim"),
           Sample((values((2, 0), dtype), True, True, True), note="zero-size"),
           Sample((values((6,), dtype), False, False, True), note="sorted=False sorts too")]
    if dtype in FLOATS:
        out.append(Sample((np.array([1.0, np.nan, -0.0, np.nan, 0.0, 1.0], dtype=dtype), True, True, True),
                          note="NaNs stay apart and sort last; -0 joins 0"))
    return out


def _unique_dim_samples(dtype):
    r = _repeats(dtype)
    return [Sample((r, 0, True, True, True), note="rows"),
            Sample((r, 1), dict(return_counts=True), note="columns, counts"),
            Sample((r.reshape(2, 2, 3), -2, True, True, False), note="3-D, dim -2"),
            Sample((values((0, 3), dtype), 0, True, True, True), note="zero-size along dim")]


def _unique_consecutive_samples(dtype):
    out = [Sample((_repeats(dtype), True, True), note="runs of the flattened tensor"),
           Sample((_repeats(dtype), True, True, 0), note="runs of rows"),
           Sample((_repeats(dtype).T.copy(),), dict(return_counts=True, dim=1), note="runs of columns"),
           Sample((values((), dtype), True, True), note="0-dim"),
           Sample((values((0,), dtype), True, True), note="zero-size")]
    if dtype in FLOATS:
        out.append(Sample((np.array([np.nan, np.nan, 2.0, 2.0], dtype=dtype), True, True), note="NaNs stay apart"))
    return out


def _unique_outputs(sample, dtype):
    return (sample.args[0].dtype.name, "int64", "int64")


def _unique_errors():
    return [
        ErrorInput(lambda k: k.unique(k.tensor(1), dim=0), IndexError, "tensor has no dimensions", "0-dim, dim 0"),
        ErrorInput(lambda k: k.unique(k.zeros(2, 0), dim=0), RuntimeError,
                   "0 sized dimensions, and they aren't selected", "zero-size other dim"),
        ErrorInput(lambda k: k.unique_consecutive(k.zeros(2, 3), dim=2), IndexError, "Dimension out of range",
                   "dim 2 of 2-D"),
    ]


_ONE_D = "the input must be 1-D (an error input covers 0-dim)"
_SCALAR = "the Scalar overload's tensor is the sorted sequence, at least 1-D"

RECORDS = [
    OpRecord("searchsorted.Tensor", FAMILY, NUMERIC, _searchsorted_samples, ref=_searchsorted_ref,
             result_dtype=_index_dtype, error_inputs=_search_errors),
    # bool sequences work here: a number promotes them to int64 (as torch)
    OpRecord("searchsorted.Scalar", FAMILY, ALL, _searchsorted_scalar_samples, ref=_searchsorted_ref,
             result_dtype=always("int64"), no_zero_dim=_SCALAR),
    OpRecord("bucketize.Tensor", FAMILY, NUMERIC, _bucketize_samples, ref=_bucketize_ref, result_dtype=_index_dtype,
             differentiable=False),
    OpRecord("bucketize.Scalar", FAMILY, ALL, _bucketize_scalar_samples, ref=_bucketize_ref,
             result_dtype=always("int64"), differentiable=False, no_zero_dim=_SCALAR, no_zero_size=_SCALAR),
    OpRecord("isin.Tensor_Tensor", FAMILY, NUMERIC, _isin_samples, ref=_isin_ref, result_dtype=always("bool")),
    OpRecord("isin.Tensor_Scalar", FAMILY, NUMERIC, _isin_scalar_samples, ref=_isin_ref, result_dtype=always("bool"),
             differentiable=False),
    OpRecord("isin.Scalar_Tensor", FAMILY, NUMERIC, _scalar_isin_samples, ref=_isin_ref,
             result_dtype=always("bool"), differentiable=False),
    OpRecord("bincount", FAMILY, INTS, _bincount_samples, ref=_bincount_ref, result_dtype=_bincount_dtype,
             no_zero_dim=_ONE_D, error_inputs=_bincount_errors),
    OpRecord("histc", FAMILY, FLOATS, _histc_samples, ref=_histc_ref),
    OpRecord("_unique2", FAMILY, ALL, _unique_samples, ref=_unique2_ref, result_dtype=_unique_outputs,
             api="_C._unique2", error_inputs=_unique_errors),
    OpRecord("_unique_dim", FAMILY, ALL, _unique_dim_samples, ref=_unique_dim_ref, result_dtype=_unique_outputs,
             api="_C._unique_dim", no_zero_dim="unique along a dim of a 0-dim tensor raises (an error input)"),
    OpRecord("_unique_consecutive", FAMILY, ALL, _unique_consecutive_samples, ref=_unique_consecutive_ref,
             result_dtype=_unique_outputs, api="_C._unique_consecutive"),
]
