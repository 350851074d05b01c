"""Sparse gradients against torch 1.13, on identical weights: embedding / EmbeddingBag with sparse=True
(the sparse COO .grad: indices in torch's order, padding_idx left out, accumulation over backward calls,
zero_grad, clip_grad_norm_, a weight used twice or also densely, hooks), the optimizers that take sparse
gradients (SparseAdam, SGD, Adagrad; the errors of those that do not), a word2vec skip-gram with negative
sampling trained with SparseAdam, and state_dict round trips."""
import copy

import numpy as np
import pytest
import torch

import kiln

# ---------------------------------------------------------------- helpers


def arr(t):
    if getattr(t, "is_sparse", False):
        t = t.to_dense()
    return np.array(t.detach().tolist())


def assert_close(k, t, rtol=1e-6, atol=1e-7):
    np.testing.assert_allclose(arr(k), arr(t), rtol=rtol, atol=atol)


def assert_same_sparse(k, t, rtol=1e-6, atol=1e-7):
    """Same layout, size, nnz, indices (in order), values and coalesced flag."""
    assert k.is_sparse and k.layout == kiln.sparse_coo
    assert tuple(k.shape) == tuple(t.shape)
    assert k._nnz() == t._nnz(), (k._indices().tolist(), t._indices().tolist())
    assert k.is_coalesced() == t.is_coalesced()
    assert k.sparse_dim() == t.sparse_dim() and list(k._values().shape) == list(t._values().shape)
    np.testing.assert_array_equal(np.array(k._indices().tolist(), dtype=np.int64).reshape(k.sparse_dim(), k._nnz()),
                                  np.array(t._indices().tolist(), dtype=np.int64).reshape(t.sparse_dim(), t._nnz()))
    np.testing.assert_allclose(np.array(k._values().tolist(), dtype=np.float64).reshape(list(k._values().shape)),
                               np.array(t._values().tolist(), dtype=np.float64).reshape(list(t._values().shape)),
                               rtol=rtol, atol=atol)


def pair_embedding(num=7, dim=3, seed=0, **kw):
    torch.manual_seed(seed)
    t = torch.nn.Embedding(num, dim, **kw)
    k = kiln.nn.Embedding(num, dim, **kw)
    with kiln.no_grad():
        k.weight.copy_(kiln.tensor(t.weight.detach().numpy()))
    return t, k


def idx(lib, data):
    return lib.tensor(data, dtype=lib.int64)


# ---------------------------------------------------------------- embedding(sparse=True)

@pytest.mark.parametrize("case", ["1d", "2d", "padding", "padding_negative", "repeat", "mul", "empty"])
def test_embedding_sparse_grad_matches_torch(case):
    data = {"1d": [1, 4, 2], "2d": [[0, 1, 3], [3, 4, 1]], "padding": [[0, 1, 3], [3, 4, 1]],
            "padding_negative": [5, 6, 6, 0], "repeat": [2, 2, 2, 5], "mul": [[1, 0], [0, 6]], "empty": []}[case]
    kw = {"padding": dict(padding_idx=1), "padding_negative": dict(padding_idx=-1)}.get(case, {})
    t, k = pair_embedding(sparse=True, **kw)
    for lib, m in ((torch, t), (kiln, k)):
        out = m(idx(lib, data))
        (out * out).sum().backward() if case == "mul" else out.sum().backward()
    assert_close(k(idx(kiln, data)), t(idx(torch, data)))
    gt, gk = t.weight.grad, k.weight.grad
    assert gk.is_sparse and not k.weight.is_sparse
    assert_same_sparse(gk, gt)
    assert_same_sparse(gk.coalesce(), gt.coalesce())
    assert_close(gk.to_dense(), gt.to_dense())
    if gt.is_coalesced():
        assert_close(gk.values(), gt.values())
    else:
        with pytest.raises(RuntimeError, match="uncoalesced"):
            gk.values()
        with pytest.raises(RuntimeError, match="uncoalesced"):
            gk.indices()
    c = gk.coalesce()
    assert c.indices().tolist() == gt.coalesce().indices().tolist()


