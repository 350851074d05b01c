#!/usr/bin/env python3
"""kiln's code generator: schema/*.yaml + templates/*.j2 -> generated/.

    /usr/bin/python3 codegen/gen.py            # regenerate generated/
    /usr/bin/python3 codegen/gen.py --out DIR  # write elsewhere (the freshness test does)

Output is deterministic (sorted, no timestamps) and split per op family
(generated/<part>/<op>.{h,cc}), so adding one op touches few translation units.
"""
from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
from collections import Counter, OrderedDict
from typing import Dict, List

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(1, os.path.join(os.path.dirname(HERE), "tools"))

import jinja2  # noqa: E402

import cpp  # noqa: E402
import fuzz_table  # noqa: E402
import pointwise  # noqa: E402
import gen_build  # noqa: E402  (tools/gen_build.py)
import python_sig  # noqa: E402
from loader import (FORMULA_HELPERS, FUSED_BACKWARD_HELPERS, LINALG_HELPERS, METADATA_CALLS,  # noqa: E402
                    TORCH_BACKWARD_HELPERS, load)
from model import BACKEND_KEYS, Argument, CodegenError, Derivative, NativeFunction, Type  # noqa: E402

ROOT = os.path.dirname(HERE)
# Generated files that are not per-op: an op with one of these names would overwrite them.
RESERVED_FILE_NAMES = {"tensor", "kiln", "bindings"}
BACKEND_NS = {"CPU": "cpu", "CUDA": "cuda", "CompositeExplicit": "composite_explicit"}


# ----------------------------------------------------------------------------- C++ API + dispatch

def tensor_args(nf: NativeFunction):
    """Tensor and Tensor[] arguments: what picks the dispatch key."""
    return [a for a in nf.schema.arguments if a.type.base == "Tensor"]


def tensor_refs(args: List[Argument]) -> str:
    """An expression naming these tensors for backend_key/autograd_active/any_requires_grad."""
    if any(a.type.is_list for a in args):
        return f"TensorRefs({', '.join(a.name for a in args)})"
    return "{" + ", ".join(f"&{a.name}" for a in args) + "}"


def key_expressions(nf: NativeFunction):
    """(backend expression, autograd condition) for the dispatch key of a call."""
    tensors = tensor_args(nf)
    if tensors:
        refs = tensor_refs(tensors)
        return f"backend_key({refs})", f"records_autograd({refs})"
    dev = nf.schema.argument("device")
    backend = "backend_key(device.value_or(Device()))" if dev is not None else "DispatchKey::CPU"
    return backend, "false"


def kernel_arg(a: Argument) -> str:
    """An API argument as a kernel takes it (kernels see TensorBase, not Tensor)."""
    return f"to_bases({a.name})" if a.type.is_tensor_list else a.name


def adapter(nf: NativeFunction, key: str, kernel: str) -> Dict[str, str]:
    """A function with the API signature that calls a backend kernel."""
    s = nf.schema
    ns = BACKEND_NS[key]
    name = f"{cpp.cpp_id(nf)}_{key}"
    args = cpp.api_args(nf)
    lines = [f'if (explain_enabled()) explain_log("kernel", "{ns}::{kernel}", "");']
    if cpp.is_family(nf):
        head_args = ", ".join(kernel_arg(a) for a in (nf.family_head.schema if nf.family_head else s).arguments)
        if nf.family_role == "functional":
            lines.append(f"return Tensor({ns}::{kernel}({head_args}, TensorBase()));")
        else:
            target = "self" if nf.family_role == "inplace" else "out"
            lines.append(f"{ns}::{kernel}({head_args}, {target});")
            lines.append(f"{target}.bump_version();")
            lines.append(f"return {target};")
    else:
        call = f"{ns}::{kernel}({', '.join(kernel_arg(a) for a in s.arguments)})"
        mutated = [a for a in s.arguments if a.is_mutable]
        if mutated and s.returns and s.returns[0].annotation is not None and s.returns[0].annotation.is_write:
            lines.append(f"{call};")
            for a in mutated:
                lines.append(f"{a.name}.bump_version();")
            lines.append(f"return {mutated[0].name};")
        elif len(s.returns) > 1:
            lines.append(f"return to_api({call});")
        elif s.returns and s.returns[0].type.is_list:
            lines.append(f"return to_api({call});")
        else:
            lines.append(f"return Tensor({call});")
    return {"name": name, "key": key, "ret": cpp.return_type(s), "params": cpp.params(args), "body": lines}


def c_string_body(text: str) -> str:
    """`text` as the inside of a C++ string literal (backslashes and quotes escaped)."""
    return text.replace("\\", "\\\\").replace('"', '\\"')


