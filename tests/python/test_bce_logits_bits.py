"""binary_cross_entropy_with_logits computes torch's operations in torch's order (m = max(-x, 0),
m + log(exp(-m) + exp(-x - m)), weighted by 1 + (pos_weight - 1) t): torch's float32 bits, with and
without weight and pos_weight, for every reduction, at +-inf, NaN and signed zeros."""
import numpy as np
import pytest
import torch

import kiln


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
@pytest.mark.parametrize("extra", [(), ("weight",), ("pos_weight",), ("weight", "pos_weight")])
def test_bce_with_logits_is_torchs_float32(reduction, extra):
    rng = np.random.default_rng(1)
    x = (rng.standard_normal((64, 33)) * 10).astype(np.float32)
    x[0, :5] = [np.inf, -np.inf, np.nan, 0.0, -0.0]
    t = rng.uniform(0, 1, (64, 33)).astype(np.float32)
    params = {"weight": rng.uniform(0, 2, 33).astype(np.float32), "pos_weight": rng.uniform(0, 3, 33).astype(np.float32)}
    got, want = (lib.nn.functional.binary_cross_entropy_with_logits(
        lib.from_numpy(x), lib.from_numpy(t), reduction=reduction, **{n: lib.from_numpy(params[n]) for n in extra}).numpy()
        for lib in (kiln, torch))
    np.testing.assert_array_equal(got, want)


def test_bce_with_logits_gradient_is_torchs():
    rng = np.random.default_rng(2)
    x = (rng.standard_normal((8, 5)) * 4).astype(np.float64)
    t = rng.uniform(0, 1, (8, 5))
    pw = rng.uniform(0, 3, 5)
    grads = []
    for lib in (kiln, torch):
        X = lib.tensor(x, requires_grad=True)
        lib.nn.functional.binary_cross_entropy_with_logits(X, lib.tensor(t), pos_weight=lib.tensor(pw)).backward()
        grads.append(X.grad.numpy())
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-12, atol=1e-15)
