"""Loads and validates schema/native_functions.yaml and schema/derivatives.yaml.

Every problem is reported as `file:line: op: what is wrong` (a CodegenError with
`where` set); callers print it and exit, never a traceback.
"""
from __future__ import annotations

import re
from typing import Dict, List, Tuple

import yaml

from model import (BACKEND_KEYS, DISPATCH_KEYS, Argument, Annotation, CodegenError, Derivative, Formula,
                   FunctionSchema, NativeFunction, Return, Type)
from pointwise import DERIVATIVE_NAMES, _nodes, check_library, parse_derivative, parse_formula, render_autograd
from schema_parser import parse_schema

# Functions a formula may call besides the ops themselves (runtime/autograd/formula_helpers.h).
FORMULA_HELPERS = {
    "maybe_multiply", "mm_mat2_backward", "sum_to", "sum_backward", "mean_backward", "slice_backward_wrapper",
    "unsqueeze_to", "inverse_permutation", "extremum_backward", "evenly_distribute_backward", "prod_full_backward",
    "value_selecting_reduction_backward", "prod_backward", "cat_tensors_backward", "as_strided_backward",
    "diagonal_backward", "unfold_backward", "binary_cross_entropy_backward", "binary_cross_entropy_target_backward",
    "binary_cross_entropy_with_logits_backward", "binary_cross_entropy_with_logits_target_backward",
    "conv_bias_backward", "max_pool_double_backward", "adaptive_avg_pool_double_backward",
    "adaptive_avg_pool3d_double_backward", "max_pool3d_double_backward",
    "cumsum_backward", "cumprod_backward", "masked_select_backward", "take_backward",
    "value_or_lowest", "value_or_highest", "cummaxmin_backward", "logcumsumexp_backward", "layer_norm_backward",
    "split_with_sizes_backward", "unbind_backward", "scatter_reduce_backward_self", "scatter_reduce_backward_src",
}
# Helpers declared in runtime/autograd/fused_backward_helpers.h: the gradients of fused kernels whose
# backward kernel has no derivative (the kernel, or with create_graph a differentiable composition).
# Only the autograd files whose formulas call one include that header.
FUSED_BACKWARD_HELPERS = {
    "gru_cell_fused_backward", "lstm_cell_fused_backward", "lstm_layer_backward",
    "scaled_dot_product_attention_backward", "batch_norm_train_backward", "group_norm_fused_backward",
    "conv2d_weight_bias_backward", "norm2_backward",
}
FORMULA_HELPERS |= FUSED_BACKWARD_HELPERS
# Helpers declared in runtime/autograd/torch_backward_helpers.h: torch's backward functions op for op,
# for ops whose autodiff through kiln's composition would round differently (their gradient bits).
TORCH_BACKWARD_HELPERS = {
    "var_backward", "std_backward", "logsumexp_backward", "mse_loss_backward", "smooth_l1_loss_backward",
    "huber_loss_backward", "glu_backward", "batch_norm_eval_backward",
}
FORMULA_HELPERS |= TORCH_BACKWARD_HELPERS
# Helpers declared in runtime/autograd/linalg_formula_helpers.h (the linalg derivatives), included
# only by the autograd files whose formulas call one, so editing them rebuilds only those.
LINALG_HELPERS = {
    "linalg_solve_backward", "linalg_det_backward", "linalg_slogdet_backward", "linalg_cholesky_backward",
    "linalg_eigh_backward", "linalg_svd_backward", "linalg_qr_backward", "linalg_lu_factor_ex_backward",
    "linalg_lu_solve_LU",
}
FORMULA_HELPERS |= LINALG_HELPERS
# Metadata calls on an argument saved as values instead of the tensor (DESIGN.md).
METADATA_CALLS = {
    "sizes": "std::vector<int64_t>", "strides": "std::vector<int64_t>", "dim": "int64_t", "numel": "int64_t",
    "scalar_type": "ScalarType", "device": "Device", "storage_offset": "int64_t",
}
_CPP_WORDS = {"true", "false", "nullptr", "std", "kiln", "ScalarType", "Device", "static_cast", "int64_t", "double",
              "Scalar"}

# torch's CPU autocast policies: cast floating inputs to the autocast dtype, to float32, or all to
# their widest dtype.
AUTOCAST_POLICIES = ("lower_precision", "fp32", "promote")
NATIVE_KEYS = {"func", "variants", "dispatch", "family", "out_dtype", "autocast", "pointwise"}


