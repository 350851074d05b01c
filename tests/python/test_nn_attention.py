"""kiln.nn's attention and transformer modules against torch's: each module built with the same
arguments, torch's state_dict loaded into kiln's (the key lists must be equal), then the outputs and
the gradients of every input and parameter compared, in float64 and float32.

torch here is 1.13; where it lacks a torch 2.x feature (F.scaled_dot_product_attention, the layers'
bias= argument, the *_is_causal hints) the reference is written by hand in torch ops, as the 2.x
documentation defines it."""
import copy
import math
import warnings

import numpy as np
import pytest

import kiln
import kiln.nn as knn
import kiln.nn.functional as KF

torch = pytest.importorskip("torch")
# torch 2.x warns when a bool key padding mask meets a float attention mask (Transformer users see it too)
pytestmark = pytest.mark.filterwarnings("ignore:Support for mismatched")
tnn = torch.nn
TF = torch.nn.functional

TOL = {torch.float64: dict(atol=1e-10, rtol=1e-8), torch.float32: dict(atol=2e-5, rtol=2e-4)}
KDTYPE = {torch.float64: kiln.float64, torch.float32: kiln.float32}


def k(t):
    return kiln.from_numpy(t.detach().numpy().copy())


def quiet(fn, *args, **kwargs):
    """fn(...) with torch's and kiln's nested-tensor warnings silenced."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="enable_nested_tensor is True")
        return fn(*args, **kwargs)


def paired(t_make, k_make, dtype=torch.float64, drop=()):
    """torch's module and kiln's, with torch's weights; their state_dict key lists must match (less
    the keys in `drop`, which kiln's module lacks)."""
    torch.manual_seed(0)
    tm = quiet(t_make).to(dtype)
    km = quiet(k_make).to(KDTYPE[dtype])
    t_keys = [n for n in tm.state_dict() if n not in drop]
    assert list(km.state_dict()) == t_keys
    km.load_state_dict({n: k(v) for n, v in tm.state_dict().items() if n not in drop})
    return tm, km


def to_kiln(args, memo):
    """torch args (tensors, None, other values) as kiln's; the same torch tensor gives the same kiln
    tensor (q is k is v picks torch's packed projection), floating inputs become leaves with grad."""
    out = []
    for a in args:
        if isinstance(a, torch.Tensor):
            if id(a) not in memo:
                memo[id(a)] = k(a).requires_grad_(a.requires_grad)
            out.append(memo[id(a)])
        else:
            out.append(a)
    return out


def flat(out):
    if isinstance(out, (tuple, list)):
        return [t for o in out for t in flat(o)]
    return [out]


def compare(tm, km, args, kwargs=None, k_extra=None, dtype=torch.float64, check_grads=True):
    """Runs torch's module on args/kwargs and kiln's on the same (plus k_extra, kiln-only kwargs);
    compares every output, then the gradients of sum(out_i * w_i) for every input and parameter."""
    kwargs = kwargs or {}
    names = list(kwargs)
    tm.zero_grad()
    km.zero_grad()
    for a in list(args) + list(kwargs.values()):
        if isinstance(a, torch.Tensor):
            a.grad = None
    memo = {}
    k_args = to_kiln(args, memo)
    k_kwargs = dict(zip(names, to_kiln([kwargs[n] for n in names], memo)), **(k_extra or {}))
    # torch 1.13 drops a float key padding mask when the attention mask is float too (its
    # attn_mask.masked_fill(float mask) does nothing; 2.x adds them), so torch gets it as bool
    kwargs = {n: (m == float("-inf") if "key_padding_mask" in n and isinstance(m, torch.Tensor)
                  and m.is_floating_point() else m) for n, m in kwargs.items()}
    t_out, k_out = flat(tm(*args, **kwargs)), flat(km(*k_args, **k_kwargs))
    assert len(t_out) == len(k_out)
    for a, b in zip(t_out, k_out):
        assert (a is None) == (b is None)
        if a is not None:
            assert tuple(a.shape) == tuple(b.shape)
            np.testing.assert_allclose(b.detach().numpy(), a.detach().numpy(), **TOL[dtype])
    if not check_grads:
        return t_out, k_out
    rng = np.random.default_rng(1)
    pairs = [(a, b) for a, b in zip(t_out, k_out) if a is not None and a.requires_grad]
    ws = [rng.standard_normal(tuple(a.shape)) for a, _ in pairs]
    sum((a * torch.from_numpy(w).to(a.dtype)).sum() for (a, _), w in zip(pairs, ws)).backward()
    sum((b * k(torch.from_numpy(w).to(a.dtype))).sum() for (a, b), w in zip(pairs, ws)).backward()
    k_params = dict(km.named_parameters())
    for name, tp in tm.named_parameters():
        if tp.grad is None:
            continue
        np.testing.assert_allclose(k_params[name].grad.numpy(), tp.grad.numpy(), err_msg=name, **TOL[dtype])
    for a in list(args) + list(kwargs.values()):
        if isinstance(a, torch.Tensor) and a.requires_grad:
            np.testing.assert_allclose(memo[id(a)].grad.numpy(), a.grad.numpy(), **TOL[dtype])
    return t_out, k_out


def rand(*shape, dtype=torch.float64, grad=True):
    return torch.randn(*shape, dtype=dtype).requires_grad_(grad)


def causal_bool(L, S=None):
    """torch's MHA convention: True = masked (the future)."""
    return torch.ones(L, S or L, dtype=torch.bool).triu(1)


def padding_bool(N, S):
    """[N, S], True = padding: batch b pads its last b keys (at least one key stays)."""
    m = torch.zeros(N, S, dtype=torch.bool)
    for b in range(N):
        if b:
            m[b, S - min(b, S - 1):] = True
    return m


def as_float(mask, dtype):
    return torch.zeros(mask.shape, dtype=dtype).masked_fill(mask, float("-inf"))


