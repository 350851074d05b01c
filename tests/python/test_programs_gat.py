"""Graph attention networks written as PyTorch programs (tests/python/programs/gat_dense.py: pyGAT's
dense GAT with its train.py loop, checkpoints and early stopping, and a tutorial-style edge-list
GAT built on index_select/scatter_reduce/gather/index_add_/scatter_add), run under kiln and under
Debian's torch 1.13 from the same initial weights: the per-epoch losses must agree."""
import os
import sys

import numpy as np
import torch

import kiln

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "programs"))
import gat_dense  # noqa: E402

SMALL = dict(n_nodes=120, n_feats=60, n_classes=3, hidden=8, nb_heads=4, epochs=8)


def _both(**kw):
    ref = gat_dense.run(torch, **kw)
    got = gat_dense.run(kiln, init_state=ref["initial"], **kw)
    return ref, got


def _check(ref, got, rtol=1e-4, atol=1e-5):
    assert len(got["train"]) == len(ref["train"]) == SMALL["epochs"]
    np.testing.assert_allclose(got["train"], ref["train"], rtol=rtol, atol=atol)
    np.testing.assert_allclose(got["val"], ref["val"], rtol=rtol, atol=atol)
    assert got["best_epoch"] == ref["best_epoch"]
    np.testing.assert_allclose(got["test_loss"], ref["test_loss"], rtol=rtol, atol=atol)
    assert got["test_acc"] == ref["test_acc"]


def test_dense_gat_losses_match_torch_without_dropout():
    ref, got = _both(dropout=0.0, **SMALL)
    _check(ref, got)
    # the model learns something (losses go down) in both
    assert ref["train"][-1] < ref["train"][0]


def test_dense_gat_with_dropout_matches_torch_stream():
    # kiln's generator and dropout draw torch's numbers: with the same seed the masks are the same,
    # and so are the initial weights (xavier_uniform_), which are checked here too.
    ref = gat_dense.run(torch, dropout=0.6, **SMALL)
    got = gat_dense.run(kiln, dropout=0.6, **SMALL)
    for k, v in ref["initial"].items():
        np.testing.assert_array_equal(got["initial"][k], v, err_msg=k)
    _check(ref, got)


def test_scatter_gat_losses_match_torch():
    ref, got = _both(dropout=0.0, model_kind="scatter", **SMALL)
    _check(ref, got)
    assert ref["train"][-1] < ref["train"][0]


def test_scatter_softmax_gradients_match_torch():
    """The edge softmax of the scatter GAT, alone: scatter_reduce(amax) + gather + index_add_, forward
    and gradients (sum, mean, amax, amin, prod with include_self both ways)."""
    rng = np.random.default_rng(0)
    n, e, h = 7, 30, 3
    dst = rng.integers(0, n - 1, e)  # node n-1 receives nothing
    scores = rng.standard_normal((e, h)).astype(np.float32)
    bases = [rng.standard_normal((n, h)).astype(np.float32) for _ in range(10)]
    outs = {}
    for m in (torch, kiln):
        s = m.tensor(scores, requires_grad=True)
        d = m.tensor(dst)
        idx = d.unsqueeze(-1).expand_as(s)
        amax = m.full((n, h), float("-inf")).scatter_reduce(0, idx, s, reduce="amax", include_self=True)
        a = (s - amax.gather(0, idx).detach()).exp()
        denom = m.zeros(n, h).index_add_(0, d, a)
        alpha = a / denom[d]
        res = [alpha]
        cases = [(r, inc) for r in ("sum", "mean", "amax", "amin", "prod") for inc in (True, False)]
        for base, (reduce, inc) in zip(bases, cases):
            res.append(m.tensor(base).scatter_reduce(0, idx, s * 0.5 + 1, reduce, include_self=inc))
        total = sum((r * (i + 1)).sum() for i, r in enumerate(res))
        total.backward()
        outs[m.__name__] = ([r.detach().numpy() for r in res], s.grad.numpy())
    (r_t, g_t), (r_k, g_k) = outs["torch"], outs["kiln"]
    for a, b in zip(r_k, r_t):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(g_k, g_t, rtol=1e-4, atol=1e-5)
