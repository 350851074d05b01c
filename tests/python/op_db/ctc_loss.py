"""Records of the CTC loss: ctc_loss (int-list and tensor lengths) and the kernels under it,
_ctc_loss (per-sample losses and the forward variables log_alpha) and _ctc_loss_backward.
Listed with the other losses (family nn_losses).

The reference is the recursion of Graves et al. (2006) written again in NumPy, float64, log space:
alpha (forward), beta (backward), and torch's gradient w.r.t. log_probs,
(exp(lp) - exp(log(sum alpha beta) + nll - lp)) * grad, which assumes log_probs came from
log_softmax (its exp(lp) term vanishes through log_softmax's backward): gradcheck therefore
differentiates log_softmax(x) (gradcheck_wrapper), as torch's own CTC gradchecks do.
tests/python/test_ctc_loss.py compares against torch itself.
"""
import numpy as np

from .record import FLOATS, ErrorInput, OpRecord, Sample, values

FAMILY = "nn_losses"
NO_ZERO_DIM = "log_probs is (T, N, C) or (T, C)"
NO_REDUCED = "torch's CPU ctc_loss is float32/float64 only ('ctc_loss_cpu' not implemented for 'Half')"
NO_GRADGRAD = "_ctc_loss_backward has no derivative (as torch's): a second derivative raises"
NEG = -np.inf


def _log_softmax(x):
    m = x.max(-1, keepdims=True)
    return x - m - np.log(np.exp(x - m).sum(-1, keepdims=True))


def _log_probs(shape, d, seed=0):
    x = values(shape, "float64", seed=seed)
    return (_log_softmax(x) if x.size else x).astype(d)


def _labels(targets, target_lengths):
    """Each sample's labels, from padded (N, S) or concatenated targets."""
    t = np.asarray(targets).astype(np.int64)
    if t.ndim == 2:
        return [t[b, :n] for b, n in enumerate(target_lengths)]
    offsets = np.concatenate([[0], np.cumsum(target_lengths)]).astype(np.int64)
    return [t[offsets[b]:offsets[b + 1]] for b in range(len(target_lengths))]


def _lse(*xs):
    out = NEG
    for x in xs:
        out = np.logaddexp(out, x)
    return out


def _alpha(lp, ext, il, width):
    """lp (T, C); ext the extended target (blanks around the labels). alpha (T, width) and nll."""
    T, S = lp.shape[0], len(ext)
    alpha = np.full((T, width), NEG)
    tl = (S - 1) // 2
    if il == 0:
        return alpha, (0.0 if tl == 0 else np.inf)
    alpha[0, 0] = lp[0, ext[0]]
    if tl:
        alpha[0, 1] = lp[0, ext[1]]
    for t in range(1, il):
        for s in range(S):
            terms = [alpha[t - 1, s]]
            if s > 0:
                terms.append(alpha[t - 1, s - 1])
            if s > 1 and ext[s - 2] != ext[s]:
                terms.append(alpha[t - 1, s - 2])
            alpha[t, s] = _lse(*terms) + lp[t, ext[s]]
    nll = -alpha[il - 1, 0] if tl == 0 else -_lse(alpha[il - 1, S - 1], alpha[il - 1, S - 2])
    return alpha, nll


def _grad(lp, ext, il, alpha, nll, gr, zero_infinity):
    T, C = lp.shape
    S = len(ext)
    g = np.zeros((T, C))
    if il == 0 or (zero_infinity and nll == np.inf):
        return g
    beta = np.full((il, S), NEG)
    beta[il - 1, S - 1] = lp[il - 1, ext[S - 1]]
    if S > 1:
        beta[il - 1, S - 2] = lp[il - 1, ext[S - 2]]
    for t in range(il - 2, -1, -1):
        for s in range(S):
            terms = [beta[t + 1, s]]
            if s < S - 1:
                terms.append(beta[t + 1, s + 1])
            if s < S - 2 and ext[s + 2] != ext[s]:
                terms.append(beta[t + 1, s + 2])
            beta[t, s] = _lse(*terms) + lp[t, ext[s]]
    with np.errstate(invalid="ignore", over="ignore"):
        for t in range(il):
            collected = np.full(C, NEG)
            for s in range(S):
                collected[ext[s]] = _lse(collected[ext[s]], alpha[t, s] + beta[t, s])
            g[t] = (np.exp(lp[t]) - np.exp(collected + nll - lp[t])) * gr
    return g


