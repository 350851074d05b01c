"""What the programs of test_programs_part5.py found missing or different in kiln, each checked against
torch 1.13."""
import warnings

import numpy as np
import pytest
import torch

import kiln


def k(t):
    return kiln.from_numpy(t.detach().numpy().copy())


def close(a, b, rtol=1e-6, atol=1e-7):
    np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=rtol, atol=atol)


# ---- pyg_free_gnn: Tensor.index_reduce_ on a fresh buffer, with a source that requires grad ------------
@pytest.mark.parametrize("reduce", ["mean", "prod", "amax", "amin"])
@pytest.mark.parametrize("include_self", [False, True])
def test_index_reduce_inplace_backward(reduce, include_self):
    torch.manual_seed(0)
    src_t = torch.randn(7, 3, requires_grad=True)
    base_t = torch.randn(4, 3, requires_grad=True)
    index = torch.tensor([0, 2, 2, 3, 0, 0, 2])
    src_k, base_k = k(src_t).requires_grad_(), k(base_t).requires_grad_()
    # SAGE's x.new_zeros(...).index_reduce_(0, i, x_j, 'mean', include_self=False)
    out_t = src_t.new_zeros(4, 3).index_reduce_(0, index, src_t * 2, reduce, include_self=include_self)
    out_k = src_k.new_zeros(4, 3).index_reduce_(0, k(index), src_k * 2, reduce, include_self=include_self)
    close(out_k, out_t)
    w = torch.randn(4, 3)
    (out_t * w).sum().backward()
    (out_k * k(w)).sum().backward()
    close(src_k.grad, src_t.grad)
    # a non-leaf self that requires grad: the gradient reaches the base through self
    out_t = (base_t * 1).index_reduce_(0, index, src_t, reduce, include_self=include_self)
    out_k = (base_k * 1).index_reduce_(0, k(index), src_k, reduce, include_self=include_self)
    close(out_k, out_t)
    (out_t * w).sum().backward()
    (out_k * k(w)).sum().backward()
    close(base_k.grad, base_t.grad)
    close(src_k.grad, src_t.grad)


# ---- d2l_rnn_scratch: Tensor.detach_() between truncated-BPTT batches -------------------------------------
def test_detach_inplace():
    for lib in (torch, kiln):
        a = lib.ones(3, requires_grad=True)
        b = a * 2
        assert b.detach_() is b  # the tensor itself
        assert not b.requires_grad and b.grad_fn is None and b.is_leaf
        assert lib.detach_(b) is b
        (a * 3).sum().backward()  # the rest of the graph is untouched
        assert a.grad.tolist() == [3.0, 3.0, 3.0]
        a.detach_()  # a leaf that requires grad: no longer does, keeps its .grad
        assert not a.requires_grad and a.grad is not None
        with pytest.raises(RuntimeError, match="Can't detach views in-place"):
            lib.randn(3)[0:2].detach_()
        # the states of nn.RNN / nn.LSTM are not views: detached in place between batches
        lstm = lib.nn.LSTM(3, 4)
        _, (h, c) = lstm(lib.randn(2, 1, 3))
        for s in (h, c):
            s.detach_()
            assert not s.requires_grad


# ---- transformer_classifier: TransformerEncoder's nested-tensor inference path zeroes padded positions ---
@pytest.mark.parametrize("kw", [dict(), dict(norm=True), dict(mask="float"), dict(grad=True), dict(aligned=False),
                                dict(nhead=1), dict(batch_first=False), dict(train=True), dict(attn_mask=True)])
