"""Pointwise formulas: an op's scalar math written once in the schema, in a small expression
language, parsed here into a tree that the code generator renders (a host+device scalar functor,
a CPU kernel with a vector loop over Highway vectors for float32: render_vector) and writes out as
data (the expression table the interpreter and the JIT read).

The language (docs/POINTWISE_FORMULAS.md) is a subset of Python expressions, parsed with `ast`
and never evaluated:

    names        the op's arguments (self, other, ...)
    literals     1, 0.5, True, False
    arithmetic   a + b, a - b, a * b, a / b, -a
    comparisons  a < b, a <= b, a > b, a >= b, a == b, a != b   (one comparison per operator)
    logic        a and b, a or b, not a
    select       x if cond else y
    intrinsics   exp(x), expm1(x), log(x), log1p(x), sin(x), cos(x), tanh(x), erf(x), sqrt(x)

Arithmetic happens in the op's compute dtype (float32 for float16/bfloat16 inputs).
"""
from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Tuple

from model import CodegenError

# Intrinsic -> number of arguments. Each is a function of runtime/kernels/pointwise_math.h with
# the same name, overloaded for float and double.
INTRINSICS: Dict[str, int] = {
    "exp": 1, "expm1": 1, "log": 1, "log1p": 1, "sin": 1, "cos": 1, "tanh": 1, "erf": 1, "sqrt": 1,
}

# Tree node kinds, shared with runtime/jit/formula.h (FormulaOp): the order is the enum's.
BINARY = {ast.Add: "add", ast.Sub: "sub", ast.Mult: "mul", ast.Div: "div"}
COMPARE = {ast.Lt: "lt", ast.LtE: "le", ast.Gt: "gt", ast.GtE: "ge", ast.Eq: "eq", ast.NotEq: "ne"}
NODE_KINDS: List[str] = (["arg", "const", "neg", "not", "and", "or", "select"] + list(BINARY.values())
                         + list(COMPARE.values()) + list(INTRINSICS))

CXX_BINARY = {"add": "+", "sub": "-", "mul": "*", "div": "/"}
CXX_COMPARE = {"lt": "<", "le": "<=", "gt": ">", "ge": ">=", "eq": "==", "ne": "!="}

DTYPE_SETS = {  # formula dtypes -> the dispatch macro over the compute dtype
    "floating": "KILN_DISPATCH_FLOATING_TYPES",
    "numeric": "KILN_DISPATCH_NUMERIC_TYPES",
    "all": "KILN_DISPATCH_ALL_TYPES",
}
PROMOTE_RULES = ("int_to_float", "none")


@dataclass
class Node:
    kind: str
    children: List["Node"] = field(default_factory=list)
    arg: int = -1          # kind 'arg': which argument
    value: float = 0.0     # kind 'const'
    is_int: bool = False   # kind 'const': written as an integer (or a bool)


@dataclass
class PointwiseFormula:
    text: str                  # as written in the schema
    args: List[str]            # the op's tensor arguments, in order
    root: Node
    dtypes: str                # a DTYPE_SETS key
    promote: str               # a PROMOTE_RULES entry
    returns_bool: bool         # the root is a comparison or logic: the op writes bool

    def postorder(self) -> List[Node]:
        out: List[Node] = []

        def walk(n: Node) -> None:
            for c in n.children:
                walk(c)
            out.append(n)
        walk(self.root)
        return out