class _LineLoader(yaml.SafeLoader):
    """Records the 1-based line of every mapping under the key '__line__'."""

    def construct_mapping(self, node, deep=False):
        mapping = super().construct_mapping(node, deep=deep)
        mapping["__line__"] = node.start_mark.line + 1
        return mapping


def _read_yaml(path: str, display: str):
    try:
        with open(path) as f:
            data = yaml.load(f, Loader=_LineLoader)
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        line = mark.line + 1 if mark else 0
        raise CodegenError(f"invalid YAML: {getattr(e, 'problem', e)}", f"{display}:{line}")
    except OSError as e:
        raise CodegenError(f"cannot read: {e.strerror}", display)
    if data is None:
        return []
    if not isinstance(data, list):
        raise CodegenError("expected a list of entries", f"{display}:1")
    return data


def _located(where: str):
    class _Ctx:
        def __enter__(self):
            return self

        def __exit__(self, exc_type, exc, tb):
            if isinstance(exc, CodegenError) and not exc.where:
                exc.where = where
            return False
    return _Ctx()


def _parse_list(value, what: str) -> List[str]:
    if isinstance(value, str):
        return [v.strip() for v in value.split(",") if v.strip()]
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return value
    raise CodegenError(f"'{what}' must be a list or a comma-separated string")


def _inplace_schema(f: FunctionSchema) -> FunctionSchema:
    args = [Argument(a.name, a.type, a.default, a.annotation, a.kwarg_only) for a in f.arguments]
    args[0] = Argument(args[0].name, args[0].type, None, Annotation("a", True), False)
    return FunctionSchema(f.name + "_", f.overload, args, [Return(None, Type("Tensor"), Annotation("a", True))])


def _out_schema(f: FunctionSchema) -> FunctionSchema:
    overload = "out" if f.overload in ("", "Tensor") else f"{f.overload}_out"
    args = list(f.arguments) + [Argument("out", Type("Tensor"), None, Annotation("a", True), True)]
    return FunctionSchema(f.name, overload, args, [Return(None, Type("Tensor"), Annotation("a", True))])


