"""linspace, bmm and affine_grid give torch's bits: torch computes linspace in the result's
dtype (one fused multiply-add per element from the nearer end, vectors of 32 bytes as
base + j * step, at::parallel_for's chunks), bmm of small matrices (k * n * m < 400) in its own
loop rather than BLAS, and affine_grid as a per-matrix base grid (range * (n - 1) / n) bmm'd by
theta^T. The spatial transformer tutorial's losses drifted apart from the second step on the
last ulp of its sampling grid."""
import warnings

import numpy as np
import pytest
import torch

import kiln

RNG = np.random.RandomState(1)
CASES = ([(-1, 1, n) for n in range(0, 70)] + [(0, 0.1, 11), (5, 5, 40), (3, -2.5, 17)]
         + [(RNG.uniform(-10, 10), RNG.uniform(-10, 10), int(RNG.randint(2, 300))) for _ in range(100)]
         + [(0, 1, 100000), (-3.3, 7.1, 70001)])  # above torch's grain size: parallel chunks


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_linspace_bits(dtype):
    for a, b, n in CASES:
        want = torch.linspace(a, b, n, dtype=getattr(torch, dtype)).numpy()
        got = kiln.linspace(a, b, n, dtype=getattr(kiln, dtype)).numpy()
        np.testing.assert_array_equal(got, want, err_msg=str((a, b, n)))


@pytest.mark.parametrize("align_corners", [False, True])
@pytest.mark.parametrize("size", [(4, 1, 28, 28), (3, 2, 7, 13), (2, 1, 1, 5), (2, 1, 5, 6, 7)])
def test_affine_grid_and_theta_grad_bits(size, align_corners):
    rng = np.random.RandomState(0)
    rows = len(size) - 2
    eye = np.eye(rows, rows + 1, dtype=np.float32)
    theta = (eye + 0.1 * rng.randn(size[0], rows, rows + 1)).astype(np.float32)
    g = rng.randn(*size[:1], *size[2:], rows).astype(np.float32)
    out = []
    for lib in (torch, kiln):
        t = lib.tensor(theta, requires_grad=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            grid = lib.nn.functional.affine_grid(t, size, align_corners=align_corners)
        grid.backward(lib.tensor(g))
        out.append((grid.detach().numpy(), t.grad.numpy()))
    np.testing.assert_array_equal(out[1][0], out[0][0])
    np.testing.assert_array_equal(out[1][1], out[0][1])


SMALL = [(2, 3, 5, 2), (4, 4, 6, 4), (3, 7, 7, 7), (2, 3, 0, 4)]


@pytest.mark.parametrize("dtype,shape", [(d, s) for d in ("float32", "float64") for s in SMALL + [(2, 10, 10, 4)]]
                         + [("bfloat16", s) for s in SMALL])  # torch 1.13 has no float16 bmm on CPU
def test_bmm_small_and_large_bits(dtype, shape):
    b, n, k, m = shape
    rng = np.random.RandomState(0)
    x, y = rng.randn(b, n, k).astype(np.float32), rng.randn(b, m, k).astype(np.float32)
    out = []
    for lib in (torch, kiln):
        dt = getattr(lib, dtype)
        xt = lib.tensor(x).to(dt)
        yt = lib.tensor(y).to(dt).transpose(1, 2)  # a strided operand too
        out.append(xt.bmm(yt).float().numpy())
    np.testing.assert_array_equal(out[1], out[0])