def parse_formula(spec: object, tensor_args: List[str]) -> PointwiseFormula:
    """The `pointwise:` entry of an op ({formula, dtypes, promote}), checked; errors say what is wrong."""
    if not isinstance(spec, dict):
        raise CodegenError("pointwise: expected a mapping {formula: ..., dtypes: ..., promote: ...}")
    spec = {k: v for k, v in spec.items() if k != "__line__"}
    unknown = sorted(set(spec) - {"formula", "dtypes", "promote"})
    if unknown:
        raise CodegenError(f"pointwise: unknown key '{unknown[0]}' (known: dtypes, formula, promote)")
    text = spec.get("formula")
    if not isinstance(text, str) or not text.strip():
        raise CodegenError("pointwise: 'formula' must be a non-empty string")
    dtypes = spec.get("dtypes", "floating")
    if dtypes not in DTYPE_SETS:
        raise CodegenError(f"pointwise: dtypes must be one of {', '.join(DTYPE_SETS)}, got '{dtypes}'")
    promote = spec.get("promote", "none")
    if promote not in PROMOTE_RULES:
        raise CodegenError(f"pointwise: promote must be one of {', '.join(PROMOTE_RULES)}, got '{promote}'")
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except SyntaxError as e:
        raise CodegenError(f"pointwise: formula '{text}': syntax error at column {e.offset}")
    root = _convert(tree.body, tensor_args, text)
    used = {n.arg for n in _nodes(root) if n.kind == "arg"}
    missing = [a for i, a in enumerate(tensor_args) if i not in used]
    if missing:
        raise CodegenError(f"pointwise: formula '{text}' does not use argument '{missing[0]}'")
    floating_only = [n.kind for n in _nodes(root) if n.kind in INTRINSICS or n.kind == "div"]
    if floating_only and dtypes != "floating" and promote != "int_to_float":
        what = "'/'" if floating_only[0] == "div" else f"{floating_only[0]}()"
        raise CodegenError(f"pointwise: formula '{text}': {what} needs a floating compute dtype "
                           "(dtypes: floating, or promote: int_to_float)")
    returns_bool = root.kind in COMPARE.values() or root.kind in ("not", "and", "or")
    return PointwiseFormula(text.strip(), list(tensor_args), root, dtypes, promote, returns_bool)


def _nodes(n: Node) -> List[Node]:
    return [n] + [m for c in n.children for m in _nodes(c)]


def _convert(e: ast.AST, args: List[str], text: str) -> Node:
    def bad(what: str) -> CodegenError:
        return CodegenError(f"pointwise: formula '{text}': {what}")

    if isinstance(e, ast.Name):
        if e.id not in args:
            raise bad(f"unknown name '{e.id}' (the op's tensor arguments are: {', '.join(args)})")
        return Node("arg", arg=args.index(e.id))
    if isinstance(e, ast.Constant):
        if isinstance(e.value, bool):
            return Node("const", value=float(e.value), is_int=True)
        if isinstance(e.value, (int, float)):
            return Node("const", value=float(e.value), is_int=isinstance(e.value, int))
        raise bad(f"unsupported literal {e.value!r}")
    if isinstance(e, ast.UnaryOp):
        operand = _convert(e.operand, args, text)
        if isinstance(e.op, ast.USub):
            if operand.kind == "const":
                return Node("const", value=-operand.value, is_int=operand.is_int)
            return Node("neg", [operand])
        if isinstance(e.op, ast.Not):
            return Node("not", [operand])
        raise bad(f"unsupported unary operator {type(e.op).__name__}")
    if isinstance(e, ast.BinOp):
        kind = BINARY.get(type(e.op))
        if kind is None:
            raise bad(f"unsupported operator {type(e.op).__name__}")
        return Node(kind, [_convert(e.left, args, text), _convert(e.right, args, text)])
    if isinstance(e, ast.Compare):
        if len(e.ops) != 1:
            raise bad("chained comparisons (a < b < c) are not supported: write (a < b) and (b < c)")
        kind = COMPARE.get(type(e.ops[0]))
        if kind is None:
            raise bad(f"unsupported comparison {type(e.ops[0]).__name__}")
        return Node(kind, [_convert(e.left, args, text), _convert(e.comparators[0], args, text)])
    if isinstance(e, ast.BoolOp):
        kind = "and" if isinstance(e.op, ast.And) else "or"
        node = _convert(e.values[0], args, text)
        for v in e.values[1:]:
            node = Node(kind, [node, _convert(v, args, text)])
        return node
    if isinstance(e, ast.IfExp):
        return Node("select", [_convert(e.test, args, text), _convert(e.body, args, text),
                               _convert(e.orelse, args, text)])
    if isinstance(e, ast.Call):
        if not isinstance(e.func, ast.Name) or e.keywords:
            raise bad("calls are intrinsic names with positional arguments, e.g. exp(self)")
        arity = INTRINSICS.get(e.func.id)
        if arity is None:
            raise bad(f"unknown intrinsic '{e.func.id}' (known: {', '.join(INTRINSICS)})")
        if len(e.args) != arity:
            raise bad(f"{e.func.id}() takes {arity} argument(s), got {len(e.args)}")
        return Node(e.func.id, [_convert(a, args, text) for a in e.args])
    raise bad(f"unsupported expression {type(e).__name__}")


