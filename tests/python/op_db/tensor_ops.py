"""Records of the copying ops: clone, copy_, _to_copy and Tensor.to(dtype).

Conversions between every pair of dtypes follow C++ casts, which NumPy's astype also does
for the sample values (floats in [-4, 4]: float -> int truncates, anything -> bool is != 0).
"""
import numpy as np

from .record import ALL, SHAPES, DType, ErrorInput, OpRecord, Sample, shape_samples, values

FAMILY = "tensor"


def _with_expanded(d):
    """Every shape, plus an expanded (stride 0) input."""
    return shape_samples(d, 1) + [Sample((np.broadcast_to(values((1, 4), d), (3, 4)),), note="expanded input")]


# ----------------------------------------------------------------------------- copy_
def _copy_samples(d):
    out = [Sample((values(s, d), values(s, d, seed=1)), note=f"shape {s}") for s in SHAPES]
    for d2 in ALL:  # src of every dtype, converted to self's
        if d2 != d:
            out.append(Sample((values((2, 3), d), values((2, 3), d2, seed=1)), note=f"{d2} src into {d}"))
    out += [
        Sample((values((3, 4), d), values((4,), d, seed=1)), note="src (4,) broadcasts to (3, 4)"),
        Sample((values((2, 3, 4), d), values((3, 1), d, seed=1)), note="src (3, 1) broadcasts to (2, 3, 4)"),
        Sample((values((3, 4), d), values((), d, seed=1)), note="0-dim src broadcasts"),
        Sample((values((3, 4), d), np.broadcast_to(values((3, 1), d, seed=1), (3, 4))), note="expanded src"),
        Sample((values((2, 0, 3), d), values((3,), d, seed=1)), note="src (3,) into zero-size self"),
        Sample((values((3, 4), d), values((4,), "float64" if d != "float64" else "int32", seed=1)),
               note="broadcast src of another dtype"),
    ]
    return out


def _copy_ref(self, src, non_blocking=False):
    return np.broadcast_to(src, self.shape).astype(self.dtype)


def _copy_errors():
    return [
        ErrorInput(lambda k: k.zeros([2, 3]).copy_(k.ones([3, 3])), RuntimeError, "must match",
                   "src (3, 3) does not broadcast to self (2, 3)"),
        ErrorInput(lambda k: k.zeros([3]).copy_(k.ones([2, 3])), RuntimeError, "expand|broadcast",
                   "src with more dims than self"),
    ]


# ----------------------------------------------------------------------------- _to_copy, to
def _to_copy_samples(d):
    out = [Sample(s.args, {"dtype": DType(d2)}, f"{s.note} -> {d2}")
           for s in _with_expanded(d) for d2 in ALL]
    out += [Sample((values((3, 4), d),), note="no dtype: a copy"),
            Sample((values((2, 3), d),), {"dtype": DType("float64"), "device": "cpu"}, note="device='cpu'")]
    return out


def _to_copy_ref(x, dtype=None, device=None):
    return x.astype(dtype) if dtype is not None else x.copy()


def _to_copy_result(sample, dtype):
    return str(sample.kwargs.get("dtype", sample.args[0].dtype.name))


def _float64_grad_samples(kwargs_of):
    """float64 -> float64 only: a float32 result would round the central differences, and an
    integral one cannot require grad (test_no_gradient... covers that)."""
    def make():
        return [Sample((values(s, "float64"),) + args, kw, note=f"shape {s}, {note}")
                for s in [(), (5,), (2, 3)] for args, kw, note in kwargs_of()]
    return make


def _to_samples(d):
    out = [Sample(s.args + (d2,), {}, f"{s.note} -> {d2}") for s in _with_expanded(d) for d2 in map(DType, ALL)]
    out += [Sample((values((3, 4), d), DType(d)), {"copy": True}, note="same dtype, copy=True"),
            Sample((values((3, 4), d), DType("float64")), {"copy": True}, note="copy=True"),
            Sample((values((3, 4), d), DType("int32")), {"non_blocking": True}, note="non_blocking=True")]
    return out


def _to_ref(x, dtype, non_blocking=False, copy=False):
    return x.astype(dtype)


def _to_errors():
    return [
        ErrorInput(lambda k: k.ones([2]).to(5), AssertionError, "CUDA", "an int is a CUDA device index, as torch"),
        ErrorInput(lambda k: k.ones([2]).to("cuda"), AssertionError, "not compiled with CUDA", "a device kiln has no kernels for"),
        ErrorInput(lambda k: k.ones([2]).to(k.float64, bogus=True), TypeError, "unexpected keyword",
                   "an unknown keyword"),
    ]


def _to_copy_errors():
    return [ErrorInput(lambda k: k._C._to_copy(k.ones([2]), device="cuda"), AssertionError, "not compiled with CUDA",
                       "a device kiln has no kernels for")]


RECORDS = [
    OpRecord("clone", FAMILY, ALL, _with_expanded, ref=np.copy),
    OpRecord("copy_", FAMILY, ALL, _copy_samples, ref=_copy_ref, error_inputs=_copy_errors),
    # kiln._to_copy is not exported (the `from ._C import *` of kiln/__init__.py skips
    # underscore names, as torch has no torch._to_copy either): the op is kiln._C._to_copy.
    OpRecord("_to_copy", FAMILY, ALL, _to_copy_samples, ref=_to_copy_ref, result_dtype=_to_copy_result,
             api="_C._to_copy", error_inputs=_to_copy_errors,
             grad_samples=_float64_grad_samples(lambda: [((), {"dtype": DType("float64")}, "to float64"),
                                                         ((), {}, "no dtype")])),
    OpRecord("to.dtype", FAMILY, ALL, _to_samples, ref=_to_ref, result_dtype=lambda s, d: str(s.args[1]),
             error_inputs=_to_errors,
             grad_samples=_float64_grad_samples(lambda: [((DType("float64"),), {}, "same dtype: self"),
                                                         ((DType("float64"),), {"copy": True}, "copy=True")])),
]

assert all(isinstance(r, OpRecord) and r.family == FAMILY for r in RECORDS)
