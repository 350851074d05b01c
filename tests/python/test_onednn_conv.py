"""float32 conv2d and its gradients through oneDNN (runtime/kernels/cpu/onednn_conv.cc), the library
torch 1.13's CPU convolutions call: wherever torch's use_mkldnn picks it, kiln's output and its input,
weight and bias gradients are torch's bits, on one and on two threads. Transposed convolutions, which
torch 1.13 computes natively, keep kiln's im2col + GEMM path and with it torch's bits. Everywhere else
(float64, float16) kiln's im2col path agrees within float tolerance; the 1x1 and small single-image
float32 cases torch computes natively (slow_conv2d, a GEMM per image) are its bits too."""
import numpy as np
import pytest
import torch

import kiln


def run(lib, x, w, b, gy, kw, dtype):
    X = lib.from_numpy(x.copy()).to(getattr(lib, dtype)).requires_grad_()
    Wt = lib.from_numpy(w.copy()).to(getattr(lib, dtype)).requires_grad_()
    B = lib.from_numpy(b.copy()).to(getattr(lib, dtype)).requires_grad_() if b is not None else None
    y = lib.nn.functional.conv2d(X, Wt, B, **kw)
    y.backward(lib.from_numpy(gy).to(getattr(lib, dtype)))
    out = [y.detach(), X.grad, Wt.grad] + ([B.grad] if B is not None else [])
    return [t.float().numpy() for t in out]