def test_functional_embedding_sparse_and_grad_attributes():
    tw = torch.nn.Parameter(torch.randn(5, 4, dtype=torch.float64))
    kw = kiln.nn.Parameter(kiln.tensor(tw.detach().numpy()))
    for lib, w in ((torch, tw), (kiln, kw)):
        lib.nn.functional.embedding(idx(lib, [[4, 0], [0, 2]]), w, sparse=True).pow(3).sum().backward()
    assert kw.grad.dtype == kiln.float64
    assert_same_sparse(kw.grad, tw.grad)
    assert kw.grad.requires_grad is False and kw.grad.grad_fn is None
    assert "layout=kiln.sparse_coo" in repr(kw.grad)
    # no grad mode: a plain lookup
    with kiln.no_grad():
        assert not kiln.nn.functional.embedding(idx(kiln, [1]), kw, sparse=True).requires_grad


def test_accumulation_follows_torch():
    """Two backward calls: torch adds the sparse gradients by merging the index lists when both values
    are contiguous (a mul before the sum), by concatenating them otherwise."""
    for first_mul, second_mul in ((False, False), (False, True), (True, False), (True, True)):
        t, k = pair_embedding(6, 2, sparse=True)
        for lib, m in ((torch, t), (kiln, k)):
            for data, mul in (([0, 3, 3, 4], first_mul), ([3, 1, 5, 2], second_mul)):
                out = m(idx(lib, data))
                (out * 2 if mul else out).sum().backward()
        assert_same_sparse(k.weight.grad, t.weight.grad)
        assert_same_sparse(k.weight.grad.coalesce(), t.weight.grad.coalesce())


def test_weight_used_sparsely_twice():
    for mul in (False, True):
        tw = torch.nn.Parameter(torch.randn(6, 2))
        kw = kiln.nn.Parameter(kiln.tensor(tw.detach().numpy()))
        for lib, w in ((torch, tw), (kiln, kw)):
            F = lib.nn.functional
            a = F.embedding(idx(lib, [4, 0, 2]), w, sparse=True)
            b = F.embedding(idx(lib, [2, 5]), w, sparse=True)
            ((a * 2).sum() + (b * 3).sum() if mul else a.sum() + b.sum()).backward()
        assert_same_sparse(kw.grad.coalesce(), tw.grad.coalesce())
        assert_same_sparse(kw.grad, tw.grad)


def test_weight_used_sparsely_and_densely():
    tw = torch.nn.Parameter(torch.randn(6, 2))
    kw = kiln.nn.Parameter(kiln.tensor(tw.detach().numpy()))
    for lib, w in ((torch, tw), (kiln, kw)):
        (lib.nn.functional.embedding(idx(lib, [4, 0, 2]), w, sparse=True).sum() + (w * 2).sum()).backward()
    assert not kw.grad.is_sparse
    assert_close(kw.grad, tw.grad)
    # then a sparse gradient into the dense .grad: dense
    for lib, w in ((torch, tw), (kiln, kw)):
        lib.nn.functional.embedding(idx(lib, [1, 1]), w, sparse=True).sum().backward()
    assert not kw.grad.is_sparse
    assert_close(kw.grad, tw.grad)


@pytest.mark.parametrize("set_to_none", [True, False])
def test_zero_grad(set_to_none):
    t, k = pair_embedding(sparse=True)
    ot, ok = torch.optim.SGD(t.parameters(), lr=0.1), kiln.optim.SGD(k.parameters(), lr=0.1)
    for lib, m, o in ((torch, t, ot), (kiln, k, ok)):
        m(idx(lib, [1, 2, 1])).sum().backward()
        o.zero_grad(set_to_none=set_to_none)
    if set_to_none:
        assert k.weight.grad is None
    else:
        assert k.weight.grad.is_sparse and k.weight.grad._nnz() == 0 and tuple(k.weight.grad.shape) == (7, 3)
    for lib, m in ((torch, t), (kiln, k)):
        m(idx(lib, [3, 0])).mul(2).sum().backward()
    assert_same_sparse(k.weight.grad, t.weight.grad)
    k.zero_grad()
    assert k.weight.grad is None


