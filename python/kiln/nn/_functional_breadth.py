"""nn.functional's pooling, dropout and normalization functions that kiln lacked, as torch 1.13 writes
them (composed of kiln's differentiable ops): max_pool1d/3d (and their _with_indices forms), avg_pool1d/3d,
max_unpool1d/2d/3d, lp_pool1d/2d, local_response_norm, alpha_dropout, feature_alpha_dropout,
channel_shuffle, gumbel_softmax, pdist. Compared with torch by tests/python/test_api_breadth_nn.py."""
import math
import warnings

import kiln


def _check_ints(v, op, arg, position):
    """torch's argument parser for int[n]: one int (not a bool or a tensor), or a sequence of int-likes."""
    if isinstance(v, (list, tuple)):
        bad = next((x for x in v if not _is_int(x)), None)
        ok = bad is None
    else:
        bad, ok = v, _is_int(v) and not isinstance(v, kiln.Tensor)
    if not ok:
        raise TypeError(f"{op}(): argument '{arg}' (position {position}) must be tuple of ints, not "
                        f"{type(bad).__name__}")


def _is_int(value):
    """What torch's parser takes for an int: ints, NumPy ints, 0-dim integer tensors; not bools or floats."""
    if isinstance(value, bool):
        return False
    if isinstance(value, kiln.Tensor):
        return value.dim() == 0 and not value.is_floating_point() and value.dtype != kiln.bool
    return isinstance(value, int) or hasattr(value, "__index__")


def _check_bools(op, *named):
    """torch's argument parser: bool parameters take a bool only (TypeError for 0/1, None, ...)."""
    for position, arg, v in named:
        if not isinstance(v, bool):
            raise TypeError(f"{op}(): argument '{arg}' (position {position}) must be bool, not {type(v).__name__}")


def _tuple(v, n, name):
    if isinstance(v, (list, tuple)):
        v = tuple(int(x) for x in v)
        if len(v) == 1:
            return v * n
        if len(v) != n:
            raise RuntimeError(f"{name} must either be a single int, or a tuple of {n} ints")
        return v
    return (int(v),) * n


def _out_size(size, k, s, p, d, ceil_mode):
    """torch's pooling_output_shape."""
    numerator = size + 2 * p - d * (k - 1) - 1 + (s - 1 if ceil_mode else 0)
    out = numerator // s + 1
    if ceil_mode and (out - 1) * s >= size + p:
        out -= 1
    return out


def _pool_args(op, input, kernel_size, stride, padding, dilation, nd):
    for position, (arg, v) in enumerate((("kernel_size", kernel_size), ("stride", stride), ("padding", padding),
                                         ("dilation", dilation)), 2):
        if v is not None:
            _check_ints(v, op, arg, position)
    k = _tuple(kernel_size, nd, f"{op}: kernel_size")
    s = k if stride is None or (isinstance(stride, (list, tuple)) and len(stride) == 0) else \
        _tuple(stride, nd, f"{op}: stride")
    p = _tuple(padding, nd, f"{op}: padding")
    d = _tuple(dilation, nd, f"{op}: dilation")
    if input.dim() not in (nd + 1, nd + 2):
        raise RuntimeError(f"non-empty {nd + 1}D or {nd + 2}D (batch mode) tensor expected for input")
    for i in range(input.dim() - nd - 1, input.dim()):  # only the batch may be empty
        if input.shape[i] == 0:
            raise RuntimeError(f"{op}(): Expected input's non-batch dimensions to have positive length, but input "
                               f"has a shape of {list(input.shape)} and non-batch dimension {i} has length zero!")
    if any(v <= 0 for v in k):
        raise RuntimeError(f"kernel size should be greater than zero, but got kernel_size: {k}")
    if any(v <= 0 for v in s):
        raise RuntimeError(f"stride should be greater than zero, but got stride: {s}")
    if any(v <= 0 for v in d):
        raise RuntimeError(f"dilation should be greater than zero, but got dilation: {d}")
    for pi, ki in zip(p, k):
        if pi > ki // 2:
            raise RuntimeError(f"pad should be smaller than or equal to half of kernel size, but got "
                               f"padding = {pi}, kernel_size = {ki}")
    return k, s, p, d


