"""More public training scripts, written as their authors wrote them (tests/python/programs/), run
twice: as written under Debian's torch 1.13 and with their torch imports pointed at kiln
(programs/swap.py), with the same seeds and arguments. kiln draws torch's random numbers, so both
start from the same weights (checked) and see the same batches, dropout masks and samples; every
step's loss must then agree with torch's, and so must what the scripts print at the end.

- time_seq: pytorch/examples time_sequence_prediction (LSTMCell, .double(), LBFGS with a closure)
- seq2seq_attn: the seq2seq translation tutorial (EncoderRNN/AttnDecoderRNN, teacher forcing, topk)
- char_rnn: the char-RNN name classification and generation tutorials (hand-written RNNs)
- nanogpt / mingpt_sort: karpathy's nanoGPT (train.py + sample.py) and minGPT's sort demo
- poly_regression: pytorch/examples regression/main.py (smooth_l1_loss, manual SGD)
- pygcn: tkipf/pygcn (torch.spmm over torch.sparse.FloatTensor, Adam, nll_loss)
"""
import numpy as np
import pytest

import kiln
from programs.compare import check_same_start, check_steps, run_both


@pytest.fixture(autouse=True)
def restore_backend_flags():
    """nanoGPT's train.py turns TF32 on (global flags of torch and of kiln): put them back for the
    tests that run after these in the same process."""
    import torch
    import kiln
    saved = [(lib, lib.backends.cuda.matmul.allow_tf32, lib.backends.cudnn.allow_tf32) for lib in (torch, kiln)]
    yield
    for lib, matmul, cudnn in saved:
        lib.backends.cuda.matmul.allow_tf32 = matmul
        lib.backends.cudnn.allow_tf32 = cudnn


def test_time_sequence_prediction_lbfgs_double():
    rt, rk = run_both("time_seq", ["--steps", "2", "--length", "50", "--n", "6", "--hidden", "32", "--future", "20"])
    check_same_start(rt, rk)
    # float64, and LBFGS runs as many closures in both (its line search probes a loss of 9 once)
    check_steps(rt, rk, 30, rtol=1e-9, learns=False)
    assert rk["test_losses"][-1] < rk["test_losses"][0]
    np.testing.assert_allclose(rk["test_losses"], rt["test_losses"], rtol=1e-9)
    np.testing.assert_allclose(rk["pred"], rt["pred"], rtol=1e-8, atol=1e-10)


def test_seq2seq_attention_tutorial():
    rt, rk = run_both("seq2seq_attn", ["--iters", "100", "--hidden", "32", "--lr", "0.1", "--print-every", "20"])
    check_same_start(rt, rk)
    # without teacher forcing a step stops at the first <EOS> guessed: single losses are noisy
    check_steps(rt, rk, 100, rtol=2e-5, learns=False)
    assert np.mean(rk["step_losses"][-30:]) < np.mean(rk["step_losses"][:30])
    assert rk["decoded"] == rt["decoded"]
    for a, b in zip(rk["attentions"], rt["attentions"]):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize("task", ["classify", "generate"])
def test_char_rnn_tutorials(task):
    rt, rk = run_both("char_rnn", ["--task", task, "--iters", "300", "--hidden", "32", "--lr", "0.02",
                                   "--print-every", "100", "--confusion", "50"])
    check_same_start(rt, rk)
    check_steps(rt, rk, 300, rtol=2e-5, learns=False)
    assert np.mean(rk["step_losses"][-50:]) < np.mean(rk["step_losses"][:50])
    if task == "classify":
        np.testing.assert_array_equal(rk["confusion"], rt["confusion"])
        assert [[c for _, c in p] for p in rk["predictions"]] == [[c for _, c in p] for p in rt["predictions"]]
        np.testing.assert_allclose([[v for v, _ in p] for p in rk["predictions"]],
                                   [[v for v, _ in p] for p in rt["predictions"]], rtol=1e-5)
    else:
        assert rk["samples"] == rt["samples"]  # topk-greedy, 0-d tensor string indexing, multinomial


