"""Records of the resampling ops: the upsample family (F.interpolate, antialias too), adaptive_avg_pool3d and
adaptive_max_pool2d, pixel_shuffle/unshuffle,
im2col/col2im (F.unfold/F.fold), affine_grid_generator and grid_sampler_2d/3d.

The oracle is torch (1.13, whose upsample, im2col, affine_grid and grid_sampler kernels compute what
torch 2.x's do), imported inside the references and run in the sample's dtype."""
import numpy as np

from .record import ALL, FLOATS, ErrorInput, OpRecord, Sample, values

FAMILY = "resampling"
NO_ZERO_DIM = "takes (N, C, *spatial) tensors"
NO_GRADGRAD_GRID = "grid_sampler_2d/3d_backward have no derivative (torch's CPU kernels neither)"


def _torch():
    import torch
    return torch


def _t(a):
    return _torch().from_numpy(np.ascontiguousarray(a)) if isinstance(a, np.ndarray) else a


def _nn(name):
    def ref(*args):
        torch = _torch()
        fn = getattr(torch._C._nn, name, None) or getattr(torch, name, None) or getattr(torch.ops.aten, name)
        out = fn(*[_t(a) for a in args])
        if isinstance(out, (tuple, list)):
            return tuple(o.numpy() for o in out)
        return out.numpy()
    return ref


def _small(samples):
    return lambda: [s for s in samples("float64") if "large" not in s.note]


# ----------------------------------------------------------------------------- upsample
# (input shape, output_size, scales) per spatial rank; scales None: from the sizes.
_CASES = {
    1: [((2, 3, 5), [9], [None], "up"), ((1, 2, 7), [3], [None], "down"), ((2, 1, 4), [10], [2.5], "scale 2.5"),
        ((1, 2, 6), [4], [0.7], "scale 0.7"), ((1, 1, 4), [8], [None], "exactly 2x"), ((1, 2, 3), [1], [None], "to 1"),
        ((0, 2, 4), [6], [None], "zero batch")],
    2: [((2, 2, 4, 5), [7, 3], [None, None], "up/down"), ((1, 3, 3, 3), [6, 6], [None, None], "2x"),
        ((1, 2, 4, 5), [10, 7], [2.5, 1.5], "scales"), ((1, 1, 5, 4), [3, 3], [0.6, 0.8], "scales < 1"),
        ((1, 1, 1, 3), [4, 5], [None, None], "from 1"), ((0, 2, 3, 3), [5, 5], [None, None], "zero batch"),
        ((1, 2, 11, 9), [3, 2], [None, None], "down 3.7x / 4.5x"), ((1, 1, 10, 7), [3, 5], [0.35, 0.8], "down, scales")],
    3: [((1, 2, 3, 4, 2), [5, 3, 4], [None, None, None], "mixed"),
        ((1, 1, 2, 3, 4), [4, 7, 3], [2.0, 2.5, 0.8], "scales"), ((0, 1, 2, 2, 2), [3, 3, 3], [None] * 3, "zero batch")],
}


def _up_samples(d, linear):
    def samples(dtype):
        out = []
        for i, (shape, size, scales, note) in enumerate(_CASES[d]):
            x = values(shape, dtype, seed=i)
            flags = [(False,), (True,)] if linear else [()]
            for f in flags:
                out.append(Sample((x, size) + f + tuple(scales), note=f"{note} {f}"))
        return out
    return samples


def _up_backward_samples(name, d, linear):
    def samples(dtype):
        out = []
        for s in _up_samples(d, linear)(dtype):
            x, size = s.args[0], s.args[1]
            grad_shape = tuple(x.shape[:2]) + tuple(size)
            out.append(Sample((values(grad_shape, dtype, seed=9), size, list(x.shape)) + s.args[2:], note=s.note))
        return out
    return samples


