"""Checks generated for every op record (tests/python/op_db) and every dtype.

For each op of schema/native_functions.yaml and each kiln dtype:
  * forward against the NumPy reference, on every sample, as given and non-contiguous;
  * the function, method and operator forms agree;
  * the in-place form (where the schema declares one) gives the functional values in self,
    keeps data_ptr, returns self, and refuses to broadcast self or to narrow its dtype;
  * out= (where declared): an empty out is resized, a non-contiguous out keeps its strides,
    an out whose dtype cannot hold the result raises;
  * an undeclared dtype raises a clean error;
  * float64: gradcheck on every sample and gradgradcheck, for differentiable ops; for the others,
    and for non-differentiable arguments, asking for a gradient raises instead of giving a number.
"""
import numpy as np
import pytest

import kiln
from kiln.autograd import gradcheck, gradgradcheck

from op_db import RECORDS
from op_db.harness import (LAYOUTS, as_tuple, assert_matches, assert_same, call_any, call_function, call_method,
                           describe, dtype_name, expected_dtypes, fresh_generators, kiln_args, kiln_dtype,
                           reference_args, to_kiln, tolerance)
from op_db.record import ALL, CATEGORY
from op_db.schema_facts import FACTS

CASES = [(r, d) for r in RECORDS.values() for d in r.dtypes]
UNDECLARED = [(r, d) for r in RECORDS.values() for d in ALL if d not in r.dtypes]


def ids(case):
    rec, dtype = case
    return f"{rec.name}-{dtype}"


def with_facts(cases, keep):
    return [c for c in cases if keep(c[0], FACTS[c[0].name])]


def layouts(rec):
    return ("as_given",) if rec.no_noncontiguous else LAYOUTS


def run(rec, sample, layout="as_given"):
    args, kwargs = kiln_args(sample, layout)
    return call_any(rec, FACTS[rec.name], args, kwargs), args, kwargs


# ----------------------------------------------------------------------------- forward
@pytest.mark.parametrize("case", CASES, ids=ids)
def test_forward_matches_numpy(case):
    rec, dtype = case
    for sample in rec.samples(dtype):
        for layout in layouts(rec):
            where = describe(rec, sample, layout)
            got, args, kwargs = run(rec, sample, layout)
            if rec.check is not None:
                rec.check(kiln, got, sample)
                continue
            rargs, rkwargs = reference_args(sample)
            want = as_tuple(rec.ref(*rargs, **rkwargs))
            dts = expected_dtypes(rec, sample, dtype)
            assert len(as_tuple(got)) == len(want), where
            for g, w, dt in zip(as_tuple(got), want, dts):
                assert_matches(g, w, dt, tolerance(rec, dt), where)


def _forms(rec, facts):
    forms = {}
    if facts.function:
        forms["function"] = lambda a, k: call_function(rec, a, k)
    if facts.method:
        forms["method"] = lambda a, k: call_method(rec, a, k)
    if rec.operator is not None:
        forms["operator"] = lambda a, k: rec.operator(*a, **k)
    return forms


@pytest.mark.parametrize("case", with_facts(CASES, lambda r, f: len(_forms(r, f)) > 1 and r.check is None), ids=ids)
def test_function_method_operator_agree(case):
    rec, dtype = case
    forms = _forms(rec, FACTS[rec.name])
    for sample in rec.samples(dtype):
        args, kwargs = kiln_args(sample)
        results = {name: form(args, kwargs) for name, form in forms.items()}
        first = next(iter(results))
        for name, r in results.items():
            assert_same(results[first], r, f"{describe(rec, sample)}: {first} vs {name}")


# ----------------------------------------------------------------------------- in-place
def _broadcasts_self(sample, result):
    self_shape = tuple(sample.args[0].shape)
    return tuple(result.shape) != self_shape


@pytest.mark.parametrize("case", with_facts(CASES, lambda r, f: f.inplace is not None), ids=ids)
def test_inplace(case):
    rec, dtype = case
    facts = FACTS[rec.name]
    refused_broadcast = 0
    for sample in rec.samples(dtype):
        if 0 in sample.args[0].strides and sample.args[0].size > 1:
            continue  # an expanded self: tests/python/test_op_errors.py expects the refusal
        for layout in layouts(rec):
            where = describe(rec, sample, layout) + f" {facts.inplace}"
            functional, args, kwargs = run(rec, sample, layout)
            self_ = args[0]
            ptr = self_.data_ptr()
            if _broadcasts_self(sample, functional):
                with pytest.raises(RuntimeError):
                    call_method(rec, args, kwargs, name=facts.inplace)
                refused_broadcast += 1
                continue
            if rec.inplace_needs_result_dtype and functional.dtype != self_.dtype:
                with pytest.raises(RuntimeError, match="requires dtype"):
                    call_method(rec, args, kwargs, name=facts.inplace)
                continue
            if CATEGORY[dtype_name(functional.dtype)] > CATEGORY[dtype]:
                with pytest.raises(RuntimeError, match="can't be cast"):
                    call_method(rec, args, kwargs, name=facts.inplace)
                continue
            returned = call_method(rec, args, kwargs, name=facts.inplace)
            assert returned is self_, where
            assert self_.data_ptr() == ptr, where
            assert_same(self_, functional.to(self_.dtype), where)
    if len(facts.tensor_args) > 1 and rec.no_self_broadcast is None:
        assert refused_broadcast, f"{rec.name}: no sample broadcasts self, so the in-place refusal is untested"