# ----------------------------------------------------------------------------- scaled_dot_product_attention
def sdpa_reference(q, k, v, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None):
    """torch 2.x's documented definition, in torch 1.13 ops."""
    L, S = q.size(-2), k.size(-2)
    scale = 1 / math.sqrt(q.size(-1)) if scale is None else scale
    bias = torch.zeros(L, S, dtype=q.dtype)
    if is_causal:
        bias = bias.masked_fill(torch.ones(L, S, dtype=torch.bool).tril().logical_not(), float("-inf"))
    if attn_mask is not None:
        if attn_mask.dtype == torch.bool:
            bias = bias.masked_fill(attn_mask.logical_not(), float("-inf"))
        else:
            bias = attn_mask + bias
    w = torch.softmax(q @ k.transpose(-2, -1) * scale + bias, dim=-1)
    if dropout_p > 0:
        w = torch.dropout(w, dropout_p, True)
    return w @ v


def sdpa_compare(dtype, q, k_, v, **kw):
    tq, tk, tv = (t.clone().requires_grad_() for t in (q, k_, v))
    kq, kk, kv = (k(t).requires_grad_() for t in (q, k_, v))
    kkw = {n: (k(a) if isinstance(a, torch.Tensor) else a) for n, a in kw.items()}
    seed = 7
    torch.manual_seed(seed)
    want = sdpa_reference(tq, tk, tv, **kw)
    kiln.manual_seed(seed)
    got = KF.scaled_dot_product_attention(kq, kk, kv, **kkw)
    np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), **TOL[dtype])
    w = torch.randn(want.shape, dtype=dtype)
    (want * w).sum().backward()
    (got * k(w)).sum().backward()
    for a, b in ((tq, kq), (tk, kk), (tv, kv)):
        np.testing.assert_allclose(b.grad.numpy(), a.grad.numpy(), **TOL[dtype])
    return got


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
@pytest.mark.parametrize("mask", ["none", "bool", "float", "bool_broadcast", "causal", "scale"])
def test_sdpa_matches_the_definition(dtype, mask):
    torch.manual_seed(0)
    q, k_, v = (torch.randn(2, 3, L, 4, dtype=dtype) for L in (5, 6, 6))
    kw = {}
    if mask == "bool":
        kw["attn_mask"] = torch.rand(2, 3, 5, 6) > 0.4
        kw["attn_mask"][..., 0] = True  # every query attends somewhere
    elif mask == "float":
        kw["attn_mask"] = torch.randn(5, 6, dtype=dtype)
    elif mask == "bool_broadcast":
        kw["attn_mask"] = torch.ones(5, 6, dtype=torch.bool).tril()  # True = attend
    elif mask == "causal":
        kw["is_causal"] = True  # L=5 < S=6: the top-left triangle
    elif mask == "scale":
        kw["scale"] = 0.3
    got = sdpa_compare(dtype, q, k_, v, **kw)
    assert got.dtype == KDTYPE[dtype] and tuple(got.shape) == (2, 3, 5, 4)


def test_sdpa_causal_is_the_lower_triangular_bool_mask():
    torch.manual_seed(0)
    q, k_, v = (k(torch.randn(2, L, 4)) for L in (4, 6, 6))
    a = KF.scaled_dot_product_attention(q, k_, v, is_causal=True)
    b = KF.scaled_dot_product_attention(q, k_, v, attn_mask=kiln.ones(4, 6, dtype=kiln.bool).tril())
    c = KF.scaled_dot_product_attention(q, k_, v)
    np.testing.assert_array_equal(a.numpy(), b.numpy())
    assert not np.allclose(a.numpy(), c.numpy())
    # the first query sees the first key only
    np.testing.assert_allclose(a.numpy()[:, 0], v.numpy()[:, 0], rtol=1e-6)


def test_sdpa_dropout_drops_the_weights_with_torchs_stream():
    torch.manual_seed(0)
    q, k_, v = (torch.randn(2, 2, 5, 4, dtype=torch.float64) for _ in range(3))
    got = sdpa_compare(torch.float64, q, k_, v, dropout_p=0.4)
    kiln.manual_seed(3)
    a = KF.scaled_dot_product_attention(k(q), k(k_), k(v), dropout_p=0.4)
    b = KF.scaled_dot_product_attention(k(q), k(k_), k(v), dropout_p=0.4)
    c = KF.scaled_dot_product_attention(k(q), k(k_), k(v))
    assert not np.allclose(a.numpy(), b.numpy()) and not np.allclose(a.numpy(), c.numpy())
    assert not np.allclose(got.detach().numpy(), c.numpy())


def test_sdpa_errors():
    q = kiln.randn(2, 3, 4)
    with pytest.raises(RuntimeError, match="Explicit attn_mask should not be set when is_causal=True"):
        KF.scaled_dot_product_attention(q, q, q, attn_mask=kiln.ones(3, 3, dtype=kiln.bool), is_causal=True)
    with pytest.raises(RuntimeError, match="same dtype"):
        KF.scaled_dot_product_attention(q, q.double(), q)
    with pytest.raises(RuntimeError, match="attn_mask dtype to be bool or float or to match query dtype"):
        KF.scaled_dot_product_attention(q, q, q, attn_mask=kiln.zeros(3, 3, dtype=kiln.int64))


# ----------------------------------------------------------------------------- MultiheadAttention
def mha_pair(dtype=torch.float64, **kw):
    return paired(lambda: tnn.MultiheadAttention(8, 2, **kw), lambda: knn.MultiheadAttention(8, 2, **kw), dtype)


def mha_inputs(kind, batch_first, dtype, L=4, S=5, N=3, kdim=8, vdim=8):
    """(query, key, value) for self-attention (one tensor), cross-attention (key is value) or three."""
    shape = (lambda T, E: (N, T, E)) if batch_first else (lambda T, E: (T, N, E))
    q = rand(*shape(L, 8), dtype=dtype)
    if kind == "self":
        return q, q, q
    kv = rand(*shape(S, kdim), dtype=dtype)
    if kind == "cross":
        return q, kv, kv
    return q, kv, rand(*shape(S, vdim), dtype=dtype)


MASKS = ["none", "attn_bool", "attn_float", "attn3d_bool", "attn3d_float", "kpm_bool", "kpm_float", "both_bool",
         "both_float"]


