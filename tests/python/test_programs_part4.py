"""Still more public PyTorch programs (tests/python/programs/), run as written under torch 1.13 and with
their torch imports pointed at kiln (programs/swap.py), with the same seeds and arguments: both start
from the same weights (checked bit for bit) and every step's loss must agree with torch's.

- annotated_transformer: Harvard NLP's "The Annotated Transformer" (copy task): clones() by
  copy.deepcopy, a hand-written LayerNorm with x.std(-1, keepdim=True), masked_fill(mask == 0, -1e9),
  subsequent_mask via torch.triu(...).type(torch.uint8) == 0, register_buffer'd sin/cos table,
  LabelSmoothing (KLDivLoss(reduction="sum"), scatter_, torch.nonzero, index_fill_), the Noam rate
  through LambdaLR, Adam(betas=(0.9, 0.98), eps=1e-9), a DummyOptimizer subclassing Optimizer without
  its __init__, greedy_decode
- neural_style_tutorial: PyTorch tutorial "Neural Transfer Using PyTorch": a VGG-19 features stack
  (torchvision's make_layers) deep-copied and rebuilt with add_module, ContentLoss/StyleLoss modules,
  gram matrices, model[:(i + 1)], optim.LBFGS on the input image with a closure that clamps
  input_img.data in place
- yunjey_language_model: yunjey/pytorch-tutorial 02-intermediate/language_model: torch.LongTensor(n)
  filled one index at a time, LSTM LM with detached states (truncated BPTT), clip_grad_norm_,
  torch.multinomial sampling with input.fill_
- image_captioning: yunjey/pytorch-tutorial 03-advanced/image_captioning: ResNet children()[:-1]
  under no_grad, BatchNorm1d(momentum=0.01), collate_fn sorting captions, pack_padded_sequence for the
  LSTM input and for the targets ([0]), Adam over a hand-built parameter list, greedy sample()
- makemore (parts 3, 4, 5): Karpathy's "Neural Networks: Zero to Hero": torch.Generator().manual_seed(
  2147483647) for randn/randint/multinomial, manual batch norm with running stats under no_grad,
  retain_grad on intermediates, p.data += -lr * p.grad, torch.histogram(t, density=True), the
  hand-written backward pass ("backprop ninja": F.one_hot, zeros_like, counts_sum**-1, dC[ix] += ...,
  cmp with torch.all/allclose), sum(1, keepdims=True), the WaveNet's FlattenConsecutive and
  BatchNorm1d over dim=(0, 1)
- yunjey_resnet_gan: yunjey/pytorch-tutorial's deep_residual_network (BatchNorm2d, `out += residual` after
  an in-place ReLU, AvgPool2d, update_lr through param_groups, the Pad/RandomHorizontalFlip/RandomCrop
  draws torchvision makes with torch.rand/torch.randint inside the DataLoader) and generative_adversarial_network
  (BCELoss on ones/zeros labels, reset_grad over two Adams, LeakyReLU/Sigmoid/Tanh, denorm's clamp)
- transfer_learning_tutorial: "Transfer Learning for Computer Vision" (CUB version): torchvision's ResNet-18
  frozen with requires_grad = False and a new fc, fine-tuned with two SGD parameter groups chosen by name,
  and Co-Tuning (`from torch.functional import F`, a head returning a tuple, a loss module overriding
  to(), old_prob[new_labels == i] means stacked); torch.set_grad_enabled(phase == 'train'), StepLR,
  running_corrects.double(), copy.deepcopy(model.state_dict()) of the best epoch
- fast_neural_style: pytorch/examples fast_neural_style: TransformerNet (ReflectionPad2d,
  InstanceNorm2d(affine=True), nn.Upsample(mode='nearest')), frozen Vgg16 slices returning a
  namedtuple, bmm gram matrices, normalize_batch's new_tensor and in-place div_ on the output,
  style.repeat, checkpoints with eval().cpu() / to(device).train(), stylize's load_state_dict

Gaps these programs found in kiln, fixed (the regression tests below check each against torch):
torch.dot, torch.mv and matmul's vector cases went through gemm (kiln's mm) where torch calls BLAS's
dot and gemv, whose sums run in other orders (LBFGS's direction, the neural style transfer, drifted
from the fourth function evaluation); add_/sub_ with a 0-dim tensor alpha (LBFGS's alpha=-al[i])
rounded twice where torch's AVX2 kernel fuses the multiply-add; keepdims= (NumPy's name, which torch's
parser takes for keepdim) was refused; torch.histogram's bins had no default (torch: 100); batch norm's
running_mean/running_var updates rounded differently from torch's (momentum in the parameters' dtype,
the unbiased variance var_sum / (n - 1) held in double); there was no kiln.functional (torch.functional,
whose F programs import); sigmoid's backward multiplied grad * (y * (1 - y)) where torch's kernel
computes (grad * (1 - y)) * y (a third of the elements an ulp off: GANs, gates written by hand).
Left as they were: kiln's own float32 tanh (an ulp from SLEEF's now and then) and tanh's backward
(torch's 1 - y*y is one FMA in Debian's AVX2 build), BatchNorm's backward and its batch statistics for
2-D (N, C) inputs (torch sums those rows in float per thread), oneDNN's convolutions.
"""
import numpy as np
import pytest