def test_grad_assignment_and_hooks():
    _, k = pair_embedding(sparse=True)
    seen = []
    k.weight.register_hook(lambda g: seen.append(g.is_sparse))
    posted = []
    k.weight.register_post_accumulate_grad_hook(lambda p: posted.append(p.grad._nnz()))
    k(idx(kiln, [1, 2])).sum().backward()
    assert seen == [True] and posted == [2]
    g = k.weight.grad
    k.weight.grad = None
    assert k.weight.grad is None
    k.weight.grad = g
    assert k.weight.grad is g
    k.weight.grad = kiln.zeros(7, 3)
    assert not k.weight.grad.is_sparse
    with pytest.raises(RuntimeError, match="different size"):
        k.weight.grad = kiln.sparse_coo_tensor([[0]], [[1.0, 2.0]], (7, 2))
    k.weight.grad = g
    c = copy.deepcopy(k)  # a module whose parameter has a sparse .grad (torch's Parameter copy drops grads)
    assert c.weight.grad is None and c.weight.tolist() == k.weight.tolist()
    leaf = kiln.zeros(7, 3, requires_grad=True)
    leaf.grad = g
    c = copy.deepcopy(leaf)  # a tensor's deepcopy copies its .grad, sparse too
    assert c.grad.is_sparse and c.grad._values().tolist() == g._values().tolist() and c.grad is not g


def test_autograd_grad_gives_the_sparse_gradient():
    t, k = pair_embedding(sparse=True)
    (gt,) = torch.autograd.grad(t(idx(torch, [1, 1, 3])).sum(), [t.weight])
    (g,) = kiln.autograd.grad(k(idx(kiln, [1, 1, 3])).sum(), [k.weight])
    assert g.is_sparse and gt.is_sparse  # as torch: one row per looked-up index, in order
    assert g._indices().tolist() == gt._indices().tolist() and g._values().tolist() == gt._values().tolist()
    assert k.weight.grad is None and t.weight.grad is None


def test_scale_grad_by_freq_with_sparse_raises_as_torch():
    _, k = pair_embedding(sparse=True, scale_grad_by_freq=True)
    with pytest.raises(RuntimeError, match="scale_grad_by_freq not supported with sparse gradients"):
        k(idx(kiln, [1, 1])).sum().backward()


def test_max_norm_with_sparse():
    t, k = pair_embedding(sparse=True, max_norm=0.5)
    for lib, m in ((torch, t), (kiln, k)):
        m(idx(lib, [[1, 2], [2, 6]])).pow(2).sum().backward()
    assert_close(k.weight, t.weight)
    assert_same_sparse(k.weight.grad, t.weight.grad)


def test_clip_grad_norm_with_sparse_grads():
    t, k = pair_embedding(sparse=True)
    tl, kl = torch.nn.Linear(3, 2), kiln.nn.Linear(3, 2)
    with kiln.no_grad():
        kl.weight.copy_(kiln.tensor(tl.weight.detach().numpy()))
        kl.bias.copy_(kiln.tensor(tl.bias.detach().numpy()))
    for lib, m, lin in ((torch, t, tl), (kiln, k, kl)):
        lin(m(idx(lib, [1, 2, 1, 5]))).pow(2).sum().backward()
    params_t = list(t.parameters()) + list(tl.parameters())
    params_k = list(k.parameters()) + list(kl.parameters())
    nt = torch.nn.utils.clip_grad_norm_(params_t, 0.5)
    nk = kiln.nn.utils.clip_grad_norm_(params_k, 0.5)
    np.testing.assert_allclose(float(nk), float(nt), rtol=1e-6)
    assert_same_sparse(k.weight.grad, t.weight.grad)
    assert_close(kl.weight.grad, tl.weight.grad)


# ---------------------------------------------------------------- EmbeddingBag(sparse=True)

