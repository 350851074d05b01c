"""The pointwise formula table (generated/jit/pointwise_formulas.cc, from the schema's `pointwise:`
entries) against the kernels generated from the same formulas: the interpreter
(runtime/jit/formula_interpreter.h, through kiln._C._evaluate_formula) must agree with each
generated kernel's scalar functor to the bit on every op record's samples, in every dtype and
layout, and on edge values. This is the contract the LLVM and NVRTC code generators will rely on.
The scalar functors are checked with the vector loops switched off (Highway's baseline target).

With the vector loops on (the default), a vectorized op's float32 results (float16, bfloat16 and
integer inputs included, in every layout) may differ from the interpreter's float32 evaluation:
there the result must lie within VECTOR_ULP_BOUND of the formula evaluated in float64
(op_db/ulp.py); everywhere else (float64, ops without a vector loop) it must still agree to the bit.
tests/python/test_vector_formulas.py checks the vector kernels on their own.

It also checks, independently of both, a few formulas against NumPy on values where the math is
known, so a wrong formula in the schema cannot hide behind agreeing renderings.
"""
import numpy as np
import pytest

import kiln
from op_db import RECORDS
from op_db.harness import LAYOUTS, describe, kiln_args
from op_db.schema_facts import vector_formula_ops
from op_db.ulp import VECTOR_ULP_BOUND, ulp_error

FORMULAS = dict(kiln._C._pointwise_formulas())
VECTOR_OPS = {op for op, lanes in vector_formula_ops().items() if not lanes.startswith("scalar")}
BASELINE = kiln._C._simd_targets()[-1]  # Highway's portable baseline: the kernels' scalar functors


@pytest.fixture(params=["scalar functors", "vector loops"])
def kernels(request):
    """Runs the test twice: with every generated kernel on its scalar functor (the vector loops off),
    and with the vector loops on, as kiln runs by default."""
    if request.param == "scalar functors":
        kiln._C._simd_use_target(BASELINE)
    yield request.param
    kiln._C._simd_use_target(None)


def test_the_table_has_every_formula_op_of_the_schema():
    # The schema's formula ops, read from the YAML by the codegen's own loader would be circular;
    # instead: every op in the table is a kiln function with a record, and the list is not empty.
    assert len(FORMULAS) >= 11
    for op in FORMULAS:
        assert callable(getattr(kiln, op)), op
        assert op in RECORDS, f"{op} has a formula but no op record"


def same_bits_each(a, b):
    """Elementwise: the same value, sign of zero included (any NaN equals any NaN)."""
    a, b = a.numpy(), b.numpy()
    if a.dtype.kind == "f":
        return (a == b) & (np.signbit(a) == np.signbit(b)) | (np.isnan(a) & np.isnan(b))
    return a == b


def same_bits(a, b):
    if a.dtype != b.dtype or tuple(a.shape) != tuple(b.shape):
        return False
    return bool(np.all(same_bits_each(a, b)))


def check_kernel(op, kernels, got, inputs, what):
    """got (the generated kernel's result) against the interpreter: to the bit, except where a vector
    loop may have run, where it must be within VECTOR_ULP_BOUND of the formula in float64."""
    want = kiln._C._evaluate_formula(op, inputs)
    assert got.dtype == want.dtype, what
    widen = (lambda t: t.to(kiln.float64)) if got.dtype in (kiln.float16, kiln.bfloat16) else (lambda t: t)
    agree = same_bits_each(widen(got), widen(want))
    if np.all(agree):
        return
    vector = kernels == "vector loops" and op in VECTOR_OPS and got.dtype in (kiln.float32, kiln.float16, kiln.bfloat16)
    assert vector, f"{what}: differs from the interpreter where no vector loop runs"
    # The inputs as the kernel computes on them (an integer input is converted to float32 first).
    exact = [t.to(kiln.float64) if t.dtype.is_floating_point else t.to(kiln.float32).to(kiln.float64) for t in inputs]
    reference = kiln._C._evaluate_formula(op, exact).numpy()
    err = ulp_error(got.to(kiln.float64).numpy(), reference, str(got.dtype).replace("kiln.", ""))[~agree.reshape(-1)]
    assert err.max() <= VECTOR_ULP_BOUND, \
        f"{what}: {err.max():.4g} ulp from the float64 formula (bound {VECTOR_ULP_BOUND})"


CASES = [(op, dtype) for op in FORMULAS for dtype in RECORDS[op].dtypes]


@pytest.mark.parametrize("op, dtype", CASES, ids=[f"{o}-{d}" for o, d in CASES])
def test_interpreter_agrees_with_the_generated_kernel_on_the_op_records(op, dtype, kernels):
    rec = RECORDS[op]
    n = 0
    for sample in rec.samples(dtype):
        for layout in LAYOUTS:
            args, kwargs = kiln_args(sample, layout)
            if kwargs:
                continue
            tensors = [a for a in args if isinstance(a, kiln.Tensor)]
            check_kernel(op, kernels, getattr(kiln, op)(*args), tensors, describe(rec, sample, layout))
            n += 1
    assert n > 0


EDGES = [0.0, -0.0, 1.0, -1.0, 0.5, 1e-45, -1e-45, 1e-38, 3.4e38, -3.4e38, 88.7, -103.9, 1e10, -1e10,
         float("inf"), float("-inf"), float("nan")]


@pytest.mark.parametrize("op", sorted(FORMULAS))
@pytest.mark.parametrize("dtype", [kiln.float32, kiln.float64, kiln.bfloat16, kiln.float16, kiln.int64])
def test_interpreter_agrees_with_the_generated_kernel_on_edge_values(op, dtype, kernels):
    values = EDGES if dtype.is_floating_point else [0, 1, -1, 7, -2 ** 40, 2 ** 62]
    x = kiln.tensor(values, dtype=kiln.float64).to(dtype)
    got = getattr(kiln, op)(x)
    check_kernel(op, kernels, got, [x], f"{op}({dtype})")
    # Out of place, in place and out= run the same kernel.
    out = kiln.empty(0, dtype=got.dtype)
    assert same_bits(getattr(kiln, op)(x, out=out).to(kiln.float64), got.to(kiln.float64))


@pytest.mark.parametrize("op, numpy_fn", [
    ("exp", np.exp), ("log", np.log), ("sqrt", np.sqrt), ("tanh", np.tanh), ("expm1", np.expm1),
    ("log1p", np.log1p), ("sin", np.sin), ("cos", np.cos),
    ("sigmoid", lambda x: 1 / (1 + np.exp(-x))), ("rsqrt", lambda x: 1 / np.sqrt(x)),
])
def test_formulas_match_numpy_in_float64(op, numpy_fn):
    x = np.array([0.25, 0.5, 1.0, 2.0, 3.5, 10.0])
    got = kiln._C._evaluate_formula(op, [kiln.tensor(x)]).numpy()
    np.testing.assert_allclose(got, numpy_fn(x), rtol=1e-15)


def test_evaluate_formula_errors():
    with pytest.raises(ValueError, match="no pointwise formula for 'matmul'"):
        kiln._C._evaluate_formula("matmul", [kiln.ones(2)])
    with pytest.raises(RuntimeError, match="the formula takes 1 tensors, got 2"):
        kiln._C._evaluate_formula("exp", [kiln.ones(2), kiln.ones(2)])
    with pytest.raises(TypeError, match="expected tensors"):
        kiln._C._evaluate_formula("exp", [1.0])
