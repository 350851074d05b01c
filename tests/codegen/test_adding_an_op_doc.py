"""docs/ADDING_AN_OP.md, followed by a program: its YAML blocks (a formula op, then an op with a
hand-written kernel) are added to a copy of the schema, the generator runs on that copy, and the
C++ it asks the reader to write compiles (syntax and types, with g++ and the repository's
headers) together with what the generator made for the new ops. No full build: this keeps the walk-through from going stale without costing CI minutes."""
import ast
import os
import re
import shutil
import subprocess
import sys

import pytest

REPO = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
DOC = os.path.join(REPO, "docs", "ADDING_AN_OP.md")
CXXFLAGS = ["-std=c++17", "-fsyntax-only", "-fopenmp", "-Wall", "-Wno-unused-parameter"]


def blocks(lang):
    """(text before the block, block) for every ```lang fenced block of the walk-through."""
    text = open(DOC).read()
    return [(m.group(1), m.group(2)) for m in re.finditer(r"([^\n]*)\n+```" + lang + r"\n(.*?)```", text, re.S)]


def only(lang, must_contain):
    found = [b for _, b in blocks(lang) if must_contain in b]
    assert len(found) == 1, f"expected one ```{lang} block containing {must_contain!r} in {DOC}, found {len(found)}"
    return found[0]


@pytest.fixture(scope="module")
def applied(tmp_path_factory):
    """A scratch root: the schema with the walk-through's entries, regenerated; runtime/ linked in."""
    root = tmp_path_factory.mktemp("walkthrough")
    shutil.copytree(os.path.join(REPO, "schema"), root / "schema")
    with open(root / "schema" / "native_functions.yaml", "a") as f:
        f.write("".join("\n" + b for _, b in blocks("yaml") if "- func: " in b))
    with open(root / "schema" / "derivatives.yaml", "a") as f:
        f.write("".join("\n" + b for _, b in blocks("yaml") if "- name: " in b))
    proc = subprocess.run([sys.executable, os.path.join(REPO, "codegen", "gen.py"), "--out", str(root / "generated"),
                           "--schema", str(root / "schema")], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    os.symlink(os.path.join(REPO, "runtime"), root / "runtime")
    return root


def op_names():
    """(the formula op of part A, the hand-written one of part B)."""
    funcs = [b for _, b in blocks("yaml") if "- func: " in b]
    assert len(funcs) == 2, f"expected two ops in {DOC}"
    names = [re.search(r"- func: (\w+)\(", b).group(1) for b in funcs]
    assert "pointwise:" in funcs[0] and "dispatch:" in funcs[1], "part A is a formula op, part B a kernel op"
    return names


def op_name():
    return op_names()[1]


def compile_ok(root, path):
    proc = subprocess.run(["g++", *CXXFLAGS, "-I", str(root), "-I", "/usr/include/python3.11", str(path)],
                          capture_output=True, text=True)
    assert proc.returncode == 0, f"{path} does not compile:\n{proc.stderr[-4000:]}"


def test_the_generator_declares_the_kernel_the_page_shows(applied):
    shown = [b.strip() for _, b in blocks("cpp") if "#include" not in b and f" {op_name()}_out(" in b]
    assert len(shown) == 1, "step 2 should show the one kernel declaration the generator writes"
    declared = open(applied / "generated" / "kernels" / f"{op_name()}.h").read()
    assert shown[0] in declared, f"generated/kernels/{op_name()}.h does not declare {shown[0]}"


def test_the_kernel_file_compiles(applied, tmp_path):
    for before, code in blocks("cpp"):
        if "#include" in code and "namespace cpu" in code:
            path = re.search(r"`(runtime/[\w/]+\.cc)`", before).group(1)
            break
    else:
        pytest.fail("no kernel file (a ```cpp block with includes after `runtime/...cc`) in the walk-through")
    # Next to the real kernels, as the reader puts it: runtime/ is a link, so write into a copy.
    kernel_dir = tmp_path / os.path.dirname(path)
    kernel_dir.mkdir(parents=True)
    (kernel_dir / os.path.basename(path)).write_text(code)
    os.symlink(applied / "generated", tmp_path / "generated")
    for entry in os.listdir(os.path.join(REPO, "runtime")):
        if not (tmp_path / "runtime" / entry).exists():
            os.symlink(os.path.join(REPO, "runtime", entry), tmp_path / "runtime" / entry)
    for entry in os.listdir(os.path.join(REPO, "runtime", "kernels")):
        if not (tmp_path / "runtime" / "kernels" / entry).exists():
            os.symlink(os.path.join(REPO, "runtime", "kernels", entry), tmp_path / "runtime" / "kernels" / entry)
    for entry in os.listdir(os.path.join(REPO, "runtime", "kernels", "cpu")):
        if not (kernel_dir / entry).exists():
            os.symlink(os.path.join(REPO, "runtime", "kernels", "cpu", entry), kernel_dir / entry)
    compile_ok(tmp_path, kernel_dir / os.path.basename(path))


@pytest.mark.parametrize("op", [0, 1])
@pytest.mark.parametrize("part", ["ops", "autograd", "python"])
def test_the_generated_files_of_the_new_ops_compile(applied, part, op):
    compile_ok(applied, applied / "generated" / part / f"{op_names()[op]}.cc")


def test_the_formula_op_gets_a_generated_kernel_and_a_table_row(applied):
    op = op_names()[0]
    compile_ok(applied, applied / "generated" / "cpu" / f"{op}.cc")
    assert f'{{"{op}", "{op}", ' in open(applied / "generated" / "jit" / "pointwise_formulas.cc").read()


@pytest.mark.parametrize("op", [0, 1])
def test_the_test_record_line_fits_the_pointwise_family(op):
    line = only("python", f'"{op_names()[op]}"').strip()
    source = open(os.path.join(REPO, "tests", "python", "op_db", "pointwise.py")).read()
    call = ast.parse(line.rstrip(",")).body[0].value
    assert isinstance(call, ast.Call) and isinstance(call.func, ast.Name)
    assert re.search(rf"^def {call.func.id}\(", source, re.M), f"pointwise.py has no helper {call.func.id}()"
    for kw in call.keywords:
        for name in ast.walk(kw.value):
            if isinstance(name, ast.Name):
                assert re.search(rf"\b{name.id}\b", source.split("\nRECORDS")[0]), f"{name.id} is not known in pointwise.py"
