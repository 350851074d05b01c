"""The activations and losses of issue 16 against torch: forward and gradients on the same inputs
(functional forms, in-place forms, modules with the same weights), module reprs and state_dicts,
rrelu's training slopes drawn from the same generator stream, legacy size_average/reduce, errors."""
import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import kiln  # noqa: E402
import kiln.nn as kn  # noqa: E402
import torch.nn as tn  # noqa: E402

KF, TF = kiln.nn.functional, torch.nn.functional
RNG = np.random.default_rng(16)


def arr(*shape, lo=-4.0, hi=4.0):
    return RNG.uniform(lo, hi, size=shape)


def pair(a, grad=True):
    """The same float64 values as a kiln and a torch tensor."""
    return (kiln.tensor(a.tolist(), dtype=kiln.float64, requires_grad=grad),
            torch.tensor(a, dtype=torch.float64, requires_grad=grad))


def check(kf, tf, *arrays, grad=(), **kwargs):
    """kf(*kiln args, **kwargs) against tf(*torch args): values and the gradient of sum(out * w)
    for the array positions in `grad`."""
    ks, ts = zip(*(pair(a, i in grad) for i, a in enumerate(arrays)))
    kr, tr = kf(*ks, **kwargs), tf(*ts, **kwargs)
    np.testing.assert_allclose(kr.detach().numpy(), tr.detach().numpy(), rtol=1e-10, atol=1e-12)
    if grad:
        w = arr(*tr.shape)
        (kr * kiln.tensor(w.tolist(), dtype=kiln.float64)).sum().backward()
        (tr * torch.tensor(w)).sum().backward()
        for i in grad:
            np.testing.assert_allclose(ks[i].grad.numpy(), ts[i].grad.numpy(), rtol=1e-9, atol=1e-12)


# kinks and branch points are sampled too: 0, ±lambd, ±3 (hardswish), the threshold
EDGES = np.array([0.0, 0.5, -0.5, 3.0, -3.0, 1.0, -1.0, 30.0, -30.0])
ACTIVATIONS = [
    ("elu", {}), ("elu", {"alpha": 0.3}), ("selu", {}), ("celu", {}), ("celu", {"alpha": 2.5}), ("mish", {}),
    ("hardswish", {}), ("hardsigmoid", {}), ("logsigmoid", {}), ("softsign", {}), ("tanhshrink", {}),
    ("softshrink", {}), ("softshrink", {"lambd": 1.5}), ("hardshrink", {}), ("hardshrink", {"lambd": 1.5}),
    ("threshold", {"threshold": 0.5, "value": -7.0}), ("rrelu", {}), ("rrelu", {"lower": 0.1, "upper": 0.9}),
    ("glu", {}), ("glu", {"dim": 0}),
]


@pytest.mark.parametrize("name,kw", ACTIVATIONS, ids=[f"{n}{kw}" for n, kw in ACTIVATIONS])
def test_activation_matches_torch(name, kw):
    x = np.concatenate([arr(4, 3), EDGES.reshape(3, 3)])   # (7, 3); glu takes dim 0 of an even length
    x = x[:6] if name == "glu" and kw else x
    x = x[:, :2] if name == "glu" and not kw else x
    check(getattr(KF, name), getattr(TF, name), x, grad=(0,), **kw)


@pytest.mark.parametrize("name,kw", [("elu", {"alpha": 0.5}), ("selu", {}), ("celu", {"alpha": 2.0}),
                                     ("hardswish", {}), ("hardsigmoid", {}), ("mish", {}),
                                     ("threshold", {"threshold": 0.0, "value": 3.0}), ("rrelu", {})])
