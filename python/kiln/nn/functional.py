"""kiln.nn.functional: stateless layers, activations and losses, with torch.nn.functional's
signatures (the deprecated size_average/reduce arguments included)."""
import math
import struct
import warnings

import kiln

from ..backends import cuda as _backends_cuda  # the sdpa kernel switches

_REDUCTIONS = ("none", "mean", "sum")  # index = kiln.nll_loss's reduction code


def _reduction(reduction, size_average=None, reduce=None, emit_warning=True):
    """The reduction string, from the legacy size_average/reduce flags when either is given (with torch's
    deprecation warning, as _Reduction.legacy_get_string gives it)."""
    if size_average is not None or reduce is not None:
        size_average = True if size_average is None else size_average
        reduce = True if reduce is None else reduce
        reduction = "none" if not reduce else ("mean" if size_average else "sum")
        if emit_warning:
            warnings.warn(f"size_average and reduce args will be deprecated, please use reduction='{reduction}' "
                          "instead.")
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


def relu_(input):
    return input.relu_()


def leaky_relu_(input, negative_slope=0.01):
    return input.leaky_relu_(negative_slope)


def hardtanh_(input, min_val=-1.0, max_val=1.0):
    return input.hardtanh_(min_val, max_val)


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


def relu6(input, inplace=False):
    return hardtanh(input, 0.0, 6.0, inplace)


def softplus(input, beta=1, threshold=20):
    return kiln.softplus(input, beta, threshold)


def elu(input, alpha=1.0, inplace=False):
    """x above 0, alpha (exp(x) - 1) at or below."""
    return input.elu_(alpha) if inplace else kiln.elu(input, alpha)


def elu_(input, alpha=1.0):
    return input.elu_(alpha)


def selu(input, inplace=False):
    """scale * elu(x, alpha) with the self-normalizing constants."""
    return kiln.selu_(input) if inplace else kiln.selu(input)


def selu_(input):
    return kiln.selu_(input)


def celu(input, alpha=1.0, inplace=False):
    """x above 0, alpha (exp(x / alpha) - 1) at or below; alpha 0 raises."""
    return kiln.celu_(input, alpha) if inplace else kiln.celu(input, alpha)


def celu_(input, alpha=1.0):
    return kiln.celu_(input, alpha)


def mish(input, inplace=False):
    """x tanh(softplus(x))."""
    return input.mish_() if inplace else kiln.mish(input)


def hardswish(input, inplace=False):
    """x relu6(x + 3) / 6."""
    return input.hardswish_() if inplace else kiln.hardswish(input)


def hardsigmoid(input, inplace=False):
    """relu6(x + 3) / 6."""
    return input.hardsigmoid_() if inplace else kiln.hardsigmoid(input)


def logsigmoid(input):
    """log(sigmoid(x)), computed stably (kiln.log_sigmoid, torch's log_sigmoid op)."""
    return kiln.log_sigmoid(input)


def softsign(input):
    """x / (1 + |x|); torch writes it in Python too."""
    return input / (input.abs() + 1)


def tanhshrink(input):
    """x - tanh(x); torch writes it in Python too."""
    return input - input.tanh()


def softshrink(input, lambd=0.5):
    return kiln.softshrink(input, lambd)


def hardshrink(input, lambd=0.5):
    return kiln.hardshrink(input, lambd)


def threshold(input, threshold, value, inplace=False):
    """value where input <= threshold, input elsewhere."""
    return input.threshold_(threshold, value) if inplace else kiln.threshold(input, threshold, value)


def threshold_(input, threshold, value):
    return input.threshold_(threshold, value)


def glu(input, dim=-1):
    """a * sigmoid(b), a and b the halves of input along dim."""
    return kiln.glu(input, dim)


def prelu(input, weight):
    """x above 0, weight * x elsewhere; weight has 1 or input.size(1) elements (the channels)."""
    return kiln.prelu(input, weight)


def _rrelu(input, lower, upper, training, inplace, generator=None):
    if not lower <= upper:
        raise RuntimeError(f"rrelu: Lower bound should be less than or equal to the upper bound, got lower={lower}, "
                           f"upper={upper}")
    if not training:
        return leaky_relu(input, (lower + upper) / 2, inplace)
    if not input.is_floating_point():
        raise RuntimeError(f"rrelu: expected a floating point input, got {input.dtype}")
    # torch's CPU kernel draws one float64 uniform(lower, upper) per element <= 0, in the order of
    # the elements; uniform_ of that many float64 draws the same numbers from the generator.
    compute = kiln.float32 if input.dtype in (kiln.float16, kiln.bfloat16) else input.dtype
    if compute == kiln.float32:   # torch's kernel takes the bounds in its float compute type
        lower, upper = (struct.unpack("f", struct.pack("f", b))[0] for b in (lower, upper))
    with kiln.no_grad():
        negative = input <= 0
        slopes = kiln.empty(int(negative.sum()), dtype=kiln.float64).uniform_(lower, upper, generator=generator)
        noise = kiln.ones(input.shape, dtype=compute)
        noise[negative] = slopes.to(compute)
    result = (input.to(compute) * noise).to(input.dtype)
    return input.copy_(result) if inplace else result


def rrelu(input, lower=1.0 / 8, upper=1.0 / 3, training=False, inplace=False):
    """Leaky ReLU whose negative slopes are drawn from uniform(lower, upper) when training
    (as torch's, from the same generator stream), and are (lower + upper) / 2 otherwise."""
    return _rrelu(input, lower, upper, training, inplace)


def rrelu_(input, lower=1.0 / 8, upper=1.0 / 3, training=False):
    return _rrelu(input, lower, upper, training, True)


def linear(input, weight, bias=None):
    """input @ weight.T (+ bias); input is [..., in_features], weight [out_features, in_features]."""
    if input.dim() == 0:
        raise RuntimeError("linear(): input must have at least 1 dimension")
    if input.dim() == 2 and bias is not None:
        return kiln.addmm(bias, input, weight.t())  # one fused op, as torch (one rounding in float16)
    if input.dim() > 2 and bias is not None and input.is_contiguous():
        # [..., in] as one [rows, in] matrix (a view): one addmm, as torch folds it, instead of a
        # matmul and a broadcast add (and the add's gradient, a sum over every row, for the bias).
        rows = math.prod(input.shape[:-1])  # not -1: ambiguous when in_features is 0
        out = kiln.addmm(bias, input.reshape(rows, input.size(-1)), weight.t())
        return out.view(*input.shape[:-1], out.size(-1))
    out = kiln.matmul(input, weight.t())
    return out if bias is None else out + bias


