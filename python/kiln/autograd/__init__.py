"""kiln.autograd: backward, grad, grad-mode switches, custom Functions and numerical gradient checks."""
import warnings

from .. import _C
from . import function
from .function import Function
from .grad_mode import enable_grad, inference_mode, no_grad, set_grad_enabled
from .gradcheck import gradcheck, gradgradcheck
from . import anomaly_mode
from .anomaly_mode import detect_anomaly, is_anomaly_enabled, set_detect_anomaly
from . import forward_ad, functional, graph, profiler, profiler_util


def _tensors(x):
    if x is None:
        return []
    if isinstance(x, _C.TensorBase):
        return [x]
    return list(x)


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False, inputs=None):
    """Accumulates gradients of `tensors` into the .grad of the leaves."""
    tensors = _tensors(tensors)
    if inputs is not None:
        return _backward_into(tensors, grad_tensors, retain_graph, create_graph, inputs)
    grads = _tensors(grad_tensors) or [None] * len(tensors)
    if len(grads) != len(tensors):
        raise RuntimeError(f"got {len(grads)} gradients for {len(tensors)} tensors")
    _check_grad_shapes(tensors, grads)
    if retain_graph is None:
        retain_graph = create_graph
    from ..sparse._grad import backward_pass
    anomaly_mode.nan_check_roots(tensors)
    with backward_pass(collect=True):  # sparse gradients (embedding(sparse=True)) reach .grad at the end
        _C._backward(tensors, grads, bool(retain_graph), bool(create_graph))


def _check_grad_shapes(outputs, grads):
    """torch's _make_grads: a given gradient has its output's shape (torch.Size in the message)."""
    from .._size import Size
    for i, (out, g) in enumerate(zip(outputs, grads)):
        if isinstance(g, _C.TensorBase) and isinstance(out, _C.TensorBase) and tuple(g.shape) != tuple(out.shape):
            raise RuntimeError(f"Mismatch in shape: grad_output[{i}] has a shape of {Size(g.shape)} and "
                               f"output[{i}] has a shape of {Size(out.shape)}.")


def _unique(tensors):
    """The tensors without repeats (by identity), in order: torch accumulates into each input once."""
    seen, out = set(), []
    for t in tensors:
        if id(t) not in seen:
            seen.add(id(t))
            out.append(t)
    return out


