"""Records of the sampling ops: bernoulli (four overloads), multinomial, randperm and
normal(mean, std, size).

Random values are checked by property, as in factory.py: shape and dtype, the values a sample
can take (0/1, a permutation, indices of positive weights), the mean of a large sample, and
determinism (the same kiln.manual_seed gives the same values, another seed others). A sample
with generator=Seed(s) gets a fresh kiln.Generator seeded with s at every call: it must give
the values the default generator gives after kiln.manual_seed(s), the same values on every
call, and leave the default generator untouched. Those samples also make the bernoulli ops'
gradcheck meaningful: with the draws fixed, the numerical gradient is the zero torch declares.
Distributions (chi-square of multinomial frequencies, uniform positions of randperm) are tested
in tests/python/test_random.py.
"""
import dataclasses
import math

import numpy as np

from .factory import (DEFAULT_FLOAT, LARGE, NO_TENSORS, SIZES, _check_meta, _check_requires_grad, _check_statistics,
                      _contiguous_strides, _dtype_arg, _kw)
from .record import ALL, FLOATS, NP_DTYPE, NUMERIC, SHAPES, ErrorInput, OpRecord, Sample, Seed, always, values

FAMILY = "sampling"


# ----------------------------------------------------------------------------- helpers
def _invoke(kiln, name, sample, strided=False):
    """Calls kiln.<name>(...), or the method when kiln has no such function (bernoulli_)."""
    from .harness import kiln_args  # imports kiln: only when a check runs (records stay kiln-free)
    args, kwargs = kiln_args(sample, "noncontiguous" if strided else "as_given")
    if hasattr(kiln, name):
        return getattr(kiln, name)(*args, **kwargs)
    return getattr(args[0], name)(*args[1:], **kwargs)


def _numpy(t):
    return t.detach().numpy().copy()


def _check_determinism(kiln, name, sample, where, varies=True):
    """Seeded: see the module docstring. `varies`: another seed must give other values."""
    if isinstance(sample.kwargs.get("generator"), Seed):
        seed = int(sample.kwargs["generator"])
        before = _numpy(kiln.get_rng_state())
        a, b = _numpy(_invoke(kiln, name, sample)), _numpy(_invoke(kiln, name, sample))
        np.testing.assert_array_equal(a, b, err_msg=f"{where}: a generator seeded alike gave other values")
        np.testing.assert_array_equal(_numpy(kiln.get_rng_state()), before,
                                      err_msg=f"{where}: generator= advanced the default generator")
        plain = dataclasses.replace(sample, kwargs={k: v for k, v in sample.kwargs.items() if k != "generator"})
        kiln.manual_seed(seed)
        np.testing.assert_array_equal(_numpy(_invoke(kiln, name, plain)), a,
                                      err_msg=f"{where}: Generator().manual_seed(s) differs from manual_seed(s)")
        return
    kiln.manual_seed(1234)
    a = _numpy(_invoke(kiln, name, sample))
    kiln.manual_seed(1234)
    np.testing.assert_array_equal(_numpy(_invoke(kiln, name, sample)), a, err_msg=f"{where}: same seed, other values")
    if varies and a.size >= 64:
        kiln.manual_seed(4321)
        assert not np.array_equal(_numpy(_invoke(kiln, name, sample)), a), f"{where}: another seed, same values"


def _probs(shape, d, seed=0):
    """Probabilities in [0, 0.9] of dtype d."""
    return np.abs(values(shape, d, "unit", seed))


# ----------------------------------------------------------------------------- bernoulli
def _check_zero_one(v, p, where):
    """Every value is 0 or 1; p == 0 gives 0 and p == 1 gives 1 (p broadcast to v)."""
    f = v.astype(np.float64)
    assert np.isin(f, (0.0, 1.0)).all(), f"{where}: values other than 0 and 1: {np.unique(f)}"
    p = np.broadcast_to(np.asarray(p, dtype=np.float64), v.shape)
    assert (f[p == 0] == 0).all() and (f[p == 1] == 1).all(), f"{where}: p = 0 gave 1, or p = 1 gave 0"
    if v.size >= 1000:  # the mean within 6 standard errors of the mean probability
        mean, sd = p.mean(), math.sqrt(max((p * (1 - p)).mean(), 1e-12))
        assert abs(f.mean() - mean) <= 6 * sd / math.sqrt(v.size), f"{where}: mean {f.mean()}, expected {mean}"


