"""F.fractional_max_pool2d / fractional_max_pool3d (Graham's fractional max-pooling), as torch computes them.

Each (batch, channel) plane has its own random sample u per pooled dimension (torch.rand(N, C, 2 or 3) drawn
here as torch draws it, so a seeded program gets the same windows). Window starts along a dimension of input
size I, output size O and pool size K are int((i + u) * a) - int(u * a) for i < O - 1 with a = (I - K) / (O - 1)
computed in the input's floating dtype (float32 rounding matters for the int truncation), and I - K for the last
one. The maximum over each window is taken by gathering its K-products of positions and reducing with max(dim),
which keeps the first maximum in row-major window order, as torch's loop does; gradients flow to that element.
"""
import numpy as np

import kiln

_NP_DTYPES = {kiln.float32: np.float32, kiln.float64: np.float64, kiln.float16: np.float16}


def _ntuple(v, n):
    return tuple(v) if isinstance(v, (list, tuple)) else (v,) * n


def _intervals(samples, in_size, out_size, pool, np_dtype):
    """(planes, out_size) window starts for one dimension from the planes' samples (a NumPy array)."""
    u = samples.astype(np_dtype)
    seq = np.empty((u.shape[0], out_size), dtype=np.int64)
    if out_size > 1:
        alpha = np_dtype(in_size - pool) / np_dtype(out_size - 1)
        i = np.arange(out_size - 1, dtype=np_dtype)[None, :]
        # float products in the input's precision, truncated toward zero as static_cast<int> does
        seq[:, :-1] = np.trunc((i + u[:, None]) * alpha).astype(np.int64) - np.trunc(u * alpha).astype(np.int64)[:, None]
    seq[:, -1] = in_size - pool
    return seq


def _fractional_max_pool(input, kernel_size, output_size, output_ratio, return_indices, _random_samples, nd):
    name = f"fractional_max_pool{nd}d"
    if not isinstance(input, kiln.Tensor):
        raise TypeError(f"{name}(): argument 'input' must be Tensor, not {type(input).__name__}")
    if output_size is None and output_ratio is None:
        raise ValueError(f"{name} requires specifying either an output_size or an output_ratio")
    if input.dim() < nd + 1:  # torch reads input.size(-(nd + 1)) for the samples' shape first
        raise IndexError(f"Dimension out of range (expected to be in range of [{-max(input.dim(), 1)}, "
                         f"{max(input.dim(), 1) - 1}], but got {-(nd + 1)})")
    if input.dim() not in (nd + 1, nd + 2) or input.numel() == 0:
        raise RuntimeError(f"{name}(): Expected {nd + 1}D or {nd + 2}D tensor, but got: {list(input.shape)}")
    if not input.is_floating_point():
        raise RuntimeError(f"\"{name}_out_frame\" not implemented for '{str(input.dtype).split('.')[-1].title()}'")
    kernel = _ntuple(kernel_size, nd)
    spatial = list(input.shape[-nd:])
    if output_size is None:
        ratio = _ntuple(output_ratio, nd)
        output_size = [int(s * r) for s, r in zip(spatial, ratio)]
    out = list(_ntuple(output_size, nd))
    batched = input.dim() == nd + 2
    x = input if batched else input.unsqueeze(0)
    n, c = x.shape[0], x.shape[1]
    if _random_samples is None:
        _random_samples = kiln.rand(n, c, nd, dtype=input.dtype, device=input.device)
    if list(_random_samples.shape) != [n, c, nd]:
        raise RuntimeError(f"{name}(): expected _random_samples of shape [{n}, {c}, {nd}], got "
                           f"{list(_random_samples.shape)}")
    dims = ("time", "height", "width")[3 - nd:]
    for d in range(nd):
        if out[d] + kernel[d] - 1 > spatial[d]:
            raise RuntimeError(f"{name}(): pool {dims[d]} {kernel[d]} too large relative to input "
                               f"{dims[d]} {spatial[d]}")
    np_dtype = _NP_DTYPES.get(input.dtype, np.float32)
    samples = _random_samples.detach().cpu().reshape(n * c, nd).numpy()
    # torch's 2-D kernel reads sample[0] for the width and sample[1] for the height; 3-D: T, H, W in order
    sample_col = [1, 0] if nd == 2 else [0, 1, 2]
    starts = [_intervals(samples[:, sample_col[d]], spatial[d], out[d], kernel[d], np_dtype) for d in range(nd)]
    # flat positions (within a plane) of every window element: (planes, *out, prod(kernel))
    strides = [int(np.prod(spatial[d + 1:])) for d in range(nd)]
    flat = np.zeros((n * c,) + tuple(out) + tuple(kernel), dtype=np.int64)
    for d in range(nd):
        shape = [n * c] + [1] * nd + [1] * nd
        shape[1 + d] = out[d]
        pos = starts[d].reshape(shape)
        kshape = [1] * (1 + 2 * nd)
        kshape[1 + nd + d] = kernel[d]
        flat = flat + (pos + np.arange(kernel[d]).reshape(kshape)) * strides[d]
    flat = flat.reshape(n, c, int(np.prod(out)) * int(np.prod(kernel)))
    index = kiln.from_numpy(flat).to(input.device)
    windows = x.reshape(n, c, -1).gather(2, index).view(n, c, int(np.prod(out)), int(np.prod(kernel)))
    values, arg = windows.max(dim=3)
    output = values.view([n, c] + out)
    if not batched:
        output = output.squeeze(0)
    if not return_indices:
        return output
    indices = index.view(n, c, int(np.prod(out)), int(np.prod(kernel))).gather(3, arg.unsqueeze(3)).view([n, c] + out)
    return output, indices if batched else indices.squeeze(0)


def fractional_max_pool2d_with_indices(input, kernel_size, output_size=None, output_ratio=None,
                                       return_indices=False, _random_samples=None):
    return _fractional_max_pool(input, kernel_size, output_size, output_ratio, True, _random_samples, 2)


def fractional_max_pool3d_with_indices(input, kernel_size, output_size=None, output_ratio=None,
                                       return_indices=False, _random_samples=None):
    return _fractional_max_pool(input, kernel_size, output_size, output_ratio, True, _random_samples, 3)


def fractional_max_pool2d(input, kernel_size, output_size=None, output_ratio=None, return_indices=False,
                          _random_samples=None):
    """Applies 2D fractional max pooling (torch.nn.functional.fractional_max_pool2d)."""
    return _fractional_max_pool(input, kernel_size, output_size, output_ratio, return_indices, _random_samples, 2)


def fractional_max_pool3d(input, kernel_size, output_size=None, output_ratio=None, return_indices=False,
                          _random_samples=None):
    """Applies 3D fractional max pooling (torch.nn.functional.fractional_max_pool3d)."""
    return _fractional_max_pool(input, kernel_size, output_size, output_ratio, return_indices, _random_samples, 3)
