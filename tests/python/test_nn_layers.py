"""kiln.nn layer modules and their functional forms, checked against NumPy implementations
of the published definitions (the op records test the ops themselves)."""
import math

import numpy as np
import pytest

import kiln
import kiln.nn as nn
import kiln.nn.functional as F


def np_of(t):
    return t.detach().numpy()


# ----------------------------------------------------------------------------- Conv2d
def np_conv2d(x, w, b, stride, padding):
    """Direct definition: out[n, o, i, j] = b[o] + sum_{c,p,q} w[o, c, p, q] x_pad[n, c, i*s + p, j*s + q]."""
    n, c, h, wd = x.shape
    o, _, kh, kw = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (padding, padding), (padding, padding)))
    oh, ow = (h + 2 * padding - kh) // stride + 1, (wd + 2 * padding - kw) // stride + 1
    out = np.zeros((n, o, oh, ow))
    for i in range(oh):
        for j in range(ow):
            patch = xp[:, :, i * stride:i * stride + kh, j * stride:j * stride + kw]
            out[:, :, i, j] = np.tensordot(patch, w, axes=([1, 2, 3], [1, 2, 3]))
    return out + b[None, :, None, None]


def test_conv2d_module_matches_definition_and_torch_init_bounds():
    kiln.manual_seed(0)
    conv = nn.Conv2d(3, 5, kernel_size=3, stride=2, padding=1)
    assert conv.weight.shape == (5, 3, 3, 3) and conv.bias.shape == (5,)
    bound = 1 / math.sqrt(3 * 3 * 3)  # kaiming_uniform_(a=sqrt(5)) gives U(-1/sqrt(fan_in), ...)
    assert np.abs(np_of(conv.weight)).max() <= bound and np.abs(np_of(conv.bias)).max() <= bound
    x = kiln.randn(2, 3, 9, 8)
    want = np_conv2d(np_of(x).astype(np.float64), np_of(conv.weight), np_of(conv.bias), 2, 1)
    np.testing.assert_allclose(np_of(conv(x)), want, rtol=1e-4, atol=1e-5)
    assert repr(conv) == "Conv2d(3, 5, kernel_size=(3, 3), stride=(2, 2), padding=(1, 1))"


def test_conv2d_padding_same_keeps_the_size_even_kernels_included():
    x = kiln.randn(1, 2, 7, 6, dtype=kiln.float64)
    for k in (3, 4):
        w = kiln.randn(3, 2, k, k, dtype=kiln.float64)
        y = F.conv2d(x, w, padding="same")
        assert y.shape == (1, 3, 7, 6)
        # torch pads (k - 1) // 2 before and the rest after.
        before, after = (k - 1) // 2, k - 1 - (k - 1) // 2
        xp = np.pad(np_of(x), ((0, 0), (0, 0), (before, after), (before, after)))
        np.testing.assert_allclose(np_of(y), np_conv2d(xp, np_of(w), np.zeros(3), 1, 0), rtol=1e-10)
    assert F.conv2d(x, kiln.randn(3, 2, 3, 3, dtype=kiln.float64), padding="valid").shape == (1, 3, 5, 4)
    with pytest.raises(ValueError, match="strided"):
        nn.Conv2d(2, 3, 3, stride=2, padding="same")


def test_conv2d_module_validates_its_arguments():
    with pytest.raises(ValueError, match="in_channels must be divisible by groups"):
        nn.Conv2d(3, 4, 3, groups=2)
    with pytest.raises(ValueError, match="out_channels must be divisible by groups"):
        nn.Conv2d(4, 3, 3, groups=2)
    with pytest.raises(RuntimeError, match="to have 3 channels"):
        nn.Conv2d(3, 4, 3)(kiln.zeros(1, 4, 5, 5))


def test_conv2d_gradients_match_finite_differences_through_a_module():
    conv = nn.Conv2d(2, 3, 2, padding=1, groups=1).double()
    x = kiln.randn(2, 2, 4, 3, dtype=kiln.float64, requires_grad=True)
    assert kiln.autograd.gradcheck(lambda a, w, b: F.conv2d(a, w, b, padding=1), (x, conv.weight, conv.bias))


