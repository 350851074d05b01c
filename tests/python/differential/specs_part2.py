"""Specs of gcd, lcm, nextafter, logaddexp2, ldexp and float_power (schema formulas). The composites
of the same change (mode, renorm, cov, the margin losses, ...) are in NOT_GENERATED: their tests,
tests/python/test_ops_part2_more.py, hold them to torch."""
from __future__ import annotations

from .core import DTYPES, INTS
from .gen import G
from .specs import add, g_binary

# integers only (bool and floats would only check the error)
for name in ("gcd", "lcm"):
    add(name, lambda g: g_binary(g, 0.0, INTS), inplace=name + "_", out=True, grad=False, n=10, dtypes=INTS)
# float32/float64: kiln refuses the 16-bit floats (computed in float32, their neighbours are not theirs)
add("nextafter", lambda g: g_binary(g, 0.0, ("float32", "float64")), inplace="nextafter_", out=True, grad=False,
    n=10, dtypes=("float32", "float64"))
add("logaddexp2", lambda g: g_binary(g, 0.0), out=True, n=12)


def g_ldexp(g: G):
    a = g.t()
    return (a, g.t(g.bshape(a.shape), g.pick(["int32", "int64"]), grad=False)), {}


add("ldexp", g_ldexp, inplace="ldexp_", out=True, n=10, dtypes=DTYPES)
add("float_power", lambda g: g_binary(g, 0.3), inplace="float_power_", out=True, n=12)
