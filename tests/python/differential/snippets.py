"""Running one snippet of torch code (`r = torch....`) under torch and under kiln and comparing the
outcomes: dtype, shape, values (NaN positions, the sign of zeros and infinities) or the exception
class. Used by the differential-hunt regression tests (test_differential_fixes2.py, ...3.py)."""
import math

import numpy as np


def run(lib, src):
    """env['r'] after exec(src) with `torch` bound to lib, or ('raised', exception class name)."""
    env = {"torch": lib, "inf": math.inf, "nan": math.nan}
    try:
        exec(src, env)
    except Exception as e:  # noqa: BLE001 - the class is what is compared
        return ("raised", type(e).__name__)
    return env["r"]


def _flat(r):
    if isinstance(r, (tuple, list)):
        return [x for e in r for x in _flat(e)]
    if r is None:
        return [None]
    return [(str(r.dtype).split(".")[-1], tuple(r.shape), r.detach().double().numpy())]


def _raised(r):
    return isinstance(r, tuple) and len(r) == 2 and r[0] == "raised"


def assert_same_outcome(src, kiln, torch):
    got, want = run(kiln, src), run(torch, src)
    if _raised(got) or _raised(want):
        assert got == want, f"kiln {got}, torch {want}"
        return
    g, w = _flat(got), _flat(want)
    assert len(g) == len(w)
    for a, b in zip(g, w):
        assert (a is None) == (b is None), (a, b)
        if a is None:
            continue
        assert a[:2] == b[:2], f"kiln {a[:2]}, torch {b[:2]}"
        np.testing.assert_allclose(a[2], b[2], rtol=1e-6, atol=1e-6, equal_nan=True)
        # the sign of zeros (and of infinities) too; a NaN's sign bit is not compared
        keep = ~np.isnan(b[2])
        np.testing.assert_array_equal(np.signbit(a[2][keep]), np.signbit(b[2][keep]))