from programs.compare import check_same_start, check_steps, run_both, to_np


@pytest.mark.parametrize("smoothing", ["0.0", "0.1"])
def test_annotated_transformer(smoothing):
    rt, rk = run_both("annotated_transformer", ["--d-model", "32", "--d-ff", "64", "--heads", "4",
                                                "--batch-size", "16", "--nbatches", "6", "--epochs", "4",
                                                "--warmup", "10", "--smoothing", smoothing])
    check_same_start(rt, rk)  # xavier_uniform_ on every matrix of the deep-copied layers
    check_steps(rt, rk, 24, rtol=1e-6)
    np.testing.assert_allclose(rk["eval_losses"], rt["eval_losses"], rtol=1e-6)
    assert rk["lrs"] == rt["lrs"]  # LambdaLR's Noam rate
    assert rk["decoded"] == rt["decoded"] and rk["untrained"] == rt["untrained"]  # greedy decoding
    np.testing.assert_array_equal(to_np(rk["true_dist"]), to_np(rt["true_dist"]))  # scatter_ + index_fill_
    # KLDivLoss of log(0) inputs: NaN in both
    np.testing.assert_array_equal(np.array(rk["penalization"]), np.array(rt["penalization"]))
    np.testing.assert_array_equal(to_np(rk["schedule"]), to_np(rt["schedule"]))


def test_neural_style_tutorial_lbfgs():
    rt, rk = run_both("neural_style_tutorial", ["--imsize", "32", "--width-div", "4", "--num-steps", "40"])
    check_same_start(rt, rk)  # kaiming_normal_(fan_out) on the VGG-19 convolutions
    assert rk["model_names"] == rt["model_names"]  # rebuilt with add_module, trimmed with model[:i + 1]
    # every closure evaluation of LBFGS (several per step): its direction is torch's (BLAS dot,
    # fused alpha) and the line-search-free steps follow it
    check_steps(rt, rk, 40, rtol=1e-6)
    np.testing.assert_allclose(to_np(rk["output"]), to_np(rt["output"]), rtol=1e-5, atol=1e-6)


def test_yunjey_language_model():
    rt, rk = run_both("yunjey_language_model", ["--embed-size", "32", "--hidden-size", "64", "--num-epochs", "3",
                                                "--num-samples", "100", "--n-lines", "600"])
    check_same_start(rt, rk)
    np.testing.assert_array_equal(to_np(rk["ids"]), to_np(rt["ids"]))  # torch.LongTensor(n) filled in place
    check_steps(rt, rk, 18, rtol=1e-6, learns=False)
    assert np.mean(rk["step_losses"][-3:]) < np.mean(rk["step_losses"][:3])
    np.testing.assert_allclose(rk["grad_norms"], rt["grad_norms"], rtol=1e-6)  # clip_grad_norm_'s total norm
    assert rk["sampled"] == rt["sampled"] and rk["text"] == rt["text"]  # multinomial on output.exp()
    assert rk["reloaded_keys"] == rt["reloaded_keys"]


