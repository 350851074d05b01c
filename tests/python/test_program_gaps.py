"""What the training scripts of test_programs_more.py (and a sweep of names such scripts use) found
missing or different in kiln, each against torch 1.13: torch.spmm (pygcn), the float32 mean of a
loss and x ** 4 rounding as torch's (regression/main.py), nn.Softmax() with torch's implicit dim,
Softmin, ReLU6, channel dropout (Dropout1d/2d/3d, drawing torch's masks), PairwiseDistance /
CosineSimilarity, the padding layers, diff, aminmax, var_mean/std_mean, randint_like,
tril_indices/triu_indices, Module.get_parameter/get_buffer, the anomaly-mode switches,
torch.compile (an identity) and a few Tensor properties."""
import warnings

import numpy as np
import pytest
import torch

import kiln


def k(t):
    return kiln.from_numpy(t.detach().numpy().copy())


def same(a, b):
    np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())


# ---- pygcn: torch.spmm ---------------------------------------------------------------------------
def test_spmm_sparse_dense_and_dense_dense_with_gradients():
    torch.manual_seed(0)
    dense = torch.randn(6, 6) * (torch.rand(6, 6) < 0.4)
    adj_t, adj_k = dense.to_sparse(), k(dense).to_sparse()
    st, sk = torch.randn(6, 3, requires_grad=True), None
    sk = k(st).requires_grad_()
    out_t, out_k = torch.spmm(adj_t, st), kiln.spmm(adj_k, sk)
    np.testing.assert_allclose(out_k.detach().numpy(), out_t.detach().numpy(), rtol=1e-6, atol=1e-6)
    out_t.sum().backward()
    out_k.sum().backward()
    np.testing.assert_allclose(sk.grad.numpy(), st.grad.numpy(), rtol=1e-6, atol=1e-6)
    same(torch.spmm(dense, st.detach()), kiln.spmm(k(dense), k(st)))
    with pytest.raises(NotImplementedError):
        torch.spmm(st.detach().t().contiguous(), adj_t)
    with pytest.raises(NotImplementedError):
        kiln.spmm(k(st).t().contiguous(), adj_k)


# ---- regression/main.py: the loss's mean and x ** 4 ------------------------------------------------
@pytest.mark.parametrize("n", [7, 32, 33, 100, 1000])
def test_loss_means_round_as_torchs(n):
    torch.manual_seed(n)
    a, b = torch.randn(n, 1) * 10, torch.randn(n, 1) * 10
    for name, kw in (("smooth_l1_loss", {}), ("smooth_l1_loss", {"beta": 0.5}), ("mse_loss", {}), ("l1_loss", {}),
                     ("huber_loss", {"delta": 0.5})):
        want = getattr(torch.nn.functional, name)(a, b, **kw)
        got = getattr(kiln.nn.functional, name)(k(a), k(b), **kw)
        assert got.item() == want.item(), name
    # the bias gradient of a Linear: a column sum
    same(kiln.ones(n, 3).sum(0), torch.ones(n, 3).sum(0))
    x = torch.randn(n, 5)
    same(k(x).sum(0), x.sum(0))
    same(k(x).mean(1), x.mean(1))


def test_poly_features_round_as_torchs():
    torch.manual_seed(0)
    x = torch.randn(1000).unsqueeze(1)
    same(kiln.cat([k(x) ** i for i in range(1, 5)], 1), torch.cat([x ** i for i in range(1, 5)], 1))
    same(k(x).pow(4.0), x.pow(4.0))
    same(kiln.pow(k(x).abs(), 2.5), torch.pow(x.abs(), 2.5))


# ---- nn modules --------------------------------------------------------------------------------
def test_softmax_modules_take_torchs_implicit_dim():
    x = torch.randn(2, 3, 4)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name in ("Softmax", "LogSoftmax", "Softmin"):
            tm, km = getattr(torch.nn, name)(), getattr(kiln.nn, name)()
            assert repr(km) == repr(tm)
            np.testing.assert_allclose(km(k(x)).numpy(), tm(x).numpy(), rtol=1e-6, atol=1e-7)
            for v in (x[0], x[0, 0]):
                np.testing.assert_allclose(km(k(v)).numpy(), tm(v).numpy(), rtol=1e-6, atol=1e-7)
        np.testing.assert_allclose(kiln.nn.Softmin(dim=2)(k(x)).numpy(), torch.nn.Softmin(dim=2)(x).numpy(), rtol=1e-6)
        np.testing.assert_allclose(kiln.nn.functional.softmin(k(x), 1, dtype=kiln.float64).numpy(),
                                   torch.nn.functional.softmin(x, 1, dtype=torch.float64).numpy(), rtol=1e-12)


