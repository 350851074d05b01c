"""group_norm's weight and bias gradients against torch 1.13 bit for bit (float32 and float64, one and two
threads): torch's ComputeInternalGradients / GammaBackward / BetaBackward order (group_norm_ops.cc,
torch_affine_grads). The input gradient stays within float tolerance of torch's."""
import numpy as np
import pytest
import torch

import kiln


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape,groups", [((4, 16, 12, 12), 4), ((2, 32, 7, 5), 8), ((3, 6, 33), 3),
                                          ((8, 64, 4, 4), 32), ((2, 8, 3), 1)])
def test_weight_and_bias_gradients(shape, groups, dtype, threads):
    rng = np.random.default_rng(sum(shape))
    x = rng.standard_normal(shape).astype(dtype)
    w = rng.standard_normal(shape[1]).astype(dtype)
    b = rng.standard_normal(shape[1]).astype(dtype)
    g = np.linspace(-1, 1, x.size).astype(dtype).reshape(shape)
    out = []
    for lib in (torch, kiln):
        old = lib.get_num_threads()
        lib.set_num_threads(threads)
        try:
            X, W, B = (lib.from_numpy(a.copy()).requires_grad_() for a in (x, w, b))
            lib.nn.functional.group_norm(X, groups, W, B).backward(lib.from_numpy(g))
            out.append((X.grad.numpy(), W.grad.numpy(), B.grad.numpy()))
        finally:
            lib.set_num_threads(old)
    (gx_t, gw_t, gb_t), (gx_k, gw_k, gb_k) = out
    assert np.array_equal(gw_t, gw_k), np.abs(gw_t - gw_k).max()
    assert np.array_equal(gb_t, gb_k), np.abs(gb_t - gb_k).max()
    np.testing.assert_allclose(gx_k, gx_t, rtol=1e-4, atol=1e-5 if dtype == np.float32 else 1e-12)
