"""Records of prelu, glu and the regression, margin and distribution losses (composites: their
gradients come from the ops they are written with, so gradcheck checks those compositions).

Reductions are ints as in the schema: 0 none, 1 mean, 2 sum. References follow torch's
documented formulas in float64.
"""
import numpy as np

from .record import FLOATS, ErrorInput, OpRecord, Sample, values

FAMILY = "nn_losses"
R = (0, 1, 2)


def _reduce(loss, reduction):
    return loss if reduction == 0 else loss.mean() if reduction == 1 else loss.sum()


def _sign(shape, d, seed=7):
    return np.where(values(shape, d, seed=seed) > 0, 1, -1).astype(d)


def _pair_samples(d, extra=(), kw=({},), domain="real"):
    """(input, target) samples: each reduction, 0-dim, empty and broadcast targets."""
    x, t = values((3, 4), d), values((3, 4), d, domain, seed=1)
    out = [Sample((x, t) + tuple(extra), dict(k, reduction=r), note=f"reduction {r} {k}") for k in kw for r in R]
    return out + [Sample((values((), d), values((), d, domain, seed=1)) + tuple(extra), note="0-dim"),
                  Sample((values((0, 2), d), values((0, 2), d, domain, seed=1)) + tuple(extra), {"reduction": 2},
                         note="empty, sum"),
                  Sample((values((2, 3), d), values((3,), d, domain, seed=1)) + tuple(extra), {"reduction": 0},
                         note="broadcast target")]


def _reduction_error(name, nargs=2, shape=(3,)):
    return [ErrorInput(lambda k: getattr(k, name)(*[k.ones(*shape)] * (nargs - 1), k.ones(shape[0]), reduction=3),
                       RuntimeError,
                       "reduction must be", "reduction 3"),
            ErrorInput(lambda k: getattr(k, name)(*[k.ones(3, dtype=k.int64)] * nargs), RuntimeError,
                       "floating point", "int64 input")]


# ----------------------------------------------------------------------------- prelu, glu
def _prelu_samples(d):
    return [Sample((values((2, 3, 4), d), values((3,), d, seed=1)), note="per channel"),
            Sample((values((2, 3), d), values((1,), d, seed=1)), note="one weight"),
            Sample((values((5,), d), values((1,), d, seed=1)), note="1-D input"),
            Sample((values((), d), values((), d, seed=1)), note="0-dim"),
            Sample((values((0, 3), d), values((3,), d, seed=1)), note="empty")]


def _prelu_ref(x, w):
    if x.ndim != w.ndim:
        w = w.reshape([1] * x.ndim if x.ndim < 2 else [1, w.size] + [1] * (x.ndim - 2))
    return np.where(x > 0, x, w * x)


def _prelu_errors():
    e = ErrorInput
    return [e(lambda k: k.prelu(k.ones(2, 3), k.ones(2)), RuntimeError, "Mismatch of parameter numbers",
              "weight of 2 for 3 channels"),
            e(lambda k: k.prelu(k.ones(2, 3), k.ones(3, 1)), RuntimeError, "scalar or 1D", "2-D weight"),
            e(lambda k: k.prelu(k.ones(2, 3), k.ones(3, dtype=k.float64)), RuntimeError, "Type promoting",
              "weight of another dtype")]


def _glu_samples(d):
    return [Sample((values((4,), d),), note="1-D"), Sample((values((2, 6), d), 1), note="dim 1"),
            Sample((values((2, 4, 3), d), -2), note="dim -2"), Sample((values((0, 4), d),), note="empty")]


def _glu_ref(x, dim=-1):
    a, b = np.split(x, 2, axis=dim)
    return a / (1 + np.exp(-b))


def _glu_errors():
    e = ErrorInput
    return [e(lambda k: k.glu(k.ones(3)), RuntimeError, "Halving dimension must be even", "odd size"),
            e(lambda k: k.glu(k.ones([])), RuntimeError, "does not support scalars", "0-dim"),
            e(lambda k: k.glu(k.ones(2, 4), 2), IndexError, "out of range", "dim out of range")]


# ----------------------------------------------------------------------------- regression losses
def _smooth_l1_ref(x, t, reduction=1, beta=1.0):
    z = np.abs(x - t)
    return _reduce(z if beta == 0 else np.where(z < beta, 0.5 * z * z / beta, z - 0.5 * beta), reduction)


def _huber_ref(x, t, reduction=1, delta=1.0):
    z = np.abs(x - t)
    return _reduce(np.where(z < delta, 0.5 * z * z, delta * (z - 0.5 * delta)), reduction)


