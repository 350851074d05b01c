"""deep-spin/entmax (activations.py SparsemaxFunction / Entmax15Function with _make_ix_like, _roll_last,
_sparsemax_threshold_and_support and _entmax_threshold_and_support by torch.sort(descending=True), cumsum,
gather of support sizes and torch.clamp; root_finding.py EntmaxBisectFunction with its bisection loop;
losses.py SparsemaxLoss / Entmax15Loss with ignore_index and reduction) used as the attention normaliser of a
small text classifier and as its output loss, in plain torch: autograd.Functions with @classmethod forward /
backward, ctx.save_for_backward / ctx.saved_tensors, ctx.dim, ctx.needs_input_grad, torch.where(Y > 0, dY, 0)
style sparse backward by masked_fill / (dY * gppr).sum(dim) / gppr.sum(dim), input.transpose(dim, -1), and an
Adam-trained bag-of-embeddings model with additive attention, checked against torch.softmax attention."""
import argparse

import torch
import torch.nn as nn
from torch.autograd import Function


def _make_ix_like(X, dim):
    d = X.size(dim)
    rho = torch.arange(1, d + 1, device=X.device, dtype=X.dtype)
    view = [1] * X.dim()
    view[0] = -1
    return rho.view(view).transpose(0, dim)


def _roll_last(X, dim):
    if dim == -1:
        return X
    elif dim < 0:
        dim = X.dim() - dim
    perm = [i for i in range(X.dim()) if i != dim] + [dim]
    return X.permute(perm)


def _sparsemax_threshold_and_support(X, dim=-1, k=None):
    if k is None or k >= X.shape[dim]:
        topk, _ = torch.sort(X, dim=dim, descending=True)
    else:
        topk, _ = torch.topk(X, k=k, dim=dim)
    topk_cumsum = topk.cumsum(dim) - 1
    rhos = _make_ix_like(topk, dim)
    support = rhos * topk > topk_cumsum
    support_size = support.sum(dim=dim).unsqueeze(dim)
    tau = topk_cumsum.gather(dim, support_size - 1)
    tau /= support_size.to(X.dtype)
    return tau, support_size


def _entmax_threshold_and_support(X, dim=-1, k=None):
    if k is None or k >= X.shape[dim]:
        Xsrt, _ = torch.sort(X, dim=dim, descending=True)
    else:
        Xsrt, _ = torch.topk(X, k=k, dim=dim)
    rho = _make_ix_like(Xsrt, dim)
    mean = Xsrt.cumsum(dim) / rho
    mean_sq = (Xsrt ** 2).cumsum(dim) / rho
    ss = rho * (mean_sq - mean ** 2)
    delta = (1 - ss) / rho
    delta_nz = torch.clamp(delta, 0)
    tau = mean - torch.sqrt(delta_nz)
    support_size = (tau <= Xsrt).sum(dim).unsqueeze(dim)
    tau_star = tau.gather(dim, support_size - 1)
    return tau_star, support_size


class SparsemaxFunction(Function):
    @classmethod
    def forward(cls, ctx, X, dim=-1, k=None):
        ctx.dim = dim
        max_val, _ = X.max(dim=dim, keepdim=True)
        X = X - max_val
        tau, supp_size = _sparsemax_threshold_and_support(X, dim=dim, k=k)
        output = torch.clamp(X - tau, min=0)
        ctx.save_for_backward(supp_size, output)
        return output

    @classmethod
    def backward(cls, ctx, grad_output):
        supp_size, output = ctx.saved_tensors
        dim = ctx.dim
        grad_input = grad_output.clone()
        grad_input[output == 0] = 0
        v_hat = grad_input.sum(dim=dim) / supp_size.to(output.dtype).squeeze(dim)
        v_hat = v_hat.unsqueeze(dim)
        grad_input = torch.where(output != 0, grad_input - v_hat, grad_input)
        return grad_input, None, None


