"""nn modules and functional forms added for API breadth (nn/_functional_breadth.py and the modules
beside torch's), against torch 1.13: values, indices, gradients, torch's random stream and errors."""
import warnings

import numpy as np
import pytest

import kiln
import kiln.nn as nn
import kiln.nn.functional as F

torch = pytest.importorskip("torch")
TF = torch.nn.functional

R = np.random.default_rng(1)


def rnd(*shape):
    return R.uniform(-2, 2, size=shape)


def same(k, t, tol=1e-10):
    if isinstance(t, (tuple, list)):
        for a, b in zip(k, t):
            same(a, b, tol)
        return
    assert tuple(k.shape) == tuple(t.shape), (k.shape, t.shape)
    assert str(k.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]
    np.testing.assert_allclose(k.detach().numpy(), t.detach().numpy(), rtol=tol, atol=tol)


def grads_same(kfn, tfn, *arrays, tol=1e-10):
    ks = [kiln.tensor(a, requires_grad=True) for a in arrays]
    ts = [torch.tensor(a, requires_grad=True) for a in arrays]
    ko, to = kfn(*ks), tfn(*ts)
    if isinstance(to, tuple):
        same(ko[1], to[1], 0)
        ko, to = ko[0], to[0]
    same(ko, to, tol)
    w = np.random.default_rng(3).uniform(-1, 1, size=tuple(to.shape))
    (ko * kiln.tensor(w)).sum().backward()
    (to * torch.tensor(w)).sum().backward()
    for k, t in zip(ks, ts):
        same(k.grad, t.grad, tol)


def raises_same(kfn, tfn):
    with pytest.raises(Exception) as te:
        tfn()
    with pytest.raises(type(te.value)):
        kfn()


@pytest.mark.parametrize("shape,kw", [
    ((2, 3, 11), dict(kernel_size=3)), ((3, 11), dict(kernel_size=3, stride=2, padding=1)),
    ((2, 2, 10), dict(kernel_size=4, stride=3, padding=2, dilation=1, ceil_mode=True)),
    ((1, 2, 12), dict(kernel_size=3, stride=2, dilation=2)),
])
def test_max_pool1d(shape, kw):
    a = rnd(*shape)
    grads_same(lambda x: F.max_pool1d(x, **kw), lambda x: TF.max_pool1d(x, **kw), a)
    grads_same(lambda x: F.max_pool1d(x, return_indices=True, **kw),
               lambda x: TF.max_pool1d(x, return_indices=True, **kw), a)
    grads_same(lambda x: F.max_pool1d_with_indices(x, **kw), lambda x: TF.max_pool1d_with_indices(x, **kw), a)
    grads_same(lambda x: nn.MaxPool1d(**kw)(x), lambda x: torch.nn.MaxPool1d(**kw)(x), a)


@pytest.mark.parametrize("shape,kw", [
    ((1, 2, 5, 6, 5), dict(kernel_size=2)), ((2, 4, 5, 6), dict(kernel_size=3, stride=2, padding=1)),
    ((1, 1, 7, 6, 5), dict(kernel_size=(3, 2, 2), stride=(2, 1, 2), padding=(1, 0, 1), ceil_mode=True)),
    ((1, 2, 7, 7, 7), dict(kernel_size=2, stride=2, dilation=2)),
    ((1, 1, 6, 5, 5), dict(kernel_size=3, stride=2, padding=1, dilation=(1, 2, 1), ceil_mode=True)),
])
def test_max_pool3d(shape, kw):
    a = rnd(*shape)
    grads_same(lambda x: F.max_pool3d(x, **kw), lambda x: TF.max_pool3d(x, **kw), a)
    grads_same(lambda x: F.max_pool3d(x, return_indices=True, **kw),
               lambda x: TF.max_pool3d(x, return_indices=True, **kw), a)
    grads_same(lambda x: nn.MaxPool3d(**kw)(x), lambda x: torch.nn.MaxPool3d(**kw)(x), a)
    grads_same(lambda x: kiln.max_pool3d(x, **kw), lambda x: torch.max_pool3d(x, **kw), a)


