"""kiln.optim.Adagrad: torch.optim.Adagrad's update rule (lr decay, weight decay, initial accumulator)."""
from .. import _C
from ..autograd.grad_mode import enable_grad, no_grad
from .optimizer import Optimizer


class Adagrad(Optimizer):
    """Per parameter p with gradient g at step t (from 1; g = -g with maximize):

        g = g + weight_decay * p
        clr = lr / (1 + (t - 1) * lr_decay)
        sum += g * g
        p -= clr * g / (sqrt(sum) + eps)
    The state (step, sum = initial_accumulator_value) is made in the constructor, as torch does.
    A sparse gradient takes torch's sparse path (_sparse_update).
    """

    def __init__(self, params, lr=1e-2, lr_decay=0, weight_decay=0, initial_accumulator_value=0, eps=1e-10,
                 foreach=None, *, maximize=False, differentiable=False, fused=None):
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= lr_decay:
            raise ValueError(f"Invalid lr_decay value: {lr_decay}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if not 0.0 <= initial_accumulator_value:
            raise ValueError(f"Invalid initial_accumulator_value value: {initial_accumulator_value}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        super().__init__(params, dict(lr=lr, lr_decay=lr_decay, eps=eps, weight_decay=weight_decay,
                                      initial_accumulator_value=initial_accumulator_value, foreach=foreach,
                                      maximize=maximize, differentiable=differentiable, fused=fused))
        for group in self.param_groups:
            for p in group["params"]:
                state = self.state[p]
                state["step"] = _C.zeros([], dtype=_C.float32)
                state["sum"] = p.detach().clone().fill_(group["initial_accumulator_value"])

    def share_memory(self):
        """Moves each parameter's running sum into shared memory (hogwild training), as torch's."""
        for group in self.param_groups:
            for p in group["params"]:
                self.state[p]["sum"].share_memory_()

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
        state = self.state[p]
        g = -p.grad if group["maximize"] else p.grad
        state["step"] = state["step"] + 1
        t = float(state["step"])
        if g.is_sparse:
            self._sparse_update(p, g, t, group)
            return
        if group["weight_decay"] != 0:
            g = g.add(p, alpha=group["weight_decay"])
        clr = group["lr"] / (1 + (t - 1) * group["lr_decay"])
        state["sum"].addcmul_(g, g, value=1)
        std = state["sum"].sqrt().add_(group["eps"])
        p.addcdiv_(g, std, value=-clr)

    def _sparse_update(self, p, g, t, group):
        """torch's sparse path: on the coalesced gradient's rows only (the update is not linear in g),
        sum[rows] += values^2, p[rows] -= clr * values / (sqrt(sum[rows]) + eps)."""
        from ..sparse import SparseCooTensor
        if group["weight_decay"] != 0:
            raise RuntimeError("weight_decay option is not compatible with sparse gradients")
        clr = group["lr"] / (1 + (t - 1) * group["lr_decay"])
        g = g.coalesce()
        indices, values = g._indices(), g._values()
        state_sum = self.state[p]["sum"]
        state_sum.add_(SparseCooTensor(indices, values.pow(2), g.shape, True))
        std_values = state_sum.sparse_mask(g)._values().sqrt_().add_(group["eps"])
        p.add_(SparseCooTensor(indices, values / std_values, g.shape, True), alpha=-clr)
