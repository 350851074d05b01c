"""kiln.optim.RAdam: torch.optim.RAdam's update rule (rectified Adam, Liu et al. 2019)."""
import math

from .. import _C
from .optimizer import Optimizer
from ._base_loop import check_betas, check_nonnegative, step_each


class RAdam(Optimizer):
    """Per parameter p with gradient g at step t (g = -g with maximize):

        g = g + weight_decay * p        (p *= 1 - lr * weight_decay with decoupled_weight_decay)
        m = beta1 * m + (1 - beta1) * g;  v = beta2 * v + (1 - beta2) * g * g
        rho_inf = 2 / (1 - beta2) - 1;  rho_t = rho_inf - 2 t beta2^t / (1 - beta2^t)
        rho_t > 5: p -= lr * m / (1 - beta1^t) * rect * sqrt(1 - beta2^t) / (sqrt(v) + eps)
        otherwise: p -= lr * m / (1 - beta1^t)
    """

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, foreach=None, *,
                 maximize=False, capturable=False, differentiable=False, decoupled_weight_decay=False):
        check_nonnegative(lr=lr, eps=eps)
        check_betas(betas)
        check_nonnegative(weight_decay=weight_decay)
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, foreach=foreach,
                                      maximize=maximize, capturable=capturable, differentiable=differentiable,
                                      decoupled_weight_decay=decoupled_weight_decay))

    def step(self, closure=None):
        """One update of every parameter that has a .grad; returns closure() (re-evaluated with grad) if given."""
        return step_each(self, closure, "RAdam")

    def _update(self, p, group):
        (beta1, beta2), lr, eps, wd = group["betas"], group["lr"], group["eps"], group["weight_decay"]
        state = self.state[p]
        if not state:
            state["step"] = _C.zeros([], dtype=_C.float32)
            state["exp_avg"] = p.detach().clone().zero_()
            state["exp_avg_sq"] = p.detach().clone().zero_()
        state["step"] = state["step"] + 1
        step = state["step"].item()
        g = -p.grad if group.get("maximize", False) else p.grad
        bias_correction1 = 1 - beta1 ** step
        bias_correction2 = 1 - beta2 ** step
        if wd != 0:
            if group.get("decoupled_weight_decay", False):
                p.mul_(1 - lr * wd)
            else:
                g = g.add(p, alpha=wd)
        exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
        exp_avg.mul_(beta1).add_(g, alpha=1 - beta1)
        exp_avg_sq.mul_(beta2).addcmul_(g, g, value=1 - beta2)
        bias_corrected_exp_avg = exp_avg / bias_correction1
        rho_inf = 2 / (1 - beta2) - 1
        rho_t = rho_inf - 2 * step * (beta2 ** step) / bias_correction2
        if rho_t > 5.:
            rect = math.sqrt((rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t))
            adaptive_lr = math.sqrt(bias_correction2) / exp_avg_sq.sqrt().add_(eps)
            p.add_(bias_corrected_exp_avg * lr * adaptive_lr * rect, alpha=-1.0)
        else:
            p.add_(bias_corrected_exp_avg * lr, alpha=-1.0)
