"""Records of the nn ops: nll_loss and its backward (the records of the other backward ops,
index_select_backward, select_backward and slice_backward, are in indexing.py and shape.py).

nll_loss's reduction is an int, as in the schema: 0 none, 1 mean, 2 sum. Targets are int64
(torch refuses other target dtypes); weight has the input's dtype.
"""
import numpy as np

from .record import FLOATS, ErrorInput, OpRecord, Sample, values

FAMILY = "nn"
NONE, MEAN, SUM = 0, 1, 2
REDUCTIONS = (NONE, MEAN, SUM)


# ----------------------------------------------------------------------------- nll_loss
def _target(ts):
    return np.asarray(ts, dtype=np.int64)


def _nll_cases(d):
    """(input, target, weight, ignore_index, note) in dtype d."""
    x = values((4, 5), d)
    w = np.abs(values((5,), d, "positive", seed=2))
    t = _target([0, 4, 2, 2])
    return [
        (x, t, None, -100, "(4, 5), no weight"),
        (x, t, w, -100, "(4, 5), weight"),
        (x, t, w, 2, "(4, 5), weight, ignore_index 2"),
        (x, _target([0, -1, 3, -1]), None, -1, "(4, 5), ignore_index -1"),
        (x, _target([1, 1, 1, 1]), w, 1, "(4, 5), every target ignored"),
        (values((5,), d), _target(3), w, -100, "1-D input, 0-dim target"),
        (values((5,), d), _target(3), None, 3, "1-D input, 0-dim target ignored"),
        (values((0, 5), d), _target([]), w, -100, "no samples"),
        (values((2, 0), d), _target([-100, -100]), None, -100, "no classes, every target ignored"),
        (values((1, 1), d), _target([0]), None, -100, "(1, 1)"),
    ]


def _nll_samples(d):
    return [Sample((x, t, w, r, ig), note=f"{note}, reduction {r}")
            for x, t, w, ig, note in _nll_cases(d) for r in REDUCTIONS]


def _nll_terms(x, t, weight, ignore_index):
    """Per sample: the loss term -w[t] * x[t] and its weight (0 where ignored)."""
    x = np.asarray(x, dtype=np.float64)
    T = np.asarray(t).reshape(-1)
    X = x.reshape(len(T), x.shape[-1])
    w = np.ones(X.shape[1]) if weight is None else np.asarray(weight, dtype=np.float64)
    terms, weights = np.zeros(len(T)), np.zeros(len(T))
    for i, c in enumerate(T):
        if c != ignore_index:
            terms[i], weights[i] = -w[c] * X[i, c], w[c]
    return terms, weights


def _nll_ref(x, t, weight=None, reduction=MEAN, ignore_index=-100):
    terms, weights = _nll_terms(x, t, weight, ignore_index)
    if reduction == NONE:
        return terms.reshape(np.shape(t))
    if reduction == SUM:
        return terms.sum()
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.float64(terms.sum()) / np.float64(weights.sum())   # 0 / 0 = nan, as torch


def _nll_backward_samples(d):
    out = []
    for x, t, w, ig, note in _nll_cases(d):
        for r in REDUCTIONS:
            g = values(np.shape(t), d, seed=3) if r == NONE else values((), d, seed=3)
            out.append(Sample((g, x, t, w, r, ig), note=f"{note}, reduction {r}"))
    return out


def _nll_backward_ref(grad_output, x, t, weight, reduction, ignore_index):
    x = np.asarray(x, dtype=np.float64)
    T = np.asarray(t).reshape(-1)
    X = x.reshape(len(T), x.shape[-1])
    G = np.asarray(grad_output, dtype=np.float64).reshape(-1)
    w = np.ones(X.shape[1]) if weight is None else np.asarray(weight, dtype=np.float64)
    keep = [i for i, c in enumerate(T) if c != ignore_index]
    total = sum(w[T[i]] for i in keep)
    grad = np.zeros(X.shape)
    for i in keep:
        c = T[i]
        g = G[i] if reduction == NONE else G[0]
        grad[i, c] = -w[c] * g / (total if reduction == MEAN else 1.0)
    return grad.reshape(x.shape)