def _samples_math(log_probs, targets, input_lengths, target_lengths, blank):
    """Per sample: (lp (T, C), extended target, input length, alpha, nll), and the alpha width."""
    lp = np.asarray(log_probs, dtype=np.float64)
    labels = _labels(targets, target_lengths)
    width = 2 * max([int(n) for n in target_lengths], default=0) + 1
    out = []
    for b in range(lp.shape[1]):
        ext = [blank]
        for c in labels[b]:
            ext += [int(c), blank]
        alpha, nll = _alpha(lp[:, b], ext, int(input_lengths[b]), width)
        out.append((lp[:, b], ext, int(input_lengths[b]), alpha, nll))
    return out, width


def _ctc_ref(log_probs, targets, input_lengths, target_lengths, blank=0, zero_infinity=False):
    per, width = _samples_math(log_probs, targets, input_lengths, target_lengths, blank)
    T = log_probs.shape[0]
    nll = np.array([p[4] for p in per], dtype=np.float64)
    alpha = np.stack([p[3] for p in per]) if per else np.zeros((0, T, width))
    return nll, alpha


def _ctc_backward_ref(grad, log_probs, targets, input_lengths, target_lengths, nll, log_alpha, blank,
                      zero_infinity=False):
    per, _ = _samples_math(log_probs, targets, input_lengths, target_lengths, blank)
    g = np.zeros(log_probs.shape)
    for b, (lp, ext, il, alpha, loss) in enumerate(per):
        g[:, b] = _grad(lp, ext, il, alpha, loss, float(grad[b]), zero_infinity)
    return g


# reduction 0: torch.ctc_loss's binding reads its default (Mean) as 0
def ctc_loss_ref(log_probs, targets, input_lengths, target_lengths, blank=0, reduction=0, zero_infinity=False):
    batched = log_probs.ndim == 3
    lp = log_probs if batched else log_probs[:, None]
    il = [int(v) for v in np.ravel(input_lengths)]
    tl = [int(v) for v in np.ravel(target_lengths)]
    nll, _ = _ctc_ref(lp, targets, il, tl, blank)
    if zero_infinity:
        nll = np.where(nll == np.inf, 0.0, nll)
    if reduction == 1:   # the mean of no losses is nan (np.mean would warn)
        per = nll / np.maximum(np.array(tl, dtype=np.float64), 1)
        return np.asarray(per.sum() / per.size if per.size else np.nan)
    if reduction == 2:
        return nll.sum()
    return nll if batched else nll[0]


# ----------------------------------------------------------------------------- samples
def _cases(d, small=False):
    """(log_probs, targets, input_lengths, target_lengths, blank, zero_infinity, note): padded and
    concatenated targets, repeated labels, impossible alignments, empty targets and inputs, blank
    other than 0, unbatched; small: finite losses only, for gradcheck."""
    i64 = lambda v: np.asarray(v, dtype=np.int64)  # noqa: E731
    out = []
    if small:
        lp = _log_probs((4, 2, 3), d, seed=1)
        out.append((lp, i64([[1, 2], [2, 2]]), [4, 4], [2, 1], 0, False, "padded"))
        out.append((lp, i64([1, 1, 2]), [4, 3], [2, 1], 0, False, "concatenated, repeated label"))
        out.append((lp, i64([[0, 1], [1, 0]]), [3, 4], [2, 0], 2, False, "blank 2, an empty target"))
        out.append((_log_probs((3, 4), d, seed=2), i64([1, 3]), [3], [2], 0, False, "unbatched"))
        out.append((lp, i64([[1, 1], [2, 1]]), [2, 4], [2, 2], 0, True, "zero_infinity, an impossible alignment"))
        return out
    lp = _log_probs((6, 3, 5), d)
    padded = i64([[1, 2, 3], [2, 2, 0], [4, 1, 1]])
    out.append((lp, padded, [6, 5, 6], [3, 2, 3], 0, False, "padded, repeated labels"))
    out.append((lp, i64([1, 2, 3, 2, 2, 4, 1, 1]), [6, 5, 6], [3, 2, 3], 0, False, "concatenated"))
    out.append((lp, i64([[0, 1, 2], [3, 3, 3], [2, 0, 1]]), [6, 6, 4], [3, 3, 1], 4, False, "blank 4"))
    out.append((lp, i64([[1, 1, 1], [1, 2, 3], [2, 2, 2]]), [4, 2, 6], [3, 3, 2], 0, False, "impossible alignments: inf"))
    out.append((lp, i64([[1, 1, 1], [1, 2, 3], [2, 2, 2]]), [4, 2, 6], [3, 3, 2], 0, True, "zero_infinity"))
    out.append((lp, i64([[1, 2], [3, 4], [0, 0]]), [6, 0, 0], [0, 2, 0], 0, False, "empty target, empty inputs"))
    out.append((_log_probs((5, 4), d, seed=3), i64([3, 1, 3]), [5], [3], 0, False, "unbatched, concatenated"))
    out.append((_log_probs((5, 1, 4), d, seed=4), i64([[2, 1, 0, 0]]), [5], [2], 0, False, "padding beyond the length"))
    out.append((np.zeros((0, 2, 3), dtype=d), i64([[1, 2], [1, 2]]), [0, 0], [0, 2], 0, False, "T = 0"))
    out.append((np.zeros((4, 0, 3), dtype=d), np.zeros((0, 2), dtype=np.int64), [], [], 0, False, "no samples"))
    return out


