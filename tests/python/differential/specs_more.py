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
add("nan_to_num_func_", lambda g: (lambda r: ((r[0][0].__class__(r[0][0].base, r[0][0].dtype, r[0][0].view, False),), r[1]))(g_nan_to_num(g)),
    func="nan_to_num_", method=None, grad=False, n=4)


def g_addc(g: G, div=False):
    a = g.t()
    t1 = g.t(g.bshape(a.shape), g.other_dtype(0.8))
    t2 = g.t(g.bshape(a.shape), g.other_dtype(0.8))
    kw = {"value": g.pick([2, 0.5, -1])} if g.p(0.5) else {}
    return (a, t1, t2), kw


add("addcmul", g_addc, inplace="addcmul_", out=True, n=14)
add("addcdiv", lambda g: g_addc(g, True), inplace="addcdiv_", out=True, n=14)


# --------------------------------------------------------------------------- products and shape ops
def g_diag(g: G):
    a = g.t(g.shape(0, 3))
    return ((a, g.int(-2, 2)) if g.p(0.5) else (a,)), {}


add("diag", g_diag, n=10)
add("diag_embed", lambda g: ((g.t(g.shape(0, 3)),), {"offset": g.int(-1, 1), "dim1": g.dim(3), "dim2": g.dim(3)} if g.p(0.6) else {}), n=10)
add("trace", lambda g: ((g.t(g.shape(1, 3)),), {}), n=8)


def g_cross(g: G):
    s = list(g.shape(1, 3))
    s[g.int(0, len(s) - 1)] = 3 if g.p(0.9) else 2
    a = g.t(tuple(s))
    b = g.t(g.bshape(a.shape, 0.03), g.other_dtype(0.9, NUM))
    kw = {"dim": g.pick([i for i, n in enumerate(s) if n == 3] or [0])} if g.p(0.6) else {}
    return (a, b), kw


add("cross", g_cross, out=True, dtypes=NUM, n=12)
add("linalg_cross", lambda g: (lambda r: (r[0], {"dim": r[1].get("dim", -1)} if True else {}))(g_cross(g)),
    func="linalg.cross", method=None, out=True, dtypes=NUM, n=8)
add("kron", lambda g: ((g.t(g.shape(0, 2, max_size=3)), g.t(g.shape(0, 2, max_size=3), g.other_dtype(0.8))), {}), out=True, n=10)


def g_tensordot(g: G):
    a, b = g.t((g.int(1, 3), g.int(1, 3))), None
    k = g.pick([0, 1, 2, "lists"])
    if k == "lists":
        b = g.t((a.shape[0], g.int(1, 2)))
        return (a, b), {"dims": ([0], [0])}
    b = g.t(tuple(a.shape[2 - k:]) + (g.int(1, 2),))
    return (a, b), {"dims": k}


add("tensordot", extremes=False, gen=g_tensordot, method=None, dtypes=NUM, n=10)


def g_baddbmm(g: G, batched=True):
    b, n, k, m = g.int(0, 2), g.int(1, 3), g.int(0, 3), g.int(1, 3)
    shape = (b, n, m) if batched else (n, m)
    kw = {}
    if g.p(0.5):
        kw["beta"] = g.pick([0, 1, 0.5])
    if g.p(0.5):
        kw["alpha"] = g.pick([1, -1, 1.5])
    return (g.t(g.bshape(shape, 0.03)), g.t((b, n, k)), g.t((b, k, m))), kw


add("baddbmm", extremes=False, gen=g_baddbmm, out=True, dtypes=FLOATS, n=10)
add("addbmm", extremes=False, gen=lambda g: g_baddbmm(g, False), out=True, dtypes=FLOATS, n=10)
add("meshgrid", lambda g: (tuple(g.t((g.int(0, 3),) if g.p(0.9) else ()) for _ in range(g.int(1, 3))),
                           {"indexing": g.pick(["ij", "xy"])}), method=None, n=10)
add("fliplr", lambda g: ((g.t(g.shape(1, 3)),), {}), n=8)
add("flipud", lambda g: ((g.t(g.shape(0, 3)),), {}), n=8)
add("rot90", lambda g: (lambda a: ((a, g.int(-2, 5), [g.dim(len(a.shape)), g.dim(len(a.shape))]), {}))(g.t(g.shape(2, 3))), n=10)
add("tile", lambda g: (lambda a: ((a, tuple(g.int(0, 2) for _ in range(g.int(0, 3)))), {}))(g.t(g.shape(0, 2))), n=8)


def g_repeat_interleave(g: G):
    a = g.t(g.shape(0, 2))
    d = g.dim(len(a.shape)) if g.p(0.6) else None
    if g.p(0.5):
        return (a, g.int(0, 3) if g.p(0.95) else -1), ({"dim": d} if d is not None else {})
    size = a.shape[d] if (d is not None and a.shape and -len(a.shape) <= d < len(a.shape)) else int(__import__("numpy").prod(a.shape))
    reps = g.index(4, (size,), oob_p=0.0, neg=False)
    return (a, reps), ({"dim": d} if d is not None else {})


add("repeat_interleave", g_repeat_interleave, n=14)


def g_index_along(g: G, kind):
    a = g.t(g.shape(1, 3))
    nd = len(a.shape)
    d = g.dim(nd, 0.03)
    size = a.shape[d] if -nd <= d < nd else 1
    idx = g.index(size, (g.int(0, 3),), neg=False, oob_p=0.05, dtype="int64" if kind != "add" or g.p(0.7) else "int32")
    if kind == "copy":   # unique positions: the order duplicates are written in is unspecified
        import numpy as np
        from .core import T
        idx = T(g.rng.permutation(max(size, 1))[:min(size, 2)].astype(np.int64), "int64", (), False)
    if kind == "fill":
        return (a, d, idx, g.scalar(g.pick(["int", "float"])) if g.p(0.7) else g.t((), a.dtype)), {}
    src_shape = list(a.shape)
    if -nd <= d < nd:
        src_shape[d] = int(idx.base.size)
    src = g.t(tuple(src_shape), a.dtype)
    return (a, d, idx, src), ({"alpha": g.pick([2, -1])} if kind == "add" and g.p(0.3) else {})


add("index_add", lambda g: g_index_along(g, "add"), inplace="index_add_", n=12)
add("index_copy", lambda g: g_index_along(g, "copy"), inplace="index_copy_", n=10)
add("index_fill", lambda g: g_index_along(g, "fill"), inplace="index_fill_", n=10)


def g_masked_scatter(g: G):
    a = g.t()
    m = g.t(g.bshape(a.shape), "bool", grad=False)
    import numpy as np
    try:
        n = int(np.prod(np.broadcast_shapes(a.shape, m.shape))) if g.p(0.95) else 0
    except ValueError:   # shapes that do not broadcast: the error is the case
        n = 1
    return (a, m, g.t((n,), a.dtype)), {}


add("masked_scatter", g_masked_scatter, inplace="masked_scatter_", n=12)
