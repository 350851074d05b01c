"""kiln.nn.utils: gradient clipping, weight and spectral normalization, (kiln.nn.utils.rnn) packed
sequences, parametrizations and (kiln.nn.utils.prune) pruning, as torch.nn.utils."""
import math

import kiln


def _grads(parameters):
    if isinstance(parameters, kiln.Tensor):
        parameters = [parameters]
    return [p.grad for p in parameters if p.grad is not None]


def get_total_norm(tensors, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    """The norm of the per-tensor norms of `tensors` (torch 2.6's first half of clip_grad_norm_)."""
    tensors = [tensors] if isinstance(tensors, kiln.Tensor) else list(tensors)
    norm_type = float(norm_type)
    if not tensors:
        return kiln.tensor(0.0)
    # a sparse gradient's norm is that of its coalesced values (torch's norm of a sparse tensor)
    tensors = [t.coalesce()._values() if t.is_sparse else t for t in tensors]
    with kiln.no_grad():
        if math.isinf(norm_type):
            norms = [t.detach().abs().max() if norm_type > 0 else t.detach().abs().min() for t in tensors]
            total = kiln.stack(norms).max() if norm_type > 0 else kiln.stack(norms).min()
        else:
            total = kiln.norm(kiln.stack([kiln.norm(t.detach(), norm_type) for t in tensors]), norm_type)
        if error_if_nonfinite and not math.isfinite(total.item()):
            raise RuntimeError(f"The total norm of order {norm_type} for gradients from `parameters` is non-finite, "
                               "so it cannot be clipped. To disable this error and scale the gradients by the "
                               "non-finite norm anyway, set `error_if_nonfinite=False`")
    return total


def clip_grads_with_norm_(parameters, max_norm, total_norm, foreach=None):
    """Scales the gradients in place by max_norm / (total_norm + 1e-6), at most 1 (torch 2.6's second half)."""
    grads = _grads(parameters)
    if not grads:
        return
    with kiln.no_grad():
        # as torch: the coefficient is a tensor, max_norm / (norm + 1e-6) clamped to 1
        coef = (float(max_norm) / (total_norm + 1e-6)).clamp(max=1.0)
        for g in grads:
            if g.is_sparse:
                # torch 1.13 scales g.detach(), which for a sparse gradient is a new tensor: the sparse
                # gradient keeps its values (its norm still counts in the total)
                continue
            g.mul_(coef)


def clip_grad_norm_(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    """Scales the gradients in place so that their joint norm is at most max_norm; returns the
    norm before clipping (the norm of the per-parameter norms, as torch)."""
    parameters = [parameters] if isinstance(parameters, kiln.Tensor) else list(parameters)
    grads = _grads(parameters)
    total = get_total_norm(grads, norm_type, error_if_nonfinite, foreach)
    clip_grads_with_norm_(parameters, max_norm, total, foreach)
    return total


def clip_grad_norm(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    """Deprecated alias of clip_grad_norm_ (torch warns the same way)."""
    import warnings
    warnings.warn("torch.nn.utils.clip_grad_norm is now deprecated in favor of torch.nn.utils.clip_grad_norm_.",
                  stacklevel=2)
    return clip_grad_norm_(parameters, max_norm, norm_type, error_if_nonfinite, foreach)


def parameters_to_vector(parameters):
    """Flattens and concatenates the parameters into one 1-D tensor (differentiable, as torch)."""
    vec = []
    for param in parameters:
        vec.append(param.view(-1))
    return kiln.cat(vec)


def vector_to_parameters(vec, parameters):
    """Copies slices of the 1-D tensor `vec` into the parameters' .data, in order."""
    if not isinstance(vec, kiln.Tensor):
        raise TypeError(f"expected torch.Tensor, but got: {type(vec).__name__}")
    pointer = 0
    for param in parameters:
        n = param.numel()
        param.data = vec[pointer:pointer + n].view_as(param).data
        pointer += n


def clip_grad_value_(parameters, clip_value, foreach=None):
    """Clamps every gradient element to [-clip_value, clip_value] in place."""
    with kiln.no_grad():
        for g in _grads(parameters):
            g.clamp_(-clip_value, clip_value)


__all__ = ["clip_grad_norm_", "clip_grad_norm", "get_total_norm", "clip_grads_with_norm_", "clip_grad_value_", "parameters_to_vector", "vector_to_parameters",
           "weight_norm", "remove_weight_norm", "spectral_norm", "remove_spectral_norm"]

from .spectral_norm import remove_spectral_norm, spectral_norm  # noqa: E402
from .weight_norm import remove_weight_norm, weight_norm  # noqa: E402
from . import rnn  # noqa: E402  (after the functions above: rnn imports kiln, which imports this package)
from . import parametrize  # noqa: E402
from . import parametrizations  # noqa: E402
from . import prune  # noqa: E402
from . import fusion, stateless  # noqa: E402
from .fusion import fuse_conv_bn_eval, fuse_conv_bn_weights, fuse_linear_bn_eval, fuse_linear_bn_weights  # noqa: E402

__all__ += ["fuse_conv_bn_eval", "fuse_conv_bn_weights", "fuse_linear_bn_eval", "fuse_linear_bn_weights", "stateless"]

from .memory_format import convert_conv2d_weight_memory_format, skip_init  # noqa: E402,F401

# the submodules torch's nn.utils exposes as attributes (torch.nn.utils.clip_grad.clip_grad_norm_, ...)
from . import clip_grad, convert_parameters, init  # noqa: E402,F401
