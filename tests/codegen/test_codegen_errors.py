"""Bad YAML fails with `file:line: op: what is wrong` on stderr, exit code 1, no traceback.

Each test copies the real schema into a temporary directory, breaks one entry,
and runs the generator on it.
"""
import os
import re
import shutil
import subprocess
import sys

import pytest

REPO = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
GEN = os.path.join(REPO, "codegen", "gen.py")


def run_codegen(tmp_path, native=None, derivatives=None):
    """Writes the schema (real files unless replaced) to tmp_path/schema and runs gen.py."""
    schema = tmp_path / "schema"
    schema.mkdir()
    for name, text in (("native_functions.yaml", native), ("derivatives.yaml", derivatives)):
        if text is None:
            shutil.copy(os.path.join(REPO, "schema", name), schema / name)
        else:
            (schema / name).write_text(text)
    proc = subprocess.run([sys.executable, GEN, "--schema", str(schema), "--out", str(tmp_path / "out")],
                          capture_output=True, text=True)
    return proc, str(schema)


def real(name):
    with open(os.path.join(REPO, "schema", name)) as f:
        return f.read()


def line_of(text, needle):
    """1-based line of the entry (the `- func:` / `- name:` line) containing needle."""
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if needle in line:
            while not lines[i].lstrip().startswith("- "):
                i -= 1
            return i + 1
    raise AssertionError(f"{needle!r} not in text")


def assert_located(proc, path, line, op, fragment):
    assert proc.returncode == 1, proc.stderr
    assert "Traceback" not in proc.stderr
    expected = f"{path}:{line}: {op}: "
    assert expected in proc.stderr, f"expected {expected!r} in {proc.stderr!r}"
    assert re.search(fragment, proc.stderr), proc.stderr


MINI_NATIVE = """\
- func: neg(Tensor self) -> Tensor
  variants: function, method
  family: [inplace, out]
  dispatch:
    CPU: neg_out

- func: mul.Tensor(Tensor self, Tensor other) -> Tensor
  variants: function, method
  dispatch:
    CPU: mul_out
"""

MINI_DERIVATIVES = """\
- name: neg(Tensor self) -> Tensor
  self: neg(grad)

- name: mul.Tensor(Tensor self, Tensor other) -> Tensor
  self: mul(grad, other)
  other: mul(grad, self)
"""


def test_minimal_schema_generates(tmp_path):
    proc, _ = run_codegen(tmp_path, MINI_NATIVE, MINI_DERIVATIVES)
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "out" / "autograd" / "mul.cc").exists()


def test_unknown_type(tmp_path):
    text = real("native_functions.yaml").replace("- func: neg(Tensor self)", "- func: neg(Tensr self)")
    proc, schema = run_codegen(tmp_path, native=text)
    assert_located(proc, f"{schema}/native_functions.yaml", line_of(text, "neg(Tensr self)"), "neg",
                   "unknown type 'Tensr'")


@pytest.mark.parametrize("bad, fragment", [
    ("Tensor self, int x=foo", "bad default 'foo' for argument 'x'"),
    ("Tensor self, bool b=1", "bad default '1' for argument 'b'"),
    ("Tensor self, Tensor t=None", "default None for non-optional argument 't'"),
    ("Tensor self, float f=abc", "bad default 'abc'"),
])
def test_bad_default(tmp_path, bad, fragment):
    native = MINI_NATIVE.replace("neg(Tensor self)", f"neg({bad})", 1)
    proc, schema = run_codegen(tmp_path, native, MINI_DERIVATIVES.replace("neg(Tensor self) -> Tensor", "neg"))
    assert_located(proc, f"{schema}/native_functions.yaml", 1, "neg", re.escape(fragment))


def test_formula_for_missing_input(tmp_path):
    derivs = MINI_DERIVATIVES.replace("  other: mul(grad, self)\n", "  other: mul(grad, self)\n  bias: grad\n")
    proc, schema = run_codegen(tmp_path, MINI_NATIVE, derivs)
    assert_located(proc, f"{schema}/derivatives.yaml", line_of(derivs, "mul.Tensor"), "mul.Tensor",
                   "formula for a missing input 'bias'")


