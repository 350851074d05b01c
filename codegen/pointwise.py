"""Pointwise formulas: an op's scalar math written once in the schema, in a small expression
language, parsed here into a tree that the code generator renders (a host+device scalar functor,
a CPU kernel with a vector loop over Highway vectors for float32: render_vector) and writes out as
data (the expression table the interpreter and the JIT read).

The language (docs/POINTWISE_FORMULAS.md) is a subset of Python expressions, parsed with `ast`
and never evaluated:

    names        the op's arguments: tensors (self, other, ...) and Scalars (alpha, ...)
    literals     1, 0.5, True, False
    arithmetic   a + b, a - b, a * b, a / b, -a
    bitwise      a & b, a | b, a ^ b, ~a                       (dtypes: integral; ~ of a bool is not)
    shifts       a << b, a >> b                                (dtypes: integral; torch's out-of-range counts)
    comparisons  a < b, a <= b, a > b, a >= b, a == b, a != b   (one comparison per operator)
    logic        a and b, a or b, not a
    select       x if cond else y
    intrinsics   exp(x), expm1(x), log(x), log1p(x), sin(x), cos(x), tanh(x), erf(x), sqrt(x),
                 atan2(y, x)                                   (floating compute dtypes only)
                 log2 log10 exp2 asin acos atan sinh cosh tan asinh acosh atanh erfc erfinv (x),
                 hypot(a, b) copysign(a, b)                    (floating compute dtypes only)
                 fma(a, b, c)                                  (a * b + c rounded once; floating only)
                 nextafter(a, b)                               (floating only)
                 lgamma(x), digamma(x), trigamma(x)            (log|gamma|, polygamma 0 and 1; floating
                                                                only; no vector version: torch's are scalar)
                 gcd(a, b), lcm(a, b)                          (integers only: dtypes integral and a meta
                                                                function refusing bool)
                 abs(x), floor(x), ceil(x), trunc(x), round(x) (half to even; integers unchanged)
                 minimum(a, b), maximum(a, b)                  (a NaN operand wins)
                 sign(x)                                       (-1, 0 or 1; 0 for NaN)
                 pow(a, b), pow_scalar(a, b), fmod(a, b)      (pow_scalar: torch's special exponents)
                 isnan(x), isinf(x), isfinite(x)               (bool)
    floor division and remainder: a // b, a % b                (Python's: the divisor's sign)
    cast         cast(x, dtype)                                (the whole formula only: x converted to
                                                                the op's ScalarType argument `dtype`)

Arithmetic happens in the op's compute dtype (float32 for float16/bfloat16 inputs); Scalars are
converted to it; comparisons and logic are bool. `/` and the floating intrinsics need a floating
compute dtype (dtypes: floating, or promote: int_to_float).
"""
from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Tuple

from model import CodegenError

# Intrinsic -> (number of arguments, floating compute dtypes only). Each is a function of
# runtime/kernels/pointwise_math.h with the same name.
INTRINSICS: Dict[str, Tuple[int, bool]] = {
    "exp": (1, True), "expm1": (1, True), "log": (1, True), "log1p": (1, True), "sin": (1, True),
    "cos": (1, True), "tanh": (1, True), "erf": (1, True), "sqrt": (1, True), "atan2": (2, True),
    "abs": (1, False), "floor": (1, False), "ceil": (1, False), "trunc": (1, False), "round": (1, False),
    "minimum": (2, False), "maximum": (2, False), "sign": (1, False),
    "pow": (2, False), "pow_scalar": (2, False), "fmod": (2, False), "isnan": (1, False), "isinf": (1, False), "isfinite": (1, False),
    "log2": (1, True), "log10": (1, True), "exp2": (1, True), "asin": (1, True), "acos": (1, True), "atan": (1, True),
    "sinh": (1, True), "cosh": (1, True), "tan": (1, True), "asinh": (1, True), "acosh": (1, True), "atanh": (1, True),
    "erfc": (1, True), "erfinv": (1, True), "hypot": (2, True), "copysign": (2, True), "fma": (3, True),
    "nextafter": (2, True), "gcd": (2, False), "lcm": (2, False),
    "lgamma": (1, True), "digamma": (1, True), "trigamma": (1, True),
}
# Intrinsics of integer compute dtypes only (not bool): a formula using one needs a meta function
# refusing the others (gcd_meta).
INTEGER_INTRINSICS = {"gcd", "lcm"}
# Intrinsics whose value is a bool (as comparisons are).
BOOL_INTRINSICS = {"isnan", "isinf", "isfinite"}

MAX_NODES = 128  # the most nodes of a tree: runtime/jit/formula_interpreter.h kMaxFormulaNodes

# Tree node kinds, shared with runtime/jit/formula.h (FormulaOp): the order is the enum's.
BINARY = {ast.Add: "add", ast.Sub: "sub", ast.Mult: "mul", ast.Div: "div", ast.FloorDiv: "floordiv", ast.Mod: "mod"}
BITWISE = {ast.BitAnd: "bitand", ast.BitOr: "bitor", ast.BitXor: "bitxor", ast.LShift: "lshift",
           ast.RShift: "rshift"}
COMPARE = {ast.Lt: "lt", ast.LtE: "le", ast.Gt: "gt", ast.GtE: "ge", ast.Eq: "eq", ast.NotEq: "ne"}
NODE_KINDS: List[str] = (["arg", "scalar", "const", "neg", "not", "and", "or", "select"] + list(BINARY.values())
                         + list(COMPARE.values()) + list(INTRINSICS) + list(BITWISE.values()) + ["bitnot", "cast"])

