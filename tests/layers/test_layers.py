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


spec = importlib.util.spec_from_file_location("gen_build", os.path.join(ROOT, "tools", "gen_build.py"))
gen_build = importlib.util.module_from_spec(spec)
spec.loader.exec_module(gen_build)


def test_every_target_lists_exactly_the_headers_its_file_includes():
    table = gen_build.scan(ROOT, os.path.join(ROOT, "generated"))
    assert "runtime/core/storage.cc" in table and "generated/api/exp.h" in table
    assert "runtime/core/storage.h" in table["runtime/core/storage.cc"]["includes"]
    assert table["runtime/kernels/cpu/blas.h"]["external"] == ["@system//:openblas"]
    committed = open(os.path.join(ROOT, "generated", "build_targets.bzl")).read()
    assert committed == gen_build.render(table), "generated/build_targets.bzl is stale: run codegen/gen.py"


def test_the_target_writer_refuses_an_include_up_the_stack(tmp_path):
    for top in ("runtime", "generated"):
        shutil.copytree(os.path.join(ROOT, top), tmp_path / top)
    storage = tmp_path / "runtime" / "core" / "storage.cc"
    storage.write_text('#include "runtime/autograd/node.h"\n' + storage.read_text())
    problems = gen_build.write(str(tmp_path), str(tmp_path / "generated"))
    assert any("core must not include autograd" in p for p in problems), problems


def test_no_include_breaks_the_layering():
    assert check_layers.include_violations(ROOT) == []


@pytest.mark.parametrize("path,include,expected", [
    ("runtime/core/storage.cc", "runtime/autograd/node.h", "core must not include autograd"),
    ("runtime/core/storage.cc", "generated/api/exp.h", "core must not include generated code"),
    ("runtime/kernels/cpu/index_ops.cc", "generated/api/exp.h", "backend kernel must not include the generated API"),
    ("runtime/kernels/cpu/index_ops.cc", "runtime/dispatch/dispatcher.h", "'cpu' does not depend on directly"),
    ("runtime/kernels/tensor_iterator.cc", "runtime/kernels/cpu/parallel_loop.h", "'ops' does not depend on directly"),
    ("runtime/kernels/views.cc", "runtime/autograd/node.h", "'ops' does not depend on directly"),
    ("generated/ops/exp.cc", "runtime/autograd/node.h", "'api' does not depend on directly"),
    ("generated/ops/exp.cc", "runtime/kernels/composite/reduce_loss.h", "'api' does not depend on directly"),
    ("generated/api/exp.h", "runtime/kernels/cpu/loops.h", "'api' does not depend on directly"),
    ("generated/autograd/exp.h", "generated/api/exp.h", "'interfaces' does not depend on directly"),
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


def test_tensor_memory_goes_through_the_device_registry_outside_the_cpu_backend():
    assert check_layers.host_memory_violations(ROOT) == []


@pytest.mark.parametrize("path,call", [
    ("runtime/kernels/tensor_iterator.cc", "empty_cpu({2}, ScalarType::Float32);"),
    ("runtime/autograd/engine.cc", "std::memset(p, 0, 4);"),
    ("runtime/python/module.cc", "memcpy(a, b, 8);"),
])
def test_a_host_memory_call_outside_the_cpu_backend_is_reported(tmp_path, path, call):
    for top in ("runtime", "generated"):
        shutil.copytree(os.path.join(ROOT, top), tmp_path / top)
    target = tmp_path / path
    target.write_text(target.read_text() + "\n// " + call + "\nvoid f() { " + call + " }\n")
    found = check_layers.host_memory_violations(str(tmp_path))
    assert len(found) == 1 and found[0].startswith(path + ":"), found