def test_max_pool3d_float32_and_errors():
    a = rnd(1, 2, 4, 4, 4).astype(np.float32)
    same(F.max_pool3d(kiln.tensor(a), 2), TF.max_pool3d(torch.tensor(a), 2), 0)
    raises_same(lambda: F.max_pool3d(kiln.ones(2, 2), 2), lambda: TF.max_pool3d(torch.ones(2, 2), 2))
    raises_same(lambda: F.max_pool3d(kiln.ones(1, 1, 4, 4, 4), 2, padding=2),
                lambda: TF.max_pool3d(torch.ones(1, 1, 4, 4, 4), 2, padding=2))
    raises_same(lambda: F.max_pool3d(kiln.ones(1, 1, 1, 1, 1), 2), lambda: TF.max_pool3d(torch.ones(1, 1, 1, 1, 1), 2))


@pytest.mark.parametrize("kw", [dict(kernel_size=3), dict(kernel_size=3, stride=2, padding=1),
                                dict(kernel_size=4, stride=3, padding=2, ceil_mode=True, count_include_pad=False),
                                dict(kernel_size=2, ceil_mode=True)])
def test_avg_pool1d(kw):
    a = rnd(2, 3, 11)
    grads_same(lambda x: F.avg_pool1d(x, **kw), lambda x: TF.avg_pool1d(x, **kw), a)
    grads_same(lambda x: nn.AvgPool1d(**kw)(x), lambda x: torch.nn.AvgPool1d(**kw)(x), a)
    assert repr(nn.AvgPool1d(**kw)) == repr(torch.nn.AvgPool1d(**kw))


@pytest.mark.parametrize("kw", [dict(kernel_size=2), dict(kernel_size=3, stride=2, padding=1),
                                dict(kernel_size=(3, 2, 3), stride=(2, 1, 2), padding=(1, 1, 0), ceil_mode=True),
                                dict(kernel_size=3, stride=2, padding=1, ceil_mode=True, count_include_pad=False),
                                dict(kernel_size=2, divisor_override=3)])
def test_avg_pool3d(kw):
    a = rnd(1, 2, 7, 6, 5)
    grads_same(lambda x: F.avg_pool3d(x, **kw), lambda x: TF.avg_pool3d(x, **kw), a)
    grads_same(lambda x: nn.AvgPool3d(**kw)(x), lambda x: torch.nn.AvgPool3d(**kw)(x), a)
    grads_same(lambda x: F.avg_pool3d(x, **kw), lambda x: TF.avg_pool3d(x, **kw), rnd(2, 7, 6, 5))


@pytest.mark.parametrize("nd", [1, 2, 3])
def test_max_unpool(nd):
    shape = (2, 3) + (6,) * nd
    a = rnd(*shape)
    kpool = [F.max_pool1d, F.max_pool2d, F.max_pool3d][nd - 1]
    tpool = [TF.max_pool1d, TF.max_pool2d, TF.max_pool3d][nd - 1]
    ko, ki = kpool(kiln.tensor(a), 2, return_indices=True)
    to, ti = tpool(torch.tensor(a), 2, return_indices=True)
    kun = getattr(F, f"max_unpool{nd}d")
    tun = getattr(TF, f"max_unpool{nd}d")
    grads_same(lambda x: kun(x, ki, 2), lambda x: tun(x, ti, 2), to.detach().numpy())
    grads_same(lambda x: kun(x, ki, 2, output_size=list(shape)), lambda x: tun(x, ti, 2, output_size=list(shape)),
               to.detach().numpy())
    km = getattr(nn, f"MaxUnpool{nd}d")(2)
    tm = getattr(torch.nn, f"MaxUnpool{nd}d")(2)
    same(km(ko, ki), tm(to, ti))
    raises_same(lambda: kun(ko, ki, 2, output_size=[20] * nd), lambda: tun(to, ti, 2, output_size=[20] * nd))