def _kl_samples(d, grad=False):
    out = [Sample((values((3, 4), d), values((3, 4), d, "positive", seed=1)), {"reduction": r, "log_target": lt},
                  note=f"reduction {r}, log_target {lt}") for r in R for lt in (False, True)]
    out += [Sample((values((), d), values((), d, "positive", seed=1)), note="0-dim"),
            Sample((values((0, 2), d), values((0, 2), d, seed=1)), {"reduction": 2}, note="empty")]
    if not grad:   # t log t at t = 0: 0, but no finite difference there
        out.append(Sample((values((4,), d), np.array([0.0, 0.5, 0.0, 2.0], dtype=d)), {"reduction": 0},
                          note="zero targets"))
    return out


def _kl_ref(x, t, reduction=1, log_target=False):
    if log_target:
        return _reduce(np.exp(t) * (t - x), reduction)
    with np.errstate(divide="ignore", invalid="ignore"):
        xlogy = np.where(t == 0, 0.0, t * np.log(np.where(t == 0, 1.0, t)))
    return _reduce(xlogy - t * x, reduction)


def _poisson_samples(d):
    out = []
    for log_input in (True, False):
        x = values((3, 4), d, "real" if log_input else "positive")
        for full in (False, True):
            out += [Sample((x, values((3, 4), d, "positive", seed=1), log_input, full, 1e-8, r),
                           note=f"log_input {log_input}, full {full}, reduction {r}") for r in R]
    out += [Sample((values((), d), values((), d, "positive", seed=1), True, True, 1e-8, 1), note="0-dim"),
            Sample((values((0, 2), d), values((0, 2), d, "positive", seed=1), True, False, 1e-8, 2), note="empty")]
    return out


def _poisson_ref(x, t, log_input, full, eps, reduction):
    loss = np.exp(x) - t * x if log_input else x - t * np.log(x + eps)
    if full:
        loss = loss + np.where(t <= 1, 0.0, t * np.log(t) - t + 0.5 * np.log(2 * np.pi * t))
    return _reduce(loss, reduction)


# ----------------------------------------------------------------------------- margin losses
def _soft_margin_samples(d):
    """Targets of 1 and -1 (larger ones overflow exp in float16, in torch too)."""
    return [Sample((s.args[0], _sign(s.args[1].shape, d)), s.kwargs, note=s.note) for s in _pair_samples(d)]


def _ranking_samples(d):
    out = [Sample((values((5,), d), values((5,), d, seed=1), _sign((5,), d), m, r), note=f"margin {m}, reduction {r}")
           for m in (0.0, 0.5) for r in R]
    return out + [Sample((values((), d), values((), d, seed=1), _sign((), d)), note="0-dim"),
                  Sample((values((0,), d), values((0,), d, seed=1), _sign((0,), d)), note="empty")]


def _cosine_samples(d):
    t = np.array([1, -1, 1, 0], dtype=d)   # 0: neither similar nor dissimilar, loss 0
    out = [Sample((values((4, 3), d), values((4, 3), d, seed=1), t, m, r), note=f"margin {m}, reduction {r}")
           for m in (0.0, 0.3) for r in R]
    return out + [Sample((values((3,), d), values((3,), d, seed=1), np.array(-1, dtype=d), -0.5), note="0-dim target"),
                  Sample((values((0, 3), d), values((0, 3), d, seed=1), np.zeros(0, dtype=d)), note="empty")]


def _cosine_ref(x1, x2, t, margin=0.0, reduction=0):  # 0: torch.X's binding default (see _api_breadth)
    dim = t.ndim
    cos = (x1 * x2).sum(dim) / np.sqrt(((x1 * x1).sum(dim) + 1e-12) * ((x2 * x2).sum(dim) + 1e-12))
    return _reduce(np.where(t == 1, 1 - cos, 0) + np.where(t == -1, np.maximum(cos - margin, 0), 0), reduction)


def _cosine_errors():
    e = ErrorInput
    return [e(lambda k: k.cosine_embedding_loss(k.ones(2, 3), k.ones(2, 3), k.ones(2, 1)), RuntimeError,
              "0D or 1D target", "2-D target"),
            e(lambda k: k.cosine_embedding_loss(k.ones(3), k.ones(3), k.ones(1)), RuntimeError,
              "1D target tensor expects 2D input", "1-D inputs for a 1-D target")] + \
        _reduction_error("cosine_embedding_loss", 3, (2, 3))[:1]


