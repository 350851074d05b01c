"""Records of the factory ops: empty*, zeros*, ones*, full*, arange, eye, linspace, the fills
(fill_, zero_) and the random ops (uniform_, normal_, random_, rand*, randn*, randint*).

For a factory, the record's dtype is its dtype= argument (`DType(d)` in the sample's kwargs);
samples without it check the dtype the factory infers (the default dtype, int64 for integer
bounds, ...). Factories have no tensor input, so their "0-dim" and "zero-size" samples are
sizes: [] gives a 0-dim result, [0] and [2, 0] a zero-size one.

`empty*` values are arbitrary, and random values are compared by property, not with NumPy:
their `check=` looks at the shape, dtype and strides, the range, the mean / std of a large
sample, and determinism (the same kiln.manual_seed gives the same values, a different one
different values, and the in-place fills give the same values whatever the strides).
"""
import dataclasses
import math

import numpy as np

from .record import (ALL, FLOATS, NP_DTYPE, NUMERIC, SHAPES, DType, ErrorInput, OpRecord, Sample, Seed,
                     shape_samples, values)

FAMILY = "factory"

# Result sizes: 0-dim, zero-size, 1-D to 3-D.
SIZES = [[], [0], [2, 0], [5], [3, 4], [2, 3, 4]]
LARGE = [100, 100]          # statistics are checked on samples of this size
DEFAULT_FLOAT = "float32"   # kiln.get_default_dtype()
NO_TENSORS = "no tensor inputs: the harness's non-contiguous re-layout would change nothing"


# ----------------------------------------------------------------------------- helpers
def _kw(d, **more):
    return dict(dtype=DType(d), **more)


def _dtype_arg(sample, default):
    """The dtype a factory call must give: its dtype= argument, else `default`."""
    d = sample.kwargs.get("dtype")
    return str(d) if d is not None else default


def _like_dtype(sample, dtype):
    return _dtype_arg(sample, sample.args[0].dtype.name)


def _name(dt) -> str:
    return str(dt).replace("kiln.", "")


def _call(kiln, name, sample, strided=False):
    """Calls kiln.<name> on the sample; strided=True re-lays its arrays out non-contiguously."""
    from .harness import kiln_args  # imports kiln: only when a check runs (records stay kiln-free)
    args, kwargs = kiln_args(sample, "noncontiguous" if strided else "as_given")
    return getattr(kiln, name)(*args, **kwargs)


def _contiguous_strides(shape):
    strides, n = [], 1
    for s in reversed(list(shape)):
        strides.insert(0, n)
        n *= max(s, 1)
    return tuple(strides)


def _check_meta(result, shape, dtype, where, strides=None):
    assert tuple(result.shape) == tuple(shape), f"{where}: shape {tuple(result.shape)}, expected {tuple(shape)}"
    assert _name(result.dtype) == dtype, f"{where}: dtype {_name(result.dtype)}, expected {dtype}"
    if strides is not None and math.prod(shape) > 0:
        assert tuple(result.stride()) == tuple(strides), f"{where}: strides {result.stride()}, expected {strides}"


def _check_requires_grad(result, sample, where):
    want = bool(sample.kwargs.get("requires_grad", False))
    assert result.requires_grad == want and result.is_leaf, f"{where}: requires_grad {result.requires_grad}"


def _check_statistics(v, mean, std, where):
    """mean within 6 standard errors, std within 5% (on LARGE samples: far from flaky)."""
    v = v.astype(np.float64).reshape(-1)
    if v.size < 1000:
        return
    assert abs(v.mean() - mean) <= 6 * std / math.sqrt(v.size), f"{where}: mean {v.mean()}, expected {mean}"
    assert abs(v.std() - std) <= 0.05 * std, f"{where}: std {v.std()}, expected {std}"


def _check_seeded(kiln, make, where, varies=True):
    """make() after the same manual_seed gives the same values, after another seed others."""
    kiln.manual_seed(1234)
    a = make().detach().numpy().copy()
    kiln.manual_seed(1234)
    b = make().detach().numpy().copy()
    np.testing.assert_array_equal(a, b, err_msg=f"{where}: the same seed gave different values")
    if varies and a.size >= 64:
        kiln.manual_seed(4321)
        c = make().detach().numpy()
        assert not np.array_equal(a, c), f"{where}: another seed gave the same values"


def _in_range(v, lo, hi, where):
    if v.size:
        assert (v >= lo).all() and (v < hi).all(), f"{where}: values in [{v.min()}, {v.max()}], expected [{lo}, {hi})"


def _integral(v, where):
    if v.size and v.dtype.kind == "f":
        assert (v == np.floor(v)).all(), f"{where}: non-integral values {v[v != np.floor(v)][:5]}"


