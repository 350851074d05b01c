"""What the programs of test_programs_part7.py found missing in kiln, each checked against torch 1.13."""
import hashlib
import importlib
import os
import warnings

import numpy as np
import pytest
import torch

import kiln


def k(t):
    return kiln.from_numpy(t.detach().numpy().copy())


def same(a, b):
    np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())


# ---- center_loss / radam_lookahead: torch's deprecated scalar-first overloads --------------------------------
def _operands():
    rng = np.random.default_rng(0)
    f = lambda *s: torch.from_numpy(rng.standard_normal(s).astype(np.float32))  # noqa: E731
    return dict(x=f(2, 3), m1=f(2, 4), m2=f(4, 3), b1=f(5, 2, 4), b2=f(5, 4, 3), bx=f(5, 2, 3), v=f(4), a=f(2),
                c=f(3), d=f(2, 3).abs() + 1)


DEPRECATED_CALLS = {
    "add": lambda L, o: L.add(o["x"], 2, o["d"]),
    "add_out": lambda L, o: L.add(o["x"], -0.5, o["d"], out=L.empty(2, 3)),
    "sub": lambda L, o: L.sub(o["x"], 2, o["d"]),
    "Tensor.add": lambda L, o: o["x"].add(0.25, o["d"]),
    "Tensor.add_": lambda L, o: o["x"].clone().add_(-0.1, o["d"]),
    "Tensor.sub_": lambda L, o: o["x"].clone().sub_(3, o["d"]),
    "addcmul": lambda L, o: L.addcmul(o["x"], 0.5, o["d"], o["x"]),
    "Tensor.addcmul_": lambda L, o: o["x"].clone().mul_(0.999).addcmul_(1 - 0.999, o["d"], o["d"]),
    "addcdiv": lambda L, o: L.addcdiv(o["x"], -0.01, o["x"], o["d"]),
    "Tensor.addcdiv_": lambda L, o: o["x"].clone().addcdiv_(-0.01, o["x"], o["d"].sqrt().add_(1e-8)),
    "addmm5": lambda L, o: L.addmm(1, o["x"], -2, o["m1"], o["m2"]),
    "addmm4": lambda L, o: L.addmm(0.5, o["x"], o["m1"], o["m2"]),
    "Tensor.addmm_4": lambda L, o: o["x"].clone().addmm_(1, -2, o["m1"], o["m2"]),
    "Tensor.addmm3": lambda L, o: o["x"].addmm(0.5, o["m1"], o["m2"]),
    "addbmm": lambda L, o: L.addbmm(2, o["x"], 3, o["b1"], o["b2"]),
    "Tensor.addbmm_": lambda L, o: o["x"].clone().addbmm_(2, 3, o["b1"], o["b2"]),
    "baddbmm": lambda L, o: L.baddbmm(2, o["bx"], 0.5, o["b1"], o["b2"]),
    "Tensor.baddbmm": lambda L, o: o["bx"].baddbmm(2, o["b1"], o["b2"]),
    "addmv": lambda L, o: L.addmv(2, o["a"], 3, o["m1"], o["v"]),
    "Tensor.addmv_": lambda L, o: o["a"].clone().addmv_(2, 3, o["m1"], o["v"]),
    "addr": lambda L, o: L.addr(2, o["x"], 3, o["a"], o["c"]),
    "Tensor.addr": lambda L, o: o["x"].addr(2, o["a"], o["c"]),
    "0-dim alpha": lambda L, o: o["x"].add(L.tensor(2.0), o["d"]),
}


@pytest.mark.parametrize("name", list(DEPRECATED_CALLS))
def test_deprecated_scalar_first_overloads(name):
    ot = _operands()
    ok = {n: k(v) for n, v in ot.items()}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rt = DEPRECATED_CALLS[name](torch, ot)
        rk = DEPRECATED_CALLS[name](kiln, ok)
    assert tuple(rk.shape) == tuple(rt.shape)
    np.testing.assert_allclose(rk.numpy(), rt.numpy(), rtol=1e-6, atol=1e-6)


