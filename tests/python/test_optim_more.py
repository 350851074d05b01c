"""Adadelta, Adamax, NAdam, RAdam, Rprop, ASGD and LBFGS against torch's optimizers (the oracle): the
same problem from the same start, parameter trajectories step by step, state_dict keys and a
state_dict round-trip, parameter groups, defaults and argument errors."""
import numpy as np
import pytest

torch = pytest.importorskip("torch")

import kiln  # noqa: E402

CASES = [
    ("Adadelta", dict()), ("Adadelta", dict(lr=0.5, rho=0.8, eps=1e-5, weight_decay=0.1)),
    ("Adadelta", dict(maximize=True)),
    ("Adamax", dict()), ("Adamax", dict(lr=0.05, betas=(0.8, 0.9), weight_decay=0.1)),
    ("Adamax", dict(lr=0.01, maximize=True)),
    ("NAdam", dict()), ("NAdam", dict(lr=0.05, betas=(0.8, 0.95), weight_decay=0.1, momentum_decay=0.01)),
    ("RAdam", dict()), ("RAdam", dict(lr=0.05, betas=(0.5, 0.6), weight_decay=0.1)),
    ("Rprop", dict()), ("Rprop", dict(lr=0.05, etas=(0.3, 1.5), step_sizes=(1e-3, 0.2))),
    ("Rprop", dict(maximize=True)),
    ("ASGD", dict()), ("ASGD", dict(lr=0.05, lambd=0.01, alpha=0.5, t0=3, weight_decay=0.1)),
    ("ASGD", dict(lr=0.02, t0=0, maximize=True)),
]


def _problem(L, dtype):
    torch.manual_seed(0)
    w0, b0, x, y = torch.randn(5, 3), torch.randn(3), torch.randn(8, 5), torch.randn(8, 3)
    dt = getattr(L, dtype)
    w = L.nn.Parameter(L.tensor(w0.numpy(), dtype=dt))
    b = L.nn.Parameter(L.tensor(b0.numpy(), dtype=dt))
    xs, ys = L.tensor(x.numpy(), dtype=dt), L.tensor(y.numpy(), dtype=dt)
    return w, b, lambda: (((xs @ w + b).tanh() - ys) ** 2).mean()


def _trajectory(L, name, kwargs, steps, dtype="float64", groups=False):
    w, b, loss_fn = _problem(L, dtype)
    params = [{"params": [w]}, {"params": [b], "lr": 0.003}] if groups else [w, b]
    opt = getattr(L.optim, name)(params, **kwargs)
    out = []
    for _ in range(steps):
        opt.zero_grad()
        loss = loss_fn()
        loss.backward()
        opt.step()
        out.append((w.detach().numpy().copy(), b.detach().numpy().copy()))
    return out, opt, (w, b, loss_fn)


@pytest.mark.parametrize("name,kwargs", CASES)
def test_trajectory_matches_torch(name, kwargs):
    want, topt, _ = _trajectory(torch, name, kwargs, 8)
    got, kopt, _ = _trajectory(kiln, name, kwargs, 8)
    for t, (g, w) in enumerate(zip(got, want)):
        np.testing.assert_allclose(g[0], w[0], rtol=1e-9, atol=1e-11, err_msg=f"{name} step {t + 1}")
        np.testing.assert_allclose(g[1], w[1], rtol=1e-9, atol=1e-11, err_msg=f"{name} step {t + 1}")
    ks, ts = kopt.state_dict(), topt.state_dict()
    assert sorted(ks["state"][0]) == sorted(ts["state"][0])
    for key, tv in ts["state"][0].items():
        kv = ks["state"][0][key]
        if isinstance(tv, torch.Tensor):
            np.testing.assert_allclose(np.asarray(kv.numpy()), tv.numpy(), rtol=1e-6, err_msg=key)
            assert str(kv.dtype).split(".")[-1] == str(tv.dtype).split(".")[-1], key
        else:
            assert kv == tv, key
    for key, value in ts["param_groups"][0].items():
        assert ks["param_groups"][0][key] == value, key


@pytest.mark.parametrize("name,kwargs", [CASES[1], CASES[4], CASES[7], CASES[9], CASES[11], CASES[14]])
def test_float32_and_param_groups_match_torch(name, kwargs):
    want, _, _ = _trajectory(torch, name, kwargs, 5, dtype="float32", groups=True)
    got, _, _ = _trajectory(kiln, name, kwargs, 5, dtype="float32", groups=True)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g[0], w[0], rtol=2e-5, atol=2e-6)
        np.testing.assert_allclose(g[1], w[1], rtol=2e-5, atol=2e-6)


