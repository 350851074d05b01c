"""Adam, AdamW and the lr schedulers against NumPy implementations of the published rules
(Kingma & Ba; Loshchilov & Hutter; torch's StepLR / CosineAnnealingLR closed forms)."""
import math

import numpy as np
import pytest

import kiln
from kiln.optim import SGD, Adam, AdamW
from kiln.optim.lr_scheduler import CosineAnnealingLR, StepLR

A = np.array([[1.5, -2.0, 0.5], [0.25, 3.0, -1.0]])
TARGET = np.array([[0.0, 1.0, -1.0], [2.0, 0.5, 0.0]])


def numpy_adam(steps, lr, betas, eps, wd, amsgrad, decoupled, maximize=False):
    p = A.copy()
    m, v, vmax = np.zeros_like(p), np.zeros_like(p), np.zeros_like(p)
    for t in range(1, steps + 1):
        g = 2 * (p - TARGET) * np.arange(1, 7).reshape(2, 3)  # d/dp of sum(w * (p - target)^2)
        g = -g if maximize else g
        if wd and decoupled:
            p = p * (1 - lr * wd)
        elif wd:
            g = g + wd * p
        m = betas[0] * m + (1 - betas[0]) * g
        v = betas[1] * v + (1 - betas[1]) * g * g
        vmax = np.maximum(vmax, v)
        denom = np.sqrt(vmax if amsgrad else v) / math.sqrt(1 - betas[1] ** t) + eps
        p = p - lr / (1 - betas[0] ** t) * m / denom
    return p


def kiln_run(opt_class, steps, **options):
    p = kiln.tensor(A, requires_grad=True)
    w = kiln.tensor(np.arange(1, 7).reshape(2, 3).astype(np.float64))
    opt = opt_class([p], **options)
    for _ in range(steps):
        opt.zero_grad()
        loss = (w * (p - kiln.tensor(TARGET)) ** 2).sum()
        loss.backward()
        opt.step()
    return p.detach().numpy(), opt


@pytest.mark.parametrize("options", [
    dict(lr=0.1), dict(lr=0.05, betas=(0.8, 0.99), eps=1e-6), dict(lr=0.1, weight_decay=0.3),
    dict(lr=0.1, amsgrad=True), dict(lr=0.1, maximize=True), dict(lr=0.1, weight_decay=0.3, amsgrad=True)])
@pytest.mark.parametrize("opt_class", [Adam, AdamW])
def test_matches_numpy(opt_class, options):
    got, opt = kiln_run(opt_class, 7, **options)
    full = dict(dict(lr=1e-3, betas=(0.9, 0.999), eps=1e-8, amsgrad=False, maximize=False,
                     weight_decay=1e-2 if opt_class is AdamW else 0), **options)
    want = numpy_adam(7, full["lr"], full["betas"], full["eps"], full["weight_decay"], full["amsgrad"],
                      decoupled=opt_class is AdamW, maximize=full["maximize"])
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    assert float(opt.state_dict()["state"][0]["step"]) == 7


def test_defaults_are_torchs():
    p = kiln.zeros(2, requires_grad=True)
    # torch 2.x's (1.13 lacks fused)
    assert Adam([p]).defaults == dict(lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, amsgrad=False,
                                      maximize=False, foreach=None, capturable=False, differentiable=False,
                                      fused=None)
    assert AdamW([p]).defaults["weight_decay"] == 1e-2


@pytest.mark.parametrize("options,message", [
    (dict(lr=-1), "Invalid learning rate"), (dict(eps=-1e-8), "Invalid epsilon value"),
    (dict(betas=(1.0, 0.9)), "Invalid beta parameter at index 0"),
    (dict(betas=(0.9, -0.1)), "Invalid beta parameter at index 1"),
    (dict(weight_decay=-1), "Invalid weight_decay value")])
def test_invalid_options_raise(options, message):
    with pytest.raises(ValueError, match=message):
        Adam([kiln.zeros(2, requires_grad=True)], **options)


def test_state_dict_round_trip_continues_identically():
    _, opt = kiln_run(Adam, 3, lr=0.1)
    p2 = kiln.tensor(A, requires_grad=True)
    opt2 = Adam([p2], lr=0.1)
    opt2.load_state_dict(opt.state_dict())
    assert float(opt2.state[p2]["step"]) == 3
    np.testing.assert_array_equal(opt2.state[p2]["exp_avg"].numpy(), opt.state[opt.param_groups[0]["params"][0]]
                                  ["exp_avg"].numpy())


def _lrs(scheduler_class, epochs, **options):
    opt = SGD([kiln.zeros(1, requires_grad=True)], lr=0.5)
    sched = scheduler_class(opt, **options)
    lrs = [opt.param_groups[0]["lr"]]
    for _ in range(epochs):
        opt.step()
        sched.step()
        lrs.append(opt.param_groups[0]["lr"])
    assert sched.get_last_lr() == [lrs[-1]]
    return lrs


def test_step_lr_closed_form():
    lrs = _lrs(StepLR, 10, step_size=3, gamma=0.5)
    np.testing.assert_allclose(lrs, [0.5 * 0.5 ** (e // 3) for e in range(11)], rtol=1e-15)


def test_cosine_annealing_closed_form_and_restart():
    T, eta = 4, 0.1
    lrs = _lrs(CosineAnnealingLR, 12, T_max=T, eta_min=eta)
    # torch's recurrence follows the cosine down to eta_min and back up, period 2 T
    want = [eta + (0.5 - eta) * (1 + math.cos(math.pi * e / T)) / 2 for e in range(13)]
    np.testing.assert_allclose(lrs, want, rtol=1e-12, atol=1e-15)


def test_implementation_flags_as_torch():
    # foreach / fused / capturable pick an implementation in torch 2.x: the same update here; the
    # combinations torch 2.x refuses are refused, with its message (1.13's fused is CUDA-only)
    with pytest.raises(RuntimeError, match="`fused` and `foreach` cannot be `True` together"):
        Adam([kiln.zeros(2, requires_grad=True)], foreach=True, fused=True)
    steps = []
    for kw in ({}, dict(foreach=True), dict(fused=True), dict(capturable=True)):
        p = kiln.tensor([1.0, -2.0], requires_grad=True)
        opt = AdamW([p], lr=0.1, **kw)
        for _ in range(3):
            p.grad = kiln.tensor([0.5, 0.25])
            opt.step()
        steps.append(p.detach().numpy())
    for s in steps[1:]:
        np.testing.assert_array_equal(s, steps[0])
    with pytest.raises(NotImplementedError, match="differentiable=True"):
        Adam([kiln.zeros(2, requires_grad=True)], differentiable=True)
