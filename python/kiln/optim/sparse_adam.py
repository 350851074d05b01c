"""kiln.optim.SparseAdam: Adam's update applied lazily, to the rows a sparse gradient touches."""
import math

from ..autograd.grad_mode import enable_grad, no_grad
from .optimizer import Optimizer


class SparseAdam(Optimizer):
    """torch 1.13's SparseAdam. Per parameter p with a sparse gradient (embedding(sparse=True)), at step t
    (counted per parameter, from 1), on the coalesced gradient's rows i and values g only:

        m_i += (1 - beta1) * (g - m_i)          v_i += (1 - beta2) * (g^2 - v_i)
        p_i -= lr * sqrt(1 - beta2^t) / (1 - beta1^t) * m_i / (sqrt(v_i) + eps)

    Rows the gradient does not touch keep their moments and values (the "lazy" update). A dense gradient
    raises torch's error. The moments are dense tensors of p's shape (state 'exp_avg', 'exp_avg_sq'; the
    step an int), so state_dict() is torch's.
    """

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, maximize=False):
        if not 0.0 < lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 < eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= betas[0] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 0: {betas[0]}")
        if not 0.0 <= betas[1] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 1: {betas[1]}")
        params = list(params)
        sparse_params = []
        for index, param in enumerate(params):
            if isinstance(param, dict):
                for d_index, d_param in enumerate(param.get("params", [])):
                    if d_param.is_sparse:
                        sparse_params.append([index, d_index])
            elif param.is_sparse:
                sparse_params.append(index)
        if sparse_params:
            raise ValueError(f"Sparse params at indices {sparse_params}: SparseAdam requires dense parameter tensors")
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, maximize=maximize))

    def step(self, closure=None):
        """One update of every parameter that has a (sparse) .grad; returns closure() if given."""
        loss = None
        if closure is not None:
            with enable_grad():
                loss = closure()
        with no_grad():
            for group in self.param_groups:
                for p in group["params"]:
                    if p.grad is None:
                        continue
                    if not p.grad.is_sparse:
                        raise RuntimeError("SparseAdam does not support dense gradients, please consider Adam "
                                           "instead")
                    state = self.state[p]
                    if len(state) == 0:
                        state["step"] = 0
                        state["exp_avg"] = p.detach().clone().zero_()
                        state["exp_avg_sq"] = p.detach().clone().zero_()
                    state["step"] += 1
                    self._update(p, state, group)
        return loss

    @staticmethod
    def _update(p, state, group):
        from ..sparse import SparseCooTensor
        beta1, beta2 = group["betas"]
        grad = -p.grad if group.get("maximize", False) else p.grad
        grad = grad.coalesce()
        indices, values = grad._indices(), grad._values()
        if values.numel() == 0:
            return

        def make_sparse(v):
            return SparseCooTensor(indices, v, grad.shape, True)

        exp_avg, exp_avg_sq, step = state["exp_avg"], state["exp_avg_sq"], state["step"]
        # old += (1 - b) * (new - old), on the gradient's rows (the ops torch runs, in its order)
        old_exp_avg = exp_avg.sparse_mask(grad)._values()
        exp_avg_update = values.sub(old_exp_avg).mul_(1 - beta1)
        exp_avg.add_(make_sparse(exp_avg_update))
        old_exp_avg_sq = exp_avg_sq.sparse_mask(grad)._values()
        exp_avg_sq_update = values.pow(2).sub_(old_exp_avg_sq).mul_(1 - beta2)
        exp_avg_sq.add_(make_sparse(exp_avg_sq_update))
        # the new moments of those rows, again from the dense values (no second sparse_mask)
        numer = exp_avg_update.add_(old_exp_avg)
        exp_avg_sq_update.add_(old_exp_avg_sq)
        denom = exp_avg_sq_update.sqrt_().add_(group["eps"])
        bias_correction1 = 1 - beta1 ** step
        bias_correction2 = 1 - beta2 ** step
        step_size = group["lr"] * math.sqrt(bias_correction2) / bias_correction1
        p.add_(make_sparse(-step_size * numer.div_(denom)))