def test_relu6():
    x = torch.tensor([-1.0, 0.0, 3.0, 6.0, 7.0], requires_grad=True)
    kx = k(x).requires_grad_()
    tm, km = torch.nn.ReLU6(), kiln.nn.ReLU6()
    assert repr(km) == repr(tm) and repr(kiln.nn.ReLU6(True)) == repr(torch.nn.ReLU6(True))
    y, ky = tm(x), km(kx)
    same(ky, y)
    y.sum().backward()
    ky.sum().backward()
    same(kx.grad, x.grad)
    same(kiln.nn.functional.relu6(kx.detach() * 2), torch.nn.functional.relu6(x.detach() * 2))


@pytest.mark.parametrize("name,shape", [("dropout1d", (4, 6, 5)), ("dropout1d", (6, 5)), ("dropout2d", (3, 5, 4, 4)),
                                        ("dropout2d", (3, 5, 7)), ("dropout3d", (2, 4, 3, 3, 3)),
                                        ("dropout3d", (4, 3, 3, 3))])
def test_channel_dropout_draws_torchs_masks(name, shape):
    x = torch.randn(*shape, requires_grad=True)
    kx = k(x).requires_grad_()
    torch.manual_seed(5)
    kiln.manual_seed(5)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        y = getattr(torch.nn.functional, name)(x, 0.4)
        ky = getattr(kiln.nn.functional, name)(kx, 0.4)
    same(ky, y)
    y.backward(torch.ones_like(y))
    ky.backward(kiln.ones_like(ky))
    same(kx.grad, x.grad)
    # the generator moved as torch's did
    assert kiln.rand(1).item() == torch.rand(1).item()


def test_channel_dropout_modules_and_errors():
    x = torch.randn(2, 3, 4, 4)
    for name in ("Dropout1d", "Dropout2d", "Dropout3d"):
        tm, km = getattr(torch.nn, name)(0.3), getattr(kiln.nn, name)(0.3)
        assert repr(km) == repr(tm)
    torch.manual_seed(1)
    kiln.manual_seed(1)
    tm, km = torch.nn.Dropout2d(0.5), kiln.nn.Dropout2d(0.5)
    same(km(k(x)), tm(x))
    tm.eval(), km.eval()
    same(km(k(x)), tm(x))
    xi, kxi = x.clone(), k(x)
    torch.nn.functional.dropout2d(xi, 0.5, inplace=True)
    kiln.nn.functional.dropout2d(kxi, 0.5, inplace=True)
    same(kxi, xi)
    with pytest.raises(RuntimeError, match="dropout1d: Expected 2D or 3D input"):
        kiln.nn.functional.dropout1d(k(x), 0.5)
    with pytest.raises(RuntimeError, match="dropout1d: Expected 2D or 3D input"):
        torch.nn.functional.dropout1d(x, 0.5)
    for lib in (torch, kiln):
        with pytest.raises(ValueError):
            lib.nn.functional.dropout2d(lib.ones(2, 2, 2, 2), 1.5)


def test_distance_modules():
    a, b = torch.randn(5, 4), torch.randn(5, 4)
    for tm, km in ((torch.nn.PairwiseDistance(), kiln.nn.PairwiseDistance()),
                   (torch.nn.PairwiseDistance(p=1, keepdim=True), kiln.nn.PairwiseDistance(p=1, keepdim=True)),
                   (torch.nn.CosineSimilarity(), kiln.nn.CosineSimilarity()),
                   (torch.nn.CosineSimilarity(dim=0), kiln.nn.CosineSimilarity(dim=0))):
        got, want = km(k(a), k(b)), tm(a, b)
        assert got.shape == want.shape
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(kiln.nn.functional.pairwise_distance(k(a), k(b[0])).numpy(),
                               torch.nn.functional.pairwise_distance(a, b[0]).numpy(), rtol=1e-5)