def test_deprecated_overload_warns_and_keeps_autograd(monkeypatch):
    xt = torch.ones(3, requires_grad=True)
    xk = kiln.ones(3, requires_grad=True)
    for lib, x in ((torch, xt), (kiln, xk)):
        y = x * 1.0
        with warnings.catch_warnings(record=True):
            warnings.simplefilter("always")
            y.addcmul_(0.5, x, x).sum().backward()
    same(xk.grad, k(xt.grad))
    # one warning per overload and process, as torch's TORCH_WARN_ONCE: forget the earlier tests' warnings
    monkeypatch.setattr(kiln._deprecated_overloads, "_warned", set())
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        kiln.zeros(2).addcdiv_(0.5, kiln.ones(2), kiln.ones(2))
    assert any("deprecated" in str(m.message) and m.category is UserWarning for m in w)


@pytest.mark.parametrize("call", [
    lambda L: L.ones(2).add_("a", L.ones(2)),           # neither the current nor a deprecated form
    lambda L: L.ones(2).addcmul_(L.ones(2), 0.5, L.ones(2)),
    lambda L: L.addmm(L.ones(2, 2), 1, L.ones(2, 2), L.ones(2, 2)),
])
def test_a_call_matching_no_overload_is_still_a_type_error(call):
    for lib in (torch, kiln):
        with pytest.raises(TypeError):
            call(lib)


# ---- mdn_bbb / deepar / cleanrl_ppo: torch.distributions' one-module-per-distribution layout -------------------
TORCH_DIST_MODULES = ["beta", "binomial", "cauchy", "chi2", "continuous_bernoulli", "dirichlet", "exp_family",
                      "exponential", "fishersnedecor", "geometric", "gumbel", "half_cauchy", "half_normal",
                      "independent", "kumaraswamy", "laplace", "lkj_cholesky", "log_normal", "logistic_normal",
                      "lowrank_multivariate_normal", "mixture_same_family", "multinomial", "negative_binomial",
                      "normal", "categorical", "one_hot_categorical", "pareto", "poisson", "relaxed_bernoulli",
                      "relaxed_categorical", "studentT", "transformed_distribution", "weibull", "uniform"]


@pytest.mark.parametrize("name", TORCH_DIST_MODULES)
def test_distribution_submodules(name):
    tm = importlib.import_module("torch.distributions." + name)
    km = importlib.import_module("kiln.distributions." + name)
    assert getattr(kiln.distributions, name) is km
    exported = [n for n in getattr(tm, "__all__", []) if isinstance(getattr(tm, n), type)]
    assert exported
    for cls in exported:
        assert getattr(km, cls) is getattr(kiln.distributions, cls), cls


def test_one_hot_categorical_straight_through():
    def run(lib):
        lib.manual_seed(3)
        logits = lib.tensor([[0.1, -0.4, 0.9, 0.0], [1.2, 0.3, -0.7, 0.2]], requires_grad=True)
        from_mod = importlib.import_module(lib.__name__ + ".distributions.one_hot_categorical")
        d = from_mod.OneHotCategoricalStraightThrough(logits=logits)
        s = d.rsample((3,))
        (s * lib.arange(4.0)).sum().backward()
        return s, logits.grad, d.has_rsample, d.log_prob(s[0])
    st, gt, rt_, lt = run(torch)
    sk, gk, rk_, lk = run(kiln)
    same(sk, k(st))
    np.testing.assert_allclose(gk.numpy(), gt.numpy(), rtol=1e-6, atol=1e-7)
    assert rk_ is rt_ is True
    np.testing.assert_allclose(lk.detach().numpy(), lt.detach().numpy(), rtol=1e-6)


def test_exponential_family_entropy_by_log_normalizer():
    def make(lib):
        from_mod = importlib.import_module(lib.__name__ + ".distributions.exp_family")

        class Exponential(from_mod.ExponentialFamily):
            arg_constraints = {}

            def __init__(self, rate):
                self.rate = rate
                super().__init__(rate.shape)

            @property
            def _natural_params(self):
                return (-self.rate,)

            def _log_normalizer(self, x):
                return -lib.log(-x)

            @property
            def _mean_carrier_measure(self):
                return 0
        return Exponential(lib.tensor([0.5, 2.0, 7.0])).entropy()
    np.testing.assert_allclose(make(kiln).detach().numpy(), make(torch).detach().numpy(), rtol=1e-6)


