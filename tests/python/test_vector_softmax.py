"""softmax's and log_softmax's vector loops (runtime/kernels/cpu/vector_softmax.cc) and their fused
gradients (_softmax_backward_data, _log_softmax_backward_data), on every SIMD target this build has
for this CPU (each forced in turn, the baseline included), against torch and a float64 reference:

* row lengths around every vector width, the unrolled groups of four vectors and the 1024-element
  chunks of the sums; columns (an outer dim) with widths around the vector width;
* never more than twice torch's error on the same float32 inputs (torch: Sleef's exp, float sums);
* NaN and infinities at the start, in the vector part and in the tail of a line: the NaN pattern
  is torch's (a line holding NaN or +inf, or only -inf, is all NaN);
* bfloat16 and float16 (widened per row, rounded once) within one unit of the 16-bit type;
* the layout and the thread count never change a bit.
"""
import numpy as np
import pytest
import torch

import kiln

TARGETS = kiln._C._simd_targets()
LENGTHS = [1, 2, 3, 4, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 64, 65, 127, 128, 129, 1023, 1024, 1025, 2049, 5000]
FUNCS = ["softmax", "log_softmax"]


@pytest.fixture(params=TARGETS)
def on_target(request):
    threads = kiln.get_num_threads()
    kiln._C._simd_use_target(request.param)
    kiln.set_num_threads(1)
    yield request.param
    kiln._C._simd_use_target(None)
    kiln.set_num_threads(threads)


def reference(name, x, dim):
    t = torch.from_numpy(np.asarray(x, dtype=np.float64))
    return getattr(torch, name)(t, dim).numpy()


def errors(name, x, dim):
    """The max abs errors of kiln's and torch's float32 results against float64."""
    ref = reference(name, x, dim)
    k = getattr(kiln, name)(kiln.from_numpy(x), dim).numpy()
    t = getattr(torch, name)(torch.from_numpy(x), dim).numpy()
    return np.abs(k - ref).max(), np.abs(t - ref).max(), k


# An absolute floor for the comparison with torch's error: a few float32 ulps of the values.
def floor(name, ref):
    return 4 * np.finfo(np.float32).eps * max(np.abs(ref).max(), 1.0 if name == "softmax" else 0.0)


@pytest.mark.parametrize("name", FUNCS)
def test_rows_against_torch(on_target, name):
    rng = np.random.default_rng(0)
    for n in LENGTHS:
        x = (rng.standard_normal((3, n)) * 4).astype(np.float32)
        ek, et, k = errors(name, x, 1)
        ref = reference(name, x, 1)
        assert ek <= 2 * et + floor(name, ref), (on_target, name, n, ek, et)
        if name == "softmax":
            np.testing.assert_allclose(k.sum(axis=1), 1.0, rtol=1e-5)


@pytest.mark.parametrize("name", FUNCS)
def test_columns_against_torch(on_target, name):
    rng = np.random.default_rng(1)
    for inner in [1, 2, 3, 7, 8, 15, 16, 17, 33, 1025]:
        for n in [1, 2, 5, 40]:
            x = (rng.standard_normal((2, n, inner)) * 4).astype(np.float32)
            ek, et, _ = errors(name, x, 1)
            assert ek <= 2 * et + floor(name, reference(name, x, 1)), (on_target, name, n, inner, ek, et)


@pytest.mark.parametrize("name", FUNCS)
def test_nan_and_infinities(on_target, name):
    """Each special value at every position of lines of several lengths, along rows and columns."""
    for n in [1, 3, 16, 17, 37, 70]:
        for special in [np.nan, np.inf, -np.inf]:
            x = np.tile(np.linspace(-3, 3, n, dtype=np.float32), (n + 1, 1))
            for i in range(n):
                x[i, i] = special
            x[n] = -np.inf  # a line of -inf only
            for dim, a in [(1, x), (0, np.ascontiguousarray(x.T))]:
                k = getattr(kiln, name)(kiln.from_numpy(a), dim).numpy()
                t = getattr(torch, name)(torch.from_numpy(a), dim).numpy()
                np.testing.assert_array_equal(np.isnan(k), np.isnan(t), err_msg=f"{on_target} {name} {n} {special}")
                np.testing.assert_allclose(k, t, rtol=1e-5, atol=1e-6, equal_nan=True)


