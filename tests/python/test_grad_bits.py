"""Gradients in torch 1.13's own order, bit for bit: var/std (its var_backward, std_backward),
logsumexp (logsumexp_backward), mse_loss, smooth_l1_loss and huber_loss (their backward kernels),
glu (glu_backward), silu and tanh (their AVX2 kernels' fused multiply-add), elu. Each compares kiln's .grad with torch's on the same float32 inputs."""
import numpy as np
import pytest
import torch

import kiln


def bits(t):
    return (t if isinstance(t, np.ndarray) else t.detach().numpy()).view(np.int32)


def grads(fn_t, fn_k, x, seed=1):
    """(torch's grad, kiln's grad) of fn(x) against a random upstream gradient."""
    xt = torch.tensor(x, requires_grad=True)
    yt = fn_t(xt)
    gy = torch.randn(yt.shape, generator=torch.Generator().manual_seed(seed))
    yt.backward(gy)
    xk = kiln.tensor(x, requires_grad=True)
    fn_k(xk).backward(kiln.tensor(gy.numpy()))
    return xt.grad.numpy(), xk.grad.numpy()


def sample(shape, seed=0, scale=1.0):
    return (np.random.default_rng(seed).standard_normal(shape) * scale).astype(np.float32)


REDUCTIONS = [
    ("var(-1)", lambda t: t.var(-1)),
    ("var(0, unbiased=False)", lambda t: t.var(0, unbiased=False)),
    ("var(-1, keepdim)", lambda t: t.var(-1, keepdim=True)),
    ("var()", lambda t: t.var()),
    ("var(correction=2)", lambda t: t.var(dim=1, correction=2)),
    ("std(-1, keepdim)", lambda t: t.std(-1, keepdim=True)),
    ("std((0, 2))", lambda t: t.std((0, 2)) if t.dim() == 3 else t.std(0)),
    ("std()", lambda t: t.std()),
    ("logsumexp(-1)", lambda t: t.logsumexp(-1)),
    ("logsumexp((0, 1), keepdim)", lambda t: t.logsumexp((0, 1), keepdim=True)),
    ("annotated transformer's LayerNorm", lambda t: (t - t.mean(-1, keepdim=True)) / (t.std(-1, keepdim=True) + 1e-6)),
]


@pytest.mark.parametrize("shape", [(8, 33), (3, 5, 7)])
@pytest.mark.parametrize("name, fn", REDUCTIONS, ids=[r[0] for r in REDUCTIONS])
def test_statistics_gradients(name, fn, shape):
    want, got = grads(fn, fn, sample(shape))
    np.testing.assert_array_equal(bits(got), bits(want))


def test_constant_slices_and_too_few_elements_as_torch():
    """std of a constant slice: zero gradient (masked); var over one element with correction 1: inf/nan.
    (torch 1.13's var() of a one-element tensor fails its own backward's shape check, so not that.)"""
    x = np.ones((3, 4), np.float32)
    want, got = grads(lambda t: t.std(-1), lambda t: t.std(-1), x)
    np.testing.assert_array_equal(got, want)
    want, got = grads(lambda t: t.var(1), lambda t: t.var(1), sample((2, 1)))
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("target_shape", [(6, 9), (9,)], ids=["same shape", "broadcast target"])
def test_mse_loss_gradients(reduction, target_shape):
    x, target = sample((6, 9)), sample(target_shape, seed=3)
    xt, tt = torch.tensor(x, requires_grad=True), torch.tensor(target, requires_grad=True)
    xk, tk = kiln.tensor(x, requires_grad=True), kiln.tensor(target, requires_grad=True)
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the broadcast target's size warning, in both
        lt = torch.nn.functional.mse_loss(xt, tt, reduction=reduction)
        lk = kiln.nn.functional.mse_loss(xk, tk, reduction=reduction)
    gy = torch.randn(lt.shape, generator=torch.Generator().manual_seed(4))
    lt.backward(gy)
    lk.backward(kiln.tensor(gy.numpy()))
    np.testing.assert_array_equal(bits(lk), bits(lt))
    np.testing.assert_array_equal(bits(xk.grad), bits(xt.grad))
    np.testing.assert_allclose(tk.grad.numpy(), tt.grad.numpy(), rtol=1e-6, atol=1e-7)  # summed over the broadcast
    if target_shape == (6, 9):
        np.testing.assert_array_equal(bits(tk.grad), bits(tt.grad))


