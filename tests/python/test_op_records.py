"""Every op of the schema has a test record, every record is complete, and the coverage table in
docs/ is what the schema and the records say."""
import os
import sys

import pytest

from op_db import RECORDS
from op_db.record import ALL
from op_db.schema_facts import FACTS, REPO

sys.path.insert(0, os.path.join(REPO, "tools"))
import gen_op_coverage  # noqa: E402


def test_every_op_has_a_record():
    missing = sorted(set(FACTS) - set(RECORDS))
    assert not missing, (f"ops without a test record: {missing}. Add one to the family file in "
                         "tests/python/op_db/ (see docs/ADDING_AN_OP.md).")


def test_every_record_is_an_op():
    unknown = sorted(set(RECORDS) - set(FACTS))
    assert not unknown, f"records of ops the schema does not declare: {unknown}"


@pytest.mark.parametrize("rec", RECORDS.values(), ids=lambda r: r.name)
def test_record_is_complete(rec):
    assert rec.dtypes and set(rec.dtypes) <= set(ALL), rec.dtypes
    assert (rec.ref is None) != (rec.check is None), "a record has a NumPy reference or a check, not both"
    for dtype in rec.dtypes:
        assert rec.samples(dtype), f"no samples for {dtype}"
    if rec.gradgrad is not True:
        assert isinstance(rec.gradgrad, str) and rec.gradgrad, "gradgrad is True or the reason it is not"
    assert rec.no_gradcheck is None or (isinstance(rec.no_gradcheck, str) and rec.no_gradcheck)


def _input_ndims(rec):
    dtype = rec.dtypes[0]
    found = set()
    for s in rec.samples(dtype):
        for a in s.arrays():
            found.add("0-dim" if a.ndim == 0 else "zero-size" if a.size == 0 else "other")
    return found


@pytest.mark.parametrize("rec", [r for r in RECORDS.values() if FACTS[r.name].tensor_args], ids=lambda r: r.name)
def test_samples_cover_edge_shapes(rec):
    """0-dim and zero-size inputs, unless the record says why the op cannot take them
    (non-contiguous layouts are made by the harness from every sample)."""
    kinds = _input_ndims(rec)
    if rec.no_zero_dim is None:
        assert "0-dim" in kinds, "no 0-dim input sample (or set no_zero_dim='why')"
    if rec.no_zero_size is None:
        assert "zero-size" in kinds, "no zero-size input sample (or set no_zero_size='why')"


@pytest.mark.parametrize("rec", [r for r in RECORDS.values() if r.is_differentiable(FACTS[r.name])],
                         ids=lambda r: r.name)
def test_differentiable_ops_are_gradchecked(rec):
    """A differentiable op declares float64, so test_gradcheck runs on it."""
    assert "float64" in rec.dtypes


@pytest.mark.parametrize("rec", [r for r in RECORDS.values() if r.differentiable is not None], ids=lambda r: r.name)
def test_only_composites_override_differentiability(rec):
    """derivatives.yaml decides for every other op; a record may not contradict it."""
    assert FACTS[rec.name].composite, f"{rec.name}: differentiability comes from schema/derivatives.yaml"


def test_coverage_table_is_fresh():
    path = os.path.join(REPO, "docs", "OP_COVERAGE.md")
    with open(path) as f:
        committed = f.read()
    assert committed == gen_op_coverage.render(), (
        "docs/OP_COVERAGE.md is stale: run `/usr/bin/python3 tools/gen_op_coverage.py` and commit it")


def test_removing_a_record_fails(monkeypatch):
    """The completeness check is not vacuous: without add.Tensor's record it fails."""
    import op_db
    trimmed = {k: v for k, v in RECORDS.items() if k != "add.Tensor"}
    monkeypatch.setattr(op_db, "RECORDS", trimmed)
    monkeypatch.setitem(globals(), "RECORDS", trimmed)
    with pytest.raises(AssertionError, match="add.Tensor"):
        test_every_op_has_a_record()
