"""Convolution layers (torch.nn.modules.conv): Conv1d/2d/3d and ConvTranspose1d/2d, with torch's
parameter shapes, initialisation, padding modes and argument checks."""
import math

from .. import functional as F, init
from ... import _C
from ..parameter import Parameter, UninitializedParameter
from .lazy import LazyModuleMixin
from .module import Module

_PADDING_MODES = ("zeros", "reflect", "replicate", "circular")


def _tuple(v, n):
    if isinstance(v, (tuple, list)):
        return tuple(v) * n if len(v) == 1 and n > 1 else tuple(v)
    return (v,) * n


class _ConvNd(Module):
    """The parameters and checks the convolutions share: weight [out_channels, in_channels // groups,
    *kernel_size] (transposed: [in_channels, out_channels // groups, *kernel_size]) and bias
    [out_channels], initialised as torch's (kaiming_uniform_ with a=sqrt(5), bias U(-1/sqrt(fan_in), ...))."""
    _nd = 2
    _transposed = False

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1,
                 bias=True, padding_mode="zeros", device=None, dtype=None, output_padding=0):
        super().__init__()
        nd = self._nd
        if groups <= 0:
            raise ValueError("groups must be a positive integer")
        if in_channels % groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        if out_channels % groups != 0:
            raise ValueError("out_channels must be divisible by groups")
        if isinstance(padding, str):
            if padding not in ("valid", "same"):
                raise ValueError(f"Invalid padding string {padding!r}, should be one of {{'valid', 'same'}}")
            if padding == "same" and any(s != 1 for s in _tuple(stride, nd)):
                raise ValueError("padding='same' is not supported for strided convolutions")
        if padding_mode not in _PADDING_MODES:
            raise ValueError(f"padding_mode must be one of {set(_PADDING_MODES)}, but got padding_mode='{padding_mode}'")
        self.in_channels, self.out_channels = in_channels, out_channels
        self.kernel_size, self.stride = _tuple(kernel_size, nd), _tuple(stride, nd)
        self.padding = padding if isinstance(padding, str) else _tuple(padding, nd)
        self.dilation, self.groups, self.padding_mode = _tuple(dilation, nd), groups, padding_mode
        self.transposed, self.output_padding = self._transposed, _tuple(output_padding, nd)
        # F.pad's argument for the padding modes other than 'zeros' (last dim first)
        if isinstance(self.padding, str):
            self._reversed_padding_repeated_twice = [0, 0] * nd
            if padding == "same":
                for d, k, i in zip(self.dilation, self.kernel_size, range(nd - 1, -1, -1)):
                    total = d * (k - 1)
                    left = total // 2
                    self._reversed_padding_repeated_twice[2 * i] = left
                    self._reversed_padding_repeated_twice[2 * i + 1] = total - left
        else:
            self._reversed_padding_repeated_twice = [p for p in reversed(self.padding) for _ in range(2)]
        kw = {"dtype": dtype} if dtype is not None else {}
        shape = ([in_channels, out_channels // groups] if self.transposed
                 else [out_channels, in_channels // groups]) + list(self.kernel_size)
        self.weight = Parameter(_C.empty(shape, **kw))
        if bias:
            self.bias = Parameter(_C.empty([out_channels], **kw))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self):
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            if fan_in != 0:
                bound = 1 / math.sqrt(fan_in)
                init.uniform_(self.bias, -bound, bound)

    def extra_repr(self):
        nd = self._nd
        s = f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, stride={self.stride}"
        if self.padding != (0,) * nd:
            s += f", padding={self.padding}"
        if self.dilation != (1,) * nd:
            s += f", dilation={self.dilation}"
        if self.output_padding != (0,) * nd:
            s += f", output_padding={self.output_padding}"
        if self.groups != 1:
            s += f", groups={self.groups}"
        if self.bias is None:
            s += ", bias=False"
        if self.padding_mode != "zeros":
            s += f", padding_mode={self.padding_mode}"
        return s

    def _conv_forward(self, input, weight, bias):
        if self.padding_mode != "zeros":
            return self._conv(F.pad(input, self._reversed_padding_repeated_twice, mode=self.padding_mode),
                              weight, bias, self.stride, (0,) * self._nd, self.dilation, self.groups)
        return self._conv(input, weight, bias, self.stride, self.padding, self.dilation, self.groups)

    def forward(self, input):
        return self._conv_forward(input, self.weight, self.bias)


class Conv1d(_ConvNd):
    """1-D convolution over (N, C_in, L) or (C_in, L) input."""
    _nd = 1
    _conv = staticmethod(F.conv1d)


class Conv2d(_ConvNd):
    """2-D convolution over (N, C_in, H, W) or (C_in, H, W) input."""
    _nd = 2
    _conv = staticmethod(F.conv2d)


class Conv3d(_ConvNd):
    """3-D convolution over (N, C_in, D, H, W) or (C_in, D, H, W) input."""
    _nd = 3
    _conv = staticmethod(F.conv3d)


class _ConvTransposeNd(_ConvNd):
    _transposed = True

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, output_padding=0, groups=1,
                 bias=True, dilation=1, padding_mode="zeros", device=None, dtype=None):
        if padding_mode != "zeros":
            raise ValueError(f'Only "zeros" padding mode is supported for {type(self).__name__}')
        if isinstance(padding, str):
            raise TypeError(f"{type(self).__name__}: padding must be an int or a tuple of ints, not str")
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation, groups, bias,
                         padding_mode, device, dtype, output_padding)

    def _output_padding(self, input, output_size, stride, padding, kernel_size, num_spatial_dims, dilation=None):
        """The output_padding that makes the output output_size (torch's ConvTranspose rule)."""
        if output_size is None:
            return self.output_padding
        has_batch = input.dim() == num_spatial_dims + 2
        output_size = list(output_size)
        k = num_spatial_dims + 2 if has_batch else num_spatial_dims + 1
        if len(output_size) == k:
            output_size = output_size[-num_spatial_dims:]
        if len(output_size) != num_spatial_dims:
            raise ValueError(f"ConvTranspose{num_spatial_dims}D: for {input.dim()}D input, output_size must have "
                             f"{num_spatial_dims} or {k} elements (got {len(output_size)})")
        dilation = dilation or (1,) * num_spatial_dims
        result = []
        for d in range(num_spatial_dims):
            dim_size = input.shape[d + input.dim() - num_spatial_dims]
            min_size = (dim_size - 1) * stride[d] - 2 * padding[d] + dilation[d] * (kernel_size[d] - 1) + 1
            max_size = min_size + stride[d] - 1
            size = int(output_size[d])
            if not min_size <= size <= max_size:
                raise ValueError(f"requested an output size of {output_size}, but valid sizes range from "
                                 f"{[(input.shape[i + input.dim() - num_spatial_dims] - 1) * stride[i] - 2 * padding[i] + dilation[i] * (kernel_size[i] - 1) + 1 for i in range(num_spatial_dims)]} to "
                                 f"{[(input.shape[i + input.dim() - num_spatial_dims] - 1) * stride[i] - 2 * padding[i] + dilation[i] * (kernel_size[i] - 1) + stride[i] for i in range(num_spatial_dims)]} "
                                 f"(for an input of {list(input.shape[-num_spatial_dims:])})")
            result.append(size - min_size)
        return tuple(result)

    def forward(self, input, output_size=None):
        if input.dim() not in (self._nd + 1, self._nd + 2):
            raise RuntimeError(f"Expected {self._nd + 1}D (unbatched) or {self._nd + 2}D (batched) input to "
                               f"conv_transpose{self._nd}d, but got input of size: {list(input.shape)}")
        output_padding = self._output_padding(input, output_size, self.stride, self.padding, self.kernel_size,
                                              self._nd, self.dilation)
        return self._conv(input, self.weight, self.bias, self.stride, self.padding, output_padding, self.groups,
                          self.dilation)


