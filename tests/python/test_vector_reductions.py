"""The reductions' vector loops (runtime/kernels/cpu/vector_reduce-inl.h, through
vector_reductions.h): sum, mean, amax, amin, argmax, argmin, max.dim, min.dim, prod, any and all, on every SIMD
target this build has for this CPU (kiln._C._simd_targets(), each forced in turn, the baseline
included), against torch:

* lengths around every vector width (and the 64-lane sum's groups and 1024-element chunks);
* NaN at various positions (amax/amin propagate it; argmax/argmin give the first NaN's index),
  infinities of both signs (a max's NaN check sees +inf + -inf as NaN and must still answer
  right), -0.0 next to 0.0, all-equal inputs and ties (the first index);
* int32 and int64, float64;
* the contiguous row (last dim, everything) and columns (a reduced dim with kept dims after it);
* float32/float64 sums bit for bit against torch's (its cascade order, at the same thread count);
  16-bit float sums and products bit for bit against a NumPy model of the documented order
  (element i in lane i % 64, 64-lane fold, 1024-element chunks in double; products in 16 double
  lanes), which makes them independent of the target, of where a run starts in memory and of the
  thread count when each output is one line.
"""
import numpy as np
import pytest
import torch

import kiln

TARGETS = kiln._C._simd_targets()
LENGTHS = [1, 2, 3, 4, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 64, 65, 127, 128, 129, 255, 256, 257, 1000, 1023,
           1024, 1025, 4099, 65536, 100003, 1000003]
SHORT = [n for n in LENGTHS if n <= 4099]


@pytest.fixture(params=TARGETS)
def on_target(request):
    """Runs the test with the vector kernels on `request.param`, one thread, then back."""
    threads = kiln.get_num_threads()
    kiln._C._simd_use_target(request.param)
    kiln.set_num_threads(1)
    assert kiln._C._simd_target() == request.param
    yield request.param
    kiln._C._simd_use_target(None)
    kiln.set_num_threads(threads)


def kt(a):
    return kiln.from_numpy(np.ascontiguousarray(a))


def tt(a):
    return torch.from_numpy(np.ascontiguousarray(a).copy())


