"""An eighth batch of public PyTorch programs (tests/python/programs/), run as written under torch 1.13 and
with their torch imports pointed at kiln (programs/swap.py), with the same seeds and arguments: both start from
the same weights (checked bit for bit) and every step's loss must agree with torch's.

- mae_pretrain: facebookresearch/mae (NumPy sin-cos position embeddings copied into frozen Parameters, random
  masking by argsort / gather, einsum patchify, norm_pix_loss, AdamW groups, per-iteration cosine lr, accum_iter)
- moco_v2: facebookresearch/moco (key encoder by .data copies and momentum, a normalized queue buffer with
  slice-assigned keys.T, shuffle-BN by randperm / argsort, einsum logits, topk accuracy)
- ddpm: the DDPM ports (linear / cosine betas, cumprod, F.pad'd alphas_cumprod_prev, gather'd extract, sinusoidal
  time embeddings, a GroupNorm / SiLU U-Net with linear attention, p_sample_loop, an EMA by lerp_)
- llama_lm: meta-llama / llama2.c (RMSNorm by rsqrt, rotary embeddings in both the interleaved and the rotate_half
  forms, grouped-query repeat_kv, triu'd -inf mask, SwiGLU, tied embeddings, AdamW groups, generate with top-k)
- moe_layer: davidmrau/mixture-of-experts (noisy top-k gating, Normal.cdf load, SparseDispatcher's nonzero / sort /
  split / index_add) and labml's switch router (capacity, dropped tokens, route_prob_max scaling)
- set_transformer: juho-lee/set_transformer (MAB heads by split / cat along the batch, ISAB inducing points, PMA,
  DeepSet) on max-regression and a mixture-of-Gaussians likelihood
- conformer: sooftware/conformer (Conv2dSubampling, relative-position attention with the zero-pad shift,
  depthwise Conv1d + GLU + BatchNorm1d, macaron half-step FFNs) trained with CTC
- cyclegan: junyanz/pytorch-CycleGAN-and-pix2pix (ResNet / U-Net generators, ReflectionPad2d, InstanceNorm2d
  partials, PatchGAN, GANLoss buffers, ImagePool, itertools.chain'd Adam, linear-decay LambdaLR)
- transe_kge: mklimasz/TransE-PyTorch and OpenKE-style TransH / DistMult (in-place L1 / L2 row normalisation of
  embeddings, MarginRankingLoss(reduction='none'), corrupted triples, hits@k and MRR by ranking)
- gp_regression: exact GP regression (RBF / Matern kernels, softplus / parametrize'd hyper-parameters, cholesky,
  cholesky_solve, logdet / slogdet, solve_triangular, cholesky_inverse, Adam then strong-Wolfe LBFGS)
- gumbel_vae: YongfeiYan/Gumbel_Softmax_VAE (hand-written and F.gumbel_softmax straight-through samples,
  RelaxedOneHotCategorical, size_average=False BCE, numpy temperature annealing, OneHotCategorical)
- dino: facebookresearch/dino (weight_norm'd last layer with a frozen weight_g, DropPath, multi-crop wrapper by
  unique_consecutive / cumsum, bicubic position-embedding interpolation, centering buffer, per-parameter clipping)
- checkpoint_resume: torch.save / torch.load of a checkpoint with optimizer, scheduler and RNG states, a resumed
  run that must continue exactly like the uninterrupted one, BatchSampler over a bucketing Sampler, collate_fn
- sparsemax_entmax: deep-spin/entmax (sort / cumsum thresholds in autograd.Functions, bisection entmax, the
  Fenchel-Young losses with ignore_index) as attention normalisers and losses
- td3_ddpg: sfujim/TD3 (target policy smoothing, twin critics, delayed updates, .data.copy_ soft updates,
  torch.FloatTensor replay batches, save / load of actor / critic / optimizer state_dicts) and DDPG
- made_maf: karpathy/pytorch-made (uint8 masks copied into float buffers, order-agnostic mask resampling) and a
  MAF normalizing flow with a MultivariateNormal prior and sequential inverse sampling
- siren: vsitzmann/siren (sine layers with their uniform init, input gradients / laplacians by autograd.grad with
  create_graph, Poisson fitting on gradients, retain_grad'd activations)
- deeplab_aspp: VainF/DeepLabV3Plus-Pytorch (ASPP with dilations and image pooling, bilinear interpolate,
  CrossEntropyLoss(ignore_index=255) over (N, C, H, W), a user-defined PolyLR, bincount confusion matrices)
- pruning_tutorial: the PyTorch pruning tutorial (random / l1 / ln_structured pruning, PruningContainer history,
  prune.remove, global_unstructured, a custom BasePruningMethod) with fine-tuning through weight_orig
- pointnet: fxia22/pointnet.pytorch (T-Nets with identities added by Variable(from_numpy(...)).repeat, Conv1d
  point MLPs, max pooling over points, bmm'd transforms, the Frobenius-norm regularizer over dim=(1, 2))
- jem_sgld: wgrathwohl/JEM (logsumexp energies, a uniform_ replay buffer, SGLD by autograd.grad on Variable inputs
  and x_k.data +=, p(x), p(y|x) and p(x|y) losses, warmup through param_groups, clip_grad_norm_)

Tolerances: as in test_programs_part7.py, the losses agree to a few float32 ulps (rtol 1e-5) where the programs
use matmuls, elementwise ops and reductions kiln computes as torch does; where kiln's own routines round
differently (norms with a dim, LAPACK's Cholesky) or Adam amplifies mathematically-zero gradients, the first
steps are compared tightly and the rest within a looser bound (check_drift), each place saying why.
"""
import numpy as np
import pytest