@pytest.mark.parametrize("norm_type", [1, 2, 3.0])
def test_lp_pool(norm_type):
    a = np.abs(rnd(2, 3, 8, 7)) + 0.1
    grads_same(lambda x: F.lp_pool2d(x, norm_type, 2), lambda x: TF.lp_pool2d(x, norm_type, 2), a)
    grads_same(lambda x: F.lp_pool2d(x, norm_type, (3, 2), stride=2, ceil_mode=True),
               lambda x: TF.lp_pool2d(x, norm_type, (3, 2), stride=2, ceil_mode=True), a)
    grads_same(lambda x: F.lp_pool1d(x[0], norm_type, 3), lambda x: TF.lp_pool1d(x[0], norm_type, 3), a)
    grads_same(lambda x: nn.LPPool2d(norm_type, 2)(x), lambda x: torch.nn.LPPool2d(norm_type, 2)(x), a)
    grads_same(lambda x: nn.LPPool1d(norm_type, 2, 1)(x[0]), lambda x: torch.nn.LPPool1d(norm_type, 2, 1)(x[0]), a)


@pytest.mark.parametrize("shape", [(2, 5, 7), (2, 6, 4, 3), (1, 4, 3, 2, 2)])
def test_local_response_norm(shape):
    a = rnd(*shape)
    for size in (1, 2, 3, 4):
        grads_same(lambda x: F.local_response_norm(x, size), lambda x: TF.local_response_norm(x, size), a)
    grads_same(lambda x: nn.LocalResponseNorm(3, 1e-2, 0.5, 2.0)(x),
               lambda x: torch.nn.LocalResponseNorm(3, 1e-2, 0.5, 2.0)(x), a)
    a32 = a.astype(np.float32)
    same(F.local_response_norm(kiln.tensor(a32), 3), TF.local_response_norm(torch.tensor(a32), 3), 1e-6)
    raises_same(lambda: F.local_response_norm(kiln.ones(2, 2), 2), lambda: TF.local_response_norm(torch.ones(2, 2), 2))
    assert repr(nn.LocalResponseNorm(3)) == repr(torch.nn.LocalResponseNorm(3))


def test_softmax2d_and_channel_shuffle():
    a = rnd(2, 3, 4, 5)
    grads_same(lambda x: nn.Softmax2d()(x), lambda x: torch.nn.Softmax2d()(x), a)
    grads_same(lambda x: nn.Softmax2d()(x[0]), lambda x: torch.nn.Softmax2d()(x[0]), a)
    raises_same(lambda: nn.Softmax2d()(kiln.ones(2, 2)), lambda: torch.nn.Softmax2d()(torch.ones(2, 2)))
    a = rnd(2, 6, 3)
    same(F.channel_shuffle(kiln.tensor(a), 3), TF.channel_shuffle(torch.tensor(a), 3), 0)
    same(nn.ChannelShuffle(2)(kiln.tensor(a)), torch.nn.ChannelShuffle(2)(torch.tensor(a)), 0)
    # torch 1.13's channel_shuffle has no derivative; kiln's is the permutation's, as torch's reshapes give
    grads_same(lambda x: F.channel_shuffle(x, 3), lambda x: x.reshape(2, 3, 2, 3).transpose(1, 2).reshape(2, 6, 3), a)
    same(kiln.channel_shuffle(kiln.tensor(a), 2), torch.channel_shuffle(torch.tensor(a), 2), 0)  # no torch gradient
    raises_same(lambda: F.channel_shuffle(kiln.ones(2, 5, 3), 2), lambda: TF.channel_shuffle(torch.ones(2, 5, 3), 2))
    assert repr(nn.ChannelShuffle(2)) == repr(torch.nn.ChannelShuffle(2))