@pytest.mark.parametrize("mode", ["sum", "mean"])
@pytest.mark.parametrize("case", ["offsets", "2d", "padding", "last_offset", "psw"])
def test_embedding_bag_sparse_matches_torch(mode, case):
    if case == "psw" and mode != "sum":
        pytest.skip("per_sample_weights: sum only")
    torch.manual_seed(1)
    kw = dict(padding_idx=4) if case == "padding" else {}
    if case == "last_offset":
        kw["include_last_offset"] = True
    t = torch.nn.EmbeddingBag(6, 3, mode=mode, sparse=True, **kw)
    k = kiln.nn.EmbeddingBag(6, 3, mode=mode, sparse=True, **kw)
    with kiln.no_grad():
        k.weight.copy_(kiln.tensor(t.weight.detach().numpy()))
    data = [1, 2, 4, 5, 4, 3, 2, 0]
    offsets = {"last_offset": [0, 2, 2, 5, 8]}.get(case, [0, 2, 2, 5])
    psw = np.random.RandomState(0).rand(8).astype(np.float32)
    tpsw = torch.tensor(psw, requires_grad=True)
    kpsw = kiln.tensor(psw, requires_grad=True)
    outs = []
    for lib, m, p in ((torch, t, tpsw), (kiln, k, kpsw)):
        if case == "2d":
            out = m(idx(lib, [[1, 2, 4], [5, 4, 3]]))
        else:
            out = m(idx(lib, data), idx(lib, offsets), per_sample_weights=p if case == "psw" else None)
        outs.append(out)
        out.pow(2).sum().backward()
    assert_close(outs[1], outs[0], rtol=1e-5)
    assert_same_sparse(k.weight.grad, t.weight.grad, rtol=1e-5)
    if case == "psw":
        assert_close(kpsw.grad, tpsw.grad, rtol=1e-5)


def test_embedding_bag_sparse_errors():
    w = kiln.nn.Parameter(kiln.randn(5, 2))
    with pytest.raises(ValueError, match="max mode does not support sparse weights"):
        kiln.nn.functional.embedding_bag(idx(kiln, [[1, 2]]), w, mode="max", sparse=True)


# ---------------------------------------------------------------- optimizers

def sparse_step_pair(opt_name, steps=3, num=8, dim=4, **opt_kw):
    t, k = pair_embedding(num, dim, sparse=True, seed=3)
    ot = getattr(torch.optim, opt_name)(t.parameters(), **opt_kw)
    ok = getattr(kiln.optim, opt_name)(k.parameters(), **opt_kw)
    batches = [[1, 2, 1, 7], [3, 2], [0, 0, 5, 2, 1], [6]]
    for step in range(steps):
        data = batches[step % len(batches)]
        for lib, m, o in ((torch, t, ot), (kiln, k, ok)):
            o.zero_grad()
            out = m(idx(lib, data))
            (out * out).sum().backward() if step % 2 else out.sum().backward()
            o.step()
        assert_close(k.weight, t.weight, rtol=1e-6, atol=1e-7)
    return t, k, ot, ok


@pytest.mark.parametrize("kw", [dict(lr=0.1), dict(lr=0.1, maximize=True), dict(lr=0.1, momentum=0.9),
                                dict(lr=0.1, momentum=0.9, dampening=0.1),
                                dict(lr=0.05, momentum=0.5, nesterov=True)], ids=str)
def test_sgd_sparse_matches_torch(kw):
    t, k, ot, ok = sparse_step_pair("SGD", steps=4, **kw)
    if kw.get("momentum"):
        assert_same_sparse(ok.state[k.weight]["momentum_buffer"], ot.state[t.weight]["momentum_buffer"])


def test_sgd_sparse_momentum_state_dict_round_trip():
    t, k, ot, ok = sparse_step_pair("SGD", steps=2, lr=0.1, momentum=0.9)
    ok2 = kiln.optim.SGD(k.parameters(), lr=0.1, momentum=0.9)
    ok2.load_state_dict(ok.state_dict())
    buf = ok2.state[k.weight]["momentum_buffer"]
    assert buf is not ok.state[k.weight]["momentum_buffer"]
    assert_same_sparse(buf, ot.state[t.weight]["momentum_buffer"])
    for lib, m, o in ((torch, t, ot), (kiln, k, ok2)):
        o.zero_grad()
        m(idx(lib, [4, 1])).sum().backward()
        o.step()
    assert_close(k.weight, t.weight)
    assert_same_sparse(ok2.state[k.weight]["momentum_buffer"], ot.state[t.weight]["momentum_buffer"])