from programs.compare import check_same_start, check_steps, run_both, to_np


def close(a, b, rtol, atol=0.0, err_msg=""):
    np.testing.assert_allclose(as_np(a), as_np(b), rtol=rtol, atol=atol, err_msg=err_msg)


def as_np(x):
    return np.array([to_np(v) for v in x]) if isinstance(x, (list, tuple)) else to_np(x)


def check_drift(rt, rk, n_min, n_tight, rtol_tight, rtol, learns=True, atol=0.0):
    """The first n_tight steps within rtol_tight of torch's, the rest within rtol (see the module docstring)."""
    lt, lk = np.array(rt["step_losses"]), np.array(rk["step_losses"])
    assert len(lk) == len(lt) and len(lt) >= n_min
    np.testing.assert_allclose(lk[:n_tight], lt[:n_tight], rtol=rtol_tight)
    np.testing.assert_allclose(lk, lt, rtol=rtol, atol=atol)
    if learns:
        assert lk[-3:].mean() < lk[:3].mean()


def check_states(st, sk, rtol, atol):
    assert list(sk) == list(st)
    for name, v in st.items():
        close(sk[name], v, rtol, atol, err_msg=name)


@pytest.mark.parametrize("extra", [[], ["--norm_pix_loss"]])
def test_mae_pretrain(extra):
    rt, rk = run_both("mae_pretrain", extra)
    check_same_start(rt, rk)
    check_steps(rt, rk, 16, rtol=1e-5)
    assert rk["lrs"] == rt["lrs"]
    close(rk["mask"], rt["mask"], 0)
    close(rk["masked"], rt["masked"], 0)
    close(rk["pos_embed"], rt["pos_embed"], 0)
    close(rk["recon"], rt["recon"], 1e-5, 1e-6)


