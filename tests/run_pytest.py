"""Runs pytest on the test files given as arguments, with `kiln` importable from
the package Bazel built (bazel-bin/kiln, which sits at <runfiles>/kiln/kiln)."""
import os
import sys

# Sanitizer run (tools/sanitize.sh): the extension needs the ASAN runtime loaded first.
_asan = os.environ.get("KILN_ASAN_RUNTIME")
if _asan and _asan not in os.environ.get("LD_PRELOAD", ""):
    os.environ["LD_PRELOAD"] = _asan
    # LSAN resolves a relative suppressions path next to the binary (/usr/bin here): make it absolute.
    suppressions = os.path.join(os.path.dirname(os.path.abspath(__file__)), "lsan_suppressions.txt")
    os.environ["LSAN_OPTIONS"] = os.environ.get("LSAN_OPTIONS", "").replace(
        "suppressions=lsan_suppressions.txt", "suppressions=" + suppressions)
    os.execv(sys.executable, [sys.executable] + sys.argv)

import pytest  # noqa: E402

here = os.path.dirname(os.path.abspath(__file__))
repo = os.path.dirname(here)  # the workspace root (in runfiles or in a checkout)
sys.path.insert(0, repo)
if "TEST_SRCDIR" not in os.environ:  # run by hand: use the package under bazel-bin
    sys.path.insert(0, os.path.join(repo, "bazel-bin"))

args = ["-q", "-p", "no:cacheprovider", "-rs"] + [os.path.join(repo, a) for a in sys.argv[1:]]
sys.exit(pytest.main(args))