class Entmax15Function(Function):
    @classmethod
    def forward(cls, ctx, X, dim=0, k=None):
        ctx.dim = dim
        max_val, _ = X.max(dim=dim, keepdim=True)
        X = X - max_val
        X = X / 2
        tau_star, _ = _entmax_threshold_and_support(X, dim=dim, k=k)
        Y = torch.clamp(X - tau_star, min=0) ** 2
        ctx.save_for_backward(Y)
        return Y

    @classmethod
    def backward(cls, ctx, dY):
        Y, = ctx.saved_tensors
        gppr = Y.sqrt()
        dX = dY * gppr
        q = dX.sum(ctx.dim) / gppr.sum(ctx.dim)
        q = q.unsqueeze(ctx.dim)
        dX -= q * gppr
        return dX, None, None


class EntmaxBisectFunction(Function):
    @classmethod
    def _gp(cls, x, alpha):
        return x ** (alpha - 1)

    @classmethod
    def _gp_inv(cls, y, alpha):
        return y ** (1 / (alpha - 1))

    @classmethod
    def _p(cls, X, alpha):
        return cls._gp_inv(torch.clamp(X, min=0), alpha)

    @classmethod
    def forward(cls, ctx, X, alpha=1.5, dim=-1, n_iter=50, ensure_sum_one=True):
        if not isinstance(alpha, torch.Tensor):
            alpha = torch.tensor(alpha, dtype=X.dtype, device=X.device)
        alpha_shape = list(X.shape)
        alpha_shape[dim] = 1
        alpha = alpha.expand(*alpha_shape)
        ctx.alpha = alpha
        ctx.dim = dim
        d = X.shape[dim]
        X = X * (alpha - 1)
        max_val, _ = X.max(dim=dim, keepdim=True)
        tau_lo = max_val - cls._gp(1, alpha)
        tau_hi = max_val - cls._gp(1 / d, alpha)
        f_lo = cls._p(X - tau_lo, alpha).sum(dim) - 1
        dm = tau_hi - tau_lo
        for it in range(n_iter):
            dm /= 2
            tau_m = tau_lo + dm
            p_m = cls._p(X - tau_m, alpha)
            f_m = p_m.sum(dim) - 1
            mask = (f_m * f_lo >= 0).unsqueeze(dim)
            tau_lo = torch.where(mask, tau_m, tau_lo)
        if ensure_sum_one:
            p_m /= p_m.sum(dim=dim).unsqueeze(dim=dim)
        ctx.save_for_backward(p_m)
        return p_m

    @classmethod
    def backward(cls, ctx, dY):
        Y, = ctx.saved_tensors
        gppr = torch.where(Y > 0, Y ** (2 - ctx.alpha), Y.new_zeros(1))
        dX = dY * gppr
        q = dX.sum(ctx.dim) / gppr.sum(ctx.dim)
        q = q.unsqueeze(ctx.dim)
        dX -= q * gppr
        d_alpha = None
        return dX, d_alpha, None, None, None


def sparsemax(X, dim=-1, k=None):
    return SparsemaxFunction.apply(X, dim, k)


def entmax15(X, dim=-1, k=None):
    return Entmax15Function.apply(X, dim, k)


def entmax_bisect(X, alpha=1.5, dim=-1, n_iter=50, ensure_sum_one=True):
    return EntmaxBisectFunction.apply(X, alpha, dim, n_iter, ensure_sum_one)


class _GenericLoss(nn.Module):
    def __init__(self, ignore_index=-100, reduction="elementwise_mean"):
        assert reduction in ["elementwise_mean", "sum", "none"]
        self.reduction = reduction
        self.ignore_index = ignore_index
        super(_GenericLoss, self).__init__()

    def forward(self, X, target):
        loss = self.loss(X, target)
        if self.ignore_index >= 0:
            ignored_positions = target == self.ignore_index
            size = float((target.size(0) - ignored_positions.sum()).item())
            loss.masked_fill_(ignored_positions, 0.0)
        else:
            size = float(target.size(0))
        if self.reduction == "sum":
            loss = loss.sum()
        elif self.reduction == "elementwise_mean":
            loss = loss.sum() / size
        return loss