# ----------------------------------------------------------------------------- out=
def _unsafe_out_dtype(result_dtype):
    """A dtype the result may not be written to (float -> int, int -> bool), or None."""
    return {2: "int64", 1: "bool"}.get(CATEGORY[result_dtype])


@pytest.mark.parametrize("case", with_facts(CASES, lambda r, f: f.out), ids=ids)
def test_out(case):
    rec, dtype = case
    for sample in rec.samples(dtype):
        where = describe(rec, sample)
        args, kwargs = kiln_args(sample)
        own_out = kwargs.pop("out", None)  # an out-only op's sample carries its own
        expected = call_function(rec, args, kwargs, **({} if own_out is None else {"out": own_out}))
        rdt = expected.dtype
        # An empty out is resized to the result.
        out = kiln.empty(0, dtype=rdt)
        returned = call_function(rec, args, kwargs, out=out)
        assert returned is out, where
        assert_same(out, expected, where + " (empty out)")
        # A non-contiguous out of the right shape keeps its strides and storage.
        if expected.numel() > 1:
            strided = to_kiln(np.zeros(tuple(expected.shape), dtype=expected.numpy().dtype), "noncontiguous")
            strides, ptr = strided.stride(), strided.data_ptr()
            call_function(rec, args, kwargs, out=strided)
            assert strided.stride() == strides and strided.data_ptr() == ptr, where
            assert_same(strided, expected, where + " (non-contiguous out)")
        # An out that cannot hold the result's dtype raises.
        unsafe = None if rec.out_sets_dtype else _unsafe_out_dtype(dtype_name(rdt))
        if unsafe is not None:
            # "can't be cast" (TensorIterator ops), or an exact-dtype rule (mm, bmm, neg, floor, as torch).
            with pytest.raises(RuntimeError, match="can't be cast|Expected out tensor to have dtype|Found dtype|dtype for input and out to match|"
                                             "same scalar type|expected to have the same dtype|should be same as input|"
                                             "tensors with different dtypes|"  # heaviside, as torch
                                             "result requires dtype"):
                call_function(rec, args, kwargs, out=kiln.empty(0, dtype=kiln_dtype(unsafe)))


# ----------------------------------------------------------------------------- dtypes, both ways
@pytest.mark.parametrize("case", [c for c in UNDECLARED if c[0].samples(c[1])], ids=ids)
def test_undeclared_dtype_raises(case):
    rec, dtype = case
    sample = rec.samples(dtype)[0]
    args, kwargs = kiln_args(sample)
    with pytest.raises(rec.undeclared_error) as info:
        call_any(rec, FACTS[rec.name], args, kwargs)
    message = str(info.value)
    assert rec.base.rstrip("_") in message or "not implemented" in message or "not supported" in message, message


# ----------------------------------------------------------------------------- gradients
def _grad_samples(rec):
    if rec.grad_samples is not None:
        return rec.grad_samples()
    return [s for s in rec.samples("float64") if all(a.size <= 24 for a in s.arrays())]


def _differentiable_positions(rec, facts, sample):
    """(argument, element) positions of the float64 inputs gradients flow to: element is None for
    a Tensor argument, the list index for Tensor[] (schema: formulas and non_differentiable)."""
    names = facts.arguments
    positions = []
    for i, a in enumerate(sample.args):
        name = names[i] if i < len(names) else None
        if (name in facts.non_differentiable_args or name in rec.not_differentiable
                or (facts.has_formula and name not in facts.differentiable_args)):
            continue
        items = [(None, a)] if isinstance(a, np.ndarray) else list(enumerate(a)) if isinstance(a, list) else []
        for j, x in items:
            if isinstance(x, np.ndarray) and x.dtype == np.float64 and not (0 in x.strides and x.size > 1):
                positions.append((i, j))
    return positions


def _grad_fn(rec, facts, sample, positions):
    args, kwargs = kiln_args(sample)

    def fn(*xs):
        call = [list(a) if isinstance(a, list) else a for a in args]
        for (i, j), x in zip(positions, xs):
            if rec.gradcheck_wrapper is not None:
                x = rec.gradcheck_wrapper(i, x)
            if j is None:
                call[i] = x
            else:
                call[i][j] = x
        if facts.mutates_self and (0, None) in positions:
            call[0] = call[0].clone()  # a leaf that requires grad cannot be written in place
        out = call_any(rec, facts, call, fresh_generators(sample, kwargs))  # random ops: the same draws
        # Outputs that never require grad (an attention kernel's logsumexp) are not checked.
        return tuple(o for o in out if o.requires_grad) if isinstance(out, tuple) else out
    inputs = [to_kiln(sample.args[i] if j is None else sample.args[i][j], requires_grad=True) for i, j in positions]
    return fn, inputs


