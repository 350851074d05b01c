"""Whole training runs against torch 1.13, bit for bit: the same small programs, written once and run
with `torch` and with `kiln` imported in its place (the same weights, data and seeds), must end with every
loss and every parameter equal to torch's. A GPT (embeddings, causal attention written out, layer norm,
gelu, AdamW) and a CNN (convolutions, batch norm, ReLU/SiLU, pooling, dropout, label smoothing, SGD
with momentum), with a VAE's reparameterized sample and KL term. Each op is held to torch's bits
elsewhere; these check that they compose (docs/ARCHITECTURE.md, "Gradients in torch's order")."""
import importlib

import numpy as np
import pytest


def train_gpt(libname, steps=5):
    """losses and final parameters of a two-block GPT trained `steps` steps with AdamW."""
    torch = importlib.import_module(libname)
    nn = torch.nn; F = nn.functional
    torch.manual_seed(0)
    class Block(nn.Module):
        def __init__(s, d=64, h=4):
            super().__init__()
            s.ln1 = nn.LayerNorm(d); s.attn = nn.Linear(d, 3*d); s.proj = nn.Linear(d, d)
            s.ln2 = nn.LayerNorm(d); s.fc = nn.Linear(d, 4*d); s.fc2 = nn.Linear(4*d, d); s.h = h
        def forward(s, x):
            B,T,C = x.shape
            q,k,v = s.attn(s.ln1(x)).split(C, dim=2)
            q = q.view(B,T,s.h,C//s.h).transpose(1,2); k = k.view(B,T,s.h,C//s.h).transpose(1,2); v = v.view(B,T,s.h,C//s.h).transpose(1,2)
            att = (q @ k.transpose(-2,-1)) * (1.0/ (C//s.h)**0.5)
            mask = torch.tril(torch.ones(T,T)).view(1,1,T,T)
            att = att.masked_fill(mask==0, float('-inf')); att = F.softmax(att, dim=-1)
            y = (att @ v).transpose(1,2).contiguous().view(B,T,C)
            x = x + s.proj(y)
            return x + s.fc2(F.gelu(s.fc(s.ln2(x))))
    class GPT(nn.Module):
        def __init__(s, V=50, d=64, T=16):
            super().__init__()
            s.wte = nn.Embedding(V, d); s.wpe = nn.Embedding(T, d); s.blocks = nn.ModuleList([Block(), Block()]); s.lnf = nn.LayerNorm(d); s.head = nn.Linear(d, V, bias=False)
        def forward(s, idx):
            B,T = idx.shape
            x = s.wte(idx) + s.wpe(torch.arange(T))
            for b in s.blocks: x = b(x)
            return s.head(s.lnf(x))
    m = GPT()
    # same init from numpy
    rng = np.random.default_rng(0)
    with torch.no_grad():
        for n,p in m.named_parameters():
            p.copy_(torch.tensor((rng.standard_normal(tuple(p.shape))*0.05).astype(np.float32)))
    opt = torch.optim.AdamW(m.parameters(), lr=1e-3)
    data = np.random.default_rng(1).integers(0, 50, size=(steps, 4, 17))
    losses=[]
    for i in range(steps):
        idx = torch.tensor(data[i][:, :16]); tgt = torch.tensor(data[i][:, 1:])
        logits = m(idx); loss = F.cross_entropy(logits.view(-1, 50), tgt.reshape(-1))
        opt.zero_grad(); loss.backward(); opt.step(); losses.append(loss.item())
    return losses, {n: p.detach().numpy().copy() for n,p in m.named_parameters()}


def train_cnn(libname, steps=4):
    """losses and parameters of a small CNN trained `steps` steps with SGD; a VAE loss and gradient."""
    torch = importlib.import_module(libname)
    nn = torch.nn; F = nn.functional
    torch.manual_seed(0)
    m = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(), nn.MaxPool2d(2),
                      nn.Conv2d(8, 16, 3, stride=2, padding=1), nn.BatchNorm2d(16), nn.SiLU(), nn.AdaptiveAvgPool2d(1),
                      nn.Flatten(), nn.Dropout(0.3), nn.Linear(16, 10))
    rng = np.random.default_rng(0)
    with torch.no_grad():
        for n,p in m.named_parameters():
            p.copy_(torch.tensor((rng.standard_normal(tuple(p.shape))*0.1).astype(np.float32)))
    opt = torch.optim.SGD(m.parameters(), lr=0.05, momentum=0.9, weight_decay=1e-4)
    data = np.random.default_rng(1).standard_normal((steps, 8, 3, 16, 16)).astype(np.float32)
    lab = np.random.default_rng(2).integers(0, 10, size=(steps, 8))
    losses = []
    for i in range(steps):
        out = m(torch.tensor(data[i])); loss = F.cross_entropy(out, torch.tensor(lab[i]), label_smoothing=0.1)
        opt.zero_grad(); loss.backward(); opt.step(); losses.append(loss.item())
    # VAE-ish
    torch.manual_seed(3)
    enc = nn.Linear(20, 8); dec = nn.Linear(4, 20)
    x = torch.tensor(np.random.default_rng(4).standard_normal((16, 20)).astype(np.float32))
    h = enc(x); mu, logvar = h[:, :4], h[:, 4:]
    z = mu + torch.randn_like(mu) * torch.exp(0.5 * logvar)
    rec = torch.sigmoid(dec(z))
    kl = -0.5 * torch.sum(1 + logvar - mu.pow(2) - logvar.exp())
    l2 = F.binary_cross_entropy(rec, torch.sigmoid(x), reduction='sum') + kl
    l2.backward()
    return losses, {n: p.detach().numpy().copy() for n,p in m.named_parameters()}, l2.item(), enc.weight.grad.numpy().copy()


@pytest.mark.parametrize("threads", [1, 2])
def test_gpt_training_is_torchs_bits(threads):
    import kiln
    import torch
    old = torch.get_num_threads(), kiln.get_num_threads()
    torch.set_num_threads(threads)
    kiln.set_num_threads(threads)
    try:
        losses_t, params_t = train_gpt("torch")
        losses_k, params_k = train_gpt("kiln")
    finally:
        torch.set_num_threads(old[0])
        kiln.set_num_threads(old[1])
    assert losses_k == losses_t
    for name in params_t:
        np.testing.assert_array_equal(params_k[name].view(np.int32), params_t[name].view(np.int32), err_msg=name)


def test_cnn_and_vae_training_is_torchs_bits():
    losses_t, params_t, vae_t, grad_t = train_cnn("torch")
    losses_k, params_k, vae_k, grad_k = train_cnn("kiln")
    assert losses_k == losses_t
    for name in params_t:
        np.testing.assert_array_equal(params_k[name].view(np.int32), params_t[name].view(np.int32), err_msg=name)
    assert vae_k == vae_t
    np.testing.assert_array_equal(grad_k.view(np.int32), grad_t.view(np.int32))