class SparsemaxLoss(_GenericLoss):
    def __init__(self, k=None, ignore_index=-100, reduction="elementwise_mean"):
        self.k = k
        super(SparsemaxLoss, self).__init__(ignore_index, reduction)

    def loss(self, X, target):
        p_star = sparsemax(X, -1, self.k)
        loss = 0.5 - 0.5 * (p_star ** 2).sum(dim=1)
        loss = loss + (p_star * X).sum(dim=1) - X.gather(1, target.unsqueeze(1)).squeeze(1)
        return loss


class Entmax15Loss(_GenericLoss):
    def __init__(self, k=None, ignore_index=-100, reduction="elementwise_mean"):
        self.k = k
        super(Entmax15Loss, self).__init__(ignore_index, reduction)

    def loss(self, X, target):
        p_star = entmax15(X, -1, self.k)
        loss = (1 - (p_star ** 1.5).sum(dim=1)) / 0.75
        loss = loss + torch.einsum("ij,ij->i", p_star, X) - X.gather(1, target.unsqueeze(1)).squeeze(1)
        return loss


class AttnClassifier(nn.Module):
    def __init__(self, vocab, dim, n_classes, normaliser):
        super().__init__()
        self.emb = nn.Embedding(vocab, dim)
        self.score = nn.Sequential(nn.Linear(dim, dim), nn.Tanh(), nn.Linear(dim, 1, bias=False))
        self.out = nn.Linear(dim, n_classes)
        self.normaliser = normaliser

    def forward(self, x):
        h = self.emb(x)
        s = self.score(h).squeeze(-1)
        if self.normaliser == "sparsemax":
            a = sparsemax(s, dim=1)
        elif self.normaliser == "entmax15":
            a = entmax15(s, dim=-1)
        elif self.normaliser == "bisect":
            a = entmax_bisect(s, alpha=1.3, dim=-1, n_iter=30)
        else:
            a = torch.softmax(s, dim=1)
        return self.out((a.unsqueeze(-1) * h).sum(1)), a


def main(argv=None):
    parser = argparse.ArgumentParser()
    parser.add_argument("--attn", default="sparsemax")
    parser.add_argument("--loss", default="sparsemax")
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--quiet", action="store_true")
    args = parser.parse_args(argv)
    log = (lambda *a: None) if args.quiet else print
    torch.manual_seed(0)
    vocab, n_classes = 30, 5
    X = torch.randint(0, vocab, (48, 10))
    y = X[:, 0] % n_classes
    model = AttnClassifier(vocab, 16, n_classes, args.attn)
    initial_state = {k: v.clone() for k, v in model.state_dict().items()}
    if args.loss == "sparsemax":
        criterion = SparsemaxLoss(ignore_index=4)
    elif args.loss == "entmax15":
        criterion = Entmax15Loss(k=3, ignore_index=4, reduction="sum")
    else:
        criterion = nn.CrossEntropyLoss()
    optimizer = torch.optim.Adam(model.parameters(), lr=0.02)
    step_losses, sparsity = [], []
    for step in range(args.steps):
        logits, a = model(X)
        loss = criterion(logits, y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        step_losses.append(loss.item())
        sparsity.append((a == 0).float().mean().item())
        log(step, loss.item(), sparsity[-1])
    Z = torch.randn(4, 7, dtype=torch.float64, requires_grad=True)
    checks = {}
    for name, fn in (("sparsemax", lambda z: sparsemax(z, 1)), ("entmax15", lambda z: entmax15(z, 1)),
                     ("bisect", lambda z: entmax_bisect(z, 1.5, -1, 60)), ("sparsemax0", lambda z: sparsemax(z, 0))):
        out = fn(Z)
        (g,) = torch.autograd.grad((out * torch.arange(7, dtype=torch.float64)).sum(), Z)
        checks[name] = (out.detach(), g)
    return {"initial_state": initial_state, "step_losses": step_losses, "sparsity": sparsity,
            "checks": checks, "gradcheck": torch.autograd.gradcheck(lambda z: sparsemax(z, 1), (Z,))}


if __name__ == "__main__":
    main()
