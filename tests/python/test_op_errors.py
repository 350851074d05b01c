"""Error inputs for every op: some derived from the schema, the rest per family (op_db records).

From the schema, for every op that has such an argument or form:
  * a `dim` argument out of range, positive and negative  -> IndexError "Dimension out of range";
  * an `int[] size` argument with a negative size, or sizes whose product overflows int64
                                                          -> RuntimeError;
  * the in-place form on an expanded (self-overlapping) tensor -> RuntimeError.
From the records: shape mismatches, index out of range, integer division by zero, ... with the
exception type and a message pattern each.
"""
import re

import numpy as np
import pytest

import kiln

from op_db import RECORDS
from op_db.harness import call_any, call_method, kiln_args, to_kiln
from op_db.schema_facts import FACTS


def _first_sample(rec, keep):
    for dtype in reversed(rec.dtypes):  # widest first: in-place forms accept their own result dtype
        for s in rec.samples(dtype):
            if keep(s):
                return s
    return None


def _replace(sample_args, sample_kwargs, facts, name, value):
    """The call's arguments with argument `name` set to value (positional or keyword)."""
    args, kwargs = list(sample_args), dict(sample_kwargs)
    i = facts.arguments.index(name)
    if i < len(args):
        args[i] = value
    else:
        kwargs[name] = value
    return args, kwargs


def _ndim(sample):
    dims = [a.ndim for a in sample.arrays()]
    lists = [len(a) for a in sample.args if isinstance(a, (list, tuple)) and all(isinstance(v, int) for v in a)]
    return max(dims + lists + [0])


DIM_CASES = [(r, name) for r in RECORDS.values() for name in FACTS[r.name].dim_args]


@pytest.mark.parametrize("case", DIM_CASES, ids=[f"{r.name}-{n}" for r, n in DIM_CASES])
def test_dim_out_of_range(case):
    rec, name = case
    facts = FACTS[rec.name]
    sample = _first_sample(rec, lambda s: s.arrays() and _ndim(s) >= 1)
    assert sample is not None, f"{rec.name}: no sample with a tensor of at least one dim"
    n = _ndim(sample)
    for bad in (n + 1, -n - 2):
        args, kwargs = kiln_args(sample)
        args, kwargs = _replace(args, kwargs, facts, name, bad)
        with pytest.raises(IndexError, match="Dimension out of range"):
            call_any(rec, facts, args, kwargs)


SIZE_CASES = [(r, name) for r in RECORDS.values() for name in FACTS[r.name].size_args]


@pytest.mark.parametrize("case", SIZE_CASES, ids=[f"{r.name}-{n}" for r, n in SIZE_CASES])
@pytest.mark.parametrize("bad", [[2, -3], [2 ** 40, 2 ** 40, 2 ** 40]], ids=["negative", "overflow"])
def test_bad_sizes(case, bad):
    rec, name = case
    facts = FACTS[rec.name]
    sample = _first_sample(rec, lambda s: True)
    args, kwargs = kiln_args(sample)
    args, kwargs = _replace(args, kwargs, facts, name, bad)
    if "stride" in facts.arguments:  # as_strided, empty_strided: strides of the same length
        args, kwargs = _replace(args, kwargs, facts, "stride", [1] * len(bad))
    with pytest.raises(RuntimeError, match=r"negative|invalid|overflow|-3|must match|not enough memory|out of bounds"):
        call_any(rec, facts, args, kwargs)


# Filling writes one value to every element, so torch allows an expanded self there; masked_fill_
# and index_put_ only warn in torch (a deprecation) and write (test_torch_defects compares them).
_FILLS = {"fill_.Scalar", "zero_", "masked_fill_.Scalar", "masked_fill_.Tensor", "index_put",
          "index_fill_.int_Scalar", "index_fill_.int_Tensor"}  # torch writes the filled positions of an expanded self
# f(f(x)) == f(x): torch writes an expanded self in place (threshold_ skips the overlap check; tril_/triu_
# of <= 3 dims zero where the elements lie); test_differential_fixes2.py compares them with torch.
_FILLS |= {"threshold", "tril", "triu"}


def _inplace_forms():
    for rec in RECORDS.values():
        if rec.name in _FILLS:
            continue
        facts = FACTS[rec.name]
        if facts.inplace:
            yield rec, facts.inplace
        elif facts.mutates_self and facts.method:
            yield rec, rec.python_name


INPLACE = list(_inplace_forms())


@pytest.mark.parametrize("case", INPLACE, ids=[f"{m} ({r.name})" for r, m in INPLACE])
def test_inplace_into_expanded_self_raises(case):
    rec, method = case
    sample = _first_sample(rec, lambda s: s.args[0].ndim >= 1 and s.args[0].shape[0] > 1)
    assert sample is not None, f"{rec.name}: no sample whose self has a leading dim > 1"
    args, kwargs = kiln_args(sample)
    a = sample.args[0]
    args[0] = to_kiln(np.broadcast_to(a[:1], a.shape))  # every row is the same memory
    with pytest.raises(RuntimeError, match="more than one element of the written-to tensor") as info:
        call_method(rec, args, kwargs, name=method)
    assert rec.base.rstrip("_") in str(info.value), f"the error does not name the op: {info.value}"


ERROR_CASES = [(r, e) for r in RECORDS.values() for e in r.error_inputs()]


@pytest.mark.parametrize("case", ERROR_CASES, ids=[f"{r.name}: {e.note}" for r, e in ERROR_CASES])
def test_family_error_inputs(case):
    rec, err = case
    with pytest.raises(err.exc) as info:
        err.call(kiln)
    assert re.search(err.match, str(info.value)), f"{err.note}: message {str(info.value)!r} !~ {err.match!r}"


def test_every_family_has_error_inputs():
    families = {}
    for rec, _ in ERROR_CASES:
        families[rec.family] = families.get(rec.family, 0) + 1
    missing = sorted({r.family for r in RECORDS.values()} - set(families))
    assert not missing, f"families without error inputs: {missing}"
