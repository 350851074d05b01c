"""Python-facing signatures: the strings the runtime argument parser reads, the
C++ that extracts each parsed argument, and the .pyi stub types."""
from __future__ import annotations

from typing import List, Tuple

from model import Argument, Type


def parser_type(t: Type) -> str:
    if t.base == "Tensor":
        s = ("Tensor?[]" if t.elem_optional else "Tensor[]") if t.is_list else "Tensor"
    elif t.is_list:
        s = f"int[{t.list_size}]" if t.list_size else "int[]"
    else:
        s = t.base
    return s + ("?" if t.optional else "")


def parser_signature(name: str, args: List[Argument], rename_self: bool) -> str:
    parts, star = [], False
    for a in args:
        if a.kwarg_only and not star:
            parts.append("*")
            star = True
        pname = "input" if (rename_self and a.name == "self") else a.name
        s = f"{parser_type(a.type)} {pname}"
        if a.default is not None:
            s += f"={a.default}"
        parts.append(s)
    return f"{name}({', '.join(parts)})"


def extract(a: Argument, i: int) -> Tuple[List[str], str]:
    """C++ lines that read parsed argument i into a variable named after `a`."""
    t, n = a.type, a.name
    if t.base == "Tensor":
        if t.is_list:
            return [f"const std::vector<Tensor> {n} = r.tensorlist({i});"], n
        return [f"const Tensor {n} = r.tensor({i});"], n
    if t.is_list:
        if t.optional:
            return [f"const auto {n}_values = r.optional_intlist({i});",
                    f"const std::optional<IntArrayRef> {n} = "
                    f"{n}_values ? std::optional<IntArrayRef>(*{n}_values) : std::nullopt;"], n
        return [f"const std::vector<int64_t> {n} = r.intlist({i});"], n
    getter = {"Scalar": "scalar", "int": "int64", "float": "to_double", "bool": "to_bool", "str": "string",
              "ScalarType": "scalartype", "Device": "device", "Generator": "generator"}[t.base]
    if t.optional and t.base != "Generator":
        return [f"const auto {n} = r.optional_{getter}({i});"], n
    return [f"const auto {n} = r.{getter}({i});"], n


def pyi_type(t: Type) -> str:
    if t.base == "Tensor":
        s = ("Sequence[Optional[Tensor]]" if t.elem_optional else "Sequence[Tensor]") if t.is_list else "Tensor"
    elif t.is_list:
        s = "Union[int, Sequence[int]]" if t.list_size else "Sequence[int]"
    else:
        s = {"Scalar": "Number", "int": "int", "float": "float", "bool": "bool", "str": "str",
             "ScalarType": "dtype", "Device": "Union[device, str]", "Generator": "Generator"}[t.base]
    return f"Optional[{s}]" if t.optional else s


def pyi_default(a: Argument) -> str:
    return " = ..." if a.default is not None else ""
