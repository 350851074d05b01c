"""Small torch 2.x surfaces real scripts touch, each against torch (or torch's documented formula where
torch 1.13, the oracle installed here, predates it): padding modules, get_total_norm /
clip_grads_with_norm_, torch.utils.hooks.RemovableHandle, torch.multiprocessing at the top level."""
from collections import OrderedDict

import pytest
import torch

import kiln


def same_input(shape):
    t = torch.arange(float(torch.tensor(shape).prod())).reshape(shape)
    return kiln.tensor(t.tolist()), t


@pytest.mark.parametrize("name,n,mode", [("ZeroPad1d", 1, "constant"), ("ZeroPad2d", 2, "constant"),
                                         ("ZeroPad3d", 3, "constant"), ("CircularPad1d", 1, "circular"),
                                         ("CircularPad2d", 2, "circular"), ("CircularPad3d", 3, "circular")])
@pytest.mark.parametrize("padding", [1, "tuple"])
def test_padding_modules_are_torchs_pad(name, n, mode, padding):
    shape = (1, 2) + (3,) * n
    k, t = same_input(shape)
    pad = 1 if padding == 1 else tuple(range(1, 2 * n + 1)) if mode == "constant" else (1, 2) * n
    module = getattr(kiln.nn, name)(pad)
    sides = (pad,) * (2 * n) if isinstance(pad, int) else pad
    expected = torch.nn.functional.pad(t, sides, mode)
    got = module(k)
    assert got.shape == tuple(expected.shape) and got.tolist() == expected.tolist()
    assert module.padding == sides
    k.requires_grad_(True)
    module(k).sum().backward()
    t.requires_grad_(True)
    torch.nn.functional.pad(t, sides, mode).sum().backward()
    assert k.grad.tolist() == t.grad.tolist()


def test_get_total_norm_and_clip_grads_with_norm_match_clip_grad_norm():
    for norm_type in (2.0, 1.0, float("inf"), 3):
        tp = [torch.nn.Parameter(torch.tensor([[3.0, -4.0], [1.0, 2.0]])), torch.nn.Parameter(torch.tensor([12.0, -1.0]))]
        kp = [kiln.nn.Parameter(kiln.tensor(p.tolist())) for p in tp]
        for p in tp + kp:
            p.grad = p.detach() * 2
        expected = torch.nn.utils.clip_grad_norm_(tp, 5.0, norm_type)
        total = kiln.nn.utils.get_total_norm([p.grad for p in kp], norm_type)
        assert total.item() == pytest.approx(expected.item(), rel=1e-6)
        kiln.nn.utils.clip_grads_with_norm_(kp, 5.0, total)
        for a, b in zip(kp, tp):
            assert a.grad.reshape(-1).tolist() == pytest.approx(b.grad.reshape(-1).tolist(), rel=1e-6)
    assert kiln.nn.utils.get_total_norm([]).item() == 0.0
    bad = kiln.tensor([float("nan")])
    with pytest.raises(RuntimeError, match="non-finite"):
        kiln.nn.utils.get_total_norm([bad], error_if_nonfinite=True)


def test_removable_handle_is_torchs_class():
    for lib in (kiln, torch):
        hooks, extra = OrderedDict(), OrderedDict()  # held weakly: a plain dict cannot be (in torch either)
        h = lib.utils.hooks.RemovableHandle(hooks)
        hooks[h.id] = "hook"
        if lib is kiln:  # torch 2.x's extra_dict (1.13 has none)
            h = lib.utils.hooks.RemovableHandle(hooks, extra_dict=extra)
            hooks[h.id] = "hook"
            extra[h.id] = "extra"
        h2 = lib.utils.hooks.RemovableHandle(hooks)
        assert h2.id != h.id
        h.remove()
        assert h.id not in hooks and h.id not in extra
        with lib.utils.hooks.RemovableHandle(hooks) as h3:
            hooks[h3.id] = 1
        assert h3.id not in hooks
    handle = kiln.nn.Linear(1, 1).register_forward_hook(lambda *a: None)
    assert isinstance(handle, kiln.utils.hooks.RemovableHandle)


