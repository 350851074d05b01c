"""Margin losses composed of kiln ops, with torch 2.x's formulas, checks and messages (values and
gradients as torch's kernels give them): multi_margin_loss, multilabel_margin_loss,
hinge_embedding_loss, triplet_margin_with_distance_loss. tests/python/test_ops_part2_more.py
compares each with torch."""
import kiln

_REDUCTIONS = ("none", "mean", "sum")


def _reduction(reduction, size_average, reduce):
    from .functional import _reduction as legacy
    if size_average is not None or reduce is not None:
        return legacy(reduction, size_average, reduce)
    if reduction not in _REDUCTIONS:
        raise ValueError(f"{reduction} is not a valid value for reduction")
    return reduction


def _reduce(loss, reduction):
    if reduction == "mean":
        return loss.mean()
    return loss.sum() if reduction == "sum" else loss


def _check_target(input, target, name):
    # torch's multi_margin_loss_shape_check / multilabel_margin_loss_shape_check
    nd = input.dim()
    if not (nd <= 1 and input.numel() > 0 or nd == 2 and input.shape[1] > 0):
        raise RuntimeError(f"Expected non-empty vector or matrix with optional 0-dim batch size, but got: "
                           f"{list(input.shape)}")
    if target.dtype not in (kiln.int64, kiln.int32, kiln.int16, kiln.int8, kiln.uint8):
        raise RuntimeError(f"expected scalar type Long but found {target.dtype}")


def multi_margin_loss(input, target, p=1, margin=1.0, weight=None, size_average=None, reduce=None,
                      reduction="mean"):
    """sum over j != y of max(0, margin - x[y] + x[j]) ** p (times weight[y]), divided by the classes."""
    reduction = _reduction(reduction, size_average, reduce)
    if p not in (1, 2):
        raise ValueError("only p == 1 and p == 2 supported")
    if weight is not None and weight.dim() != 1:
        raise ValueError("weight must be one-dimensional")
    _check_target(input, target, "multi_margin_loss")
    x = input.view(1, -1) if input.dim() <= 1 else input
    n, c = x.shape
    t = target.reshape(-1).long()
    if t.numel() != n:
        raise RuntimeError(f"inconsistent target size, got: {list(target.shape)}")
    if n and (bool((t < 0).any()) or bool((t >= c).any())):
        raise RuntimeError("target out of range")
    x_y = x.gather(1, t.unsqueeze(1))
    z = (margin - x_y + x).relu()  # torch's kernel counts a term only where it is > 0
    if p == 2:
        z = z * z
    if weight is not None:
        z = z * weight.gather(0, t).unsqueeze(1)
    not_target = kiln.ones_like(x, dtype=kiln.bool).scatter(1, t.unsqueeze(1), False)
    loss = (z * not_target).sum(1) / c
    if input.dim() <= 1 and reduction == "none":
        loss = loss.view(target.shape)
    return _reduce(loss, reduction)


def multilabel_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """sum over the target classes j (target's entries before the first -1) and the other classes k
    of max(0, 1 - (x[j] - x[k])), divided by the classes."""
    reduction = _reduction(reduction, size_average, reduce)
    _check_target(input, target, "multilabel_margin_loss")
    if list(target.shape) != list(input.shape):
        raise RuntimeError(f"inconsistent size {list(target.shape)} for argument #2 'target'")
    x = input.view(1, -1) if input.dim() <= 1 else input
    t = target.reshape(x.shape).long()
    c = x.shape[1]
    valid = kiln.cumprod((t >= 0).long(), 1)  # the entries before the first -1
    if x.numel() and bool(((t < -1) | (t >= c)).logical_and(valid.bool()).any()):
        raise RuntimeError("target out of range")
    # how often each class is listed (torch's loop counts a repeated target twice)
    listed = kiln.zeros_like(t).scatter_add(1, t.clamp(0, c - 1), valid)
    is_target = listed > 0
    z = (1 - x.unsqueeze(2) + x.unsqueeze(1)).relu()  # [n, j, k]: 1 - (x[j] - x[k])
    pair = listed.unsqueeze(2).to(x.dtype) * (~is_target).unsqueeze(1).to(x.dtype)
    loss = (z * pair).sum((1, 2)) / c
    if input.dim() <= 1 and reduction == "none":
        loss = loss.view(())
    return _reduce(loss, reduction)


def hinge_embedding_loss(input, target, margin=1.0, size_average=None, reduce=None, reduction="mean"):
    """x where target is 1, max(0, margin - x) where it is -1 (torch's where(target != 1, ...) +
    where(target != -1, ...): other targets get both terms)."""
    reduction = _reduction(reduction, size_average, reduce)
    zeros = kiln.zeros_like(input)
    margin_clamp = (margin - input).clamp_min(0)
    output_margin = kiln.where(target != 1, margin_clamp, zeros)
    output_self = kiln.where(target != -1, input, zeros)
    return _reduce(output_margin + output_self, reduction)


def triplet_margin_with_distance_loss(anchor, positive, negative, *, distance_function=None, margin=1.0,
                                      swap=False, reduction="mean"):
    """max(0, margin + d(anchor, positive) - d(anchor, negative)), d pairwise_distance by default;
    swap=True takes the smaller of d(anchor, negative) and d(positive, negative)."""
    if margin <= 0:
        raise ValueError(f"triplet_margin_with_distance_loss: expected margin to be greater than 0, got {margin} "
                         "instead")
    dims = (anchor.dim(), positive.dim(), negative.dim())
    if not (dims[0] == dims[1] == dims[2]):
        raise RuntimeError(f"The anchor, positive, and negative tensors are expected to have the same number of "
                           f"dimensions, but got: anchor {dims[0]}D, positive {dims[1]}D, and negative {dims[2]}D "
                           "inputs")
    if reduction not in _REDUCTIONS:
        raise ValueError(f"{reduction} is not a valid value for reduction")
    if distance_function is None:
        from .functional import pairwise_distance as distance_function
    dist_pos = distance_function(anchor, positive)
    dist_neg = distance_function(anchor, negative)
    if swap:
        dist_neg = kiln.minimum(dist_neg, distance_function(positive, negative))
    loss = kiln.clamp_min(margin + dist_pos - dist_neg, 0)
    return _reduce(loss, reduction)