def test_image_captioning():
    rt, rk = run_both("image_captioning", ["--crop_size", "16", "--n_images", "96", "--embed_size", "32",
                                           "--hidden_size", "32", "--num_epochs", "3", "--batch_size", "16"])
    check_same_start(rt, rk)
    assert rk["vocab"] == rt["vocab"]
    assert rk["batch_sizes"] == rt["batch_sizes"]  # pack_padded_sequence of the sorted captions
    # the encoder's convolutions are an ulp from oneDNN's here and there
    check_steps(rt, rk, 18, rtol=1e-6)
    assert rk["sentences"] == rt["sentences"]
    # The Linear before BatchNorm1d has a bias whose true gradient is 0 (the batch norm takes the mean
    # out): its gradients are rounding noise that Adam turns into lr-sized steps of either sign, so the
    # bias (and the running mean that sees it) wanders off torch's by ~lr without touching the loss.
    np.testing.assert_allclose(to_np(rk["running_mean"]), to_np(rt["running_mean"]), atol=2e-4)


@pytest.mark.parametrize("part", ["3", "4", "5"])
def test_makemore_zero_to_hero(part):
    rt, rk = run_both("makemore", ["--part", part, "--steps", "100", "--n-hidden", "64", "--n-words", "1000"])
    check_same_start(rt, rk)  # torch.Generator().manual_seed(2147483647) draws
    # kiln's float32 tanh (its own vector code) is within an ulp of torch's (SLEEF) but not always equal
    check_steps(rt, rk, 100, rtol=1e-6)
    np.testing.assert_allclose(rk["lossi"], rt["lossi"], rtol=1e-6)
    if part == "3":
        # update-to-data ratios: the batch norms' beta starts at 0, so its first ratio is 1 (log10: ~1e-7)
        np.testing.assert_allclose(np.array(rk["ud"]), np.array(rt["ud"]), rtol=1e-5, atol=1e-5)
        assert len(rk["stats"]) == len(rt["stats"])
        for sk, st in zip(rk["stats"], rt["stats"]):  # histograms (density=True) of activations and grads
            # (tanh's ulps move the gradients' ranges, so the bin edges, a little; a gradient's mean is
            # ~0, so noise: compared against its std)
            if isinstance(sk[1], list):  # (bin edges, densities): an element may land one bin over
                (ek, hk), (et, ht) = sk, st
                np.testing.assert_allclose(ek, et, rtol=1e-4, atol=1e-5 * np.abs(et).max())
                width = et[1] - et[0]
                np.testing.assert_allclose(np.cumsum(hk) * width, np.cumsum(ht) * width, atol=0.01)
            else:
                a, b = np.hstack(sk).astype(float), np.hstack(st).astype(float)
                np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5 * np.abs(b).max())
        for (mk, vk), (mt, vt) in zip(rk["running"], rt["running"]):
            np.testing.assert_allclose(to_np(mk), to_np(mt), rtol=1e-5, atol=1e-6)
            np.testing.assert_allclose(to_np(vk), to_np(vt), rtol=1e-5)
    if part == "4":
        assert rk["first_loss"] == rt["first_loss"] and rk["loss_fast"] == rt["loss_fast"]
        names = [c[0] for c in rt["compared"]]
        assert [c[0] for c in rk["compared"]] == names and all(c[2] for c in rk["compared"])  # allclose
        # exact up to the tanh: torch's tanh_backward is (1 - y*y) contracted into one FMA by GCC in
        # Debian's AVX2 build, kiln's rounds twice as the notebook's (1.0 - h**2) * dh does
        for ck, ct in zip(rk["compared"][:names.index("hpreact")], rt["compared"]):
            assert ck == ct
        np.testing.assert_allclose([c[3] for c in rk["compared"]], [c[3] for c in rt["compared"]], atol=2e-8)
    if part in ("3", "5"):
        np.testing.assert_allclose(rk["split_losses"], rt["split_losses"], rtol=1e-6)
        assert rk["samples"] == rt["samples"]  # torch.multinomial with (or without) a generator
    if part == "5":
        np.testing.assert_allclose(to_np(rk["smoothed"]), to_np(rt["smoothed"]), rtol=1e-6)
        assert rk["shapes"] == rt["shapes"]


def test_fast_neural_style():
    rt, rk = run_both("fast_neural_style", ["--epochs", "2", "--batch-size", "2", "--n-images", "8",
                                            "--image-size", "32", "--vgg-width-div", "8", "--log-interval", "2",
                                            "--checkpoint-interval", "3", "--lr", "1e-4"])
    check_same_start(rt, rk)
    assert rk["checkpoints"] == rt["checkpoints"]
    # Every convolution before an InstanceNorm has a bias whose gradient is rounding noise (the norm
    # removes it), which Adam turns into lr-sized steps; with convolutions an ulp from oneDNN's the
    # two runs drift apart by ~1e-5 over 8 steps (lr 1e-4; at the default 1e-3, ~1e-3).
    check_steps(rt, rk, 8, rtol=5e-5)
    np.testing.assert_allclose(rk["step_losses"][:2], rt["step_losses"][:2], rtol=1e-6)
    np.testing.assert_allclose(np.array(rk["aggregates"]), np.array(rt["aggregates"]), rtol=5e-5)
    assert np.abs(rk["image"].astype(int) - rt["image"].astype(int)).max() <= 1  # save_image's uint8


