"""kiln.optim.Rprop: torch.optim.Rprop's update rule (resilient backpropagation)."""
from .optimizer import Optimizer
from ._base_loop import check_nonnegative, step_each


class Rprop(Optimizer):
    """Per parameter p with gradient g (g = -g with maximize), per element:

        s = sign(g * prev): step_size *= etaplus (s > 0), etaminus (s < 0), 1 (s == 0),
            clamped to step_sizes (min, max)
        g = 0 where s < 0;  p -= sign(g) * step_size;  prev = g
    step_size starts at lr.
    """

    def __init__(self, params, lr=1e-2, etas=(0.5, 1.2), step_sizes=(1e-6, 50), foreach=None, maximize=False, *,
                 capturable=False, differentiable=False):
        check_nonnegative(lr=lr)
        if not 0.0 < etas[0] < 1.0 < etas[1]:
            raise ValueError(f"Invalid eta values: {etas[0]}, {etas[1]}")
        super().__init__(params, dict(lr=lr, etas=etas, step_sizes=step_sizes, foreach=foreach, maximize=maximize,
                                      capturable=capturable, differentiable=differentiable))

    def step(self, closure=None):
        """One update of every parameter that has a .grad; returns closure() (re-evaluated with grad) if given."""
        return step_each(self, closure, "Rprop")

    def _update(self, p, group):
        (etaminus, etaplus), (step_size_min, step_size_max) = group["etas"], group["step_sizes"]
        g = -p.grad if group["maximize"] else p.grad
        state = self.state[p]
        if not state:
            state["step"] = 0
            state["prev"] = p.detach().clone().zero_()
            state["step_size"] = g.detach().clone().fill_(group["lr"])
        state["step"] += 1
        prev, step_size = state["prev"], state["step_size"]
        s = g.mul(prev).sign()
        factor = s.clone()   # as torch: sign's own dtype holds etaplus, etaminus and 1
        factor.masked_fill_(s.gt(0), etaplus)
        factor.masked_fill_(s.lt(0), etaminus)
        factor.masked_fill_(s.eq(0), 1)
        step_size.mul_(factor).clamp_(step_size_min, step_size_max)
        g = g.clone()
        g.masked_fill_(s.lt(0), 0)
        p.addcmul_(g.sign(), step_size, value=-1)
        prev.copy_(g)
