"""nn.utils.weight_norm / spectral_norm (and their removal) against torch 1.13's hook-based versions:
parameter and buffer names, values after the same seed, forward outputs and gradients over
several training steps, eval mode, removal, and errors."""
import numpy as np
import pytest

torch = pytest.importorskip("torch")

import kiln  # noqa: E402


def _pair(make, seed=0):
    torch.manual_seed(seed)
    kiln.manual_seed(seed)
    return make(torch), make(kiln)


def _copy_weights(t, k):
    k.load_state_dict({name: kiln.tensor(v.detach().numpy()) for name, v in t.state_dict().items()})


def _close(a, b, **kw):
    np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), **kw)


MODULES = [
    ("linear", lambda L: L.nn.Linear(5, 4), (3, 5)),
    ("conv2d", lambda L: L.nn.Conv2d(3, 4, 3), (2, 3, 6, 6)),
    ("conv1d", lambda L: L.nn.Conv1d(2, 3, 2), (2, 2, 5)),
]


@pytest.mark.parametrize("dim", [0, 1, None, -1])
@pytest.mark.parametrize("kind,make,shape", MODULES)
def test_weight_norm_matches_torch(kind, make, shape, dim):
    t, k = _pair(make)
    _copy_weights(t, k)
    t = torch.nn.utils.weight_norm(t, dim=dim)
    k = kiln.nn.utils.weight_norm(k, dim=dim)
    assert sorted(n for n, _ in k.named_parameters()) == sorted(n for n, _ in t.named_parameters())
    assert sorted(k.state_dict()) == sorted(t.state_dict())
    _close(k.weight_g, t.weight_g, rtol=1e-6)
    _close(k.weight_v, t.weight_v)
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    topt = torch.optim.SGD(t.parameters(), lr=0.1)
    kopt = kiln.optim.SGD(k.parameters(), lr=0.1)
    for _ in range(3):
        tout, kout = t(torch.tensor(x)), k(kiln.tensor(x))
        _close(kout, tout, rtol=1e-4, atol=1e-4)
        topt.zero_grad()
        kopt.zero_grad()
        (tout ** 2).sum().backward()
        (kout ** 2).sum().backward()
        _close(k.weight_g.grad, t.weight_g.grad, rtol=1e-4, atol=1e-5)
        _close(k.weight_v.grad, t.weight_v.grad, rtol=1e-4, atol=1e-5)
        topt.step()
        kopt.step()
    torch.nn.utils.remove_weight_norm(t)
    kiln.nn.utils.remove_weight_norm(k)
    assert sorted(n for n, _ in k.named_parameters()) == sorted(n for n, _ in t.named_parameters())
    assert isinstance(k.weight, kiln.nn.Parameter)
    _close(k.weight, t.weight, rtol=1e-4, atol=1e-5)
    _close(k(kiln.tensor(x)), t(torch.tensor(x)), rtol=1e-4, atol=1e-4)


def test_weight_norm_errors_as_torch():
    for L in (torch, kiln):
        m = L.nn.utils.weight_norm(L.nn.Linear(2, 2))
        with pytest.raises(RuntimeError, match="Cannot register two weight_norm hooks"):
            L.nn.utils.weight_norm(m)
        with pytest.raises(ValueError, match="weight_norm of 'bias' not found"):
            L.nn.utils.remove_weight_norm(m, "bias")
        L.nn.utils.weight_norm(m, "bias")   # another parameter: fine
        assert "bias_g" in dict(m.named_parameters())


@pytest.mark.parametrize("n_iter", [1, 3])
@pytest.mark.parametrize("kind,make,shape", MODULES + [
    ("convT2d", lambda L: L.nn.ConvTranspose2d(3, 2, 3), (2, 3, 4, 4))])