def test_multiprocessing_is_a_top_level_attribute():
    assert kiln.multiprocessing.get_sharing_strategy() == "file_descriptor"
    assert callable(kiln.multiprocessing.spawn)


def test_detach_in_place_is_torchs():
    for lib in (kiln, torch):
        a = lib.ones(3, requires_grad=True)
        h = a * 2
        assert h.detach_() is h
        assert not h.requires_grad and h.grad_fn is None and h.is_leaf
        (h * a).sum().backward()  # a's gradient still flows through the other factor
        assert a.grad.tolist() == [2.0, 2.0, 2.0]
        v = (a * 1)[:2]
        with pytest.raises(RuntimeError, match="Can't detach views in-place"):
            v.detach_()


def test_storage_views_are_torchs():
    import warnings
    for lib in (kiln, torch):
        base = lib.arange(12, dtype=lib.float32)
        v = base[3:9].view(2, 3).t()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            # torch 2.x's untyped_storage(); 1.13 reaches the same object through storage().untyped()
            us = v.untyped_storage() if lib is kiln else v.storage().untyped()
            base_us = base.untyped_storage() if lib is kiln else base.storage().untyped()
        assert us.nbytes() == len(us) == 48
        assert us.data_ptr() == base.data_ptr() == base_us.data_ptr()
        assert v.data_ptr() == base.data_ptr() + 3 * 4
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            st = v.storage()
        assert st.size() == len(st) == 12 and st.dtype == lib.float32 and st.element_size() == 4
        assert st.tolist() == [float(i) for i in range(12)] and st[5] == 5.0
        assert us.tolist()[4:8] == list(lib.tensor([1.0]).numpy().view("uint8"))
    # torch 2.1's Tensor.itemsize (1.13 has element_size() only)
    assert kiln.ones(2).itemsize == 4 and kiln.ones(2, dtype=kiln.float64).itemsize == 8


def test_post_accumulate_grad_hook_optimizer_in_backward():
    """torch 2.1's pattern: one optimizer per parameter, stepped by the hook; the result equals an
    ordinary SGD step computed by torch (1.13 has no such hook: the reference is the plain loop)."""
    torch.manual_seed(0)
    t_model = torch.nn.Linear(3, 2)
    k_model = kiln.nn.Linear(3, 2)
    k_model.load_state_dict({k: kiln.tensor(v.tolist()) for k, v in t_model.state_dict().items()})
    x = [[1.0, 2.0, 3.0], [-1.0, 0.5, 2.0]]
    t_opt = torch.optim.SGD(t_model.parameters(), lr=0.1)
    (t_model(torch.tensor(x)) ** 2).sum().backward()
    t_opt.step()

    k_opts = {p: kiln.optim.SGD([p], lr=0.1) for p in k_model.parameters()}
    calls = []

    def hook(p):
        calls.append(p.grad.clone())
        k_opts[p].step()
        k_opts[p].zero_grad()

    handles = [p.register_post_accumulate_grad_hook(hook) for p in k_model.parameters()]
    (k_model(kiln.tensor(x)) ** 2).sum().backward()
    assert len(calls) == 2
    for name, p in k_model.named_parameters():
        assert p.detach().reshape(-1).tolist() == pytest.approx(
            dict(t_model.named_parameters())[name].detach().reshape(-1).tolist(), rel=1e-6)
    for h in handles:
        h.remove()
    (k_model(kiln.tensor(x)) ** 2).sum().backward()
    assert len(calls) == 2  # removed hooks no longer run


def test_post_accumulate_grad_hook_sees_the_summed_gradient_once():
    w = kiln.tensor([1.0, 2.0], requires_grad=True)
    seen = []
    w.register_post_accumulate_grad_hook(lambda p: seen.append((p is w, p.grad.tolist())))
    (w * 3 + w * w).sum().backward()  # two paths into w's accumulator: summed first
    assert seen == [(True, [5.0, 7.0])]
    (w * 1).sum().backward()
    assert seen[-1] == (True, [6.0, 8.0])  # after accumulating into the existing .grad


