"""kiln.manual_seed(s) followed by a random op gives exactly the values torch.manual_seed(s) gives
(Debian's torch 1.13.1 on the CPU), and leaves the generator in exactly torch's state.

Every case runs the same call under kiln and under torch for a few seeds and compares element
for element, bit for bit (floats included: no tolerance is needed), then compares the two
generators' whole states (torch's 5056 bytes: the Mersenne Twister's words and position and the
cached Box-Muller value) and one follow-up draw. Sizes straddle torch's code paths: normal_ on a
contiguous tensor of 16 or more elements takes torch's vectorised normal_fill (all uniforms
first, Box-Muller 16 at a time, the tail recomputed), smaller or strided tensors the scalar path
with its cached second value. The torch comparisons skip without torch 1.13; the fixed values at
the end (copied from torch 1.13.1) run everywhere.
"""
import os
import subprocess
import sys

import numpy as np
import pytest

import kiln
import kiln.nn.functional as KF
import kiln.utils.data as KD

try:
    import torch
    import torch.nn.functional as TF
    import torch.utils.data as TD
    HAVE_TORCH = torch.__version__.startswith("1.13")
except ImportError:  # pragma: no cover - depends on the machine
    HAVE_TORCH = False
needs_torch = pytest.mark.skipif(not HAVE_TORCH, reason="needs torch 1.13 (the oracle)")

SEEDS = (0, 1, 2 ** 40 + 7)
SIZES = (1, 7, 15, 16, 17, 100, 1000, 10000)
FLOATS = ("float32", "float64", "float16", "bfloat16")


def dt(lib, name):
    return getattr(lib, name)


def values(t):
    """The elements as float64 (exact for every dtype here), or as int64."""
    t = t.detach()
    if t.dtype in (kiln.bfloat16, kiln.float16) or (HAVE_TORCH and t.dtype in (torch.bfloat16, torch.float16)):
        t = t.float()
    return t.numpy()


def check_same(call, seeds=SEEDS):
    """call(lib, F, D) under both libraries (F: nn.functional, D: utils.data): the same values and dtype,
    the same generator state afterwards, the same next draw."""
    for seed in seeds:
        torch.manual_seed(seed)
        kiln.manual_seed(seed)
        expected, got = call(torch, TF, TD), call(kiln, KF, KD)
        assert str(got.dtype).split(".")[1] == str(expected.dtype).split(".")[1]
        e, g = values(expected), values(got)
        assert e.shape == g.shape, f"seed {seed}: shape {g.shape}, torch {e.shape}"
        same = (e == g) | (np.isnan(e) & np.isnan(g)) if e.dtype.kind == "f" else e == g
        assert same.all(), (f"seed {seed}: {np.count_nonzero(~same)} of {e.size} differ, first at "
                            f"{np.argwhere(~same)[0]}: kiln {g[~same][:4]}, torch {e[~same][:4]}")
        assert kiln.get_rng_state().tolist() == torch.get_rng_state().tolist(), f"seed {seed}: generator state"
        np.testing.assert_array_equal(kiln.rand(5).numpy(), torch.rand(5).numpy())


# ---------------------------------------------------------------- rand, randn, normal_, uniform_
@needs_torch
@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("dtype", FLOATS)
def test_rand_randn_normal_uniform(dtype, n):
    check_same(lambda m, F, D: m.rand(n, dtype=dt(m, dtype)))
    check_same(lambda m, F, D: m.randn(n, dtype=dt(m, dtype)))
    check_same(lambda m, F, D: m.empty(n, dtype=dt(m, dtype)).normal_(0.3, 1.7))
    check_same(lambda m, F, D: m.normal(-2.0, 0.5, (n,), dtype=dt(m, dtype)))
    check_same(lambda m, F, D: m.empty(n, dtype=dt(m, dtype)).uniform_(-3.7, 2.9))


