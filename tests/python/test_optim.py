"""kiln.optim: the Optimizer base (groups, state, zero_grad, state_dict) and SGD, whose
trajectories are checked against values computed by hand and against a NumPy loop."""
import numpy as np
import pytest

import kiln
from kiln import nn, optim

F64 = kiln.float64


def param(values):
    return nn.Parameter(kiln.tensor(np.asarray(values, dtype=np.float64)))


def run_quadratic(opt, p, steps):
    """Minimises 0.5 * p^2 (gradient p) and returns p after each step."""
    out = []
    for _ in range(steps):
        opt.zero_grad()
        (p * p * 0.5).sum().backward()
        opt.step()
        out.append(p.detach().numpy().copy())
    return np.array(out)


def run_constant_grad(opt, p, grad, steps):
    out = []
    for _ in range(steps):
        p.grad = kiln.tensor(np.asarray(grad, dtype=np.float64))
        opt.step()
        out.append(p.detach().numpy().copy())
    return np.array(out)


# ---------------------------------------------------------------- hand-computed trajectories
def test_plain_sgd():
    p = param([1.0, -2.0])
    traj = run_quadratic(optim.SGD([p], lr=0.1), p, 2)
    np.testing.assert_allclose(traj, [[0.9, -1.8], [0.81, -1.62]], rtol=1e-14)


def test_momentum_by_hand():
    # g = p; buf1 = 1, p = 0.9; buf2 = 0.9*1 + 0.9 = 1.8, p = 0.72; buf3 = 1.62 + 0.72 = 2.34, p = 0.486
    p = param([1.0])
    traj = run_quadratic(optim.SGD([p], lr=0.1, momentum=0.9), p, 3)
    np.testing.assert_allclose(traj[:, 0], [0.9, 0.72, 0.486], rtol=1e-14)


def test_nesterov_by_hand():
    # step 1: g = 1, buf = 1, d = 1 + 0.9*1 = 1.9, p = 0.81
    # step 2: g = 0.81, buf = 0.9 + 0.81 = 1.71, d = 0.81 + 0.9*1.71 = 2.349, p = 0.5751
    p = param([1.0])
    traj = run_quadratic(optim.SGD([p], lr=0.1, momentum=0.9, nesterov=True), p, 2)
    np.testing.assert_allclose(traj[:, 0], [0.81, 0.5751], rtol=1e-14)


def test_weight_decay_by_hand():
    # g = 2 always: d1 = 2 + 0.5*1 = 2.5, p = 0.75; d2 = 2 + 0.5*0.75 = 2.375, p = 0.5125
    p = param([1.0])
    traj = run_constant_grad(optim.SGD([p], lr=0.1, weight_decay=0.5), p, [2.0], 2)
    np.testing.assert_allclose(traj[:, 0], [0.75, 0.5125], rtol=1e-14)


def test_dampening_by_hand():
    # g = 1 always: buf1 = 1 (no dampening on the first step), p = -0.1
    # buf2 = 0.9 + 0.5 = 1.4, p = -0.24; buf3 = 1.26 + 0.5 = 1.76, p = -0.416
    p = param([0.0])
    opt = optim.SGD([p], lr=0.1, momentum=0.9, dampening=0.5)
    traj = run_constant_grad(opt, p, [1.0], 3)
    np.testing.assert_allclose(traj[:, 0], [-0.1, -0.24, -0.416], rtol=1e-14)
    np.testing.assert_allclose(opt.state[p]["momentum_buffer"].numpy(), [1.76], rtol=1e-14)


def test_maximize():
    p = param([1.0])
    traj = run_constant_grad(optim.SGD([p], lr=0.1, maximize=True), p, [2.0], 2)
    np.testing.assert_allclose(traj[:, 0], [1.2, 1.4], rtol=1e-14)


# ---------------------------------------------------------------- against a NumPy loop
def numpy_sgd(p, a, steps, lr, momentum, dampening, wd, nesterov):
    """The same update written independently, for loss = 0.5 * sum(a * p^2)."""
    p, buf, out = p.copy(), None, []
    for _ in range(steps):
        d = a * p + wd * p
        if momentum:
            buf = d.copy() if buf is None else momentum * buf + (1 - dampening) * d
            d = d + momentum * buf if nesterov else buf
        p = p - lr * d
        out.append(p.copy())
    return np.array(out)


@pytest.mark.parametrize("momentum,dampening,wd,nesterov", [
    (0.0, 0.0, 0.0, False), (0.9, 0.0, 0.0, False), (0.8, 0.3, 0.1, False), (0.7, 0.0, 0.05, True)])