def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None,
                                 enable_gqa=False):
    """softmax(query @ key^T * scale + mask) @ value, as torch 2.x's: attn_mask bool (True = attend) or
    float (added), broadcast against (..., L, S); is_causal the lower-triangular mask; scale defaults
    to 1 / sqrt(E). Without dropout one fused kernel (online softmax, no L x S matrix), forward and
    backward; with dropout torch's math path. enable_gqa: key and value may have fewer heads (dim
    -3), each shared by a group of query heads."""
    if not (_backends_cuda._sdp["math"] or _backends_cuda._sdp["flash"]):
        warnings.warn("Flash attention and the math fallback are disabled (kiln.nn.attention.sdpa_kernel or "
                      "kiln.backends.cuda.enable_*_sdp): kiln's CPU kernel stands for those two.")
        raise RuntimeError("No available kernel. Aborting execution.")
    if enable_gqa and key.dim() >= 3 and key.size(-3) != query.size(-3):
        if query.size(-3) % key.size(-3) or query.size(-3) % value.size(-3):
            raise RuntimeError("scaled_dot_product_attention: the number of query heads must be a multiple of "
                               "the number of key and value heads when enable_gqa=True")
        key = key.repeat_interleave(query.size(-3) // key.size(-3), dim=-3)
        value = value.repeat_interleave(query.size(-3) // value.size(-3), dim=-3)
    return kiln._C.scaled_dot_product_attention(query, key, value, attn_mask, float(dropout_p), bool(is_causal),
                                                scale=scale)


def softmax(input, dim=None, _stacklevel=3, dtype=None):
    """exp(x - max) / sum(exp(x - max)) along `dim` (numerically stable); with dtype, the input
    is converted first (so integer inputs work, as in torch)."""
    dim = _default_dim(input, dim, "softmax", _stacklevel)
    if dtype is not None:
        return kiln.softmax(input.to(dtype), dim)
    return kiln.softmax(input, dim)


def log_softmax(input, dim=None, _stacklevel=3, dtype=None):
    """(x - max) - log(sum(exp(x - max))) along `dim` (numerically stable); with dtype, the input
    is converted first."""
    dim = _default_dim(input, dim, "log_softmax", _stacklevel)
    if dtype is not None:
        return kiln.log_softmax(input.to(dtype), dim)
    return kiln.log_softmax(input, dim)


def softmin(input, dim=None, _stacklevel=3, dtype=None):
    """softmax(-input) along `dim` (torch's implicit dim when None)."""
    dim = _default_dim(input, dim, "softmin", _stacklevel)
    if dtype is not None:
        input = input.to(dtype)
    return kiln.softmax(-input, dim)


def _default_dim(input, dim, name="softmax", stacklevel=3):
    """torch's implicit softmax dim (deprecated there, with its warning, but old code relies on it)."""
    if dim is not None:
        return dim
    from ..linalg._out import _caller_stacklevel  # the user's line, whatever wrappers lie between
    warnings.warn(f"Implicit dimension choice for {name} has been deprecated. Change the call to include dim=X "
                  "as an argument.", stacklevel=_caller_stacklevel())
    return 0 if input.dim() in (0, 1, 3) else 1


# ---------------------------------------------------------------- losses
_LEGACY = {"kiln.float32": "Float", "kiln.float64": "Double", "kiln.float16": "Half", "kiln.bfloat16": "BFloat16",
           "kiln.int64": "Long", "kiln.int32": "Int", "kiln.int16": "Short", "kiln.int8": "Char",
           "kiln.uint8": "Byte", "kiln.bool": "Bool"}  # torch's names of the dtypes in its messages

def nll_loss(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None, reduction="mean"):
    """Negative log-likelihood: -input[n, target[n], ...] * weight[target[n]], averaged over the weights.

    input is [N, C, d1, ...] (or [C]) log-probabilities; target is [N, d1, ...] (or []) class indices.
    """
    reduction = _reduction(reduction, size_average, reduce)
    # torch 1.13's nll_loss_nd: the dims and the batch size are ValueErrors, the other shape checks,
    # the target's and the weight's dtypes RuntimeErrors (in that order)
    if input.dim() < 1:
        raise ValueError(f"Expected 1 or more dimensions (got {input.dim()})")
    if input.dim() != 1 and (target.dim() == 0 or input.shape[0] != target.shape[0]):
        n = target.shape[0] if target.dim() else 0  # torch reads a 0-dim target's batch size as 0
        raise ValueError(f"Expected input batch_size ({input.shape[0]}) to match target batch_size ({n}).")
    if input.dim() == 1 and target.dim() != 0:
        if target.dim() > 1:
            raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
        raise RuntimeError(f"size mismatch (got input: {list(input.shape)}, target: {list(target.shape)})")
    if input.dim() == 2 and target.dim() != 1:
        raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    if input.dim() > 2 and tuple(target.shape) != (input.shape[0],) + tuple(input.shape[2:]):
        raise RuntimeError(f"Expected target size {[input.shape[0]] + list(input.shape[2:])}, got {list(target.shape)}")
    if target.dtype != kiln.int64:
        raise RuntimeError(f"nll_loss: expected an integer target of dtype int64 (Long), got {target.dtype}")
    if weight is not None and weight.dtype != input.dtype:
        raise RuntimeError(f"expected scalar type {_LEGACY.get(str(input.dtype), input.dtype)} but found "
                           f"{_LEGACY.get(str(weight.dtype), weight.dtype)}")
    unbatched = input.dim() == 1
    if unbatched:
        input, target = input.unsqueeze(0), target.unsqueeze(0)
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
    if label_smoothing > 1.0:  # torch 1.13 checks only the upper bound (a RuntimeError)
        raise RuntimeError(f"label_smoothing must be between 0.0 and 1.0. Got: {label_smoothing}")
    if tuple(target.shape) == tuple(input.shape) and not target.is_floating_point():
        # torch reads a target of input's shape as class probabilities whatever its dtype
        raise RuntimeError(f"Expected floating point type for target with class probabilities, got "
                           f"{_LEGACY.get(str(target.dtype), target.dtype)}")
    if tuple(target.shape) == tuple(input.shape) and ignore_index >= 0:
        raise RuntimeError("ignore_index is not supported for floating point target")
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
        if label_smoothing <= 0.0:  # torch smooths only for a positive label_smoothing
            return loss
        # The uniform part: -sum_c w_c logp_c / C per sample, 0 where the target is ignored.
        smooth = -weighted_logp.sum(class_dim)
        keep = target != ignore_index
        smooth = kiln.where(keep, smooth, 0.0)  # (not smooth * keep: an ignored row may hold inf)
        if reduction == "mean":  # as torch 1.13 reduces them (the sums round as its)
            if weight is None:
                smooth = smooth.masked_select(keep).mean()
            else:
                smooth = smooth.sum() / weight.gather(0, target.masked_select(keep).flatten()).sum()
        else:
            smooth = _reduce(smooth, reduction)
        return (1 - label_smoothing) * loss + label_smoothing / n_classes * smooth
    if tuple(target.shape) != tuple(input.shape):
        raise RuntimeError(f"cross_entropy: probability target shape {list(target.shape)} must match input shape "
                         f"{list(input.shape)}")
    if label_smoothing > 0.0:
        target = target * (1 - label_smoothing) + label_smoothing / n_classes
    # torch's cross_entropy_loss_prob_target: -(input * target * weight) summed over everything for
    # 'sum' and 'mean' (divided by the number of samples), over the class dim for 'none'
    prod = logp * target
    if weight is not None:
        prod = prod * weight.view(shape)
    if reduction == "none":
        return -prod.sum(class_dim)
    if reduction == "sum":
        return -prod.sum()
    return -prod.sum() / (input.numel() // n_classes)


def mse_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """(input - target)^2, reduced."""
    _warn_size(input, target)
    return kiln.mse_loss(input, target, _REDUCTIONS.index(_reduction(reduction, size_average, reduce)))


def l1_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """|input - target|, reduced."""
    _warn_size(input, target)
    return kiln.l1_loss(input, target, _REDUCTIONS.index(_reduction(reduction, size_average, reduce)))


def binary_cross_entropy_with_logits(input, target, weight=None, size_average=None, reduce=None, reduction="mean",
                                     pos_weight=None):
    """Binary cross entropy of sigmoid(input) against target, computed stably from the logits."""
    code = _REDUCTIONS.index(_reduction(reduction, size_average, reduce))
    if tuple(target.shape) != tuple(input.shape):  # torch's Python check: a ValueError
        raise ValueError(f"Target size ({target.shape}) must be the same as input size ({input.shape})")
    return kiln.binary_cross_entropy_with_logits(input, target, weight, pos_weight, code)


def binary_cross_entropy(input, target, weight=None, size_average=None, reduce=None, reduction="mean"):
    """-(t log p + (1 - t) log(1 - p)) of probabilities p in [0, 1]; the logs are clamped at
    -100 as torch's, so p = 0 or 1 gives a finite loss (and a finite gradient)."""
    reduction = _reduction(reduction, size_average, reduce)
    if tuple(target.shape) != tuple(input.shape):
        raise ValueError(f"Using a target size ({target.shape}) that is different to the input size "
                         f"({input.shape}) is deprecated. Please ensure they have the same size.")
    if target.dtype != input.dtype:  # torch's kernel reads both in input's dtype
        raise RuntimeError(f"Found dtype {_LEGACY_NAME.get(str(target.dtype).split('.')[-1], target.dtype)} but "
                           f"expected {_LEGACY_NAME.get(str(input.dtype).split('.')[-1], input.dtype)}")
    if weight is not None:
        weight = weight.expand(input.shape)
    return kiln.binary_cross_entropy(input, target, weight, _REDUCTIONS.index(reduction))


_LEGACY_NAME = {"float32": "Float", "float64": "Double", "float16": "Half", "bfloat16": "BFloat16", "int64": "Long",
                "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte", "bool": "Bool"}


def _code(reduction, size_average=None, reduce=None):
    return _REDUCTIONS.index(_reduction(reduction, size_average, reduce))


def _warn_size(input, target):
    if tuple(target.shape) != tuple(input.shape):
        warnings.warn(f"Using a target size ({target.shape}) that is different to the input size ({input.shape}). "
                      "This will likely lead to incorrect results due to broadcasting. Please ensure they have the "
                      "same size.", stacklevel=3)


def smooth_l1_loss(input, target, size_average=None, reduce=None, reduction="mean", beta=1.0):
    """0.5 d^2 / beta where |d| < beta, |d| - 0.5 beta elsewhere (d = input - target)."""
    _warn_size(input, target)
    code = _code(reduction, size_average, reduce)
    input, target = kiln.broadcast_tensors(input, target)
    return kiln.smooth_l1_loss(input, target, code, beta)


def huber_loss(input, target, reduction="mean", delta=1.0):
    """0.5 d^2 where |d| < delta, delta (|d| - 0.5 delta) elsewhere."""
    _warn_size(input, target)
    code = _code(reduction)
    input, target = kiln.broadcast_tensors(input, target)
    return kiln.huber_loss(input, target, code, delta)


def kl_div(input, target, size_average=None, reduce=None, reduction="mean", log_target=False):
    """target (log target - input) summed as reduction says, input holding log-probabilities;
    'batchmean' divides the sum by the batch size (input.size(0)), the true KL divergence."""
    if size_average is not None or reduce is not None:
        reduction = _reduction(reduction, size_average, reduce)
    elif reduction == "mean":
        warnings.warn("reduction: 'mean' divides the total loss by both the batch size and the support size."
                      "'batchmean' divides only by the batch size, and aligns with the KL div math definition."
                      "'mean' will be changed to behave the same as 'batchmean' in the next major release.")
    if reduction == "batchmean":
        loss = kiln.kl_div(input, target, 2, log_target=log_target)
        return loss / input.shape[0] if input.dim() != 0 else loss
    return kiln.kl_div(input, target, _code(reduction), log_target=log_target)


def soft_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """log(1 + exp(-target * input)), target holding 1 or -1."""
    if kiln.is_grad_enabled() and isinstance(target, kiln.Tensor) and target.requires_grad:
        # torch 1.13 has no derivative for the target (its check_no_requires_grad)
        raise RuntimeError("The function 'soft_margin_loss' is not differentiable with respect to argument "
                           "'target'. This input cannot have requires_grad True.")
    return kiln.soft_margin_loss(input, target, _code(reduction, size_average, reduce))


def margin_ranking_loss(input1, input2, target, margin=0, size_average=None, reduce=None, reduction="mean"):
    """max(0, -target (input1 - input2) + margin)."""
    code = _code(reduction, size_average, reduce)
    if input1.dim() != input2.dim() or input1.dim() != target.dim():
        raise RuntimeError(f"margin_ranking_loss : All input tensors should have same dimension but got sizes: "
                           f"input1: {input1.shape}, input2: {input2.shape}, target: {target.shape} ")
    return kiln.margin_ranking_loss(input1, input2, target, margin, code)


def cosine_embedding_loss(input1, input2, target, margin=0, size_average=None, reduce=None, reduction="mean"):
    """1 - cos(input1, input2) where target is 1, max(0, cos - margin) where it is -1."""
    return kiln.cosine_embedding_loss(input1, input2, target, margin, _code(reduction, size_average, reduce))


def triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2, eps=1e-6, swap=False, size_average=None,
                        reduce=None, reduction="mean"):
    """max(0, margin + d(anchor, positive) - d(anchor, negative)), d the p-norm distance over the last dim."""
    code = _code(reduction, size_average, reduce)
    return kiln.triplet_margin_loss(anchor, positive, negative, margin, p, eps, swap, code)


def poisson_nll_loss(input, target, log_input=True, full=False, size_average=None, eps=1e-8, reduce=None,
                     reduction="mean"):
    """exp(input) - target input (log_input), or input - target log(input + eps); full adds the
    Stirling term of log(target!)."""
    if size_average is None and reduce is None and reduction not in _REDUCTIONS:
        raise ValueError(f"{reduction} is not a valid value for reduction")
    return kiln.poisson_nll_loss(input, target, log_input, full, eps, _code(reduction, size_average, reduce))


def gaussian_nll_loss(input, target, var, full=False, eps=1e-6, reduction="mean"):
    """0.5 (log var + (input - target)^2 / var), var clamped at eps (its gradient passes the clamp,
    as torch's); var may have input's shape, or lack or have 1 as its last dim (one variance)."""
    if isinstance(var, (int, float)):   # torch 2.x accepts a number
        var = kiln.full_like(input, var)
    if tuple(var.shape) != tuple(input.shape):
        if tuple(input.shape[:-1]) == tuple(var.shape):
            var = var.unsqueeze(-1)
        elif tuple(input.shape[:-1]) == tuple(var.shape[:-1]) and var.shape[-1] == 1:
            pass
        else:
            raise ValueError("var is of incorrect size")
    if reduction not in _REDUCTIONS:
        raise ValueError(reduction + " is not valid")
    if bool((var < 0).any()):
        raise ValueError("var has negative entry/entries")
    var = var.clone()
    with kiln.no_grad():
        var.clamp_(min=eps)
    loss = 0.5 * (kiln.log(var) + (input - target) ** 2 / var)
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    return _reduce(loss, reduction)


def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0, reduction="mean", zero_infinity=False):
    """Connectionist temporal classification loss: -log of the summed probability of every
    alignment of the target to the input (blanks between and around the labels, repeats merged).

    log_probs is (T, N, C) log-probabilities (or unbatched (T, C)); targets are padded (N, S) or
    concatenated (sum(target_lengths)) class indices; input_lengths and target_lengths are one per
    sample, as int lists/tuples or integer tensors. 'mean' divides each loss by its target length
    before averaging over the batch; zero_infinity zeroes impossible alignments' losses and
    gradients. The recursion and its gradient are the C++ ops _ctc_loss/_ctc_loss_backward."""
    if reduction not in _REDUCTIONS:   # torch's _Reduction.get_enum
        raise ValueError(f"{reduction} is not a valid value for reduction")
    return kiln.ctc_loss(log_probs, targets, input_lengths, target_lengths, blank, _REDUCTIONS.index(reduction),
                         zero_infinity)


def multilabel_soft_margin_loss(input, target, weight=None, size_average=None, reduce=None, reduction="mean"):
    """-(target log sigmoid(x) + (1 - target) log sigmoid(-x)), averaged over the classes (last dim)."""
    if size_average is not None or reduce is not None:
        reduction = _reduction(reduction, size_average, reduce)
    loss = -(target * logsigmoid(input) + (1 - target) * logsigmoid(-input))
    if weight is not None:
        loss = loss * weight
    class_dim = input.dim() - 1
    loss = loss.sum(dim=class_dim) / input.shape[class_dim]
    if reduction not in _REDUCTIONS:
        raise ValueError(reduction + " is not valid")
    return _reduce(loss, reduction)


# ---------------------------------------------------------------- convolution and pooling
def _pair(v):
    return tuple(v) if isinstance(v, (tuple, list)) else (v, v)


def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """2-D convolution (cross-correlation) of (N, C, H, W) or (C, H, W) input; padding may be
    'valid' or 'same' (stride 1 only, as torch; odd total padding puts the extra row last)."""
    if isinstance(padding, str):
        if padding == "valid":
            padding = 0
        elif padding == "same":
            if any(s != 1 for s in _pair(stride)):
                raise RuntimeError("padding='same' is not supported for strided convolutions")
            total = [d * (k - 1) for d, k in zip(_pair(dilation), weight.shape[2:])]
            if any(t % 2 for t in total):
                # Asymmetric: pad the extra row/column on the right/bottom first.
                input = pad(input, [0, total[1] % 2, 0, total[0] % 2])
            padding = [t // 2 for t in total]
        else:
            raise RuntimeError(f"Invalid padding string: '{padding}'")
    return kiln.conv2d(input, weight, bias, _pair(stride), _pair(padding), _pair(dilation), groups)


def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    """Max over kernel_size windows; with return_indices also the argmax (flat in each H*W plane)."""
    stride = [] if stride is None or (isinstance(stride, (list, tuple)) and not stride) else _pair(stride)
    args = (input, _pair(kernel_size), stride, _pair(padding), _pair(dilation), ceil_mode)
    if return_indices:
        return tuple(kiln.max_pool2d_with_indices(*args))
    return kiln.max_pool2d(*args)


def avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
               divisor_override=None):
    stride = [] if stride is None or (isinstance(stride, (list, tuple)) and not stride) else _pair(stride)
    if input.dtype == kiln.int64:  # torch's int64 kernel: sum / divisor in integers (truncated), exact in double
        return _long_average(kiln.avg_pool2d(input.double(), _pair(kernel_size), stride, _pair(padding), ceil_mode,
                                             count_include_pad, divisor_override))
    return kiln.avg_pool2d(input, _pair(kernel_size), stride, _pair(padding), ceil_mode, count_include_pad,
                           divisor_override)


def _long_average(mean):
    return mean.trunc().to(kiln.int64)


def _adaptive_size(input, output_size, n):
    """torch's _list_with_default: an int stands for n of it; a None entry of a sequence keeps the
    input's size there (the sequence's length is the op's to check)."""
    if _is_integer(output_size):
        return [int(output_size)] * n
    if input.dim() <= len(output_size):
        raise ValueError(f"Input dimension should be at least {len(output_size) + 1}")
    dims = input.shape[input.dim() - len(output_size):]
    return [d if s is None else s for s, d in zip(output_size, dims)]


def adaptive_avg_pool2d(input, output_size):
    """Average pooling to output_size; a None entry keeps the input's size there."""
    return kiln.adaptive_avg_pool2d(input, _adaptive_size(input, output_size, 2))


def _single_size(output_size, op):
    size = list(output_size) if isinstance(output_size, (list, tuple)) else [output_size]
    for i, s in enumerate(size):  # torch's argument parser (int[1])
        if not _is_integer(s):
            raise TypeError(f"{op}(): argument 'output_size' must be tuple of ints, but found element of type "
                            f"{type(s).__name__} at pos {i}")
    if len(size) != 1:
        raise RuntimeError(f"{op}() argument 'output_size' should contain one int (got {len(size)})")
    return size


def _check_1d_input(input, op):
    if input.dim() not in (2, 3):
        raise RuntimeError(f"Expected 2 to 3 dimensions, but got {input.dim()}-dimensional tensor for argument #1 "
                           f"'self' (while checking arguments for {op})")


def adaptive_avg_pool1d(input, output_size):
    """Average pooling of (N, C, L) or (C, L) to output_size bins (adaptive_avg_pool2d over a unit height)."""
    size = _single_size(output_size, "adaptive_avg_pool1d")
    _check_1d_input(input, "adaptive_avg_pool1d")
    return kiln.adaptive_avg_pool2d(input.unsqueeze(-2), [1, size[0]]).squeeze(-2)


def adaptive_avg_pool3d(input, output_size):
    """Average pooling of (N, C, D, H, W) or (C, D, H, W) to output_size; None keeps the input's size."""
    size = _adaptive_size(input, output_size, 3)
    if list(size) == [1, 1, 1] and isinstance(input, kiln.Tensor) and input.dim() in (4, 5):
        # torch's adaptive_avg_pool3d: a 1 x 1 x 1 output is the mean over the last three dims (its bits)
        return input.mean((-1, -2, -3), keepdim=True)
    return kiln.adaptive_avg_pool3d(input, size)


def adaptive_max_pool2d(input, output_size, return_indices=False):
    """Max pooling to output_size bins; with return_indices also the argmax (flat in each H*W plane)."""
    out, indices = kiln.adaptive_max_pool2d(input, _adaptive_size(input, output_size, 2))
    return (out, indices) if return_indices else out


def adaptive_max_pool3d(input, output_size, return_indices=False):
    """Max pooling of (N, C, D, H, W) or (C, D, H, W) to output_size bins; indices flat in each D*H*W volume."""
    out, indices = kiln.adaptive_max_pool3d(input, _adaptive_size(input, output_size, 3))
    return (out, indices) if return_indices else out


def adaptive_max_pool1d(input, output_size, return_indices=False):
    """Max pooling of (N, C, L) or (C, L) to output_size bins; indices are positions along L."""
    size = _single_size(output_size, "adaptive_max_pool1d")
    _check_1d_input(input, "adaptive_max_pool1d")
    out, indices = kiln.adaptive_max_pool2d(input.unsqueeze(-2), [1, size[0]])
    out, indices = out.squeeze(-2), indices.squeeze(-2)
    return (out, indices) if return_indices else out


def pad(input, pad, mode="constant", value=None):
    """Pads the last len(pad) // 2 dims: pad = (left, right, top, bottom, ...); negative values crop."""
    if mode == "constant":
        return kiln.constant_pad_nd(input, list(pad), 0 if value is None else value)
    if mode not in ("reflect", "replicate", "circular"):
        raise NotImplementedError(f"Unrecognised padding mode {mode}")
    if value is not None and value != 0:
        raise RuntimeError(f'Padding mode "{mode}" doesn\'t take in value argument')
    return _pad_indexed(input, list(pad), mode)


def _pad_indexed(input, pad, mode):
    """reflect / replicate / circular padding of the last len(pad) // 2 dims: index_select of each
    dim with the source index of every output position (negative padding crops), so the gradient
    (and its gradient) flows through index_select."""
    k = len(pad) // 2
    if len(pad) % 2:
        raise RuntimeError("Padding length must be divisible by 2")
    if len(pad) > 2 * input.dim():
        raise RuntimeError(f"Padding length should be less than or equal to two times the input dimension but got "
                           f"padding length {len(pad)} and input of dimension {input.dim()}")
    if len(pad) % 2 or not 1 <= k <= 3 or not k + 1 <= input.dim() <= k + 2:
        raise NotImplementedError("Only 2D, 3D, 4D, 5D padding with non-constant padding are supported for now")
    sources = []  # per padded dim, last first: the source index of each output position
    for i in range(k):
        dim = input.dim() - 1 - i
        left, right = int(pad[2 * i]), int(pad[2 * i + 1])
        n = input.shape[dim]
        if mode == "reflect" and (left >= n or right >= n):
            raise RuntimeError(f"Argument #4: Padding size should be less than the corresponding input dimension, "
                               f"but got: padding ({left}, {right}) at dimension {dim} of input {list(input.shape)}")
        if mode == "circular" and (left > n or right > n):
            raise RuntimeError("Padding value causes wrapping around more than once.")
        if n == 0 and (left > 0 or right > 0):
            raise RuntimeError(f"{mode}_pad(): input of size {list(input.shape)} has an empty dimension {dim} to pad")
        if n + left + right < 0 or (n + left + right == 0 and n > 0 and mode != "circular"):
            raise RuntimeError(f"{mode}_pad(): input (size {n} at dimension {dim}) is too small for padding "
                               f"({left}, {right})")
        src = []
        for j in range(-left, n + right):
            if mode == "reflect":
                j = -j if j < 0 else (2 * (n - 1) - j if j >= n else j)
            elif mode == "replicate":
                j = min(max(j, 0), n - 1)
            else:  # torch wraps within what is left after the cropping (negative) side
                lo, hi = max(-left, 0), n - max(-right, 0)
                j = lo + (j - lo) % (hi - lo) if hi > lo else j % n
            src.append(j)
        sources.append(src)
    if mode == "circular":  # torch narrows and concatenates: one dim at a time
        out = input
        for i, src in enumerate(sources):
            out = out.index_select(input.dim() - 1 - i, kiln.tensor(src, dtype=kiln.int64).reshape(len(src)))
        return out
    # reflect / replicate: one gather over the padded dims together, whose gradient (index_add in
    # output order) adds each output's gradient to its source as torch's backward loops do, in
    # row-major output order (dim by dim would add in another order).
    # The flat source index of every output position, built as a tensor (a padded image has tens of
    # thousands of positions: no Python loop over them): outermost padded dim first, each dim's
    # sources times its stride in the input plane, broadcast against the inner dims'.
    index = kiln.zeros([], dtype=kiln.int64)
    stride = 1
    for i in range(k):  # innermost padded dim first
        src = kiln.tensor(sources[i], dtype=kiln.int64).reshape([len(sources[i])] + [1] * i)
        index = index + src * stride
        stride *= input.shape[input.dim() - 1 - i]
    lead = list(input.shape[:input.dim() - k])
    out_sizes = list(index.shape)
    return input.reshape(lead + [stride]).index_select(-1, index.reshape(-1)).reshape(lead + out_sizes)


# ---------------------------------------------------------------- normalization, dropout, embedding
def batch_norm(input, running_mean, running_var, weight=None, bias=None, training=False, momentum=0.1, eps=1e-5):
    """Normalizes over every dim but 1 (the channels), with batch statistics when training
    (updating the running ones) and the running statistics otherwise."""
    if training:
        per_channel = input.numel() // input.shape[1] if input.dim() >= 2 and input.shape[1] else 0
        if per_channel == 1:
            raise ValueError(f"Expected more than 1 value per channel when training, got input size {input.shape}")
    return kiln.batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps, False)


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5):
    if isinstance(normalized_shape, int) or not hasattr(normalized_shape, "__iter__"):
        # torch's binding takes a list of ints only (nn.LayerNorm makes a tuple of an int itself)
        raise TypeError("layer_norm(): argument 'normalized_shape' (position 2) must be tuple of ints, not "
                        f"{type(normalized_shape).__name__}")
    return kiln.layer_norm(input, list(normalized_shape), weight, bias, eps)


