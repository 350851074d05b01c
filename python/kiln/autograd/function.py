"""kiln.autograd.Function: differentiable operations written in Python, as torch.autograd.Function.

    class Exp(Function):
        @staticmethod
        def forward(ctx, x):
            y = x.exp()
            ctx.save_for_backward(y)
            return y

        @staticmethod
        def backward(ctx, grad):
            (y,) = ctx.saved_tensors
            return grad * y

    y = Exp.apply(x)

`apply` runs `forward` with grad mode off, then `ctx._wrap_outputs` (runtime/python/python_function.cc)
makes one graph node the grad_fn of the outputs; the engine calls `backward` through it. The ctx
(an instance of `ExpBackward`, made per Function class) is also what `y.grad_fn` returns.
"""
import functools

from .. import _C
from .grad_mode import no_grad


class FunctionCtx:
    """What forward and backward share: saved tensors, flags, and any attribute you set on it."""

    def save_for_backward(self, *tensors):
        """Saves tensors (or None) for backward, read back as ctx.saved_tensors.

        Saved tensors are checked: modifying one in place before backward raises there. A sparse COO
        tensor is saved as its indices and values (the node saves dense tensors only) and rebuilt.
        """
        self.to_save, self._sparse_saved = _split_sparse(tensors)

    def mark_dirty(self, *tensors):
        """Declares the inputs forward modified in place (they must be returned as outputs)."""
        self.dirty_tensors = tensors

    def mark_non_differentiable(self, *tensors):
        """Declares outputs that have no gradient: they don't require grad, and backward gets
        zeros for them (None after set_materialize_grads(False))."""
        self.non_differentiable = tensors

    def set_materialize_grads(self, value):
        """Whether gradients of unused outputs reach backward as zeros (the default) or as None."""
        self.materialize_grads = bool(value)


class BackwardCFunction(_C._FunctionBase, FunctionCtx):
    """The base of every Function's ctx class; the graph node calls `apply` with the output gradients."""

    def apply(self, *grad_outputs):
        return self._forward_cls.backward(self, *grad_outputs)

    @property
    def saved_tensors(self):
        saved = _C._FunctionBase.saved_tensors.__get__(self)
        sparse = getattr(self, "_sparse_saved", None)
        return _join_sparse(saved, sparse) if sparse else saved


def _split_sparse(tensors):
    """save_for_backward's tensors with each sparse one replaced by its indices and values, and what
    rebuilds it: (position in the saved list, size, coalesced) per sparse tensor."""
    from ..sparse import SparseCooTensor
    flat, sparse = [], []
    for t in tensors:
        if isinstance(t, SparseCooTensor):
            sparse.append((len(flat), t.shape, t.is_coalesced()))
            flat += [t._indices(), t._values()]
        else:
            flat.append(t)
    return tuple(flat), sparse


def _join_sparse(saved, sparse):
    from ..sparse import SparseCooTensor
    out, start = [], 0
    for pos, size, coalesced in sparse:
        out += saved[start:pos]
        out.append(SparseCooTensor(saved[pos], saved[pos + 1], size, coalesced))
        start = pos + 2
    return tuple(out + list(saved[start:]))


class FunctionMeta(type):
    """Gives every Function class its ctx class, named `<Function>Backward` (the grad_fn's name)."""

    def __init__(cls, name, bases, attrs):
        cls._backward_cls = type(name + "Backward", (BackwardCFunction,), {"_forward_cls": cls})
        super().__init__(name, bases, attrs)


class Function(metaclass=FunctionMeta):
    """Subclass it with static `forward(ctx, *args)` and `backward(ctx, *grad_outputs)` (or
    `forward(*args)` plus `setup_context(ctx, inputs, output)`), then call `apply(*args)`."""

    def __call__(self, *args, **kwargs):
        raise RuntimeError("Legacy autograd function with non-static forward method is not supported. "
                           "Use a static forward method and call it with Function.apply(...)")

    @staticmethod
    def forward(*args, **kwargs):
        raise NotImplementedError("You must implement the forward function for custom autograd.Function.")

    @staticmethod
    def setup_context(ctx, inputs, output):
        raise NotImplementedError("setup_context is not implemented.")

    @staticmethod
    def backward(ctx, *grad_outputs):
        raise NotImplementedError("You must implement the backward function for custom autograd.Function.")

    @classmethod
    def apply(cls, *args):
        ctx = cls._backward_cls()
        # True for tensor inputs that require grad, whatever the grad mode (as in torch).
        ctx.needs_input_grad = tuple(isinstance(a, _C.TensorBase) and a.requires_grad for a in args)
        with no_grad():
            if cls.setup_context is Function.setup_context:
                outputs = cls.forward(ctx, *args)
            else:  # torch 2 style: forward without ctx
                outputs = cls.forward(*args)
                cls.setup_context(ctx, args, outputs)
        if isinstance(outputs, tuple):
            return ctx._wrap_outputs(args, outputs)
        return ctx._wrap_outputs(args, (outputs,))[0]


class DelayedError(Function):
    """Passes tensors through; differentiating its outputs raises `message` (once_differentiable)."""

    @staticmethod
    def forward(ctx, message, *tensors):
        ctx.message = message
        return tensors

    @staticmethod
    def backward(ctx, *grad_outputs):
        raise RuntimeError(ctx.message)


class InplaceFunction(Function):
    """torch.autograd.function.InplaceFunction: a Function whose instances carry an `inplace` flag (quantizers
    and in-place activations of older code subclass it)."""

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace


def once_differentiable(backward):
    """Decorates a backward that only works once: it runs without recording, and under
    create_graph=True its results raise when differentiated again."""

    @functools.wraps(backward)
    def wrapper(ctx, *grad_outputs):
        with no_grad():
            outputs = backward(ctx, *grad_outputs)
        if not (_C.is_grad_enabled() and any(isinstance(g, _C.TensorBase) and g.requires_grad
                                             for g in grad_outputs)):
            return outputs
        # Like torch, judged by the incoming gradients only: saved tensors are not seen here.
        single = not isinstance(outputs, tuple)
        outputs = (outputs,) if single else outputs
        fake = [o.detach().requires_grad_() if isinstance(o, _C.TensorBase) else o for o in outputs]
        guarded = DelayedError.apply("trying to differentiate twice a function that was marked with "
                                     "@once_differentiable", *fake)
        return guarded[0] if single else guarded

    return wrapper


__all__ = ["Function", "FunctionCtx", "once_differentiable"]
