"""kiln.nn.functional.ctc_loss, kiln.nn.CTCLoss and kiln.ctc_loss against torch 1.13 (forward, and
the gradient w.r.t. log_probs), plus the torch 2.x rules torch 1.13 does not have yet (empty
inputs, negative lengths), finite differences in float64 and the error classes.

The loss is the C++ op _ctc_loss (alpha recursion) and its gradient _ctc_loss_backward (beta
recursion); the op records in op_db/ctc_loss.py check them against a NumPy reference too.
"""
import numpy as np
import pytest

import kiln
import kiln.nn.functional as KF

torch = pytest.importorskip("torch")
F = torch.nn.functional

TOL = {"float32": dict(rtol=1e-5, atol=1e-6), "float64": dict(rtol=1e-10, atol=1e-12)}
REDUCTIONS = ("none", "mean", "sum")


def log_softmax(shape, dtype, seed):
    x = np.random.default_rng(seed).normal(size=shape) * 2
    x = x - x.max(-1, keepdims=True)
    return (x - np.log(np.exp(x).sum(-1, keepdims=True))).astype(dtype)


def lengths_as(values, how, lib):
    if how == "list":
        return list(values)
    if how == "tuple":
        return tuple(values)
    dtype = {"tensor": "int64", "tensor32": "int32"}[how]
    return lib.tensor(np.asarray(values, dtype=dtype))


def run(lib, lp, targets, il, tl, how="list", weights=None, **kw):
    """The loss and log_probs' gradient, for torch or kiln (weights: the 'none' losses' gradient)."""
    x = lib.tensor(lp).requires_grad_(True)
    fn = F.ctc_loss if lib is torch else KF.ctc_loss
    loss = fn(x, lib.tensor(targets), lengths_as(il, how, lib), lengths_as(tl, how, lib), **kw)
    g = lib.tensor(weights) if weights is not None and loss.dim() else lib.ones_like(loss)
    loss.backward(g)
    return loss.detach().numpy(), x.grad.numpy()


def check_against_torch(lp, targets, il, tl, how="list", **kw):
    dtype = lp.dtype.name
    weights = np.random.default_rng(7).uniform(0.5, 2.0, size=lp.shape[1] if lp.ndim == 3 else 1).astype(dtype)
    t_loss, t_grad = run(torch, lp, targets, il, tl, how, weights, **kw)
    k_loss, k_grad = run(kiln, lp, targets, il, tl, how, weights, **kw)
    assert k_loss.shape == t_loss.shape and k_loss.dtype == t_loss.dtype
    np.testing.assert_allclose(k_loss, t_loss, equal_nan=True, **TOL[dtype])
    np.testing.assert_allclose(k_grad, t_grad, equal_nan=True, **TOL[dtype])
    return k_loss, k_grad


def random_case(seed, concatenated):
    """Random (T, N, C), blank, labels that are never the blank, lengths with 1 <= input length <= T
    (torch 1.13 mishandles input length 0; see test_empty_input) and 0 <= target length <= S."""
    rng = np.random.default_rng(seed)
    T, N, C = int(rng.integers(1, 14)), int(rng.integers(1, 6)), int(rng.integers(2, 9))
    S = int(rng.integers(1, T + 2))
    blank = int(rng.integers(0, C))
    labels = [c for c in range(C) if c != blank]
    il = rng.integers(1, T + 1, size=N)
    tl = rng.integers(0, S + 1, size=N)
    padded = rng.choice(labels, size=(N, S))
    targets = np.concatenate([padded[b, :tl[b]] for b in range(N)]) if concatenated else padded
    return T, N, C, blank, targets.astype(np.int64), il.tolist(), tl.tolist()


# ----------------------------------------------------------------------------- against torch
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("concatenated", [False, True], ids=["padded", "concatenated"])
@pytest.mark.parametrize("seed", range(8))
def test_random_shapes(seed, concatenated, dtype):
    T, N, C, blank, targets, il, tl = random_case(seed, concatenated)
    lp = log_softmax((T, N, C), dtype, seed)
    how = ("list", "tuple", "tensor", "tensor32")[seed % 4]
    for reduction in REDUCTIONS:
        for zero_infinity in (False, True):
            check_against_torch(lp, targets, il, tl, how, blank=blank, reduction=reduction,
                                zero_infinity=zero_infinity)