# ----------------------------------------------------------------------------- pooling modules
def test_pool_modules():
    x = kiln.arange(32, dtype=kiln.float32).reshape(1, 2, 4, 4)
    np.testing.assert_array_equal(np_of(nn.MaxPool2d(2)(x))[0, 0], [[5, 7], [13, 15]])
    np.testing.assert_array_equal(np_of(nn.AvgPool2d(2)(x))[0, 1], [[18.5, 20.5], [26.5, 28.5]])
    out, idx = nn.MaxPool2d(2, return_indices=True)(x)
    np.testing.assert_array_equal(np_of(idx)[0, 0], [[5, 7], [13, 15]])
    np.testing.assert_allclose(np_of(nn.AdaptiveAvgPool2d(1)(x)).ravel(), [7.5, 23.5])
    # None keeps the input's size in that dim.
    assert nn.AdaptiveAvgPool2d((None, 2))(x).shape == (1, 2, 4, 2)


# ----------------------------------------------------------------------------- BatchNorm
def test_batchnorm2d_training_updates_running_stats_like_torch():
    """running = (1 - m) running + m batch, with the unbiased batch variance (n / (n - 1))."""
    bn = nn.BatchNorm2d(3, momentum=0.2)
    rm, rv = np.zeros(3), np.ones(3)
    rng = np.random.default_rng(0)
    for step in range(3):
        xn = rng.normal(2.0, 3.0, size=(4, 3, 2, 5))
        y = bn(kiln.tensor(xn, dtype=kiln.float32))
        mean, var = xn.mean(axis=(0, 2, 3)), xn.var(axis=(0, 2, 3))
        want = (xn - mean[None, :, None, None]) / np.sqrt(var[None, :, None, None] + 1e-5)
        np.testing.assert_allclose(np_of(y), want, rtol=1e-4, atol=1e-4)
        n = 4 * 2 * 5
        rm = 0.8 * rm + 0.2 * mean
        rv = 0.8 * rv + 0.2 * var * n / (n - 1)
        np.testing.assert_allclose(np_of(bn.running_mean), rm, rtol=1e-5)
        np.testing.assert_allclose(np_of(bn.running_var), rv, rtol=1e-5)
    assert bn.num_batches_tracked.item() == 3
    bn.eval()
    xn = rng.normal(size=(2, 3, 2, 2))
    want = (xn - rm[None, :, None, None]) / np.sqrt(rv[None, :, None, None] + 1e-5)
    np.testing.assert_allclose(np_of(bn(kiln.tensor(xn, dtype=kiln.float32))), want, rtol=1e-4, atol=1e-5)
    assert list(bn.state_dict()) == ["weight", "bias", "running_mean", "running_var", "num_batches_tracked"]


def test_batchnorm_momentum_none_is_a_cumulative_average():
    bn = nn.BatchNorm1d(2, momentum=None)
    batches = [np.random.default_rng(i).normal(size=(5, 2)) for i in range(3)]
    for b in batches:
        bn(kiln.tensor(b))
    np.testing.assert_allclose(np_of(bn.running_mean), np.mean([b.mean(axis=0) for b in batches], axis=0), rtol=1e-5)


def test_batchnorm_errors():
    with pytest.raises(ValueError, match="expected 4D input"):
        nn.BatchNorm2d(3)(kiln.zeros(2, 3))
    with pytest.raises(ValueError, match="more than 1 value per channel"):
        nn.BatchNorm1d(3)(kiln.zeros(1, 3))
    with pytest.raises(RuntimeError, match="shape \\[3\\]"):
        nn.BatchNorm1d(4)(kiln.zeros(2, 3))


def test_batchnorm_gradient_matches_finite_differences():
    x = kiln.randn(4, 3, 2, dtype=kiln.float64, requires_grad=True)
    w = kiln.randn(3, dtype=kiln.float64, requires_grad=True)
    b = kiln.randn(3, dtype=kiln.float64, requires_grad=True)
    assert kiln.autograd.gradcheck(lambda x, w, b: F.batch_norm(x, None, None, w, b, training=True), (x, w, b))