def test_transformer_encoder_padded_positions_in_inference(kw):
    def run(lib):
        lib.manual_seed(0)
        layer = lib.nn.TransformerEncoderLayer(8, kw.get("nhead", 2), 16, 0.0, batch_first=kw.get("batch_first", True))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            enc = lib.nn.TransformerEncoder(layer, 2, norm=lib.nn.LayerNorm(8) if kw.get("norm") else None)
        enc.train(kw.get("train", False))
        if kw.get("norm"):
            lib.nn.init.normal_(enc.norm.bias)
        x = lib.randn(3, 5, 8)
        if not kw.get("batch_first", True):
            x = x.transpose(0, 1)
        first = [True] if not kw.get("aligned", True) else [False]
        pad = lib.tensor([[False] * 5, first + [False] * 2 + [True] * 2, [False] * 4 + [True]])
        if kw.get("mask") == "float":
            pad = lib.zeros(3, 5).masked_fill(pad, float("-inf"))
        attn_mask = lib.zeros(5, 5) if kw.get("attn_mask") else None
        with lib.set_grad_enabled(kw.get("grad", False)):
            return enc(x, mask=attn_mask, src_key_padding_mask=pad).detach().numpy()
    out_t, out_k = run(torch), run(kiln)
    assert out_k.shape == out_t.shape
    np.testing.assert_allclose(out_k, out_t, rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(out_k == 0, out_t == 0)


# ---- pytorch_template: Optimizer.state_dict packs each group with 'params' last, as torch does ---------
def test_optimizer_state_dict_group_key_order():
    def groups(lib):
        w = lib.nn.Parameter(lib.ones(2))
        opt = lib.optim.SGD([{"params": [w], "lr": 0.1}], lr=0.5, momentum=0.9)
        lib.optim.lr_scheduler.StepLR(opt, 2)
        saved = opt.state_dict()["param_groups"]
        opt.load_state_dict(opt.state_dict())
        return [list(g) for g in saved], [list(g) for g in opt.param_groups]
    saved_t, loaded_t = groups(torch)
    saved_k, loaded_k = groups(kiln)
    assert saved_k[0][-1] == "params" and saved_t[0][-1] == "params"
    assert [k for k in saved_k[0] if k in saved_t[0]] == [k for k in saved_t[0] if k in saved_k[0]]
    assert loaded_k[0][-1] == loaded_t[0][-1] == "params"


# ---- adaptive_softmax_lm: nn.AdaptiveLogSoftmaxWithLoss ------------------------------------------------
@pytest.mark.parametrize("head_bias", [False, True])
def test_adaptive_log_softmax_with_loss(head_bias):
    def run(lib):
        lib.manual_seed(0)
        m = lib.nn.AdaptiveLogSoftmaxWithLoss(16, 30, [5, 12, 20], div_value=2.0, head_bias=head_bias)
        x = lib.randn(40, 16, requires_grad=True)
        t = lib.randint(0, 30, (40,))
        out, loss = m(x, t)
        loss.backward()
        single = m(x[0], t[0])
        names = [n for n, _ in m.named_parameters()]
        return names, [out, loss, x.grad, m.head.weight.grad, m.tail[1][0].weight.grad, m.tail[2][1].weight.grad,
                       m.log_prob(x), m.predict(x), single.output, single.loss]
    names_t, got_t = run(torch)
    names_k, got_k = run(kiln)
    assert names_k == names_t
    for a, b in zip(got_k, got_t):
        assert tuple(a.shape) == tuple(b.shape)
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-6, atol=1e-7)
    for lib in (torch, kiln):
        with pytest.raises(ValueError, match="cutoffs should be a sequence of unique"):
            lib.nn.AdaptiveLogSoftmaxWithLoss(8, 10, [5, 3])
        m = lib.nn.AdaptiveLogSoftmaxWithLoss(8, 10, [5])
        with pytest.raises(RuntimeError, match="Target values should be in"):
            m(lib.randn(2, 8), lib.tensor([1, 10]))


# ---- ppo_pytorch: torch.distributions.MultivariateNormal -----------------------------------------------
@pytest.mark.parametrize("kind", ["diag", "full", "precision", "scale_tril"])
def test_multivariate_normal(kind):
    def run(lib):
        lib.manual_seed(0)
        loc = lib.randn(5, 3, requires_grad=True)
        var = lib.rand(3) + 0.5
        a = lib.randn(3, 3)
        spd = a @ a.T + 3 * lib.eye(3)
        D = lib.distributions.MultivariateNormal
        d = {"diag": lambda: D(loc, lib.diag(var).unsqueeze(dim=0)),
             "full": lambda: D(loc, covariance_matrix=spd),
             "precision": lambda: D(loc, precision_matrix=spd),
             "scale_tril": lambda: D(loc, scale_tril=lib.linalg.cholesky(spd))}[kind]()
        s, r = d.sample(), d.rsample((2,))
        lp, lp2, e = d.log_prob(s), d.log_prob(r), d.entropy()
        (lp.sum() + lp2.sum() + e.sum()).backward()
        return (tuple(d.batch_shape), tuple(d.event_shape), s.requires_grad, r.requires_grad), \
            [s, r, lp, lp2, e, loc.grad, d.covariance_matrix, d.scale_tril, d.precision_matrix, d.variance, d.mean]
    shapes_t, got_t = run(torch)
    shapes_k, got_k = run(kiln)
    assert shapes_k == shapes_t
    for a, b in zip(got_k, got_t):
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-5, atol=1e-6)
    for lib in (torch, kiln):
        with pytest.raises(ValueError, match="Exactly one of covariance_matrix"):
            lib.distributions.MultivariateNormal(lib.zeros(2))
        with pytest.raises(ValueError, match="satisfy the constraint"):
            lib.distributions.MultivariateNormal(lib.zeros(2), lib.tensor([[1.0, 2.0], [0.0, 1.0]]))


