"""manual_seed, rand, randn, randint, uniform_, normal_, random_: reproducibility,
ranges and moments (statistical checks with generous, fixed-seed bounds), errors; kiln.Generator:
seeding, state, generator= on every random op, independence from the default generator.
(bernoulli, multinomial, randperm, normal: tests/python/test_sampling.py.)"""
import os
import subprocess
import sys
import threading

import numpy as np
import pytest

import kiln


def test_seed_reproduces_and_differs():
    kiln.manual_seed(123)
    a = kiln.randn(4, 5).numpy().copy()
    b = kiln.randn(4, 5).numpy().copy()
    kiln.manual_seed(123)
    np.testing.assert_array_equal(kiln.randn(4, 5).numpy(), a)
    assert not np.array_equal(a, b)
    assert kiln.initial_seed() == 123


def test_randn_moments():
    kiln.manual_seed(0)
    x = kiln.randn(200000, dtype=kiln.float64).numpy()
    assert abs(x.mean()) < 0.01 and abs(x.std() - 1) < 0.01
    # Box-Muller tails: about 0.27% beyond 3 sigma.
    assert 0.002 < np.mean(np.abs(x) > 3) < 0.0035


def test_rand_range_and_dtype():
    kiln.manual_seed(0)
    u = kiln.rand(100000)
    assert u.dtype == kiln.float32
    x = u.numpy()
    assert x.min() >= 0 and x.max() < 1 and abs(x.mean() - 0.5) < 0.01
    assert kiln.rand(2, 3, dtype=kiln.float64).dtype == kiln.float64
    assert kiln.rand((2, 3)).shape == (2, 3)


def test_randint_bounds_and_overloads():
    kiln.manual_seed(0)
    r = kiln.randint(3, 10, (20000,))
    assert r.dtype == kiln.int64
    x = r.numpy()
    assert x.min() == 3 and x.max() == 9
    counts = np.bincount(x - 3)
    assert counts.min() > 2500  # 7 values, ~2857 each
    assert kiln.randint(5, (2, 2)).numpy().max() < 5
    assert kiln.randint(0, 2, (4,), dtype=kiln.int32).dtype == kiln.int32


def test_in_place_fills_keep_strides_and_values_follow_memory_order():
    """As torch's TensorIterator: a transposed tensor is filled in memory order."""
    w = kiln.empty(3, 2).transpose(0, 1)
    kiln.manual_seed(7)
    w.uniform_(-2, 2)
    kiln.manual_seed(7)
    ref = kiln.empty(3, 2).uniform_(-2, 2)
    np.testing.assert_array_equal(w.numpy(), ref.numpy().T)
    assert w.stride() == (1, 2)
    x = w.numpy()
    assert x.min() >= -2 and x.max() < 2


def test_normal_mean_std():
    kiln.manual_seed(3)
    x = kiln.empty(100000, dtype=kiln.float64).normal_(5.0, 0.5).numpy()
    assert abs(x.mean() - 5) < 0.01 and abs(x.std() - 0.5) < 0.01


def test_like_forms():
    base = kiln.zeros(2, 3, dtype=kiln.float64)
    assert kiln.rand_like(base).dtype == kiln.float64 and kiln.randn_like(base).shape == (2, 3)


def test_errors():
    with pytest.raises(RuntimeError, match="expects 'from' to be less than 'to'"):
        kiln.randint(5, 2, (3,))
    with pytest.raises(RuntimeError, match="floating point"):
        kiln.zeros(2, dtype=kiln.int64).uniform_()
    with pytest.raises(RuntimeError, match="std >= 0"):
        kiln.zeros(2).normal_(0, -1)
    with pytest.raises(RuntimeError, match="from=3"):
        kiln.zeros(2).uniform_(3, 1)
    with pytest.raises(RuntimeError, match="negative dimension"):
        kiln.randn(-1)


