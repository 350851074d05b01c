"""sum and mean over dims on both sides of the kept ones ((N, C, H, W) over 0, 2, 3: a bias gradient,
batch statistics) in torch 1.13's order: a zero output plus each contiguous line's cascade sum in turn
(cascade_sum's 2-D loops), and reduced size-1 dims ignored as torch's iterator drops them."""
import numpy as np
import pytest
import torch

import kiln

CASES = [((2, 8, 9, 9), (0, 2, 3)), ((4, 3, 16, 16), (0, 2, 3)), ((16, 4, 5), (0, 2)), ((3, 5, 7), (0, 2)),
         ((1, 4, 8, 8), (0, 2, 3)), ((1, 4, 64), (0, 2)), ((2, 1, 8, 9), (0, 2, 3)), ((64, 32, 28, 28), (0, 2, 3)),
         ((1, 64, 1, 5000), (0, 1, 3)), ((3, 1, 4), (0, 1))]


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape,dims", CASES)
def test_sum_and_mean_are_torchs_bits(shape, dims, dtype, threads):
    x = np.random.default_rng(len(shape) + sum(shape)).standard_normal(shape).astype(dtype)
    old = torch.get_num_threads(), kiln.get_num_threads()
    torch.set_num_threads(threads)
    kiln.set_num_threads(threads)
    try:
        for f in ("sum", "mean"):
            a = getattr(torch.from_numpy(x), f)(dims).numpy()
            b = getattr(kiln.from_numpy(x), f)(dims).numpy()
            assert np.array_equal(a, b), (f, np.abs(a - b).max())
    finally:
        torch.set_num_threads(old[0])
        kiln.set_num_threads(old[1])


def test_a_convolutions_bias_gradient_on_the_native_path():
    # torch computes (1, 3, 8, 8) with a 3x3 kernel natively on one thread: its bias gradient is this sum
    g = np.linspace(-1, 1, 256, dtype=np.float32).reshape(1, 4, 8, 8)
    grads = []
    for lib in (torch, kiln):
        old = lib.get_num_threads()
        lib.set_num_threads(1)
        b = lib.zeros(4, requires_grad=True)
        lib.nn.functional.conv2d(lib.zeros(1, 3, 8, 8), lib.zeros(4, 3, 3, 3), b, padding=1).backward(lib.from_numpy(g))
        lib.set_num_threads(old)
        grads.append(b.grad.numpy())
    assert np.array_equal(*grads)