def rms_norm(input, normalized_shape, weight=None, eps=None):
    """torch 2.4's rms_norm: input / sqrt(mean(input**2 over the last len(normalized_shape) dims) + eps),
    times weight; float16/bfloat16 computed in float32; eps None: the computing type's epsilon."""
    shape = [normalized_shape] if isinstance(normalized_shape, int) else list(normalized_shape)
    n = len(shape)
    if n == 0 or input.dim() < n or list(input.shape[input.dim() - n:]) != shape:
        raise RuntimeError(f"Given normalized_shape={shape}, expected input with shape [*, "
                           f"{', '.join(map(str, shape))}], but got input of size{list(input.shape)}")
    if weight is not None and list(weight.shape) != shape:
        raise RuntimeError(f"Expected weight to be of same shape as normalized_shape, but got weight of shape "
                           f"{list(weight.shape)} and normalized_shape = {shape}")
    if not input.is_floating_point():  # torch dispatches the floating types only
        names = {kiln.bool: "Bool", kiln.uint8: "Byte", kiln.int8: "Char", kiln.int16: "Short", kiln.int32: "Int",
                 kiln.int64: "Long"}
        raise RuntimeError(f"\"rms_norm\" not implemented for '{names.get(input.dtype, input.dtype)}'")
    wide = input.float() if input.dtype in (kiln.float16, kiln.bfloat16) else input
    if eps is None:
        eps = kiln.finfo(wide.dtype).eps
    if wide is not input:  # torch holds eps as the input's scalar_t: 1e-9 is 0 in float16
        eps = float(kiln.tensor(eps, dtype=input.dtype))
    dims = list(range(input.dim() - n, input.dim()))
    result = (wide * kiln.rsqrt(wide.pow(2).mean(dims, keepdim=True) + eps)).type_as(input)
    return result * weight if weight is not None else result


def dropout(input, p=0.5, training=True, inplace=False):
    """Zeroes elements with probability p (drawn from kiln's generator) and scales the rest by 1/(1-p).
    kiln.dropout raises ValueError for p outside [0, 1]."""
    result = kiln.dropout(input, p, training)
    return input.copy_(result) if inplace and result is not input else result


def _feature_dropout(input, p, training, inplace):
    """Whole channels zeroed (torch's feature_dropout): a bernoulli(1 - p) draw of shape
    (N, C, 1, ...) from kiln's generator, as torch draws it, divided by 1 - p and multiplied in."""
    if p < 0 or p > 1:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if p == 0 or not training or input.numel() == 0:
        return input
    if p == 1:
        return input.mul_(0) if inplace else input * kiln.zeros([], dtype=input.dtype)
    noise = kiln.empty(list(input.shape[:2]) + [1] * (input.dim() - 2), dtype=input.dtype)
    noise.bernoulli_(1 - p)
    noise.div_(1 - p)
    return input.mul_(noise) if inplace else input * noise


def _channel_dropout(name, input, p, training, inplace, dims):
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if input.dim() not in dims:
        raise RuntimeError(f"{name}: Expected {dims[0]}D or {dims[1]}D input, but received a {input.dim()}D input. "
                           f"Note that {name} exists to provide channel-wise dropout on inputs with {dims[0] - 1} "
                           "spatial dimension" + ("s" if dims[0] > 2 else "") + ", a channel dimension, and an "
                           f"optional batch dimension (i.e. {dims[0]}D or {dims[1]}D inputs).")
    batched = input.dim() == dims[1]
    if not batched:
        input = input.unsqueeze_(0) if inplace else input.unsqueeze(0)
    result = _feature_dropout(input, p, training, inplace)
    if not batched:
        result = result.squeeze_(0) if inplace else result.squeeze(0)
    return result


def dropout1d(input, p=0.5, training=True, inplace=False):
    """Zeroes whole channels of (N, C, L) or (C, L) inputs."""
    return _channel_dropout("dropout1d", input, p, training, inplace, (2, 3))


def dropout2d(input, p=0.5, training=True, inplace=False):
    """Zeroes whole channels of (N, C, H, W) inputs (a 3-D input as (N, C, L), with torch's warning)."""
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if input.dim() not in (3, 4):
        warnings.warn(f"dropout2d: Received a {input.dim()}-D input to dropout2d, which is deprecated and will "
                      "result in an error in a future release. To retain the behavior and silence this warning, "
                      "please use dropout instead. Note that dropout2d exists to provide channel-wise dropout on "
                      "inputs with 2 spatial dimensions, a channel dimension, and an optional batch dimension "
                      "(i.e. 3D or 4D inputs).")
    if input.dim() == 3:
        warnings.warn("dropout2d: Received a 3D input to dropout2d and assuming that channel-wise 1D dropout "
                      "behavior is desired - input is interpreted as shape (N, C, L), where C is the channel dim. "
                      "This behavior will change in a future release to interpret the input as one without a "
                      "batch dimension, i.e. shape (C, H, W). To maintain the 1D channel-wise dropout behavior, "
                      "please switch to using dropout1d instead.")
    return _feature_dropout(input, p, training, inplace)