# ---- sparse COO: sparse * dense, pow and the zero-preserving unary ops, index_select, sparse_mask -------
def _coo(lib, requires_grad=False):
    i = lib.tensor([[0, 1, 1, 2, 0], [1, 0, 2, 2, 1]])
    v = lib.tensor([1., -2., 3., 4., 5.], requires_grad=requires_grad)
    return lib.sparse_coo_tensor(i, v, (3, 3)), v


@pytest.mark.parametrize("op", ["mul_dense", "mul_broadcast", "dense_mul", "mul_double", "pow2", "pow_neg", "abs", "sqrt",
                                "tanh", "index_select0", "index_select1", "sparse_mask"])
def test_sparse_coo_ops(op):
    def run(lib):
        a, v = _coo(lib, requires_grad=True)
        dense = lib.arange(9.).view(3, 3).requires_grad_()
        out = {"mul_dense": lambda: a * dense,
               "mul_broadcast": lambda: a * lib.ones(3),
               "dense_mul": lambda: dense * a,
               "mul_double": lambda: a.mul(lib.ones(3, 3, dtype=lib.float64)),
               "pow2": lambda: a.pow(2),
               "pow_neg": lambda: a.pow(-1),
               "abs": lambda: a.abs(),
               "sqrt": lambda: a.abs().sqrt(),
               "tanh": lambda: a.tanh(),
               "index_select0": lambda: a.index_select(0, lib.tensor([2, 0, 0])),
               "index_select1": lambda: a.index_select(1, lib.tensor([1])),
               "sparse_mask": lambda: dense.sparse_mask(a.coalesce())}[op]()
        forward = (out.is_sparse, out.is_coalesced(), out._indices().tolist(), out.dtype == lib.float64,
                   out._values().detach().numpy(), out.to_dense().detach().numpy())
        if not backward:
            return forward
        out.to_dense().pow(2).sum().backward()
        return forward + (None if v.grad is None else v.grad.to_dense().numpy(),
                          None if dense.grad is None else dense.grad.to_dense().numpy())
    # torch differentiates only some of these (not tanh or sqrt of a sparse tensor, say)
    backward = op in ("mul_dense", "mul_broadcast", "dense_mul", "pow2", "sparse_mask", "abs")
    rt, rk = run(torch), run(kiln)
    assert rk[:4] == rt[:4]
    for a, b in zip(rk[4:], rt[4:]):
        assert (a is None) == (b is None)
        if a is not None:
            np.testing.assert_allclose(a, b, rtol=1e-6)


def test_sparse_coo_op_errors():
    for lib in (torch, kiln):
        a, _ = _coo(lib)
        with pytest.raises(RuntimeError, match="Sparse division requires a scalar or zero-dim dense tensor"):
            a / lib.ones(3, 3)
        with pytest.raises(RuntimeError, match="cannot raise to zeroth power"):
            a.pow(0)
        with pytest.raises(RuntimeError, match="sparse_mask: mask is uncoalesced"):
            lib.ones(3, 3).sparse_mask(a)


# ---- distributions: Independent (and its KL), KL between MultivariateNormals -----------------------------
def test_independent_and_mvn_kl():
    def run(lib):
        lib.manual_seed(0)
        mu = lib.randn(4, 3, requires_grad=True)
        sd = lib.rand(4, 3) + 0.5
        D = lib.distributions
        p = D.Independent(D.Normal(mu, sd), 1)
        q = D.Independent(D.Normal(lib.zeros(4, 3), lib.ones(4, 3)), 1)
        x = p.rsample()
        lp, e, kl = p.log_prob(x), p.entropy(), D.kl_divergence(p, q)
        (lp.sum() + kl.sum() + e.sum()).backward()
        m1 = D.MultivariateNormal(lib.randn(2, 3), scale_tril=lib.tril(lib.rand(3, 3)) + lib.eye(3))
        m2 = D.MultivariateNormal(lib.randn(3), covariance_matrix=2 * lib.eye(3))
        whole = D.Independent(D.Normal(mu.detach(), sd), 2)
        return ((tuple(p.batch_shape), tuple(p.event_shape), p.has_rsample, tuple(whole.batch_shape),
                 tuple(whole.event_shape)),
                [x, lp, e, kl, mu.grad, D.kl_divergence(m1, m2), p.mean, p.variance, whole.log_prob(x)])
    shapes_t, got_t = run(torch)
    shapes_k, got_k = run(kiln)
    assert shapes_k == shapes_t
    for a, b in zip(got_k, got_t):
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-6, atol=1e-6)
    for lib in (torch, kiln):
        with pytest.raises(ValueError, match="Expected reinterpreted_batch_ndims <= len"):
            lib.distributions.Independent(lib.distributions.Normal(lib.zeros(3), lib.ones(3)), 2)