CXX_BINARY = {"add": "+", "sub": "-", "mul": "*", "div": "/", "bitand": "&", "bitor": "|", "bitxor": "^"}
# Shifts as pm:: functions: C++'s << and >> are undefined for counts out of range, torch's are not.
CXX_SHIFTS = {"lshift": "pm::left_shift", "rshift": "pm::right_shift"}
# Python's // and % (floor division, the remainder with the divisor's sign), as pm:: functions.
CXX_BINARY_CALLS = {"floordiv": "pm::floor_divide", "mod": "pm::remainder"}
CXX_COMPARE = {"lt": "<", "le": "<=", "gt": ">", "ge": ">=", "eq": "==", "ne": "!="}

DTYPE_SETS = {  # formula dtypes -> the dispatch macro over the compute dtype
    "floating": "KILN_DISPATCH_FLOATING_TYPES",
    "numeric": "KILN_DISPATCH_NUMERIC_TYPES",
    "all": "KILN_DISPATCH_ALL_TYPES",
    "integral": "KILN_DISPATCH_INTEGRAL_TYPES",
}
# int_to_float: integer inputs compute in the default float dtype; scalars: the Scalar arguments
# take part in type promotion as Python numbers do (clamp(int_tensor, 0.5) computes in float).
PROMOTE_RULES = ("int_to_float", "scalars", "none")


@dataclass
class Node:
    kind: str
    children: List["Node"] = field(default_factory=list)
    arg: int = -1          # kind 'arg': which tensor argument; kind 'scalar': which Scalar
    value: float = 0.0     # kind 'const'
    is_int: bool = False   # kind 'const': written as an integer (or a bool)


@dataclass
class PointwiseFormula:
    text: str                  # as written in the schema
    args: List[str]            # the op's tensor arguments, in order
    scalars: List[str]         # the op's Scalar arguments, in order
    root: Node
    dtypes: str                # a DTYPE_SETS key
    promote: str               # a PROMOTE_RULES entry
    returns_bool: bool         # the root is a comparison or logic: the op writes bool
    meta: Optional[str] = None  # the device-neutral meta function checking the op's rules
    # Scalar? arguments: the value an absent one takes ('lowest' or 'highest' of the compute dtype;
    # -inf and inf for floating ones), so clamp(x, max=1) is one formula.
    absent: Dict[str, str] = field(default_factory=dict)
    # str arguments: their allowed values; the formula compares them with literals
    # (approximate == 'tanh'), which the tree holds as the value's index.
    choices: Dict[str, List[str]] = field(default_factory=dict)
    # Tensor arguments the kernel reads as bool (where's condition): the meta function checks
    # their dtype, and the loop reads them unconverted.
    bool_args: List[str] = field(default_factory=list)
    # A cast formula (`cast(self, dtype)`): the ScalarType argument naming the result dtype. Its
    # kernel is the runtime's conversion loop, which calls the same pm::cast.
    cast_to: Optional[str] = None
    # Scalar arguments the meta function checks itself: the kernel converts them as a cast does
    # instead of refusing a value the compute dtype cannot hold (float32 ** 1e300 is inf in torch).
    unchecked: List[str] = field(default_factory=list)
    # The forward kernel takes a NaN Scalar? given while every other absent-able one is absent as
    # absent (torch's one-bound clamp loop, std::max(a, min), ignores a NaN bound; with both bounds a
    # NaN gives NaN). The derivative still compares with the NaN, as torch's clamp_backward.
    lone_nan_absent: bool = False
    # A function of runtime/kernels/cpu/library_kernels.h the CPU kernel offers the call to first:
    # where torch computes the op with a library (oneDNN's gelu), kiln calls the same one.
    library: Optional[str] = None


SPEC_KEYS = ("absent", "bool_args", "choices", "dtypes", "formula", "library", "lone_nan_absent", "meta", "promote",
             "unchecked")
ABSENT_VALUES = ("lowest", "highest")