@pytest.mark.parametrize("fill", ["uniform_", "normal_"])
def test_random_fills_under_autograd(fill):
    leaf = kiln.zeros(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        getattr(leaf, fill)()
    with kiln.no_grad():
        getattr(leaf, fill)()  # how nn.init fills parameters
    # Overwriting a non-leaf cuts the gradient to what it held before: zero.
    x = kiln.ones(3, requires_grad=True)
    y = x * 2
    getattr(y, fill)()
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [0, 0, 0])


def test_random_integer_fill_gradient_is_zero():
    x = kiln.ones(3, requires_grad=True)
    y = x * 2
    y.random_(0, 5)
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [0, 0, 0])


# ----------------------------------------------------------------------------- kiln.Generator
def _draws(generator):
    """One of each random op, all from `generator` (None: the default generator)."""
    g = {"generator": generator}
    return [kiln.rand(5, **g), kiln.randn(2, 3, **g), kiln.randint(0, 9, (4,), **g), kiln.randint(7, (3,), **g),
            kiln.empty(4).uniform_(-1, 1, **g), kiln.empty(4).normal_(2, 3, **g),
            kiln.empty(4, dtype=kiln.int64).random_(0, 100, **g), kiln.empty(4).bernoulli_(0.5, **g),
            kiln.empty(4).bernoulli_(kiln.full([4], 0.5), **g), kiln.bernoulli(kiln.full([4], 0.5), **g),
            kiln.bernoulli(kiln.zeros(4), 0.5, **g), kiln.multinomial(kiln.ones(6), 3, **g),
            kiln.randperm(8, **g), kiln.normal(0.0, 1.0, (4,), **g)]


def _values(tensors):
    return [t.numpy().copy() for t in tensors]


def test_generators_seeded_alike_give_the_default_generators_stream():
    a = _values(_draws(kiln.Generator().manual_seed(11)))
    b = _values(_draws(kiln.Generator().manual_seed(11)))
    kiln.manual_seed(11)
    c = _values(_draws(None))
    for x, y, z in zip(a, b, c):
        np.testing.assert_array_equal(x, y)
        np.testing.assert_array_equal(x, z)
    d = _values(_draws(kiln.Generator().manual_seed(12)))
    assert sum(not np.array_equal(x, y) for x, y in zip(a, d)) >= 12  # another seed: other values


def test_a_generator_does_not_advance_the_default_generator():
    kiln.manual_seed(3)
    state = kiln.get_rng_state().numpy().copy()
    _draws(kiln.Generator().manual_seed(4))
    np.testing.assert_array_equal(kiln.get_rng_state().numpy(), state)
    expected = kiln.rand(6).numpy().copy()
    kiln.manual_seed(3)
    np.testing.assert_array_equal(kiln.rand(6, generator=None).numpy(), expected)


def test_two_generators_are_independent_streams():
    alone_a = kiln.rand(20, generator=kiln.Generator().manual_seed(1)).numpy()
    alone_b = kiln.rand(20, generator=kiln.Generator().manual_seed(2)).numpy()
    ga, gb = kiln.Generator().manual_seed(1), kiln.Generator().manual_seed(2)
    mixed = {"a": [], "b": []}
    for i in range(4):  # interleaved draws: each generator continues only its own stream
        mixed["a"].append(kiln.rand(5, generator=ga).numpy())
        mixed["b"].append(kiln.rand(5, generator=gb).numpy())
    np.testing.assert_array_equal(np.concatenate(mixed["a"]), alone_a)
    np.testing.assert_array_equal(np.concatenate(mixed["b"]), alone_b)


def test_manual_seed_returns_the_generator_and_takes_torchs_seed_range():
    g = kiln.Generator()
    assert g.initial_seed() == 67280421310721  # torch's default seed
    assert g.manual_seed(5) is g and g.initial_seed() == 5
    assert kiln.manual_seed(5) is kiln.default_generator and kiln.initial_seed() == 5
    assert g.manual_seed(-1).initial_seed() == 2 ** 64 - 1  # a negative seed is its 64-bit pattern
    assert g.manual_seed(2 ** 64 - 1).initial_seed() == 2 ** 64 - 1
    assert g.manual_seed(-2 ** 63).initial_seed() == 2 ** 63
    assert g.manual_seed(np.int64(9)).initial_seed() == 9
    for bad in (2 ** 64, -2 ** 63 - 1):
        with pytest.raises(RuntimeError, match="Overflow"):
            g.manual_seed(bad)
    for bad in (1.5, "3", None, kiln.tensor(3), True):
        with pytest.raises(RuntimeError, match="manual_seed expected a long"):  # torch's RuntimeError
            g.manual_seed(bad)
    assert kiln.manual_seed(7.9).initial_seed() == 7 and kiln.manual_seed("8").initial_seed() == 8  # int(seed)