@needs_torch
def test_the_cached_normal_value_carries_across_calls_and_dtypes():
    # randn(3): two Box-Muller pairs, the last sin kept; the float64 draw and the next randn use it.
    check_same(lambda m, F, D: m.cat([m.randn(3), m.randn(1, dtype=m.float64).float(), m.randn(5), m.randn(40)]))
    # get_rng_state carries it; manual_seed forgets it.
    check_same(lambda m, F, D: (m.randn(3), m.set_rng_state(m.get_rng_state()), m.randn(3))[2])
    check_same(lambda m, F, D: (m.randn(3), m.manual_seed(4), m.randn(3))[2])


@needs_torch
@pytest.mark.parametrize("n", (2, 20, 300))
@pytest.mark.parametrize("dtype", ("float32", "float64", "bfloat16"))
def test_in_place_fills_of_strided_tensors_follow_torch_order(dtype, n):
    """torch visits a strided output in memory order (TensorIterator), and normal_ of a strided
    tensor takes the scalar path whatever its size."""
    fills = [lambda t: t.uniform_(-1, 3), lambda t: t.normal_(2, 3), lambda t: t.bernoulli_(0.4),
             lambda t: t.random_(-5, 9)]
    for fill in fills:
        check_same(lambda m, F, D: fill(m.empty(n, 3, dtype=dt(m, dtype)).t()), seeds=(0,))
        check_same(lambda m, F, D: fill(m.zeros(n, 6, dtype=dt(m, dtype))[:, ::2]), seeds=(0,))
        check_same(lambda m, F, D: fill(m.zeros(2, n, 3, dtype=dt(m, dtype)).permute(2, 0, 1)), seeds=(0,))


# ---------------------------------------------------------------- integers
@needs_torch
@pytest.mark.parametrize("n", SIZES)
def test_randint_randperm_random_(n):
    for dtype in ("int64", "int32", "float32", "float64"):
        check_same(lambda m, F, D: m.randint(-5, 100, (n,), dtype=dt(m, dtype)))
    check_same(lambda m, F, D: m.randint(2 ** 40, (n,)))  # a range past 2^32: 64-bit draws
    check_same(lambda m, F, D: m.randperm(n))
    check_same(lambda m, F, D: m.randperm(n, dtype=m.float32))
    for dtype in ("int64", "int32", "float32", "float64", "bfloat16", "float16", "bool"):
        high = 2 if dtype == "bool" else 7
        check_same(lambda m, F, D: m.empty(n, dtype=dt(m, dtype)).random_(), seeds=(0,))
        check_same(lambda m, F, D: m.empty(n, dtype=dt(m, dtype)).random_(high), seeds=(0,))
    check_same(lambda m, F, D: m.empty(n, dtype=m.int64).random_(-2 ** 62, 2 ** 62), seeds=(0,))
    for dtype in ("int64", "int32", "float32", "float64", "bfloat16"):
        check_same(lambda m, F, D: m.empty(n, dtype=dt(m, dtype)).random_(3, None), seeds=(0,))  # up to the dtype's top
        check_same(lambda m, F, D: m.empty(n, dtype=dt(m, dtype)).random_(-3, to=9), seeds=(0,))
    for dtype in ("int64", "float32", "float64", "bfloat16"):  # all 2^64 values
        check_same(lambda m, F, D: m.empty(n, dtype=dt(m, dtype)).random_(-2 ** 63, None), seeds=(0,))


# ---------------------------------------------------------------- bernoulli, dropout
@needs_torch
@pytest.mark.parametrize("n", SIZES)
def test_bernoulli(n):
    p = np.linspace(0, 1, n)
    for dtype in ("float32", "float64", "bfloat16", "int64", "bool"):
        check_same(lambda m, F, D: m.empty(n, dtype=dt(m, dtype)).bernoulli_(0.3))  # 53-bit uniforms
        check_same(lambda m, F, D: m.bernoulli(m.zeros(n, dtype=m.float32), 0.7) if dtype == "bool" else
                   m.bernoulli(m.zeros(n, dtype=dt(m, dtype)), 0.7))
    for p_dtype in ("float32", "float64", "bfloat16"):  # float64 p: 53-bit uniforms, others 24-bit
        check_same(lambda m, F, D: m.bernoulli(m.tensor(p).to(dt(m, p_dtype))))
        check_same(lambda m, F, D: m.empty(n, dtype=m.int64).bernoulli_(m.tensor(p).to(dt(m, p_dtype))), seeds=(0,))


