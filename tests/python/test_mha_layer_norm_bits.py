"""MultiheadAttention and layer_norm give torch 1.13's bits. MHA computes torch 1.13's math for
need_weights=False too (q / sqrt(head_dim), not q * sqrt(1 / head_dim), and no fused attention
kernel); layer_norm's forward takes torch's RowwiseMoments (Welford over 8-lane vectors, chunks of
16 merged by a cascade) and its fused (x * rstd - rstd * mean) * w + b. The transformer tutorial's
activations were an ulp or two apart from the first attention layer on."""
import warnings

import numpy as np
import pytest
import torch

import kiln


@pytest.mark.parametrize("need_weights", [False, True])
@pytest.mark.parametrize("embed,heads", [(32, 2), (30, 3), (100, 2)])  # head_dim 16, 10, 50
def test_mha_bits(embed, heads, need_weights):
    rng = np.random.RandomState(0)
    x = rng.randn(12, 3, embed).astype(np.float32)
    mask = np.triu(np.full((12, 12), -np.inf, np.float32), 1)
    out = []
    for lib in (torch, kiln):
        lib.manual_seed(0)
        m = lib.nn.MultiheadAttention(embed, heads, dropout=0.1)
        X = lib.tensor(x, requires_grad=True)
        y, w = m(X, X, X, attn_mask=lib.tensor(mask), need_weights=need_weights)
        y.sum().backward()
        out.append((y.detach().numpy(), None if w is None else w.detach().numpy(), X.grad.numpy()))
    np.testing.assert_array_equal(out[1][0], out[0][0])
    if need_weights:
        np.testing.assert_array_equal(out[1][1], out[0][1])
    np.testing.assert_array_equal(out[1][2], out[0][2])  # the input's gradient (softmax backward: torch's order)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("affine", ["weight and bias", "weight", "bias", "neither"])
def test_layer_norm_forward_bits(dtype, affine):
    """Each case of a missing weight (1) or bias (0) has its own loop in kiln."""
    rng = np.random.RandomState(3)
    for n in list(range(1, 70)) + [200, 513, 1000, 4099]:
        x = rng.randn(3, n) * rng.uniform(0.1, 10) + rng.uniform(-50, 50)
        w = rng.randn(n) if "weight" in affine else None
        b = rng.randn(n) if "bias" in affine else None
        outs = []
        for lib in (torch, kiln):
            d = getattr(lib, dtype)
            t = (lambda a: None if a is None else lib.tensor(a, dtype=d))
            outs.append([o.numpy() for o in lib.native_layer_norm(t(x), [n], t(w), t(b), 1e-5)])
        for got, want in zip(outs[1], outs[0]):
            np.testing.assert_array_equal(got, want, err_msg=str(n))


def test_layer_norm_module_3d_bits():
    rng = np.random.RandomState(0)
    x = (rng.randn(16, 8, 32) * 3 + 1).astype(np.float32)
    out = []
    for lib in (torch, kiln):
        lib.manual_seed(0)
        m = lib.nn.LayerNorm(32)
        with torch.no_grad(), kiln.no_grad():
            m.weight.uniform_(0.5, 1.5)
            m.bias.uniform_(-1, 1)
        out.append(m(lib.tensor(x)).detach().numpy())
    np.testing.assert_array_equal(out[1], out[0])