@pytest.mark.parametrize("name", ["alpha_dropout", "feature_alpha_dropout"])
def test_alpha_dropouts(name):
    a = rnd(4, 3, 5).astype(np.float32)
    for training in (True, False):
        kiln.manual_seed(4)
        torch.manual_seed(4)
        same(getattr(F, name)(kiln.tensor(a), 0.3, training), getattr(TF, name)(torch.tensor(a), 0.3, training), 1e-6)
    mod = {"alpha_dropout": "AlphaDropout", "feature_alpha_dropout": "FeatureAlphaDropout"}[name]
    km, tm = getattr(nn, mod)(0.2), getattr(torch.nn, mod)(0.2)
    kiln.manual_seed(5)
    torch.manual_seed(5)
    same(km(kiln.tensor(a)), tm(torch.tensor(a)), 1e-6)
    km.eval()
    tm.eval()
    same(km(kiln.tensor(a)), tm(torch.tensor(a)), 0)
    kx, tx = kiln.tensor(a), torch.tensor(a)
    kiln.manual_seed(6)
    torch.manual_seed(6)
    getattr(F, name)(kx, 0.5, True, inplace=True)
    getattr(TF, name)(tx, 0.5, True, inplace=True)
    same(kx, tx, 1e-6)
    raises_same(lambda: getattr(F, name)(kx, 1.5), lambda: getattr(TF, name)(tx, 1.5))
    raises_same(lambda: getattr(nn, mod)(-1), lambda: getattr(torch.nn, mod)(-1))


@pytest.mark.parametrize("hard", [False, True])
def test_gumbel_softmax(hard):
    a = rnd(4, 6)
    kiln.manual_seed(9)
    torch.manual_seed(9)
    grads_same(lambda x: F.gumbel_softmax(x, tau=0.5, hard=hard), lambda x: TF.gumbel_softmax(x, tau=0.5, hard=hard), a)
    kiln.manual_seed(9)
    torch.manual_seed(9)
    same(F.gumbel_softmax(kiln.tensor(a), dim=0), TF.gumbel_softmax(torch.tensor(a), dim=0))
    with pytest.warns(UserWarning):
        F.gumbel_softmax(kiln.tensor(a), eps=1e-3)


def test_pdist():
    for p in (2, 1, 3.5, 0, float("inf")):
        grads_same(lambda x: F.pdist(x, p), lambda x: TF.pdist(x, p), rnd(5, 3))
    same(kiln.pdist(kiln.ones(1, 3)), torch.pdist(torch.ones(1, 3)))
    raises_same(lambda: F.pdist(kiln.ones(2, 2, 2)), lambda: TF.pdist(torch.ones(2, 2, 2)))


def test_with_indices_forms():
    a = rnd(2, 3, 8, 8)
    grads_same(lambda x: F.max_pool2d_with_indices(x, 3, 2, 1), lambda x: TF.max_pool2d_with_indices(x, 3, 2, 1), a)
    grads_same(lambda x: F.adaptive_max_pool2d_with_indices(x, 3), lambda x: TF.adaptive_max_pool2d_with_indices(x, 3), a)
    grads_same(lambda x: F.adaptive_max_pool1d_with_indices(x[0], 3),
               lambda x: TF.adaptive_max_pool1d_with_indices(x[0], 3), a)
    grads_same(lambda x: F.adaptive_max_pool3d_with_indices(x, 3), lambda x: TF.adaptive_max_pool3d_with_indices(x, 3), a)