# ---- hub: `from torch.hub import load_state_dict_from_url`, torch.utils.model_zoo.load_url ------------------
def _hub_files(tmp_path, lib):
    lib.manual_seed(0)
    src = tmp_path / "src"
    src.mkdir(exist_ok=True)
    path = src / "lin.pth"
    lib.save(lib.nn.Linear(3, 2).state_dict(), str(path))
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    named = src / ("lin-%s.pth" % digest[:8])
    os.rename(path, named)
    return named


@pytest.mark.parametrize("lib", [torch, kiln], ids=["torch", "kiln"])
def test_hub_load_state_dict_from_url_caches(tmp_path, lib):
    named = _hub_files(tmp_path, lib)
    old = lib.hub.get_dir()
    lib.hub.set_dir(str(tmp_path / "hub"))
    try:
        assert lib.hub.get_dir() == str(tmp_path / "hub")
        sd = lib.hub.load_state_dict_from_url("file://%s" % named, check_hash=True, progress=False)
        assert os.listdir(tmp_path / "hub" / "checkpoints") == [named.name]
        os.remove(named)  # the cached copy is read from now on
        again = importlib.import_module(lib.__name__ + ".utils.model_zoo").load_url("file://%s" % named)
        assert list(sd) == ["weight", "bias"] and lib.equal(sd["weight"], again["weight"])
    finally:
        lib.hub.set_dir(old)
    torch.manual_seed(0)
    np.testing.assert_array_equal(sd["weight"].numpy(), torch.nn.Linear(3, 2).weight.detach().numpy())


@pytest.mark.parametrize("lib", [torch, kiln], ids=["torch", "kiln"])
def test_hub_rejects_a_bad_hash_and_loads_a_local_hubconf(tmp_path, lib):
    named = _hub_files(tmp_path, lib)
    bad = named.with_name("lin-deadbeef.pth")
    os.rename(named, bad)
    with pytest.raises(RuntimeError, match="invalid hash value"):
        lib.hub.load_state_dict_from_url("file://%s" % bad, model_dir=str(tmp_path / "ckpt"), check_hash=True,
                                         progress=False)
    assert not (tmp_path / "ckpt" / bad.name).exists()
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "hubconf.py").write_text("dependencies = ['numpy']\n\ndef tiny(n=2, scale=1.0):\n"
                                     "    '''a tiny entrypoint'''\n    return [scale] * n\n")
    assert lib.hub.load(str(repo), "tiny", 3, source="local", scale=0.5) == [0.5, 0.5, 0.5]
    with pytest.raises(RuntimeError):
        lib.hub.load(str(repo), "missing", source="local")


# ---- nn.utils.convert_conv2d_weight_memory_format and skip_init -----------------------------------------------
def test_convert_conv2d_weight_memory_format():
    def run(lib):
        lib.manual_seed(0)
        nn = lib.nn
        m = nn.Sequential(nn.Conv2d(3, 4, 3), nn.ReLU(), nn.Sequential(nn.ConvTranspose2d(4, 2, 3)), nn.Linear(2, 2))
        w = m[0].weight.detach().clone()
        r = nn.utils.convert_conv2d_weight_memory_format(m, lib.channels_last)
        return (r is m, tuple(m[0].weight.stride()), tuple(m[2][0].weight.stride()), type(m[0].weight).__name__,
                bool(lib.equal(m[0].weight, w)), tuple(m[3].weight.stride()),
                m[0].weight.is_contiguous(memory_format=lib.channels_last))
    assert run(kiln) == run(torch)


def test_skip_init_leaves_the_random_stream():
    for lib in (torch, kiln):
        lib.manual_seed(1)
        layer = lib.nn.utils.skip_init(lib.nn.Linear, 4, 3)
        assert tuple(layer.weight.shape) == (3, 4) and tuple(layer.bias.shape) == (3,)
        assert isinstance(layer.weight, lib.nn.Parameter)
        after = lib.rand(3).numpy()
        lib.manual_seed(1)
        np.testing.assert_array_equal(after, lib.rand(3).numpy())
        with pytest.raises(RuntimeError, match="device"):
            lib.nn.utils.skip_init(lib.nn.ReLU)