def test_post_accumulate_grad_hook_errors():
    with pytest.raises(RuntimeError, match="doesn't require gradient"):
        kiln.ones(2).register_post_accumulate_grad_hook(lambda p: None)
    with pytest.raises(RuntimeError, match="non-leaf"):
        (kiln.ones(2, requires_grad=True) * 2).register_post_accumulate_grad_hook(lambda p: None)
    w = kiln.ones(2, requires_grad=True)

    def bad(p):
        raise ValueError("from the hook")
    w.register_post_accumulate_grad_hook(bad)
    with pytest.raises(ValueError, match="from the hook"):
        w.sum().backward()


def test_digamma_trigamma_edge_values_are_torchs():
    """digamma and trigamma run over whole arrays now; the values stay torch's, and the extremes where the
    per-element version raised (pi * x overflowing, sin(pi * x) squared underflowing) give torch's results."""
    import numpy as np
    rng = np.random.default_rng(3)
    x = np.concatenate([rng.uniform(-30, 30, 2000), np.exp(rng.uniform(-40, 40, 2000)) * rng.choice([-1, 1], 2000),
                        [0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, 10.0, -1.0, -2.5, 1e-300, -1e-300, 1e308, -1e308,
                         1e17, 1e18, 5e-324, -5e-324]])
    k = kiln.tensor(x.tolist(), dtype=kiln.float64)
    t = torch.tensor(x)
    for n in (0, 1):
        got = np.array(kiln.polygamma(n, k).tolist())
        want = torch.polygamma(n, t).numpy()
        close = np.isclose(got, want, rtol=4e-16, atol=0, equal_nan=True) | (got == want)
        assert close.all(), (x[~close][:5], got[~close][:5], want[~close][:5])
    assert np.array_equal(np.array(kiln.digamma(k).tolist()), torch.digamma(t).numpy(), equal_nan=True)


def _asm_pair(**kw):
    torch.manual_seed(0)
    t = torch.nn.AdaptiveLogSoftmaxWithLoss(16, 50, [5, 20, 35], **kw)
    k = kiln.nn.AdaptiveLogSoftmaxWithLoss(16, 50, [5, 20, 35], **kw)
    assert list(k.state_dict()) == list(t.state_dict())
    assert [tuple(v.shape) for v in k.state_dict().values()] == [tuple(v.shape) for v in t.state_dict().values()]
    k.load_state_dict({n: kiln.from_numpy(v.numpy().copy()) for n, v in t.state_dict().items()})
    return t, k


@pytest.mark.parametrize("kw", [{}, {"div_value": 2.0, "head_bias": True}])
def test_adaptive_log_softmax_is_torchs(kw):
    t, k = _asm_pair(**kw)
    x = torch.randn(12, 16)
    y = torch.tensor([0, 4, 5, 19, 20, 49, 3, 7, 30, 1, 36, 25])
    kx = kiln.tensor(x.tolist(), requires_grad=True)
    x.requires_grad_(True)
    to, ko = t(x, y), k(kx, kiln.tensor(y.tolist()))
    assert ko.loss.item() == pytest.approx(to.loss.item(), rel=1e-6)
    assert ko.output.tolist() == pytest.approx(to.output.tolist(), rel=1e-5, abs=1e-6)
    to.loss.backward()
    ko.loss.backward()
    assert kx.grad.reshape(-1).tolist() == pytest.approx(x.grad.reshape(-1).tolist(), rel=1e-4, abs=1e-6)
    assert k.head.weight.grad.reshape(-1).tolist() == pytest.approx(t.head.weight.grad.reshape(-1).tolist(),
                                                                    rel=1e-4, abs=1e-6)
    with torch.no_grad():
        assert k.log_prob(kx).reshape(-1).tolist() == pytest.approx(t.log_prob(x).reshape(-1).tolist(), abs=1e-5)
        assert k.predict(kx).tolist() == t.predict(x).tolist()
        single = k(kx[3], kiln.tensor(19)).output
        assert single.dim() == 0 and single.item() == pytest.approx(t(x[3], torch.tensor(19)).output.item(), rel=1e-5)