def test_batchnorm3d_and_syncbatchnorm():
    a = rnd(2, 3, 2, 3, 2)
    # torch 2.x's SyncBatchNorm is BatchNorm without a process group (torch 1.13's refuses CPU input)
    for cls, tcls in (("BatchNorm3d", "BatchNorm3d"), ("SyncBatchNorm", "BatchNorm3d")):
        km, tm = getattr(nn, cls)(3).double(), getattr(torch.nn, tcls)(3).double()
        grads_same(lambda x: km(x), lambda x: tm(x), a)
        same(km.running_mean, tm.running_mean)
        same(km.running_var, tm.running_var)
        km.eval()
        tm.eval()
        grads_same(lambda x: km(x), lambda x: tm(x), a)
        assert repr(km) == repr(tm).replace(tcls, cls)
        assert list(km.state_dict()) == list(tm.state_dict())
    raises_same(lambda: nn.BatchNorm3d(3)(kiln.ones(2, 3, 4)), lambda: torch.nn.BatchNorm3d(3)(torch.ones(2, 3, 4)))
    model = nn.Sequential(nn.Conv2d(2, 3, 1), nn.BatchNorm2d(3), nn.Sequential(nn.BatchNorm1d(3)))
    conv = nn.SyncBatchNorm.convert_sync_batchnorm(model)
    assert isinstance(conv[1], nn.SyncBatchNorm) and isinstance(conv[2][0], nn.SyncBatchNorm)
    assert conv[1].weight is model[1].weight


@pytest.mark.parametrize("kw", [dict(), dict(stride=2, padding=1), dict(stride=(2, 1, 3), padding=(1, 0, 1),
                                                                          output_padding=(1, 0, 2), dilation=(1, 2, 1)),
                                dict(stride=2, groups=2, dilation=2, output_padding=1)])
def test_conv_transpose3d(kw):
    x, w, b = rnd(2, 4, 3, 4, 3), rnd(4, 3, 2, 3, 3), rnd(3 * kw.get("groups", 1))
    grads_same(lambda x, w, b: F.conv_transpose3d(x, w, b, **kw), lambda x, w, b: TF.conv_transpose3d(x, w, b, **kw),
               x, w, b)
    grads_same(lambda x, w: kiln.conv_transpose3d(x[0], w, **kw), lambda x, w: torch.conv_transpose3d(x[0], w, **kw),
               x, w)
    kiln.manual_seed(2)
    torch.manual_seed(2)
    km = nn.ConvTranspose3d(4, 3 * kw.get("groups", 1), (2, 3, 3), **kw).double()
    tm = torch.nn.ConvTranspose3d(4, 3 * kw.get("groups", 1), (2, 3, 3), **kw).double()
    same(km.weight, tm.weight, 0)
    grads_same(lambda x: km(x), lambda x: tm(x), x)
    assert repr(km) == repr(tm)


@pytest.mark.parametrize("cls,nd,extra", [("LazyLinear", 0, {}), ("LazyConv1d", 1, {"stride": 2}),
                                          ("LazyConv2d", 2, {"padding": 1}), ("LazyConv3d", 3, {}),
                                          ("LazyConvTranspose1d", 1, {"stride": 2}), ("LazyConvTranspose2d", 2, {}),
                                          ("LazyConvTranspose3d", 3, {"output_padding": 1, "stride": 2})])