def test_sgd_matches_numpy_loop(momentum, dampening, wd, nesterov):
    p0, a = np.array([1.0, -2.0, 0.5]), np.array([1.0, 3.0, 0.2])
    p = param(p0)
    opt = optim.SGD([p], lr=0.05, momentum=momentum, dampening=dampening, weight_decay=wd, nesterov=nesterov)
    ak = kiln.tensor(a)
    out = []
    for _ in range(6):
        opt.zero_grad()
        (ak * p * p * 0.5).sum().backward()
        opt.step()
        out.append(p.detach().numpy().copy())
    np.testing.assert_allclose(np.array(out), numpy_sgd(p0, a, 6, 0.05, momentum, dampening, wd, nesterov),
                               rtol=1e-13)


# ---------------------------------------------------------------- mechanics
def test_step_keeps_parameter_identity_and_leafness():
    lin = nn.Linear(3, 2)
    w = lin.weight
    opt = optim.SGD(lin.parameters(), lr=0.1, momentum=0.5)
    lin(kiln.ones([4, 3])).sum().backward()
    opt.step()
    assert lin.weight is w and type(w) is nn.Parameter
    assert w.is_leaf and w.grad_fn is None and w.requires_grad
    buf = opt.state[w]["momentum_buffer"]
    assert not buf.requires_grad and buf.data_ptr() != w.grad.data_ptr()


def test_params_without_grad_are_skipped():
    a, b = param([1.0]), param([1.0])
    opt = optim.SGD([a, b], lr=0.1, momentum=0.9)
    (a * 2).sum().backward()
    opt.step()
    assert a.item() == pytest.approx(0.8) and b.item() == 1.0
    assert b not in opt.state


def test_param_groups_and_defaults():
    a, b = param([1.0]), param([1.0])
    opt = optim.SGD([{"params": [a]}, {"params": b, "lr": 0.5, "momentum": 0.9}], lr=0.1)
    assert [g["lr"] for g in opt.param_groups] == [0.1, 0.5]
    assert opt.param_groups[0]["momentum"] == 0 and opt.param_groups[1]["params"] == [b]
    assert opt.defaults["lr"] == 0.1
    a.grad, b.grad = kiln.ones([1], dtype=F64), kiln.ones([1], dtype=F64)
    opt.step()
    assert a.item() == pytest.approx(0.9) and b.item() == pytest.approx(0.5)
    c = param([1.0])
    opt.add_param_group({"params": [c], "weight_decay": 0.1})
    assert opt.param_groups[2]["lr"] == 0.1 and opt.param_groups[2]["weight_decay"] == 0.1
    with pytest.raises(ValueError, match="more than one parameter group"):
        opt.add_param_group({"params": [a]})


def test_required_defaults_in_base_class():
    class Opt(optim.Optimizer):
        def __init__(self, params, lr=optim.optimizer.required):
            super().__init__(params, dict(lr=lr))

    with pytest.raises(ValueError, match="required optimization parameter lr"):
        Opt([param([1.0])])
    assert Opt([{"params": [param([1.0])], "lr": 1.0}]).param_groups[0]["lr"] == 1.0
    with pytest.raises(NotImplementedError):
        Opt([param([1.0])], lr=1.0).step()


def test_zero_grad():
    p = param([1.0, 2.0])
    opt = optim.SGD([p], lr=0.1)
    (p * p).sum().backward()
    g = p.grad
    opt.zero_grad(set_to_none=False)
    assert p.grad is g and not np.any(g.numpy())
    opt.zero_grad()  # torch 2.x's default: None
    assert p.grad is None


@pytest.mark.parametrize("set_to_none", [True, False])
def test_zero_grad_on_unreached_parameters_as_torch(set_to_none):
    """With zeros (set_to_none=False, torch 1.13's default) SGD's momentum still moves a parameter a
    step does not reach (the DynamicNet of "Learning PyTorch with Examples"); with None (torch 2.x's
    default, and kiln's) the step skips it. kiln's default is held to torch's set_to_none=True."""
    import torch
    out = []
    for lib in (torch, kiln):
        a, e = lib.nn.Parameter(lib.tensor([1.0])), lib.nn.Parameter(lib.tensor([2.0]))
        opt = lib.optim.SGD([a, e], lr=0.1, momentum=0.9)
        for step in range(4):
            loss = (a * a).sum() + ((e * e).sum() if step == 0 else 0)
            if lib is kiln and set_to_none:
                opt.zero_grad()
            else:
                opt.zero_grad(set_to_none=set_to_none)
            loss.backward()
            opt.step()
        out.append((a.item(), e.item()))
    assert out[1] == out[0]
    assert (abs(out[0][1] - 1.6) < 1e-6) == set_to_none  # None: e moved once, at step 0 (2 - 0.1 * 4)