class ConvTranspose1d(_ConvTransposeNd):
    """Transposed 1-D convolution: weight [in_channels, out_channels // groups, kernel_size]."""
    _nd = 1
    _conv = staticmethod(F.conv_transpose1d)


class ConvTranspose2d(_ConvTransposeNd):
    """Transposed 2-D convolution: weight [in_channels, out_channels // groups, kH, kW]."""
    _nd = 2
    _conv = staticmethod(F.conv_transpose2d)


class ConvTranspose3d(_ConvTransposeNd):
    """Transposed 3-D convolution: weight [in_channels, out_channels // groups, kD, kH, kW]."""
    _nd = 3
    _conv = staticmethod(F.conv_transpose3d)


class _LazyConvXdMixin(LazyModuleMixin):
    def reset_parameters(self):
        if not self.has_uninitialized_params() and self.in_channels != 0:
            super().reset_parameters()

    def initialize_parameters(self, input, *args, **kwargs):
        if self.has_uninitialized_params():
            self.in_channels = self._get_in_channels(input)
            if self.in_channels % self.groups != 0:
                raise ValueError("in_channels must be divisible by groups")
            with _no_grad():
                if self.transposed:
                    self.weight.materialize((self.in_channels, self.out_channels // self.groups, *self.kernel_size))
                else:
                    self.weight.materialize((self.out_channels, self.in_channels // self.groups, *self.kernel_size))
                if self.bias is not None:
                    self.bias.materialize((self.out_channels,))
                self.reset_parameters()

    def _get_in_channels(self, input):
        no_batch = self._nd + 1
        if input.dim() not in (no_batch, no_batch + 1):
            raise RuntimeError(f"Expected {no_batch}D (unbatched) or {no_batch + 1}D (batched) input to "
                               f"{self.__class__.__name__}, but got input of size: {input.shape}")
        return input.shape[1] if input.dim() == no_batch + 1 else input.shape[0]


def _lazy_conv(base, transposed):
    def __init__(self, out_channels, kernel_size, stride=1, padding=0, *rest, device=None, dtype=None, **kwargs):
        # the eager module's positional order after out_channels
        if transposed:
            names = ["output_padding", "groups", "bias", "dilation", "padding_mode"]
            defaults = {"output_padding": 0, "groups": 1, "bias": True, "dilation": 1, "padding_mode": "zeros"}
        else:
            names = ["dilation", "groups", "bias", "padding_mode"]
            defaults = {"dilation": 1, "groups": 1, "bias": True, "padding_mode": "zeros"}
        args = dict(defaults)
        args.update(dict(zip(names, rest)))
        args.update(kwargs)
        bias = args.pop("bias")
        LazyModuleMixin.__init__(self, 0, 0, kernel_size, stride, padding, bias=False, dtype=dtype, **args)
        self.weight = UninitializedParameter(dtype=dtype)
        self.out_channels = out_channels
        if bias:
            self.bias = UninitializedParameter(dtype=dtype)
    return __init__


def _no_grad():
    from ...autograd.grad_mode import no_grad
    return no_grad()


class LazyConv1d(_LazyConvXdMixin, Conv1d):
    cls_to_become = Conv1d
    __init__ = _lazy_conv(Conv1d, False)


class LazyConv2d(_LazyConvXdMixin, Conv2d):
    cls_to_become = Conv2d
    __init__ = _lazy_conv(Conv2d, False)


class LazyConv3d(_LazyConvXdMixin, Conv3d):
    cls_to_become = Conv3d
    __init__ = _lazy_conv(Conv3d, False)


class LazyConvTranspose1d(_LazyConvXdMixin, ConvTranspose1d):
    cls_to_become = ConvTranspose1d
    __init__ = _lazy_conv(ConvTranspose1d, True)


class LazyConvTranspose2d(_LazyConvXdMixin, ConvTranspose2d):
    cls_to_become = ConvTranspose2d
    __init__ = _lazy_conv(ConvTranspose2d, True)


class LazyConvTranspose3d(_LazyConvXdMixin, ConvTranspose3d):
    cls_to_become = ConvTranspose3d
    __init__ = _lazy_conv(ConvTranspose3d, True)
