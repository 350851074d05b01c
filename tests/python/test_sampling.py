"""bernoulli, multinomial, randperm, normal(mean, std, size): their distributions, checked with
fixed seeds against probabilities worked out here with NumPy. Each chi-square bound is the
statistic's 1 - 1e-6 quantile (scipy.stats.chi2.isf(1e-6, df), written out), and each test
also shows its bound rejects a wrong distribution. Errors and the per-op properties are in the
op records (tests/python/op_db/sampling.py)."""
import itertools
import math

import numpy as np
import pytest

import kiln

CHI2_1E6 = {3: 30.66, 5: 35.89, 23: 70.55, 81: 156.45}  # df -> 1e-6 upper quantile


def chi2(counts, expected):
    counts, expected = np.asarray(counts, dtype=np.float64), np.asarray(expected, dtype=np.float64)
    return float(((counts - expected) ** 2 / expected).sum())


def gen(seed):
    return kiln.Generator().manual_seed(seed)


# ----------------------------------------------------------------------------- bernoulli
@pytest.mark.parametrize("p", [0.05, 0.5, 0.9])
def test_bernoulli_mean_is_p(p):
    n = 200000
    v = kiln.bernoulli(kiln.full([n], p, dtype=kiln.float64), generator=gen(1)).numpy()
    assert abs(v.mean() - p) < 5 * math.sqrt(p * (1 - p) / n)
    w = kiln.zeros(n, dtype=kiln.int32).bernoulli_(p, generator=gen(2)).numpy()
    assert w.dtype == np.int32 and abs(w.mean() - p) < 5 * math.sqrt(p * (1 - p) / n)


def test_bernoulli_per_element_probabilities():
    p = np.linspace(0, 1, 11)  # columns 0 and 10 are deterministic
    rows = 20000
    v = kiln.bernoulli(kiln.tensor(np.tile(p, (rows, 1))), generator=gen(3)).numpy()
    assert (v[:, 0] == 0).all() and (v[:, -1] == 1).all()
    se = np.sqrt(p * (1 - p) / rows)
    assert (np.abs(v.mean(0) - p) <= 5 * se + 1e-12).all(), v.mean(0)
    # bernoulli_(p tensor) broadcasts p along self's leading dims: the same per-column rates.
    w = kiln.zeros(rows, 11).bernoulli_(kiln.tensor(p), generator=gen(4)).numpy()
    assert (np.abs(w.mean(0) - p) <= 5 * se + 1e-12).all(), w.mean(0)


def test_bernoulli_draws_are_independent():
    """Consecutive pairs of a p = 0.5 stream: 00, 01, 10, 11 equally often (chi-square, df 3)."""
    v = kiln.zeros(200000, dtype=kiln.int64).bernoulli_(generator=gen(5)).numpy()
    pairs = np.bincount(2 * v[0::2] + v[1::2], minlength=4)
    assert chi2(pairs, [len(v) / 8] * 4) < CHI2_1E6[3]
    assert chi2(pairs, [len(v) / 2 * q for q in (0.3, 0.2, 0.2, 0.3)]) > CHI2_1E6[3]  # the bound has power


def test_bernoulli_keeps_self_dtype_and_is_contiguous():
    x = kiln.zeros(3, 4, dtype=kiln.float64).t()
    y = kiln.bernoulli(x, 1.0)
    assert y.dtype == kiln.float64 and y.stride() == (3, 1) and (y.numpy() == 1).all()  # contiguous, as torch
    assert kiln.bernoulli(kiln.zeros(3, dtype=kiln.bool), 1.0).dtype == kiln.bool
    assert x.bernoulli(0.0).dtype == kiln.float64  # the method form
    p = kiln.full([2, 2], 0.5)
    assert p.bernoulli(generator=gen(1)).tolist() == kiln.bernoulli(p, generator=gen(1)).tolist()


def test_bernoulli_in_place_on_itself():
    """x.bernoulli_(x): the probabilities are read before self is written."""
    x = kiln.tensor([0.0, 1.0, 0.0, 1.0])
    x.bernoulli_(x)
    assert x.tolist() == [0.0, 1.0, 0.0, 1.0]


def test_bernoulli_gradient_is_zero_as_torch():
    p = kiln.full([4], 0.5, requires_grad=True)
    y = kiln.bernoulli(p)
    assert y.requires_grad and type(y.grad_fn).__name__ == "BernoulliBackward0"
    (y * kiln.arange(4.0)).sum().backward()
    assert p.grad.tolist() == [0.0] * 4
    q = kiln.full([4], 0.5, requires_grad=True)
    z = (q * 2).bernoulli_(0.5)
    z.sum().backward()
    assert q.grad.tolist() == [0.0] * 4


