"""kiln.nn.utils.prune: torch.nn.utils.prune. Pruning `name` of a module moves the parameter to
`name + '_orig'`, adds the buffer `name + '_mask'` and a forward pre-hook (the pruning method itself)
that recomputes the plain attribute `name = name_orig * name_mask` before every forward."""
import numbers
from abc import ABC, abstractmethod
from collections.abc import Iterable

import kiln


class BasePruningMethod(ABC):
    """A pruning method: compute_mask(t, default_mask) says which entries of t to keep."""
    _tensor_name: str

    def __init__(self):
        pass

    def __call__(self, module, inputs):
        """The forward pre-hook: recomputes the pruned tensor from its original and mask."""
        setattr(module, self._tensor_name, self.apply_mask(module))

    @abstractmethod
    def compute_mask(self, t, default_mask):
        """The mask for t, pruning further what default_mask keeps."""

    def apply_mask(self, module):
        """orig * mask for the tensor this method prunes."""
        assert self._tensor_name is not None, f"Module {module} has to be pruned"
        mask = getattr(module, self._tensor_name + "_mask")
        orig = getattr(module, self._tensor_name + "_orig")
        return mask.to(dtype=orig.dtype) * orig

    @classmethod
    def apply(cls, module, name, *args, importance_scores=None, **kwargs):
        """Prunes module.<name> with cls(*args, **kwargs), combined with earlier pruning of the same
        tensor in a PruningContainer; returns the method (the hook)."""
        old = [(k, hook) for k, hook in module._forward_pre_hooks.items()
               if isinstance(hook, BasePruningMethod) and hook._tensor_name == name]
        assert len(old) <= 1, (f"Avoid adding multiple pruning hooks to the same tensor {name} of module {module}. "
                               "Use a PruningContainer.")
        for k, _ in old:
            del module._forward_pre_hooks[k]
        old_method = old[0][1] if old else None
        method = cls(*args, **kwargs)
        method._tensor_name = name
        if isinstance(old_method, PruningContainer):
            old_method.add_pruning_method(method)
            method = old_method
        elif old_method is not None:
            container = PruningContainer(old_method)
            container.add_pruning_method(method)
            method = container

        orig = getattr(module, name)
        if importance_scores is not None:
            assert importance_scores.shape == orig.shape, \
                f"importance_scores should have the same shape as parameter {name} of {module}"
        else:
            importance_scores = orig
        if not isinstance(method, PruningContainer):  # first pruning: name -> name_orig
            module.register_parameter(name + "_orig", orig)
            del module._parameters[name]
            default_mask = kiln.ones_like(orig)
        else:
            default_mask = getattr(module, name + "_mask").detach().clone(memory_format=kiln.contiguous_format)
        try:
            mask = method.compute_mask(importance_scores, default_mask=default_mask)
            module.register_buffer(name + "_mask", mask)
            setattr(module, name, method.apply_mask(module))
            module.register_forward_pre_hook(method)
        except Exception:
            if not isinstance(method, PruningContainer):
                orig = getattr(module, name + "_orig")
                module.register_parameter(name, orig)
                del module._parameters[name + "_orig"]
            raise
        return method

    def prune(self, t, default_mask=None, importance_scores=None):
        """t with this method's mask applied (importance_scores, if given, decide the mask)."""
        if importance_scores is not None:
            assert importance_scores.shape == t.shape, "importance_scores should have the same shape as tensor t"
        else:
            importance_scores = t
        default_mask = default_mask if default_mask is not None else kiln.ones_like(t)
        return t * self.compute_mask(importance_scores, default_mask=default_mask)

    def remove(self, module):
        """Makes the pruning permanent: name becomes a parameter holding orig * mask again."""
        assert self._tensor_name is not None, f"Module {module} has to be pruned before pruning can be removed"
        weight = self.apply_mask(module)
        if hasattr(module, self._tensor_name):
            delattr(module, self._tensor_name)
        orig = module._parameters[self._tensor_name + "_orig"]
        orig.data = weight.data
        del module._parameters[self._tensor_name + "_orig"]
        del module._buffers[self._tensor_name + "_mask"]
        setattr(module, self._tensor_name, orig)