# ---- rendering ----

def _literal(n: Node) -> str:
    if n.is_int:
        return f"T({int(n.value)})"
    return f"T({repr(n.value)})"


def render_cxx(n: Node, args: List[str]) -> str:
    """The expression in C++ over values of type T (the compute dtype), intrinsics from pm::."""
    k = n.kind
    c = [render_cxx(ch, args) for ch in n.children]
    if k == "arg":
        return args[n.arg]
    if k == "const":
        return _literal(n)
    if k == "neg":
        return f"-{_paren(n.children[0], c[0])}"
    if k == "not":
        return f"!{_paren(n.children[0], c[0])}"
    if k in ("and", "or"):
        return f"({c[0]} {'&&' if k == 'and' else '||'} {c[1]})"
    if k == "select":
        return f"({c[0]} ? {c[1]} : {c[2]})"
    if k in CXX_BINARY:
        return f"({c[0]} {CXX_BINARY[k]} {c[1]})"
    if k in CXX_COMPARE:
        return f"({c[0]} {CXX_COMPARE[k]} {c[1]})"
    return f"pm::{k}({', '.join(c)})"


def _paren(n: Node, text: str) -> str:
    return text if n.kind in ("arg", "const") or text.startswith("(") or n.kind in INTRINSICS else f"({text})"


def render_body(f: PointwiseFormula) -> str:
    text = render_cxx(f.root, f.args)
    if text.startswith("(") and text.endswith(")") and _balanced(text[1:-1]):
        text = text[1:-1]
    return text


def _balanced(s: str) -> bool:
    depth = 0
    for ch in s:
        depth += ch == "("
        depth -= ch == ")"
        if depth < 0:
            return False
    return depth == 0


# ---- the vector rendering (CPU kernels, Highway) ----

# Intrinsic -> its vector function in runtime/kernels/cpu/vector_formula-inl.h (Highway's math, in
# double lanes, with the IEEE special cases the C library gives). An intrinsic missing here
# has no vector version (Highway 1.0.3 has no erf): a formula using it keeps the scalar kernel.
VECTOR_INTRINSICS: Dict[str, str] = {
    "exp": "kv::Exp", "expm1": "kv::Expm1", "log": "kv::Log", "log1p": "kv::Log1p", "sin": "kv::Sin",
    "cos": "kv::Cos", "tanh": "kv::Tanh", "sqrt": "kv::Sqrt",
}
# Intrinsics IEEE rounds exactly (like + - * /): a formula using no others is computed in float
# lanes, bit for bit as its scalar functor; any other intrinsic puts the formula in double lanes.
EXACT_INTRINSICS = {"sqrt"}
VECTOR_BINARY = {"add": "hn::Add", "sub": "hn::Sub", "mul": "hn::Mul", "div": "hn::Div"}
VECTOR_COMPARE = {"lt": "hn::Lt", "le": "hn::Le", "gt": "hn::Gt", "ge": "hn::Ge", "eq": "hn::Eq", "ne": "hn::Ne"}
_BOOL_KINDS = set(COMPARE.values()) | {"not", "and", "or"}


def vector_unsupported(f: PointwiseFormula) -> Optional[str]:
    """Why the formula has no vector kernel (None when it has one). Vectorized: one-argument
    formulas with a floating result whose intrinsics all have a vector version."""
    if len(f.args) != 1:
        return "vector kernels take one-argument formulas for now"
    if f.returns_bool:
        return "vector kernels write floating results only for now"
    missing = sorted({n.kind for n in _nodes(f.root) if n.kind in INTRINSICS and n.kind not in VECTOR_INTRINSICS})
    if missing:
        return f"no vector {missing[0]}() (Highway 1.0.3 has none)"
    return None