def _bernoulli_check(name, probability):
    """`probability(sample)` is the p each element is drawn with."""
    def check(kiln, result, sample):
        where = f"{name} [{sample.note}]"
        x = sample.args[0]
        _check_meta(result, x.shape, x.dtype.name, where)
        _check_zero_one(result.detach().numpy(), probability(sample), where)
        p = np.asarray(probability(sample), dtype=np.float64)
        _check_determinism(kiln, name, sample, where, varies=bool(((p > 0) & (p < 1)).any()))
        if x.ndim == 1 and x.size > 1:  # one draw per element in row-major order, whatever the strides
            kiln.manual_seed(99)
            a = _numpy(_invoke(kiln, name, sample))
            kiln.manual_seed(99)
            np.testing.assert_array_equal(_numpy(_invoke(kiln, name, sample, strided=True)), a,
                                          err_msg=f"{where}: strided inputs")
    return check


def _bernoulli_samples(d):
    out = [Sample((_probs(s, d),), note=f"shape {s}") for s in SHAPES]
    out += [Sample((np.array([0, 1, 1, 0, 0.5, 1], dtype=NP_DTYPE[d]),), note="p = 0 and p = 1"),
            Sample((np.broadcast_to(_probs((1, 4), d), (3, 4)),), note="expanded p"),
            Sample((np.full(LARGE, 0.3, dtype=NP_DTYPE[d]),), note="large, p = 0.3"),
            Sample((_probs((3, 4), d),), {"generator": Seed(11)}, note="generator=")]
    return out


def _bernoulli_p_samples(d):
    out = [Sample((values(s, d), 0.3), note=f"shape {s}, p = 0.3") for s in SHAPES]
    out += [Sample((values((3, 4), d), 0.0), note="p = 0"), Sample((values((3, 4), d), 1.0), note="p = 1"),
            Sample((np.zeros(LARGE, dtype=NP_DTYPE[d]), 0.75), note="large, p = 0.75"),
            Sample((values((3, 4), d), 0.5), {"generator": Seed(12)}, note="generator=")]
    return out


def _bernoulli_tensor_samples(d):
    """self of dtype d (its values are overwritten), p float64 unless said otherwise."""
    f = "float64"
    out = [Sample((values(s, d), _probs(s, f)), note=f"shape {s}") for s in SHAPES]
    out += [Sample((values((3, 4), d), _probs((4,), f)), note="p (4,) broadcast to self (3, 4)"),
            Sample((values((2, 3), d), _probs((), f)), note="0-dim p"),
            Sample((values((2, 3), d), _probs((2, 3), "float32")), note="float32 p"),
            Sample((values((6,), d), np.array([0, 1, 1, 0, 0.5, 1])), note="p = 0 and p = 1"),
            Sample((np.zeros(LARGE, dtype=NP_DTYPE[d]), np.full(LARGE, 0.4)), note="large, p = 0.4"),
            Sample((values((3, 4), d), _probs((3, 4), f)), {"generator": Seed(13)}, note="generator=")]
    return out


def _bernoulli_float_samples(d):
    out = [Sample((values(s, d), 0.3), note=f"shape {s}, p = 0.3") for s in SHAPES]
    out += [Sample((values((3, 4), d),), note="default p = 0.5"),
            Sample((values((3, 4), d), 0.0), note="p = 0"), Sample((values((3, 4), d), 1.0), note="p = 1"),
            Sample((np.zeros(LARGE, dtype=NP_DTYPE[d]), 0.2), note="large, p = 0.2"),
            Sample((values((3, 4), d), 0.5), {"generator": Seed(14)}, note="generator=")]
    return out


def _seeded_grad_samples(extra):
    """float64 samples with generator=: every call of gradcheck draws the same numbers."""
    return lambda: [Sample(extra(s), {"generator": Seed(7)}, note=f"shape {s}, generator=")
                    for s in [(), (5,), (2, 3)]]


