"""generated/ must be exactly what the generator makes from schema/, codegen/ and templates/."""
import filecmp
import os
import re
import subprocess
import sys

REPO = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
GEN = os.path.join(REPO, "codegen", "gen.py")
GENERATED = os.path.join(REPO, "generated")


def generate(out):
    proc = subprocess.run([sys.executable, GEN, "--out", str(out)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    return out


def files_under(root):
    found = set()
    for dirpath, _, names in os.walk(root):
        for n in names:
            found.add(os.path.relpath(os.path.join(dirpath, n), root))
    return found


def test_generated_is_fresh(tmp_path):
    fresh = generate(tmp_path / "generated")
    want, have = files_under(fresh), files_under(GENERATED) - {"README.md"}
    missing, extra = sorted(want - have), sorted(have - want)
    stale = sorted(f for f in want & have if not filecmp.cmp(fresh / f, os.path.join(GENERATED, f), shallow=False))
    assert not (missing or extra or stale), (
        "generated/ is out of date; run `/usr/bin/python3 codegen/gen.py` and commit generated/.\n"
        f"  stale: {stale}\n  missing: {missing}\n  no longer produced: {extra}")


def test_generation_is_deterministic(tmp_path):
    a, b = generate(tmp_path / "a"), generate(tmp_path / "b")
    assert files_under(a) == files_under(b)
    for f in files_under(a):
        assert (a / f).read_bytes() == (b / f).read_bytes(), f


def _node_source(name):
    for f in sorted(os.listdir(os.path.join(GENERATED, "autograd"))):
        text = open(os.path.join(GENERATED, "autograd", f)).read()
        start = text.find(f"struct {name} final : Node {{")
        if start >= 0:
            return text[start:text.index("\n};", start)]
    raise AssertionError(f"{name} not generated")


def test_one_node_per_derivative_entry():
    with open(os.path.join(REPO, "schema", "derivatives.yaml")) as f:
        entries = re.findall(r"^- name: ", f.read(), flags=re.M)
    with open(os.path.join(REPO, "schema", "derivatives.yaml")) as f:
        not_diff = len(re.findall(r"^  output_differentiability: \[False(, False)*\]", f.read(), flags=re.M))  # no output differentiable
    nodes = 0
    for f in os.listdir(os.path.join(GENERATED, "autograd")):
        if f.endswith(".cc"):
            nodes += len(re.findall(r"^struct \w+Backward\d+ final : Node \{", open(
                os.path.join(GENERATED, "autograd", f)).read(), flags=re.M))
    assert nodes == len(entries) - not_diff


def test_nodes_save_only_what_formulas_use():
    mul = _node_source("MulBackward0")
    assert "SavedVariable self_;" in mul and "SavedVariable other_;" in mul
    add = _node_source("AddBackward0")
    assert "Scalar alpha;" in add and "SavedVariable" not in add  # grad and alpha*grad need no tensor
    view = _node_source("ViewBackward0")
    assert "self_sizes;" in view and "SavedVariable" not in view  # self.sizes() is saved as a value
    exp = _node_source("ExpBackward0")
    assert "SavedVariable result_;" in exp and "self_" not in exp