@pytest.mark.parametrize("how", ["list", "tuple", "tensor", "tensor32"])
@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_torch_docs_example(how, reduction):
    """torch's documented sizes: T 50, N 16, C 20, targets up to 30 labels."""
    rng = np.random.default_rng(3)
    lp = log_softmax((50, 16, 20), "float32", 3)
    targets = rng.integers(1, 20, size=(16, 30))
    tl = rng.integers(10, 30, size=16).tolist()
    il = rng.integers(40, 51, size=16).tolist()
    check_against_torch(lp, targets, il, tl, how, reduction=reduction)
    flat = np.concatenate([targets[b, :tl[b]] for b in range(16)])
    check_against_torch(lp, flat, il, tl, how, reduction=reduction)


def test_padded_and_concatenated_targets_agree():
    lp = log_softmax((8, 3, 6), "float64", 1)
    padded = np.array([[1, 2, 3, 9], [4, 4, 9, 9], [5, 9, 9, 9]])   # 9: padding past the lengths, never read
    flat = np.array([1, 2, 3, 4, 4, 5])
    a = run(kiln, lp, padded, [8, 7, 8], [3, 2, 1], reduction="none")
    b = run(kiln, lp, flat, [8, 7, 8], [3, 2, 1], reduction="none")
    np.testing.assert_array_equal(a[0], b[0])
    np.testing.assert_array_equal(a[1], b[1])
    check_against_torch(lp, flat, [8, 7, 8], [3, 2, 1], reduction="none")


def test_repeated_labels_need_blanks():
    """[1, 1, 1] needs 5 frames (1 _ 1 _ 1): 4 give inf, 5 give the one path's log-probability."""
    lp = log_softmax((5, 2, 3), "float64", 2)
    targets = np.array([[1, 1, 1], [1, 1, 1]])
    loss, _ = check_against_torch(lp, targets, [4, 5], [3, 3], reduction="none")
    assert loss[0] == np.inf
    path = [1, 0, 1, 0, 1]
    np.testing.assert_allclose(loss[1], -sum(lp[t, 1, c] for t, c in enumerate(path)), rtol=1e-12)
    # distinct labels need no blank: [1, 2, 1] fits 3 frames
    loss, _ = check_against_torch(lp, np.array([[1, 2, 1], [1, 2, 1]]), [3, 4], [3, 3], reduction="none")
    np.testing.assert_allclose(loss[0], -(lp[0, 0, 1] + lp[1, 0, 2] + lp[2, 0, 1]), rtol=1e-12)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_zero_infinity_with_impossible_alignments(reduction, dtype):
    """Targets longer than the inputs: inf and nan gradients, or 0 and zero gradients."""
    lp = log_softmax((4, 3, 5), dtype, 4)
    targets = np.array([[1, 2, 3, 4, 1], [2, 3, 0, 0, 0], [1, 1, 2, 2, 0]])
    il, tl = [4, 4, 4], [5, 2, 4]    # sample 0: 5 labels in 4 frames; sample 2: 1 1 2 2 needs 6
    loss, grad = check_against_torch(lp, targets, il, tl, reduction=reduction, zero_infinity=False)
    assert np.isinf(loss).any() and np.isnan(grad[:, 0]).all()
    loss, grad = check_against_torch(lp, targets, il, tl, reduction=reduction, zero_infinity=True)
    assert np.isfinite(loss).all()
    assert (grad[:, 0] == 0).all() and (grad[:, 2] == 0).all() and (grad[:, 1] != 0).any()


@pytest.mark.parametrize("blank", [0, 2, 5])
def test_blank_other_than_zero(blank):
    lp = log_softmax((7, 2, 6), "float32", 5)
    labels = [c for c in range(6) if c != blank]
    targets = np.array([[labels[0], labels[1], labels[1]], [labels[4], labels[2], labels[0]]])
    for reduction in REDUCTIONS:
        check_against_torch(lp, targets, [7, 6], [3, 2], blank=blank, reduction=reduction)


