"""avg_pool2d and adaptive_avg_pool2d/3d against torch 1.13 bit for bit, forward and backward: each
window summed in order in the input's type (torch's cpu_avg_pool / cpu_adaptive_avg_pool, where kiln
had summed in double), divided by the divisor, and the adaptive ones by kh, then kw (then kd first in
3-D), as torch divides."""
import numpy as np
import pytest
import torch

import kiln


def both(fn_name, shape, args, kwargs, dtype=np.float32):
    x = np.random.default_rng(sum(shape)).standard_normal(shape).astype(dtype)
    out = []
    for lib in (torch, kiln):
        X = lib.from_numpy(x.copy()).requires_grad_()
        y = getattr(lib.nn.functional, fn_name)(X, *args, **kwargs)
        y.backward(lib.from_numpy(np.linspace(-1, 1, y.numel()).astype(dtype).reshape(tuple(y.shape))))
        out.append((y.detach().numpy(), X.grad.numpy()))
    return out


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("k,s,p,cip,ceil", [(2, 2, 0, True, False), (3, 2, 1, True, False), (3, 1, 1, False, False),
                                            (3, 2, 1, False, True), (5, 3, 2, True, True)])
def test_avg_pool2d(k, s, p, cip, ceil, dtype):
    (yt, gt), (yk, gk) = both("avg_pool2d", (4, 6, 13, 11), (k, s, p), dict(count_include_pad=cip, ceil_mode=ceil),
                              dtype)
    assert np.array_equal(yt, yk) and np.array_equal(gt, gk)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("out", [(5, 5), (3, 7), (12, 12), (1, 1), (4, 1)])
def test_adaptive_avg_pool2d(out, dtype):
    (yt, gt), (yk, gk) = both("adaptive_avg_pool2d", (4, 6, 12, 13), (out,), {}, dtype)
    assert np.array_equal(yt, yk) and np.array_equal(gt, gk)


@pytest.mark.parametrize("out", [(2, 5, 5), (3, 3, 7), (1, 1, 1)])
def test_adaptive_avg_pool3d(out):
    (yt, gt), (yk, gk) = both("adaptive_avg_pool3d", (2, 3, 5, 12, 13), (out,), {})
    assert np.array_equal(yt, yk) and np.array_equal(gt, gk)
