"""Records of the layer ops: conv2d and its gradients, pooling, normalization, dropout, padding
and the mse / l1 / bce-with-logits losses.

References are written from the definitions with NumPy: a convolution is a sum over kernel
taps of strided slices of the padded input (its gradients are the adjoint sums), pooling
windows follow torch's documented output-size and divisor rules.
"""
import numpy as np

from .record import ALL, FLOATS, ErrorInput, OpRecord, Sample, values

FAMILY = "nn_layers"


def _pair(v):
    return tuple(v) if isinstance(v, (tuple, list)) else (v, v)


# ----------------------------------------------------------------------------- convolution
def _conv_out(size, k, s, p, d):
    return (size + 2 * p - d * (k - 1) - 1) // s + 1


def _taps(x_shape, w_shape, stride, padding, dilation):
    """For each kernel tap (kh, kw): the index slices of the padded input it reads."""
    (s0, s1), (p0, p1), (d0, d1) = _pair(stride), _pair(padding), _pair(dilation)
    H, W = x_shape[-2:]
    KH, KW = w_shape[2:]
    OH, OW = _conv_out(H, KH, s0, p0, d0), _conv_out(W, KW, s1, p1, d1)
    for kh in range(KH):
        for kw in range(KW):
            yield kh, kw, (slice(kh * d0, kh * d0 + s0 * (OH - 1) + 1, s0),
                           slice(kw * d1, kw * d1 + s1 * (OW - 1) + 1, s1)), (OH, OW)


def _batched(x):
    return x if x.ndim == 4 else x[None]


def _conv_ref(x, w, b=None, stride=1, padding=0, dilation=1, groups=1):
    xb = _batched(x)
    (p0, p1) = _pair(padding)
    xp = np.pad(xb, ((0, 0), (0, 0), (p0, p0), (p1, p1)))
    O, Cg = w.shape[:2]
    Og = O // groups
    out = None
    for kh, kw, (rs, cs), (OH, OW) in _taps(xb.shape, w.shape, stride, padding, dilation):
        if out is None:
            out = np.zeros((xb.shape[0], O, OH, OW))
        for g in range(groups):
            xs = xp[:, g * Cg:(g + 1) * Cg, rs, cs]
            out[:, g * Og:(g + 1) * Og] += np.einsum("nchw,oc->nohw", xs, w[g * Og:(g + 1) * Og, :, kh, kw])
    if b is not None:
        out += b[None, :, None, None]
    return out if x.ndim == 4 else out[0]


def _conv_backward_input_ref(go, input_size, w, stride, padding, dilation, groups, transposed=False):
    shape = tuple(input_size) if len(input_size) == 4 else (1,) + tuple(input_size)
    gob = _batched(go)
    (p0, p1) = _pair(padding)
    gxp = np.zeros((shape[0], shape[1], shape[2] + 2 * p0, shape[3] + 2 * p1))
    O, Cg = w.shape[:2]
    Og = O // groups
    for kh, kw, (rs, cs), _ in _taps(shape, w.shape, stride, padding, dilation):
        for g in range(groups):
            gxp[:, g * Cg:(g + 1) * Cg, rs, cs] += np.einsum("nohw,oc->nchw", gob[:, g * Og:(g + 1) * Og],
                                                               w[g * Og:(g + 1) * Og, :, kh, kw])
    gx = gxp[:, :, p0:p0 + shape[2], p1:p1 + shape[3]]
    return gx if len(input_size) == 4 else gx[0]


def _conv_backward_weight_ref(go, x, weight_size, stride, padding, dilation, groups, transposed=False):
    xb, gob = _batched(x), _batched(go)
    (p0, p1) = _pair(padding)
    xp = np.pad(xb, ((0, 0), (0, 0), (p0, p0), (p1, p1)))
    O, Cg = weight_size[:2]
    Og = O // groups
    gw = np.zeros(tuple(weight_size))
    for kh, kw, (rs, cs), _ in _taps(xb.shape, weight_size, stride, padding, dilation):
        for g in range(groups):
            gw[g * Og:(g + 1) * Og, :, kh, kw] = np.einsum("nohw,nchw->oc", gob[:, g * Og:(g + 1) * Og],
                                                           xp[:, g * Cg:(g + 1) * Cg, rs, cs])
    return gw


# (input shape, out_channels, kernel, stride, padding, dilation, groups, note)
_CONV_CASES = [
    ((2, 3, 6, 5), 4, 3, 1, 1, 1, 1, "3x3, padding 1"),
    ((2, 4, 7, 6), 6, (3, 2), (2, 1), (1, 0), (1, 2), 2, "groups 2, stride/dilation per dim"),
    ((1, 2, 5, 5), 4, 1, 1, 0, 1, 2, "1x1 kernel, groups 2"),
    ((3, 5, 5), 2, 3, 2, 1, 1, 1, "unbatched (C, H, W), stride 2"),
    ((0, 3, 5, 5), 2, 3, 1, 0, 1, 1, "empty batch"),
    ((1, 3, 4, 4), 3, 2, 1, 0, 1, 3, "depthwise"),
]