@pytest.mark.parametrize("how", ["list", "tensor"])
@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_unbatched(how, reduction):
    lp = log_softmax((6, 4), "float32", 6)
    loss, _ = check_against_torch(lp, np.array([1, 3, 3]), [6], [3], how, reduction=reduction)
    assert loss.shape == ()
    check_against_torch(lp, np.array([[1, 3, 3, 0]]), [5], [3], how, reduction=reduction)   # padded (1, S)
    # 0-dim length tensors
    t = F.ctc_loss(torch.tensor(lp), torch.tensor([1, 2]), torch.tensor(6), torch.tensor(2), reduction=reduction)
    k = KF.ctc_loss(kiln.tensor(lp), kiln.tensor([1, 2]), kiln.tensor(6), kiln.tensor(2), reduction=reduction)
    np.testing.assert_allclose(k.numpy(), t.numpy(), **TOL["float32"])


def test_target_length_zero():
    lp = log_softmax((5, 2, 3), "float64", 8)
    loss, _ = check_against_torch(lp, np.array([[1, 2], [1, 2]]), [5, 3], [0, 0], reduction="none")
    np.testing.assert_allclose(loss, [-lp[:5, 0, 0].sum(), -lp[:3, 1, 0].sum()], rtol=1e-12)
    check_against_torch(lp, np.array([1, 2]), [5, 3], [0, 2], reduction="mean")


def test_empty_input():
    """torch 2.x: an input length of 0 gives loss 0 for an empty target, inf otherwise, and no
    gradient (torch 1.13 read out of range there, so this is checked against those values)."""
    lp = log_softmax((4, 3, 3), "float64", 9)
    loss, grad = run(kiln, lp, np.array([[1, 2], [1, 2], [2, 1]]), [0, 0, 4], [0, 2, 2], reduction="none")
    assert loss[0] == 0 and loss[1] == np.inf and np.isfinite(loss[2])
    assert (grad[:, :2] == 0).all()
    want = F.ctc_loss(torch.tensor(lp[:, 2:]), torch.tensor([[2, 1]]), [4], [2], reduction="none")
    np.testing.assert_allclose(loss[2], want.numpy()[0], rtol=1e-12)
    # mean: each loss over max(target length, 1); zero_infinity drops the inf
    mean = KF.ctc_loss(kiln.tensor(lp), kiln.tensor([[1, 2], [1, 2], [2, 1]]), [0, 0, 4], [0, 2, 2],
                       zero_infinity=True)
    np.testing.assert_allclose(mean.item(), (0 + 0 + loss[2] / 2) / 3, rtol=1e-12)
    empty = KF.ctc_loss(kiln.zeros(0, 2, 3, dtype=kiln.float64), kiln.tensor([[1], [1]]), [0, 0], [0, 1],
                        reduction="none")
    assert empty.tolist() == [0.0, float("inf")]


def test_target_dtypes_and_layouts():
    """int32 targets, floating targets (torch casts them to int64), non-contiguous log_probs and
    targets."""
    lp = log_softmax((6, 3, 5), "float32", 10)
    targets = np.array([[1, 2, 2], [3, 4, 1], [2, 2, 2]])
    want = check_against_torch(lp, targets, [6, 6, 6], [3, 2, 1])
    for t in (targets.astype(np.int32), targets.astype(np.float32)):
        got = KF.ctc_loss(kiln.tensor(lp), kiln.tensor(t), [6, 6, 6], [3, 2, 1])
        np.testing.assert_allclose(got.item(), want[0], **TOL["float32"])
    # (N, T, C) transposed: log_probs non-contiguous; targets every other column
    base = kiln.tensor(np.ascontiguousarray(lp.transpose(1, 0, 2))).requires_grad_(True)
    wide = kiln.tensor(np.repeat(targets, 2, axis=1))
    got = KF.ctc_loss(base.transpose(0, 1), wide[:, ::2], [6, 6, 6], [3, 2, 1])
    got.backward()
    np.testing.assert_allclose(got.item(), want[0], **TOL["float32"])
    np.testing.assert_allclose(base.grad.numpy().transpose(1, 0, 2), want[1], **TOL["float32"])