@pytest.mark.parametrize("name,args,shape", [
    ("ZeroPad2d", (1,), (1, 2, 3, 3)), ("ZeroPad2d", ((1, 0, 2, 1),), (2, 3, 3)),
    ("ConstantPad1d", (2, 3.5), (2, 3, 4)), ("ConstantPad2d", ((1, 2, 0, 1), -1.0), (1, 2, 3, 3)),
    ("ConstantPad3d", (1, 0.5), (1, 1, 2, 2, 2)), ("ReflectionPad1d", (2,), (1, 2, 5)),
    ("ReflectionPad2d", ((1, 2, 2, 1),), (1, 2, 4, 4)), ("ReplicationPad1d", ((3, 1),), (2, 3, 4)),
    ("ReplicationPad2d", (2,), (1, 1, 3, 3)), ("ReplicationPad3d", (1,), (1, 1, 2, 2, 2)),
    ("ReflectionPad3d", (1,), (1, 1, 3, 3, 3)),
])
def test_padding_layers(name, args, shape):
    x = torch.randn(*shape, requires_grad=True)
    kx = k(x).requires_grad_()
    tm, km = getattr(torch.nn, name)(*args), getattr(kiln.nn, name)(*args)
    assert repr(km) == repr(tm)
    y, ky = tm(x), km(kx)
    same(ky, y)
    w = torch.randn(*y.shape)
    (y * w).sum().backward()
    (ky * k(w)).sum().backward()
    np.testing.assert_allclose(kx.grad.numpy(), x.grad.numpy(), rtol=1e-6, atol=1e-6)


# ---- torch functions ------------------------------------------------------------------------------
def test_diff():
    x = torch.randn(4, 6)
    for kw in ({}, {"n": 2}, {"dim": 0}, {"n": 3, "dim": 0}, {"n": 0}, {"n": 7}):
        same(kiln.diff(k(x), **kw), torch.diff(x, **kw))
    same(k(x).diff(dim=0), x.diff(dim=0))
    p, a = torch.randn(4, 2), torch.randn(4, 1)
    same(kiln.diff(k(x), prepend=k(p), append=k(a)), torch.diff(x, prepend=p, append=a))
    b = torch.tensor([True, False, False, True])
    same(kiln.diff(k(b)), torch.diff(b))
    i = torch.tensor([1, 4, 9, 16])
    same(kiln.diff(k(i), n=2), torch.diff(i, n=2))
    with pytest.raises(RuntimeError, match="at least one-dimensional"):
        kiln.diff(kiln.tensor(1.0))
    with pytest.raises(RuntimeError, match="at least one-dimensional"):
        torch.diff(torch.tensor(1.0))


def test_aminmax_var_mean_std_mean():
    x = torch.randn(3, 5)
    for kw in ({}, {"dim": 1}, {"dim": 0, "keepdim": True}, {"keepdim": True}):
        got, want = kiln.aminmax(k(x), **kw), torch.aminmax(x, **kw)
        same(got.min, want.min)
        same(got.max, want.max)
        lo, hi = k(x).aminmax(**kw)
        same(lo, want[0])
        same(hi, want[1])
    for fn in ("var_mean", "std_mean"):
        for args, kw in (((), {}), ((1,), {}), ((0,), {"keepdim": True}), ((1,), {"unbiased": False}),
                         ((1,), {"correction": 0})):
            got, want = getattr(kiln, fn)(k(x), *args, **kw), getattr(torch, fn)(x, *args, **kw)
            assert isinstance(got, tuple) and len(got) == 2
            for g, w in zip(got, want):
                assert g.shape == w.shape
                np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-6, atol=1e-7)


def test_randint_like_draws_torchs_numbers():
    for dtype in (torch.float32, torch.int64, torch.int32):
        x = torch.zeros(3, 7, dtype=dtype)
        torch.manual_seed(9)
        kiln.manual_seed(9)
        same(kiln.randint_like(k(x), 10), torch.randint_like(x, 10))
        same(kiln.randint_like(k(x), 3, 10), torch.randint_like(x, 3, 10))
        assert kiln.randint_like(k(x), 5).dtype == getattr(kiln, str(dtype).split(".")[1])
    assert kiln.randint_like(kiln.zeros(2), 4, dtype=kiln.int64).dtype == kiln.int64


@pytest.mark.parametrize("row,col,offset", [(3, 3, 0), (4, 6, 1), (5, 3, -2), (1, 4, 0), (3, 3, 5), (3, 3, -5)])
def test_tril_triu_indices(row, col, offset):
    same(kiln.tril_indices(row, col, offset), torch.tril_indices(row, col, offset))
    same(kiln.triu_indices(row, col, offset), torch.triu_indices(row, col, offset))
    assert kiln.tril_indices(row, col, offset, dtype=kiln.int32).dtype == kiln.int32


