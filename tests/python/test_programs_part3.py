"""More public PyTorch programs (tests/python/programs/), run as written under torch 1.13 and with their
torch imports pointed at kiln (programs/swap.py), with the same seeds and arguments: both start from the
same weights (checked bit for bit) and every step's loss must agree with torch's.

- gat_example: pytorch/examples gat/main.py (2023): per-head attention with self.a[:, :n_hidden, :] and
  .mT, torch.where(adj_mat > 0, e, -9e16 * ones_like(e)), load_cora's torch.diag(v).to_sparse() @
  features and torch.eye(V) + sparse int64 adjacency (dense + sparse), randperm split, Adam
- nlp_lstm_tagger, nlp_bilstm_crf, nlp_word_embeddings: "Deep Learning for NLP with PyTorch" (the LSTM
  part-of-speech tagger, the Bi-LSTM CRF with log_sum_exp and viterbi decode, N-gram and CBOW embeddings)
- chatbot: the Chatbot tutorial (packed bidirectional GRU encoder, Luong attention dot/general/concat,
  maskNLLLoss with gather/masked_select, teacher forcing, clip_grad_norm_, checkpoint, greedy search)
- siamese_network: pytorch/examples siamese_network (torchvision's ResNet-18 copied in, pairs drawn with
  random.randint, BCELoss, torch.where(outputs > 0.5, 1, 0), Adadelta + StepLR)
- mnist_forward_forward: pytorch/examples mnist_forward_forward (nn.Linear subclass with its own Adam and
  train(), goodness losses, overlay_y_on_x's x_[range(n), y] = x.max(), get_y_neg)
- vision_transformer: torchvision's VisionTransformer copied in (torch._assert, class token expand + cat,
  nn.MultiheadAttention) and a from-scratch ViT (Tensor.unfold or F.unfold patches, nn.TransformerEncoder)
- reinforce: pytorch/examples reinforcement_learning reinforce.py and actor_critic.py (torch.distributions
  .Categorical, returns normalised with std, smooth_l1_loss) on CartPole-v1's dynamics written inline
- translation_transformer: "Language Translation with nn.Transformer" (masks, pad_sequence collate,
  ignore_index, greedy decoding) on a synthetic German-English corpus
- dqn_tutorial: "Reinforcement Learning (DQN) Tutorial" (replay memory, gather, masked max, SmoothL1Loss,
  clip_grad_value_, AdamW amsgrad, soft target updates through state_dict) on the inline CartPole
- fgsm_tutorial: "Adversarial Example Generation" (data.requires_grad = True, data.grad.data.sign(),
  clamp, denorm, Normalize re-applied, a pretrained LeNet loaded with map_location)
"""
import numpy as np
import pytest

from programs.compare import check_same_start, check_steps, run_both, to_np


@pytest.mark.parametrize("extra", [[], ["--concat-heads"]])
def test_pytorch_examples_gat(extra):
    rt, rk = run_both("gat_example", ["--epochs", "20", "--n-nodes", "160", "--n-feats", "80", "--n-test", "40",
                                      "--n-val", "30", "--hidden-dim", "16", "--num-heads", "4"] + extra)
    check_same_start(rt, rk)  # xavier_normal_ on nn.Parameter(torch.empty(...)) of 2-D and 3-D shapes
    for key in ("features", "adj_mat", "labels", "idx"):  # load_cora's sparse steps and the randperm split
        np.testing.assert_array_equal(to_np(rk[key]), to_np(rt[key]), err_msg=key)
        assert str(rk[key].dtype)[5:] == str(rt[key].dtype)[6:] and not rk[key].is_sparse, key
    check_steps(rt, rk, 20, rtol=1e-6)
    np.testing.assert_allclose(rk["record"], rt["record"], rtol=1e-6)
    assert rk["acc_test"] == rt["acc_test"]
    np.testing.assert_allclose(rk["loss_test"], rt["loss_test"], rtol=1e-6)