def _interior(shape, seed=0):
    """Probabilities in [0.05, 0.95]: a perturbation of 1e-6 keeps them valid."""
    return 0.05 + 0.9 * np.random.default_rng(seed + len(shape)).random(shape)


# ----------------------------------------------------------------------------- multinomial
def _weights(shape, d, seed=0):
    return values(shape, d, "positive", seed)


def _multinomial_samples(d):
    w = lambda s, seed=0: _weights(s, d, seed)  # noqa: E731
    with_zeros = np.array([[0, 2, 0, 1, 3], [1, 0, 0, 0, 0]], dtype=NP_DTYPE[d])
    return [
        Sample((w((5,)), 3), note="1-D, 3 of 5 without replacement"),
        Sample((w((5,)), 5), note="1-D, all 5: a permutation"),
        Sample((w((5,)), 1), note="one sample"),
        Sample((w((4,)), 12, True), note="1-D, 12 of 4 with replacement"),
        Sample((w((3, 4)), 2), note="2-D, 2 per row"),
        Sample((w((3, 4)), 7, True), note="2-D, 7 per row with replacement"),
        Sample((with_zeros, 2, True), note="zero weights are never drawn (with replacement)"),
        Sample((with_zeros[:1], 3), note="zero weights are never drawn (without replacement)"),
        # Their sum overflows float64 (and float32): kiln scales a row by its largest weight first.
        Sample((np.array([1.5e308, 1e-300, 1.5e308]) if d == "float64"
                else np.array([3e38, 1e-38, 3e38], dtype=np.float32), 4, True), note="huge weights"),
        Sample((w((0, 4)), 2), note="no rows: zero-size result"),
        Sample((w((2, 6)), 4), {"generator": Seed(15)}, note="generator="),
    ]


def _multinomial_check(kiln, result, sample):
    where = f"multinomial [{sample.note}]"
    w = np.asarray(sample.args[0], dtype=np.float64)
    n = sample.args[1]
    replacement = sample.args[2] if len(sample.args) > 2 else False
    shape = (n,) if w.ndim == 1 else (w.shape[0], n)
    _check_meta(result, shape, "int64", where)
    rows = result.numpy().reshape(-1, n)
    for r, row in enumerate(rows):
        weights = w.reshape(-1, w.shape[-1])[r]
        assert ((row >= 0) & (row < w.shape[-1])).all(), f"{where}: indices {row} out of range"
        positive = set(np.flatnonzero(weights > 0).tolist())
        drawn = row[:len(positive)] if not replacement else row  # zero weights only once positives run out
        assert set(drawn.tolist()) <= positive, f"{where}: row {r} drew a zero-weight category: {row}"
        if not replacement:
            assert len(set(row.tolist())) == n, f"{where}: row {r} repeats a category without replacement: {row}"
    _check_determinism(kiln, "multinomial", sample, where)


# ----------------------------------------------------------------------------- randperm, normal
def _randperm_samples(d):
    out = [Sample((n,), _kw(d), note=f"n = {n}") for n in (0, 1, 2, 7, 100)]
    out += [Sample((3,), _kw(d, device="cpu"), note="device='cpu'"),
            Sample((20,), _kw(d, generator=Seed(16)), note="generator=")]
    if d == "int64":
        out.append(Sample((6,), {}, note="dtype inferred: int64"))
    if d in FLOATS:
        out.append(Sample((4,), _kw(d, requires_grad=True), note="requires_grad=True"))
    return out


def _randperm_check(kiln, result, sample):
    where = f"randperm [{sample.note}]"
    n = sample.args[0]
    _check_meta(result, (n,), _dtype_arg(sample, "int64"), where, _contiguous_strides((n,)))
    _check_requires_grad(result, sample, where)
    v = result.detach().numpy()
    np.testing.assert_array_equal(np.sort(v), np.arange(n), err_msg=f"{where}: not a permutation of 0..{n - 1}")
    _check_determinism(kiln, "randperm", sample, where)


