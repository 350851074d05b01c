"""The curated table: for each op family, argument generators; the ops of a family share one."""
from __future__ import annotations

import math
from typing import List

import numpy as np

from .cases import Spec
from .core import DTYPES, FLOATS, INTS, D, T
from .gen import G

inf, nan = math.inf, math.nan
NUM = ("int32", "int64") + FLOATS
INTEGRAL = ("bool", "int32", "int64")
SPECS: List[Spec] = []


def add(key, gen, **kw):
    kw.setdefault("func", key)
    kw.setdefault("method", key)
    SPECS.append(Spec(key, gen, **kw))


# --------------------------------------------------------------------------- unary pointwise
def g_unary(g: G):
    return (g.t(),), {}


for name in ["abs", "ceil", "cos", "erf", "exp", "expm1", "floor", "log", "log1p", "neg", "reciprocal",
             "round", "rsqrt", "sigmoid", "sign", "sin", "sqrt", "tanh", "trunc"]:
    # torch 1.13's log1p overflows to inf near the largest float (kiln is right): no ±max there
    add(name, g_unary, inplace=name + "_", out=True, n=14, extremes=name != "log1p")
add("relu", g_unary, inplace="relu_", n=10)
for name in ["isfinite", "isinf", "isnan"]:
    add(name, g_unary, grad=False, n=8)
add("logical_not", g_unary, inplace="logical_not_", out=True, grad=False, n=10)
add("bitwise_not", g_unary, inplace="bitwise_not_", out=True, grad=False, n=8, dtypes=INTEGRAL + ("float32",))
add("round_decimals", lambda g: ((g.t(),), {"decimals": g.pick([0, 1, 2, -1])}),
    func="round", method="round", inplace="round_", dtypes=FLOATS + INTS, n=8)
add("clone", g_unary, inplace=None, n=8)
add("contiguous", lambda g: ((g.t(),), {}), func=None, n=8)
SPECS.append(Spec("-x", g_unary, template="-{0}", n=6))
SPECS.append(Spec("~x", g_unary, template="~{0}", dtypes=INTEGRAL, grad=False, n=6))
SPECS.append(Spec("abs(x)", g_unary, template="abs({0})", n=4))


# --------------------------------------------------------------------------- binary pointwise
def g_binary(g: G, scalar_p=0.25, dtypes=DTYPES):
    a = g.t()
    if g.p(scalar_p):
        return (a, g.scalar()), {}
    b = g.t(g.bshape(a.shape), g.other_dtype(choices=dtypes))
    if g.p(0.15):   # the broadcast can go either way
        return (b, a), {}
    return (a, b), {}


for name in ["add", "sub", "mul", "div", "atan2", "eq", "ne", "lt", "le", "gt", "ge", "maximum", "minimum",
             "fmod", "remainder", "pow", "floor_divide", "bitwise_and", "bitwise_or", "bitwise_xor",
             "logical_and", "logical_or", "logical_xor"]:
    grad = name not in ("eq", "ne", "lt", "le", "gt", "ge", "floor_divide", "bitwise_and", "bitwise_or",
                        "bitwise_xor", "logical_and", "logical_or", "logical_xor")
    sc = 0.0 if name in ("atan2", "maximum", "minimum", "logical_and", "logical_or", "logical_xor") else 0.25
    # bitwise ops: mostly integral dtypes (floats only check the error)
    dts = INTEGRAL + ("float32",) if name.startswith("bitwise") else DTYPES
    add(name, lambda g, sc=sc, dts=dts: g_binary(g, sc, dts), inplace=name + "_", out=True, grad=grad, n=16, dtypes=dts)
# torch's alias names (python/kiln/_tensor.py): the same cases as the ops they name
for name, inplace in [("multiply", "multiply_"), ("subtract", "subtract_"), ("divide", "divide_"),
                      ("true_divide", "true_divide_"), ("greater", None), ("greater_equal", None), ("less", None),
                      ("less_equal", None), ("not_equal", None)]:
    add(name, lambda g: g_binary(g, 0.25), inplace=inplace, n=6,
        grad=name in ("multiply", "subtract", "divide", "true_divide"))
for name in ["square", "negative", "absolute"]:
    add(name, g_unary, inplace=name + "_", n=6)
# the math formula ops (schema: log2 ... copysign) and torch's arc* aliases of them
for name in ["log2", "log10", "exp2", "asin", "acos", "atan", "sinh", "cosh", "tan", "asinh", "acosh", "atanh",
             "erfc", "erfinv", "sgn", "deg2rad", "rad2deg", "logit"]:
    add(name, g_unary, inplace=name + "_", out=True, n=10)
for name in ["arcsin", "arccos", "arctan", "arcsinh", "arccosh", "arctanh"]:
    add(name, g_unary, inplace=name + "_", n=6)
add("logit_eps", lambda g: ((g.t(),), {"eps": g.pick([0.0, 1e-3, 0.25])}), func="logit", method="logit",
    inplace="logit_", n=8)
for name in ["hypot", "copysign"]:
    add(name, lambda g, sc=(0.25 if name == "copysign" else 0.0): g_binary(g, sc), inplace=name + "_", out=True, n=10)
add("count_nonzero", lambda g: (lambda a: ((a,), {}) if g.p(0.4) else ((a, g.dim(max(len(a.shape), 1))), {}))(g.t()),
    grad=False, n=8)
add("add_alpha", lambda g: (g_binary(g, 0.2)[0], {"alpha": g.pick([2, -1, 0.5, True])}),
    func="add", method="add", inplace="add_", out=True, n=10)
add("sub_alpha", lambda g: (g_binary(g, 0.2)[0], {"alpha": g.pick([2, -1, 0.5])}),
    func="sub", method="sub", inplace="sub_", out=True, n=8)
add("div_mode", lambda g: (g_binary(g, 0.25)[0], {"rounding_mode": g.pick(["trunc", "floor", None])}),
    func="div", method="div", inplace="div_", out=True, n=12)
for op in ["+", "-", "*", "/", "**", "//", "%", "&", "|", "^", "==", "!=", "<", "<=", ">", ">="]:
    SPECS.append(Spec(f"x{op}y", g_binary, template="{0} " + op + " {1}", n=8,
                      grad=op in ("+", "-", "*", "/", "**"), dtypes=INTEGRAL + ("float32",) if op in "&|^" else DTYPES))
for op in ["+", "-", "*", "/", "**", "//", "%"]:
    SPECS.append(Spec(f"s{op}x", lambda g: ((g.t(), g.scalar()), {}), template="{1} " + op + " {0}", n=6))
for op in ["+=", "-=", "*=", "/=", "//=", "%=", "**=", "&=", "|=", "^="]:
    SPECS.append(Spec(f"x{op}y", g_binary, template="exec:_r = {0}; _r " + op + " {1}", n=6,
                      grad=False, dtypes=INTEGRAL + ("float32",) if op in ("&=", "|=", "^=") else DTYPES))


def g_lerp(g: G):
    a = g.t(dtype=g.pick(FLOATS) if g.dtype not in FLOATS else g.dtype)
    b = g.t(g.bshape(a.shape), g.other_dtype(0.8, FLOATS))
    w = g.scalar("float") if g.p(0.5) else g.t(g.bshape(a.shape), g.other_dtype(0.8, FLOATS))
    return (a, b, w), {}


add("lerp", g_lerp, inplace="lerp_", out=True, n=12)


def g_where(g: G):
    c = g.t(dtype="bool", grad=False)
    a = g.scalar() if g.p(0.2) else g.t(g.bshape(c.shape))
    b = g.scalar() if g.p(0.2) else g.t(g.bshape(c.shape), g.other_dtype(0.7))
    return (c, a, b), {}


add("where", g_where, method=None, n=12)
add("where_cond", lambda g: ((g.t(),), {}), func="where", method=None, grad=False, n=4)
add("Tensor.where", lambda g: (lambda a, c: ((a, c, g.t(g.bshape(a.shape))), {}))(g.t(), g.t(dtype="bool")),
    func=None, method="where", n=6)


def g_clamp(g: G):
    a = g.t()
    def bound():
        r = g.rng.random()
        if r < 0.25:
            return None
        if r < 0.7:
            return g.scalar(g.pick(["int", "float"]))
        return g.t(g.bshape(a.shape), g.other_dtype(0.7, NUM))
    lo, hi = bound(), bound()
    return (a,), {"min": lo, "max": hi}


add("clamp", g_clamp, inplace="clamp_", out=True, n=16)
add("clip", g_clamp, inplace="clip_", n=8)


def g_masked_fill(g: G):
    a = g.t()
    m = g.t(g.bshape(a.shape), "bool", grad=False)
    v = g.scalar() if g.p(0.7) else g.t((), g.other_dtype(0.6))
    return (a, m, v), {}


add("masked_fill", g_masked_fill, inplace="masked_fill_", n=12)


def g_isclose(g: G):
    (a, b), _ = g_binary(g, 0.0)
    return (a, b), {"rtol": g.pick([1e-5, 0.1, 0.0]), "atol": g.pick([1e-8, 0.5]), "equal_nan": g.p(0.5)}


add("isclose", g_isclose, grad=False, n=10)
add("allclose", g_isclose, grad=False, n=8)
add("equal", lambda g: g_binary(g, 0.0), grad=False, n=8)


# --------------------------------------------------------------------------- reductions
def g_reduce(g: G, dims_tuple=True, dtype_kw=False, need_dim=False):
    a = g.t()
    kw = {}
    nd = len(a.shape)
    r = g.rng.random()
    if need_dim or r < 0.7:
        kw["dim"] = g.dims(nd) if (dims_tuple and g.p(0.4)) else g.dim(nd)
        if g.p(0.5):
            kw["keepdim"] = g.p(0.5)
    if dtype_kw and g.p(0.3):
        kw["dtype"] = D(g.pick(list(DTYPES)))
    return (a,), kw


add("sum", extremes=False, gen=lambda g: g_reduce(g, True, True), out=True, n=20)
add("mean", extremes=False, gen=lambda g: g_reduce(g, True, True), out=True, n=16)
add("prod", lambda g: g_reduce(g, False, True), out=True, n=14)


def g_median(g: G):
    a = g.t()   # ties and NaNs included: kiln picks torch's index among equal values
    kw = {}
    if g.p(0.7):
        kw["dim"] = g.dim(len(a.shape))
        if g.p(0.5):
            kw["keepdim"] = g.p(0.5)
    return (a,), kw


# torch 1.13 has no float16/bfloat16 median on the CPU: compared without.
_NO_REDUCED = ("bool", "int32", "int64", "float32", "float64")
add("median", g_median, n=16, dtypes=_NO_REDUCED)
add("nanmedian", g_median, n=14, dtypes=_NO_REDUCED)
add("nansum", lambda g: g_reduce(g, True, True), out=True, n=14, dtypes=_NO_REDUCED)
add("nanmean", lambda g: g_reduce(g, True, True), out=True, n=12, dtypes=_NO_REDUCED)
add("amax", lambda g: g_reduce(g, True), out=True, n=12)
add("amin", lambda g: g_reduce(g, True), out=True, n=12)
add("max_dim", lambda g: g_reduce(g, False, need_dim=g.p(0.6)), func="max", method="max", n=14)
add("min_dim", lambda g: g_reduce(g, False, need_dim=g.p(0.6)), func="min", method="min", n=14)
add("max_binary", lambda g: g_binary(g, 0.0), func="max", method="max", n=6)
add("argmax", lambda g: g_reduce(g, False), grad=False, n=12)
add("argmin", lambda g: g_reduce(g, False), grad=False, n=12)
add("all", lambda g: g_reduce(g, False), grad=False, n=12)
add("any", lambda g: g_reduce(g, False), grad=False, n=12)


def g_stat(g: G):
    args, kw = g_reduce(g, True)
    if g.p(0.5):
        kw["unbiased"] = g.p(0.5)
    return args, kw


add("std", extremes=False, gen=g_stat, n=14)
add("var", extremes=False, gen=g_stat, n=14)


def g_norm(g: G):
    args, kw = g_reduce(g, True)
    p = g.pick([2, 1, inf, -inf, 0, 0.5, 3, "fro", None])
    if p in (inf, -inf) and 0 in args[0].shape:
        p = 2   # ±inf norm of nothing: torch 1.13 gives 0, torch 2 (and kiln, by design) raise
    if p is not None:
        kw["p"] = p
    return args, kw


add("norm", extremes=False, gen=g_norm, n=16)
add("logsumexp", extremes=False, gen=lambda g: g_reduce(g, True, need_dim=True), out=True, n=12)
def g_scan(g: G):
    (a,), kw = g_reduce(g, False, True, need_dim=True)
    kw.pop("keepdim", None)
    return (a,), kw


add("cumsum", extremes=False, gen=g_scan, out=True, n=12)
add("cumprod", g_scan, out=True, n=12)


def g_softmax(g: G):
    (a,), kw = g_reduce(g, False, True, need_dim=True)
    kw.pop("keepdim", None)
    return (a,), kw


add("softmax", g_softmax, n=12)
add("log_softmax", g_softmax, n=12)
add("F.softmax", lambda g: (lambda r: (r[0], {**r[1], "dim": None}) if g.p(0.2) else r)(g_softmax(g)),
    func="nn.functional.softmax", method=None, n=8)
add("F.log_softmax", g_softmax, func="nn.functional.log_softmax", method=None, n=8)