def test_through_log_softmax():
    """The usual use: raw scores -> log_softmax -> ctc_loss, gradients w.r.t. the scores."""
    x = np.random.default_rng(11).normal(size=(9, 4, 7)).astype(np.float32)
    targets = np.random.default_rng(12).integers(1, 7, size=(4, 4))
    il, tl = [9, 8, 9, 7], [4, 3, 2, 4]
    tx = torch.tensor(x, requires_grad=True)
    F.ctc_loss(tx.log_softmax(2), torch.tensor(targets), il, tl).backward()
    kx = kiln.tensor(x).requires_grad_(True)
    KF.ctc_loss(kx.log_softmax(2), kiln.tensor(targets), il, tl).backward()
    np.testing.assert_allclose(kx.grad.numpy(), tx.grad.numpy(), rtol=1e-5, atol=1e-6)


def test_module_and_function_forms():
    lp = log_softmax((6, 2, 4), "float32", 13)
    targets = np.array([[1, 2], [3, 3]])
    for kw in ({}, {"blank": 0, "reduction": "sum"}, {"reduction": "none", "zero_infinity": True}):
        t = torch.nn.CTCLoss(**kw)(torch.tensor(lp), torch.tensor(targets), torch.tensor([6, 5]), torch.tensor([2, 2]))
        m = kiln.nn.CTCLoss(**kw)
        assert m.blank == kw.get("blank", 0) and m.reduction == kw.get("reduction", "mean")
        k = m(kiln.tensor(lp), kiln.tensor(targets), kiln.tensor([6, 5]), kiln.tensor([2, 2]))
        np.testing.assert_allclose(k.numpy(), t.numpy(), **TOL["float32"])
        code = REDUCTIONS.index(kw.get("reduction", "mean"))
        for il, tl in (([6, 5], [2, 2]), (kiln.tensor([6, 5]), kiln.tensor([2, 2]))):
            direct = kiln.ctc_loss(kiln.tensor(lp), kiln.tensor(targets), il, tl, kw.get("blank", 0), code,
                                   kw.get("zero_infinity", False))
            np.testing.assert_array_equal(direct.numpy(), k.numpy())
    assert kiln.ctc_loss(kiln.tensor(lp), kiln.tensor(targets), [6, 5], [2, 2]).grad_fn is None


def test_saved_values_and_kernels():
    """_ctc_loss returns the losses and the forward variables; _ctc_loss_backward's gradient is
    log_probs' gradient of the losses weighted by grad."""
    lp = log_softmax((5, 2, 4), "float64", 14)
    targets = kiln.tensor([[1, 2], [3, 0]])
    nll, log_alpha = kiln._C._ctc_loss(kiln.tensor(lp), targets, [5, 4], [2, 1], 0, False)
    assert tuple(log_alpha.shape) == (2, 5, 5)
    want = F.ctc_loss(torch.tensor(lp), torch.tensor([[1, 2], [3, 0]]), [5, 4], [2, 1], reduction="none")
    np.testing.assert_allclose(nll.numpy(), want.numpy(), rtol=1e-12)
    g = kiln.tensor([1.0, 0.5], dtype=kiln.float64)
    grad = kiln._C._ctc_loss_backward(g, kiln.tensor(lp), targets, [5, 4], [2, 1], nll, log_alpha, 0, False)
    x = torch.tensor(lp, requires_grad=True)
    F.ctc_loss(x, torch.tensor([[1, 2], [3, 0]]), [5, 4], [2, 1], reduction="none").backward(
        torch.tensor([1.0, 0.5], dtype=torch.float64))
    np.testing.assert_allclose(grad.numpy(), x.grad.numpy(), rtol=1e-12, atol=1e-14)
    assert (grad.numpy()[4, 1] == 0).all()   # past sample 1's input length


# ----------------------------------------------------------------------------- finite differences
@pytest.mark.parametrize("how", ["list", "tensor"])
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("zero_infinity", [False, True])
def test_gradcheck_float64(how, reduction, zero_infinity):
    """Finite differences of scores -> log_softmax -> ctc_loss (torch's gradient formula assumes
    normalized log_probs, as torch's own gradchecks do); zero_infinity with an impossible sample."""
    x = kiln.tensor(np.random.default_rng(15).normal(size=(5, 3, 4))).requires_grad_(True)
    targets = kiln.tensor([[1, 2, 2], [3, 1, 0], [2, 2, 2]])
    il, tl = [5, 4, 5], [3, 2, 3 if zero_infinity else 1]   # 2 2 2 needs 5 frames: possible only just

    def fn(v):
        return KF.ctc_loss(v.log_softmax(2), targets, lengths_as(il, how, kiln), lengths_as(tl, how, kiln),
                           reduction=reduction, zero_infinity=zero_infinity)
    assert kiln.autograd.gradcheck(fn, [x], eps=1e-6, atol=1e-6, rtol=1e-5)