def kernel_decls(nf: NativeFunction):
    """(namespace, declaration) of the hand-written kernels this op calls."""
    s = nf.schema
    out = []
    for key, kernel in nf.dispatch.items():
        if key == "CompositeImplicit" and writes_functional_result(nf):
            continue  # no kernel: the functional op's result is written into out
        if key == "CompositeImplicit":
            # The kernel takes the C++ API's arguments (out= first, as kiln::op_out).
            out.append(("composite_implicit", f"{cpp.return_type(s)} {kernel}({cpp.params(cpp.api_args(nf))});"))
            continue
        ns = BACKEND_NS[key]
        if cpp.is_family(nf):
            head = nf.family_head.schema if nf.family_head else s
            p = cpp.params(head.arguments, tensor="TensorBase")
            out.append((ns, f"TensorBase {kernel}({p}, const TensorBase& out);"))
        else:
            p = cpp.params(s.arguments, tensor="TensorBase")
            ret = cpp.kernel_return_type(s)
            out.append((ns, f"{ret} {kernel}({p});"))
    return out


# The methods of the runtime's own `kiln::Tensor` (generated/api/tensor.h): the ones hand-written
# runtime code and derivative formulas call. A fixed list, so adding an op leaves that header, and
# the hundreds of files that include it, unchanged. Users get every method from `kiln::api::Tensor`
# (generated/api/kiln.h), which only their code includes.
RUNTIME_METHODS = frozenset([
    "add", "add_", "all", "any", "bernoulli_", "clone", "contiguous", "copy_", "detach", "div_", "expand",
    "fill_", "index_put_", "isnan", "logical_not", "mul_", "reshape", "scatter_", "slice", "squeeze", "sub_",
    "t", "to", "unsqueeze", "view", "zero_",
])


def writes_functional_result(nf: NativeFunction) -> bool:
    """The out= member of a CompositeImplicit op's family: generated as the functional call
    written into out (write_out), with no kernel of its own."""
    return nf.is_composite_implicit and nf.family_role == "out"


def _to_runtime(a) -> str:
    """An argument of the user API (kiln::api) passed on to the runtime API: lists of api::Tensor
    are converted; single tensors convert to their base class by themselves."""
    return f"to_runtime({a.name})" if a.type.is_tensor_list else a.name


def autocast_call(policy: str, args: List[Argument]):
    """(setup line, call arguments) of an op's Autocast kernel: its tensors cast by the policy."""
    tensors = [a for a in args if a.type.base == "Tensor"]
    if policy == "promote":
        lists = [a.name for a in tensors if a.type.is_list]
        if lists:
            pre = f"const ScalarType to = autocast::promote_type({lists[0]});"
        else:
            pre = "const ScalarType to = autocast::promote_type({" + ", ".join(f"&{a.name}" for a in tensors) + "});"
        cast = lambda n: f"autocast::to_type({n}, to)"  # noqa: E731
    else:
        pre = ""
        fn = "autocast::to_lower_precision" if policy == "lower_precision" else "autocast::to_fp32"
        cast = lambda n: f"{fn}({n})"  # noqa: E731
    return pre, ", ".join(cast(a.name) if a.type.base == "Tensor" else a.name for a in args)


def function_view(nf: NativeFunction) -> Dict:
    s = nf.schema
    args = cpp.api_args(nf)
    v = {
        "id": cpp.cpp_id(nf),
        "full_name": s.full_name,
        "signature": s.signature(),
        "ret": cpp.return_type(s),
        "api_name": cpp.api_name(nf),
        "params_decl": cpp.params_with_defaults(args),
        "params_def": cpp.params(args),
        "call_args": cpp.call_args(args),
        "implicit": nf.is_composite_implicit,
        "is_function": "function" in nf.variants or nf.family_role == "out",
        "is_method": "method" in nf.variants,
        "requires_grad_arg": s.argument("requires_grad") is not None,
        # Outputs of differentiable view ops remember their base (for in-place on views).
        "marks_view": s.is_view and not nf.is_composite_implicit and
        not (nf.derivative is not None and not nf.derivative.differentiable),
        "marks_views": returns_list(s),
        "adapters": [],
        # The profiler's event: torch's name (the overload dropped) and the tensors whose shapes it records.
        "profile_name": "aten::" + s.name,
        "profile_shapes": (f"profiler::shapes_of(TensorRefs({', '.join(a.name for a in tensor_args(nf))}))"
                           if tensor_args(nf) else "profiler::Shapes()"),
    }
    v["user_call_args"] = ", ".join(_to_runtime(a) for a in args)
    v["autocast"] = nf.autocast
    if nf.autocast:
        v["autocast_pre"], v["autocast_args"] = autocast_call(nf.autocast, args)
    fn_type_params = ", ".join(cpp.param_type(a.type) for a in args)
    v["fn_type"] = f"{v['ret']}({fn_type_params})"
    if writes_functional_result(nf):
        head = nf.family_head
        call_args = cpp.call_args(cpp.api_args(head))
        if nf.out_as_dtype:  # out's dtype stands for an absent dtype=
            call_args = re.sub(r"\bdtype\b", "dtype ? dtype : std::optional<ScalarType>(out.scalar_type())", call_args)
        v["write_out_call"] = f"kiln::{cpp.api_name(head)}({call_args})"
        v["out_exact_dtype"] = nf.out_exact_dtype
        v["out_as_dtype"] = nf.out_as_dtype
        v["implicit_kernel"] = None
    elif nf.is_composite_implicit:
        v["implicit_kernel"] = nf.dispatch["CompositeImplicit"]
    else:
        for key, kernel in nf.dispatch.items():
            keys = BACKEND_KEYS if key == "CompositeExplicit" else (key,)
            for k in keys:
                a = adapter(nf, key, kernel)
                a["name"] = f"{cpp.cpp_id(nf)}_{k}"
                a["key"] = k
                v["adapters"].append(a)
        v["backend_expr"], v["autograd_expr"] = key_expressions(nf)
        v["has_autograd"] = bool(tensor_args(nf))
    if v["is_method"]:
        margs = [a for a in args if a.name != "self"]
        v["method_decl"] = f"{v['ret']} {s.name}({cpp.params_with_defaults(margs)}) const;"
        v["method_def_params"] = cpp.params(margs)
        v["method_call"] = ", ".join("*this" if a.name == "self" else a.name for a in args)
        v["method_params_decl"] = cpp.params_with_defaults(margs)
        v["user_method_call"] = ", ".join("*this" if a.name == "self" else _to_runtime(a) for a in args)
        v["runtime_method"] = s.name in RUNTIME_METHODS
    return v


