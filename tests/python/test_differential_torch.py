"""Differential test: seeded random calls of the API kiln shares with torch, run in both and compared.

Each case (tests/python/differential/specs.py generates them from (seed, op, index)) calls one op
in one form (function, method, in-place, out=, operator) on random arguments: shapes including
0-dim and empty, contiguous, non-contiguous and expanded tensors of every kiln dtype, edge values
(±0, ±inf, nan, extremes), dims out of range, scalars and mixed dtypes. It passes when both raise
the same exception class, or both return the same types, dtypes, shapes and values (NaNs in the
same places; per-dtype tolerances), leave their arguments (and out=) with the same values, return
self / out / a view of an argument alike, and, in float64 cases with requires_grad, give the same
gradients of sum(output * w) for random w. Cases run in worker processes, so a crash in kiln is
reported as the case's failure. A failing case prints a one-line kiln repro.

KILN_DIFF_SEED=n picks another seed; KILN_DIFF_SCALE=k runs k times as many cases per op.
Known disagreements are listed in differential/known.py (strict xfail).
"""
import os
import time

import pytest

torch = pytest.importorskip("torch", reason="torch is the oracle of the differential test")

import kiln  # noqa: E402

from differential.known import KNOWN_DIVERGENCES, known_for  # noqa: E402
from differential.specs import NOT_GENERATED  # noqa: E402
from differential.worker import DEFAULT_SEED, all_cases, all_specs, run_all  # noqa: E402

SEED = int(os.environ.get("KILN_DIFF_SEED", DEFAULT_SEED))
CASES = all_cases(SEED, kiln, torch)
BY_ID = {c.id: c for c in CASES}


def _params():
    for c in CASES:
        k = known_for(c)
        marks = [pytest.mark.xfail(strict=not k.torch_reads_garbage, reason=k.reason)] if k else []
        yield pytest.param(c.id, id=c.id, marks=marks)


@pytest.fixture(scope="module")
def results():
    t0 = time.time()
    res, crashes, repros = run_all(SEED, [c.id for c in CASES], workers=int(os.environ.get("KILN_DIFF_WORKERS", 2)))
    bad = sum(1 for v in res.values() if v)
    print(f"\ndifferential: {len(res)} cases, {len(res) - bad} agree ({100.0 * (len(res) - bad) / max(len(res), 1):.1f}%), "
          f"{len(crashes)} crashes, {time.time() - t0:.1f} s")
    return res, crashes, repros


@pytest.mark.parametrize("cid", list(_params()))
def test_case(cid, results):
    res, crashes, repros = results
    r = res.get(cid, "missing: the worker did not report this case")
    if r:
        detail = crashes.get(cid, r)
        pytest.fail(f"{detail}\n    repro: {repros.get(cid) or BY_ID[cid].repro()}", pytrace=False)


def test_a_crash_is_reported_with_its_case(monkeypatch):
    """A worker that dies (here: SIGSEGV on purpose) is reported as that case's failure, and the
    cases after it still run."""
    ids = [c.id for c in CASES[:3]]
    monkeypatch.setenv("KILN_DIFF_CRASH_AT", ids[1])
    res, crashes, _ = run_all(SEED, ids, workers=1)
    assert set(crashes) == {ids[1]} and res[ids[1]].startswith("crash")
    # SIGSEGV; under AddressSanitizer (tools/sanitize.sh) its SEGV handler aborts instead.
    died = ("Segmentation fault", "-11") + (("exit status -6",) if os.environ.get("KILN_ASAN_RUNTIME") else ())
    assert any(d in crashes[ids[1]] for d in died), crashes[ids[1]]
    assert res[ids[0]] is None and res[ids[2]] is None


def test_python_side_fixes():
    """Regressions for the Python-side disagreements the differential test found (also covered by
    its cases): errors of kiln.tensor for ragged data, Tensor.mT of 0/1-dim tensors, conv2d
    padding-string errors."""
    for data, exc in [([1, [2]], TypeError), ([[1, 2], [3]], ValueError), ([[1], 2], TypeError)]:
        for lib in (torch, kiln):
            with pytest.raises(exc):
                lib.tensor(data)
    assert kiln.tensor(2.0).mT.shape == torch.tensor(2.0).mT.shape
    with pytest.raises(RuntimeError):
        kiln.ones(3).mT
    x, w = kiln.ones(1, 1, 5, 5), kiln.ones(1, 1, 3, 3)
    with pytest.raises(RuntimeError):
        kiln.nn.functional.conv2d(x, w, stride=2, padding="same")
    with pytest.raises(RuntimeError):
        kiln.nn.functional.conv2d(x, w, padding="full")


def test_known_divergences_match_cases():
    """Every KNOWN_DIVERGENCES entry still names generated cases (else it is stale: remove it)."""
    stale = [k.reason for k in KNOWN_DIVERGENCES if not any(k.matches(c) for c in CASES)]
    assert not stale, f"entries matching no case: {stale}"


def _public(obj):
    return {n for n in dir(obj) if not n.startswith("_")}


def test_shared_api_is_generated():
    """Every function, Tensor method and nn.functional op that kiln and torch share is either called
    by some spec or listed in NOT_GENERATED with the reason."""
    called = set()
    for s in all_specs(kiln, torch):
        for v in s.variants:
            if v in ("func", "out"):
                called.add(s.func)
            elif v == "method":
                called.add("Tensor." + s.method)
            elif v == "inplace":
                called.add("Tensor." + s.inplace)
        called.update(getattr(s, "covers", ()))
    shared = set()
    for n in _public(kiln) & _public(torch):
        if callable(getattr(torch, n)) and not isinstance(getattr(torch, n), type):
            shared.add(n)
    for n in _public(kiln.Tensor) & _public(torch.Tensor):
        if callable(getattr(torch.Tensor, n, None)):
            shared.add("Tensor." + n)
    for n in _public(kiln.nn.functional) & _public(torch.nn.functional):
        if callable(getattr(torch.nn.functional, n)):
            shared.add("nn.functional." + n)
    missing = sorted(shared - called - set(NOT_GENERATED))
    assert not missing, f"shared API without a generator (add a spec or a NOT_GENERATED reason): {missing}"
    stale = sorted(set(NOT_GENERATED) & called)
    assert not stale, f"NOT_GENERATED entries that are generated after all: {stale}"
