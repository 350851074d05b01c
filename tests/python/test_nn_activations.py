"""nn.functional and nn modules of the activations (the ops themselves are in op_db/pointwise.py):
torch's signatures, inplace=True writing into the input, and reprs."""
import math

import numpy as np
import pytest

import kiln
import kiln.nn as nn
import kiln.nn.functional as F

X = np.array([-3.0, -0.5, 0.25, 2.0, 30.0])
ERF = np.vectorize(math.erf)

CASES = [
    (nn.GELU(), lambda x: 0.5 * x * (1 + ERF(x / np.sqrt(2))), "GELU(approximate='none')"),
    (nn.GELU("tanh"), lambda x: 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x ** 3))),
     "GELU(approximate='tanh')"),
    (nn.SiLU(), lambda x: x / (1 + np.exp(-x)), "SiLU()"),
    (nn.LeakyReLU(0.1), lambda x: np.where(x > 0, x, 0.1 * x), "LeakyReLU(negative_slope=0.1)"),
    (nn.Hardtanh(-2.0, 1.0), lambda x: np.clip(x, -2.0, 1.0), "Hardtanh(min_val=-2.0, max_val=1.0)"),
    (nn.Softplus(beta=2, threshold=5), lambda x: np.where(2 * x > 5, x, np.log1p(np.exp(2 * x)) / 2),
     "Softplus(beta=2, threshold=5)"),
]


@pytest.mark.parametrize("module,ref,text", CASES, ids=[c[2] for c in CASES])
def test_module_matches_numpy(module, ref, text):
    x = kiln.tensor(X)
    np.testing.assert_allclose(module(x).numpy(), ref(X), rtol=1e-12, atol=1e-12)
    assert repr(module) == text


@pytest.mark.parametrize("fn,ref", [
    (lambda x: F.silu(x, inplace=True), lambda x: x / (1 + np.exp(-x))),
    (lambda x: F.leaky_relu(x, 0.2, inplace=True), lambda x: np.where(x > 0, x, 0.2 * x)),
    (lambda x: F.hardtanh(x, inplace=True), lambda x: np.clip(x, -1, 1)),
])
def test_inplace_writes_into_the_input_and_keeps_gradients(fn, ref):
    leaf = kiln.tensor(X, requires_grad=True)
    x = leaf * 1.0
    ptr = x.data_ptr()
    y = fn(x)
    assert y is x and x.data_ptr() == ptr
    np.testing.assert_allclose(x.detach().numpy(), ref(X), rtol=1e-12)
    y.sum().backward()
    eps = 1e-6
    numeric = (ref(X + eps) - ref(X - eps)) / (2 * eps)
    np.testing.assert_allclose(leaf.grad.numpy(), numeric, rtol=1e-5, atol=1e-6)


def test_softplus_of_large_inputs_has_finite_gradients():
    """Above the threshold softplus is x; the smooth branch must not overflow into NaN grads."""
    x = kiln.tensor([1000.0, -1000.0], requires_grad=True)
    F.softplus(x).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [1.0, 0.0], atol=1e-12)