def test_closure_runs_with_grad_enabled():
    p = param([3.0])
    opt = optim.SGD([p], lr=0.1)

    def closure():
        opt.zero_grad()
        loss = (p * p).sum()
        loss.backward()
        return loss

    with kiln.no_grad():
        loss = opt.step(closure)
    assert loss.item() == 9.0 and p.item() == pytest.approx(3.0 - 0.1 * 6.0)


@pytest.mark.parametrize("kwargs,match", [
    (dict(lr=-1.0), "Invalid learning rate"), (dict(lr=0.1, momentum=-0.1), "Invalid momentum"),
    (dict(lr=0.1, weight_decay=-1), "Invalid weight_decay"), (dict(lr=0.1, nesterov=True), "Nesterov"),
    (dict(lr=0.1, momentum=0.9, dampening=0.1, nesterov=True), "Nesterov")])
def test_sgd_argument_errors(kwargs, match):
    with pytest.raises(ValueError, match=match):
        optim.SGD([param([1.0])], **kwargs)


def test_param_list_errors():
    with pytest.raises(ValueError, match="empty parameter list"):
        optim.SGD([], lr=0.1)
    with pytest.raises(TypeError, match="iterable of Tensors"):
        optim.SGD(param([1.0]), lr=0.1)
    leaf = kiln.ones([1], requires_grad=True)
    with pytest.raises(ValueError, match="non-leaf"):
        optim.SGD([leaf * 2], lr=0.1)
    with pytest.raises(TypeError, match="ordered collections"):
        optim.SGD([{"params": {param([1.0])}}], lr=0.1)


def test_state_dict_round_trip_continues_identically():
    p0 = [1.0, -1.0]
    p, q = param(p0), param(p0)
    opt = optim.SGD([p], lr=0.1, momentum=0.9, nesterov=True)
    run_quadratic(opt, p, 3)
    sd = opt.state_dict()
    assert list(sd["state"]) == [0] and sd["param_groups"][0]["params"] == [0]
    assert sd["param_groups"][0]["nesterov"] is True
    with kiln.no_grad():
        q.copy_(p)
    opt2 = optim.SGD([q], lr=0.5)
    opt2.load_state_dict(sd)
    assert opt2.param_groups[0]["lr"] == 0.1 and opt2.param_groups[0]["params"][0] is q
    buf = opt2.state[q]["momentum_buffer"]
    assert buf.data_ptr() != opt.state[p]["momentum_buffer"].data_ptr()  # copied, not shared
    np.testing.assert_allclose(run_quadratic(opt2, q, 3), run_quadratic(opt, p, 3), rtol=1e-15)
    with pytest.raises(ValueError, match="different number of parameter groups"):
        optim.SGD([{"params": [param([1.0])]}, {"params": [param([1.0])]}], lr=0.1).load_state_dict(sd)
    with pytest.raises(ValueError, match="doesn't match the size"):
        optim.SGD([param([1.0]), param([1.0])], lr=0.1).load_state_dict(sd)


def test_repr():
    opt = optim.SGD([param([1.0])], lr=0.1, momentum=0.9)
    # torch 2.x's SGD options, sorted (1.13 lacks fused)
    assert repr(opt) == ("SGD (\nParameter Group 0\n    dampening: 0\n    differentiable: False\n    foreach: None\n"
                         "    fused: None\n    lr: 0.1\n    maximize: False\n"
                         "    momentum: 0.9\n    nesterov: False\n    weight_decay: 0\n)")


def test_linear_regression_converges():
    kiln.manual_seed(0)
    rng = np.random.default_rng(1)
    x_np = rng.normal(size=(50, 3))
    w_true, b_true = np.array([[1.5, -2.0, 0.5]]), np.array([0.3])
    y_np = x_np @ w_true.T + b_true
    model = nn.Linear(3, 1).to(F64)
    opt = optim.SGD(model.parameters(), lr=0.1, momentum=0.5)
    x, y = kiln.tensor(x_np), kiln.tensor(y_np)
    for _ in range(200):
        opt.zero_grad()
        nn.functional.mse_loss(model(x), y).backward()
        opt.step()
    np.testing.assert_allclose(model.weight.detach().numpy(), w_true, atol=1e-6)
    np.testing.assert_allclose(model.bias.detach().numpy(), b_true, atol=1e-6)