# ----------------------------------------------------------------------------- autograd

def formula_cpp(expr: str, d: Derivative) -> str:
    """Rewrites metadata calls (self.sizes()) to the saved values (self_sizes)."""
    for m in d.saved_metadata:
        arg, call = m.split(".", 1)
        call = call[:-2]
        expr = re.sub(rf"\b{arg}\s*\.\s*{call}\s*\(\s*\)", f"{arg}_{call}", expr)
    return expr


def diff_inputs(d: Derivative) -> List[Argument]:
    """The inputs that get a gradient edge, in schema order."""
    names = {i for fm in d.formulas for i in fm.inputs}
    return [a for a in d.function.schema.arguments if a.name in names]


def edge_layout(d: Derivative, prefix: str) -> List[Dict]:
    """Where each differentiable input's edges are: a Tensor has one, a Tensor[] one per element
    (its count is stored in the node as `<name>_size_`). `prefix` is how node members are reached."""
    layout, static, lists = [], 0, []
    for a in diff_inputs(d):
        terms = [f"{prefix}{x}_size_" for x in lists] + ([str(static)] if static or not lists else [])
        first = " + ".join(terms)
        if a.type.is_list:
            valid = f"{prefix}any_edge_valid({first}, {prefix}{a.name}_size_)"
            lists.append(a.name)
        else:
            valid = f"{prefix}next_edges()[{first}].is_valid()"
            static += 1
        layout.append({"arg": a, "first": first, "valid": valid})
    return layout


def saved_output_is_differentiable(d: Derivative, name: str) -> bool:
    return d.output_is_differentiable(d.output_index(name))


def node_view(d: Derivative) -> Dict:
    s = d.function.schema
    fields, unpack = [], []
    fields += [f"size_t {a.name}_size_ = 0;" for a in diff_inputs(d) if a.type.is_list]
    for name in d.saved_inputs:
        a = s.argument(name)
        if a.type.is_tensor_list:
            fields.append(f"std::vector<SavedVariable> {name}_;")
            unpack.append(f"const std::vector<Tensor> {name} = unpack_list({name}_);")
        elif a.type.is_tensor:
            fields.append(f"SavedVariable {name}_;")
            unpack.append(f"const Tensor {name}({name}_.unpack());")
        else:
            fields.append(f"{cpp.saved_type(a.type)} {name};")
    for m in d.saved_metadata:
        arg, call = m.split(".", 1)
        t = METADATA_CALLS[call[:-2]]
        if s.argument(arg).type.is_list:
            t = f"std::vector<{t}>"
        fields.append(f"{t} {arg}_{call[:-2]};")
    for name in d.saved_outputs:
        fields.append(f"SavedVariable {name}_;")
        owner = "shared_from_this()" if saved_output_is_differentiable(d, name) else ""
        unpack.append(f"const Tensor {name}({name}_.unpack({owner}));")
    releases = [f"for (SavedVariable& v : {n}_) v.reset_data();" if s.argument(n).type.is_list
                else f"{n}_.reset_data();"
                for n in d.saved_inputs if s.argument(n).type.base == "Tensor"]
    releases += [f"{n}_.reset_data();" for n in d.saved_outputs]
    formulas, done = [], []
    layout = edge_layout(d, "")
    for e in layout:
        fm = next(fm for fm in d.formulas if e["arg"].name in fm.inputs)
        expr = formula_cpp(fm.expression, d)
        if len(fm.inputs) > 1:
            # One call computes several inputs' gradients (a Tensor[] or tuple, in `inputs` order):
            # it runs once, when any of them is needed.
            if fm in done:
                continue
            done.append(fm)
            edges = [x for x in layout if x["arg"].name in fm.inputs]
            picks = " ".join(f"if ({x['valid']}) grad_inputs[{x['first']}] = "
                             f"pick_grad<{fm.inputs.index(x['arg'].name)}>(grads_);" for x in edges)
            formulas.append({"input": ", ".join(fm.inputs), "valid": " || ".join(x["valid"] for x in edges),
                             "assign": f"{{ const auto grads_ = {expr}; {picks} }}", "yaml": fm.expression})
            continue
        if fm.fused_op:
            # No graph is built for this backward pass: the derivative's fused kernel, one pass.
            tensors = ", ".join(f"&{a}" for a in fm.fused_args if a in fm.fused_tensors)
            expr = f"(fused_backward_applies({{{tensors}}}) ? {fm.fused_op}({', '.join(fm.fused_args)}) : {expr})"
        assign = (f"assign_grads(grad_inputs, {e['first']}, {expr});" if e["arg"].type.is_list
                  else f"grad_inputs[{e['first']}] = {expr};")
        formulas.append({"input": e["arg"].name, "valid": e["valid"], "assign": assign, "yaml": fm.expression})
    return {"name": d.node_name, "struct": d.struct_name, "op": d.name, "fields": fields, "unpack": unpack, "releases": releases,
            "formulas": formulas, "multi_output": len(s.returns) > 1, "list_output": returns_list(s),
            # Several differentiable outputs (eigh, svd, qr): the formula reads `grads`, one per
            # output, any of which may be undefined, so the node runs when any is defined.
            "multi_grads": len(s.returns) > 1 and any(re.search(r"\bgrads\b", fm.expression) for fm in d.formulas)}