def test_central_differences_by_hand():
    """A few coordinates by hand, blank 3, unbatched, concatenated targets."""
    x = np.random.default_rng(16).normal(size=(6, 4))
    targets, eps = kiln.tensor([0, 1, 1]), 1e-6

    def loss(v):
        return KF.ctc_loss(kiln.tensor(v).log_softmax(1), targets, [6], [3], blank=3).item()
    kx = kiln.tensor(x).requires_grad_(True)
    KF.ctc_loss(kx.log_softmax(1), targets, [6], [3], blank=3).backward()
    for t, c in [(0, 0), (2, 1), (3, 3), (5, 2)]:
        hi, lo = x.copy(), x.copy()
        hi[t, c] += eps
        lo[t, c] -= eps
        np.testing.assert_allclose(kx.grad.numpy()[t, c], (loss(hi) - loss(lo)) / (2 * eps), rtol=1e-5, atol=1e-8)


# ----------------------------------------------------------------------------- errors
def _lp(lib, *shape):
    return lib.zeros(*(shape or (5, 2, 4))).log_softmax(-1)


def _tg(lib):
    return lib.tensor([[1, 2], [3, 3]])


ERRORS = {
    "input length > T": lambda lib, f: f(_lp(lib), _tg(lib), [6, 5], [2, 2]),
    "target length > padded width": lambda lib, f: f(_lp(lib), _tg(lib), [5, 5], [3, 2]),
    "blank = C": lambda lib, f: f(_lp(lib), _tg(lib), [5, 5], [2, 2], blank=4),
    "negative blank": lambda lib, f: f(_lp(lib), _tg(lib), [5, 5], [2, 2], blank=-1),
    "too many input lengths": lambda lib, f: f(_lp(lib), _tg(lib), [5, 5, 5], [2, 2]),
    "too few target lengths": lambda lib, f: f(_lp(lib), _tg(lib), [5, 5], [2]),
    "tensor lengths of the wrong size": lambda lib, f: f(_lp(lib), _tg(lib), lib.tensor([5]), lib.tensor([2, 2])),
    "concatenated targets of the wrong size": lambda lib, f: f(_lp(lib), lib.tensor([1, 2, 3]), [5, 5], [2, 2]),
    "padded targets of the wrong batch": lambda lib, f: f(_lp(lib), lib.tensor([[1, 2]]), [5, 5], [2, 2]),
    "3-D targets": lambda lib, f: f(_lp(lib), lib.ones(2, 2, 2, dtype=lib.int64), [5, 5], [2, 2]),
    "0-dim targets": lambda lib, f: f(_lp(lib), lib.tensor(1), [5, 5], [1, 1]),
    "1-D log_probs": lambda lib, f: f(_lp(lib, 5), lib.tensor([1]), [5], [1]),
    "0-dim log_probs": lambda lib, f: f(lib.zeros([]), lib.tensor([1]), [5], [1]),
    "4-D log_probs": lambda lib, f: f(_lp(lib, 5, 2, 4, 1), _tg(lib), [5, 5], [2, 2]),
    "float16 log_probs": lambda lib, f: f(_lp(lib).half(), _tg(lib), [5, 5], [2, 2]),
    "int64 log_probs": lambda lib, f: f(lib.zeros(5, 2, 4, dtype=lib.int64), _tg(lib), [5, 5], [2, 2]),
    "float input lengths": lambda lib, f: f(_lp(lib), _tg(lib), lib.tensor([5.0, 5.0]), lib.tensor([2, 2])),
    "bool target lengths": lambda lib, f: f(_lp(lib), _tg(lib), lib.tensor([5, 5]), lib.tensor([True, True])),
    "int lengths": lambda lib, f: f(_lp(lib), _tg(lib), 5, 2),
    "list and tensor lengths mixed": lambda lib, f: f(_lp(lib), _tg(lib), [5, 5], lib.tensor([2, 2])),
    "unknown reduction": lambda lib, f: f(_lp(lib), _tg(lib), [5, 5], [2, 2], reduction="avg"),
}