def test_formula_naming_unknown_argument(tmp_path):
    derivs = MINI_DERIVATIVES.replace("self: mul(grad, other)", "self: mul(grad, weight)")
    proc, schema = run_codegen(tmp_path, MINI_NATIVE, derivs)
    assert_located(proc, f"{schema}/derivatives.yaml", line_of(derivs, "mul.Tensor"), "mul.Tensor",
                   "names unknown argument 'weight'")


def test_formula_calling_unknown_function(tmp_path):
    derivs = MINI_DERIVATIVES.replace("self: neg(grad)", "self: frobnicate(grad)")
    proc, schema = run_codegen(tmp_path, MINI_NATIVE, derivs)
    assert_located(proc, f"{schema}/derivatives.yaml", 1, "neg", "unknown function 'frobnicate'")


def test_duplicate_overload(tmp_path):
    native = MINI_NATIVE + "\n- func: mul.Tensor(Tensor self, Tensor other) -> Tensor\n  dispatch:\n    CPU: mul2\n"
    proc, schema = run_codegen(tmp_path, native, MINI_DERIVATIVES)
    dup_line = len(MINI_NATIVE.splitlines()) + 2
    assert_located(proc, f"{schema}/native_functions.yaml", dup_line, "mul.Tensor",
                   r"duplicate overload 'mul.Tensor' \(first declared at line 7\)")


def test_family_member_clashing_with_declared_overload(tmp_path):
    native = MINI_NATIVE + "\n- func: neg.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)\n  dispatch:\n    CPU: x\n"
    proc, schema = run_codegen(tmp_path, native, MINI_DERIVATIVES)
    assert proc.returncode == 1 and "duplicate overload 'neg.out'" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_missing_formula_for_differentiable_input(tmp_path):
    derivs = MINI_DERIVATIVES.replace("  other: mul(grad, self)\n", "")
    proc, schema = run_codegen(tmp_path, MINI_NATIVE, derivs)
    assert_located(proc, f"{schema}/derivatives.yaml", line_of(derivs, "mul.Tensor"), "mul.Tensor",
                   "missing formula for differentiable input 'other'")


def test_non_differentiable_marker_is_accepted(tmp_path):
    derivs = MINI_DERIVATIVES.replace("  other: mul(grad, self)\n", "  other: non_differentiable\n")
    proc, _ = run_codegen(tmp_path, MINI_NATIVE, derivs)
    assert proc.returncode == 0, proc.stderr


def test_unknown_dispatch_key(tmp_path):
    native = MINI_NATIVE.replace("CPU: mul_out", "TPU: mul_out")
    proc, schema = run_codegen(tmp_path, native, MINI_DERIVATIVES)
    assert_located(proc, f"{schema}/native_functions.yaml", 7, "mul.Tensor", "unknown dispatch key 'TPU'")


def test_unknown_key(tmp_path):
    native = MINI_NATIVE.replace("  variants: function, method\n  dispatch:", "  variant: function\n  dispatch:")
    proc, schema = run_codegen(tmp_path, native, MINI_DERIVATIVES)
    assert_located(proc, f"{schema}/native_functions.yaml", 7, "mul.Tensor", "unknown key 'variant'")


def test_invalid_yaml_syntax(tmp_path):
    native = MINI_NATIVE.replace("  dispatch:\n    CPU: mul_out", "  dispatch: [CPU: mul_out\n")
    proc, schema = run_codegen(tmp_path, native, MINI_DERIVATIVES)
    assert proc.returncode == 1
    assert "Traceback" not in proc.stderr
    assert re.search(re.escape(f"{schema}/native_functions.yaml") + r":\d+: invalid YAML", proc.stderr), proc.stderr


