"""Module.register_full_backward_hook / register_full_backward_pre_hook, as torch's BackwardHook: the
module's positional tensor inputs and its tensor outputs pass through identity autograd Functions
around forward. When the outputs' gradients arrive, the pre-hooks run (hook(module, grad_output),
which may replace them); when the gradients with respect to the inputs are ready, the hooks run
(hook(module, grad_input, grad_output), which may replace grad_input). grad_input has one entry per
positional argument that is a tensor (None where it needs no gradient); when no input requires
grad, the hooks run as soon as grad_output is known, with grad_input all None."""
from ... import _C
from ...autograd.function import Function


def _is_tensor(x):
    return isinstance(x, _C.TensorBase)


class _Identity(Function):
    """apply(on_backward, *tensors) returns the tensors; backward hands their gradients to
    on_backward, whose result (a tuple of the same length) flows on."""

    @staticmethod
    def forward(ctx, on_backward, *tensors):
        ctx.on_backward = on_backward
        ctx.set_materialize_grads(False)
        ctx.mark_non_differentiable(*[t for t in tensors if not t.requires_grad])
        return tensors

    @staticmethod
    def backward(ctx, *grads):
        return (None,) + tuple(ctx.on_backward(grads))


class BackwardHook:
    def __init__(self, module, hooks, pre_hooks):
        self.module = module
        self.hooks = hooks
        self.pre_hooks = pre_hooks
        self.grad_outputs = None
        self.n_inputs = 0
        self.input_index = []
        self.inputs_need_grad = False

    @staticmethod
    def _pack(indices, values, size):
        packed = [None] * size
        for i, v in zip(indices, values):
            packed[i] = v
        return tuple(packed)

    @staticmethod
    def _chain(hooks, call, grads, what, grads_name):
        """Each hook's non-None result (as many gradients as `grads`) replaces grads for the next."""
        for hook in hooks:
            result = call(hook, grads)
            if result is None:
                continue
            result = tuple(result) if isinstance(result, (tuple, list)) else (result,)
            if len(result) != len(grads):
                raise RuntimeError(f"{what} returned an invalid number of {grads_name}, got {len(result)}, but "
                                   f"expected {len(grads)}")
            grads = result
        return grads

    def _run_hooks(self, grad_input):
        return self._chain(self.hooks, lambda hook, g: hook(self.module, g, self.grad_outputs), grad_input,
                           "Backward hook", "grad_input")

    def setup_input_hook(self, args):
        self.n_inputs = len(args)
        self.input_index = [i for i, a in enumerate(args) if _is_tensor(a)]
        self.inputs_need_grad = _C.is_grad_enabled() and any(args[i].requires_grad for i in self.input_index)
        if not self.inputs_need_grad or not self.hooks:
            return args

        def on_backward(grads):
            if self.grad_outputs is None:  # the outputs' gradients never came through this call
                return grads
            packed = self._run_hooks(self._pack(self.input_index, grads, self.n_inputs))
            self.grad_outputs = None
            return tuple(packed[i] for i in self.input_index)

        wrapped = _Identity.apply(on_backward, *[args[i] for i in self.input_index])
        wrapped = wrapped if isinstance(wrapped, tuple) else (wrapped,)
        args = list(args)
        for i, t in zip(self.input_index, wrapped):
            args[i] = t
        return tuple(args)

    def setup_output_hook(self, output):
        single = _is_tensor(output)
        outputs = (output,) if single else output
        if not isinstance(outputs, tuple):
            return output
        index = [i for i, o in enumerate(outputs) if _is_tensor(o)]
        if not _C.is_grad_enabled() or not any(outputs[i].requires_grad for i in index):
            return output

        # the closure keeps the count, not `outputs`: that list ends up holding the wrapped outputs, whose node
        # holds this closure, a cycle through C++ that took two garbage collections to free
        n_outputs = len(outputs)

        def on_backward(grads):
            packed = self._chain(self.pre_hooks, lambda hook, g: hook(self.module, g),
                                 self._pack(index, grads, n_outputs), "Backward pre hook", "grad_output")
            self.grad_outputs = packed
            if not self.inputs_need_grad and self.hooks:  # no input gradient will come: run them now
                grad_input = tuple([None] * self.n_inputs)
                for hook in self.hooks:
                    result = hook(self.module, grad_input, packed)
                    if result is not None and not (isinstance(result, tuple) and all(r is None for r in result)):
                        raise RuntimeError("Backward hook for Modules where no input requires gradient should "
                                           "always return None or None for all gradients.")
                self.grad_outputs = None
            return tuple(packed[i] for i in index)

        wrapped = _Identity.apply(on_backward, *[outputs[i] for i in index])
        wrapped = wrapped if isinstance(wrapped, tuple) else (wrapped,)
        outputs = list(outputs)
        for i, t in zip(index, wrapped):
            outputs[i] = t
        return outputs[0] if single else tuple(outputs)
