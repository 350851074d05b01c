"""kiln.nn.init: in-place initialisers (under no_grad), like torch.nn.init. Those that draw
random numbers take generator= (a kiln.Generator; None: the default generator), as torch 2.x."""
import math
import warnings

import kiln


def uniform_(tensor, a=0.0, b=1.0, generator=None):
    """Fills `tensor` with values drawn from U(a, b)."""
    with kiln.no_grad():
        return tensor.uniform_(a, b, generator=generator)


def normal_(tensor, mean=0.0, std=1.0, generator=None):
    """Fills `tensor` with values drawn from N(mean, std^2)."""
    with kiln.no_grad():
        return tensor.normal_(mean, std, generator=generator)


def trunc_normal_(tensor, mean=0.0, std=1.0, a=-2.0, b=2.0, generator=None):
    """Fills `tensor` from N(mean, std^2) truncated to [a, b], by torch 1.13's algorithm (uniform
    values between the bounds' normal CDFs mapped through erfinv), so after the same seed kiln
    draws torch's values."""
    def norm_cdf(x):
        return (1.0 + math.erf(x / math.sqrt(2.0))) / 2.0

    if (mean < a - 2 * std) or (mean > b + 2 * std):
        warnings.warn("mean is more than 2 std from [a, b] in nn.init.trunc_normal_. "
                      "The distribution of values may be incorrect.", stacklevel=2)
    with kiln.no_grad():
        low = norm_cdf((a - mean) / std)
        high = norm_cdf((b - mean) / std)
        tensor.uniform_(2 * low - 1, 2 * high - 1, generator=generator)
        tensor.erfinv_()
        tensor.mul_(std * math.sqrt(2.0))
        tensor.add_(mean)
        tensor.clamp_(min=a, max=b)
        return tensor


def constant_(tensor, val):
    with kiln.no_grad():
        return tensor.fill_(val)


def zeros_(tensor):
    with kiln.no_grad():
        return tensor.zero_()


def ones_(tensor):
    return constant_(tensor, 1.0)