def _windows(input, k, s, p, d, out, fill):
    """(N?, C, o1.., k1*k2..): the windows of the padded input (fill outside), one per output position."""
    nd = len(k)
    first = input.dim() - nd
    pads = []
    for i in reversed(range(nd)):
        size = input.shape[first + i]
        needed = (out[i] - 1) * s[i] + d[i] * (k[i] - 1) + 1
        pads += [p[i], max(0, needed - size - p[i])]
    x = kiln.nn.functional.pad(input, pads, value=fill) if any(pads) else input
    for i in range(nd):
        x = x.unfold(first + i, d[i] * (k[i] - 1) + 1, s[i])
        if d[i] > 1:
            x = x[..., ::d[i]]
    # x: (..., o1..on, k1..kn): unfold replaces a dim by its window count and appends the window dim
    lead = list(x.shape[:first + nd])
    return x.reshape(lead + [math.prod(k)])  # not -1: the batch may be empty


def _max_pool_nd(op, input, kernel_size, stride, padding, dilation, ceil_mode, return_indices, nd):
    k, s, p, d = _pool_args(op, input, kernel_size, stride, padding, dilation, nd)
    spatial = list(input.shape[input.dim() - nd:])
    out = [_out_size(spatial[i], k[i], s[i], p[i], d[i], ceil_mode) for i in range(nd)]
    if any(o <= 0 for o in out):
        raise RuntimeError(f"Given input size: ({'x'.join(map(str, input.shape[-nd - 1:]))}). Calculated output "
                           f"size: ({input.shape[-nd - 1]}x{'x'.join(map(str, out))}). Output size is too small")
    fill = -math.inf if input.is_floating_point() else kiln.iinfo(input.dtype).min
    windows = _windows(input, k, s, p, d, out, fill)
    values, arg = windows.max(-1)
    if not return_indices:
        return values
    # torch's loop: the last NaN of a window, else its first maximum; a window of fill values only (-inf)
    # keeps its first element inside the input, never a padding position
    kk = math.prod(k)
    nans = kiln.isnan(windows)
    last_nan = (nans.to(kiln.int64) * kiln.arange(1, kk + 1)).argmax(-1)
    arg = kiln.where(nans.any(-1), last_nan, arg)
    inside = _windows(kiln.ones([1] * (input.dim() - nd) + spatial, dtype=kiln.bool).expand(list(input.shape)),
                      k, s, p, d, out, False)
    first_in = inside.to(kiln.int64).argmax(-1)
    arg = kiln.where((values == fill) & ~nans.any(-1), first_in, arg)
    # flat index in the input's spatial volume of each window's argmax
    rem = arg
    strides_k = [1] * nd
    for i in range(nd - 2, -1, -1):
        strides_k[i] = strides_k[i + 1] * k[i + 1]
    flat = None
    for i in range(nd):
        a = rem // strides_k[i]
        rem = rem % strides_k[i]
        o = kiln.arange(out[i], dtype=kiln.int64).reshape([out[i]] + [1] * (nd - 1 - i))
        pos = o * s[i] - p[i] + a * d[i]
        flat = pos if flat is None else flat * spatial[i] + pos
    return values, flat


def max_pool1d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    k, s, p, d = _pool_args("max_pool1d", input, kernel_size, stride, padding, dilation, 1)
    if not return_indices and not input.requires_grad and \
            _out_size(input.shape[-1], k[0], s[0], p[0], d[0], ceil_mode) == 0:
        # torch's max_pool1d_impl (no indices, no grad) allows an empty output; max_pool2d does not
        return input.new_empty(list(input.shape[:-1]) + [0])
    result = kiln.nn.functional.max_pool2d(input.unsqueeze(-2), (1, k[0]), (1, s[0]), (0, p[0]), (1, d[0]),
                                           ceil_mode, return_indices)
    if return_indices:
        return result[0].squeeze(-2), result[1].squeeze(-2)
    return result.squeeze(-2)


def max_pool1d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
                            return_indices=False):
    return max_pool1d(input, kernel_size, stride, padding, dilation, ceil_mode, True)


def max_pool2d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
                            return_indices=False):
    return kiln.nn.functional.max_pool2d(input, kernel_size, stride, padding, dilation, ceil_mode, True)