def test_nlp_lstm_pos_tagger_tutorial():
    rt, rk = run_both("nlp_lstm_tagger", ["--epochs", "150"])
    check_same_start(rt, rk)
    check_steps(rt, rk, 300, rtol=1e-6)
    # nn.LSTM(3, 3) stepped with a carried (h, c), then the whole sequence at once
    for key in ("stepped", "whole"):
        out_t, (h_t, c_t) = rt[key]
        out_k, (h_k, c_k) = rk[key]
        for a, b in ((out_k, out_t), (h_k, h_t), (c_k, c_t)):
            np.testing.assert_allclose(to_np(a), to_np(b), rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(to_np(rk["before"]), to_np(rt["before"]), rtol=1e-6)
    np.testing.assert_allclose(to_np(rk["after"]), to_np(rt["after"]), rtol=1e-5, atol=1e-6)
    assert rk["predicted"] == rt["predicted"] == [0, 1, 2, 0, 1]


def test_nlp_bilstm_crf_tutorial():
    rt, rk = run_both("nlp_bilstm_crf", ["--epochs", "40"])
    check_same_start(rt, rk)  # transitions' START row / STOP column written through .data
    check_steps(rt, rk, 80, rtol=1e-6)
    assert rk["before"][1] == rt["before"][1] and rk["after"][1] == rt["after"][1]  # viterbi paths
    np.testing.assert_allclose([rk["before"][0], rk["after"][0], rk["before_nll"]],
                               [rt["before"][0], rt["after"][0], rt["before_nll"]], rtol=1e-6)


def test_nlp_word_embeddings_tutorial():
    rt, rk = run_both("nlp_word_embeddings", ["--epochs", "3", "--cbow-epochs", "5"])
    check_same_start(rt, rk)
    check_steps(rt, rk, 3 * 113, rtol=1e-6, learns=False)
    assert rk["epoch_losses"][-1] < rk["epoch_losses"][0]
    np.testing.assert_allclose(rk["epoch_losses"], rt["epoch_losses"], rtol=1e-6)
    np.testing.assert_array_equal(to_np(rk["hello"]), to_np(rt["hello"]))
    np.testing.assert_allclose(to_np(rk["beauty"]), to_np(rt["beauty"]), rtol=1e-6)
    np.testing.assert_allclose(rk["cbow_losses"], rt["cbow_losses"], rtol=1e-6)
    assert np.mean(rk["cbow_losses"][-20:]) < np.mean(rk["cbow_losses"][:20])


@pytest.mark.parametrize("attn,tf", [("dot", "1.0"), ("general", "0.5"), ("concat", "0.0")])
def test_chatbot_tutorial(attn, tf):
    rt, rk = run_both("chatbot", ["--attn-model", attn, "--teacher-forcing-ratio", tf, "--hidden-size", "16",
                                  "--batch-size", "8", "--n-iteration", "24", "--save-every", "10",
                                  "--n-pairs", "300", "--learning-rate", "0.002"])
    check_same_start(rt, rk)
    assert rk["voc_words"] == rt["voc_words"] and rk["n_pairs"] == rt["n_pairs"]
    # packed bidirectional GRU with inter-layer dropout, masked NLL, clip_grad_norm_, two Adams
    check_steps(rt, rk, 24, rtol=1e-6)
    assert rk["checkpoint_iteration"] == rt["checkpoint_iteration"] == 20
    np.testing.assert_allclose(rk["checkpoint_loss"], rt["checkpoint_loss"], rtol=1e-6)
    for a, b in zip(rk["replies"], rt["replies"]):  # greedy decoding from the reloaded checkpoint
        assert a[0] == b[0]
        np.testing.assert_allclose(a[1], b[1], rtol=1e-5)


def test_siamese_network_example():
    rt, rk = run_both("siamese_network", ["--epochs", "2", "--train-size", "24", "--test-size", "20",
                                          "--batch-size", "8", "--test-batch-size", "20", "--lr", "0.01",
                                          "--gamma", "0.5"])
    check_same_start(rt, rk)  # kaiming_normal_(fan_out), xavier_uniform_ through Module.apply, fill_(0.01)
    # conv1 (one input channel) gives torch's bits, but the 64- to 512-channel convolutions are an ulp
    # from oneDNN's in most elements, and kiln's BatchNorm2d (batch statistics in float32, two roundings
    # for x * alpha + beta) from torch's (sums in double, fused multiply-adds): ResNet-18's 20 layers
    # grow that to ~1e-5 within a few steps.
    check_steps(rt, rk, 6, rtol=5e-3, learns=False)  # 2e-4: on an AVX2 CPU torch's run tails (the C library) and kiln's (SLEEF) are an ulp apart
    assert [c for _, c in rk["tests"]] == [c for _, c in rt["tests"]]  # torch.where(outputs > 0.5, 1, 0)
    np.testing.assert_allclose([l for l, _ in rk["tests"]], [l for l, _ in rt["tests"]], rtol=5e-3)  # AVX2 (above)


def test_mnist_forward_forward_example():
    rt, rk = run_both("mnist_forward_forward", ["--epochs", "60", "--train_size", "300", "--test_size", "100",
                                                "--dims", "784", "64", "64"])
    check_same_start(rt, rk)
    assert rk["y_neg"] == rt["y_neg"]  # torch.randint draws, one per sample
    assert rk["net_state"] == rt["net_state"] == []  # the layers live in a Python list
    # each layer trains on its own (60 Adam steps, then the next layer on its detached outputs)
    check_steps(rt, rk, 120, rtol=1e-6, learns=False)
    for lk in (rk["step_losses"][:60], rk["step_losses"][60:]):
        assert lk[-1] < lk[0]
    assert rk["train_error"] == rt["train_error"] and rk["test_error"] == rt["test_error"]


@pytest.mark.parametrize("extra", [["--model", "torchvision"], ["--model", "simple"],
                                   ["--model", "simple", "--patchify", "F.unfold"]])
def test_vision_transformer(extra):
    rt, rk = run_both("vision_transformer", extra + ["--image-size", "16", "--dim", "32", "--depth", "2",
                                                     "--epochs", "3", "--n-train", "256", "--n-test", "64",
                                                     "--batch-size", "32"])
    check_same_start(rt, rk)  # trunc_normal_, normal_(std=0.02) on torch.empty, xavier_uniform_
    check_steps(rt, rk, 24, rtol=1e-6)
    assert rk["accs"] == rt["accs"]


def test_torch_assert():
    import kiln
    import torch
    for m in (torch, kiln):
        m._assert(True, "unused")
        m._assert(m.tensor(1.0) > 0, "unused")
        with pytest.raises(AssertionError, match="Wrong image height"):
            m._assert(m.tensor([3]) == 4, "Wrong image height")


@pytest.mark.parametrize("algo", ["reinforce", "actor_critic"])
def test_reinforcement_learning_examples(algo):
    rt, rk = run_both("reinforce", ["--algo", algo, "--episodes", "30"])
    check_same_start(rt, rk)
    # Categorical.sample draws torch's actions, so the CartPole episodes are the same ones
    assert rk["actions"] == rt["actions"] and rk["ep_rewards"] == rt["ep_rewards"]
    # a policy loss sums terms of both signs (normalised returns): compare it against its terms' scale
    scale = np.abs(rt["step_losses"]).mean()
    np.testing.assert_allclose(rk["step_losses"], rt["step_losses"], rtol=1e-6, atol=1e-6 * scale)
    assert rk["running_reward"] == rt["running_reward"]


def test_std_var_float32_round_as_torch():
    """torch accumulates float32 std/var in double and rounds once at the end; kiln does too, so
    (returns - returns.mean()) / (returns.std() + eps) is torch's, for every length."""
    import kiln
    import torch
    rng = np.random.default_rng(0)
    for n in list(range(1, 120)) + [1000, 40000]:
        x = (rng.standard_normal(n) * 10 + 3).astype(np.float32)
        for f in (lambda m, t: t.std(), lambda m, t: t.var(unbiased=False), lambda m, t: m.std_mean(t)[0],
                  lambda m, t: t.view(1, -1).std(1, keepdim=True), lambda m, t: m.cat([t, 2 * t]).view(2, -1).var(1)):
            a, b = f(torch, torch.tensor(x)), f(kiln, kiln.tensor(x))
            assert str(b.dtype) == "kiln.float32"
            np.testing.assert_array_equal(b.numpy(), a.numpy(), err_msg=str(n))


def test_translation_transformer_tutorial():
    rt, rk = run_both("translation_transformer", ["--emb-size", "32", "--nhead", "4", "--ffn-hid-dim", "64",
                                                  "--batch-size", "32", "--num-encoder-layers", "2",
                                                  "--num-decoder-layers", "2", "--num-epochs", "3",
                                                  "--n-train", "320", "--n-val", "64"])
    check_same_start(rt, rk)  # xavier_uniform_ on every matrix, the PositionalEncoding buffer
    # nn.Transformer with float causal masks and bool key padding masks, ignore_index, Adam
    check_steps(rt, rk, 30, rtol=1e-6)
    np.testing.assert_allclose(rk["val_losses"], rt["val_losses"], rtol=1e-6)
    assert rk["translation"] == rt["translation"]  # greedy_decode with a bool tgt_mask


def test_dqn_tutorial():
    rt, rk = run_both("dqn_tutorial", ["--batch-size", "16", "--num-episodes", "12"])
    check_same_start(rt, rk)
    assert rk["durations"] == rt["durations"]  # the same greedy actions (max(1)[1]) and episodes
    check_steps(rt, rk, 100, rtol=1e-6)
    for name, v in rt["target_state"].items():  # soft updates through state_dict arithmetic
        np.testing.assert_allclose(to_np(rk["target_state"][name]), to_np(v), rtol=1e-6, atol=1e-7, err_msg=name)


def test_fgsm_adversarial_tutorial():
    rt, rk = run_both("fgsm_tutorial", ["--epsilons", "0", "0.25", "--n-test", "40", "--pretrain-steps", "5"])
    check_same_start(rt, rk)
    check_steps(rt, rk, 5, rtol=1e-4)  # 1e-4: on an AVX2 CPU torch's run tails (the C library) and kiln's (SLEEF) are an ulp apart
    # the same shuffled single images, the same attacks flip the same predictions
    assert rk["accuracies"] == rt["accuracies"] and rt["accuracies"][1] < rt["accuracies"][0]
    assert [[e[:2] for e in ex] for ex in rk["examples"]] == [[e[:2] for e in ex] for ex in rt["examples"]]
    for ek, et in zip(rk["examples"], rt["examples"]):  # perturbed images: sign(data.grad) agrees
        for a, b in zip(ek, et):
            np.testing.assert_array_equal(a[2], b[2])
    # sum |d loss / d image|: convolutions with 32 input channels are an ulp from oneDNN's
    np.testing.assert_allclose(rk["grads"], rt["grads"], rtol=3e-3)  # AVX2 CPUs: torch's conv/run-tail kernels round apart from kiln's there and training grows it


def test_linear_weight_grad_is_contiguous_and_torchs():
    """mm/addmm's mat2 gradient for a transposed weight (nn.Linear's weight.t()) is computed as torch's
    mm_mat2_backward, (grad^T @ x)^T: the weight's .grad is contiguous with no transposing copy, and
    torch's bits (the fgsm LeNet's 9216 x 128 fc1 backward was a tenth of its time in that copy)."""
    import kiln
    import torch
    rng = np.random.default_rng(0)
    for b, i, o in [(1, 9216, 128), (32, 64, 10), (7, 33, 5), (5, 1, 3), (3, 4, 1)]:
        x, w = rng.standard_normal((b, i)).astype(np.float32), rng.standard_normal((o, i)).astype(np.float32)
        bias, g = rng.standard_normal(o).astype(np.float32), rng.standard_normal((b, o)).astype(np.float32)
        grads = []
        for m in (torch, kiln):
            W = m.tensor(w, requires_grad=True)
            m.nn.functional.linear(m.tensor(x), W, m.tensor(bias)).backward(m.tensor(g))
            W2 = m.tensor(w.T.copy(), requires_grad=True)  # a plain mm with a contiguous mat2
            m.mm(m.tensor(x), W2).backward(m.tensor(g))
            grads.append((W.grad, W2.grad))
        (wt, w2t), (wk, w2k) = grads
        assert wk.is_contiguous() and w2k.is_contiguous()
        np.testing.assert_array_equal(wk.numpy(), wt.numpy())
        np.testing.assert_array_equal(w2k.numpy(), w2t.numpy())


def test_transposed_copy_tiles():
    """A transposed contiguous matrix copied into a contiguous one goes through square tiles (as
    torch's copy_): every dtype's elements land where the element-wise copy puts them."""
    import kiln
    rng = np.random.default_rng(1)
    for rows, cols in [(60, 60), (59, 61), (130, 70), (9216, 3), (2, 5000), (64, 64), (1024, 256), (65, 129)]:
        base = rng.standard_normal((cols, rows)) * 50
        for dt in (kiln.float32, kiln.float64, kiln.float16, kiln.bfloat16, kiln.int8, kiln.int64, kiln.bool):
            src = kiln.tensor(base).to(dt).t()  # (rows, cols), strides (1, rows)
            out = src.contiguous()
            assert out.is_contiguous() and list(out.shape) == [rows, cols]
            np.testing.assert_array_equal(out.double().numpy(), src.double().numpy())
            dst = kiln.empty(rows, cols, dtype=dt)
            dst.copy_(src)
            np.testing.assert_array_equal(dst.double().numpy(), out.double().numpy())