# ----------------------------------------------------------------------------- multinomial
def test_multinomial_with_replacement_frequencies_follow_the_weights():
    w = np.array([1.0, 2.0, 3.0, 4.0, 0.0])
    n = 100000
    idx = kiln.multinomial(kiln.tensor(w), n, True, generator=gen(7)).numpy()
    counts = np.bincount(idx, minlength=5)
    assert counts[4] == 0  # a zero weight is never drawn
    assert chi2(counts[:4], n * w[:4] / w.sum()) < CHI2_1E6[3]
    assert chi2(counts[:4], [n / 4] * 4) > CHI2_1E6[3]  # uniform is rejected


def test_multinomial_rows_are_separate_distributions():
    w = kiln.tensor([[1.0, 0.0, 0.0], [0.0, 0.0, 5.0], [1.0, 1.0, 0.0]])
    out = kiln.multinomial(w, 50, replacement=True, generator=gen(8)).numpy()
    assert (out[0] == 0).all() and (out[1] == 2).all() and set(out[2]) == {0, 1}
    assert out.dtype == np.int64 and out.shape == (3, 50)


def test_multinomial_without_replacement_is_sequential_sampling():
    """Two draws without replacement: the first with probability w_i / W, the second w_j / (W - w_i),
    so the ordered pair (i, j) has probability w_i w_j / (W (W - w_i)) (chi-square over the 6 ordered
    pairs of 3 categories, df 5)."""
    w = np.array([1.0, 3.0, 6.0])
    W = w.sum()
    draws = 60000
    out = kiln.multinomial(kiln.tensor(np.tile(w, (draws, 1))), 2, generator=gen(9)).numpy()
    assert (out[:, 0] != out[:, 1]).all()
    pairs = [(i, j) for i, j in itertools.product(range(3), repeat=2) if i != j]
    expected = np.array([w[i] * w[j] / (W * (W - w[i])) for i, j in pairs]) * draws
    counts = np.array([np.sum((out[:, 0] == i) & (out[:, 1] == j)) for i, j in pairs])
    assert chi2(counts, expected) < CHI2_1E6[5]
    # With replacement semantics (independent draws), the same counts are far off.
    independent = np.array([w[i] * w[j] / W ** 2 for i, j in pairs])
    assert chi2(counts, independent / independent.sum() * draws) > CHI2_1E6[5]


def test_multinomial_without_replacement_takes_positive_weights_first():
    w = kiln.tensor([0.0, 5.0, 0.0, 1.0])
    for seed in range(20):
        out = kiln.multinomial(w, 4, generator=gen(seed)).tolist()
        assert sorted(out[:2]) == [1, 3] and sorted(out) == [0, 1, 2, 3]


def test_multinomial_weights_are_unnormalised_and_any_layout():
    w = np.array([0.5, 1.5, 2.0])
    a = kiln.multinomial(kiln.tensor(w * 1000), 20, True, generator=gen(10)).tolist()
    assert a == kiln.multinomial(kiln.tensor(w), 20, True, generator=gen(10)).tolist()
    col = kiln.tensor(np.stack([w, w])).t()[:, 0]  # a strided view
    assert kiln.multinomial(col, 20, True, generator=gen(10)).tolist() == a


# ----------------------------------------------------------------------------- randperm
@pytest.mark.parametrize("n", [0, 1, 2, 10, 1000])
def test_randperm_is_a_permutation(n):
    for dtype in (kiln.int64, kiln.int32, kiln.float32, kiln.float64):
        p = kiln.randperm(n, dtype=dtype, generator=gen(n))
        assert p.dtype == dtype and tuple(p.shape) == (n,)
        np.testing.assert_array_equal(np.sort(p.numpy()), np.arange(n))


def test_randperm_every_permutation_equally_likely():
    """All 24 orders of 4 items (chi-square, df 23), and every value at every position of 10."""
    g = gen(11)
    draws = 24000
    counts = {}
    for _ in range(draws):
        key = tuple(kiln.randperm(4, generator=g).tolist())
        counts[key] = counts.get(key, 0) + 1
    assert len(counts) == 24
    assert chi2(list(counts.values()), [draws / 24] * 24) < CHI2_1E6[23]
    positions = np.zeros((10, 10))
    for _ in range(5000):
        positions[np.arange(10), kiln.randperm(10, generator=g).numpy()] += 1
    assert chi2(positions.ravel(), np.full(100, 500.0)) < CHI2_1E6[81]


def test_randperm_defaults_to_int64():
    kiln.set_default_dtype(kiln.float64)
    try:
        assert kiln.randperm(3).dtype == kiln.int64
    finally:
        kiln.set_default_dtype(kiln.float32)


# ----------------------------------------------------------------------------- normal
def test_normal_mean_std_size():
    v = kiln.normal(3.0, 2.0, (400, 500), generator=gen(12))
    assert v.dtype == kiln.float32 and tuple(v.shape) == (400, 500)
    x = v.numpy().astype(np.float64)
    assert abs(x.mean() - 3.0) < 6 * 2.0 / math.sqrt(x.size) and abs(x.std() - 2.0) < 0.01
    assert kiln.normal(0.0, 1.0, [2], dtype=kiln.float64).dtype == kiln.float64
    assert kiln.normal(1.0, 1.0, size=(2,), requires_grad=True).requires_grad