# ---- radam_lookahead / SGDW-style optimizers: add_(alpha, other) rounds as add_(other, alpha=alpha) --------
@pytest.mark.parametrize("form", ["add_", "sub_", "add", "data.add_"])
def test_deprecated_alpha_first_is_bitwise_torch(form):
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal(1000).astype(np.float32), rng.standard_normal(1000).astype(np.float32)

    def run(lib):
        x, y = lib.from_numpy(a.copy()), lib.from_numpy(b.copy())
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            if form == "data.add_":
                x.data.add_(-0.1, y)
                return x
            return getattr(x, form)(-0.1, y)  # torch fuses a + alpha * b into one multiply-add
    same(run(kiln), run(torch))


def test_deprecated_overload_warning_names_the_callers_line():
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        kiln._deprecated_overloads._warned.discard("addcmul")
        kiln.ones(2).addcmul(0.5, kiln.ones(2), kiln.ones(2))
    assert [os.path.basename(m.filename) for m in w] == [os.path.basename(__file__)]


# ---- focal_arcface / probes: torch.is_storage of a storage ----------------------------------------------------
def test_is_storage():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for lib in (torch, kiln):
            x = lib.ones(3)
            assert lib.is_storage(x.storage()) is True
            assert lib.is_storage(x.untyped_storage() if hasattr(x, "untyped_storage") else x.storage()) is True
            assert lib.is_storage(x) is False and lib.is_storage([1]) is False


# ---- training_tricks: verbose schedulers print torch's zero-padded epoch ---------------------------------------
def test_verbose_scheduler_epoch_format(capsys):
    def run(lib):
        p = lib.nn.Parameter(lib.ones(1))
        opt = lib.optim.SGD([p], lr=1.0)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            plateau = lib.optim.lr_scheduler.ReduceLROnPlateau(opt, "min", patience=0, verbose=True)
            for v in (1.0, 2.0, 3.0):
                plateau.step(v)
            step = lib.optim.lr_scheduler.StepLR(opt, 1, gamma=0.5, verbose=True)
            step.step(2)
            step.step(2.5)
        return capsys.readouterr().out
    assert run(kiln) == run(torch)


# ---- probes: torch.dtype.is_signed / is_complex (dtype checks in data pipelines and quantizers) -----------------
def test_dtype_is_signed_and_is_complex():
    for name in ("bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32", "float64"):
        kd, td = getattr(kiln, name), getattr(torch, name)
        assert (kd.is_signed, kd.is_complex, kd.is_floating_point) == (td.is_signed, td.is_complex,
                                                                       td.is_floating_point), name


