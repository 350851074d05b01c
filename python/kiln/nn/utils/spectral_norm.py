"""kiln.nn.utils.spectral_norm / remove_spectral_norm: torch 1.13's hook-based spectral normalization
(Miyato et al., 2018): weight = weight_orig / sigma, sigma estimated by power iteration on the
weight reshaped to a matrix, u and v kept as buffers (weight_u, weight_v) and advanced in training.
u and v start as normalized normal draws from the default generator, in torch's order, so a seeded
run gives torch's values."""
import kiln

from ..parameter import Parameter


def _normalize(x, eps):
    return x / x.norm(2).clamp_min(eps)


class SpectralNorm:
    """The forward pre-hook that recomputes module.<name> from <name>_orig, <name>_u and <name>_v."""
    _version = 1

    def __init__(self, name="weight", n_power_iterations=1, dim=0, eps=1e-12):
        self.name = name
        self.dim = dim
        if n_power_iterations <= 0:
            raise ValueError("Expected n_power_iterations to be positive, but "
                             f"got n_power_iterations={n_power_iterations}")
        self.n_power_iterations = n_power_iterations
        self.eps = eps

    def reshape_weight_to_matrix(self, weight):
        weight_mat = weight
        if self.dim != 0:
            weight_mat = weight_mat.permute(self.dim, *[d for d in range(weight_mat.dim()) if d != self.dim])
        return weight_mat.reshape(weight_mat.size(0), -1)

    def compute_weight(self, module, do_power_iteration):
        weight = getattr(module, self.name + "_orig")
        u = getattr(module, self.name + "_u")
        v = getattr(module, self.name + "_v")
        weight_mat = self.reshape_weight_to_matrix(weight)
        if do_power_iteration:
            with kiln.no_grad():
                for _ in range(self.n_power_iterations):
                    # in place, as torch's normalize(..., out=v): the buffers advance
                    v.copy_(_normalize(kiln.mv(weight_mat.t(), u), self.eps))
                    u.copy_(_normalize(kiln.mv(weight_mat, v), self.eps))
                u = u.clone()
                v = v.clone()
        sigma = kiln.dot(u, kiln.mv(weight_mat, v))
        return weight / sigma

    def remove(self, module):
        with kiln.no_grad():
            weight = self.compute_weight(module, do_power_iteration=False)
        delattr(module, self.name)
        delattr(module, self.name + "_u")
        delattr(module, self.name + "_v")
        delattr(module, self.name + "_orig")
        module.register_parameter(self.name, Parameter(weight.detach()))

    def __call__(self, module, inputs):
        setattr(module, self.name, self.compute_weight(module, do_power_iteration=module.training))

    @staticmethod
    def apply(module, name, n_power_iterations, dim, eps):
        for hook in module._hook_dict("_forward_pre_hooks").values():
            if isinstance(hook, SpectralNorm) and hook.name == name:
                raise RuntimeError(f"Cannot register two spectral_norm hooks on the same parameter {name}")
        fn = SpectralNorm(name, n_power_iterations, dim, eps)
        weight = module._parameters.get(name)
        if weight is None:
            raise ValueError(f"`SpectralNorm` cannot be applied as parameter `{name}` is None")
        with kiln.no_grad():
            weight_mat = fn.reshape_weight_to_matrix(weight)
            h, w = weight_mat.size()
            u = _normalize(weight.new_empty(h).normal_(0, 1), fn.eps)
            v = _normalize(weight.new_empty(w).normal_(0, 1), fn.eps)
        delattr(module, fn.name)
        module.register_parameter(fn.name + "_orig", weight)
        setattr(module, fn.name, weight.data)
        module.register_buffer(fn.name + "_u", u)
        module.register_buffer(fn.name + "_v", v)
        module.register_forward_pre_hook(fn)
        return fn


def spectral_norm(module, name="weight", n_power_iterations=1, eps=1e-12, dim=None):
    """Applies spectral normalization to module.<name> (dim: the output dim, 1 for ConvTranspose, else 0);
    returns the module."""
    if dim is None:
        from ..modules import conv
        transposed = tuple(getattr(conv, c) for c in ("ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d")
                           if hasattr(conv, c))
        dim = 1 if transposed and isinstance(module, transposed) else 0
    SpectralNorm.apply(module, name, n_power_iterations, dim, eps)
    return module


def remove_spectral_norm(module, name="weight"):
    """Folds the normalized weight back into a plain parameter <name>; returns the module."""
    hooks = module._hook_dict("_forward_pre_hooks")
    for k, hook in hooks.items():
        if isinstance(hook, SpectralNorm) and hook.name == name:
            hook.remove(module)
            del hooks[k]
            return module
    raise ValueError(f"spectral_norm of '{name}' not found in {module}")