# --------------------------------------------------------------------------- sort family
def g_sort(g: G):
    a = g.t(unique=True, layout="noexpand")   # no ties: indices of equal values may differ
    kw = {}
    if g.p(0.7):
        kw["dim"] = g.dim(len(a.shape))
    if g.p(0.5):
        kw["descending"] = g.p(0.5)
    return (a,), kw


add("sort", g_sort, n=12)
add("argsort", g_sort, grad=False, n=10)


def g_topk(g: G):
    a = g.t(unique=True, layout="noexpand")
    nd = len(a.shape)
    d = g.dim(nd, 0.03)
    size = a.shape[d] if nd and -nd <= d < nd else 1
    k = g.int(0, size) if g.p(0.95) else size + 1
    kw = {"dim": d}
    if g.p(0.5):
        kw["largest"] = g.p(0.5)
    return (a, k), kw


add("topk", g_topk, n=12)


def g_kthvalue(g: G):
    a = g.t(unique=True, layout="noexpand")
    nd = len(a.shape)
    d = g.dim(nd, 0.03)
    size = a.shape[d] if nd and -nd <= d < nd else 1
    k = g.int(1, size) if (g.p(0.95) and size > 0) else size + 1
    kw = {"dim": d}
    if g.p(0.5):
        kw["keepdim"] = g.p(0.5)
    return (a, k), kw


add("kthvalue", g_kthvalue, n=10)
add("msort", lambda g: ((g.t(unique=True, layout="noexpand"),), {}), n=6)


def g_tensor_split(g: G):
    a = g.t()
    nd = len(a.shape)
    d = g.dim(nd, 0.05)
    if g.p(0.5):
        return (a, g.int(0, 4)), {"dim": d}
    return (a, sorted(g.int(-3, 5) for _ in range(g.int(0, 3)))), {"dim": d}


add("tensor_split", g_tensor_split, grad=False, n=10)
for name in ("fmax", "fmin"):
    add(name, lambda g: g_binary(g, 0.0), out=True, n=12)


# --------------------------------------------------------------------------- linear algebra
def g_mm(g: G):
    n, k, m = g.int(0, 4), g.int(0, 4), g.int(0, 4)
    k2 = k if g.p(0.93) else k + 1
    dt = g.dtype
    return (g.t((n, k)), g.t((k2, m), g.other_dtype(0.9))), {}


add("mm", extremes=False, gen=g_mm, out=True, n=12)
add("bmm", extremes=False, gen=lambda g: (lambda b, n, k, m: ((g.t((b, n, k)), g.t((b if g.p(0.95) else b + 1, k, m))), {}))(
    g.int(0, 3), g.int(1, 3), g.int(0, 3), g.int(1, 3)), out=True, n=10)


def g_matmul(g: G):
    k = g.int(1, 4)
    sa = g.pick([(k,), (g.int(1, 3), k), (g.int(1, 2), g.int(1, 3), k), (2, 1, g.int(1, 3), k)])
    sb = g.pick([(k,), (k, g.int(1, 3)), (g.int(1, 2), k, g.int(1, 3)), (1, k, 2)])
    if g.p(0.05):
        sb = (k + 1,)
    return (g.t(sa), g.t(sb)), {}


add("matmul", extremes=False, gen=g_matmul, out=True, n=14)
SPECS.append(Spec("x@y", g_matmul, extremes=False, template="{0} @ {1}", n=6))
add("mv", extremes=False, gen=lambda g: (lambda n, k: ((g.t((n, k)), g.t((k if g.p(0.95) else k + 1,))), {}))(g.int(0, 4), g.int(0, 4)),
    out=True, n=8)
add("dot", extremes=False, gen=lambda g: (lambda k: ((g.t((k,)), g.t((k if g.p(0.9) else k + 1,), g.other_dtype(0.9))), {}))(g.int(0, 5)),
    out=True, n=8)
add("outer", lambda g: ((g.t((g.int(0, 4),)), g.t((g.int(0, 4),), g.other_dtype(0.8))), {}), out=True, n=8)


def g_addmm(g: G):
    n, k, m = g.int(0, 3), g.int(0, 3), g.int(0, 3)
    kw = {}
    if g.p(0.6):
        kw["beta"] = g.pick([0, 1, 2, 0.5])
    if g.p(0.6):
        kw["alpha"] = g.pick([0, 1, -1, 1.5])
    return (g.t(g.bshape((n, m), 0.03)), g.t((n, k)), g.t((k, m))), kw


add("addmm", extremes=False, gen=g_addmm, out=True, n=12)


def g_einsum(g: G):
    eq, shapes = g.pick([("ij,jk->ik", [(2, 3), (3, 2)]), ("i,i->", [(3,), (3,)]), ("ij->ji", [(2, 3)]),
                         ("bij,bjk->bik", [(2, 2, 3), (2, 3, 1)]), ("ii->i", [(3, 3)]), ("ij->", [(2, 0)]),
                         ("i,j->ij", [(2,), (3,)]), ("...ij->...ji", [(2, 1, 3)]), ("ij,ij->i", [(2, 3), (2, 4)])])
    return (eq,) + tuple(g.t(s, layout=False) for s in shapes), {}


SPECS.append(Spec("einsum", g_einsum, extremes=False, func="einsum", dtypes=FLOATS, n=12, variants=[]))


# --------------------------------------------------------------------------- shape and view ops
def g_reshape(g: G):
    a = g.t()
    n = int(__import__("numpy").prod(a.shape)) if a.shape else 1
    cands = [(n,), (-1,), (1, n), (n, 1, -1) if n else (0, -1, 1), ()] if n != 1 else [(), (1,), (1, 1, -1)]
    if n:
        cands += [tuple(x for x in (2, -1) if n % 2 == 0)] if n % 2 == 0 else [(n + 1,)]
    else:
        cands += [(0, 3), (-1, 0)]
    shape = g.pick([c for c in cands if c != ()] + [()] if n == 1 else [c for c in cands if c != ()])
    if g.p(0.04):
        shape = (-1, -1)       # only one dim may be inferred
    return (a, shape), {}


add("reshape", g_reshape, n=12)
add("view", g_reshape, func=None, n=12)
add("flatten", lambda g: (lambda a: ((a,), {"start_dim": g.dim(len(a.shape), 0.03), "end_dim": -1} if g.p(0.5) else {}))(g.t()), n=10)
add("ravel", g_unary, n=6)
add("broadcast_tensors", lambda g: g_binary(g, scalar_p=0), method=None, grad=False, n=6)


def g_unflatten(g: G):
    a = g.t(g.shape(1, 3))
    d = g.dim(len(a.shape), 0.03)
    size = a.shape[d] if -len(a.shape) <= d < len(a.shape) else 1
    sizes = g.pick([(size,), (1, size), (-1, 1), (size, 1)]) if size else g.pick([(0,), (0, 2)])
    return (a, d, sizes), {}


add("unflatten", g_unflatten, n=8)
add("squeeze", lambda g: (lambda a: ((a,) if g.p(0.3) else (a, g.dim(len(a.shape))), {}))(g.t(g.pick([(1, 3), (3, 1, 1), (), (1,), (2, 0, 1)]))), n=10)
add("unsqueeze", lambda g: (lambda a: ((a, g.dim(len(a.shape) + 1)), {}))(g.t()), n=10)


def g_permute(g: G):
    a = g.t()
    nd = len(a.shape)
    perm = [int(x) for x in g.rng.permutation(nd)]
    if g.p(0.3):
        perm = [p - nd for p in perm]
    if g.p(0.06):
        perm = perm + [0] if nd else [0]
    return (a, tuple(perm)), {}


add("permute", g_permute, n=10)
add("transpose", lambda g: (lambda a: ((a, g.dim(len(a.shape)), g.dim(len(a.shape))), {}))(g.t()), n=10)
add("swapaxes", lambda g: (lambda a: ((a, g.dim(len(a.shape)), g.dim(len(a.shape))), {}))(g.t()), n=4)
add("swapdims", lambda g: (lambda a: ((a, g.dim(len(a.shape)), g.dim(len(a.shape))), {}))(g.t()), n=4)
add("t", lambda g: ((g.t(g.shape(0, 3)),), {}), n=8)
SPECS.append(Spec("x.T", lambda g: ((g.t(g.shape(0, 2)),), {}), template="{0}.T", n=6))
SPECS.append(Spec("x.mT", lambda g: ((g.t(g.shape(0, 3)),), {}), template="{0}.mT", n=6))


def g_movedim(g: G):
    a = g.t()
    nd = len(a.shape)
    if g.p(0.6) or nd < 2:
        return (a, g.dim(nd), g.dim(nd)), {}
    k = g.int(1, nd)
    src = tuple(int(x) for x in g.rng.permutation(nd)[:k])
    dst = tuple(int(x) for x in g.rng.permutation(nd)[:k])
    return (a, src, dst), {}


add("movedim", g_movedim, n=10)
add("flip", lambda g: (lambda a: ((a, g.dims(len(a.shape))), {}))(g.t()), n=10)


def g_roll(g: G):
    a = g.t()
    nd = len(a.shape)
    if g.p(0.3):
        return (a, g.int(-5, 5)), {}
    if g.p(0.3) and nd >= 2:
        return (a, (g.int(-3, 3), g.int(-3, 3)), (0, g.dim(nd))), {}
    return (a, g.int(-5, 5), g.dim(nd)), {}


add("roll", g_roll, n=10)


def g_narrow(g: G):
    a = g.t(g.shape(1, 3))
    d = g.dim(len(a.shape), 0.03)
    size = a.shape[d] if -len(a.shape) <= d < len(a.shape) else 1
    start = g.int(-size, size) if size else 0
    length = g.int(0, max(size - (start % size if size else 0), 0)) if g.p(0.9) else size + 1
    return (a, d, start, length), {}


add("narrow", g_narrow, n=10)
def g_select(g: G):
    a = g.t(g.shape(1, 3))
    d = g.dim(len(a.shape), 0.03)
    n = a.shape[d] if -len(a.shape) <= d < len(a.shape) else 1
    i = g.int(-n, n - 1) if (n and g.p(0.9)) else g.pick([n, -n - 1])
    return (a, d, i), {}


add("select", g_select, n=10)


def g_chunk(g: G):
    a = g.t(g.shape(1, 3))
    return (a, g.int(1, 4) if g.p(0.95) else 0), {"dim": g.dim(len(a.shape))}


add("chunk", g_chunk, n=8)


def g_split(g: G):
    a = g.t(g.shape(1, 3))
    d = g.dim(len(a.shape), 0.03)
    size = a.shape[d] if -len(a.shape) <= d < len(a.shape) else 1
    if g.p(0.5):
        return (a, g.int(1, 3)), {"dim": d}
    parts = []
    left = size
    while left > 0:
        p = g.int(1, left)
        parts.append(p)
        left -= p
    if g.p(0.15):
        parts.append(1)
    return (a, parts), {"dim": d}


add("split", g_split, n=10)
add("split_with_sizes", lambda g: (lambda r: r if isinstance(r[0][1], list) else ((r[0][0], [r[0][0].shape[0]] if r[0][0].shape else [1]), {}))(g_split(g)), n=6)
add("unbind", lambda g: (lambda a: ((a, g.dim(len(a.shape))), {}))(g.t(g.shape(1, 3))), n=8)


def g_diagonal(g: G):
    a = g.t(g.shape(2, 3))
    nd = len(a.shape)
    kw = {}
    if g.p(0.5):
        kw["offset"] = g.int(-2, 2)
    if g.p(0.5):
        d1, d2 = g.dim(nd, 0.03), g.dim(nd, 0.03)
        kw["dim1"], kw["dim2"] = d1, d2
    return (a,), kw


add("diagonal", g_diagonal, n=10)
add("tril", lambda g: ((g.t(g.shape(1, 3)),), {"diagonal": g.int(-2, 2)} if g.p(0.5) else {}), inplace="tril_", n=10)
add("triu", lambda g: ((g.t(g.shape(1, 3)),), {"diagonal": g.int(-2, 2)} if g.p(0.5) else {}), inplace="triu_", n=10)


def g_expand(g: G):
    a = g.t(g.shape(0, 2, max_size=2))
    target = [n if n != 1 else g.pick([1, 3]) for n in a.shape]
    if g.p(0.3):
        target = [2] + target
    if g.p(0.2) and target:
        target[-1] = -1
    if g.p(0.05) and target:
        target[0] += 1
    return (a, tuple(target)), {}


add("expand", g_expand, func=None, n=10)
add("broadcast_to", g_expand, n=6)
add("expand_as", lambda g: (lambda r: ((r[0][0], g.t(tuple(abs(x) if x != -1 else 1 for x in r[0][1]), grad=False)), {}))(g_expand(g)), func=None, n=6)


def g_repeat(g: G):
    a = g.t(g.shape(0, 2))
    reps = tuple(g.int(0, 2) for _ in range(len(a.shape) + g.int(0, 1)))
    if g.p(0.05):
        reps = reps[:-1] if len(a.shape) else ()
    return (a, reps), {}


add("repeat", g_repeat, func=None, n=8)


def g_unfold(g: G):
    a = g.t(g.shape(1, 3))
    d = g.dim(len(a.shape), 0.03)
    size = a.shape[d] if -len(a.shape) <= d < len(a.shape) else 1
    return (a, d, g.int(0, size + 1), g.int(1, 3)), {}


add("unfold", g_unfold, func=None, n=8)