def both(shape, out_channels, kernel, threads=1, dtype="float32", bias=True, **kw):
    n, c, h, w_ = shape
    rng = np.random.default_rng(sum(shape) + out_channels + kernel)
    x = rng.standard_normal(shape).astype(np.float32)
    w = (rng.standard_normal((out_channels, c // kw.get("groups", 1), kernel, kernel)) * 0.1).astype(np.float32)
    b = rng.standard_normal(out_channels).astype(np.float32) if bias else None
    with torch.no_grad():
        y_shape = torch.nn.functional.conv2d(torch.from_numpy(x), torch.from_numpy(w), None, **kw).shape
    gy = rng.standard_normal(tuple(y_shape)).astype(np.float32)
    old_t, old_k = torch.get_num_threads(), kiln.get_num_threads()
    torch.set_num_threads(threads)
    kiln.set_num_threads(threads)
    try:
        # torch 1.13 has no float16 convolution on the CPU: its float32 result is the reference there
        torch_dtype = "float32" if dtype == "float16" else dtype
        return run(torch, x, w, b, gy, kw, torch_dtype), run(kiln, x, w, b, gy, kw, dtype)
    finally:
        torch.set_num_threads(old_t)
        kiln.set_num_threads(old_k)


# Shapes torch 1.13 sends to oneDNN: a batch, or a large image, or a kernel above 3x3, or groups.
ONEDNN_CASES = [
    ((8, 16, 14, 14), 32, 3, dict(padding=1)),
    ((16, 3, 32, 32), 16, 5, dict()),
    ((8, 16, 15, 17), 32, 3, dict(stride=2, padding=1)),
    ((4, 16, 15, 17), 32, 3, dict(groups=4, dilation=2, padding=2)),
    ((4, 16, 15, 17), 16, 3, dict(groups=16, padding=1)),          # depthwise
    ((2, 8, 12, 10), 12, 1, dict(stride=2)),                       # strided 1x1
    ((1, 3, 9, 9), 4, 5, dict(padding=2)),                         # one image, a 5x5 kernel
    ((1, 32, 30, 30), 8, 3, dict(padding=1)),                      # one large image
    ((3, 5, 7, 6), 7, 3, dict(stride=(2, 1), padding=(0, 1), dilation=(1, 2))),
]


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("shape,out_channels,kernel,kw", ONEDNN_CASES)
def test_output_and_gradients_are_torchs_bits(shape, out_channels, kernel, kw, threads):
    t, k = both(shape, out_channels, kernel, threads, **kw)
    for name, a, b in zip(("output", "input grad", "weight grad", "bias grad"), t, k):
        assert np.array_equal(a, b), (name, np.abs(a - b).max())


def test_without_bias_and_unbatched_input():
    t, k = both((1, 32, 30, 30), 8, 3, bias=False, padding=1)
    assert all(np.array_equal(a, b) for a, b in zip(t, k))
    x = np.random.default_rng(1).standard_normal((32, 30, 30)).astype(np.float32)
    w = np.random.default_rng(2).standard_normal((8, 32, 3, 3)).astype(np.float32)
    yt = torch.nn.functional.conv2d(torch.from_numpy(x), torch.from_numpy(w), padding=1)
    yk = kiln.nn.functional.conv2d(kiln.from_numpy(x), kiln.from_numpy(w), padding=1)
    assert tuple(yk.shape) == (8, 30, 30) and np.array_equal(yk.numpy(), yt.numpy())


@pytest.mark.parametrize("dtype,tol", [("float64", 1e-12), ("float16", 2e-2), ("bfloat16", 1e-1)])
def test_other_dtypes_keep_the_im2col_path(dtype, tol):
    t, k = both((4, 8, 10, 10), 8, 3, dtype=dtype, padding=1)
    for a, b in zip(t, k):
        np.testing.assert_allclose(b, a, rtol=tol, atol=tol * 10)


@pytest.mark.parametrize("shape,kernel", [((2, 8, 9, 9), 1), ((1, 3, 8, 8), 3), ((8, 16, 16, 16), 1),
                                          ((1, 16, 12, 12), 3)])
def test_shapes_torch_computes_natively_are_its_bits_too(shape, kernel):
    # one thread, 1x1 kernels or a single small image: torch's slow_conv2d, one GEMM per image
    t, k = both(shape, 8, kernel, padding=kernel // 2)
    for a, b in zip(t, k):
        assert np.array_equal(a, b), np.abs(a - b).max()


def test_second_derivatives_through_the_onednn_gradients():
    # double backward differentiates conv2d_backward_input/weight, which are oneDNN convolutions too
    rng = np.random.default_rng(3)
    x = rng.standard_normal((4, 6, 9, 9)).astype(np.float32)
    w = rng.standard_normal((8, 6, 3, 3)).astype(np.float32)
    grads = []
    for lib in (torch, kiln):
        X, W = lib.from_numpy(x.copy()).requires_grad_(), lib.from_numpy(w.copy()).requires_grad_()
        y = lib.nn.functional.conv2d(X, W, padding=1)
        (gx,) = lib.autograd.grad(y.pow(2).sum(), X, create_graph=True)
        gx.abs().sum().backward()
        grads.append((gx.detach().numpy(), W.grad.numpy()))
    for a, b in zip(*grads):
        np.testing.assert_allclose(b, a, rtol=1e-4, atol=1e-3)


def test_a_grown_batch_and_new_shapes_reuse_no_stale_plan():
    # the plans are cached per shape: alternating shapes must each get their own
    for shape in [(2, 4, 8, 8), (3, 4, 8, 8), (2, 4, 8, 8), (2, 4, 9, 8)]:
        t, k = both(shape, 6, 3, padding=1)
        assert np.array_equal(t[0], k[0])


@pytest.mark.parametrize("threads", [1, 2])
def test_transposed_convolutions_stay_native_and_give_torchs_bits(threads):
    # torch 1.13 runs conv_transpose2d natively (slow_conv_transpose2d), even where it would send the
    # same shapes' conv2d to oneDNN
    rng = np.random.default_rng(4)
    old_t, old_k = torch.get_num_threads(), kiln.get_num_threads()
    torch.set_num_threads(threads)
    kiln.set_num_threads(threads)
    try:
        for (n, c, h, w, o, k, s, p, op) in [(1, 8, 7, 7, 6, 3, 2, 1, 1), (1, 4, 5, 5, 3, 4, 2, 1, 0),
                                             (4, 8, 7, 7, 6, 3, 2, 0, 1), (2, 8, 8, 8, 4, 4, 2, 1, 0)]:
            x = rng.standard_normal((n, c, h, w)).astype(np.float32)
            wt = rng.standard_normal((c, o, k, k)).astype(np.float32)
            bias = rng.standard_normal(o).astype(np.float32)
            outs = []
            for lib in (torch, kiln):
                X, W, B = (lib.from_numpy(a.copy()).requires_grad_() for a in (x, wt, bias))
                y = lib.nn.functional.conv_transpose2d(X, W, B, stride=s, padding=p, output_padding=op)
                y.backward(lib.from_numpy(np.linspace(-1, 1, y.numel(), dtype=np.float32).reshape(tuple(y.shape))))
                outs.append([t.detach().numpy() for t in (y, X.grad, W.grad)])
            for a, b in zip(*outs):
                assert np.array_equal(a, b), np.abs(a - b).max()
    finally:
        torch.set_num_threads(old_t)
        kiln.set_num_threads(old_k)
