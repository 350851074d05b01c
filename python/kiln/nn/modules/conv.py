"""Conv2d: a learnable 2-D convolution."""
import math

from ... import _C
from .. import functional as F, init
from ..functional import _pair
from ..parameter import Parameter
from .module import Module


class Conv2d(Module):
    """weight [out_channels, in_channels // groups, kH, kW] and bias [out_channels], both
    initialised as torch's (kaiming_uniform_ with a=sqrt(5), bias U(-1/sqrt(fan_in), ...))."""

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1,
                 bias=True, padding_mode="zeros", device=None, dtype=None):
        super().__init__()
        if groups <= 0:
            raise ValueError("groups must be a positive integer")
        if in_channels % groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        if out_channels % groups != 0:
            raise ValueError("out_channels must be divisible by groups")
        if padding_mode != "zeros":
            raise NotImplementedError(f"Conv2d: padding_mode '{padding_mode}' is not supported by kiln yet")
        if isinstance(padding, str) and padding not in ("valid", "same"):
            raise ValueError(f"Invalid padding string '{padding}', should be one of {{'valid', 'same'}}")
        if padding == "same" and any(s != 1 for s in _pair(stride)):
            raise ValueError("padding='same' is not supported for strided convolutions")
        self.in_channels, self.out_channels = in_channels, out_channels
        self.kernel_size, self.stride = _pair(kernel_size), _pair(stride)
        self.padding = padding if isinstance(padding, str) else _pair(padding)
        self.dilation, self.groups, self.padding_mode = _pair(dilation), groups, padding_mode
        kw = {"dtype": dtype} if dtype is not None else {}
        self.weight = Parameter(_C.empty([out_channels, in_channels // groups, *self.kernel_size], **kw))
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

    def forward(self, input):
        return F.conv2d(input, self.weight, self.bias, self.stride, self.padding, self.dilation, self.groups)

    def extra_repr(self):
        s = f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, stride={self.stride}"
        if self.padding != (0, 0):
            s += f", padding={self.padding!r}" if isinstance(self.padding, str) else f", padding={self.padding}"
        if self.dilation != (1, 1):
            s += f", dilation={self.dilation}"
        if self.groups != 1:
            s += f", groups={self.groups}"
        if self.bias is None:
            s += ", bias=False"
        return s