def parse_formula(spec: object, tensor_args: List[str], scalar_args: Optional[List[str]] = None,
                  optional_scalars: Optional[List[str]] = None, string_args: Optional[List[str]] = None,
                  dtype_args: Optional[List[str]] = None) -> PointwiseFormula:
    """The `pointwise:` entry of an op ({formula, dtypes, promote, meta, absent, choices, bool_args}),
    checked; errors say what is wrong. `scalar_args` are the op's non-tensor arguments in order (each
    a Scalar, a Scalar? named in `optional_scalars`, or a str named in `string_args`)."""
    scalar_args = scalar_args or []
    optional_scalars = optional_scalars or []
    string_args = string_args or []
    if not isinstance(spec, dict):
        raise CodegenError("pointwise: expected a mapping {formula: ..., dtypes: ..., promote: ...}")
    spec = {k: v for k, v in spec.items() if k != "__line__"}
    unknown = sorted(set(spec) - set(SPEC_KEYS))
    if unknown:
        raise CodegenError(f"pointwise: unknown key '{unknown[0]}' (known: {', '.join(SPEC_KEYS)})")
    absent = _name_map(spec.get("absent", {}), "absent")
    for name in optional_scalars:
        if absent.get(name) not in ABSENT_VALUES:
            raise CodegenError(f"pointwise: the Scalar? argument '{name}' needs its value when None: "
                               f"absent: {{{name}: lowest}} (or highest)")
    extra = sorted(set(absent) - set(optional_scalars))
    if extra:
        raise CodegenError(f"pointwise: absent: '{extra[0]}' is not a Scalar? argument of the op")
    choices = _name_map(spec.get("choices", {}), "choices")
    for name in string_args:
        values = choices.get(name)
        if not isinstance(values, list) or not values or not all(isinstance(v, str) for v in values):
            raise CodegenError(f"pointwise: the str argument '{name}' needs its allowed values: "
                               f"choices: {{{name}: [a, b]}}")
    extra = sorted(set(choices) - set(string_args))
    if extra:
        raise CodegenError(f"pointwise: choices: '{extra[0]}' is not a str argument of the op")
    bool_args = spec.get("bool_args", [])
    if not isinstance(bool_args, list) or [a for a in bool_args if a not in tensor_args]:
        raise CodegenError("pointwise: bool_args must list Tensor arguments of the op")
    meta = spec.get("meta")
    if meta is not None and (not isinstance(meta, str) or not meta.isidentifier()):
        raise CodegenError(f"pointwise: meta must name a function of runtime/kernels/pointwise_meta.h, got '{meta}'")
    library = check_library(spec.get("library"))
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
    dtype_args = dtype_args or []
    root = _check_size(_convert(tree.body, tensor_args, scalar_args, text, choices, dtype_args), text)
    casts = [n for n in _nodes(root) if n.kind == "cast"]
    if casts and (root.kind != "cast" or len(casts) > 1):
        raise CodegenError(f"pointwise: formula '{text}': cast() must be the whole formula (a formula "
                           "computes in one dtype; its result is what cast() converts)")
    if casts and (promote != "none" or dtypes != "all" or len(tensor_args) != 1):
        raise CodegenError(f"pointwise: formula '{text}': a cast formula takes one tensor, in any dtype "
                           "(dtypes: all, promote: none)")
    used = {n.arg for n in _nodes(root) if n.kind == "arg"}
    missing = [a for i, a in enumerate(tensor_args) if i not in used]
    if missing:
        raise CodegenError(f"pointwise: formula '{text}' does not use argument '{missing[0]}'")
    floating_only = [n.kind for n in _nodes(root) if (n.kind in INTRINSICS and INTRINSICS[n.kind][1])
                     or n.kind == "div"]
    if floating_only and dtypes != "floating" and promote != "int_to_float":
        what = "'/'" if floating_only[0] == "div" else f"{floating_only[0]}()"
        raise CodegenError(f"pointwise: formula '{text}': {what} needs a floating compute dtype "
                           "(dtypes: floating, or promote: int_to_float)")
    integer_only = [n.kind for n in _nodes(root) if n.kind in INTEGER_INTRINSICS]
    if integer_only and (dtypes != "integral" or not meta):
        raise CodegenError(f"pointwise: formula '{text}': {integer_only[0]}() needs dtypes: integral and a meta "
                           "function refusing bool")
    bitwise = [n.kind for n in _nodes(root) if n.kind in BITWISE.values() or n.kind == "bitnot"]
    if bitwise and dtypes != "integral":
        raise CodegenError(f"pointwise: formula '{text}': bitwise operators need dtypes: integral")
    if bool_args and not meta:
        raise CodegenError("pointwise: bool_args need a meta function (it checks their dtype)")
    unchecked = spec.get("unchecked", [])
    if not isinstance(unchecked, list) or [a for a in unchecked if a not in scalar_args or a in string_args
                                           or a in optional_scalars]:
        raise CodegenError("pointwise: unchecked must list Scalar arguments of the op (not Scalar? or str)")
    if unchecked and not meta:
        raise CodegenError("pointwise: unchecked Scalars need a meta function (it checks them)")
    lone_nan_absent = spec.get("lone_nan_absent", False)
    if lone_nan_absent not in (True, False) or (lone_nan_absent and len(absent) < 2):
        raise CodegenError("pointwise: lone_nan_absent must be true or false, and needs two absent: Scalar? arguments")
    returns_bool = root.kind in _BOOL_KINDS
    return PointwiseFormula(text.strip(), list(tensor_args), list(scalar_args), root, dtypes, promote, returns_bool,
                            meta, absent, {k: list(v) for k, v in choices.items()}, list(bool_args),
                            dtype_args[root.arg] if root.kind == "cast" else None, list(unchecked), lone_nan_absent,
                            library)


def check_library(value: object) -> Optional[str]:
    """A `library:` entry: the name of a function of runtime/kernels/cpu/library_kernels.h, or None."""
    if value is not None and (not isinstance(value, str) or not value.isidentifier()):
        raise CodegenError(f"library must name a function of runtime/kernels/cpu/library_kernels.h, got '{value}'")
    return value


def _name_map(value: object, key: str) -> Dict[str, object]:
    if not isinstance(value, dict):
        raise CodegenError(f"pointwise: {key} must be a mapping of argument names")
    return {k: v for k, v in value.items() if k != "__line__"}


def _check_size(root: Node, text: str) -> Node:
    """The tree, if the interpreter can hold it (MAX_NODES)."""
    if len(_nodes(root)) > MAX_NODES:
        raise CodegenError(f"pointwise: formula '{text}': {len(_nodes(root))} nodes (at most {MAX_NODES})")
    return root


def _nodes(n: Node) -> List[Node]:
    return [n] + [m for c in n.children for m in _nodes(c)]


