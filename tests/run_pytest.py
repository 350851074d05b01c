"""Runs pytest on the test files given as arguments, with `kiln` importable from
the package Bazel built (bazel-bin/kiln, which sits at <runfiles>/kiln/kiln)."""
import os
import sys

# Sanitizer run (tools/sanitize.sh): the extension needs the ASAN runtime loaded first.
_asan = os.environ.get("KILN_ASAN_RUNTIME")
if _asan and _asan not in os.environ.get("LD_PRELOAD", ""):
    os.environ["LD_PRELOAD"] = _asan
    # No leak detection in the interpreter: CPython does not free its own objects at exit, and its
    # frames are in every stack, so suppressing them would hide kiln's leaks too. kiln's leaks are
    # checked by LSAN in the C++ tests and the fuzzer, and by live-tensor counts in the Python tests.
    os.environ["ASAN_OPTIONS"] = os.environ.get("ASAN_OPTIONS", "").replace("detect_leaks=1", "detect_leaks=0")
    os.execv(sys.executable, [sys.executable] + sys.argv)

import pytest  # noqa: E402

here = os.path.dirname(os.path.abspath(__file__))
repo = os.path.dirname(here)  # the workspace root (in runfiles or in a checkout)
sys.path.insert(0, repo)
# The op test records (tests/python/op_db), importable however pytest names the test modules
# (Bazel's runfiles add __init__.py files, which makes tests/python a package).
sys.path.insert(0, os.path.join(repo, "tests", "python"))
if "TEST_SRCDIR" not in os.environ:  # run by hand: use the package under bazel-bin
    sys.path.insert(0, os.path.join(repo, "bazel-bin"))

# Only as the main script: a process started with multiprocessing's spawn or forkserver method
# imports this file again (as __mp_main__), and must get the paths above without running the suite.
if __name__ == "__main__":
    # Paths are relative to the repository root; options (-x, -k expr) pass through.
    args = ["-q", "-p", "no:cacheprovider", "-rs"] + [a if a.startswith("-") or (i > 1 and sys.argv[i - 1] == "-k")
                                                       else os.path.join(repo, a) for i, a in enumerate(sys.argv) if i]
    # Under Bazel, pytest's temporary directories go in the test's own TEST_TMPDIR: in the shared
    # /tmp/pytest-of-<user>, each run deletes older runs' directories at exit, which kept a finished
    # test target running for minutes while other targets wrote there.
    if "TEST_TMPDIR" in os.environ:
        args.insert(0, "--basetemp=" + os.path.join(os.environ["TEST_TMPDIR"], "pytest"))
    sys.exit(pytest.main(args))