def _discrete_stats(v, lo, hi, where):
    """Integers uniform in [lo, hi): every value turns up (small ranges), mean and std."""
    v = v.astype(np.float64).reshape(-1)
    if v.size < 1000:
        return
    if hi - lo <= 16:
        assert set(np.unique(v)) == set(range(lo, hi)), f"{where}: values {np.unique(v)}, expected all of [{lo}, {hi})"
    n = float(hi - lo)
    _check_statistics(v, (lo + hi - 1) / 2, math.sqrt((n * n - 1) / 12), where)


# ----------------------------------------------------------------------------- empty*
def _size_samples(d, default=DEFAULT_FLOAT):
    """One sample per size of SIZES with dtype=d; where d is the dtype the factory infers
    (`default`), also without dtype=; for floats, also requires_grad=True; and device='cpu'."""
    out = [Sample((list(s),), _kw(d), note=f"size {s}") for s in SIZES]
    if d == default:
        out.append(Sample(([3, 4],), {}, note="dtype inferred"))
    if d in FLOATS:
        out.append(Sample(([2, 3],), _kw(d, requires_grad=True), note="requires_grad=True"))
    out.append(Sample(([2, 3],), _kw(d, device="cpu"), note="device='cpu'"))
    return out


def _empty_check(kiln, result, sample):
    where = f"empty [{sample.note}]"
    size = sample.args[0]
    _check_meta(result, size, _dtype_arg(sample, DEFAULT_FLOAT), where, _contiguous_strides(size))
    _check_requires_grad(result, sample, where)


def _empty_strided_samples(d):
    cases = [([3, 4], [1, 3], "column-major"), ([], [], "0-dim"), ([0], [1], "zero-size"),
             ([2, 0], [1, 2], "zero-size 2-D"), ([3, 4], [4, 1], "row-major"), ([2, 3, 4], [1, 2, 6], "3-D reversed"),
             ([3, 4], [0, 1], "overlapping rows (stride 0)"), ([2, 3], [10, 2], "gaps")]
    out = [Sample((size, stride), _kw(d), note=note) for size, stride, note in cases]
    if d == DEFAULT_FLOAT:
        out.append(Sample(([2, 3], [3, 1]), {}, note="dtype inferred"))
    if d in FLOATS:
        out.append(Sample(([2, 3], [1, 2]), _kw(d, requires_grad=True), note="requires_grad=True"))
    return out


def _empty_strided_check(kiln, result, sample):
    where = f"empty_strided [{sample.note}]"
    size, stride = sample.args[:2]
    _check_meta(result, size, _dtype_arg(sample, DEFAULT_FLOAT), where)
    assert tuple(result.stride()) == tuple(stride), f"{where}: strides {result.stride()}, expected {stride}"
    _check_requires_grad(result, sample, where)


def _like_samples(d, declared=ALL, extra_args=()):
    """Tensor inputs of every shape (and an expanded one), plus dtype= overrides."""
    out = [Sample(s.args + tuple(extra_args), {}, s.note) for s in shape_samples(d, 1)]
    out.append(Sample((np.broadcast_to(values((1, 4), d), (3, 4)),) + tuple(extra_args), note="expanded input"))
    for d2 in declared:
        if d2 != d:
            out.append(Sample((values((2, 3), d),) + tuple(extra_args), _kw(d2), note=f"{d} input, dtype={d2}"))
    return out


def _empty_like_check(kiln, result, sample):
    where = f"empty_like [{sample.note}]"
    x = sample.args[0]
    # Inputs here are contiguous, expanded or every-other-row views: none is dense with other
    # strides, so the result is row-major (torch's preserve_format).
    _check_meta(result, x.shape, _like_dtype(sample, None), where, _contiguous_strides(x.shape))
    assert not result.requires_grad, where
    # preserve_format keeps a dense permuted layout (samples cannot make one: see the report).
    t = kiln.empty([3, 4], dtype=result.dtype).t()
    assert tuple(kiln.empty_like(t).stride()) == tuple(t.stride()), f"{where}: empty_like of a transposed tensor"


# ----------------------------------------------------------------------------- full*, zeros*, ones*
def _zeros_ref(size, dtype=np.float32, **_):
    return np.zeros(size, dtype=dtype)


def _ones_ref(size, dtype=np.float32, **_):
    return np.ones(size, dtype=dtype)


def _fill_values(d):
    """Fill values for dtype d, including ones of another kind (2.5 into an int truncates)."""
    # (The first value fits every dtype: it is also the fill of the dtype= samples.)
    return {"bool": (True, False, 3), "uint8": (3, 200, -1, 2.5, True), "int8": (5, -128, 127, -2.5),
            "int16": (7, -300, 2.5, True), "int32": (3, -2, 2.5, True), "int64": (-7, 2 ** 40, -2.5),
            "float32": (2.5, -1, True), "float64": (2.25, -1.25, 3, 1e300)}[d]