def mha_masks(which, L, S, N, heads, dtype):
    kw = {}
    if which.startswith("attn3d") or which.startswith("both"):
        m = torch.rand(N * heads, L, S) > 0.6
        m[..., 0] = False
        kw["attn_mask"] = m
    elif which.startswith("attn"):
        kw["attn_mask"] = causal_bool(L, S)
    if which.startswith("kpm") or which.startswith("both"):
        kw["key_padding_mask"] = padding_bool(N, S)
    if which.endswith("float"):
        kw = {n: as_float(m, dtype) for n, m in kw.items()}
    return kw


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("kind", ["self", "cross", "separate"])
@pytest.mark.parametrize("need_weights,average", [(True, True), (True, False), (False, True)])
def test_mha_matches_torch(dtype, batch_first, kind, need_weights, average):
    torch.manual_seed(1)
    tm, km = mha_pair(dtype, batch_first=batch_first)
    q, k_, v = mha_inputs(kind, batch_first, dtype, S=4 if kind == "self" else 5)
    compare(tm, km, (q, k_, v), dict(need_weights=need_weights, average_attn_weights=average), dtype=dtype)


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
@pytest.mark.parametrize("mask", MASKS)
@pytest.mark.parametrize("need_weights", [True, False])
def test_mha_masks_match_torch(dtype, mask, need_weights):
    torch.manual_seed(2)
    tm, km = mha_pair(dtype)
    q, k_, v = mha_inputs("cross", False, dtype)
    kw = mha_masks(mask, 4, 5, 3, 2, dtype)
    compare(tm, km, (q, k_, v), dict(kw, need_weights=need_weights), dtype=dtype)


@pytest.mark.parametrize("need_weights", [True, False])
def test_mha_masks_batch_first_self_attention(need_weights):
    torch.manual_seed(3)
    tm, km = mha_pair(batch_first=True)
    q, k_, v = mha_inputs("self", True, torch.float64)
    kw = mha_masks("both_float", 4, 4, 3, 2, torch.float64)
    compare(tm, km, (q, k_, v), dict(kw, need_weights=need_weights))


@pytest.mark.parametrize("opts", [dict(kdim=6, vdim=5), dict(kdim=6), dict(add_bias_kv=True), dict(add_zero_attn=True),
                                  dict(add_bias_kv=True, add_zero_attn=True, kdim=6, vdim=5), dict(bias=False),
                                  dict(bias=False, kdim=6)])
@pytest.mark.parametrize("mask", ["none", "attn_bool", "both_float"])
@pytest.mark.parametrize("need_weights", [True, False])
def test_mha_options_match_torch(opts, mask, need_weights):
    torch.manual_seed(4)
    tm, km = mha_pair(**opts)
    q, k_, v = mha_inputs("separate" if "kdim" in opts else "cross", False, torch.float64,
                          kdim=opts.get("kdim", 8), vdim=opts.get("vdim", 8))
    kw = mha_masks(mask, 4, 5, 3, 2, torch.float64)
    compare(tm, km, (q, k_, v), dict(kw, need_weights=need_weights))


def test_mha_parameters_names_shapes_and_init_match_torch():
    for opts in (dict(), dict(kdim=6, vdim=5), dict(add_bias_kv=True), dict(bias=False),
                 dict(kdim=3, add_bias_kv=True, bias=False)):
        torch.manual_seed(5)
        tm = tnn.MultiheadAttention(8, 2, **opts)
        kiln.manual_seed(5)
        km = knn.MultiheadAttention(8, 2, **opts)
        t_sd, k_sd = tm.state_dict(), km.state_dict()
        assert list(k_sd) == list(t_sd), opts
        for n in t_sd:  # the same draws from the same generator: bit for bit
            np.testing.assert_array_equal(k_sd[n].numpy(), t_sd[n].numpy(), err_msg=f"{opts} {n}")
        assert [n for n, _ in km.named_parameters()] == [n for n, _ in tm.named_parameters()]
        for name in ("in_proj_weight", "q_proj_weight", "k_proj_weight", "v_proj_weight", "in_proj_bias",
                     "bias_k", "bias_v"):
            assert (getattr(km, name) is None) == (getattr(tm, name) is None), (opts, name)
        for attr in ("embed_dim", "kdim", "vdim", "_qkv_same_embed_dim", "num_heads", "dropout", "batch_first",
                     "head_dim", "add_zero_attn"):
            assert getattr(km, attr) == getattr(tm, attr), (opts, attr)
        assert repr(km) == repr(tm)
        assert type(km.out_proj).__name__ == "NonDynamicallyQuantizableLinear"
        assert isinstance(km.out_proj, knn.Linear)


def test_mha_dtype_argument():
    m = knn.MultiheadAttention(8, 2, kdim=4, add_bias_kv=True, dtype=kiln.float64)
    assert {p.dtype for p in m.parameters()} == {kiln.float64}
    x = kiln.randn(3, 2, 8, dtype=kiln.float64)
    key, value = kiln.randn(5, 2, 4, dtype=kiln.float64), kiln.randn(5, 2, 8, dtype=kiln.float64)
    assert m(x, key, value)[0].dtype == kiln.float64


@pytest.mark.parametrize("mask", ["none", "attn2d", "attn3d", "kpm", "both"])
@pytest.mark.parametrize("need_weights,average", [(True, True), (True, False), (False, True)])
def test_mha_unbatched_matches_torch(mask, need_weights, average):
    torch.manual_seed(6)
    tm, km = mha_pair(add_bias_kv=mask == "both", batch_first=True)
    q, kv = rand(4, 8), rand(5, 8)
    kw = {}
    if mask in ("attn2d", "both"):
        kw["attn_mask"] = causal_bool(4, 5)
    if mask == "attn3d":
        kw["attn_mask"] = as_float(torch.rand(2, 4, 5) > 0.7, torch.float64)
    if mask in ("kpm", "both"):
        kw["key_padding_mask"] = torch.tensor([False, False, True, False, True])
    compare(tm, km, (q, kv, kv), dict(kw, need_weights=need_weights, average_attn_weights=average))