def _backward_into(tensors, grad_tensors, retain_graph, create_graph, inputs):
    """backward(inputs=...): the gradients reach only `inputs` (leaves or not), accumulated into their
    .grad; an input the outputs do not depend on keeps its .grad."""
    inputs = _unique(_tensors(inputs))
    if not inputs:
        raise RuntimeError("'inputs' argument to backward() cannot be empty.")
    grads = _tensors(grad_tensors) or [None] * len(tensors)
    if len(grads) != len(tensors):
        raise RuntimeError(f"got {len(grads)} gradients for {len(tensors)} tensors")
    _check_grad_shapes(tensors, grads)
    if retain_graph is None:
        retain_graph = create_graph
    from ..sparse._grad import accumulate, backward_pass
    from ..sparse import SparseCooTensor
    anomaly_mode.nan_check_roots(tensors)
    with backward_pass(collect=False, inputs=inputs) as sparse_pass:  # embedding(sparse=True): sparse grads
        results = _C._grad(tensors, inputs, grads, bool(retain_graph), bool(create_graph), True)
    results = sparse_pass.merge(inputs, results, allow_unused=True)
    for t, g in zip(inputs, results):
        if g is None:
            continue
        if isinstance(g, SparseCooTensor):  # torch's AccumulateGrad rules for a sparse gradient
            accumulate(t, g)
            continue
        if not create_graph:
            g = g.detach()
        if t.grad is None:
            t.grad = g if create_graph else g.clone()
        else:
            t.grad = t.grad + g
    return None


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False, only_inputs=True,
         allow_unused=None, is_grads_batched=False, materialize_grads=False):
    """Returns the gradients of `outputs` with respect to `inputs` (a tuple), without touching .grad.

    torch's parameters in torch's order: only_inputs (deprecated, ignored with torch's warning when False)
    comes before allow_unused; is_grads_batched takes each grad_output's first dimension as a batch of
    vectors (computed one vector at a time here) and stacks the results; materialize_grads gives zeros for
    inputs the outputs do not reach (and implies allow_unused)."""
    if not only_inputs:
        warnings.warn("only_inputs argument is deprecated and is ignored now "
                      "(defaults to True). To accumulate gradient for other "
                      "parts of the graph, please use torch.autograd.backward.")
    if materialize_grads and allow_unused is False:
        raise ValueError("Expected allow_unused to be True or not passed when materialize_grads=True, "
                         "but got: allow_unused=False.")
    if allow_unused is None:
        allow_unused = materialize_grads
    outputs = _tensors(outputs)
    inputs = _tensors(inputs)
    grads = _tensors(grad_outputs) or [None] * len(outputs)
    if len(grads) != len(outputs):
        raise RuntimeError(f"grad_outputs has {len(grads)} tensors for {len(outputs)} outputs")
    if not is_grads_batched:
        _check_grad_shapes(outputs, grads)
    if not inputs:
        raise ValueError("grad requires non-empty inputs.")
    if retain_graph is None:
        retain_graph = create_graph
    from ..sparse._grad import backward_pass
    anomaly_mode.nan_check_roots(outputs)
    # embedding(sparse=True): the sparse gradients of weights among the inputs are returned sparse, as
    # torch's (with is_grads_batched, dense: each row is a separate pass)
    with backward_pass(collect=False, inputs=None if is_grads_batched else inputs) as sparse_pass:
        if is_grads_batched:
            if any(g is None for g in grads):
                raise RuntimeError("is_grads_batched=True needs a grad_output for every output")
            n = grads[0].shape[0]
            rows = [_C._grad(outputs, inputs, [g[i] for g in grads], True if i < n - 1 else bool(retain_graph),
                             bool(create_graph), bool(allow_unused)) for i in range(n)]
            from .. import stack
            result = tuple(None if rows[0][j] is None else stack([r[j] for r in rows]) for j in range(len(inputs)))
        else:
            result = _C._grad(outputs, inputs, grads, bool(retain_graph), bool(create_graph), True)
            result = sparse_pass.merge(inputs, result, bool(allow_unused))
    if materialize_grads:
        from .. import zeros_like
        result = tuple(zeros_like(x) if g is None else g for g, x in zip(result, inputs))
    return result


class _VariableMeta(type):
    def __instancecheck__(cls, other):
        return isinstance(other, _C.TensorBase)


class Variable(metaclass=_VariableMeta):
    """torch.autograd.Variable, kept for old scripts as torch keeps it: Variable(t) is t detached (sharing
    its data) with requires_grad set; every tensor is an instance of Variable."""

    def __new__(cls, data=None, requires_grad=False, volatile=False):
        if volatile:
            import warnings
            warnings.warn("volatile was removed and now has no effect. Use `with torch.no_grad():` instead.",
                          stacklevel=2)
        if data is None:
            return _C.empty([0]).requires_grad_(requires_grad)
        if not isinstance(data, _C.TensorBase):
            raise TypeError(f"Variable data has to be a tensor, but got {type(data).__name__}")
        return data.detach().requires_grad_(requires_grad)


__all__ = ["Variable", "Function", "backward", "grad", "no_grad", "enable_grad", "set_grad_enabled", "gradcheck", "gradgradcheck",
           "detect_anomaly", "set_detect_anomaly", "is_anomaly_enabled"]


def is_tensor_like(inp):
    """Whether inp is a Tensor or defines __torch_function__ (torch.overrides.is_tensor_like)."""
    return isinstance(inp, _C.TensorBase) or hasattr(type(inp), "__torch_function__")
