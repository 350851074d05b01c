"""Records of the comparison ops: eq, ne, lt, le, gt, ge (Tensor and Scalar overloads).

Every comparison gives a bool tensor; the operands are compared in their promoted dtype
(torch.result_type), which NumPy's comparisons also do. The samples are pointwise.py's binary
and scalar samples (shapes, broadcasting, every mixed-dtype pair) plus samples where the
operands are equal in some places (random floats almost never are), and NaN / inf for floats.
"""
import dataclasses
import operator

import numpy as np

from .pointwise import binary, scalar_other
from .record import ALL, FLOATS, ErrorInput, Sample, always, values, wrap_int_scalar

FAMILY = "comparison"


def _with_ties(a, b):
    """b with a's values in about half the places, so ==, <= and >= are not all False."""
    if not a.size:
        return b
    take = values(np.broadcast_shapes(a.shape, b.shape), "bool", seed=5)
    return np.where(take, a, b).astype(b.dtype)


def _extra_tensor_samples(d):
    out = []
    for s in [(), (5,), (3, 4)]:
        a, b = values(s, d), values(s, d, seed=1)
        out.append(Sample((a, _with_ties(a, b)), note=f"shape {s}, equal in places"))
    a = values((3, 4), d)
    out.append(Sample((a, _with_ties(a[1], values((4,), d, seed=1))),
                      note="broadcast (3,4) with (4,), equal in places"))
    out.append(Sample((a, a.copy()), note="all equal"))
    if d in FLOATS:
        special = np.array([np.nan, np.nan, 1.0, np.inf, -np.inf, np.inf, 0.0, -0.0], dtype=d)
        other = np.array([np.nan, 1.0, np.nan, np.inf, np.inf, 2.0, -0.0, 0.0], dtype=d)
        out.append(Sample((special, other), note="nan, inf, signed zeros"))
    return out


def _extra_scalar_samples(d):
    """Scalars that occur in the tensor (exact in every float dtype), NaN / inf, bool and int scalars."""
    out = []
    for c in ((True, False) if d == "bool" else (2, 2.5, -1)):
        x = values((3, 4), d)
        if d in FLOATS or (d != "bool" and float(c).is_integer()):
            x.flat[::3] = c
        out.append(Sample((x, c), note=f"shape (3, 4) containing scalar {c!r}"))
    if d in FLOATS:
        special = np.array([np.nan, 1.0, np.inf, -np.inf, 0.0, -0.0], dtype=d)
        out += [Sample((special, c), note=f"nan, inf, signed zeros vs {c!r}")
                for c in (0.0, float("inf"), float("nan"))]
    # A bool scalar against numbers compares with 1 / 0, an int scalar against bools likewise.
    out.append(Sample((values((2, 3), d), True), note="bool scalar"))
    out.append(Sample((values((2, 3), d), 1), note="int scalar 1"))
    out.append(Sample((values((2, 3), d), 0.5), note="float scalar 0.5"))
    return out


def _extend(rec, extra):
    base = rec.samples
    return dataclasses.replace(rec, family=FAMILY, samples=lambda d: base(d) + extra(d))


def _scalar_errors(name):
    return lambda: [
        ErrorInput(lambda k: getattr(k, name)(k.ones(2, 3), "a"), TypeError, "invalid combination of arguments",
                   f"{name} with a str"),
        ErrorInput(lambda k: getattr(k, name)(k.ones(2, 3), [1.0, 2.0, 3.0]), TypeError,
                   "invalid combination of arguments", f"{name} with a list (not a Scalar)"),
        ErrorInput(lambda k: getattr(k, name)(k.ones(2, 3, dtype=k.int64), 2**70), RuntimeError,
                   "Overflow when unpacking long", f"{name} with an int beyond int64"),
    ]


def comparison(base, ref, op):
    """The Tensor and Scalar overloads of one comparison."""
    tensor = binary(f"{base}.Tensor", ref, dtypes=ALL, result=always("bool"), operator=op)
    scalar = scalar_other(f"{base}.Scalar", lambda a, c: ref(a, wrap_int_scalar(a, c)), dtypes=ALL, result=always("bool"), operator=op,
                          error_inputs=_scalar_errors(base), differentiable=False)  # composite of .Tensor
    return [_extend(tensor, _extra_tensor_samples), _extend(scalar, _extra_scalar_samples)]


RECORDS = (comparison("eq", np.equal, operator.eq)
           + comparison("ne", np.not_equal, operator.ne)
           + comparison("lt", np.less, operator.lt)
           + comparison("le", np.less_equal, operator.le)
           + comparison("gt", np.greater, operator.gt)
           + comparison("ge", np.greater_equal, operator.ge))
