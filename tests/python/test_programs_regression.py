"""Smooth-L1 regression written as a PyTorch program (tests/python/programs/smooth_l1_regression.py:
an MLP with BatchNorm1d/Dropout and a box-regression head, TensorDataset + shuffling DataLoader,
SGD (Nesterov) / Adam / AdamW, StepLR / CosineAnnealingLR / OneCycleLR), run under kiln and under
Debian's torch 1.13 from the same initial weights: every step's loss must agree. Also the learning
rate schedules alone and the smooth-L1/Huber losses against torch."""
import math
import os
import sys

import numpy as np
import pytest
import torch

import kiln

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "programs"))
import smooth_l1_regression as prog  # noqa: E402

CONFIGS = [
    dict(kind="mlp", optimizer="sgd", scheduler="step", loss="smooth_l1", beta=0.5),
    dict(kind="box", optimizer="adam", scheduler="cosine", loss="huber", beta=1.0),
    dict(kind="mlp", optimizer="adamw", scheduler="onecycle", loss="fn", beta=0.1),
    dict(kind="box", optimizer="sgd", scheduler="onecycle", loss="smooth_l1", beta=1.0 / 9),
]


@pytest.mark.parametrize("cfg", CONFIGS, ids=lambda c: "-".join(str(v) for v in c.values()))
def test_step_losses_match_torch(cfg):
    kw = dict(epochs=3, n=256, batch_size=32, dropout=0.0, **cfg)
    ref = prog.run(torch, **kw)
    got = prog.run(kiln, init_state=ref["initial"], **kw)
    assert len(got["steps"]) == len(ref["steps"]) == 3 * math.ceil(0.8 * 256 / 32)
    # the first steps tightly; later ones drift by float32 rounding only
    np.testing.assert_allclose(got["steps"][:8], ref["steps"][:8], rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(got["steps"], ref["steps"], rtol=2e-3, atol=1e-5)
    np.testing.assert_allclose(got["eval"], ref["eval"], rtol=2e-3, atol=1e-5)
    assert np.mean(ref["steps"][-4:]) < np.mean(ref["steps"][:4])  # it learns


def test_with_dropout_same_seed_matches_torch():
    # Same seed: same data, same initial weights, same shuffles and dropout masks as torch.
    kw = dict(epochs=2, n=256, batch_size=32, dropout=0.2, kind="mlp", optimizer="sgd", scheduler="step")
    ref = prog.run(torch, **kw)
    got = prog.run(kiln, **kw)
    for k, v in ref["initial"].items():
        np.testing.assert_array_equal(got["initial"][k], v, err_msg=k)
    np.testing.assert_allclose(got["steps"], ref["steps"], rtol=2e-3, atol=1e-5)


def _lrs(m, make, steps=12, opt="sgd", per_step_metric=None):
    p = m.nn.Parameter(m.zeros(2))
    q = m.nn.Parameter(m.zeros(1))
    groups = [{"params": [p]}, {"params": [q], "lr": 0.5}]
    o = m.optim.SGD(groups, lr=0.1, momentum=0.9) if opt == "sgd" else m.optim.Adam(groups, lr=0.1)
    s = make(m, o)
    out = []
    for i in range(steps):
        o.step()
        if per_step_metric is not None:
            s.step(per_step_metric[i])
        else:
            s.step()
        out.append([g["lr"] for g in o.param_groups] + [g.get("momentum", g.get("betas", (None,))[0])
                                                           for g in o.param_groups])
    return out


SCHEDULERS = {
    "StepLR": lambda m, o: m.optim.lr_scheduler.StepLR(o, step_size=3, gamma=0.5),
    "MultiStepLR": lambda m, o: m.optim.lr_scheduler.MultiStepLR(o, milestones=[2, 5, 5, 9], gamma=0.3),
    "ExponentialLR": lambda m, o: m.optim.lr_scheduler.ExponentialLR(o, gamma=0.9),
    "LambdaLR": lambda m, o: m.optim.lr_scheduler.LambdaLR(o, lr_lambda=lambda e: 0.95 ** e),
    "LambdaLR-list": lambda m, o: m.optim.lr_scheduler.LambdaLR(o, [lambda e: 1 / (e + 1), lambda e: 0.9 ** e]),
    "MultiplicativeLR": lambda m, o: m.optim.lr_scheduler.MultiplicativeLR(o, lr_lambda=lambda e: 0.8),
    "LinearLR": lambda m, o: m.optim.lr_scheduler.LinearLR(o, start_factor=0.25, total_iters=6),
    "CosineAnnealingLR": lambda m, o: m.optim.lr_scheduler.CosineAnnealingLR(o, T_max=5, eta_min=0.01),
    "OneCycleLR": lambda m, o: m.optim.lr_scheduler.OneCycleLR(o, max_lr=[1.0, 0.3], total_steps=12),
    "OneCycleLR-linear-3phase": lambda m, o: m.optim.lr_scheduler.OneCycleLR(
        o, max_lr=0.2, epochs=3, steps_per_epoch=4, anneal_strategy="linear", three_phase=True, pct_start=0.25),
}


@pytest.mark.parametrize("name", sorted(SCHEDULERS))
@pytest.mark.parametrize("opt", ["sgd", "adam"])
def test_scheduler_lrs_match_torch(name, opt):
    steps = 12 if name.startswith("OneCycle") else 14
    ref = _lrs(torch, SCHEDULERS[name], steps, opt)
    got = _lrs(kiln, SCHEDULERS[name], steps, opt)
    np.testing.assert_allclose(np.array(got, dtype=float), np.array(ref, dtype=float), rtol=1e-12, atol=1e-15)


def test_reduce_lr_on_plateau_matches_torch():
    metrics = [1.0, 0.9, 0.95, 0.95, 0.95, 0.95, 0.8, 0.85, 0.85, 0.85, 0.85, 0.85, 0.85, 0.85]
    make = lambda m, o: m.optim.lr_scheduler.ReduceLROnPlateau(o, patience=2, factor=0.5, cooldown=1,  # noqa: E731
                                                               min_lr=[0.0, 0.2])
    ref = _lrs(torch, make, len(metrics), per_step_metric=metrics)
    got = _lrs(kiln, make, len(metrics), per_step_metric=metrics)
    assert got == ref
    make_max = lambda m, o: m.optim.lr_scheduler.ReduceLROnPlateau(o, mode="max", threshold_mode="abs",  # noqa: E731
                                                                   threshold=0.01, patience=1)
    assert _lrs(kiln, make_max, len(metrics), per_step_metric=metrics) == \
        _lrs(torch, make_max, len(metrics), per_step_metric=metrics)


@pytest.mark.parametrize("bad", [
    lambda m, o: m.optim.lr_scheduler.OneCycleLR(o, max_lr=0.1),
    lambda m, o: m.optim.lr_scheduler.OneCycleLR(o, max_lr=0.1, total_steps=0),
    lambda m, o: m.optim.lr_scheduler.OneCycleLR(o, max_lr=0.1, total_steps=5, pct_start=1),
    lambda m, o: m.optim.lr_scheduler.OneCycleLR(o, max_lr=0.1, total_steps=5, anneal_strategy="exp"),
    lambda m, o: m.optim.lr_scheduler.OneCycleLR(o, max_lr=[0.1, 0.2, 0.3], total_steps=5),
    lambda m, o: m.optim.lr_scheduler.LinearLR(o, start_factor=-0.1),
    lambda m, o: m.optim.lr_scheduler.ReduceLROnPlateau(o, factor=1.0),
    lambda m, o: m.optim.lr_scheduler.ReduceLROnPlateau(o, mode="up"),
    lambda m, o: m.optim.lr_scheduler.LambdaLR(o, [lambda e: 1.0] * 3),
])
def test_scheduler_errors_match_torch(bad):
    def err(m):
        p, q = m.nn.Parameter(m.zeros(1)), m.nn.Parameter(m.zeros(1))
        o = m.optim.SGD([{"params": [p]}, {"params": [q]}], lr=0.1, momentum=0.9)
        with pytest.raises(Exception) as e:
            bad(m, o)
        return e.type
    assert err(kiln) is err(torch) is ValueError


def test_onecycle_past_total_steps_raises_like_torch():
    for m in (torch, kiln):
        o = m.optim.SGD([m.nn.Parameter(m.zeros(1))], lr=0.1, momentum=0.9)
        s = m.optim.lr_scheduler.OneCycleLR(o, max_lr=0.1, total_steps=3)
        for _ in range(3):
            s.step()
        with pytest.raises(ValueError, match="Tried to step 5 times. The specified number of total steps is 3"):
            s.step()


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("beta", [1.0, 0.5, 1.0 / 9, 0.0])
def test_smooth_l1_and_huber_match_torch(beta, reduction):
    rng = np.random.default_rng(3)
    x = (rng.standard_normal((16, 4)) * 2).astype(np.float32)
    y = rng.standard_normal((16, 4)).astype(np.float32)
    if beta > 0:
        # zero difference (the kink). Not with beta=0: torch 1.13's smooth_l1_loss then gives the
        # gradient -1 to both input and target there (l1_loss alone gives 0, as kiln does).
        x[0, :2] = y[0, :2]
    res = {}
    for m in (torch, kiln):
        a = m.tensor(x, requires_grad=True)
        b = m.tensor(y, requires_grad=True)
        l1 = m.nn.functional.smooth_l1_loss(a, b, reduction=reduction, beta=beta)
        l2 = m.nn.SmoothL1Loss(reduction=reduction, beta=beta)(a, b)
        hub = m.nn.HuberLoss(reduction=reduction, delta=max(beta, 0.1))(a, b)
        (l1.sum() + 2 * l2.sum() + 3 * hub.sum()).backward()
        res[m.__name__] = [t.detach().numpy() for t in (l1, l2, hub, a.grad, b.grad)]
    for k, t in zip(res["kiln"], res["torch"]):
        np.testing.assert_allclose(k, t, rtol=1e-5, atol=1e-6)