def test_mha_is_causal_hint():
    """is_causal=True with the causal mask: the same values as the mask alone (torch 1.13 has no hint).
    MultiheadAttention computes torch 1.13's math whatever need_weights is (q / sqrt(E), baddbmm with
    the mask, softmax, bmm: its bits), never the fused scaled_dot_product_attention."""
    torch.manual_seed(7)
    tm, km = mha_pair()
    q = rand(4, 3, 8)
    for need_weights in (True, False):
        for kpm in (None, padding_bool(3, 4)):
            kw = dict(attn_mask=causal_bool(4), need_weights=need_weights)
            if kpm is not None:
                kw["key_padding_mask"] = kpm
            compare(tm, km, (q, q, q), kw, k_extra=dict(is_causal=True))
    calls = []
    real = KF.scaled_dot_product_attention

    def spy(*args, **kwargs):
        calls.append((args, kwargs))
        return real(*args, **kwargs)

    KF.scaled_dot_product_attention = spy
    try:
        x = k(q)
        a = km(x, x, x, attn_mask=k(causal_bool(4)), need_weights=False, is_causal=True)[0]
        b = km(x, x, x, attn_mask=k(causal_bool(4)), need_weights=False)[0]
        km(x, x, x, need_weights=True)
    finally:
        KF.scaled_dot_product_attention = real
    assert calls == []
    np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())
    with pytest.raises(RuntimeError, match="Need attn_mask if specifying the is_causal hint"):
        km(x, x, x, is_causal=True)


def test_mha_mismatched_mask_types_warn_and_match_torch():
    torch.manual_seed(8)
    tm, km = mha_pair()
    q, k_, v = mha_inputs("cross", False, torch.float64)
    kw = dict(attn_mask=as_float(causal_bool(4, 5), torch.float64), key_padding_mask=padding_bool(3, 5))
    with pytest.warns(UserWarning, match="Support for mismatched key_padding_mask and attn_mask is deprecated"):
        compare(tm, km, (q, k_, v), kw)


def test_mha_dropout_train_and_eval():
    torch.manual_seed(9)
    tm, km = mha_pair(dropout=0.4)
    q, k_, v = mha_inputs("cross", False, torch.float64)
    # need_weights=True: the weights are dropped with the same generator stream as torch's
    torch.manual_seed(11)
    kiln.manual_seed(11)
    t_out, k_out = compare(tm, km, (q, k_, v), dict(average_attn_weights=False))
    assert (k_out[1].detach().numpy() == 0).any()  # some weights dropped ...
    assert (k_out[1].detach().numpy() > 1 / 5).any()  # ... and the rest scaled by 1/(1-p)
    x = [k(t) for t in (q, k_, v)]
    a = km(*x, need_weights=False)[0]
    b = km(*x, need_weights=False)[0]
    assert not np.allclose(a.detach().numpy(), b.detach().numpy())
    km.eval()
    tm.eval()
    e1, w1 = km(*x, average_attn_weights=False)
    e2 = km(*x, need_weights=False)[0]
    assert not (w1.detach().numpy() == 0).any()
    np.testing.assert_allclose(e2.detach().numpy(), e1.detach().numpy(), atol=1e-12)
    compare(tm, km, (q, k_, v), dict(need_weights=False))


def test_mha_functional_matches_torch():
    torch.manual_seed(10)
    q, kv = rand(4, 3, 8), rand(5, 3, 8)
    w_in, b_in, w_out, b_out = rand(24, 8), rand(24), rand(8, 8), rand(8)
    bk, bv = rand(1, 1, 8), rand(1, 1, 8)
    mask = as_float(causal_bool(4, 5), torch.float64)
    args = (q, kv, kv, 8, 2, w_in, b_in, bk, bv, True, 0.0, w_out, b_out)
    t = TF.multi_head_attention_forward(*args, attn_mask=mask, key_padding_mask=padding_bool(3, 5))
    memo = {}
    kt = KF.multi_head_attention_forward(*to_kiln(args, memo), attn_mask=k(mask),
                                         key_padding_mask=k(padding_bool(3, 5)))
    for a, b in zip(t, kt):
        np.testing.assert_allclose(b.detach().numpy(), a.detach().numpy(), atol=1e-10)
    (t[0].sum() + t[1].sum()).backward()
    (kt[0].sum() + kt[1].sum()).backward()
    for a in args:
        if isinstance(a, torch.Tensor):
            np.testing.assert_allclose(memo[id(a)].grad.numpy(), a.grad.numpy(), atol=1e-10)


def test_mha_errors():
    with pytest.raises(AssertionError, match="embed_dim must be divisible by num_heads"):
        knn.MultiheadAttention(10, 3)
    with pytest.raises(ValueError, match="embed_dim and num_heads must be greater than 0"):
        knn.MultiheadAttention(0, 2)
    m = knn.MultiheadAttention(8, 2)
    x = kiln.randn(4, 3, 8)
    with pytest.raises(RuntimeError, match=r"The shape of the 2D attn_mask is .*\[4, 5\].*, but should be \(4, 4\)"):
        m(x, x, x, attn_mask=kiln.zeros(4, 5))
    with pytest.raises(RuntimeError, match=r"The shape of the 3D attn_mask is .*, but should be \(6, 4, 4\)"):
        m(x, x, x, attn_mask=kiln.zeros(2, 4, 4))
    with pytest.raises(AssertionError, match=r"expecting key_padding_mask shape of \(3, 4\)"):
        m(x, x, x, key_padding_mask=kiln.zeros(3, 5, dtype=kiln.bool))
    with pytest.raises(AssertionError, match="expected `attn_mask` to be `None`, 2-D or 3-D"):
        m(x, x, x, attn_mask=kiln.zeros(1, 6, 4, 4))
    with pytest.raises(AssertionError, match="only bool and floating types of attn_mask are supported"):
        m(x, x, x, attn_mask=kiln.zeros(4, 4, dtype=kiln.int64))
    with pytest.raises(AssertionError, match="query should be unbatched 2D or batched 3D tensor"):
        m(kiln.randn(1, 4, 3, 8), x, x)
    with pytest.raises(AssertionError, match="expected `key` and `value` to be 3-D"):
        m(x, kiln.randn(4, 8), kiln.randn(4, 8))
    with pytest.raises(AssertionError, match="was expecting embedding dimension of 8, but got 6"):
        m(kiln.randn(4, 3, 6), x, x)
    # torch raises the same types for the cases torch 1.13 shares
    tm = tnn.MultiheadAttention(8, 2)
    tx = torch.randn(4, 3, 8)
    with pytest.raises(RuntimeError, match="The shape of the 2D attn_mask"):
        tm(tx, tx, tx, attn_mask=torch.zeros(4, 5))
    with pytest.raises(AssertionError, match="embed_dim must be divisible by num_heads"):
        tnn.MultiheadAttention(10, 3)