def _up_errors(name, d, linear, api):
    def errors():
        e = ErrorInput
        fn = lambda k: getattr(k, api) if hasattr(k, api) else getattr(k._C, api)  # noqa: E731
        extra = (False,) if linear else ()
        shape = [1, 1] + [4] * d
        return [
            e(lambda k: fn(k)(k.zeros(shape), [-1] + [2] * (d - 1), *extra), RuntimeError,
              "Input and output sizes should be greater than 0", "negative output size"),
            e(lambda k: fn(k)(k.zeros(shape[:-1]), [2] * d, *extra), RuntimeError, f"Non-empty {d + 2}D data tensor",
              "one dim short"),
            e(lambda k: fn(k)(k.zeros(shape), [2] * (d + 1), *extra), RuntimeError, "output_size equals to",
              "output_size too long"),
            e(lambda k: fn(k)(k.zeros(shape, dtype=k.int64), [2] * d, *extra), RuntimeError, "not implemented for",
              "int64 input"),
            e(lambda k: fn(k)(k.zeros([1, 0] + [4] * d), [2] * d, *extra), RuntimeError, f"Non-empty {d + 2}D data tensor",
              "no channels"),
        ]
    return errors


def _up_backward_errors(api, d, linear):
    def errors():
        fn = lambda k: getattr(k, api) if hasattr(k, api) else getattr(k._C, api)  # noqa: E731
        extra = (False,) if linear else ()
        return [ErrorInput(lambda k: fn(k)(k.zeros([1, 1] + [3] * d), [2] * d, [1, 1] + [4] * d, *extra), RuntimeError,
                           "Expected grad_output to have the same shape as output", "grad_output of the wrong shape")]
    return errors


def _upsample_records():
    out = []
    for base, d, linear in [("upsample_nearest1d", 1, False), ("upsample_nearest2d", 2, False),
                            ("upsample_nearest3d", 3, False), ("_upsample_nearest_exact1d", 1, False),
                            ("_upsample_nearest_exact2d", 2, False), ("_upsample_nearest_exact3d", 3, False),
                            ("upsample_linear1d", 1, True), ("upsample_bilinear2d", 2, True),
                            ("upsample_bicubic2d", 2, True), ("upsample_trilinear3d", 3, True),
                            ("_upsample_bilinear2d_aa", 2, True), ("_upsample_bicubic2d_aa", 2, True)]:
        api = "_C." + base if base.startswith("_") else None
        fwd = _up_samples(d, linear)
        bwd = _up_backward_samples(base, d, linear)
        tol = {"float32": dict(rtol=1e-5, atol=1e-5)}
        dtypes = ("uint8",) + FLOATS if "nearest" in base else FLOATS  # nearest copies values: uint8 images too
        out.append(OpRecord(base, FAMILY, dtypes, fwd, ref=_nn(base), api=api, no_zero_dim=NO_ZERO_DIM, tol=tol,
                            grad_samples=_small(fwd), error_inputs=_up_errors(base, d, linear, base)))
        out.append(OpRecord(base + "_backward", FAMILY, FLOATS, bwd, ref=_nn(base + "_backward"),
                            api=None if api is None else api + "_backward", no_zero_dim=NO_ZERO_DIM, tol=tol,
                            grad_samples=_small(bwd), error_inputs=_up_backward_errors(base + "_backward", d, linear)))
    return out


# ----------------------------------------------------------------------------- adaptive pooling
# adaptive_avg_pool3d (interpolate's 'area' on 5-D input) and adaptive_max_pool2d
_POOL3D = [((2, 3, 5, 7, 4), [2, 3, 4], "down"), ((1, 2, 3, 4, 2), [5, 6, 3], "up, overlapping bins"),
           ((2, 3, 4, 5), [2, 2, 2], "unbatched"), ((1, 1, 3, 3, 3), [3, 3, 3], "same size"),
           ((1, 1, 3, 3, 3), [1, 0, 2], "an empty output dim"), ((0, 2, 3, 3, 3), [2, 2, 2], "zero batch")]
_POOL2D = [((2, 3, 7, 5), [3, 2], "down"), ((1, 2, 3, 4), [5, 6], "up, overlapping bins"),
           ((3, 7, 5), [2, 4], "unbatched"), ((1, 1, 4, 4), [4, 4], "same size"), ((0, 2, 3, 3), [2, 2], "zero batch")]