@pytest.mark.parametrize("name", ["_softmax_backward_data", "_log_softmax_backward_data"])
def test_backward_against_torch(on_target, name):
    rng = np.random.default_rng(2)
    forward = torch.softmax if name == "_softmax_backward_data" else torch.log_softmax
    for shape, dim in [((3, n), 1) for n in LENGTHS] + [((4, 33), 0), ((2, 5, 17), 1)]:
        o = forward(torch.from_numpy((rng.standard_normal(shape) * 3).astype(np.float32)), dim)
        g = torch.from_numpy(rng.standard_normal(shape).astype(np.float32))
        exact = getattr(torch, name)(g.double(), o.double(), dim, torch.float64).numpy()
        t = getattr(torch, name)(g, o, dim, torch.float32).numpy()
        k = getattr(kiln, name)(kiln.from_numpy(g.numpy()), kiln.from_numpy(o.numpy()), dim, kiln.float32)
        assert k.dtype == kiln.float32
        ek, et = np.abs(k.numpy() - exact).max(), np.abs(t - exact).max()
        assert ek <= 2 * et + 4 * np.finfo(np.float32).eps * np.abs(exact).max(), (on_target, name, shape, ek, et)


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
@pytest.mark.parametrize("name", FUNCS)
def test_16_bit(on_target, name, dtype):
    """Computed in float32 and rounded once: within one unit of the 16-bit type of the float64
    result on the same (rounded) inputs, and for bfloat16 within one unit of torch's."""
    rng = np.random.default_rng(3)
    eps = {"bfloat16": 2.0 ** -8, "float16": 2.0 ** -11}[dtype]
    for shape, dim in [((3, 100), 1), ((2, 1500), 1), ((5, 9), 0)]:
        x = kiln.from_numpy((rng.standard_normal(shape) * 3).astype(np.float32)).to(getattr(kiln, dtype))
        xf = x.float().numpy()
        k = getattr(kiln, name)(x, dim)
        assert k.dtype == getattr(kiln, dtype)
        ref = reference(name, xf, dim)
        np.testing.assert_allclose(k.float().numpy(), ref, rtol=eps, atol=eps * (1 if name == "softmax" else 0) + 1e-30)
        if dtype == "bfloat16":
            t = getattr(torch, name)(torch.from_numpy(xf).bfloat16(), dim).float().numpy()
            np.testing.assert_allclose(k.float().numpy(), t, rtol=2 * eps, atol=1e-30 if name == "log_softmax" else 2 * eps)


def test_backward_16_bit(on_target):
    rng = np.random.default_rng(4)
    for name, forward in [("_softmax_backward_data", torch.softmax), ("_log_softmax_backward_data", torch.log_softmax)]:
        o = forward(torch.from_numpy(rng.standard_normal((3, 300)).astype(np.float32)), 1).bfloat16()
        g = torch.from_numpy(rng.standard_normal((3, 300)).astype(np.float32)).bfloat16()
        t = getattr(torch, name)(g, o, 1, torch.bfloat16).float().numpy()
        k = getattr(kiln, name)(kiln.from_numpy(g.float().numpy()).bfloat16(), kiln.from_numpy(o.float().numpy()).bfloat16(),
                                1, kiln.bfloat16)
        assert k.dtype == kiln.bfloat16
        np.testing.assert_allclose(k.float().numpy(), t, rtol=2 ** -7, atol=2 ** -7 * np.abs(t).max())


@pytest.mark.parametrize("name", FUNCS)
def test_layout_and_threads_change_no_bit(name):
    rng = np.random.default_rng(5)
    x = (rng.standard_normal((64, 300)) * 4).astype(np.float32)
    f = getattr(kiln, name)
    want = f(kiln.from_numpy(x), 1).numpy()
    # A strided input (every other column) and a transposed one (dim 1 not innermost).
    wide = np.ascontiguousarray(np.stack([x, -x], axis=2).reshape(64, 600))
    strided = kiln.from_numpy(wide)[:, ::2]
    assert not strided.is_contiguous()
    np.testing.assert_array_equal(f(strided, 1).numpy(), want)
    transposed = kiln.from_numpy(np.ascontiguousarray(x.T)).t()
    assert not transposed.is_contiguous()
    np.testing.assert_array_equal(f(transposed, 1).numpy(), want)
    columns = kiln.from_numpy(np.ascontiguousarray(x.T))
    threads = kiln.get_num_threads()
    try:
        kiln.set_num_threads(1)
        want_columns = f(columns, 0).numpy()
        for t in [2, 3]:
            kiln.set_num_threads(t)
            np.testing.assert_array_equal(f(kiln.from_numpy(x), 1).numpy(), want)
            np.testing.assert_array_equal(f(columns, 0).numpy(), want_columns)
    finally:
        kiln.set_num_threads(threads)


def test_training_step_gradient_matches_torch():
    """nll_loss(log_softmax(x)).backward() through the fused gradients, float32, against torch."""
    rng = np.random.default_rng(6)
    x = (rng.standard_normal((50, 1000)) * 2).astype(np.float32)
    target = rng.integers(0, 1000, 50)
    xk = kiln.from_numpy(x).requires_grad_(True)
    kiln.nn.functional.nll_loss(kiln.nn.functional.log_softmax(xk, 1), kiln.from_numpy(target)).backward()
    xt = torch.from_numpy(x).requires_grad_(True)
    torch.nn.functional.nll_loss(torch.nn.functional.log_softmax(xt, 1), torch.from_numpy(target)).backward()
    np.testing.assert_allclose(xk.grad.numpy(), xt.grad.numpy(), rtol=1e-5, atol=1e-9)