def test_adaptive_log_softmax_errors_are_torchs():
    t, k = _asm_pair()
    for lib, m in ((torch, t), (kiln, k)):
        with pytest.raises(RuntimeError, match="Target values should be in"):
            m(lib.zeros(2, 16), lib.tensor([0, 50]))
        with pytest.raises(RuntimeError, match="same size in the batch dimension"):
            m(lib.zeros(3, 16), lib.tensor([0, 1]))
        with pytest.raises(RuntimeError, match="multi-target not supported"):
            m(lib.zeros(2, 16), lib.zeros(2, 2, dtype=lib.int64))
        with pytest.raises(ValueError, match="cutoffs should be a sequence"):
            lib.nn.AdaptiveLogSoftmaxWithLoss(16, 10, [5, 3])
        with pytest.raises(ValueError, match="cutoffs should be a sequence"):
            lib.nn.AdaptiveLogSoftmaxWithLoss(16, 10, [5, 10])


@pytest.mark.parametrize("n,replicas,shuffle,drop_last", [(10, 3, True, False), (10, 3, False, True), (10, 4, True, True),
                                                          (2, 5, True, False), (9, 3, False, False), (0, 2, True, False)])
def test_distributed_sampler_is_torchs(n, replicas, shuffle, drop_last):
    from torch.utils.data.distributed import DistributedSampler as TS
    data = list(range(n))
    for rank in range(replicas):
        ks = kiln.utils.data.DistributedSampler(data, num_replicas=replicas, rank=rank, shuffle=shuffle, seed=7,
                                                drop_last=drop_last)
        ts = TS(data, num_replicas=replicas, rank=rank, shuffle=shuffle, seed=7, drop_last=drop_last)
        for epoch in (0, 1, 5):
            ks.set_epoch(epoch)
            ts.set_epoch(epoch)
            assert list(ks) == list(ts) and len(ks) == len(ts)
    loader = kiln.utils.data.DataLoader(list(range(8)), batch_size=2,
                                        sampler=kiln.utils.data.distributed.DistributedSampler(list(range(8)), 2, 1))
    assert sum(len(b) for b in loader) == 4


def test_distributed_sampler_errors():
    with pytest.raises(ValueError, match=r"Invalid rank 3, rank should be in the interval \[0, 2\]"):
        kiln.utils.data.DistributedSampler(range(4), num_replicas=3, rank=3)
    with pytest.raises(RuntimeError):  # no process group to ask (torch: not initialized)
        kiln.utils.data.DistributedSampler(range(4))


