"""What the programs of test_programs_part8.py found missing in kiln, each checked against torch 1.13 (whose
behaviour here is torch 2.x's too)."""
import os
import warnings

import numpy as np
import pytest
import torch

import kiln


def k(t):
    return kiln.from_numpy(t.detach().numpy().copy())


def messages(fn):
    """The (category, message) pairs of the warnings fn() gives, every one recorded."""
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        fn()
    return [(m.category, str(m.message)) for m in w]


def same_warnings(call, rename=True):
    """call(torch) and call(kiln) warn alike (kiln's type names in place of torch's)."""
    wt, wk = messages(lambda: call(torch)), messages(lambda: call(kiln))
    # torch's C++ warnings end with where they were raised: " (Triggered internally at ../torch/csrc/...)"
    wt = [(c, m.split(" (Triggered internally at")[0]) for c, m in wt]
    if rename:
        wk = [(c, m.replace("kiln.", "torch.")) for c, m in wk]
    assert wk == wt
    return wt


# ---- moco_v2 / dino (printed accuracies): torch's multi-line repr of its return types ---------------------------
@pytest.mark.parametrize("call", [
    lambda L: L.arange(6.).view(2, 3).max(dim=1),
    lambda L: L.tensor([[3., 1., 2.]]).sort(descending=True),
    lambda L: L.tensor([[3., 1., 2.]]).topk(2),
    lambda L: L.linalg.slogdet(L.eye(2) * 2),
    lambda L: L.tensor([1., 5., 2.]).median(0),
])
def test_return_types_repr(call):
    rt, rk = repr(call(torch)), repr(call(kiln))
    assert rk.replace("kiln.", "torch.") == rt
    assert rt.count("\n") >= 2  # one field a line


# ---- set_transformer / sparsemax (old code): torch's deprecation warnings of the implicit softmax dim ----------
@pytest.mark.parametrize("name", ["softmax", "log_softmax", "softmin"])
@pytest.mark.parametrize("shape", [(4,), (2, 3), (2, 3, 4), (2, 2, 3, 3)])
def test_implicit_softmax_dim_warns(name, shape):
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        rt = getattr(torch.nn.functional, name)(torch.from_numpy(x))
    with warnings.catch_warnings(record=True) as wk:
        warnings.simplefilter("always")
        rk = getattr(kiln.nn.functional, name)(kiln.from_numpy(x))
    assert [str(m.message) for m in wk] == [str(m.message) for m in w]
    assert len(w) == 1 and w[0].category is UserWarning and wk[0].category is UserWarning
    np.testing.assert_allclose(rk.numpy(), rt.numpy(), rtol=1e-6)
    # the caller's line is named, not kiln's
    assert wk[0].filename == __file__


def test_softmax_module_without_dim_warns():
    same_warnings(lambda L: L.nn.Softmax()(L.ones(2, 3)))
    assert messages(lambda: kiln.nn.Softmax(dim=1)(kiln.ones(2, 3))) == []
    assert messages(lambda: kiln.nn.functional.softmax(kiln.ones(2, 3), dim=-1)) == []


# ---- gumbel_vae / made_maf (size_average=False): torch's legacy reduction warning ------------------------------
@pytest.mark.parametrize("call", [
    lambda L: L.nn.functional.binary_cross_entropy(L.full((3,), 0.3), L.ones(3), size_average=False),
    lambda L: L.nn.functional.binary_cross_entropy_with_logits(L.zeros(3), L.ones(3), size_average=False),
    lambda L: L.nn.functional.mse_loss(L.zeros(3), L.ones(3), reduce=False),
    lambda L: L.nn.functional.l1_loss(L.zeros(3), L.ones(3), size_average=True, reduce=True),
    lambda L: L.nn.functional.nll_loss(L.zeros(2, 3), L.tensor([0, 1]), size_average=False),
    lambda L: L.nn.functional.cross_entropy(L.zeros(2, 3), L.tensor([0, 1]), reduce=False),
    lambda L: L.nn.functional.smooth_l1_loss(L.zeros(3), L.ones(3), size_average=False),
    lambda L: L.nn.functional.kl_div(L.zeros(3), L.ones(3), size_average=False),
    lambda L: L.nn.MSELoss(size_average=False),
    lambda L: L.nn.BCELoss(reduce=False),
])
def test_legacy_size_average_reduce_warns(call):
    wt = same_warnings(call)
    assert len(wt) == 1 and "size_average and reduce args will be deprecated" in wt[0][1]