def _convert(e: ast.AST, args: List[str], scalars: List[str], text: str,
             choices: Optional[Dict[str, List[str]]] = None, dtype_args: Optional[List[str]] = None) -> Node:
    choices = choices or {}
    dtype_args = dtype_args or []

    def bad(what: str) -> CodegenError:
        return CodegenError(f"pointwise: formula '{text}': {what}")

    def sub(x: ast.AST) -> Node:
        return _convert(x, args, scalars, text, choices, dtype_args)

    if isinstance(e, ast.Name):
        if e.id in dtype_args:
            raise bad(f"the ScalarType argument '{e.id}' is only the target of cast(x, {e.id})")
        if e.id in choices:
            raise bad(f"the str argument '{e.id}' is only compared with a literal ({e.id} == '{choices[e.id][-1]}')")
        if e.id in scalars:
            return Node("scalar", arg=scalars.index(e.id))
        if e.id not in args:
            raise bad(f"unknown name '{e.id}' (the op's arguments are: {', '.join(args + scalars)})")
        return Node("arg", arg=args.index(e.id))
    if isinstance(e, ast.Constant):
        if isinstance(e.value, bool):
            return Node("const", value=float(e.value), is_int=True)
        if isinstance(e.value, (int, float)):
            return Node("const", value=float(e.value), is_int=isinstance(e.value, int))
        raise bad(f"unsupported literal {e.value!r}")
    if isinstance(e, ast.UnaryOp):
        operand = sub(e.operand)
        if isinstance(e.op, ast.USub):
            if operand.kind == "const":
                return Node("const", value=-operand.value, is_int=operand.is_int)
            return Node("neg", [operand])
        if isinstance(e.op, ast.Not):
            return Node("not", [operand])
        if isinstance(e.op, ast.Invert):
            return Node("bitnot", [operand])
        raise bad(f"unsupported unary operator {type(e.op).__name__}")
    if isinstance(e, ast.BinOp):
        kind = BINARY.get(type(e.op)) or BITWISE.get(type(e.op))
        if kind is None:
            raise bad(f"unsupported operator {type(e.op).__name__}")
        return Node(kind, [sub(e.left), sub(e.right)])
    if isinstance(e, ast.Compare):
        if len(e.ops) != 1:
            raise bad("chained comparisons (a < b < c) are not supported: write (a < b) and (b < c)")
        kind = COMPARE.get(type(e.ops[0]))
        if kind is None:
            raise bad(f"unsupported comparison {type(e.ops[0]).__name__}")
        right = e.comparators[0]
        if isinstance(e.left, ast.Name) and e.left.id in choices:
            # a str argument against one of its values: the tree compares the value's index
            allowed = choices[e.left.id]
            if kind not in ("eq", "ne") or not isinstance(right, ast.Constant) or right.value not in allowed:
                raise bad(f"compare '{e.left.id}' with == or != and one of its choices ({', '.join(allowed)})")
            return Node(kind, [Node("scalar", arg=scalars.index(e.left.id)),
                               Node("const", value=float(allowed.index(right.value)), is_int=True)])
        return Node(kind, [sub(e.left), sub(right)])
    if isinstance(e, ast.BoolOp):
        kind = "and" if isinstance(e.op, ast.And) else "or"
        node = sub(e.values[0])
        for v in e.values[1:]:
            node = Node(kind, [node, sub(v)])
        return node
    if isinstance(e, ast.IfExp):
        return Node("select", [sub(e.test), sub(e.body), sub(e.orelse)])
    if isinstance(e, ast.Call):
        if not isinstance(e.func, ast.Name) or e.keywords:
            raise bad("calls are intrinsic names with positional arguments, e.g. exp(self)")
        if e.func.id == "cast":
            if len(e.args) != 2 or not isinstance(e.args[1], ast.Name) or e.args[1].id not in dtype_args:
                raise bad("cast(x, dtype) takes a value and a ScalarType argument of the op"
                          + (f" ({', '.join(dtype_args)})" if dtype_args else " (the op has none)"))
            return Node("cast", [sub(e.args[0])], arg=dtype_args.index(e.args[1].id))
        arity = INTRINSICS.get(e.func.id, (None,))[0]
        if arity is None:
            raise bad(f"unknown intrinsic '{e.func.id}' (known: {', '.join(INTRINSICS)})")
        if len(e.args) != arity:
            raise bad(f"{e.func.id}() takes {arity} argument(s), got {len(e.args)}")
        return Node(e.func.id, [sub(a) for a in e.args])
    raise bad(f"unsupported expression {type(e).__name__}")


# ---- rendering ----

def _literal(n: Node) -> str:
    if n.is_int:
        return f"T({int(n.value)})"
    return f"T({repr(n.value)})"


def render_cxx(n: Node, args: List[str], scalars: List[str]) -> str:
    """The expression in C++ over values of type T (the compute dtype), intrinsics from pm::."""
    k = n.kind
    c = [render_cxx(ch, args, scalars) for ch in n.children]
    if k == "arg":
        return args[n.arg]
    if k == "scalar":
        return scalars[n.arg]
    if k == "const":
        return _literal(n)
    if k == "neg":
        return f"-{_paren(n.children[0], c[0])}"
    if k == "not":
        return f"!{_paren(n.children[0], c[0])}"
    if k == "bitnot":
        return f"pm::bit_not({c[0]})"
    if k in CXX_SHIFTS:
        return f"{CXX_SHIFTS[k]}({c[0]}, {c[1]})"
    if k in ("and", "or"):
        return f"({c[0]} {'&&' if k == 'and' else '||'} {c[1]})"
    if k == "select":
        return f"({c[0]} ? {c[1]} : {c[2]})"
    if k in CXX_BINARY:
        return f"({c[0]} {CXX_BINARY[k]} {c[1]})"
    if k in CXX_BINARY_CALLS:
        return f"{CXX_BINARY_CALLS[k]}({c[0]}, {c[1]})"
    if k in CXX_COMPARE:
        return f"({c[0]} {CXX_COMPARE[k]} {c[1]})"
    if k == "cast":
        return f"pm::cast<To>({c[0]})"
    return f"pm::{k}({', '.join(c)})"


