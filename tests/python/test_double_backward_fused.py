"""Double backward (autograd.grad with create_graph=True, then a second backward) through the ops
whose gradients are fused kernels: LSTM and GRU (layers and cells), LSTMCell, scaled dot-product
attention, MultiheadAttention, layer_norm, softmax/log_softmax, cross_entropy, conv, batch_norm and
embedding. Each case runs the same computation with the same float64 weights in torch 1.13 and kiln:
the first-order gradients (with a graph) and the gradients of a random projection of them must
agree. torch 1.13 has no scaled_dot_product_attention: there the reference is torch's math
composition softmax(q k^T * scale + mask) v."""
import math

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import kiln  # noqa: E402


def _k(t):
    return kiln.tensor(t.detach().numpy(), requires_grad=t.requires_grad)


def _close(k, t, rtol=1e-6, atol=1e-8):
    assert k is not None and t is not None
    np.testing.assert_allclose(k.detach().numpy(), t.detach().numpy(), rtol=rtol, atol=atol)


def _second_order(L, loss, wrt, seed=0):
    """First-order gradients of `loss` w.r.t. `wrt` with a graph, then the gradient of
    sum(g_i * r_i) (fixed random r_i) w.r.t. `wrt`: returns (first, second)."""
    first = L.autograd.grad(loss, wrt, create_graph=True)
    rng = np.random.RandomState(seed)
    total = 0
    for g in first:
        r = L.tensor(rng.randn(*g.shape), dtype=g.dtype)
        total = total + (g * r).sum()
    second = L.autograd.grad(total, wrt, allow_unused=True)
    return first, second


def _compare(run, rtol=1e-6, atol=1e-8):
    """run(L) -> (loss, wrt) built identically in both libraries."""
    lt, wt = run(torch)
    lk, wk = run(kiln)
    ft, st = _second_order(torch, lt, wt)
    fk, sk = _second_order(kiln, lk, wk)
    assert len(fk) == len(ft)
    for a, b in zip(fk, ft):
        _close(a, b, rtol, atol)
    for a, b in zip(sk, st):
        if b is None:
            assert a is None or np.allclose(a.numpy(), 0)
        else:
            _close(a, b, rtol, atol)


def _twin(make_torch, make_kiln):
    """A torch module in float64 with seeded weights and its kiln twin holding the same values."""
    torch.manual_seed(0)
    t = make_torch().double()
    k = make_kiln().double()
    k.load_state_dict({n: kiln.tensor(v.numpy()) for n, v in t.state_dict().items()})
    return {torch: t, kiln: k}


def _data(*shape, seed=1):
    return np.random.RandomState(seed).randn(*shape)


def _params(L, m):
    return [p for p in m.parameters()]


# ---- recurrent layers and cells ----
RNN_CASES = [
    ("lstm", dict(input_size=3, hidden_size=4)),
    ("lstm", dict(input_size=3, hidden_size=4, num_layers=2, bidirectional=True)),
    ("lstm", dict(input_size=3, hidden_size=4, proj_size=2)),
    ("lstm", dict(input_size=3, hidden_size=4, batch_first=True, bidirectional=True, proj_size=3)),
    ("gru", dict(input_size=3, hidden_size=4)),
    ("gru", dict(input_size=3, hidden_size=4, num_layers=2, bidirectional=True, batch_first=True)),
]


@pytest.mark.parametrize("kind,kw", RNN_CASES)
def test_rnn_layers(kind, kw):
    cls = {"lstm": "LSTM", "gru": "GRU"}[kind]
    mods = _twin(lambda: getattr(torch.nn, cls)(**kw), lambda: getattr(kiln.nn, cls)(**kw))
    x = _data(2, 5, 3) if kw.get("batch_first") else _data(5, 2, 3)

    def run(L):
        m = mods[L]
        inp = L.tensor(x, requires_grad=True)
        out, state = m(inp)
        h = state[0] if kind == "lstm" else state
        loss = out.tanh().pow(2).sum() + h.pow(3).sum()
        if kind == "lstm":
            loss = loss + state[1].sin().sum()
        return loss, [inp] + _params(L, m)
    _compare(run)