def test_legacy_reduction_values():
    x, y = np.array([0.2, 0.7, 0.4], np.float32), np.array([1.0, 0.0, 1.0], np.float32)
    for kw in (dict(size_average=False), dict(reduce=False), dict(size_average=True), dict(size_average=False,
                                                                                          reduce=False)):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            rt = torch.nn.functional.binary_cross_entropy(torch.from_numpy(x), torch.from_numpy(y), **kw)
            rk = kiln.nn.functional.binary_cross_entropy(kiln.from_numpy(x), kiln.from_numpy(y), **kw)
            mt = torch.nn.MSELoss(**kw)(torch.from_numpy(x), torch.from_numpy(y))
            mk = kiln.nn.MSELoss(**kw)(kiln.from_numpy(x), kiln.from_numpy(y))
        np.testing.assert_allclose(rk.numpy(), rt.numpy(), rtol=1e-6)
        np.testing.assert_allclose(mk.numpy(), mt.numpy(), rtol=1e-6)
    # a loss module warns once, when it is built: its forward passes `reduction`
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        loss = kiln.nn.MSELoss(size_average=False)
    assert messages(lambda: loss(kiln.zeros(2), kiln.ones(2))) == []


# ---- regressions with an (N, 1) output against an (N,) target: torch's broadcasting warning -------------------
@pytest.mark.parametrize("name", ["mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss"])
def test_regression_loss_target_size_warns_and_broadcasts(name):
    rng = np.random.default_rng(1)
    out, tgt = rng.standard_normal((5, 1)).astype(np.float32), rng.standard_normal(5).astype(np.float32)
    with warnings.catch_warnings(record=True) as wt:
        warnings.simplefilter("always")
        rt = getattr(torch.nn.functional, name)(torch.from_numpy(out), torch.from_numpy(tgt))
    with warnings.catch_warnings(record=True) as wk:
        warnings.simplefilter("always")
        rk = getattr(kiln.nn.functional, name)(kiln.from_numpy(out), kiln.from_numpy(tgt))
    assert [str(m.message).replace("kiln.", "torch.") for m in wk] == [str(m.message) for m in wt]
    assert len(wt) == 1 and "Using a target size (torch.Size([5]))" in str(wt[0].message)
    np.testing.assert_allclose(rk.numpy(), rt.numpy(), rtol=1e-6)
    assert messages(lambda: getattr(kiln.nn.functional, name)(kiln.zeros(5), kiln.ones(5))) == []


# ---- checkpoint_resume / deeplab_aspp: the schedulers' call-order and get_lr() warnings ----------------------
def _sched(L, order):
    p = L.nn.Parameter(L.ones(2))
    opt = L.optim.SGD([p], lr=0.1)
    s = L.optim.lr_scheduler.StepLR(opt, 2)
    if order == "scheduler_first":
        s.step()
        opt.step()
    elif order == "optimizer_first":
        opt.step()
        s.step()
        s.step()
    elif order == "overridden":
        opt.step = lambda closure=None: None
        opt.step()
        s.step()
    return s


@pytest.mark.parametrize("order", ["scheduler_first", "optimizer_first", "overridden"])
def test_scheduler_step_order_warnings(order):
    wt = same_warnings(lambda L: _sched(L, order))
    assert (len(wt) == 1) == (order != "optimizer_first")


@pytest.mark.parametrize("make", [
    lambda L, o: L.optim.lr_scheduler.StepLR(o, 2),
    lambda L, o: L.optim.lr_scheduler.OneCycleLR(o, 1.0, total_steps=10),
    lambda L, o: L.optim.lr_scheduler.CosineAnnealingWarmRestarts(o, 3),
    lambda L, o: L.optim.lr_scheduler.LambdaLR(o, lambda e: 0.5 ** e),
    lambda L, o: L.optim.lr_scheduler.CosineAnnealingLR(o, 5),
])
def test_scheduler_get_lr_outside_step_warns(make):
    def run(L):
        opt = L.optim.SGD([L.nn.Parameter(L.ones(2))], lr=0.1, momentum=0.9)
        s = make(L, opt)
        for _ in range(3):
            opt.step()
            s.step()
        return s
    same_warnings(run)  # no warning inside step()
    st, sk = run(torch), run(kiln)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        lt, lk = st.get_lr(), sk.get_lr()
    assert [str(m.message) for m in w][0] == [str(m.message) for m in w][1]
    assert "please use `get_last_lr()`" in str(w[0].message) and len(w) == 2
    np.testing.assert_allclose(lk, lt, rtol=1e-12)
    assert sk.get_last_lr() == st.get_last_lr()
    assert sorted(sk.state_dict()) == sorted(st.state_dict())