def test_lazy_modules(cls, nd, extra):
    kiln.manual_seed(3)
    torch.manual_seed(3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        args = (4,) if nd == 0 else (4, 3)
        km, tm = getattr(nn, cls)(*args, **extra), getattr(torch.nn, cls)(*args, **extra)
    assert isinstance(km.weight, nn.UninitializedParameter) and km.has_uninitialized_params()
    x = rnd(*((2, 5) + (5,) * nd)).astype(np.float32)
    ko, to = km(kiln.tensor(x)), tm(torch.tensor(x))
    same(ko, to, 1e-5)
    assert type(km).__name__ == type(tm).__name__ and repr(km) == repr(tm)
    assert type(km.weight) is nn.Parameter and not hasattr(km, "_initialize_hook")
    same(km.weight, tm.weight, 0)  # the eager module's initialisation, torch's draws
    same(km.bias, tm.bias, 0)
    same(kiln.rand(2), torch.rand(2), 0)
    ko.sum().backward()
    assert km.weight.grad is not None
    if nd:  # a batched input of one dim too many
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            raises_same(lambda: getattr(nn, cls)(*args)(kiln.ones(*([1] * (nd + 3)))),
                        lambda: getattr(torch.nn, cls)(*args)(torch.ones(*([1] * (nd + 3)))))


def test_lazy_linear_optimizer_sees_materialized_parameter():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m = nn.Sequential(nn.LazyLinear(3), nn.ReLU(), nn.LazyLinear(1))
    m(kiln.ones(2, 4))
    opt = kiln.optim.SGD(m.parameters(), lr=0.1)
    loss = m(kiln.ones(2, 4)).sum()
    loss.backward()
    before = m[0].weight.detach().clone()
    opt.step()
    assert not kiln.equal(before, m[0].weight.detach())
    assert [tuple(p.shape) for p in m.parameters()] == [(3, 4), (3,), (1, 3), (1,)]


def test_init_dirac_and_sparse():
    for shape, groups in [((4, 2, 3), 1), ((4, 2, 3, 3), 2), ((6, 3, 3, 3, 3), 3), ((2, 4, 5, 5), 1)]:
        same(nn.init.dirac_(kiln.empty(*shape), groups), torch.nn.init.dirac_(torch.empty(*shape), groups), 0)
    raises_same(lambda: nn.init.dirac_(kiln.empty(3, 3)), lambda: torch.nn.init.dirac_(torch.empty(3, 3)))
    raises_same(lambda: nn.init.dirac_(kiln.empty(3, 3, 3), 2), lambda: torch.nn.init.dirac_(torch.empty(3, 3, 3), 2))
    kiln.manual_seed(8)
    torch.manual_seed(8)
    same(nn.init.sparse_(kiln.empty(10, 6), 0.3, 0.5), torch.nn.init.sparse_(torch.empty(10, 6), 0.3, 0.5), 0)
    same(kiln.rand(3), torch.rand(3), 0)
    raises_same(lambda: nn.init.sparse_(kiln.empty(3), 0.1), lambda: torch.nn.init.sparse_(torch.empty(3), 0.1))


@pytest.mark.parametrize("transpose", [False, True])
def test_fuse_conv_bn(transpose):
    kiln.manual_seed(0)
    torch.manual_seed(0)
    kc = (nn.ConvTranspose2d if transpose else nn.Conv2d)(3, 4, 3).double().eval()
    tc = (torch.nn.ConvTranspose2d if transpose else torch.nn.Conv2d)(3, 4, 3).double().eval()
    kb, tb = nn.BatchNorm2d(4).double(), torch.nn.BatchNorm2d(4).double()
    x = rnd(2, 3, 6, 6)
    kb(kc(kiln.tensor(x)))
    tb(tc(torch.tensor(x)))  # running statistics
    kb.eval()
    tb.eval()
    kf = nn.utils.fuse_conv_bn_eval(kc, kb, transpose)
    tf = torch.nn.utils.fuse_conv_bn_eval(tc, tb, transpose)
    same(kf.weight, tf.weight)
    same(kf.bias, tf.bias)
    same(kf(kiln.tensor(x)), kb(kc(kiln.tensor(x))), 1e-12)
    assert isinstance(kf.weight, nn.Parameter)
    kw, kbias = nn.utils.fuse_conv_bn_weights(kc.weight, None, kb.running_mean, kb.running_var, 1e-3, None, None,
                                              transpose)
    tw, tbias = torch.nn.utils.fuse_conv_bn_weights(tc.weight, None, tb.running_mean, tb.running_var, 1e-3, None, None,
                                                    transpose)
    same(kw, tw)
    same(kbias, tbias)
    with pytest.raises(AssertionError):
        nn.utils.fuse_conv_bn_eval(kc.train(), kb)


def test_fuse_linear_bn():
    kl, kb = nn.Linear(3, 4).double().eval(), nn.BatchNorm1d(4).double()
    kb.running_mean.uniform_(-1, 1)
    kb.running_var.uniform_(0.5, 2)
    kb.eval()
    x = kiln.tensor(rnd(5, 3))
    same(nn.utils.fusion.fuse_linear_bn_eval(kl, kb)(x), kb(kl(x)), 1e-12)


def test_functional_call():
    kiln.manual_seed(0)
    torch.manual_seed(0)
    km = nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4), nn.Linear(4, 2)).double()
    tm = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.BatchNorm1d(4), torch.nn.Linear(4, 2)).double()
    x = rnd(5, 3)
    w, rm = rnd(4, 3), rnd(4)
    kw, tw = kiln.tensor(w, requires_grad=True), torch.tensor(w, requires_grad=True)
    ko = nn.utils.stateless.functional_call(km, {"0.weight": kw, "1.running_mean": kiln.tensor(rm)},
                                            (kiln.tensor(x),))
    to = torch.nn.utils.stateless.functional_call(tm, {"0.weight": tw, "1.running_mean": torch.tensor(rm)},
                                                  (torch.tensor(x),))
    same(ko, to)
    ko.sum().backward()
    to.sum().backward()
    same(kw.grad, tw.grad)
    assert km[0].weight.grad is None and isinstance(km[0].weight, nn.Parameter)  # restored, untouched
    same(km[0].weight, tm[0].weight, 0)
    ko2 = kiln.func.functional_call(km, ({"0.weight": kw}, {"2.bias": kiln.zeros(2, dtype=kiln.float64)}),
                                    kiln.tensor(x))
    assert tuple(ko2.shape) == (5, 2)
    with pytest.raises(RuntimeError):
        nn.utils.stateless.functional_call(km, {"0.weight": kw}, (kiln.tensor(x),), strict=True)


