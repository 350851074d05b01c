"""kiln.nn.functional: stateless layers, activations and losses, with torch.nn.functional's
signatures (the deprecated size_average/reduce arguments included)."""
import kiln

_REDUCTIONS = ("none", "mean", "sum")  # index = kiln.nll_loss's reduction code


def _reduction(reduction, size_average=None, reduce=None):
    """The reduction string, from the legacy size_average/reduce flags when either is given."""
    if size_average is not None or reduce is not None:
        size_average = True if size_average is None else size_average
        reduce = True if reduce is None else reduce
        reduction = "none" if not reduce else ("mean" if size_average else "sum")
    if reduction not in _REDUCTIONS:
        raise ValueError(f"{reduction} is not a valid value for reduction")
    return reduction


def _reduce(loss, reduction):
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    return loss


# ---------------------------------------------------------------- activations and layers
def relu(input, inplace=False):
    """max(input, 0) elementwise."""
    return input.relu_() if inplace else kiln.relu(input)


def tanh(input):
    return kiln.tanh(input)


def sigmoid(input):
    return kiln.sigmoid(input)


def _maybe_inplace(op, input, inplace, *args):
    """torch's inplace=True: the result written back into input. The op reads a clone, so what its
    backward saved is not the tensor overwritten (autograd goes through copy_ and clone)."""
    return input.copy_(op(input.clone(), *args)) if inplace else op(input, *args)


def gelu(input, approximate="none"):
    return kiln.gelu(input, approximate=approximate)


def silu(input, inplace=False):
    return _maybe_inplace(kiln.silu, input, inplace)


def leaky_relu(input, negative_slope=0.01, inplace=False):
    return _maybe_inplace(kiln.leaky_relu, input, inplace, negative_slope)


def hardtanh(input, min_val=-1.0, max_val=1.0, inplace=False):
    return _maybe_inplace(kiln.hardtanh, input, inplace, min_val, max_val)


def softplus(input, beta=1, threshold=20):
    return kiln.softplus(input, beta, threshold)


def linear(input, weight, bias=None):
    """input @ weight.T (+ bias); input is [..., in_features], weight [out_features, in_features]."""
    if input.dim() == 0:
        raise RuntimeError("linear(): input must have at least 1 dimension")
    out = kiln.matmul(input, weight.t())
    return out if bias is None else out + bias


def softmax(input, dim=None, _stacklevel=3, dtype=None):
    """exp(x - max) / sum(exp(x - max)) along `dim` (numerically stable)."""
    return kiln.softmax(input, _default_dim(input, dim), dtype)


def log_softmax(input, dim=None, _stacklevel=3, dtype=None):
    """(x - max) - log(sum(exp(x - max))) along `dim` (numerically stable)."""
    return kiln.log_softmax(input, _default_dim(input, dim), dtype)


def _default_dim(input, dim):
    """torch's implicit softmax dim (deprecated there, but old code relies on it)."""
    if dim is not None:
        return dim
    return 0 if input.dim() in (0, 1, 3) else 1


# ---------------------------------------------------------------- losses
def nll_loss(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None, reduction="mean"):
    """Negative log-likelihood: -input[n, target[n], ...] * weight[target[n]], averaged over the weights.

    input is [N, C, d1, ...] (or [C]) log-probabilities; target is [N, d1, ...] (or []) class indices.
    """
    reduction = _reduction(reduction, size_average, reduce)
    if target.dtype != kiln.int64:
        raise RuntimeError(f"nll_loss: expected an integer target of dtype int64 (Long), got {target.dtype}")
    unbatched = input.dim() == 1
    if unbatched:
        input, target = input.unsqueeze(0), target.unsqueeze(0)
    if input.dim() < 2:
        raise ValueError(f"nll_loss: expected input with at least 1 dimension, got {input.dim()}")
    if tuple(target.shape) != (input.shape[0],) + tuple(input.shape[2:]):
        raise ValueError(f"Expected target size {[input.shape[0]] + list(input.shape[2:])}, got {list(target.shape)}")
    # kiln.nll_loss takes [N, C]: [N, C, d1, ...] is moved to [N, d1, ..., C] and flattened.
    spatial = list(target.shape)
    if input.dim() > 2:
        input = input.movedim(1, -1).reshape([-1, input.shape[1]])
        target = target.reshape([-1])
    loss = kiln.nll_loss(input, target, weight, _REDUCTIONS.index(reduction), ignore_index)
    if reduction != "none":
        return loss
    return loss.view(spatial).squeeze(0) if unbatched else loss.view(spatial)


def cross_entropy(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None, reduction="mean",
                  label_smoothing=0.0):
    """log_softmax over the class dim, then nll_loss; a floating target of input's shape holds class
    probabilities. label_smoothing mixes the target with the uniform distribution, as torch does."""
    reduction = _reduction(reduction, size_average, reduce)
    if not 0.0 <= label_smoothing <= 1.0:
        raise ValueError(f"label_smoothing must be between 0.0 and 1.0. Got: {label_smoothing}")
    class_dim = 0 if input.dim() == 1 else 1
    n_classes = input.shape[class_dim]
    logp = log_softmax(input, class_dim)
    if weight is not None:
        shape = [1] * input.dim()
        shape[class_dim] = n_classes
        weighted_logp = logp * weight.view(shape)
    else:
        weighted_logp = logp
    if not target.is_floating_point():
        loss = nll_loss(logp, target, weight=weight, ignore_index=ignore_index, reduction=reduction)
        if label_smoothing == 0.0:
            return loss
        # The uniform part: -sum_c w_c logp_c / C per sample, 0 where the target is ignored.
        smooth = -weighted_logp.sum(class_dim)
        keep = target != ignore_index
        smooth = smooth * keep
        if reduction == "mean":
            denom = keep.sum() if weight is None else (weight[target.masked_fill(~keep, 0)] * keep).sum()
            smooth = smooth.sum() / denom
        else:
            smooth = _reduce(smooth, reduction)
        return (1 - label_smoothing) * loss + label_smoothing / n_classes * smooth
    if tuple(target.shape) != tuple(input.shape):
        raise RuntimeError(f"cross_entropy: probability target shape {list(target.shape)} must match input shape "
                         f"{list(input.shape)}")
    if label_smoothing > 0.0:
        target = target * (1 - label_smoothing) + label_smoothing / n_classes
    return _reduce(-(target * weighted_logp).sum(class_dim), reduction)


def mse_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """(input - target)^2, reduced."""
    reduction = _reduction(reduction, size_average, reduce)
    diff = input - target
    return _reduce(diff * diff, reduction)