NANO = ["--n_layer", "2", "--n_head", "2", "--n_embd", "32", "--block_size", "16", "--batch_size", "8",
        "--warmup_iters", "3", "--lr_decay_iters", "12", "--eval_interval", "5", "--eval_iters", "3",
        "--chars", "3000"]


@pytest.mark.parametrize("extra", [
    ["--dropout", "0", "--max_iters", "12", "--resume_iters", "4", "--gradient_accumulation_steps", "2"],
    # torch 1.13 has no F.scaled_dot_product_attention, so nanoGPT takes its manual path there and
    # kiln's fused one here: the dropout masks must still be torch's
    ["--dropout", "0.2", "--max_iters", "10", "--bias", "0"],
    ["--dropout", "0.2", "--max_iters", "10", "--flash", "0"],
])
def test_nanogpt(extra):
    rt, rk = run_both("nanogpt", NANO + extra)
    check_same_start(rt, rk, skip=(".attn.bias",))  # the causal-mask buffer of the manual path
    if "--flash" not in extra:
        assert not any(n.endswith(".attn.bias") for n in rk["initial_state"])  # kiln took the fused path
    check_steps(rt, rk, 10, rtol=2e-6)
    np.testing.assert_allclose(rk["evals"], rt["evals"], rtol=2e-6)
    assert rk["samples"] == rt["samples"]
    assert rk["n_params"] == rt["n_params"] and rk["num_params"] == rt["num_params"]


@pytest.mark.parametrize("workers", [0, 2])
def test_mingpt_sort(workers):
    rt, rk = run_both("mingpt_sort", ["--n_layer", "2", "--n_head", "2", "--n_embd", "16", "--max_iters", "20",
                                      "--batch_size", "16", "--eval_batches", "1", "--num_workers", str(workers)])
    check_same_start(rt, rk)
    check_steps(rt, rk, 20, rtol=2e-6)
    for key in ("train_score", "test_score", "summaries", "mistakes", "sorted", "gt", "sampled", "n_params"):
        assert rk[key] == rt[key], key


@pytest.mark.parametrize("legacy", [False, True])
def test_poly_regression(legacy):
    rt, rk = run_both("poly_regression", ["--max-batches", "150"] + (["--legacy"] if legacy else []))
    check_same_start(rt, rk)
    check_steps(rt, rk, 150, rtol=1e-5)
    assert rk["actual"] == rt["actual"]
    assert rk["learned"] == rt["learned"]  # '{:+.2f}'.format of 0-d tensors


def test_poly_regression_runs_torchs_steps_to_the_end():
    # The script stops at the first loss below 1e-3, after ~800 batches of a chaotic descent: only
    # torch's roundings (the loss's mean in torch's summation order, x ** 4 with SLEEF's powf where
    # torch's vector loop calls it) stop at the same batch with the same losses.
    rt, rk = run_both("poly_regression", [])
    assert rt["batches"] > 300
    if kiln._C._simd_target() in ("AVX2", "AVX3", "AVX3_DL", "AVX3_ZEN4", "AVX3_SPR"):
        assert rk["batches"] == rt["batches"]
        assert rk["step_losses"] == rt["step_losses"]
        assert rk["learned"] == rt["learned"]
    else:  # the C library's powf: an ulp here and there, then the chaotic descent parts ways
        np.testing.assert_allclose(rk["step_losses"][:100], rt["step_losses"][:100], rtol=1e-5)


def test_pygcn():
    rt, rk = run_both("pygcn", ["--epochs", "30", "--nodes", "300", "--feats", "100"])
    check_same_start(rt, rk)
    check_steps(rt, rk, 30, rtol=2e-6)
    for key in ("loss_val", "acc_train", "acc_val"):
        np.testing.assert_allclose(rk["history"][key], rt["history"][key], rtol=2e-6, err_msg=key)
    assert rk["acc_test"] == rt["acc_test"]
    assert rk["repr"] == rt["repr"]