@pytest.mark.parametrize("case", ERRORS, ids=list(ERRORS))
def test_errors_match_torch(case):
    with pytest.raises(Exception) as want:
        ERRORS[case](torch, F.ctc_loss)
    with pytest.raises(want.type) as got:
        ERRORS[case](kiln, KF.ctc_loss)
    assert type(got.value) is want.type, (case, got.value, want.value)
    message = str(got.value)
    assert "ctc_loss" in message or "reduction" in message or "Dimension out of range" in message, message


# torch 2.x rejects these; torch 1.13 read out of range instead (no check to compare with).
TORCH2_ERRORS = {
    "negative input length": (lambda f: f(_lp(kiln), _tg(kiln), [5, -1], [2, 2]),
                              "input_lengths to have value at least 0, but got value -1"),
    "negative target length": (lambda f: f(_lp(kiln), _tg(kiln), [5, 5], [2, -1]),
                               "target_lengths to have value at least 0, but got value -1"),
    "negative tensor length": (lambda f: f(_lp(kiln), _tg(kiln), kiln.tensor([5, 5]), kiln.tensor([-2, 2])),
                               "target_lengths to have value at least 0, but got value -2"),
}


@pytest.mark.parametrize("case", TORCH2_ERRORS, ids=list(TORCH2_ERRORS))
def test_negative_lengths_raise(case):
    call, match = TORCH2_ERRORS[case]
    with pytest.raises(RuntimeError, match=match):
        call(KF.ctc_loss)


def test_messages_name_the_op_and_argument():
    cases = [(ERRORS["input length > T"], "input_lengths to have value at most 5, but got value 6"),
             (ERRORS["blank = C"], "blank must be in label range"),
             (ERRORS["float input lengths"], "input_lengths must be integral"),
             (ERRORS["concatenated targets of the wrong size"], "targets of size sum\\(target_lengths\\) = 4"),
             (ERRORS["float16 log_probs"], "ctc_loss_cpu: not implemented for 'float16'")]
    for call, match in cases:
        with pytest.raises(RuntimeError, match=match) as info:
            call(kiln, KF.ctc_loss)
        assert "ctc_loss" in str(info.value)
    with pytest.raises(IndexError, match="target label 9 .*out of range for 4 classes"):
        KF.ctc_loss(_lp(kiln), kiln.tensor([[1, 9], [3, 3]]), [5, 5], [2, 2])


def test_second_derivative_raises():
    """_ctc_loss_backward has no derivative (torch's neither): kiln refuses as soon as a graph of it
    would be built (NotImplementedError, as for the fused recurrent kernels' backward ops)."""
    x = kiln.tensor(log_softmax((4, 1, 3), "float64", 17)).requires_grad_(True)
    loss = KF.ctc_loss(x, kiln.tensor([[1, 2]]), [4], [2])
    with pytest.raises(NotImplementedError, match="_ctc_loss_backward"):
        kiln.autograd.grad([loss], [x], create_graph=True)
    (g,) = kiln.autograd.grad([loss], [x])   # the first derivative alone is fine
    assert g.shape == x.shape


def test_autocast_runs_in_float32():
    """As torch's CPU autocast (ctc_loss is on its fp32 list): bfloat16 log_probs are computed in
    float32, and the gradient comes back in bfloat16."""
    lp = log_softmax((5, 2, 4), "float32", 18)
    targets = np.array([[1, 2], [3, 3]])
    want = F.ctc_loss(torch.tensor(lp), torch.tensor(targets), [5, 5], [2, 2])
    x = kiln.tensor(lp).bfloat16().requires_grad_(True)
    with kiln.autocast("cpu", dtype=kiln.bfloat16):
        for il, tl in (([5, 5], [2, 2]), (kiln.tensor([5, 5]), kiln.tensor([2, 2]))):
            loss = KF.ctc_loss(x, kiln.tensor(targets), il, tl)
            assert loss.dtype == kiln.float32
            np.testing.assert_allclose(loss.item(), want.item(), rtol=2e-2)
    loss.backward()
    assert x.grad.dtype == kiln.bfloat16