@pytest.mark.parametrize("cls", ["LazyBatchNorm1d", "LazyBatchNorm2d", "LazyBatchNorm3d", "LazyInstanceNorm1d",
                                 "LazyInstanceNorm2d", "LazyInstanceNorm3d"])
@pytest.mark.parametrize("kw", [{}, {"affine": False, "track_running_stats": False},
                                {"affine": True, "track_running_stats": False, "momentum": None}])
def test_lazy_norms(cls, kw):
    if "Instance" in cls and "momentum" in kw:
        kw = {k: v for k, v in kw.items() if k != "momentum"}  # torch's instance_norm refuses momentum=None
    nd = int(cls[-2])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        km, tm = getattr(nn, cls)(**kw), getattr(torch.nn, cls)(**kw)
    assert km.has_uninitialized_params() == tm.has_uninitialized_params()
    x = rnd(*((2, 3) + (4,) * nd)).astype(np.float32)
    for _ in range(2):
        same(km(kiln.tensor(x)), tm(torch.tensor(x)), 1e-5)
    assert type(km).__name__ == type(tm).__name__ and repr(km) == repr(tm)
    assert list(km.state_dict()) == list(tm.state_dict())
    for name, value in tm.state_dict().items():
        same(km.state_dict()[name], value, 1e-6)
    km.eval()
    tm.eval()
    same(km(kiln.tensor(x)), tm(torch.tensor(x)), 1e-5)


def test_lazy_module_dtype_change_before_first_forward():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        kiln.manual_seed(1)
        torch.manual_seed(1)
        km, tm = nn.LazyLinear(3).double(), torch.nn.LazyLinear(3).double()
        kb, tb = nn.LazyBatchNorm1d().double(), torch.nn.LazyBatchNorm1d().double()
    assert isinstance(km.weight, nn.UninitializedParameter)
    x = rnd(4, 5)
    same(kb(km(kiln.tensor(x))), tb(tm(torch.tensor(x))))
    assert km.weight.dtype == kiln.float64 and kb.running_mean.dtype == kiln.float64