def test_inplace_forms_write_the_input_and_backpropagate(name, kw):
    def run(lib, F):
        leaf = lib.tensor(np.linspace(-4, 4, 9).tolist(), dtype=lib.float64, requires_grad=True)
        y = leaf * 2
        r = getattr(F, name)(y, inplace=True, **kw)
        assert r is y
        (r * r).sum().backward()
        return y.detach().numpy(), leaf.grad.numpy()
    for k, t in zip(run(kiln, KF), run(torch, TF)):
        np.testing.assert_allclose(k, t, rtol=1e-12)
    for lib in ("kiln", "torch"):   # the trailing-underscore forms of torch's namespaces
        L, F = (kiln, KF) if lib == "kiln" else (torch, TF)
        if hasattr(F, name + "_"):
            x = L.tensor([-1.0, 2.0], dtype=L.float64)
            assert getattr(F, name + "_")(x, *kw.values()) is x
    with pytest.raises(RuntimeError, match="leaf Variable"):
        getattr(KF, name)(kiln.ones(2, requires_grad=True), inplace=True, **kw)


def test_torch_namespace_forms():
    x = arr(3, 4)
    for name, args in [("selu", ()), ("celu", (2.0,)), ("threshold", (0.1, 5.0)), ("hardshrink", (0.7,)),
                       ("rrelu", ())]:
        k, t = getattr(kiln, name)(kiln.tensor(x.tolist(), dtype=kiln.float64), *args), \
            getattr(torch, name)(torch.tensor(x), *args)
        np.testing.assert_allclose(k.numpy(), t.numpy(), rtol=1e-12)
    k = kiln.tensor(x.tolist(), dtype=kiln.float64)
    np.testing.assert_allclose(k.hardshrink(1.0).numpy(), torch.tensor(x).hardshrink(1.0).numpy())


@pytest.mark.parametrize("shape,wshape", [((2, 3, 4), (3,)), ((2, 3), (1,)), ((5,), (1,)), ((), ()), ((4, 3, 2, 2), (3,))])
def test_prelu_matches_torch(shape, wshape):
    check(KF.prelu, TF.prelu, arr(*shape), arr(*wshape, lo=-1, hi=1), grad=(0, 1))


def test_rrelu_training_draws_torchs_slopes():
    """Training slopes come from the generator in torch's order: after the same seed, the same
    output; the gradient is the slope where x <= 0."""
    x = np.concatenate([arr(50), [0.0, -0.0]])
    for dtype in ("float64", "float32"):
        kiln.manual_seed(7)
        torch.manual_seed(7)
        kx = kiln.tensor(x.tolist(), dtype=getattr(kiln, dtype), requires_grad=True)
        tx = torch.tensor(x, dtype=getattr(torch, dtype), requires_grad=True)
        kr, tr = KF.rrelu(kx, 0.1, 0.6, training=True), TF.rrelu(tx, 0.1, 0.6, training=True)
        np.testing.assert_array_equal(kr.detach().numpy(), tr.detach().numpy())
        kr.sum().backward()
        tr.sum().backward()
        np.testing.assert_array_equal(kx.grad.numpy(), tx.grad.numpy())
    # the module: random in train(), (lower + upper) / 2 in eval()
    m = kn.RReLU(0.1, 0.3)
    assert not np.allclose(m(kiln.full([20], -1.0)).numpy(), -0.2)
    assert np.allclose(m.eval()(kiln.full([20], -1.0)).numpy(), -0.2)
    g = kiln.Generator().manual_seed(3)
    a = kiln.rrelu(kiln.full([6], -1.0), training=True, generator=g)
    b = kiln.rrelu(kiln.full([6], -1.0), training=True, generator=kiln.Generator().manual_seed(3))
    assert np.array_equal(a.numpy(), b.numpy())


# ---------------------------------------------------------------------------- losses
def signs(*shape):
    return np.where(RNG.random(shape) < 0.5, -1.0, 1.0)


