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
    if input.dim() == 2 and bias is not None:
        return kiln.addmm(bias, input, weight.t())  # one fused op, as torch (one rounding in float16)
    out = kiln.matmul(input, weight.t())
    return out if bias is None else out + bias


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
