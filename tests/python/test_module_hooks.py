"""nn.Module hooks beyond the plain forward ones, against torch 1.13 where it has them
(register_full_backward_hook, _register_state_dict_hook, register_load_state_dict_post_hook,
to_empty) and against hand-computed results for torch 2.x's additions (full backward pre-hooks,
forward hooks with_kwargs / prepend / always_call, register_state_dict_pre_hook)."""
import numpy as np
import pytest
import torch

import kiln

X = np.random.default_rng(0).standard_normal((4, 3)).astype(np.float32)


def _net(lib):
    lib.manual_seed(0)
    return lib.nn.Sequential(lib.nn.Linear(3, 5), lib.nn.Tanh(), lib.nn.Linear(5, 2))


def _np(t):
    return None if t is None else t.detach().numpy().copy()


@pytest.mark.parametrize("x_requires_grad", [True, False])
def test_full_backward_hook_sees_torchs_gradients(x_requires_grad):
    seen = {}
    for lib in (torch, kiln):
        net = _net(lib)
        calls = []

        def hook(module, grad_input, grad_output, calls=calls):
            calls.append((type(module).__name__, [_np(g) for g in grad_input], [_np(g) for g in grad_output]))
        handles = [net[0].register_full_backward_hook(hook), net.register_full_backward_hook(hook)]
        x = lib.tensor(X, requires_grad=x_requires_grad)
        (net(x) ** 2).sum().backward()
        seen[lib.__name__] = (calls, _np(x.grad), [_np(p.grad) for p in net.parameters()])
        for h in handles:
            h.remove()
        net.zero_grad()
        (net(lib.tensor(X, requires_grad=True)) ** 2).sum().backward()  # removed: no more calls
        assert len(calls) == 2
    (tc, tx, tp), (kc, kx, kp) = seen["torch"], seen["kiln"]
    assert [c[0] for c in kc] == [c[0] for c in tc]  # the outer module's hook first
    for (_, tgi, tgo), (_, kgi, kgo) in zip(tc, kc):
        for a, b in zip(kgi + kgo, tgi + tgo):
            assert (a is None) == (b is None)
            if a is not None:
                np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-7)
    for a, b in zip([kx] + kp, [tx] + tp):
        assert (a is None) == (b is None)
        if a is not None:
            np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-7)


def test_full_backward_hook_replaces_grad_input():
    out = []
    for lib in (torch, kiln):
        lin = _net(lib)[0]
        lin.register_full_backward_hook(lambda m, gi, go: (gi[0] * 10,))
        x = lib.tensor(X, requires_grad=True)
        lin(x).sum().backward()
        out.append(_np(x.grad))
        lin.register_full_backward_hook(lambda m, gi, go: (gi[0], gi[0]))
        with pytest.raises(RuntimeError, match="invalid number of grad_input"):
            lin(lib.tensor(X, requires_grad=True)).sum().backward()
    np.testing.assert_allclose(out[1], out[0], rtol=1e-6)


def test_full_backward_pre_hook():
    # torch 2.x: hook(module, grad_output) may replace grad_output, before the module's backward
    lin = _net(kiln)[0]
    got = []
    lin.register_full_backward_pre_hook(lambda m, go: got.append(_np(go[0])) or (go[0] * 2,))
    x = kiln.tensor(X, requires_grad=True)
    lin(x).sum().backward()
    np.testing.assert_array_equal(got[0], np.ones((4, 5), np.float32))
    np.testing.assert_allclose(x.grad.numpy(), 2 * np.ones((4, 5)) @ lin.weight.detach().numpy(), rtol=1e-5)


def test_forward_hooks_with_kwargs_prepend_and_always_call():
    class M(kiln.nn.Module):
        def forward(self, x, *, scale=1.0):
            if scale == 0:
                raise ValueError("boom")
            return x * scale

    m = M()
    order = []
    m.register_forward_pre_hook(lambda mod, args: order.append("pre"))
    m.register_forward_pre_hook(lambda mod, args, kwargs: (args, {"scale": kwargs["scale"] * 3}), with_kwargs=True)
    m.register_forward_pre_hook(lambda mod, args: order.append("first"), prepend=True)
    m.register_forward_hook(lambda mod, args, kwargs, out: out + kwargs["scale"], with_kwargs=True)
    y = m(kiln.ones(2), scale=2.0)
    np.testing.assert_array_equal(y.numpy(), [12.0, 12.0])  # 1 * 6 + 6
    assert order == ["first", "pre"]
    always = []
    m.register_forward_hook(lambda mod, args, out: always.append(out), always_call=True)
    with pytest.raises(ValueError, match="boom"):
        m(kiln.ones(2), scale=0.0)
    assert always == [None]
    bad = M()
    bad.register_forward_pre_hook(lambda mod, args, kwargs: args, with_kwargs=True)
    with pytest.raises(RuntimeError, match="forward pre-hook must return None or a tuple"):
        bad(kiln.ones(1), scale=1.0)


def test_state_dict_hooks():
    for lib in (torch, kiln):
        net = _net(lib)
        net[0]._register_state_dict_hook(lambda m, sd, prefix, meta: sd.__setitem__(prefix + "extra", lib.ones(1)))
        sd = net.state_dict()
        assert list(sd)[:3] == ["0.weight", "0.bias", "0.extra"]
        keys = []
        net[2].register_load_state_dict_post_hook(lambda m, inc: keys.append(list(inc.unexpected_keys)))
        r = net.load_state_dict(sd, strict=False)
        assert keys == [["0.extra"]] and r.unexpected_keys == ["0.extra"]

        def clear(m, inc):
            inc.unexpected_keys.clear()
        net[2].register_load_state_dict_post_hook(clear)
        net.load_state_dict(sd)  # strict, but the hook removed the unexpected key first
    pre = []
    net = _net(kiln)
    net[2].register_state_dict_pre_hook(lambda m, prefix, keep_vars: pre.append((prefix, keep_vars)))
    net.state_dict(keep_vars=True)
    assert pre == [("2.", True)]


def test_to_empty():
    for lib in (torch, kiln):
        net = _net(lib)
        net.register_buffer("steps", lib.zeros(3, dtype=lib.int64))
        params = list(net.parameters())
        ptrs = [p.data_ptr() for p in params]
        assert net.to_empty(device="cpu") is net
        new = list(net.parameters())
        assert all(isinstance(p, lib.nn.Parameter) and p.requires_grad for p in new)
        assert all(a is b for a, b in zip(params, new))  # the same Parameters, new memory
        assert all(p.data_ptr() != q for p, q in zip(new, ptrs))
        assert net.steps.dtype == lib.int64 and tuple(net.steps.shape) == (3,)