def dropout3d(input, p=0.5, training=True, inplace=False):
    """Zeroes whole channels of (N, C, D, H, W) or (C, D, H, W) inputs."""
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if input.dim() not in (4, 5):
        warnings.warn(f"dropout3d: Received a {input.dim()}-D input to dropout3d, which is deprecated and will "
                      "result in an error in a future release. To retain the behavior and silence this warning, "
                      "please use dropout instead. Note that dropout3d exists to provide channel-wise dropout on "
                      "inputs with 3 spatial dimensions, a channel dimension, and an optional batch dimension "
                      "(i.e. 4D or 5D inputs).")
    batched = input.dim() == 5
    if not batched:
        input = input.unsqueeze_(0) if inplace else input.unsqueeze(0)
    result = _feature_dropout(input, p, training, inplace)
    if not batched:
        result = result.squeeze_(0) if inplace else result.squeeze(0)
    return result


def pairwise_distance(x1, x2, p=2.0, eps=1e-6, keepdim=False):
    """||x1 - x2 + eps||_p over the last dim (torch's formula, eps added before the norm)."""
    dim = max(x1.dim(), x2.dim()) - 1
    return kiln.norm(x1 - x2 + eps, p, dim, keepdim=keepdim)


def embedding(input, weight, padding_idx=None, max_norm=None, norm_type=2.0, scale_grad_by_freq=False,
              sparse=False):
    """Rows of `weight` picked by the integer tensor `input`: shape input.shape + (embedding_dim,).
    The row at padding_idx gets no gradient (as torch). max_norm: the rows input picks are first
    renormalised in place to that norm where longer (torch's embedding_renorm_); scale_grad_by_freq:
    each row's gradient is divided by how often input picks it."""
    for position, arg, v in ((4, "scale_grad_by_freq", scale_grad_by_freq), (5, "sparse", sparse)):
        if not isinstance(v, bool):  # torch's parser: bools only
            raise TypeError(f"embedding(): argument '{arg}' (position {position}) must be bool, not {type(v).__name__}")
    if padding_idx is not None and (isinstance(padding_idx, bool) or not hasattr(padding_idx, "__index__")):
        raise TypeError(f"embedding(): argument 'padding_idx' (position 3) must be int, not {type(padding_idx).__name__}")
    if max_norm is not None:
        for position, arg, v in ((3, "max_norm", max_norm), (4, "norm_type", norm_type)):
            if not isinstance(v, (int, float)) and not (isinstance(v, kiln.Tensor) and v.dim() == 0):
                raise TypeError(f"embedding_renorm_(): argument '{arg}' (position {position}) must be float, not "
                                f"{type(v).__name__}")
    if input.is_floating_point() or input.dtype == kiln.bool:
        raise RuntimeError("embedding(): Expected tensor for argument #1 'indices' to have one of the following "
                           f"scalar types: Long, Int; but got {input.dtype} instead")
    if weight.dim() != 2:
        raise RuntimeError("'weight' must be 2-D")
    if max_norm is not None:
        _embedding_renorm_(weight, input, max_norm, norm_type)
    if padding_idx is not None:
        num = weight.shape[0]
        if not -num <= padding_idx < num:
            raise AssertionError("Padding_idx must be within num_embeddings")
        padding_idx = padding_idx % num
    if sparse and weight.requires_grad and kiln.is_grad_enabled():
        return _EmbeddingSparse.apply(weight, input, padding_idx, scale_grad_by_freq)
    if padding_idx is not None:
        if weight.requires_grad and kiln.is_grad_enabled():
            # Same values, but the padding row reads a detached copy, so it gets no gradient.
            row = (kiln.arange(num) == padding_idx).reshape(num, 1)
            weight = kiln.where(row, weight.detach(), weight)
    flat = input.reshape(-1)
    rows = weight.index_select(0, flat)
    if scale_grad_by_freq and rows.requires_grad:
        counts = kiln.bincount(flat, minlength=weight.shape[0]).index_select(0, flat).reshape(-1, 1)
        rows.register_hook(lambda grad: grad / counts.to(grad.dtype))
    return rows.reshape(list(input.shape) + [weight.shape[1]])


class _EmbeddingSparse(kiln.autograd.Function):
    """embedding(sparse=True): the rows input picks; the weight's gradient is torch's sparse COO one
    (embedding_sparse_backward: one row per index of input, in order, those equal to padding_idx left
    out, the output gradient's rows as values). It does not go through the engine's AccumulateGrad
    (dense only): kiln/sparse/_grad.py accumulates it into the weight's .grad at the end of the backward
    pass (docs/ARCHITECTURE.md, "Sparse gradients"). Under autograd.grad, or for a weight that is not a
    leaf, the engine gets the dense gradient instead."""

    @staticmethod
    def forward(ctx, weight, input, padding_idx, scale_grad_by_freq):
        from ..sparse import _grad
        ctx.weight, ctx.order = weight, _grad.next_order()
        ctx.padding_idx, ctx.scale_grad_by_freq = padding_idx, scale_grad_by_freq
        ctx.size = list(weight.shape)
        ctx.save_for_backward(input)
        return weight.index_select(0, input.reshape(-1)).reshape(list(input.shape) + [weight.shape[1]])

    @staticmethod
    def backward(ctx, grad):
        input, = ctx.saved_tensors
        return _sparse_weight_grad(ctx, grad.reshape(-1, ctx.size[1]), input.reshape(-1)), None, None, None


def _sparse_weight_grad(ctx, values, indices):
    """The sparse gradient (indices, one row of values each) routed to ctx.weight's .grad (None returned to
    the engine), or, under autograd.grad or for a non-leaf weight, the dense gradient returned."""
    from ..sparse import SparseCooTensor, _grad
    if ctx.scale_grad_by_freq:
        raise RuntimeError("embedding_backward: scale_grad_by_freq not supported with sparse gradients")
    indices = indices.long()
    if ctx.padding_idx is not None:
        keep = indices != ctx.padding_idx
        indices, values = indices[keep], values[keep]
    weight = ctx.weight
    if _grad.wants_dense(weight):
        return kiln.zeros(ctx.size, dtype=values.dtype).index_add(0, indices, values)
    _grad.route(weight, SparseCooTensor(indices.reshape(1, -1), values, ctx.size), ctx.order)
    return None


def _embedding_renorm_(weight, input, max_norm, norm_type):
    """torch.embedding_renorm_: each row `input` picks whose norm exceeds max_norm is scaled in place by
    max_norm / (norm + 1e-7) (the norm rounded to weight's dtype, the factor in double, as torch)."""
    with kiln.no_grad():
        idx = input.reshape(-1).unique().to(kiln.int64)  # int32 indices too
        if idx.numel() and (int(idx.min()) < 0 or int(idx.max()) >= weight.shape[0]):
            raise IndexError("embedding_renorm_(): index out of range in self")
        rows = weight.index_select(0, idx)
        norms = kiln.linalg.vector_norm(rows, norm_type, dim=1).double()
        scale = kiln.where(norms > max_norm, max_norm / (norms + 1e-7), kiln.ones_like(norms))
        weight.index_copy_(0, idx, rows * scale.to(weight.dtype).reshape(-1, 1))
    return weight


# ---------------------------------------------------------------- small helpers torch has
def one_hot(tensor, num_classes=-1):
    """int64 tensor of shape tensor.shape + (num_classes,), 1 at each class index."""
    if tensor.dtype != kiln.int64:  # torch: int64 only (int32 and uint8 too are refused)
        raise RuntimeError("one_hot is only applicable to index tensor.")
    if tensor.numel() and tensor.min().item() < 0:
        raise RuntimeError("Class values must be non-negative.")
    if num_classes == -1:
        if tensor.numel() == 0:
            raise RuntimeError("Can not infer total number of classes from empty tensor.")
        num_classes = int(tensor.max().item()) + 1
    elif tensor.numel() and tensor.max().item() >= num_classes:
        raise RuntimeError("Class values must be smaller than num_classes.")
    # torch's: zeros, then a 1 scattered at each index (a comparison with arange wrote a bool tensor
    # and converted it: 5x the time)
    out = kiln.zeros(tuple(tensor.shape) + (num_classes,), dtype=kiln.int64)
    return out.scatter_(-1, tensor.unsqueeze(-1), 1)


def normalize(input, p=2.0, dim=1, eps=1e-12, out=None):
    """input / max(||input||_p over dim, eps)."""
    result = input / kiln.norm(input, p, dim, keepdim=True).clamp(min=eps)
    return result if out is None else out.copy_(result)


def cosine_similarity(x1, x2, dim=1, eps=1e-8):
    """sum((x1 / ||x1||) * (x2 / ||x2||)) over dim, after broadcasting x1 and x2 together, each
    squared norm clamped to eps^2 outside the graph: torch 1.13's formula, op for op (its bits and
    its gradient)."""
    dtype = kiln.result_type(x1, x2)
    if not dtype.is_floating_point:
        raise RuntimeError(f"expected common dtype to be floating point, yet common dtype is {dtype}")
    x1, x2 = kiln.broadcast_tensors(x1.to(dtype), x2.to(dtype))
    squared1 = x1.pow(2).sum(dim, keepdim=True)
    squared2 = x2.pow(2).sum(dim, keepdim=True)
    with kiln.no_grad():
        squared1.clamp_min_(eps * eps)
        squared2.clamp_min_(eps * eps)
    return ((x1 / squared1.sqrt()) * (x2 / squared2.sqrt())).sum(dim)


# ---------------------------------------------------------------- 1-D/3-D and transposed convolutions
# Composites over conv2d and its backward ops (whose derivatives give double backward): conv1d is
# conv2d with a unit height, conv3d sums one conv2d per kernel depth over depth slices folded into
# the batch, and a transposed convolution is conv2d_backward_input (the adjoint of conv2d).
def _ntuple(v, n, name="", op=""):
    if isinstance(v, (tuple, list)):
        if len(v) == 1 and n > 1:
            return tuple(v) * n
        if len(v) != n:
            raise RuntimeError(f"{op}: expected {name} to be a single integer value or a list of {n} values "
                               f"to match the convolution dimensions, but got {name}={list(v)}")
        return tuple(int(x) for x in v)
    return (int(v),) * n


def _shape_str(t):
    return "[" + ", ".join(str(s) for s in t.shape) + "]"


def _conv_check(op, input, weight, bias, stride, padding, dilation, groups, nd, transposed=False,
                output_padding=None):
    """torch's convolution argument checks (RuntimeError, naming the op and the argument)."""
    if not isinstance(input, kiln.Tensor) or not isinstance(weight, kiln.Tensor):
        raise TypeError(f"{op}(): argument 'input' and 'weight' must be Tensor")
    if input.dim() not in (nd + 1, nd + 2):
        raise RuntimeError(f"Expected {nd + 1}D (unbatched) or {nd + 2}D (batched) input to {op}, but got input "
                           f"of size: {_shape_str(input)}")
    if weight.dim() != nd + 2:
        raise RuntimeError(f"{op}(): Expected {nd + 2}-dimensional weight for {nd + 2}-dimensional input "
                           f"{_shape_str(input)}, but got {weight.dim()}-dimensional weight of size "
                           f"{_shape_str(weight)} instead")
    if any(s <= 0 for s in stride):
        raise RuntimeError(f"{op}(): non-positive stride is not supported, got stride={list(stride)}")
    if any(p < 0 for p in padding):
        raise RuntimeError(f"{op}(): negative padding is not supported, got padding={list(padding)}")
    if any(d <= 0 for d in dilation):
        raise RuntimeError(f"{op}(): dilation should be greater than zero, got dilation={list(dilation)}")
    if groups <= 0:
        raise RuntimeError(f"{op}(): non-positive groups is not supported, got groups={groups}")
    if not input.is_floating_point() or input.dtype != weight.dtype:
        raise RuntimeError(f"{op}(): expected input and weight of the same floating point dtype, got "
                           f"{input.dtype} and {weight.dtype}")
    channels = input.shape[0 if input.dim() == nd + 1 else 1]
    if transposed:
        if weight.shape[0] != channels:
            raise RuntimeError(f"{op}(): Given transposed=1, weight of size {_shape_str(weight)}, expected input"
                               f"{_shape_str(input)} to have {weight.shape[0]} channels, but got {channels} "
                               "channels instead")
        if weight.shape[0] % groups:
            raise RuntimeError(f"{op}(): Given groups={groups}, expected weight to be divisible by {groups} at "
                               f"dimension 0, but got weight of size {_shape_str(weight)} instead")
        out_channels = weight.shape[1] * groups
        if any(op_ >= max(s, d) or op_ < 0 for op_, s, d in zip(output_padding, stride, dilation)):
            raise RuntimeError(f"{op}(): output padding must be smaller than either stride or dilation, but got "
                               f"output_padding={list(output_padding)}, stride={list(stride)}, "
                               f"dilation={list(dilation)}")
    else:
        if weight.shape[0] % groups:
            raise RuntimeError(f"{op}(): Given groups={groups}, expected weight to be divisible by {groups} at "
                               f"dimension 0, but got weight of size {_shape_str(weight)} instead")
        if weight.shape[1] * groups != channels:
            raise RuntimeError(f"{op}(): Given groups={groups}, weight of size {_shape_str(weight)}, expected input"
                               f"{_shape_str(input)} to have {weight.shape[1] * groups} channels, but got "
                               f"{channels} channels instead")
        out_channels = weight.shape[0]
        spatial = input.shape[-nd:]
        padded = [s + 2 * p for s, p in zip(spatial, padding)]
        eff = [d * (k - 1) + 1 for d, k in zip(dilation, weight.shape[2:])]
        if any(p < e for p, e in zip(padded, eff)):
            raise RuntimeError(f"{op}(): Calculated padded input size per channel: ({' x '.join(map(str, padded))}). "
                               f"Kernel size: ({' x '.join(map(str, eff))}). Kernel size can't be greater than "
                               "actual input size")
    if bias is not None and (bias.dim() != 1 or bias.shape[0] != out_channels):
        raise RuntimeError(f"{op}(): Given weight of size {_shape_str(weight)}, expected bias to be 1-dimensional "
                           f"with {out_channels} elements, but got bias of size {_shape_str(bias)} instead")