def test_yunjey_gan():
    rt, rk = run_both("yunjey_resnet_gan", ["--program", "gan", "--num-epochs", "3", "--batch-size", "16",
                                            "--n-train", "128", "--latent-size", "16", "--hidden-size", "64",
                                            "--image-side", "12"])
    check_same_start(rt, rk)
    check_steps(rt, rk, 48, rtol=1e-6, learns=False)  # d_loss, g_loss of every step
    np.testing.assert_allclose(np.array(rk["scores"]), np.array(rt["scores"]), rtol=1e-6)
    for a, b in zip(rk["samples"], rt["samples"]):  # denorm(fake_images): tanh is within an ulp of torch's
        np.testing.assert_allclose(to_np(a), to_np(b), rtol=1e-5, atol=1e-6)


def test_yunjey_deep_residual_network():
    rt, rk = run_both("yunjey_resnet_gan", ["--program", "resnet", "--num-epochs", "3", "--decay-every", "2",
                                            "--batch-size", "16", "--n-train", "64", "--n-test", "16",
                                            "--learning-rate", "1e-4"])
    check_same_start(rt, rk)
    assert rk["lrs"] == rt["lrs"]  # update_lr's param_group['lr'] = lr
    # Adam's first steps are lr * sign(grad): a weight whose gradient is at rounding level (batch norm
    # makes a convolution's output scale-free) steps +lr in one run and -lr in the other, and the
    # convolutions and batch norm backward are an ulp from torch's; so ~1e-5 at the second step, 1e-4
    # by the twelfth (at lr 1e-3: 1e-3).
    check_steps(rt, rk, 12, rtol=2e-4, learns=False)
    assert rk["correct"] == rt["correct"]
    np.testing.assert_allclose(to_np(rk["running_var"]), to_np(rt["running_var"]), rtol=1e-4)


@pytest.mark.parametrize("scenario", ["conv", "ft", "ct"])
def test_transfer_learning_tutorial(scenario):
    epochs, step = ("3", "2") if scenario == "conv" else ("2", "1")
    rt, rk = run_both("transfer_learning_tutorial", ["--scenario", scenario, "--num-epochs", epochs,
                                                     "--step-size", step, "--batch-size", "16", "--num-workers", "0",
                                                     "--n-train", "48", "--n-val", "16", "--image-size", "32"])
    check_same_start(rt, rk)  # kaiming_normal_(fan_out) and the BatchNorm constants
    # Frozen: only fc learns, on features an ulp or so from torch's (oneDNN's convolutions). Fine-tuned:
    # every batch norm's backward is an ulp from torch's too (its sums run in another order), which SGD
    # with momentum carries along, and Co-Tuning's soft labels weigh 1000 old logits into the loss.
    rtol = {"conv": 2e-6, "ft": 1e-2, "ct": 2e-4}[scenario]  # ft 1e-4: AVX2 CPUs (see test_programs_tutorials)
    check_steps(rt, rk, 6, rtol=rtol, learns=False)
    np.testing.assert_allclose(rk["step_losses"][:2], rt["step_losses"][:2], rtol=2e-6)
    assert [e[0] for e in rk["epochs"]] == [e[0] for e in rt["epochs"]]
    # (on AVX2 CPUs, where ft drifts 1e-2, an image may flip: accuracies within one of 24)
    np.testing.assert_allclose([e[1:] for e in rk["epochs"]], [e[1:] for e in rt["epochs"]], rtol=max(rtol, 1e-5),
                               atol=0.05 if scenario == "ft" else 0)
    if scenario != "ct":
        assert rk["shown"] == rt["shown"] and rk["frozen"] == rt["frozen"]
    else:  # CoTuningLoss.fit's relationship, from the eval-mode logits of the untouched network
        np.testing.assert_allclose(to_np(rk["frozen"][0]), to_np(rt["frozen"][0]), rtol=1e-5)
        assert rk["frozen"][1] == rt["frozen"][1] == "Linear"