def _inferred(value):
    """torch.full's dtype for a fill value without dtype=."""
    return "bool" if isinstance(value, bool) else "int64" if isinstance(value, int) else DEFAULT_FLOAT


def _full_samples(d):
    out = [Sample((list(s), v), _kw(d), note=f"size {s}, fill {v!r}") for s in SIZES for v in _fill_values(d)[:1]]
    out += [Sample(([2, 3], v), _kw(d), note=f"fill {v!r}") for v in _fill_values(d)[1:]]
    inferred = {"bool": True, "int64": 5, DEFAULT_FLOAT: -0.5}
    if d in inferred:
        out.append(Sample(([3, 4], inferred[d]), {}, note=f"dtype inferred from {inferred[d]!r}"))
    return out


def _full_ref(size, fill_value, dtype=None, **_):
    return np.full(size, fill_value, dtype=dtype or NP_DTYPE[_inferred(fill_value)])


def _like_ref(fill):
    def ref(x, dtype=None, **_):
        return np.full(x.shape, fill, dtype=dtype or x.dtype)
    return ref


def _full_like_samples(d):
    out = []
    for v in _fill_values(d):
        out += [Sample(s.args[:1] + (v,), s.kwargs, f"{s.note}, fill {v!r}") for s in _like_samples(d)[:2]]
    return out + _like_samples(d, extra_args=(_fill_values(d)[0],))


def _full_like_ref(x, fill_value, dtype=None, **_):
    return np.full(x.shape, fill_value, dtype=dtype or x.dtype)


# ----------------------------------------------------------------------------- arange, linspace, eye
def _arange_ref(*bounds, dtype=None, **_):
    start, end, step = (0, bounds[0], 1) if len(bounds) == 1 else (tuple(bounds) + (1,))[:3]
    all_int = all(isinstance(b, int) for b in (start, end, step))
    dtype = np.dtype(dtype or (np.int64 if all_int else NP_DTYPE[DEFAULT_FLOAT]))
    n = max(0, math.ceil((end - start) / step))
    if all_int and dtype.kind == "i":
        return (start + step * np.arange(n, dtype=np.int64)).astype(dtype)
    return (start + step * np.arange(n, dtype=np.float64)).astype(dtype)   # as kiln and torch: in double


def _arange_samples(d):
    # Float bounds only for float dtypes: torch's integer arange of float bounds truncates the
    # bounds first (see the report), so those are not compared.
    ends = [5, 0, 1] + ([4.5, -0.0] if d in FLOATS else [])
    out = [Sample((e,), _kw(d), note=f"end {e!r}") for e in ends]
    if d == "int64":
        out.append(Sample((6,), {}, note="int end: int64"))
    if d == DEFAULT_FLOAT:
        out.append(Sample((3.5,), {}, note="float end: default dtype"))
    out.append(Sample((3,), _kw(d, device="cpu"), note="device='cpu'"))
    return out


def _arange_step_cases(d):
    cases = [(1, 7, 2), (5, 1, -1), (2, 2, 1), (-3, 4, 3), (4, 1, -1), (1, 4)]
    if d in FLOATS:
        cases += [(0, 1, 0.1), (-1, -5, -1.5), (0.5, 2.0, 0.25), (1.0, 1.0, 0.5)]
    return cases


def _arange_start_step_samples(d):
    out = [Sample(c, _kw(d), note=f"arange{c}") for c in _arange_step_cases(d)]
    if d == "int64":
        out.append(Sample((-2, 9, 3), {}, note="int bounds: int64"))
    if d == DEFAULT_FLOAT:
        out.append(Sample((1, 3, 0.5), {}, note="a float step: default dtype"))
    return out


def _arange_out_samples(d):
    out = []
    for c in _arange_step_cases(d):
        n = len(_arange_ref(*c))
        out.append(Sample(c, {"out": np.zeros(0, dtype=NP_DTYPE[d])}, note=f"arange{c}, empty out"))
        out.append(Sample(c, {"out": np.zeros(n, dtype=NP_DTYPE[d])}, note=f"arange{c}, out of the result's size"))
    out.append(Sample((0, 3, 1), {"out": np.zeros((2, 3), dtype=NP_DTYPE[d])}, note="2-D out is resized"))
    return out


def _arange_out_ref(*bounds, out=None):
    return _arange_ref(*bounds, dtype=out.dtype)