def _same_padding(op, input, weight, stride, dilation, nd):
    """padding='same': (input, symmetric padding), the odd extra element padded last beforehand."""
    if any(s != 1 for s in stride):
        raise RuntimeError(f"{op}(): padding='same' is not supported for strided convolutions")
    total = [d * (k - 1) for d, k in zip(dilation, weight.shape[2:])]
    if any(t % 2 for t in total):
        extra = []
        for t in reversed(total):
            extra += [0, t % 2]
        input = pad(input, extra)
    return input, tuple(t // 2 for t in total)


def _conv_padding(op, input, weight, stride, padding, dilation, nd):
    if isinstance(padding, str):
        if padding == "valid":
            return input, (0,) * nd
        if padding == "same":
            if input.dim() not in (nd + 1, nd + 2) or weight.dim() != nd + 2:
                return input, (0,) * nd   # the shape checks report it
            return _same_padding(op, input, weight, stride, dilation, nd)
        raise RuntimeError(f"Invalid padding string: '{padding}'")
    return input, _ntuple(padding, nd, "padding", op)


def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """1-D convolution of (N, C, L) or (C, L) input with weight (O, C / groups, k): conv2d over a unit
    height. padding may be 'valid' or 'same'."""
    stride, dilation = _ntuple(stride, 1, "stride", "conv1d"), _ntuple(dilation, 1, "dilation", "conv1d")
    input, padding = _conv_padding("conv1d", input, weight, stride, padding, dilation, 1)
    _conv_check("conv1d", input, weight, bias, stride, padding, dilation, groups, 1)
    out = kiln.conv2d(input.unsqueeze(-2), weight.unsqueeze(-2), bias, [1, stride[0]], [0, padding[0]],
                      [1, dilation[0]], groups)
    return out.squeeze(-2)


def conv3d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """3-D convolution of (N, C, D, H, W) or (C, D, H, W) input with weight (O, C / groups, kD, kH, kW):
    for each kernel depth, one conv2d of the depth slices it meets (folded into the batch), summed."""
    stride, dilation = _ntuple(stride, 3, "stride", "conv3d"), _ntuple(dilation, 3, "dilation", "conv3d")
    input, padding = _conv_padding("conv3d", input, weight, stride, padding, dilation, 3)
    _conv_check("conv3d", input, weight, bias, stride, padding, dilation, groups, 3)
    unbatched = input.dim() == 4
    if unbatched:
        input = input.unsqueeze(0)
    if padding[0]:
        input = kiln.constant_pad_nd(input, [0, 0, 0, 0, padding[0], padding[0]], 0)
    n, c, depth = input.shape[0], input.shape[1], input.shape[2]
    kd = weight.shape[2]
    out_d = (depth - dilation[0] * (kd - 1) - 1) // stride[0] + 1
    out = None
    for k in range(kd):
        start = k * dilation[0]
        sl = input[:, :, start:start + (out_d - 1) * stride[0] + 1:stride[0]]
        sl = sl.transpose(1, 2).reshape(n * out_d, c, input.shape[3], input.shape[4])
        y = kiln.conv2d(sl, weight[:, :, k], None, list(stride[1:]), list(padding[1:]), list(dilation[1:]), groups)
        out = y if out is None else out + y
    out = out.reshape(n, out_d, out.shape[1], out.shape[2], out.shape[3]).transpose(1, 2)
    if bias is not None:
        out = out + bias.reshape(-1, 1, 1, 1)
    out = out.contiguous()
    return out.squeeze(0) if unbatched else out


def _conv_transpose2d_core(input, weight, bias, stride, padding, output_padding, groups, dilation):
    """(N, C, H, W) input: conv2d_backward_input onto the output size, as torch's formula."""
    n, h, w = input.shape[0], input.shape[2], input.shape[3]
    kh, kw = weight.shape[2], weight.shape[3]
    out_h = (h - 1) * stride[0] - 2 * padding[0] + dilation[0] * (kh - 1) + output_padding[0] + 1
    out_w = (w - 1) * stride[1] - 2 * padding[1] + dilation[1] * (kw - 1) + output_padding[1] + 1
    if out_h <= 0 or out_w <= 0:
        raise RuntimeError(f"conv_transpose2d(): Given input size per channel: ({h} x {w}). Calculated output "
                           f"size per channel: ({out_h} x {out_w}). Output size is too small")
    # an output_padding of dilation or more makes the output one a conv2d maps to more than h rows:
    # those extra rows of the input are zeros
    conv_h = (out_h + 2 * padding[0] - dilation[0] * (kh - 1) - 1) // stride[0] + 1
    conv_w = (out_w + 2 * padding[1] - dilation[1] * (kw - 1) - 1) // stride[1] + 1
    if conv_h != h or conv_w != w:
        input = kiln.constant_pad_nd(input, [0, conv_w - w, 0, conv_h - h], 0)
    # transposed=True: torch 1.13 computes transposed convolutions natively, never with oneDNN
    out = kiln.conv2d_backward_input(input, [n, weight.shape[1] * groups, out_h, out_w], weight, list(stride),
                                     list(padding), list(dilation), groups, True)
    if bias is not None:
        out = out + bias.reshape(-1, 1, 1)
    return out


def conv_transpose2d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    """Transposed 2-D convolution ("deconvolution") of (N, C_in, H, W) or (C_in, H, W) input with weight
    (C_in, C_out / groups, kH, kW): the gradient of conv2d with respect to its input."""
    op = "conv_transpose2d"
    if isinstance(padding, str):
        raise TypeError(f"{op}() received an invalid combination of arguments: padding must be a tuple of ints, "
                        f"not str")
    stride, padding = _ntuple(stride, 2, "stride", op), _ntuple(padding, 2, "padding", op)
    output_padding, dilation = _ntuple(output_padding, 2, "output_padding", op), _ntuple(dilation, 2, "dilation", op)
    _conv_check(op, input, weight, bias, stride, padding, dilation, groups, 2, True, output_padding)
    unbatched = input.dim() == 3
    out = _conv_transpose2d_core(input.unsqueeze(0) if unbatched else input, weight, bias, stride, padding,
                                 output_padding, groups, dilation)
    return out.squeeze(0) if unbatched else out


def conv_transpose1d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    """Transposed 1-D convolution of (N, C_in, L) or (C_in, L) input with weight (C_in, C_out / groups, k)."""
    op = "conv_transpose1d"
    if isinstance(padding, str):
        raise TypeError(f"{op}() received an invalid combination of arguments: padding must be a tuple of ints, "
                        f"not str")
    stride, padding = _ntuple(stride, 1, "stride", op), _ntuple(padding, 1, "padding", op)
    output_padding, dilation = _ntuple(output_padding, 1, "output_padding", op), _ntuple(dilation, 1, "dilation", op)
    _conv_check(op, input, weight, bias, stride, padding, dilation, groups, 1, True, output_padding)
    unbatched = input.dim() == 2
    x = (input.unsqueeze(0) if unbatched else input).unsqueeze(-2)
    out = _conv_transpose2d_core(x, weight.unsqueeze(-2), bias, (1,) + stride, (0,) + padding,
                                 (0,) + output_padding, groups, (1,) + dilation).squeeze(-2)
    return out.squeeze(0) if unbatched else out


# ---------------------------------------------------------------- group and instance normalization
def _verify_batch_size(size):
    prod = 1
    for s in [size[0]] + list(size[2:]):
        prod *= s
    if prod == 1:
        raise ValueError(f"Expected more than 1 value per channel when training, got input size {size}")


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-5):
    """Normalizes each of num_groups channel groups of each sample (mean 0, variance 1, biased), then
    scales and shifts each channel: layer_norm over the group's elements."""
    if input.dim() < 2:  # (torch 2.x's check; 1.13 raises IndexError: test_torch2_behaviour_torch_113_lacks)
        raise RuntimeError(f"Expected at least 2 dimensions for input tensor but received {input.dim()}")
    n, c = input.shape[0], input.shape[1]
    _ = n * c // num_groups  # torch's Python wrapper divides first: num_groups=0 is a ZeroDivisionError
    if num_groups <= 0 or c % num_groups:
        raise RuntimeError(f"group_norm(): Expected number of channels in input to be divisible by num_groups, but "
                           f"got input of shape {_shape_str(input)} and num_groups={num_groups}")
    _verify_batch_size([n * c // num_groups, num_groups] + list(input.shape[2:]))
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and (t.dim() != 1 or t.numel() != c):
            raise RuntimeError(f"group_norm(): Expected {name} to be a vector of size equal to the number of "
                               f"channels in input, but got {name} of shape {_shape_str(t)} and input of shape "
                               f"{_shape_str(input)}")
    # torch's kernel and its fused gradient (runtime/kernels/cpu/group_norm_ops.cc); float16/bfloat16
    # computed in float32, rounded once
    if input.dtype in (kiln.float16, kiln.bfloat16):
        f32 = lambda t: t if t is None else t.float()  # noqa: E731
        return kiln._C._group_norm(input.float(), f32(weight), f32(bias), num_groups, eps)[0].to(input.dtype)
    return kiln._C._group_norm(input, weight, bias, num_groups, eps)[0]


def instance_norm(input, running_mean=None, running_var=None, weight=None, bias=None, use_input_stats=True,
                  momentum=0.1, eps=1e-5):
    """Normalizes each channel of each sample over its spatial dims: batch_norm of the input viewed as
    (1, N * C, ...), with the running statistics (when given) averaged over the batch, as torch."""
    if input.dim() < 3:
        raise ValueError(f"instance_norm(): expected an input of at least 3 dimensions (N, C, ...), got "
                         f"{input.dim()}D input")
    if use_input_stats:
        spatial = 1
        for s in input.shape[2:]:
            spatial *= s
        if spatial == 1:
            raise ValueError(f"Expected more than 1 spatial element when training, got input size "
                             f"{list(input.shape)}")
    n, c = input.shape[0], input.shape[1]
    for name, t in (("weight", weight), ("bias", bias), ("running_mean", running_mean), ("running_var", running_var)):
        if t is not None and t.numel() != c:
            raise RuntimeError(f"instance_norm(): expected {name} to have {c} elements (the input's channels), "
                               f"got {name} of shape {_shape_str(t)}")
    rm = running_mean.repeat(n) if running_mean is not None else None
    rv = running_var.repeat(n) if running_var is not None else None
    w = weight.repeat(n) if weight is not None else None
    b = bias.repeat(n) if bias is not None else None
    x = input.reshape([1, n * c] + list(input.shape[2:]))
    out = kiln.batch_norm(x, w, b, rm, rv, use_input_stats, momentum, eps, False)
    if use_input_stats:
        with kiln.no_grad():
            if running_mean is not None:
                running_mean.copy_(rm.reshape(n, c).mean(0))
            if running_var is not None:
                running_var.copy_(rv.reshape(n, c).mean(0))
    return out.reshape(input.shape)


# ---------------------------------------------------------------- bilinear and embedding_bag
def bilinear(input1, input2, weight, bias=None):
    """y[..., o] = sum_ij input1[..., i] weight[o, i, j] input2[..., j] (+ bias[o])."""
    if input1.dim() != input2.dim():
        raise RuntimeError(f"bilinear(): input dimensions do not match: got {input1.dim()} and {input2.dim()}")
    if list(input1.shape[:-1]) != list(input2.shape[:-1]):
        raise RuntimeError(f"bilinear(): input batch dimensions do not match: got {_shape_str(input1)} and "
                           f"{_shape_str(input2)}")
    if weight.dim() != 3:
        raise RuntimeError(f"bilinear(): weight must be three-dimensional, got {weight.dim()}")
    out_f, in1, in2 = weight.shape
    if input1.dim() == 0 or input1.shape[-1] != in1:
        raise RuntimeError(f"bilinear(): input1 size does not match weight size: got {input1.shape[-1] if input1.dim() else 0} "
                           f"but expected {in1}")
    if input2.shape[-1] != in2:
        raise RuntimeError(f"bilinear(): input2 size does not match weight size: got {input2.shape[-1]} but "
                           f"expected {in2}")
    if bias is not None and (bias.dim() != 1 or bias.shape[0] != out_f):
        raise RuntimeError(f"bilinear(): bias size does not match weight size: got {bias.shape[-1] if bias.dim() else 0} "
                           f"but expected {out_f}")
    batch = list(input1.shape[:-1])
    x1, x2 = input1.reshape(-1, in1), input2.reshape(-1, in2)
    t = kiln.matmul(x1, weight.transpose(0, 1).reshape(in1, out_f * in2)).reshape(-1, out_f, in2)
    out = (t * x2.unsqueeze(1)).sum(-1)
    if bias is not None:
        out = out + bias
    return out.reshape(batch + [out_f])


def embedding_bag(input, weight, offsets=None, max_norm=None, norm_type=2, scale_grad_by_freq=False, mode="mean",
                  sparse=False, per_sample_weights=None, include_last_offset=False, padding_idx=None):
    """Sums, means or maxima of bags of embedding rows, without the (bags, length, dim) tensor in the
    user's hands: input 2-D (each row one bag) or 1-D with offsets (bag starts). Entries equal to
    padding_idx are left out of their bag; an empty bag gives zeros."""
    if scale_grad_by_freq and not sparse:
        raise NotImplementedError("embedding_bag: scale_grad_by_freq is not supported by kiln yet")
    if weight.dtype == input.dtype and not input.is_floating_point():
        raise RuntimeError("embedding_bag(): the input and the weight are swapped? weight must be floating point")
    if input.is_floating_point() or input.dtype == kiln.bool:
        raise RuntimeError("embedding_bag(): Expected tensor for argument #1 'indices' to have one of the following "
                           f"scalar types: Long, Int; but got {input.dtype} instead")
    if weight.dim() != 2:
        raise ValueError(f"weight has to be a 2D Tensor, but got Tensor of dimension {weight.dim()}")
    if mode not in ("sum", "mean", "max"):
        raise ValueError(f"mode has to be one of sum, mean or max")
    if mode == "max" and scale_grad_by_freq:
        raise ValueError("max mode does not support scaling the gradient by the frequency")
    if mode == "max" and sparse:
        raise ValueError("max mode does not support sparse weights")
    if per_sample_weights is not None and list(input.shape) != list(per_sample_weights.shape):
        raise ValueError(f"embedding_bag: If per_sample_weights ({list(per_sample_weights.shape)}) is not None, then "
                         f"it must have the same shape as the input ({list(input.shape)})")
    if per_sample_weights is not None and mode != "sum":
        raise NotImplementedError(f"embedding_bag: per_sample_weights was not None. per_sample_weights is only "
                                  f"supported for mode='sum' (got mode='{mode}'). Please open a feature request "
                                  "on GitHub.")
    num = weight.shape[0]
    if padding_idx is not None:
        if not -num <= padding_idx < num:
            raise AssertionError("padding_idx must be within the number of embeddings")
        padding_idx %= num
    if max_norm is not None:
        _embedding_renorm_(weight, input, max_norm, norm_type)
    if sparse and kiln.is_grad_enabled() and (weight.requires_grad or (per_sample_weights is not None and
                                                                       per_sample_weights.requires_grad)):
        args = (input, offsets, mode, include_last_offset, padding_idx, scale_grad_by_freq)
        return _EmbeddingBagSparse.apply(weight, per_sample_weights, args)
    if input.dim() == 2:
        if offsets is not None:
            raise ValueError("if input is 2D, then offsets has to be None, as input is treated is a mini-batch of "
                             "fixed length sequences. However, found offsets of type Tensor")
        bags, length = input.shape
        idx = input.long()
        valid = kiln.ones(bags, length, dtype=kiln.bool)
        psw = per_sample_weights
    elif input.dim() == 1:
        if offsets is None:
            raise ValueError("offsets has to be a 1D Tensor but got None")
        if offsets.dim() != 1:
            raise ValueError("offsets has to be a 1D Tensor")
        if offsets.is_floating_point() or offsets.dtype == kiln.bool:
            raise RuntimeError("embedding_bag(): Expected tensor for argument #2 'offsets' to have one of the "
                               f"following scalar types: Long, Int; but got {offsets.dtype} instead")
        starts = [int(v) for v in offsets.tolist()]
        total = input.shape[0]
        if include_last_offset:
            if not starts:
                raise RuntimeError("embedding_bag(): offsets must have at least one element with "
                                   "include_last_offset=True")
            ends, starts = starts[1:], starts[:-1]
        else:
            ends = starts[1:] + [total]
        if starts and starts[0] != 0:
            raise RuntimeError(f"embedding_bag(): offsets[0] has to be 0, i.e., the first sequence in the mini-batch "
                               f"has to start from position 0. However, got {starts[0]}")
        if any(e > total for e in ends) or any(s > e for s, e in zip(starts, ends)):
            raise RuntimeError(f"embedding_bag(): offsets must be non-decreasing and at most the input's length "
                               f"{total}, got {starts}")
        bags = len(starts)
        length = max([e - s for s, e in zip(starts, ends)] + [0])
        pos = [[s + j for j in range(length)] for s in starts]
        valid = kiln.tensor([[s + j < e for j in range(length)] for s, e in zip(starts, ends)],
                            dtype=kiln.bool).reshape(bags, length)
        flat = kiln.tensor([min(p, max(total - 1, 0)) for row in pos for p in row], dtype=kiln.int64)
        idx = (input.long()[flat] if total else kiln.zeros(bags * length, dtype=kiln.int64)).reshape(bags, length)
        idx = kiln.where(valid, idx, kiln.zeros_like(idx))
        psw = None
        if per_sample_weights is not None:
            psw = per_sample_weights[flat].reshape(bags, length) if total else \
                kiln.zeros(bags, length, dtype=per_sample_weights.dtype)
    else:
        raise ValueError(f"input has to be 1D or 2D Tensor, but got Tensor of dimension {input.dim()}")
    if idx.numel() and (int(idx.min().item()) < 0 or int(idx.max().item()) >= num):
        raise IndexError(f"embedding_bag(): index out of range in self (num_embeddings={num})")
    if padding_idx is not None:
        valid = valid & (idx != padding_idx)
    dim = weight.shape[1]
    rows = weight.index_select(0, idx.reshape(-1)).reshape(bags, length, dim)
    mask = valid.unsqueeze(-1)
    if mode == "max":
        # torch's loop: a bag's first row, then each later row where it is greater (so a NaN first
        # stays, a later NaN is skipped), the gradient to that one row; an empty bag gives zeros
        m = kiln.zeros(bags, dim, dtype=weight.dtype)
        seen = kiln.zeros(bags, 1, dtype=kiln.bool)
        for j in range(length):
            v = valid[:, j:j + 1]
            m = kiln.where(v & (~seen | (rows[:, j] > m)), rows[:, j], m)
            seen = seen | v
        return m
    if (psw is None and padding_idx is None and length and weight.requires_grad and kiln.is_grad_enabled()
            and weight.dtype in (kiln.float32, kiln.float64)):
        flat_valid = valid.reshape(-1)
        bag_of = kiln.arange(bags).unsqueeze(1).expand(bags, length).reshape(-1)[flat_valid]
        return _EmbeddingBagTorchGrad.apply(weight, rows, valid, idx.reshape(-1)[flat_valid], bag_of, mode)
    # left-out positions (padding, past a bag's end) selected away, not multiplied by 0: torch skips
    # them, so an inf or NaN row or weight there changes nothing (nor any gradient)
    zero = kiln.zeros([], dtype=rows.dtype)
    rows = kiln.where(mask, rows, zero)
    if psw is not None:
        rows = rows * kiln.where(valid, psw, kiln.zeros([], dtype=psw.dtype)).unsqueeze(-1)
        out = rows.sum(1)
    elif length:
        # torch adds a bag's rows one after another (axpy into the bag's output): the same order
        # here, a position at a time (the padding rows are zeros)
        out = rows[:, 0]
        for j in range(1, length):
            out = out + rows[:, j]
    else:
        out = rows.sum(1)
    if mode == "mean":
        count = valid.sum(1, keepdim=True).clamp(min=1).to(weight.dtype)
        out = out / count
    return out


class _EmbeddingBagSparse(kiln.autograd.Function):
    """embedding_bag(sparse=True), sum or mean: the forward as for dense weights; the weight's gradient is
    torch's _embedding_bag_sparse_backward: per index of input, in order, its bag's output gradient
    (times 1 / bag size for mean, times its per_sample_weight), as a sparse COO gradient without the
    padding_idx entries (routed as embedding(sparse=True)'s: _sparse_weight_grad)."""

    @staticmethod
    def forward(ctx, weight, per_sample_weights, args):
        from ..sparse import _grad
        input, offsets, mode, include_last_offset, padding_idx, scale_grad_by_freq = args
        out = embedding_bag(input, weight, offsets, None, 2, False, mode, False, per_sample_weights,
                            include_last_offset, padding_idx)
        ctx.weight, ctx.order, ctx.size = weight, _grad.next_order(), list(weight.shape)
        ctx.padding_idx, ctx.scale_grad_by_freq, ctx.mode = padding_idx, scale_grad_by_freq, mode
        indices = input.reshape(-1).long()
        n = indices.shape[0]
        if input.dim() == 2:
            bags, length = input.shape
            offset2bag = kiln.arange(bags).unsqueeze(1).expand(bags, length).reshape(-1)
        else:
            starts = offsets.long()
            if include_last_offset:
                starts = starts[:-1]
            bags = starts.shape[0]
            # the bag of each position: how many bag starts are at or before it, less one
            offset2bag = (starts.reshape(1, -1) <= kiln.arange(n).reshape(-1, 1)).sum(1) - 1 if n else \
                kiln.zeros(0, dtype=kiln.int64)
            offset2bag = offset2bag.clamp(min=0)
        valid = indices != padding_idx if padding_idx is not None else kiln.ones(n, dtype=kiln.bool)
        bag_size = kiln.zeros(bags, dtype=kiln.int64).index_add(0, offset2bag, valid.long())
        ctx.save_for_backward(indices, offset2bag, bag_size, per_sample_weights)
        return out

    @staticmethod
    def backward(ctx, grad):
        indices, offset2bag, bag_size, psw = ctx.saved_tensors
        index_grad = grad.index_select(0, offset2bag)
        psw_grad = None
        if ctx.needs_input_grad[1]:
            rows = ctx.weight.detach().index_select(0, indices)
            psw_grad = (index_grad * rows).sum(1)
            if ctx.padding_idx is not None:
                psw_grad = kiln.where(indices != ctx.padding_idx, psw_grad, kiln.zeros([], dtype=psw_grad.dtype))
        if ctx.mode == "mean":
            index_grad = index_grad * (1 / bag_size.to(grad.dtype)).index_select(0, offset2bag).unsqueeze(1)
        if psw is not None:
            index_grad = index_grad * psw.unsqueeze(1)
        weight_grad = _sparse_weight_grad(ctx, index_grad, indices) if ctx.needs_input_grad[0] else None
        return weight_grad, psw_grad, None


def _bag_sums(rows, valid, mode):
    """torch's embedding_bag forward: a bag's rows added one after another, then (mean) / its size."""
    rows = kiln.where(valid.unsqueeze(-1), rows, kiln.zeros([], dtype=rows.dtype))  # skipped, as torch
    out = rows[:, 0]
    for j in range(1, rows.shape[1]):
        out = out + rows[:, j]
    if mode == "mean":
        out = out / valid.sum(1, keepdim=True).clamp(min=1).to(rows.dtype)
    return out


class _EmbeddingBagTorchGrad(kiln.autograd.Function):
    """embedding_bag (sum or mean, no per_sample_weights or padding_idx) whose weight gradient is
    torch 1.13's _embedding_bag_dense_backward_cpu_sum_mean, to the bit: the indices sorted as torch
    sorts them (kiln.sort's order of equal indices is torch's), each occurrence's bag gradient scaled
    by (float)(1.0 / bag_size) (mean) and accumulated into its weight row by a fused multiply-add
    (BLAS axpy), in that order. Only the weight gets a gradient (the indices have none)."""

    @staticmethod
    def forward(ctx, weight, rows, valid, indices, bag_of, mode):
        ctx.num_weights = weight.shape[0]
        ctx.mode = mode
        ctx.save_for_backward(valid, indices, bag_of)
        return _bag_sums(rows.detach(), valid, mode)

    @staticmethod
    def backward(ctx, grad):
        valid, indices, bag_of = ctx.saved_tensors
        dim = grad.shape[1]
        weight_grad = kiln.zeros(ctx.num_weights, dim, dtype=grad.dtype)
        if indices.numel() == 0:
            return weight_grad, None, None, None, None, None
        sorted_idx, order = indices.sort()
        bags = bag_of[order]
        if ctx.mode == "mean":
            sizes = valid.sum(1).to(kiln.float64)
            scale = (1.0 / sizes.clamp(min=1))[bags].to(grad.dtype)
        else:
            scale = kiln.ones(bags.shape[0], dtype=grad.dtype)
        # the k-th occurrence of each index, k = 0, 1, ...: one fused multiply-add per row and rank
        keys = sorted_idx.tolist()
        ranks, prev, r = [], None, 0
        for key in keys:
            r = r + 1 if key == prev else 0
            ranks.append(r)
            prev = key
        ranks = kiln.tensor(ranks, dtype=kiln.int64)
        grad = grad.contiguous()
        for k in range(int(ranks.max().item()) + 1):
            sel = ranks == k
            rows_k, bags_k = sorted_idx[sel], bags[sel]
            acc = weight_grad[rows_k]
            weight_grad[rows_k] = kiln._fma(acc, grad[bags_k], scale[sel].unsqueeze(1).expand(-1, dim).contiguous())
        return weight_grad, None, None, None, None, None


# ---------------------------------------------------------------- attention
def _none_or_dtype(input):
    """The dtype of a tensor, or None (torch.nn.functional._none_or_dtype)."""
    if input is None:
        return None
    if isinstance(input, kiln.Tensor):
        return input.dtype
    raise RuntimeError("input to _none_or_dtype() must be None or kiln.Tensor")


def _canonical_mask(mask, mask_name, other_type, other_name, target_type, check_other=True):
    """A bool mask (True = masked) as an additive float mask of target_type (-inf where True);
    float masks pass unchanged; any other dtype raises, as torch's _canonical_mask."""
    if mask is None:
        return None
    is_float = kiln.is_floating_point(mask)
    if mask.dtype != kiln.bool and not is_float:
        raise AssertionError(f"only bool and floating types of {mask_name} are supported")
    if check_other and other_type is not None and mask.dtype != other_type:
        warnings.warn(f"Support for mismatched {mask_name} and {other_name} is deprecated. "
                      "Use same type for both instead.")
    if not is_float:
        mask = kiln.zeros_like(mask, dtype=target_type).masked_fill_(mask, float("-inf"))
    return mask


def _mha_shape_check(query, key, value, key_padding_mask, attn_mask, num_heads):
    """Whether the inputs are batched (3-D) or not (2-D); asserts the other dims fit (torch's checks)."""
    if query.dim() == 3:
        assert key.dim() == 3 and value.dim() == 3, (
            "For batched (3-D) `query`, expected `key` and `value` to be 3-D but found "
            f"{key.dim()}-D and {value.dim()}-D tensors respectively")
        if key_padding_mask is not None:
            assert key_padding_mask.dim() == 2, (
                "For batched (3-D) `query`, expected `key_padding_mask` to be `None` or 2-D but found "
                f"{key_padding_mask.dim()}-D tensor instead")
        if attn_mask is not None:
            assert attn_mask.dim() in (2, 3), (
                "For batched (3-D) `query`, expected `attn_mask` to be `None`, 2-D or 3-D but found "
                f"{attn_mask.dim()}-D tensor instead")
        return True
    if query.dim() == 2:
        assert key.dim() == 2 and value.dim() == 2, (
            "For unbatched (2-D) `query`, expected `key` and `value` to be 2-D but found "
            f"{key.dim()}-D and {value.dim()}-D tensors respectively")
        if key_padding_mask is not None:
            assert key_padding_mask.dim() == 1, (
                "For unbatched (2-D) `query`, expected `key_padding_mask` to be `None` or 1-D but found "
                f"{key_padding_mask.dim()}-D tensor instead")
        if attn_mask is not None:
            assert attn_mask.dim() in (2, 3), (
                "For unbatched (2-D) `query`, expected `attn_mask` to be `None`, 2-D or 3-D but found "
                f"{attn_mask.dim()}-D tensor instead")
            if attn_mask.dim() == 3:
                expected = (num_heads, query.shape[0], key.shape[0])
                assert tuple(attn_mask.shape) == expected, (
                    f"Expected `attn_mask` shape to be {expected} but got {attn_mask.shape}")
        return False
    raise AssertionError(f"query should be unbatched 2D or batched 3D tensor but received {query.dim()}-D query tensor")


def _split_last(t, n, e):
    """[..., n*e] -> n contiguous tensors [..., e] (one copy for all)."""
    parts = t.unflatten(-1, (n, e)).movedim(-2, 0).contiguous()
    return [parts[i] for i in range(n)]


def _in_projection_packed(q, k, v, w, b=None):
    """q, k, v projected by the stacked weight w [3E, E] (and bias [3E]); self-attention (q is k is v)
    runs one matmul, encoder-decoder attention (k is v) two."""
    E = q.size(-1)
    if k is v:
        if q is k:
            return tuple(_split_last(linear(q, w, b), 3, E))
        w_q, w_kv = w.split([E, E * 2])
        b_q, b_kv = (None, None) if b is None else b.split([E, E * 2])
        return (linear(q, w_q, b_q), *_split_last(linear(k, w_kv, b_kv), 2, E))
    w_q, w_k, w_v = w.chunk(3)
    b_q, b_k, b_v = (None, None, None) if b is None else b.chunk(3)
    return linear(q, w_q, b_q), linear(k, w_k, b_k), linear(v, w_v, b_v)


def _in_projection(q, k, v, w_q, w_k, w_v, b_q=None, b_k=None, b_v=None):
    """q, k, v projected by separate weights (kdim/vdim differ from embed_dim)."""
    Eq, Ek, Ev = q.size(-1), k.size(-1), v.size(-1)
    assert tuple(w_q.shape) == (Eq, Eq), f"expecting query weights shape of {(Eq, Eq)}, but got {w_q.shape}"
    assert tuple(w_k.shape) == (Eq, Ek), f"expecting key weights shape of {(Eq, Ek)}, but got {w_k.shape}"
    assert tuple(w_v.shape) == (Eq, Ev), f"expecting value weights shape of {(Eq, Ev)}, but got {w_v.shape}"
    assert b_q is None or tuple(b_q.shape) == (Eq,), f"expecting query bias shape of {(Eq,)}, but got {b_q.shape}"
    assert b_k is None or tuple(b_k.shape) == (Eq,), f"expecting key bias shape of {(Eq,)}, but got {b_k.shape}"
    assert b_v is None or tuple(b_v.shape) == (Eq,), f"expecting value bias shape of {(Eq,)}, but got {b_v.shape}"
    return linear(q, w_q, b_q), linear(k, w_k, b_k), linear(v, w_v, b_v)


def multi_head_attention_forward(query, key, value, embed_dim_to_check, num_heads, in_proj_weight, in_proj_bias,
                                 bias_k, bias_v, add_zero_attn, dropout_p, out_proj_weight, out_proj_bias,
                                 training=True, key_padding_mask=None, need_weights=True, attn_mask=None,
                                 use_separate_proj_weight=False, q_proj_weight=None, k_proj_weight=None,
                                 v_proj_weight=None, static_k=None, static_v=None, average_attn_weights=True,
                                 is_causal=False):
    """torch 2.x's multi-head attention over sequence-first inputs: query [L, N, E] (or [L, E]),
    key [S, N, kdim], value [S, N, vdim]. Returns (output [L, N, E], weights) where weights are
    [N, L, S] (averaged over heads), [N, num_heads, L, S], or None when need_weights is False. The
    attention is computed as torch 1.13 computes it (the math path, not scaled_dot_product_attention),
    so results agree with it to the bit.

    Masks: attn_mask [L, S] or [N*num_heads, L, S], key_padding_mask [N, S]; bool masks mean True =
    masked (not attended), float masks are added to the scores. is_causal is a hint that attn_mask
    is the causal mask; it needs attn_mask.
    """
    is_batched = _mha_shape_check(query, key, value, key_padding_mask, attn_mask, num_heads)
    if not is_batched:
        query, key, value = query.unsqueeze(1), key.unsqueeze(1), value.unsqueeze(1)
        if key_padding_mask is not None:
            key_padding_mask = key_padding_mask.unsqueeze(0)

    tgt_len, bsz, embed_dim = query.shape
    src_len = key.shape[0]

    key_padding_mask = _canonical_mask(key_padding_mask, "key_padding_mask", _none_or_dtype(attn_mask), "attn_mask",
                                       query.dtype)
    if is_causal and attn_mask is None:
        raise RuntimeError("Need attn_mask if specifying the is_causal hint. You may use the Transformer module "
                           "method `generate_square_subsequent_mask` to create this mask.")
    # is_causal is only a hint (the mask is the causal one): the math below applies the mask itself
    attn_mask = _canonical_mask(attn_mask, "attn_mask", None, "", query.dtype, check_other=False)

    assert embed_dim == embed_dim_to_check, \
        f"was expecting embedding dimension of {embed_dim_to_check}, but got {embed_dim}"
    head_dim = embed_dim // num_heads
    assert head_dim * num_heads == embed_dim, f"embed_dim {embed_dim} not divisible by num_heads {num_heads}"
    if use_separate_proj_weight:
        assert tuple(key.shape[:2]) == tuple(value.shape[:2]), \
            f"key's sequence and batch dims {key.shape[:2]} do not match value's {value.shape[:2]}"
    else:
        assert tuple(key.shape) == tuple(value.shape), f"key shape {key.shape} does not match value shape {value.shape}"

    # input projections
    if not use_separate_proj_weight:
        assert in_proj_weight is not None, "use_separate_proj_weight is False but in_proj_weight is None"
        q, k, v = _in_projection_packed(query, key, value, in_proj_weight, in_proj_bias)
    else:
        assert q_proj_weight is not None, "use_separate_proj_weight is True but q_proj_weight is None"
        assert k_proj_weight is not None, "use_separate_proj_weight is True but k_proj_weight is None"
        assert v_proj_weight is not None, "use_separate_proj_weight is True but v_proj_weight is None"
        b_q, b_k, b_v = (None, None, None) if in_proj_bias is None else in_proj_bias.chunk(3)
        q, k, v = _in_projection(query, key, value, q_proj_weight, k_proj_weight, v_proj_weight, b_q, b_k, b_v)

    # attn_mask as [1 or N*num_heads, L, S]
    if attn_mask is not None:
        if attn_mask.dim() == 2:
            if tuple(attn_mask.shape) != (tgt_len, src_len):
                raise RuntimeError(f"The shape of the 2D attn_mask is {attn_mask.shape}, but should be "
                                   f"{(tgt_len, src_len)}.")
            attn_mask = attn_mask.unsqueeze(0)
        elif attn_mask.dim() == 3:
            if tuple(attn_mask.shape) != (bsz * num_heads, tgt_len, src_len):
                raise RuntimeError(f"The shape of the 3D attn_mask is {attn_mask.shape}, but should be "
                                   f"{(bsz * num_heads, tgt_len, src_len)}.")
        else:
            raise RuntimeError(f"attn_mask's dimension {attn_mask.dim()} is not supported")

    # learned bias key/value: one more source position
    if bias_k is not None and bias_v is not None:
        assert static_k is None, "bias cannot be added to static key."
        assert static_v is None, "bias cannot be added to static value."
        k = kiln.cat([k, bias_k.repeat(1, bsz, 1)])
        v = kiln.cat([v, bias_v.repeat(1, bsz, 1)])
        if attn_mask is not None:
            attn_mask = pad(attn_mask, (0, 1))
        if key_padding_mask is not None:
            key_padding_mask = pad(key_padding_mask, (0, 1))
    else:
        assert bias_k is None
        assert bias_v is None

    # heads into the batch dim: [N*num_heads, L or S, head_dim]
    q = q.reshape(tgt_len, bsz * num_heads, head_dim).transpose(0, 1)
    if static_k is None:
        k = k.reshape(k.shape[0], bsz * num_heads, head_dim).transpose(0, 1)
    else:
        assert static_k.size(0) == bsz * num_heads, \
            f"expecting static_k.size(0) of {bsz * num_heads}, but got {static_k.size(0)}"
        assert static_k.size(2) == head_dim, f"expecting static_k.size(2) of {head_dim}, but got {static_k.size(2)}"
        k = static_k
    if static_v is None:
        v = v.reshape(v.shape[0], bsz * num_heads, head_dim).transpose(0, 1)
    else:
        assert static_v.size(0) == bsz * num_heads, \
            f"expecting static_v.size(0) of {bsz * num_heads}, but got {static_v.size(0)}"
        assert static_v.size(2) == head_dim, f"expecting static_v.size(2) of {head_dim}, but got {static_v.size(2)}"
        v = static_v

    # a zero key/value: one more source position
    if add_zero_attn:
        zeros = kiln.zeros((bsz * num_heads, 1, head_dim), dtype=k.dtype)
        k = kiln.cat([k, zeros], 1)
        v = kiln.cat([v, zeros.to(v.dtype)], 1)
        if attn_mask is not None:
            attn_mask = pad(attn_mask, (0, 1))
        if key_padding_mask is not None:
            key_padding_mask = pad(key_padding_mask, (0, 1))

    src_len = k.size(1)

    # key padding merged into attn_mask: [N*num_heads, 1, S]
    if key_padding_mask is not None:
        assert tuple(key_padding_mask.shape) == (bsz, src_len), \
            f"expecting key_padding_mask shape of {(bsz, src_len)}, but got {key_padding_mask.shape}"
        key_padding_mask = (key_padding_mask.reshape(bsz, 1, 1, src_len).expand(-1, num_heads, -1, -1)
                            .reshape(bsz * num_heads, 1, src_len))
        attn_mask = key_padding_mask if attn_mask is None else attn_mask + key_padding_mask

    if not training:
        dropout_p = 0.0

    # torch 1.13's math, need_weights or not (the torch this library is checked against, to the
    # bit): q / sqrt(E), baddbmm(attn_mask, q, k^T), softmax, dropout, bmm by v; weights averaged
    # as sum(dim=1) / num_heads.
    q_scaled = q / math.sqrt(q.size(-1))
    weights = kiln.bmm(q_scaled, k.transpose(-2, -1))
    if attn_mask is not None:
        weights = attn_mask + weights  # torch's baddbmm(attn_mask, q, k^T): the same sums, then the mask
    weights = softmax(weights, dim=-1)
    if dropout_p > 0.0:
        weights = dropout(weights, p=dropout_p)
    out = kiln.bmm(weights, v)
    out = out.transpose(0, 1).contiguous().reshape(tgt_len * bsz, embed_dim)
    out = linear(out, out_proj_weight, out_proj_bias)
    out = out.reshape(tgt_len, bsz, out.size(1))
    if not need_weights:
        return (out.squeeze(1) if not is_batched else out), None
    weights = weights.reshape(bsz, num_heads, tgt_len, src_len)
    if average_attn_weights:
        weights = weights.sum(dim=1) / num_heads
    if not is_batched:
        out, weights = out.squeeze(1), weights.squeeze(0)
    return out, weights


# ----------------------------------------------------------------------------- resampling
def _is_integer(x):
    return isinstance(x, int) and not isinstance(x, bool) or type(x).__name__ in ("int64", "int32")


_UPSAMPLE = {
    (3, "nearest"): "upsample_nearest1d", (4, "nearest"): "upsample_nearest2d", (5, "nearest"): "upsample_nearest3d",
    (3, "nearest-exact"): "_upsample_nearest_exact1d", (4, "nearest-exact"): "_upsample_nearest_exact2d",
    (5, "nearest-exact"): "_upsample_nearest_exact3d",
    (3, "linear"): "upsample_linear1d", (4, "bilinear"): "upsample_bilinear2d", (4, "bicubic"): "upsample_bicubic2d",
    (5, "trilinear"): "upsample_trilinear3d",
}
_MODE_DIMS = {"linear": 3, "bilinear": 4, "bicubic": 4, "trilinear": 5}


def interpolate(input, size=None, scale_factor=None, mode="nearest", align_corners=None, recompute_scale_factor=None,
                antialias=False):
    """torch 2.x's F.interpolate: resize the spatial dims of a (N, C, *spatial) input to `size`, or by
    `scale_factor` (output size floor(in * scale); unless recompute_scale_factor, the scale itself sets
    the coordinate map, as torch)."""
    if mode in ("nearest", "area", "nearest-exact"):
        if align_corners is not None:
            raise ValueError("align_corners option can only be set with the interpolating modes: "
                             "linear | bilinear | bicubic | trilinear")
    elif align_corners is None:
        align_corners = False
    dim = input.dim() - 2
    if size is not None and scale_factor is not None:
        raise ValueError("only one of size or scale_factor should be defined")
    elif size is not None:
        scale_factors = None
        if isinstance(size, (list, tuple)):
            if len(size) != dim:
                raise ValueError("Input and output must have the same number of spatial dimensions, but got input with "
                                 f"spatial dimensions of {list(input.shape[2:])} and output size of {size}. Please "
                                 "provide input tensor in (N, C, d1, d2, ...,dK) format and output size in "
                                 "(o1, o2, ...,oK) format.")
            if not all(_is_integer(x) for x in size):
                raise TypeError("expected size to be one of int or Tuple[int] or Tuple[int, int] or "
                                f"Tuple[int, int, int], but got size with types {[type(x) for x in size]}")
            output_size = [int(s) for s in size]
        else:
            if not _is_integer(size):
                raise TypeError(f"interpolate(): expected size to be an int or a tuple of ints, got {type(size).__name__}")
            output_size = [int(size)] * dim
    elif scale_factor is not None:
        output_size = None
        if isinstance(scale_factor, (list, tuple)):
            if len(scale_factor) != dim:
                raise ValueError("Input and scale_factor must have the same number of spatial dimensions, but got "
                                 f"input with spatial dimensions of {list(input.shape[2:])} and scale_factor of shape "
                                 f"{scale_factor}. Please provide input tensor in (N, C, d1, d2, ...,dK) format and "
                                 "scale_factor in (s1, s2, ...,sK) format.")
            scale_factors = [float(s) for s in scale_factor]
        else:
            scale_factors = [float(scale_factor)] * dim
    else:
        raise ValueError("either size or scale_factor should be defined")

    if recompute_scale_factor is not None and recompute_scale_factor and size is not None:
        raise ValueError("recompute_scale_factor is not meaningful with an explicit size.")
    if mode == "area" and output_size is None:
        recompute_scale_factor = True
    if recompute_scale_factor is not None and recompute_scale_factor:
        output_size = [math.floor(float(input.size(i + 2)) * scale_factors[i]) for i in range(dim)]
        scale_factors = None
    if antialias and not (mode in ("bilinear", "bicubic") and input.dim() == 4):
        raise ValueError("Anti-alias option is only supported for bilinear and bicubic modes")

    name = _UPSAMPLE.get((input.dim(), mode))
    if antialias:
        name = {"bilinear": "_upsample_bilinear2d_aa", "bicubic": "_upsample_bicubic2d_aa"}[mode]
    if name is not None:
        if output_size is None:  # torch's compute_output_size: in * scale, truncated
            output_size = [int(float(input.size(i + 2)) * scale_factors[i]) for i in range(dim)]
        scales = list(scale_factors) if scale_factors is not None else [None] * dim
        op = getattr(kiln, name) if hasattr(kiln, name) else getattr(kiln._C, name)
        if mode in _MODE_DIMS:
            return op(input, output_size, align_corners, *scales)
        return op(input, output_size, *scales)
    if mode == "area" and input.dim() in (3, 4, 5):
        return {3: adaptive_avg_pool1d, 4: adaptive_avg_pool2d, 5: adaptive_avg_pool3d}[input.dim()](input, output_size)
    need = _MODE_DIMS.get(mode)
    if need is not None and input.dim() in (3, 4, 5):
        raise NotImplementedError(f"Got {input.dim()}D input, but {mode} mode needs {need}D input")
    raise NotImplementedError(f"Input Error: Only 3D, 4D and 5D input Tensors supported (got {input.dim()}D) for the "
                              "modes: nearest | linear | bilinear | bicubic | trilinear | area | nearest-exact "
                              f"(got {mode})")


def upsample(input, size=None, scale_factor=None, mode="nearest", align_corners=None):
    warnings.warn("nn.functional.upsample is deprecated. Use nn.functional.interpolate instead.")
    return interpolate(input, size, scale_factor, mode, align_corners)


def upsample_nearest(input, size=None, scale_factor=None):
    warnings.warn("nn.functional.upsample_nearest is deprecated. Use nn.functional.interpolate instead.")
    return interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(input, size=None, scale_factor=None):
    warnings.warn("nn.functional.upsample_bilinear is deprecated. Use nn.functional.interpolate instead.")
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)


def pixel_shuffle(input, upscale_factor):
    return kiln.pixel_shuffle(input, upscale_factor)


def pixel_unshuffle(input, downscale_factor):
    return kiln.pixel_unshuffle(input, downscale_factor)


def unfold(input, kernel_size, dilation=1, padding=0, stride=1):
    """Sliding blocks of a (N, C, H, W) or (C, H, W) input as columns (N, C * kh * kw, L) (torch's im2col)."""
    return kiln.im2col(input, _pair(kernel_size), _pair(dilation), _pair(padding), _pair(stride))


def fold(input, output_size, kernel_size, dilation=1, padding=0, stride=1):
    """Sums columns (N, C * kh * kw, L) back into a (N, C, *output_size) image (torch's col2im)."""
    return kiln.col2im(input, _pair(output_size), _pair(kernel_size), _pair(dilation), _pair(padding), _pair(stride))


_ALIGN_WARNING = ("Default grid_sample and affine_grid behavior has changed to align_corners=False since 1.3.0. Please "
                  "specify align_corners=True if the old behavior is desired. See the documentation of grid_sample "
                  "for details.")


def affine_grid(theta, size, align_corners=None):
    if align_corners is None:
        warnings.warn(_ALIGN_WARNING)
        align_corners = False
    if not theta.is_floating_point():
        raise ValueError(f"Expected theta to have floating point type, but got {theta.dtype}")
    size = list(size)
    if len(size) == 4:
        if theta.dim() != 3 or theta.shape[-2] != 2 or theta.shape[-1] != 3:
            raise ValueError(f"Expected a batch of 2D affine matrices of shape Nx2x3 for size {size}. "
                             f"Got {theta.shape}.")
        spatial_size = size[-2:]
    elif len(size) == 5:
        if theta.dim() != 3 or theta.shape[-2] != 3 or theta.shape[-1] != 4:
            raise ValueError(f"Expected a batch of 3D affine matrices of shape Nx3x4 for size {size}. "
                             f"Got {theta.shape}.")
        spatial_size = size[-3:]
    else:
        raise NotImplementedError("affine_grid only supports 4D and 5D sizes, for 2D and 3D affine transforms, "
                                  f"respectively. Got size {size}.")
    if align_corners and min(spatial_size) == 1:
        warnings.warn("Since version 1.3.0, affine_grid behavior has changed for unit-size grids when "
                      "align_corners=True. This is not an issue for standard usage.")
    elif min(size) <= 0:
        raise ValueError(f"Expected non-zero, positive output size. Got {size}")
    return kiln.affine_grid_generator(theta, size, align_corners)


def grid_sample(input, grid, mode="bilinear", padding_mode="zeros", align_corners=None):
    if mode not in ("bilinear", "nearest", "bicubic"):
        raise ValueError("nn.functional.grid_sample(): expected mode to be 'bilinear', 'nearest' or 'bicubic', "
                         f"but got: '{mode}'")
    if padding_mode not in ("zeros", "border", "reflection"):
        raise ValueError("nn.functional.grid_sample(): expected padding_mode to be 'zeros', 'border', or "
                         f"'reflection', but got: '{padding_mode}'")
    mode_enum = {"bilinear": 0, "nearest": 1, "bicubic": 2}[mode]
    padding_enum = {"zeros": 0, "border": 1, "reflection": 2}[padding_mode]
    if align_corners is None:
        warnings.warn(_ALIGN_WARNING)
        align_corners = False
    # torch.grid_sampler: 4-D input is sampled in 2-D, anything else in 3-D (whose checks name the rank)
    op = kiln.grid_sampler_2d if input.dim() == 4 else kiln.grid_sampler_3d
    return op(input, grid, mode_enum, padding_enum, align_corners)


# the margin losses composed in Python (nn/_losses_more.py)
from ._losses_more import (hinge_embedding_loss, multi_margin_loss, multilabel_margin_loss,  # noqa: E402,F401
                           triplet_margin_with_distance_loss)
# pooling, unpooling, dropout and normalization functions torch has and kiln lacked (nn/_functional_breadth.py)
from ._functional_breadth import (adaptive_max_pool1d_with_indices, adaptive_max_pool2d_with_indices,  # noqa: E402,F401
                                  adaptive_max_pool3d_with_indices, alpha_dropout, avg_pool1d, avg_pool3d,
                                  channel_shuffle, feature_alpha_dropout, gumbel_softmax, local_response_norm,
                                  lp_pool1d, lp_pool2d, max_pool1d, max_pool1d_with_indices, max_pool2d_with_indices,
                                  max_pool3d, max_pool3d_with_indices, max_unpool1d, max_unpool2d, max_unpool3d,
                                  native_channel_shuffle, pdist, conv_transpose3d)
# fractional max pooling (nn/_fractional_pool.py)
from ._fractional_pool import (fractional_max_pool2d, fractional_max_pool2d_with_indices,  # noqa: E402,F401
                               fractional_max_pool3d, fractional_max_pool3d_with_indices)


# Python-level functions raise torch's TypeError for an argument of the wrong type (_arg_errors.py).
from .._arg_errors import type_namespace as _type_namespace  # noqa: E402
_type_namespace(globals(), list(globals()))