LOSSES = [
    ("smooth_l1_loss", lambda: (arr(4, 3), arr(4, 3)), (0,), {"beta": 0.5}),
    ("smooth_l1_loss", lambda: (arr(4, 3), arr(4, 3)), (0, 1), {"beta": 0.0}),
    ("huber_loss", lambda: (arr(4, 3), arr(4, 3)), (0, 1), {"delta": 2.0}),
    ("kl_div", lambda: (arr(4, 3), arr(4, 3, lo=0, hi=1)), (0, 1), {}),
    ("kl_div", lambda: (arr(4, 3), arr(4, 3, lo=-3, hi=0)), (0, 1), {"log_target": True}),
    ("soft_margin_loss", lambda: (arr(4, 3), signs(4, 3)), (0,), {}),
    ("margin_ranking_loss", lambda: (arr(6), arr(6), signs(6)), (0, 1), {"margin": 0.5}),
    ("cosine_embedding_loss", lambda: (arr(5, 3), arr(5, 3), signs(5)), (0, 1), {"margin": -0.2}),
    ("cosine_embedding_loss", lambda: (arr(3), arr(3), np.array(-1.0)), (0, 1), {}),
    ("triplet_margin_loss", lambda: (arr(5, 3), arr(5, 3), arr(5, 3)), (0, 1, 2), {"margin": 2.0, "swap": True}),
    ("triplet_margin_loss", lambda: (arr(5, 3), arr(5, 3), arr(5, 3)), (0, 1, 2), {"p": 1, "eps": 0.1}),
    ("poisson_nll_loss", lambda: (arr(4, 3, lo=-2, hi=2), arr(4, 3, lo=0, hi=4)), (0,), {"full": True}),
    ("poisson_nll_loss", lambda: (arr(4, 3, lo=0.1, hi=3), arr(4, 3, lo=0, hi=4)), (0,), {"log_input": False}),
    ("gaussian_nll_loss", lambda: (arr(4, 3), arr(4, 3), arr(4, 3, lo=0.01, hi=2)), (0, 1, 2), {"full": True}),
    ("gaussian_nll_loss", lambda: (arr(4, 3), arr(4, 3), arr(4, lo=0, hi=2)), (0, 1, 2), {}),  # one var per row
    ("gaussian_nll_loss", lambda: (arr(4, 3), arr(4, 3), np.array([[0.0], [1e-8], [0.5], [2.0]])), (0, 2), {}),
    ("multilabel_soft_margin_loss", lambda: (arr(4, 3), arr(4, 3, lo=0, hi=1)), (0,), {}),
]


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("name,make,grad,kw", LOSSES, ids=[f"{n}{kw}" for n, _, _, kw in LOSSES])
def test_loss_matches_torch(name, make, grad, kw, reduction):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")    # kl_div's 'mean' warning, in both
        check(getattr(KF, name), getattr(TF, name), *make(), grad=grad, reduction=reduction, **kw)


def test_kl_div_batchmean_and_its_warning():
    x, t = arr(4, 5), arr(4, 5, lo=0, hi=1)
    check(KF.kl_div, TF.kl_div, x, t, grad=(0,), reduction="batchmean")
    with pytest.warns(UserWarning, match="batchmean"):
        KF.kl_div(kiln.zeros(2, 2), kiln.ones(2, 2))


def test_multilabel_weight_and_broadcast_warning():
    k = KF.multilabel_soft_margin_loss(kiln.tensor([[1.0, -2.0]]), kiln.tensor([[1.0, 0.0]]), weight=kiln.tensor([0.5, 2.0]))
    t = TF.multilabel_soft_margin_loss(torch.tensor([[1.0, -2.0]]), torch.tensor([[1.0, 0.0]]), weight=torch.tensor([0.5, 2.0]))
    assert abs(k.item() - t.item()) < 1e-6
    with pytest.warns(UserWarning, match="target size"):
        KF.smooth_l1_loss(kiln.ones(2, 3), kiln.ones(3))


MODULES = [
    ("ELU", (0.5,)), ("SELU", ()), ("CELU", (1.5,)), ("Mish", ()), ("Hardswish", ()), ("Hardsigmoid", ()),
    ("GLU", (1,)), ("LogSigmoid", ()), ("Softsign", ()), ("Tanhshrink", ()), ("Softshrink", (0.3,)),
    ("Hardshrink", (0.3,)), ("Threshold", (0.2, -1.0)), ("PReLU", (4, 0.1)), ("PReLU", ()), ("RReLU", (0.2, 0.4)),
]