def _normal_samples(d):
    out = [Sample((1.5, 0.5, list(s)), _kw(d), note=f"size {s}, N(1.5, 0.5)") for s in SIZES]
    out += [Sample((-3.0, 2.5, LARGE), _kw(d), note="large, N(-3, 2.5)"),
            Sample((2.0, 0.0, [3, 4]), _kw(d), note="std 0"),
            Sample((0.0, 1.0, [2, 3]), _kw(d, requires_grad=True), note="requires_grad=True"),
            Sample((0.0, 1.0, [4, 5]), _kw(d, generator=Seed(17)), note="generator=")]
    if d == DEFAULT_FLOAT:
        out.append(Sample((0.0, 1.0, [3]), {}, note="dtype inferred"))
    return out


def _normal_check(kiln, result, sample):
    where = f"normal [{sample.note}]"
    mean, std, size = sample.args
    _check_meta(result, size, _dtype_arg(sample, DEFAULT_FLOAT), where, _contiguous_strides(size))
    _check_requires_grad(result, sample, where)
    v = result.detach().numpy()
    if std == 0:
        np.testing.assert_array_equal(v, np.full(size, mean), err_msg=where)
    else:
        _check_statistics(v, mean, std, where)
    _check_determinism(kiln, "normal", sample, where, varies=std != 0)


# ----------------------------------------------------------------------------- errors
def _error_table():
    e = ErrorInput
    bad_p = [(1.5, "p > 1"), (-0.25, "p < 0"), (float("nan"), "p nan")]
    return {
        "bernoulli": [e(lambda k, p=p: k.bernoulli(k.tensor([0.5, p])), RuntimeError, r"p_in >= 0 && p_in <= 1",
                        note) for p, note in bad_p],
        "bernoulli.p": [e(lambda k, p=p: k.bernoulli(k.zeros(3), p), RuntimeError,
                          r"bernoulli_ expects p to be in \[0, 1\]", note) for p, note in bad_p],
        "bernoulli_.float": [e(lambda k, p=p: k.zeros(3).bernoulli_(p), RuntimeError,
                               r"bernoulli_ expects p to be in \[0, 1\]", note) for p, note in bad_p],
        "bernoulli_.Tensor": [e(lambda k, p=p: k.zeros(2).bernoulli_(k.tensor([p, 0.5])), RuntimeError,
                                r"p_in >= 0 && p_in <= 1", note) for p, note in bad_p] + [
            e(lambda k: k.zeros(2).bernoulli_(k.tensor([1, 0])), RuntimeError, "floating point", "int64 p"),
            e(lambda k: k.zeros(2).bernoulli_(k.full([3], 0.5)), RuntimeError, "broadcast|size", "p (3,) into (2,)"),
            e(lambda k: k.zeros(2).bernoulli_(k.full([2, 2], 0.5)), RuntimeError, "broadcast",
              "p (2, 2) bigger than self (2,)"),
        ],
        "multinomial": [
            e(lambda k: k.multinomial(k.tensor(1.0), 1), RuntimeError, "prob_dist must be 1 or 2 dim", "0-dim"),
            e(lambda k: k.multinomial(k.ones([2, 2, 2]), 1), RuntimeError, "prob_dist must be 1 or 2 dim", "3-D"),
            e(lambda k: k.multinomial(k.tensor([1, 2]), 1), RuntimeError, "only supports floating-point dtypes",
              "int64 weights"),
            e(lambda k: k.multinomial(k.ones([3]), 0), RuntimeError, r"cannot sample n_sample <= 0 samples",
              "no samples"),
            e(lambda k: k.multinomial(k.ones([3]), 4), RuntimeError,
              r"cannot sample n_sample > prob_dist.size\(-1\) samples without replacement", "4 of 3"),
            e(lambda k: k.multinomial(k.tensor([1.0, -1.0]), 1), RuntimeError, "element < 0",
              "negative weight"),
            e(lambda k: k.multinomial(k.tensor([1.0, float("inf")]), 1), RuntimeError, "`inf`, `nan`",
              "inf weight"),
            e(lambda k: k.multinomial(k.tensor([1.0, float("nan")]), 1), RuntimeError, "`inf`, `nan`",
              "nan weight"),
            e(lambda k: k.multinomial(k.tensor([1.0, -1.0]), 2, True), RuntimeError,
              r"encountering probability entry < 0", "negative weight, with replacement"),
            e(lambda k: k.multinomial(k.tensor([1.0, float("inf")]), 2, True), RuntimeError,
              r"infinity or NaN", "inf weight, with replacement"),
            e(lambda k: k.multinomial(k.zeros([3]), 1), RuntimeError, r"sum of probabilities <= 0",
              "all-zero weights"),
            e(lambda k: k.multinomial(k.tensor([[1.0, 2.0], [0.0, 0.0]]), 2, True), RuntimeError,
              r"sum of probabilities <= 0", "an all-zero row, with replacement"),
            e(lambda k: k.multinomial(k.ones([3]), 2, generator=k.default_generator.get_state()), TypeError,
              "Generator", "a tensor as generator="),
        ],
        "randperm": [
            e(lambda k: k.randperm(-1), RuntimeError, "n must be non-negative, got -1", "negative n"),
            e(lambda k: k.randperm(2 ** 24 + 2, dtype=k.float32), RuntimeError, r"2\^24\+1", "n beyond float32"),
            e(lambda k: k.randperm(2 ** 31 + 1, dtype=k.int32), RuntimeError, "too large", "n beyond int32"),
            e(lambda k: k.randperm(3, generator=3), TypeError, "Generator", "an int as generator="),
            e(lambda k: k.randperm(3, dtype=k.int64, requires_grad=True), RuntimeError, "floating point",
              "requires_grad on int64"),
        ],
        "normal.float_float": [
            e(lambda k: k.normal(0.0, -1.0, [2]), RuntimeError, r"std >= 0\.0", "negative std"),
            e(lambda k: k.normal(0.0, 1.0, [2], generator="seed"), TypeError, "Generator", "a str as generator="),
        ],
    }


