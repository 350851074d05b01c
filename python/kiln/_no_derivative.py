"""Ops torch 1.13 has no derivative for (floor_divide, remainder(Scalar, Tensor)): their result
records a node whose backward raises torch's RuntimeError, so the forward works and backward fails
as in torch."""
from . import _C
from .autograd.function import Function
from .autograd.grad_mode import no_grad


class _NoDerivative(Function):
    @staticmethod
    def forward(ctx, name, holder, *inputs):
        ctx.op_name = name  # not ctx.name: that would hide the node's name() method
        return holder[0]

    @staticmethod
    def backward(ctx, *grad_outputs):
        raise RuntimeError(f"derivative for aten::{ctx.op_name} is not implemented")


def without_derivative(name, fn, *args):
    """fn(*args), whose backward (if an argument records a gradient) raises like torch's."""
    tensors = [a for a in args if isinstance(a, _C.TensorBase) and a.requires_grad]
    if not (tensors and _C.is_grad_enabled()):
        return fn(*args)
    with no_grad():
        result = fn(*args)
    if not result.is_floating_point():
        return result
    return _NoDerivative.apply(name, [result], *tensors)


class _NoGradient(Function):
    @staticmethod
    def forward(ctx, holder, *inputs):
        ctx.n = len(inputs)
        return holder[0]

    @staticmethod
    def backward(ctx, *grad_outputs):
        return (None,) * (1 + ctx.n)


def with_undefined_gradient(fn, *args):
    """fn(*args), whose result records a gradient but gives its inputs none (their .grad stays None):
    torch's norm_backward for p = 0."""
    tensors = [a for a in args if isinstance(a, _C.TensorBase) and a.requires_grad]
    if not (tensors and _C.is_grad_enabled()):
        return fn(*args)
    with no_grad():
        result = fn(*args)
    return _NoGradient.apply([result], *tensors)
