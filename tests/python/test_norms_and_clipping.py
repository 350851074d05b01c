"""kiln.norm's Python forms (p='fro', dim=None, keepdim), its gradient at zero, and
nn.utils.clip_grad_norm_ / clip_grad_value_, against NumPy."""
import math

import numpy as np
import pytest

import kiln
import kiln.nn as nn


def test_norm_python_forms_match_numpy():
    a = np.random.default_rng(0).normal(size=(3, 4))
    x = kiln.tensor(a)
    assert math.isclose(kiln.norm(x).item(), np.linalg.norm(a), rel_tol=1e-12)          # 'fro', all dims
    assert math.isclose(x.norm(p=1).item(), np.abs(a).sum(), rel_tol=1e-12)
    np.testing.assert_allclose(x.norm(dim=1).numpy(), np.linalg.norm(a, axis=1), rtol=1e-12)
    np.testing.assert_allclose(kiln.norm(x, float("inf"), dim=0).numpy(), np.abs(a).max(axis=0), rtol=1e-12)
    assert kiln.norm(x, keepdim=True).shape == (1, 1)
    assert x.norm(dim=(0, 1), keepdim=True).shape == (1, 1)


def test_norm_gradient_at_zero_is_zero_as_torch():
    x = kiln.zeros(3, dtype=kiln.float64, requires_grad=True)
    x.norm().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [0.0, 0.0, 0.0])
    y = kiln.tensor([3.0, 4.0], dtype=kiln.float64, requires_grad=True)
    y.norm().backward()
    np.testing.assert_allclose(y.grad.numpy(), [0.6, 0.8])


def _model_with_grads(seed):
    kiln.manual_seed(seed)
    m = nn.Linear(4, 3)
    m(kiln.randn(5, 4)).pow(2).sum().backward()
    return m


def test_clip_grad_norm_scales_to_max_norm_and_returns_the_old_norm():
    m = _model_with_grads(0)
    grads = [p.grad.numpy().copy() for p in m.parameters()]
    total = math.sqrt(sum((g ** 2).sum() for g in grads))
    returned = nn.utils.clip_grad_norm_(m.parameters(), max_norm=0.5)
    assert math.isclose(returned.item(), total, rel_tol=1e-5)
    scale = 0.5 / (total + 1e-6)
    for p, g in zip(m.parameters(), grads):
        np.testing.assert_allclose(p.grad.numpy(), g * scale, rtol=1e-5)
    # Already small enough: unchanged.
    before = [p.grad.numpy().copy() for p in m.parameters()]
    nn.utils.clip_grad_norm_(m.parameters(), max_norm=100.0)
    for p, g in zip(m.parameters(), before):
        np.testing.assert_allclose(p.grad.numpy(), g, rtol=1e-6)


def test_clip_grad_norm_inf_and_nonfinite():
    m = _model_with_grads(1)
    biggest = max(np.abs(p.grad.numpy()).max() for p in m.parameters())
    assert math.isclose(nn.utils.clip_grad_norm_(m.parameters(), 1e9, norm_type="inf").item(), biggest, rel_tol=1e-6)
    with kiln.no_grad():
        m.weight.grad.fill_(float("nan"))
    with pytest.raises(RuntimeError, match="non-finite"):
        nn.utils.clip_grad_norm_(m.parameters(), 1.0, error_if_nonfinite=True)


def test_clip_grad_value():
    m = _model_with_grads(2)
    grads = [p.grad.numpy().copy() for p in m.parameters()]
    nn.utils.clip_grad_value_(m.parameters(), 0.1)
    for p, g in zip(m.parameters(), grads):
        np.testing.assert_allclose(p.grad.numpy(), np.clip(g, -0.1, 0.1), rtol=1e-6)
