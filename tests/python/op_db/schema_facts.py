"""What the schema says about each op, read with the code generator's own loader.

One `OpFacts` per declared overload (an op's in-place and out= family members are folded into
its functional form, as `inplace` and `out`). The generated checks use these facts, so an op
gains its in-place, out=, dim and size checks by being declared, not by being remembered.
"""
from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field
from typing import Dict, List, Optional

# codegen/gen.py's NO_PYTHON_OUT: ops whose out= kernel has no Python binding (torch 1.13 has no relu.out)
NO_PYTHON_OUT = {"relu"}

REPO = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", ".."))


@dataclass
class OpFacts:
    name: str                         # 'add.Tensor'
    function: bool                    # kiln.<op>(...)
    method: bool                      # tensor.<op>(...)
    inplace: Optional[str]            # 'add_' when the family declares it
    out: bool                         # kiln.<op>(..., out=) exists
    is_view: bool
    tensor_args: List[str]            # Tensor, Tensor? and Tensor[] arguments, in order
    first_arg_is_tensor: bool
    mutates_self: bool                # Tensor(a!) self: fill_, add_, copy_, ...
    dim_args: List[str]               # `int dim`-like arguments (dim, dim0, dim1, source, ...)
    size_args: List[str]              # `int[] size`-like arguments
    differentiable_args: List[str]    # inputs with a backward formula
    non_differentiable_args: List[str]
    differentiable: bool              # some output can require grad
    has_formula: bool                 # a derivatives.yaml entry, or a composite of such ops
    composite: bool
    returns: int
    arguments: List[str] = field(default_factory=list)


_DIM_NAMES = {"dim", "dim0", "dim1", "source", "destination", "start_dim", "end_dim"}
_SIZE_NAMES = {"size", "shape", "sizes"}


def _load():
    sys.path.insert(0, os.path.join(REPO, "codegen"))
    try:
        import loader
    finally:
        sys.path.pop(0)
    return loader.load(os.path.join(REPO, "schema", "native_functions.yaml"),
                       os.path.join(REPO, "schema", "derivatives.yaml"),
                       "schema/native_functions.yaml", "schema/derivatives.yaml")


def load_facts() -> Dict[str, OpFacts]:
    functions, _ = _load()
    members = {}
    for nf in functions:
        if nf.family_head is not None:
            members.setdefault(nf.family_head.schema.full_name, {})[nf.family_role] = nf
    facts = {}
    for nf in functions:
        if nf.family_role in ("inplace", "out"):
            continue
        s = nf.schema
        fam = members.get(s.full_name, {})
        d = nf.formula_source
        tensors = [a.name for a in s.arguments if a.type.is_tensor or a.type.is_tensor_list]
        nondiff = list(d.non_differentiable) if d else []
        differentiable = bool(d and d.differentiable) or nf.is_composite_implicit
        diff_args = [f_in for f in d.formulas for f_in in f.inputs] if d and d.differentiable else []
        facts[s.full_name] = OpFacts(
            name=s.full_name,
            function="function" in nf.variants,
            method="method" in nf.variants,
            inplace=fam["inplace"].schema.name if "inplace" in fam else None,
            out=("out" in fam or s.is_out) and s.full_name not in NO_PYTHON_OUT,
            is_view=s.is_view,
            tensor_args=tensors,
            first_arg_is_tensor=bool(s.arguments) and s.arguments[0].type.is_tensor,
            mutates_self=bool(s.arguments) and s.arguments[0].is_mutable,
            dim_args=[a.name for a in s.arguments if a.name in _DIM_NAMES and str(a.type) in ("int", "int?")],
            size_args=[a.name for a in s.arguments if a.name in _SIZE_NAMES and str(a.type).startswith("int[")],
            differentiable_args=[a for a in diff_args if a not in nondiff],
            non_differentiable_args=nondiff,
            differentiable=differentiable,
            has_formula=d is not None,
            composite=nf.is_composite_implicit,
            returns=len(s.returns),
            arguments=[a.name for a in s.arguments],
        )
    return facts


FACTS = load_facts()


def vector_formula_ops() -> Dict[str, str]:
    """Every overload with a pointwise formula ("exp", "pow.Tensor_Scalar") -> how its generated CPU
    kernel's float32 vector loop computes: 'sleef' (float lanes, Sleef's functions), 'double' (double
    lanes, rounded once) or 'exact' (float lanes, exact operations), or 'scalar: <why not>' where it
    has none (codegen/pointwise.py decides what is generated: vector_unsupported, vector_kind)."""
    sys.path.insert(0, os.path.join(REPO, "codegen"))
    try:
        import pointwise
    finally:
        sys.path.pop(0)
    functions, _ = _load()
    out = {}
    for nf in functions:
        if nf.pointwise is not None:
            why = pointwise.vector_unsupported(nf.pointwise)
            out[nf.schema.full_name] = f"scalar: {why}" if why else pointwise.vector_kind(nf.pointwise)
    return out