def _kernel_samples(d, small=False):
    """The cases as _ctc_loss takes them (an unbatched input given a batch dim of 1); for gradcheck
    no infinite loss (its finite differences are nan), which only ctc_loss's zero_infinity zeroes."""
    return [Sample((lp if lp.ndim == 3 else lp[:, None], tg, il, tl, blank, zi), note=note)
            for lp, tg, il, tl, blank, zi, note in _cases(d, small) if not (small and "impossible" in note)]


def _backward_samples(d):
    out = []
    for s in _kernel_samples(d):
        lp, tg, il, tl, blank, zi = s.args
        nll, alpha = _ctc_ref(lp, tg, il, tl, blank)
        grad = values(nll.shape, "float64", "positive", seed=5)
        with np.errstate(invalid="ignore"):   # an integer dtype's sample (for the refusal): inf does not cast
            out.append(Sample((grad.astype(d), lp, tg, il, tl, nll.astype(d), alpha.astype(d), blank, zi),
                              note=s.note))
    return out


def _public_samples(tensors, small=False):
    def samples(d):
        out = []
        for lp, tg, il, tl, blank, zi, note in _cases(d, small):
            if tensors:
                il, tl = np.asarray(il, dtype=np.int64), np.asarray(tl, dtype=np.int64)
            for r in ((1,) if small else (0, 1, 2)):
                out.append(Sample((lp, tg, il, tl, blank, r, zi), note=f"{note}, reduction {r}"))
        if tensors and not small:   # int32 lengths, 0-dim lengths of an unbatched input
            lp = _log_probs((5, 4), d, seed=3)
            out.append(Sample((lp, np.asarray([3, 1], dtype=np.int64), np.asarray(5, dtype=np.int32),
                               np.asarray(2, dtype=np.int32)), note="unbatched, 0-dim int32 lengths"))
        return out
    return samples


def _log_softmax_wrapper(i, x):
    """gradcheck differentiates log_softmax(x): torch's gradient assumes normalized log_probs."""
    return x.log_softmax(-1) if i == 0 else x


# ----------------------------------------------------------------------------- errors
def _errors(public):
    e = ErrorInput

    def call(k, lp, tg, il, tl, blank=0):
        if public:
            return k.ctc_loss(lp, tg, il, tl, blank)
        return k._C._ctc_loss(lp, tg, il, tl, blank)

    lp = lambda k, *shape: k.zeros(*(shape or (5, 2, 4))).log_softmax(-1)  # noqa: E731
    tg = lambda k: k.tensor([[1, 2], [3, 3]])  # noqa: E731
    out = [
        e(lambda k: call(k, lp(k), tg(k), [6, 5], [2, 2]), RuntimeError, "input_lengths to have value at most 5",
          "input length > T"),
        e(lambda k: call(k, lp(k), tg(k), [5, -1], [2, 2]), RuntimeError, "input_lengths to have value at least 0",
          "negative input length"),
        e(lambda k: call(k, lp(k), tg(k), [5, 5], [2, -1]), RuntimeError, "target_lengths to have value at least 0",
          "negative target length"),
        e(lambda k: call(k, lp(k), tg(k), [5, 5], [3, 2]), RuntimeError, "size at least 3", "target length > S"),
        e(lambda k: call(k, lp(k), tg(k), [5, 5], [2, 2], 4), RuntimeError, "blank must be in label range",
          "blank = C"),
        e(lambda k: call(k, lp(k), tg(k), [5, 5], [2, 2], -1), RuntimeError, "blank must be in label range",
          "negative blank"),
        e(lambda k: call(k, lp(k), tg(k), [5, 5, 5], [2, 2]), RuntimeError, "input_lengths must be of size batch_size",
          "three input lengths for two samples"),
        e(lambda k: call(k, lp(k), tg(k), [5, 5], [2]), RuntimeError, "target_lengths must be of size batch_size",
          "one target length for two samples"),
        e(lambda k: call(k, lp(k), k.tensor([1, 2, 3]), [5, 5], [2, 2]), RuntimeError, "sum\\(target_lengths\\) = 4",
          "concatenated targets of the wrong size"),
        e(lambda k: call(k, lp(k), k.ones(2, 2, 2, dtype=k.int64), [5, 5], [2, 2]), RuntimeError,
          "1 to 2 dimensions", "3-D targets"),
        e(lambda k: call(k, lp(k), k.tensor([[1, 7], [1, 1]]), [5, 5], [2, 2]), IndexError, "target label 7 .* out of range for 4 classes", "label >= C"),
        e(lambda k: call(k, lp(k).half(), tg(k), [5, 5], [2, 2]), RuntimeError, "not implemented for 'float16'",
          "float16 log_probs"),
    ]
    if public:
        out += [
            e(lambda k: k.ctc_loss(lp(k), tg(k), k.tensor([5.0, 5.0]), k.tensor([2, 2])), RuntimeError,
              "input_lengths must be integral", "float input lengths"),
            e(lambda k: k.ctc_loss(lp(k), tg(k), k.tensor([5, 5]), k.tensor([True, True])), RuntimeError,
              "target_lengths must be integral", "bool target lengths"),
            e(lambda k: k.ctc_loss(k.zeros([]), k.tensor([1]), [5], [1]), IndexError, "Dimension out of range",
              "0-dim log_probs"),
            e(lambda k: k.ctc_loss(k.zeros(5), k.tensor([1]), [5], [1]), RuntimeError, "3-D tensor",
              "1-D log_probs (unsqueezed to 2-D, as torch)"),
            e(lambda k: k.ctc_loss(lp(k), tg(k), [5, 5], [2, 2], 0, 3), RuntimeError, "reduction must be",
              "reduction 3"),
            e(lambda k: k.ctc_loss(lp(k), tg(k), 5, 2), TypeError, "ctc_loss", "int lengths"),
        ]
    else:
        out += [
            e(lambda k: call(k, lp(k), tg(k).float(), [5, 5], [2, 2]), RuntimeError, "int64 or int32",
              "float targets"),
            e(lambda k: call(k, lp(k, 5, 4), k.tensor([1]), [5], [1]), RuntimeError, "3-D tensor", "2-D log_probs"),
        ]
    return out


