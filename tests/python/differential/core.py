"""The differential harness's machinery: argument placeholders, building them in kiln and torch,
running one call in both, and comparing what came back.

A case's arguments are plain Python data with placeholders: `T` (a tensor: NumPy values, a dtype
name and a view recipe applied after construction), `D` (a dtype), `Out` (an out= tensor whose
shape/dtype is decided from torch's result). `build(lib, x)` turns them into kiln or torch
objects; `render(x)` writes them in kiln syntax for the one-line repro.
"""
from __future__ import annotations

import math
import warnings
from typing import Any, List, Optional

import numpy as np

DTYPES = ("bool", "int32", "int64", "float16", "bfloat16", "float32", "float64")
FLOATS = ("float16", "bfloat16", "float32", "float64")
INTS = ("int32", "int64")
# NumPy holder of each dtype's values (bfloat16 values are kept as float32, exactly representable).
NP = {"bool": np.bool_, "int32": np.int32, "int64": np.int64, "float16": np.float16,
      "bfloat16": np.float32, "float32": np.float32, "float64": np.float64}
TOL = {"float64": dict(rtol=1e-7, atol=1e-9), "float32": dict(rtol=1.3e-6, atol=1e-5),
       "float16": dict(rtol=2e-3, atol=1e-3), "bfloat16": dict(rtol=1.6e-2, atol=1e-2)}


class T:
    """A tensor argument: `base` (NumPy, already rounded to `dtype`) becomes a contiguous tensor
    (the root; a leaf with requires_grad when `grad`), then `view` ops make the argument:
    ("t", a, b) transpose, ("s", d) every other element along d, ("e", shape) expand."""
    __slots__ = ("base", "dtype", "view", "grad")

    def __init__(self, base: np.ndarray, dtype: str, view=(), grad: bool = False):
        self.base, self.dtype, self.view, self.grad = base, dtype, tuple(view), grad

    @property
    def shape(self):
        shape = list(self.base.shape)
        for v in self.view:
            if v[0] == "t":
                shape[v[1]], shape[v[2]] = shape[v[2]], shape[v[1]]
            elif v[0] == "s":
                shape[v[1]] = (shape[v[1]] + 1) // 2
            elif v[0] == "e":
                shape = list(v[1])
        return tuple(shape)


class D(str):
    """A dtype argument: D("float32") is kiln.float32 / torch.float32."""


class Out:
    """An out= tensor: dtype None means torch's result dtype; shape 'right', 'strided' (the right
    shape, every other element of a bigger buffer) or 'empty' (0,)."""
    __slots__ = ("dtype", "shape", "hint")

    def __init__(self, dtype: Optional[str], shape: str):
        self.dtype, self.shape, self.hint = dtype, shape, None


class Built:
    """What build() made for one library: the roots (contiguous tensors the arguments view) and
    the leaves that require grad."""

    def __init__(self):
        self.roots: List[Any] = []
        self.leaves: List[Any] = []


def make_tensor(lib, spec: T, built: Built):
    if spec.base.size == 0:   # lib.tensor of an empty array keeps NumPy's strides in torch
        t = lib.empty(spec.base.shape, dtype=getattr(lib, spec.dtype))
    elif spec.dtype == "bfloat16":
        t = lib.tensor(np.array(spec.base, dtype=np.float32)).to(lib.bfloat16)
    else:
        t = lib.tensor(np.array(spec.base))
    if spec.grad:
        t.requires_grad_(True)
        built.leaves.append(t)
    built.roots.append(t)
    for v in spec.view:
        if v[0] == "t":
            t = t.transpose(v[1], v[2])
        elif v[0] == "s":
            t = t[(slice(None),) * v[1] + (slice(None, None, 2),)]
        elif v[0] == "e":
            t = t.expand(*v[1])
    return t