def g_cat(g: G):
    s = g.shape(1, 3)
    d = g.dim(len(s), 0.04)
    ts = []
    for _ in range(g.int(1, 3)):
        ss = list(s)
        if -len(s) <= d < len(s):
            ss[d] = g.int(0, 3)
        if g.p(0.04):
            ss[0] += 1
        ts.append(g.t(tuple(ss), g.other_dtype(0.7)))
    if g.p(0.04):
        ts.append(g.t((0,)))   # legacy: 1-d empty tensors are skipped
    if g.p(0.03):
        ts.append(g.t(()))     # 0-dim tensors cannot be concatenated
    return (ts,), {"dim": d}


add("cat", g_cat, method=None, out=True, n=14)
add("concat", g_cat, method=None, n=4)


def g_stack(g: G):
    s = g.shape(0, 2)
    ts = [g.t(s if g.p(0.95) else s + (1,), g.other_dtype(0.8)) for _ in range(g.int(1, 3))]
    return (ts,), {"dim": g.dim(len(s) + 1)}


add("stack", g_stack, method=None, out=True, n=10)


def g_joined(g: G):
    """Parts of ranks 0 to 3 sharing their leading sizes, so most lists join (some do not)."""
    base = g.shape(2, 3)
    ts = []
    for _ in range(g.int(1, 3)):
        nd = g.int(0, 3)
        s = tuple(base[:nd]) if g.p(0.85) else g.shape(nd, nd)
        ts.append(g.t(s, g.other_dtype(0.8)))
    return (ts,), {}


for _name in ("hstack", "vstack", "row_stack", "dstack", "column_stack"):
    add(_name, g_joined, method=None, out=True, n=12)


# --------------------------------------------------------------------------- indexing
def g_index_select(g: G):
    a = g.t(g.shape(1, 3))
    d = g.dim(len(a.shape), 0.03)
    size = a.shape[d] if -len(a.shape) <= d < len(a.shape) else 1
    idx = g.index(size, (g.int(0, 4),) if g.p(0.85) else (), neg=g.p(0.15), dtype=g.pick(["int64", "int64", "int32"]))
    return (a, d, idx), {}


add("index_select", g_index_select, out=True, n=12)


def g_gather(g: G):
    a = g.t(g.shape(1, 3))
    nd = len(a.shape)
    d = g.dim(nd, 0.03)
    size = a.shape[d] if -nd <= d < nd else 1
    ishape = tuple(g.int(0, n) if i != (d % nd) else g.int(0, 4) for i, n in enumerate(a.shape))
    return (a, d, g.index(size, ishape, neg=False)), {}


add("gather", g_gather, out=True, n=12)


def g_scatter(g: G, add_=False):
    a = g.t(g.shape(1, 3))
    nd = len(a.shape)
    d = g.dim(nd, 0.03)
    size = a.shape[d] if -nd <= d < nd else 1
    ishape = tuple(g.int(0, n) for n in a.shape)
    # unique positions along d, so the result does not depend on write order
    import numpy as np
    vals = np.zeros(ishape, np.int64)
    if vals.size:
        for pos in np.ndindex(*[n for i, n in enumerate(ishape) if i != d % nd]):
            perm = g.rng.permutation(size)[:ishape[d % nd]] if not add_ else g.rng.integers(0, max(size, 1), ishape[d % nd])
            sl = list(pos)
            sl.insert(d % nd, slice(None))
            vals[tuple(sl)] = perm
    idx = T(vals, "int64")
    if not add_ and g.p(0.3):
        return (a, d, idx, g.scalar(g.pick(["int", "float"]))), {}
    src = g.t(tuple(n + g.int(0, 1) for n in ishape), g.other_dtype(0.9))
    return (a, d, idx, src), {}


add("scatter", g_scatter, inplace="scatter_", n=12)
add("scatter_add", lambda g: g_scatter(g, True), inplace="scatter_add_", n=10)


def g_scatter_reduce(g: G):
    (a, d, idx, src), _ = g_scatter(g, True)
    if not hasattr(src, "shape"):
        src = g.t(tuple(idx.shape))
    reduce = g.pick(["sum", "prod", "mean", "amax", "amin"])
    return (a, d, idx, src, reduce), ({"include_self": g.p(0.5)} if g.p(0.7) else {})


add("scatter_reduce", g_scatter_reduce, inplace="scatter_reduce_", n=14)
add("take", lambda g: (lambda a: ((a, g.index(max(int(__import__("numpy").prod(a.shape)), 0), (g.int(0, 4),), neg=True)), {}))(g.t()), out=True, n=10)


def g_masked_select(g: G):
    a = g.t()
    return (a, g.t(g.bshape(a.shape), "bool", grad=False)), {}


add("masked_select", g_masked_select, out=True, n=10)
add("nonzero", lambda g: ((g.t(),), {"as_tuple": True} if g.p(0.3) else {}), grad=False, n=10)


def g_index_put(g: G):
    a = g.t(g.shape(1, 3))
    n0 = a.shape[0]
    k = g.int(0, 3)
    import numpy as np
    if g.p(0.3) and not g.p(0.5):
        idx = (g.index(n0, (k,), neg=True),)
    else:
        idx = (T(g.rng.permutation(n0)[:min(k, n0)].astype(np.int64), "int64"),)
    nsel = idx[0].base.shape[0]
    vshape = g.pick([(nsel,) + a.shape[1:], a.shape[1:], ()])
    acc = g.p(0.4)
    return (a, idx, g.t(vshape, g.other_dtype(0.85))), {"accumulate": acc}


add("index_put", g_index_put, inplace="index_put_", n=10)


def g_getitem(g: G):
    a = g.t(g.shape(0, 3))
    nd = len(a.shape)
    parts = []
    for i in range(nd):
        n = a.shape[i]
        r = g.rng.random()
        if r < 0.3:
            parts.append(slice(None))
        elif r < 0.5 and n:
            parts.append(g.int(-n, n - 1) if g.p(0.95) else n)
        elif r < 0.7:
            parts.append(slice(g.pick([None, 0, 1, -1, -5]), g.pick([None, 2, -1, 10]),
                               g.pick([None, 1, 2, 3]) if g.p(0.97) else g.pick([-1, 0])))
        elif r < 0.8:
            parts.append(g.index(n, (g.int(0, 3),), neg=True))
        elif r < 0.85:
            parts.append(None)
            parts.append(slice(None))
        else:
            parts.append(g.pick([Ellipsis, slice(None)]))
    if g.p(0.15):
        return (a, g.t(a.shape, "bool", layout=False, grad=False)), {}
    if g.p(0.1):
        parts.append(None)
    if parts.count(Ellipsis) > 1:
        parts = [p for p in parts if p is not Ellipsis] + [Ellipsis]
    return (a, tuple(parts)), {}


SPECS.append(Spec("getitem", g_getitem, template="{0}[{1}]", n=30))


def g_setitem(g: G):
    (a, idx), _ = g_getitem(g)
    a.grad = False
    v = g.scalar(g.pick(["int", "float"])) if g.p(0.4) else g.t(g.pick([(), (1,)]), g.other_dtype(0.8), grad=False)
    return (a, idx, v), {}


SPECS.append(Spec("setitem", g_setitem, template="exec:{0}[{1}] = {2}; _r = {0}", n=16, grad=False))


# --------------------------------------------------------------------------- conversions & properties
add("to", lambda g: ((g.t(), D(g.pick(list(DTYPES)))), {}), func=None, n=12)
for name in ["float", "double", "half", "bfloat16", "int", "long", "bool", "byte", "char", "short"]:
    add(f"Tensor.{name}", g_unary, func=None, method=name, n=4, grad=name in ("float", "double"))
add("item", lambda g: ((g.t(g.pick([(), (1,), (1, 1), (2,)])),), {}), func=None, grad=False, n=8)
add("tolist", lambda g: ((g.t(),), {}), func=None, grad=False, n=8)
SPECS.append(Spec("float(x)", lambda g: ((g.t(g.pick([(), (1,), (2,)])),), {}), template="float({0})", grad=False, n=5))
SPECS.append(Spec("int(x)", lambda g: ((g.t(g.pick([(), (1,), (2,)]), lo=-50, hi=50),), {}), template="int({0})", grad=False, n=5))
SPECS.append(Spec("bool(x)", lambda g: ((g.t(g.pick([(), (1,), (2,), (0,)])),), {}), template="bool({0})", grad=False, n=5))
SPECS.append(Spec("len(x)", lambda g: ((g.t(),), {}), template="len({0})", grad=False, n=4))
SPECS.append(Spec("size(d)", covers=("Tensor.size",), gen= lambda g: (lambda a: ((a, g.dim(len(a.shape))), {}))(g.t()), template="{0}.size({1})", grad=False, n=8))
SPECS.append(Spec("stride(d)", covers=("Tensor.stride",), gen= lambda g: (lambda a: ((a, g.dim(len(a.shape))), {}))(g.t()), template="{0}.stride({1})", grad=False, n=8))
SPECS.append(Spec("props", lambda g: ((g.t(),), {}), covers=tuple("Tensor." + n for n in (
    "dim", "numel", "is_contiguous", "element_size", "is_floating_point", "ndimension", "nelement",
    "storage_offset", "size", "stride")) + ("numel", "is_floating_point", "is_tensor"),
                  template="({0}.dim(), {0}.numel(), {0}.shape, {0}.is_contiguous(), {0}.element_size(), {0}.is_floating_point(), "
                           "{0}.stride(), {0}.ndimension(), {0}.nelement(), {0}.storage_offset(), {0}.size(), LIB.numel({0}), "
                           "LIB.is_floating_point({0}), LIB.is_tensor({0}))",
                  grad=False, n=8))


# --------------------------------------------------------------------------- factories
def g_shape_arg(g: G):
    s = g.shape(0, 3)
    return g.pick([s, list(s)]) if g.p(0.9) else (-1,)


add("zeros", lambda g: ((g_shape_arg(g),), {"dtype": D(g.dtype)}), method=None, grad=False, n=6)
add("ones", lambda g: ((g_shape_arg(g),), {"dtype": D(g.dtype)} if g.p(0.8) else {}), method=None, grad=False, n=6)
add("empty", lambda g: ((g_shape_arg(g),), {"dtype": D(g.dtype)}), method=None, grad=False, values=False, n=4)
add("full", lambda g: ((g_shape_arg(g), g.scalar()), {"dtype": D(g.dtype)} if g.p(0.6) else {}), method=None, grad=False, n=10)
for name in ["zeros_like", "ones_like", "empty_like", "rand_like", "randn_like"]:
    add(name, lambda g: ((g.t(),), {"dtype": D(g.pick(list(DTYPES)))} if g.p(0.4) else {}), method=None, grad=False,
        values=not name.startswith(("empty", "rand")), n=5,
        dtypes=FLOATS if name.startswith("rand") else DTYPES)
add("full_like", lambda g: ((g.t(), g.scalar()), {"dtype": D(g.pick(list(DTYPES)))} if g.p(0.4) else {}), method=None, grad=False, n=6)
for name in ["new_zeros", "new_ones", "new_empty"]:
    add(name, lambda g: ((g.t(), g_shape_arg(g)), {"dtype": D(g.pick(list(DTYPES)))} if g.p(0.3) else {}), func=None,
        grad=False, values=name != "new_empty", n=4)
add("new_full", lambda g: ((g.t(), g_shape_arg(g), g.scalar()), {}), func=None, grad=False, n=5)
add("new_tensor", lambda g: ((g.t(), g.pick([[1, 2], [1.5, 2], [True, False], 3, [[1], [2]]])), {}), func=None, grad=False, n=5)


def g_arange(g: G):
    start = g.pick([0, 1, -2, 0.5, 2.25, 1.0])
    end = g.pick([5, 0, 3.5, -1, 10, 2.25])
    step = g.pick([1, 2, -1, 0.5, -0.25, 0, 3])
    args = g.pick([(end,), (start, end), (start, end, step)])
    kw = {"dtype": D(g.pick(["int32", "int64", "float32", "float64", "float16", "bfloat16"]))} if g.p(0.6) else {}
    return args, kw


add("arange", g_arange, method=None, grad=False, n=16)


def g_linspace(g: G):
    kw = {"dtype": D(g.pick(["int32", "int64", "float32", "float64", "float16", "bfloat16"]))} if g.p(0.5) else {}
    return (g.pick([0, -1.5, 2, 10]), g.pick([1, 3.5, -2, 100]), g.pick([0, 1, 2, 5, 7])), kw


add("linspace", g_linspace, method=None, grad=False, n=10, tol=10)
add("eye", lambda g: ((g.int(0, 4),) + ((g.int(0, 4),) if g.p(0.5) else ()), {"dtype": D(g.dtype)} if g.p(0.6) else {}),
    method=None, grad=False, n=8)
add("tensor", lambda g: ((g.pick([[1, 2.5], [True, 2], [[1, 2], [3, 4]], 3.5, [], [[]], [1, [2]], [inf, nan], [2 ** 40], False,
                                  [1.7, -2.5], [300, -1], [1e40], [2 ** 63], [[1, 2], 3], [[[1]], [[2], [3]]], [0.1, True, 2],
                                  [-0.0]]),),
                         dict(({"dtype": D(g.pick(list(DTYPES)))} if g.p(0.5) else {}),
                              **({"requires_grad": True} if g.p(0.15) else {}))), method=None, grad=False, n=20)
for name in ["rand", "randn"]:
    add(name, lambda g: ((g_shape_arg(g),), {"dtype": D(g.pick(list(FLOATS)))} if g.p(0.5) else {}), method=None,
        grad=False, values=False, n=4)
