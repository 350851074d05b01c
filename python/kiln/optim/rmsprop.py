"""kiln.optim.RMSprop: torch.optim.RMSprop's update rule (momentum, centered, weight decay, maximize)."""
from .. import _C
from ..autograd.grad_mode import enable_grad, no_grad
from .optimizer import Optimizer


class RMSprop(Optimizer):
    """Per parameter p with gradient g (g = -g with maximize):

        g = g + weight_decay * p
        v = alpha * v + (1 - alpha) * g * g
        avg = sqrt(v - mean_g^2) if centered (mean_g = alpha * mean_g + (1 - alpha) * g) else sqrt(v)
        buf = momentum * buf + g / (avg + eps);  p -= lr * buf     (momentum > 0)
        p -= lr * g / (avg + eps)                                  (otherwise)
    """

    def __init__(self, params, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0, centered=False,
                 capturable=False, foreach=None, maximize=False, differentiable=False):
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= momentum:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if not 0.0 <= alpha:
            raise ValueError(f"Invalid alpha value: {alpha}")
        super().__init__(params, dict(lr=lr, momentum=momentum, alpha=alpha, eps=eps, centered=centered,
                                      weight_decay=weight_decay, capturable=capturable, foreach=foreach,
                                      maximize=maximize, differentiable=differentiable))

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
            raise RuntimeError("RMSprop does not support sparse gradients")
        lr, alpha, eps, wd, momentum = group["lr"], group["alpha"], group["eps"], group["weight_decay"], \
            group["momentum"]
        g = -p.grad if group["maximize"] else p.grad
        state = self.state[p]
        if not state:
            state["step"] = _C.zeros([], dtype=_C.float32)
            state["square_avg"] = p.detach().clone().zero_()
            if momentum > 0:
                state["momentum_buffer"] = p.detach().clone().zero_()
            if group["centered"]:
                state["grad_avg"] = p.detach().clone().zero_()
        state["step"] = state["step"] + 1
        if wd != 0:
            g = g.add(p, alpha=wd)
        square_avg = state["square_avg"]
        square_avg.mul_(alpha).addcmul_(g, g, value=1 - alpha)
        if group["centered"]:
            grad_avg = state["grad_avg"]
            grad_avg.mul_(alpha).add_(g, alpha=1 - alpha)
            avg = square_avg.addcmul(grad_avg, grad_avg, value=-1).sqrt_()
        else:
            avg = square_avg.sqrt()
        avg = avg.add_(eps)
        if momentum > 0:
            buf = state["momentum_buffer"]
            buf.mul_(momentum).addcdiv_(g, avg)
            p.add_(buf, alpha=-lr)
        else:
            p.addcdiv_(g, avg, value=-lr)