# ----------------------------------------------------------------------------- LayerNorm, Dropout, Embedding
def test_layernorm_module():
    ln = nn.LayerNorm([2, 3])
    with kiln.no_grad():
        ln.weight.copy_(kiln.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]))
        ln.bias.fill_(0.5)
    xn = np.random.default_rng(1).normal(size=(4, 2, 3))
    mean, var = xn.mean(axis=(1, 2), keepdims=True), xn.var(axis=(1, 2), keepdims=True)
    want = (xn - mean) / np.sqrt(var + 1e-5) * np_of(ln.weight) + 0.5
    np.testing.assert_allclose(np_of(ln(kiln.tensor(xn, dtype=kiln.float32))), want, rtol=1e-4, atol=1e-5)


def test_dropout_module_train_and_eval():
    kiln.manual_seed(3)
    drop = nn.Dropout(0.25)
    x = kiln.ones(200, 100)
    y = np_of(drop(x))
    assert set(np.unique(y)) <= {np.float32(0.0), np.float32(1 / 0.75)}
    assert abs((y == 0).mean() - 0.25) < 0.01  # 20000 draws: 6 standard errors is 0.0184
    drop.eval()
    assert drop(x) is x or np.array_equal(np_of(drop(x)), np_of(x))
    with pytest.raises(ValueError, match="between 0 and 1"):
        nn.Dropout(1.5)


def test_embedding_lookup_and_padding_idx_gets_no_gradient():
    emb = nn.Embedding(5, 3, padding_idx=1)
    assert np.array_equal(np_of(emb.weight)[1], np.zeros(3))
    idx = kiln.tensor([[0, 1, 4], [1, 1, 2]])
    out = emb(idx)
    assert out.shape == (2, 3, 3)
    np.testing.assert_array_equal(np_of(out), np_of(emb.weight)[np_of(idx)])
    out.sum().backward()
    counts = np.bincount(np_of(idx).ravel(), minlength=5).astype(np.float32)
    counts[1] = 0  # padding_idx
    np.testing.assert_array_equal(np_of(emb.weight.grad), np.repeat(counts[:, None], 3, axis=1))
    with pytest.raises(RuntimeError, match="indices"):
        emb(kiln.tensor([0.0, 1.0]))
    with pytest.raises(IndexError):
        emb(kiln.tensor([5]))


def test_flatten_unflatten():
    x = kiln.zeros(2, 3, 4, 5)
    assert nn.Flatten()(x).shape == (2, 60)
    assert nn.Flatten(0, 2)(x).shape == (24, 5)
    assert nn.Unflatten(1, (3, 20))(nn.Flatten()(x)).shape == (2, 3, 20)


# ----------------------------------------------------------------------------- losses
def test_loss_modules_match_numpy():
    rng = np.random.default_rng(2)
    a, b = rng.normal(size=(3, 4)), rng.normal(size=(3, 4))
    x, t = kiln.tensor(a), kiln.tensor(b)
    assert math.isclose(nn.L1Loss()(x, t).item(), np.abs(a - b).mean(), rel_tol=1e-12)
    assert math.isclose(nn.MSELoss(reduction="sum")(x, t).item(), ((a - b) ** 2).sum(), rel_tol=1e-12)
    p = rng.uniform(size=(3, 4))
    pos = np.array([1.0, 2.0, 0.5, 3.0])
    want = -(pos * p * np.log(1 / (1 + np.exp(-a))) + (1 - p) * np.log(1 - 1 / (1 + np.exp(-a)))).mean()
    got = nn.BCEWithLogitsLoss(pos_weight=kiln.tensor(pos))(x, kiln.tensor(p)).item()
    assert math.isclose(got, want, rel_tol=1e-10)


