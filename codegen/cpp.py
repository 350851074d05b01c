"""How schema types and values are spelled in C++ (API, kernels, autograd nodes)."""
from __future__ import annotations

import re
from typing import List, Optional

from model import Argument, FunctionSchema, NativeFunction, Type

_DTYPE_CPP = {"bool": "Bool", "uint8": "UInt8", "int8": "Int8", "int16": "Int16", "short": "Int16", "int32": "Int32", "int": "Int32", "int64": "Int64", "long": "Int64",
              "float32": "Float32", "float": "Float32", "float64": "Float64", "double": "Float64",
              "float16": "Float16", "half": "Float16", "bfloat16": "BFloat16"}


def value_type(t: Type, tensor: str = "Tensor") -> str:
    """The C++ type of a value of schema type `t` (no const/ref)."""
    if t.base == "Tensor":
        return f"std::vector<{tensor}>" if t.is_list else tensor
    if t.is_list:  # int[]
        inner = "IntArrayRef"
    else:
        inner = {"Scalar": "Scalar", "int": "int64_t", "float": "double", "bool": "bool", "str": "std::string",
                 "ScalarType": "ScalarType", "Device": "Device", "Generator": "Generator*"}[t.base]
    if t.optional and t.base != "Generator":
        return f"std::optional<{inner}>"
    return inner


def param_type(t: Type, tensor: str = "Tensor") -> str:
    """The C++ parameter type: big values by const reference."""
    v = value_type(t, tensor)
    if t.base == "Tensor" or v.startswith("std::") or v == "Scalar":
        return f"const {v}&"
    return v


def saved_type(t: Type) -> str:
    """The C++ type a backward Node stores an argument as (owning, unlike IntArrayRef)."""
    if t.is_tensor:
        return "SavedVariable"
    if t.is_list and t.base == "int":
        return "std::optional<std::vector<int64_t>>" if t.optional else "std::vector<int64_t>"
    return value_type(t)


def default_value(a: Argument) -> Optional[str]:
    d = a.default
    if d is None:
        return None
    t = a.type
    if d == "None":
        if t.base == "Tensor":
            return "{}"
        if t.base == "Generator":
            return "nullptr"
        return "std::nullopt"
    if t.is_list:
        if d.startswith("["):
            return "IntArrayRef({" + d[1:-1] + "})" if d[1:-1].strip() else "IntArrayRef()"
        return f"IntArrayRef(int64_t({d}))"
    if d in ("True", "False"):
        return d.lower()
    if t.base == "ScalarType":
        return f"ScalarType::{_DTYPE_CPP[d]}"
    if t.base == "str":
        return '"' + d[1:-1] + '"'
    if t.base == "float" and re.match(r"^-?\d+$", d):
        return d + ".0"
    return d


def params(args: List[Argument], tensor: str = "Tensor") -> str:
    return ", ".join(f"{param_type(a.type, tensor)} {a.name}" for a in args)


def _trailing_defaults_only(args: List[Argument]) -> List[bool]:
    """C++ allows defaults only on a suffix of the parameters."""
    ok = [False] * len(args)
    for i in range(len(args) - 1, -1, -1):
        if args[i].default is None:
            break
        ok[i] = True
    return ok


def params_with_defaults(args: List[Argument], tensor: str = "Tensor") -> str:
    allowed = _trailing_defaults_only(args)
    out = []
    for a, ok in zip(args, allowed):
        s = f"{param_type(a.type, tensor)} {a.name}"
        dv = default_value(a) if ok else None
        if dv is not None:
            s += f" = {dv}"
        out.append(s)
    return ", ".join(out)


def return_type(s: FunctionSchema, tensor: str = "Tensor") -> str:
    if not s.returns:
        return "void"
    if len(s.returns) == 1:
        r = s.returns[0]
        if r.type.is_list:
            return f"std::vector<{tensor}>"
        if r.annotation is not None and r.annotation.is_write:
            return f"const {tensor}&"
        return tensor
    return "std::tuple<" + ", ".join(tensor for _ in s.returns) + ">"


def kernel_return_type(s: FunctionSchema) -> str:
    if len(s.returns) == 1 and s.returns[0].type.is_list:
        return "std::vector<TensorBase>"
    if len(s.returns) > 1:
        return "std::tuple<" + ", ".join("TensorBase" for _ in s.returns) + ">"
    return "TensorBase" if s.returns else "void"


def cpp_id(nf: NativeFunction) -> str:
    """A C++ identifier unique to the overload: add.Tensor -> add_Tensor, add_.Tensor -> add__Tensor."""
    s = nf.schema
    return f"{s.name}_{s.overload}" if s.overload else s.name


def api_name(nf: NativeFunction) -> str:
    """The C++ API function name: out= forms are `op_out(out, ...)`, as in libtorch."""
    return f"{nf.schema.name}_out" if nf.schema.is_out else nf.schema.name


def api_args(nf: NativeFunction) -> List[Argument]:
    """API parameter order (out= first for out forms, as in libtorch)."""
    s = nf.schema
    if s.is_out:
        out = s.out_argument
        return [out] + [a for a in s.arguments if a is not out]
    return list(s.arguments)


def call_args(args: List[Argument]) -> str:
    return ", ".join(a.name for a in args)


def is_family(nf: NativeFunction) -> bool:
    return nf.family_role != "single"