def _linspace_samples(d):
    cases = [(0, 10, 4), (-10, 10, 4), (2, 3, 1), (2, 3, 0), (5, 5, 3), (3, -2, 6)]
    if d in FLOATS:
        cases += [(0, 1, 7), (-1.5, 2.5, 9), (1.0, -1.0, 2)]
    out = [Sample(c, _kw(d), note=f"linspace{c}") for c in cases]
    if d == DEFAULT_FLOAT:
        out.append(Sample((0, 10, 3), {}, note="int bounds: default dtype"))
    return out


def _linspace_ref(start, end, steps, dtype=None, **_):
    if dtype is not None and np.dtype(dtype).kind == "u":  # the bounds wrap into uint8 first, as torch's
        start, end = (int(np.array(v, dtype=np.int64).astype(dtype)) for v in (start, end))
    v = np.linspace(start, end, steps, dtype=np.float64)
    return v.astype(dtype or NP_DTYPE[DEFAULT_FLOAT])   # float -> int truncates, as kiln and torch


def _eye_samples(d):
    cases = [(3,), (2, 4), (4, 2), (1,), (0,), (3, 0), (0, 2), (3, None)]
    out = [Sample(c, _kw(d), note=f"eye{c}") for c in cases]
    if d == DEFAULT_FLOAT:
        out.append(Sample((2,), {}, note="default dtype"))
    return out


def _eye_ref(n, m=None, dtype=None, **_):
    return np.eye(n, m, dtype=dtype or NP_DTYPE[DEFAULT_FLOAT])


# ----------------------------------------------------------------------------- fill_, zero_
def _fill_samples(d):
    return [Sample((values(s, d), v), note=f"shape {s}, value {v!r}") for v in _fill_values(d) for s in SHAPES]


def _fill_ref(x, value):
    return np.full(x.shape, value, dtype=x.dtype)


# ----------------------------------------------------------------------------- random
def _seeded_repro(d, lo, hi):
    """float32: seed 686 draws the double 1 - 2**-53 * k that rounds to 1.0f at element 7222."""
    return [Sample((np.zeros((7223,), dtype=NP_DTYPE[d]), lo, hi), note="seed 686: last value rounds up in float32")]


def _uniform_samples(d):
    out = [Sample((values(s, d), -2.0, 3.0), note=f"shape {s}, [-2, 3)") for s in SHAPES]
    out += [Sample((values((3, 4), d),), note="default [0, 1)"),
            Sample((np.zeros(LARGE, dtype=NP_DTYPE[d]),), note="large, [0, 1)"),
            Sample((np.zeros(LARGE, dtype=NP_DTYPE[d]), -5.0, -4.5), note="large, [-5, -4.5)"),
            Sample((values((3, 4), d), 1.5, 1.5), note="from == to")]
    if d in FLOATS:
        out += _seeded_repro(d, 0.0, 1.0)
    return out


def _uniform_check(kiln, result, sample):
    x = sample.args[0]
    lo, hi = (tuple(sample.args[1:]) + (0.0, 1.0)[len(sample.args) - 1:])[:2]
    where = f"uniform_ [{sample.note}]"
    _check_meta(result, x.shape, x.dtype.name, where)
    v = result.detach().numpy()
    if lo == hi:
        np.testing.assert_array_equal(v, np.full(x.shape, lo, dtype=x.dtype), err_msg=where)
    else:
        _in_range(v, lo, hi, where)
        _check_statistics(v, (lo + hi) / 2, (hi - lo) / math.sqrt(12), where)
    if sample.note.startswith("seed 686"):
        kiln.manual_seed(686)
        _in_range(_call(kiln, "uniform_", sample).numpy(), lo, hi, where)
    _check_seeded(kiln, lambda: _call(kiln, "uniform_", sample), where, varies=lo != hi)
    if x.ndim == 1 and x.size > 1:   # the same numbers whatever the strides
        kiln.manual_seed(99)
        a = _call(kiln, "uniform_", sample).numpy()
        kiln.manual_seed(99)
        b = _call(kiln, "uniform_", sample, strided=True).numpy()
        np.testing.assert_array_equal(a, b, err_msg=f"{where}: strided self")


def _normal_samples(d):
    out = [Sample((values(s, d), 1.5, 0.5), note=f"shape {s}, N(1.5, 0.5)") for s in SHAPES]
    out += [Sample((values((3, 4), d),), note="default N(0, 1)"),
            Sample((np.zeros(LARGE, dtype=NP_DTYPE[d]),), note="large, N(0, 1)"),
            Sample((np.zeros(LARGE, dtype=NP_DTYPE[d]), -3.0, 2.5), note="large, N(-3, 2.5)"),
            Sample((values((3, 4), d), 2.0, 0.0), note="std 0")]
    return out


