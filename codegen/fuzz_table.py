"""The fuzzer's op table (generated/fuzz/ops.cc): for every operator overload, a function
that decodes its arguments from the fuzz input and calls it through the public C++ API
(and so through the dispatcher). Hand-written: tests/fuzz/fuzz_input.h (the decoders)."""
from __future__ import annotations

from typing import Dict, List

import cpp
from model import Argument, NativeFunction


def _decode(a: Argument) -> List[str]:
    """C++ lines declaring a local named after `a`, read from `in` (a FuzzInput)."""
    t, n = a.type, a.name
    opt = "optional_" if t.optional else ""
    if t.base == "Tensor":
        if t.is_list:
            return [f"const std::vector<Tensor> {n} = in.{'optional_' if t.elem_optional else ''}tensor_list();"]
        return [f"const Tensor {n} = in.{opt}tensor();"]
    if t.is_list:  # int[]: owned here, passed as IntArrayRef
        if t.optional:
            return [f"const auto {n}_values = in.optional_int_list();",
                    f"const std::optional<IntArrayRef> {n} = "
                    f"{n}_values ? std::optional<IntArrayRef>(*{n}_values) : std::nullopt;"]
        return [f"const std::vector<int64_t> {n} = in.int_list();"]
    if t.base == "Generator":
        return [f"Generator* const {n} = nullptr;"]
    reader = {"Scalar": "scalar", "int": "int64", "float": "float64", "bool": "boolean", "str": "string",
              "ScalarType": "dtype", "Device": "device"}[t.base]
    return [f"const auto {n} = in.{opt}{reader}();"]


def fuzz_entries(functions: List[NativeFunction]) -> List[Dict]:
    entries = []
    for nf in functions:
        s = nf.schema
        args = cpp.api_args(nf)
        lines = [line for a in args for line in _decode(a)]
        call = f"kiln::{cpp.api_name(nf)}({cpp.call_args(args)})"  # method-only forms too (kiln::exp_)
        entries.append({"name": s.full_name, "lines": lines, "call": call})
    return entries