# ---- cnn_visualizations: the deprecated Module.register_backward_hook (guided backprop on ReLU modules) ---------
def test_register_backward_hook_guided_relu():
    def run(lib):
        lib.manual_seed(0)
        nn = lib.nn
        net = nn.Sequential(nn.Conv2d(2, 3, 3, padding=1), nn.ReLU(inplace=True), nn.Conv2d(3, 2, 3), nn.ReLU())
        seen, outs = [], []
        for m in net:
            if isinstance(m, nn.ReLU):
                m.register_forward_hook(lambda mod, i, o: outs.append(o))

                def guided(mod, grad_in, grad_out):
                    seen.append((tuple(grad_in[0].shape), tuple(grad_out[0].shape)))
                    mask = outs.pop()
                    return ((mask > 0).float() * lib.clamp(grad_in[0], min=0.0),)
                m.register_backward_hook(guided)
        first = []
        net[0].register_backward_hook(lambda mod, gi, go: first.append(gi[0]))
        x = lib.from_numpy(np.linspace(-1, 1, 2 * 2 * 6 * 6, dtype=np.float32).reshape(2, 2, 6, 6))
        x.requires_grad_()
        net(x).sum().backward()
        return seen, x.grad, first[0]
    st, gt, ft = run(torch)
    sk, gk, fk = run(kiln)
    assert sk == st
    np.testing.assert_allclose(gk.numpy(), gt.numpy(), rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(fk.numpy(), ft.numpy(), rtol=1e-5, atol=1e-7)


def test_regular_and_full_backward_hooks_do_not_mix():
    for lib in (torch, kiln):
        m = lib.nn.ReLU()
        m.register_backward_hook(lambda *a: None)
        with pytest.raises(RuntimeError, match="Cannot use both regular backward hooks and full backward hooks"):
            m.register_full_backward_hook(lambda *a: None)
        m2 = lib.nn.ReLU()
        m2.register_full_backward_hook(lambda *a: None)
        with pytest.raises(RuntimeError, match="Cannot use both"):
            m2.register_backward_hook(lambda *a: None)


# ---- probes: the module paths old and new code imports from ------------------------------------------------
@pytest.mark.parametrize("path,names", [
    ("optim.adamw", ["AdamW"]), ("autograd.variable", ["Variable"]),
    ("nn.utils.clip_grad", ["clip_grad_norm_", "clip_grad_norm", "clip_grad_value_"]),
    ("nn.utils.init", ["skip_init"]), ("nn.modules.batchnorm", ["_NormBase", "_BatchNorm"]),
    ("autograd.function", ["InplaceFunction", "once_differentiable"]),
    ("nn.grad", ["conv1d_input", "conv1d_weight", "conv2d_input", "conv2d_weight", "conv3d_input", "conv3d_weight"]),
    ("_six", ["inf", "nan", "string_classes"]),
])
def test_torch_module_paths(path, names):
    tm = importlib.import_module("torch." + path)
    km = importlib.import_module("kiln." + path)
    for name in names:
        tv, kv = getattr(tm, name), getattr(km, name)
        if isinstance(tv, float):
            assert (kv == tv) or (kv != kv and tv != tv)
        elif isinstance(tv, tuple):
            assert kv == tv
        else:
            assert callable(kv) and kv.__name__ == tv.__name__


def test_norm_base_hierarchy_as_torch():
    for lib in (torch, kiln):
        bn = lib.nn.modules.batchnorm
        assert isinstance(lib.nn.BatchNorm2d(3), bn._BatchNorm) and isinstance(lib.nn.BatchNorm2d(3), bn._NormBase)
        # update_bn / norm_eval loops test isinstance(m, _BatchNorm): instance norms are not batch norms
        assert not isinstance(lib.nn.InstanceNorm2d(3), bn._BatchNorm)
        assert isinstance(lib.nn.InstanceNorm2d(3, affine=True), bn._NormBase)


def test_config_show_and_parallel_info():
    for lib in (torch, kiln):
        assert isinstance(lib.__config__.show(), str)
        assert "get_num_threads() : %d" % lib.get_num_threads() in lib.__config__.parallel_info()


def test_inplace_function_carries_its_flag():
    for lib in (torch, kiln):
        class Round(lib.autograd.function.InplaceFunction):
            @staticmethod
            def forward(ctx, x, inplace=False):
                return x.round_() if inplace else x.round()

            @staticmethod
            def backward(ctx, g):
                return g, None
        assert Round(inplace=True).inplace is True and Round().inplace is False
        x = lib.tensor([0.4, 1.6], requires_grad=True)
        y = Round.apply(x * 1.0, False)
        y.sum().backward()
        assert y.tolist() == [0.0, 2.0] and x.grad.tolist() == [1.0, 1.0]


def test_init_private_helpers():
    w = np.zeros((4, 3, 2, 2), np.float32)
    for mode in ("fan_in", "fan_out", "FAN_IN"):
        assert kiln.nn.init._calculate_correct_fan(kiln.from_numpy(w), mode) == \
            torch.nn.init._calculate_correct_fan(torch.from_numpy(w), mode)
    with pytest.raises(ValueError):
        kiln.nn.init._calculate_correct_fan(kiln.from_numpy(w), "fan_avg")
    for fill in (lambda L, t: L.nn.init._no_grad_uniform_(t, -0.5, 0.5),
                 lambda L, t: L.nn.init._no_grad_normal_(t, 0.0, 2.0),
                 lambda L, t: L.nn.init._no_grad_trunc_normal_(t, 0.0, 1.0, -2.0, 2.0),
                 lambda L, t: L.nn.init._no_grad_fill_(t, 3.0), lambda L, t: L.nn.init._no_grad_zero_(t)):
        torch.manual_seed(4)
        kiln.manual_seed(4)
        same(fill(kiln, kiln.empty(5, 3)), fill(torch, torch.empty(5, 3)))


@pytest.mark.parametrize("dims,stride,padding,dilation,groups", [(1, 2, 1, 1, 1), (2, 1, 1, 2, 2), (2, 2, 0, 1, 1),
                                                                 (3, 1, 1, 1, 1)])
def test_nn_grad_convolution_gradients(dims, stride, padding, dilation, groups):
    rng = np.random.default_rng(dims)
    x = rng.standard_normal((2, 4) + (7,) * dims).astype(np.float32)
    w = rng.standard_normal((6, 4 // groups) + (3,) * dims).astype(np.float32)
    conv = getattr(torch.nn.functional, "conv%dd" % dims)
    out_shape = conv(torch.from_numpy(x), torch.from_numpy(w), None, stride, padding, dilation, groups).shape
    g = rng.standard_normal(tuple(out_shape)).astype(np.float32)
    for which in ("input", "weight"):
        results = []
        for lib in (torch, kiln):
            fn = getattr(lib.nn.grad, "conv%dd_%s" % (dims, which))
            X, W, G = lib.from_numpy(x), lib.from_numpy(w), lib.from_numpy(g)
            first = (X.shape if which == "input" else X)
            second = (W if which == "input" else W.shape)
            results.append(fn(first, second, G, stride, padding, dilation, groups).numpy())
        np.testing.assert_allclose(results[1], results[0], rtol=1e-4, atol=1e-4)


# ---- probes: torch.svd_lowrank / torch.pca_lowrank (embedding PCA plots, low-rank compression) -----------------
@pytest.mark.parametrize("shape,q,center,niter", [((20, 8), 4, True, 2), ((8, 20), None, True, 2),
                                                  ((3, 15, 10), 3, False, 1), ((30, 5), 5, True, 0)])
def test_pca_and_svd_lowrank(shape, q, center, niter):
    rng = np.random.default_rng(0)
    A = rng.standard_normal(shape).astype(np.float32) @ np.diag(np.linspace(3, 0.1, shape[-1])).astype(np.float32)
    for call in (lambda L, X: L.pca_lowrank(X, q=q, center=center, niter=niter),
                 lambda L, X: L.svd_lowrank(X, q=3, M=X.mean(-2, keepdim=True).expand(*X.shape)),
                 lambda L, X: L.svd_lowrank(X, q=2, niter=niter)):
        out = []
        for lib in (torch, kiln):
            lib.manual_seed(0)
            out.append(call(lib, lib.from_numpy(A)))
        for a, b in zip(out[1], out[0]):  # the same Gaussian draw, QR and SVD: torch's factors
            np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-4, atol=1e-5)
    with pytest.raises(ValueError):
        kiln.pca_lowrank(kiln.from_numpy(A), q=100)


# ---- probes: torch.utils.benchmark.Timer for Python statements ---------------------------------------------
def test_utils_benchmark_timer():
    results = []
    for lib in (torch, kiln):
        bench = importlib.import_module(lib.__name__ + ".utils.benchmark")
        threads = lib.get_num_threads()
        m = bench.Timer("x + 1", globals={"x": lib.ones(3)}, label="add", sub_label="ones",
                        description="d").timeit(50)
        b = bench.Timer("y = x * 2", setup="x = 3.0", num_threads=1).blocked_autorange(min_run_time=0.02)
        assert lib.get_num_threads() == threads
        assert m.mean > 0 and m.median > 0 and b.median > 0 and sum(b.raw_times) >= 0.02
        assert all(abs(t * b.number_per_run - r) < 1e-12 for t, r in zip(b.times, b.raw_times))
        results.append((m.number_per_run, len(m.raw_times), m.title, m.description))
    assert results[0] == results[1]


# ---- cnn_visualizations: a module backward hook's graph is freed by one garbage collection -------------------
def test_module_backward_hooks_leave_no_tensors_after_one_collection():
    import gc
    nn = kiln.nn

    def run():
        kiln.manual_seed(0)
        net = nn.Sequential(nn.Conv2d(1, 2, 3, padding=1), nn.ReLU(), nn.Conv2d(2, 2, 3, padding=1), nn.Flatten(),
                            nn.Linear(2 * 6 * 6, 2))
        net[0].register_full_backward_hook(lambda m, gi, go: None)
        net[1].register_backward_hook(lambda m, gi, go: (gi[0] * 1.0,))
        x = kiln.randn(1, 1, 6, 6, requires_grad=True)
        net(x).backward(gradient=kiln.ones(1, 2))

    gc.collect()
    before = kiln._C._live_tensor_count()
    run()
    gc.collect()  # one pass: live-count checks of later tests measure after a single collection
    assert kiln._C._live_tensor_count() == before
