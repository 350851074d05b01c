"""What the programs of test_programs_part6.py found missing or different in kiln, each checked against
torch 1.13."""
import warnings
from collections import OrderedDict

import numpy as np
import pytest
import torch

import kiln


def k(t):
    return kiln.from_numpy(t.detach().numpy().copy())


# ---- maml_sinusoid: torchmeta's MetaModule calls Module._named_members(get_members_fn, prefix, recurse) ----
@pytest.mark.parametrize("recurse", [True, False])
def test_named_members_with_a_members_function(recurse):
    def run(lib):
        lib.manual_seed(0)
        net = lib.nn.Sequential(OrderedDict(a=lib.nn.Linear(2, 3), b=lib.nn.Sequential(lib.nn.Linear(3, 1))))
        net.b.register_buffer("stat", lib.zeros(1))
        params = list(net._named_members(lambda m: m._parameters.items(), prefix="net", recurse=recurse))
        buffers = list(net._named_members(lambda m: m._buffers.items(), recurse=recurse))
        return [n for n, _ in params], [n for n, _ in buffers], [p.shape for _, p in params]

    assert run(kiln) == run(torch)


# ---- wgan_gp_toy: autograd.grad(..., only_inputs=True) (caogang/wgan-gp), torch's positional order -------
def test_autograd_grad_only_inputs_and_positional_order():
    for lib in (torch, kiln):
        x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        y = (x ** 3).sum()
        (g,) = lib.autograd.grad(outputs=y, inputs=x, grad_outputs=lib.ones(()), create_graph=True,
                                 retain_graph=True, only_inputs=True)
        assert g.tolist() == [3.0, 12.0, 27.0] and g.requires_grad
        # only_inputs is the 6th positional parameter, before allow_unused
        z = lib.ones(2, requires_grad=True)
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            gx, gz = lib.autograd.grad((x * x).sum(), [x, z], None, None, False, False, True)
        assert gz is None and gx.tolist() == [2.0, 4.0, 6.0]
        assert any("only_inputs argument is deprecated" in str(m.message) for m in w)


def test_autograd_grad_is_grads_batched():
    x_t = torch.randn(3, requires_grad=True)
    x_k = k(x_t).requires_grad_()
    w = torch.randn(4, 3)
    (jt,) = torch.autograd.grad(torch.tanh(x_t * 2), x_t, torch.eye(3), is_grads_batched=True)
    (jk,) = kiln.autograd.grad(kiln.tanh(x_k * 2), x_k, kiln.eye(3), is_grads_batched=True)
    np.testing.assert_allclose(jk.numpy(), jt.numpy(), rtol=1e-6)
    (jt,) = torch.autograd.grad(w @ x_t, x_t, torch.eye(4), is_grads_batched=True)
    (jk,) = kiln.autograd.grad(k(w) @ x_k, x_k, kiln.eye(4), is_grads_batched=True)
    np.testing.assert_allclose(jk.numpy(), jt.numpy(), rtol=1e-6)


# ---- wgan_gp_toy: the gradient penalty's double backward through a ReLU MLP ------------------------------
def test_gradient_penalty_double_backward():
    torch.manual_seed(0)
    kiln.manual_seed(0)
    nets = [lib.nn.Sequential(lib.nn.Linear(2, 16), lib.nn.ReLU(True), lib.nn.Linear(16, 16), lib.nn.Tanh(),
                              lib.nn.Linear(16, 1)) for lib in (torch, kiln)]
    nets[1].load_state_dict({n: k(v) for n, v in nets[0].state_dict().items()})
    x = torch.randn(8, 2)
    res = []
    for lib, net, xx in ((torch, nets[0], x), (kiln, nets[1], k(x))):
        xx = xx.clone().requires_grad_(True)
        d = net(xx).view(-1)
        g = lib.autograd.grad(d, xx, lib.ones(d.size()), create_graph=True, retain_graph=True, only_inputs=True)[0]
        gp = ((g.norm(2, dim=1) - 1) ** 2).mean() * 10
        gp.backward()
        # the last bias does not reach the input gradient: no .grad (None), as in torch
        res.append([gp.item()] + [None if p.grad is None else p.grad.numpy().copy() for p in net.parameters()])
    np.testing.assert_allclose(res[1][0], res[0][0], rtol=1e-6)
    for a, b in zip(res[1][1:], res[0][1:]):
        assert (a is None) == (b is None)
        if a is not None:
            np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-7)


# ---- ctc_speech: GELU's gradient for a non-contiguous incoming gradient --------------------------------
@pytest.mark.parametrize("approximate", ["none", "tanh"])
def test_gelu_backward_with_a_transposed_grad(approximate):
    # Debian's torch 1.13 gets this one wrong for approximate='none' (its result differs from the same
    # gradient made contiguous); kiln's equals torch's on the contiguous gradient
    rng = np.random.RandomState(0)
    x = rng.randn(4, 5, 6).astype(np.float32)
    g = rng.randn(5, 4, 6).astype(np.float32)
    xt = torch.tensor(x, requires_grad=True)
    torch.nn.functional.gelu(xt, approximate=approximate).backward(torch.tensor(g).transpose(0, 1).contiguous())
    xk = kiln.tensor(x, requires_grad=True)
    kiln.nn.functional.gelu(xk, approximate=approximate).backward(kiln.tensor(g).transpose(0, 1))
    np.testing.assert_allclose(xk.grad.numpy(), xt.grad.numpy(), rtol=1e-5, atol=1e-6)


# ---- ctc_speech / yolov1: the losses themselves, bit for bit ------------------------------------------
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_ctc_loss_padded_float_targets(reduction):
    rng = np.random.RandomState(0)
    lp = rng.randn(20, 4, 29).astype(np.float32)
    tg = rng.randint(0, 28, size=(4, 8)).astype(np.float32)  # pad_sequence of torch.Tensor labels
    il, tl = [20, 18, 15, 20], [5, 8, 3, 6]
    res = []
    for lib in (torch, kiln):
        x = lib.tensor(lp, requires_grad=True)
        loss = lib.nn.CTCLoss(blank=28, reduction=reduction)(lib.nn.functional.log_softmax(x, 2), lib.tensor(tg), il, tl)
        (loss.sum() if reduction == "none" else loss).backward()
        res.append((loss.detach().numpy(), x.grad.numpy()))
    np.testing.assert_allclose(res[1][0], res[0][0], rtol=1e-6)
    np.testing.assert_allclose(res[1][1], res[0][1], rtol=1e-5, atol=1e-7)