# ---- transformer_timeseries / fastrcnn_box_head: smooth_l1_loss's gradient rounds as torch's backward -------
@pytest.mark.parametrize("beta", [0.1, 1 / 9, 0.3, 0.5, 1.0])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_smooth_l1_gradient_rounding(beta, reduction):
    """torch's backward is grad * (d / beta) (norm * (x / beta) * grad in its vector loop); differentiating
    0.5 d^2 / beta gives (grad / beta) * d, an ulp off for a beta that is not a power of two."""
    rng = np.random.RandomState(0)
    a = rng.randn(6, 16, 1).astype(np.float32)
    b = (rng.randn(6, 16, 1) * 0.3).astype(np.float32)
    g = rng.randn(6, 16, 1).astype(np.float32)
    res = []
    for lib in (torch, kiln):
        x = lib.from_numpy(a.copy()).requires_grad_()
        loss = lib.nn.functional.smooth_l1_loss(x, lib.from_numpy(b.copy()), beta=beta, reduction=reduction)
        loss.backward(lib.from_numpy(g.copy()) if reduction == "none" else None)
        res.append((loss.detach().numpy(), x.grad.numpy()))
    np.testing.assert_array_equal(res[1][0], res[0][0])
    np.testing.assert_array_equal(res[1][1], res[0][1])


def test_smooth_l1_double_backward():
    rng = np.random.RandomState(1)
    a, b = rng.randn(7).astype(np.float32), rng.randn(7).astype(np.float32)
    out = []
    for lib in (torch, kiln):
        x = lib.from_numpy(a.copy()).requires_grad_()
        loss = lib.nn.functional.smooth_l1_loss(x * 0.3, lib.from_numpy(b.copy()) * 0.3, beta=0.7)
        g, = lib.autograd.grad(loss, x, create_graph=True)
        h, = lib.autograd.grad((g * g).sum(), x)
        out.append((g.detach().numpy(), h.numpy()))
    np.testing.assert_allclose(out[1][0], out[0][0], rtol=1e-6)
    np.testing.assert_allclose(out[1][1], out[0][1], rtol=1e-5, atol=1e-8)


# ---- weighted cross-entropy: nll_loss's mean gradient rounds as torch's (w * -(grad / total_weight)) ------
@pytest.mark.parametrize("n", [1, 7, 37, 130, 300])
@pytest.mark.parametrize("kw", [dict(weight=True), dict(weight=True, ignore_index=3), dict(),
                                dict(weight=True, label_smoothing=0.2)])
def test_weighted_cross_entropy_gradient_rounding(n, kw):
    rng = np.random.RandomState(n)
    a = (rng.randn(n, 11) * 3).astype(np.float32)
    tg = rng.randint(0, 11, n)
    w = rng.rand(11).astype(np.float32)
    res = []
    for lib in (torch, kiln):
        x = lib.from_numpy(a.copy()).requires_grad_()
        kwargs = dict(kw)
        if kwargs.pop("weight", False):
            kwargs["weight"] = lib.from_numpy(w.copy())
        loss = lib.nn.functional.cross_entropy(x, lib.from_numpy(tg.copy()), **kwargs)
        loss.backward()
        res.append((loss.detach().numpy(), x.grad.numpy()))
    np.testing.assert_array_equal(res[1][0], res[0][0])
    np.testing.assert_array_equal(res[1][1], res[0][1])