def test_user_scheduler_subclass_is_left_alone():
    # a program's own scheduler (deeplab_aspp's PolyLR) defines get_lr without torch's warning
    class PolyLR(kiln.optim.lr_scheduler._LRScheduler):
        def get_lr(self):
            return [base * (1 - self.last_epoch / 10) ** 0.9 for base in self.base_lrs]
    opt = kiln.optim.SGD([kiln.nn.Parameter(kiln.ones(2))], lr=0.1)
    s = PolyLR(opt)
    assert messages(s.get_lr) == []


# ---- copy construction from a tensor, and the .grad of a non-leaf -------------------------------------------
@pytest.mark.parametrize("call", [
    lambda L: L.tensor(L.ones(2)),
    lambda L: L.tensor(L.ones(2, requires_grad=True), requires_grad=True),
    lambda L: L.ones(2).new_tensor(L.zeros(3)),
])
def test_copy_construct_warns(call):
    wt = same_warnings(call)
    assert len(wt) == 1 and "To copy construct from a tensor" in wt[0][1]


def test_no_copy_construct_warning_for_data():
    # torch's legacy constructors copy or alias without the warning
    for L in (torch, kiln):
        assert messages(lambda: (L.FloatTensor(L.ones(2)), L.LongTensor(L.ones(2).long()), L.Tensor(L.ones(2)))) == []
    for call in (lambda: kiln.tensor([1.0, 2.0]), lambda: kiln.tensor([kiln.tensor(1.0), kiln.tensor(2.0)]),
                 lambda: kiln.tensor(np.ones(2)), lambda: kiln.as_tensor(kiln.ones(2)),
                 lambda: kiln.ones(2).new_tensor([1, 2])):
        assert messages(call) == []


def test_non_leaf_grad_warns():
    def run(L):
        x = L.ones(2, requires_grad=True)
        y = x * 2
        z = x * 3
        z.retain_grad()
        (y.sum() + z.sum()).backward()
        return y.grad, z.grad, x.grad
    wt = same_warnings(run)
    assert len(wt) == 1 and wt[0][0] is UserWarning and "not a leaf Tensor" in wt[0][1]
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        run(kiln)
    assert os.path.basename(w[0].filename) == os.path.basename(__file__)  # names the reading line
    # a leaf, a retain_grad'd non-leaf and a tensor without autograd read their .grad silently
    assert messages(lambda: (kiln.ones(2).grad, kiln.ones(2, requires_grad=True).grad)) == []
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(UserWarning):
            (kiln.ones(2, requires_grad=True) * 2).grad


# ---- moco_v2 / transe_kge: norms over a dim (documented difference) ----------------------------------------
@pytest.mark.parametrize("p", [1, 2, 3])
@pytest.mark.parametrize("dim", [0, 1])
def test_norm_with_dim_is_within_a_few_ulps(p, dim):
    # torch 1.13 sums |x|^p over a dim sequentially in float32 (p != 2) or in its vectorised 2-norm order;
    # kiln's composite norm sums in its own (pairwise) order, so elements may round a few ulps apart (a 64-term
    # sequential float sum carries up to ~5 ulps of error of its own)
    x = torch.randn(16, 64, generator=torch.Generator().manual_seed(p))
    rt = x.norm(p=p, dim=dim)
    rk = k(x).norm(p=p, dim=dim)
    np.testing.assert_allclose(rk.numpy(), rt.numpy(), rtol=1e-6)
    nt = torch.nn.functional.normalize(x, p=p, dim=dim)
    nk = kiln.nn.functional.normalize(k(x), p=p, dim=dim)
    np.testing.assert_allclose(nk.numpy(), nt.numpy(), rtol=1e-6, atol=1e-8)


# ---- legacy constructors of a tensor (old programs' torch.FloatTensor(t)) ------------------------------------
@pytest.mark.parametrize("name", ["FloatTensor", "DoubleTensor", "LongTensor", "ByteTensor", "BoolTensor",
                                  "HalfTensor", "BFloat16Tensor"])
@pytest.mark.parametrize("dtype", ["float32", "int64", "bool"])
def test_legacy_constructor_of_a_tensor(name, dtype):
    def run(L):
        t = L.ones(3, dtype=getattr(L, dtype))
        r = getattr(L, name)(t)
        return t, r
    try:
        tt, rt = run(torch)
    except TypeError as e:
        with pytest.raises(TypeError) as ek:
            run(kiln)
        assert str(ek.value) == str(e)  # "expected TensorOptions(dtype=double, ...) (got TensorOptions(...))"
        return
    tk, rk = run(kiln)
    assert rk.dtype == getattr(kiln, dtype) and rk.shape == tk.shape
    assert rk.data_ptr() == tk.data_ptr() and rt.data_ptr() == tt.data_ptr()  # an alias, not a copy