def returns_list(s) -> bool:
    """The op returns one Tensor[] (split_with_sizes, unbind): its node has one input per element."""
    return len(s.returns) == 1 and s.returns[0].type.is_tensor_list


def save_lines(d: Derivative, inplace: bool) -> List[str]:
    s = d.function.schema
    layout = edge_layout(d, "node->")
    lines = []
    for name in d.saved_inputs:
        a = s.argument(name)
        if a.type.base == "Tensor":
            # Saved only when a gradient that needs it will be computed (as PyTorch),
            # so in-place changes to tensors nobody needs do not raise.
            users = [e for e in layout if re.search(rf"\b{name}\b",
                                                     next(fm for fm in d.formulas if e["arg"].name in fm.inputs).expression)]
            cond = " || ".join(e["valid"] for e in users)
            if a.type.is_list:
                lines.append(f"if ({cond}) for (const Tensor& t : {name}) node->{name}_.emplace_back(t, false);")
                continue
            # In-place: keep the old self. An argument that *is* self (x.mul_(x)) is saved as this
            # node's output (no cycle through its grad_fn) at its old version, so backward raises
            # the modified-by-an-inplace-operation error, as torch does.
            if inplace and a.name == "self":
                value, is_output = "self.clone()", "false"
            elif inplace:
                value, is_output = name, f"{name}.is_same(self)"
            else:
                value, is_output = name, "false"
            lines.append(f"if ({cond}) node->{name}_ = SavedVariable({value}, {is_output});")
        elif a.type.is_list and a.type.optional:
            lines.append(f"if ({name}) node->{name} = {name}->vec();")
        elif a.type.is_list:
            lines.append(f"node->{name} = {name}.vec();")
        else:
            lines.append(f"node->{name} = {name};")
    for m in d.saved_metadata:
        arg, call = m.split(".", 1)
        call = call[:-2]
        vec = METADATA_CALLS[call].startswith("std::vector")
        value = f"{{}}.{call}(){'.vec()' if vec else ''}"
        if s.argument(arg).type.is_list:
            lines.append(f"for (const Tensor& t : {arg}) node->{arg}_{call}.push_back({value.format('t')});")
        else:
            lines.append(f"node->{arg}_{call} = {value.format(arg)};")
    return lines


def output_views(nf: NativeFunction, d: Derivative) -> List[Dict]:
    """Each output of the wrapped call: its C++ expression, whether it gets the node as grad_fn,
    and the node field it is saved in (if a formula uses it)."""
    s = nf.schema
    outs = []
    if returns_list(s):  # each element is an output of the node (no formula saves them)
        return [{"expr": "result", "differentiable": d.output_is_differentiable(0), "save": None, "list": True}]
    for i, r in enumerate(s.returns):
        expr = "result" if len(s.returns) == 1 else f"std::get<{i}>(result)"
        name = "result" if len(s.returns) == 1 else r.name
        diff = d.output_is_differentiable(i)
        save = f"node->{name}_ = SavedVariable({expr}, {'true' if diff else 'false'});" \
            if name in d.saved_outputs else None
        outs.append({"expr": expr, "differentiable": diff, "save": save, "list": False})
    return outs


# Ops kiln declares non-differentiable whose out= torch still refuses under autograd: torch 1.13 gives
# them a derivative that raises (nextafter's `not_implemented`).
OUT_REFUSES_AUTOGRAD = {"nextafter"}