# ----------------------------------------------------------------------------- the kiln fixes
def test_dot_mv_and_matmul_vectors_are_torchs():
    """torch.dot is BLAS's dot and torch.mv / matrix @ vector BLAS's gemv ('n' for a column-major
    matrix, 't' for a row-major one, a contiguous copy otherwise), whose sums run in other orders than
    gemm's: kiln calls the same routines, so the values and gradients are torch's bits."""
    import kiln
    import torch
    rng = np.random.default_rng(0)
    for dt in (np.float32, np.float64):
        for n in (1, 5, 50, 1000, 5000):
            a, b = rng.standard_normal(2 * n).astype(dt), rng.standard_normal(n).astype(dt)
            outs = []
            for m in (torch, kiln):
                x, y = m.tensor(a[::2], requires_grad=True), m.tensor(b, requires_grad=True)  # x strided
                d = m.dot(x, y)
                (d * 3 + x @ y).backward()
                outs.append([d.detach().numpy(), x.grad.numpy(), y.grad.numpy()])
            for u, v in zip(*outs):
                np.testing.assert_array_equal(v, u)
        for r, c in [(1, 7), (7, 1), (5, 7), (50, 50), (128, 300), (3, 1000)]:
            A, v = rng.standard_normal((r, c)).astype(dt), rng.standard_normal(c).astype(dt)
            for layout in ("row", "col", "strided"):
                outs = []
                for m in (torch, kiln):
                    if layout == "row":
                        M = m.tensor(A)
                    elif layout == "col":
                        M = m.tensor(A.T.copy()).t()
                    else:
                        M = m.tensor(np.repeat(A, 2, axis=1))[:, ::2]
                    M.requires_grad_()
                    V = m.tensor(v, requires_grad=True)
                    y = m.mv(M, V)
                    z = M @ V
                    (y * m.arange(r, dtype=y.dtype) + z * z).sum().backward()
                    outs.append([y.detach().numpy(), z.detach().numpy(), M.grad.numpy(), V.grad.numpy()])
                for u, w in zip(*outs):
                    np.testing.assert_array_equal(w, u, err_msg=f"{dt.__name__} {r}x{c} {layout}")


def test_add_with_zero_dim_tensor_alpha_fuses_as_torch():
    """A 0-dim tensor alpha is a Scalar to torch, so add_/sub_/add with one round as torch's fused
    kernel does (LBFGS's q.add_(old_dirs[i], alpha=-al[i]))."""
    import kiln
    import torch
    rng = np.random.default_rng(1)
    for n in (5, 16, 50, 1000):
        a, b = rng.standard_normal(n).astype(np.float32), rng.standard_normal(n).astype(np.float32)
        outs = []
        for m in (torch, kiln):
            x, y = m.tensor(a), m.tensor(b)
            al = x.dot(y) * 0.37
            outs.append([x.clone().add_(y, alpha=-al).numpy(), x.clone().sub_(y, alpha=al).numpy(),
                         x.add(y, alpha=al).numpy(), x.sub(y, alpha=m.tensor(3)).numpy()])
        for u, v in zip(*outs):
            np.testing.assert_array_equal(v, u)


def test_lbfgs_follows_torch():
    """LBFGS on a function evaluated in NumPy (the same values and gradients for both): every
    evaluation point is torch's, with and without the strong Wolfe line search."""
    import kiln
    import torch
    rng = np.random.default_rng(0)
    A = rng.standard_normal((50, 50)).astype(np.float32)
    x0 = rng.standard_normal(50).astype(np.float32)

    def f(xn):
        xd = xn.astype(np.float64)
        z = np.tanh(A.astype(np.float64) @ xd)
        g = A.T.astype(np.float64) @ (2 * z * (1 - z ** 2)) + 0.04 * xd ** 3
        return np.float32((z ** 2).sum() + 0.01 * (xd ** 4).sum()), g.astype(np.float32)

    def run(m, line_search_fn, history_size):
        x = m.tensor(x0.copy()).requires_grad_()
        opt = m.optim.LBFGS([x], lr=1, line_search_fn=line_search_fn, history_size=history_size)
        seen = []

        def closure():
            opt.zero_grad()
            loss, g = f(x.detach().numpy())
            x.grad = m.tensor(g)
            seen.append(x.detach().numpy().copy())
            return m.tensor(loss)
        for _ in range(3):
            opt.step(closure)
        return np.array(seen)
    for lsf in (None, "strong_wolfe"):
        for hist in (100, 3):
            np.testing.assert_array_equal(run(kiln, lsf, hist), run(torch, lsf, hist))


