"""kiln.optim.SGD: stochastic gradient descent with momentum, dampening, Nesterov and weight decay."""
from ..autograd.grad_mode import enable_grad, no_grad
from .optimizer import Optimizer


class SGD(Optimizer):
    """PyTorch's update rule, per parameter p with gradient g:

        d_p = g + weight_decay * p
        buf = d_p (first step), else momentum * buf + (1 - dampening) * d_p
        d_p = d_p + momentum * buf if nesterov else buf        (when momentum != 0)
        p  -= lr * d_p                                         (maximize flips the sign of g)

    A sparse gradient (embedding(sparse=True)) takes the same steps with torch's sparse ops: the momentum
    buffer is then sparse too (uncoalesced, growing each step, as torch's), weight decay raises torch's
    error.
    """

    def __init__(self, params, lr=1e-3, momentum=0, dampening=0, weight_decay=0, nesterov=False, *,
                 maximize=False, foreach=None, differentiable=False, fused=None):
        if lr < 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if momentum < 0.0:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if weight_decay < 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        super().__init__(params, dict(lr=lr, momentum=momentum, dampening=dampening, weight_decay=weight_decay,
                                      nesterov=nesterov, maximize=maximize, foreach=foreach,
                                      differentiable=differentiable, fused=fused))

    def step(self, closure=None):
        """One update of every parameter that has a .grad; returns closure() (re-evaluated with grad) if given."""
        loss = None
        if closure is not None:
            with enable_grad():
                loss = closure()
        with no_grad():
            for group in self.param_groups:
                lr, momentum, dampening = group["lr"], group["momentum"], group["dampening"]
                for p in group["params"]:
                    if p.grad is None:
                        continue
                    d_p = -p.grad if group["maximize"] else p.grad
                    if group["weight_decay"] != 0:
                        if d_p.is_sparse:  # torch's sparse.add(dense)
                            raise RuntimeError("add(sparse, dense) is not supported. Use add(dense, sparse) instead.")
                        d_p = d_p.add(p, alpha=group["weight_decay"])
                    if momentum != 0:
                        state = self.state[p]
                        buf = state.get("momentum_buffer")
                        if buf is None:
                            buf = state["momentum_buffer"] = d_p.detach().clone()
                        else:
                            buf.mul_(momentum).add_(d_p, alpha=1 - dampening)
                        d_p = d_p.add(buf, alpha=momentum) if group["nesterov"] else buf
                    p.add_(d_p, alpha=-lr)
        return loss
