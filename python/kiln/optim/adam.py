"""kiln.optim.Adam and AdamW: PyTorch's update rules (including amsgrad and maximize)."""
import math

from .. import _C
from ..autograd.grad_mode import enable_grad, no_grad
from .optimizer import Optimizer


def _check_options(lr, betas, eps, weight_decay):
    if not 0.0 <= lr:
        raise ValueError(f"Invalid learning rate: {lr}")
    if not 0.0 <= eps:
        raise ValueError(f"Invalid epsilon value: {eps}")
    if not 0.0 <= betas[0] < 1.0:
        raise ValueError(f"Invalid beta parameter at index 0: {betas[0]}")
    if not 0.0 <= betas[1] < 1.0:
        raise ValueError(f"Invalid beta parameter at index 1: {betas[1]}")
    if not 0.0 <= weight_decay:
        raise ValueError(f"Invalid weight_decay value: {weight_decay}")


class Adam(Optimizer):
    """Per parameter p with gradient g, at step t (from 1):

        g = g + weight_decay * p                         (Adam: L2 penalty in the gradient)
        p = p * (1 - lr * weight_decay)                  (AdamW: decoupled decay, instead)
        m = beta1 * m + (1 - beta1) * g
        v = beta2 * v + (1 - beta2) * g * g
        v_max = max(v_max, v)                            (amsgrad: v_max replaces v below)
        p -= lr / (1 - beta1^t) * m / (sqrt(v) / sqrt(1 - beta2^t) + eps)
    """

    _decoupled = False

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, amsgrad=False, *,
                 foreach=None, maximize=False, capturable=False, differentiable=False, fused=None):
        _check_options(lr, betas, eps, weight_decay)
        super().__init__(params, dict(lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay,
                                      amsgrad=amsgrad, maximize=maximize, foreach=foreach, capturable=capturable,
                                      differentiable=differentiable, fused=fused))

    def step(self, closure=None):
        """One update of every parameter that has a .grad; returns closure() (re-evaluated with grad) if given."""
        loss = None
        if closure is not None:
            with enable_grad():
                loss = closure()
        with no_grad():
            for group in self.param_groups:
                for p in group["params"]:
                    if p.grad is not None:
                        self._update(p, group)
        return loss

    def _update(self, p, group):
        if p.grad.is_sparse:
            raise RuntimeError("AdamW does not support sparse gradients" if self._decoupled else
                               "Adam does not support sparse gradients, please consider SparseAdam instead")
        lr, (beta1, beta2), eps, wd = group["lr"], group["betas"], group["eps"], group["weight_decay"]
        g = -p.grad if group["maximize"] else p.grad
        if wd != 0:
            if self._decoupled:
                p.mul_(1 - lr * wd)
            else:
                g = g.add(p, alpha=wd)
        state = self.state[p]
        if not state:
            state["step"] = _C.zeros([], dtype=_C.float32)  # a tensor, as torch (state_dict compatible)
            state["exp_avg"] = p.detach().clone().zero_()
            state["exp_avg_sq"] = p.detach().clone().zero_()
            if group["amsgrad"]:
                state["max_exp_avg_sq"] = p.detach().clone().zero_()
        state["step"] = state["step"] + 1
        t = float(state["step"])
        m, v = state["exp_avg"], state["exp_avg_sq"]
        # torch's single-tensor Adam, op for op, so the roundings are its own
        m.mul_(beta1).add_(g, alpha=1 - beta1)
        v.mul_(beta2).addcmul_(g, g, value=1 - beta2)
        if group["amsgrad"]:
            v = state["max_exp_avg_sq"].copy_(state["max_exp_avg_sq"].maximum(v))
        step_size = lr / (1 - beta1 ** t)
        denom = (v.sqrt() / math.sqrt(1 - beta2 ** t)).add_(eps)
        p.addcdiv_(m, denom, value=-step_size)


class AdamW(Adam):
    """Adam with decoupled weight decay (Loshchilov & Hutter): the decay shrinks p directly."""

    _decoupled = True

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2, amsgrad=False, *,
                 maximize=False, foreach=None, capturable=False, differentiable=False, fused=None):
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, maximize=maximize, foreach=foreach,
                         capturable=capturable, differentiable=differentiable, fused=fused)
