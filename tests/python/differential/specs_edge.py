"""Edge-value specs from the third differential hunt (docs/DIFFERENTIAL_FINDINGS.md, section 0c): tensors
drawn from small pools of edge values (±0, ±inf, NaN, the dead-zone bounds, int64 extremes), Python
numbers in the first operand, 16-bit linspace, int64 arange near the limits. Specs whose results can be
-0.0 compare the sign of zeros too (Spec.signed_zeros)."""
from __future__ import annotations

import numpy as np

from .cases import Spec
from .core import FLOATS, INTS, D, T
from .gen import G, round_to
from .specs import SPECS, add


def pool_t(g: G, pool, shape=None, dtype=None) -> T:
    """A tensor of values drawn from `pool` (rounded to the dtype), sometimes transposed."""
    dtype = dtype or g.dtype
    shape = g.shape(1, 2) if shape is None else tuple(shape)
    vals = np.array([g.pick(pool) for _ in range(int(np.prod(shape)))], dtype=np.float64).reshape(shape)
    vals = round_to(vals, dtype)
    if len(shape) == 2 and shape[0] > 1 and shape[1] > 1 and g.p(0.3):
        return T(np.ascontiguousarray(vals.swapaxes(0, 1)), dtype, [("t", 0, 1)], False)
    return T(vals, dtype, (), False)


ZEROS = [-0.0, 0.0, -0.5, 0.5, -0.25, 0.75, -1.0, 2.0, float("inf"), float("-inf")]

# hardshrink/softshrink: +0 in the dead zone, also for -0.0 and -lambd (softshrink of NaN: torch 1.13
# gives 0, 2.x NaN, kiln NaN; left out of the pool)
for name in ("hardshrink", "softshrink"):
    add("edge." + name, lambda g, name=name: ((pool_t(g, ZEROS + ([float("nan")] if name == "hardshrink" else [])),),
                                   {"lambd": g.pick([0.5, 0.25, 0.0])} if g.p(0.5) else {}),
        func="nn.functional." + name, method=None, grad=False, dtypes=FLOATS, n=8, signed_zeros=True)

# fmax/fmin: of two equal values (±0) self's; NaN loses to a number. float32/float64 (torch's 16-bit
# kernels take the other operand on ties)
for name in ("fmax", "fmin"):
    add("edge." + name, lambda g: ((pool_t(g, [-0.0, 0.0, float("nan"), 1.0], (2, 3)),
                                    pool_t(g, [-0.0, 0.0, float("nan"), -1.0], (2, 3))), {}),
        func=name, method=name, out=True, grad=False, dtypes=("float32", "float64"), n=8, signed_zeros=True)

# kl_div: +0 where the target is ±0
add("edge.kl_div", lambda g: ((pool_t(g, [1.0, -2.0, 0.5], (2, 3)), pool_t(g, [-0.0, 0.0, 0.5], (2, 3))),
                              {"reduction": g.pick(["none", "sum"])}),
    func="nn.functional.kl_div", method=None, grad=False, dtypes=("float32", "float64"), n=6, signed_zeros=True)

# a Python number first: any operand of add/sub/mul/div and their aliases; TypeError for eq/lt/.../fmod/
# copysign (torch has only Scalar overloads of their other operand) and where's condition
NUMBERS = [2, -3, 0.5, -0.0, True, 1e300, float("nan")]
for name in ("eq", "lt", "ge", "ne", "fmod", "copysign", "add", "mul", "multiply", "subtract", "divide",
             "true_divide", "remainder", "pow"):
    SPECS.append(Spec(f"edge.{name}(number, t)", lambda g: ((g.t(), g.pick(NUMBERS)), {}),
                      template=f"LIB.{name}({{1}}, {{0}})", grad=False, n=5, covers=(name,)))
SPECS.append(Spec("edge.where(number, a, b)", lambda g: ((g.t(), g.pick([True, 1, 0.0])), {}),
                  template="LIB.where({1}, {0}, {0})", grad=False, n=3, covers=("where",)))

# copysign(Tensor, number): a wrapped 0-dim tensor (no overflow check for huge numbers)
add("edge.copysign_scalar", lambda g: ((g.t(), g.pick([1e308, -1e308, -0.0, 2 ** 70, -3])), {}),
    func="copysign", method="copysign", grad=False, n=8, signed_zeros=True)

# clamp with two Scalar bounds, one NaN: NaN whatever the other (no overflow check of it)
add("edge.clamp_nan_bound", lambda g: ((g.t(),), g.pick([{"min": float("nan"), "max": 1e39},
                                                        {"min": -1e300, "max": float("nan")},
                                                        {"min": float("nan"), "max": 2 ** 40}])),
    func="clamp", method="clamp", grad=False, dtypes=("int32", "int64", "float16", "bfloat16", "float32"), n=8)

# ldexp: torch's mul(self, pow(2.0, other)), the power rounded to other's dtype (float32 for integers)
add("edge.ldexp", lambda g: ((pool_t(g, [1.0, -1.5, 3.0, 0.0], (2, 2), g.pick(["float32", "float64", "float16"])),
                              g.pick([pool_t(g, [0.5, -1.5, 2.0, 7.0], (2, 2), g.pick(["float16", "bfloat16"])),
                                      T(np.array([200, -160, 3, 0], dtype=np.int64).reshape(2, 2), "int64")])), {}),
    func="ldexp", method="ldexp", grad=False, dtypes=("float32",), n=8)

# var_mean/std_mean: any correction; the mean as torch's Welford reduction gives it with infinities
INFS = [1.0, -2.5, 3.0, 0.5, float("inf"), float("-inf")]


def g_var_mean(g: G):
    x = pool_t(g, INFS, g.pick([(4,), (2, 3), (3, 2)]))
    kw = {}
    if g.p(0.7):
        kw["dim"] = g.pick([0, -1, (0,)]) if len(x.shape) == 1 else g.pick([0, 1, -1, (0, 1), (1,)])
        if g.p(0.5):
            kw["keepdim"] = True
        if g.p(0.6):
            kw["correction"] = g.pick([0, 1, 2])
    return (x,), kw


for name in ("var_mean", "std_mean"):
    add("edge." + name, g_var_mean, func=name, method=None, grad=False, dtypes=("float32", "float64"), n=10)

# linspace in float16/bfloat16: torch's kernel arithmetic in the 16-bit type, 16-lane vectors
add("edge.linspace16", lambda g: ((g.pick([0, -3, 0.1, 5, -65504]), g.pick([1, 7, 1000.3, -5, 65504]),
                                   g.pick([7, 33, 100, 257])), {"dtype": D(g.pick(["float16", "bfloat16"]))}),
    func="linspace", method=None, grad=False, n=10)

# arange of int64 near the limits: the length from int64 bounds
add("edge.arange_int64", lambda g: (g.pick([(9223372036854775800, 9223372036854775807),
                                            (-9223372036854775807, -9223372036854775800, 2),
                                            (9223372036854775806, 9223372036854775800, -1),
                                            (-9223372036854775808, -9223372036854775805)]), {}),
    func="arange", method=None, grad=False, dtypes=INTS, n=6)

# rsub(input, other, alpha=1) = other - alpha * input (input must be a Tensor)
add("rsub", lambda g: ((g.t(), g.pick([2, 1.5, -0.0])), {"alpha": g.pick([1, 2])} if g.p(0.3) else {}),
    func="rsub", method=None, grad=False, n=8)