@pytest.mark.parametrize("extra", [[], ["--mlp", "--cos"]])
def test_moco_v2(extra):
    rt, rk = run_both("moco_v2", extra)
    # the queue starts as F.normalize(randn, dim=0): kiln's 2-norm over a dim rounds an ulp from torch's on a
    # few columns (test_program_gaps8.py, test_norm_with_dim_is_within_a_few_ulps)
    check_same_start(rt, rk, skip=("queue",))
    close(rk["initial_state"]["queue"], rt["initial_state"]["queue"], 1e-6, 1e-7)
    check_steps(rt, rk, 12, rtol=1e-5, learns=False)
    assert rk["top1"] == rt["top1"] and rk["top5"] == rt["top5"] and rk["ptrs"] == rt["ptrs"]
    close(rk["queue"], rt["queue"], 1e-5, 1e-6)
    check_states(rt["key_fc"], rk["key_fc"], 1e-5, 1e-7)


@pytest.mark.parametrize("extra", [[], ["--loss_type", "l2", "--schedule", "cosine"]])
def test_ddpm(extra):
    rt, rk = run_both("ddpm", extra)
    check_same_start(rt, rk)
    check_steps(rt, rk, 16, rtol=1e-5)
    # the EMA follows Adam's steps, which turn ulp-level gradient differences into ~1e-6 moves on a few weights
    check_states(rt["ema"], rk["ema"], 1e-5, 1e-5)
    # 50 denoising steps, each dividing by sqrt(1 - alphas_cumprod) (~0.01 at t=0 for the cosine schedule)
    close(rk["sample_mid"], rt["sample_mid"], 1e-3, 1e-3)
    close(rk["samples"], rt["samples"], 1e-3, 2e-3)


@pytest.mark.parametrize("extra", [[], ["--rope", "half", "--n_kv_heads", "4"]])
def test_llama_lm(extra):
    rt, rk = run_both("llama_lm", extra)
    check_same_start(rt, rk)
    check_steps(rt, rk, 24, rtol=1e-5)
    close(rk["evals"], rt["evals"], 1e-5)
    close(rk["norms"], rt["norms"], 1e-5)
    assert rk["counts"] == rt["counts"] and rk["buffers"] == rt["buffers"]
    close(rk["sample"], rt["sample"], 0)
    close(rk["greedy"], rt["greedy"], 0)


@pytest.mark.parametrize("extra", [[], ["--no-noise", "--k", "3"], ["--router", "switch"]])
def test_moe_layer(extra):
    rt, rk = run_both("moe_layer", extra)
    check_same_start(rt, rk)
    check_steps(rt, rk, 20, rtol=1e-5)
    close(rk["aux"], rt["aux"], 1e-5, 1e-8)
    assert rk["loads"] == rt["loads"]
    if "eval" in rt:
        close(rk["eval"], rt["eval"], 1e-5, 1e-6)
        assert rk["acc"] == rt["acc"]


@pytest.mark.parametrize("extra", [[], ["--model", "deepset"], ["--ln", "--sab"], ["--task", "mog", "--ln"]])
def test_set_transformer(extra):
    rt, rk = run_both("set_transformer", extra)
    check_same_start(rt, rk)
    check_steps(rt, rk, 20, rtol=1e-5, learns="deepset" not in extra)  # the DeepSet needs more than 20 steps
    # 20 Adam steps of the MoG model leave ~1e-7 relative differences in its weights; its outputs are
    # log-stddevs and means of order 1-10
    close(rk["out"], rt["out"], 1e-3, 1e-2)
    close(rk["assign"], rt["assign"], 0)


def test_conformer():
    rt, rk = run_both("conformer", [])
    check_same_start(rt, rk)
    check_steps(rt, rk, 12, rtol=1e-5)
    close(rk["lrs"], rt["lrs"], 1e-12)
    close(rk["eval_out"], rt["eval_out"], 1e-5, 1e-5)
    assert rk["decoded"] == rt["decoded"] and rk["n_params"] == rt["n_params"]
    close(rk["out_lengths"], rt["out_lengths"], 0)