def test_sparse_tensors_in_checkpoints_both_ways(tmp_path):
    """kiln.save writes a sparse gradient or momentum buffer as torch does (_rebuild_sparse_tensor), and
    kiln.load reads torch's."""
    t, k, ot, ok = sparse_step_pair("SGD", steps=2, lr=0.1, momentum=0.9)
    kiln.save({"opt": ok.state_dict(), "grad": k.weight.grad}, tmp_path / "k.pt")
    from_kiln = torch.load(tmp_path / "k.pt")
    assert_same_sparse(ok.state[k.weight]["momentum_buffer"], from_kiln["opt"]["state"][0]["momentum_buffer"])
    assert_same_sparse(k.weight.grad, from_kiln["grad"])
    torch.save({"opt": ot.state_dict(), "grad": t.weight.grad}, tmp_path / "t.pt")
    for weights_only in (True, False):
        from_torch = kiln.load(tmp_path / "t.pt", weights_only=weights_only)
        assert_same_sparse(from_torch["opt"]["state"][0]["momentum_buffer"], ot.state[t.weight]["momentum_buffer"])
        assert_same_sparse(from_torch["grad"], t.weight.grad)


def test_sgd_sparse_weight_decay_raises_as_torch():
    with pytest.raises(RuntimeError, match=r"add\(sparse, dense\) is not supported"):
        sparse_step_pair("SGD", steps=1, lr=0.1, weight_decay=0.1)


@pytest.mark.parametrize("kw", [dict(lr=0.1), dict(lr=0.1, lr_decay=0.01, initial_accumulator_value=0.1),
                                dict(lr=0.1, maximize=True)], ids=str)
def test_adagrad_sparse_matches_torch(kw):
    t, k, ot, ok = sparse_step_pair("Adagrad", steps=4, **kw)
    assert_close(ok.state[k.weight]["sum"], ot.state[t.weight]["sum"])


def test_adagrad_sparse_weight_decay_raises_as_torch():
    with pytest.raises(RuntimeError, match="weight_decay option is not compatible with sparse gradients"):
        sparse_step_pair("Adagrad", steps=1, lr=0.1, weight_decay=0.1)


@pytest.mark.parametrize("kw", [dict(), dict(lr=0.01, betas=(0.8, 0.9), eps=1e-6), dict(lr=0.01, maximize=True)],
                         ids=str)
def test_sparse_adam_matches_torch(kw):
    t, k, ot, ok = sparse_step_pair("SparseAdam", steps=5, **kw)
    st, sk = ot.state[t.weight], ok.state[k.weight]
    assert sk["step"] == st["step"] == 5
    assert_close(sk["exp_avg"], st["exp_avg"])
    assert_close(sk["exp_avg_sq"], st["exp_avg_sq"])


@pytest.mark.parametrize("name,message", [
    ("Adam", "Adam does not support sparse gradients, please consider SparseAdam instead"),
    ("AdamW", "AdamW does not support sparse gradients"), ("RMSprop", "RMSprop does not support sparse gradients"),
    ("Adadelta", "Adadelta does not support sparse gradients"), ("Adamax", "Adamax does not support sparse gradients"),
    ("NAdam", "NAdam does not support sparse gradients"), ("RAdam", "RAdam does not support sparse gradients"),
    ("Rprop", "Rprop does not support sparse gradients"), ("ASGD", "ASGD does not support sparse gradients")])
def test_optimizers_without_sparse_support_raise_as_torch(name, message):
    _, k = pair_embedding(sparse=True)
    k(idx(kiln, [1])).sum().backward()
    o = getattr(kiln.optim, name)(k.parameters())
    with pytest.raises(RuntimeError) as info:
        o.step()
    assert str(info.value) == message


def test_sparse_adam_errors():
    _, k = pair_embedding()
    k(idx(kiln, [1])).sum().backward()
    with pytest.raises(RuntimeError, match="SparseAdam does not support dense gradients, please consider Adam instead"):
        kiln.optim.SparseAdam(k.parameters()).step()
    with pytest.raises(ValueError, match=r"Sparse params at indices \[0\]: SparseAdam requires dense parameter"):
        kiln.optim.SparseAdam([kiln.zeros(2).to_sparse()])
    with pytest.raises(ValueError, match="Invalid learning rate: 0"):
        kiln.optim.SparseAdam(k.parameters(), lr=0)
    with pytest.raises(ValueError, match="Invalid epsilon value"):
        kiln.optim.SparseAdam(k.parameters(), eps=0)
    with pytest.raises(ValueError, match="Invalid beta parameter at index 1"):
        kiln.optim.SparseAdam(k.parameters(), betas=(0.9, 1.0))
    assert kiln.optim.SparseAdam(k.parameters()).defaults == torch.optim.SparseAdam(
        torch.nn.Embedding(2, 2).parameters()).defaults