@pytest.mark.parametrize("name,args", MODULES, ids=[f"{n}{a}" for n, a in MODULES])
def test_activation_modules(name, args):
    km, tm = getattr(kn, name)(*args), getattr(tn, name)(*args)
    assert repr(km) == repr(tm)
    if name == "PReLU":   # same parameter names and values: state_dicts load both ways
        km, tm = kn.PReLU(*args, dtype=kiln.float64), tn.PReLU(*args, dtype=torch.float64)
        assert km.weight.tolist() == tm.weight.tolist()
        tm.load_state_dict({"weight": torch.tensor(arr(*tm.weight.shape, lo=-1, hi=1))})
        km.load_state_dict({k: kiln.tensor(v.tolist(), dtype=kiln.float64) for k, v in tm.state_dict().items()})
        assert list(km.state_dict()) == list(tm.state_dict()) == ["weight"]
        assert [n for n, _ in km.named_parameters()] == ["weight"]
    km.eval(), tm.eval()
    x = arr(2, 4, 3)
    kx, tx = pair(x)
    kr, tr = km(kx), tm(tx)
    np.testing.assert_allclose(kr.detach().numpy(), tr.detach().numpy(), rtol=1e-10, atol=1e-12)
    kr.sum().backward(), tr.sum().backward()
    np.testing.assert_allclose(kx.grad.numpy(), tx.grad.numpy(), rtol=1e-9, atol=1e-12)
    if name == "PReLU":
        np.testing.assert_allclose(km.weight.grad.numpy(), tm.weight.grad.numpy(), rtol=1e-9)
    for inplace_name in ("ELU", "SELU", "CELU", "Mish", "Hardswish", "Hardsigmoid", "RReLU"):
        if name == inplace_name:
            assert repr(getattr(kn, name)(*args, inplace=True)) == repr(getattr(tn, name)(*args, inplace=True))


LOSS_MODULES = [
    ("SmoothL1Loss", {"beta": 0.5}, 2), ("HuberLoss", {"delta": 0.5}, 2), ("KLDivLoss", {"reduction": "batchmean"}, 2),
    ("SoftMarginLoss", {}, 2), ("MarginRankingLoss", {"margin": 0.2}, 3), ("CosineEmbeddingLoss", {"margin": 0.1}, 3),
    ("TripletMarginLoss", {"p": 1.0, "swap": True}, 3), ("PoissonNLLLoss", {"full": True}, 2),
    ("GaussianNLLLoss", {"eps": 1e-3}, 3), ("MultiLabelSoftMarginLoss", {"reduction": "sum"}, 2),
]


@pytest.mark.parametrize("name,kw,nargs", LOSS_MODULES, ids=[n for n, _, _ in LOSS_MODULES])
def test_loss_modules(name, kw, nargs):
    km, tm = getattr(kn, name)(**kw), getattr(tn, name)(**kw)
    assert repr(km) == repr(tm) and km.reduction == tm.reduction
    xs = {"MarginRankingLoss": (arr(5), arr(5), signs(5)), "CosineEmbeddingLoss": (arr(5, 3), arr(5, 3), signs(5)),
          "GaussianNLLLoss": (arr(5, 3), arr(5, 3), arr(5, 3, lo=0, hi=1)),
          "TripletMarginLoss": (arr(5, 3), arr(5, 3), arr(5, 3)), "KLDivLoss": (arr(5, 3), arr(5, 3, lo=0, hi=1)),
          "PoissonNLLLoss": (arr(5, 3), arr(5, 3, lo=0, hi=4)), "SoftMarginLoss": (arr(5, 3), signs(5, 3)),
          "MultiLabelSoftMarginLoss": (arr(5, 3), arr(5, 3, lo=0, hi=1))}.get(name, (arr(5, 3), arr(5, 3)))
    assert len(xs) == nargs
    check(km, tm, *xs, grad=(0,))