def max_pool3d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    _check_bools("max_pool3d", (6, "ceil_mode", ceil_mode))
    return _max_pool_nd("max_pool3d", input, kernel_size, stride, padding, dilation, ceil_mode, return_indices, 3)


def max_pool3d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
                            return_indices=False):
    return max_pool3d(input, kernel_size, stride, padding, dilation, ceil_mode, True)


def adaptive_max_pool1d_with_indices(input, output_size, return_indices=False):
    return kiln.nn.functional.adaptive_max_pool1d(input, output_size, True)


def adaptive_max_pool2d_with_indices(input, output_size, return_indices=False):
    return kiln.nn.functional.adaptive_max_pool2d(input, output_size, True)


def adaptive_max_pool3d_with_indices(input, output_size, return_indices=False):
    return kiln.nn.functional.adaptive_max_pool3d(input, output_size, True)


def avg_pool1d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True):
    if input.dim() not in (2, 3):
        raise RuntimeError(f"Expected 2D or 3D input tensor, but got {list(input.shape)}")
    for position, arg, v in ((2, "kernel_size", kernel_size), (3, "stride", stride), (4, "padding", padding)):
        if v is not None:
            _check_ints(v, "avg_pool1d", arg, position)
    _check_bools("avg_pool1d", (5, "ceil_mode", ceil_mode), (6, "count_include_pad", count_include_pad))
    k = _tuple(kernel_size, 1, "avg_pool1d: kernel_size")
    s = k if stride is None or (isinstance(stride, (list, tuple)) and len(stride) == 0) else \
        _tuple(stride, 1, "avg_pool1d: stride")
    p = _tuple(padding, 1, "avg_pool1d: padding")
    return kiln.nn.functional.avg_pool2d(input.unsqueeze(-2), (1, k[0]), (1, s[0]), (0, p[0]), ceil_mode,
                                         count_include_pad).squeeze(-2)


def avg_pool3d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
               divisor_override=None):
    k, s, p, _ = _pool_args("avg_pool3d", input, kernel_size, stride, padding, 1, 3)
    _check_bools("avg_pool3d", (5, "ceil_mode", ceil_mode), (6, "count_include_pad", count_include_pad))
    if divisor_override is not None and (not isinstance(divisor_override, int) or isinstance(divisor_override, bool)):
        raise TypeError(f"avg_pool3d(): argument 'divisor_override' (position 7) must be int, not "
                        f"{type(divisor_override).__name__}")
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError("divisor must be not zero")
    if not input.is_floating_point():  # torch's CPU kernel: the floating types and int64 (truncated)
        if input.dtype != kiln.int64:
            names = {kiln.bool: "Bool", kiln.uint8: "Byte", kiln.int8: "Char", kiln.int16: "Short", kiln.int32: "Int"}
            raise RuntimeError(f"\"avg_pool3d_out_frame\" not implemented for '{names.get(input.dtype)}'")
        result = avg_pool3d(input.double(), k, s, p, ceil_mode, count_include_pad, divisor_override)
        return result.trunc().to(kiln.int64)
    spatial = list(input.shape[input.dim() - 3:])
    out = [_out_size(spatial[i], k[i], s[i], p[i], 1, ceil_mode) for i in range(3)]
    if any(o <= 0 for o in out):
        raise RuntimeError(f"Given input size: ({'x'.join(map(str, input.shape[-4:]))}). Calculated output "
                           f"size: ({input.shape[-4]}x{'x'.join(map(str, out))}). Output size is too small")
    sums = _windows(input, k, s, p, (1, 1, 1), out, 0.0).sum(-1)
    if divisor_override is not None:
        return sums / divisor_override
    divisor = None
    for i in range(3):
        counts = []
        for o in range(out[i]):
            start = o * s[i] - p[i]
            end = min(start + k[i], spatial[i] + p[i])
            pool = end - start
            count = min(end, spatial[i]) - max(start, 0)
            counts.append(pool if count_include_pad else count)
        c = kiln.tensor(counts, dtype=input.dtype).reshape([out[i]] + [1] * (2 - i))
        divisor = c if divisor is None else divisor * c
    return sums / divisor