def test_lstm_packed_sequences_and_initial_state():
    mods = _twin(lambda: torch.nn.LSTM(3, 4, bidirectional=True), lambda: kiln.nn.LSTM(3, 4, bidirectional=True))
    x, h0, c0 = _data(4, 3, 3), _data(2, 3, 4, seed=2), _data(2, 3, 4, seed=3)

    def run(L):
        m = mods[L]
        inp = L.tensor(x, requires_grad=True)
        h, c = L.tensor(h0, requires_grad=True), L.tensor(c0, requires_grad=True)
        packed = L.nn.utils.rnn.pack_padded_sequence(inp, [4, 3, 2])
        out, (hn, cn) = m(packed, (h, c))
        padded, _ = L.nn.utils.rnn.pad_packed_sequence(out)
        loss = padded.pow(2).sum() + hn.sigmoid().sum() + cn.pow(2).sum()
        return loss, [inp, h, c] + _params(L, m)
    _compare(run)


@pytest.mark.parametrize("cls", ["LSTMCell", "GRUCell"])
def test_rnn_cells(cls):
    mods = _twin(lambda: getattr(torch.nn, cls)(3, 4), lambda: getattr(kiln.nn, cls)(3, 4))
    x, h0, c0 = _data(2, 3), _data(2, 4, seed=2), _data(2, 4, seed=3)

    def run(L):
        m = mods[L]
        inp, h = L.tensor(x, requires_grad=True), L.tensor(h0, requires_grad=True)
        if cls == "LSTMCell":
            c = L.tensor(c0, requires_grad=True)
            hy, cy = m(inp, (h, c))
            hy, cy = m(inp, (hy, cy))  # two steps: the state's own second derivatives
            return hy.pow(3).sum() + cy.tanh().sum(), [inp, h, c] + _params(L, m)
        hy = m(inp, m(inp, h))
        return hy.pow(3).sum(), [inp, h] + _params(L, m)
    _compare(run)


def test_first_order_gradient_unchanged_by_create_graph():
    # the fused kernel (no graph) and the composition (graph) give the same gradient
    m = kiln.nn.LSTM(3, 4, num_layers=2).double()
    x = kiln.tensor(_data(5, 2, 3), requires_grad=True)
    fused = kiln.autograd.grad(m(x)[0].pow(2).sum(), [x] + list(m.parameters()))
    composed = kiln.autograd.grad(m(x)[0].pow(2).sum(), [x] + list(m.parameters()), create_graph=True)
    for a, b in zip(fused, composed):
        assert a.grad_fn is None
        np.testing.assert_allclose(a.numpy(), b.detach().numpy(), rtol=1e-10, atol=1e-12)
    assert composed[0].grad_fn is not None


def test_third_order_gru_cell():
    # the composition is differentiable again: a third derivative, against torch
    mods = _twin(lambda: torch.nn.GRUCell(2, 3), lambda: kiln.nn.GRUCell(2, 3))
    x = _data(2, 2)
    res = {}
    for L in (torch, kiln):
        inp = L.tensor(x, requires_grad=True)
        y = mods[L](inp).pow(2).sum()
        (g,) = L.autograd.grad(y, inp, create_graph=True)
        (gg,) = L.autograd.grad(g.pow(2).sum(), inp, create_graph=True)
        (ggg,) = L.autograd.grad(gg.sum(), inp)
        res[L] = ggg
    _close(res[kiln], res[torch])


# ---- attention ----
def _attention_reference(q, k, v, mask=None, is_causal=False, scale=None):
    scale = 1 / math.sqrt(q.shape[-1]) if scale is None else scale
    scores = q @ k.transpose(-2, -1) * scale
    if is_causal:
        L_, S = q.shape[-2], k.shape[-2]
        scores = scores.masked_fill(~torch.ones(L_, S, dtype=torch.bool).tril(), float("-inf"))
    elif mask is not None:
        scores = scores.masked_fill(~mask, float("-inf")) if mask.dtype == torch.bool else scores + mask
    return torch.softmax(scores, -1) @ v


SDPA_MASKS = ["none", "causal", "bool", "float", "scale"]