def test_bce_with_logits_gradient_is_sigmoid_minus_target_even_at_zero():
    x = kiln.tensor([0.0, 2.0, -30.0], dtype=kiln.float64, requires_grad=True)
    t = kiln.tensor([1.0, 0.0, 1.0], dtype=kiln.float64)
    F.binary_cross_entropy_with_logits(x, t, reduction="sum").backward()
    sig = 1 / (1 + np.exp(-np_of(x)))
    np.testing.assert_allclose(np_of(x.grad), sig - np_of(t), rtol=1e-12)


def test_softplus_gradient_at_zero_is_one_half():
    x = kiln.zeros(3, dtype=kiln.float64, requires_grad=True)
    F.softplus(x).sum().backward()
    np.testing.assert_allclose(np_of(x.grad), [0.5, 0.5, 0.5])


# ----------------------------------------------------------------------------- module machinery
def test_module_to_accepts_dtype_device_and_tensor():
    m = nn.Sequential(nn.Conv2d(1, 2, 3), nn.BatchNorm2d(2))
    assert m.to("cpu") is m and m.to(kiln.device("cpu")) is m
    m.to(kiln.float64)
    assert all(p.dtype == kiln.float64 for p in m.parameters())
    assert m[1].running_mean.dtype == kiln.float64 and m[1].num_batches_tracked.dtype == kiln.int64
    m.to(device="cpu", dtype=kiln.float32)
    assert all(p.dtype == kiln.float32 for p in m.parameters())
    m.to(kiln.zeros(1, dtype=kiln.float64))
    assert m[0].weight.dtype == kiln.float64
    with pytest.raises(AssertionError, match="not compiled with CUDA"):  # as torch's CPU-only builds
        m.to("cuda")
    with pytest.raises(AssertionError, match="not compiled with CUDA"):
        m.cuda()
    with pytest.raises(TypeError, match="floating point"):
        m.to(kiln.int64)


def test_train_eval_and_apply_reach_every_submodule():
    m = nn.Sequential(nn.Conv2d(1, 2, 3), nn.Sequential(nn.Dropout(), nn.BatchNorm2d(2)))
    m.eval()
    assert not any(sub.training for sub in m.modules())
    m.train()
    assert all(sub.training for sub in m.modules())
    seen = []
    m.apply(lambda mod: seen.append(type(mod).__name__))
    assert seen == ["Conv2d", "Dropout", "BatchNorm2d", "Sequential", "Sequential"]
    names = [n for n, _ in m.named_modules()]
    assert names == ["", "0", "1", "1.0", "1.1"]


def test_load_state_dict_strict_reports_missing_and_unexpected_keys():
    m = nn.Sequential(nn.Conv2d(1, 2, 3), nn.BatchNorm2d(2))
    sd = m.state_dict()
    del sd["1.running_var"]
    sd["extra"] = kiln.zeros(1)
    with pytest.raises(RuntimeError, match="(?s)Missing key\\(s\\).*1.running_var.*Unexpected key\\(s\\).*extra"):
        m.load_state_dict(sd)
    result = m.load_state_dict(sd, strict=False)
    assert result.missing_keys == ["1.running_var"] and result.unexpected_keys == ["extra"]
    bad = m.state_dict()
    bad["0.weight"] = kiln.zeros(2, 1, 2, 2)
    with pytest.raises(RuntimeError, match="size mismatch for 0.weight"):
        m.load_state_dict(bad)


def test_init_functions_follow_their_formulas():
    kiln.manual_seed(0)
    w = kiln.empty(300, 200)
    nn.init.xavier_uniform_(w)
    bound = math.sqrt(6 / 500)
    assert np.abs(np_of(w)).max() <= bound and np_of(w).std() == pytest.approx(bound / math.sqrt(3), rel=0.03)
    nn.init.kaiming_normal_(w, nonlinearity="relu")
    assert np_of(w).std() == pytest.approx(math.sqrt(2 / 200), rel=0.03)
    nn.init.normal_(w, 1.0, 0.5)
    assert np_of(w).mean() == pytest.approx(1.0, abs=0.01) and np_of(w).std() == pytest.approx(0.5, rel=0.03)
    nn.init.zeros_(w)
    assert not np_of(w).any()
    assert nn.init.calculate_gain("tanh") == pytest.approx(5 / 3)
    with pytest.raises(ValueError, match="Unsupported nonlinearity"):
        nn.init.calculate_gain("swish")


