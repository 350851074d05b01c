"""Random argument generation: `G` makes shapes, tensors (contiguous, non-contiguous, expanded,
0-dim, empty; ordinary and edge values), dims (sometimes out of range) and scalars for one case,
from a NumPy generator seeded by (seed, op, index)."""
from __future__ import annotations

import math
import zlib

import numpy as np

from .core import DTYPES, FLOATS, INTS, NP, T

inf, nan = math.inf, math.nan
FMAX = {"float16": 65504.0, "bfloat16": 3.3895313892515355e38, "float32": 3.4028234663852886e38,
        "float64": 1.7976931348623157e308}
FTINY = {"float16": 6.103515625e-05, "bfloat16": 1.1754943508222875e-38, "float32": 1.1754943508222875e-38,
         "float64": 2.2250738585072014e-308}
IMAX = {"int32": 2 ** 31 - 1, "int64": 2 ** 63 - 1}


def case_rng(seed: int, key: str, index: int) -> np.random.Generator:
    return np.random.default_rng([seed, zlib.crc32(key.encode()), index])


def round_to(arr: np.ndarray, dtype: str) -> np.ndarray:
    """arr's values as `dtype` holds them (bfloat16: rounded to nearest even, kept as float32)."""
    if dtype == "bfloat16":
        a = np.asarray(arr, dtype=np.float32)
        bits = a.view(np.uint32).astype(np.uint64)
        nan_mask = np.isnan(a)
        bits = (bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000
        out = bits.astype(np.uint32).view(np.float32)
        return np.where(nan_mask, np.float32(nan), out).astype(np.float32)
    with np.errstate(over="ignore", invalid="ignore"):
        return np.asarray(arr).astype(NP[dtype])


class G:
    def __init__(self, rng: np.random.Generator, dtype: str, grad: bool):
        self.rng, self.dtype, self.grad = rng, dtype, grad
        self.edge = rng.random() < 0.25
        self.extremes = True

    # -- choices
    def pick(self, seq):
        return seq[int(self.rng.integers(len(seq)))]

    def p(self, prob: float) -> bool:
        return bool(self.rng.random() < prob)

    def int(self, lo: int, hi: int) -> int:
        """lo..hi inclusive."""
        return int(self.rng.integers(lo, hi + 1))

    # -- shapes and dims
    def shape(self, min_nd=0, max_nd=3, empty_p=0.07, max_size=4, min_size=1):
        nd = self.int(min_nd, max_nd)
        s = [self.int(min_size, max_size) for _ in range(nd)]
        if nd and self.p(empty_p):
            s[self.int(0, nd - 1)] = 0
        return tuple(s)

    def dim(self, nd: int, oob_p=0.06) -> int:
        n = max(nd, 1)
        if self.p(oob_p):
            return self.pick([n, -n - 1, n + 2])
        return self.int(-n, n - 1)

    def dims(self, nd: int):
        """A tuple of distinct dims (sometimes repeated or out of range)."""
        if nd == 0:
            return self.pick([(), (0,), (-1,)])
        if self.p(0.05):
            return ()           # torch: an empty dim list reduces every dim
        k = self.int(1, nd)
        ds = list(self.rng.permutation(nd)[:k])
        ds = [int(d) - nd if self.p(0.3) else int(d) for d in ds]
        if self.p(0.04):
            ds.append(ds[0])
        if self.p(0.04):
            ds.append(nd + 1)
        return tuple(ds)

    def bshape(self, shape, bad_p=0.05):
        """A shape that broadcasts with `shape` (sometimes one that does not)."""
        s = list(shape)
        if s and self.p(0.4):
            s = s[self.int(0, len(s)):]
        s = [1 if (n != 0 and self.p(0.3)) else n for n in s]
        if self.p(0.15) and len(s) < 4:
            s = [self.int(1, 2)] + s
        if s and self.p(bad_p):
            i = self.int(0, len(s) - 1)
            s[i] = s[i] + 2
        return tuple(s)

    # -- values
    def values(self, shape, dtype, lo=None, hi=None, edge=None, unique=False):
        rng = self.rng
        n = int(np.prod(shape)) if shape else 1
        edge = self.edge if edge is None else edge
        if dtype == "bool":
            a = rng.random(n) < 0.5
        elif dtype in INTS:
            lo_ = -9 if lo is None else int(lo)
            hi_ = 9 if hi is None else int(hi)
            if unique:
                a = rng.permutation(np.arange(-(n // 2), n - n // 2)) if lo is None else rng.integers(lo_, hi_ + 1, n)
            else:
                a = rng.integers(lo_, hi_ + 1, n)
            if edge and lo is None and n:
                m = rng.random(n) < 0.3
                big = IMAX[dtype]
                a = np.where(m, rng.choice(np.array([0, -1, 1, -big - 1, big], dtype=np.int64), n), a)
            a = a.astype(NP[dtype])
        else:
            lo_ = -4.0 if lo is None else lo
            hi_ = 4.0 if hi is None else hi
            if unique:
                a = (rng.permutation(n) - n / 2) / 4.0 + rng.integers(0, 4, n) / 32.0
            else:
                a = np.round(rng.uniform(lo_, hi_, n) * 32) / 32
                a = np.clip(a, lo_, hi_)
            if edge and lo is None and n and unique:
                # distinct edge values only (no ties: indices of equal values may differ)
                e = np.array([inf, -inf, nan, FMAX[dtype], -FMAX[dtype], FTINY[dtype]])
                pos = np.flatnonzero(rng.random(n) < 0.3)[:len(e)]
                a = a.astype(np.float64)
                a[pos] = rng.permutation(e)[:len(pos)]
            elif edge and lo is None and n:
                m = rng.random(n) < 0.3
                big = FMAX[dtype] if self.extremes else 2.0
                e = np.array([0.0, -0.0, inf, -inf, nan, 1.0, -1.0, 0.5, big, -big, FTINY[dtype]])
                a = np.where(m, rng.choice(e, n), a)
            a = round_to(a, dtype)
        return a.reshape(shape)

    def t(self, shape=None, dtype=None, layout=True, grad=None, **vkw) -> T:
        """A tensor argument; float64 tensors require grad in a gradient case."""
        dtype = dtype or self.dtype
        shape = self.shape() if shape is None else tuple(shape)
        grad = (self.grad and dtype == "float64") if grad is None else (grad and dtype == "float64")
        numel = int(np.prod(shape)) if shape else 1
        nd = len(shape)
        r = self.rng.random() if (layout and nd and numel > 1) else 1.0
        if layout == "noexpand" and r >= 0.35:
            r = 1.0
        if r < 0.2:                       # every other element of a bigger buffer
            d = self.pick([i for i in range(nd) if shape[i] > 1] or [0])
            big = list(shape)
            big[d] = 2 * shape[d]
            base = self.values(tuple(big), dtype, **vkw)
            base[(slice(None),) * d + (slice(None, None, 2),)] = self.values(shape, dtype, **vkw)
            return T(base, dtype, [("s", d)], grad)
        if r < 0.35 and nd >= 2:          # transposed
            a, b = (int(x) for x in self.rng.permutation(nd)[:2])
            vals = self.values(shape, dtype, **vkw)
            return T(np.ascontiguousarray(vals.swapaxes(a, b)), dtype, [("t", a, b)], grad)
        if r < 0.5:                        # expanded
            small = [1 if (n > 1 and self.p(0.6)) else n for n in shape]
            lead = self.int(0, nd) if self.p(0.3) else 0
            small = small[lead:]
            if tuple(small) == tuple(shape):
                small[0:1] = [1] if shape[0] > 1 else small[0:1]
            return T(self.values(tuple(small), dtype, **vkw), dtype, [("e", tuple(shape))], grad)
        return T(self.values(shape, dtype, **vkw), dtype, (), grad)

    def index(self, n: int, shape, oob_p=0.05, neg=True, dtype="int64") -> T:
        """An int64 index tensor with values in [-n, n) (or [0, n)); sometimes one out of range."""
        lo = -n if (neg and n) else 0
        vals = self.rng.integers(lo, max(n, 1), size=shape) if n else np.zeros(shape, np.int64)
        if self.p(oob_p) and vals.size:
            vals.flat[0] = self.pick([n, -n - 1])
        return T(vals.astype(NP[dtype]), dtype, (), False)

    def scalar(self, dtype=None):
        dtype = dtype or self.pick(["bool", "int", "int", "float", "float"])
        if dtype == "bool":
            return self.p(0.5)
        if dtype in ("int",) + INTS:
            return self.pick([0, 1, -1, 2, 3, -5, 7]) if not self.edge else self.pick([0, 2 ** 31, -2 ** 40, 1])
        if self.edge:
            return self.pick([0.0, -0.0, inf, -inf, nan, 1e300, 0.5])
        return self.pick([0.5, -1.5, 2.0, 0.25, -3.0, 1.0])

    def other_dtype(self, p_same=0.6, choices=DTYPES):
        return self.dtype if self.p(p_same) else self.pick(list(choices))
