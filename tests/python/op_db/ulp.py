"""Errors in ulps (units in the last place), for the vectorized formula kernels' accuracy checks
(tests/python/test_vector_formulas.py, test_pointwise_formulas.py; bench/ulp_accuracy.py has its own
copy so it runs without the tests)."""
from __future__ import annotations

import numpy as np

import kiln

# The most a vectorized formula kernel in double lanes may be off, in ulps of the result dtype, from
# the formula evaluated in float64: float32 is computed in double lanes and rounded once (measured
# over every float32 input on AVX3, AVX2 and SSE4: correctly rounded, 0.5 ulp at most;
# docs/ARCHITECTURE.md, "Vectorized formula kernels"); the bound leaves room for a tie broken the
# other way. float16 and bfloat16 results are that float32 rounded again, which adds 2^-14 of their
# ulp at most. (Formulas of exact operations run in float lanes and give the scalar functor's bits;
# formulas with exp, log or erf run in float lanes on Sleef, held to torch_ulp_error below.)
VECTOR_ULP_BOUND = 0.501

# dtype -> (explicit mantissa bits, smallest normal exponent)
FORMATS = {"float32": (23, -126), "float16": (10, -14), "bfloat16": (7, -126)}


def rounded(ref: np.ndarray, dtype: str) -> np.ndarray:
    """ref (float64) rounded to dtype, as float64."""
    return kiln.from_numpy(np.ascontiguousarray(ref, np.float64)).to(getattr(kiln, dtype)).double().numpy()


def ulp_error(got: np.ndarray, ref: np.ndarray, dtype: str = "float32") -> np.ndarray:
    """|got - ref| in ulps of dtype at ref (the subnormal spacing below the normal range); 0 where
    both are NaN or got is ref rounded and infinite, inf where only one is NaN or got is an infinity
    ref does not round to. Flat, whatever the shapes."""
    mantissa, min_exp = FORMATS[dtype]
    got = np.asarray(got, np.float64).reshape(-1)
    ref = np.asarray(ref, np.float64).reshape(-1)
    mag = np.abs(ref)
    exponent = np.floor(np.log2(np.where((mag > 0) & np.isfinite(mag), mag, 1.0)))
    ulp = np.exp2(np.maximum(exponent, min_exp) - mantissa)
    with np.errstate(invalid="ignore"):
        err = np.abs(got - ref) / ulp
    err[np.isnan(got) & np.isnan(ref)] = 0
    err[np.isnan(got) != np.isnan(ref)] = np.inf
    r = rounded(ref, dtype)
    infinite = np.isinf(got) | np.isinf(r)
    err[infinite] = np.where(got[infinite] == r[infinite], 0, np.inf)
    return err


def torch_function(op: str):
    """torch's function named `op`: torch.<op>, or torch.nn.functional.<op> (silu, gelu live there;
    the aten op log_sigmoid is F.logsigmoid)."""
    import torch
    if op == "elu":  # the aten op (alpha, scale, input_scale): torch.elu takes alpha alone
        return torch._C._nn.elu
    op = {"log_sigmoid": "logsigmoid"}.get(op, op)
    return getattr(torch, op, None) or getattr(torch.nn.functional, op)


def torch_ulp_error(op: str, x: np.ndarray, ref: np.ndarray) -> np.ndarray:
    """torch's error (float32 ulps) on the float32 inputs x against ref, the formula in float64: the
    bar for the formulas kiln computes with Sleef's float functions (issue 15: never less accurate
    than torch on the same inputs). Needs torch (tools/setup.sh installs it for the tests)."""
    import torch
    with np.errstate(all="ignore"):
        got = torch_function(op)(torch.from_numpy(np.ascontiguousarray(x, np.float32))).numpy()
    return ulp_error(got, ref)
