"""LayerNorm (torch.nn.modules.normalization)."""
from typing import List, Union

from ... import _C
from ..._size import Size
from .. import functional as F, init
from ..parameter import Parameter
from .module import Module


_shape_t = Union[int, List[int], Size]  # torch's annotation alias for normalized_shape


class LayerNorm(Module):
    """Normalizes over the last len(normalized_shape) dims, with an elementwise affine weight/bias."""

    def __init__(self, normalized_shape, eps=1e-5, elementwise_affine=True, bias=True, device=None, dtype=None):
        super().__init__()
        shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
        self.normalized_shape, self.eps, self.elementwise_affine = shape, eps, elementwise_affine
        kw = {"dtype": dtype} if dtype is not None else {}
        if elementwise_affine:
            self.weight = Parameter(_C.ones(list(shape), **kw))
            if bias:
                self.bias = Parameter(_C.zeros(list(shape), **kw))
            else:
                self.register_parameter("bias", None)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)

    def reset_parameters(self):
        if self.elementwise_affine:
            init.ones_(self.weight)
            if self.bias is not None:
                init.zeros_(self.bias)

    def forward(self, input):
        return F.layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self):
        return f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.elementwise_affine}"


class RMSNorm(Module):
    """torch 2.4's RMSNorm: divides by the root mean square over the last len(normalized_shape) dims,
    times an elementwise weight (ones) when elementwise_affine."""

    def __init__(self, normalized_shape, eps=None, elementwise_affine=True, device=None, dtype=None):
        super().__init__()
        shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
        self.normalized_shape, self.eps, self.elementwise_affine = shape, eps, elementwise_affine
        kw = {"dtype": dtype} if dtype is not None else {}
        if elementwise_affine:
            self.weight = Parameter(_C.ones(list(shape), **kw))
        else:
            self.register_parameter("weight", None)

    def reset_parameters(self):
        if self.elementwise_affine:
            init.ones_(self.weight)

    def forward(self, x):
        return F.rms_norm(x, self.normalized_shape, self.weight, self.eps)

    def extra_repr(self):
        return f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.elementwise_affine}"


class GroupNorm(Module):
    """Normalizes each of num_groups groups of channels per sample; per-channel affine weight (ones)
    and bias (zeros) when affine."""

    def __init__(self, num_groups, num_channels, eps=1e-5, affine=True, device=None, dtype=None):
        super().__init__()
        if num_channels % num_groups != 0:
            raise ValueError("num_channels must be divisible by num_groups")
        self.num_groups, self.num_channels, self.eps, self.affine = num_groups, num_channels, eps, affine
        kw = {"dtype": dtype} if dtype is not None else {}
        if affine:
            self.weight = Parameter(_C.ones([num_channels], **kw))
            self.bias = Parameter(_C.zeros([num_channels], **kw))
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)

    def reset_parameters(self):
        if self.affine:
            init.ones_(self.weight)
            init.zeros_(self.bias)

    def forward(self, input):
        return F.group_norm(input, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self):
        return f"{self.num_groups}, {self.num_channels}, eps={self.eps}, affine={self.affine}"


class LocalResponseNorm(Module):
    """Normalizes over nearby channels: x / (k + alpha / size * sum of x^2 over `size` channels)^beta."""

    def __init__(self, size, alpha=1e-4, beta=0.75, k=1.0):
        super().__init__()
        self.size, self.alpha, self.beta, self.k = size, alpha, beta, k

    def forward(self, input):
        return F.local_response_norm(input, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self):
        return "{size}, alpha={alpha}, beta={beta}, k={k}".format(**self.__dict__)


# torch keeps CrossMapLRN2d in this module (its path in pickles and repr checks); the code is in cross_map_lrn.py
from .cross_map_lrn import CrossMapLRN2d  # noqa: E402
CrossMapLRN2d.__module__ = __name__
