"""kiln.autograd: backward, grad, grad-mode switches, custom Functions and numerical gradient checks."""
from .. import _C
from . import function
from .function import Function
from .grad_mode import enable_grad, no_grad, set_grad_enabled
from .gradcheck import gradcheck, gradgradcheck


def _tensors(x):
    if x is None:
        return []
    if isinstance(x, _C.TensorBase):
        return [x]
    return list(x)


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False, inputs=None):
    """Accumulates gradients of `tensors` into the .grad of the leaves."""
    if inputs is not None:
        raise NotImplementedError("backward(inputs=...) is not supported yet; use kiln.autograd.grad")
    tensors = _tensors(tensors)
    grads = _tensors(grad_tensors) or [None] * len(tensors)
    if len(grads) != len(tensors):
        raise RuntimeError(f"got {len(grads)} gradients for {len(tensors)} tensors")
    if retain_graph is None:
        retain_graph = create_graph
    _C._backward(tensors, grads, bool(retain_graph), bool(create_graph))


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False, allow_unused=False):
    """Returns the gradients of `outputs` with respect to `inputs` (a tuple), without touching .grad."""
    outputs = _tensors(outputs)
    single = isinstance(inputs, _C.TensorBase)
    inputs = _tensors(inputs)
    grads = _tensors(grad_outputs) or [None] * len(outputs)
    if len(grads) != len(outputs):
        raise RuntimeError(f"grad_outputs has {len(grads)} tensors for {len(outputs)} outputs")
    if retain_graph is None:
        retain_graph = create_graph
    return _C._grad(outputs, inputs, grads, bool(retain_graph), bool(create_graph), bool(allow_unused))


__all__ = ["Function", "backward", "grad", "no_grad", "enable_grad", "set_grad_enabled", "gradcheck", "gradgradcheck"]