def _normal_check(kiln, result, sample):
    x = sample.args[0]
    mean, std = (tuple(sample.args[1:]) + (0.0, 1.0)[len(sample.args) - 1:])[:2]
    where = f"normal_ [{sample.note}]"
    _check_meta(result, x.shape, x.dtype.name, where)
    v = result.detach().numpy()
    assert np.isfinite(v).all(), where
    if std == 0:
        np.testing.assert_array_equal(v, np.full(x.shape, mean, dtype=x.dtype), err_msg=where)
    else:
        _check_statistics(v, mean, std, where)
    _check_seeded(kiln, lambda: _call(kiln, "normal_", sample), where, varies=std != 0)
    if x.ndim == 1 and 1 < x.size < 16:  # from 16 elements, a contiguous tensor takes torch's normal_fill
        kiln.manual_seed(99)
        a = _call(kiln, "normal_", sample).numpy()
        kiln.manual_seed(99)
        b = _call(kiln, "normal_", sample, strided=True).numpy()
        np.testing.assert_array_equal(a, b, err_msg=f"{where}: strided self")


def _int_range(d):
    return (0, 2) if d == "bool" else (1, 8) if d == "uint8" else (-3, 4)


def _random_samples(d):
    lo, hi = _int_range(d)
    out = [Sample((values(s, d), lo, hi), note=f"shape {s}, [{lo}, {hi})") for s in SHAPES]
    out.append(Sample((np.zeros(LARGE, dtype=NP_DTYPE[d]), lo, hi), note=f"large, [{lo}, {hi})"))
    if d != "bool":
        out.append(Sample((np.zeros(LARGE, dtype=NP_DTYPE[d]), 10, 13), note="large, [10, 13)"))
        out.append(Sample((values((3, 4), d), 7, 8), note="one value: [7, 8)"))
    big = {"uint8": (0, 255), "int8": (-128, 127), "int16": (-2 ** 15, 2 ** 15 - 1), "int32": (-2 ** 31, 2 ** 31 - 1), "int64": (-2 ** 62, 2 ** 62), "float32": (-2 ** 24, 2 ** 24),
           "float64": (-2 ** 53, 2 ** 53)}
    if d in big:
        out.append(Sample((np.zeros(LARGE, dtype=NP_DTYPE[d]),) + big[d], note="large, the dtype's exact range"))
    return out


def _random_check(kiln, result, sample):
    x, lo, hi = sample.args[:3]
    where = f"random_ [{sample.note}]"
    _check_meta(result, x.shape, x.dtype.name, where)
    v = result.detach().numpy()
    _integral(v, where)
    _in_range(v.astype(np.float64) if v.dtype == bool else v, lo, hi, where)
    _discrete_stats(v, lo, hi, where)
    _check_seeded(kiln, lambda: _call(kiln, "random_", sample), where, varies=hi - lo > 1)
    if x.ndim == 1 and x.size > 1:
        kiln.manual_seed(99)
        a = _call(kiln, "random_", sample).numpy()
        kiln.manual_seed(99)
        b = _call(kiln, "random_", sample, strided=True).numpy()
        np.testing.assert_array_equal(a, b, err_msg=f"{where}: strided self")


def _random_to_samples(d):
    hi = 2 if d == "bool" else 5
    out = [Sample((values(s, d), hi), note=f"shape {s}, [0, {hi})") for s in SHAPES]
    out.append(Sample((np.zeros(LARGE, dtype=NP_DTYPE[d]), hi), note=f"large, [0, {hi})"))
    return out


def _random_to_check(kiln, result, sample):
    x, hi = sample.args[:2]
    where = f"random_.to [{sample.note}]"
    _check_meta(result, x.shape, x.dtype.name, where)
    v = result.detach().numpy()
    _integral(v, where)
    _in_range(v.astype(np.float64) if v.dtype == bool else v, 0, hi, where)
    _discrete_stats(v, 0, hi, where)
    _check_seeded(kiln, lambda: _call(kiln, "random_", sample), where, varies=hi > 1)


# random_() without bounds draws from [0, top]: torch's uniform_int (2^mantissa for floats).
_RANDOM_TOP = {"bool": 1, "uint8": 255, "int8": 127, "int16": 2 ** 15 - 1, "int32": 2 ** 31 - 1, "int64": 2 ** 63 - 1, "float32": 2 ** 24, "float64": 2 ** 53}


def _random_full_samples(d):
    return ([Sample((values(s, d),), note=f"shape {s}") for s in SHAPES]
            + [Sample((np.zeros(LARGE, dtype=NP_DTYPE[d]),), note="large")])


def _random_full_check(kiln, result, sample):
    x = sample.args[0]
    where = f"random_ [{sample.note}]"
    _check_meta(result, x.shape, x.dtype.name, where)
    v = result.detach().numpy()
    _integral(v, where)
    if v.size:
        top = _RANDOM_TOP[x.dtype.name]
        assert v.min() >= 0 and int(v.max()) <= top, f"{where}: values in [{v.min()}, {v.max()}], expected [0, {top}]"
    if v.size >= 1000:  # spread over the range: the mean near top / 2
        assert abs(v.astype(np.float64).mean() / max(top, 1) - 0.5) < 0.1, where
    _check_seeded(kiln, lambda: _call(kiln, "random_", sample), where)