@pytest.mark.parametrize("extra", [[], ["--norm", "batch", "--gan_mode", "vanilla"]])
def test_cyclegan(extra):
    rt, rk = run_both("cyclegan", extra)
    check_same_start(rt, rk)
    # the convolutions before each InstanceNorm2d / BatchNorm2d keep their biases (use_bias), whose gradients
    # are mathematically zero and come out as rounding noise of either sign in torch and kiln; Adam turns that
    # noise into lr-sized steps, so after ~8 steps the generator losses drift by up to ~1e-3 of themselves
    check_drift(rt, rk, 16, 8, 1e-5, 5e-3, learns=False)
    close(rk["d_losses"], rt["d_losses"], 5e-3)
    close(rk["out"], rt["out"], 0, 5e-2)
    assert rk["lr"] == rt["lr"]


@pytest.mark.parametrize("extra", [["--model", "pix2pix", "--norm", "batch", "--gan_mode", "vanilla"],
                                   ["--model", "pix2pix"]])
def test_pix2pix(extra):
    rt, rk = run_both("cyclegan", extra)
    check_same_start(rt, rk)
    check_steps(rt, rk, 16, rtol=1e-5)
    close(rk["d_losses"], rt["d_losses"], 1e-5)
    close(rk["out"], rt["out"], 1e-5, 1e-6)


@pytest.mark.parametrize("extra", [[], ["--norm", "2"], ["--model", "transh"], ["--model", "distmult"]])
def test_transe_kge(extra):
    rt, rk = run_both("transe_kge", extra)
    # the relation rows are divided by their L1 norms: kiln sums |x| over the dim in its own order, an ulp
    # from torch's sequential float sum on some rows (test_program_gaps8.py)
    check_same_start(rt, rk, skip=("relations_emb.weight",))
    if "relations_emb.weight" in rt["initial_state"]:
        close(rk["initial_state"]["relations_emb.weight"], rt["initial_state"]["relations_emb.weight"], 1e-6)
    check_steps(rt, rk, 20, rtol=1e-5, learns=False)
    assert rk["hits"] == rt["hits"]
    close(rk["mrr"], rt["mrr"], 1e-6)
    close(rk["predictions"], rt["predictions"], 1e-5, 1e-5)


@pytest.mark.parametrize("extra", [[], ["--kernel", "matern", "--logdet", "logdet"],
                                   ["--parametrize", "--logdet", "slogdet"]])
def test_gp_regression(extra):
    rt, rk = run_both("gp_regression", extra)
    check_same_start(rt, rk)
    # kiln's Cholesky / LU of the 24x24 kernel matrix round a few ulps from LAPACK's; the matrix has a
    # condition number of ~1e4, so the marginal likelihood's gradients differ by ~1e-6 of themselves, and
    # LBFGS's line search steps far along directions built from them
    check_drift(rt, rk, 20, 5, 2e-6, 5e-4)
    close(rk["hypers"], rt["hypers"], 1e-4)
    for key in ("mean", "var", "mean2", "bounds"):
        close(rk[key], rt[key], 1e-3, 1e-3, err_msg=key)
    close(rk["mvn_lp"], rt["mvn_lp"], 1e-4)


@pytest.mark.parametrize("extra", [[], ["--hard"], ["--mode", "functional", "--hard"], ["--mode", "functional"],
                                   ["--mode", "dist"]])
def test_gumbel_vae(extra):
    rt, rk = run_both("gumbel_vae", extra)
    check_same_start(rt, rk)
    check_steps(rt, rk, 12, rtol=1e-5)
    assert rk["temps"] == rt["temps"]
    close(rk["sample"], rt["sample"], 1e-5, 1e-7)
    close(rk["one_hot"], rt["one_hot"], 0)
    close(rk["lp"], rt["lp"], 1e-5, 1e-7)