def _paren(n: Node, text: str) -> str:
    return text if n.kind in ("arg", "scalar", "const") or text.startswith("(") or n.kind in INTRINSICS else f"({text})"


def render_body(f: PointwiseFormula) -> str:
    text = render_cxx(f.root, f.args, f.scalars)
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

# Intrinsic -> its vector function in runtime/kernels/cpu/vector_formula-inl.h (Highway's math in
# double lanes, Sleef's in float lanes, with the IEEE special cases the C library gives). An
# intrinsic missing here has no vector version: a formula using it keeps the scalar kernel.
VECTOR_INTRINSICS: Dict[str, str] = {
    "exp": "kv::Exp", "expm1": "kv::Expm1", "log": "kv::Log", "log1p": "kv::Log1p", "sin": "kv::Sin",
    "cos": "kv::Cos", "tanh": "kv::Tanh", "erf": "kv::Erf", "sqrt": "kv::Sqrt",
    "abs": "kv::Abs", "floor": "kv::Floor", "ceil": "kv::Ceil", "trunc": "kv::Trunc", "round": "kv::Round",
    "minimum": "kv::Minimum", "maximum": "kv::Maximum", "pow": "kv::Pow", "pow_scalar": "kv::PowScalar",
    "log2": "kv::Log2", "log10": "kv::Log10", "exp2": "kv::Exp2", "asin": "kv::Asin", "acos": "kv::Acos",
    "atan": "kv::Atan", "sinh": "kv::Sinh", "cosh": "kv::Cosh", "tan": "kv::Tan", "asinh": "kv::Asinh",
    "acosh": "kv::Acosh", "atanh": "kv::Atanh", "erfc": "kv::Erfc",
    "hypot": "kv::Hypot", "atan2": "kv::Atan2", "copysign": "kv::CopySign", "fma": "kv::Fma",
}
# (erfinv has none: torch's CPU kernel is scalar, and kiln's gives its bits with the C library's
# erf and exp, which no vector version would.)
# Intrinsics IEEE rounds exactly (like + - * /): a formula using no others is computed in float
# lanes, bit for bit as its scalar functor.
EXACT_INTRINSICS = {"sqrt", "abs", "floor", "ceil", "trunc", "round", "minimum", "maximum", "copysign", "fma"}
# Intrinsics whose formulas run in float lanes on Sleef, torch's own functions: in double lanes
# they were slower than torch (16M float32, one thread, AVX-512: exp 24.9 ms against 13.6, log 26.0
# against 24.1, log1p 30.3 against 24.3, sin 25.3 against 20.4, cos 26.0 against 25.0; erf has no
# Highway version). A formula with any other inexact intrinsic (expm1, tanh: as fast as torch in
# double lanes) and none of these runs in double lanes, rounded once: correctly rounded.
# The others here have a Sleef (float lanes) version only, the u10 functions torch's kernels call
# (erfc: u15, as torch; asinh, acosh and atanh: torch calls the C library's float functions, which
# are no more accurate on the test sample). pow and pow_scalar: Sleef's powf (torch's
# Vectorized<float>::pow) on AVX2/AVX-512, so x ** 4 rounds as torch's; the special exponents
# (2, 3, +-0.5, -1, -2) stay exact operations (vector_formula-inl.h).
SLEEF_INTRINSICS = {"exp", "log", "log1p", "sin", "cos", "erf", "tanh", "log2", "log10", "asin", "acos", "atan",
                    "sinh", "cosh", "tan", "asinh", "acosh", "atanh", "erfc", "pow", "pow_scalar"}
# Intrinsics with a double-lane version only (vector_formula-inl.h: exact but for one rounding there).
DOUBLE_ONLY_INTRINSICS = {"hypot", "atan2"}
VECTOR_BINARY = {"add": "hn::Add", "sub": "hn::Sub", "mul": "hn::Mul", "div": "hn::Div"}
# != is kv::Ne: Highway's Ne is an ordered compare on AVX2/AVX3 (NaN != x false there), C++'s is not.
VECTOR_COMPARE = {"lt": "hn::Lt", "le": "hn::Le", "gt": "hn::Gt", "ge": "hn::Ge", "eq": "hn::Eq", "ne": "kv::Ne"}
_BOOL_KINDS = set(COMPARE.values()) | {"not", "and", "or"} | BOOL_INTRINSICS


def _uniform(n: Node) -> bool:
    """The node's value is the same for every element: it reads Scalars (and literals), no tensor.
    The vector loop computes it once, in C++ over the scalar functor's members."""
    kinds = {m.kind for m in _nodes(n)}
    return "scalar" in kinds and "arg" not in kinds


def _per_element_nodes(n: Node) -> List[Node]:
    """The nodes the vector loop computes lane by lane: all but uniform subtrees (and the condition
    of a select on a uniform condition, a C++ branch)."""
    if _uniform(n):
        return []
    children = n.children[1:] if n.kind == "select" and _uniform(n.children[0]) else n.children
    return [n] + [m for c in children for m in _per_element_nodes(c)]