def _pool_samples(cases):
    return lambda dtype: [Sample((values(shape, dtype, seed=i), size), note=note)
                          for i, (shape, size, note) in enumerate(cases)]


def _pool_backward_samples(cases, name):
    def samples(dtype):
        out = []
        for s in _pool_samples(cases)(dtype):
            res = _nn(name)(s.args[0].astype("float64"), s.args[1])  # the shapes (and argmax) of any dtype
            vals = res[0] if isinstance(res, tuple) else res
            extra = (res[1],) if isinstance(res, tuple) else ()
            out.append(Sample((values(vals.shape, dtype, seed=5), s.args[0]) + extra, note=s.note))
        return out
    return samples


def _avg3d_backward_ref(go, x):
    # torch's op of this name is out= only: the gradient through autograd instead
    torch = _torch()
    xt = _t(x).clone().requires_grad_()
    out = torch.nn.functional.adaptive_avg_pool3d(xt, list(go.shape[-3:]))
    return torch.autograd.grad(out, xt, _t(go))[0].numpy()


def _max3d_backward_ref(go, x, indices):
    # torch's op of this name is out= only: the gradient through autograd instead
    torch = _torch()
    xt = _t(x).clone().requires_grad_()
    out, _ = torch.nn.functional.adaptive_max_pool3d(xt, list(go.shape[-3:]), return_indices=True)
    return torch.autograd.grad(out, xt, _t(go))[0].numpy()


def _max_pool3d_errors():
    e = ErrorInput
    return [
        e(lambda k: k.adaptive_max_pool3d(k.zeros([3, 4, 5]), [2, 2, 2]), RuntimeError, "Expected 4D or 5D tensor",
          "3-D input"),
        e(lambda k: k.adaptive_max_pool3d(k.zeros([1, 0, 3, 3, 3]), [2, 2, 2]), RuntimeError, "non-zero size",
          "no channels"),
        e(lambda k: k.adaptive_max_pool3d(k.zeros([1, 1, 3, 3, 3], dtype=k.int64), [2, 2, 2]), RuntimeError,
          "not implemented for 'int64'", "int64 input"),
        e(lambda k: k.adaptive_max_pool3d_backward(k.zeros([1, 1, 2, 2, 2]), k.zeros([1, 1, 3, 3, 3]),
                                                   k.full([1, 1, 2, 2, 2], 27, dtype=k.int64)), RuntimeError,
          "out of the input plane", "index past the volume"),
    ]


def _pool3d_errors():
    e = ErrorInput
    return [
        e(lambda k: k.adaptive_avg_pool3d(k.zeros([3, 4, 5]), [2, 2, 2]), RuntimeError, "Expected 4D or 5D tensor",
          "3-D input"),
        e(lambda k: k.adaptive_avg_pool3d(k.zeros([1, 0, 3, 3, 3]), [2, 2, 2]), RuntimeError, "non-zero size",
          "no channels"),
        e(lambda k: k.adaptive_avg_pool3d(k.zeros([1, 1, 3, 3, 3]), [2, 2, -1]), RuntimeError,
          "greater than or equal to 0", "negative output size"),
        e(lambda k: k.adaptive_avg_pool3d(k.zeros([1, 1, 3, 3, 3], dtype=k.int64), [2, 2, 2]), RuntimeError,
          "not implemented for 'int64'", "int64 input"),
        e(lambda k: k.adaptive_avg_pool3d_backward(k.zeros([1, 1, 2, 2]), k.zeros([1, 1, 3, 3, 3])), RuntimeError,
          "grad_output", "grad_output of fewer dims"),
    ]