class PruningContainer(BasePruningMethod):
    """A sequence of pruning methods on one tensor: each new one prunes what the others kept."""

    def __init__(self, *args):
        self._pruning_methods = ()
        if len(args) == 1:
            self._tensor_name = args[0]._tensor_name
            self.add_pruning_method(args[0])
        else:
            for method in args:
                self.add_pruning_method(method)

    def add_pruning_method(self, method):
        """Appends a method acting on the same tensor."""
        if not isinstance(method, BasePruningMethod) and method is not None:
            raise TypeError(f"{type(method)} is not a BasePruningMethod subclass")
        if method is not None and self._tensor_name != method._tensor_name:
            raise ValueError(f"Can only add pruning methods acting on the parameter named '{self._tensor_name}' "
                             f"to PruningContainer {self}. Found '{method._tensor_name}'")
        self._pruning_methods += (method,)

    def __len__(self):
        return len(self._pruning_methods)

    def __iter__(self):
        return iter(self._pruning_methods)

    def __getitem__(self, idx):
        return self._pruning_methods[idx]

    def compute_mask(self, t, default_mask):
        """Applies the newest method to the slots (entries, channels or all) default_mask keeps."""
        method = self._pruning_methods[-1]
        new_mask = default_mask.to(dtype=t.dtype)
        kind = method.PRUNING_TYPE
        if kind == "unstructured":
            slc = default_mask == 1
        elif kind == "structured":
            if not hasattr(method, "dim"):
                raise AttributeError('Pruning methods of PRUNING_TYPE "structured" need to have the attribute '
                                     "`dim` defined.")
            n_dims = t.dim()
            dim = method.dim + n_dims if method.dim < 0 else method.dim
            if dim < 0:
                raise IndexError(f"Index is out of bounds for tensor with dimensions {n_dims}")
            keep_channel = default_mask.sum(dim=[d for d in range(n_dims) if d != dim]) != 0
            slc = [slice(None)] * n_dims
            slc[dim] = keep_channel
            slc = tuple(slc)
        elif kind == "global":
            slc = (slice(None),) * len(t.shape)
        else:
            raise ValueError(f"Unrecognized PRUNING_TYPE {kind}")
        partial_mask = method.compute_mask(t[slc], default_mask=default_mask[slc])
        new_mask[slc] = partial_mask.to(dtype=new_mask.dtype)
        return new_mask


class Identity(BasePruningMethod):
    """Prunes nothing (a mask of ones)."""
    PRUNING_TYPE = "unstructured"

    def compute_mask(self, t, default_mask):
        return default_mask

    @classmethod
    def apply(cls, module, name):
        """Adds identity pruning to module.<name>."""
        return super().apply(module, name)


class RandomUnstructured(BasePruningMethod):
    """Prunes `amount` (int: how many, float: fraction) entries at random."""
    PRUNING_TYPE = "unstructured"

    def __init__(self, amount):
        _validate_pruning_amount_init(amount)
        self.amount = amount

    def compute_mask(self, t, default_mask):
        nparams = _compute_nparams_toprune(self.amount, t.nelement())
        _validate_pruning_amount(nparams, t.nelement())
        mask = default_mask.clone(memory_format=kiln.contiguous_format)
        if nparams != 0:
            prob = kiln.rand_like(t)
            mask.view(-1)[kiln.topk(prob.view(-1), k=nparams).indices] = 0
        return mask

    @classmethod
    def apply(cls, module, name, amount):
        """Adds random unstructured pruning to module.<name>."""
        return super().apply(module, name, amount=amount)