def vector_unsupported(f: PointwiseFormula) -> Optional[str]:
    """Why the formula has no vector kernel (None when it has one). Vectorized: formulas of one to
    three tensors with a floating result whose per-element intrinsics all have a vector version;
    Scalars and whatever depends on Scalars alone are computed once, in C++."""
    if f.cast_to:
        return "a cast's kernel is the conversion loop (element_convert.cc)"
    if len(f.args) > 3:
        return "vector kernels take formulas of one to three tensors"
    if f.returns_bool:
        return "vector kernels write floating results only for now"
    if f.dtypes == "integral":
        return "vector kernels compute floating results only"
    nodes = _per_element_nodes(f.root)
    unrendered = sorted({n.kind for n in nodes if n.kind in BITWISE.values() or n.kind == "bitnot"})
    if unrendered:
        return f"no vector rendering of {unrendered[0]}"
    missing = sorted({n.kind for n in nodes if n.kind in INTRINSICS and n.kind not in VECTOR_INTRINSICS})
    if missing:
        return f"no vector {missing[0]}()"
    if any(n.kind in CXX_BINARY_CALLS for n in nodes):
        return "no vector // or % (x86 has no vector integer division)"
    kinds = {n.kind for n in nodes}
    if kinds & DOUBLE_ONLY_INTRINSICS and kinds & SLEEF_INTRINSICS:
        return (f"{sorted(kinds & DOUBLE_ONLY_INTRINSICS)[0]}() runs in double lanes, "
                f"{sorted(kinds & SLEEF_INTRINSICS)[0]}() in float lanes")
    if len(f.args) == 3 and vector_kind(f) != "exact":
        # Strided runs of three tensors take the scalar functor, which only exact operations
        # make agree with the vector loop to the bit.
        return "three-tensor formulas vectorize with exact operations only"
    if any(a in f.bool_args for a in f.args[1:]):
        return "only the first tensor may be read as bool in a vector loop"
    return None


def vector_kind(f: PointwiseFormula) -> str:
    """How a float32 formula's vector loop computes (vector_formula-inl.h): 'sleef' (float lanes,
    Sleef's functions, rounded every step as torch does), 'double' (double lanes, rounded once) or
    'exact' (float lanes, exact operations only: the scalar functor's bits)."""
    kinds = {n.kind for n in _per_element_nodes(f.root) if n.kind in INTRINSICS}
    if kinds & SLEEF_INTRINSICS:
        return "sleef"
    return "double" if kinds - EXACT_INTRINSICS else "exact"


def vector_lanes(f: PointwiseFormula) -> str:
    """The C++ type of the vector lanes a float32 formula is computed in (vector_kind)."""
    return "double" if vector_kind(f) == "double" else "float"


def render_vector(n: Node, args: List[str], scalars: Optional[List[str]] = None) -> str:
    """The same tree as render_cxx, over Highway vectors (double or float lanes, vector_lanes): `d`
    is the lanes' tag, each argument a vector. Comparisons and logic give masks; a mask used as a
    number, or a number used as a condition, is converted as C++ converts bool (kv::FromBool,
    kv::ToBool). A subtree of Scalars alone is C++ over the scalar functor `s` (its members: the
    Scalars in the compute dtype T), broadcast to the lanes (kv::Uniform); a select on such a
    condition is a C++ branch, so only the chosen side is computed."""
    scalars = scalars or []

    def vec(c: Node) -> str:
        return render_vector(c, args, scalars)

    def cxx(c: Node) -> str:
        return render_cxx(c, args, [f"s.{x}" for x in scalars])

    def value(c: Node) -> str:
        text = vec(c)
        return f"kv::FromBool(d, {text})" if c.kind in _BOOL_KINDS else text

    def mask(c: Node) -> str:
        text = vec(c)
        return text if c.kind in _BOOL_KINDS else f"kv::ToBool(d, {text})"

    k = n.kind
    if _uniform(n):
        return f"kv::UniformMask(d, {cxx(n)})" if k in _BOOL_KINDS else f"kv::Uniform(d, {cxx(n)})"
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
        if _uniform(n.children[0]):
            return f"({cxx(n.children[0])} ? {value(n.children[1])} : {value(n.children[2])})"
        return f"hn::IfThenElse({mask(n.children[0])}, {value(n.children[1])}, {value(n.children[2])})"
    if k in VECTOR_BINARY:
        return f"{VECTOR_BINARY[k]}({value(n.children[0])}, {value(n.children[1])})"
    if k in VECTOR_COMPARE:
        return f"{VECTOR_COMPARE[k]}({value(n.children[0])}, {value(n.children[1])})"
    if k == "pow_scalar" and _uniform(n.children[1]):  # x ** Scalar: its special exponents are a C++ branch
        return f"kv::PowUniform(d, {value(n.children[0])}, {cxx(n.children[1])})"
    if k in VECTOR_INTRINSICS:
        return f"{VECTOR_INTRINSICS[k]}(d, {', '.join(value(c) for c in n.children)})"
    raise CodegenError(f"pointwise: no vector rendering of {k}()")


def formula_key(name: str, overload: str, formula_names: Dict[str, int]) -> str:
    """The name of an overload's functor, files and table rows: the op's, or the overload's where
    one op has several formulas (pow_tensor_scalar, pow_tensor_tensor). `formula_names` counts the
    formulas of each op name."""
    return name if formula_names[name] == 1 else f"{name}_{overload.lower()}"