def _rand_samples(d):
    out = _size_samples(d, default=DEFAULT_FLOAT) + [Sample((LARGE,), _kw(d), note="large")]
    if d in FLOATS:
        out.append(Sample(([7223],), _kw(d), note="seed 686: last value rounds up in float32"))
    return out


def _random_factory_check(name, lo_hi, stats, default):
    """Checks of rand / randn / randint / randint.low / rand_like / randn_like."""
    def check(kiln, result, sample):
        where = f"{name} [{sample.note}]"
        like = name.endswith("_like")
        shape = sample.args[0].shape if like else sample.args[-1]
        dtype = _like_dtype(sample, None) if like else _dtype_arg(sample, default)
        _check_meta(result, shape, dtype, where, _contiguous_strides(shape))
        _check_requires_grad(result, sample, where)
        v = result.detach().numpy()
        lo, hi = lo_hi(sample)
        if name.startswith("randint"):
            _integral(v, where)
            _in_range(v.astype(np.float64) if v.dtype == bool else v, lo, hi, where)
            _discrete_stats(v, lo, hi, where)
        else:
            assert np.isfinite(v).all(), where
            if lo is not None:
                _in_range(v, lo, hi, where)
            _check_statistics(v, *stats, where)
        if sample.note.startswith("seed 686"):
            kiln.manual_seed(686)
            _in_range(_call(kiln, name.split(".")[0], sample).numpy(), lo, hi, where)
        _check_seeded(kiln, lambda: _call(kiln, name.split(".")[0], sample), where)
    return check


def _randint_samples(d):
    hi = 2 if d == "bool" else 5
    out = [Sample((hi, list(s)), _kw(d), note=f"size {s}, [0, {hi})") for s in SIZES]
    out += [Sample((hi, LARGE), _kw(d), note=f"large, [0, {hi})"),
            Sample((hi, [2, 3]), _kw(d, device="cpu"), note="device='cpu'")]
    if d == "int64":
        out.append(Sample((3, [4]), {}, note="dtype inferred: int64"))
    if d != "bool":
        out.append(Sample((1, [3, 4]), _kw(d), note="one value: [0, 1)"))
    return out


def _randint_low_samples(d):
    lo, hi = _int_range(d)
    out = [Sample((lo, hi, list(s)), _kw(d), note=f"size {s}, [{lo}, {hi})") for s in SIZES]
    out.append(Sample((lo, hi, LARGE), _kw(d), note=f"large, [{lo}, {hi})"))
    if d != "bool":
        out.append(Sample((100, 103, LARGE), _kw(d), note="large, [100, 103)"))
    if d == "int64":
        out.append(Sample((-5, 5, [4]), {}, note="dtype inferred: int64"))
    return out


def _rand_like_samples(d):
    out = _like_samples(d, FLOATS) + [Sample((np.zeros(LARGE, dtype=NP_DTYPE[d]),), note="large")]
    out += [Sample((values((2, 3), d2),), _kw(d), note=f"{d2} input, dtype={d}") for d2 in ("bool", "int64")]
    return out


# ----------------------------------------------------------------------------- gradients
def _deterministic_grad_samples(args):
    """Gradient samples of the in-place random fills that draw one value only (from == to,
    std 0, [3, 4)): their result is a constant, so numerical differences are meaningful."""
    return lambda: [Sample((values(s, "float64"),) + args, note=f"shape {s}, deterministic")
                    for s in [(), (5,), (2, 3)]]


