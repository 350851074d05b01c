"""Regression tests for what the tenth batch of programs (test_programs_part10.py) exposed, against torch 1.13.

- sum / mean of a strided float tensor (a transpose, a permute, a slice, a channels-last layout) in the order
  torch's TensorIterator gives the reduction: its reduced dims innermost by stride, so x.t().sum(0) adds each
  output's elements as x.sum(1) does (CLIP's AttentionPool2d takes a mean over a permuted tensor), and its 2-D
  inner / outer loops otherwise. kiln summed such inputs in their logical order before.
- BatchNorm1d's training pass on (N, C) inputs (and (N, C, 1)): torch's contiguous kernel hands those to its
  channels-last statistics and backward (per-channel sums in the input's dtype across rows, then added in
  double), so the mean, the variance, the running stats and all three gradients round as torch's; kiln summed
  them in double with ops before (TabNet's ghost batch norm, every MLP with BatchNorm1d).
- grid_sample's bilinear and bicubic modes (forward, input and grid gradients) as torch's vectorised CPU kernel
  computes them: (g + 1) * s - 0.5 and the taps' sums as fused multiply-adds where its AVX2 build fuses them,
  reflection by truncated flips, the cubic coefficients' polynomials, and the input gradient scattered tap by tap
  over vectors of 8 (float) or 4 (double) points, grouped as torch walks the grid (the PWC-Net warp, spatial
  transformers). kiln followed the scalar GridSampler.h formulas before.
- float32 2-norms of rows whose length leaves a tail of 4 or more past the 8-lane vectors: torch's tail loop adds
  its first four squares unfused (GCC's 4-lane product), the rest fused; kiln fused them all (WaveGlow's
  weight-normed 1x1 convs start from such norms).
"""
import random

import numpy as np
import pytest
import torch

import kiln


def both(fn, *arrays):
    return fn(torch, *[torch.tensor(a) for a in arrays]), fn(kiln, *[kiln.tensor(a) for a in arrays])


def same_bits(a, b):
    np.testing.assert_array_equal(b.detach().numpy(), a.detach().numpy())


@pytest.mark.parametrize("name, fn", [
    ("t_sum0", lambda T, x: x.t().sum(0)),
    ("t_sum1", lambda T, x: x.t().sum(1)),
    ("slice_inner", lambda T, x: x[:, :40].sum(1)),
    ("slice_outer", lambda T, x: x[:, :40].sum(0)),
    ("step_rows", lambda T, x: x[::2].sum(1)),
    ("step_cols_mean", lambda T, x: x[:, ::3].mean(0)),
    ("t_full", lambda T, x: x.t().sum()),
    ("t_mean_keepdim", lambda T, x: x.t().mean(0, keepdim=True)),
])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_strided_2d_sums_are_torchs_bits(name, fn, dtype):
    x = np.random.RandomState(0).randn(100, 64).astype(dtype)
    same_bits(*both(fn, x))


def test_attention_pool_mean_over_a_permuted_tensor():
    # CLIP's AttentionPool2d: x.flatten(start_dim=2).permute(2, 0, 1), then x.mean(dim=0, keepdim=True)
    x = np.random.RandomState(1).randn(6, 64, 4, 4).astype(np.float32)
    same_bits(*both(lambda T, t: t.flatten(start_dim=2).permute(2, 0, 1).mean(dim=0, keepdim=True), x))


@pytest.mark.parametrize("dims", [(2, 3), (0, 2, 3), (1,), (0,)])
def test_channels_last_sums_are_torchs_bits(dims):
    x = np.random.RandomState(2).randn(4, 16, 5, 5).astype(np.float32)

    def fn(T, t):
        return t.contiguous(memory_format=T.channels_last).sum(dims)
    same_bits(*both(fn, x))


def test_random_strided_reductions_are_torchs_bits():
    """Permuted and sliced views of up to 4 dims, any reduced dims, serial sizes (under torch's GRAIN_SIZE, where
    its threads do not split a reduction)."""
    rnd = random.Random(0)
    rng = np.random.RandomState(0)
    for _ in range(150):
        nd = rnd.randint(1, 4)
        shape = [rnd.choice([1, 2, 3, 5, 8, 9, 16, 33]) for _ in range(nd)]
        x = rng.randn(*shape).astype(rnd.choice([np.float32, np.float64]))
        perm = list(range(nd))
        rnd.shuffle(perm)
        steps = tuple(slice(None, None, rnd.choice([1, 2])) for _ in range(nd))
        dims = sorted(rnd.sample(range(nd), rnd.randint(1, nd)))
        keep = rnd.random() < 0.3
        mean = rnd.random() < 0.3

        def fn(T, t):
            v = t[steps].permute(*perm)
            return v.mean(dims, keepdim=keep) if mean else v.sum(dims, keepdim=keep)
        a, b = both(fn, x)
        np.testing.assert_array_equal(b.numpy(), a.numpy(), err_msg=f"{shape} {perm} {steps} {dims}")