def table_rows(root: Node) -> List[Tuple[str, int, int, int, int, str]]:
    """A tree (a formula's or a derivative's) in postorder as the table's FormulaNode rows:
    (FormulaOp enumerator, child indices a b c, arg, literal); each child is an earlier row, the
    root is the last."""
    order: List[Node] = []

    def walk(n: Node) -> None:
        for c in n.children:
            walk(c)
        order.append(n)
    walk(root)
    index = {id(n): i for i, n in enumerate(order)}
    rows = []
    for n in order:
        ch = [index[id(c)] for c in n.children] + [-1, -1, -1]
        rows.append((enum_name(n.kind), ch[0], ch[1], ch[2], n.arg, repr(float(n.value))))
    return rows


def scalar_value(f: PointwiseFormula, name: str, op: str) -> str:
    """The C++ value of a Scalar, Scalar? or str argument in the compute dtype (scalar_t), as the
    generated kernel hands it to the functor: a Scalar the dtype cannot hold is refused, as torch
    does (add(int32, alpha=2**40))."""
    if name in f.absent and f.lone_nan_absent:
        # With another bound NaN the result is NaN whatever this one is, so it is not checked (torch
        # fills NaN before converting: clamp(int_tensor, min=nan, max=1e39) is NaN, no overflow error).
        rest = [o for o in f.absent if o != name]
        others = ", ".join(rest)
        nan_other = " || ".join(f"({o} && {o}->is_floating_point() && std::isnan({o}->to_double()))" for o in rest)
        return (f'{name} && !lone_nan({name}, {{{others}}}) ? ({nan_other} ? scalar_t(0) : '
                f'checked_convert<scalar_t>(*{name}, "{op}")) : pm::{f.absent[name]}<scalar_t>()')
    if name in f.absent:
        return f'{name} ? checked_convert<scalar_t>(*{name}, "{op}") : pm::{f.absent[name]}<scalar_t>()'
    if name in f.unchecked:
        return f"{name}.to<scalar_t>()"
    if name in f.choices:
        values = ", ".join(f'"{v}"' for v in f.choices[name])
        return f'scalar_t(choice_index("{op}", "{name}", {name}, {{{values}}}))'
    return f'checked_convert<scalar_t>({name}, "{op}")'


def iterator_config(f: PointwiseFormula, op: str, arg_exprs: List[str], out: str = "out") -> str:
    """How the generated kernel builds its TensorIterator: through the op's meta function, or a
    named IteratorConfig (tensor_iterator.h). `out`: the kernel's out (undefined for the functional
    form, self for the in-place one)."""
    inputs = ", ".join(arg_exprs)
    if f.meta:
        return f"{f.meta}({', '.join(arg_exprs + f.scalars)}, {out})"
    if f.returns_bool:
        if len(arg_exprs) == 1:
            return f'IteratorConfig::predicate("{op}", {inputs}, {out})'
        if len(arg_exprs) != 2:
            raise CodegenError("pointwise: a bool-valued formula of one or two tensor arguments")
        return f'IteratorConfig::comparison("{op}", {inputs}, {out})'
    kind = {1: "unary", 2: "binary", 3: "ternary"}.get(len(arg_exprs))
    suffix = "_float" if f.promote == "int_to_float" else ""
    if kind is None:
        raise CodegenError("pointwise: a formula of more than three tensor arguments needs a meta function")
    return f'IteratorConfig::{kind}{suffix}("{op}", {inputs}, {out})'


def enum_name(kind: str) -> str:
    """The FormulaOp enumerator of a node kind (generated/jit/formula_ops.h)."""
    return kind[:1].upper() + kind[1:]


# ---- derivatives of pointwise ops, in the same language ----
#
# A pointwise op's derivatives.yaml entry is written in the expression language too, over `grad`
# (the incoming gradient), `result` (the op's output), the op's arguments and Scalars:
#     - name: sigmoid(Tensor self) -> Tensor
#       self: grad * (result * (1 - result))
# Each is rendered into kiln ops for autograd (so double backward works as for any formula) and
# written to the table as a tree, for a fused backward to read.

DERIVATIVE_NAMES = ["grad", "result"]


def parse_derivative(text: str, f: PointwiseFormula) -> Node:
    """The tree of one derivative formula of a formula op; errors as parse_formula's."""
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except SyntaxError as e:
        raise CodegenError(f"derivative '{text}': syntax error at column {e.offset}")
    try:
        return _check_size(_convert(tree.body, DERIVATIVE_NAMES + f.args, f.scalars, text, f.choices), text)
    except CodegenError as e:
        hint = (" (a formula op's derivatives use the expression language: grad * other, not mul(grad, other))"
                if "unknown intrinsic" in str(e) else "")
        raise CodegenError(str(e).replace("pointwise: formula", "derivative", 1) + hint)


def render_autograd(n: Node, names: List[str], scalars: List[str], absent: Optional[Dict[str, str]] = None,
                    choices: Optional[Dict[str, List[str]]] = None) -> str:
    """The derivative as a C++ expression over kiln ops (what derivatives.yaml's other entries
    are written in); a formula of constants alone is a tensor like grad. An absent Scalar? is
    -inf or inf there (value_or_lowest/highest): derivatives are of floating tensors only. A
    condition on Scalars and str arguments alone (approximate == 'tanh') is a C++ condition."""
    absent, choices = absent or {}, choices or {}
    choice_of = {i: choices[s] for i, s in enumerate(scalars) if s in choices}  # by Scalar index
    scalars = [f"value_or_{absent[s]}({s})" if s in absent else s for s in scalars]
    return _as_tensor(*_autograd(n, names, scalars, choice_of))


