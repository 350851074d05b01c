"""Turning records' NumPy samples into kiln calls, and comparing results with NumPy.

Every sample is run in two layouts: as given (contiguous, or expanded where the sample's array
has a zero stride) and re-laid out non-contiguously (each array copied into every other row of
a bigger buffer), so no record has to write its own non-contiguous samples.
"""
from __future__ import annotations

from typing import Any, List, Tuple

import numpy as np

import kiln

from .record import FLOATS, NP_DTYPE, DType, OpRecord, Sample, Seed, reference_dtype, same_dtype
from .schema_facts import OpFacts

LAYOUTS = ("as_given", "noncontiguous")
# PyTorch's assert_close defaults.
TOL = {"float32": dict(rtol=1.3e-6, atol=1e-5), "float64": dict(rtol=1e-7, atol=1e-7)}


def kiln_dtype(name: str):
    return getattr(kiln, name)


def dtype_name(dt) -> str:
    return str(dt).replace("kiln.", "")


def to_kiln(a: np.ndarray, layout: str = "as_given", requires_grad: bool = False):
    """A kiln tensor with a's values; zero strides stay expanded; see LAYOUTS."""
    dt = kiln_dtype(a.dtype.name)
    if a.ndim and a.size and 0 in a.strides:
        base = a[tuple(slice(0, 1) if s == 0 else slice(None) for s in a.strides)]
        return to_kiln(np.array(base), layout).expand(list(a.shape))
    t = kiln.tensor(np.array(a, order="C"), dtype=dt)
    if layout == "noncontiguous" and a.size > 1:
        d = next(i for i, n in enumerate(a.shape) if n > 1)
        big_shape = list(a.shape)
        big_shape[d] *= 2
        big = kiln.zeros(big_shape, dtype=dt)
        view = big[(slice(None),) * d + (slice(None, None, 2),)]
        view.copy_(t)
        assert not view.is_contiguous()
        t = view
    if requires_grad:
        t.requires_grad_(True)
    return t


def convert(x: Any, layout: str = "as_given"):
    if isinstance(x, DType):
        return kiln_dtype(x)
    if isinstance(x, Seed):
        return kiln.Generator().manual_seed(int(x))
    if isinstance(x, np.ndarray):
        return to_kiln(x, layout)
    if isinstance(x, list) and x and all(isinstance(v, np.ndarray) or v is None for v in x):
        return [None if v is None else to_kiln(v, layout) for v in x]
    return x


def kiln_args(sample: Sample, layout: str = "as_given") -> Tuple[list, dict]:
    return [convert(a, layout) for a in sample.args], {k: convert(v, layout) for k, v in sample.kwargs.items()}


def fresh_generators(sample: Sample, kwargs: dict) -> dict:
    """kwargs with a new generator for each Seed of the sample: a call that repeats another."""
    return {**kwargs, **{k: convert(v) for k, v in sample.kwargs.items() if isinstance(v, Seed)}}


def reference_args(sample: Sample) -> Tuple[list, dict]:
    def ref(x):
        if isinstance(x, DType):
            return NP_DTYPE[x]
        if isinstance(x, np.ndarray):
            return x.astype(reference_dtype(x.dtype.name)) if x.dtype.name in FLOATS else x.copy()
        if isinstance(x, list):
            return [ref(v) for v in x]
        return x
    return [ref(a) for a in sample.args], {k: ref(v) for k, v in sample.kwargs.items()}


def call_function(rec: OpRecord, args, kwargs, **extra):
    fn = kiln
    for part in rec.python_name.split("."):  # api="_C._to_copy": ops torch does not export either
        fn = getattr(fn, part)
    return fn(*args, **{**kwargs, **extra})


def call_method(rec: OpRecord, args, kwargs, name=None):
    return getattr(args[0], name or rec.python_name)(*args[1:], **kwargs)


def call_any(rec: OpRecord, facts: OpFacts, args, kwargs):
    """The function form where the op has one, else the method."""
    return call_function(rec, args, kwargs) if facts.function else call_method(rec, args, kwargs)


def expected_dtypes(rec: OpRecord, sample: Sample, dtype: str) -> Tuple[str, ...]:
    rule = rec.result_dtype or same_dtype
    got = rule(sample, dtype)
    return tuple(got) if isinstance(got, (tuple, list)) else (got,)


def as_tuple(x) -> tuple:
    return tuple(x) if isinstance(x, tuple) else (x,)


def assert_matches(got, expected: np.ndarray, dtype: str, tol: dict, where: str):
    assert isinstance(got, kiln.Tensor), f"{where}: expected a Tensor, got {type(got).__name__}"
    assert dtype_name(got.dtype) == dtype, f"{where}: dtype {dtype_name(got.dtype)}, expected {dtype}"
    g = got.detach().numpy()
    e = np.asarray(expected)
    assert g.shape == e.shape, f"{where}: shape {g.shape}, expected {e.shape}"
    if dtype in FLOATS:
        with np.errstate(invalid="ignore", over="ignore"):
            e = e.astype(NP_DTYPE[dtype])
        np.testing.assert_allclose(g, e, equal_nan=True, err_msg=where, **tol)
    else:
        np.testing.assert_array_equal(g, e.astype(NP_DTYPE[dtype]), err_msg=where)


def assert_same(a, b, where: str):
    """Two kiln results are identical: dtype, shape and values (NaNs in the same places)."""
    for x, y in zip(as_tuple(a), as_tuple(b)):
        assert x.dtype == y.dtype and tuple(x.shape) == tuple(y.shape), where
        np.testing.assert_array_equal(x.detach().numpy(), y.detach().numpy(), err_msg=where)


def tolerance(rec: OpRecord, dtype: str) -> dict:
    return rec.tol.get(dtype, TOL.get(dtype, {}))


def describe(rec: OpRecord, sample: Sample, layout: str = "") -> str:
    shapes = [tuple(a.shape) for a in sample.arrays()]
    return f"{rec.name} [{sample.note}] shapes {shapes} {layout}".strip()


def float_arrays_in(sample: Sample) -> List[int]:
    return [i for i, a in enumerate(sample.args) if isinstance(a, np.ndarray) and a.dtype.name in FLOATS]
