"""kiln.optim.ASGD: torch.optim.ASGD's update rule (averaged SGD, Polyak & Juditsky 1992)."""
import math

from .. import _C
from .optimizer import Optimizer
from ._base_loop import check_nonnegative, step_each


class ASGD(Optimizer):
    """Per parameter p with gradient g at step t (g = -g with maximize); eta, mu are float32 states:

        g = g + weight_decay * p
        p *= 1 - lambd * eta;  p -= eta * g
        ax += (p - ax) * mu  (ax = p while mu == 1)
        eta = lr / (1 + lambd * lr * t)^alpha;  mu = 1 / max(1, t - t0)
    """

    def __init__(self, params, lr=1e-2, lambd=1e-4, alpha=0.75, t0=1e6, weight_decay=0, foreach=None,
                 maximize=False, *, capturable=False, differentiable=False):
        check_nonnegative(lr=lr, weight_decay=weight_decay)
        super().__init__(params, dict(lr=lr, lambd=lambd, alpha=alpha, t0=t0, weight_decay=weight_decay,
                                      foreach=foreach, maximize=maximize, capturable=capturable,
                                      differentiable=differentiable))

    def step(self, closure=None):
        """One update of every parameter that has a .grad; returns closure() (re-evaluated with grad) if given."""
        return step_each(self, closure, "ASGD")

    def _update(self, p, group):
        lr, lambd, alpha, t0, wd = group["lr"], group["lambd"], group["alpha"], group["t0"], group["weight_decay"]
        state = self.state[p]
        if not state:
            state["step"] = _C.zeros([], dtype=_C.float32)
            state["eta"] = _C.full([], lr, dtype=_C.float32)
            state["mu"] = _C.ones([], dtype=_C.float32)
            state["ax"] = p.detach().clone().zero_()
        g = -p.grad if group["maximize"] else p.grad
        state["step"] = state["step"] + 1
        step = state["step"].item()
        if wd != 0:
            g = g.add(p, alpha=wd)
        eta, mu, ax = state["eta"], state["mu"], state["ax"]
        p.mul_(1 - lambd * eta.item())
        p.add_(g, alpha=-eta.item())
        if mu.item() != 1:
            ax.add_(p.sub(ax).mul(mu))
        else:
            ax.copy_(p)
        eta.fill_(lr / math.pow((1 + lambd * lr * step), alpha))
        mu.fill_(1 / max(1, step - t0))