def test_half_and_bfloat16_legacy_types():
    for name in ("HalfTensor", "BFloat16Tensor"):
        k_t, t_t = getattr(kiln, name)(2, 3), getattr(torch, name)(2, 3)
        assert tuple(k_t.shape) == tuple(t_t.shape) and str(k_t.dtype)[5:] == str(t_t.dtype)[6:]
        assert isinstance(kiln.ones(2, dtype=k_t.dtype), getattr(kiln, name))
        np.testing.assert_array_equal(getattr(kiln, name)([1.5, 2.0]).float().numpy(),
                                      getattr(torch, name)([1.5, 2.0]).float().numpy())


# ---- squeeze() with nothing to squeeze, and flatten over one dim (nn.Flatten of a 2-d batch) ----------------
def test_squeeze_is_always_a_new_view():
    for L in (torch, kiln):
        x = L.randn(4, 3, requires_grad=True)
        s = x.squeeze()
        # (torch names squeeze()'s node SqueezeBackward0; kiln's squeeze() is squeeze(dim)'s, SqueezeBackward1)
        assert s is not x and type(s.grad_fn).__name__.startswith("SqueezeBackward")
        assert s._base is x
        with pytest.raises(RuntimeError, match="view of a leaf Variable"):
            s.add_(1)
        t = L.zeros(2, 3)
        u = t.squeeze()
        u.unsqueeze_(0)  # reshapes the view only
        assert tuple(t.shape) == (2, 3) and tuple(u.shape) == (1, 2, 3)
        z = L.tensor(2.0, requires_grad=True).squeeze()
        assert z.shape == () and z.grad_fn is not None
        (z * 3).backward()


@pytest.mark.parametrize("shape, start, end", [((4, 3), 1, -1), ((2, 3, 4), 1, 1), ((2, 3), 0, 0), ((5,), 0, -1)])
def test_flatten_of_one_dim_is_the_tensor_itself(shape, start, end):
    xt = torch.ones(*shape)
    xk = kiln.ones(*shape)
    assert (xk.flatten(start, end) is xk) == (xt.flatten(start, end) is xt)
    assert (kiln.nn.Flatten(start, end)(xk) is xk) == (torch.nn.Flatten(start, end)(xt) is xt)
    assert tuple(xk.flatten(start, end).shape) == tuple(xt.flatten(start, end).shape)


# ---- print(model(x)): nn.Linear's grad_fn is torch's AddmmBackward0 ------------------------------------------
@pytest.mark.parametrize("shape", [(4, 3), (2, 4, 3), (3,)])
def test_linear_grad_fn_name(shape):
    names = []
    for L in (torch, kiln):
        L.manual_seed(0)
        out = L.nn.Linear(3, 2)(L.ones(*shape))
        names.append(type(out.grad_fn).__name__)
        assert repr(out).split("grad_fn=")[1] .startswith("<" + names[-1])
    assert names[1] == names[0]


# ---- grad_fn names: torch's CamelCase of op names (a letter after a digit capitalised) and its overload numbers
@pytest.mark.parametrize("call", [
    lambda L, x: L.nn.functional.max_pool2d(x, 2),
    lambda L, x: L.nn.functional.avg_pool2d(x, 2),
    lambda L, x: x.log1p(),
    lambda L, x: x.clamp(min=0),
    lambda L, x: x.pow(2),
    lambda L, x: x ** 2,
    lambda L, x: x ** x,
    lambda L, x: x.squeeze(0),
    lambda L, x: L.nn.functional.conv2d(x, L.ones(3, 2, 3, 3)),
    lambda L, x: L.nn.Conv2d(2, 3, 3)(x),
    lambda L, x: L.nn.functional.max_pool1d(x[0], 2),
    lambda L, x: L.nn.functional.adaptive_max_pool2d(x, 2),
    lambda L, x: L.nn.functional.grid_sample(x, L.zeros(1, 2, 2, 2), align_corners=False),
])
def test_grad_fn_names_as_torch(call):
    names = []
    for L in (torch, kiln):
        L.manual_seed(0)
        x = L.rand(1, 2, 4, 4, requires_grad=True)
        names.append(type(call(L, x).grad_fn).__name__)
    assert names[1] == names[0]


# ---- a broadcasting mismatch is reported at the trailing-most dim, as torch's infer_size ------------------
@pytest.mark.parametrize("a, b", [((2, 3), (3, 2)), ((4, 1, 3), (2, 5)), ((2, 3, 4), (3, 5))])
def test_broadcast_error_names_torchs_dim(a, b):
    with pytest.raises(RuntimeError) as et:
        torch.ones(*a) + torch.ones(*b)
    with pytest.raises(RuntimeError) as ek:
        kiln.ones(*a) + kiln.ones(*b)
    assert str(et.value) in str(ek.value)  # kiln prefixes the op's name ("add(): ...")