def _unpool_size(op, input, indices, kernel_size, stride, padding, output_size, nd):
    # torch computes the output size from these in Python and passes it on as int[]: floats or a tensor
    # output_size fail there (TypeError)
    for position, arg, v in ((3, "kernel_size", kernel_size), (4, "stride", stride), (5, "padding", padding)):
        if v is not None:
            _check_ints(v, op, arg, position)
    if output_size is not None and (not isinstance(output_size, (list, tuple)) or
                                    not all(_is_int(v) for v in output_size)):
        raise TypeError(f"{op}(): argument 'output_size' must be tuple of ints, not {type(output_size).__name__}")
    k = _tuple(kernel_size, nd, "kernel_size")
    s = k if stride is None else _tuple(stride, nd, "stride")
    p = _tuple(padding, nd, "padding")
    spatial = list(input.shape[input.dim() - nd:])
    default = [(spatial[i] - 1) * s[i] + k[i] - 2 * p[i] for i in range(nd)]
    if output_size is None:
        return default
    output_size = list(output_size)
    if len(output_size) == nd + 2 or (len(output_size) == nd + 1 and input.dim() == nd + 1):
        output_size = output_size[-nd:]
    if len(output_size) != nd:
        raise ValueError(f"output_size should be a sequence containing {nd} or {nd + 2} elements, but it has a "
                         f"length of '{len(output_size)}'")
    for i in range(nd):
        lo, hi = default[i] - s[i], default[i] + s[i]
        if not lo < output_size[i] < hi:
            raise ValueError(f'invalid output_size "{output_size}" (dim {i} must be between {lo} and {hi})')
    return output_size


def _max_unpool(op, input, indices, kernel_size, stride, padding, output_size, nd):
    if input.dim() not in (nd + 1, nd + 2):  # torch's message names the 2-d/3-d kernel the op runs on
        inner = max(nd, 2)
        raise RuntimeError(f"Input to max_unpooling{inner}d should be a {inner + 1}d or {inner + 2}d Tensor, but got "
                           f"a tensor with {input.dim() + (1 if nd == 1 else 0)} dimensions.")
    size = _unpool_size(op, input, indices, kernel_size, stride, padding, output_size, nd)
    if indices.dtype != kiln.int64:
        raise RuntimeError(f"elements in indices should be type int64 but got: {indices.dtype}")
    if tuple(indices.shape) != tuple(input.shape):
        raise RuntimeError(f"Expected shape of indices to be same as that of the input tensor "
                           f"({list(input.shape)}) but got indices tensor with shape: {list(indices.shape)}")
    lead = list(input.shape[:input.dim() - nd])
    total = 1
    for v in size:
        total *= v
    if indices.numel() and (int(indices.max()) >= total or int(indices.min()) < 0):
        bad = int(indices.max()) if int(indices.max()) >= total else int(indices.min())
        raise RuntimeError(f"Found an invalid max index: {bad} (output volumes are of size "
                           f"{'x'.join(map(str, size))}")
    flat_in = input.reshape(lead + [-1])
    flat_idx = indices.reshape(lead + [-1])
    out = kiln.zeros(lead + [total], dtype=input.dtype)
    out = out.scatter(len(lead), flat_idx, flat_in)
    return out.reshape(lead + list(size))


def max_unpool1d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    return _max_unpool("max_unpool1d", input, indices, kernel_size, stride, padding, output_size, 1)


def max_unpool2d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    return _max_unpool("max_unpool2d", input, indices, kernel_size, stride, padding, output_size, 2)


def max_unpool3d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    return _max_unpool("max_unpool3d", input, indices, kernel_size, stride, padding, output_size, 3)


def lp_pool1d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    if stride is not None:
        out = avg_pool1d(input.pow(norm_type), kernel_size, stride, 0, ceil_mode)
    else:
        out = avg_pool1d(input.pow(norm_type), kernel_size, padding=0, ceil_mode=ceil_mode)
    return (kiln.sign(out) * kiln.nn.functional.relu(kiln.abs(out))).mul(kernel_size).pow(1.0 / norm_type)


def lp_pool2d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    kw, kh = (kernel_size, kernel_size) if not isinstance(kernel_size, (list, tuple)) else tuple(kernel_size)
    F = kiln.nn.functional
    if stride is not None:
        out = F.avg_pool2d(input.pow(norm_type), kernel_size, stride, 0, ceil_mode)
    else:
        out = F.avg_pool2d(input.pow(norm_type), kernel_size, padding=0, ceil_mode=ceil_mode)
    return (kiln.sign(out) * F.relu(kiln.abs(out))).mul(kw * kh).pow(1.0 / norm_type)