class L1Unstructured(BasePruningMethod):
    """Prunes the `amount` entries of smallest absolute value."""
    PRUNING_TYPE = "unstructured"

    def __init__(self, amount):
        _validate_pruning_amount_init(amount)
        self.amount = amount

    def compute_mask(self, t, default_mask):
        nparams = _compute_nparams_toprune(self.amount, t.nelement())
        _validate_pruning_amount(nparams, t.nelement())
        mask = default_mask.clone(memory_format=kiln.contiguous_format)
        if nparams != 0:
            mask.view(-1)[kiln.topk(kiln.abs(t).view(-1), k=nparams, largest=False).indices] = 0
        return mask

    @classmethod
    def apply(cls, module, name, amount, importance_scores=None):
        """Adds L1 unstructured pruning to module.<name>."""
        return super().apply(module, name, amount=amount, importance_scores=importance_scores)


def _channel_mask(t, dim, index):
    mask = kiln.zeros_like(t)
    slc = [slice(None)] * len(t.shape)
    slc[dim] = index
    mask[tuple(slc)] = 1
    return mask


class RandomStructured(BasePruningMethod):
    """Prunes `amount` channels along `dim` at random."""
    PRUNING_TYPE = "structured"

    def __init__(self, amount, dim=-1):
        _validate_pruning_amount_init(amount)
        self.amount = amount
        self.dim = dim

    def compute_mask(self, t, default_mask):
        _validate_structured_pruning(t)
        _validate_pruning_dim(t, self.dim)
        nchannels = t.shape[self.dim]
        nparams = _compute_nparams_toprune(self.amount, nchannels)
        _validate_pruning_amount(nparams, nchannels)
        if nparams == 0:
            return default_mask
        prob = kiln.rand(nchannels)
        threshold = kiln.kthvalue(prob, k=nparams).values
        mask = _channel_mask(t, self.dim, prob > threshold)
        mask *= default_mask.to(dtype=mask.dtype)
        return mask

    @classmethod
    def apply(cls, module, name, amount, dim=-1):
        """Adds random structured pruning to module.<name>."""
        return super().apply(module, name, amount=amount, dim=dim)


class LnStructured(BasePruningMethod):
    """Prunes the `amount` channels along `dim` of smallest L`n` norm."""
    PRUNING_TYPE = "structured"

    def __init__(self, amount, n, dim=-1):
        _validate_pruning_amount_init(amount)
        self.amount = amount
        self.n = n
        self.dim = dim

    def compute_mask(self, t, default_mask):
        _validate_structured_pruning(t)
        _validate_pruning_dim(t, self.dim)
        nchannels = t.shape[self.dim]
        nparams = _compute_nparams_toprune(self.amount, nchannels)
        _validate_pruning_amount(nparams, nchannels)
        topk = kiln.topk(_compute_norm(t, self.n, self.dim), k=nchannels - nparams, largest=True)
        if nparams == 0:
            return default_mask
        mask = _channel_mask(t, self.dim, topk.indices)
        mask *= default_mask.to(dtype=mask.dtype)
        return mask

    @classmethod
    def apply(cls, module, name, amount, n, dim, importance_scores=None):
        """Adds Ln structured pruning to module.<name>."""
        return super().apply(module, name, amount=amount, n=n, dim=dim, importance_scores=importance_scores)


class CustomFromMask(BasePruningMethod):
    """Prunes with a given mask."""
    PRUNING_TYPE = "global"

    def __init__(self, mask):
        self.mask = mask

    def compute_mask(self, t, default_mask):
        assert default_mask.shape == self.mask.shape
        return default_mask * self.mask.to(dtype=default_mask.dtype)

    @classmethod
    def apply(cls, module, name, mask):
        """Adds pruning by `mask` to module.<name>."""
        return super().apply(module, name, mask=mask)


def identity(module, name):
    """Identity pruning of module.<name> (adds name_orig, name_mask and the hook); returns module."""
    Identity.apply(module, name)
    return module


def random_unstructured(module, name, amount):
    """Prunes `amount` random entries of module.<name>; returns module."""
    RandomUnstructured.apply(module, name, amount)
    return module


def l1_unstructured(module, name, amount, importance_scores=None):
    """Prunes the `amount` entries of module.<name> of smallest |importance_scores|; returns module."""
    L1Unstructured.apply(module, name, amount=amount, importance_scores=importance_scores)
    return module


def random_structured(module, name, amount, dim):
    """Prunes `amount` random channels of module.<name> along dim; returns module."""
    RandomStructured.apply(module, name, amount, dim)
    return module