def _errors(name):
    return lambda: _error_table().get(name, [])


# ----------------------------------------------------------------------------- records
def _record(name, dtypes, samples, check, **kw):
    return OpRecord(name, FAMILY, dtypes, samples, check=check, error_inputs=_errors(name), **kw)


_ZERO_DIM = "prob_dist must be 1 or 2 dim: a 0-dim tensor is one of multinomial's error inputs"

RECORDS = [
    _record("bernoulli", FLOATS, _bernoulli_samples, _bernoulli_check("bernoulli", lambda s: s.args[0]),
            domain="[0, 0.9] (probabilities)",
            grad_samples=_seeded_grad_samples(lambda s: (_interior(s),))),
    _record("bernoulli.p", ALL, _bernoulli_p_samples, _bernoulli_check("bernoulli", lambda s: s.args[1]),
            grad_samples=_seeded_grad_samples(lambda s: (values(s, "float64"), 0.4))),
    _record("bernoulli_.Tensor", ALL, _bernoulli_tensor_samples,
            _bernoulli_check("bernoulli_", lambda s: s.args[1]), domain="real (overwritten); p in [0, 0.9]",
            grad_samples=_seeded_grad_samples(lambda s: (values(s, "float64"), _interior(s, 1)))),
    _record("bernoulli_.float", ALL, _bernoulli_float_samples,
            _bernoulli_check("bernoulli_", lambda s: s.args[1] if len(s.args) > 1 else 0.5),
            domain="real (overwritten)", grad_samples=_seeded_grad_samples(lambda s: (values(s, "float64"), 0.6))),
    _record("multinomial", FLOATS, _multinomial_samples, _multinomial_check, result_dtype=always("int64"),
            domain="positive (weights)", no_zero_dim=_ZERO_DIM),
    _record("randperm", NUMERIC, _randperm_samples, _randperm_check, domain="— (no tensor input)",
            no_noncontiguous=NO_TENSORS),
    # CompositeImplicit (empty + normal_): the result is a new leaf, as torch's.
    _record("normal.float_float", FLOATS, _normal_samples, _normal_check, domain="— (no tensor input)",
            no_noncontiguous=NO_TENSORS, differentiable=False),
]
assert all(isinstance(r, OpRecord) and r.family == FAMILY for r in RECORDS)
