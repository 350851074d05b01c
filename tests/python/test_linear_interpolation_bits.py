"""Linear interpolation (F.interpolate 'linear', 'bilinear', 'trilinear') against torch 1.13 bit for bit:
the taps' source positions in double from the float scale, as torch's (its 0.5 is a double), and on CPUs
with FMA the two-tap sums and the backward's accumulations fused as torch's FMA-compiled kernels fuse
them (runtime/kernels/cpu/resample_taps.h); the backward adds in torch's order, not separably."""
import numpy as np
import pytest
import torch

import kiln

CASES = [
    ((2, 3, 5, 7), dict(size=(9, 13), align_corners=False)),
    ((2, 4, 33, 17), dict(size=(64, 40), align_corners=False)),
    ((1, 2, 16, 16), dict(scale_factor=0.5, align_corners=False)),
    ((2, 3, 8, 6), dict(scale_factor=2, align_corners=False)),
    ((4, 8, 2, 2), dict(scale_factor=2, align_corners=True)),
    ((2, 3, 5, 7), dict(size=(9, 13), align_corners=True)),
]


def shaped(mode, x, kw):
    kw = dict(kw)
    if mode == "linear":
        x = x[:, :, 0].copy()
        if "size" in kw:
            kw["size"] = kw["size"][1]
    if mode == "trilinear":
        x = np.stack([x, 2 * x, -x], 2)
        if "size" in kw:
            kw["size"] = (5,) + tuple(kw["size"])
    return x, kw


def both(mode, shape, kw, threads, backward):
    x, kw = shaped(mode, np.random.default_rng(sum(shape)).standard_normal(shape).astype(np.float32), kw)
    old = torch.get_num_threads(), kiln.get_num_threads()
    torch.set_num_threads(threads)
    kiln.set_num_threads(threads)
    try:
        out = []
        for lib in (torch, kiln):
            X = lib.from_numpy(x.copy()).requires_grad_(backward)
            y = lib.nn.functional.interpolate(X, mode=mode, **kw)
            if not backward:
                out.append(y.detach().numpy())
                continue
            g = np.random.default_rng(7).standard_normal(tuple(y.shape)).astype(np.float32)
            y.backward(lib.from_numpy(g))
            out.append(X.grad.numpy())
        return out
    finally:
        torch.set_num_threads(old[0])
        kiln.set_num_threads(old[1])


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("mode", ["linear", "bilinear", "trilinear"])
@pytest.mark.parametrize("shape,kw", CASES)
def test_forward_is_torchs_bits(mode, shape, kw, threads):
    t, k = both(mode, shape, kw, threads, backward=False)
    assert np.array_equal(t, k), np.abs(t - k).max()


@pytest.mark.parametrize("mode", ["linear", "bilinear", "trilinear"])
@pytest.mark.parametrize("shape,kw", CASES)
def test_backward(mode, shape, kw):
    t, k = both(mode, shape, kw, 1, backward=True)
    assert np.array_equal(t, k), np.abs(t - k).max()