add("randint", lambda g: ((g.int(-3, 3), g.int(-3, 10), g_shape_arg(g)), {}), method=None, grad=False, values=False, n=5)
add("randperm", lambda g: ((g.int(0, 6),), {"dtype": D(g.pick(["int64", "int32", "float32"]))} if g.p(0.4) else {}), method=None, grad=False, values=False, n=4)
add("bernoulli", lambda g: ((g.t(lo=0.0, hi=1.0),), {}), dtypes=FLOATS, grad=False, values=False, n=5)
add("multinomial", lambda g: ((g.t(g.pick([(4,), (2, 3), (0,), ()]), lo=0.0, hi=1.0), g.int(1, 3)), {"replacement": g.p(0.5)}),
    dtypes=FLOATS, grad=False, values=False, n=6)


# --------------------------------------------------------------------------- nn.functional
def Fadd(name, gen, **kw):
    kw.setdefault("func", "nn.functional." + name)
    kw.setdefault("method", None)
    SPECS.append(Spec("F." + name, gen, **kw))


for name in ["relu", "sigmoid", "tanh", "silu"]:
    Fadd(name, g_unary, n=8)
Fadd("gelu", lambda g: ((g.t(),), {"approximate": g.pick(["none", "tanh"])} if g.p(0.5) else {}), n=10)
Fadd("softplus", lambda g: ((g.t(),), {"beta": g.pick([1, 2, 0.5]), "threshold": g.pick([20, 1, 5])} if g.p(0.5) else {}), n=10)
Fadd("hardtanh", lambda g: ((g.t(),), {"min_val": g.pick([-1.0, -0.5, 0.0]), "max_val": g.pick([1.0, 2.0])} if g.p(0.5) else {}), n=10)
Fadd("leaky_relu", lambda g: ((g.t(),), {"negative_slope": g.pick([0.01, 0.2, 1.5])} if g.p(0.5) else {}), n=8)
Fadd("dropout", lambda g: ((g.t(),), {"p": g.pick([0.0, 0.5]), "training": False} if g.p(0.7) else {"p": 0.0}), n=6)
Fadd("dropout_train", lambda g: ((g.t(dtype=g.pick(FLOATS)),), {"p": g.pick([0.3, 1.0, 1.5])}), func="nn.functional.dropout",
     values=False, grad=False, n=4)


def g_linear(g: G):
    k, o = g.int(0, 4), g.int(1, 3)
    x = g.t(g.pick([(k,), (2, k), (2, 1, k), (0, k)]))
    w = g.t((o, k if g.p(0.95) else k + 1), g.other_dtype(0.95))
    return ((x, w, g.t((o,))) if g.p(0.6) else (x, w)), {}


Fadd("linear", extremes=False, gen=g_linear, n=12)


