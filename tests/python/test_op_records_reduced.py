"""Every op record's float32 samples, run in float16 and bfloat16.

The inputs are the float32 sample values rounded to the 16-bit type; the reference is the
record's NumPy reference on those rounded values (in float64). kiln computes in float32 and
rounds each op's result once, so results agree to a few units in the last place of the 16-bit
type (composites round their intermediate results too, hence the tolerances). Results that
were float32 for float32 inputs must come back in the 16-bit type, unless the sample asked for
a dtype explicitly.
"""
import numpy as np
import pytest

import kiln
from op_db import RECORDS
from op_db.harness import as_tuple, call_any, convert, expected_dtypes, reference_args
from op_db.record import DType, Sample
from op_db.schema_facts import FACTS

REDUCED = ("float16", "bfloat16")
# float16 keeps 11 significant bits (one rounding: 2^-11 = 4.9e-4), bfloat16 keeps 8 (2^-8 = 3.9e-3).
# A record may set its own (OpRecord.tol) where its inputs carry more rounded intermediates.
TOL = {"float16": dict(rtol=4e-3, atol=4e-3), "bfloat16": dict(rtol=2e-2, atol=2e-2)}


def round_to(a: np.ndarray, dtype: str) -> np.ndarray:
    """float32 values rounded to the 16-bit type (round to nearest even), as float32."""
    a = np.array(a, dtype=np.float32, order="C")
    if dtype == "float16":
        with np.errstate(over="ignore"):
            return a.astype(np.float16).astype(np.float32)
    u = a.view(np.uint32).astype(np.uint64)
    rounded = (u + np.uint64(0x7FFF) + ((u >> np.uint64(16)) & np.uint64(1))) >> np.uint64(16)
    bits = rounded.astype(np.uint32) << np.uint32(16)
    return np.where(np.isnan(a), a, bits.view(np.float32))


def map_floats(x, f):
    """x with f applied to its float32 arrays (in a Tensor[] list too)."""
    if isinstance(x, np.ndarray) and x.dtype == np.float32:
        return f(x)
    if isinstance(x, list) and x and all(isinstance(v, np.ndarray) for v in x):
        return [map_floats(v, f) for v in x]
    return x


def to_kiln(x, dtype):
    """The kiln argument: float32 arrays as `dtype` tensors, the rest as the harness converts them."""
    if isinstance(x, list) and x and all(isinstance(v, np.ndarray) for v in x):
        return [to_kiln(v, dtype) for v in x]
    if isinstance(x, np.ndarray) and x.dtype == np.float32:
        return kiln.tensor(x, dtype=dtype)
    return convert(x)


def has_float_inputs(sample):
    return any(a.dtype == np.float32 for a in sample.arrays())


# Ops with a NumPy reference that take floating tensors (factories have no inputs to round).
CASES = [rec for rec in RECORDS.values() if "float32" in rec.dtypes and rec.ref is not None and not rec.reinterprets_bytes
         and rec.no_reduced_precision is None and any(has_float_inputs(s) for s in rec.samples("float32"))]
REFUSING = [rec for rec in RECORDS.values() if rec.no_reduced_precision is not None]


@pytest.mark.parametrize("dtype", REDUCED)
@pytest.mark.parametrize("rec", REFUSING, ids=lambda r: r.name)
def test_record_refuses_reduced_precision(rec, dtype):
    """Ops that refuse 16-bit floats (as torch's CPU LAPACK ops) raise a clean RuntimeError."""
    kdtype = getattr(kiln, dtype)
    sample = next(s for s in rec.samples("float32") if has_float_inputs(s))
    args = [to_kiln(a, kdtype) for a in sample.args]
    kwargs = {k: to_kiln(v, kdtype) for k, v in sample.kwargs.items()}
    with pytest.raises(RuntimeError, match="not supported|not implemented"):
        call_any(rec, FACTS[rec.name], args, kwargs)


@pytest.mark.parametrize("dtype", REDUCED)
@pytest.mark.parametrize("rec", CASES, ids=lambda r: r.name)
def test_record_in_reduced_precision(rec, dtype):
    kdtype = getattr(kiln, dtype)
    facts = FACTS[rec.name]
    ran = 0
    for sample in rec.samples("float32"):
        if not has_float_inputs(sample):
            continue
        rounded = Sample(tuple(map_floats(a, lambda v: round_to(v, dtype)) for a in sample.args),
                         {k: map_floats(v, lambda v: round_to(v, dtype)) for k, v in sample.kwargs.items()},
                         sample.note)
        args = [to_kiln(a, kdtype) for a in rounded.args]
        kwargs = {k: to_kiln(v, kdtype) for k, v in rounded.kwargs.items()}
        got = as_tuple(call_any(rec, facts, args, kwargs))
        ref_args, ref_kwargs = reference_args(rounded)
        expected = as_tuple(rec.ref(*ref_args, **ref_kwargs))
        asked_float32 = rec.dtype_arg_sets_result and any(
            isinstance(v, DType) and v == "float32" for v in list(sample.args) + list(sample.kwargs.values()))
        where = f"{rec.name} [{sample.note}] in {dtype}"
        for g, e, want in zip(got, expected, expected_dtypes(rec, sample, "float32")):
            want = dtype if want == "float32" and not asked_float32 else want
            if rec.reduced_result_dtype is not None:
                want = rec.reduced_result_dtype(sample, dtype)
            assert str(g.dtype) == f"kiln.{want}", f"{where}: dtype {g.dtype}, expected {want}"
            values = (g.detach().float() if g.dtype == kiln.bfloat16 else g.detach()).numpy()
            e = np.asarray(e)
            assert values.shape == e.shape, where
            if g.is_floating_point():
                np.testing.assert_allclose(values.astype(np.float64), e.astype(np.float64), equal_nan=True,
                                           err_msg=where, **rec.tol.get(dtype, TOL[dtype]))
            else:
                np.testing.assert_array_equal(values, e, err_msg=where)
        ran += 1
    assert ran > 0