def wrapper_view(nf: NativeFunction) -> Dict:
    """The autograd kernel of one overload (registered at the Autograd key)."""
    s = nf.schema
    v = function_view(nf)
    d = nf.formula_source
    w = {"fn": v, "kind": "plain"}
    op_label = s.name
    head = nf.family_head
    if (s.is_out and head is not None and head.derivative is not None and not head.derivative.differentiable
            and s.name not in OUT_REFUSES_AUTOGRAD):
        # torch refuses out= under autograd only for differentiable ops: eq(a, b, out=) with a
        # requiring grad writes its bools (the functional's outputs are not differentiable).
        w["kind"] = "not_differentiable"
    elif s.is_out:
        w["kind"] = "out"
        w["message"] = (f"{s.name}(): functions with out=... arguments don't support automatic differentiation, "
                        f"but one of the arguments requires grad.")
    elif d is None:
        w["kind"] = "not_implemented"
        w["message"] = f"the derivative for '{s.full_name}' is not implemented."
        # In-place/out forms return a reference to their mutated argument: hold a value, return the argument.
        ref = v["ret"].startswith("const ")
        w["value_ret"] = "Tensor" if ref else v["ret"]
        w["return_expr"] = next(a.name for a in s.arguments if a.is_mutable) if ref else "result"
        if len(s.returns) == 1 and s.returns[0].type.is_tensor_list:
            w["not_floating"] = ("std::none_of(result.begin(), result.end(), "
                                 "[](const Tensor& t) { return t.defined() && t.is_floating_point(); })")
        elif len(s.returns) == 1:
            w["not_floating"] = "!result.is_floating_point()"
        else:
            w["not_floating"] = "!(" + " || ".join(f"std::get<{i}>(result).is_floating_point()"
                                                  for i in range(len(s.returns))) + ")"
    elif not d.differentiable:
        w["kind"] = "not_differentiable"
    else:
        w["kind"] = "inplace" if s.is_inplace else "functional"
        w["node"] = d.struct_name
        inputs = diff_inputs(d)
        w["requires_grad_refs"] = tensor_refs(inputs)
        w["edges"] = [f"for (const Tensor& t : {a.name}) node->add_next_edge(gradient_edge(t));\n"
                      f"    node->{a.name}_size_ = {a.name}.size();" if a.type.is_list
                      else f"node->add_next_edge(gradient_edge({a.name}));" for a in inputs]
        w["save"] = save_lines(d, s.is_inplace)
        w["uses_result"] = d.uses_result
        w["outputs"] = output_views(nf, d)
    w["op_label"] = op_label
    w["redispatch"] = f"kiln::{v['api_name']}({v['call_args']})"
    return w


def formula_ops(d: Derivative, op_names) -> List[str]:
    names = set()
    for fm in d.formulas:
        for m in re.finditer(r"([A-Za-z_][A-Za-z0-9_]*)\s*\(", fm.expression):
            if m.group(1) in op_names:
                names.add(m.group(1))
        if fm.fused_op:
            names.add(fm.fused_op)
    return sorted(names)


def calls_linalg_helper(d: Derivative) -> bool:
    """Whether a formula calls a helper of runtime/autograd/linalg_formula_helpers.h."""
    return any(m.group(1) in LINALG_HELPERS
               for fm in d.formulas for m in re.finditer(r"([A-Za-z_][A-Za-z0-9_]*)\s*\(", fm.expression))


def calls_fused_backward_helper(d: Derivative) -> bool:
    """Whether a formula calls a helper of runtime/autograd/fused_backward_helpers.h."""
    return any(m.group(1) in FUSED_BACKWARD_HELPERS
               for fm in d.formulas for m in re.finditer(r"([A-Za-z_][A-Za-z0-9_]*)\s*\(", fm.expression))


def calls_torch_backward_helper(d: Derivative) -> bool:
    """Whether a formula calls a helper of runtime/autograd/torch_backward_helpers.h."""
    return any(m.group(1) in TORCH_BACKWARD_HELPERS
               for fm in d.formulas for m in re.finditer(r"([A-Za-z_][A-Za-z0-9_]*)\s*\(", fm.expression))


# ----------------------------------------------------------------------------- Python bindings

# Ops whose out= kernel kiln keeps for C++ (the family's shared kernel) but torch's Python API has no
# out= for: torch 1.13's relu has no relu.out, so `torch.relu(x, out=o)` is its parser's TypeError.
NO_PYTHON_OUT = {"relu"}


def binding_overloads(funcs: List[NativeFunction], method: bool):
    """Overloads of one Python name, in the documented try order."""
    overloads = []
    for nf in funcs:
        s = nf.schema
        if nf.family_role == "out" and nf.family_head is not None and "function" in nf.family_head.variants \
                and not method:
            continue  # merged into its functional form as out=None
        args = list(s.arguments)
        out_nf = None
        if not method and nf.family_role == "functional" and s.name not in NO_PYTHON_OUT:
            out_nf = next((x for x in funcs if x.family_head is nf and x.family_role == "out"), None)
        if method:
            args = [a for a in args if a.name != "self"]
        py_args = list(args)
        if out_nf is not None:
            o = out_nf.schema.out_argument
            py_args.append(Argument(o.name, Type("Tensor", optional=True), "None", o.annotation, True))
        overloads.append({"nf": nf, "out_nf": out_nf, "args": args, "py_args": py_args})

    def order(o):
        pos = [a for a in o["py_args"] if not a.kwarg_only]
        scalars = sum(1 for a in pos if a.type.base == "Scalar")
        lists = sum(1 for a in pos if a.type.is_list and a.type.base == "int")
        return (scalars, lists)
    overloads.sort(key=order)
    return overloads