def test_mha_subclass_overriding_forward():
    def make(nn, F):
        class ScaledMHA(nn.MultiheadAttention):
            def forward(self, x, mask=None):
                out, w = super().forward(x, x, x, attn_mask=mask, need_weights=True)
                return F.relu(out) * 2, w

        return ScaledMHA(8, 2)

    torch.manual_seed(12)
    tm, km = paired(lambda: make(tnn, TF), lambda: make(knn, KF))
    assert type(km).__mro__[1] is knn.MultiheadAttention
    x = rand(4, 3, 8)
    compare(tm, km, (x, causal_bool(4)))


# ----------------------------------------------------------------------------- encoder / decoder layers
def enc_layer(nn, F, **kw):
    kw.setdefault("dropout", 0.0)
    return nn.TransformerEncoderLayer(8, 2, dim_feedforward=16, **kw)


def dec_layer(nn, F, **kw):
    kw.setdefault("dropout", 0.0)
    return nn.TransformerDecoderLayer(8, 2, dim_feedforward=16, **kw)


ACTIVATIONS = {"relu": ("relu", "relu"), "gelu": ("gelu", "gelu"), "F.gelu": (TF.gelu, KF.gelu),
               "callable": (lambda x: TF.silu(x) * 0.5, lambda x: KF.silu(x) * 0.5),
               "module": (tnn.Tanh(), knn.Tanh())}


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("norm_first", [False, True])
@pytest.mark.parametrize("mask", ["none", "src_bool", "src_float", "src3d", "kpm_bool", "kpm_float", "both"])
def test_encoder_layer_matches_torch(dtype, batch_first, norm_first, mask):
    torch.manual_seed(20)
    opts = dict(batch_first=batch_first, norm_first=norm_first)
    tm, km = paired(lambda: enc_layer(tnn, TF, **opts), lambda: enc_layer(knn, KF, **opts), dtype)
    x = rand(*((3, 5, 8) if batch_first else (5, 3, 8)), dtype=dtype)
    kw = {}
    if mask in ("src_bool", "src_float", "both"):
        kw["src_mask"] = causal_bool(5)
    if mask == "src3d":
        kw["src_mask"] = as_float(torch.rand(6, 5, 5) > 0.6, dtype)
    if mask in ("kpm_bool", "kpm_float", "both"):
        kw["src_key_padding_mask"] = padding_bool(3, 5)
    if mask.endswith("float") or mask == "both":
        kw = {n: as_float(m, dtype) if m.dtype == torch.bool else m for n, m in kw.items()}
    compare(tm, km, (x,), kw, dtype=dtype)


@pytest.mark.parametrize("act", list(ACTIVATIONS))
def test_layers_activations_match_torch(act):
    t_act, k_act = ACTIVATIONS[act]
    torch.manual_seed(21)
    tm, km = paired(lambda: enc_layer(tnn, TF, activation=t_act), lambda: enc_layer(knn, KF, activation=k_act))
    assert km.activation_relu_or_gelu == tm.activation_relu_or_gelu
    x = rand(5, 3, 8)
    compare(tm, km, (x,), dict(src_mask=causal_bool(5)))
    tm, km = paired(lambda: dec_layer(tnn, TF, activation=t_act), lambda: dec_layer(knn, KF, activation=k_act))
    compare(tm, km, (rand(4, 3, 8), rand(5, 3, 8)), dict(tgt_mask=causal_bool(4)))


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("norm_first", [False, True])
@pytest.mark.parametrize("masks", ["none", "tgt", "all_bool", "all_float"])
def test_decoder_layer_matches_torch(dtype, batch_first, norm_first, masks):
    torch.manual_seed(22)
    opts = dict(batch_first=batch_first, norm_first=norm_first)
    tm, km = paired(lambda: dec_layer(tnn, TF, **opts), lambda: dec_layer(knn, KF, **opts), dtype)
    tgt = rand(*((3, 4, 8) if batch_first else (4, 3, 8)), dtype=dtype)
    mem = rand(*((3, 5, 8) if batch_first else (5, 3, 8)), dtype=dtype)
    kw = {}
    if masks != "none":
        kw["tgt_mask"] = causal_bool(4)
    if masks.startswith("all"):
        kw.update(memory_mask=torch.rand(4, 5) > 0.7, tgt_key_padding_mask=padding_bool(3, 4),
                  memory_key_padding_mask=padding_bool(3, 5))
        kw["memory_mask"][:, 0] = False
    if masks.endswith("float") or masks == "tgt":
        kw = {n: as_float(m, dtype) for n, m in kw.items()}
    compare(tm, km, (tgt, mem), kw, dtype=dtype)


def test_layers_unbatched_match_torch():
    torch.manual_seed(23)
    tm, km = paired(lambda: enc_layer(tnn, TF), lambda: enc_layer(knn, KF))
    kpm = torch.tensor([0, 0, 0, 1, 1]) > 0
    compare(tm, km, (rand(5, 8),), dict(src_mask=causal_bool(5), src_key_padding_mask=kpm))
    tm, km = paired(lambda: dec_layer(tnn, TF, batch_first=True), lambda: dec_layer(knn, KF, batch_first=True))
    compare(tm, km, (rand(4, 8), rand(5, 8)), dict(tgt_mask=as_float(causal_bool(4), torch.float64),
                                                   memory_key_padding_mask=torch.tensor([0, 1, 0, 0, 1]) > 0))


def test_layers_bias_false_match_zero_bias_torch():
    """bias=False (torch 2.x): torch 1.13's layer with every bias zero and frozen is the reference;
    the state_dict keys are torch's less every bias."""
    torch.manual_seed(24)
    for t_make, k_make, args in (
            (lambda: enc_layer(tnn, TF), lambda: enc_layer(knn, KF, bias=False), lambda: (rand(5, 3, 8),)),
            (lambda: dec_layer(tnn, TF, norm_first=True), lambda: dec_layer(knn, KF, bias=False, norm_first=True),
             lambda: (rand(4, 3, 8), rand(5, 3, 8)))):
        t_ref = t_make()
        biases = [n for n in t_ref.state_dict() if n.endswith("bias")]
        assert any("norm" in n for n in biases) and any("in_proj_bias" in n for n in biases)

        def t_zero_bias():
            with torch.no_grad():
                for n, p in t_ref.named_parameters():
                    if n.endswith("bias"):
                        p.zero_()
                        p.requires_grad_(False)
            return t_ref

        tm, km = paired(t_zero_bias, k_make, drop=biases)
        assert all(p is None for n, p in km.self_attn._parameters.items() if "bias" in n)
        assert km.norm1.bias is None and km.linear1.bias is None
        compare(tm, km, args(), {})