def _round_trip(L, name, kwargs):
    """3 steps, the state saved and loaded into a new optimizer, 3 more steps; the last parameters."""
    w, b, loss_fn = _problem(L, "float64")
    opt = getattr(L.optim, name)([w, b], **kwargs)
    for _ in range(3):
        opt.zero_grad()
        loss_fn().backward()
        opt.step()
    saved = opt.state_dict()
    opt2 = getattr(L.optim, name)([w, b], **kwargs)
    opt2.load_state_dict(saved)
    for _ in range(3):
        opt2.zero_grad()
        loss_fn().backward()
        opt2.step()
    state = opt2.state_dict()["state"][0]
    return w.detach().numpy().copy(), {k: (str(v.dtype).split(".")[-1] if hasattr(v, "dtype") else v)
                                       for k, v in state.items()}


@pytest.mark.parametrize("name,kwargs", [CASES[1], CASES[4], CASES[7], CASES[9], CASES[11], CASES[14]])
def test_state_dict_round_trip_continues_as_torch(name, kwargs):
    """torch's load_state_dict casts floating state (not the step) to the parameter's dtype: kiln too."""
    kw, kstate = _round_trip(kiln, name, kwargs)
    tw, tstate = _round_trip(torch, name, kwargs)
    np.testing.assert_allclose(kw, tw, rtol=1e-9, atol=1e-11)
    assert kstate == tstate


@pytest.mark.parametrize("name", ["Adadelta", "Adamax", "NAdam", "RAdam", "Rprop", "ASGD", "LBFGS"])
def test_defaults_match_torch(name):
    t = getattr(torch.optim, name)([torch.nn.Parameter(torch.zeros(2))]).defaults
    k = getattr(kiln.optim, name)([kiln.nn.Parameter(kiln.zeros(2))]).defaults
    for key, value in t.items():
        assert k[key] == value, key


@pytest.mark.parametrize("name,kwargs,match", [
    ("Adadelta", dict(lr=-1), "Invalid learning rate"), ("Adadelta", dict(rho=1.5), "Invalid rho value"),
    ("Adadelta", dict(eps=-1), "Invalid epsilon value"), ("Adadelta", dict(weight_decay=-1), "Invalid weight_decay"),
    ("Adamax", dict(betas=(1.0, 0.9)), "Invalid beta parameter at index 0"),
    ("Adamax", dict(betas=(0.9, 1.0)), "Invalid beta parameter at index 1"),
    ("NAdam", dict(momentum_decay=-1), "Invalid momentum_decay value"), ("RAdam", dict(eps=-1), "Invalid epsilon"),
    ("Rprop", dict(etas=(1.5, 1.2)), "Invalid eta values"), ("ASGD", dict(lr=-0.1), "Invalid learning rate"),
])
def test_invalid_options_raise_as_torch(name, kwargs, match):
    for L in (torch, kiln):
        with pytest.raises(ValueError, match=match):
            getattr(L.optim, name)([L.nn.Parameter(L.zeros(2))], **kwargs)


def _lbfgs_run(L, kwargs, steps):
    w, b, loss_fn = _problem(L, "float64")
    opt = L.optim.LBFGS([w, b], **kwargs)
    losses = []

    def closure():
        opt.zero_grad()
        loss = loss_fn()
        loss.backward()
        return loss

    for _ in range(steps):
        losses.append(float(opt.step(closure)))
    return w.detach().numpy().copy(), b.detach().numpy().copy(), losses, opt


@pytest.mark.parametrize("kwargs", [dict(), dict(lr=0.5, max_iter=5, history_size=3),
                                    dict(line_search_fn="strong_wolfe"),
                                    dict(line_search_fn="strong_wolfe", max_iter=7, history_size=4, lr=0.8)])