def _native_function(entry: dict, display: str) -> List[NativeFunction]:
    line = entry.get("__line__", 0)
    func = entry.get("func")
    if not isinstance(func, str):
        raise CodegenError("entry has no 'func:' string", f"{display}:{line}")
    op = func.split("(")[0].strip()
    where = f"{display}:{line}: {op}"
    with _located(where):
        unknown = sorted(set(entry) - NATIVE_KEYS - {"__line__"})
        if unknown:
            raise CodegenError(f"unknown key '{unknown[0]}' (known: {', '.join(sorted(NATIVE_KEYS))})")
        schema = parse_schema(func)
        variants = _parse_list(entry.get("variants", "function"), "variants")
        for v in variants:
            if v not in ("function", "method"):
                raise CodegenError(f"unknown variant '{v}' (expected function or method)")
        if "method" in variants:
            first = schema.arguments[0] if schema.arguments else None
            if first is None or first.name != "self" or not first.type.is_tensor:
                raise CodegenError("a method variant needs 'Tensor self' as its first argument")
        dispatch = entry.get("dispatch")
        formula = None
        if "pointwise" in entry:
            # The kernel is generated from the formula: the family's shared out= kernel on the CPU;
            # a cast formula's is the runtime's conversion loop, which its dispatch: names.
            others = [a for a in schema.arguments if not a.type.is_tensor]
            tensors = [a for a in schema.arguments if a.type.is_tensor]
            dtype_args = [a for a in others if a.type.base == "ScalarType" and not a.type.is_list]
            devices = [a for a in others if a.type.base == "Device" and a.type.optional]
            values = [a for a in others if a not in dtype_args and a not in devices]
            if [a for a in values if a.type.base not in ("Scalar", "str") or a.type.is_list
                    or (a.type.optional and a.type.base != "Scalar")] or [a for a in tensors if a.type.optional]:
                raise CodegenError("pointwise: formulas take Tensor, Scalar, Scalar? and str arguments "
                                   "(and a cast formula ScalarType and Device? ones)")
            formula = parse_formula(entry["pointwise"], [a.name for a in tensors], [a.name for a in values],
                                    [a.name for a in values if a.type.optional],
                                    [a.name for a in values if a.type.base == "str"],
                                    [a.name for a in dtype_args])
            if formula.cast_to is None:
                if dtype_args or devices:
                    raise CodegenError("pointwise: ScalarType and Device arguments belong to cast formulas "
                                       "(cast(self, dtype))")
                if dispatch is not None:
                    raise CodegenError("an op with 'pointwise:' gets its kernels from the formula; drop 'dispatch:'")
                # The generated kernel is the family's shared out= kernel, or the op's own kernel
                # when it has no out= form (isnan).
                has_out = "out" in _parse_list(entry.get("family", []), "family")
                dispatch = {"CPU": f"{schema.name}_out" if has_out else f"{schema.name}_kernel"}
            elif dispatch is None:
                raise CodegenError("pointwise: a cast formula's kernel is the conversion loop: name it in 'dispatch:'")
        if not isinstance(dispatch, dict) or not [k for k in dispatch if k != "__line__"]:
            raise CodegenError("missing 'dispatch:' (which kernel runs this op?)")
        dispatch = {k: v for k, v in dispatch.items() if k != "__line__"}
        for key, kernel in dispatch.items():
            if key not in DISPATCH_KEYS:
                raise CodegenError(f"unknown dispatch key '{key}' (known: {', '.join(DISPATCH_KEYS)})")
            if not isinstance(kernel, str) or not re.match(r"^[A-Za-z_][A-Za-z0-9_]*$", kernel):
                raise CodegenError(f"dispatch {key}: kernel name must be a C++ identifier, got '{kernel}'")
        if ("CompositeImplicit" in dispatch or "CompositeExplicit" in dispatch) and len(dispatch) > 1:
            raise CodegenError("a Composite kernel serves every backend; it cannot be combined with other keys")
        family = _parse_list(entry.get("family", []), "family")
        for member in family:
            if member not in ("inplace", "out"):
                raise CodegenError(f"unknown family member '{member}' (expected inplace, out)")
        head = NativeFunction(schema, variants, dispatch, display, line)
        head.pointwise = formula
        result = [head]
        if family:
            if schema.is_inplace or schema.is_out:
                raise CodegenError("'family' belongs on the functional form of an op")
            if not any(k in BACKEND_KEYS for k in dispatch) and not ("CompositeImplicit" in dispatch and
                                                                      family == ["out"]):
                raise CodegenError("'family' needs a CPU or CUDA kernel (the shared out= kernel); a "
                                   "CompositeImplicit op may declare only [out] (its result written into out)")
            if len(schema.returns) != 1 or not schema.returns[0].type.is_tensor:
                raise CodegenError("'family' needs an op returning one Tensor")
            head.family_role = "functional"
            if "inplace" in family:
                result.append(NativeFunction(_inplace_schema(schema), ["method"], dispatch, display, line,
                                             "inplace", head))
            if "out" in family:
                result.append(NativeFunction(_out_schema(schema), ["function"], dispatch, display, line, "out", head))
        autocast = entry.get("autocast")
        if autocast is not None:
            if autocast not in AUTOCAST_POLICIES:
                raise CodegenError(f"autocast: expected one of {', '.join(AUTOCAST_POLICIES)}, got '{autocast}'")
            if schema.is_inplace or schema.is_out or not any(a.type.base == "Tensor" for a in schema.arguments):
                raise CodegenError("'autocast' belongs on a functional op with tensor arguments (torch casts "
                                   "neither in-place nor out= forms)")
            head.autocast = autocast
        out_dtype = entry.get("out_dtype", "castable")
        if out_dtype not in ("castable", "exact", "as_dtype"):
            raise CodegenError(f"out_dtype: expected castable, exact or as_dtype, got '{out_dtype}'")
        if out_dtype != "castable":
            if "out" not in family or "CompositeImplicit" not in dispatch:
                raise CodegenError(f"'out_dtype: {out_dtype}' belongs on a CompositeImplicit op with 'family: [out]' "
                                   "(kernels check their out= dtype themselves)")
            if out_dtype == "as_dtype" and schema.argument("dtype") is None:
                raise CodegenError("'out_dtype: as_dtype' needs a ScalarType? dtype argument")
            # as_dtype: the result has out's dtype unless dtype= differs, which torch refuses
            result[-1].out_exact_dtype = True
            result[-1].out_as_dtype = out_dtype == "as_dtype"
    return result