def test_seed_is_non_deterministic_and_reproducible():
    g, h = kiln.Generator(), kiln.Generator()
    s = g.seed()
    assert isinstance(s, int) and 0 <= s < 2 ** 64 and g.initial_seed() == s
    assert h.seed() != s
    a = kiln.rand(8, generator=g).numpy()
    np.testing.assert_array_equal(kiln.rand(8, generator=h.manual_seed(s)).numpy(), a)
    s = kiln.seed()
    assert kiln.initial_seed() == s


def test_get_state_set_state_round_trip():
    g = kiln.Generator().manual_seed(21)
    kiln.rand(100, generator=g)  # mid-way through the state block
    state = g.get_state()
    assert state.dtype == kiln.uint8 and tuple(state.shape) == (5056,)  # torch's bytes
    expected = kiln.randn(500, generator=g).numpy()
    state_copy = state.clone()
    state.zero_()  # get_state returned a copy: the generator does not see this
    h = kiln.Generator().manual_seed(99)
    assert h.set_state(state_copy) is h and h.initial_seed() == 21
    np.testing.assert_array_equal(kiln.randn(500, generator=h).numpy(), expected)
    np.testing.assert_array_equal(kiln.randn(5, generator=g).numpy(), kiln.randn(5, generator=h).numpy())


def test_default_generator_state_functions():
    kiln.manual_seed(8)
    kiln.rand(3)
    saved = kiln.get_rng_state()
    expected = kiln.rand(10).numpy()
    kiln.manual_seed(1)
    assert kiln.set_rng_state(saved) is None
    np.testing.assert_array_equal(kiln.rand(10).numpy(), expected)
    assert kiln.initial_seed() == 8


def test_set_state_rejects_what_get_state_cannot_give():
    g = kiln.Generator()
    good = g.get_state()
    with pytest.raises(TypeError, match="ByteTensor"):
        g.set_state(good.to(kiln.float64))
    with pytest.raises(TypeError, match="ByteTensor"):
        g.set_state(good.to(kiln.int16))
    with pytest.raises(TypeError, match="ByteTensor, but got list"):
        g.set_state(good.tolist())
    with pytest.raises(RuntimeError, match="of size 5056 but found the input RNG state size to be 5055"):
        g.set_state(good[:-1])
    g.set_state(good.reshape(2, 2528))  # read by its bytes, whatever the shape, as torch
    bad = good.clone()
    bad[8:12] = 0  # left = 0: no valid engine state
    with pytest.raises(RuntimeError, match="Invalid mt19937 state"):
        g.set_state(bad)
    bad = good.long()  # the int64 states kiln returned before it had uint8 still load, checked as bytes
    np.testing.assert_array_equal(kiln.rand(4, generator=kiln.Generator().set_state(bad)).numpy(),
                                  kiln.rand(4, generator=kiln.Generator().set_state(good)).numpy())
    bad[100] = 256
    with pytest.raises(RuntimeError, match="values 0 to 255"):
        g.set_state(bad)
    strided = kiln.zeros(2 * 5056, dtype=kiln.uint8)[::2]
    strided.copy_(good)
    with pytest.raises(RuntimeError, match="RNG state must be contiguous"):  # as torch
        g.set_state(strided)