@needs_torch
def test_bernoulli_with_strided_and_broadcast_probabilities():
    p = np.linspace(0, 1, 60)
    check_same(lambda m, F, D: m.bernoulli(m.tensor(p.reshape(20, 3)).float().t()))
    check_same(lambda m, F, D: m.empty(3, 20).bernoulli_(m.tensor(p.reshape(20, 3)).t()))
    check_same(lambda m, F, D: m.empty(20, 3).t().bernoulli_(m.tensor(p.reshape(3, 20)).float()))
    check_same(lambda m, F, D: m.empty(20, 3, dtype=m.float64).bernoulli_(m.tensor([0.2, 0.5, 0.9])))


@needs_torch
@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("dtype", ("float32", "float64", "bfloat16"))
def test_dropout(dtype, n):
    check_same(lambda m, F, D: F.dropout(m.ones(n, dtype=dt(m, dtype)) * 1.5, 0.3, True))
    check_same(lambda m, F, D: m.nn.Dropout(0.6)(m.ones(n, 3, dtype=dt(m, dtype))), seeds=(0,))
    check_same(lambda m, F, D: F.dropout(m.ones(3, n, dtype=dt(m, dtype)).t(), 0.5), seeds=(0,))


# ---------------------------------------------------------------- multinomial
@needs_torch
@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("dtype", ("float32", "float64", "bfloat16"))
def test_multinomial(dtype, n):
    w = np.linspace(0.1, 2, 3 * n) ** 2
    for k, replacement in [(1, False), (1, True), (min(n, 5), False), (50, True), (n, False)]:
        # Without replacement: exponential_ for every weight, then topk of w / q; a full permutation
        # in bfloat16 has many equal keys, whose order is topk's (the same libstdc++ algorithms).
        check_same(lambda m, F, D: m.multinomial(m.tensor(w[:n]).to(dt(m, dtype)), k, replacement), seeds=(0, 1))
        check_same(lambda m, F, D: m.multinomial(m.tensor(w.reshape(3, n)).to(dt(m, dtype)), k, replacement),
                   seeds=(0,))


@needs_torch
def test_multinomial_with_zero_weights_and_strided_rows():
    check_same(lambda m, F, D: m.multinomial(m.tensor([0., 1, 0, 2, 0, 0, 3] * 10), 69))  # zeros drawn last
    w = np.linspace(0.1, 1, 60).reshape(20, 3)
    check_same(lambda m, F, D: m.multinomial(m.tensor(w).float().t(), 3))
    check_same(lambda m, F, D: m.multinomial(m.tensor(w).float().t(), 7, True))


# ---------------------------------------------------------------- modules: the same initial weights
@needs_torch
def test_module_initialisation_matches_torch():
    for make in (lambda m: m.nn.Linear(5, 3), lambda m: m.nn.Linear(100, 300), lambda m: m.nn.Conv2d(3, 8, 3),
                 lambda m: m.nn.Embedding(10, 4),
                 lambda m: m.nn.Sequential(m.nn.Linear(4, 8), m.nn.ReLU(), m.nn.Linear(8, 2))):
        check_same(lambda m, F, D: m.cat([p.detach().reshape(-1) for p in make(m).parameters()]), seeds=(0, 1))
    for init in ("xavier_uniform_", "xavier_normal_", "kaiming_uniform_", "kaiming_normal_"):
        check_same(lambda m, F, D: getattr(m.nn.init, init)(m.empty(30, 40)), seeds=(0,))