@pytest.mark.parametrize("extra", [[], ["--norm_last_layer", "0", "--use_bn_in_head"]])
def test_dino(extra):
    rt, rk = run_both("dino", extra)
    check_same_start(rt, rk)
    check_steps(rt, rk, 12, rtol=1e-5, learns=False)
    # with the BatchNorm1d head, the Linear biases feeding it get mathematically zero gradients (norms of
    # rounding noise, ~1e-4, different in torch and kiln)
    for a, b in zip(rk["norms"], rt["norms"]):
        close(a, b, 1e-4, 1e-3 if "--use_bn_in_head" in extra else 1e-6)
    close(rk["centers"], rt["centers"], 1e-5, 1e-6)
    close(rk["feats"], rt["feats"], 1e-4, 1e-5)
    close(rk["attn"], rt["attn"], 1e-5, 1e-6)
    # trained when --norm_last_layer 0: an ulp of the updates' rounding (the fixed one is exactly 1)
    close(rk["weight_g"], rt["weight_g"], 2e-7 if "--norm_last_layer" in extra else 0)
    assert rk["names"] == rt["names"]


@pytest.mark.parametrize("extra", [[], ["--schedule", "warm_restarts"]])
def test_checkpoint_resume(extra):
    rt, rk = run_both("checkpoint_resume", extra)
    check_same_start(rt, rk)
    check_steps(rt, rk, 36, rtol=1e-5)
    close(rk["lrs"], rt["lrs"], 1e-12)
    close(rk["norms"], rt["norms"], 1e-5)
    close(rk["val"], rt["val"], 1e-5)
    # in each library, the resumed run continues exactly like the uninterrupted one
    for r in (rt, rk):
        assert r["resumed_losses"] == r["step_losses"] and r["resumed_lrs"] == r["lrs"] and r["resumed_val"] == r["val"]
        check_states(r["full_state"], r["resumed_state"], 0, 0)
    check_states(rt["full_state"], rk["full_state"], 1e-4, 1e-6)
    assert rk["report"] == rt["report"] and rk["split"] == rt["split"]
    assert rk["file_written"] and rk["opt_state_keys"] == rt["opt_state_keys"]


@pytest.mark.parametrize("extra", [[], ["--attn", "entmax15", "--loss", "entmax15"], ["--attn", "bisect", "--loss",
                                                                                       "ce"],
                                   ["--attn", "softmax", "--loss", "sparsemax"]])
def test_sparsemax_entmax(extra):
    rt, rk = run_both("sparsemax_entmax", extra)
    check_same_start(rt, rk)
    check_steps(rt, rk, 20, rtol=1e-5)
    assert rk["sparsity"] == rt["sparsity"]
    assert list(rk["checks"]) == list(rt["checks"])
    for name in rt["checks"]:
        close(rk["checks"][name][0], rt["checks"][name][0], 1e-12, 1e-15, err_msg=name)
        close(rk["checks"][name][1], rt["checks"][name][1], 1e-10, 1e-12, err_msg=name)
    assert rk["gradcheck"] is True and rt["gradcheck"] is True


@pytest.mark.parametrize("extra", [[], ["--policy", "DDPG"]])
def test_td3_ddpg(extra):
    rt, rk = run_both("td3_ddpg", extra)
    check_same_start(rt, rk)
    check_steps(rt, rk, 50, rtol=1e-5, learns=False)
    close(rk["actor_losses"], rt["actor_losses"], 1e-5)
    close(rk["rewards"], rt["rewards"], 1e-6)
    close(rk["action"], rt["action"], 1e-5, 1e-7)
    close(rk["twin_action"], rk["action"], 0)
    close(rk["twin_opt_step"], rt["twin_opt_step"], 0)


@pytest.mark.parametrize("extra", [[], ["--num-masks", "3"], ["--model", "maf"]])
def test_made_maf(extra):
    rt, rk = run_both("made_maf", extra)
    check_same_start(rt, rk)
    check_steps(rt, rk, 8, rtol=1e-5)
    for key in rt:
        if key not in ("initial_state", "step_losses"):
            close(rk[key], rt[key], 1e-5, 1e-6, err_msg=key)