def model_sum(x, lanes=64, chunk=1024, op=np.add):
    """The vector loops' sum of a float32 (or float64: lanes=16, chunk=None) run, in NumPy: element i
    of a chunk goes to lane i % lanes, the lanes fold as lane k += lane k + w (w = lanes/2 ... 1),
    chunk totals add in double. With op=np.multiply (x in float64, chunk=None): the product."""
    identity = 1 if op is np.multiply else 0
    total = float(identity)
    step = chunk or max(len(x), 1)
    for c in range(0, len(x), step):
        part = x[c:c + step]
        padded = np.full(-(-len(part) // lanes) * lanes, identity, x.dtype)
        padded[:len(part)] = part
        acc = np.full(lanes, identity, x.dtype)
        for row in padded.reshape(-1, lanes):
            acc = op(acc, row)
        w = lanes // 2
        while w:
            acc[:w] = op(acc[:w], acc[w:2 * w])
            w //= 2
        total = op(total, float(acc[0]))
    return total


def normal(n, dtype=np.float32, seed=0):
    return np.random.default_rng(seed).standard_normal(n).astype(dtype)


# ------------------------------------------------------------------------------------------ sums
# float32/float64 sums follow torch 1.13's order (runtime/kernels/cpu/torch_sum_order.h): the bits
# are torch's at the same thread count, whatever the SIMD target.
@pytest.fixture
def torch_threads():
    """torch on kiln's thread count (the fixtures set kiln's)."""
    before = torch.get_num_threads()
    torch.set_num_threads(kiln.get_num_threads())
    yield
    torch.set_num_threads(before)


@pytest.mark.parametrize("n", LENGTHS)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_sum_is_torchs_bit_for_bit(on_target, torch_threads, n, dtype):
    x = normal(n, dtype, seed=n)
    assert kiln.sum(kt(x)).item() == torch.sum(tt(x)).item()
    assert kiln.mean(kt(x)).item() == torch.mean(tt(x)).item()


def test_sum_does_not_depend_on_alignment(on_target, torch_threads):
    x = normal(5000)
    base = kt(x)
    for start in range(17):
        assert kiln.sum(base[start:]).item() == torch.sum(tt(x[start:])).item()


@pytest.mark.parametrize("shape,dim", [((3, 257, 5), 1), ((1000, 33), 0), ((4, 5, 6, 7), (1, 2)),
                                       ((2, 3, 300), (0, 1)), ((5, 1, 70), (0, 1)), ((64, 1000), 0),
                                       ((32, 4), 0), ((1000, 7), 0), ((100, 10), 0), ((17, 8), 0),
                                       ((300, 16), 0), ((40, 1), 0), ((7, 3), 1), ((64, 40), -1)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_sum_over_dims_is_torchs_bit_for_bit(on_target, torch_threads, shape, dim, dtype):
    x = normal(int(np.prod(shape)), dtype).reshape(shape)
    for op in ("sum", "mean"):
        np.testing.assert_array_equal(getattr(kiln, op)(kt(x), dim).numpy(), getattr(torch, op)(tt(x), dim).numpy())


@pytest.mark.parametrize("threads", [2, 3, 8])
@pytest.mark.parametrize("n", [32767, 32768, 65536, 100003, 1000003, 4194309])
def test_long_sum_on_threads_is_torchs(threads, n):
    """torch splits a whole-tensor sum of 32768 elements or more across its threads (one chunk per
    thread, the totals summed as a line): so does kiln, with the same thread count."""
    x = normal(n, seed=n)
    kb, tb = kiln.get_num_threads(), torch.get_num_threads()
    try:
        kiln.set_num_threads(threads)
        torch.set_num_threads(threads)
        assert kiln.sum(kt(x)).item() == torch.sum(tt(x)).item()
        assert kiln.sum(kt(x.astype(np.float64))).item() == torch.sum(tt(x.astype(np.float64))).item()
    finally:
        kiln.set_num_threads(kb)
        torch.set_num_threads(tb)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("n", [1, 15, 16, 17, 65, 1000, 1025, 1000003])
def test_16bit_float_sum_widens_exactly(on_target, dtype, n):
    t = tt(normal(n, seed=n)).to(getattr(torch, dtype))
    widened = t.float().numpy()
    k = kiln.from_numpy(widened).to(getattr(kiln, dtype))
    expected = torch.tensor(model_sum(widened), dtype=torch.float64).to(getattr(torch, dtype))
    got = kiln.sum(k)
    assert got.dtype == getattr(kiln, dtype)
    assert got.float().item() == expected.float().item()
    # torch sums in float32 too: the same within a rounding of the 16-bit result.
    np.testing.assert_allclose(got.float().item(), torch.sum(t).float().item(), rtol=1e-2, atol=0.1)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_16bit_float_sum_special_values(on_target, dtype):
    for values, expected in (([1.0, float("inf"), 2.0], float("inf")), ([1.0, float("nan")], float("nan")),
                             ([float("inf"), float("-inf")], float("nan")), ([-0.0] * 40, 0.0)):
        x = np.array(values * 20, np.float32)  # long enough for the vectors, inf/NaN in their lanes
        got = kiln.sum(kiln.from_numpy(x).to(getattr(kiln, dtype))).float().item()
        want = torch.sum(tt(x).to(getattr(torch, dtype))).float().item()
        np.testing.assert_equal(got, want)
        np.testing.assert_equal(got, expected)


def test_sum_rows_do_not_depend_on_the_thread_count():
    x = kt(normal(300 * 4099).reshape(300, 4099))
    threads = kiln.get_num_threads()
    try:
        kiln.set_num_threads(1)
        one = kiln.sum(x, 1).numpy(), kiln.sum(x, 0).numpy(), kiln.amax(x, 0).numpy(), kiln.argmax(x, 0).numpy()
        kiln.set_num_threads(2)
        two = kiln.sum(x, 1).numpy(), kiln.sum(x, 0).numpy(), kiln.amax(x, 0).numpy(), kiln.argmax(x, 0).numpy()
    finally:
        kiln.set_num_threads(threads)
    for a, b in zip(one, two):
        np.testing.assert_array_equal(a, b)


# ------------------------------------------------------------------------------ amax ... argmin
EXTREMES = ("amax", "amin", "argmax", "argmin")


def check_extremes(x, dim=None):
    """kiln's amax/amin/argmax/argmin (and max/min with a dim) against torch's, exactly (NaN
    compares equal to NaN; the sign of a zero result is left open, as torch's depends on order)."""
    k, t = kt(x), tt(x)
    for op in EXTREMES:
        got = getattr(kiln, op)(k) if dim is None else getattr(kiln, op)(k, dim)
        want = getattr(torch, op)(t) if dim is None else getattr(torch, op)(t, dim)
        np.testing.assert_array_equal(got.numpy(), want.numpy(), err_msg=f"{op} dim={dim} n={x.shape}")
    if dim is not None and isinstance(dim, int):
        for op in ("max", "min"):
            values, indices = getattr(kiln, op)(k, dim)
            want = getattr(torch, op)(t, dim)
            np.testing.assert_array_equal(values.numpy(), want.values.numpy())
            np.testing.assert_array_equal(indices.numpy(), want.indices.numpy())


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int64])
@pytest.mark.parametrize("n", SHORT + [100003])
def test_extremes_of_a_run(on_target, dtype, n):
    rng = np.random.default_rng(n)
    x = rng.integers(-1000, 1000, n).astype(dtype) if np.dtype(dtype).kind == "i" else normal(n, dtype, seed=n)
    check_extremes(x)
    # the extreme at the last position, then at the first (a tail element, a head element)
    for pos in (n - 1, 0):
        y = x.copy()
        y[pos] = np.iinfo(dtype).max if np.dtype(dtype).kind == "i" else 1e30
        check_extremes(y)
        y[pos] = np.iinfo(dtype).min if np.dtype(dtype).kind == "i" else -1e30
        check_extremes(y)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("n", [1, 2, 15, 16, 17, 63, 64, 65, 200, 1025, 4099])
def test_extremes_with_nan(on_target, dtype, n):
    x = normal(n, dtype, seed=n)
    for positions in ([0], [n - 1], [n // 2], [n // 3, n - 1], [n - 1, n // 3]):
        y = x.copy()
        y[positions] = np.nan
        check_extremes(y)
    check_extremes(np.full(n, np.nan, dtype))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("n", [3, 16, 17, 64, 65, 200, 4099])
def test_extremes_with_infinities_and_signed_zeros(on_target, dtype, n):
    x = normal(n, dtype, seed=n)
    y = x.copy()
    y[n // 2], y[-1] = np.inf, -np.inf  # their sum is NaN: the NaN check must not be fooled
    check_extremes(y)
    y[0] = np.nan
    check_extremes(y)
    z = np.full(n, np.inf, dtype)
    check_extremes(z)
    check_extremes(-z)
    zeros = np.where(np.arange(n) % 3 == 0, -0.0, 0.0).astype(dtype)
    check_extremes(zeros)
    check_extremes(-zeros)
    # the largest value twice: the first index
    w = x.copy()
    w[[n // 3, n - 1]] = 7.0
    check_extremes(w)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int64])
@pytest.mark.parametrize("n", [1, 16, 17, 100, 4099])
def test_all_equal_gives_index_zero(on_target, dtype, n):
    x = np.full(n, 3, dtype)
    check_extremes(x)
    assert kiln.argmax(kt(x)).item() == 0 and kiln.argmin(kt(x)).item() == 0


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int64])
@pytest.mark.parametrize("shape,dim", [((7, 100), 1), ((100, 7), 0), ((3, 65, 17), 1), ((3, 65, 17), 0),
                                       ((2, 1000, 33), 1), ((1100, 3), 0), ((5, 3, 1030), 1), ((4, 2000), 0)])
def test_extremes_along_a_dim(on_target, dtype, shape, dim):
    rng = np.random.default_rng(1)
    if np.dtype(dtype).kind == "i":
        x = rng.integers(-5, 5, shape).astype(dtype)  # many ties: the first index must win
    else:
        x = rng.integers(-5, 5, shape).astype(dtype)
        flat = x.reshape(-1)
        flat[rng.integers(0, flat.size, max(1, flat.size // 50))] = np.nan
        flat[rng.integers(0, flat.size, max(1, flat.size // 50))] = np.inf
        flat[rng.integers(0, flat.size, max(1, flat.size // 50))] = -0.0
    check_extremes(x, dim)
    check_extremes(np.ascontiguousarray(x), dim - len(shape))


@pytest.mark.parametrize("shape,dims", [((4, 5, 6, 7), (1, 2)), ((30, 40, 5), (0, 1)), ((3, 4, 500), (1, 2)),
                                        ((6, 7, 8), (0, 2))])
def test_amax_amin_over_several_dims(on_target, shape, dims):
    x = normal(int(np.prod(shape))).reshape(shape)
    x.reshape(-1)[::37] = np.nan
    for op in ("amax", "amin"):
        np.testing.assert_array_equal(getattr(kiln, op)(kt(x), dims).numpy(), getattr(torch, op)(tt(x), dims).numpy())


def test_extremes_of_non_contiguous_inputs(on_target):
    x = normal(300 * 70).reshape(300, 70)
    x[5, 3] = np.nan
    kx, tx = kt(x).t(), tt(x).t()  # strided
    for dim in (0, 1):
        for op in EXTREMES:
            np.testing.assert_array_equal(getattr(kiln, op)(kx, dim).numpy(), getattr(torch, op)(tx, dim).numpy())
    for op in ("sum", "mean"):
        np.testing.assert_allclose(getattr(kiln, op)(kx, 1).numpy(), getattr(torch, op)(tx, 1).numpy(), rtol=1e-5,
                                   atol=1e-5)


def test_a_million_elements(on_target):
    x = normal(1000003)
    x[777777] = np.nan
    check_extremes(x)
    x[777777] = 9.0
    x[999999] = 9.0
    check_extremes(x)
    assert kiln.argmax(kt(x)).item() == 777777


# ------------------------------------------------------------------------------- prod, any, all
def near_one(n, dtype, seed):
    return (1 + 0.01 * np.random.default_rng(seed).standard_normal(n)).astype(dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("n", [1, 15, 16, 17, 63, 64, 65, 100, 1025, 4099, 100003])
def test_prod_of_a_run_is_16_double_lanes(on_target, dtype, n):
    x = near_one(n, dtype, n)
    got = kiln.prod(kt(x), 0).item()
    if n >= 64:  # shorter lines keep the scalar loop (in order)
        assert got == dtype(model_sum(x.astype(np.float64), lanes=16, chunk=None, op=np.multiply))
    # kiln multiplies float32 in double: within a rounding of the exact product (torch, in float32
    # lanes, drifts by 1.4e-5 over 100003 elements)
    exact = np.prod(x.astype(np.float64))
    np.testing.assert_allclose(got, exact, rtol=1e-7 if dtype == np.float32 else 1e-12)
    np.testing.assert_allclose(got, torch.prod(tt(x), 0).item(), rtol=1e-4 if dtype == np.float32 else 1e-12)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_prod_special_values(on_target, dtype):
    for special in ([0.0], [-0.0], [np.nan], [np.inf], [np.inf, 0.0], [-np.inf], [-1.0, -1.0, -1.0]):
        x = near_one(200, dtype, 1)
        x[[50 + 7 * i for i in range(len(special))]] = special
        got, want = kiln.prod(kt(x), 0).numpy(), torch.prod(tt(x), 0).numpy()
        np.testing.assert_allclose(got, want, rtol=1e-5)  # NaN, inf and 0 exactly
        assert np.signbit(got) == np.signbit(want)  # a product's sign, -0.0 included, has one answer


@pytest.mark.parametrize("shape,dim", [((3, 257, 5), 1), ((1000, 33), 0), ((70, 100), 1), ((2, 3, 300), 0)])
def test_prod_along_a_dim(on_target, shape, dim):
    x = near_one(int(np.prod(shape)), np.float32, 2).reshape(shape)
    x.reshape(-1)[::97] = -x.reshape(-1)[::97]
    got = kiln.prod(kt(x), dim).numpy()
    np.testing.assert_allclose(got, torch.prod(tt(x), dim).numpy(), rtol=1e-5)
    np.testing.assert_allclose(got, np.prod(x.astype(np.float64), axis=dim).astype(np.float32), rtol=1e-6)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int64])
@pytest.mark.parametrize("n", [0, 1, 15, 16, 17, 64, 65, 200, 4099])
def test_any_all_of_a_run(on_target, dtype, n):
    ones = np.ones(n, dtype)
    zeros = np.zeros(n, dtype)
    cases = [ones, zeros]
    for pos in {0, n // 2, n - 1} if n else ():
        a, b = ones.copy(), zeros.copy()
        a[pos], b[pos] = 0, 5
        cases += [a, b]
        if np.dtype(dtype).kind == "f":
            c, z = zeros.copy(), ones.copy()
            c[pos] = np.nan  # nonzero
            z[pos] = -0.0    # zero
            cases += [c, z]
    for x in cases:
        for op in ("any", "all"):
            assert getattr(kiln, op)(kt(x)).item() == getattr(torch, op)(tt(x)).item(), (op, x)


@pytest.mark.parametrize("dtype", [np.float32, np.int64])
@pytest.mark.parametrize("shape,dim", [((5, 100), 1), ((100, 5), 0), ((3, 0), 1), ((4, 70, 3), 1), ((6, 130), -1)])
def test_any_all_along_a_dim(on_target, dtype, shape, dim):
    rng = np.random.default_rng(3)
    x = (rng.random(shape) < 0.995).astype(dtype)
    if x.size:
        x[0] = 1
    for op in ("any", "all"):
        np.testing.assert_array_equal(getattr(kiln, op)(kt(x), dim).numpy(), getattr(torch, op)(tt(x), dim).numpy())
        np.testing.assert_array_equal(getattr(kiln, op)(kt(1 - x), dim).numpy(),
                                      getattr(torch, op)(tt(1 - x), dim).numpy())


@pytest.mark.parametrize("threads", [2, 3, 5])
def test_one_long_line_split_across_threads(threads):
    """amax/amin/argmax/argmin of one long line go to the threads in parts: the parts combine to
    torch's answer (the first NaN, the first of equal extremes) whatever their number."""
    n = 300001
    x = normal(n)
    cases = [x]
    for positions, value in (([n - 5, 7], np.nan), ([n - 5, n // 2], np.nan), ([n // 3, n - 1], 50.0),
                             ([n - 1, n // 3 + 1], -50.0), ([5, n // 3 * 2], np.inf)):
        y = x.copy()
        y[positions] = value
        cases.append(y)
    cases.append(np.full(n, 2.0, np.float32))
    before = kiln.get_num_threads()
    try:
        kiln.set_num_threads(threads)
        for y in cases:
            check_extremes(y)
            check_extremes(y.astype(np.float64))
        check_extremes(np.random.default_rng(0).integers(-3, 3, n).astype(np.int32))
    finally:
        kiln.set_num_threads(before)
