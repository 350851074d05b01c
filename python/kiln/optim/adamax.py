"""kiln.optim.Adamax: torch.optim.Adamax's update rule (Adam with the infinity norm)."""
from .. import _C
from .optimizer import Optimizer
from ._base_loop import check_betas, check_nonnegative, step_each


class Adamax(Optimizer):
    """Per parameter p with gradient g at step t (g = -g with maximize):

        g = g + weight_decay * p
        m = beta1 * m + (1 - beta1) * g
        u = max(beta2 * u, |g| + eps)
        p -= lr / (1 - beta1^t) * m / u
    """

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, foreach=None, *,
                 maximize=False, capturable=False, differentiable=False):
        check_nonnegative(lr=lr, eps=eps)
        check_betas(betas)
        check_nonnegative(weight_decay=weight_decay)
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, foreach=foreach,
                                      maximize=maximize, capturable=capturable, differentiable=differentiable))

    def step(self, closure=None):
        """One update of every parameter that has a .grad; returns closure() (re-evaluated with grad) if given."""
        return step_each(self, closure, "Adamax")

    def _update(self, p, group):
        (beta1, beta2), lr, eps, wd = group["betas"], group["lr"], group["eps"], group["weight_decay"]
        state = self.state[p]
        if not state:
            state["step"] = _C.zeros([], dtype=_C.float32)
            state["exp_avg"] = p.detach().clone().zero_()
            state["exp_inf"] = p.detach().clone().zero_()
        state["step"] = state["step"] + 1
        step = state["step"].item()
        g = -p.grad if group["maximize"] else p.grad
        if wd != 0:
            g = g.add(p, alpha=wd)
        exp_avg, exp_inf = state["exp_avg"], state["exp_inf"]
        exp_avg.mul_(beta1).add_(g, alpha=1 - beta1)
        exp_inf.mul_(beta2)
        exp_inf.copy_(_C.maximum(exp_inf, g.abs().add_(eps)))
        p.addcdiv_(exp_avg, exp_inf, value=-lr / (1 - beta1 ** step))