def calculate_gain(nonlinearity, param=None):
    """torch.nn.init.calculate_gain: the recommended std scale for a nonlinearity."""
    linear = ("linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
              "conv_transpose3d", "sigmoid")
    if nonlinearity in linear:
        return 1.0
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        if param is None:
            slope = 0.01
        elif isinstance(param, (int, float)) and not isinstance(param, bool):
            slope = param
        else:
            raise ValueError(f"negative_slope {param} not a valid number")
        return math.sqrt(2.0 / (1 + slope ** 2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ValueError(f"Unsupported nonlinearity {nonlinearity}")


def _calculate_fan_in_and_fan_out(tensor):
    if tensor.dim() < 2:
        raise ValueError("Fan in and fan out can not be computed for tensor with fewer than 2 dimensions")
    receptive = 1
    for s in tensor.shape[2:]:
        receptive *= s
    return tensor.shape[1] * receptive, tensor.shape[0] * receptive


def _calculate_correct_fan(tensor, mode):
    """fan_in or fan_out of tensor by mode (custom initialisers call torch's private helper)."""
    mode = mode.lower()
    if mode not in ("fan_in", "fan_out"):
        raise ValueError(f"Mode {mode} not supported, please use one of ['fan_in', 'fan_out']")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return fan_in if mode == "fan_in" else fan_out


def _kaiming_std(tensor, a, mode, nonlinearity):
    if mode not in ("fan_in", "fan_out"):
        raise ValueError(f"Mode {mode} not supported, please use one of fan_in, fan_out")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    fan = fan_in if mode == "fan_in" else fan_out
    return calculate_gain(nonlinearity, a) / math.sqrt(fan) if fan > 0 else 0.0


def kaiming_uniform_(tensor, a=0.0, mode="fan_in", nonlinearity="leaky_relu", generator=None):
    """U(-bound, bound) with bound = gain * sqrt(3 / fan) (He et al.)."""
    bound = math.sqrt(3.0) * _kaiming_std(tensor, a, mode, nonlinearity)
    return uniform_(tensor, -bound, bound, generator)


def kaiming_normal_(tensor, a=0.0, mode="fan_in", nonlinearity="leaky_relu", generator=None):
    """N(0, std^2) with std = gain / sqrt(fan)."""
    return normal_(tensor, 0.0, _kaiming_std(tensor, a, mode, nonlinearity), generator)


def xavier_uniform_(tensor, gain=1.0, generator=None):
    """U(-a, a) with a = gain * sqrt(6 / (fan_in + fan_out)) (Glorot & Bengio)."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    std = gain * math.sqrt(2.0 / (fan_in + fan_out)) if fan_in + fan_out > 0 else 0.0
    bound = math.sqrt(3.0) * std  # as torch computes it: the same float64 bound, bit for bit
    return uniform_(tensor, -bound, bound, generator)


def xavier_normal_(tensor, gain=1.0, generator=None):
    """N(0, std^2) with std = gain * sqrt(2 / (fan_in + fan_out))."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    std = gain * math.sqrt(2.0 / (fan_in + fan_out)) if fan_in + fan_out > 0 else 0.0
    return normal_(tensor, 0.0, std, generator)


def eye_(tensor):
    """Fills a 2-D tensor with the identity matrix."""
    if tensor.dim() != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    with kiln.no_grad():
        return tensor.copy_(kiln.eye(tensor.shape[0], tensor.shape[1], dtype=tensor.dtype))


def orthogonal_(tensor, gain=1, generator=None):
    """Fills `tensor` (flattened to rows x cols) with a (semi-)orthogonal matrix, as torch 1.13: the Q of
    kiln.linalg.qr of a standard normal matrix (transposed when rows < cols), its columns' signs set by R's
    diagonal, times `gain`: torch's draws and torch's LAPACK calls, so torch's bits."""
    if tensor.dim() < 2:
        raise ValueError("Only tensors with 2 or more dimensions are supported")
    if tensor.numel() == 0:
        return tensor
    rows = tensor.shape[0]
    cols = tensor.numel() // rows
    with kiln.no_grad():
        flattened = kiln.empty(rows, cols, dtype=tensor.dtype).normal_(0, 1, generator=generator)
        if rows < cols:
            flattened = flattened.t()
        q, r = kiln.linalg.qr(flattened)
        ph = kiln.diag(r, 0).sign()
        q *= ph
        if rows < cols:
            q = q.t()
        tensor.view_as(q).copy_(q)
        tensor.mul_(gain)
    return tensor
    rows = tensor.shape[0]
    cols = tensor.numel() // rows
    with kiln.no_grad():
        flattened = kiln.empty(rows, cols, dtype=tensor.dtype).normal_(0, 1, generator=generator)
        a = flattened.double().numpy()
        if rows < cols:
            a = a.T
        q, r = np.linalg.qr(a)
        q = q * np.sign(np.diag(r))
        if rows < cols:
            q = q.T
        q = kiln.from_numpy(np.ascontiguousarray(q)).to(tensor.dtype)
        tensor.view_as(q).copy_(q)
        tensor.mul_(gain)
    return tensor


def _deprecated(new):
    name = new.__name__[:-1]

    def old(*args, **kwargs):
        import warnings
        warnings.warn(f"nn.init.{name} is now deprecated in favor of nn.init.{new.__name__}.", stacklevel=2)
        return new(*args, **kwargs)

    old.__name__ = old.__qualname__ = name
    old.__doc__ = f"Deprecated: use {new.__name__}."
    return old


uniform = _deprecated(uniform_)
normal = _deprecated(normal_)
constant = _deprecated(constant_)
eye = _deprecated(eye_)
xavier_uniform = _deprecated(xavier_uniform_)
xavier_normal = _deprecated(xavier_normal_)
kaiming_uniform = _deprecated(kaiming_uniform_)
kaiming_normal = _deprecated(kaiming_normal_)
orthogonal = _deprecated(orthogonal_)


def dirac_(tensor, groups=1):
    """The identity of a convolution (torch's): 1 at the kernel centre of channel d of each group's
    output d, 0 elsewhere."""
    dimensions = tensor.dim()
    if dimensions not in (3, 4, 5):
        raise ValueError("Only tensors with 3, 4, or 5 dimensions are supported")
    sizes = tensor.shape
    if sizes[0] % groups != 0:
        raise ValueError("dim 0 must be divisible by groups")
    out_chans_per_grp = sizes[0] // groups
    min_dim = min(out_chans_per_grp, sizes[1])
    with kiln.no_grad():
        tensor.zero_()
        centre = tuple(s // 2 for s in sizes[2:])
        for g in range(groups):
            for d in range(min_dim):
                tensor[(g * out_chans_per_grp + d, d) + centre] = 1
    return tensor


def sparse_(tensor, sparsity, std=0.01, generator=None):
    """N(0, std^2) with ceil(sparsity * rows) entries of each column set to zero (rows picked by randperm;
    torch's draws)."""
    if tensor.dim() != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    rows, cols = tensor.shape
    num_zeros = int(math.ceil(sparsity * rows))
    with kiln.no_grad():
        tensor.normal_(0, std, generator=generator)
        for col_idx in range(cols):
            row_indices = kiln.randperm(rows, generator=generator)
            zero_indices = row_indices[:num_zeros]
            tensor[zero_indices, col_idx] = 0
    return tensor


dirac = dirac_
sparse = sparse_


# torch's private no-grad fillers, which copied initialisers (timm's old trunc_normal_, custom layers) call
def _no_grad_uniform_(tensor, a, b, generator=None):
    return uniform_(tensor, a, b, generator)


def _no_grad_normal_(tensor, mean, std, generator=None):
    return normal_(tensor, mean, std, generator)


def _no_grad_trunc_normal_(tensor, mean, std, a, b, generator=None):
    return trunc_normal_(tensor, mean, std, a, b, generator=generator)


def _no_grad_fill_(tensor, val):
    return constant_(tensor, val)


def _no_grad_zero_(tensor):
    return zeros_(tensor)