def test_special_functions_are_torchs():
    import math
    import numpy as np
    x = np.concatenate([np.linspace(-8, 10, 361), [0.0, -0.0, np.inf, -np.inf, np.nan, 1e-30, -1e-30]])
    p = np.concatenate([np.linspace(0, 1, 101), [-0.1, 1.1, np.nan, 1e-300, 1e-20, 1e-10, 1e-5, 1e-3]])
    # (torch 1.13's ndtr, 0.5 * (1 + erf), cancels below -5: compared by hand below)
    for name, src in (("entr", x), ("ndtr", x[~(x < -5)]), ("log_ndtr", np.concatenate([x, np.linspace(-200, -8, 50)])),
                      ("ndtri", p), ("i1", x[np.abs(x) < 700])):
        got = np.array(getattr(kiln.special, name)(kiln.tensor(src.tolist(), dtype=kiln.float64)).tolist())
        want = getattr(torch.special, name)(torch.tensor(src)).numpy()
        assert np.allclose(got, want, rtol=1e-9, atol=0, equal_nan=True), name
    # ndtr's lower tail: erfc's value, not 0 as torch 1.13's 0.5 * (1 + erf) (torch 2.x splits as kiln)
    for v in (-6.0, -12.5, -30.0):
        assert kiln.special.ndtr(kiln.tensor([v], dtype=kiln.float64)).item() == pytest.approx(
            0.5 * math.erfc(-v / math.sqrt(2)), rel=1e-12)
    a, b = torch.tensor([0.0, 1.0, 2.0, 0.0, -1.0]), torch.tensor([float("nan"), 1.0, -1.0, 2.0, 0.5])
    got = kiln.special.xlog1py(kiln.tensor(a.tolist()), kiln.tensor(b.tolist())).tolist()
    assert np.allclose(got, torch.special.xlog1py(a, b).tolist(), equal_nan=True)
    q = torch.tensor([2.0, 3.0, 1.0, 0.5, 4.0])
    s = torch.tensor([1.0, 2.0, 1.0, 1.0, -2.5])
    got = kiln.special.zeta(kiln.tensor(q.tolist()), kiln.tensor(s.tolist())).tolist()
    assert np.allclose(got, torch.special.zeta(q, s).tolist(), rtol=1e-6, equal_nan=True)


def test_special_gradients_are_torchs():
    for name, vals in (("entr", [0.5, 2.0, 3.0]), ("ndtr", [-2.0, 0.0, 1.5]), ("ndtri", [0.1, 0.5, 0.9]),
                       ("log_ndtr", [-3.0, 0.0, 2.0])):
        k = kiln.tensor(vals, dtype=kiln.float64, requires_grad=True)
        t = torch.tensor(vals, dtype=torch.float64, requires_grad=True)
        getattr(kiln.special, name)(k).sum().backward()
        getattr(torch.special, name)(t).sum().backward()
        assert k.grad.tolist() == pytest.approx(t.grad.tolist(), rel=1e-9), name


def test_poisson_of_unrepresentable_rates_is_torchs():
    """The fuzzer's finding: a rate whose sample does not fit int64 (inf, 1e308) converted with C++'s undefined
    behaviour; kiln now gives what torch's x86 conversion gives (the int64 minimum), and the stream moves on."""
    for rate in (float("inf"), 1e308, 1e30, 50.0):
        kiln.manual_seed(3)
        torch.manual_seed(3)
        k = kiln.poisson(kiln.tensor([rate, 4.0], dtype=kiln.float64)).tolist()
        t = torch.poisson(torch.tensor([rate, 4.0], dtype=torch.float64)).tolist()
        assert k == t


def test_sampler_ops_broadcast_as_torchs():
    """binomial, _standard_gamma_grad and _dirichlet_grad broadcast their inputs (torch's TensorIterator)."""
    for lib in (kiln, torch):
        lib.manual_seed(1)
    k = kiln.binomial(kiln.tensor([[10.0], [20.0]]), kiln.tensor([0.1, 0.9, 0.5])).tolist()
    t = torch.binomial(torch.tensor([[10.0], [20.0]]), torch.tensor([0.1, 0.9, 0.5])).tolist()
    assert k == t
    a, x = [[1.0], [2.0]], [0.5, 1.5, 3.0]
    assert kiln._standard_gamma_grad(kiln.tensor(a), kiln.tensor(x)).reshape(-1).tolist() == pytest.approx(
        torch._standard_gamma_grad(torch.tensor(a), torch.tensor(x)).reshape(-1).tolist())
    args = ([0.2, 0.5, 0.7], [1.0, 2.0, 3.0], [4.0])
    assert kiln._dirichlet_grad(*map(kiln.tensor, args)).tolist() == pytest.approx(
        torch._dirichlet_grad(*map(torch.tensor, args)).tolist())
    with pytest.raises(RuntimeError, match="must match the size"):
        kiln.binomial(kiln.ones(3), kiln.ones(2) / 2)