def test_sparse_adam_state_dict_round_trip():
    t, k, ot, ok = sparse_step_pair("SparseAdam", steps=2, lr=0.01)
    sd = ok.state_dict()
    assert sd["param_groups"][0]["lr"] == 0.01 and sd["state"][0]["step"] == 2
    # a fresh optimizer and module from the state dicts continue as the original
    k2 = kiln.nn.Embedding(8, 4, sparse=True)
    k2.load_state_dict(k.state_dict())
    ok2 = kiln.optim.SparseAdam(k2.parameters(), lr=0.5)
    ok2.load_state_dict(sd)
    assert ok2.param_groups[0]["lr"] == 0.01
    for lib, m, o in ((torch, t, ot), (kiln, k2, ok2)):
        o.zero_grad()
        m(idx(lib, [2, 3, 2])).pow(2).sum().backward()
        o.step()
    assert_close(k2.weight, t.weight)
    # kiln.save / kiln.load of the state dicts
    import io
    buf = io.BytesIO()
    kiln.save({"model": k2.state_dict(), "opt": ok2.state_dict()}, buf)
    buf.seek(0)
    loaded = kiln.load(buf)
    assert_close(loaded["model"]["weight"], t.weight)
    assert_close(loaded["opt"]["state"][0]["exp_avg"], ot.state[t.weight]["exp_avg"])


# ---------------------------------------------------------------- word2vec (skip-gram, negative sampling)

class SkipGram:
    """Two embedding tables (centre and context words), sparse gradients, the SGNS loss."""

    def __init__(self, lib, vocab, dim, u, v):
        self.lib = lib
        self.u = lib.nn.Embedding(vocab, dim, sparse=True)
        self.v = lib.nn.Embedding(vocab, dim, sparse=True)
        with lib.no_grad():
            self.u.weight.copy_(lib.tensor(u))
            self.v.weight.copy_(lib.tensor(v))

    def parameters(self):
        return list(self.u.parameters()) + list(self.v.parameters())

    def loss(self, centre, context, negatives):
        F = self.lib.nn.functional
        emb_u = self.u(centre)                        # [B, D]
        emb_v = self.v(context)                       # [B, D]
        emb_neg = self.v(negatives)                   # [B, K, D]: the context table used twice
        pos = F.logsigmoid((emb_u * emb_v).sum(1))
        neg = F.logsigmoid(-self.lib.bmm(emb_neg, emb_u.unsqueeze(2)).squeeze(2)).sum(1)
        return -(pos + neg).mean()


def test_word2vec_skipgram_sparse_adam_matches_torch():
    rng = np.random.RandomState(0)
    vocab, dim, batch, k_neg = 50, 8, 16, 5
    u = ((rng.rand(vocab, dim) - 0.5) / dim).astype(np.float32)
    v = (rng.randn(vocab, dim) * 0.1).astype(np.float32)
    models = {lib: SkipGram(lib, vocab, dim, u, v) for lib in (torch, kiln)}
    opts = {lib: lib.optim.SparseAdam(models[lib].parameters(), lr=0.01) for lib in (torch, kiln)}
    for step in range(8):
        centre = rng.randint(0, vocab, batch)
        context = rng.randint(0, vocab, batch)
        negatives = rng.randint(0, vocab, (batch, k_neg))
        losses = {}
        for lib in (torch, kiln):
            opts[lib].zero_grad()
            loss = models[lib].loss(idx(lib, centre.tolist()), idx(lib, context.tolist()),
                                    idx(lib, negatives.tolist()))
            loss.backward()
            assert models[lib].v.weight.grad.is_sparse
            opts[lib].step()
            losses[lib] = loss.item()
        np.testing.assert_allclose(losses[kiln], losses[torch], rtol=1e-5)
        assert_same_sparse(models[kiln].v.weight.grad, models[torch].v.weight.grad, rtol=1e-5, atol=1e-7)
        assert_same_sparse(models[kiln].v.weight.grad.coalesce(), models[torch].v.weight.grad.coalesce(),
                           rtol=1e-5, atol=1e-7)
    for table in ("u", "v"):
        assert_close(getattr(models[kiln], table).weight, getattr(models[torch], table).weight, rtol=1e-5,
                     atol=1e-6)