def test_compile_is_an_identity():
    m = kiln.nn.Linear(2, 2)
    assert kiln.compile(m) is m
    assert kiln.compile(mode="reduce-overhead")(m) is m


# ---- modules, autograd switches, tensor properties -------------------------------------------------
def test_get_parameter_and_get_buffer():
    for lib in (torch, kiln):
        m = lib.nn.Sequential(lib.nn.Linear(2, 3), lib.nn.BatchNorm1d(3))
        assert m.get_parameter("0.weight") is m[0].weight
        assert m.get_buffer("1.running_mean") is m[1].running_mean
        with pytest.raises(AttributeError, match="is not an nn.Parameter"):
            m.get_parameter("1.running_mean")
        with pytest.raises(AttributeError, match="is not a buffer"):
            m.get_buffer("0.weight")
        with pytest.raises(AttributeError, match="has no attribute `nope`"):
            m.get_parameter("0.nope")


def test_anomaly_mode_switches():
    for lib in (torch, kiln):
        assert not lib.is_anomaly_enabled()
        lib.autograd.set_detect_anomaly(True)
        assert lib.is_anomaly_enabled()
        lib.autograd.set_detect_anomaly(False)
        assert not lib.is_anomaly_enabled()
        with lib.autograd.set_detect_anomaly(True):
            assert lib.is_anomaly_enabled()
        assert not lib.is_anomaly_enabled()
        with pytest.warns(UserWarning, match="Anomaly Detection has been enabled"):
            with lib.autograd.detect_anomaly():
                assert lib.is_anomaly_enabled()
                x = lib.ones(2, requires_grad=True)
                (x * 2).sum().backward()
        assert not lib.is_anomaly_enabled()


def test_tensor_memory_properties():
    for lib in (torch, kiln):
        x = lib.ones(3, 4, dtype=lib.float64)
        assert x.is_pinned() is False and x.is_shared() is False
        assert x.share_memory_() is x
    assert kiln.ones(3, 4, dtype=kiln.float64).nbytes == 96  # torch 2.x's property


# ---- cross_entropy: log_softmax over the last dim and nll_loss's reduction, torch's bits -----------
TORCH_LANES = kiln._C._simd_target() in ("AVX2", "AVX3", "AVX3_DL", "AVX3_ZEN4", "AVX3_SPR")


def same_or_close(got, want):
    """Bit for bit where kiln takes torch's order (AVX2/AVX-512 targets), else within float rounding."""
    if TORCH_LANES:
        same(got, want)
    else:
        np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("classes", list(range(1, 20)) + [31, 32, 33, 100, 1000, 10007])
def test_softmax_rows_are_torchs(classes):
    torch.manual_seed(classes)
    x = torch.randn(9, classes) * 3
    for fn in ("softmax", "log_softmax"):
        same_or_close(getattr(k(x), fn)(1), getattr(x, fn)(1))
        same_or_close(getattr(k(x), fn)(-1), getattr(x, fn)(-1))


@pytest.mark.parametrize("batch", [1, 5, 16, 17, 100, 1000, 70000])
def test_nll_loss_and_cross_entropy_are_torchs(batch):
    torch.manual_seed(batch)
    logits = torch.randn(batch, 7)
    target = torch.randint(7, (batch,))
    target[::6] = 3
    w = torch.rand(7)
    F, KF = torch.nn.functional, kiln.nn.functional
    for kw in ({}, {"reduction": "sum"}, {"weight": w}, {"ignore_index": 3}, {"weight": w, "ignore_index": 3,
                                                                                "reduction": "sum"}):
        kkw = {key: (k(v) if isinstance(v, torch.Tensor) else v) for key, v in kw.items()}
        same_or_close(KF.cross_entropy(k(logits), k(target), **kkw), F.cross_entropy(logits, target, **kw))
        logp = logits.log_softmax(1)
        same(KF.nll_loss(k(logp), k(target), **kkw), F.nll_loss(logp, target, **kw))  # NaN when all are ignored
        dkw = {key: (v.double() if isinstance(v, torch.Tensor) else v) for key, v in kw.items()}
        kdkw = {key: (k(v) if isinstance(v, torch.Tensor) else v) for key, v in dkw.items()}
        same(KF.nll_loss(k(logp.double()), k(target), **kdkw), F.nll_loss(logp.double(), target, **dkw))