def ln_structured(module, name, amount, n, dim, importance_scores=None):
    """Prunes the `amount` channels along dim of smallest Ln norm; returns module."""
    LnStructured.apply(module, name, amount, n, dim, importance_scores=importance_scores)
    return module


def global_unstructured(parameters, pruning_method, importance_scores=None, **kwargs):
    """Prunes the (module, name) pairs together, as one vector, with pruning_method(**kwargs)
    (unstructured methods only); importance_scores maps (module, name) to scores."""
    if not isinstance(parameters, Iterable):
        raise TypeError("global_unstructured(): parameters is not an Iterable")
    importance_scores = importance_scores if importance_scores is not None else {}
    if not isinstance(importance_scores, dict):
        raise TypeError("global_unstructured(): importance_scores must be of type dict")
    to_vector = kiln.nn.utils.parameters_to_vector
    scores = to_vector([importance_scores.get((module, name), getattr(module, name)) for module, name in parameters])
    default_mask = to_vector([getattr(module, name + "_mask", kiln.ones_like(getattr(module, name)))
                              for module, name in parameters])
    container = PruningContainer()
    container._tensor_name = "temp"
    method = pruning_method(**kwargs)
    method._tensor_name = "temp"
    if method.PRUNING_TYPE != "unstructured":
        raise TypeError('Only "unstructured" PRUNING_TYPE supported for the `pruning_method`. Found method '
                        f"{pruning_method} of type {method.PRUNING_TYPE}")
    container.add_pruning_method(method)
    final_mask = container.compute_mask(scores, default_mask)
    pointer = 0
    for module, name in parameters:
        param = getattr(module, name)
        n = param.numel()
        custom_from_mask(module, name, mask=final_mask[pointer:pointer + n].view_as(param))
        pointer += n


def custom_from_mask(module, name, mask):
    """Prunes module.<name> with `mask`; returns module."""
    CustomFromMask.apply(module, name, mask)
    return module


def remove(module, name):
    """Makes the pruning of module.<name> permanent and drops name_orig, name_mask and the hook."""
    for k, hook in module._forward_pre_hooks.items():
        if isinstance(hook, BasePruningMethod) and hook._tensor_name == name:
            hook.remove(module)
            del module._forward_pre_hooks[k]
            return module
    raise ValueError(f"Parameter '{name}' of module {module} has to be pruned before pruning can be removed")


def is_pruned(module):
    """Whether module or a submodule has a pruning hook."""
    return any(isinstance(hook, BasePruningMethod)
               for _, m in module.named_modules() for hook in m._forward_pre_hooks.values())


def _validate_pruning_amount_init(amount):
    if not isinstance(amount, numbers.Real):
        raise TypeError(f"Invalid type for amount: {amount}. Must be int or float.")
    if (isinstance(amount, numbers.Integral) and amount < 0) or (
            not isinstance(amount, numbers.Integral) and (float(amount) > 1.0 or float(amount) < 0.0)):
        raise ValueError(f"amount={amount} should either be a float in the range [0, 1] or a non-negative integer")


def _validate_pruning_amount(amount, tensor_size):
    if isinstance(amount, numbers.Integral) and amount > tensor_size:
        raise ValueError(f"amount={amount} should be smaller than the number of parameters to prune={tensor_size}")


def _validate_structured_pruning(t):
    shape = t.shape
    if len(shape) <= 1:
        raise ValueError("Structured pruning can only be applied to multidimensional tensors. Found tensor of "
                         f"shape {shape} with {len(shape)} dims")


def _compute_nparams_toprune(amount, tensor_size):
    return amount if isinstance(amount, numbers.Integral) else round(amount * tensor_size)


def _validate_pruning_dim(t, dim):
    if dim >= t.dim():
        raise IndexError(f"Invalid index {dim} for tensor of size {t.shape}")


def _compute_norm(t, n, dim):
    dims = list(range(t.dim()))
    dims.remove(dims[dim])
    return kiln.norm(t, p=n, dim=dims)
