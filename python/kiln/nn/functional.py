"""kiln.nn.functional: stateless layers, activations and losses, with torch.nn.functional's
signatures (the deprecated size_average/reduce arguments included)."""
import math
import struct
import warnings

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
    out = kiln.matmul(input, weight.t())
    return out if bias is None else out + bias


def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None,
                                 enable_gqa=False):
    """softmax(query @ key^T * scale + mask) @ value, as torch 2.x's: attn_mask bool (True = attend) or
    float (added), broadcast against (..., L, S); is_causal the lower-triangular mask; scale defaults
    to 1 / sqrt(E). Without dropout one fused kernel (online softmax, no L x S matrix), forward and
    backward; with dropout torch's math path. enable_gqa: key and value may have fewer heads (dim
    -3), each shared by a group of query heads."""
    if enable_gqa and key.dim() >= 3 and key.size(-3) != query.size(-3):
        if query.size(-3) % key.size(-3) or query.size(-3) % value.size(-3):
            raise RuntimeError("scaled_dot_product_attention: the number of query heads must be a multiple of "
                               "the number of key and value heads when enable_gqa=True")
        key = _repeat_heads(key, query.size(-3) // key.size(-3))
        value = _repeat_heads(value, query.size(-3) // value.size(-3))
    return kiln._C.scaled_dot_product_attention(query, key, value, attn_mask, float(dropout_p), bool(is_causal),
                                                scale=scale)


def _repeat_heads(t, times):
    """Each head (dim -3) repeated `times` times in place, as repeat_interleave(times, dim=-3)."""
    shape = list(t.shape)
    expanded = t.unsqueeze(-3).expand(*shape[:-2], times, *shape[-2:])
    return expanded.reshape(*shape[:-3], shape[-3] * times, *shape[-2:])


def softmax(input, dim=None, _stacklevel=3, dtype=None):
    """exp(x - max) / sum(exp(x - max)) along `dim` (numerically stable); with dtype, the input
    is converted first (so integer inputs work, as in torch)."""
    dim = _default_dim(input, dim)
    if dtype is not None:
        return kiln.softmax(input.to(dtype), dim)
    return kiln.softmax(input, dim)


def log_softmax(input, dim=None, _stacklevel=3, dtype=None):
    """(x - max) - log(sum(exp(x - max))) along `dim` (numerically stable); with dtype, the input
    is converted first."""
    dim = _default_dim(input, dim)
    if dtype is not None:
        return kiln.log_softmax(input.to(dtype), dim)
    return kiln.log_softmax(input, dim)


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
        smooth = kiln.where(keep, smooth, 0.0)  # (not smooth * keep: an ignored row may hold inf)
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
    return kiln.mse_loss(input, target, _REDUCTIONS.index(_reduction(reduction, size_average, reduce)))


def l1_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """|input - target|, reduced."""
    return kiln.l1_loss(input, target, _REDUCTIONS.index(_reduction(reduction, size_average, reduce)))


def binary_cross_entropy_with_logits(input, target, weight=None, size_average=None, reduce=None, reduction="mean",
                                     pos_weight=None):
    """Binary cross entropy of sigmoid(input) against target, computed stably from the logits."""
    code = _REDUCTIONS.index(_reduction(reduction, size_average, reduce))
    return kiln.binary_cross_entropy_with_logits(input, target, weight, pos_weight, code)


def binary_cross_entropy(input, target, weight=None, size_average=None, reduce=None, reduction="mean"):
    """-(t log p + (1 - t) log(1 - p)) of probabilities p in [0, 1]; the logs are clamped at
    -100 as torch's, so p = 0 or 1 gives a finite loss (and a finite gradient)."""
    reduction = _reduction(reduction, size_average, reduce)
    if tuple(target.shape) != tuple(input.shape):
        raise ValueError(f"Using a target size ({target.shape}) that is different to the input size "
                         f"({input.shape}) is deprecated. Please ensure they have the same size.")
    if weight is not None:
        weight = weight.expand(input.shape)
    return kiln.binary_cross_entropy(input, target, weight, _REDUCTIONS.index(reduction))


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
    return kiln.avg_pool2d(input, _pair(kernel_size), stride, _pair(padding), ceil_mode, count_include_pad,
                           divisor_override)


def adaptive_avg_pool2d(input, output_size):
    """Average pooling to output_size; a None entry keeps the input's size there."""
    size = _pair(output_size)
    size = [input.shape[-2 + i] if s is None else s for i, s in enumerate(size)]
    return kiln.adaptive_avg_pool2d(input, size)


def pad(input, pad, mode="constant", value=None):
    """Pads the last len(pad) // 2 dims: pad = (left, right, top, bottom, ...); negative values crop."""
    if mode != "constant":
        raise NotImplementedError(f"pad: mode '{mode}' is not supported by kiln yet (only 'constant')")
    return kiln.constant_pad_nd(input, list(pad), 0 if value is None else value)


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
    shape = [normalized_shape] if isinstance(normalized_shape, int) else list(normalized_shape)
    return kiln.layer_norm(input, shape, weight, bias, eps)


def dropout(input, p=0.5, training=True, inplace=False):
    """Zeroes elements with probability p (drawn from kiln's generator) and scales the rest by 1/(1-p).
    kiln.dropout raises ValueError for p outside [0, 1]."""
    result = kiln.dropout(input, p, training)
    return input.copy_(result) if inplace and result is not input else result


def embedding(input, weight, padding_idx=None, max_norm=None, norm_type=2.0, scale_grad_by_freq=False,
              sparse=False):
    """Rows of `weight` picked by the integer tensor `input`: shape input.shape + (embedding_dim,).
    The row at padding_idx gets no gradient (as torch)."""
    if max_norm is not None or scale_grad_by_freq or sparse:
        raise NotImplementedError("embedding: max_norm, scale_grad_by_freq and sparse are not supported by kiln yet")
    if input.is_floating_point() or input.dtype == kiln.bool:
        raise RuntimeError("embedding(): Expected tensor for argument #1 'indices' to have one of the following "
                           f"scalar types: Long, Int; but got {input.dtype} instead")
    if padding_idx is not None:
        num = weight.shape[0]
        if not -num <= padding_idx < num:
            raise AssertionError("Padding_idx must be within num_embeddings")
        padding_idx = padding_idx % num
        if weight.requires_grad and kiln.is_grad_enabled():
            # Same values, but the padding row reads a detached copy, so it gets no gradient.
            row = (kiln.arange(num) == padding_idx).reshape(num, 1)
            weight = kiln.where(row, weight.detach(), weight)
    rows = weight.index_select(0, input.reshape(-1))
    return rows.reshape(list(input.shape) + [weight.shape[1]])


# ---------------------------------------------------------------- small helpers torch has
def one_hot(tensor, num_classes=-1):
    """int64 tensor of shape tensor.shape + (num_classes,), 1 at each class index."""
    if tensor.is_floating_point() or tensor.dtype == kiln.bool:
        raise RuntimeError("one_hot is only applicable to index tensor.")
    if tensor.numel() and tensor.min().item() < 0:
        raise RuntimeError("Class values must be non-negative.")
    if num_classes == -1:
        if tensor.numel() == 0:
            raise RuntimeError("Can not infer total number of classes from empty tensor.")
        num_classes = int(tensor.max().item()) + 1
    elif tensor.numel() and tensor.max().item() >= num_classes:
        raise RuntimeError("Class values must be smaller than num_classes.")
    return (tensor.unsqueeze(-1) == kiln.arange(num_classes)).long()


def normalize(input, p=2.0, dim=1, eps=1e-12, out=None):
    """input / max(||input||_p over dim, eps)."""
    result = input / kiln.norm(input, p, dim, keepdim=True).clamp(min=eps)
    return result if out is None else out.copy_(result)


def cosine_similarity(x1, x2, dim=1, eps=1e-8):
    """sum(x1 * x2) / sqrt(max(||x1||^2, eps^2) * max(||x2||^2, eps^2)) over dim, after
    broadcasting x1 and x2 together (torch's formula)."""
    dtype = kiln.result_type(x1, x2)
    if not dtype.is_floating_point:
        raise RuntimeError(f"expected common dtype to be floating point, yet common dtype is {dtype}")
    x1, x2 = kiln.broadcast_tensors(x1.to(dtype), x2.to(dtype))
    squared1 = (x1 * x1).sum(dim, keepdim=True).clamp(min=eps * eps)
    squared2 = (x2 * x2).sum(dim, keepdim=True).clamp(min=eps * eps)
    return (x1 * x2).sum(dim) * (squared1 * squared2).rsqrt().squeeze(dim)


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
    if antialias:
        raise NotImplementedError("interpolate(): antialias=True is not implemented in kiln")

    name = _UPSAMPLE.get((input.dim(), mode))
    if name is not None:
        if output_size is None:  # torch's compute_output_size: in * scale, truncated
            output_size = [int(float(input.size(i + 2)) * scale_factors[i]) for i in range(dim)]
        scales = list(scale_factors) if scale_factors is not None else [None] * dim
        op = getattr(kiln, name) if hasattr(kiln, name) else getattr(kiln._C, name)
        if mode in _MODE_DIMS:
            return op(input, output_size, align_corners, *scales)
        return op(input, output_size, *scales)
    if mode == "area" and input.dim() in (3, 4):
        if input.dim() == 3:
            return adaptive_avg_pool2d(input.unsqueeze(-2), [1, output_size[0]]).squeeze(-2)
        return adaptive_avg_pool2d(input, output_size)
    if mode == "area" and input.dim() == 5:
        raise NotImplementedError("interpolate(): mode 'area' on 5-D input (adaptive_avg_pool3d) is not implemented "
                                  "in kiln")
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
    if input.dim() == 5 and grid.dim() == 5:
        raise NotImplementedError("grid_sample(): 5-D (volumetric) input is not implemented in kiln")
    return kiln.grid_sampler_2d(input, grid, mode_enum, padding_enum, align_corners)