def _backward_errors():
    e = ErrorInput

    def args(k, **over):
        lp = k.zeros(5, 2, 4).log_softmax(-1)
        a = dict(grad=k.ones(2), log_probs=lp, targets=k.tensor([[1, 2], [3, 3]]), input_lengths=[5, 5],
                 target_lengths=[2, 2], neg_log_likelihood=k.ones(2), log_alpha=k.zeros(2, 5, 5), blank=0,
                 zero_infinity=False)
        a.update(over)
        return k._C._ctc_loss_backward(*a.values())
    return [e(lambda k: args(k, grad=k.ones(3)), RuntimeError, "expected grad of shape", "grad of the wrong shape"),
            e(lambda k: args(k, log_alpha=k.zeros(2, 5, 3)), RuntimeError, "expected log_alpha of shape",
              "log_alpha too narrow"),
            e(lambda k: args(k, neg_log_likelihood=k.ones(2, 1)), RuntimeError, "expected neg_log_likelihood",
              "neg_log_likelihood 2-D"),
            e(lambda k: args(k, input_lengths=[5, 6]), RuntimeError, "input_lengths to have value at most 5",
              "input length > T")]


RECORDS = [
    OpRecord("_ctc_loss", FAMILY, FLOATS, _kernel_samples, ref=_ctc_ref, api="_C._ctc_loss",
             grad_samples=lambda: _kernel_samples("float64", small=True), gradcheck_wrapper=_log_softmax_wrapper,
             gradgrad=NO_GRADGRAD, error_inputs=lambda: _errors(False), no_zero_dim=NO_ZERO_DIM,
             no_reduced_precision=NO_REDUCED),
    OpRecord("_ctc_loss_backward", FAMILY, FLOATS, _backward_samples, ref=_ctc_backward_ref,
             api="_C._ctc_loss_backward", error_inputs=_backward_errors, no_zero_dim=NO_ZERO_DIM,
             no_reduced_precision=NO_REDUCED,
             derivative_not_implemented="torch's _ctc_loss_backward has no derivative either"),
    OpRecord("ctc_loss.IntList", FAMILY, FLOATS, _public_samples(False), ref=ctc_loss_ref,
             grad_samples=lambda: _public_samples(False, small=True)("float64"),
             gradcheck_wrapper=_log_softmax_wrapper, gradgrad=NO_GRADGRAD, error_inputs=lambda: _errors(True),
             no_zero_dim=NO_ZERO_DIM, no_reduced_precision=NO_REDUCED),
    OpRecord("ctc_loss.Tensor", FAMILY, FLOATS, _public_samples(True), ref=ctc_loss_ref,
             grad_samples=lambda: _public_samples(True, small=True)("float64"),
             gradcheck_wrapper=_log_softmax_wrapper, gradgrad=NO_GRADGRAD, no_zero_dim=NO_ZERO_DIM,
             no_reduced_precision=NO_REDUCED),
]