def _grad_samples(samples, x_at):
    """float64 samples, less those whose loss is a mean over no weight (0 / 0 = nan: central
    differences of nan are nan, while nll_loss_backward, as torch's, gives zeros there)."""
    def make():
        out = []
        for s in samples("float64"):
            x, t, w, r, ig = s.args[x_at:x_at + 5]
            if r == MEAN and not _nll_terms(x, t, w, ig)[1].sum():
                continue
            if all(a.size <= 24 for a in s.arrays()):
                out.append(s)
        return out
    return make


def _nll_errors():
    e = ErrorInput
    x, t = (lambda k: k.zeros([3, 4])), (lambda k: k.tensor([0, 3, 1]))
    return [
        e(lambda k: k.nll_loss(x(k), k.tensor([0, 4, 1])), IndexError, "target 4 is out of bounds",
          "target >= number of classes"),
        e(lambda k: k.nll_loss(x(k), k.tensor([0, -1, 1])), IndexError, "target -1 is out of bounds",
          "negative target that is not ignore_index"),
        e(lambda k: k.nll_loss(x(k), k.tensor([0, 5, 1]), None, 0), IndexError, "out of bounds",
          "target out of range, reduction none"),
        e(lambda k: k.nll_loss(k.zeros([2, 3, 4]), k.zeros([2, 4], dtype=k.int64)), RuntimeError, "1D or 2D",
          "3-D input"),
        e(lambda k: k.nll_loss(k.zeros([]), k.tensor(0)), RuntimeError, "1D or 2D", "0-dim input"),
        e(lambda k: k.nll_loss(x(k), k.tensor([0, 1])), RuntimeError, "expected target of shape",
          "target of the wrong length"),
        e(lambda k: k.nll_loss(x(k), k.tensor([0.0, 1.0, 2.0])), RuntimeError, "integer dtype", "float target"),
        e(lambda k: k.nll_loss(x(k), t(k), k.ones([3])), RuntimeError, "weight tensor should be defined",
          "weight of the wrong length"),
        e(lambda k: k.nll_loss(x(k), t(k), None, 3), RuntimeError, "reduction must be", "reduction 3"),
        e(lambda k: k.nll_loss(k.zeros([3, 4], dtype=k.int64), t(k)), RuntimeError, "floating point",
          "integer input"),
    ]


def _nll_backward_errors():
    e = ErrorInput
    x, t = (lambda k: k.zeros([3, 4])), (lambda k: k.tensor([0, 3, 1]))
    return [
        e(lambda k: k.nll_loss_backward(k.ones([]), x(k), k.tensor([0, 4, 1]), None, 1, -100), IndexError,
          "out of bounds", "target >= number of classes"),
        e(lambda k: k.nll_loss_backward(k.ones([]), x(k), k.tensor([0, 1]), None, 1, -100), RuntimeError,
          "expected target of shape", "target of the wrong length"),
        # torch checks grad_output's shape; kiln reads past its end (see the report).
        e(lambda k: k.nll_loss_backward(k.ones([2]), x(k), t(k), None, 0, -100), RuntimeError, "grad_output|size",
          "grad_output (2,) for 3 samples, reduction none"),
        e(lambda k: k.nll_loss_backward(k.ones([0]), x(k), t(k), None, 1, -100), RuntimeError, "grad_output|size",
          "empty grad_output, reduction mean"),
    ]


RECORDS = [
    OpRecord("nll_loss", FAMILY, FLOATS, _nll_samples, ref=_nll_ref, error_inputs=_nll_errors,
             grad_samples=_grad_samples(_nll_samples, 0)),
    OpRecord("nll_loss_backward", FAMILY, FLOATS, _nll_backward_samples, ref=_nll_backward_ref,
             error_inputs=_nll_backward_errors, grad_samples=_grad_samples(_nll_backward_samples, 1)),
]

assert all(isinstance(r, OpRecord) and r.family == FAMILY for r in RECORDS)