@pytest.mark.parametrize("extra", [[], ["--task", "poisson"]])
def test_siren(extra):
    rt, rk = run_both("siren", extra)
    check_same_start(rt, rk)
    check_steps(rt, rk, 15, rtol=1e-5)
    close(rk["grad"], rt["grad"], 1e-5, 1e-6)
    close(rk["laplacian"], rt["laplacian"], 1e-4, 1e-4)
    assert len(rk["act_grads"]) == len(rt["act_grads"])
    for a, b in zip(rk["act_grads"], rt["act_grads"]):
        close(a, b, 1e-5, 1e-6)
    # the keys name the layers' classes: siren__kiln.SineLayer / kiln.nn.modules.linear.Linear under kiln
    assert [k.replace("siren__kiln", "siren__torch").replace("'kiln.", "'torch.") for k in rk["act_keys"]] \
        == rt["act_keys"]


@pytest.mark.parametrize("extra", [[], ["--nesterov"]])
def test_deeplab_aspp(extra):
    rt, rk = run_both("deeplab_aspp", extra)
    check_same_start(rt, rk)
    check_steps(rt, rk, 12, rtol=1e-5)
    assert rk["lrs"] == rt["lrs"]
    close(rk["conf"], rt["conf"], 0)
    close(rk["np_conf"], rt["np_conf"], 0)
    assert rk["results"] == rt["results"]
    # after 12 training steps whose losses agree to 1e-5, the eval logits carry float32 noise of the
    # same size (conv gradients by OpenBLAS here, by oneDNN in torch)
    close(rk["eval_out"], rt["eval_out"], 5e-5, 5e-5)


def test_pruning_tutorial():
    rt, rk = run_both("pruning_tutorial", [])
    check_same_start(rt, rk)
    check_steps(rt, rk, 15, rtol=1e-5, learns=False)
    assert rk["sparsities"] == rt["sparsities"]
    for key in ("names_after_random", "n_hooks", "history", "sd_keys", "removed_names", "pruned", "final_keys"):
        assert rk[key] == rt[key], key
    for key in ("conv1_mask", "conv1_bias_mask", "fc3_bias_mask"):
        close(rk[key], rt[key], 0, err_msg=key)
    close(rk["out"], rt["out"], 1e-5, 1e-6)


@pytest.mark.parametrize("extra", [[], ["--p_x_y_weight", "1", "--p_x_weight", "0"],
                                   ["--uncond", "--p_y_given_x_weight", "0"]])
def test_jem_sgld(extra):
    rt, rk = run_both("jem_sgld", extra)
    check_same_start(rt, rk)
    # the unconditional p(x) loss is a difference of two mean energies near 0: rtol is taken against ~1e-2
    check_steps(rt, rk, 16, rtol=1e-5 if "--uncond" not in extra else 1e-4, learns=False)
    close(rk["parts"], rt["parts"], 1e-5, 1e-6)
    close(rk["buffer"], rt["buffer"], 1e-5, 1e-5)


@pytest.mark.parametrize("extra", [[], ["--feature_transform"], ["--task", "seg", "--feature_transform"]])
def test_pointnet(extra):
    rt, rk = run_both("pointnet", extra)
    check_same_start(rt, rk)
    # every Conv1d / Linear here feeds a BatchNorm1d with its bias on: those biases get mathematically zero
    # gradients (~1e-8 of rounding noise, of either sign in torch and kiln), which Adam's first step turns into
    # lr-sized moves; the T-Nets multiply the inputs by what those layers compute, so from the second step on
    # the losses agree to ~1e-4 .. 1e-2 only
    check_drift(rt, rk, 12, 1, 1e-5, 5e-2, learns=False)
    # (the counts of correct points per step drift with the losses: a few points of ~250, 1.0-1.5 on
    # average over the steps depending on the rounding noise above)
    assert np.mean(np.abs(np.array(rk["accs"]) - np.array(rt["accs"]))) <= 2.0
    close(rk["regs"], rt["regs"], 0.5, 1e-6) if rt["regs"] else None
    close(rk["eval_pred"], rt["eval_pred"], 0, 0.1)
