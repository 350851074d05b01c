"""Helpers the ninth hunt's snippets import (`from h9 import *`): inputs from NumPy's seeded generator (the same
bits in both libraries) and the gradients of sum(out * w) with NumPy-seeded weights w.
The library is whichever of kiln / torch the worker imported."""
import sys
import numpy as np

torch = sys.modules['kiln'] if 'kiln' in sys.modules else sys.modules['torch']


def A(*shape, seed=0, lo=None, hi=None, pos=False):
    """A float64 NumPy array: normal values, or uniform in [lo, hi), or |normal| + 0.5 (pos)."""
    rs = np.random.RandomState(seed)
    if lo is not None:
        return rs.uniform(lo, hi, size=shape)
    a = rs.randn(*shape)
    return np.abs(a) + 0.5 if pos else a


def T(*shape, seed=0, g=True, **kw):
    """A float64 leaf requiring grad."""
    return torch.tensor(A(*shape, seed=seed, **kw), dtype=torch.float64, requires_grad=g)


def SPD(n, seed=0, batch=()):
    """A symmetric positive definite leaf (well conditioned)."""
    a = A(*batch, n, n, seed=seed)
    m = a @ np.swapaxes(a, -1, -2) + n * np.eye(n)
    return torch.tensor(m, dtype=torch.float64, requires_grad=True)


def _loss(y, k0=100):
    ys = list(y) if isinstance(y, (tuple, list)) else [y]
    loss = None
    for k, yy in enumerate(ys):
        if not hasattr(yy, 'requires_grad') or not yy.requires_grad:
            continue
        w = torch.tensor(A(*yy.shape, seed=k0 + k), dtype=yy.dtype)
        term = (yy * w).sum()
        loss = term if loss is None else loss + term
    return loss


def _real(gs):
    """torch 1.13 returns some zero gradients as ZeroTensors (no storage: .numpy() reads garbage): copies."""
    return tuple(g.detach().clone() if g is not None and getattr(g, '_is_zerotensor', lambda: False)() else g
                 for g in gs)


def G(y, *xs):
    """Gradients of sum(y * w) (summed over the differentiable outputs) w.r.t. xs."""
    return _real(torch.autograd.grad(_loss(y), xs, allow_unused=True))


def G2(y, *xs):
    """Second order: the gradient of sum(G(y, xs) * v) w.r.t. xs (create_graph on the first)."""
    g = torch.autograd.grad(_loss(y), xs, create_graph=True, allow_unused=True)
    l2 = _loss([t for t in g if t is not None], k0=200)
    if l2 is None or not l2.requires_grad:
        return _real(g), None
    return _real(g), _real(torch.autograd.grad(l2, xs, allow_unused=True))


def NC(x):
    """A non-contiguous leaf with x's values: the transpose of a contiguous transposed copy."""
    y = x.detach().transpose(-1, -2).contiguous().transpose(-1, -2)
    return y.requires_grad_(True)