def test_derivative_for_unknown_op(tmp_path):
    derivs = MINI_DERIVATIVES + "\n- name: cosh(Tensor self) -> Tensor\n  self: grad\n"
    proc, schema = run_codegen(tmp_path, MINI_NATIVE, derivs)
    assert_located(proc, f"{schema}/derivatives.yaml", len(MINI_DERIVATIVES.splitlines()) + 2, "cosh",
                   "derivative for unknown op 'cosh'")


def test_family_on_inplace_op(tmp_path):
    native = MINI_NATIVE + ("\n- func: abs_(Tensor(a!) self) -> Tensor(a!)\n  family: [out]\n"
                            "  dispatch:\n    CPU: abs_out\n")
    proc, schema = run_codegen(tmp_path, native, MINI_DERIVATIVES)
    assert_located(proc, f"{schema}/native_functions.yaml", len(MINI_NATIVE.splitlines()) + 2, "abs_",
                   "'family' belongs on the functional form")


def test_method_without_self(tmp_path):
    native = MINI_NATIVE.replace("neg(Tensor self)", "neg(Tensor input)")
    proc, schema = run_codegen(tmp_path, native, MINI_DERIVATIVES.replace("neg(Tensor self) -> Tensor", "neg"))
    assert_located(proc, f"{schema}/native_functions.yaml", 1, "neg", "needs 'Tensor self'")


def test_signature_mismatch_between_files(tmp_path):
    derivs = MINI_DERIVATIVES.replace("- name: neg(Tensor self) -> Tensor", "- name: neg(Tensor self, int k) -> Tensor")
    proc, schema = run_codegen(tmp_path, MINI_NATIVE, derivs)
    assert_located(proc, f"{schema}/derivatives.yaml", 1, "neg", "differs from native_functions.yaml")


TUPLE_NATIVE = MINI_NATIVE + """
- func: topk2(Tensor self, int k) -> (Tensor values, Tensor indices)
  variants: function, method
  dispatch:
    CPU: topk2

- func: glue(Tensor[] tensors, Tensor?[] picks) -> Tensor
  dispatch:
    CPU: glue
"""
TUPLE_DERIVATIVES = MINI_DERIVATIVES + """
- name: topk2(Tensor self, int k) -> (Tensor values, Tensor indices)
  self: mul(grad, indices)
  output_differentiability: [True, False]

- name: glue(Tensor[] tensors, Tensor?[] picks) -> Tensor
  tensors: cat_tensors_backward(grad, tensors.sizes(), 0)
"""


def test_tuple_returns_and_tensor_lists_generate(tmp_path):
    proc, _ = run_codegen(tmp_path, TUPLE_NATIVE, TUPLE_DERIVATIVES)
    assert proc.returncode == 0, proc.stderr
    out = tmp_path / "out"
    topk = (out / "autograd" / "topk2.cc").read_text()
    # Only the differentiable output gets the node; the output a formula uses is saved.
    assert "set_history(std::get<0>(result), node)" in topk
    assert "set_history(std::get<1>(result)" not in topk
    assert "node->indices_ = SavedVariable(std::get<1>(result), false);" in topk
    assert 'named_tuple_type("topk2", {"values", "indices"})' in (out / "python" / "topk2.cc").read_text()
    glue = (out / "autograd" / "glue.cc").read_text()
    # One edge per element of the Tensor[] input; the Tensor?[] input is not differentiable.
    assert "for (const Tensor& t : tensors) node->add_next_edge(gradient_edge(t));" in glue
    assert "any_edge_valid(0, tensors_size_)" in glue
    assert "picks" not in glue.split("struct GlueBackward0")[1].split("};")[0]
    assert '"glue(Tensor[] tensors, Tensor?[] picks)"' in (out / "python" / "glue.cc").read_text()


def test_formula_for_optional_tensor_list(tmp_path):
    derivs = TUPLE_DERIVATIVES + "  picks: grad\n"
    proc, schema = run_codegen(tmp_path, TUPLE_NATIVE, derivs)
    assert_located(proc, f"{schema}/derivatives.yaml", line_of(derivs, "- name: glue"), "glue",
                   "formula for 'picks', which is not a Tensor or Tensor\\[\\]")


