"""kiln.optim.NAdam: torch.optim.NAdam's update rule (Adam with Nesterov momentum, Dozat 2016)."""
from .. import _C
from .optimizer import Optimizer
from ._base_loop import check_betas, check_nonnegative, step_each


class NAdam(Optimizer):
    """Per parameter p with gradient g at step t (g = -g with maximize):

        g = g + weight_decay * p        (p *= 1 - lr * weight_decay with decoupled_weight_decay)
        mu_t = beta1 * (1 - 0.5 * 0.96^(t * momentum_decay)); mu_product *= mu_t (a float32 state)
        m = beta1 * m + (1 - beta1) * g;  v = beta2 * v + (1 - beta2) * g * g
        denom = sqrt(v / (1 - beta2^t)) + eps
        p -= lr * (1 - mu_t) / (1 - mu_product) * g / denom
        p -= lr * mu_{t+1} / (1 - mu_product * mu_{t+1}) * m / denom
    """

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, momentum_decay=4e-3,
                 foreach=None, *, maximize=False, capturable=False, differentiable=False,
                 decoupled_weight_decay=False):
        check_nonnegative(lr=lr, eps=eps)
        check_betas(betas)
        check_nonnegative(weight_decay=weight_decay, momentum_decay=momentum_decay)
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
                                      momentum_decay=momentum_decay, foreach=foreach, maximize=maximize,
                                      capturable=capturable, differentiable=differentiable,
                                      decoupled_weight_decay=decoupled_weight_decay))

    def step(self, closure=None):
        """One update of every parameter that has a .grad; returns closure() (re-evaluated with grad) if given."""
        return step_each(self, closure, "NAdam")

    def _update(self, p, group):
        (beta1, beta2), lr, eps, wd = group["betas"], group["lr"], group["eps"], group["weight_decay"]
        state = self.state[p]
        if not state:
            state["step"] = _C.zeros([], dtype=_C.float32)
            state["mu_product"] = _C.ones([], dtype=_C.float32)
            state["exp_avg"] = p.detach().clone().zero_()
            state["exp_avg_sq"] = p.detach().clone().zero_()
        state["step"] = state["step"] + 1
        step = state["step"].item()
        g = -p.grad if group.get("maximize", False) else p.grad
        bias_correction2 = 1 - beta2 ** step
        if wd != 0:
            if group.get("decoupled_weight_decay", False):
                p.mul_(1 - lr * wd)
            else:
                g = g.add(p, alpha=wd)
        mu = beta1 * (1. - 0.5 * (0.96 ** (step * group["momentum_decay"])))
        mu_next = beta1 * (1. - 0.5 * (0.96 ** ((step + 1) * group["momentum_decay"])))
        mu_product = state["mu_product"]
        mu_product.mul_(mu)
        mu_product_next = mu_product * mu * mu_next
        exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
        exp_avg.mul_(beta1).add_(g, alpha=1 - beta1)
        exp_avg_sq.mul_(beta2).addcmul_(g, g, value=1 - beta2)
        denom = exp_avg_sq.div(bias_correction2).sqrt().add_(eps)
        p.addcdiv_(g, denom, value=-lr * (1. - mu) / (1. - mu_product.item()))
        p.addcdiv_(exp_avg, denom, value=-lr * mu_next / (1. - mu_product_next.item()))