def test_keepdims_and_histogram_defaults():
    """keepdims= is NumPy's name for keepdim, which torch's parser takes (as axis= for dim);
    torch.histogram's bins default to 100."""
    import kiln
    import torch
    x = np.random.default_rng(2).standard_normal((3, 4)).astype(np.float32)
    for name in ("sum", "mean", "amax", "amin", "std", "var", "logsumexp", "prod", "nansum", "argmax"):
        a = getattr(torch.tensor(x), name)(1, keepdims=True)
        b = getattr(kiln.tensor(x), name)(1, keepdims=True)
        assert list(b.shape) == list(a.shape) == [3, 1], name
        np.testing.assert_allclose(b.numpy(), a.numpy(), rtol=1e-6, err_msg=name)
    assert list(kiln.sum(kiln.tensor(x), 1, keepdims=True).shape) == [3, 1]
    assert list(kiln.tensor(x).max(1, keepdims=True).values.shape) == [3, 1]
    for kw in ({}, {"density": True}):
        ht, et = torch.histogram(torch.tensor(x), **kw)
        hk, ek = kiln.histogram(kiln.tensor(x), **kw)
        assert hk.shape[0] == 100
        np.testing.assert_allclose(hk.numpy(), ht.numpy(), rtol=1e-6)
        np.testing.assert_allclose(ek.numpy(), et.numpy(), rtol=1e-6)


def test_batch_norm_running_stats_round_as_torch():
    """BatchNorm's running_mean/running_var after a few training steps are torch's bits (float32 input
    with spatial dims: the batch statistics are torch's too; momentum in float, the unbiased variance
    var_sum / (n - 1) held in double as batch_norm_cpu_update_stats_template does)."""
    import kiln
    import torch
    rng = np.random.default_rng(0)
    for shape in [(8, 16, 8, 8), (4, 3, 5, 5), (1, 3, 2, 2), (2, 5, 3)]:
        x = (rng.standard_normal(shape) * 2 + 1).astype(np.float32)
        for momentum in (0.1, 0.01, 0.3, 0.37):
            stats = []
            for m in (torch, kiln):
                bn = (m.nn.BatchNorm2d if len(shape) == 4 else m.nn.BatchNorm1d)(shape[1], momentum=momentum)
                for i in range(4):
                    bn(m.tensor(x * (i + 1)))
                stats.append((bn.running_mean.numpy(), bn.running_var.numpy()))
            for a, b in zip(*stats):
                np.testing.assert_array_equal(b, a, err_msg=f"{shape} {momentum}")


def test_torch_functional_module():
    """torch.functional (the ops torch writes in Python) exists, and has its F (torch.nn.functional)."""
    import kiln
    import torch
    from kiln.functional import F
    assert F is kiln.nn.functional
    import kiln.functional as kf
    import torch.functional as tf
    assert set(kf.__all__) <= set(tf.__all__)
    for name in kf.__all__:
        assert getattr(kf, name) is getattr(kiln, name), name
    assert kiln.functional is kf and hasattr(torch, "functional")


def test_sigmoid_backward_is_torchs():
    """sigmoid's gradient is torch's sigmoid_backward, (grad * (1 - y)) * y, bit for bit (contiguous
    float32 and float64, where the forward values are torch's too)."""
    import kiln
    import torch
    rng = np.random.default_rng(3)
    for dt in (np.float32, np.float64):
        for n in (1, 7, 64, 4099):
            x = (rng.standard_normal(n) * 3).astype(dt)
            g = rng.standard_normal(n).astype(dt)
            grads = []
            for m in (torch, kiln):
                y = m.tensor(x)
                ys = y.sigmoid()
                X = m.tensor(x, requires_grad=True)
                X.sigmoid().backward(m.tensor(g))
                # from the same forward values: torch's y against kiln's formula
                grads.append((ys.numpy(), X.grad.numpy()))
            (yt, gt), (yk, gk) = grads
            same = yt == yk
            np.testing.assert_array_equal(gk[same], gt[same], err_msg=f"{dt.__name__} {n}")
            one = dt(1)
            np.testing.assert_array_equal(gk, (g * (one - yk)) * yk)