def test_optional_elements_only_for_tensor_lists(tmp_path):
    native = TUPLE_NATIVE.replace("int k)", "int?[] k)")
    proc, schema = run_codegen(tmp_path, native, MINI_DERIVATIVES)
    assert_located(proc, f"{schema}/native_functions.yaml", line_of(native, "- func: topk2"), "topk2",
                   r"only Tensor\?\[\] has optional elements")


# ---- pointwise formulas (codegen/pointwise.py) ----

POINTWISE_NATIVE = """\
- func: neg(Tensor self) -> Tensor
  variants: function, method
  family: [inplace, out]
  pointwise: {formula: "FORMULA", dtypes: DTYPES, promote: PROMOTE}
"""


def pointwise_schema(formula, dtypes="floating", promote="int_to_float"):
    return POINTWISE_NATIVE.replace("FORMULA", formula).replace("DTYPES", dtypes).replace("PROMOTE", promote)


@pytest.mark.parametrize("formula, dtypes, promote, fragment", [
    ("exp(x)", "floating", "int_to_float", r"unknown name 'x' \(the op's arguments are: self\)"),
    ("expo(self)", "floating", "int_to_float", "unknown intrinsic 'expo'"),
    ("exp(self, self)", "floating", "int_to_float", r"exp\(\) takes 1 argument\(s\), got 2"),
    ("exp(self", "floating", "int_to_float", "syntax error"),
    ("1 < self < 2", "floating", "int_to_float", "chained comparisons"),
    ("self ** 2", "floating", "int_to_float", "unsupported operator Pow"),
    ("'a'", "floating", "int_to_float", "unsupported literal"),
    ("2.0", "floating", "int_to_float", "does not use argument 'self'"),
    ("self / 2", "numeric", "none", "'/' needs a floating compute dtype"),
    ("exp(self)", "all", "none", r"exp\(\) needs a floating compute dtype"),
    ("exp(self)", "complex", "none", "dtypes must be one of floating, numeric, all"),
    ("exp(self)", "floating", "always", "promote must be one of int_to_float, scalars, none"),
    ("gcd(self, self)", "floating", "none", r"gcd\(\) needs dtypes: integral and a meta function"),
    ("lcm(self, self)", "integral", "none", r"lcm\(\) needs dtypes: integral and a meta function"),
])
def test_bad_pointwise_formula(tmp_path, formula, dtypes, promote, fragment):
    native = pointwise_schema(formula, dtypes, promote)
    proc, schema = run_codegen(tmp_path, native, "")
    assert_located(proc, f"{schema}/native_functions.yaml", 1, "neg", fragment)


def test_pointwise_formula_and_dispatch_conflict(tmp_path):
    native = pointwise_schema("-self", "numeric", "none") + "  dispatch:\n    CPU: neg_out\n"
    proc, schema = run_codegen(tmp_path, native, "")
    assert_located(proc, f"{schema}/native_functions.yaml", 1, "neg", "drop 'dispatch:'")


def test_a_pointwise_formula_without_out_gets_its_own_kernel(tmp_path):
    native = pointwise_schema("-self", "numeric", "none").replace("  family: [inplace, out]\n", "")
    proc, _ = run_codegen(tmp_path, native, "")
    assert proc.returncode == 0, proc.stderr
    kernel = (tmp_path / "out" / "cpu" / "neg.cc").read_text()
    assert "TensorBase neg_kernel(const TensorBase& self) {" in kernel
    assert 'IteratorConfig::unary("neg", self, TensorBase())' in kernel


CLAMP_NATIVE = """\
- func: clampx(Tensor self, Scalar? min=None, str mode='a') -> Tensor
  family: [out]
  pointwise: {formula: "FORMULA", dtypes: numeric, EXTRA}
"""