@pytest.mark.parametrize("name", ["silu", "elu", "celu", "selu"])
def test_activation_gradients(name):
    fn_t, fn_k = getattr(torch.nn.functional, name), getattr(kiln.nn.functional, name)
    want, got = grads(fn_t, fn_k, sample((16, 37), scale=3.0))
    np.testing.assert_array_equal(bits(got), bits(want))


@pytest.mark.parametrize("dim", [-1, 0])
def test_glu_gradient(dim):
    """Runs of whole 16-float vectors: torch's sigmoid takes the C library's expf on a run's last n mod 16
    elements (its scalar loop), Sleef's elsewhere, as kiln everywhere; they rarely differ."""
    want, got = grads(lambda t: torch.nn.functional.glu(t, dim), lambda t: kiln.nn.functional.glu(t, dim),
                      sample((32, 64), scale=2.0))
    np.testing.assert_array_equal(bits(got), bits(want))


def test_tanh_backward_of_the_same_output():
    """kiln's tanh is its own (not Sleef's): its backward is held to torch's tanh_backward on one output."""
    y = np.tanh(sample((16, 37), scale=2.0)).astype(np.float32)
    g = sample((16, 37), seed=5)
    want = torch.ops.aten.tanh_backward(torch.tensor(g), torch.tensor(y))
    got = kiln._C._tanh_self_backward(kiln.tensor(g), kiln.tensor(y))
    np.testing.assert_array_equal(bits(got), bits(want.numpy()))


@pytest.mark.parametrize("name, fn", [("var", lambda t: t.var(-1)), ("std", lambda t: t.std(0)),
                                      ("logsumexp", lambda t: t.logsumexp(1)),
                                      ("mse_loss", lambda t: (t.sin() if hasattr(t, "sin") else t))])