def _as_tensor(text: str, is_tensor: bool) -> str:
    """A derivative's value as a tensor: constants and Scalars become a tensor like grad."""
    if is_tensor:
        return text
    return "zeros_like(grad)" if text in ("0", "0.0") else f"full_like(grad, {text})"


AUTOGRAD_BINARY_CALLS = {"floordiv": "floor_divide", "mod": "remainder"}  # the kiln ops of // and %
AUTOGRAD_COMPARE_SWAPPED = {"lt": "gt", "le": "ge", "gt": "lt", "ge": "le", "eq": "eq", "ne": "ne"}


def _autograd(n: Node, names: List[str], scalars: List[str], choice_of: Dict[int, List[str]]) -> Tuple[str, bool]:
    """(C++ text, whether it is a Tensor) of a node; constants and Scalars stay Scalars."""
    def bad(what: str) -> CodegenError:
        return CodegenError(f"derivative: {what}")

    k = n.kind
    if k == "arg":
        return names[n.arg], True
    if k == "scalar":
        return scalars[n.arg], False
    if k == "const":
        return (str(int(n.value)) if n.is_int else repr(n.value)), False
    c = [_autograd(ch, names, scalars, choice_of) for ch in n.children]

    def as_double(text: str, node: Node) -> str:  # a Scalar (argument or Scalar arithmetic) as double
        return text if node.kind == "const" else f"{text}.to_double()"

    if k == "neg":
        if c[0][1]:
            return f"neg({c[0][0]})", True
        return (f"-{c[0][0]}", False) if n.children[0].kind == "const" else \
            (f"Scalar(-{as_double(c[0][0], n.children[0])})", False)
    if k in BITWISE.values() or k == "bitnot":
        raise bad("bitwise operators have no derivative")
    if k in CXX_BINARY_CALLS:
        if not all(t for _, t in c):
            raise bad("// and % of tensors only")
        return f"{AUTOGRAD_BINARY_CALLS[k]}({c[0][0]}, {c[1][0]})", True
    if k in CXX_BINARY:
        (a, ta), (b, tb) = c
        if not ta and not tb:
            if (n.children[0].kind == "const" and n.children[1].kind == "const") or k not in ("add", "sub", "mul", "div"):
                raise bad("arithmetic of constants alone: fold it into one literal")
            # Scalar arithmetic (1 - weight, alpha * scale): a Scalar computed in double
            return (f"Scalar({as_double(a, n.children[0])} {CXX_BINARY[k]} {as_double(b, n.children[1])})",
                    False)
        if ta and tb:
            return f"{k}({a}, {b})", True
        if ta:  # Tensor op Scalar
            if k == "mul" and n.children[1].kind == "scalar":
                return f"maybe_multiply({a}, {b})", True  # alpha == 1 costs nothing
            return f"{k}({a}, {b})", True
        # Scalar op Tensor
        if k == "add":
            return f"add({b}, {a})", True
        if k == "mul":
            return (f"maybe_multiply({b}, {a})" if n.children[0].kind == "scalar" else f"mul({b}, {a})"), True
        if k == "sub":
            return f"add(neg({b}), {a})", True
        return (f"reciprocal({b})" if a in ("1", "1.0") else f"div(full_like({b}, {a}), {b})"), True
    if k in CXX_COMPARE:
        (a, ta), (b, tb) = c
        if ta:
            return f"{k}({a}, {b})", True
        if tb:
            return f"{AUTOGRAD_COMPARE_SWAPPED[k]}({b}, {a})", True
        left, right = n.children
        if left.kind != "scalar" or right.kind != "const":
            raise bad("a comparison of constants alone")
        if left.arg in choice_of:  # a str argument against one of its values
            return f'({a} {CXX_COMPARE[k]} "{choice_of[left.arg][int(right.value)]}")', False
        return f"({a}.to_double() {CXX_COMPARE[k]} {b})", False
    if k in ("and", "or"):
        return f"logical_{k}({c[0][0]}, {c[1][0]})", True
    if k == "not":
        return f"logical_not({c[0][0]})", True
    if k == "select":
        (cond, tc), (a, ta), (b, tb) = c
        if not tc:  # one branch for the whole tensor
            return f"({cond} ? {_as_tensor(a, ta)} : {_as_tensor(b, tb)})", True
        if ta and tb:
            return f"where({cond}, {a}, {b})", True
        if tb:
            return f"masked_fill({b}, {cond}, {a})", True
        if ta:
            return f"masked_fill({a}, logical_not({cond}), {b})", True
        raise bad("a select of constants alone")
    if k == "fma":  # the private op of the same math: _fma(self, tensor1, tensor2) = tensor1 * tensor2 + self
        if not any(t for _, t in c):
            raise bad("fma() of constants alone")
        a, b, addend = (_as_tensor(x, t) for x, t in c)  # a constant becomes a tensor like grad
        return f"_fma({addend}, {a}, {b})", True
    if not c[0][1] or (not all(t for _, t in c) and k not in ("pow", "pow_scalar", "fmod")):
        raise bad(f"{k}() of a constant: fold it into a literal")
    if k == "trigamma":  # the op is polygamma(1, x)
        return f"polygamma(1, {c[0][0]})", True
    op = "pow" if k == "pow_scalar" else k  # kiln.pow(Tensor, Scalar) is pow_scalar
    return f"{op}({', '.join(x for x, _ in c)})", True  # pow and fmod also take (Tensor, Scalar)