@pytest.mark.parametrize("formula, extra, fragment", [
    ("minimum(self, min)", "choices: {mode: [a, b]}", r"the Scalar\? argument 'min' needs its value when None"),
    ("minimum(self, min)", "absent: {min: lowest}", "the str argument 'mode' needs its allowed values"),
    ("minimum(self, min)", "absent: {min: smallest}, choices: {mode: [a]}", "needs its value when None"),
    ("minimum(self, min)", "absent: {min: lowest, max: highest}, choices: {mode: [a]}",
     "absent: 'max' is not a Scalar\\? argument"),
    ("self if mode else min", "absent: {min: lowest}, choices: {mode: [a, b]}",
     "the str argument 'mode' is only compared with a literal"),
    ("self if mode == 'c' else min", "absent: {min: lowest}, choices: {mode: [a, b]}",
     "compare 'mode' with == or != and one of its choices"),
    ("self if mode < 'a' else min", "absent: {min: lowest}, choices: {mode: [a, b]}", "compare 'mode' with =="),
    ("self", "absent: {min: lowest}, choices: {mode: [a]}, bool_args: [other]", "bool_args must list Tensor"),
    ("self", "absent: {min: lowest}, choices: {mode: [a]}, bool_args: [self]", "bool_args need a meta function"),
    ("self", "absent: {min: lowest}, choices: {mode: [a]}, unchecked: [mode]", "unchecked must list Scalar"),
    ("self", "absent: {min: lowest}, choices: {mode: [a]}, unchecked: [min]", "unchecked must list Scalar"),
])
def test_bad_optional_and_str_formula_arguments(tmp_path, formula, extra, fragment):
    native = CLAMP_NATIVE.replace("FORMULA", formula).replace("EXTRA", extra)
    proc, schema = run_codegen(tmp_path, native, "")
    assert_located(proc, f"{schema}/native_functions.yaml", 1, "clampx", fragment)


def test_optional_and_str_arguments_reach_the_kernel(tmp_path):
    native = CLAMP_NATIVE.replace("FORMULA", "maximum(self, min) if mode == 'b' else self // 2").replace(
        "EXTRA", "absent: {min: lowest}, choices: {mode: [a, b]}")
    proc, _ = run_codegen(tmp_path, native, "")
    assert proc.returncode == 0, proc.stderr
    kernel = (tmp_path / "out" / "cpu" / "clampx.cc").read_text()
    assert 'min ? checked_convert<scalar_t>(*min, "clampx") : pm::lowest<scalar_t>()' in kernel
    assert 'scalar_t(choice_index("clampx", "mode", mode, {"a", "b"}))' in kernel
    functor = (tmp_path / "out" / "pointwise" / "clampx.h").read_text()
    assert "return (mode == T(1)) ? pm::maximum(self, min) : pm::floor_divide(self, T(2));" in functor


def test_a_pointwise_formula_generates_functor_kernel_and_table_row(tmp_path):
    native = pointwise_schema("self if self > 0 else 0.5 * (exp(self) - 1)")
    proc, _ = run_codegen(tmp_path, native, "")
    assert proc.returncode == 0, proc.stderr
    functor = (tmp_path / "out" / "pointwise" / "neg.h").read_text()
    assert "return (self > T(0)) ? self : (T(0.5) * (pm::exp(self) - T(1)));" in functor
    assert "#include <" not in functor  # NVRTC has no standard headers
    kernel = (tmp_path / "out" / "cpu" / "neg.cc").read_text()
    assert 'IteratorConfig::unary_float("neg", self, out)' in kernel
    assert "neg_loop<scalar_t>(it, formulas::neg<scalar_t>{});" in kernel
    assert "HWY_DYNAMIC_DISPATCH(neg_float32)(f, in, out, n);" in kernel
    # The same tree over Highway vectors (double lanes), compiled per target and dispatched at run time.
    assert ("return hn::IfThenElse(hn::Gt(self, kv::Literal(d, 0)), self, "
            "hn::Mul(kv::Literal(d, 0.5), hn::Sub(kv::Exp(d, self), kv::Literal(d, 1))));") in kernel
    assert '#define HWY_TARGET_INCLUDE "generated/cpu/neg.cc"' in kernel
    assert "HWY_EXPORT(neg_float32);" in kernel
    table = (tmp_path / "out" / "jit" / "pointwise_formulas.cc").read_text()
    assert '{"neg", "neg", "neg", "self if self > 0 else 0.5 * (exp(self) - 1)", neg_args, 1,' in table