def test_lbfgs_matches_torch(kwargs):
    tw, tb, tl, topt = _lbfgs_run(torch, kwargs, 3)
    kw, kb, kl, kopt = _lbfgs_run(kiln, kwargs, 3)
    # (dot products summed in another order: differences of a few ulps grow over the iterations)
    np.testing.assert_allclose(kl, tl, rtol=1e-7)
    np.testing.assert_allclose(kw, tw, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(kb, tb, rtol=1e-6, atol=1e-8)
    ts, ks = topt.state_dict()["state"][0], kopt.state_dict()["state"][0]
    assert sorted(ks) == sorted(ts)
    assert ks["func_evals"] == ts["func_evals"] and ks["n_iter"] == ts["n_iter"]


def test_lbfgs_rejects_param_groups_and_needs_a_closure():
    for L in (torch, kiln):
        p, q = L.nn.Parameter(L.zeros(2)), L.nn.Parameter(L.zeros(2))
        with pytest.raises(ValueError, match="doesn't support per-parameter options"):
            L.optim.LBFGS([{"params": [p]}, {"params": [q]}])
        with pytest.raises(TypeError):
            L.optim.LBFGS([p]).step()


def _cyclic_run(L, opt_name, opt_kwargs, sched_kwargs, steps):
    p = L.nn.Parameter(L.zeros(2))
    q = L.nn.Parameter(L.zeros(2))
    opt = getattr(L.optim, opt_name)([{"params": [p]}, {"params": [q]}], **opt_kwargs)
    sched = L.optim.lr_scheduler.CyclicLR(opt, **sched_kwargs)
    out = []
    for _ in range(steps):
        opt.step()
        sched.step()
        g = opt.param_groups
        out.append([(grp["lr"], grp.get("momentum"), grp.get("betas")) for grp in g] + [sched.get_last_lr()])
    return out


@pytest.mark.parametrize("kwargs", [
    dict(base_lr=0.01, max_lr=0.1, step_size_up=4),
    dict(base_lr=0.01, max_lr=0.1, step_size_up=3, step_size_down=5, mode="triangular2"),
    dict(base_lr=[0.01, 0.02], max_lr=[0.1, 0.3], step_size_up=4, mode="exp_range", gamma=0.9),
    dict(base_lr=0.01, max_lr=0.1, step_size_up=2, scale_fn=lambda x: 0.5 ** x, scale_mode="iterations"),
    dict(base_lr=0.01, max_lr=0.1, step_size_up=2, base_momentum=0.7, max_momentum=0.95),
    dict(base_lr=0.01, max_lr=0.1, step_size_up=2, cycle_momentum=False),
])
def test_cyclic_lr_matches_torch(kwargs):
    want = _cyclic_run(torch, "SGD", dict(lr=0.5, momentum=0.9), kwargs, 20)
    got = _cyclic_run(kiln, "SGD", dict(lr=0.5, momentum=0.9), kwargs, 20)
    np.testing.assert_allclose(np.array([[r[0] for r in s[:2]] + s[2] for s in got]),
                               np.array([[r[0] for r in s[:2]] + s[2] for s in want]), rtol=1e-12)
    np.testing.assert_allclose(np.array([[r[1] for r in s[:2]] for s in got], dtype=float),
                               np.array([[r[1] for r in s[:2]] for s in want], dtype=float), rtol=1e-12)


def test_cyclic_lr_errors_and_adam_without_momentum():
    for L in (torch, kiln):
        opt = L.optim.SGD([L.nn.Parameter(L.zeros(1))], lr=0.1, momentum=0.9)
        with pytest.raises(ValueError, match="mode is invalid"):
            L.optim.lr_scheduler.CyclicLR(opt, 0.01, 0.1, mode="bogus")
        with pytest.raises(ValueError, match="expected 1 values for base_lr"):
            L.optim.lr_scheduler.CyclicLR(opt, [0.01, 0.02], 0.1)
        with pytest.raises(TypeError, match="is not an Optimizer"):
            L.optim.lr_scheduler.CyclicLR(object(), 0.01, 0.1)
        rms = L.optim.Adagrad([L.nn.Parameter(L.zeros(1))])
        with pytest.raises(ValueError, match="optimizer must support momentum"):
            L.optim.lr_scheduler.CyclicLR(rms, 0.01, 0.1)
    # Adam with cycle_momentum=False runs in torch 1.13 and kiln alike
    want = _cyclic_run(torch, "Adam", {}, dict(base_lr=0.01, max_lr=0.1, step_size_up=3, cycle_momentum=False), 8)
    got = _cyclic_run(kiln, "Adam", {}, dict(base_lr=0.01, max_lr=0.1, step_size_up=3, cycle_momentum=False), 8)
    np.testing.assert_allclose([s[2] for s in got], [s[2] for s in want], rtol=1e-12)
