"""Specs of the ops issue 16 adds (torch programs that run unchanged): clamp_min/clamp_max, logaddexp,
heaviside, frac, xlogy, nan_to_num, addcmul/addcdiv, and the shape, product and indexing ops after them."""
from __future__ import annotations

from .core import DTYPES, FLOATS
from .gen import G
from .specs import NUM, add, g_binary, g_unary


# --------------------------------------------------------------------------- pointwise
def g_bound(g: G):
    a = g.t()
    if g.p(0.4):
        return (a, g.scalar(g.pick(["int", "float"]))), {}
    return (a, g.t(g.bshape(a.shape), g.other_dtype(0.7))), {}


add("clamp_min", g_bound, inplace="clamp_min_", out=True, n=14)
add("clamp_max", g_bound, inplace="clamp_max_", out=True, n=14)
add("logaddexp", lambda g: g_binary(g, 0.0), out=True, n=14)


def g_heaviside(g: G):
    a = g.t()
    return (a, g.t(g.bshape(a.shape), g.other_dtype(0.85))), {}


# torch has no derivative for heaviside (its backward raises): no gradient cases
add("heaviside", g_heaviside, inplace="heaviside_", out=True, grad=False, n=12)
add("frac", g_unary, inplace="frac_", out=True, n=12)
add("xlogy", lambda g: g_binary(g, 0.25), inplace="xlogy_", out=True, n=16)
add("xlogy_scalar_self", lambda g: ((g.scalar(g.pick(["int", "float"])), g.t()), {}), func="xlogy", method=None, n=6)


def g_nan_to_num(g: G):
    kw = {}
    for name in ("nan", "posinf", "neginf"):
        if g.p(0.4):
            kw[name] = g.pick([0.0, 1.5, -2.0, 1e30, None])
    return (g.t(edge=g.p(0.7)),), kw


add("nan_to_num", g_nan_to_num, inplace="nan_to_num_", out=True, n=14)


def g_addc(g: G, div=False):
    a = g.t()
    t1 = g.t(g.bshape(a.shape), g.other_dtype(0.8))
    t2 = g.t(g.bshape(a.shape), g.other_dtype(0.8))
    kw = {"value": g.pick([2, 0.5, -1])} if g.p(0.5) else {}
    return (a, t1, t2), kw


add("addcmul", g_addc, inplace="addcmul_", out=True, n=14)
add("addcdiv", lambda g: g_addc(g, True), inplace="addcdiv_", out=True, n=14)
