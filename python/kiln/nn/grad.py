"""torch.nn.grad: the gradients of a convolution with respect to its input and its weight, for custom
autograd Functions that recompute a convolution's backward (memory-saving or decoupled layers). Each runs the
convolution's own backward (kiln.autograd.grad of F.convNd), so it agrees with what autograd computes."""
import kiln

from . import functional as F

_CONVS = {1: F.conv1d, 2: F.conv2d, 3: F.conv3d}


def _grad_input(dims, input_size, weight, grad_output, stride, padding, dilation, groups):
    input_size = list(input_size)
    if len(input_size) != dims + 2:
        raise ValueError(f"conv{dims}d_input: input_size must have {dims + 2} elements, got {len(input_size)}")
    with kiln.enable_grad():
        x = kiln.zeros(input_size, dtype=grad_output.dtype, requires_grad=True)
        y = _CONVS[dims](x, weight.detach(), None, stride, padding, dilation, groups)
        if tuple(y.shape) != tuple(grad_output.shape):
            raise ValueError(f"conv{dims}d_input: grad_output's shape {tuple(grad_output.shape)} is not the "
                             f"convolution's output shape {tuple(y.shape)}")
        return kiln.autograd.grad(y, x, grad_output)[0]


def _grad_weight(dims, input, weight_size, grad_output, stride, padding, dilation, groups):
    with kiln.enable_grad():
        w = kiln.zeros(list(weight_size), dtype=grad_output.dtype, requires_grad=True)
        y = _CONVS[dims](input.detach(), w, None, stride, padding, dilation, groups)
        if tuple(y.shape) != tuple(grad_output.shape):
            raise ValueError(f"conv{dims}d_weight: grad_output's shape {tuple(grad_output.shape)} is not the "
                             f"convolution's output shape {tuple(y.shape)}")
        return kiln.autograd.grad(y, w, grad_output)[0]


def conv1d_input(input_size, weight, grad_output, stride=1, padding=0, dilation=1, groups=1):
    return _grad_input(1, input_size, weight, grad_output, stride, padding, dilation, groups)


def conv1d_weight(input, weight_size, grad_output, stride=1, padding=0, dilation=1, groups=1):
    return _grad_weight(1, input, weight_size, grad_output, stride, padding, dilation, groups)


def conv2d_input(input_size, weight, grad_output, stride=1, padding=0, dilation=1, groups=1):
    return _grad_input(2, input_size, weight, grad_output, stride, padding, dilation, groups)


def conv2d_weight(input, weight_size, grad_output, stride=1, padding=0, dilation=1, groups=1):
    return _grad_weight(2, input, weight_size, grad_output, stride, padding, dilation, groups)


def conv3d_input(input_size, weight, grad_output, stride=1, padding=0, dilation=1, groups=1):
    return _grad_input(3, input_size, weight, grad_output, stride, padding, dilation, groups)


def conv3d_weight(input, weight_size, grad_output, stride=1, padding=0, dilation=1, groups=1):
    return _grad_weight(3, input, weight_size, grad_output, stride, padding, dilation, groups)