# ----------------------------------------------------------------------------- errors
def _error_table():
    e = ErrorInput
    return {
        "arange": [
            e(lambda k: k.arange(-1), RuntimeError, "inconsistent with step sign", "negative end"),
            e(lambda k: k.arange(float("nan")), RuntimeError, "unsupported range", "end nan"),
        ],
        "arange.start_step": [
            e(lambda k: k.arange(1, 5, 0), RuntimeError, "step must be nonzero", "step 0"),
            e(lambda k: k.arange(1.0, 5.0, 0.0), RuntimeError, "step must be nonzero", "float step 0"),
            e(lambda k: k.arange(1, 5, -1), RuntimeError, "inconsistent with step sign", "step of the wrong sign"),
            e(lambda k: k.arange(5, 1, 1), RuntimeError, "inconsistent with step sign", "end < start, step > 0"),
            e(lambda k: k.arange(0, float("inf")), RuntimeError, "unsupported range", "end inf"),
            e(lambda k: k.arange(0, 1e30, 1e-30), RuntimeError, "invalid size", "more than int64 elements"),
        ],
        "arange.start_out": [
            e(lambda k: k.arange(0, 5, 0, out=k.empty([0])), RuntimeError, "step must be nonzero", "step 0"),
            e(lambda k: k.arange(0, 5, -1, out=k.empty([0], dtype=k.int64)), RuntimeError,
              "inconsistent with step sign", "step of the wrong sign"),
        ],
        "linspace": [
            e(lambda k: k.linspace(0, 1, -1), RuntimeError, "number of steps must be non-negative",
              "negative steps"),
        ],
        "eye": [
            e(lambda k: k.eye(-1), RuntimeError, "non-negative", "negative n"),
            e(lambda k: k.eye(2, -3), RuntimeError, "non-negative", "negative m"),
        ],
        "zeros": [
            e(lambda k: k.zeros([2], device="cuda"), AssertionError, "not compiled with CUDA", "a device kiln has no kernels for"),
        ],
        "full": [
            e(lambda k: k.full([2], 2 ** 40, dtype=k.int32), RuntimeError, "overflow", "value beyond int32"),
            e(lambda k: k.full([2], float("inf"), dtype=k.int64), RuntimeError, "overflow", "inf into int64"),
            e(lambda k: k.full([2], 1e300, dtype=k.float32), RuntimeError, "overflow", "1e300 into float32"),
        ],
        "full_like": [
            e(lambda k: k.full_like(k.ones([2], dtype=k.int32), 2 ** 40), RuntimeError, "overflow",
              "value beyond int32"),
            e(lambda k: k.full_like(k.ones([2]), float("nan"), dtype=k.int64), RuntimeError, "overflow",
              "nan into int64"),
        ],
        "fill_.Scalar": [
            e(lambda k: k.ones([2], dtype=k.int32).fill_(2 ** 40), RuntimeError, "overflow", "value beyond int32"),
        ],
        "empty_strided": [
            e(lambda k: k.empty_strided([2, 3], [1, 1, 1]), RuntimeError, "mismatch in length of strides and shape",
              "len(stride) != len(size)"),
            e(lambda k: k.empty_strided([2, 3], [-1, 1]), RuntimeError, "negative strides", "a negative stride"),
        ],
        "randint": [
            e(lambda k: k.randint(0, [2]), RuntimeError, "expects 'from' to be less than 'to'", "high 0"),
            # torch: "to - 1 is out of bounds for int"; kiln wraps the bound (see the report).
            e(lambda k: k.randint(2 ** 40, [8], dtype=k.int32), RuntimeError, "out of bounds",
              "high beyond int32"),
        ],
        "randint.low": [
            e(lambda k: k.randint(5, 3, [2]), RuntimeError, "expects 'from' to be less than 'to'", "low > high"),
            e(lambda k: k.randint(3, 3, [2]), RuntimeError, "expects 'from' to be less than 'to'", "low == high"),
        ],
        "random_.from": [
            e(lambda k: k.empty([2]).random_(2, 1), RuntimeError, "expects 'from' to be less than 'to'", "from > to"),
            e(lambda k: k.empty([2], dtype=k.int64).random_(1, 1), RuntimeError,
              "expects 'from' to be less than 'to'", "from == to"),
            # torch: "to - 1 is out of bounds for int"; kiln wraps the bound (see the report).
            e(lambda k: k.empty([8], dtype=k.int32).random_(0, 2 ** 40), RuntimeError, "out of bounds",
              "to beyond int32"),
        ],
        "uniform_": [
            e(lambda k: k.empty([2]).uniform_(1.0, 0.0), RuntimeError, r"\[from, to\) range", "from > to"),
            e(lambda k: k.empty([8]).uniform_(0.0, float("inf")), RuntimeError, r"\[from, to\) range", "to = inf"),
        ],
        "normal_": [
            e(lambda k: k.empty([2]).normal_(0.0, -1.0), RuntimeError, r"std >= 0\.0", "negative std"),
            e(lambda k: k.empty([2]).normal_(0.0, float("nan")), RuntimeError, r"std >= 0\.0", "nan std"),
        ],
    }


def _errors(name):
    return lambda: _error_table().get(name, [])


# ----------------------------------------------------------------------------- records
def _factory(name, samples, dtypes=ALL, **kw):
    kw.setdefault("no_noncontiguous", NO_TENSORS)
    return OpRecord(name, FAMILY, dtypes, samples, domain="— (no tensor input)", **kw)


def _fill(name, dtypes, samples, **kw):
    """The in-place fills: self's values are overwritten, whatever they are."""
    return OpRecord(name, FAMILY, dtypes, samples, domain="real (overwritten)", **kw)


