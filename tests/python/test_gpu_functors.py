"""tools/gpu_functor_check.py: every generated pointwise functor run on a GPU through NVRTC and
the CUDA driver, against the formula interpreter. On a machine without a GPU the check's own
logic is tested with a stand-in device (it must pass the interpreter's own results and catch a
wrong bit); the real run needs a GPU and is skipped without one, or fails under
KILN_REQUIRE_GPU=1, as every GPU check of kiln."""
import ctypes
import json
import os
import sys

import numpy as np
import pytest

REPO = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
sys.path.insert(0, os.path.join(REPO, "tools"))
import gpu_functor_check as check  # noqa: E402


def gpu_present():
    try:
        cuda = ctypes.CDLL("libcuda.so.1")
    except OSError:
        return False
    count = ctypes.c_int(0)
    return cuda.cuInit(0) == 0 and cuda.cuDeviceGetCount(ctypes.byref(count)) == 0 and count.value > 0


@pytest.fixture(scope="module")
def dumped(tmp_path_factory):
    out = tmp_path_factory.mktemp("functors")
    check.dump(str(out), 64)
    return str(out)


class StandIn:
    """A device that 'computes' each case as the interpreter did, optionally with one bit wrong."""
    name, arch = "stand-in", "sm_00"

    def __init__(self, cases, data, wrong=None):
        self.cases, self.data, self.wrong = cases, data, wrong

    def compile(self, source, options):
        assert "--fmad=false" in options and "--ftz=false" in options
        return source

    def to_device(self, array):
        return array

    def launch(self, module, name, pointers, n):
        case = self.cases[int(name[len("case"):])]
        got = self.data[case["key"] + ".want"].astype(np.float64).copy()
        if case["key"] == self.wrong:
            as_float = got.astype(np.float32)
            i = int(np.flatnonzero(np.isfinite(as_float) & (as_float != 0))[0])
            as_float.view(np.int32)[i] ^= 1  # one ulp off in one element
            got = as_float.astype(np.float64)
        return got


def run_with(monkeypatch, dumped, tmp_path, wrong=None):
    with open(os.path.join(dumped, "functors.json")) as f:
        cases = json.load(f)
    data = np.load(os.path.join(dumped, "functors.npz"))
    monkeypatch.setattr(check, "Gpu", lambda: StandIn(cases, data, wrong))
    monkeypatch.setattr(check, "TORCH_UNARY", {})  # torch's CUDA kernels need the device
    return check.run(dumped, str(tmp_path))


def test_the_check_passes_the_interpreters_own_results(monkeypatch, dumped, tmp_path):
    assert run_with(monkeypatch, dumped, tmp_path) == 0
    report = (tmp_path / "gpu_functors.md").read_text()
    assert "| add | float32 | [1] | 0 (exact formula)" in report
    assert "_gelu_self_backward" in report  # the fused backward functors are checked too


def test_the_check_catches_one_wrong_bit_in_an_exact_formula(monkeypatch, dumped, tmp_path):
    assert run_with(monkeypatch, dumped, tmp_path, wrong="mul.float32.1") == 1
    assert "mul.float32.1" in (tmp_path / "gpu_functors.md").read_text().split("failures")[-1]


def test_every_intrinsic_is_classified_as_library_or_exact():
    # A library function (lgamma, digamma) held to exact bits fails on every GPU; an exact
    # operation allowed ulps would hide a wrong bit.
    sys.path.insert(0, os.path.join(REPO, "codegen"))
    from pointwise import INTRINSICS
    assert not (check.TRANSCENDENTAL & check.EXACT)
    assert set(INTRINSICS) == check.TRANSCENDENTAL | check.EXACT


def test_every_generated_functor_is_in_the_check(dumped):
    import kiln
    with open(os.path.join(dumped, "functors.json")) as f:
        checked = {c["functor"] for c in json.load(f) if "skipped" not in c}
    assert checked == {functor for *_, functor in kiln._C._pointwise_formulas()}


@pytest.mark.skipif(not gpu_present() and os.environ.get("KILN_REQUIRE_GPU") != "1",
                    reason="needs a CUDA GPU (libcuda and a device); KILN_REQUIRE_GPU=1 makes its absence a failure")
def test_every_functor_on_the_gpu(dumped, tmp_path):
    assert gpu_present(), "KILN_REQUIRE_GPU=1 but no CUDA device was found"
    assert check.run(dumped, str(tmp_path)) == 0, (tmp_path / "gpu_functors.md").read_text()