def local_response_norm(input, size, alpha=1e-4, beta=0.75, k=1.0):
    """torch's composition; the 3-D average pool over channels is avg_pool2d over (C, H*W...)."""
    F = kiln.nn.functional
    dim = input.dim()
    if dim < 3:
        raise ValueError(f"Expected 3D or higher dimensionality input (got {dim} dimensions)")
    if input.numel() == 0:
        return input
    div = input.mul(input).unsqueeze(1)
    if dim == 3:
        div = F.pad(div, (0, 0, size // 2, (size - 1) // 2))
        div = F.avg_pool2d(div, (size, 1), stride=1).squeeze(1)
    else:
        sizes = input.shape
        div = div.reshape([sizes[0], 1, sizes[1], -1])
        div = F.pad(div, (0, 0, size // 2, (size - 1) // 2))
        div = F.avg_pool2d(div, (size, 1), stride=1).squeeze(1)
        div = div.reshape(list(sizes))
    div = div.mul(alpha).add(k).pow(beta)
    return input / div


def _check_dropout_args(op, input, training):
    """torch's _VF call: input a Tensor, train a bool."""
    if not isinstance(input, kiln.Tensor):
        raise TypeError(f"{op}(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}")
    _check_bools(op, (3, "train", training))


def alpha_dropout(input, p=0.5, training=False, inplace=False):
    _check_dropout_args("alpha_dropout", input, training)
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    return kiln.alpha_dropout_(input, p, training) if inplace else kiln.alpha_dropout(input, p, training)


def feature_alpha_dropout(input, p=0.5, training=False, inplace=False):
    _check_dropout_args("feature_alpha_dropout", input, training)
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    return (kiln.feature_alpha_dropout_(input, p, training) if inplace
            else kiln.feature_alpha_dropout(input, p, training))


def channel_shuffle(input, groups):
    if not _is_int(groups):
        raise TypeError(f"channel_shuffle(): argument 'groups' (position 2) must be int, not {type(groups).__name__}")
    if input.dim() <= 2:
        raise RuntimeError(f"channel_shuffle expects input to have at least 3 dimensions, but got input with "
                           f"{input.dim()} dimension(s)")
    if groups <= 0:
        raise RuntimeError(f"Number of groups to divide channels in must be positive. Value of groups:{groups}")
    c = input.shape[1]
    if c % groups != 0:
        raise RuntimeError(f"Number of channels must be divisible by groups. Got {c} channels and {groups} groups.")
    n = input.shape[0]
    rest = list(input.shape[2:])
    return input.reshape([n, groups, c // groups] + rest).transpose(1, 2).reshape(list(input.shape))


native_channel_shuffle = channel_shuffle


def gumbel_softmax(logits, tau=1, hard=False, eps=1e-10, dim=-1):
    """torch's: logits plus Gumbel noise (-log of an exponential_ draw, torch's numbers), over tau,
    softmaxed; hard=True returns the one-hot of the argmax with the soft gradient."""
    if eps != 1e-10:
        warnings.warn("`eps` parameter is deprecated and has no effect.")
    # contiguous (torch's legacy_contiguous_format): the noise drawn in logical order whatever logits' strides
    gumbels = -kiln.empty(list(logits.shape), dtype=logits.dtype).exponential_().log()
    gumbels = (logits + gumbels) / tau
    y_soft = gumbels.softmax(dim)
    if hard:
        index = y_soft.max(dim, keepdim=True)[1]
        y_hard = kiln.zeros_like(logits).scatter_(dim, index, 1.0)
        return y_hard - y_soft.detach() + y_soft
    return y_soft


def pdist(input, p=2):
    """||x_i - x_j||_p for every pair i < j of the rows of a 2-D input, in torch's order."""
    if input.dim() != 2:
        raise RuntimeError(f"pdist only supports 2D tensors, got: {input.dim()}D")
    if not input.is_floating_point():
        raise RuntimeError("pdist only supports floating-point dtypes")
    if p < 0:
        raise RuntimeError("pdist only supports non-negative p values")
    n = input.shape[0]
    if n <= 1:
        return kiln.empty([0], dtype=input.dtype)
    idx = kiln.triu_indices(n, n, 1)
    diff = input[idx[0]] - input[idx[1]]
    if p == 0:  # the count of differing entries, with torch's zero gradient
        return (diff != 0).sum(1).to(input.dtype) + (diff * 0).sum(1)
    if p == math.inf:  # torch's _pdist_backward gives every tied maximum the whole gradient (norm splits it)
        a = diff.abs()
        largest = a.amax(1, keepdim=True).detach()
        tied = (a * (a == largest)).sum(1)
        return largest.squeeze(1) + (tied - tied.detach())
    return kiln.norm(diff, p, 1)


__all__ = ["max_pool1d", "max_pool1d_with_indices", "max_pool2d_with_indices", "max_pool3d",
           "max_pool3d_with_indices", "adaptive_max_pool1d_with_indices", "adaptive_max_pool2d_with_indices",
           "adaptive_max_pool3d_with_indices", "avg_pool1d", "avg_pool3d", "max_unpool1d", "max_unpool2d",
           "max_unpool3d", "lp_pool1d", "lp_pool2d", "local_response_norm", "alpha_dropout",
           "feature_alpha_dropout", "channel_shuffle", "native_channel_shuffle", "gumbel_softmax", "pdist"]


def conv_transpose3d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    """Transposed 3-D convolution of (N, C_in, D, H, W) or (C_in, D, H, W) input with weight
    (C_in, C_out / groups, kD, kH, kW): for each kernel depth, one conv_transpose2d of every depth slice
    (folded into the batch), spread over the output depths it reaches (stride, dilation) and summed."""
    F = kiln.nn.functional
    op = "conv_transpose3d"
    if isinstance(padding, str):
        raise TypeError(f"{op}() received an invalid combination of arguments: padding must be a tuple of ints, "
                        f"not str")
    for position, arg, v in ((4, "stride", stride), (5, "padding", padding), (6, "output_padding", output_padding),
                             (8, "dilation", dilation)):
        _check_ints(v, op, arg, position)
    if not _is_int(groups):
        raise TypeError(f"{op}(): argument 'groups' (position 7) must be int, not {type(groups).__name__}")
    stride, padding = F._ntuple(stride, 3, "stride", op), F._ntuple(padding, 3, "padding", op)
    output_padding, dilation = F._ntuple(output_padding, 3, "output_padding", op), F._ntuple(dilation, 3, "dilation", op)
    F._conv_check(op, input, weight, bias, stride, padding, dilation, groups, 3, True, output_padding)
    unbatched = input.dim() == 4
    if unbatched:
        input = input.unsqueeze(0)
    n, c, depth, h, w = input.shape
    kd = weight.shape[2]
    out_d = (depth - 1) * stride[0] - 2 * padding[0] + dilation[0] * (kd - 1) + output_padding[0] + 1
    if out_d <= 0:
        raise RuntimeError(f"conv_transpose3d(): Given input size per channel: ({depth} x {h} x {w}). Calculated "
                           f"output size per channel: ({out_d} x ...). Output size is too small")
    full = (depth - 1) * stride[0] + dilation[0] * (kd - 1) + 1 + output_padding[0]
    folded = input.transpose(1, 2).reshape(n * depth, c, h, w)
    out = None
    for k in range(kd):
        y = F.conv_transpose2d(folded, weight[:, :, k], None, stride[1:], padding[1:], output_padding[1:], groups,
                               dilation[1:])
        y = y.reshape([n, depth] + list(y.shape[1:]))  # (N, D, O, H', W')
        if stride[0] > 1:  # D slices stride[0] apart: zeros between them
            y = kiln.stack([y] + [kiln.zeros_like(y)] * (stride[0] - 1), 2)
            y = y.reshape([n, depth * stride[0]] + list(y.shape[3:]))
            y = y.narrow(1, 0, (depth - 1) * stride[0] + 1)
        before = k * dilation[0]
        after = full - before - y.shape[1]
        y = kiln.constant_pad_nd(y, [0, 0, 0, 0, 0, 0, before, after], 0)
        out = y if out is None else out + y
    out = out.narrow(1, padding[0], out_d).transpose(1, 2)
    if bias is not None:
        out = out + bias.reshape(-1, 1, 1, 1)
    out = out.contiguous()
    return out.squeeze(0) if unbatched else out