def build(lib, x, built: Built, out_hint=None):
    if isinstance(x, T):
        return make_tensor(lib, x, built)
    if isinstance(x, D):
        return getattr(lib, str(x))
    if isinstance(x, Out):
        shape, dtype = out_hint if out_hint is not None else ((0,), x.dtype or "float32")
        dtype = x.dtype or dtype
        if x.shape == "strided" and len(shape) >= 1:   # every other element of a bigger buffer
            big = lib.full(tuple(shape[:-1]) + (2 * shape[-1],), 7, dtype=getattr(lib, dtype))
            built.roots.append(big)
            return big[(slice(None),) * (len(shape) - 1) + (slice(None, None, 2),)]
        t = lib.full(shape if x.shape in ("right", "strided") else (0,), 7, dtype=getattr(lib, dtype))
        built.roots.append(t)
        return t
    if isinstance(x, list):
        return [build(lib, v, built, out_hint) for v in x]
    if isinstance(x, tuple):
        return tuple(build(lib, v, built, out_hint) for v in x)
    if isinstance(x, dict):
        return {k: build(lib, v, built, out_hint) for k, v in x.items()}
    return x


def _num(v) -> str:
    if isinstance(v, float):
        if math.isnan(v):
            return "nan"
        if math.isinf(v):
            return "inf" if v > 0 else "-inf"
    return repr(v)


def _values(a):
    if isinstance(a, list):
        return "[" + ", ".join(_values(v) for v in a) + "]"
    return _num(a)


def render(x) -> str:
    """x in kiln syntax (`from math import inf, nan` assumed)."""
    if isinstance(x, T):
        dt = f"kiln.{x.dtype}"
        if x.base.size == 0:
            s = f"kiln.empty({tuple(x.base.shape)}, dtype={dt})"
        else:
            s = f"kiln.tensor({_values(x.base.tolist())}, dtype={dt})"
        if x.grad:
            s += ".requires_grad_()"
        for v in x.view:
            if v[0] == "t":
                s += f".transpose({v[1]}, {v[2]})"
            elif v[0] == "s":
                s += "[" + ":, " * v[1] + "::2]"
            elif v[0] == "e":
                s += f".expand{tuple(v[1])}"
        return s
    if isinstance(x, D):
        return f"kiln.{x}"
    if isinstance(x, Out):
        shape, dtype = getattr(x, "hint", None) or ("<torch's result shape>", "<torch's result dtype>")
        if x.shape == "strided" and isinstance(shape, tuple) and len(shape) >= 1:
            big = tuple(shape[:-1]) + (2 * shape[-1],)
            return f"kiln.full({big}, 7, dtype=kiln.{x.dtype or dtype})[" + ":, " * (len(shape) - 1) + "::2]"
        shape = shape if x.shape in ("right", "strided") else (0,)
        return f"kiln.full({shape}, 7, dtype=kiln.{x.dtype or dtype})"
    if isinstance(x, list):
        return "[" + ", ".join(render(v) for v in x) + "]"
    if isinstance(x, tuple):
        return "(" + ", ".join(render(v) for v in x) + ("," if len(x) == 1 else "") + ")"
    if isinstance(x, slice):
        return f"slice({render(x.start)}, {render(x.stop)}, {render(x.step)})"
    if x is Ellipsis:
        return "..."
    if isinstance(x, float):
        return _num(x)
    return repr(x)


# ---------------------------------------------------------------------------------------------
# Comparison.

def canonical_exception(e: BaseException) -> str:
    """The builtin class an exception is (torch's own classes derive from builtin ones)."""
    for c in type(e).__mro__:
        if c.__module__ == "builtins":
            return c.__name__
    return type(e).__name__


def is_tensor(x) -> bool:
    return type(x).__name__ in ("Tensor", "Parameter") and hasattr(x, "dtype") and hasattr(x, "shape")


def dtype_name(dt) -> str:
    return str(dt).split(".")[-1]


def to_numpy(t) -> np.ndarray:
    t = t.detach()
    if dtype_name(t.dtype) == "bfloat16":
        t = t.float()
    return np.array(t.numpy())