def test_spectral_norm_matches_torch_with_the_same_seed(kind, make, shape, n_iter):
    torch.manual_seed(1)
    kiln.manual_seed(1)
    t, k = make(torch), make(kiln)
    _close(k.weight, t.weight)   # initialisation draws as torch
    t = torch.nn.utils.spectral_norm(t, n_power_iterations=n_iter)
    k = kiln.nn.utils.spectral_norm(k, n_power_iterations=n_iter)
    _close(k.weight_u, t.weight_u, rtol=1e-5, atol=1e-7)   # the random start of the power iteration
    _close(k.weight_v, t.weight_v, rtol=1e-5, atol=1e-7)
    assert sorted(k.state_dict()) == sorted(t.state_dict())
    assert sorted(n for n, _ in k.named_parameters()) == sorted(n for n, _ in t.named_parameters())
    assert sorted(n for n, _ in k.named_buffers()) == sorted(n for n, _ in t.named_buffers())
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    topt = torch.optim.SGD(t.parameters(), lr=0.05)
    kopt = kiln.optim.SGD(k.parameters(), lr=0.05)
    for _ in range(3):
        tout, kout = t(torch.tensor(x)), k(kiln.tensor(x))
        _close(kout, tout, rtol=1e-4, atol=1e-5)
        _close(k.weight_u, t.weight_u, rtol=1e-4, atol=1e-6)
        topt.zero_grad()
        kopt.zero_grad()
        (tout ** 2).sum().backward()
        (kout ** 2).sum().backward()
        _close(k.weight_orig.grad, t.weight_orig.grad, rtol=1e-3, atol=1e-5)
        topt.step()
        kopt.step()
    t.eval()
    k.eval()
    u_before = k.weight_u.clone()
    _close(k(kiln.tensor(x)), t(torch.tensor(x)), rtol=1e-4, atol=1e-5)
    _close(k.weight_u, u_before)   # no power iteration in eval mode
    torch.nn.utils.remove_spectral_norm(t)
    kiln.nn.utils.remove_spectral_norm(k)
    assert sorted(k.state_dict()) == sorted(t.state_dict()) == (["bias", "weight"])
    _close(k.weight, t.weight, rtol=1e-4, atol=1e-6)


def test_spectral_norm_state_dict_loads_from_torch():
    torch.manual_seed(0)
    t = torch.nn.utils.spectral_norm(torch.nn.Linear(4, 3))
    t(torch.randn(2, 4))
    k = kiln.nn.utils.spectral_norm(kiln.nn.Linear(4, 3))
    k.load_state_dict({n: kiln.tensor(v.numpy()) for n, v in t.state_dict().items()})
    t.eval()
    k.eval()
    x = np.ones((2, 4), np.float32)
    _close(k(kiln.tensor(x)), t(torch.tensor(x)), rtol=1e-5, atol=1e-6)


def test_spectral_norm_errors_as_torch():
    for L in (torch, kiln):
        with pytest.raises(ValueError, match="Expected n_power_iterations to be positive"):
            L.nn.utils.spectral_norm(L.nn.Linear(2, 2), n_power_iterations=0)
        m = L.nn.utils.spectral_norm(L.nn.Linear(2, 2))
        with pytest.raises(RuntimeError, match="Cannot register two spectral_norm hooks"):
            L.nn.utils.spectral_norm(m)
        with pytest.raises(ValueError, match="spectral_norm of 'bias' not found"):
            L.nn.utils.remove_spectral_norm(m, "bias")


def test_forward_hooks_as_torch():
    for L in (torch, kiln):
        m = L.nn.Linear(2, 2)
        calls = []
        h1 = m.register_forward_pre_hook(lambda mod, args: (args[0] * 0,))
        h2 = m.register_forward_hook(lambda mod, args, out: calls.append(tuple(out.shape)) or out + 1)
        out = m(L.ones(3, 2))
        np.testing.assert_allclose(out.detach().numpy(), (m.bias + 1).expand(3, 2).detach().numpy())
        assert calls == [(3, 2)]
        h1.remove()
        h2.remove()
        np.testing.assert_allclose(m(L.zeros(1, 2)).detach().numpy(), m.bias.detach().numpy()[None])