@pytest.mark.parametrize("formula, fragment", [
    ("mul(grad, 2)", r"unknown intrinsic 'mul'.*the expression language"),
    ("grad * x", r"unknown name 'x' \(the op's arguments are: grad, result, self\)"),
    ("2 * 3", "arithmetic of constants alone"),
])
def test_bad_pointwise_derivative(tmp_path, formula, fragment):
    derivs = f"- name: neg(Tensor self) -> Tensor\n  self: {formula}\n"
    proc, schema = run_codegen(tmp_path, pointwise_schema("-self", "numeric", "none"), derivs)
    assert_located(proc, f"{schema}/derivatives.yaml", 1, "neg", fragment)


def test_a_pointwise_derivative_is_rendered_into_kiln_ops(tmp_path):
    native = real("native_functions.yaml") + "\n" + pointwise_schema("-self", "floating", "none").replace("neg", "negx")
    derivs = (real("derivatives.yaml") + "\n- name: negx(Tensor self) -> Tensor\n"
              "  self: 0 if self > 1 else -grad / (1 - result)\n")
    proc, _ = run_codegen(tmp_path, native, derivs)
    assert proc.returncode == 0, proc.stderr
    node = (tmp_path / "out" / "autograd" / "negx.cc").read_text()
    assert "masked_fill(div(neg(grad), add(neg(result), 1)), gt(self, 1), 0)" in node
    table = (tmp_path / "out" / "jit" / "pointwise_formulas.cc").read_text()
    assert '{"negx", "self", "negx", "0 if self > 1 else -grad / (1 - result)", negx_self_grad_args, 3,' in table


def test_a_formula_with_no_vector_intrinsic_keeps_the_scalar_kernel(tmp_path):
    # erfinv keeps its scalar functor (docs/ARCHITECTURE.md, "Vectorized formula kernels")
    proc, _ = run_codegen(tmp_path, pointwise_schema("erfinv(self) * 2"), "")
    assert proc.returncode == 0, proc.stderr
    kernel = (tmp_path / "out" / "cpu" / "neg.cc").read_text()
    assert "// Scalar only: no vector erfinv()." in kernel
    assert "hwy" not in kernel and "unary_kernel<scalar_t, scalar_t>(it, formulas::neg<scalar_t>{});" in kernel


def test_vector_rendering_converts_between_masks_and_numbers():
    sys.path.insert(0, os.path.join(REPO, "codegen"))
    try:
        import pointwise
    finally:
        sys.path.pop(0)
    f = pointwise.parse_formula({"formula": "(self > 1) * self if not (self < -1 or self == 0) else -self"}, ["self"])
    assert pointwise.render_vector(f.root, f.args) == (
        "hn::IfThenElse(hn::Not(hn::Or(hn::Lt(self, kv::Literal(d, -1)), hn::Eq(self, kv::Literal(d, 0)))), "
        "hn::Mul(kv::FromBool(d, hn::Gt(self, kv::Literal(d, 1))), self), hn::Neg(self))")
    g = pointwise.parse_formula({"formula": "self and 0.25"}, ["self"])
    assert pointwise.render_vector(g.root, g.args) == "hn::And(kv::ToBool(d, self), kv::ToBool(d, kv::Literal(d, 0.25)))"
    assert pointwise.vector_unsupported(g) == "vector kernels write floating results only for now"