def _max_pool_errors():
    e = ErrorInput
    return [
        e(lambda k: k.adaptive_max_pool2d(k.zeros([7, 5]), [2, 2]), RuntimeError, "Expected 3D or 4D tensor",
          "2-D input"),
        e(lambda k: k.adaptive_max_pool2d(k.zeros([2, 0, 7, 5]), [2, 2]), RuntimeError, "non-zero size",
          "no channels"),
        e(lambda k: k.adaptive_max_pool2d(k.zeros([1, 1, 4, 4], dtype=k.int64), [2, 2]), RuntimeError,
          "not implemented for 'int64'", "int64 input"),
        e(lambda k: k.adaptive_max_pool2d_backward(k.zeros([1, 1, 3, 3]), k.zeros([1, 1, 4, 4]),
                                                   k.zeros([1, 1, 2, 2], dtype=k.int64)), RuntimeError,
          "indices of shape", "indices of another shape"),
    ]


def _pool_records():
    tol = {"float32": dict(rtol=1e-5, atol=1e-6)}
    fwd3, bwd3 = _pool_samples(_POOL3D), _pool_backward_samples(_POOL3D, "adaptive_avg_pool3d")
    fwd2, bwd2 = _pool_samples(_POOL2D), _pool_backward_samples(_POOL2D, "adaptive_max_pool2d")
    bwdm3 = _pool_backward_samples(_POOL3D, "adaptive_max_pool3d")
    return [
        OpRecord("adaptive_avg_pool3d", FAMILY, FLOATS, fwd3, ref=_nn("adaptive_avg_pool3d"), tol=tol,
                 no_zero_dim=NO_ZERO_DIM, grad_samples=_small(fwd3), error_inputs=_pool3d_errors),
        OpRecord("adaptive_avg_pool3d_backward", FAMILY, FLOATS, bwd3, ref=_avg3d_backward_ref,
                 tol=tol, no_zero_dim=NO_ZERO_DIM, grad_samples=_small(bwd3)),
        OpRecord("adaptive_max_pool2d", FAMILY, FLOATS, fwd2, ref=_nn("adaptive_max_pool2d"), no_zero_dim=NO_ZERO_DIM,
                 grad_samples=_small(fwd2), error_inputs=_max_pool_errors),
        OpRecord("adaptive_max_pool2d_backward", FAMILY, FLOATS, bwd2, ref=_nn("adaptive_max_pool2d_backward"),
                 no_zero_dim=NO_ZERO_DIM, grad_samples=_small(bwd2)),
        OpRecord("adaptive_max_pool3d", FAMILY, FLOATS, fwd3, ref=_nn("adaptive_max_pool3d"), no_zero_dim=NO_ZERO_DIM,
                 grad_samples=_small(fwd3), error_inputs=_max_pool3d_errors),
        OpRecord("adaptive_max_pool3d_backward", FAMILY, FLOATS, bwdm3, ref=_max3d_backward_ref,
                 no_zero_dim=NO_ZERO_DIM, grad_samples=_small(bwdm3)),
    ]


# ----------------------------------------------------------------------------- pixel shuffle
def _shuffle_samples(dtype):
    return [Sample((values((2, 8, 3, 2), dtype), 2), note="batched"),
            Sample((values((9, 2, 2), dtype, seed=1), 3), note="unbatched"),
            Sample((values((2, 1, 4, 2, 3), dtype, seed=2), 2), note="two batch dims"),
            Sample((values((3, 2, 2), dtype, seed=3), 1), note="factor 1"),
            Sample((values((0, 4, 2, 2), dtype), 2), note="zero batch")]


def _unshuffle_samples(dtype):
    return [Sample((values((2, 2, 4, 6), dtype), 2), note="batched"),
            Sample((values((1, 6, 3), dtype, seed=1), 3), note="unbatched"),
            Sample((values((2, 1, 2, 4, 2), dtype, seed=2), 2), note="two batch dims"),
            Sample((values((0, 1, 2, 2), dtype), 2), note="zero batch")]


def _shuffle_errors():
    e = ErrorInput
    return [
        e(lambda k: k.pixel_shuffle(k.zeros(4, 2), 2), RuntimeError, "pixel_shuffle expects input to have at least 3",
          "2-D input"),
        e(lambda k: k.pixel_shuffle(k.zeros(4, 2, 2), 0), RuntimeError, "positive upscale_factor", "factor 0"),
        e(lambda k: k.pixel_shuffle(k.zeros(5, 2, 2), 2), RuntimeError, r"input.size\(-3\)=5 is not divisible by 4",
          "channels not divisible"),
    ]