def g_conv2d(g: G):
    n, c, h, w = g.int(1, 2), g.int(1, 3), g.int(3, 5), g.int(3, 5)
    groups = g.pick([1, 1, c]) if c > 1 else 1
    o = groups * g.int(1, 2)
    kh, kw = g.int(1, 3), g.int(1, 3)
    x = g.t((n, c, h, w) if g.p(0.9) else (c, h, w))
    wt = g.t((o, c // groups if g.p(0.95) else c // groups + 1, kh, kw))
    kwargs = {}
    if g.p(0.5):
        kwargs["stride"] = g.pick([1, 2, (1, 2)])
    if g.p(0.5):
        kwargs["padding"] = g.pick([0, 1, (1, 0), "same", "valid"])
    if g.p(0.3):
        kwargs["dilation"] = g.pick([1, 2])
    if groups > 1:
        kwargs["groups"] = groups
    b = g.t((o,)) if g.p(0.6) else None
    return (x, wt, b), kwargs


Fadd("conv2d", extremes=False, gen=g_conv2d, dtypes=("float32", "float64"), n=14, tol=10)


def g_conv1d3d(g: G, nd):
    n, c = g.int(1, 2), g.int(1, 3)
    groups = g.pick([1, 1, c]) if c > 1 else 1
    o = groups * g.int(1, 2)
    spatial = tuple(g.int(3, 5 if nd == 1 else 4) for _ in range(nd))
    ks = tuple(g.int(1, 3) for _ in range(nd))
    x = g.t((n, c) + spatial if g.p(0.9) else (c,) + spatial)
    wt = g.t((o, c // groups if g.p(0.95) else c // groups + 1) + ks)
    kwargs = {}
    if g.p(0.5):
        kwargs["stride"] = g.pick([1, 2] + ([(1, 2, 1)] if nd == 3 else [(2,)]))
    if g.p(0.5):
        kwargs["padding"] = g.pick([0, 1, "same", "valid"] + ([(1, 0, 1)] if nd == 3 else []))
    if g.p(0.3):
        kwargs["dilation"] = g.pick([1, 2])
    if groups > 1:
        kwargs["groups"] = groups
    b = g.t((o,)) if g.p(0.6) else None
    return (x, wt, b), kwargs


Fadd("conv1d", extremes=False, gen=lambda g: g_conv1d3d(g, 1), dtypes=("float32", "float64"), n=12, tol=10)
Fadd("conv3d", extremes=False, gen=lambda g: g_conv1d3d(g, 3), dtypes=("float32", "float64"), n=10, tol=10)


def g_conv_transpose(g: G, nd):
    n, c = g.int(1, 2), g.int(1, 3)
    groups = g.pick([1, 1, c]) if c > 1 else 1
    o = groups * g.int(1, 2)
    spatial = tuple(g.int(1, 4) for _ in range(nd))
    ks = tuple(g.int(1, 3) for _ in range(nd))
    x = g.t((n, c) + spatial if g.p(0.9) else (c,) + spatial)
    wt = g.t((c if g.p(0.95) else c + 1, o // groups) + ks)
    stride = g.pick([1, 2, 3])
    dilation = g.pick([1, 1, 2])
    kwargs = {"stride": stride, "dilation": dilation}
    if g.p(0.5):
        kwargs["padding"] = g.pick([0, 1])
    if g.p(0.5):
        kwargs["output_padding"] = g.int(0, max(stride, dilation) - 1) if g.p(0.95) else max(stride, dilation)
    if groups > 1:
        kwargs["groups"] = groups
    b = g.t((o,)) if g.p(0.6) else None
    return (x, wt, b), kwargs


Fadd("conv_transpose1d", extremes=False, gen=lambda g: g_conv_transpose(g, 1), dtypes=("float32", "float64"), n=12, tol=10)
Fadd("conv_transpose2d", extremes=False, gen=lambda g: g_conv_transpose(g, 2), dtypes=("float32", "float64"), n=12, tol=10)


def g_group_norm(g: G):
    groups = g.int(1, 3)
    c = groups * g.int(1, 2) if g.p(0.95) else groups + 1 + (groups == 1)
    x = g.t(g.pick([(2, c), (g.int(1, 2), c, g.int(2, 4)), (2, c, 2, 3)]))
    w = g.t((c,)) if g.p(0.6) else None
    # a bias without a weight: torch 1.13's backward raises 'tensor does not have a device'
    b = g.t((c,)) if w is not None and g.p(0.7) else None
    return (x, groups, w, b), {"eps": g.pick([1e-5, 0.1])}


Fadd("group_norm", extremes=False, gen=g_group_norm, dtypes=("float32", "float64"), n=12, tol=10)


def g_instance_norm(g: G):
    c = g.int(1, 3)
    x = g.t(g.pick([(g.int(1, 3), c, g.int(2, 4)), (2, c, 2, 3)]))
    rm = g.t((c,), grad=False, layout=False, edge=False) if g.p(0.5) else None
    rv = g.t((c,), grad=False, layout=False, lo=0.25, hi=2.0) if rm is not None else None
    w = g.t((c,), layout=False) if g.p(0.5) else None
    b = g.t((c,), layout=False) if w is not None and g.p(0.7) else None
    use = g.p(0.8) or rm is None
    return (x, rm, rv, w, b), {"use_input_stats": use, "momentum": g.pick([0.1, 0.5]), "eps": g.pick([1e-5, 0.1])}


Fadd("instance_norm", extremes=False, gen=g_instance_norm, dtypes=("float32", "float64"), n=12, tol=10)


def g_bilinear(g: G):
    i1, i2, o = g.int(1, 3), g.int(1, 3), g.int(1, 3)
    batch = g.pick([(2,), (3,), (2, 2), (0,)])
    x1, x2 = g.t(batch + (i1,)), g.t(batch + (i2 if g.p(0.95) else i2 + 1,))
    return ((x1, x2, g.t((o, i1, i2))) + ((g.t((o,)),) if g.p(0.6) else ())), {}


Fadd("bilinear", extremes=False, gen=g_bilinear, dtypes=("float32", "float64"), n=10, tol=10)


def g_embedding_bag(g: G):
    n, d = g.int(1, 5), g.int(1, 3)
    mode = g.pick(["sum", "mean", "max"])
    kw = {"mode": mode}
    if g.p(0.5):
        idx = g.index(n, (g.int(1, 3), g.int(1, 3)), oob_p=0.0, neg=False)
        offsets = None
    else:
        length = g.int(1, 6)
        idx = g.index(n, (length,), oob_p=0.0, neg=False)
        starts = sorted(g.int(0, length) for _ in range(g.int(0, 2)))
        offsets = T(np.array([0] + starts, np.int64), "int64", (), False)
    if mode == "sum" and g.p(0.4):
        kw["per_sample_weights"] = g.t(tuple(idx.shape))
    if g.p(0.3):
        kw["padding_idx"] = g.int(0, n - 1)
    args = (idx, g.t((n, d), layout=False))
    return (args + (offsets,)) if offsets is not None else args, kw


Fadd("embedding_bag", extremes=False, gen=g_embedding_bag, dtypes=("float32", "float64"), n=12)


def g_pool(g: G, avg=False):
    x = g.t((g.int(1, 2), g.int(1, 2), g.int(2, 5), g.int(2, 5)) if g.p(0.85) else (g.int(1, 2), g.int(2, 4), g.int(2, 4)),
            unique=not avg, layout=True if avg else "noexpand")
    k = g.pick([1, 2, 3, (2, 1)])
    kw = {}
    if g.p(0.5):
        kw["stride"] = g.pick([1, 2, (2, 1)])
    if g.p(0.4):
        kw["padding"] = g.pick([0, 1])
    if g.p(0.3):
        kw["ceil_mode"] = True
    if avg and g.p(0.4):
        kw["count_include_pad"] = g.p(0.5)
    if not avg and g.p(0.3):
        kw["dilation"] = g.pick([1, 2])
    if not avg and g.p(0.3):
        kw["return_indices"] = True
    return (x, k), kw


Fadd("max_pool2d", g_pool, dtypes=FLOATS, n=12)
Fadd("avg_pool2d", extremes=False, gen=lambda g: g_pool(g, True), dtypes=FLOATS, n=12)
Fadd("adaptive_avg_pool2d", extremes=False, gen=lambda g: ((g.t((1, g.int(1, 2), g.int(1, 5), g.int(1, 5))), g.pick([1, 2, (2, 3), 3, (None, 2)])), {}),
     dtypes=FLOATS, n=10)
Fadd("adaptive_avg_pool1d", extremes=False, gen=lambda g: ((g.t((g.int(1, 2), g.int(1, 3), g.int(1, 7))), g.pick([1, 2, 3, 5])), {}),
     dtypes=FLOATS, n=6)
Fadd("adaptive_avg_pool3d", extremes=False, gen=lambda g: ((g.t((1, g.int(1, 2), g.int(1, 4), g.int(1, 4), g.int(1, 4))), g.pick([1, 2, (2, 3, 1), (None, 2, 3)])), {}),
     dtypes=FLOATS, n=8)
Fadd("adaptive_max_pool1d", gen=lambda g: ((g.t((g.int(1, 2), g.int(1, 3), g.int(1, 7))), g.pick([1, 2, 3, 5])), {}),
     dtypes=FLOATS, n=6)
Fadd("adaptive_max_pool2d", gen=lambda g: ((g.t((1, g.int(1, 2), g.int(1, 5), g.int(1, 5))), g.pick([1, 2, (2, 3), 3, (None, 2)])), {}),
     dtypes=FLOATS, n=8)
Fadd("adaptive_max_pool3d", gen=lambda g: ((g.t((1, g.int(1, 2), g.int(1, 4), g.int(1, 4), g.int(1, 4))), g.pick([1, 2, (2, 3, 1), (None, 2, 3)])), {}),
     dtypes=FLOATS, n=8)


def g_batch_norm(g: G):
    c = g.int(1, 3)
    x = g.t(g.pick([(g.int(1, 3), c), (2, c, g.int(1, 3)), (2, c, 2, 2)]))
    # running stats without edge values: with an infinite mean, inf/nan depend on the formula's order
    rm = g.t((c,), grad=False, layout=False, edge=False)
    rv = g.t((c,), grad=False, layout=False, lo=0.25, hi=2.0)
    training = g.p(0.5)
    kw = {"training": training, "momentum": g.pick([0.1, 0.5]), "eps": g.pick([1e-5, 0.1])}
    # contiguous weight/bias: torch 1.13's backward reads garbage for an expanded weight
    w = g.t((c,), layout=False) if g.p(0.6) else None
    b = g.t((c,), layout=False) if g.p(0.6) else None
    return (x, rm if g.p(0.85) else None, rv if g.p(0.85) else None, w, b), kw


Fadd("batch_norm", extremes=False, gen=g_batch_norm, dtypes=("float32", "float64"), n=12, tol=10)


def g_layer_norm(g: G):
    x = g.t(g.shape(1, 3))
    k = g.int(1, len(x.shape))
    ns = x.shape[-k:]
    if g.p(0.05):
        ns = tuple(n + 1 for n in ns)
    w = g.t(ns) if g.p(0.6) else None
    b = g.t(ns) if g.p(0.6) else None
    return (x, ns, w, b), {"eps": g.pick([1e-5, 0.1])}


Fadd("layer_norm", extremes=False, gen=g_layer_norm, dtypes=FLOATS, n=12, tol=10)


def g_embedding(g: G):
    n, d = g.int(1, 5), g.int(1, 3)
    idx = g.index(n, g.pick([(3,), (2, 2), (), (0,)]), neg=g.p(0.1), dtype=g.pick(["int64", "int64", "int32"]))
    kw = {"padding_idx": g.pick([0, -1, n - 1])} if g.p(0.3) else {}
    return (idx, g.t((n, d))), kw


Fadd("embedding", g_embedding, dtypes=FLOATS, n=10)
Fadd("one_hot", lambda g: ((g.index(4, g.pick([(3,), (2, 2), (), (0,)]), neg=g.p(0.05)),), {"num_classes": g.pick([-1, 4, 6, 2])}),
     dtypes=("int64",), grad=False, n=8)


def g_pad(g: G):
    x = g.t(g.shape(1, 4))
    nd = len(x.shape)
    k = g.int(1, min(nd, 3))
    pad = tuple(g.int(-1, 2) for _ in range(2 * k))
    mode = "constant"
    kw = {"mode": mode}
    if mode == "constant" and g.p(0.5):
        kw["value"] = g.pick([0.0, 1.5, -2])
    return (x, pad), kw


Fadd("pad", g_pad, n=14)


def g_pad_modes(g: G):
    # torch 1.13's non-constant modes: k padded dims of a (k+1)- or (k+2)-dim input (circular:
    # batched only), each pad at most size - 1 (reflect needs less than the size) and not negative
    mode = g.pick(["reflect", "replicate", "circular"])
    k = g.int(1, 3)
    x = g.t(tuple(g.int(1, 4) for _ in range(k + (2 if mode == "circular" or g.p(0.5) else 1))))
    dims = list(x.shape)[-k:][::-1]
    pad = tuple(g.int(0, max(dims[i // 2] - 1, 0)) for i in range(2 * k))
    return (x, pad), {"mode": mode}


Fadd("pad_modes", g_pad_modes, func="nn.functional.pad", dtypes=("float32", "float64"), n=12)
Fadd("normalize", extremes=False, gen=lambda g: (lambda x: ((x,), {"p": g.pick([2, 1, inf] if 0 not in x.shape else [2, 1]), "dim": g.dim(len(x.shape))} if g.p(0.7) else {}))(g.t(g.shape(1, 3))),
     dtypes=FLOATS, n=10)


def g_cos_sim(g: G):
    a = g.t(g.shape(1, 3))
    b = g.t(g.bshape(a.shape))
    return (a, b), {"dim": g.dim(len(a.shape), 0.03)} if g.p(0.6) else {}


Fadd("cosine_similarity", extremes=False, gen=g_cos_sim, dtypes=FLOATS, n=10)


def g_pointwise_loss(g: G):
    a = g.t()
    b = g.t(a.shape if g.p(0.85) else g.bshape(a.shape))
    return (a, b), {"reduction": g.pick(["mean", "sum", "none"])} if g.p(0.7) else {}


Fadd("mse_loss", extremes=False, gen=g_pointwise_loss, dtypes=FLOATS, n=10)
Fadd("l1_loss", extremes=False, gen=g_pointwise_loss, dtypes=FLOATS, n=10)


def g_class_loss(g: G, log_probs=False, ce=False):
    n, c = g.int(0, 3) if g.p(0.9) else 0, g.int(1, 4)
    shape = g.pick([(n, c), (n, c), (c,), (n, c, 2)])
    x = g.t(shape)
    tshape = (shape[0],) + shape[2:] if len(shape) > 1 else ()
    kw = {}
    if ce and g.p(0.15):
        tgt = g.t(shape, lo=0.0, hi=1.0, grad=False)
    else:
        tgt = g.index(c, tshape, neg=False, oob_p=0.03)
        if g.p(0.3):
            kw["ignore_index"] = g.pick([0, -100, 1])
    if g.p(0.3):
        kw["weight"] = g.t((c,), lo=0.0, hi=2.0, grad=False)
    if g.p(0.6):
        kw["reduction"] = g.pick(["mean", "sum", "none"])
    if ce and g.p(0.3):
        kw["label_smoothing"] = g.pick([0.0, 0.1, 0.5])
    return (x, tgt), kw


Fadd("nll_loss", extremes=False, gen=g_class_loss, dtypes=FLOATS, n=12)
Fadd("cross_entropy", extremes=False, gen=lambda g: g_class_loss(g, ce=True), dtypes=FLOATS, n=16)



def g_ctc(g: G, positional=False):
    """ctc_loss: (T, N, C) or unbatched (T, C) scores (not normalized: the gradient formula is the
    same in both), padded or concatenated targets (sometimes the blank itself), lengths as lists,
    tuples or int tensors. Input lengths from 1 (torch 1.13 reads out of range at 0; torch 2.x's
    rule is tested in tests/python/test_ctc_loss.py), target lengths up to T + 1 (inf losses)."""
    steps, c = g.int(1, 6), g.int(2, 5)
    batched = g.p(0.8)
    n = g.int(1, 3) if batched else 1
    blank = g.int(0, c - 1)
    s = g.int(1, steps + 1)
    il = [g.int(1, steps) for _ in range(n)]
    tl = [g.int(0, s) for _ in range(n)]
    labels = g.rng.integers(0, c, size=(n, s))
    if g.p(0.9):
        labels = np.where(labels == blank, (labels + 1) % c, labels)
    if g.p(0.5):
        targets = labels
    else:
        targets = np.concatenate([labels[b, :tl[b]] for b in range(n)])
    x = g.t((steps, n, c) if batched else (steps, c))
    tg = T(targets.astype(np.int64), "int64", (), False)
    how = g.pick(["list", "tuple", "tensor"])
    if how == "tensor":
        il, tl = (T(np.array(v, dtype=np.int64), "int64", (), False) for v in (il, tl))
    elif how == "tuple":
        il, tl = tuple(il), tuple(tl)
    zero_infinity = g.p(0.5)
    if positional:   # torch.ctc_loss: blank, reduction (an int) and zero_infinity positional
        return (x, tg, il, tl, blank, g.pick([0, 1, 2]), zero_infinity), {}
    kw = dict(g_reduction(g), zero_infinity=zero_infinity)
    if blank or g.p(0.5):
        kw["blank"] = blank
    return (x, tg, il, tl), kw


Fadd("ctc_loss", extremes=False, gen=g_ctc, dtypes=("float32", "float64", "int64"), n=16)
add("torch.ctc_loss", extremes=False, gen=lambda g: g_ctc(g, positional=True), func="ctc_loss", method=None,
    dtypes=("float32", "float64"), n=6)

def g_bce(g: G, logits=False):
    x = g.t(lo=None if logits else 0.0, hi=None if logits else 1.0)
    y = g.t(x.shape, lo=0.0, hi=1.0, grad=False)
    kw = {}
    if g.p(0.3):
        kw["weight"] = g.t(g.bshape(x.shape, 0.0), lo=0.0, hi=2.0, grad=False)
    if logits and g.p(0.3):
        kw["pos_weight"] = g.t(x.shape[-1:] if x.shape else (), lo=0.0, hi=3.0, grad=False)
    if g.p(0.6):
        kw["reduction"] = g.pick(["mean", "sum", "none"])
    return (x, y), kw


Fadd("binary_cross_entropy", g_bce, dtypes=FLOATS, n=12)
Fadd("binary_cross_entropy_with_logits", lambda g: g_bce(g, True), dtypes=FLOATS, n=12)


# --------------------------------------------------------------------------- more activations and losses
def g_act(**choices):
    """One tensor, and each keyword drawn from its choices half of the time."""
    return lambda g: ((g.t(),), {k: g.pick(v) for k, v in choices.items() if g.p(0.5)})


for name in ["selu", "mish", "hardswish", "hardsigmoid", "logsigmoid", "softsign", "tanhshrink"]:
    Fadd(name, g_unary, n=8)
Fadd("elu", g_act(alpha=[1.0, 0.5, 2.0]), n=10)
Fadd("celu", g_act(alpha=[1.0, 0.5, 2.0, 0.0]), n=10)
Fadd("softshrink", g_act(lambd=[0.5, 0.0, 1.5, -1.0]), n=10)
Fadd("hardshrink", g_act(lambd=[0.5, 0.0, 1.5]), n=8)
Fadd("glu", lambda g: ((g.t(g.shape(1, 3)),), {"dim": g.pick([-1, 0, 1])} if g.p(0.6) else {}), n=10)
Fadd("rrelu", g_act(lower=[0.125, 0.2], upper=[1 / 3, 0.5]), n=6)
Fadd("rrelu_train", lambda g: ((g.t(dtype=g.pick(FLOATS)),), {"training": True}), func="nn.functional.rrelu",
     values=False, grad=False, n=4)
INPLACE_DTYPES = ("bool", "int32", "int64", "float32", "float64")
g_threshold = lambda g: ((g.t(), g.pick([0.0, 0.5, -1]), g.pick([0.0, 20.0, -2])), {})  # noqa: E731
Fadd("threshold", g_threshold, n=10)
for name, gen in [("elu_", g_act(alpha=[1.0, 0.5])), ("selu_", g_unary), ("celu_", g_act(alpha=[1.0, 2.0])),
                  ("threshold_", g_threshold), ("rrelu_", g_unary)]:
    # in place (the argument is compared afterwards); no 16-bit dtypes: torch 1.13 has no such kernels,
    # and the harness's float32 stand-in returns a new tensor, not the argument
    Fadd(name, gen, grad=False, dtypes=INPLACE_DTYPES, n=6)
    if name != "elu_":                                        # torch.elu_ does not exist
        add("torch." + name, gen, func=name, method=None, grad=False, dtypes=INPLACE_DTYPES, n=4)
for name, gen in [("selu", g_unary), ("celu", g_act(alpha=[1.0, 2.0])), ("threshold", g_threshold),
                  ("hardshrink", g_act(lambd=[0.5, 1.5])), ("rrelu", g_unary)]:
    add("torch." + name, gen, func=name, method="hardshrink" if name == "hardshrink" else None, n=4)


def g_prelu(g: G):
    c = g.int(1, 3)
    x = g.t(g.pick([(2, c), (2, c, 3), (c,), (), (0, c)]))
    return (x, g.t(g.pick([(c,), (1,), (c + 1,)]) if g.p(0.9) else (c, 1))), {}


Fadd("prelu", g_prelu, n=12)
add("torch.prelu", g_prelu, func="prelu", method="prelu", n=6)


def g_sign_t(g: G, shape):
    """A target of 1 and -1 (margin and embedding losses)."""
    v = g.values(shape, g.dtype, lo=-1.0, hi=1.0, edge=False)
    return T(np.where(v >= 0, 1, -1).astype(v.dtype), g.dtype, (), False)


def g_reduction(g: G, extra=()):
    return {"reduction": g.pick(["mean", "sum", "none"] + list(extra))} if g.p(0.7) else {}


Fadd("smooth_l1_loss", extremes=False, dtypes=FLOATS, n=10,
     gen=lambda g: (lambda r: (r[0], dict(r[1], **({"beta": g.pick([1.0, 0.5, 0.0])} if g.p(0.5) else {}))))(g_pointwise_loss(g)))
Fadd("huber_loss", extremes=False, dtypes=FLOATS, n=10,
     gen=lambda g: (lambda r: (r[0], dict(r[1], **({"delta": g.pick([1.0, 0.5, 2.0])} if g.p(0.5) else {}))))(g_pointwise_loss(g)))
Fadd("soft_margin_loss", extremes=False, dtypes=FLOATS, n=10,
     gen=lambda g: (lambda x: ((x, g_sign_t(g, x.shape)), g_reduction(g)))(g.t()))


def g_kl_div(g: G):
    x = g.t()
    kw = g_reduction(g, ["batchmean"])
    if g.p(0.4):
        kw["log_target"] = True
        return (x, g.t(x.shape, lo=-3.0, hi=0.0)), kw
    return (x, g.t(x.shape, lo=0.0, hi=1.0)), kw


Fadd("kl_div", extremes=False, gen=g_kl_div, dtypes=FLOATS, n=12)


def g_margin_ranking(g: G):
    x1 = g.t()
    x2 = g.t(x1.shape if g.p(0.9) else g.bshape(x1.shape))
    kw = g_reduction(g)
    if g.p(0.5):
        kw["margin"] = g.pick([0.0, 0.5, 1.0])
    return (x1, x2, g_sign_t(g, x1.shape)), kw


Fadd("margin_ranking_loss", extremes=False, gen=g_margin_ranking, dtypes=FLOATS, n=10)


def g_cos_embed(g: G):
    n, d = g.int(0, 3), g.int(1, 4)
    batched = g.p(0.8)
    shape = (n, d) if batched else (d,)
    x1, x2 = g.t(shape), g.t(shape if g.p(0.95) else (d + 1,))
    kw = g_reduction(g)
    if g.p(0.5):
        kw["margin"] = g.pick([0.0, 0.5, -0.5])
    return (x1, x2, g_sign_t(g, (n,) if batched else ())), kw


Fadd("cosine_embedding_loss", extremes=False, gen=g_cos_embed, dtypes=FLOATS, n=10)


def g_triplet(g: G):
    shape = g.pick([(3, 4), (2, 3), (4,)])
    kw = g_reduction(g)
    for k, v in [("margin", [1.0, 0.5, 2.0]), ("p", [2, 1, 3]), ("eps", [1e-6, 0.1]), ("swap", [True, False])]:
        if g.p(0.4):
            kw[k] = g.pick(v)
    return (g.t(shape), g.t(shape), g.t(shape if g.p(0.95) else shape[-1:])), kw


Fadd("triplet_margin_loss", extremes=False, gen=g_triplet, dtypes=FLOATS, n=12, tol=10)


def g_poisson(g: G):
    log_input = g.p(0.5)
    x = g.t(lo=-2.0 if log_input else 0.0, hi=2.0)
    kw = dict(g_reduction(g), log_input=log_input, full=g.p(0.5))
    return (x, g.t(x.shape, lo=0.0, hi=4.0)), kw


Fadd("poisson_nll_loss", extremes=False, gen=g_poisson, dtypes=FLOATS, n=12)


def g_gaussian_nll(g: G):
    x = g.t(g.shape(1, 3, empty_p=0.0))
    var_shape = g.pick([x.shape, x.shape[:-1], x.shape[:-1] + (1,)])
    kw = g_reduction(g)
    if g.p(0.4):
        kw["full"] = True
    return (x, g.t(x.shape), g.t(var_shape, lo=0.0 if g.p(0.9) else -1.0, hi=2.0)), kw


Fadd("gaussian_nll_loss", extremes=False, gen=g_gaussian_nll, dtypes=FLOATS, n=12)


def g_multilabel(g: G):
    x = g.t(g.pick([(2, 3), (3,), (2, 2, 3)]))
    kw = g_reduction(g)
    if g.p(0.3):
        kw["weight"] = g.t(x.shape[-1:], lo=0.0, hi=2.0, grad=False)
    return (x, g.t(x.shape, lo=0.0, hi=1.0, grad=False)), kw


Fadd("multilabel_soft_margin_loss", extremes=False, gen=g_multilabel, dtypes=FLOATS, n=10)
# torch.<op> forms of the losses (the aten signatures: reduction as an int)
add("torch.kl_div", extremes=False, gen=lambda g: ((g.t((2, 3)), g.t((2, 3), lo=0.0, hi=1.0), g.pick([0, 1, 2])), {}),
    func="kl_div", method=None, dtypes=FLOATS, n=4)
add("torch.margin_ranking_loss", extremes=False, gen=lambda g: (g_margin_ranking(g)[0] + (0.5, g.pick([0, 1, 2])), {}),
    func="margin_ranking_loss", method=None, dtypes=FLOATS, n=4)
add("torch.cosine_embedding_loss", extremes=False, gen=lambda g: (g_cos_embed(g)[0] + (0.0, g.pick([0, 1, 2])), {}),
    func="cosine_embedding_loss", method=None, dtypes=FLOATS, n=4)
add("torch.triplet_margin_loss", extremes=False, gen=lambda g: (g_triplet(g)[0] + (1.0, 2.0, 1e-6, g.p(0.5), g.pick([0, 1, 2])), {}),
    func="triplet_margin_loss", method=None, dtypes=FLOATS, n=4, tol=10)
add("torch.poisson_nll_loss", extremes=False, gen=lambda g: (g_poisson(g)[0] + (True, g.p(0.5), 1e-8, g.pick([0, 1, 2])), {}),
    func="poisson_nll_loss", method=None, dtypes=FLOATS, n=4)


# --------------------------------------------------------------------------- writes, copies, misc
def g_copy(g: G):
    a = g.t(grad=False)
    return (a, g.t(g.bshape(a.shape), g.other_dtype(0.6), grad=False)), {}


add("copy_", g_copy, func=None, grad=False, n=12)
add("fill_", lambda g: ((g.t(grad=False), g.scalar() if g.p(0.7) else g.t((), g.other_dtype(0.6), grad=False)), {}),
    grad=False, n=10)
add("zero_", lambda g: ((g.t(grad=False),), {}), grad=False, n=6)
add("detach", g_unary, grad=False, n=4)
add("view_as", lambda g: (lambda a: ((a, g.t(g_reshape(g)[0][1] if True else a.shape, grad=False) if False else
                                      g.t(tuple(reversed(a.shape)), grad=False)), {}))(g.t(layout=False)), func=None, n=6)
add("reshape_as", lambda g: (lambda a: ((a, g.t(tuple(reversed(a.shape)), grad=False)), {}))(g.t()), func=None, n=6)


def g_as_strided(g: G):
    a = g.t(g.shape(1, 2, empty_p=0.0), layout=False)
    return (a, g.pick([(2,), (2, 2), (1,), ()]), g.pick([(1,), (1, 1), (0, 1), ()]) if True else None), \
        ({"storage_offset": g.int(0, 1)} if g.p(0.3) else {})


add("as_strided", lambda g: (lambda r: ((r[0][0], r[0][1], r[0][2][:len(r[0][1])] + (1,) * (len(r[0][1]) - len(r[0][2][:len(r[0][1])]))), r[1]))(g_as_strided(g)),
    n=8)
add("as_tensor", lambda g: ((g.pick([[1, 2.5], [True, False], [[1, 2], [3, 4]], 3.5, 7]),),
                            {"dtype": D(g.pick(list(DTYPES)))} if g.p(0.5) else {}), method=None, grad=False, n=6)
add("promote_types", lambda g: ((D(g.pick(list(DTYPES))), D(g.pick(list(DTYPES)))), {}), method=None, grad=False, n=10)
add("result_type", lambda g: ((g.t(g.pick([(), (2,)]), grad=False), g.scalar() if g.p(0.4) else g.t(g.pick([(), (2,)]), g.other_dtype(0.4), grad=False)), {}),
    method=None, grad=False, n=12)
add("type", lambda g: ((g.t(),) + ((g.pick([D("float32"), D("int64"), D("float64"), D("bool")]),) if g.p(0.6) else ()), {}),
    func=None, grad=False, n=8)
add("type_as", lambda g: ((g.t(), g.t(g.pick([(), (2,)]), g.other_dtype(0.7), grad=False)), {}), func=None, n=8)
for name, lo in [("uniform_", None), ("normal_", None), ("random_", None), ("bernoulli_", None)]:
    add(name, lambda g: ((g.t(grad=False),), {}), func=None, dtypes=FLOATS, grad=False, values=False, n=3)
add("normal", lambda g: ((g.t(grad=False, dtype=g.pick(FLOATS)), g.pick([1.0, 0.5])), {}), method=None, grad=False, values=False, n=3)
add("constant_pad_nd", lambda g: (lambda a: ((a, tuple(g.int(-1, 2) for _ in range(2 * g.int(1, max(len(a.shape), 1))))),
                                              {"value": g.pick([0, 1.5])} if g.p(0.5) else {}))(g.t(g.shape(1, 3))), method=None, n=8)
# torch.<op> forms of nn.functional ops (positional signatures of the aten ops)
add("torch.conv2d", extremes=False, gen=lambda g: (lambda r: (r[0], {}))(g_conv2d(g)), func="conv2d", method=None, dtypes=("float32", "float64"), n=4, tol=10)
add("torch.embedding", lambda g: (lambda r: ((r[0][1], r[0][0]), {}))(g_embedding(g)), func="embedding", method=None, dtypes=FLOATS, n=4)
add("torch.layer_norm", extremes=False, gen=lambda g: (lambda r: (r[0], {}))(g_layer_norm(g)), func="layer_norm", method=None, dtypes=FLOATS, n=4, tol=10)
add("torch.dropout", lambda g: ((g.t(), 0.0, False), {}), func="dropout", method=None, n=3)
add("torch.max_pool2d", lambda g: (lambda r: (r[0], {k: v for k, v in r[1].items() if k != "return_indices"}))(g_pool(g)),
    func="max_pool2d", method=None, dtypes=FLOATS, n=4)
add("torch.batch_norm", extremes=False, gen=lambda g: (lambda r: ((r[0][0], r[0][3], r[0][4], r[0][1], r[0][2], r[1]["training"], r[1]["momentum"], r[1]["eps"], False), {}))(g_batch_norm(g)),
    func="batch_norm", method=None, dtypes=("float32", "float64"), n=4, tol=10)
add("torch.binary_cross_entropy_with_logits", lambda g: (lambda r: ((r[0][0], r[0][1], None, None, 1), {}))(g_bce(g, True)),
    func="binary_cross_entropy_with_logits", method=None, dtypes=FLOATS, n=4)


# --------------------------------------------------------------------------- resampling
_INTERP_MODES = {3: ["nearest", "nearest-exact", "linear", "area"], 4: ["nearest", "nearest-exact", "bilinear", "bicubic", "area"],
                 5: ["nearest", "nearest-exact", "trilinear", "area"]}


def g_interpolate(g: G):
    nd = g.pick([3, 4, 4, 5])
    x = g.t((g.int(1, 2), g.int(1, 2)) + tuple(g.int(1, 4) for _ in range(nd - 2)))
    mode = g.pick(_INTERP_MODES[nd])
    kw = {"mode": mode}
    if g.p(0.5):
        kw["size"] = g.pick([g.int(1, 6), tuple(g.int(1, 6) for _ in range(nd - 2))])
    else:
        kw["scale_factor"] = g.pick([2, 1.5, 0.75, 2.3, tuple(g.pick([0.6, 1.0, 1.7, 3]) for _ in range(nd - 2))])
        if g.p(0.3):
            kw["recompute_scale_factor"] = g.p(0.5)
    if mode in ("linear", "bilinear", "bicubic", "trilinear") and g.p(0.6):
        kw["align_corners"] = g.p(0.5)
    if mode in ("bilinear", "bicubic") and g.p(0.4):
        kw["antialias"] = True
    return (x,), kw


Fadd("interpolate", g_interpolate, dtypes=FLOATS, n=24, extremes=False)


def g_pixel_shuffle(g: G):
    r = g.int(1, 3)
    return (g.t((g.int(1, 2), g.int(1, 2) * r * r, g.int(1, 3), g.int(1, 3))), r), {}


def g_pixel_unshuffle(g: G):
    r = g.int(1, 2)
    return (g.t((g.int(1, 2), g.int(1, 2), g.int(1, 2) * r, g.int(1, 3) * r)), r), {}


Fadd("pixel_shuffle", g_pixel_shuffle, n=8)
Fadd("pixel_unshuffle", g_pixel_unshuffle, n=8)
add("pixel_shuffle", g_pixel_shuffle, method=None, n=4)
add("pixel_unshuffle", g_pixel_unshuffle, method=None, n=4)


def _fold_geometry(g: G):
    return {"kernel_size": g.pick([1, 2, (2, 3)]), "dilation": g.pick([1, 2, (1, 2)]), "padding": g.pick([0, 1, (1, 0)]),
            "stride": g.pick([1, 2, (2, 1)])}


def _blocks(n, k, d, p, s):
    return (n + 2 * p - (d * (k - 1) + 1)) // s + 1


def _two(v):
    return v if isinstance(v, tuple) else (v, v)


def g_unfold(g: G):
    return (g.t((g.int(1, 2), g.int(1, 3), g.int(3, 5), g.int(3, 5))),), _fold_geometry(g)


def g_fold(g: G):
    kw = _fold_geometry(g)
    size = (g.int(3, 5), g.int(3, 5))
    k, d, p, s = (_two(kw[n]) for n in ("kernel_size", "dilation", "padding", "stride"))
    # An output too small for one dilated kernel has no blocks: grow it to hold one.
    size = tuple(max(n, di * (ki - 1) + 1 - 2 * pi) for n, ki, di, pi in zip(size, k, d, p))
    L = _blocks(size[0], k[0], d[0], p[0], s[0]) * _blocks(size[1], k[1], d[1], p[1], s[1])
    return (g.t((g.int(1, 2), g.int(1, 2) * k[0] * k[1], L)), size), kw


Fadd("unfold", g_unfold, dtypes=FLOATS, n=10)
Fadd("fold", g_fold, dtypes=FLOATS, n=10)


def g_affine_grid(g: G):
    if g.p(0.6):
        return (g.t((2, 2, 3)), [2, 1, g.int(1, 4), g.int(1, 4)]), {"align_corners": g.p(0.5)}
    return (g.t((1, 3, 4)), [1, 1, g.int(1, 3), g.int(1, 3), g.int(1, 3)]), {"align_corners": g.p(0.5)}


def g_grid_sample(g: G, volumetric=False):
    n = g.int(1, 2)
    # finite values: torch's vectorized and scalar CPU paths disagree with each other on NaN / inf grid points
    spatial = 3 if volumetric else 2
    x = g.t((n, g.int(1, 2)) + tuple(g.int(1, 4) for _ in range(spatial)), edge=0)
    grid = g.t((n,) + tuple(g.int(1, 3) for _ in range(spatial)) + (spatial,), edge=0)
    modes = ["bilinear", "nearest"] if volumetric else ["bilinear", "nearest", "bicubic"]  # no 5-D bicubic in torch
    return (x, grid), {"mode": g.pick(modes),
                       "padding_mode": g.pick(["zeros", "border", "reflection"]), "align_corners": g.p(0.5)}


Fadd("affine_grid", g_affine_grid, dtypes=FLOATS, n=8, extremes=False)
# nearest's output jumps where a grid point crosses a half pixel: no gradient comparison
# torch 1.13 has no float16/bfloat16 grid_sampler on CPU (kiln computes them in float32)
Fadd("grid_sample", lambda g: g_grid_sample(g, g.p(0.3)), dtypes=("float32", "float64"), n=18, extremes=False, tol=10)
add("affine_grid_generator", lambda g: (lambda r: ((r[0][0], r[0][1], r[1]["align_corners"]), {}))(g_affine_grid(g)),
    method=None, dtypes=FLOATS, n=4, extremes=False)
add("grid_sampler_2d", lambda g: (lambda r: ((r[0][0], r[0][1], g.int(0, 2), g.int(0, 2), r[1]["align_corners"]), {}))(
    g_grid_sample(g)), method=None, dtypes=("float32", "float64"), n=6, extremes=False, tol=10)
add("grid_sampler_3d", lambda g: (lambda r: ((r[0][0], r[0][1], g.int(0, 1), g.int(0, 2), r[1]["align_corners"]), {}))(
    g_grid_sample(g, True)), method=None, dtypes=("float32", "float64"), n=6, extremes=False, tol=10)

# --------------------------------------------------------------------------- linear algebra (LAPACK)
# No special values: torch.linalg.svd never returns on some infinite inputs (kiln gives NaNs;
# tests/python/test_linalg.py). Square matrices, sometimes batched, sometimes not square; the
# other dtypes raise in both (16-bit floats are left out: torch's legacy qr/svd accept some of them on
# some paths, kiln's LAPACK ops refuse them all, as torch.linalg's).
LAPACK_DTYPES = ("float32", "float64", "int64")


def g_square(g: G):
    n = g.int(0, 4)
    shape = g.pick([(n, n), (g.int(0, 2), n, n)])
    if g.p(0.06):
        shape = (n, n + 1)
    return (g.t(shape, edge=False),), {}


def g_spd(g: G, batch=True):
    """A symmetric positive-definite matrix (batch) for float dtypes, else any square matrix."""
    if g.dtype not in ("float32", "float64"):
        return g.t((3, 3), edge=False)
    n = g.int(1, 4)
    lead = g.pick([(), (2,)]) if batch else ()
    a = g.values(lead + (n, n), "float64", edge=False)
    m = a @ np.swapaxes(a, -1, -2) + n * np.eye(n)
    return T(m.astype(np.float32 if g.dtype == "float32" else np.float64), g.dtype, (), g.grad and g.dtype == "float64")


def g_cholesky_solve(g: G):
    factor = g_spd(g, batch=False)
    if g.dtype in ("float32", "float64"):  # a lower triangular factor
        factor = T(np.linalg.cholesky(factor.base).astype(factor.base.dtype), g.dtype, (), factor.grad)
    n = factor.base.shape[-1]
    return (g.t((n, g.int(1, 3)), edge=False), factor), {}


for name in ["det", "inverse", "slogdet", "logdet"]:
    add(name, g_square, dtypes=LAPACK_DTYPES, n=10, extremes=False)
add("svd", lambda g: ((g.t((g.int(0, 3), g.int(0, 3)), edge=False),), {"some": g.p(0.5)}), dtypes=LAPACK_DTYPES,
    n=10, extremes=False)
add("qr", lambda g: ((g.t((g.int(1, 3), g.int(1, 3)), edge=False),), {"some": g.p(0.7)}), dtypes=LAPACK_DTYPES,
    n=8, extremes=False)
add("cholesky", lambda g: ((g_spd(g),), {"upper": g.p(0.5)}), dtypes=LAPACK_DTYPES, n=8, extremes=False)
add("cholesky_solve", g_cholesky_solve, dtypes=("float32", "float64"), n=6, extremes=False)


NOT_GENERATED = {
    # The real (return_complex=False) form only, composed in Python (kiln/_stft.py): against torch on values,
    # gradients, round trips, warnings and errors in tests/python/test_stft.py.
    **{name: "real-form STFT: tests/python/test_stft.py" for name in ("stft", "istft", "Tensor.stft",
                                                                        "Tensor.istft")},
    # torch 1.13's deprecated linalg (kiln/_deprecated_linalg.py): symeig works, the others raise torch's
    # "removed" error; against torch in tests/python/test_deprecated_linalg.py.
    **{name: "deprecated linalg: tests/python/test_deprecated_linalg.py" for name in (
        "symeig", "solve", "lstsq", "eig", "matrix_rank", "Tensor.symeig", "Tensor.solve", "Tensor.lstsq",
        "Tensor.eig")},
    # Randomized (a seeded torch.randn test matrix): against torch, seeded, in tests/python/test_program_gaps7.py.
    "svd_lowrank": "randomized low-rank SVD: tests/python/test_program_gaps7.py",
    "pca_lowrank": "randomized PCA: tests/python/test_program_gaps7.py",
    # Takes storages and geometries (and mutates self's): against torch in tests/python/test_torch_gaps7.py.
    "Tensor.set_": "storage sharing, overloads and errors: tests/python/test_torch_gaps7.py",
    # Added by the fifth hunt with their own torch comparisons in tests/python/test_differential_fixes5.py.
    "gradient": "finite differences over spacing/dim forms: tests/python/test_differential_fixes5.py",
    "set_default_tensor_type": "a global switch: tests/python/test_differential_fixes5.py",
    # torch.distributions' samplers: element for element against torch's stream (seeded), by property and
    # statistics in tests/python/test_distributions_more.py and op_db/distribution_samplers.py.
    "poisson": "a sampler: tests/python/test_distributions_more.py, op_db/distribution_samplers.py",
    "binomial": "a sampler: tests/python/test_distributions_more.py, op_db/distribution_samplers.py",
    # Takes a class, not tensors: against torch (type, aliasing, gradients, errors) in test_torch2_surface.py.
    "Tensor.as_subclass": "takes a Tensor subclass: tests/python/test_torch2_surface.py",
    # The API-breadth additions composed in Python (kiln/_api_breadth.py, _special_numpy.py,
    # nn/_functional_breadth.py): against torch on values, dtypes, gradients, torch's random stream and
    # errors in tests/python/test_api_breadth.py and test_api_breadth_nn.py.
    **{name: "composed in Python: tests/python/test_api_breadth*.py" for name in (
        'convolution', 'grid_sampler', 'hinge_embedding_loss', 'norm_except_dim',
        'Tensor.angle', 'Tensor.as_strided_scatter', 'Tensor.cholesky_inverse', 'Tensor.corrcoef',
        'Tensor.cov', 'Tensor.diagonal_scatter', 'Tensor.histogram', 'Tensor.is_distributed',
        'Tensor.narrow_copy', 'Tensor.renorm_', 'Tensor.select_scatter', 'Tensor.slice_scatter',
        'Tensor.triangular_solve', 'alias_copy', 'angle', 'as_strided_copy', 'as_strided_scatter',
        'cholesky_inverse', 'cumulative_trapezoid', 'detach_copy', 'diagonal_copy', 'diagonal_scatter',
        'expand_copy', 'fill', 'frobenius_norm', 'imag', 'is_distributed', 'is_storage', 'narrow_copy',
        'nuclear_norm', 'permute_copy', 'real', 'select_copy', 'select_scatter', 'slice_scatter',
        'split_copy', 'split_with_sizes_copy', 'squeeze_copy', 't_copy', 'transpose_copy', 'unbind_copy',
        'unfold_copy', 'unsqueeze_copy', 'view_copy',
        'Tensor.addmm_', 'Tensor.addmv_', 'Tensor.addr_', 'Tensor.adjoint', 'Tensor.apply_',
        'Tensor.arctan2', 'Tensor.arctan2_', 'Tensor.cauchy_', 'Tensor.conj', 'Tensor.conj_physical',
        'Tensor.cumprod_', 'Tensor.cumsum_', 'Tensor.digamma', 'Tensor.digamma_', 'Tensor.exponential_',
        'Tensor.fill_diagonal_', 'Tensor.fix', 'Tensor.fix_', 'Tensor.frexp', 'Tensor.geometric_',
        'Tensor.ger', 'Tensor.greater_', 'Tensor.greater_equal_', 'Tensor.i0', 'Tensor.i0_',
        'Tensor.is_complex', 'Tensor.is_conj', 'Tensor.is_inference', 'Tensor.is_neg', 'Tensor.is_nonzero',
        'Tensor.is_set_to', 'Tensor.isneginf', 'Tensor.isposinf', 'Tensor.isreal', 'Tensor.less_',
        'Tensor.less_equal_', 'Tensor.lgamma', 'Tensor.lgamma_', 'Tensor.log_normal_', 'Tensor.map_',
        'Tensor.matrix_exp', 'Tensor.matrix_power', 'Tensor.moveaxis', 'Tensor.mvlgamma',
        'Tensor.mvlgamma_', 'Tensor.new_empty_strided', 'Tensor.not_equal_', 'Tensor.pin_memory',
        'Tensor.pinverse', 'Tensor.polygamma', 'Tensor.polygamma_', 'Tensor.positive', 'Tensor.put',
        'Tensor.put_', 'Tensor.resize', 'Tensor.resize_as', 'Tensor.resolve_conj', 'Tensor.resolve_neg',
        'Tensor.signbit', 'Tensor.sinc', 'Tensor.sinc_', 'Tensor.sum_to_size', 'Tensor.unsafe_chunk',
        'Tensor.unsafe_split', 'Tensor.unsafe_split_with_sizes', 'Tensor.vdot', 'abs_', 'acos_', 'acosh_',
        'adaptive_avg_pool1d', 'adaptive_max_pool1d', 'addmv_', 'adjoint', 'alpha_dropout',
        'alpha_dropout_', 'arccos_', 'arccosh_', 'arcsin_', 'arcsinh_', 'arctan2', 'arctan_', 'arctanh_',
        'as_strided_', 'asarray', 'asin_', 'asinh_', 'atan_', 'atanh_', 'avg_pool1d', 'bartlett_window',
        'bilinear', 'blackman_window', 'can_cast', 'ceil_', 'chain_matmul', 'channel_shuffle', 'clamp_',
        'clamp_max_', 'clamp_min_', 'clip_', 'concatenate', 'conj', 'conj_physical', 'conv1d', 'conv3d',
        'conv_transpose1d', 'conv_transpose2d', 'conv_transpose3d', 'cos_', 'cosh_', 'cosine_similarity',
        'deg2rad_', 'digamma', 'dropout_', 'erf_', 'erfc_', 'exp2_', 'exp_', 'expm1_',
        'feature_alpha_dropout', 'feature_alpha_dropout_', 'feature_dropout', 'feature_dropout_', 'fix',
        'fix_', 'floor_', 'frac_', 'frexp', 'frombuffer', 'gcd_', 'ger', 'get_device',
        'get_num_interop_threads', 'group_norm', 'hamming_window', 'hann_window', 'i0', 'i0_', 'index_put_',
        'instance_norm', 'is_complex', 'is_conj', 'is_inference', 'is_inference_mode_enabled', 'is_neg',
        'is_nonzero', 'is_warn_always_enabled', 'isneginf', 'isposinf', 'isreal', 'kaiser_window', 'lcm_',
        'ldexp_', 'lgamma', 'log10_', 'log1p_', 'log2_', 'log_', 'logit_', 'matrix_exp', 'matrix_power',
        'max_pool1d', 'max_pool1d_with_indices', 'max_pool3d', 'moveaxis', 'mvlgamma',
        'native_channel_shuffle', 'neg_', 'negative_', 'nn.functional.adaptive_max_pool1d_with_indices',
        'nn.functional.adaptive_max_pool2d_with_indices', 'nn.functional.adaptive_max_pool3d_with_indices',
        'nn.functional.alpha_dropout', 'nn.functional.avg_pool1d', 'nn.functional.avg_pool3d',
        'nn.functional.channel_shuffle', 'nn.functional.conv_transpose3d',
        'nn.functional.feature_alpha_dropout', 'nn.functional.gumbel_softmax',
        'nn.functional.local_response_norm', 'nn.functional.lp_pool1d', 'nn.functional.lp_pool2d',
        'nn.functional.max_pool1d', 'nn.functional.max_pool1d_with_indices',
        'nn.functional.max_pool2d_with_indices', 'nn.functional.max_pool3d',
        'nn.functional.max_pool3d_with_indices', 'nn.functional.max_unpool1d', 'nn.functional.max_unpool2d',
        'nn.functional.max_unpool3d', 'nn.functional.native_channel_shuffle', 'nn.functional.pdist',
        'pairwise_distance', 'pdist', 'pinverse', 'polygamma', 'positive', 'put', 'rad2deg_', 'range',
        'reciprocal_', 'resize_as_', 'resolve_conj', 'resolve_neg', 'round_', 'rsqrt_',
        'scalar_tensor', 'set_flush_denormal', 'set_num_interop_threads', 'set_warn_always', 'signbit',
        'sin_', 'sinc', 'sinc_', 'sinh_', 'sqrt_', 'square_', 'tan_', 'trunc_', 'typename', 'unsafe_chunk',
        'unsafe_split', 'unsafe_split_with_sizes', 'vdot', 'xlogy_')},
    # Composed in Python (logspace, triangular_solve) or the in-place function aliases of the methods:
    # against torch in tests/python/test_out_tuples_and_aliases.py.
    **{name: "tests/python/test_out_tuples_and_aliases.py" for name in (
        "logspace", "triangular_solve", "relu_", "sigmoid_", "tanh_", "nn.functional.relu_",
        "nn.functional.leaky_relu_", "nn.functional.hardtanh_")},
    # Composed in Python from ops the generator covers (python/kiln/_composed_ops.py): against torch
    # on values, views, gradients and errors in tests/python/test_composed_ops.py.
    **{name: "composed in Python: tests/python/test_composed_ops.py" for name in (
        "Tensor.addmv", "Tensor.addr", "Tensor.argwhere", "Tensor.diagflat", "Tensor.dist", "Tensor.dsplit",
        "Tensor.hsplit", "Tensor.inner", "Tensor.take_along_dim", "Tensor.vsplit", "addmv", "addr", "argwhere",
        "atleast_1d", "atleast_2d", "atleast_3d", "block_diag", "cartesian_prod", "diagflat", "dist", "dsplit",
        "hsplit", "inner", "take_along_dim", "trapezoid", "trapz", "vsplit", "quantile", "nanquantile",
        "Tensor.quantile", "Tensor.nanquantile")},
    # Composed in Python (python/kiln/_composed_ops_more.py, nn/_losses_more.py): against torch on values,
    # dtypes, gradients and errors in tests/python/test_ops_part2_more.py.
    **{name: "composed in Python: tests/python/test_ops_part2_more.py" for name in (
        "mode", "Tensor.mode", "renorm", "Tensor.renorm", "combinations", "cov", "corrcoef", "histogram", "vander",
        "index_reduce", "Tensor.index_reduce", "Tensor.index_reduce_", "nn.functional.multi_margin_loss",
        "nn.functional.multilabel_margin_loss", "nn.functional.hinge_embedding_loss",
        "nn.functional.triplet_margin_with_distance_loss")},
    # The LU family takes factors an earlier call made (LU, int32 pivots), not random tensors:
    # against torch on values, pivots, infos, gradients and errors in tests/python/test_linalg_more.py.
    **{name: "LU factors as input: tests/python/test_linalg_more.py" for name in (
        "lu", "Tensor.lu", "lu_solve", "Tensor.lu_solve", "lu_unpack")},
    # What the public training scripts of tests/python/programs/ found missing: each against torch,
    # values, gradients, random streams and errors, in tests/python/test_program_gaps.py.
    **{name: "added for the training programs: tests/python/test_program_gaps.py" for name in (
        "Tensor.aminmax", "Tensor.diff", "Tensor.is_pinned", "Tensor.is_shared", "Tensor.share_memory_", "aminmax",
        "diff", "is_anomaly_enabled", "nn.functional.dropout1d", "nn.functional.dropout2d",
        "nn.functional.dropout3d", "nn.functional.pairwise_distance", "nn.functional.relu6",
        "nn.functional.softmin", "randint_like", "spmm", "tril_indices", "triu_indices")},
    # torch's shifts by counts beyond the type's width are undefined behaviour in its kernels (the
    # scalar and vector loops disagree); in-range counts, every integer dtype: test_small_int_dtypes.py
    "bitwise_left_shift": "out-of-range counts are undefined in torch; tests/python/test_small_int_dtypes.py",
    "bitwise_right_shift": "out-of-range counts are undefined in torch; tests/python/test_small_int_dtypes.py",
    "Tensor.bitwise_left_shift": "as bitwise_left_shift (tests/python/test_small_int_dtypes.py)",
    "Tensor.bitwise_right_shift": "as bitwise_right_shift (tests/python/test_small_int_dtypes.py)",
    "Tensor.bitwise_left_shift_": "as bitwise_left_shift (tests/python/test_small_int_dtypes.py)",
    "Tensor.bitwise_right_shift_": "as bitwise_right_shift (tests/python/test_small_int_dtypes.py)",
    "nn.functional.upsample": "deprecated alias of F.interpolate that warns (tests/python/test_nn_resampling.py)",
    "nn.functional.upsample_bilinear": "deprecated alias of F.interpolate that warns (tests/python/test_nn_resampling.py)",
    "nn.functional.upsample_nearest": "deprecated alias of F.interpolate that warns (tests/python/test_nn_resampling.py)",
    "Tensor.backward": "autograd machinery: every gradient case calls it",
    "Tensor.register_hook": "autograd machinery (tests/python/test_autograd_engine.py)",
    "Tensor.retain_grad": "autograd machinery (tests/python/test_autograd_engine.py)",
    "Tensor.requires_grad_": "the harness makes every gradient leaf with it",
    # autograd plumbing and an in-place weight renorm: against torch in test_differential_fixes4.py
    "Tensor.detach_": "autograd plumbing (in place): tests/python/test_differential_fixes4.py",
    "detach_": "autograd plumbing (in place): tests/python/test_differential_fixes4.py",
    "embedding_renorm_": "writes into an embedding weight: tests/python/test_differential_fixes4.py",
    "Tensor.sparse_mask": "a sparse COO result, which the harness cannot convert with numpy(): "
                          "tests/python/test_program_gaps5.py",
    "Tensor.storage": "memory introspection: size, address and elements (tests/python/test_torch2_small_gaps.py)",
    "Tensor.cpu": "kiln has one device",
    "Tensor.get_device": "kiln has one device: -1 as torch's CPU tensors (tests/python/test_programs_lm.py)",
    "Tensor.new": "the legacy constructor: uninitialized values (tests/python/test_programs_lm.py)",
    "Tensor.is_same_size": "a shape query (tests/python/test_programs_lm.py)",
    "is_same_size": "a shape query (tests/python/test_programs_lm.py)",
    "Tensor.is_signed": "a dtype query (tests/python/test_programs_lm.py)",
    "is_signed": "a dtype query (tests/python/test_programs_lm.py)",
    "Tensor.cuda": "no CUDA backend yet: AssertionError as torch's CPU-only builds (tests/python/test_hostile_calls.py)",
    "Tensor.data_ptr": "addresses differ by nature; the harness compares aliasing with it",
    "Tensor.numpy": "the harness converts every result with it",
    "from_numpy": "shares memory with NumPy: tests/python/test_bindings.py",
    "empty_strided": "uninitialized values; empty/new_empty cover shapes and dtypes",
    "get_default_dtype": "global state", "set_default_dtype": "global state",
    "get_num_threads": "global state", "set_num_threads": "global state",
    "set_printoptions": "global state (tests/python/test_tensor_repr.py)",
    "broadcast_shapes": "takes shapes, not tensors (tests/python/test_torch_defects.py)",
    **{f"Tensor.{name}": "an in-place view method: geometry, autograd and errors against torch in "
       "tests/python/test_inplace_views.py" for name in (
           "t_", "transpose_", "swapdims_", "swapaxes_", "unsqueeze_", "squeeze_", "as_strided_", "resize_",
           "resize_as_")},
    **{name: "sparse COO results, which the harness cannot convert with numpy(): tests/python/test_sparse_coo.py"
       for name in ("sparse_coo_tensor", "Tensor.to_sparse", "Tensor.to_dense")},
    "Tensor.addbmm_": "torch 1.13 resizes a self of another shape in place (kiln refuses); op_db records test it",
    "Tensor.baddbmm_": "torch 1.13 resizes a self of another shape in place (kiln refuses); op_db records test it",
    **{name: "global flags of CPU torch (tests/python/test_namespaces.py)" for name in (
        "are_deterministic_algorithms_enabled", "get_autocast_cpu_dtype", "get_autocast_gpu_dtype",
        "get_deterministic_debug_mode", "get_float32_matmul_precision", "is_autocast_cache_enabled",
        "is_autocast_cpu_enabled", "is_autocast_enabled", "is_deterministic_algorithms_warn_only_enabled",
        "set_deterministic_debug_mode", "set_float32_matmul_precision", "use_deterministic_algorithms")},
    **{name: "autocast state (tests/python/test_autocast.py)" for name in (
        "set_autocast_cpu_dtype", "set_autocast_cpu_enabled")},
    "get_rng_state": "generator states differ by design (kiln's is int64)", "set_rng_state": "generator state",
    "initial_seed": "generator state", "manual_seed": "generator state", "seed": "generator state",
    "is_grad_enabled": "global state",
    "load": "kiln saves safetensors, torch pickles: by design", "save": "kiln saves safetensors, torch pickles: by design",
    "native_layer_norm": "layer_norm's kernel: its op record (NumPy reference) and the layer_norm specs, which run it",
    **{name: "recurrent layers and cells: their op records (torch's own torch.lstm etc. as the reference) and "
             "tests/python/test_nn_rnn.py (modules with torch's weights, forward and backward)"
       for name in ("lstm", "gru", "rnn_tanh", "rnn_relu", "lstm_cell", "gru_cell", "rnn_tanh_cell", "rnn_relu_cell")},
    "nn.functional.multi_head_attention_forward": "a composite of kiln ops taking 13 weights and flags: "
                                                  "tests/python/test_nn_attention.py (against torch's, with "
                                                  "gradients, and through nn.MultiheadAttention)",
    # Added by the ninth program batch, each against torch (values, indices, gradients, torch's random stream
    # and errors) in tests/python/test_program_gaps9.py.
    **{name: "random windows from torch's stream: tests/python/test_program_gaps9.py"
       for name in ("nn.functional.fractional_max_pool2d", "nn.functional.fractional_max_pool2d_with_indices",
                    "nn.functional.fractional_max_pool3d", "nn.functional.fractional_max_pool3d_with_indices")},
    **{name: "float64 series / continued fractions with torch's edge values: tests/python/test_program_gaps9.py"
       for name in ("igamma", "igammac", "Tensor.igamma", "Tensor.igamma_", "Tensor.igammac", "Tensor.igammac_")},
    **{name: "global anomaly-mode switches: tests/python/test_program_gaps9.py"
       for name in ("set_anomaly_enabled", "is_anomaly_check_nan_enabled")},
}


# --------------------------------------------------------------------------- autograd: in-place after save, views
AUTOGRAD_TEMPLATES = {
    "exp_then_add_": "exec:_y = {0}.exp(); _y.add_(1); _r = _y",                  # exp saved its result: backward raises
    "sigmoid_then_mul_": "exec:_y = {0}.sigmoid(); _y.mul_(2); _r = _y",
    "tanh_saved_zero_": "exec:_y = {0}.tanh(); _z = _y * 1; _y.zero_(); _r = _z",
    "mul_then_add_": "exec:_y = {0} * 2; _y.add_(1); _r = _y.sin()",             # mul's saved inputs untouched: fine
    # CopySlices (contiguous first: torch's `x.T * 1` keeps x.T's strides, kiln's result is contiguous)
    "view_inplace": "exec:_y = ({0} * 1).contiguous(); _y.view(-1)[0:1].mul_(3); _r = _y",
    "transpose_inplace": "exec:_y = {0} * 1; _y.transpose(0, -1).add_(1); _r = _y.pow(2)",
    "mul_self_": "exec:_y = {0} * 1; _y.mul_(_y); _r = _y",
    "select_setitem": "exec:_y = {0} * 1; _y[0] = _y[-1] * 2; _r = _y",
    "detach_inplace": "exec:_y = {0} * 1; _y.detach().zero_(); _r = _y * {0}",
    "relu_inplace_reuse": "exec:_y = {0} * 1; _z = _y.relu_(); _r = _z + _y",
}
for key, template in AUTOGRAD_TEMPLATES.items():
    SPECS.append(Spec("autograd." + key, lambda g: ((g.t(g.shape(1, 3, empty_p=0.0)),), {}), template=template,
                      dtypes=("float64",), n=8))
add("to_other", lambda g: ((g.t(), g.t((), g.pick(list(DTYPES)), grad=False)), {"copy": g.p(0.5)} if g.p(0.4) else {}),
    func=None, method="to", n=8)
add("to_copy", lambda g: ((g.t(), D(g.pick(list(DTYPES)))), {"copy": True}), func=None, method="to", n=6)

# a crash found by the differential test (seed 7): roll of a 0-dim tensor allocated where an empty
# tensor was rolled reads a stale size (the 0-dim size(0) defect) and divides by it: SIGFPE
SPECS.append(Spec("roll.after_empty_roll", lambda g: ((g.t(()),), {}),
                  template="exec:LIB.roll(LIB.empty(0), 0); _r = LIB.roll({0}.clone(), 1, 0)", grad=False, n=1))

# clamp with tensor bounds equal to the input (ties): torch's gradient goes to the input
def g_clamp_ties(g: G):
    a = g.t(g.shape(1, 2, empty_p=0.0), layout=False)
    b = T(a.base.copy(), a.dtype, a.view, a.grad)
    return (a, b), {}


SPECS.append(Spec("clamp_ties", g_clamp_ties, template="LIB.clamp({0}, min={1})", dtypes=("float64",), n=4))

# scans with indices, searching, counting, unique and cdist
from .specs_search import SPECS as _SEARCH_SPECS  # noqa: E402

SPECS.extend(_SEARCH_SPECS)
from . import specs_more  # noqa: E402,F401  (adds its specs to SPECS)
from . import specs_part2  # noqa: E402,F401  (adds its specs to SPECS)
from . import specs_edge  # noqa: E402,F401  (adds its specs to SPECS)