def _identifiers(expr: str) -> List[Tuple[str, bool, bool, str]]:
    """(name, is_call, after_member_access, following_call) for every identifier in a C++ expression."""
    out = []
    expr = re.sub(r'"[^"]*"', lambda m: " " * len(m.group(0)), expr)  # string literals name nothing
    for m in re.finditer(r"[A-Za-z_][A-Za-z0-9_]*", expr):
        start, end = m.span()
        before = expr[:start].rstrip()
        after = expr[end:].lstrip()
        member = before.endswith(".") or before.endswith("::") or before.endswith("->")
        if start > 0 and (expr[start - 1].isdigit()):
            continue  # exponent of a number such as 1e5
        call = after.startswith("(")
        meta = ""
        rest = expr[end:]
        mm = re.match(r"\s*\.\s*([A-Za-z_]+)\s*\(\s*\)", rest)
        if mm:
            meta = mm.group(1)
        out.append((m.group(0), call, member, meta))
    return out


def _derivative(entry: dict, display: str, functions: Dict[str, NativeFunction]) -> Derivative:
    line = entry.get("__line__", 0)
    name = entry.get("name")
    if not isinstance(name, str):
        raise CodegenError("entry has no 'name:'", f"{display}:{line}")
    op_name = name.split("(")[0].strip()
    where = f"{display}:{line}: {op_name}"
    with _located(where):
        f = functions.get(op_name)
        if f is None:
            raise CodegenError(f"derivative for unknown op '{op_name}' (not in native_functions.yaml)")
        if "(" in name:
            declared = parse_schema(name).signature()
            if declared != f.schema.signature():
                raise CodegenError(f"signature '{declared}' differs from native_functions.yaml: '{f.schema.signature()}'")
        if f.is_composite_implicit:
            raise CodegenError("CompositeImplicit ops get autograd from the ops they call; remove this entry")
        formulas: List[Formula] = []
        non_diff: List[str] = []
        out_diff = None
        node_name = ""
        library = None
        arg_names = {a.name for a in f.schema.arguments}
        for key, value in entry.items():
            if key in ("name", "__line__"):
                continue
            if key == "node_name":
                # the grad_fn class name torch shows, where kiln's op stands for one of torch's under
                # another name (_addmm_into: nn.Linear's addmm, AddmmBackward0)
                if not isinstance(value, str) or not re.fullmatch(r"[A-Z][A-Za-z0-9]*Backward[0-9]+", value):
                    raise CodegenError("node_name must be a class name like 'AddmmBackward0'")
                node_name = value
                continue
            if key == "library":
                # the fused backward op's library kernel (runtime/kernels/cpu/library_kernels.h)
                library = check_library(value)
                continue
            if key == "output_differentiability":
                if not isinstance(value, list) or not all(isinstance(v, bool) for v in value):
                    raise CodegenError("output_differentiability must be a list of True/False")
                if len(value) != len(f.schema.returns):
                    raise CodegenError(f"output_differentiability has {len(value)} entries for "
                                       f"{len(f.schema.returns)} outputs")
                out_diff = value
                continue
            inputs = [k.strip() for k in str(key).split(",")]
            for inp in inputs:
                if inp not in arg_names:
                    raise CodegenError(f"formula for a missing input '{inp}' (inputs: {', '.join(sorted(arg_names))})")
                t = f.schema.argument(inp).type
                if not (t.is_tensor or (t.is_tensor_list and not t.elem_optional)):
                    raise CodegenError(f"formula for '{inp}', which is not a Tensor or Tensor[]")
            if len(inputs) != 1 and (f.pointwise is not None or value == "non_differentiable"
                                     or any(f.schema.argument(i).type.is_list for i in inputs)):
                raise CodegenError("a formula for several inputs must be a C++ call returning their gradients "
                                   "(Tensor inputs only, not a pointwise formula)")
            if value == "non_differentiable":
                non_diff.append(inputs[0])
                continue
            if f.pointwise is not None and isinstance(value, (int, float)) and not isinstance(value, bool):
                value = str(value)  # `self: 0`: YAML reads the formula as a number
            if not isinstance(value, str) or not value.strip():
                raise CodegenError(f"formula for '{inputs[0]}' must be a C++ expression string")
            # The expression language, rendered into kiln ops (a cast's derivative converts back to
            # self's dtype, which the language cannot say: it stays C++).
            if f.pointwise is not None and f.pointwise.cast_to is None:
                tree = parse_derivative(value, f.pointwise)
                names = DERIVATIVE_NAMES + f.pointwise.args
                formulas.append(Formula(inputs, render_autograd(tree, names, f.pointwise.scalars, f.pointwise.absent,
                                                                f.pointwise.choices),
                                        line, tree,
                                        value.strip()))
                continue
            formulas.append(Formula(inputs, value.strip(), line))
        d = Derivative(f.schema.full_name, formulas, non_diff, out_diff, display, line, f, node_name=node_name,
                       library=library)
        if d.differentiable:
            covered = {i for fm in formulas for i in fm.inputs} | set(non_diff)
            for a in f.schema.arguments:
                differentiable_type = a.type.is_tensor or (a.type.is_tensor_list and not a.type.elem_optional)
                if differentiable_type and a.name not in covered and not (a.kwarg_only and a.is_mutable):
                    raise CodegenError(f"missing formula for differentiable input '{a.name}' "
                                       f"(write '{a.name}: non_differentiable' if no gradient flows to it)")
        elif formulas:
            raise CodegenError("formulas given for an op whose outputs are not differentiable")
        return d


