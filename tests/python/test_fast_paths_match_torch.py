"""Paths kiln takes for speed where torch takes the same one, so results and errors are torch's:
adaptive_avg_pool2d to a 1 x 1 output is the mean over the last two dims (torch's composite)."""
import numpy as np
import pytest
import torch

import kiln


@pytest.mark.parametrize("shape", [(8, 16, 13, 11), (3, 7, 7), (4, 4), (2, 3, 1, 1)])
def test_global_adaptive_avg_pool_is_torchs_mean(shape):
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    g = np.random.default_rng(1).standard_normal(shape[:-2] + (1, 1)).astype(np.float32)
    out = []
    for lib in (kiln, torch):
        X = lib.tensor(x, requires_grad=True)
        y = lib.nn.functional.adaptive_avg_pool2d(X, 1)  # a 2-D input too: torch's mean takes it
        y.backward(lib.tensor(g))
        out.append((y.detach().numpy(), X.grad.numpy()))
    np.testing.assert_array_equal(out[0][0], out[1][0])
    np.testing.assert_array_equal(out[0][1], out[1][1])


def test_global_adaptive_avg_pool_of_integers_raises_means_error():
    for lib in (kiln, torch):
        with pytest.raises(RuntimeError, match="could not infer output dtype"):
            lib.nn.functional.adaptive_avg_pool2d(lib.zeros(1, 2, 4, 4, dtype=lib.int64), 1)


def test_other_adaptive_sizes_still_check_the_input():
    for lib in (kiln, torch):
        with pytest.raises(RuntimeError, match="3D or 4D"):
            lib.nn.functional.adaptive_avg_pool2d(lib.zeros(4, 4), 2)