def binding_case(o, method: bool, index: int) -> Dict:
    """The C++ that runs when overload `index` of a Python binding matched."""
    nf, out_nf = o["nf"], o["out_nf"]
    s = nf.schema
    out_arg = out_nf.schema.out_argument if out_nf is not None else None
    lines = ["const Tensor& self = unpack_tensor(py_self);"] if method else []
    mutated_obj = "py_self" if method else None
    out_index = None
    for i, a in enumerate(o["py_args"]):
        if out_arg is not None and a.kwarg_only and a.name == out_arg.name:
            out_index = i
            continue
        lines += python_sig.extract(a, i)[0]
        if not method and a.is_mutable and mutated_obj is None:
            mutated_obj = f"r.object({i})"

    def returning(f: NativeFunction, obj) -> List[str]:
        fs = f.schema
        call = f"kiln::{cpp.api_name(f)}({cpp.call_args(cpp.api_args(f))})"
        if fs.returns and fs.returns[0].annotation is not None and fs.returns[0].annotation.is_write:
            return [f"without_gil([&] {{ {call}; }});", f"return new_reference({obj});"]
        if len(fs.returns) > 1:
            names = [r.name for r in fs.returns]
            if all(names):
                fields = ", ".join(f'"{n}"' for n in names)
                return [f'static PyTypeObject* const returns = named_tuple_type("{fs.name}", {{{fields}}});',
                        f"return wrap_tuple(returns, without_gil([&] {{ return {call}; }}));"]
            return [f"return wrap_tuple(nullptr, without_gil([&] {{ return {call}; }}));"]
        return [f"return wrap(without_gil([&] {{ return {call}; }}));"]

    body = list(lines)
    if out_nf is not None:
        body.append(f"if (r.is_none({out_index})) {{")
        body += ["  " + x for x in returning(nf, mutated_obj)]
        body.append("}")
        body.append(f"const Tensor out = r.tensor({out_index});")
        body += returning(out_nf, f"r.object({out_index})")
    else:
        body += returning(nf, mutated_obj)
    return {"index": index, "signature": python_sig.parser_signature(s.name, o["py_args"], not method),
            "body": body}


def binding_view(name: str, funcs: List[NativeFunction], method: bool) -> Dict:
    overloads = binding_overloads(funcs, method)
    cases = [binding_case(o, method, i) for i, o in enumerate(overloads)]
    return {"name": name, "c_name": ("method_" if method else "fn_") + name, "cases": cases, "method": method}


def pyi_lines(name: str, funcs: List[NativeFunction], method: bool) -> List[str]:
    overloads = binding_overloads(funcs, method)
    out = []
    for o in overloads:
        parts, star = (["self"] if method else []), False
        for a in o["py_args"]:
            if a.kwarg_only and not star:
                parts.append("*")
                star = True
            pname = "input" if (not method and a.name == "self") else a.name
            parts.append(f"{pname}: {python_sig.pyi_type(a.type)}{python_sig.pyi_default(a)}")
        rets = o["nf"].schema.returns
        ret = "Tensor" if len(rets) == 1 and not rets[0].type.is_list else \
            ("List[Tensor]" if len(rets) == 1 else "Tuple[" + ", ".join("Tensor" for _ in rets) + "]")
        prefix = "    " if method else ""
        if len(overloads) > 1:
            out.append(f"{prefix}@overload")
        out.append(f"{prefix}def {name}({', '.join(parts)}) -> {ret}: ...")
    return out


# ----------------------------------------------------------------------------- driver

def _display(path: str) -> str:
    """A path as shown in error messages: relative to the repository when inside it."""
    rel = os.path.relpath(os.path.abspath(path), ROOT)
    return path if rel.startswith("..") else rel