def _conv_sample(case, d, seed=0, bias=True):
    shape, out_c, k, s, p, dil, groups, note = case
    c = shape[-3]
    kh, kw = _pair(k)
    x = values(shape, d, seed=seed)
    w = values((out_c, c // groups, kh, kw), d, seed=seed + 1)
    b = values((out_c,), d, seed=seed + 2) if bias else None
    return Sample((x, w, b, list(_pair(s)), list(_pair(p)), list(_pair(dil)), groups), note=note)


def _conv_samples(d):
    out = [_conv_sample(c, d, i, bias=i != 2) for i, c in enumerate(_CONV_CASES)]
    out.append(Sample(out[0].args[:2], {"stride": [1, 1], "padding": [2, 1]}, note="keywords, no bias"))
    return out


def _small_conv_grad_samples():
    cases = [((2, 2, 4, 3), 2, 2, 1, 1, 1, 1, "small"), ((1, 4, 5, 4), 2, (2, 3), (2, 1), (1, 1), (2, 1), 2,
                                                          "small, groups 2"), ((2, 3, 3), 2, 2, 1, 0, 1, 1, "unbatched")]
    return [_conv_sample(c, "float64", i) for i, c in enumerate(cases)]


def _conv_backward_input_samples(d):
    out = []
    for i, case in enumerate(_CONV_CASES):
        x, w, _b, s, p, dil, groups = _conv_sample(case, d, i).args
        go = values(_conv_ref(x, w, None, s, p, dil, groups).shape, d, seed=i + 7)
        # every other case as a transposed convolution's (the native path; the same math)
        out.append(Sample((go, list(x.shape), w, s, p, dil, groups) + ((True,) if i % 2 else ()), note=case[-1]))
    return out


def _conv_backward_weight_samples(d):
    out = []
    for i, case in enumerate(_CONV_CASES):
        x, w, _b, s, p, dil, groups = _conv_sample(case, d, i).args
        go = values(_conv_ref(x, w, None, s, p, dil, groups).shape, d, seed=i + 7)
        out.append(Sample((go, x, list(w.shape), s, p, dil, groups) + ((True,) if i % 2 else ()), note=case[-1]))
    return out


def _native(sample):
    x, w, _b, s, p, dil, groups = sample.args
    return Sample((x, w, s, p, dil, groups), note=sample.note)


def _conv_native_samples(d):
    return [_native(_conv_sample(case, d, i)) for i, case in enumerate(_CONV_CASES)]


def _conv_native_ref(x, w, stride, padding, dilation, groups):
    return _conv_ref(x, w, None, stride, padding, dilation, groups)


def _conv_weight_bias_samples(d):
    # conv2d_backward_weight's samples (without its `transposed`): the bias gradient comes with the weight's
    return [Sample(s.args[:7], note=s.note) for s in _conv_backward_weight_samples(d)]


def _conv_weight_bias_ref(go, x, weight_size, stride, padding, dilation, groups):
    bias = go.sum(axis=(0, 2, 3)) if go.ndim == 4 else go.sum(axis=(1, 2))
    return _conv_backward_weight_ref(go, x, weight_size, stride, padding, dilation, groups), bias


def _small(samples_of):
    """The float64 samples small enough for finite differences."""
    return lambda: [s for s in samples_of("float64") if all(a.size <= 120 for a in s.arrays())]


def _conv_errors():
    e = ErrorInput
    x = lambda k: k.zeros([1, 4, 5, 5])  # noqa: E731
    w = lambda k: k.zeros([2, 4, 3, 3])  # noqa: E731
    return [
        e(lambda k: k.conv2d(k.zeros([4, 5]), w(k)), RuntimeError, "3D \\(unbatched\\) or 4D", "2-D input"),
        e(lambda k: k.conv2d(x(k), k.zeros([2, 4, 3])), RuntimeError, "4-dimensional weight", "3-D weight"),
        e(lambda k: k.conv2d(x(k), k.zeros([2, 3, 3, 3])), RuntimeError, "to have 3 channels, but got 4",
          "channel mismatch"),
        e(lambda k: k.conv2d(x(k), k.zeros([3, 2, 3, 3]), None, 1, 0, 1, 2), RuntimeError, "divisible by 2",
          "out channels not divisible by groups"),
        e(lambda k: k.conv2d(x(k), w(k), None, 1, 0, 1, 0), RuntimeError, "non-positive groups", "groups 0"),
        e(lambda k: k.conv2d(x(k), w(k), None, 0), RuntimeError, "non-positive stride", "stride 0"),
        e(lambda k: k.conv2d(x(k), w(k), None, 1, -1), RuntimeError, "negative padding", "padding -1"),
        e(lambda k: k.conv2d(x(k), w(k), None, 1, 0, 0), RuntimeError, "dilation should be greater than zero",
          "dilation 0"),
        e(lambda k: k.conv2d(k.zeros([1, 4, 2, 2]), w(k)), RuntimeError, "Kernel size can't be greater",
          "kernel larger than the padded input"),
        e(lambda k: k.conv2d(x(k), w(k), k.zeros([3])), RuntimeError, "expected bias to be 1-dimensional with 2",
          "bias of the wrong size"),
        e(lambda k: k.conv2d(x(k), w(k).double()), RuntimeError, "should be the same", "float32 input, float64 weight"),
        e(lambda k: k.conv2d(x(k), w(k), None, [1, 1, 1]), RuntimeError, "single integer value or a list of 2",
          "stride of three values"),
        e(lambda k: k.conv2d(k.zeros([1, 4, 5, 5], dtype=k.int64), k.zeros([2, 4, 3, 3], dtype=k.int64)),
          RuntimeError, "floating point", "int64 input"),
    ]


def _conv_backward_errors():
    e = ErrorInput
    return [
        e(lambda k: k.conv2d_backward_input(k.zeros([1, 2, 4, 4]), [1, 4, 5, 5], k.zeros([2, 4, 3, 3]), [1, 1],
                                            [0, 0], [1, 1], 1), RuntimeError, "expected grad_output of shape",
          "grad_output of the wrong shape"),
        e(lambda k: k.conv2d_backward_input(k.zeros([1, 2, 3, 3]), [1, -4, 5, 5], k.zeros([2, 4, 3, 3]), [1, 1],
                                            [0, 0], [1, 1], 1), RuntimeError, "non-negative", "negative input_size"),
        e(lambda k: k.conv2d_backward_weight(k.zeros([1, 2, 3, 3]), k.zeros([1, 4, 5, 5]), [2, 4, -3, 3], [1, 1],
                                             [0, 0], [1, 1], 1), RuntimeError, "non-negative", "negative weight_size"),
        e(lambda k: k.conv2d_backward_weight(k.zeros([1, 2, 2, 3]), k.zeros([1, 4, 5, 5]), [2, 4, 3, 3], [1, 1],
                                             [0, 0], [1, 1], 1), RuntimeError, "expected grad_output of shape",
          "grad_output of the wrong shape"),
    ]


# ----------------------------------------------------------------------------- pooling
def _pool_out(size, k, s, p, d, ceil):
    num = size + 2 * p - d * (k - 1) - 1 + (s - 1 if ceil else 0)
    out = num // s + 1
    if ceil and (out - 1) * s >= size + p:
        out -= 1
    return out


def _planes(x):
    return x.reshape((-1,) + x.shape[-2:])


def _max_pool_ref(x, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
    (k0, k1), (p0, p1), (d0, d1) = _pair(kernel_size), _pair(padding), _pair(dilation)
    s0, s1 = _pair(stride) if len(stride) else (k0, k1)
    H, W = x.shape[-2:]
    OH, OW = _pool_out(H, k0, s0, p0, d0, ceil_mode), _pool_out(W, k1, s1, p1, d1, ceil_mode)
    planes = _planes(x)
    vals = np.zeros((len(planes), OH, OW), dtype=x.dtype)
    idx = np.zeros((len(planes), OH, OW), dtype=np.int64)
    for n, plane in enumerate(planes):
        for oh in range(OH):
            for ow in range(OW):
                best, at = None, None
                for kh in range(k0):
                    for kw in range(k1):
                        ih, iw = oh * s0 - p0 + kh * d0, ow * s1 - p1 + kw * d1
                        if 0 <= ih < H and 0 <= iw < W and (best is None or plane[ih, iw] > best):
                            best, at = plane[ih, iw], ih * W + iw
                vals[n, oh, ow], idx[n, oh, ow] = best, at
    shape = x.shape[:-2] + (OH, OW)
    return vals.reshape(shape), idx.reshape(shape)


# (input shape, kernel, stride, padding, dilation, ceil_mode, note)
_MAX_POOL_CASES = [
    ((2, 3, 6, 6), 2, [], 0, 1, False, "2x2, default stride"),
    ((1, 2, 7, 5), 3, [2, 2], 1, 1, False, "3x3 stride 2 padding 1"),
    ((2, 7, 6), [3, 2], [2, 1], [1, 0], [1, 2], True, "unbatched, ceil_mode, dilation"),
    ((0, 2, 4, 4), 2, [], 0, 1, False, "empty batch"),
    ((1, 1, 5, 5), 2, [2, 2], 0, 1, True, "ceil_mode keeps the partial window"),
]


def _max_pool_samples(d):
    return [Sample((values(shape, d, seed=i), _pair(k), list(s), _pair(p), _pair(dil), ceil), note=note)
            for i, (shape, k, s, p, dil, ceil, note) in enumerate(_MAX_POOL_CASES)]


def _max_pool_backward_ref(go, x, kernel_size, stride, padding, dilation, ceil_mode, indices):
    gx = np.zeros(_planes(x).shape)
    plane = go.shape[-2] * go.shape[-1]
    flat_go, flat_idx = go.reshape(len(gx), plane), indices.reshape(len(gx), plane)
    for n in range(len(gx)):
        np.add.at(gx[n].reshape(-1), flat_idx[n], flat_go[n])
    return gx.reshape(x.shape)


def _max_pool_backward_samples(d):
    out = []
    for s in _max_pool_samples(d):
        vals, idx = _max_pool_ref(*s.args)
        out.append(Sample((values(vals.shape, d, seed=5), s.args[0]) + s.args[1:] + (idx,), note=s.note))
    return out


def _pool_errors(name):
    e = ErrorInput
    call = lambda k, *a: getattr(k, name)(*a)  # noqa: E731
    errors = [
        e(lambda k: call(k, k.zeros([4, 4]), [2, 2]), RuntimeError, "3D or 4D", "2-D input"),
        e(lambda k: call(k, k.zeros([1, 1, 4, 4]), [0, 2]), RuntimeError, "greater than zero", "kernel 0"),
        e(lambda k: call(k, k.zeros([1, 1, 4, 4]), [2, 2], [0, 1]), RuntimeError, "greater than zero", "stride 0"),
        e(lambda k: call(k, k.zeros([1, 1, 4, 4]), [2, 2], [2, 2], [2, 2]), RuntimeError, "half of", "padding 2"),
        e(lambda k: call(k, k.zeros([1, 1, 1, 1]), [3, 3], [1, 1], [0, 0]), RuntimeError, "too small",
          "output would be empty"),
        e(lambda k: call(k, k.zeros([1, 1, 4, 4], dtype=k.int64), [2, 2]), RuntimeError, "not implemented", "int64"),
        e(lambda k: call(k, k.zeros([1, 0, 4, 4]), [2, 2]), RuntimeError, "non-zero size", "zero channels"),
    ]
    if name != "avg_pool2d":
        errors.append(e(lambda k: call(k, k.zeros([1, 1, 4, 4]), [2, 2], [], [0, 0], [0, 1]), RuntimeError,
                        "dilation should be greater than zero", "dilation 0"))
    return errors


def _max_pool_backward_errors():
    e = ErrorInput
    x = lambda k: k.zeros([1, 1, 4, 4])  # noqa: E731
    return [
        e(lambda k: k.max_pool2d_with_indices_backward(k.zeros([1, 1, 2, 2]), x(k), [2, 2], [2, 2], [0, 0], [1, 1],
                                                       False, k.full([1, 1, 2, 2], 16)), IndexError,
          "out of bounds", "index past the plane"),
        e(lambda k: k.max_pool2d_with_indices_backward(k.zeros([1, 1, 3, 2]), x(k), [2, 2], [2, 2], [0, 0], [1, 1],
                                                       False, k.zeros([1, 1, 2, 2], dtype=k.int64)), RuntimeError,
          "expected grad_output of shape", "grad_output of the wrong shape"),
        e(lambda k: k.max_pool2d_with_indices_backward(k.zeros([1, 1, 2, 2]), x(k), [2, 2], [2, 2], [0, 0], [1, 1],
                                                       False, k.zeros([1, 1, 2, 2])), RuntimeError,
          "int64 indices", "float indices"),
    ]


def _avg_window(o, size, k, s, p):
    start = o * s - p
    end = min(start + k, size + p)
    padded = end - start
    return max(start, 0), min(end, size), padded


def _avg_pool_ref(x, kernel_size, stride=(), padding=0, ceil_mode=False, count_include_pad=True,
                  divisor_override=None):
    (k0, k1), (p0, p1) = _pair(kernel_size), _pair(padding)
    s0, s1 = _pair(stride) if len(stride) else (k0, k1)
    H, W = x.shape[-2:]
    OH, OW = _pool_out(H, k0, s0, p0, 1, ceil_mode), _pool_out(W, k1, s1, p1, 1, ceil_mode)
    planes = _planes(x)
    out = np.zeros((len(planes), OH, OW))
    for oh in range(OH):
        h0, h1, ph = _avg_window(oh, H, k0, s0, p0)
        for ow in range(OW):
            w0, w1, pw = _avg_window(ow, W, k1, s1, p1)
            div = divisor_override or (ph * pw if count_include_pad else (h1 - h0) * (w1 - w0))
            out[:, oh, ow] = planes[:, h0:h1, w0:w1].sum(axis=(1, 2)) / div
    return out.reshape(x.shape[:-2] + (OH, OW))


# (input shape, kernel, stride, padding, ceil_mode, count_include_pad, divisor_override, note)
_AVG_POOL_CASES = [
    ((2, 3, 6, 6), 2, [], 0, False, True, None, "2x2, default stride"),
    ((1, 2, 7, 5), 3, [2, 2], 1, False, True, None, "padding counted"),
    ((1, 2, 7, 5), 3, [2, 2], 1, True, False, None, "ceil_mode, padding not counted"),
    ((2, 5, 6), [3, 2], [1, 2], [1, 1], False, True, 5, "unbatched, divisor_override"),
    ((0, 2, 4, 4), 2, [], 0, False, True, None, "empty batch"),
]


def _avg_pool_samples(d):
    return [Sample((values(shape, d, seed=i), _pair(k), list(s), _pair(p), ceil, cip, div), note=note)
            for i, (shape, k, s, p, ceil, cip, div, note) in enumerate(_AVG_POOL_CASES)]


def _avg_pool_backward_ref(go, x, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override):
    (k0, k1), (p0, p1) = _pair(kernel_size), _pair(padding)
    s0, s1 = _pair(stride) if len(stride) else (k0, k1)
    H, W = x.shape[-2:]
    gx = np.zeros(_planes(x).shape)
    gp = _planes(go)
    for oh in range(go.shape[-2]):
        h0, h1, ph = _avg_window(oh, H, k0, s0, p0)
        for ow in range(go.shape[-1]):
            w0, w1, pw = _avg_window(ow, W, k1, s1, p1)
            div = divisor_override or (ph * pw if count_include_pad else (h1 - h0) * (w1 - w0))
            gx[:, h0:h1, w0:w1] += gp[:, oh, ow][:, None, None] / div
    return gx.reshape(x.shape)


def _avg_pool_backward_samples(d):
    return [Sample((values(_avg_pool_ref(*s.args).shape, d, seed=3),) + s.args, note=s.note)
            for s in _avg_pool_samples(d)]


def _adaptive_bounds(o, out, size):
    return (o * size) // out, -((-(o + 1) * size) // out)


def _adaptive_ref(x, output_size):
    OH, OW = _pair(output_size)
    H, W = x.shape[-2:]
    planes = _planes(x)
    out = np.zeros((len(planes), OH, OW))
    for oh in range(OH):
        h0, h1 = _adaptive_bounds(oh, OH, H)
        for ow in range(OW):
            w0, w1 = _adaptive_bounds(ow, OW, W)
            out[:, oh, ow] = planes[:, h0:h1, w0:w1].mean(axis=(1, 2))
    return out.reshape(x.shape[:-2] + (OH, OW))


_ADAPTIVE_CASES = [((2, 3, 7, 5), [3, 2], "uneven windows"), ((1, 2, 4, 4), [2, 2], "even windows"),
                   ((3, 5, 6), [1, 1], "unbatched, global"), ((2, 2, 3, 3), [4, 5], "output larger than input"),
                   ((0, 2, 4, 4), [2, 2], "empty batch")]


def _adaptive_samples(d):
    return [Sample((values(shape, d, seed=i), size), note=note) for i, (shape, size, note) in enumerate(_ADAPTIVE_CASES)]


def _adaptive_backward_ref(go, x):
    OH, OW = go.shape[-2:]
    H, W = x.shape[-2:]
    gx = np.zeros(_planes(x).shape)
    gp = _planes(go)
    for oh in range(OH):
        h0, h1 = _adaptive_bounds(oh, OH, H)
        for ow in range(OW):
            w0, w1 = _adaptive_bounds(ow, OW, W)
            gx[:, h0:h1, w0:w1] += gp[:, oh, ow][:, None, None] / ((h1 - h0) * (w1 - w0))
    return gx.reshape(x.shape)


def _adaptive_backward_samples(d):
    return [Sample((values(_adaptive_ref(*s.args).shape, d, seed=4), s.args[0]), note=s.note)
            for s in _adaptive_samples(d)]


def _adaptive_errors():
    e = ErrorInput
    return [
        e(lambda k: k.adaptive_avg_pool2d(k.zeros([4, 4]), [2, 2]), RuntimeError, "3D or 4D", "2-D input"),
        e(lambda k: k.adaptive_avg_pool2d(k.zeros([1, 1, 4, 4]), [-1, 2]), RuntimeError, "greater than or equal to 0",
          "negative output size"),
        e(lambda k: k.adaptive_avg_pool2d(k.zeros([1, 1, 0, 4]), [2, 2]), RuntimeError, "non-zero size",
          "empty height"),
        e(lambda k: k.adaptive_avg_pool2d_backward(k.zeros([1, 1, 2]), k.zeros([1, 1, 4, 4])), RuntimeError,
          "grad_output", "grad_output of fewer dims"),
    ]


def _private_adaptive_errors():
    """The bins' kernel checks its input itself (adaptive_avg_pool2d's 1 x 1 output is a mean, which does not)."""
    e = ErrorInput
    return [
        e(lambda k: k._C._adaptive_avg_pool2d(k.zeros([4, 4]), [1, 1]), RuntimeError, "3D or 4D", "2-D input"),
        e(lambda k: k._C._adaptive_avg_pool2d(k.zeros([1, 1, 0, 4]), [1, 1]), RuntimeError, "non-zero size",
          "empty height"),
    ]


# ----------------------------------------------------------------------------- normalization
def _bn_ref(x, w, b, rm, rv, training, momentum, eps, cudnn_enabled):
    dims = tuple(i for i in range(x.ndim) if i != 1)
    shape = [1] * x.ndim
    shape[1] = x.shape[1]
    if training:
        mean, var = x.mean(axis=dims, keepdims=True), x.var(axis=dims, keepdims=True)
    else:
        mean, var = rm.reshape(shape), rv.reshape(shape)
    out = (x - mean) / np.sqrt(var + eps)
    if w is not None:
        out = out * w.reshape(shape)
    if b is not None:
        out = out + b.reshape(shape)
    return out


def _bn_samples(d):
    out = []
    for i, (shape, training, affine) in enumerate([((4, 3), True, True), ((2, 3, 4, 5), True, True),
                                                   ((3, 2, 4), False, True), ((2, 3, 2, 2), True, False),
                                                   ((0, 3, 2), False, True)]):
        c = shape[1]
        w = values((c,), d, seed=i + 1) if affine else None
        b = values((c,), d, seed=i + 2) if affine else None
        rm = values((c,), d, seed=i + 3)
        rv = values((c,), d, "positive", seed=i + 4)
        out.append(Sample((values(shape, d, seed=i), w, b, rm, rv, training, 0.1, 1e-5, False),
                          note=f"{shape}, {'training' if training else 'eval'}"))
    return out


def _bn_errors():
    e = ErrorInput
    return [
        e(lambda k: k.batch_norm(k.zeros([3]), None, None, None, None, True, 0.1, 1e-5, False), RuntimeError,
          "at least 2 dims", "1-D input"),
        e(lambda k: k.batch_norm(k.zeros([4, 3]), k.ones([2]), None, None, None, True, 0.1, 1e-5, False),
          RuntimeError, "weight of shape \\[3\\]", "weight of the wrong size"),
        e(lambda k: k.batch_norm(k.zeros([4, 3]), None, None, None, None, False, 0.1, 1e-5, False), RuntimeError,
          "must be defined in evaluation mode", "eval without running stats"),
    ]


def _ln_ref(x, normalized_shape, w=None, b=None, eps=1e-5):
    dims = tuple(range(x.ndim - len(normalized_shape), x.ndim))
    out = (x - x.mean(axis=dims, keepdims=True)) / np.sqrt(x.var(axis=dims, keepdims=True) + eps)
    if w is not None:
        out = out * w
    if b is not None:
        out = out + b
    return out


def _ln_samples(d):
    return [
        Sample((values((3, 4), d), [4], values((4,), d, seed=1), values((4,), d, seed=2)), note="(3, 4) over 4"),
        Sample((values((2, 3, 4), d), [3, 4], values((3, 4), d, seed=1), None, 1e-3), note="over two dims, eps"),
        Sample((values((5,), d), [5]), note="1-D, no affine"),
        Sample((values((0, 4), d), [4]), note="empty batch"),
    ]


def _ln_errors():
    e = ErrorInput
    return [
        e(lambda k: k.layer_norm(k.zeros([2, 3]), [4]), RuntimeError, "expected input with shape", "wrong last dim"),
        e(lambda k: k.layer_norm(k.zeros([2, 4]), [4], k.ones([3])), RuntimeError, "weight of shape",
          "weight of the wrong shape"),
        e(lambda k: k.layer_norm(k.zeros([4]), [2, 4]), RuntimeError, "expected input with shape",
          "more normalized dims than the input has"),
    ]


_BN_TRAIN_FLOAT32 = "batch_norm hands the kernel float32 for float16/bfloat16 inputs (computed in float32, rounded once)"


def _bn_eval_samples(d):
    """_batch_norm_eval(input, weight, bias, running_mean, running_var, eps)."""
    out = []
    for i, (shape, affine) in enumerate([((2, 3, 4, 5), True), ((3, 2, 4), False), ((4, 3), True), ((0, 3, 2), True)]):
        c = shape[1]
        w = values((c,), d, seed=i + 1) if affine else None
        b = values((c,), d, seed=i + 2) if affine else None
        rm, rv = values((c,), d, seed=i + 3), values((c,), d, "positive", seed=i + 4)
        out.append(Sample((values(shape, d, seed=i), w, b, rm, rv, 1e-5), note=f"{shape}{'' if affine else ', no affine'}"))
    return out


def _bn_eval_ref(x, w, b, rm, rv, eps):
    return _bn_ref(x, w, b, rm, rv, False, 0.1, eps, False)


def _bn_train_samples(d):
    out = []
    for i, (shape, affine) in enumerate([((2, 3, 4, 5), True), ((3, 2, 4), False), ((4, 3), True),
                                         ((2, 3, 1, 2, 3), True), ((0, 3, 2), True)]):
        c = shape[1]
        w = values((c,), d, seed=i + 1) if affine else None
        b = values((c,), d, seed=i + 2) if affine else None
        out.append(Sample((values(shape, d, seed=i), w, b, 1e-5), note=f"{shape}{'' if affine else ', no affine'}"))
    return out


def _bn_train_stats(x):
    dims = tuple(d for d in range(x.ndim) if d != 1)
    keep = [1] * x.ndim
    keep[1] = x.shape[1]
    x64 = np.asarray(x, np.float64)
    with np.errstate(invalid="ignore"):
        mean = x64.sum(axis=dims) / (x.size // x.shape[1]) if x.size else np.full(x.shape[1], np.nan)
    var_sum = ((x64 - mean.reshape(keep)) ** 2).sum(axis=dims) if x.size else np.zeros(x.shape[1])
    return mean, var_sum, keep


def _bn_train_ref(x, w, b, eps):
    mean, var_sum, keep = _bn_train_stats(x)
    n = max(x.size // x.shape[1], 1)
    y = (np.asarray(x, np.float64) - mean.reshape(keep)) / np.sqrt(var_sum.reshape(keep) / n + eps)
    if w is not None:
        y = y * np.asarray(w, np.float64).reshape(keep) + np.asarray(b, np.float64).reshape(keep)
    return y, mean, var_sum


def _bn_train_backward_samples(d):
    out = []
    for s in _bn_train_samples(d):
        x, w, _, eps = s.args
        mean, var_sum, _ = _bn_train_stats(x)
        out.append(Sample((values(x.shape, d, seed=7), x, w, mean.astype(x.dtype), var_sum.astype(x.dtype), eps),
                          note=s.note))
    return out


def _bn_train_backward_ref(grad, x, w, mean, var_sum, eps):
    """dx = (g - mean(g) - x^ mean(g x^)) invstd w with x^ = (x - mean) invstd; dw = sum(g x^), db = sum(g)."""
    dims = tuple(d for d in range(x.ndim) if d != 1)
    keep = [1] * x.ndim
    keep[1] = x.shape[1]
    n = max(x.size // x.shape[1], 1)
    g, x = np.asarray(grad, np.float64), np.asarray(x, np.float64)
    invstd = 1 / np.sqrt(np.asarray(var_sum, np.float64) / n + eps)
    xhat = (x - np.asarray(mean, np.float64).reshape(keep)) * invstd.reshape(keep)
    scale = invstd * (np.asarray(w, np.float64) if w is not None else 1)
    if x.size:
        dx = (g - g.mean(axis=dims, keepdims=True) - xhat * (g * xhat).mean(axis=dims, keepdims=True)) * scale.reshape(keep)
    else:
        dx = np.zeros_like(x)
    return dx, (g * xhat).sum(axis=dims) if w is not None else None, g.sum(axis=dims)


_GN_FLOAT32 = "group_norm hands the kernel float32 for float16/bfloat16 inputs (computed in float32, rounded once)"


def _gn_samples(d):
    out = []
    for i, (shape, groups, affine) in enumerate([((2, 6, 4, 5), 3, True), ((3, 4, 5), 2, False), ((4, 6), 3, True),
                                                 ((2, 4, 1, 2, 3), 4, True), ((0, 4, 3), 2, True)]):
        c = shape[1]
        w = values((c,), d, seed=i + 1) if affine else None
        b = values((c,), d, seed=i + 2) if affine else None
        out.append(Sample((values(shape, d, seed=i), w, b, groups, 1e-5), note=f"{shape}, {groups} groups"))
    return out


def _gn_stats(x, groups):
    per_group = int(np.prod(x.shape[1:])) // groups
    rows = np.asarray(x, np.float64).reshape(x.shape[0], groups, per_group)
    if rows.shape[-1] == 0 or x.shape[0] == 0:
        return np.zeros((x.shape[0], groups)), np.zeros((x.shape[0], groups)), rows
    return rows.mean(-1), rows.var(-1), rows


def _gn_ref(x, w, b, groups, eps):
    mean, var, rows = _gn_stats(x, groups)
    rstd = 1 / np.sqrt(var + eps)
    y = ((rows - mean[..., None]) * rstd[..., None]).reshape(x.shape)
    keep = [1] * x.ndim
    keep[1] = x.shape[1]
    if w is not None:
        y = y * np.asarray(w, np.float64).reshape(keep)
    if b is not None:
        y = y + np.asarray(b, np.float64).reshape(keep)
    return y, mean, rstd


def _gn_backward_samples(d):
    out = []
    for s in _gn_samples(d):
        x, w, _, groups, eps = s.args
        _, mean, rstd = _gn_ref(x, None, None, groups, eps)
        out.append(Sample((values(x.shape, d, seed=9), x, w, mean.astype(x.dtype), rstd.astype(x.dtype), groups),
                          note=s.note))
    return out


def _gn_backward_ref(grad, x, w, mean, rstd, groups):
    """dx = rstd (g - mean(g) - xhat mean(g xhat)) per (sample, group), g = dy w; dw = sum(dy xhat), db = sum(dy)."""
    n, c = x.shape[0], x.shape[1]
    keep = [1] * x.ndim
    keep[1] = c
    dy, x64 = np.asarray(grad, np.float64), np.asarray(x, np.float64)
    mean_full = np.repeat(np.asarray(mean, np.float64), c // groups, axis=1).reshape([n, c] + [1] * (x.ndim - 2))
    rstd_full = np.repeat(np.asarray(rstd, np.float64), c // groups, axis=1).reshape([n, c] + [1] * (x.ndim - 2))
    xhat = (x64 - mean_full) * rstd_full
    g = dy * (np.asarray(w, np.float64).reshape(keep) if w is not None else 1)
    if x.size:
        per_group = int(np.prod(x.shape[1:])) // groups
        gr, xr = g.reshape(n, groups, per_group), xhat.reshape(n, groups, per_group)
        rs = np.asarray(rstd, np.float64)[..., None]
        dx = (rs * (gr - gr.mean(-1, keepdims=True) - xr * (gr * xr).mean(-1, keepdims=True))).reshape(x.shape)
    else:
        dx = np.zeros_like(x64)
    dims = tuple(d for d in range(x.ndim) if d != 1)
    return dx, (dy * xhat).sum(axis=dims) if w is not None else None, dy.sum(axis=dims)


def _native_ln_samples(d):
    return [Sample((x, shape, w, b, 1e-5 if len(rest) == 0 else rest[0]), note=s.note)
            for s in _ln_samples(d) for x, shape, w, b, *rest in [tuple(s.args) + (None,) * (4 - len(s.args))]]


def _native_ln_ref(x, normalized_shape, w, b, eps):
    dims = tuple(range(x.ndim - len(normalized_shape), x.ndim))
    x64 = np.asarray(x, np.float64)
    mean = x64.mean(axis=dims, keepdims=True) if x.size else np.zeros(x.shape[:x.ndim - len(dims)] + (1,) * len(dims))
    var = x64.var(axis=dims, keepdims=True) if x.size else np.zeros_like(mean)
    return _ln_ref(x64, normalized_shape, w, b, eps), mean, 1 / np.sqrt(var + eps)


def _native_ln_backward_samples(d):
    out = []
    for s in _native_ln_samples(d):
        x, shape, w, b, eps = s.args
        _, mean, rstd = _native_ln_ref(x, shape, w, b, eps)
        out.append(Sample((values(x.shape, d, seed=5), x, shape, mean.astype(x.dtype), rstd.astype(x.dtype), w, b),
                          note=s.note))
    return out


def _native_ln_backward_ref(grad, x, normalized_shape, mean, rstd, w, b):
    """dx = rstd (g - mean(g) - x^ mean(g x^)), g = grad * w, x^ = (x - mean) rstd; dw, db summed over rows."""
    dims = tuple(range(x.ndim - len(normalized_shape), x.ndim))
    outer = tuple(range(x.ndim - len(dims)))
    x, grad = np.asarray(x, np.float64), np.asarray(grad, np.float64)
    mean, rstd = np.asarray(mean, np.float64), np.asarray(rstd, np.float64)
    xhat = (x - mean) * rstd
    g = grad * w if w is not None else grad
    if x.size:
        dx = rstd * (g - g.mean(axis=dims, keepdims=True) - xhat * (g * xhat).mean(axis=dims, keepdims=True))
    else:
        dx = g
    return dx, None if w is None else (grad * xhat).sum(axis=outer), None if b is None else grad.sum(axis=outer)


# ----------------------------------------------------------------------------- dropout
def _dropout_samples(d):
    return [Sample((values((40, 50), d), 0.3, True), note="train, p=0.3"),
            Sample((values((3, 4), d), 0.5, False), note="eval"),
            Sample((values((), d), 0.0, True), note="0-dim, p=0"),
            Sample((values((0, 3), d), 0.5, True), note="empty"),
            Sample((values((5,), d), 1.0, True), note="p=1")]


def _dropout_check(kiln, got, sample):
    x, p, train = sample.args
    y = got.detach().numpy()
    assert y.shape == x.shape
    if not train or p == 0 or x.size == 0:
        np.testing.assert_allclose(y, x, rtol=1e-6)
        return
    if p == 1:
        assert not y.any()
        return
    kept = y != 0
    np.testing.assert_allclose(y[kept], x[kept] / (1 - p), rtol=1e-5)
    frac = 1 - kept.mean()  # 2000 draws: the dropped fraction within 6 standard errors of p
    assert abs(frac - p) < 6 * np.sqrt(p * (1 - p) / kept.size), frac


def _dropout_grad_samples():
    # A fresh mask on every call would defeat finite differences: eval, p = 0 and p = 1 only.
    return [Sample((values((3, 4), "float64"), 0.5, False)), Sample((values((4,), "float64"), 0.0, True)),
            Sample((values((4,), "float64"), 1.0, True))]


def _dropout_errors():
    return [ErrorInput(lambda k: k.dropout(k.ones(3), 1.5, True), ValueError, "between 0 and 1", "p = 1.5"),
            ErrorInput(lambda k: k.dropout(k.ones(3), -0.1, False), ValueError, "between 0 and 1", "p < 0")]


# ----------------------------------------------------------------------------- padding
def _pad_ref(x, pad, value=0):
    out = x
    for k in range(len(pad) // 2):
        d = x.ndim - 1 - k
        left, right = pad[2 * k], pad[2 * k + 1]
        index = [slice(None)] * x.ndim
        index[d] = slice(max(-left, 0), out.shape[d] - max(-right, 0))
        out = out[tuple(index)]
        widths = [(0, 0)] * x.ndim
        widths[d] = (max(left, 0), max(right, 0))
        out = np.pad(out, widths, constant_values=value)
    return out


def _pad_samples(d):
    v = True if d == "bool" else 2
    return [
        Sample((values((3, 4), d), [1, 2]), note="last dim"),
        Sample((values((2, 3, 4), d), [1, 0, 2, 1], v), note="two dims, value"),
        Sample((values((3, 5), d), [-1, 2, 1, -2]), note="negative pads crop"),
        Sample((values((), d), []), note="0-dim, no padding"),
        Sample((values((0, 2), d), [1, 1, 1, 0]), note="empty input"),
    ]


def _pad_errors():
    e = ErrorInput
    return [
        e(lambda k: k.constant_pad_nd(k.ones(3), [1, 2, 3]), RuntimeError, "must be even", "odd pad length"),
        e(lambda k: k.constant_pad_nd(k.ones(3), [1, 1, 1, 1]), RuntimeError, "no more than twice",
          "more pairs than dims"),
        # (torch narrows before it checks the sizes: narrow's error)
        e(lambda k: k.constant_pad_nd(k.ones(3), [-2, -2]), RuntimeError, "length must be non-negative",
          "cropping more than the size"),
    ]


# ----------------------------------------------------------------------------- losses
def _reduce(loss, reduction):
    return loss if reduction == 0 else loss.mean() if reduction == 1 else loss.sum()


def _loss_samples(d, extra=()):
    return [Sample((values((3, 4), d), values((3, 4), d, seed=1)) + tuple(extra), {"reduction": r},
                   note=f"reduction {r}") for r in (0, 1, 2)] + [
        Sample((values((), d), values((), d, seed=1)), note="0-dim"),
        Sample((values((0, 2), d), values((0, 2), d, seed=1), 2), note="empty, sum"),
        Sample((values((2, 3), d), values((3,), d, seed=1), 0), note="broadcast target")]


def _bce_ref(x, t, weight=None, pos_weight=None, reduction=0):  # torch.X's binding default (see _api_breadth)
    soft = np.logaddexp(0, -x)
    if pos_weight is not None:
        soft = soft * ((pos_weight - 1) * t + 1)
    loss = (1 - t) * x + soft
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction)


def _bce_samples(d):
    x, t = values((3, 4), d), np.abs(values((3, 4), d, "unit", seed=1))
    return [
        Sample((x, t), note="default reduction (none: torch.X's binding)"),
        Sample((x, t, values((4,), d, "positive", seed=2), values((4,), d, "positive", seed=3), 0),
               note="weight, pos_weight, none"),
        Sample((np.asarray([-60.0, 0.0, 60.0], dtype=d), np.asarray([1.0, 0.5, 0.0], dtype=d), None, None, 2),
               note="large logits, zero logit"),
        Sample((values((), d), np.asarray(0.25, dtype=d)), note="0-dim"),
        Sample((values((0, 3), d), values((0, 3), d, seed=1), None, None, 2), note="empty"),
    ]


def _probability_ref(x, t, weight=None, reduction=1):
    with np.errstate(divide="ignore"):
        loss = -(t * np.maximum(np.log(x), -100) + (1 - t) * np.maximum(np.log1p(-x), -100))
    return _reduce(loss if weight is None else loss * weight, reduction)


def _probabilities(d, shape=(3, 4), seed=0):
    return (np.abs(values(shape, d, "unit", seed=seed)) * 0.9 + 0.05).astype(d)  # inside (0, 1)


def _probability_loss_samples(d):
    p, t = _probabilities(d), _probabilities(d, seed=1)
    return [
        Sample((p, t), note="mean"),
        Sample((p, t, values((3, 4), d, "positive", seed=2), 0), note="weight, none"),
        Sample((p, t, None, 2), note="sum"),
        Sample((np.asarray(0.3, dtype=d), np.asarray(1.0, dtype=d)), note="0-dim"),
        Sample((values((0, 3), d), values((0, 3), d, seed=1), None, 2), note="empty"),
    ]


def _probability_loss_edge_samples(d):
    # p = 0 or 1: the logs are clamped at -100, so the loss is finite (torch's rule).
    return _probability_loss_samples(d) + [
        Sample((np.asarray([0.0, 1.0, 0.0, 1.0], dtype=d), np.asarray([0.0, 0.0, 1.0, 1.0], dtype=d), None, 0),
               note="p at 0 and 1"),
    ]


def _probability_loss_errors():
    return _loss_errors("binary_cross_entropy") + [
        ErrorInput(lambda k: k.binary_cross_entropy(k.ones(3) / 2, k.ones(4)), RuntimeError,
                   "must be the same as input size", "target of another size"),
        ErrorInput(lambda k: k.binary_cross_entropy(k.ones(3) * 2, k.ones(3)), RuntimeError,
                   "between 0 and 1", "input above 1")]


def _loss_errors(name):
    e = ErrorInput
    return [e(lambda k: getattr(k, name)(k.ones(3), k.ones(3), reduction=3), RuntimeError, "reduction must be",
              "reduction 3")]


def _bce_errors():
    return _loss_errors("binary_cross_entropy_with_logits") + [
        ErrorInput(lambda k: k.binary_cross_entropy_with_logits(k.ones(3), k.ones(4)), RuntimeError,
                   "must be the same as input size", "target of another size")]


NO_ZERO_DIM = "takes (N, C, H, W) or (C, H, W) tensors"

RECORDS = [
    OpRecord("conv2d", FAMILY, FLOATS, _conv_samples, ref=_conv_ref, error_inputs=_conv_errors,
             grad_samples=_small_conv_grad_samples, no_zero_dim=NO_ZERO_DIM, tol={"float32": {"rtol": 1e-4, "atol": 1e-4}}),
    OpRecord("_conv2d_native", FAMILY, FLOATS, _conv_native_samples, ref=_conv_native_ref, api="_C._conv2d_native",
             grad_samples=lambda: [_native(s) for s in _small_conv_grad_samples()], no_zero_dim=NO_ZERO_DIM,
             tol={"float32": {"rtol": 1e-4, "atol": 1e-4}}),
    OpRecord("_conv2d_backward_weight_bias", FAMILY, FLOATS, _conv_weight_bias_samples, ref=_conv_weight_bias_ref,
             api="_C._conv2d_backward_weight_bias", no_zero_dim=NO_ZERO_DIM,
             derivative_not_implemented="a backward kernel: conv2d's formula differentiates conv2d_backward_weight "
                                        "and sum instead under create_graph",
             tol={"float32": {"rtol": 1e-4, "atol": 1e-4}}),
    OpRecord("conv2d_backward_input", FAMILY, FLOATS, _conv_backward_input_samples, ref=_conv_backward_input_ref,
             error_inputs=_conv_backward_errors, grad_samples=_small(_conv_backward_input_samples),
             no_zero_dim=NO_ZERO_DIM, tol={"float32": {"rtol": 1e-4, "atol": 1e-4}}),
    OpRecord("conv2d_backward_weight", FAMILY, FLOATS, _conv_backward_weight_samples, ref=_conv_backward_weight_ref,
             grad_samples=_small(_conv_backward_weight_samples), no_zero_dim=NO_ZERO_DIM,
             tol={"float32": {"rtol": 1e-4, "atol": 1e-4}}),
    OpRecord("max_pool2d_with_indices", FAMILY, FLOATS, _max_pool_samples, ref=_max_pool_ref,
             error_inputs=lambda: _pool_errors("max_pool2d_with_indices"), grad_samples=_small(_max_pool_samples),
             no_zero_dim=NO_ZERO_DIM),
    OpRecord("max_pool2d_with_indices_backward", FAMILY, FLOATS, _max_pool_backward_samples,
             ref=_max_pool_backward_ref, error_inputs=_max_pool_backward_errors,
             grad_samples=_small(_max_pool_backward_samples), no_zero_dim=NO_ZERO_DIM),
    OpRecord("max_pool2d", FAMILY, FLOATS, _max_pool_samples, ref=lambda *a: _max_pool_ref(*a)[0],
             error_inputs=lambda: _pool_errors("max_pool2d"), grad_samples=_small(_max_pool_samples),
             no_zero_dim=NO_ZERO_DIM),
    OpRecord("avg_pool2d", FAMILY, FLOATS, _avg_pool_samples, ref=_avg_pool_ref,
             error_inputs=lambda: _pool_errors("avg_pool2d") + [
                 ErrorInput(lambda k: k.avg_pool2d(k.zeros([1, 1, 4, 4]), [2, 2], [], [0, 0], False, True, 0),
                            RuntimeError, "divisor must be not zero", "divisor_override 0")],
             grad_samples=_small(_avg_pool_samples), no_zero_dim=NO_ZERO_DIM),
    OpRecord("avg_pool2d_backward", FAMILY, FLOATS, _avg_pool_backward_samples, ref=_avg_pool_backward_ref,
             grad_samples=_small(_avg_pool_backward_samples), no_zero_dim=NO_ZERO_DIM),
    OpRecord("adaptive_avg_pool2d", FAMILY, FLOATS, _adaptive_samples, ref=_adaptive_ref,
             error_inputs=_adaptive_errors, grad_samples=_small(_adaptive_samples), no_zero_dim=NO_ZERO_DIM),
    OpRecord("_adaptive_avg_pool2d", FAMILY, FLOATS, _adaptive_samples, ref=_adaptive_ref, api="_C._adaptive_avg_pool2d",
             error_inputs=_private_adaptive_errors, grad_samples=_small(_adaptive_samples), no_zero_dim=NO_ZERO_DIM),
    OpRecord("adaptive_avg_pool2d_backward", FAMILY, FLOATS, _adaptive_backward_samples, ref=_adaptive_backward_ref,
             grad_samples=_small(_adaptive_backward_samples), no_zero_dim=NO_ZERO_DIM),
    OpRecord("batch_norm", FAMILY, FLOATS, _bn_samples, ref=_bn_ref, error_inputs=_bn_errors,
             grad_samples=_small(_bn_samples), no_zero_dim="needs (N, C, ...) input",
             not_differentiable=("running_mean", "running_var"),
             tol={"float32": {"rtol": 1e-4, "atol": 1e-4}}),
    # batch_norm's evaluation pass with torch's gradient (schema comment)
    OpRecord("_batch_norm_eval", FAMILY, FLOATS, _bn_eval_samples, ref=_bn_eval_ref, api="_C._batch_norm_eval",
             grad_samples=lambda: _bn_eval_samples("float64")[:3], no_zero_dim="needs (N, C, ...) input",
             tol={"float32": {"rtol": 1e-4, "atol": 1e-4}}),
    OpRecord("_batch_norm_train", FAMILY, FLOATS, _bn_train_samples, ref=_bn_train_ref, api="_C._batch_norm_train",
             grad_samples=lambda: _bn_train_samples("float64")[:3], no_zero_dim="needs (N, C, ...) input",
             no_reduced_precision=_BN_TRAIN_FLOAT32,
             tol={"float32": {"rtol": 1e-4, "atol": 1e-4}}),
    OpRecord("_batch_norm_train_backward", FAMILY, FLOATS, _bn_train_backward_samples, ref=_bn_train_backward_ref,
             api="_C._batch_norm_train_backward", no_zero_dim="needs (N, C, ...) input",
             no_reduced_precision=_BN_TRAIN_FLOAT32,
             derivative_not_implemented="batch_norm's second derivative is written with ops (create_graph takes "
                                        "the op-composed path), so its fused backward kernel has none",
             tol={"float32": {"rtol": 1e-4, "atol": 1e-4}}),
    OpRecord("_group_norm", FAMILY, FLOATS, _gn_samples, ref=_gn_ref, api="_C._group_norm",
             grad_samples=lambda: _gn_samples("float64")[:3], no_zero_dim="needs (N, C, ...) input",
             no_reduced_precision=_GN_FLOAT32, tol={"float32": {"rtol": 1e-4, "atol": 1e-4}}),
    OpRecord("_group_norm_backward", FAMILY, FLOATS, _gn_backward_samples, ref=_gn_backward_ref,
             api="_C._group_norm_backward", no_zero_dim="needs (N, C, ...) input", no_reduced_precision=_GN_FLOAT32,
             derivative_not_implemented="group_norm's second derivative is written with ops (create_graph takes "
                                        "the op-composed path), so its backward kernel has none",
             tol={"float32": {"rtol": 1e-4, "atol": 1e-4}}),
    OpRecord("layer_norm", FAMILY, FLOATS, _ln_samples, ref=_ln_ref, error_inputs=_ln_errors,
             no_zero_dim="normalizes over at least one dim", tol={"float32": {"rtol": 1e-4, "atol": 1e-4}}),
    OpRecord("native_layer_norm", FAMILY, FLOATS, _native_ln_samples, ref=_native_ln_ref, api="_C.native_layer_norm",
             no_zero_dim="normalizes over at least one dim", tol={"float32": {"rtol": 1e-4, "atol": 1e-4}}),
    OpRecord("native_layer_norm_backward", FAMILY, FLOATS, _native_ln_backward_samples, ref=_native_ln_backward_ref,
             api="_C.native_layer_norm_backward", no_zero_dim="normalizes over at least one dim",
             derivative_not_implemented="layer_norm's second derivative is written with ops (create_graph takes "
                                        "the op-composed path), so its fused backward kernel has none",
             tol={"float32": {"rtol": 1e-4, "atol": 1e-4}}),
    OpRecord("dropout", FAMILY, FLOATS, _dropout_samples, check=_dropout_check, error_inputs=_dropout_errors,
             grad_samples=_dropout_grad_samples),
    OpRecord("constant_pad_nd", FAMILY, ALL, _pad_samples, ref=_pad_ref, error_inputs=_pad_errors),
    OpRecord("mse_loss", FAMILY, FLOATS, _loss_samples, ref=lambda x, t, reduction=1: _reduce((x - t) ** 2, reduction),
             error_inputs=lambda: _loss_errors("mse_loss")),
    OpRecord("l1_loss", FAMILY, FLOATS, _loss_samples, ref=lambda x, t, reduction=1: _reduce(np.abs(x - t), reduction),
             error_inputs=lambda: _loss_errors("l1_loss")),
    OpRecord("binary_cross_entropy_with_logits", FAMILY, FLOATS, _bce_samples, ref=_bce_ref,
             error_inputs=_bce_errors),
    OpRecord("binary_cross_entropy", FAMILY, FLOATS, _probability_loss_edge_samples, ref=_probability_ref,
             grad_samples=lambda: _probability_loss_samples("float64"), error_inputs=_probability_loss_errors),
]

assert all(isinstance(r, OpRecord) and r.family == FAMILY for r in RECORDS)