def test_layer_init_and_repr_match_torch():
    for make in (enc_layer, dec_layer):
        for kw in (dict(), dict(dtype=torch.float64)):
            torch.manual_seed(25)
            tm = make(tnn, TF, dropout=0.1, **kw)
            kiln.manual_seed(25)
            km = make(knn, KF, dropout=0.1, **{n: KDTYPE[v] for n, v in kw.items()})
            t_sd, k_sd = tm.state_dict(), km.state_dict()
            assert list(k_sd) == list(t_sd)
            for n in t_sd:
                assert k_sd[n].dtype == KDTYPE[t_sd[n].dtype]
                np.testing.assert_array_equal(k_sd[n].numpy(), t_sd[n].numpy(), err_msg=n)
            assert repr(km) == repr(tm)
            assert km.norm_first == tm.norm_first and km.self_attn.batch_first == tm.self_attn.batch_first


def test_layer_activation_errors():
    with pytest.raises(RuntimeError, match="activation should be relu/gelu, not tanh"):
        knn.TransformerEncoderLayer(8, 2, activation="tanh")
    with pytest.raises(RuntimeError, match="activation should be relu/gelu, not tanh"):
        knn.TransformerDecoderLayer(8, 2, activation="tanh")
    with pytest.raises(RuntimeError, match="activation should be relu/gelu, not tanh"):
        tnn.TransformerEncoderLayer(8, 2, activation="tanh")


def test_layers_dropout_train_and_eval():
    torch.manual_seed(26)
    for t_make, k_make, args in (
            (lambda: enc_layer(tnn, TF, dropout=0.3), lambda: enc_layer(knn, KF, dropout=0.3),
             (rand(5, 3, 8),)),
            (lambda: dec_layer(tnn, TF, dropout=0.3), lambda: dec_layer(knn, KF, dropout=0.3),
             (rand(4, 3, 8), rand(5, 3, 8)))):
        tm, km = paired(t_make, k_make)
        x = [k(a) for a in args]
        a, b = km(*x), km(*x)
        assert not np.allclose(a.detach().numpy(), b.detach().numpy())  # training drops, differently each call
        km.eval()
        tm.eval()
        a, b = km(*x), km(*x)
        np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())
        compare(tm, km, args, {})  # eval: no dropout, torch's values


def test_encoder_layer_training_dropout_follows_torchs_stream():
    """The dropouts draw from kiln's generator in torch 1.13's order (attention weights, dropout,
    dropout1, dropout2), so train mode gives torch's values too."""
    torch.manual_seed(27)
    tm, km = paired(lambda: enc_layer(tnn, TF, dropout=0.3), lambda: enc_layer(knn, KF, dropout=0.3))
    x, kpm = rand(5, 3, 8), padding_bool(3, 5)
    torch.manual_seed(5)
    kiln.manual_seed(5)
    compare(tm, km, (x,), dict(src_key_padding_mask=kpm))


# ----------------------------------------------------------------------------- stacks and Transformer
def transformer(nn, F, **kw):
    kw.setdefault("dropout", 0.0)
    return nn.Transformer(d_model=8, nhead=2, num_encoder_layers=2, num_decoder_layers=2, dim_feedforward=16, **kw)


def test_encoder_stack_clones_and_matches_torch():
    torch.manual_seed(30)

    def make(nn, F):
        return nn.TransformerEncoder(enc_layer(nn, F), 3, norm=nn.LayerNorm(8))

    tm, km = paired(lambda: make(tnn, TF), lambda: make(knn, KF))
    assert len(km.layers) == 3 and km.num_layers == 3
    assert len({id(l) for l in km.layers}) == 3
    assert len({id(l.linear1.weight) for l in km.layers}) == 3
    x = rand(5, 3, 8)
    mask = tnn.Transformer.generate_square_subsequent_mask(5).to(torch.float64)
    compare(tm, km, (x,), dict(mask=mask, src_key_padding_mask=padding_bool(3, 5)))
    compare(tm, km, (x,), dict(mask=mask))
    compare(tm, km, (x,), dict(src_key_padding_mask=padding_bool(3, 5)))
    # the layers start equal (deep copies of one layer) and train apart
    fresh = knn.TransformerEncoder(enc_layer(knn, KF), 2, enable_nested_tensor=False)
    a, b = fresh.layers
    assert a is not b and a.self_attn is not b.self_attn
    np.testing.assert_array_equal(a.self_attn.in_proj_weight.detach().numpy(),
                                  b.self_attn.in_proj_weight.detach().numpy())
    with kiln.no_grad():
        a.self_attn.in_proj_weight.add_(1.0)
    assert not np.allclose(a.self_attn.in_proj_weight.detach().numpy(), b.self_attn.in_proj_weight.detach().numpy())


def test_encoder_nested_tensor_attributes_and_warning():
    with pytest.warns(UserWarning, match="enable_nested_tensor is True, but self.use_nested_tensor is False because "
                                         "encoder_layer.self_attn.batch_first was not True"):
        e = knn.TransformerEncoder(enc_layer(knn, KF), 1)
    assert e.enable_nested_tensor and not e.use_nested_tensor and e.mask_check
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        e = knn.TransformerEncoder(enc_layer(knn, KF, batch_first=True), 1)
        assert e.use_nested_tensor
        e = knn.TransformerEncoder(enc_layer(knn, KF), 1, enable_nested_tensor=False, mask_check=False)
        assert not e.use_nested_tensor and not e.mask_check
    with pytest.warns(UserWarning, match="encoder_layer.norm_first was True"):
        knn.TransformerEncoder(enc_layer(knn, KF, batch_first=True, norm_first=True), 1)


