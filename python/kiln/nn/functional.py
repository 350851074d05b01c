"""kiln.nn.functional: stateless layers, activations and losses.

softmax, log_softmax and nll_loss call kiln's native operators when this build has
them, else composites of existing ops; in those, values derived only from targets, or
used as a constant shift, are built with NumPy (kiln is CPU-only), and everything that
carries gradient goes through kiln ops.
"""
import numpy as np

import kiln

_REDUCTIONS = ("none", "mean", "sum")  # index = kiln.nll_loss's reduction code


def _need(op, what):
    if not hasattr(kiln, op):
        raise NotImplementedError(f"kiln.nn.functional.{what} needs the kiln.{op} operator, "
                                  f"which this build of kiln._C does not have yet")


def _reduce(loss, reduction):
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    return loss


def _check_reduction(reduction):
    if reduction not in _REDUCTIONS:
        raise ValueError(f"{reduction} is not a valid value for reduction")


def _const(array, like):
    """A kiln tensor holding `array` in the dtype of `like` (no grad)."""
    return kiln.from_numpy(np.ascontiguousarray(array)).to(like.dtype)


# ---------------------------------------------------------------- activations and layers
def relu(input, inplace=False):
    """max(input, 0) elementwise."""
    _need("relu", "relu")
    return input.relu_() if inplace else kiln.relu(input)


def tanh(input):
    return kiln.tanh(input)


def sigmoid(input):
    return kiln.sigmoid(input)


def linear(input, weight, bias=None):
    """input @ weight.T (+ bias); input is [..., in_features], weight [out_features, in_features]."""
    wt = kiln.transpose(weight, 0, 1)
    if input.dim() == 2:
        out = kiln.mm(input, wt)
    elif input.dim() == 1:
        out = kiln.mm(input.unsqueeze(0), wt).squeeze(0)
    elif input.dim() > 2:
        lead = list(input.shape[:-1])
        out = kiln.mm(input.contiguous().view([-1, input.shape[-1]]), wt).view(lead + [weight.shape[0]])
    else:
        raise RuntimeError("linear(): input must have at least 1 dimension")
    return out if bias is None else out + bias


# ---------------------------------------------------------------- softmax family
# Each op uses kiln's native operator when this build has it, else a composite of existing ops.
def _max_detached(input, dim):
    """max over `dim` (keepdim) as a constant: softmax is invariant to the shift, so no gradient is needed."""
    x = input.detach()
    if hasattr(kiln, "amax"):
        return kiln.amax(x, dim, keepdim=True)
    return _const(np.max(x.numpy(), axis=dim, keepdims=True), x)


def softmax(input, dim, dtype=None):
    """exp(x - max) / sum(exp(x - max)) along `dim`."""
    if hasattr(kiln, "softmax"):
        return kiln.softmax(input, dim, dtype)
    return _softmax_composite(input if dtype is None else input.to(dtype), dim)


def _softmax_composite(input, dim):
    e = kiln.exp(input - _max_detached(input, dim))
    return e / e.sum(dim, keepdim=True)


def log_softmax(input, dim, dtype=None):
    """(x - max) - log(sum(exp(x - max))) along `dim`."""
    if hasattr(kiln, "log_softmax"):
        return kiln.log_softmax(input, dim, dtype)
    return _log_softmax_composite(input if dtype is None else input.to(dtype), dim)


def _log_softmax_composite(input, dim):
    _need("log", "log_softmax")
    shifted = input - _max_detached(input, dim)
    return shifted - kiln.log(kiln.exp(shifted).sum(dim, keepdim=True))


# ---------------------------------------------------------------- losses
def nll_loss(input, target, weight=None, ignore_index=-100, reduction="mean"):
    """Negative log-likelihood: -input[n, target[n], ...] * weight[target[n]], averaged over the weights.

    input is [N, C, d1, ...] (or [C]) log-probabilities; target is [N, d1, ...] (or []) class indices.
    """
    _check_reduction(reduction)
    if target.is_floating_point() or target.dtype == kiln.bool:
        raise RuntimeError(f"nll_loss: expected an integer target, got {target.dtype}")
    unbatched = input.dim() == 1
    if unbatched:
        input, target = input.unsqueeze(0), target.unsqueeze(0)
    if input.dim() < 2:
        raise ValueError(f"nll_loss: expected input with at least 1 dimension, got {input.dim()}")
    if tuple(target.shape) != (input.shape[0],) + tuple(input.shape[2:]):
        raise ValueError(f"Expected target size {[input.shape[0]] + list(input.shape[2:])}, got {list(target.shape)}")
    t = target.detach().numpy()
    bad = t[(t != ignore_index) & ((t < 0) | (t >= input.shape[1]))]
    if bad.size:
        raise IndexError(f"Target {bad.flat[0]} is out of bounds.")
    if hasattr(kiln, "nll_loss"):
        loss = _nll_loss_native(input, target, weight, ignore_index, reduction)
    else:
        loss = _nll_loss_composite(input, t, weight, ignore_index, reduction)
    return loss.squeeze(0) if unbatched and reduction == "none" else loss


def _nll_loss_native(input, target, weight, ignore_index, reduction):
    """kiln.nll_loss takes [N, C]: [N, C, d1, ...] is moved to [N, d1, ..., C] and flattened."""
    spatial = tuple(target.shape)
    if input.dim() > 2:
        for d in range(1, input.dim() - 1):
            input = input.transpose(d, d + 1)
        input = input.contiguous().view([-1, input.shape[-1]])
        target = target.contiguous().view([-1])
    loss = kiln.nll_loss(input, target, weight, _REDUCTIONS.index(reduction), ignore_index)
    return loss.view(list(spatial)) if reduction == "none" else loss


def _nll_loss_composite(input, t, weight, ignore_index, reduction):
    """nll_loss for [N, C, ...] input and NumPy targets `t`: a weighted one-hot mask, multiplied and summed."""
    n_classes = input.shape[1]
    valid = t != ignore_index
    class_w = np.ones(n_classes) if weight is None else weight.detach().numpy().astype(np.float64)
    w = np.where(valid, class_w[np.where(valid, t, 0)], 0.0)  # weight of each target, 0 where ignored
    classes = np.arange(n_classes).reshape((1, n_classes) + (1,) * (t.ndim - 1))
    coef = (np.expand_dims(t, 1) == classes) * np.expand_dims(w, 1)
    losses = -(input * _const(coef, input)).sum(1)
    if reduction == "none":
        return losses
    if reduction == "sum":
        return losses.sum()
    return losses.sum() / float(w.sum())


def cross_entropy(input, target, weight=None, ignore_index=-100, reduction="mean"):
    """log_softmax over the class dim, then nll_loss; a floating target of input's shape means class probabilities."""
    _check_reduction(reduction)
    class_dim = 0 if input.dim() == 1 else 1
    logp = log_softmax(input, class_dim)
    if not target.is_floating_point():
        return nll_loss(logp, target, weight=weight, ignore_index=ignore_index, reduction=reduction)
    if tuple(target.shape) != tuple(input.shape):
        raise ValueError(f"cross_entropy: probability target shape {list(target.shape)} must match input shape "
                         f"{list(input.shape)}")
    if weight is not None:
        shape = [1] * input.dim()
        shape[class_dim] = input.shape[class_dim]
        logp = logp * weight.view(shape)
    return _reduce(-(target * logp).sum(class_dim), reduction)


def mse_loss(input, target, reduction="mean"):
    """(input - target)^2, reduced."""
    _check_reduction(reduction)
    diff = input - target
    return _reduce(diff * diff, reduction)