# ----------------------------------------------------------------------------- containers and helpers
def test_module_dict_and_parameter_containers_register_their_contents():
    blocks = nn.ModuleDict({"enc": nn.Linear(2, 3), "dec": nn.Linear(3, 2)})
    blocks["extra"] = nn.Identity()
    assert list(blocks) == ["enc", "dec", "extra"] and "dec" in blocks and len(blocks) == 3
    assert [n for n, _ in blocks.named_parameters()] == ["enc.weight", "enc.bias", "dec.weight", "dec.bias"]
    blocks.pop("extra")
    assert list(blocks.keys()) == ["enc", "dec"]
    plist = nn.ParameterList([kiln.zeros(2), kiln.ones(3)])
    pdict = nn.ParameterDict({"scale": kiln.ones(1)})
    holder = nn.Module()
    holder.plist, holder.pdict = plist, pdict
    assert [n for n, _ in holder.named_parameters()] == ["plist.0", "plist.1", "pdict.scale"]
    assert all(isinstance(p, nn.Parameter) and p.requires_grad for p in holder.parameters())
    assert list(holder.state_dict()) == ["plist.0", "plist.1", "pdict.scale"]


def test_one_hot_normalize_cosine_similarity():
    idx = kiln.tensor([[0, 2], [1, 0]])
    np.testing.assert_array_equal(F.one_hot(idx, 3).numpy(), np.eye(3, dtype=np.int64)[idx.numpy()])
    assert F.one_hot(kiln.tensor([4, 1])).shape == (2, 5)
    with pytest.raises(RuntimeError, match="smaller than num_classes"):
        F.one_hot(kiln.tensor([3]), 3)
    with pytest.raises(RuntimeError, match="non-negative"):
        F.one_hot(kiln.tensor([-1]), 3)
    a = np.random.default_rng(5).normal(size=(4, 3))
    np.testing.assert_allclose(F.normalize(kiln.tensor(a)).numpy(), a / np.linalg.norm(a, axis=1, keepdims=True),
                               rtol=1e-12)
    np.testing.assert_allclose(F.normalize(kiln.zeros(2, 3)).numpy(), np.zeros((2, 3)))  # eps, no 0 / 0
    b = np.random.default_rng(6).normal(size=(4, 3))
    want = (a * b).sum(1) / (np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1))
    np.testing.assert_allclose(F.cosine_similarity(kiln.tensor(a), kiln.tensor(b)).numpy(), want, rtol=1e-12)


def test_bce_on_probabilities_matches_numpy_and_clamps_logs():
    p = np.array([0.2, 0.9, 0.5, 1.0])
    t = np.array([0.0, 1.0, 0.3, 0.0])
    x = kiln.tensor(p, requires_grad=True)
    loss = nn.BCELoss(reduction="none")(x, kiln.tensor(t))
    with np.errstate(divide="ignore"):
        want = -(t * np.maximum(np.log(p), -100) + (1 - t) * np.maximum(np.log(1 - p), -100))
    np.testing.assert_allclose(loss.detach().numpy(), want, rtol=1e-12)
    assert math.isclose(F.binary_cross_entropy(x, kiln.tensor(t)).item(), want.mean(), rel_tol=1e-12)
    with pytest.raises(RuntimeError, match="between 0 and 1"):
        F.binary_cross_entropy(kiln.tensor([1.5]), kiln.tensor([1.0]))


def test_kiln_embedding_function_uses_torch_argument_order():
    w = kiln.arange(12, dtype=kiln.float32).reshape(4, 3)
    np.testing.assert_array_equal(kiln.embedding(w, kiln.tensor([3, 0])).numpy(), np_of(w)[[3, 0]])