def test_second_derivatives_match_torch(name, fn):
    """The backward formulas are written with differentiable ops: double backward works, as torch's."""
    x = sample((4, 5)).astype(np.float64)
    def run(lib):
        t = lib.tensor(x, requires_grad=True)
        y = fn(t) if name != "mse_loss" else lib.nn.functional.mse_loss(t.sin(), lib.tensor(x * 0.5))
        (g,) = lib.autograd.grad(y.sum(), t, create_graph=True)
        (gg,) = lib.autograd.grad((g * g).sum(), t)
        return gg.detach().numpy()
    np.testing.assert_allclose(run(kiln), run(torch), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("loss, kw", [("smooth_l1_loss", {}), ("smooth_l1_loss", {"beta": 0.3}),
                                      ("smooth_l1_loss", {"beta": 0.0}), ("huber_loss", {}),
                                      ("huber_loss", {"delta": 0.3}), ("huber_loss", {"delta": 2.5})])
def test_smooth_l1_and_huber_gradients(loss, kw, reduction):
    """torch's vectorized backward loop, on 64 elements (its scalar loop takes a run's last n mod 16
    elements and rounds beta/delta products in double: kiln does not copy that)."""
    x, target = sample((8, 8), scale=2.0), sample((8, 8), seed=3)
    x[0, :3] = target[0, :3]  # zero differences
    x[1, 0] = np.nan
    xt, tt = torch.tensor(x, requires_grad=True), torch.tensor(target, requires_grad=True)
    xk, tk = kiln.tensor(x, requires_grad=True), kiln.tensor(target, requires_grad=True)
    lt = getattr(torch.nn.functional, loss)(xt, tt, reduction=reduction, **kw)
    lk = getattr(kiln.nn.functional, loss)(xk, tk, reduction=reduction, **kw)
    gy = torch.randn(lt.shape, generator=torch.Generator().manual_seed(4))
    lt.backward(gy)
    lk.backward(kiln.tensor(gy.numpy()))
    np.testing.assert_array_equal(lk.detach().numpy(), lt.detach().numpy())  # NaN where torch's is
    np.testing.assert_array_equal(xk.grad.numpy(), xt.grad.numpy())
    np.testing.assert_array_equal(tk.grad.numpy(), tt.grad.numpy())
    assert type(lk.grad_fn).__name__ == type(lt.grad_fn).__name__ or reduction == "none" or kw.get("beta") == 0.0


UNARY = [("asin", 0.3, False), ("acos", 0.3, False), ("asinh", 2.0, False), ("acosh", 1.0, True),
         ("exp2", 1.0, False), ("erf", 1.5, False), ("erfc", 1.5, False), ("atan", 2.0, False), ("tan", 0.5, False)]


@pytest.mark.parametrize("name, scale, above_one", UNARY, ids=[u[0] for u in UNARY])
def test_unary_gradients(name, scale, above_one):
    """Their derivatives read self (or an exact result) only, so kiln's own forward does not enter."""
    x = sample((16, 32), seed=6, scale=scale)
    if above_one:
        x = np.abs(x) + 1.01
    want, got = grads(getattr(torch, name), getattr(kiln, name), x)
    np.testing.assert_array_equal(bits(got), bits(want))


def test_atan2_gradients():
    y, x = sample((16, 32), seed=7), sample((16, 32), seed=8)
    yt, xt = torch.tensor(y, requires_grad=True), torch.tensor(x, requires_grad=True)
    yk, xk = kiln.tensor(y, requires_grad=True), kiln.tensor(x, requires_grad=True)
    g = sample((16, 32), seed=9)
    torch.atan2(yt, xt).backward(torch.tensor(g))
    kiln.atan2(yk, xk).backward(kiln.tensor(g))
    np.testing.assert_array_equal(bits(yk.grad), bits(yt.grad))
    np.testing.assert_array_equal(bits(xk.grad), bits(xt.grad))


NEAREST = [((2, 3, 7), {"scale_factor": 2}), ((2, 3, 5, 6), {"scale_factor": 2}), ((2, 3, 5, 6), {"scale_factor": 3}),
           ((2, 3, 5, 6), {"size": (11, 13)}), ((2, 3, 5, 6), {"size": (11, 13), "mode": "nearest-exact"}),
           ((1, 2, 3, 4, 5), {"scale_factor": 2}), ((2, 3, 9, 9), {"scale_factor": 0.5})]


@pytest.mark.parametrize("shape, kw", NEAREST, ids=[f"{s}-{k}" for s, k in NEAREST])
def test_nearest_interpolation_gradient(shape, kw):
    """torch's cpu_upsample_nearest_backward: outputs in row-major order, each added to its source."""
    want, got = grads(lambda t: torch.nn.functional.interpolate(t, **kw),
                      lambda t: kiln.nn.functional.interpolate(t, **kw), sample(shape))
    np.testing.assert_array_equal(bits(got), bits(want))


@pytest.mark.parametrize("op", ["addcmul", "addcdiv"])
def test_addcmul_addcdiv_gradients(op):
    a, b, c = sample((8, 33), seed=10), sample((8, 33), seed=11), np.abs(sample((8, 33), seed=12)) + 0.5
    ts = [torch.tensor(v, requires_grad=True) for v in (a, b, c)]
    ks = [kiln.tensor(v, requires_grad=True) for v in (a, b, c)]
    g = sample((8, 33), seed=13)
    getattr(torch, op)(*ts, value=0.3).backward(torch.tensor(g))
    getattr(kiln, op)(*ks, value=0.3).backward(kiln.tensor(g))
    for t, k in zip(ts, ks):
        np.testing.assert_array_equal(bits(k.grad), bits(t.grad))


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("logits, extra", [(False, ()), (False, ("weight",)), (True, ()), (True, ("weight",)),
                                           (True, ("pos_weight",)), (True, ("pos_weight", "weight"))])
def test_binary_cross_entropy_gradients(logits, extra, reduction):
    """torch's backward functions: grad first, then the weight, then the mean's division."""
    rng = np.random.default_rng(14)
    x = rng.standard_normal((16, 32)).astype(np.float32)
    if not logits:
        x = (1 / (1 + np.exp(-x))).astype(np.float32)
    t = rng.random((16, 32)).astype(np.float32)
    given = {"weight": rng.random((16, 32)).astype(np.float32) + 0.5, "pos_weight": rng.random(32).astype(np.float32) + 0.5}
    g = rng.standard_normal((16, 32)).astype(np.float32) if reduction == "none" else np.float32(1.3)
    grads_of = []
    for lib in (torch, kiln):
        xi, ti = lib.tensor(x, requires_grad=True), lib.tensor(t, requires_grad=True)
        f = lib.nn.functional.binary_cross_entropy_with_logits if logits else lib.nn.functional.binary_cross_entropy
        f(xi, ti, reduction=reduction, **{k: lib.tensor(given[k]) for k in extra}).backward(lib.tensor(g))
        grads_of.append((xi.grad.numpy(), ti.grad.numpy()))
    np.testing.assert_array_equal(bits(grads_of[1][0]), bits(grads_of[0][0]))
    if "pos_weight" not in extra:  # (torch's target gradient there takes log_sigmoid, kiln's -softplus)
        np.testing.assert_array_equal(bits(grads_of[1][1]), bits(grads_of[0][1]))


@pytest.mark.parametrize("affine", [True, False])
def test_batch_norm_eval_input_gradient(affine):
    """model.eval() then backward to the input (adversarial examples, saliency): torch's
    (dy * invstd) * w, invstd from the running variance in double. The weight and bias gradients are
    sums in another order than torch's: close, not its bits."""
    rng = np.random.default_rng(15)
    x = rng.standard_normal((8, 6, 5, 3)).astype(np.float32)
    w, b = rng.standard_normal(6).astype(np.float32), rng.standard_normal(6).astype(np.float32)
    rm, rv = rng.standard_normal(6).astype(np.float32) * 0.1, rng.random(6).astype(np.float32) + 0.5
    g = rng.standard_normal(x.shape).astype(np.float32)
    out = []
    for lib in (torch, kiln):
        xi = lib.tensor(x, requires_grad=True)
        wi, bi = (lib.tensor(w, requires_grad=True), lib.tensor(b, requires_grad=True)) if affine else (None, None)
        y = lib.nn.functional.batch_norm(xi, lib.tensor(rm), lib.tensor(rv), wi, bi, training=False)
        y.backward(lib.tensor(g))
        out.append((y.detach().numpy(), xi.grad.numpy(), wi.grad.numpy() if affine else None,
                    bi.grad.numpy() if affine else None, type(y.grad_fn).__name__))
    (yt, gxt, gwt, gbt, nt), (yk, gxk, gwk, gbk, nk) = out
    assert nk == nt == "NativeBatchNormBackward0"
    np.testing.assert_array_equal(bits(yk), bits(yt))
    np.testing.assert_array_equal(bits(gxk), bits(gxt))
    if affine:
        np.testing.assert_allclose(gwk, gwt, rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(gbk, gbt, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("training", [True, False])
@pytest.mark.parametrize("stat", ["running_mean", "running_var"])
def test_batch_norm_refuses_running_statistics_requiring_grad(training, stat):
    messages = []
    for lib in (torch, kiln):
        stats = {"running_mean": lib.zeros(2), "running_var": lib.ones(2)}
        stats[stat].requires_grad_()
        with pytest.raises(RuntimeError) as info:
            lib.nn.functional.batch_norm(lib.ones(4, 2, 3), stats["running_mean"], stats["running_var"], training=training)
        messages.append(str(info.value))
        with lib.no_grad():  # no graph, no error
            lib.nn.functional.batch_norm(lib.ones(4, 2, 3), stats["running_mean"], stats["running_var"], training=False)
    assert messages[1] == messages[0]


PADS = [((2, 3, 6, 7), (2, 2, 1, 1), "reflect"), ((2, 3, 6, 7), (2, 2, 1, 1), "replicate"),
        ((2, 3, 6, 7), (3, -1, 0, 2), "reflect"), ((2, 3, 4, 5, 6), (1, 1, 2, 2, 1, 1), "reflect"),
        ((2, 3, 4, 5, 6), (2, 1, 1, 2, 3, 0), "replicate"), ((3, 8, 9), (3, 3), "reflect")]


@pytest.mark.parametrize("shape, pad, mode", PADS, ids=[f"{m}-{s}-{p}" for s, p, m in PADS])
def test_reflect_and_replicate_pad_gradients(shape, pad, mode):
    """torch's backward loops add each output's gradient to its source in row-major output order."""
    want, got = grads(lambda t: torch.nn.functional.pad(t, pad, mode=mode),
                      lambda t: kiln.nn.functional.pad(t, pad, mode=mode), sample(shape))
    np.testing.assert_array_equal(bits(got), bits(want))
