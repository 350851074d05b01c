"""Specs of the scans with indices, searching, counting, unique and cdist ops (kept apart from
specs.py, which SPECS.extend()s them)."""
from __future__ import annotations

import math
from typing import List

import numpy as np

from .cases import Spec
from .core import T
from .gen import G

inf = math.inf
SPECS: List[Spec] = []
# torch 1.13 lacks float16/bfloat16 kernels for most of these (kiln has them): compared without.
NO_REDUCED = ("bool", "int32", "int64", "float32", "float64")


def add(key, gen, **kw):
    kw.setdefault("func", key)
    kw.setdefault("method", key)
    kw.setdefault("dtypes", NO_REDUCED)
    SPECS.append(Spec(key, gen, **kw))


def g_scan_dim(g: G):
    a = g.t()
    return (a, g.dim(len(a.shape))), {}


add("cummax", g_scan_dim, n=12)
add("cummin", g_scan_dim, n=12)
add("logcumsumexp", g_scan_dim, out=True, n=12, dtypes=("int64", "float32", "float64"))


def g_unique(g: G):
    a = g.t(lo=-3, hi=3)   # no NaN: torch 1.13's unique misorders NaNs (torch 2 keeps each apart, last)
    kw = {}
    for flag in ("return_inverse", "return_counts"):
        if g.p(0.5):
            kw[flag] = g.p(0.6)
    if g.p(0.4):
        kw["dim"] = g.dim(len(a.shape))
    return (a,), kw


add("unique", g_unique, grad=False, n=14)
add("unique_consecutive", g_unique, grad=False, n=12)


def g_bincount(g: G):
    n = g.int(0, 6)
    x = g.t((n,), lo=0, hi=6) if g.p(0.92) else g.t(g.shape(0, 2), lo=-2, hi=3)   # sometimes negative or not 1-D
    kw = {}
    if g.p(0.4):
        kw["weights"] = g.t((n if g.p(0.95) else n + 1,), g.pick(["float32", "float64", "int64"]), grad=False)
    if g.p(0.4):
        kw["minlength"] = g.int(-1, 8)
    return (x,), kw


add("bincount", g_bincount, grad=False, n=14, dtypes=("bool", "int32", "int64", "float32"))


def g_histc(g: G):
    kw = {"bins": g.int(0, 8)} if g.p(0.8) else {}
    lo, hi = g.pick([(0, 0), (-2, 2), (-1.5, 3), (1, 1), (2, -2)])
    if g.p(0.7):
        kw.update(min=lo, max=hi)
    return (g.t(),), kw


add("histc", g_histc, out=True, grad=False, n=14, dtypes=("int64", "float32", "float64"))


def _sorted_t(g: G, shape, dtype=None):
    dtype = dtype or g.dtype
    return T(np.sort(g.values(shape, dtype), axis=-1), dtype)


def g_searchsorted(g: G):
    seq_shape = g.shape(1, 2, empty_p=0.05)
    if len(seq_shape) == 1 or g.p(0.1):
        values = g.t(g.shape(0, 2)) if g.p(0.8) else g.scalar(g.pick(["int", "float"]))
    else:
        values = g.t(seq_shape[:-1] + (g.int(0, 3),), g.other_dtype(0.8, NO_REDUCED[1:]))
    kw = {}
    if g.p(0.3):
        kw["right"] = g.p(0.5)
    if g.p(0.3):
        kw["side"] = g.pick(["left", "right"])
    if g.p(0.2):
        kw["out_int32"] = True
    if g.p(0.2) and len(seq_shape) == 1:   # an unsorted sequence with its sorting permutation
        base = g.values(seq_shape, g.dtype)
        return (T(base, g.dtype), values), {**kw, "sorter": T(np.argsort(base, kind="stable").astype(np.int64), "int64")}
    return (_sorted_t(g, seq_shape), values), kw


add("searchsorted", g_searchsorted, method=None, out=True, grad=False, n=16, dtypes=NO_REDUCED[1:])


def g_bucketize(g: G):
    b = _sorted_t(g, (g.int(0, 5),)) if g.p(0.95) else _sorted_t(g, (2, 2))
    v = g.t() if g.p(0.85) else g.scalar(g.pick(["int", "float"]))
    kw = {"right": g.p(0.5)} if g.p(0.4) else {}
    if g.p(0.2):
        kw["out_int32"] = True
    return (v, b), kw


add("bucketize", g_bucketize, method=None, out=True, grad=False, n=14, dtypes=NO_REDUCED[1:])


def g_isin(g: G):
    a = g.t(lo=-4, hi=4) if g.p(0.85) else g.scalar("int")
    # contiguous test_elements: torch 1.13's isin .view()s them and raises on a transposed one (torch 2 reshapes)
    b = g.t(g.shape(0, 2), g.other_dtype(0.7, NO_REDUCED), layout=False, lo=-4, hi=4) if g.p(0.85) else g.scalar("int")
    if not hasattr(a, "shape") and not hasattr(b, "shape"):
        a = g.t(lo=-4, hi=4)
    return (a, b), {"invert": g.p(0.5)} if g.p(0.4) else {}


add("isin", g_isin, method=None, grad=False, n=14)


def g_cdist(g: G):
    batch = g.pick([(), (), (2,), (1,), (2, 1)])
    batch2 = batch if g.p(0.7) else g.pick([(), (3,), (2,)])
    m, p_rows, r_rows = g.int(0, 3), g.int(0, 4), g.int(0, 4)
    x1 = g.t(batch + (p_rows, m), lo=-3, hi=3) if g.p(0.97) else g.t((m,))
    x2 = g.t(batch2 + (r_rows, m if g.p(0.95) else m + 1), g.other_dtype(0.95, ("float32", "float64")), lo=-3, hi=3)
    kw = {}
    if g.p(0.8):
        kw["p"] = g.pick([0.0, 0.5, 1.0, 1.5, 2.0, 3.0, inf, -1.0])
    if g.p(0.3):
        # 'use_mm_for_euclid_dist' computes |x|^2 + |y|^2 - 2xy, whose rounding differs (and whose
        # gradient at a zero distance is noise in torch): not compared
        kw["compute_mode"] = g.pick(["use_mm_for_euclid_dist_if_necessary", "donot_use_mm_for_euclid_dist"])
    return (x1, x2), kw


add("cdist", g_cdist, method=None, n=16, dtypes=("int64", "float32", "float64"))
