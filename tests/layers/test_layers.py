"""The runtime's layers: tools/check_layers.py finds no include that points up the stack or skips
a layer the including target does not depend on directly, and its table matches BUILD.bazel."""
import importlib.util
import os
import shutil

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
spec = importlib.util.spec_from_file_location("check_layers", os.path.join(ROOT, "tools", "check_layers.py"))
check_layers = importlib.util.module_from_spec(spec)
spec.loader.exec_module(check_layers)


def test_build_targets_match_the_layer_table():
    assert check_layers.build_mismatches(ROOT) == []


def test_no_include_breaks_the_layering():
    assert check_layers.include_violations(ROOT) == []


@pytest.mark.parametrize("path,include,expected", [
    ("runtime/core/storage.cc", "runtime/autograd/node.h", "core must not include autograd"),
    ("runtime/core/storage.cc", "generated/api/exp.h", "core must not include generated code"),
    ("runtime/kernels/cpu/unary_ops.cc", "generated/api/exp.h", "backend kernel must not include the generated API"),
    ("runtime/kernels/cpu/unary_ops.cc", "runtime/dispatch/dispatcher.h", "'cpu_kernels' does not depend on directly"),
    ("runtime/python/module.cc", "generated/fuzz/ops.h", None),  # outside the table: not judged
])
def test_a_wrong_include_is_reported(tmp_path, path, include, expected):
    # A copy of the checked folders with one include added: the checker must name it.
    for top in ("runtime", "generated"):
        shutil.copytree(os.path.join(ROOT, top), tmp_path / top)
    target = tmp_path / path
    target.write_text(f'#include "{include}"\n' + target.read_text())
    found = [v for v in check_layers.include_violations(str(tmp_path)) if v.startswith(path)]
    if expected is None:
        assert found == []
    else:
        assert any(expected in v for v in found), found
