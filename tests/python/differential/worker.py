"""Running cases in child processes, so a crash in kiln (a segfault, an abort) is reported as
that case's result instead of ending the test run.

The parent (`run_all`) hands each worker a list of case ids; the worker announces each case before
it runs it ("B id") and reports it after ("R {json}"). When a worker dies, the case it announced
last is recorded as a crash (with the signal and the tail of its stderr, faulthandler's traceback
included) and a new worker takes the rest of the list.

    python -m differential.worker SEED ID...   # run cases by hand (prints one line per case)
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from typing import Dict, List, Optional

DEFAULT_SEED = 1234


def all_specs(kiln, torch):
    from .cases import resolve_variants
    from .specs import SPECS
    keys = set()
    specs = []
    for spec in SPECS:
        assert spec.key not in keys, f"duplicate spec key {spec.key}"
        keys.add(spec.key)
        spec.variants = resolve_variants(spec, kiln, torch)
        if spec.variants and spec.n:
            specs.append(spec)
    return specs


SCALE = float(os.environ.get("KILN_DIFF_SCALE", 1.5))


def all_cases(seed: int, kiln, torch, scale: float = None):
    """Every case: spec.n * scale per spec (KILN_DIFF_SCALE, default 1.5)."""
    from .cases import make_case
    scale = SCALE if scale is None else scale
    return [make_case(s, seed, i) for s in all_specs(kiln, torch) for i in range(int(round(s.n * scale)))]


def _serve(seed: int, ids: List[str]):
    import faulthandler
    faulthandler.enable()
    import warnings
    warnings.simplefilter("ignore")
    import kiln
    import torch
    torch.set_num_threads(1)
    from .runner import run_case
    cases = {c.id: c for c in all_cases(seed, kiln, torch)}
    out = sys.stdout
    crash_at = os.environ.get("KILN_DIFF_CRASH_AT")  # the crash-isolation test's hook
    for cid in ids:
        out.write(f"B {cid}\n")
        out.flush()
        if cid == crash_at:
            faulthandler._sigsegv()
        case = cases[cid]
        try:
            r = run_case(kiln, torch, case)
        except Exception as e:  # noqa: BLE001 - a harness error is reported with the case
            import traceback
            r = "harness: " + "".join(traceback.format_exception_only(type(e), e)).strip()[:300]
        rec = {"id": cid, "r": r}
        if r:
            if case.variant == "out":
                case.kwargs["out"].hint = getattr(case, "out_hint", None)
            rec["repro"] = case.repro()
        out.write("R " + json.dumps(rec) + "\n")
        out.flush()


def _child_env():
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([p for p in sys.path if p] + [env.get("PYTHONPATH", "")])
    env["OMP_NUM_THREADS"] = "1"
    env["PYTHONFAULTHANDLER"] = "1"
    return env


def _run_list(seed: int, ids: List[str], results: Dict[str, Optional[str]], crashes: Dict[str, str],
              repros: Dict[str, str]):
    pending = list(ids)
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    while pending:
        proc = subprocess.Popen([sys.executable, "-m", "differential.worker", str(seed), "-"],
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True, cwd=here, env=_child_env())
        err_chunks: List[str] = []
        t = threading.Thread(target=lambda: err_chunks.append(proc.stderr.read()), daemon=True)
        t.start()
        proc.stdin.write("\n".join(pending) + "\n")
        proc.stdin.close()
        current = None
        done = set()
        for line in proc.stdout:
            if line.startswith("B "):
                current = line[2:].strip()
            elif line.startswith("R "):
                rec = json.loads(line[2:])
                results[rec["id"]] = rec["r"]
                if rec.get("repro"):
                    repros[rec["id"]] = rec["repro"]
                done.add(rec["id"])
                current = None
        rc = proc.wait()
        t.join()
        pending = [i for i in pending if i not in done]
        if current is not None:
            tail = "".join(err_chunks)[-1500:]
            crashes[current] = f"crash: worker died (exit status {rc}) running this case; stderr tail:\n{tail}"
            results[current] = crashes[current].splitlines()[0]
            pending = [i for i in pending if i != current]
        elif pending:
            raise RuntimeError(f"worker exited ({rc}) between cases; stderr:\n{''.join(err_chunks)[-3000:]}")


def run_all(seed: int, ids: List[str], workers: int = 2):
    """{id: None (agree) or 'kind: detail'}, {id: crash report} for cases that killed a worker, and
    {id: kiln repro} of the cases that disagree."""
    results: Dict[str, Optional[str]] = {}
    crashes: Dict[str, str] = {}
    repros: Dict[str, str] = {}
    parts = [ids[i::workers] for i in range(workers)]
    errors = []

    def guard(th_target, *a):
        try:
            th_target(*a)
        except Exception as e:  # noqa: BLE001
            errors.append(e)
    threads = [threading.Thread(target=guard, args=(_run_list, seed, p, results, crashes, repros)) for p in parts if p]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    if errors:
        raise errors[0]
    return results, crashes, repros


def main(argv):
    seed = int(argv[0])
    ids = [l.strip() for l in sys.stdin if l.strip()] if argv[1:] == ["-"] else argv[1:]
    _serve(seed, ids)


if __name__ == "__main__":
    main(sys.argv[1:])