def test_legacy_size_average_and_reduce():
    for args, reduction in [({"size_average": False}, "sum"), ({"reduce": False}, "none"),
                            ({"size_average": True, "reduce": True}, "mean")]:
        for name in ("SmoothL1Loss", "KLDivLoss", "SoftMarginLoss", "MarginRankingLoss", "CosineEmbeddingLoss",
                     "TripletMarginLoss", "PoissonNLLLoss", "MultiLabelSoftMarginLoss", "MSELoss", "NLLLoss",
                     "CrossEntropyLoss", "BCELoss"):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                assert getattr(kn, name)(**args).reduction == getattr(tn, name)(**args).reduction == reduction, name
    # positional, as torch: SmoothL1Loss(size_average, reduce, reduction, beta)
    assert kn.SmoothL1Loss(None, None, "sum", 0.5).beta == 0.5
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        x, t = arr(3, 2), arr(3, 2)
        check(KF.smooth_l1_loss, TF.smooth_l1_loss, x, t, size_average=False)
        check(KF.soft_margin_loss, TF.soft_margin_loss, x, signs(3, 2), reduce=False)


def _raises_like_torch(call, match):
    """call(lib, F) raises the same exception class in kiln and torch; kiln's message matches."""
    with pytest.raises(Exception) as t:
        call(torch, TF)
    with pytest.raises(t.type, match=match):
        call(kiln, KF)


@pytest.mark.parametrize("call,match", [
    (lambda L, F: F.celu(L.ones(2), alpha=0.0), "alpha cannot be 0"),
    (lambda L, F: F.softshrink(L.ones(2), -1.0), "softshrink.*lambda must be greater or equal to 0"),
    (lambda L, F: F.glu(L.ones(3)), "glu.*Halving dimension must be even"),
    (lambda L, F: F.glu(L.ones([])), "glu does not support scalars"),
    (lambda L, F: F.glu(L.ones(2, 4), 2), "out of range"),
    (lambda L, F: F.elu(L.ones(2, dtype=L.int64)), "elu"),
    (lambda L, F: F.prelu(L.ones(2, 3), L.ones(2)), "prelu.*Mismatch of parameter numbers"),
    (lambda L, F: F.prelu(L.ones(2, 3), L.ones(3, 1)), "prelu.*scalar or 1D"),
    (lambda L, F: F.smooth_l1_loss(L.ones(2), L.ones(2), reduction="avg"), "avg is not a valid value for reduction"),
    (lambda L, F: F.smooth_l1_loss(L.ones(2), L.ones(2), beta=-1.0), "smooth_l1_loss.*negative values for beta"),
    (lambda L, F: F.huber_loss(L.ones(2), L.ones(2), delta=0.0), "huber_loss.*non-positive values for delta"),
    (lambda L, F: F.kl_div(L.ones(2), L.ones(2), reduction="bad"), "bad is not a valid value for reduction"),
    (lambda L, F: F.margin_ranking_loss(L.ones(2), L.ones(2), L.ones([])), "margin_ranking_loss.*same dimension"),
    (lambda L, F: F.cosine_embedding_loss(L.ones(2, 3), L.ones(2, 3), L.ones(2, 1)), "cosine_embedding_loss.*0D or 1D"),
    (lambda L, F: F.cosine_embedding_loss(L.ones(3), L.ones(3), L.ones(1)), "expects 2D input"),
    (lambda L, F: F.triplet_margin_loss(L.ones(2, 3), L.ones(3), L.ones(2, 3)), "triplet_margin_loss.*same number"),
    (lambda L, F: F.poisson_nll_loss(L.ones(2), L.ones(2), reduction="x"), "x is not a valid value"),
    (lambda L, F: F.gaussian_nll_loss(L.ones(2, 3), L.ones(2, 3), L.ones(3, 2)), "var is of incorrect size"),
    (lambda L, F: F.gaussian_nll_loss(L.ones(2), L.ones(2), -L.ones(2)), "var has negative entry"),
    (lambda L, F: F.multilabel_soft_margin_loss(L.ones(2, 3), L.ones(2, 3), reduction="x"), "x is not valid"),
    (lambda L, F: F.rrelu(L.ones(2), 0.5, 0.1, training=True), "rrelu.*Lower bound"),
])
def test_errors_match_torch(call, match):
    _raises_like_torch(call, match)