def render_all(schema_dir: str) -> Dict[str, str]:
    native = os.path.join(schema_dir, "native_functions.yaml")
    derivs = os.path.join(schema_dir, "derivatives.yaml")
    functions, derivatives = load(native, derivs, _display(native), _display(derivs))
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(os.path.join(ROOT, "templates")),
                             keep_trailing_newline=True, trim_blocks=True, lstrip_blocks=True,
                             undefined=jinja2.StrictUndefined)
    groups: "OrderedDict[str, List[NativeFunction]]" = OrderedDict()
    for nf in functions:
        if nf.schema.base_name in RESERVED_FILE_NAMES:
            raise CodegenError(f"op name '{nf.schema.base_name}' would overwrite generated/api/"
                               f"{nf.schema.base_name}.h; choose another name", nf.where)
        groups.setdefault(nf.schema.base_name, []).append(nf)
    op_names = {nf.schema.name for nf in functions}
    files: Dict[str, str] = {}

    def emit(path: str, template: str, **ctx):
        files[path] = env.get_template(template).render(**ctx)

    methods, api_functions = [], []
    py_functions, py_methods, pyi_funcs, pyi_methods = [], [], [], []
    for base, funcs in groups.items():
        views = [function_view(nf) for nf in funcs]
        methods += [v for v in views if v["is_method"]]
        api_functions += [v for v in views if v["is_function"]]
        kernels = OrderedDict()
        for nf in funcs:
            for ns, decl in kernel_decls(nf):
                kernels.setdefault(ns, [])
                if decl not in kernels[ns]:
                    kernels[ns].append(decl)
        dispatched = [nf for nf in funcs if not nf.is_composite_implicit]
        autograd = [wrapper_view(nf) for nf in dispatched if tensor_args(nf)]
        nodes = [node_view(nf.derivative) for nf in funcs if nf.derivative is not None and nf.derivative.differentiable]
        needed_ops = sorted({op for nf in funcs if nf.derivative for op in formula_ops(nf.derivative, op_names)})
        needed_headers = sorted({next(f.schema.base_name for f in functions if f.schema.name == op)
                                 for op in needed_ops} - {base})
        emit(f"api/{base}.h", "api_op.h.j2", base=base, fns=views)
        implicit = kernels.pop("composite_implicit", [])
        if kernels:
            emit(f"kernels/{base}.h", "kernels.h.j2", base=base, kernels=kernels)
        if implicit:
            emit(f"kernels/composite/{base}.h", "composite_kernels.h.j2", base=base, decls=implicit)
        emit(f"ops/{base}.cc", "ops.cc.j2", base=base, fns=views, has_autograd=bool(autograd),
             has_kernels=bool(kernels), has_implicit=bool(implicit),
             has_write_out=any(writes_functional_result(nf) for nf in funcs))
        if autograd:
            emit(f"autograd/{base}.h", "autograd.h.j2", base=base, wrappers=autograd)
            emit(f"autograd/{base}.cc", "autograd.cc.j2", base=base, wrappers=autograd, nodes=nodes,
                 headers=needed_headers,
                 fused_helpers=any(nf.derivative and calls_fused_backward_helper(nf.derivative) for nf in funcs),
                 torch_helpers=any(nf.derivative and calls_torch_backward_helper(nf.derivative) for nf in funcs),
                 linalg_helpers=any(nf.derivative and calls_linalg_helper(nf.derivative) for nf in funcs))
        # Python: functions and methods named after this group.
        bindings = []
        by_py_name: "OrderedDict[tuple, List[NativeFunction]]" = OrderedDict()
        for nf in funcs:
            if "function" in nf.variants or nf.family_role == "out":
                # Private ops (_to_copy, _unique2, the fused recurrent kernels) are bound too: `from ._C
                # import *` leaves them out of kiln's namespace, as torch keeps them out of its own.
                by_py_name.setdefault((nf.schema.name, False), []).append(nf)
            if "method" in nf.variants:
                by_py_name.setdefault((nf.schema.name, True), []).append(nf)
        for (name, is_method), fs in by_py_name.items():
            b = binding_view(name, fs, is_method)
            bindings.append(b)
            (py_methods if is_method else py_functions).append(b)
            (pyi_methods if is_method else pyi_funcs).extend(pyi_lines(name, fs, is_method))
        if bindings:
            tuples = any(len(nf.schema.returns) > 1 or (nf.schema.returns and nf.schema.returns[0].type.is_list)
                         for nf in funcs)
            emit(f"python/{base}.cc", "python_op.cc.j2", base=base, bindings=bindings, tuples=tuples)
    # Pointwise formulas: a scalar functor and a CPU kernel (with a vector loop where the formula has
    # one) per op, and the table of every tree.
    formulas = []
    formula_names = Counter(nf.schema.name for nf in functions if nf.pointwise is not None)
    for nf in functions:
        f = nf.pointwise
        if f is None:
            continue
        name, base = nf.schema.name, nf.schema.base_name
        op = pointwise.formula_key(name, nf.schema.overload, formula_names)
        params = ", ".join(f"T {a}" for a in f.args)
        source = "schema/derivatives.yaml" if nf.fused_backward_of else "schema/native_functions.yaml"
        fused_of = f"{nf.fused_backward_of[0]}'s derivative for {nf.fused_backward_of[1]}" if nf.fused_backward_of else ""
        emit(f"pointwise/{op}.h", "pointwise_functor.h.j2", op=op, formula=f.text, params=params, source=source,
             fused_of=fused_of, cast_to=f.cast_to,
             body=pointwise.render_body(f), returns_bool=f.returns_bool, scalars=f.scalars)
        row = dict(op=name, key=op, overload=nf.schema.full_name, text=c_string_body(f.text),
                   args=[f'"{a}"' for a in f.args], scalars=[f'"{a}"' for a in f.scalars],
                   nodes=pointwise.table_rows(f.root),
                   dtypes=f.dtypes, int_to_float=f.promote == "int_to_float", returns_bool=f.returns_bool,
                   scalars_promote=f.promote == "scalars", cast_to=f'"{f.cast_to}"' if f.cast_to else "nullptr")
        formulas.append(row)
        if f.cast_to:  # its kernel is the conversion loop its dispatch: names (element_convert.cc)
            continue
        signature = next(d for ns, d in kernel_decls(nf) if ns == "cpu").rstrip(";")
        has_out = nf.dispatch["CPU"].endswith("_out")
        loop = {1: "unary_kernel", 2: "binary_kernel", 3: "ternary_kernel"}[len(f.args)]
        # The loop's element types: the result, then each input (bool_args are read as bool).
        out_t = "bool" if f.returns_bool else "scalar_t"
        loop_types = [out_t] + ["bool" if a in f.bool_args else "scalar_t" for a in f.args]
        if loop != "ternary_kernel":
            loop_types = loop_types[:2]
        # float32 runs get a vector loop (Highway, dispatched at run time) when the formula has one.
        scalar_why = pointwise.vector_unsupported(f)
        emit(f"cpu/{op}.cc", "pointwise_kernel.cc.j2", op=op, name=name, base=base, formula=f.text, signature=signature,
             source=source, fused_of=fused_of,
             config=pointwise.iterator_config(f, op, f.args, "out" if re.search(r"const TensorBase& out\b", signature) else "TensorBase()"),
             dispatch=pointwise.DTYPE_SETS[f.dtypes], loop=loop, loop_types=", ".join(loop_types), has_out=has_out,
             returns_bool=f.returns_bool, meta=f.meta or f.choices,
             scalar_values=", ".join(pointwise.scalar_value(f, s, name) for s in f.scalars),
             vector=scalar_why is None, scalar_why=scalar_why, nargs=len(f.args), scalars=f.scalars,
             first_t="bool" if f.args[0] in f.bool_args else "float",
             vector_params=", ".join(f"V {a}" for a in f.args),
             vector_body=None if scalar_why else pointwise.render_vector(f.root, f.args, f.scalars),
             lanes=pointwise.vector_lanes(f), kind=pointwise.vector_kind(f), library=f.library,
             library_args=", ".join(re.findall(r"(\w+)(?=[,)])", signature.split("(", 1)[1])))
    # Their derivatives, one row per input: the trees of derivatives.yaml's expression-language entries.
    derivatives = []
    for nf in functions:
        if nf.pointwise is None or nf.derivative is None or nf.pointwise.cast_to:
            continue
        key = pointwise.formula_key(nf.schema.name, nf.schema.overload, formula_names)
        for fm in nf.derivative.formulas:
            derivatives.append(dict(
                op=nf.schema.full_name, key=key, input=fm.inputs[0], text=c_string_body(fm.source),
                args=[f'"{a}"' for a in pointwise.DERIVATIVE_NAMES + nf.pointwise.args],
                scalars=[f'"{a}"' for a in nf.pointwise.scalars],
                nodes=pointwise.table_rows(fm.tree)))
    emit("jit/formula_ops.h", "formula_ops.h.j2", kinds=[pointwise.enum_name(k) for k in pointwise.NODE_KINDS])
    emit("jit/pointwise_formulas.cc", "pointwise_table.cc.j2", formulas=formulas, derivatives=derivatives)
    emit("api/tensor.h", "tensor.h.j2", methods=[m for m in methods if m["runtime_method"]])
    emit("api/kiln.h", "kiln.h.j2", bases=list(groups), methods=methods, functions=api_functions)
    emit("python/bindings.cc", "python_bindings.cc.j2", functions=py_functions, methods=py_methods)
    emit("python/_C.pyi", "pyi.j2", functions=pyi_funcs, methods=pyi_methods)
    emit("fuzz/ops.cc", "fuzz_ops.cc.j2", entries=fuzz_table.fuzz_entries(functions))
    return files


