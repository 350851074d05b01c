"""kiln.optim.swa_utils against torch.optim.swa_utils (torch 1.13): AveragedModel's averages (equal
weights, a custom avg_fn, buffers averaged), SWALR's learning rates, update_bn's statistics; and
torch 2.x's additions (multi_avg_fn with get_ema_multi_avg_fn, buffers following the source model)
against hand-computed values."""
import numpy as np
import pytest
import torch

import kiln


def _model(lib):
    lib.manual_seed(0)
    nn = lib.nn
    return nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4), nn.ReLU(), nn.Linear(4, 2))


def _copy(src, dst):
    dst.load_state_dict({k: kiln.from_numpy(v.detach().numpy().copy()) for k, v in src.state_dict().items()})


def _train_and_average(lib, make_avg, steps=4):
    m = _model(lib)
    if lib is kiln:
        _copy(_model(torch), m)
    avg = make_avg(lib, m)
    opt = lib.optim.SGD(m.parameters(), lr=0.1)
    x = lib.tensor(np.random.default_rng(1).standard_normal((8, 3)).astype(np.float32))
    for _ in range(steps):
        opt.zero_grad()
        m(x).pow(2).mean().backward()
        opt.step()
        avg.update_parameters(m)
    return avg


@pytest.mark.parametrize("kind", ["equal", "custom_fn", "buffers"])
def test_averaged_model_matches_torch(kind):
    def make(lib, m):
        su = lib.optim.swa_utils
        if kind == "equal":
            return su.AveragedModel(m)
        if kind == "custom_fn":
            return su.AveragedModel(m, avg_fn=lambda a, c, n: 0.25 * a + 0.75 * c)
        return su.AveragedModel(m, use_buffers=True)
    t, k = _train_and_average(torch, make), _train_and_average(kiln, make)
    assert int(k.n_averaged) == int(t.n_averaged) == 4
    names = [n for n, _ in t.named_parameters()] + (["module.1.running_mean", "module.1.running_var"]
                                                     if kind == "buffers" else [])
    ts, ks = t.state_dict(), k.state_dict()
    for n in names:
        np.testing.assert_allclose(ks[n].numpy(), ts[n].numpy(), rtol=1e-5, atol=1e-7, err_msg=n)


def test_torch2_additions():
    m = _model(kiln)
    ema = kiln.optim.swa_utils.AveragedModel(m, multi_avg_fn=kiln.optim.swa_utils.get_ema_multi_avg_fn(0.9))
    w0 = m[0].weight.detach().numpy().copy()
    ema.update_parameters(m)  # the first update copies
    with kiln.no_grad():
        m[0].weight.add_(1.0)
        m[1].running_mean.fill_(3.0)
    ema.update_parameters(m)
    np.testing.assert_allclose(ema.module[0].weight.detach().numpy(), 0.9 * w0 + 0.1 * (w0 + 1), rtol=1e-6)
    # buffers not averaged follow the source model (torch 2.x)
    np.testing.assert_array_equal(ema.module[1].running_mean.numpy(), np.full(4, 3.0, np.float32))


@pytest.mark.parametrize("strategy,epochs", [("cos", 5), ("linear", 3), ("cos", 0)])
def test_swalr_matches_torch(strategy, epochs):
    lrs = []
    for lib in (torch, kiln):
        opt = lib.optim.SGD([lib.zeros(2, requires_grad=True)], lr=1.0)
        sched = lib.optim.swa_utils.SWALR(opt, swa_lr=0.05, anneal_epochs=epochs, anneal_strategy=strategy)
        got = []
        for _ in range(8):
            opt.step()
            sched.step()
            got.append(opt.param_groups[0]["lr"])
        lrs.append(got)
    np.testing.assert_allclose(lrs[1], lrs[0], rtol=1e-12)
    for lib in (torch, kiln):
        opt = lib.optim.SGD([lib.zeros(2, requires_grad=True)], lr=1.0)
        with pytest.raises(ValueError, match="anneal_strategy must by one of"):
            lib.optim.swa_utils.SWALR(opt, 0.1, anneal_strategy="exp")


def test_update_bn_matches_torch():
    stats = []
    data = np.random.default_rng(2).standard_normal((12, 3)).astype(np.float32)
    for lib in (torch, kiln):
        m = _model(lib)
        if lib is kiln:
            _copy(_model(torch), m)
        m.eval()
        loader = lib.utils.data.DataLoader(lib.utils.data.TensorDataset(lib.tensor(data)), batch_size=4)
        lib.optim.swa_utils.update_bn(loader, m)
        assert not m.training and m[1].momentum == 0.1
        stats.append([m[1].running_mean.numpy().copy(), m[1].running_var.numpy().copy()])
    for a, b in zip(stats[1], stats[0]):
        np.testing.assert_allclose(a, b, rtol=1e-5)