def test_encoder_detects_the_causal_mask():
    """A causal src mask reaches the layers as is_causal=True (torch 2.x's detection); other masks do not."""
    seen = []

    class Probe(knn.TransformerEncoderLayer):
        def forward(self, src, src_mask=None, src_key_padding_mask=None, is_causal=False):
            seen.append(is_causal)
            return super().forward(src, src_mask, src_key_padding_mask, is_causal)

    enc = knn.TransformerEncoder(Probe(8, 2, 16, 0.0), 2, enable_nested_tensor=False)
    x = kiln.randn(5, 3, 8)
    causal = knn.Transformer.generate_square_subsequent_mask(5)
    out_hint = enc(x, mask=causal)
    out_none = enc(x, mask=causal, is_causal=False)
    enc(x, mask=kiln.ones(5, 5, dtype=kiln.bool).triu(1))  # the bool causal mask
    enc(x, mask=kiln.zeros(5, 5))
    enc(x)
    assert seen == [True, True, False, False, True, True, False, False, False, False]
    np.testing.assert_allclose(out_hint.detach().numpy(), out_none.detach().numpy(), atol=1e-6)


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("norm_first", [False, True])
@pytest.mark.parametrize("masks", ["none", "causal", "all"])
def test_transformer_matches_torch(dtype, batch_first, norm_first, masks):
    torch.manual_seed(31)
    opts = dict(batch_first=batch_first, norm_first=norm_first)
    tm, km = paired(lambda: transformer(tnn, TF, **opts), lambda: transformer(knn, KF, **opts), dtype)
    N, S, T = 3, 5, 4
    src = rand(*((N, S, 8) if batch_first else (S, N, 8)), dtype=dtype)
    tgt = rand(*((N, T, 8) if batch_first else (T, N, 8)), dtype=dtype)
    kw = {}
    if masks != "none":
        kw["tgt_mask"] = tnn.Transformer.generate_square_subsequent_mask(T).to(dtype)
    if masks == "all":
        kw.update(src_mask=causal_bool(S), memory_mask=causal_bool(T, S), src_key_padding_mask=padding_bool(N, S),
                  tgt_key_padding_mask=padding_bool(N, T), memory_key_padding_mask=padding_bool(N, S))
    compare(tm, km, (src, tgt), kw, dtype=dtype)


@pytest.mark.parametrize("act", ["gelu", "callable"])
def test_transformer_activations_unbatched_and_hints(act):
    t_act, k_act = ACTIVATIONS[act]
    torch.manual_seed(32)
    tm, km = paired(lambda: transformer(tnn, TF, activation=t_act), lambda: transformer(knn, KF, activation=k_act))
    src, tgt = rand(5, 8), rand(4, 8)
    tgt_mask = tnn.Transformer.generate_square_subsequent_mask(4).to(torch.float64)
    compare(tm, km, (src, tgt), dict(tgt_mask=tgt_mask, src_key_padding_mask=torch.tensor([0, 0, 0, 0, 1]) > 0))
    src, tgt = rand(5, 2, 8), rand(4, 2, 8)
    memory_mask = causal_bool(4, 5)
    compare(tm, km, (src, tgt), dict(tgt_mask=tgt_mask, memory_mask=memory_mask),
            k_extra=dict(src_is_causal=False, tgt_is_causal=True, memory_is_causal=True))


def test_transformer_bias_false_matches_zero_bias_torch():
    torch.manual_seed(33)
    t_ref = transformer(tnn, TF)
    biases = [n for n in t_ref.state_dict() if n.endswith("bias")]

    def t_zero_bias():
        with torch.no_grad():
            for n, p in t_ref.named_parameters():
                if n.endswith("bias"):
                    p.zero_()
                    p.requires_grad_(False)
        return t_ref

    tm, km = paired(t_zero_bias, lambda: transformer(knn, KF, bias=False), drop=biases)
    assert km.encoder.norm.bias is None and km.decoder.layers[1].multihead_attn.out_proj.bias is None
    compare(tm, km, (rand(5, 3, 8), rand(4, 3, 8)), dict(tgt_mask=causal_bool(4)))


def test_transformer_init_state_dict_and_attributes_match_torch():
    for kw in (dict(), dict(dtype=torch.float64)):
        torch.manual_seed(34)
        tm = quiet(transformer, tnn, TF, **kw)
        kiln.manual_seed(34)
        km = quiet(transformer, knn, KF, **{n: KDTYPE[v] for n, v in kw.items()})
        t_sd, k_sd = tm.state_dict(), km.state_dict()
        assert list(k_sd) == list(t_sd)
        for n in t_sd:  # Linear/MHA init, then xavier_uniform_ on every matrix, in torch's order
            np.testing.assert_array_equal(k_sd[n].numpy(), t_sd[n].numpy(), err_msg=n)
        assert (km.d_model, km.nhead, km.batch_first) == (tm.d_model, tm.nhead, tm.batch_first)
        assert km.encoder.num_layers == 2 and km.decoder.num_layers == 2
    # defaults: d_model 512, 8 heads, 6 + 6 layers, 2048 wide
    km = quiet(knn.Transformer)
    assert len(km.encoder.layers) == 6 and len(km.decoder.layers) == 6
    assert km.encoder.layers[0].linear1.weight.shape == (2048, 512) and km.encoder.layers[0].self_attn.num_heads == 8
    assert km.encoder.layers[0].dropout.p == 0.1 and km.encoder.layers[0].norm1.eps == 1e-5


def test_generate_square_subsequent_mask():
    m = knn.Transformer.generate_square_subsequent_mask(4)
    t = tnn.Transformer.generate_square_subsequent_mask(4)
    assert m.dtype == kiln.float32
    np.testing.assert_array_equal(m.numpy(), t.numpy())
    assert knn.Transformer.generate_square_subsequent_mask(3, dtype=kiln.float64).dtype == kiln.float64
    assert knn.Transformer.generate_square_subsequent_mask(3, device="cpu").shape == (3, 3)
    inst = quiet(knn.Transformer, 8, 2, 1, 1, 16)
    np.testing.assert_array_equal(inst.generate_square_subsequent_mask(4).numpy(), t.numpy())