def test_strided_sum_gradients_and_integer_sums_unchanged():
    x = np.random.RandomState(3).randn(7, 9).astype(np.float32)
    for T in (torch, kiln):
        t = T.tensor(x, requires_grad=True)
        t.t().sum(0).pow(2).sum().backward()
        if T is torch:
            expected = t.grad.numpy()
        else:
            np.testing.assert_array_equal(t.grad.numpy(), expected)
    i = np.arange(60).reshape(6, 10)
    same_bits(*both(lambda T, t: t.t().sum(0), i))


@pytest.mark.parametrize("shape", [(32, 8), (32, 7), (16, 3), (100, 5), (32, 7, 1), (3, 20), (2, 1), (64, 1),
                                   (700, 40)])
def test_batch_norm_1d_on_rows_is_torchs_bits(shape):
    rng = np.random.RandomState(sum(shape))
    x = (rng.randn(*shape) * 2 + 1).astype(np.float32)
    gy = rng.randn(*shape).astype(np.float32)
    w = rng.rand(shape[1]).astype(np.float32)
    results = []
    for T in (torch, kiln):
        bn = T.nn.BatchNorm1d(shape[1], momentum=0.3)
        with T.no_grad():
            bn.weight.copy_(T.tensor(w))
        t = T.tensor(x, requires_grad=True)
        y = bn(t)
        y.backward(T.tensor(gy))
        y2 = bn(T.tensor(x))  # a second step moves the running stats again
        results.append([y, y2, bn.running_mean, bn.running_var, t.grad, bn.weight.grad, bn.bias.grad])
    for name, a, b in zip(["y", "y2", "running_mean", "running_var", "dx", "dw", "db"], *results):
        np.testing.assert_array_equal(b.detach().numpy(), a.detach().numpy(), err_msg=name)


def test_batch_norm_1d_float64_and_without_affine():
    rng = np.random.RandomState(5)
    x = rng.randn(24, 6)
    gy = rng.randn(24, 6)
    results = []
    for T in (torch, kiln):
        bn = T.nn.BatchNorm1d(6, affine=False).double()
        t = T.tensor(x, requires_grad=True)
        y = bn(t)
        y.backward(T.tensor(gy))
        results.append([y, bn.running_mean, bn.running_var, t.grad])
    for name, a, b in zip(["y", "running_mean", "running_var", "dx"], *results):
        # float64's input gradient may differ from torch's in its last bit (its vector arithmetic's contraction)
        np.testing.assert_allclose(b.detach().numpy(), a.detach().numpy(), rtol=1e-15, atol=1e-15, err_msg=name)