def write(files: Dict[str, str], out_dir: str) -> None:
    for rel, text in sorted(files.items()):
        path = os.path.join(out_dir, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        if os.path.exists(path):
            with open(path) as f:
                if f.read() == text:
                    continue  # unchanged: keep the timestamp so nothing recompiles
        with open(path, "w") as f:
            f.write(text)
    # Remove files no longer produced.
    for dirpath, _, names in os.walk(out_dir):
        for n in names:
            rel = os.path.relpath(os.path.join(dirpath, n), out_dir)
            if rel not in files and rel not in ("README.md", BUILD_TARGETS):
                os.remove(os.path.join(dirpath, n))


BUILD_TARGETS = "build_targets.bzl"  # written by tools/gen_build.py into the same folder


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=os.path.join(ROOT, "generated"), help="output directory")
    ap.add_argument("--schema", default=os.path.join(ROOT, "schema"), help="directory with the two YAML files")
    args = ap.parse_args(argv)
    try:
        files = render_all(args.schema)
    except CodegenError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    except jinja2.TemplateError as e:
        print(f"error: templates: {e}", file=sys.stderr)
        return 1
    write(files, args.out)
    # The per-file Bazel targets (tools/gen_build.py), from runtime/ and what was just written.
    problems = gen_build.write(ROOT, args.out)
    if problems:
        print("error: includes that break the layering (docs/ARCHITECTURE.md, \"Layers\"):", file=sys.stderr)
        for p in problems:
            print("  " + p, file=sys.stderr)
        return 1
    if args.out == ap.get_default("out") and args.schema == ap.get_default("schema"):
        # The op coverage table in docs/ reads the schema and the op test records.
        subprocess.run([sys.executable, os.path.join(ROOT, "tools", "gen_op_coverage.py")], check=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
