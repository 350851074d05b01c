"""Activation checkpointing, as torch.utils.checkpoint: run a piece of the model without keeping its
intermediate results, and run it again during backward to get them.

    y = checkpoint(block, x, use_reentrant=False)
    y = checkpoint_sequential(model, segments=2, input=x, use_reentrant=False)

The forward pass runs under no_grad, so nothing inside `function` is saved for backward. One graph
node (an autograd.Function) stands for the whole call: its backward restores the random state the
forward started from (so dropout draws the same masks), runs `function` again with grad enabled,
and back-propagates through that fresh graph, which fills the .grad of the parameters it used and
returns the gradients of the inputs.

Both of torch's variants give the same gradients here:
- use_reentrant=True (torch's default when not given, with a warning): keyword arguments are
  refused, outputs are tensors or tuples of them, and nothing reaches the parameters when no input
  requires grad (torch warns then).
- use_reentrant=False: keyword arguments and any nesting of outputs (dicts, lists) are allowed,
  and parameters get gradients even when no input requires grad. torch does this with saved-tensor
  hooks; kiln gives the node one extra input that requires grad when `function` can reach a tensor
  that requires grad (a Module's parameters, or tensors in its closure, defaults or the globals it
  names), so the node runs in backward in that case too.
"""
import contextlib
import functools
import types
import warnings

from .. import _C
from ..autograd.function import Function
from ..amp.autocast_mode import autocast
from ..autograd.grad_mode import enable_grad, no_grad
from ..random import fork_rng, get_rng_state, set_rng_state
from ._pytree import tree_flatten, tree_unflatten

__all__ = ["checkpoint", "checkpoint_sequential"]

_REENTRANT_WARNING = (
    "torch.utils.checkpoint: the use_reentrant parameter should be passed explicitly. In version 2.5 we "
    "will raise an exception if use_reentrant is not passed. use_reentrant=False is recommended, but if you "
    "need to preserve the current default behavior, you can pass use_reentrant=True. Refer to docs for more "
    "details on the differences between the two variants.")


def noop_context_fn():
    return contextlib.nullcontext(), contextlib.nullcontext()


def _is_tensor(x):
    return isinstance(x, _C.TensorBase)


def _detached_like(args):
    """The tensor args detached, requiring grad as they did (the recomputation's own leaves)."""
    out = []
    for a in args:
        if _is_tensor(a):
            d = a.detach()
            d.requires_grad_(a.requires_grad)
            out.append(d)
        else:
            out.append(a)
    return out


def _save_call(ctx, run_function, preserve_rng_state, args, kwargs, recompute_context):
    """What the recomputation needs: the function, its arguments (tensors saved for backward, so an
    in-place change before backward is caught), and the random and autocast state of this forward."""
    ctx.run_function = run_function
    ctx.kwargs = kwargs
    ctx.recompute_context = recompute_context
    ctx.preserve_rng_state = preserve_rng_state
    ctx.rng_state = get_rng_state() if preserve_rng_state else None
    ctx.autocast = (_C._is_autocast_cpu_enabled(), _C._get_autocast_cpu_dtype())
    ctx.inputs = [None if _is_tensor(a) else a for a in args]
    ctx.tensor_indices = [i for i, a in enumerate(args) if _is_tensor(a)]
    ctx.save_for_backward(*[a for a in args if _is_tensor(a)])


def _recompute(ctx):
    """Runs ctx's function again on fresh leaves, in the random and autocast state of the forward:
    (the leaves, the outputs)."""
    args = list(ctx.inputs)
    for i, t in zip(ctx.tensor_indices, ctx.saved_tensors):
        args[i] = t
    inputs = _detached_like(args)
    with fork_rng(enabled=ctx.preserve_rng_state):
        if ctx.preserve_rng_state:
            set_rng_state(ctx.rng_state)
        enabled, dtype = ctx.autocast
        with enable_grad(), autocast("cpu", enabled=enabled, dtype=dtype), ctx.recompute_context:
            outputs = ctx.run_function(*inputs, **ctx.kwargs)
    return inputs, outputs


def _input_grads(inputs):
    return tuple(i.grad if _is_tensor(i) else None for i in inputs)


def _backward_through(outputs, grads):
    """Back-propagates grads through those outputs that require grad; False when none does."""
    pairs = [(o, g) for o, g in zip(outputs, grads) if _is_tensor(o) and o.requires_grad]
    if not pairs:
        return False
    from .. import autograd
    autograd.backward([o for o, _ in pairs], [g for _, g in pairs])
    return True


class CheckpointFunction(Function):
    """torch's reentrant checkpoint node: forward(run_function, preserve_rng_state, *args)."""

    @staticmethod
    def forward(ctx, run_function, preserve_rng_state, *args):
        if not any(_is_tensor(a) and a.requires_grad for a in args):
            warnings.warn("None of the inputs have requires_grad=True. Gradients will be None")
        _save_call(ctx, run_function, preserve_rng_state, args, {}, contextlib.nullcontext())
        with no_grad():
            return run_function(*args)

    @staticmethod
    def backward(ctx, *grads):
        inputs, outputs = _recompute(ctx)
        outputs = outputs if isinstance(outputs, tuple) else (outputs,)
        if not _backward_through(outputs, grads):
            raise RuntimeError("none of output has requires_grad=True, this checkpoint() is not necessary")
        return (None, None) + _input_grads(inputs)