def test_batch_norm_1d_double_backward_still_works():
    # create_graph takes the op-composed math: a gradient penalty through BatchNorm1d
    rng = np.random.RandomState(6)
    x = rng.randn(16, 5).astype(np.float32)
    out = []
    for T in (torch, kiln):
        bn = T.nn.BatchNorm1d(5)
        t = T.tensor(x, requires_grad=True)
        g, = T.autograd.grad(bn(t).pow(3).sum(), t, create_graph=True)
        g.pow(2).sum().backward()
        out.append((g.detach().numpy(), bn.weight.grad.numpy()))
    np.testing.assert_allclose(out[1][0], out[0][0], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(out[1][1], out[0][1], rtol=1e-4, atol=1e-5)


def test_batch_norm_1d_errors_match_torch():
    for T in (torch, kiln):
        bn = T.nn.BatchNorm1d(4)
        with pytest.raises(ValueError, match="Expected more than 1 value per channel when training"):
            bn(T.zeros(1, 4))
        with pytest.raises(RuntimeError):
            bn(T.zeros(3, 5))


@pytest.mark.parametrize("mode", ["bilinear", "bicubic"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("align_corners", [True, False])
@pytest.mark.parametrize("padding_mode", ["zeros", "border", "reflection"])
@pytest.mark.parametrize("sizes", [(2, 3, 11, 13, 9, 7), (1, 2, 1, 5, 4, 4), (2, 4, 16, 16, 16, 16)])
def test_grid_sample_is_torchs_bits(mode, dtype, align_corners, padding_mode, sizes):
    n, c, h, w, oh, ow = sizes
    rng = np.random.RandomState(h * w + oh)
    x = rng.rand(n, c, h, w).astype(dtype)
    g = (rng.rand(n, oh, ow, 2) * 2.6 - 1.3).astype(dtype)  # some points outside [-1, 1]
    go = rng.randn(n, c, oh, ow).astype(dtype)
    results = []
    for T in (torch, kiln):
        xt, gt = T.tensor(x, requires_grad=True), T.tensor(g, requires_grad=True)
        y = T.nn.functional.grid_sample(xt, gt, mode=mode, padding_mode=padding_mode,
                                        align_corners=align_corners)
        y.backward(T.tensor(go))
        results.append([y, xt.grad, gt.grad])
    for name, a, b in zip(["out", "grad_input", "grad_grid"], *results):
        np.testing.assert_array_equal(b.detach().numpy(), a.detach().numpy(), err_msg=name)


def test_grid_sample_warp_with_a_flow_field_and_nan_grid_points():
    # the optical-flow warp: a meshgrid plus a flow, normalised, sampled with an occlusion mask of ones
    rng = np.random.RandomState(7)
    img = rng.rand(2, 3, 12, 10).astype(np.float32)
    flow = (rng.randn(2, 2, 12, 10) * 2).astype(np.float32)
    out = []
    for T in (torch, kiln):
        yy, xx = T.meshgrid(T.arange(0, 12), T.arange(0, 10))
        grid = T.stack((xx, yy)).float().unsqueeze(0).repeat(2, 1, 1, 1) + T.tensor(flow)
        grid = T.stack((2 * grid[:, 0] / 9 - 1, 2 * grid[:, 1] / 11 - 1), 3)
        warped = T.nn.functional.grid_sample(T.tensor(img), grid, align_corners=True)
        mask = T.nn.functional.grid_sample(T.ones(2, 3, 12, 10), grid, align_corners=True)
        nan_grid = grid.clone()
        nan_grid[0, 0, 0, 0] = float("nan")
        border = T.nn.functional.grid_sample(T.tensor(img), nan_grid, padding_mode="border", align_corners=False)
        out.append([warped, mask, border])
    for a, b in zip(*out):
        np.testing.assert_array_equal(b.numpy(), a.numpy())


@pytest.mark.parametrize("mode", ["bilinear", "bicubic"])
@pytest.mark.parametrize("layout", ["coordinate_planes", "row_slices"])
def test_grid_sample_backward_walks_a_strided_grid_as_torch(mode, layout):
    # torch hands its kernel vectors of points over the flattened output when the grid's (H, W) is contiguous
    # (a (N, 2, H, W) flow permuted to (N, H, W, 2)), row by row otherwise (a slice of a wider grid): the input
    # gradient's additions follow those vectors
    rng = np.random.RandomState(8)
    x = rng.rand(2, 3, 9, 11).astype(np.float32)
    flow = (rng.rand(2, 2, 7, 13) * 2.4 - 1.2).astype(np.float32)
    go = rng.randn(2, 3, 7, 5 if layout == "row_slices" else 13).astype(np.float32)
    results = []
    for T in (torch, kiln):
        xt, ft = T.tensor(x, requires_grad=True), T.tensor(flow, requires_grad=True)
        grid = ft.permute(0, 2, 3, 1)
        if layout == "row_slices":
            grid = grid[:, :, 3:8]
        y = T.nn.functional.grid_sample(xt, grid, mode=mode, align_corners=False)
        y.backward(T.tensor(go))
        results.append([y, xt.grad, ft.grad])
    for name, a, b in zip(["out", "grad_input", "grad_flow"], *results):
        np.testing.assert_array_equal(b.detach().numpy(), a.detach().numpy(), err_msg=name)


@pytest.mark.parametrize("n", [1, 3, 4, 5, 7, 8, 12, 13, 15, 20, 28, 36, 64, 100])
def test_float32_2_norm_rows_are_torchs_bits(n):
    # torch's 2-norm over a last dim: 8-lane multiply-adds, then its tail loop as GCC compiled it (the first four
    # squares unfused, added one at a time, the rest fused); weight_norm's g of a (C, 4, 1) conv is such a row
    rows = np.random.RandomState(n).randn(64, n).astype(np.float32)
    a = torch.tensor(rows).norm(2, 1)
    b = kiln.tensor(rows).norm(2, 1)
    np.testing.assert_array_equal(b.numpy(), a.numpy())
    np.testing.assert_array_equal(kiln.tensor(rows[0]).norm().numpy(), torch.tensor(rows[0]).norm().numpy())


def test_weight_norm_initial_g_of_a_pointwise_conv():
    w = np.random.RandomState(0).randn(8, 4, 1).astype(np.float32)
    np.testing.assert_array_equal(kiln.norm_except_dim(kiln.tensor(w), 2, 0).numpy(),
                                  torch.norm_except_dim(torch.tensor(w), 2, 0).numpy())