# ---------------------------------------------------------------- data loading
@needs_torch
@pytest.mark.filterwarnings("ignore:Length of split")
@pytest.mark.parametrize("n", (1, 10, 100, 1000))
def test_dataloader_shuffling_and_random_split(n):
    def epochs(m, D, generator=None, shuffle=True, sampler=None):
        data = D.TensorDataset(m.arange(n))
        loader = D.DataLoader(data, batch_size=4, shuffle=shuffle, generator=generator, sampler=sampler)
        return m.tensor([i for _ in range(2) for (b,) in loader for i in b.tolist()])

    check_same(lambda m, F, D: epochs(m, D))  # a base seed, then random_() seeds a fresh generator
    check_same(lambda m, F, D: epochs(m, D, generator=m.Generator().manual_seed(5)))
    check_same(lambda m, F, D: epochs(m, D, shuffle=False))  # still draws the base seed
    check_same(lambda m, F, D: epochs(m, D, shuffle=False, sampler=D.RandomSampler(
        range(n), replacement=True, num_samples=50)))
    check_same(lambda m, F, D: m.tensor([i for s in D.random_split(range(n), [n // 2, n - n // 2]) for i in s.indices]))
    check_same(lambda m, F, D: m.tensor([i for s in D.random_split(range(n), [n // 3, n - n // 3],
                                                                   generator=m.Generator().manual_seed(3))
                                         for i in s.indices]))


# ---------------------------------------------------------------- generators and states
@needs_torch
def test_generator_api_and_state_bytes_match_torch():
    assert kiln.Generator().initial_seed() == torch.Generator().initial_seed() == 67280421310721
    assert kiln.Generator().get_state().tolist() == torch.Generator().get_state().tolist()
    for seed in (0, 5, 2 ** 32 + 5, 2 ** 63 + 9, -1):
        g, h = kiln.Generator().manual_seed(seed), torch.Generator().manual_seed(seed)
        assert g.initial_seed() == h.initial_seed()
        kiln.randn(3, generator=g)
        torch.randn(3, generator=h)  # leaves a cached normal value in the state
        assert g.get_state().tolist() == h.get_state().tolist()
        np.testing.assert_array_equal(kiln.rand(700, generator=g).numpy(), torch.rand(700, generator=h).numpy())
        assert g.get_state().tolist() == h.get_state().tolist()
    # A state moves between the libraries, cached normal value included.
    torch.manual_seed(11)
    torch.randn(5)
    kiln.set_rng_state(kiln.from_numpy(torch.get_rng_state().numpy()))  # torch's uint8 tensor as it is
    np.testing.assert_array_equal(kiln.randn(9, dtype=kiln.float64).numpy(),
                                  torch.randn(9, dtype=torch.float64).numpy())
    kiln.manual_seed(12)
    kiln.randn(5)
    assert kiln.get_rng_state().dtype == kiln.uint8
    torch.set_rng_state(torch.from_numpy(kiln.get_rng_state().numpy()))
    np.testing.assert_array_equal(kiln.randn(9).numpy(), torch.randn(9).numpy())
    kiln.manual_seed(13)
    kiln.randn(5)
    torch.set_rng_state(torch.tensor(kiln.get_rng_state().tolist(), dtype=torch.uint8))
    np.testing.assert_array_equal(kiln.randn(9).numpy(), torch.randn(9).numpy())
    s = kiln.Generator().seed()
    assert kiln.Generator().manual_seed(s).get_state().tolist() == torch.Generator().manual_seed(s).get_state().tolist()


SCALAR_KERNEL_SCRIPT = r"""
import sys
sys.path[:0] = sys.argv[1:]
import numpy as np, torch, kiln
for seed in (0, 1):
    for call in (lambda m: m.randn(1000), lambda m: m.randn(37, dtype=m.bfloat16).float(),
                 lambda m: m.empty(100).uniform_(-3.7, 2.9), lambda m: m.empty(100, dtype=m.float64).normal_(0.3, 1.7),
                 lambda m: m.empty(7, dtype=m.float64).normal_(0.3, 1.7)):
        torch.manual_seed(seed); kiln.manual_seed(seed)
        np.testing.assert_array_equal(call(kiln).numpy(), call(torch).numpy())
print("ok")
"""


@needs_torch
def test_aten_cpu_capability_default_selects_the_scalar_kernels_in_both():
    """ATEN_CPU_CAPABILITY=default: torch runs its unvectorised kernels (no FMA, glibc's logf/cosf
    for float32 normal_), and kiln follows."""
    env = dict(os.environ, ATEN_CPU_CAPABILITY="default")
    out = subprocess.run([sys.executable, "-c", SCALAR_KERNEL_SCRIPT] + [p for p in sys.path if p], env=env,
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr[-3000:]


# ---------------------------------------------------------------- fixed values (no torch needed)
def test_fixed_values_from_torch_1_13():
    """Values torch 1.13.1 gives (CPU), copied here so the stream is checked without torch."""
    kiln.manual_seed(0)
    np.testing.assert_array_equal(kiln.rand(4).numpy(), np.array(
        [0.49625658988952637, 0.7682217955589294, 0.08847743272781372, 0.13203048706054688], np.float32))
    kiln.manual_seed(0)
    np.testing.assert_array_equal(kiln.rand(2, dtype=kiln.float64).numpy(), [FIXED["rand64"][0], FIXED["rand64"][1]])
    kiln.manual_seed(0)
    np.testing.assert_array_equal(kiln.randn(5, dtype=kiln.float64).numpy(), FIXED["randn64_5"])
    kiln.manual_seed(0)
    np.testing.assert_array_equal(kiln.randn(20, dtype=kiln.float64).numpy(), FIXED["randn64_20"])
    kiln.manual_seed(0)
    assert kiln.randint(0, 100, (8,)).tolist() == FIXED["randint"]
    kiln.manual_seed(0)
    assert kiln.randperm(10).tolist() == FIXED["randperm"]
    kiln.manual_seed(0)
    assert kiln.multinomial(kiln.tensor([1.0, 2, 3, 4, 5, 6]), 4).tolist() == FIXED["multinomial"]
    kiln.manual_seed(0)
    assert kiln.multinomial(kiln.tensor([1.0, 2, 3, 4, 5, 6]), 8, True).tolist() == FIXED["multinomial_rep"]
    kiln.manual_seed(0)
    assert kiln.empty(12).bernoulli_(0.5).tolist() == FIXED["bernoulli"]
    kiln.manual_seed(0)
    assert kiln.empty((), dtype=kiln.int64).random_().item() == FIXED["random_"]


FIXED = {  # torch 1.13.1's output
    "rand64": [0.9700530018065531, 0.707819864399788],
    "randn64_5": [1.5409961082440433, -0.2934289057609464, -2.1787893820745574, 0.5684312772806678, -1.084522342424021],
    "randn64_20": [-2.310411800234176, -0.3732508612577643, -1.0608166785462863, 0.9995093547811761,
                   -0.019964750907762653, 0.2102998901016947, 0.17718935139366584, -0.830510051008449,
                   0.23871805816817063, 0.7335283685272841, -1.3218818291421377, 1.3148113651971234,
                   -0.6870036940435463, 1.4880743158106724, -0.4484158047114511, -0.8910030351707375,
                   0.6748575435940039, 1.0468653769814655, 0.15429517864658948, -0.7498915228391941],
    "randint": [44, 39, 33, 60, 63, 79, 27, 3],
    "randperm": [4, 1, 7, 5, 3, 9, 0, 8, 6, 2],
    "multinomial": [2, 4, 5, 1],
    "multinomial_rep": [5, 4, 3, 5, 4, 5, 2, 3],
    "bernoulli": [0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0, 1.0, 0.0, 1.0, 1.0, 1.0],
    "random_": 900450186894289455,
}


@needs_torch
@pytest.mark.parametrize("n", (1, 16, 1000))
def test_trunc_normal_matches_torch(n):
    """nn.init.trunc_normal_ is torch 1.13's algorithm (uniform_, then erfinv_): the same draws, and
    erfinv rounded as torch's CPU kernel rounds it, so the same values bit for bit."""
    check_same(lambda m, F, D: m.nn.init.trunc_normal_(m.empty(n), 0.5, 2.0, -1.0, 3.0), seeds=(0, 1))
    check_same(lambda m, F, D: m.nn.init.trunc_normal_(m.empty(n, 3, dtype=m.float64), std=0.02), seeds=(0,))