# ---- cross_entropy: probability targets and label smoothing with ignored targets reduce as torch's ---------
@pytest.mark.parametrize("kw", [dict(probs=True), dict(probs=True, reduction="sum"), dict(probs=True, weight=True),
                                dict(probs=True, label_smoothing=0.1), dict(label_smoothing=0.1, ignore_index=3),
                                dict(label_smoothing=0.1, ignore_index=3, weight=True),
                                dict(label_smoothing=0.1, ignore_index=3, reduction="sum")])
def test_cross_entropy_reductions_round_as_torch(kw):
    """torch 1.13: -(input * target * weight).sum() / n for probability targets (one sum over everything);
    the smoothing term's mean over the samples not ignored as smooth_loss.masked_select(~ignore).mean().
    (Inputs of more than 2 dims: test_cross_entropy_over_a_class_dim_that_is_not_the_last.)"""
    rng = np.random.RandomState(0)
    for n in (1, 13, 56, 77):
        shape = (n, 11, 3) if kw.get("nd") else (n, 11)
        a = (rng.randn(*shape) * 3).astype(np.float32)
        tg = rng.randint(0, 11, (n, 3) if kw.get("nd") else n)
        w = rng.rand(11).astype(np.float32)
        p = rng.rand(*shape).astype(np.float32)
        p /= p.sum(1, keepdims=True)
        res = []
        for lib in (torch, kiln):
            x = lib.from_numpy(a.copy()).requires_grad_()
            kwargs = {k: v for k, v in kw.items() if k not in ("probs", "weight", "nd")}
            if kw.get("weight"):
                kwargs["weight"] = lib.from_numpy(w.copy())
            target = lib.from_numpy(p.copy()) if kw.get("probs") else lib.from_numpy(tg.copy())
            loss = lib.nn.functional.cross_entropy(x, target, **kwargs)
            loss.sum().backward()
            res.append((loss.detach().numpy(), x.grad.numpy()))
        np.testing.assert_array_equal(res[1][0], res[0][0])
        np.testing.assert_array_equal(res[1][1], res[0][1])


# ---- softmax / log_softmax over a dim that is not the last: torch 1.13's column loops -------------------
def test_softmax_over_inner_dims_is_torchs_bits():
    """softmax divides exp by the column sum (not times 1 / sum), log_softmax takes Sleef's log of the
    sums, columns go 8 at a time as torch's AVX2 build (also on AVX-512), and a dim followed only by
    size-1 dims ((B, T, 1) over T) takes the column loop, as torch picks its kernel by the dim. The
    gradients as torch's kernel for such dims: float sums (softmax's g * o fused into them), log_softmax's
    g - exp(o) * sum fused, exp Sleef's on the columns taken 8 at a time and the C library's on the rest."""
    rng = np.random.RandomState(0)
    shapes = [((13, 11, 8), 1), ((13, 11, 3), 1), ((13, 11, 11), 1), ((4, 40, 64), 1), ((2, 5, 7, 9), 2),
              ((8, 12, 24), 0), ((3, 7, 1100), 1), ((10, 1), 0), ((6, 17, 1), 1), ((5, 24, 17, 1), 1)]
    for shape, dim in shapes:
        a = (rng.randn(*shape) * 3).astype(np.float32)
        g = rng.randn(*shape).astype(np.float32)
        for fn in ("log_softmax", "softmax"):
            res = []
            for lib in (torch, kiln):
                x = lib.from_numpy(a.copy()).requires_grad_()
                y = getattr(lib, fn)(x, dim)
                y.backward(lib.from_numpy(g.copy()))
                res.append((y.detach().numpy(), x.grad.numpy()))
            np.testing.assert_array_equal(res[1][0], res[0][0], err_msg=f"{fn} {shape} dim={dim}")
            np.testing.assert_array_equal(res[1][1], res[0][1], err_msg=f"{fn} backward {shape} dim={dim}")


def test_cross_entropy_over_a_class_dim_that_is_not_the_last():
    rng = np.random.RandomState(2)
    for kw in [dict(), dict(label_smoothing=0.1), dict(ignore_index=2)]:
        a = (rng.randn(6, 9, 5) * 3).astype(np.float32)
        tg = rng.randint(0, 9, (6, 5))
        res = []
        for lib in (torch, kiln):
            x = lib.from_numpy(a.copy()).requires_grad_()
            loss = lib.nn.functional.cross_entropy(x, lib.from_numpy(tg.copy()), **kw)
            loss.backward()
            res.append((loss.detach().numpy(), x.grad.numpy()))
        np.testing.assert_array_equal(res[1][0], res[0][0])
        np.testing.assert_array_equal(res[1][1], res[0][1])