def _unshuffle_errors():
    e = ErrorInput
    return [
        e(lambda k: k.pixel_unshuffle(k.zeros(4, 2), 2), RuntimeError, "pixel_unshuffle expects input to have at least 3",
          "2-D input"),
        e(lambda k: k.pixel_unshuffle(k.zeros(1, 4, 4), -1), RuntimeError, "positive downscale_factor", "factor -1"),
        e(lambda k: k.pixel_unshuffle(k.zeros(1, 3, 4), 2), RuntimeError, "height to be divisible", "odd height"),
        e(lambda k: k.pixel_unshuffle(k.zeros(1, 4, 3), 2), RuntimeError, "width to be divisible", "odd width"),
    ]


def _shuffle_ref(x, r):
    b, (c, h, w) = x.shape[:-3], x.shape[-3:]
    y = x.reshape(b + (c // (r * r), r, r, h, w))
    n = len(b)
    y = y.transpose(tuple(range(n)) + tuple(n + i for i in (0, 3, 1, 4, 2)))
    return y.reshape(b + (c // (r * r), h * r, w * r))


def _unshuffle_ref(x, r):
    b, (c, h, w) = x.shape[:-3], x.shape[-3:]
    y = x.reshape(b + (c, h // r, r, w // r, r))
    n = len(b)
    y = y.transpose(tuple(range(n)) + tuple(n + i for i in (0, 2, 4, 1, 3)))
    return y.reshape(b + (c * r * r, h // r, w // r))


# ----------------------------------------------------------------------------- im2col / col2im
_FOLD_CASES = [((2, 3, 5, 4), [2, 2], [1, 1], [0, 0], [1, 1], "plain"),
               ((1, 2, 6, 5), [3, 2], [2, 1], [1, 2], [2, 1], "dilation, padding, stride"),
               ((3, 4, 4), [2, 3], [1, 1], [1, 0], [1, 2], "unbatched"),
               ((0, 2, 3, 3), [2, 2], [1, 1], [0, 0], [1, 1], "zero batch")]


def _im2col_samples(dtype):
    return [Sample((values(s, dtype, seed=i), k, d, p, st), note=n) for i, (s, k, d, p, st, n) in enumerate(_FOLD_CASES)]


def _blocks(size, k, d, p, s):
    return (size + 2 * p - (d * (k - 1) + 1)) // s + 1


def _col2im_samples(dtype):
    out = []
    for i, (s, k, d, p, st, n) in enumerate(_FOLD_CASES):
        hw = s[-2:]
        L = _blocks(hw[0], k[0], d[0], p[0], st[0]) * _blocks(hw[1], k[1], d[1], p[1], st[1])
        shape = s[:-3] + (s[-3] * k[0] * k[1], L)
        out.append(Sample((values(shape, dtype, seed=i), list(hw), k, d, p, st), note=n))
    return out


def _im2col_ref(x, k, d, p, s):
    torch = _torch()
    t = _t(x)
    if x.ndim == 3:
        return torch._C._nn.im2col(t[None], k, d, p, s)[0].numpy()
    return torch._C._nn.im2col(t, k, d, p, s).numpy()


def _col2im_ref(x, size, k, d, p, s):
    torch = _torch()
    t = _t(x)
    if x.ndim == 2:
        return torch._C._nn.col2im(t[None], size, k, d, p, s)[0].numpy()
    return torch._C._nn.col2im(t, size, k, d, p, s).numpy()


def _fold_errors():
    e = ErrorInput
    return [
        e(lambda k: k.im2col(k.zeros(2, 3), [2, 2], [1, 1], [0, 0], [1, 1]), RuntimeError, "Expected 3D or 4D", "2-D"),
        e(lambda k: k.im2col(k.zeros(1, 1, 3, 3), [0, 2], [1, 1], [0, 0], [1, 1]), RuntimeError,
          "kernel size should be greater than zero", "kernel 0"),
        e(lambda k: k.im2col(k.zeros(1, 1, 3, 3), [2, 2], [1, 1], [-1, 0], [1, 1]), RuntimeError,
          "padding should be non-negative", "negative padding"),
        e(lambda k: k.im2col(k.zeros(1, 1, 3, 3), [2, 2], [1, 1], [0, 0], [0, 1]), RuntimeError,
          "stride should be greater than zero", "stride 0"),
        e(lambda k: k.im2col(k.zeros(1, 1, 3, 3), [2, 2], [0, 1], [0, 0], [1, 1]), RuntimeError,
          "dilation should be greater than zero", "dilation 0"),
        e(lambda k: k.im2col(k.zeros(1, 1, 2, 2), [3, 3], [1, 1], [0, 0], [1, 1]), RuntimeError,
          "must be at least one", "kernel larger than the input"),
        e(lambda k: k.col2im(k.zeros(1, 5, 4), [3, 3], [2, 2], [1, 1], [0, 0], [1, 1]), RuntimeError,
          "divisible by the product of kernel_size", "planes not divisible"),
        e(lambda k: k.col2im(k.zeros(1, 4, 5), [3, 3], [2, 2], [1, 1], [0, 0], [1, 1]), RuntimeError,
          "match the calculated number of sliding blocks", "wrong L"),
        e(lambda k: k.col2im(k.zeros(4), [3, 3], [2, 2], [1, 1], [0, 0], [1, 1]), RuntimeError,
          "Expected 2D or 3D", "1-D"),
        e(lambda k: k.col2im(k.zeros(1, 4, 4), [0, 3], [2, 2], [1, 1], [0, 0], [1, 1]), RuntimeError,
          "output spatial size to be positive", "output size 0"),
    ]


# ----------------------------------------------------------------------------- affine_grid_generator
def _affine_samples(dtype):
    return [Sample((values((2, 2, 3), dtype), [2, 3, 4, 5], False), note="2-D"),
            Sample((values((1, 2, 3), dtype, seed=1), [1, 1, 3, 1], True), note="2-D, unit width, align"),
            Sample((values((2, 3, 4), dtype, seed=2), [2, 1, 2, 3, 4], True), note="3-D, align"),
            Sample((values((1, 3, 4), dtype, seed=3), [1, 2, 3, 2, 2], False), note="3-D"),
            Sample((values((0, 2, 3), dtype), [0, 1, 2, 2], False), note="zero batch")]


def _affine_ref(theta, size, align_corners):
    torch = _torch()
    return torch.affine_grid_generator(_t(theta), size, align_corners).numpy()


def _affine_errors():
    e = ErrorInput
    return [
        e(lambda k: k.affine_grid_generator(k.zeros(1, 2, 3), [1, 1, 2], False), RuntimeError, "4d .spatial. or 5d",
          "3-element size"),
        e(lambda k: k.affine_grid_generator(k.zeros(1, 3, 3), [1, 1, 2, 2], False), RuntimeError,
          "expected theta of shape", "theta of the wrong shape"),
    ]


# ----------------------------------------------------------------------------- grid_sampler_2d
def _grid(shape, dtype, seed):
    # points spread past [-1, 1] so every padding mode matters; off the pixel grid (no kinks)
    return (values(shape, "float64", seed=seed) * 0.6).astype(dtype)


def _grid_samples(dtype):
    out = []
    i = 0
    for mode in (0, 1, 2):
        for pad in (0, 1, 2):
            for align in (False, True):
                i += 1
                x = values((2, 2, 3, 4), dtype, seed=i)
                out.append(Sample((x, _grid((2, 3, 2, 2), dtype, i), mode, pad, align),
                                  note=f"mode {mode}, padding {pad}, align {align}"))
    out.append(Sample((values((0, 2, 3, 3), dtype), _grid((0, 2, 2, 2), dtype, 0), 0, 0, False), note="zero batch"))
    return out


def _grid_grad_samples():
    # nearest's grid gradient is zero and its output is piecewise constant: gradcheck of the input only
    # would still pass, so keep it; bilinear / bicubic points stay off the integer grid (random values)
    return _grid_samples("float64")


def _grid_backward_samples(dtype):
    out = []
    for s in _grid_samples(dtype):
        x, g = s.args[0], s.args[1]
        go = values((x.shape[0], x.shape[1]) + g.shape[1:3], dtype, seed=5)
        out.append(Sample((go,) + s.args, note=s.note))
    return out


def _grid_errors():
    e = ErrorInput
    return [
        e(lambda k: k.grid_sampler_2d(k.zeros(1, 1, 3, 3), k.zeros(1, 2, 2, 2, dtype=k.float64), 0, 0, False),
          RuntimeError, "same dtype", "dtypes differ"),
        e(lambda k: k.grid_sampler_2d(k.zeros(2, 1, 3, 3), k.zeros(1, 2, 2, 2), 0, 0, False), RuntimeError,
          "same batch size", "batch differs"),
        e(lambda k: k.grid_sampler_2d(k.zeros(1, 1, 3, 3), k.zeros(1, 2, 2, 3), 0, 0, False), RuntimeError,
          "size 2 in last dimension", "grid of 3 coords"),
        e(lambda k: k.grid_sampler_2d(k.zeros(1, 3, 3), k.zeros(1, 2, 2), 0, 0, False), RuntimeError, "expected 4D",
          "3-D input"),
        e(lambda k: k.grid_sampler_2d(k.zeros(1, 1, 0, 3), k.zeros(1, 2, 2, 2), 0, 0, False), RuntimeError,
          "non-empty spatial dimensions", "empty height"),
        e(lambda k: k.grid_sampler_2d(k.zeros(1, 1, 3, 3), k.zeros(1, 2, 2, 2), 3, 0, False), RuntimeError,
          "interpolation_mode", "mode 3"),
        e(lambda k: k.grid_sampler_2d(k.zeros(1, 1, 3, 3), k.zeros(1, 2, 2, 2), 0, 5, False), RuntimeError,
          "padding_mode", "padding 5"),
    ]


def _grid_backward_ref(go, x, g, mode, pad, align):
    torch = _torch()
    xt, gt = _t(x).clone().requires_grad_(), _t(g).clone().requires_grad_()
    out = torch.grid_sampler_2d(xt, gt, mode, pad, align)
    gx, gg = torch.autograd.grad(out, (xt, gt), _t(go), allow_unused=True)
    return (gx.numpy(), (gg if gg is not None else torch.zeros_like(gt)).numpy())


def _grid3d_samples(dtype):
    out = []
    i = 0
    for mode in (0, 1):
        for pad in (0, 1, 2):
            for align in (False, True):
                i += 1
                x = values((2, 2, 3, 4, 2), dtype, seed=i)
                out.append(Sample((x, _grid((2, 2, 3, 2, 3), dtype, i), mode, pad, align),
                                  note=f"mode {mode}, padding {pad}, align {align}"))
    out.append(Sample((values((0, 2, 2, 2, 2), dtype), _grid((0, 1, 2, 2, 3), dtype, 0), 0, 0, False),
                      note="zero batch"))
    return out


def _grid3d_backward_samples(dtype):
    out = []
    for s in _grid3d_samples(dtype):
        x, g = s.args[0], s.args[1]
        go = values((x.shape[0], x.shape[1]) + g.shape[1:4], dtype, seed=5)
        out.append(Sample((go,) + s.args, note=s.note))
    return out


def _grid3d_backward_ref(go, x, g, mode, pad, align):
    torch = _torch()
    xt, gt = _t(x).clone().requires_grad_(), _t(g).clone().requires_grad_()
    out = torch.grid_sampler_3d(xt, gt, mode, pad, align)
    gx, gg = torch.autograd.grad(out, (xt, gt), _t(go), allow_unused=True)
    return (gx.numpy(), (gg if gg is not None else torch.zeros_like(gt)).numpy())


def _grid3d_errors():
    e = ErrorInput
    return [
        e(lambda k: k.grid_sampler_3d(k.zeros(1, 1, 3, 3, 3), k.zeros(1, 2, 2, 2, 3), 2, 0, False), RuntimeError,
          "bicubic interpolation only supports 4D input", "bicubic"),
        e(lambda k: k.grid_sampler_3d(k.zeros(1, 1, 3, 3), k.zeros(1, 2, 2, 3), 0, 0, False), RuntimeError,
          "expected 5D input", "4-D input"),
        e(lambda k: k.grid_sampler_3d(k.zeros(1, 1, 3, 3, 3), k.zeros(1, 2, 2, 2, 2), 0, 0, False), RuntimeError,
          "size 3 in last dimension", "grid of 2 coords"),
        e(lambda k: k.grid_sampler_3d(k.zeros(2, 1, 3, 3, 3), k.zeros(1, 2, 2, 2, 3), 0, 0, False), RuntimeError,
          "same batch size", "batch differs"),
        e(lambda k: k.grid_sampler_3d(k.zeros(1, 1, 0, 3, 3), k.zeros(1, 2, 2, 2, 3), 0, 0, False), RuntimeError,
          "non-empty spatial dimensions", "empty depth"),
        e(lambda k: k.grid_sampler_3d(k.zeros(1, 1, 3, 3, 3), k.zeros(1, 2, 2, 2, 3, dtype=k.float64), 0, 0, False),
          RuntimeError, "same dtype", "dtypes differ"),
    ]


_TOL = {"float32": dict(rtol=1e-4, atol=1e-5)}

RECORDS = _upsample_records() + _pool_records() + [
    OpRecord("pixel_shuffle", FAMILY, ALL, _shuffle_samples, ref=_shuffle_ref,
             error_inputs=_shuffle_errors, grad_samples=lambda: _shuffle_samples("float64"),
             no_zero_dim="takes (*, C, H, W) tensors"),
    OpRecord("pixel_unshuffle", FAMILY, ALL, _unshuffle_samples, ref=_unshuffle_ref,
             error_inputs=_unshuffle_errors, grad_samples=lambda: _unshuffle_samples("float64"),
             no_zero_dim="takes (*, C, H, W) tensors"),
    OpRecord("im2col", FAMILY, FLOATS, _im2col_samples, ref=_im2col_ref, error_inputs=_fold_errors,
             grad_samples=lambda: _im2col_samples("float64"), no_zero_dim=NO_ZERO_DIM),
    OpRecord("col2im", FAMILY, FLOATS, _col2im_samples, ref=_col2im_ref,
             grad_samples=lambda: _col2im_samples("float64"), no_zero_dim=NO_ZERO_DIM),
    OpRecord("affine_grid_generator", FAMILY, FLOATS, _affine_samples, ref=_affine_ref, error_inputs=_affine_errors,
             grad_samples=lambda: _affine_samples("float64"), no_zero_dim="theta is (N, 2, 3) or (N, 3, 4)", tol=_TOL),
    OpRecord("grid_sampler_2d", FAMILY, FLOATS, _grid_samples, ref=_nn("grid_sampler_2d"), error_inputs=_grid_errors,
             grad_samples=_grid_grad_samples, gradgrad=NO_GRADGRAD_GRID, no_zero_dim=NO_ZERO_DIM, tol=_TOL),
    OpRecord("grid_sampler_2d_backward", FAMILY, FLOATS, _grid_backward_samples, ref=_grid_backward_ref,
             no_zero_dim=NO_ZERO_DIM, tol=_TOL),
    OpRecord("grid_sampler_3d", FAMILY, FLOATS, _grid3d_samples, ref=_nn("grid_sampler_3d"), error_inputs=_grid3d_errors,
             grad_samples=lambda: _grid3d_samples("float64"), gradgrad=NO_GRADGRAD_GRID, no_zero_dim=NO_ZERO_DIM,
             tol=_TOL),
    OpRecord("grid_sampler_3d_backward", FAMILY, FLOATS, _grid3d_backward_samples, ref=_grid3d_backward_ref,
             no_zero_dim=NO_ZERO_DIM, tol=_TOL),
]

assert all(isinstance(r, OpRecord) and r.family == FAMILY for r in RECORDS)
