"""kiln.optim.Optimizer: parameter groups, per-parameter state and zero_grad, like torch.optim.Optimizer."""
from collections import defaultdict
from itertools import chain

from .. import _C
from ..nn.modules.module import zero_grads


class _RequiredParameter:
    def __repr__(self):
        return "<required parameter>"


required = _RequiredParameter()


def _copy_value(v):
    # tensors (a sparse momentum buffer too) are copied
    return v.detach().clone() if isinstance(v, _C.TensorBase) or getattr(v, "is_sparse", False) is True else v


def _check_implementation_flags(defaults):
    """torch 2.x's foreach / fused / capturable choose how an update is computed, not what it computes:
    kiln's single implementation serves them all. differentiable=True (autograd through the update
    itself) is not built."""
    if defaults.get("fused") and defaults.get("foreach"):
        raise RuntimeError("`fused` and `foreach` cannot be `True` together.")
    if defaults.get("fused") and defaults.get("differentiable"):
        raise RuntimeError("`fused` does not support `differentiable`")
    if defaults.get("differentiable"):
        raise NotImplementedError("kiln's optimizers do not support differentiable=True (autograd through the "
                                  "optimizer step)")


class Optimizer:
    """Base class: `params` is an iterable of tensors or of dicts (parameter groups, each with its own options)."""

    def __init__(self, params, defaults):
        _check_implementation_flags(defaults)
        self.defaults = defaults
        self.state = defaultdict(dict)  # parameter -> its state (e.g. momentum_buffer)
        self.param_groups = []
        if isinstance(params, _C.TensorBase):
            raise TypeError("params argument given to the optimizer should be an iterable of Tensors or dicts, "
                            f"but got {type(params).__name__}")
        groups = list(params)
        if not groups:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(groups[0], dict):
            groups = [{"params": groups}]
        for g in groups:
            self.add_param_group(g)

    def add_param_group(self, param_group):
        """Adds a group (a dict with 'params' and optional per-group options) filled in from defaults."""
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, but got {type(param_group).__name__}")
        params = param_group["params"]
        if isinstance(params, _C.TensorBase):
            params = [params]
        elif isinstance(params, set):
            raise TypeError("optimizer parameters need to be organized in ordered collections, but the ordering "
                            "of tensors in sets will change between runs. Please use a list instead.")
        params = list(params)
        for p in params:
            if not isinstance(p, _C.TensorBase):
                raise TypeError(f"optimizer can only optimize Tensors, but one of the params is {type(p).__name__}")
            if not p.is_leaf:
                raise ValueError("can't optimize a non-leaf Tensor")
        group = dict(param_group, params=params)
        for name, default in self.defaults.items():
            if default is required and name not in group:
                raise ValueError(f"parameter group didn't specify a value of required optimization parameter {name}")
            group.setdefault(name, default)
        existing = {id(p) for g in self.param_groups for p in g["params"]}
        if any(id(p) in existing for p in params):
            raise ValueError("some parameters appear in more than one parameter group")
        self.param_groups.append(group)

    def zero_grad(self, set_to_none=True):
        """Resets the .grad of every parameter: to None (torch 2.x's default: a parameter a step does
        not reach then keeps None, and the optimizers skip it), or (set_to_none=False, torch 1.13's
        default) to zeros in place, which SGD's momentum and Adam's moments still move."""
        zero_grads((p for group in self.param_groups for p in group["params"]), set_to_none)

    def step(self, closure=None):
        raise NotImplementedError

    def state_dict(self):
        """{'state': {index: state}, 'param_groups': [group with 'params' as indices]}; indices follow group order."""
        index, groups = {}, []
        for g in self.param_groups:
            for p in g["params"]:
                index.setdefault(id(p), len(index))
            # 'params' last, as torch packs a group
            packed = {k: v for k, v in g.items() if k != "params"}
            packed["params"] = [index[id(p)] for p in g["params"]]
            groups.append(packed)
        state = {index[id(p)]: s for p, s in self.state.items() if id(p) in index}
        return {"state": state, "param_groups": groups}

    def load_state_dict(self, state_dict):
        """Restores options and state saved by state_dict() into this optimizer's parameters (state is copied)."""
        saved = state_dict["param_groups"]
        if len(saved) != len(self.param_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        if any(len(s["params"]) != len(g["params"]) for s, g in zip(saved, self.param_groups)):
            raise ValueError("loaded state dict contains a parameter group that doesn't match the size of "
                             "optimizer's group")
        param_of = dict(zip(chain.from_iterable(s["params"] for s in saved),
                            chain.from_iterable(g["params"] for g in self.param_groups)))
        self.state = defaultdict(dict)
        for k, s in state_dict["state"].items():
            if k in param_of:
                p = param_of[k]
                self.state[p] = {name: _copy_value(v) for name, v in s.items()}
                for name, v in self.state[p].items():
                    # as torch: floating state takes the parameter's dtype, except the step count
                    if name != "step" and isinstance(v, _C.TensorBase) and v.is_floating_point() \
                            and v.dtype != p.dtype:
                        self.state[p][name] = v.to(p.dtype)
        self.param_groups = [dict(s, params=g["params"]) for s, g in zip(saved, self.param_groups)]

    def __repr__(self):
        s = type(self).__name__ + " ("
        for i, group in enumerate(self.param_groups):
            s += f"\nParameter Group {i}\n"
            s += "".join(f"    {k}: {group[k]}\n" for k in sorted(group) if k != "params")
        return s + ")"