@pytest.mark.parametrize("mask_kind", SDPA_MASKS)
def test_scaled_dot_product_attention(mask_kind):
    q, k, v = _data(2, 3, 4, 5), _data(2, 3, 6, 5, seed=2), _data(2, 3, 6, 5, seed=3)
    bool_mask = np.random.RandomState(4).rand(4, 6) > 0.3
    bool_mask[:, 0] = True  # every query sees a key
    float_mask = _data(4, 6, seed=5)

    def args(L):
        kw = {}
        if mask_kind == "causal":
            kw["is_causal"] = True
        elif mask_kind == "bool":
            kw["mask"] = L.tensor(bool_mask)
        elif mask_kind == "float":
            kw["mask"] = L.tensor(float_mask)
        elif mask_kind == "scale":
            kw["scale"] = 0.3
        return kw

    def run(L):
        qq, kk, vv = (L.tensor(a, requires_grad=True) for a in (q, k, v))
        kw = args(L)
        if L is torch:
            out = _attention_reference(qq, kk, vv, **kw)
        else:
            out = kiln.nn.functional.scaled_dot_product_attention(
                qq, kk, vv, attn_mask=kw.get("mask"), is_causal=kw.get("is_causal", False), scale=kw.get("scale"))
        return out.pow(3).sum(), [qq, kk, vv]
    _compare(run)


@pytest.mark.parametrize("need_weights", [True, False])  # False: kiln's fused attention kernel
@pytest.mark.parametrize("batch_first", [False, True])
def test_multihead_attention(batch_first, need_weights):
    mods = _twin(lambda: torch.nn.MultiheadAttention(8, 2, batch_first=batch_first),
                 lambda: kiln.nn.MultiheadAttention(8, 2, batch_first=batch_first))
    x = _data(3, 4, 8) if batch_first else _data(4, 3, 8)  # 4 positions, batch of 3
    mask = np.triu(np.ones((4, 4), dtype=bool), 1)

    def run(L):
        m = mods[L]
        inp = L.tensor(x, requires_grad=True)
        out, _ = m(inp, inp, inp, attn_mask=L.tensor(mask), need_weights=need_weights)
        return out.pow(2).sum(), [inp] + _params(L, m)
    _compare(run)


# ---- other ops with fused backward kernels ----
def test_layer_norm():
    mods = _twin(lambda: torch.nn.LayerNorm(5), lambda: kiln.nn.LayerNorm(5))

    def run(L):
        inp = L.tensor(_data(3, 5), requires_grad=True)
        return mods[L](inp).pow(3).sum(), [inp] + _params(L, mods[L])
    _compare(run)


@pytest.mark.parametrize("fn", ["softmax", "log_softmax"])
def test_softmax(fn):
    def run(L):
        inp = L.tensor(_data(3, 5), requires_grad=True)
        return getattr(L.nn.functional, fn)(inp, dim=1).pow(3).sum(), [inp]
    _compare(run)


def test_cross_entropy():
    target = [1, 0, 4]

    def run(L):
        inp = L.tensor(_data(3, 5), requires_grad=True)
        return L.nn.functional.cross_entropy(inp, L.tensor(target), label_smoothing=0.1), [inp]
    _compare(run)


def test_conv2d():
    mods = _twin(lambda: torch.nn.Conv2d(2, 3, 3, padding=1), lambda: kiln.nn.Conv2d(2, 3, 3, padding=1))

    def run(L):
        inp = L.tensor(_data(2, 2, 5, 5), requires_grad=True)
        return mods[L](inp).pow(2).sum(), [inp] + _params(L, mods[L])
    _compare(run)


def test_batch_norm():
    mods = _twin(lambda: torch.nn.BatchNorm1d(4), lambda: kiln.nn.BatchNorm1d(4))

    def run(L):
        inp = L.tensor(_data(6, 4), requires_grad=True)
        return mods[L](inp).pow(3).sum(), [inp] + _params(L, mods[L])
    _compare(run)


def test_embedding():
    mods = _twin(lambda: torch.nn.Embedding(6, 3), lambda: kiln.nn.Embedding(6, 3))

    def run(L):
        return mods[L](L.tensor([[1, 2, 1], [5, 0, 2]])).pow(3).sum(), _params(L, mods[L])
    _compare(run)