def _analyse(d: Derivative, op_names: set) -> None:
    """Checks formula identifiers and works out what the Node must save."""
    f = d.function
    arg_names = {a.name for a in f.schema.arguments}
    # Outputs a formula may use: `result` for one output, else the named returns.
    returns = f.schema.returns
    output_names = ["result"] if len(returns) == 1 else [r.name for r in returns if r.name]
    saved, meta, outputs = [], [], []
    for fm in d.formulas:
        for ident, is_call, member, meta_call in _identifiers(fm.expression):
            if member:
                continue
            if is_call:
                if ident not in op_names and ident not in FORMULA_HELPERS and ident not in _CPP_WORDS:
                    raise CodegenError(f"formula for '{fm.inputs[0]}' calls unknown function '{ident}'", d.where)
                continue
            if ident in ("grad", "grads") or ident in _CPP_WORDS:
                continue
            if ident in output_names and ident not in arg_names:
                if ident not in outputs:
                    outputs.append(ident)
                continue
            if ident not in arg_names:
                raise CodegenError(f"formula for '{fm.inputs[0]}' names unknown argument '{ident}'", d.where)
            if meta_call in METADATA_CALLS and f.schema.argument(ident).type.base == "Tensor":
                key = f"{ident}.{meta_call}()"
                if key not in meta:
                    meta.append(key)
            elif ident not in saved:
                saved.append(ident)
    # Keep schema order for readability.
    d.saved_inputs = [a.name for a in f.schema.arguments if a.name in saved]
    d.saved_metadata = meta
    d.saved_outputs = [n for n in output_names if n in outputs]


def _node_names(derivatives: List[Derivative]) -> None:
    counts: Dict[str, int] = {}
    named = {d.node_name: d for d in derivatives if d.node_name}  # node_name: given in derivatives.yaml
    for d in derivatives:
        if d.node_name:
            continue
        base = d.function.schema.name
        # torch's rule (str.title of each part): a letter after a digit is capitalised too, as in
        # MaxPool2DWithIndicesBackward0 and Log1PBackward0
        camel = "".join(p.title() for p in base.split("_") if p)
        n = counts.get(camel, 0)
        counts[camel] = n + 1
        d.node_name = f"{camel}Backward{n}"
        if d.node_name in named:
            raise CodegenError(f"node_name '{d.node_name}' of {named[d.node_name].where} is also {d.where}'s")
    # One C++ class per node: a name given twice (two of kiln's ops showing one of torch's names)
    # keeps it for grad_fn.name() and adds the op's name to the class of the second.
    seen = set()
    for d in derivatives:
        op = "".join(p.title() for p in d.function.schema.name.split("_") if p)
        head, _, tail = d.node_name.rpartition("Backward")
        d.struct_name = d.node_name if d.node_name not in seen else f"{head}For{op}Backward{tail}"
        seen.add(d.node_name)


# A pointwise derivative of at least this many operations gets a fused backward op: run as separate
# ops, each would read and write a full-size tensor (gelu's is 13 ops).
FUSED_BACKWARD_MIN_OPS = 2