DIFFERENTIABLE = [r for r in RECORDS.values() if r.is_differentiable(FACTS[r.name]) and "float64" in r.dtypes]


@pytest.mark.parametrize("rec", [r for r in DIFFERENTIABLE if r.no_gradcheck is None], ids=lambda r: r.name)
def test_gradcheck(rec):
    facts = FACTS[rec.name]
    checked = 0
    for sample in _grad_samples(rec):
        positions = _differentiable_positions(rec, facts, sample)
        if not positions:
            continue
        fn, inputs = _grad_fn(rec, facts, sample, positions)
        assert gradcheck(fn, inputs, eps=1e-6, atol=1e-5, rtol=1e-3), describe(rec, sample)
        checked += 1
    assert checked, f"{rec.name}: no sample has an input to differentiate"


@pytest.mark.parametrize("rec", [r for r in DIFFERENTIABLE if r.gradgrad is True], ids=lambda r: r.name)
def test_gradgradcheck(rec):
    facts = FACTS[rec.name]
    for sample in _grad_samples(rec):
        positions = _differentiable_positions(rec, facts, sample)
        if not positions or not all(x.size for x in (sample.args[i] if j is None else sample.args[i][j]
                                                    for i, j in positions)):
            continue
        fn, inputs = _grad_fn(rec, facts, sample, positions)
        assert gradgradcheck(fn, inputs, eps=1e-6, atol=1e-5, rtol=1e-3), describe(rec, sample)


NON_DIFFERENTIABLE = [r for r in RECORDS.values() if not r.is_differentiable(FACTS[r.name])
                      and set(FACTS[r.name].tensor_args) - {"out"} and "float64" in r.dtypes]


@pytest.mark.parametrize("rec", NON_DIFFERENTIABLE, ids=lambda r: r.name)
def test_no_gradient_through_non_differentiable_op(rec):
    """The result never requires grad, and asking for a gradient raises (or, for an op whose record
    says its derivative is not implemented, calling it with inputs that require grad raises)."""
    for sample in rec.samples("float64"):
        args, kwargs = kiln_args(sample)
        leaves = [a.requires_grad_(True) for a in args if isinstance(a, kiln.Tensor)
                  and a.is_leaf and a.is_floating_point()]
        if not leaves:
            continue
        if rec.derivative_not_implemented:
            with pytest.raises(NotImplementedError, match="derivative for"):
                call_any(rec, FACTS[rec.name], args, kwargs)
            return
        out = as_tuple(call_any(rec, FACTS[rec.name], args, kwargs))
        for o in out:
            assert not o.requires_grad and o.grad_fn is None, describe(rec, sample)
        with pytest.raises(RuntimeError, match="does not require grad"):
            kiln.autograd.grad([out[0]], leaves, [kiln.ones_like(out[0])])
        return
    pytest.fail(f"{rec.name}: no float64 sample to ask a gradient of")


NON_DIFFERENTIABLE_ARGS = [r for r in RECORDS.values() if FACTS[r.name].non_differentiable_args
                           and r.is_differentiable(FACTS[r.name])]


@pytest.mark.parametrize("rec", NON_DIFFERENTIABLE_ARGS, ids=lambda r: r.name)
def test_no_gradient_to_non_differentiable_argument(rec):
    facts = FACTS[rec.name]
    checked = 0
    for sample in rec.samples("float64"):
        args, kwargs = kiln_args(sample)
        for name in facts.non_differentiable_args:
            i = facts.arguments.index(name)
            arg = args[i] if i < len(args) else kwargs.get(name)
            if not (isinstance(arg, kiln.Tensor) and arg.is_floating_point()):
                continue  # an int index or bool mask cannot require grad in the first place
            arg.requires_grad_(True)
            out = as_tuple(call_any(rec, facts, args, kwargs))[0]
            with pytest.raises(RuntimeError):
                kiln.autograd.grad([out.sum()], [arg])
            arg.requires_grad_(False)
            checked += 1
        for name in facts.non_differentiable_args:  # integral arguments refuse requires_grad
            i = facts.arguments.index(name)
            arg = args[i] if i < len(args) else kwargs.get(name)
            if isinstance(arg, kiln.Tensor) and not arg.is_floating_point():
                with pytest.raises(RuntimeError, match="floating point"):
                    arg.requires_grad_(True)
                checked += 1
    assert checked, f"{rec.name}: no sample has a non-differentiable tensor argument"