def test_generator_device():
    assert kiln.Generator().device == kiln.device("cpu") and kiln.default_generator.device.type == "cpu"
    kiln.Generator("cpu")
    kiln.Generator(device=kiln.device("cpu"))
    with pytest.raises(RuntimeError, match="Device type CUDA is not supported"):
        kiln.Generator("cuda")
    with pytest.raises(RuntimeError, match="Device type CUDA is not supported"):
        kiln.Generator(3)  # an int is a CUDA ordinal, as torch
    assert isinstance(kiln.default_generator, kiln.Generator)


@pytest.mark.parametrize("call", [
    lambda k, g: k.rand(3, generator=g),
    lambda k, g: k.randn(3, generator=g),
    lambda k, g: k.randint(0, 3, (2,), generator=g),
    lambda k, g: k.zeros(3).uniform_(generator=g),
    lambda k, g: k.zeros(3).normal_(generator=g),
    lambda k, g: k.zeros(3).random_(0, 3, generator=g),
    lambda k, g: k.bernoulli(k.zeros(3), generator=g),
    lambda k, g: k.zeros(3).bernoulli_(0.5, generator=g),
    lambda k, g: k.multinomial(k.ones(3), 1, generator=g),
    lambda k, g: k.randperm(3, generator=g),
    lambda k, g: k.normal(0.0, 1.0, (2,), generator=g),
], ids=["rand", "randn", "randint", "uniform_", "normal_", "random_", "bernoulli", "bernoulli_", "multinomial",
        "randperm", "normal"])
@pytest.mark.parametrize("wrong", [0, "cpu", kiln.device("cpu")], ids=["int", "str", "device"])
def test_wrong_generator_type_is_a_type_error(call, wrong):
    with pytest.raises(TypeError, match="Generator"):
        call(kiln, wrong)


def test_concurrent_draws_from_one_generator_are_whole():
    """The generator's lock: two threads drawing 10^5 numbers each from one generator (the GIL is
    released in kernels) get the stream's first and second halves, in one order or the other."""
    n = 100000
    stream = kiln.rand(2 * n, dtype=kiln.float64, generator=kiln.Generator().manual_seed(6)).numpy()
    g = kiln.Generator().manual_seed(6)
    results = [None, None]

    def draw(i):
        results[i] = kiln.rand(n, dtype=kiln.float64, generator=g).numpy()
    threads = [threading.Thread(target=draw, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    halves = [stream[:n], stream[n:]]
    assert any(np.array_equal(results[0], halves[k]) and np.array_equal(results[1], halves[1 - k]) for k in (0, 1))


def test_nn_init_takes_a_generator():
    w = kiln.empty(4, 3)
    for init, args in [(kiln.nn.init.uniform_, (-2, 2)), (kiln.nn.init.normal_, (1.0, 0.5)),
                       (kiln.nn.init.kaiming_uniform_, ())]:
        a = init(w, *args, generator=kiln.Generator().manual_seed(2)).numpy().copy()
        np.testing.assert_array_equal(init(w, *args, generator=kiln.Generator().manual_seed(2)).numpy(), a)
        kiln.manual_seed(2)
        np.testing.assert_array_equal(init(w, *args).numpy(), a)  # generator=None: the default one
        state = kiln.get_rng_state().numpy().copy()
        init(w, *args, generator=kiln.Generator())
        np.testing.assert_array_equal(kiln.get_rng_state().numpy(), state)
    # kaiming_uniform_(a=0) on fan_in 3: U(-b, b) with b = gain sqrt(2) * sqrt(3 / fan_in) = sqrt(2).
    v = kiln.nn.init.kaiming_uniform_(kiln.empty(200, 3), generator=kiln.Generator()).numpy()
    assert np.abs(v).max() < np.sqrt(2) and np.abs(v).max() > 0.9 * np.sqrt(2)


def test_default_generator_starts_from_a_non_deterministic_seed():
    """As torch: without manual_seed, each process draws different numbers (a new kiln.Generator()
    still starts from torch's fixed default seed)."""
    script = "import kiln; print(kiln.initial_seed(), kiln.rand(3).tolist())"
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    runs = {subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True, env=env).stdout
            for _ in range(2)}
    assert len(runs) == 2