def vector_lanes(f: PointwiseFormula) -> str:
    """The C++ type of the vector lanes a float32 formula is computed in (vector_formula-inl.h):
    'float' for exact operations only (the scalar functor's bits), else 'double' (rounded once)."""
    inexact = [n for n in _nodes(f.root) if n.kind in INTRINSICS and n.kind not in EXACT_INTRINSICS]
    return "double" if inexact else "float"


def render_vector(n: Node, args: List[str]) -> str:
    """The same tree as render_cxx, over Highway vectors (double or float lanes, vector_lanes): `d`
    is the lanes' tag, each argument a vector. Comparisons and logic give masks; a mask used as a
    number, or a number used as a condition, is converted as C++ converts bool (kv::FromBool,
    kv::ToBool)."""
    def value(c: Node) -> str:
        text = render_vector(c, args)
        return f"kv::FromBool(d, {text})" if c.kind in _BOOL_KINDS else text

    def mask(c: Node) -> str:
        text = render_vector(c, args)
        return text if c.kind in _BOOL_KINDS else f"kv::ToBool(d, {text})"

    k = n.kind
    if k == "arg":
        return args[n.arg]
    if k == "const":
        return f"kv::Literal(d, {int(n.value) if n.is_int else repr(n.value)})"
    if k == "neg":
        return f"hn::Neg({value(n.children[0])})"
    if k == "not":
        return f"hn::Not({mask(n.children[0])})"
    if k in ("and", "or"):
        return f"hn::{'And' if k == 'and' else 'Or'}({mask(n.children[0])}, {mask(n.children[1])})"
    if k == "select":
        return f"hn::IfThenElse({mask(n.children[0])}, {value(n.children[1])}, {value(n.children[2])})"
    if k in VECTOR_BINARY:
        return f"{VECTOR_BINARY[k]}({value(n.children[0])}, {value(n.children[1])})"
    if k in VECTOR_COMPARE:
        return f"{VECTOR_COMPARE[k]}({value(n.children[0])}, {value(n.children[1])})"
    if k in VECTOR_INTRINSICS:
        return f"{VECTOR_INTRINSICS[k]}(d, {', '.join(value(c) for c in n.children)})"
    raise CodegenError(f"pointwise: no vector rendering of {k}()")


def table_nodes(f: PointwiseFormula) -> List[Tuple[str, int, int, int, int, float]]:
    """The tree in postorder as (kind, child indices a b c, arg, literal) rows: each child is an
    earlier row, the root is the last."""
    order = f.postorder()
    index = {id(n): i for i, n in enumerate(order)}
    rows = []
    for n in order:
        ch = [index[id(c)] for c in n.children] + [-1, -1, -1]
        rows.append((n.kind, ch[0], ch[1], ch[2], n.arg, n.value))
    return rows


def iterator_config(f: PointwiseFormula, op: str, arg_exprs: List[str]) -> str:
    """The named IteratorConfig the generated kernel builds (tensor_iterator.h)."""
    inputs = ", ".join(arg_exprs)
    if f.returns_bool:
        if len(arg_exprs) != 2:
            raise CodegenError("pointwise: a bool-valued formula needs exactly two tensor arguments for now")
        return f'IteratorConfig::comparison("{op}", {inputs}, out)'
    kind = {1: "unary", 2: "binary"}.get(len(arg_exprs))
    if kind is None:
        raise CodegenError("pointwise: formulas of one or two tensor arguments for now")
    suffix = "_float" if f.promote == "int_to_float" else ""
    return f'IteratorConfig::{kind}{suffix}("{op}", {inputs}, out)'


def enum_name(kind: str) -> str:
    """The FormulaOp enumerator of a node kind (generated/jit/formula_ops.h)."""
    return kind[:1].upper() + kind[1:]
