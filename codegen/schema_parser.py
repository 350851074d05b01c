"""Parses one `func:` string of PyTorch's grammar into a FunctionSchema.

    add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor
    add.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)
    max.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)
"""
from __future__ import annotations

import re
from typing import List, Optional, Tuple

from model import BASE_TYPES, Annotation, Argument, CodegenError, FunctionSchema, Return, Type

_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_TYPE = re.compile(r"^(?P<base>[A-Za-z]+)(?:\((?P<alias>[a-z])(?P<write>!)?\))?(?P<elemopt>\?)?(?P<list>\[(?P<size>\d*)\])?(?P<opt>\?)?$")
_INT = re.compile(r"^-?\d+$")
_FLOAT = re.compile(r"^-?(\d+\.\d*|\.\d+|\d+)([eE][-+]?\d+)?$|^-?inf$|^nan$")
_SCALAR_TYPES = ("bool", "uint8", "int8", "int16", "short", "int32", "int64", "float32", "float64", "long", "int", "float", "double")


def split_top_level(text: str, sep: str = ",") -> List[str]:
    """Splits on `sep` outside brackets and parentheses."""
    parts, depth, cur = [], 0, []
    for ch in text:
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        if ch == sep and depth == 0:
            parts.append("".join(cur).strip())
            cur = []
        else:
            cur.append(ch)
    if "".join(cur).strip():
        parts.append("".join(cur).strip())
    return parts


def parse_type(text: str) -> Tuple[Type, Optional[Annotation]]:
    m = _TYPE.match(text.strip())
    if not m:
        raise CodegenError(f"cannot parse type '{text}'")
    base = m.group("base")
    if base not in BASE_TYPES:
        raise CodegenError(f"unknown type '{base}' (known: {', '.join(BASE_TYPES)})")
    annotation = None
    if m.group("alias"):
        if base != "Tensor":
            raise CodegenError(f"alias annotation on non-Tensor type '{text}'")
        annotation = Annotation(m.group("alias"), bool(m.group("write")))
    is_list = m.group("list") is not None
    size = int(m.group("size")) if is_list and m.group("size") else None
    if is_list and base not in ("int", "Tensor"):
        raise CodegenError(f"lists of '{base}' are not supported (only int[] and Tensor[])")
    optional, elem_optional = bool(m.group("opt")), bool(m.group("elemopt"))
    if elem_optional and not is_list:  # 'int?': the regex read the '?' before the (absent) list
        optional, elem_optional = optional or elem_optional, False
    if elem_optional and base != "Tensor":
        raise CodegenError(f"cannot parse type '{text}' (only Tensor?[] has optional elements)")
    return Type(base, is_list, size, optional, elem_optional), annotation


def check_default(arg: Argument) -> None:
    """Raises when the default value cannot be a value of the argument's type."""
    d, t = arg.default, arg.type
    if d is None:
        return
    bad = CodegenError(f"bad default '{d}' for argument '{arg.name}' of type '{t}'")
    if d == "None":
        if not t.optional:
            raise CodegenError(f"default None for non-optional argument '{arg.name}' of type '{t}' (write '{t}?')")
        return
    if t.is_list:
        if t.base != "int":
            raise bad
        if _INT.match(d) and t.list_size:
            return
        if not (d.startswith("[") and d.endswith("]")):
            raise bad
        items = [x.strip() for x in d[1:-1].split(",") if x.strip()]
        if not all(_INT.match(x) for x in items):
            raise bad
        return
    if t.base == "Tensor":
        raise bad
    if t.base == "int" and not _INT.match(d):
        raise bad
    if t.base in ("float", "Scalar") and not (_INT.match(d) or _FLOAT.match(d) or d in ("True", "False")):
        raise bad
    if t.base == "bool" and d not in ("True", "False"):
        raise bad
    if t.base == "str" and not (len(d) >= 2 and d[0] == d[-1] and d[0] in "'\""):
        raise bad
    if t.base == "ScalarType" and d not in _SCALAR_TYPES:
        raise bad
    if t.base in ("Device", "Generator"):
        raise bad


def parse_argument(text: str, kwarg_only: bool) -> Argument:
    text = text.strip()
    default = None
    if "=" in text:
        text, default = (x.strip() for x in text.split("=", 1))
        if not default:
            raise CodegenError(f"empty default in '{text}='")
    pieces = text.split()
    if len(pieces) != 2:
        raise CodegenError(f"cannot parse argument '{text}' (expected 'Type name')")
    type_text, name = pieces
    if not _NAME.match(name):
        raise CodegenError(f"bad argument name '{name}'")
    t, ann = parse_type(type_text)
    arg = Argument(name, t, default, ann, kwarg_only)
    check_default(arg)
    return arg


def parse_returns(text: str) -> List[Return]:
    text = text.strip()
    if text == "()":
        return []
    if text.startswith("(") and text.endswith(")"):
        items = split_top_level(text[1:-1])
    else:
        items = [text]
    returns = []
    for item in items:
        pieces = item.split()
        if len(pieces) not in (1, 2):
            raise CodegenError(f"cannot parse return '{item}'")
        t, ann = parse_type(pieces[0])
        if t.base != "Tensor":
            raise CodegenError(f"return type '{t}' is not supported (only Tensor and Tensor[])")
        returns.append(Return(pieces[1] if len(pieces) == 2 else None, t, ann))
    return returns


def parse_schema(func: str) -> FunctionSchema:
    m = re.match(r"^\s*([A-Za-z_][A-Za-z0-9_]*)(?:\.([A-Za-z0-9_]+))?\s*\((.*)\)\s*->\s*(.+?)\s*$", func, re.S)
    if not m:
        raise CodegenError(f"cannot parse func '{func}' (expected 'name.overload(args) -> returns')")
    name, overload, args_text, returns_text = m.groups()
    arguments: List[Argument] = []
    kwarg_only = False
    seen = set()
    for piece in split_top_level(args_text):
        if piece == "*":
            if kwarg_only:
                raise CodegenError("'*' appears twice")
            kwarg_only = True
            continue
        arg = parse_argument(piece, kwarg_only)
        if arg.name in seen:
            raise CodegenError(f"argument '{arg.name}' appears twice")
        seen.add(arg.name)
        arguments.append(arg)
    positional_default = False
    for a in arguments:
        if a.kwarg_only:
            continue
        if a.default is not None:
            positional_default = True
        elif positional_default:
            raise CodegenError(f"argument '{a.name}' without a default follows one with a default")
    return FunctionSchema(name, overload or "", arguments, parse_returns(returns_text))