def test_transformer_custom_encoder_decoder_and_errors():
    torch.manual_seed(35)

    def make(nn, F):
        enc = nn.TransformerEncoder(enc_layer(nn, F), 1)
        dec = nn.TransformerDecoder(dec_layer(nn, F), 2, norm=nn.LayerNorm(8))
        return nn.Transformer(8, 2, custom_encoder=enc, custom_decoder=dec, dropout=0.0)

    tm, km = paired(lambda: make(tnn, TF), lambda: make(knn, KF))
    assert km.encoder.norm is None
    compare(tm, km, (rand(5, 3, 8), rand(4, 3, 8)), {})
    with pytest.raises(RuntimeError, match="the batch number of src and tgt must be equal"):
        km(kiln.randn(5, 3, 8), kiln.randn(4, 2, 8))
    with pytest.raises(RuntimeError, match="the feature number of src and tgt must be equal to d_model"):
        km(kiln.randn(5, 3, 6), kiln.randn(4, 3, 6))
    with pytest.raises(RuntimeError, match="the batch number of src and tgt must be equal"):
        tm(torch.randn(5, 3, 8), torch.randn(4, 2, 8))


def _seq2seq(nn, F):
    """A model as a torch user writes one: subclasses nn.Transformer and overrides forward."""

    class Seq2Seq(nn.Transformer):
        def __init__(self, vocab, d_model):
            super().__init__(d_model=d_model, nhead=2, num_encoder_layers=1, num_decoder_layers=1,
                             dim_feedforward=16, dropout=0.0, batch_first=True)
            self.embed = nn.Embedding(vocab, d_model)
            self.head = nn.Linear(d_model, vocab)

        def forward(self, src_tokens, tgt_tokens):
            src = self.embed(src_tokens) * math.sqrt(self.d_model)
            tgt = self.embed(tgt_tokens) * math.sqrt(self.d_model)
            tgt_mask = self.generate_square_subsequent_mask(tgt_tokens.shape[1]).to(src.dtype)
            pad = src_tokens == 0
            out = super().forward(src, tgt, tgt_mask=tgt_mask, src_key_padding_mask=pad,
                                  memory_key_padding_mask=pad)
            return F.log_softmax(self.head(out), dim=-1)

    return Seq2Seq(11, 8)


def _encoder_of_custom_layers(nn, F):
    """A TransformerEncoderLayer subclass whose forward adds a term, stacked by TransformerEncoder."""

    class Layer(nn.TransformerEncoderLayer):
        def forward(self, src, src_mask=None, src_key_padding_mask=None, **kwargs):
            out = super().forward(src, src_mask=src_mask, src_key_padding_mask=src_key_padding_mask)
            return out + 0.5 * F.gelu(src)

    return nn.TransformerEncoder(Layer(8, 2, 16, dropout=0.0), 2)


def test_subclasses_overriding_forward_match_torch():
    torch.manual_seed(36)
    tm, km = paired(lambda: _seq2seq(tnn, TF), lambda: _seq2seq(knn, KF))
    assert isinstance(km, knn.Transformer)
    src = torch.tensor([[3, 4, 5, 0, 0], [1, 2, 3, 4, 5]])
    tgt = torch.tensor([[1, 7, 8, 9], [1, 2, 2, 10]])
    compare(tm, km, (src, tgt), {})
    tm, km = paired(lambda: _encoder_of_custom_layers(tnn, TF), lambda: _encoder_of_custom_layers(knn, KF))
    assert type(km.layers[1]).__name__ == "Layer" and km.layers[0] is not km.layers[1]
    compare(tm, km, (rand(5, 3, 8),), dict(mask=causal_bool(5), src_key_padding_mask=padding_bool(3, 5)))


def test_training_step_matches_torch():
    torch.manual_seed(37)
    tm, km = paired(lambda: _seq2seq(tnn, TF), lambda: _seq2seq(knn, KF))
    t_opt = torch.optim.Adam(tm.parameters(), lr=1e-2)
    k_opt = kiln.optim.Adam(km.parameters(), lr=1e-2)
    src = torch.tensor([[3, 4, 5, 0, 0], [1, 2, 3, 4, 5]])
    tgt = torch.tensor([[1, 7, 8, 9, 2], [1, 2, 2, 10, 3]])
    for _ in range(3):
        for m, opt, s, t, lib in ((tm, t_opt, src, tgt, TF), (km, k_opt, k(src), k(tgt), KF)):
            opt.zero_grad()
            out = m(s, t[:, :-1])
            loss = lib.nll_loss(out.reshape(-1, 11), t[:, 1:].reshape(-1))
            loss.backward()
            opt.step()
    k_sd = km.state_dict()
    for n, v in tm.state_dict().items():
        np.testing.assert_allclose(k_sd[n].numpy(), v.numpy(), atol=1e-9, err_msg=n)


# ----------------------------------------------------------------------------- deepcopy
def test_deepcopy_of_modules():
    kiln.manual_seed(40)
    m = quiet(knn.Transformer, 8, 2, 1, 1, 16, dropout=0.0)
    c = copy.deepcopy(m)
    assert type(c) is knn.Transformer and c is not m
    assert list(c.state_dict()) == list(m.state_dict())
    for (n, p), q in zip(m.named_parameters(), c.parameters()):
        assert type(q) is type(p) and q is not p and q.requires_grad
        np.testing.assert_array_equal(q.detach().numpy(), p.detach().numpy(), err_msg=n)
    src, tgt = kiln.randn(5, 2, 8), kiln.randn(4, 2, 8)
    np.testing.assert_array_equal(c(src, tgt).detach().numpy(), m(src, tgt).detach().numpy())
    with kiln.no_grad():
        c.encoder.layers[0].linear1.weight.mul_(2)
    assert not np.allclose(c.encoder.layers[0].linear1.weight.detach().numpy(),
                           m.encoder.layers[0].linear1.weight.detach().numpy())
    # shared parameters stay shared in the copy; gradients flow to the copy only
    a = knn.Linear(3, 3)
    seq = knn.Sequential(a, knn.ReLU(), a)
    s2 = copy.deepcopy(seq)
    assert s2[0] is s2[2] and s2[0].weight is not a.weight
    s2(kiln.randn(2, 3)).sum().backward()
    assert s2[0].weight.grad is not None and a.weight.grad is None
    # plain attributes (activation callables, flags) come along
    layer = knn.TransformerEncoderLayer(8, 2, activation="gelu", norm_first=True)
    lc = copy.deepcopy(layer)
    assert lc.activation is KF.gelu and lc.norm_first and lc.activation_relu_or_gelu == 2