_RECORDS = [
    _factory("empty", lambda d: _size_samples(d, default=DEFAULT_FLOAT), check=_empty_check),
    _factory("empty_strided", _empty_strided_samples, check=_empty_strided_check),
    OpRecord("empty_like", FAMILY, ALL, _like_samples, check=_empty_like_check, result_dtype=_like_dtype),
    _factory("zeros", lambda d: _size_samples(d, default=DEFAULT_FLOAT), ref=_zeros_ref),
    OpRecord("zeros_like", FAMILY, ALL, _like_samples, ref=_like_ref(0), result_dtype=_like_dtype),
    _factory("ones", lambda d: _size_samples(d, default=DEFAULT_FLOAT), ref=_ones_ref),
    OpRecord("ones_like", FAMILY, ALL, _like_samples, ref=_like_ref(1), result_dtype=_like_dtype),
    _factory("full", _full_samples, ref=_full_ref),
    OpRecord("full_like", FAMILY, ALL, _full_like_samples, ref=_full_like_ref, result_dtype=_like_dtype),
    _factory("arange", _arange_samples, NUMERIC, ref=_arange_ref),
    _factory("arange.start_step", _arange_start_step_samples, NUMERIC, ref=_arange_ref),
    # The out= overload: its dtype is out's, so the samples carry out= themselves.
    OpRecord("arange.start_out", FAMILY, NUMERIC, _arange_out_samples, ref=_arange_out_ref, out_sets_dtype=True,
             domain="— (no tensor input but out=)",
             no_zero_dim="the only tensor is out=, and arange's result is 1-D"),
    _factory("eye", _eye_samples, ref=_eye_ref),
    _factory("linspace", _linspace_samples, NUMERIC, ref=_linspace_ref),
    _fill("fill_.Scalar", ALL, _fill_samples, ref=_fill_ref),
    _fill("zero_", ALL, lambda d: shape_samples(d, 1), ref=np.zeros_like),
    _fill("uniform_", FLOATS, _uniform_samples, check=_uniform_check,
          grad_samples=_deterministic_grad_samples((0.5, 0.5))),
    _fill("normal_", FLOATS, _normal_samples, check=_normal_check,
          grad_samples=_deterministic_grad_samples((2.0, 0.0))),
    _fill("random_.from", ALL, _random_samples, check=_random_check,
          grad_samples=_deterministic_grad_samples((3, 4))),
    _fill("random_.to", ALL, _random_to_samples, check=_random_to_check,
          grad_samples=_deterministic_grad_samples((1,))),
    _fill("random_", ALL, _random_full_samples, check=_random_full_check,
          grad_samples=lambda: [Sample((values(s, "float64"),), {"generator": Seed(5)}, note=f"shape {s}, seeded")
                                for s in [(), (5,), (2, 3)]]),
    _factory("rand", _rand_samples, FLOATS, check=_random_factory_check("rand", lambda s: (0.0, 1.0),
                                                                         (0.5, math.sqrt(1 / 12)), DEFAULT_FLOAT)),
    _factory("randn", lambda d: _size_samples(d, default=DEFAULT_FLOAT) + [Sample((LARGE,), _kw(d), note="large")],
             FLOATS, check=_random_factory_check("randn", lambda s: (None, None), (0.0, 1.0), DEFAULT_FLOAT)),
    _factory("randint", _randint_samples,
             check=_random_factory_check("randint", lambda s: (0, s.args[0]), None, "int64")),
    _factory("randint.low", _randint_low_samples,
             check=_random_factory_check("randint.low", lambda s: tuple(s.args[:2]), None, "int64")),
    OpRecord("rand_like", FAMILY, FLOATS, _rand_like_samples, result_dtype=_like_dtype,
             check=_random_factory_check("rand_like", lambda s: (0.0, 1.0), (0.5, math.sqrt(1 / 12)), None)),
    OpRecord("randn_like", FAMILY, FLOATS, _rand_like_samples, result_dtype=_like_dtype,
             check=_random_factory_check("randn_like", lambda s: (None, None), (0.0, 1.0), None)),
]

# Factories written with other ops (CompositeImplicit) give a new leaf: no gradient flows to a
# _like op's input (torch: none either), so they are not differentiable whatever they call.
_NOT_DIFFERENTIABLE = {"empty_like", "zeros", "zeros_like", "ones", "ones_like", "full", "full_like", "arange",
                       "arange.start_step", "rand", "randn", "randint", "randint.low", "rand_like", "randn_like"}

RECORDS = [dataclasses.replace(r, error_inputs=_errors(r.name),
                               differentiable=False if r.name in _NOT_DIFFERENTIABLE else None) for r in _RECORDS]
assert all(isinstance(r, OpRecord) and r.family == FAMILY for r in RECORDS)