def test_word2vec_skipgram_sgd_matches_torch():
    rng = np.random.RandomState(1)
    vocab, dim, batch, k_neg = 30, 6, 8, 3
    u = ((rng.rand(vocab, dim) - 0.5) / dim).astype(np.float32)
    v = (rng.randn(vocab, dim) * 0.1).astype(np.float32)
    models = {lib: SkipGram(lib, vocab, dim, u, v) for lib in (torch, kiln)}
    opts = {lib: lib.optim.SGD(models[lib].parameters(), lr=0.5) for lib in (torch, kiln)}
    for step in range(5):
        data = rng.randint(0, vocab, batch), rng.randint(0, vocab, batch), rng.randint(0, vocab, (batch, k_neg))
        losses = {}
        for lib in (torch, kiln):
            opts[lib].zero_grad()
            loss = models[lib].loss(*(idx(lib, d.tolist()) for d in data))
            loss.backward()
            opts[lib].step()
            losses[lib] = loss.item()
        np.testing.assert_allclose(losses[kiln], losses[torch], rtol=1e-5)
    for table in ("u", "v"):
        assert_close(getattr(models[kiln], table).weight, getattr(models[torch], table).weight, rtol=1e-5,
                     atol=1e-6)


def test_module_repr_as_torch():
    for kw in (dict(sparse=True), dict(sparse=True, padding_idx=0, max_norm=1.0, norm_type=1.0),
               dict(scale_grad_by_freq=True)):
        assert repr(kiln.nn.Embedding(7, 3, **kw)) == repr(torch.nn.Embedding(7, 3, **kw))
    assert repr(kiln.nn.EmbeddingBag(7, 3, sparse=True)) == repr(torch.nn.EmbeddingBag(7, 3, sparse=True))


@pytest.mark.parametrize("case", ["2d_merge", "concat", "empty_left", "empty_right", "alpha"])
def test_sparse_add_follows_torch(case):
    """torch's CPU sparse + sparse: the index lists merged as they stand when both values are contiguous,
    concatenated otherwise (an expanded values tensor), one side empty: the other."""
    def make(lib):
        a = lib.sparse_coo_tensor([[0, 1, 1], [2, 0, 2]], lib.tensor([1.0, 2.0, 3.0]), (3, 3))
        b_values = lib.tensor([2.0]).expand(2) if case == "concat" else lib.tensor([2.0, 5.0])
        b = lib.sparse_coo_tensor([[1, 0], [0, 1]], b_values, (3, 3))
        if case == "empty_left":
            a = lib.sparse_coo_tensor(lib.zeros(2, 0, dtype=lib.int64), lib.zeros(0), (3, 3))
        if case == "empty_right":
            b = lib.sparse_coo_tensor(lib.zeros(2, 0, dtype=lib.int64), lib.zeros(0), (3, 3))
        return a.add(b, alpha=0.5) if case == "alpha" else a + b
    assert_same_sparse(make(kiln), make(torch))


def test_embedding_bag_per_sample_weights_gradient_with_a_frozen_weight():
    """(torch 1.13 fails an internal assert with a frozen weight: its weight requires grad here, which does
    not change the per_sample_weights' gradient.)"""
    torch.manual_seed(0)
    t = torch.nn.EmbeddingBag(5, 2, mode="sum")
    k = kiln.nn.EmbeddingBag(5, 2, mode="sum", sparse=True)
    with kiln.no_grad():
        k.weight.copy_(kiln.tensor(t.weight.detach().numpy()))
    k.weight.requires_grad_(False)
    tp, kp = torch.tensor([0.5, 2.0, 1.5], requires_grad=True), kiln.tensor([0.5, 2.0, 1.5], requires_grad=True)
    for lib, m, p in ((torch, t, tp), (kiln, k, kp)):
        m(idx(lib, [1, 3, 1]), idx(lib, [0, 1]), per_sample_weights=p).pow(2).sum().backward()
    assert k.weight.grad is None
    assert_close(kp.grad, tp.grad)


def test_leaf_hook_may_replace_the_sparse_gradient():
    t, k = pair_embedding(sparse=True)
    for lib, m in ((torch, t), (kiln, k)):
        m.weight.register_hook(lambda g: g * 3)
        m(idx(lib, [2, 0, 2])).sum().backward()
    assert_same_sparse(k.weight.grad, t.weight.grad)
