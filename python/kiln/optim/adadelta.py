"""kiln.optim.Adadelta: torch.optim.Adadelta's update rule (Zeiler, 2012)."""
from .optimizer import Optimizer
from ._base_loop import check_nonnegative, step_each


class Adadelta(Optimizer):
    """Per parameter p with gradient g (g = -g with maximize):

        g = g + weight_decay * p
        v = rho * v + (1 - rho) * g * g
        delta = sqrt(u + eps) / sqrt(v + eps) * g
        u = rho * u + (1 - rho) * delta * delta
        p -= lr * delta
    """

    def __init__(self, params, lr=1.0, rho=0.9, eps=1e-6, weight_decay=0, foreach=None, *, maximize=False,
                 capturable=False, differentiable=False):
        check_nonnegative(lr=lr)
        if not 0.0 <= rho <= 1.0:
            raise ValueError(f"Invalid rho value: {rho}")
        check_nonnegative(eps=eps, weight_decay=weight_decay)
        super().__init__(params, dict(lr=lr, rho=rho, eps=eps, weight_decay=weight_decay, maximize=maximize,
                                      foreach=foreach, capturable=capturable, differentiable=differentiable))

    def step(self, closure=None):
        """One update of every parameter that has a .grad; returns closure() (re-evaluated with grad) if given."""
        return step_each(self, closure, "Adadelta")

    def _update(self, p, group):
        lr, rho, eps, wd = group["lr"], group["rho"], group["eps"], group["weight_decay"]
        state = self.state[p]
        if not state:
            state["step"] = 0
            state["square_avg"] = p.detach().clone().zero_()
            state["acc_delta"] = p.detach().clone().zero_()
        state["step"] += 1
        g = -p.grad if group["maximize"] else p.grad
        if wd != 0:
            g = g.add(p, alpha=wd)
        square_avg, acc_delta = state["square_avg"], state["acc_delta"]
        square_avg.mul_(rho).addcmul_(g, g, value=1 - rho)
        std = square_avg.add(eps).sqrt_()
        delta = acc_delta.add(eps).sqrt_().div_(std).mul_(g)
        acc_delta.mul_(rho).addcmul_(delta, delta, value=1 - rho)
        p.add_(delta, alpha=-lr)