@pytest.mark.parametrize("formula, lanes", [
    # expm1 and hypot run in double lanes (tanh moved to float lanes with its own kernel)
    ("(self > 1) * hypot(self, self) if not (self < -1 or self == 0) else expm1(sqrt(-self)) / 3.5", "double"),
    # With erf, exp or log the whole formula runs on Sleef in float lanes, tanh included.
    ("erf(self) * tanh(self) if self > 0.5 else exp(-self) - log(sqrt(self))", "float"),
])
def test_a_generated_vector_kernel_compiles_for_every_target(tmp_path, formula, lanes):
    # Masks, selects, literals and intrinsics in one formula: the kernel's C++ (compiled once per
    # Highway target by hwy/foreach_target.h) must compile, as Bazel compiles it.
    proc, _ = run_codegen(tmp_path, pointwise_schema(formula), "")
    assert proc.returncode == 0, proc.stderr
    assert f"unary_float_run<{lanes}>" in (tmp_path / "out" / "cpu" / "neg.cc").read_text()
    root = tmp_path / "root"
    root.mkdir()
    os.symlink(tmp_path / "out", root / "generated")
    os.symlink(os.path.join(REPO, "runtime"), root / "runtime")
    proc = subprocess.run(["g++", "-std=c++17", "-fsyntax-only", "-fopenmp", "-Wall", "-Wno-unused-parameter",
                           "-I", str(root), str(root / "generated" / "cpu" / "neg.cc")], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-4000:]


def test_scalars_alone_are_computed_once_in_cxx():
    sys.path.insert(0, os.path.join(REPO, "codegen"))
    try:
        import pointwise
    finally:
        sys.path.pop(0)
    f = pointwise.parse_formula({"formula": "self * (1 - w) if mode == 'b' else other * abs(w)", "choices": {"mode": ["a", "b"]}},
                                ["self", "other"], ["w", "mode"], [], ["mode"])
    assert pointwise.vector_unsupported(f) is None  # abs(w) is uniform: C++, not a vector abs
    assert pointwise.render_vector(f.root, f.args, f.scalars) == (
        "((s.mode == T(1)) ? hn::Mul(self, kv::Uniform(d, (T(1) - s.w))) : hn::Mul(other, kv::Uniform(d, pm::abs(s.w))))")


CAST_NATIVE = """\
- func: castx(Tensor self, *, ScalarType? dtype=None, Device? device=None) -> Tensor
  DISPATCH
  pointwise: {formula: "FORMULA", dtypes: DTYPES}
"""


@pytest.mark.parametrize("formula, dtypes, dispatch, fragment", [
    ("cast(self, dtype) + 1", "all", "dispatch: {CPU: castx}", r"cast\(\) must be the whole formula"),
    ("cast(cast(self, dtype), dtype)", "all", "dispatch: {CPU: castx}", r"cast\(\) must be the whole formula"),
    ("cast(self, device)", "all", "dispatch: {CPU: castx}", r"cast\(x, dtype\) takes a value and a ScalarType"),
    ("cast(self)", "all", "dispatch: {CPU: castx}", r"cast\(x, dtype\) takes a value and a ScalarType"),
    ("self + dtype", "all", "dispatch: {CPU: castx}", "the ScalarType argument 'dtype' is only the target of cast"),
    ("cast(self, dtype)", "floating", "dispatch: {CPU: castx}", "a cast formula takes one tensor, in any dtype"),
    ("cast(self, dtype)", "all", "variants: function", "name it in 'dispatch:'"),
    ("abs(self)", "all", "variants: function", "ScalarType and Device arguments belong to cast formulas"),
])
def test_bad_cast_formula(tmp_path, formula, dtypes, dispatch, fragment):
    native = CAST_NATIVE.replace("FORMULA", formula).replace("DTYPES", dtypes).replace("DISPATCH", dispatch)
    proc, schema = run_codegen(tmp_path, native, "")
    assert_located(proc, f"{schema}/native_functions.yaml", 1, "castx", fragment)