def compare_tensor(k, t, where: str, values: bool = True, tol_scale: float = 1.0,
                   signed_zeros: bool = False) -> Optional[str]:
    kd, td = dtype_name(k.dtype), dtype_name(t.dtype)
    if kd != td:
        return f"dtype: {where}: kiln {kd}, torch {td}"
    if tuple(k.shape) != tuple(t.shape):
        return f"shape: {where}: kiln {tuple(k.shape)}, torch {tuple(t.shape)}"
    if not values:
        return None
    a, b = to_numpy(k), to_numpy(t)
    if td in FLOATS:
        tol = TOL[td]
        with np.errstate(invalid="ignore", over="ignore"):
            nan_a, nan_b = np.isnan(a), np.isnan(b)
            if not np.array_equal(nan_a, nan_b):
                return f"values: {where}: nan positions differ: kiln {_short(a)}, torch {_short(b)}"
            inf_a, inf_b = np.isinf(a), np.isinf(b)
            if not np.array_equal(np.where(inf_a, a, 0), np.where(inf_b, b, 0)):
                return f"values: {where}: inf differ: kiln {_short(a)}, torch {_short(b)}"
            fin = ~(nan_a | np.isinf(a))
            da, db = a[fin].astype(np.float64), b[fin].astype(np.float64)
            bad = np.abs(da - db) > tol["atol"] * tol_scale + tol["rtol"] * tol_scale * np.abs(db)
        if bad.any():
            return f"values: {where}: kiln {_short(a)}, torch {_short(b)}"
        if signed_zeros:  # a spec that asks for it: -0.0 and 0.0 differ (specs_edge.py)
            zero = (a == 0) & (b == 0)
            if not np.array_equal(np.signbit(a[zero]), np.signbit(b[zero])):
                return f"values: {where}: signed zeros differ: kiln {_short(a)}, torch {_short(b)}"
    elif not np.array_equal(a, b):
        return f"values: {where}: kiln {_short(a)}, torch {_short(b)}"
    return None


def _short(a: np.ndarray) -> str:
    s = np.array2string(np.asarray(a), threshold=20, precision=6, separator=", ").replace("\n", "")
    return s if len(s) < 300 else s[:300] + "..."


def compare_results(k, t, where: str = "result", values: bool = True, tol_scale: float = 1.0,
                    signed_zeros: bool = False) -> Optional[str]:
    if is_tensor(t):
        if not is_tensor(k):
            return f"type: {where}: kiln {type(k).__name__}, torch Tensor"
        return compare_tensor(k, t, where, values, tol_scale, signed_zeros)
    if isinstance(t, (tuple, list)) and not type(t).__name__ == "Size":
        if not isinstance(k, (tuple, list)) or len(k) != len(t):
            return f"type: {where}: kiln {type(k).__name__} of {len(k) if hasattr(k, '__len__') else '-'}, torch {type(t).__name__} of {len(t)}"
        if isinstance(t, tuple) and hasattr(t, "_fields"):
            for f in t._fields:
                if not hasattr(k, f):
                    return f"type: {where}: kiln result lacks field {f}"
        for i, (a, b) in enumerate(zip(k, t)):
            r = compare_results(a, b, f"{where}[{i}]", values, tol_scale, signed_zeros)
            if r:
                return r
        return None
    if type(t).__name__ == "Size":
        if tuple(k) != tuple(t):
            return f"values: {where}: kiln {tuple(k)}, torch {tuple(t)}"
        return None
    if type(t).__name__ == "dtype":
        return None if dtype_name(k) == dtype_name(t) else f"values: {where}: kiln {k}, torch {t}"
    if isinstance(t, (bool, int, float)) or t is None:
        if type(k) is not type(t):
            return f"type: {where}: kiln {type(k).__name__} {k!r}, torch {type(t).__name__} {t!r}"
        if not values:
            return None
        if isinstance(t, float):
            if math.isnan(t) and isinstance(k, float) and math.isnan(k):
                return None
            if not (k == t or abs(k - t) <= 1e-5 * abs(t) + 1e-7):
                return f"values: {where}: kiln {k!r}, torch {t!r}"
        elif k != t:
            return f"values: {where}: kiln {k!r}, torch {t!r}"
        return None
    return None  # other objects (devices, generators): not compared


def flat_tensors(x) -> list:
    if is_tensor(x):
        return [x]
    if isinstance(x, (tuple, list)):
        return [t for v in x for t in flat_tensors(v)]
    return []


def aliases(result, roots) -> List[bool]:
    """For each tensor in result: does its memory lie in one of the roots' memory?"""
    out = []
    for r in flat_tensors(result):
        hit = False
        if r.numel() > 0:
            p = r.data_ptr()
            for root in roots:
                b = root.data_ptr()
                if b <= p < b + max(root.numel(), 1) * root.element_size():
                    hit = True
        out.append(hit)
    return out


def quiet():
    warnings.simplefilter("ignore")
