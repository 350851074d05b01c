"""kiln.nn.utils.weight_norm / remove_weight_norm: torch 1.13's hook-based weight normalization
(Salimans & Kingma, 2016): weight = g * v / ||v||, the norm over every dim but `dim`."""
import kiln

from ..parameter import Parameter


def norm_except_dim(v, pow=2, dim=0):
    """The `pow`-norm of v over every dim but `dim`, shaped to broadcast against v (dim -1: one norm)."""
    if dim == -1:
        return v.norm(pow)
    if dim == 0:
        return v.contiguous().view(v.size(0), -1).norm(pow, dim=1).view(v.size(0), *([1] * (v.dim() - 1)))
    if dim == v.dim() - 1:
        return v.contiguous().view(-1, v.size(-1)).norm(pow, dim=0).view(*([1] * (v.dim() - 1)), v.size(-1))
    return norm_except_dim(v.transpose(0, dim), pow, 0).transpose(0, dim)


def _weight_norm(v, g, dim=0):
    return v * (g / norm_except_dim(v, 2, dim))


class WeightNorm:
    """The forward pre-hook that recomputes module.<name> from <name>_g and <name>_v."""

    def __init__(self, name, dim):
        self.name = name
        self.dim = -1 if dim is None else dim

    def compute_weight(self, module):
        return _weight_norm(getattr(module, self.name + "_v"), getattr(module, self.name + "_g"), self.dim)

    @staticmethod
    def apply(module, name, dim):
        for hook in module._hook_dict("_forward_pre_hooks").values():
            if isinstance(hook, WeightNorm) and hook.name == name:
                raise RuntimeError(f"Cannot register two weight_norm hooks on the same parameter {name}")
        fn = WeightNorm(name, dim)
        weight = getattr(module, name)
        del module._parameters[name]
        module.register_parameter(name + "_g", Parameter(norm_except_dim(weight, 2, fn.dim).data))
        module.register_parameter(name + "_v", Parameter(weight.data))
        setattr(module, name, fn.compute_weight(module))
        module.register_forward_pre_hook(fn)
        return fn

    def remove(self, module):
        with kiln.no_grad():
            weight = self.compute_weight(module)
        delattr(module, self.name)
        del module._parameters[self.name + "_g"]
        del module._parameters[self.name + "_v"]
        setattr(module, self.name, Parameter(weight.data))

    def __call__(self, module, inputs):
        setattr(module, self.name, self.compute_weight(module))


def weight_norm(module, name="weight", dim=0):
    """Replaces module.<name> by <name>_g (its norm over every dim but `dim`; dim=None: one norm) and
    <name>_v (its direction), recomputing the weight before every forward; returns the module."""
    WeightNorm.apply(module, name, dim)
    return module


def remove_weight_norm(module, name="weight"):
    """Folds <name>_g and <name>_v back into a plain parameter <name>; returns the module."""
    hooks = module._hook_dict("_forward_pre_hooks")
    for k, hook in hooks.items():
        if isinstance(hook, WeightNorm) and hook.name == name:
            hook.remove(module)
            del hooks[k]
            return module
    raise ValueError(f"weight_norm of '{name}' not found in {module}")