def _fused_backward(d: Derivative) -> List[NativeFunction]:
    """For each expression-language derivative of the formula op `d` worth fusing, an op whose
    pointwise formula is that derivative: `_<op>[_<overload>]_<input>_backward(Tensor grad, <the
    tensors it reads>, [Tensor result], <the Scalars it reads>) -> Tensor`. Its kernel is generated
    like any formula op's (vector loops included); the Node calls it when no graph is being built
    for the backward pass (torch's gelu_backward, tanh_backward... written once, as data)."""
    f, schema = d.function.pointwise, d.function.schema
    made = []
    for fm in d.formulas:
        if fm.tree is None:
            continue
        nodes = _nodes(fm.tree)
        names = DERIVATIVE_NAMES + f.args
        used = {names[n.arg] for n in nodes if n.kind == "arg"}
        operations = [n for n in nodes if n.kind not in ("arg", "const", "scalar")]
        tensors = ["grad"] + [a for a in f.args if a in used] + (["result"] if "result" in used else [])
        # grad alone (times Scalars) is one op already; the generated loops take three tensors at most.
        if len(operations) < FUSED_BACKWARD_MIN_OPS or "grad" not in used or not 2 <= len(tensors) <= 3:
            continue
        scalars = [f.scalars[i] for i in sorted({n.arg for n in nodes if n.kind == "scalar"})]
        types = {s: schema.argument(s).type for s in scalars}
        # The forward's `result` is the op's `output` (`result` names what an op returns).
        params = ["output" if t == "result" else t for t in tensors]
        name = f"_{schema.name.lstrip('_')}{'_' + schema.overload.lower() if schema.overload else ''}_{fm.inputs[0]}_backward"
        args = [f"Tensor {t}" for t in params] + [f"{types[s]} {s}" for s in scalars]
        nf = NativeFunction(parse_schema(f"{name}({', '.join(args)}) -> Tensor"), ["function"],
                            {"CPU": f"{name}_kernel"}, d.file, fm.line)
        nf.pointwise = parse_formula(
            {"formula": re.sub(r"\bresult\b", "output", fm.source), "dtypes": "floating", "promote": "none",
             "absent": {s: f.absent[s] for s in scalars if s in f.absent},
             "choices": {s: f.choices[s] for s in scalars if s in f.choices}},
            params, scalars, [s for s in scalars if types[s].optional], [s for s in scalars if types[s].base == "str"])
        nf.pointwise.library = d.library
        nf.fused_backward_of = (d.name, fm.inputs[0])
        fm.fused_op, fm.fused_args, fm.fused_tensors = name, tensors + scalars, tensors
        made.append(nf)
    return made


def load(native_path: str, derivatives_path: str, native_display: str, derivatives_display: str):
    functions: List[NativeFunction] = []
    by_name: Dict[str, NativeFunction] = {}
    for entry in _read_yaml(native_path, native_display):
        if not isinstance(entry, dict):
            raise CodegenError("expected a mapping with 'func:'", f"{native_display}:?")
        for nf in _native_function(entry, native_display):
            if (nf.schema.full_name in by_name and nf.family_role == "out"
                    and nf.family_head.schema.overload):
                # Another overload's family already has `op.out` (clamp.Tensor beside clamp(Scalar)):
                # this one is `op.<overload>_out`, as torch names clamp.Tensor_out.
                nf.schema.overload = f"{nf.family_head.schema.overload}_out"
            if nf.schema.full_name in by_name:
                first = by_name[nf.schema.full_name]
                raise CodegenError(f"duplicate overload '{nf.schema.full_name}' (first declared at line {first.line})",
                                   nf.where)
            by_name[nf.schema.full_name] = nf
            functions.append(nf)
    derivatives: List[Derivative] = []
    seen: Dict[str, Derivative] = {}
    for entry in _read_yaml(derivatives_path, derivatives_display):
        if not isinstance(entry, dict):
            raise CodegenError("expected a mapping with 'name:'", f"{derivatives_display}:?")
        d = _derivative(entry, derivatives_display, by_name)
        if d.name in seen:
            raise CodegenError(f"second derivative entry for '{d.name}' (first at line {seen[d.name].line})", d.where)
        seen[d.name] = d
        d.function.derivative = d
        derivatives.append(d)
    # Formulas call ops as free functions: only ops with a function variant qualify.
    op_names = {nf.schema.name for nf in functions if "function" in nf.variants or nf.family_role == "out"}
    for d in derivatives:
        _analyse(d, op_names)
    _node_names(derivatives)
    for d in derivatives:
        fused = []
        if d.function.pointwise is not None and d.function.pointwise.cast_to is None:
            with _located(d.where):
                fused = _fused_backward(d)
        if d.library and len(fused) != 1:
            raise CodegenError("library: needs exactly one fused backward op (an expression-language derivative of "
                               "a formula op, worth fusing)", d.where)
        functions += fused
    return functions, derivatives
