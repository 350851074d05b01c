"""Records of torch's integer and float-format pointwise ops: gcd, lcm (integers), nextafter,
logaddexp2, ldexp and float_power. References: NumPy (np.gcd, np.lcm, np.nextafter, np.logaddexp2),
ldexp and float_power computed in float64."""
import numpy as np

from .record import ALL, FLOATS, INTS, ErrorInput, OpRecord, Sample, always, promote, same_dtype, shape_samples, values
from .pointwise import _f, binary, scalar_other

FAMILY = "pointwise_int_float"


def _ldexp_result(sample, dtype):
    """torch's dtype of mul(self, pow(2.0, other)): pow's is other's, or float32 for an integer other."""
    a, b = sample.args[:2]
    p = b.dtype.name if b.dtype.name in FLOATS else "float32"
    s = a.dtype.name
    if (a.ndim == 0) == (b.ndim == 0):
        return promote(s, p)
    strong, weak = (p, s) if a.ndim == 0 else (s, p)
    return strong if strong in FLOATS or weak not in FLOATS else promote(strong, weak)


def _ldexp_reduced_result(sample, dtype):
    """torch's ldexp dtype with the sample's float32 arrays in float16/bfloat16 `dtype`."""
    import torch
    a, b = (torch.zeros(x.shape, dtype=getattr(torch, dtype if x.dtype.name == "float32" else x.dtype.name))
            for x in sample.args[:2])
    return str(torch.ldexp(a, b).dtype).replace("torch.", "")


def _ldexp_samples(d):
    # exponents as small integers in any dtype, so 2 ** other is exact and finite
    out = []
    for s in shape_samples(d, 2):
        a, b = s.args[:2]
        out.append(Sample((a, (np.abs(b.astype(np.int64)) % 5).astype(b.dtype) if d != "bool" else b), note=s.note))
    for d2 in ("int64", "float32", "float64", "uint8"):
        if d2 != d:
            out.append(Sample((values((2, 3), d), np.arange(6, dtype=d2).reshape(2, 3) % 4), note=f"{d} with {d2}"))
    return out


def _ldexp_inplace_samples(d):
    # self keeps its dtype; other (small integer exponents, its own or an integer dtype) broadcasts to it
    out = []
    for s, o in [((), ()), ((0,), (0,)), ((3, 4), (3, 4)), ((3, 4), (4,))]:
        e = np.arange(int(np.prod(o)), dtype=np.int64).reshape(o) % 4
        out.append(Sample((values(s, d), e.astype(d)), note=f"{s} with {o} exponents"))
        out.append(Sample((values(s, d), e), note=f"{s} with {o} int64 exponents"))
    return out


def _gcd_samples(d):
    out = shape_samples(d, 2)
    lo = -20 if d != "uint8" else 0
    a = np.arange(lo, lo + 24).astype(d).reshape(4, 6)
    out.append(Sample((a, np.array([0, 6, -4 if d != "uint8" else 4, 9, 12, 1], dtype=d)), note="zeros, signs"))
    return out


_not_bool = [ErrorInput(lambda k: k.gcd(k.ones(2, dtype=k.bool), k.ones(2, dtype=k.bool)), RuntimeError,
                        "not implemented for 'Bool'", "bool tensors")]

RECORDS = [
    binary("logaddexp2", np.logaddexp2, dtypes=FLOATS),
    OpRecord("gcd", FAMILY, INTS, _gcd_samples, ref=np.gcd,
             error_inputs=lambda: _not_bool + [ErrorInput(lambda k: k.gcd(k.ones(2), k.ones(2)), RuntimeError,
                                                          "not implemented for 'Float'", "float tensors")]),
    OpRecord("lcm", FAMILY, INTS, _gcd_samples, ref=lambda a, b: np.lcm(a.astype(np.int64), b.astype(np.int64)),
             error_inputs=lambda: [ErrorInput(lambda k: k.lcm(k.ones(2, dtype=k.bool), k.ones(2, dtype=k.bool)),
                                              RuntimeError, "not implemented for 'Bool'", "bool tensors")]),
    binary("nextafter", np.nextafter, dtypes=FLOATS,
           no_reduced_precision="float16/bfloat16 would compute in float32, whose neighbours are not theirs",
           error_inputs=lambda: [ErrorInput(lambda k: k.nextafter(k.ones(2, dtype=k.int64), k.ones(2, dtype=k.int64)),
                                            RuntimeError, "not implemented for 'Long'", "int64 tensors")]),
    OpRecord("ldexp.Tensor", FAMILY, ALL, _ldexp_samples, ref=_f(lambda x, e: x * np.exp2(e)),
             result_dtype=_ldexp_result, reduced_result_dtype=_ldexp_reduced_result,
             error_inputs=lambda: [ErrorInput(lambda k: k.ones(2, dtype=k.int64).ldexp_(k.ones(2, dtype=k.int64)),
                                              RuntimeError, "can't be cast", "an int64 self cannot hold the float result")]),
    # ldexp_ and ldexp.out: torch's self.mul_(pow(2.0, other)) and mul_out(out, self, pow(2.0, other))
    OpRecord("ldexp_", FAMILY, FLOATS, _ldexp_inplace_samples, ref=_f(lambda x, e: x * np.exp2(e)),
             result_dtype=same_dtype),
    OpRecord("ldexp.out", FAMILY, ALL, _ldexp_samples, ref=_f(lambda x, e: x * np.exp2(e)),
             result_dtype=_ldexp_result, reduced_result_dtype=_ldexp_reduced_result),
    OpRecord("float_power.Tensor_Tensor", FAMILY, ALL, lambda d: shape_samples(d, 2, "positive"),
             ref=_f(np.power), result_dtype=always("float64"), domain="positive", inplace_needs_result_dtype=True,
             error_inputs=lambda: [ErrorInput(lambda k: k.ones(2).float_power_(k.ones(2)), RuntimeError,
                                              "requires dtype Double", "float_power_ of a float32 self")]),
    scalar_other("float_power.Tensor_Scalar", _f(np.power), result=always("float64"), scalars=(2, 0.5, -1),
                 domain="positive", inplace_needs_result_dtype=True),
]
