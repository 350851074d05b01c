"""torch.autograd.forward_ad: dual tensors (make_dual, unpack_dual, dual_level), computed by reverse mode.

kiln has no forward-mode engine. A dual tensor here is the primal made a fresh autograd input, and
``unpack_dual(y).tangent`` is the Jacobian-vector product computed by the double-backward trick
(as ``torch.autograd.functional.jvp``): ``g = grad(y, duals, u, create_graph=True)`` is linear in ``u``,
and ``grad(g, u, tangents)`` is J t. The values are forward mode's; what differs from torch:

* the function must be twice differentiable in kiln (every op with a derivative formula is), and each
  ``unpack_dual`` of a computed tensor runs two backward passes;
* forward gradients propagate through ops recorded by autograd only, so ``make_dual`` refuses to run
  with grad mode off (``RuntimeError``; torch's forward AD also works under ``no_grad``);
* a dual tensor requires grad (torch's keeps the primal's requires_grad), and ``unpack_dual`` of a
  computed tensor returns it detached as the primal unless a primal required grad.
* one level at a time, as torch 1.13 (nested levels raise).
"""
from collections import namedtuple

from .. import _C

__all__ = ["UnpackedDualTensor", "enter_dual_level", "exit_dual_level", "make_dual", "unpack_dual", "dual_level"]

_current_level = -1
_levels = {}  # level -> {"duals": [(dual, primal, tangent)]}
_next_level = 0


class UnpackedDualTensor(namedtuple("_UnpackedDualTensor", ["primal", "tangent"])):
    """The (primal, tangent) of a dual tensor; tangent is None when the tensor carries none."""


def enter_dual_level():
    """Enters a new forward-grad level and returns its index (torch's one-level rule)."""
    global _current_level, _next_level
    if _current_level >= 0:
        raise RuntimeError("Nested forward mode AD is not supported at the moment")
    _current_level = _next_level
    _next_level += 1
    _levels[_current_level] = []
    return _current_level


def exit_dual_level(*, level=None):
    """Leaves the level: its dual tensors no longer carry tangents."""
    global _current_level
    if level is None:
        level = _current_level
    if level != _current_level:
        raise RuntimeError("Trying to exit a forward AD level that was not the last one that was created. "
                           "This is not supported.")
    if level < 0:  # no level entered
        raise RuntimeError("Dual level must be a positive number.")
    _levels.pop(level, None)
    _current_level = -1


def _level(level):
    return _current_level if level is None else level


def make_dual(tensor, tangent, *, level=None):
    """A dual tensor: tensor's values, carrying `tangent` as its forward gradient at this level."""
    level = _level(level)
    if level < 0 or level not in _levels:
        raise RuntimeError("Trying to create a dual Tensor for forward AD but no level exists, make sure to "
                           "enter_dual_level() first.")
    if not (tensor.is_floating_point() and tangent.is_floating_point()):
        raise ValueError(f"Expected primal to be floating point or complex, but got: {tensor.dtype}"
                         if not tensor.is_floating_point()
                         else f"Expected tangent to be floating point or complex, but got: {tangent.dtype}")
    if tangent.shape != tensor.shape:
        raise RuntimeError("Trying to set a forward gradient that has a different size than that of the original "
                           f"Tensor, this is not supported. Tensor is of size {list(tensor.shape)} while the given "
                           f"forward gradient is of size {list(tangent.shape)}.")
    if any(dual is tensor for dual, _, _ in _levels[level]):
        raise RuntimeError(f"Making a dual Tensor based on a Tensor that already has a forward gradient at the same "
                           f"level {level} is not supported.")
    if not _C.is_grad_enabled():
        raise RuntimeError("kiln computes forward-mode gradients through autograd (the double-backward trick): "
                           "make_dual needs grad mode enabled; kiln cannot run forward AD under no_grad yet")
    dual = tensor.view_as(tensor) if tensor.requires_grad else tensor.detach().requires_grad_(True)
    _levels[level].append((dual, tensor, tangent))
    return dual


def unpack_dual(tensor, *, level=None):
    """(primal, tangent) of a tensor at the level; tangent is None when it does not depend on a dual tensor."""
    level = _level(level)
    duals = _levels.get(level) if level >= 0 else None
    if not duals:
        return UnpackedDualTensor(tensor, None)
    for dual, primal, tangent in duals:
        if dual is tensor:
            return UnpackedDualTensor(primal, tangent)
    keep = any(primal.requires_grad for _, primal, _ in duals)
    primal_out = tensor if keep else tensor.detach()
    if not isinstance(tensor, _C.TensorBase) or not tensor.requires_grad:
        return UnpackedDualTensor(primal_out, None)
    from . import grad
    from .grad_mode import enable_grad
    with enable_grad():
        u = _C.zeros_like(tensor, requires_grad=True)
        inputs = [d for d, _, _ in duals]
        gs = grad([tensor], inputs, [u], create_graph=True, allow_unused=True)
        pairs = [(g, t) for g, (_, _, t) in zip(gs, duals) if g is not None and g.requires_grad]
        if not pairs:
            if all(g is None for g in gs):
                return UnpackedDualTensor(primal_out, None)
            return UnpackedDualTensor(primal_out, _C.zeros_like(tensor))
        jv = grad([g for g, _ in pairs], [u], [t for _, t in pairs], allow_unused=True)[0]
    if jv is None:
        jv = _C.zeros_like(tensor)
    return UnpackedDualTensor(primal_out, jv if keep else jv.detach())


class dual_level:
    """Context manager (and decorator) for one forward-AD level: `with dual_level(): ...`."""

    def __enter__(self):
        return enter_dual_level()

    def __exit__(self, exc_type, exc_value, traceback):
        exit_dual_level()
        return False

    def __call__(self, fn):
        import functools

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with dual_level():
                return fn(*args, **kwargs)
        return wrapper