def test_a_cast_formula_gets_a_functor_and_a_table_row_but_no_kernel(tmp_path):
    native = CAST_NATIVE.replace("FORMULA", "cast(self, dtype)").replace("DTYPES", "all").replace(
        "DISPATCH", "dispatch: {CPU: castx}")
    proc, _ = run_codegen(tmp_path, native, "")
    assert proc.returncode == 0, proc.stderr
    functor = (tmp_path / "out" / "pointwise" / "castx.h").read_text()
    assert "template <typename T, typename To>" in functor
    assert "To operator()(T self) const { return pm::cast<To>(self); }" in functor
    assert not (tmp_path / "out" / "cpu" / "castx.cc").exists()
    table = (tmp_path / "out" / "jit" / "pointwise_formulas.cc").read_text()
    assert "{FormulaOp::Cast, 0, -1, -1, 0," in table
    assert '"dtype"}' in table


def test_node_name_names_the_grad_fn(tmp_path):
    # node_name: the grad_fn class torch shows where kiln's op stands for one of torch's (_addmm_into: addmm)
    derivatives = MINI_DERIVATIVES.replace("  self: neg(grad)\n", "  node_name: NegativeBackward0\n  self: neg(grad)\n")
    proc, _ = run_codegen(tmp_path, MINI_NATIVE, derivatives)
    assert proc.returncode == 0, proc.stderr
    neg = (tmp_path / "out" / "autograd" / "neg.cc").read_text()
    assert 'return "NegativeBackward0";' in neg and "NegBackward0" not in neg


@pytest.mark.parametrize("name, fragment", [("negBackward0", "node_name must be a class name"),
                                            ("Neg", "node_name must be a class name"),
                                            ("MulBackward0", "node_name 'MulBackward0' of .* is also")])
def test_bad_node_name(tmp_path, name, fragment):
    derivatives = MINI_DERIVATIVES.replace("  self: neg(grad)\n", f"  node_name: {name}\n  self: neg(grad)\n")
    proc, path = run_codegen(tmp_path, MINI_NATIVE, derivatives)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert re.search(fragment, proc.stderr), proc.stderr


def test_a_library_kernel_is_offered_the_call_first(tmp_path):
    # `library:` (gelu's oneDNN kernel): the generated CPU kernel calls the named function of
    # runtime/kernels/cpu/library_kernels.h with its own arguments before its loop.
    native = real("native_functions.yaml") + "\n" + pointwise_schema("exp(self) * 2").replace("neg", "negx").replace(
        "promote: int_to_float}", "promote: int_to_float, library: my_lib}")
    derivs = (real("derivatives.yaml") + "\n- name: negx(Tensor self) -> Tensor\n  library: my_lib_backward\n"
              "  self: grad * exp(self) * 2\n")
    proc, _ = run_codegen(tmp_path, native, derivs)
    assert proc.returncode == 0, proc.stderr
    kernel = (tmp_path / "out" / "cpu" / "negx.cc").read_text()
    assert '#include "runtime/kernels/cpu/library_kernels.h"' in kernel
    assert "if (TensorBase done = my_lib(self, out); done.defined()) return done;" in kernel
    backward = (tmp_path / "out" / "cpu" / "_negx_self_backward.cc").read_text()
    assert "if (TensorBase done = my_lib_backward(grad, self); done.defined()) return done;" in backward


@pytest.mark.parametrize("native_library, derivative, fragment", [
    ("library: 3", "  self: -grad\n", "library must name a function of runtime/kernels/cpu/library_kernels.h"),
    ("library: ok", "  library: bad name\n  self: grad * exp(self)\n", "library must name a function"),
    ("library: ok", "  library: ok_backward\n  self: -grad\n", "library: needs exactly one fused backward op"),
])
def test_bad_library_entries(tmp_path, native_library, derivative, fragment):
    native = pointwise_schema("exp(self)").replace('promote: int_to_float}', f'promote: int_to_float, {native_library}}}')
    proc, schema = run_codegen(tmp_path, native, "- name: neg(Tensor self) -> Tensor\n" + derivative)
    where = "native_functions.yaml" if native_library == "library: 3" else "derivatives.yaml"
    assert_located(proc, f"{schema}/{where}", 1, "neg", fragment)
