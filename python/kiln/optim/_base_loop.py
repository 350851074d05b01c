"""The step() loop shared by the single-update optimizers (Adadelta, Adamax, NAdam, RAdam, Rprop, ASGD)."""
from ..autograd.grad_mode import enable_grad, no_grad


def step_each(optimizer, closure, name):
    """Runs closure() with grad enabled (if given), then optimizer._update(p, group) for every
    parameter with a .grad, without grad; returns the closure's loss."""
    loss = None
    if closure is not None:
        with enable_grad():
            loss = closure()
    with no_grad():
        for group in optimizer.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    continue
                if getattr(p.grad, "is_sparse", False):
                    raise RuntimeError(f"{name} does not support sparse gradients")
                optimizer._update(p, group)
    return loss


def check_betas(betas):
    if not 0.0 <= betas[0] < 1.0:
        raise ValueError(f"Invalid beta parameter at index 0: {betas[0]}")
    if not 0.0 <= betas[1] < 1.0:
        raise ValueError(f"Invalid beta parameter at index 1: {betas[1]}")


def check_nonnegative(**values):
    labels = {"lr": "learning rate", "eps": "epsilon value"}
    for key, v in values.items():
        if not 0.0 <= v:
            raise ValueError(f"Invalid {labels.get(key, key + ' value')}: {v}")