def _triplet_samples(d):
    # unit values: the loss is a difference of distances, which bfloat16 would round to nothing
    a, p, n = (values((4, 3), d, "unit", seed=s) for s in range(3))
    out = [Sample((a, p, n), dict(kw, reduction=r), note=f"{kw}, reduction {r}")
           for kw in ({}, {"margin": 0.5, "p": 1.0, "swap": True}, {"p": 3.0, "eps": 0.1}) for r in R]
    return out + [Sample((values((3,), d), values((3,), d, seed=1), values((3,), d, seed=2)), note="1-D"),
                  Sample((values((0, 3), d), values((0, 3), d, seed=1), values((0, 3), d, seed=2)), note="empty")]


def _triplet_ref(a, pos, neg, margin=1.0, p=2.0, eps=1e-6, swap=False, reduction=0):  # torch.X's default
    dist = lambda x, y: (np.abs(x - y + eps) ** p).sum(-1) ** (1.0 / p)  # noqa: E731
    d_neg = dist(a, neg)
    if swap:
        d_neg = np.minimum(d_neg, dist(pos, neg))
    return _reduce(np.maximum(margin + dist(a, pos) - d_neg, 0), reduction)


RECORDS = [
    OpRecord("prelu", FAMILY, FLOATS, _prelu_samples, ref=_prelu_ref, error_inputs=_prelu_errors),
    OpRecord("glu", FAMILY, FLOATS, _glu_samples, ref=_glu_ref, error_inputs=_glu_errors,
             no_zero_dim="halves a dim (a 0-dim input raises)"),
    OpRecord("smooth_l1_loss", FAMILY, FLOATS, lambda d: _pair_samples(d, kw=({}, {"beta": 0.5}, {"beta": 0.0})),
             ref=_smooth_l1_ref, error_inputs=lambda: _reduction_error("smooth_l1_loss") + [
                 ErrorInput(lambda k: k.smooth_l1_loss(k.ones(2), k.ones(2), 1, -1.0), RuntimeError,
                            "negative values for beta", "beta -1")]),
    OpRecord("huber_loss", FAMILY, FLOATS, lambda d: _pair_samples(d, kw=({}, {"delta": 0.5})), ref=_huber_ref,
             error_inputs=lambda: _reduction_error("huber_loss") + [
                 ErrorInput(lambda k: k.huber_loss(k.ones(2), k.ones(2), 1, 0.0), RuntimeError,
                            "non-positive values for delta", "delta 0")]),
    OpRecord("kl_div", FAMILY, FLOATS, _kl_samples, ref=_kl_ref, error_inputs=lambda: _reduction_error("kl_div"),
             grad_samples=lambda: _kl_samples("float64", grad=True)),
    OpRecord("soft_margin_loss", FAMILY, FLOATS, _soft_margin_samples,
             ref=lambda x, t, reduction=1: _reduce(np.log1p(np.exp(-t * x)), reduction),
             error_inputs=lambda: _reduction_error("soft_margin_loss")),
    OpRecord("poisson_nll_loss", FAMILY, FLOATS, _poisson_samples, ref=_poisson_ref,
             error_inputs=lambda: [ErrorInput(lambda k: k.poisson_nll_loss(k.ones(2), k.ones(2), True, False, 1e-8, 3),
                                              RuntimeError, "reduction must be", "reduction 3")]),
    OpRecord("margin_ranking_loss", FAMILY, FLOATS, _ranking_samples,
             ref=lambda x1, x2, t, margin=0.0, reduction=0: _reduce(np.maximum(-t * (x1 - x2) + margin, 0), reduction),
             error_inputs=lambda: _reduction_error("margin_ranking_loss", 3)),
    OpRecord("cosine_embedding_loss", FAMILY, FLOATS, _cosine_samples, ref=_cosine_ref, error_inputs=_cosine_errors,
             no_zero_dim="inputs are 1-D or 2-D (a 0-dim target is sampled)"),
    OpRecord("triplet_margin_loss", FAMILY, FLOATS, _triplet_samples, ref=_triplet_ref,
             error_inputs=lambda: _reduction_error("triplet_margin_loss", 3) + [
                 ErrorInput(lambda k: k.triplet_margin_loss(k.ones(2, 3), k.ones(3), k.ones(2, 3)), RuntimeError,
                            "same number of dimensions", "positive of fewer dims")],
             no_zero_dim="distances are over the last dim"),
]

assert all(isinstance(r, OpRecord) and r.family == FAMILY for r in RECORDS)

# CTC loss, with its kernels (op_db/ctc_loss.py).
from .ctc_loss import RECORDS as _CTC_RECORDS  # noqa: E402

RECORDS += _CTC_RECORDS
