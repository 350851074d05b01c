"""kiln.utils.checkpoint against torch.utils.checkpoint (torch 1.13): the same outputs and gradients
(inputs and parameters, dropout inside included: the random state is replayed), both variants,
checkpoint_sequential, keyword arguments and nested outputs, and the errors and warnings; plus
that the forward keeps no graph inside the checkpointed function (the memory it exists to save)."""
import inspect
import warnings

import numpy as np
import pytest
import torch
import torch.utils.checkpoint as tcp

import kiln
import kiln.utils.checkpoint as kcp

_TORCH_SEQ_TAKES_REENTRANT = "use_reentrant" in inspect.signature(tcp.checkpoint_sequential).parameters


def _block(lib, p_drop=0.0):
    lib.manual_seed(0)
    nn = lib.nn
    return nn.Sequential(nn.Linear(6, 8), nn.Tanh(), nn.Dropout(p_drop), nn.Linear(8, 6), nn.ReLU(),
                         nn.Linear(6, 3))


def _copy_weights(src, dst):
    dst.load_state_dict({k: kiln.from_numpy(v.detach().numpy().copy()) for k, v in src.state_dict().items()})


X = np.random.default_rng(0).standard_normal((5, 6)).astype(np.float32)


def _run(lib, cp, model, use_reentrant, x_requires_grad=True, train=True):
    model.train(train)
    lib.manual_seed(1)
    x = lib.tensor(X, requires_grad=x_requires_grad)
    y = cp.checkpoint(model, x, use_reentrant=use_reentrant)
    (y * y).sum().backward()
    grads = [p.grad.numpy().copy() if p.grad is not None else None for p in model.parameters()]
    return y.detach().numpy(), (x.grad.numpy() if x.grad is not None else None), grads


def _same(a, b):
    if a is None or b is None:
        assert a is None and b is None
    else:
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("use_reentrant", [True, False])
@pytest.mark.parametrize("p_drop", [0.0, 0.5])
def test_gradients_match_torch(use_reentrant, p_drop):
    tm, km = _block(torch, p_drop), _block(kiln, p_drop)
    _copy_weights(tm, km)
    ty, tx, tg = _run(torch, tcp, tm, use_reentrant)
    ky, kx, kg = _run(kiln, kcp, km, use_reentrant)
    if p_drop == 0:  # with dropout, the masks come from each library's own stream order
        _same(ky, ty)
        _same(kx, tx)
        for a, b in zip(kg, tg):
            _same(a, b)
    # Against the same model without checkpointing, in the same library and random state: the
    # recomputation replays the forward's dropout masks exactly.
    for lib, m, (y, gx, g) in ((torch, tm, (ty, tx, tg)), (kiln, km, (ky, kx, kg))):
        m.zero_grad()
        lib.manual_seed(1)
        x = lib.tensor(X, requires_grad=True)
        ref = m(x)
        (ref * ref).sum().backward()
        _same(y, ref.detach().numpy())
        _same(gx, x.grad.numpy())
        for a, p in zip(g, m.parameters()):
            _same(a, p.grad.numpy())


@pytest.mark.parametrize("use_reentrant", [True, False])
def test_input_without_grad(use_reentrant):
    # reentrant: parameters get nothing (torch warns); non-reentrant: parameters get their gradients
    tm, km = _block(torch), _block(kiln)
    _copy_weights(tm, km)
    flags, grads = [], []
    for lib, cp, m in ((torch, tcp, tm), (kiln, kcp, km)):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            y = cp.checkpoint(m, lib.tensor(X), use_reentrant=use_reentrant)
            if y.requires_grad:
                y.sum().backward()
        flags.append((y.requires_grad, [p.grad is None for p in m.parameters()],
                      any("None of the inputs have requires_grad=True" in str(w.message) for w in caught)))
        grads.append([p.grad.numpy().copy() for p in m.parameters() if p.grad is not None])
    assert flags[1] == flags[0]
    assert len(grads[1]) == len(grads[0]) == (0 if use_reentrant else 6)
    for a, b in zip(grads[1], grads[0]):
        _same(a, b)


def test_kwargs_and_nested_outputs_non_reentrant():
    out = []
    for lib, cp in ((torch, tcp), (kiln, kcp)):
        w = lib.tensor([[1.0, 2.0], [3.0, -1.0]], requires_grad=True)

        def f(x, scale=1.0, *, shift):
            h = (x @ w).tanh()
            return {"a": h * scale, "b": [h.sum() + shift, x]}
        x = lib.tensor([[0.5, -0.25], [1.0, 2.0]], requires_grad=True)
        r = cp.checkpoint(f, x, 3.0, shift=lib.tensor(1.0), use_reentrant=False)
        assert isinstance(r, dict) and isinstance(r["b"], list)
        (r["a"].sum() + r["b"][0] * 2).backward()
        out.append((r["a"].detach().numpy(), x.grad.numpy(), w.grad.numpy()))
    for a, b in zip(out[1], out[0]):
        _same(a, b)


def test_checkpoint_sequential():
    for use_reentrant in (True, False):
        tm, km = _block(torch), _block(kiln)
        _copy_weights(tm, km)
        res = []
        for lib, cp, m in ((torch, tcp, tm), (kiln, kcp, km)):
            x = lib.tensor(X, requires_grad=True)
            # torch 1.13's checkpoint_sequential is reentrant only (2.x takes use_reentrant): the
            # gradients are the same
            kw = {"use_reentrant": use_reentrant} if cp is kcp or _TORCH_SEQ_TAKES_REENTRANT else {}
            y = cp.checkpoint_sequential(m, 2, x, **kw)
            y.sum().backward()
            res.append([y.detach().numpy(), x.grad.numpy()] + [p.grad.numpy() for p in m.parameters()])
        for a, b in zip(res[1], res[0]):
            _same(a, b)


def test_errors_and_warnings_match_torch():
    for lib, cp in ((torch, tcp), (kiln, kcp)):
        x = lib.ones(2, requires_grad=True)
        with pytest.raises(ValueError, match="Unexpected keyword arguments: scale"):
            cp.checkpoint(lambda a, scale: a * scale, x, scale=2.0, use_reentrant=True)
        with pytest.raises(ValueError, match="Unexpected keyword arguments"):
            cp.checkpoint_sequential([lib.nn.Identity()], 1, x, use_reentrant=False, bogus=1)


def test_forward_keeps_no_inner_graph():
    # Inside the checkpoint nothing is recorded: the output's node is the checkpoint's own, whose only
    # input edges lead to the checkpoint's inputs.
    model = _block(kiln)
    x = kiln.tensor(X, requires_grad=True)
    for use_reentrant in (True, False):
        y = kcp.checkpoint(model, x, use_reentrant=use_reentrant)
        nexts = [f for f, _ in y.grad_fn.next_functions if f is not None]
        assert all(type(f).__name__ == "AccumulateGrad" for f in nexts), nexts


def test_fork_rng_restores_the_state():
    for lib in (torch, kiln):
        lib.manual_seed(3)
        with lib.random.fork_rng():
            inside = lib.rand(3).numpy()
        after = lib.rand(3).numpy()
        np.testing.assert_array_equal(inside, after)
        with lib.random.fork_rng(enabled=False):
            lib.rand(3)
        assert not np.array_equal(lib.rand(3).numpy(), after)