def test_cross_entropy_over_spatial_dims_is_torchs():
    torch.manual_seed(0)
    x, t = torch.randn(3, 5, 4, 6), torch.randint(5, (3, 4, 6))
    assert kiln.nn.functional.nll_loss(k(x), k(t)).item() == torch.nn.functional.nll_loss(x, t).item()
    got = kiln.nn.functional.cross_entropy(k(x), k(t))
    np.testing.assert_allclose(got.item(), torch.nn.functional.cross_entropy(x, t).item(), rtol=1e-6)
    assert kiln.nn.functional.nll_loss(k(x[:0]), k(t[:0])).isnan().item()


# ---- optimizer steps: torch's fused multiply-adds ----------------------------------------------------
FMA = kiln._C._simd_target() in ("AVX2", "AVX3", "AVX3_DL", "AVX3_ZEN4", "AVX3_SPR")  # torch's AVX2 kernels


@pytest.mark.parametrize("n", [3, 16, 40, 4099])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_add_sub_with_alpha_and_addcmul_round_as_torchs(n, dtype):
    torch.manual_seed(n)
    a, b, c = torch.randn(n, dtype=dtype), torch.randn(n, dtype=dtype), torch.randn(n, dtype=dtype)
    check = same_or_close if not FMA else same
    check(k(a).add(k(b), alpha=-0.013), a.add(b, alpha=-0.013))
    check(k(a).sub(k(b), alpha=0.37), a.sub(b, alpha=0.37))
    check(k(a).add_(k(b), alpha=2.5), a.clone().add_(b, alpha=2.5))
    check(k(a).sub_(k(b), alpha=-3), a.clone().sub_(b, alpha=-3))
    check(k(a).addcmul(k(b), k(c), value=0.001), a.addcmul(b, c, value=0.001))
    check(k(a).addcmul_(k(b), k(c)), a.clone().addcmul_(b, c))
    # broadcasting keeps working (the formula op); the deprecated alpha-first overload, whose warning
    # comes once a process, is test_programs_lm.py's test_old_script_idioms_match_torch
    same_or_close(k(a).add(k(b[:1]), alpha=0.5), a.add(b[:1], alpha=0.5))


def test_alpha_adds_under_autograd_keep_gradients():
    a = torch.randn(5, requires_grad=True)
    b = torch.randn(5, requires_grad=True)
    ka, kb = k(a).requires_grad_(), k(b).requires_grad_()
    y, ky = a.add(b, alpha=-2.0).addcmul(a, b, value=0.5), ka.add(kb, alpha=-2.0).addcmul(ka, kb, value=0.5)
    np.testing.assert_allclose(ky.detach().numpy(), y.detach().numpy(), rtol=1e-6)
    y.sum().backward()
    ky.sum().backward()
    np.testing.assert_allclose(ka.grad.numpy(), a.grad.numpy(), rtol=1e-6)
    np.testing.assert_allclose(kb.grad.numpy(), b.grad.numpy(), rtol=1e-6)


@pytest.mark.parametrize("name,kw", [("SGD", {"lr": 0.1}), ("SGD", {"lr": 0.1, "momentum": 0.9, "dampening": 0.1,
                                                                      "weight_decay": 1e-2}),
                                     ("Adam", {"lr": 1e-3}), ("AdamW", {"lr": 5e-4, "betas": (0.9, 0.95)}),
                                     ("Adam", {"lr": 1e-2, "weight_decay": 0.1, "amsgrad": True})])
def test_optimizer_steps_are_torchs(name, kw):
    torch.manual_seed(0)
    p = torch.randn(4099)
    tp, kp = p.clone().requires_grad_(), k(p).requires_grad_()
    to, ko = getattr(torch.optim, name)([tp], **kw), getattr(kiln.optim, name)([kp], **kw)
    for step in range(5):
        g = torch.randn(4099) * 0.1
        tp.grad, kp.grad = g.clone(), k(g)
        to.step()
        ko.step()
        same_or_close(kp, tp) if FMA else np.testing.assert_allclose(kp.detach().numpy(), tp.detach().numpy(),
                                                                     rtol=1e-5, atol=1e-7)