class _NonReentrantCheckpoint(Function):
    """forward(spec_box, run_function, preserve_rng_state, kwargs, contexts, anchor, *args): `anchor`
    (a 0-dim tensor that requires grad, or None) makes the node run when only parameters need
    gradients; the outputs are returned flattened (spec_box receives their structure)."""

    @staticmethod
    def forward(ctx, spec_box, run_function, preserve_rng_state, kwargs, contexts, anchor, *args):
        forward_context, recompute_context = contexts
        _save_call(ctx, run_function, preserve_rng_state, args, kwargs, recompute_context)
        with no_grad(), forward_context:
            outputs = run_function(*args, **kwargs)
        leaves, spec = tree_flatten(outputs)
        spec_box.append(spec)
        return tuple(leaves)

    @staticmethod
    def backward(ctx, *grads):
        inputs, outputs = _recompute(ctx)
        _backward_through(tree_flatten(outputs)[0], grads)
        return (None, None, None, None, None, None) + _input_grads(inputs)


def _reaches_grad(obj, depth=0, seen=None):
    """Whether `obj` (a function, Module, tensor or container) can reach a tensor that requires grad."""
    from ..nn.modules.module import Module
    seen = set() if seen is None else seen
    if id(obj) in seen or depth > 3:
        return False
    seen.add(id(obj))
    if _is_tensor(obj):
        return obj.requires_grad
    if isinstance(obj, Module):
        return any(p.requires_grad for p in obj.parameters())
    if isinstance(obj, (list, tuple, set)):
        return any(_reaches_grad(o, depth + 1, seen) for o in obj)
    if isinstance(obj, dict):
        return any(_reaches_grad(o, depth + 1, seen) for o in obj.values())
    if isinstance(obj, types.ModuleType):  # a global module (`torch.` in the function): not its state
        return False
    parts = []
    if hasattr(obj, "__self__"):  # a bound method
        parts.append(obj.__self__)
    if isinstance(obj, functools.partial):  # (a module has a `func` attribute too: kiln.func)
        parts += [obj.func, list(obj.args), dict(obj.keywords or {})]
    code = getattr(obj, "__code__", None)
    if code is not None:
        parts += [c.cell_contents for c in (obj.__closure__ or ()) if _cell_has_value(c)]
        parts += list(obj.__defaults__ or ()) + list((obj.__kwdefaults__ or {}).values())
        globs = getattr(obj, "__globals__", {})
        parts += [globs[n] for n in code.co_names if n in globs]
    if callable(obj) and not parts and hasattr(obj, "__dict__"):  # a callable object
        parts.append(vars(obj))
    return any(_reaches_grad(p, depth + 1, seen) for p in parts)


def _cell_has_value(cell):
    try:
        cell.cell_contents
    except ValueError:
        return False
    return True


def checkpoint(function, *args, use_reentrant=None, context_fn=noop_context_fn, determinism_check="default",
               debug=False, preserve_rng_state=True, **kwargs):
    """function(*args, **kwargs), its intermediate results recomputed during backward instead of kept."""
    if use_reentrant is None:
        warnings.warn(_REENTRANT_WARNING, stacklevel=2)
        use_reentrant = True
    preserve = kwargs.pop("preserve_rng_state", preserve_rng_state)
    if use_reentrant:
        if kwargs:
            raise ValueError("Unexpected keyword arguments: " + ",".join(arg for arg in kwargs))
        if context_fn is not noop_context_fn or debug is not False:
            raise ValueError("Passing `context_fn` or `debug` is only supported when use_reentrant=False.")
        return CheckpointFunction.apply(function, preserve, *args)
    if determinism_check not in ("default", "none"):
        raise ValueError(f"determinism_check should be one of ['default', 'none'], but got {determinism_check}")
    if not _C.is_grad_enabled():
        return function(*args, **kwargs)
    any_input = any(_is_tensor(a) and a.requires_grad for a in args) or _reaches_grad(kwargs)
    anchor = None
    if not any_input and _reaches_grad(function):
        anchor = _C.zeros(()).requires_grad_()
    spec_box = []
    leaves = _NonReentrantCheckpoint.apply(spec_box, function, preserve, kwargs, context_fn(), anchor, *args)
    return tree_unflatten(list(leaves) if isinstance(leaves, tuple) else [leaves], spec_box[0])


def checkpoint_sequential(functions, segments, input, use_reentrant=None, **kwargs):
    """A Sequential (or list of functions) run in `segments` checkpointed pieces; the last piece runs
    normally, as torch's."""
    if use_reentrant is None:
        warnings.warn(_REENTRANT_WARNING, stacklevel=2)
        use_reentrant = True
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs:
        raise ValueError("Unexpected keyword arguments: " + ",".join(arg for arg in kwargs))
    from ..nn.modules.container import Sequential

    def run_function(start, end, functions):
        def forward(input):
            for j in range(start, end + 1):
                input = functions[j](input)
            return input
        return forward

    if isinstance(functions, Sequential):
        functions = list(functions.children())
    segment_size = len(functions) // segments
    end = -1
    for start in range(0, segment_size * (segments - 1), segment_size):
        end = start + segment_size - 1
        input = checkpoint(run_function(start, end, functions), input, use_reentrant=use_reentrant,
                           preserve_rng_state=preserve)
    return run_function(end + 1, len(functions) - 1, functions)(input)
