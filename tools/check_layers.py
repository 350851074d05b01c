#!/usr/bin/env python3
"""Checks the runtime's layering over every `#include "..."` line.

Each source file is its own Bazel target whose deps are the headers it includes (tools/gen_build.py,
generated/build_targets.bzl), so Bazel rejects an include the target does not list, and
tools/gen_build.py (run by codegen/gen.py) refuses to list one that breaks the layers below: a
file may include headers only from its own layer and the layers it depends on directly.

    /usr/bin/python3 tools/check_layers.py [REPO_ROOT]     # prints violations, exit 1 if any
"""
from __future__ import annotations

import os
import re
import sys
from typing import Dict, List, Optional, Tuple

# Layer -> (the files it owns, the layers it may include).
# Order: a path goes to the first layer with a matching prefix ("folder/*" owns the files directly
# in that folder, not its subfolders; "folder/*.h" only its headers).
LAYERS: List[Tuple[str, List[str], List[str]]] = [
    # Element conversion (runtime/core/convert.h) is the formulas' cast, from the math layer.
    ("core", ["runtime/core/"], ["math"]),
    ("dispatch", ["runtime/dispatch/"], ["core"]),
    # The scalar math of pointwise formulas: host, nvcc and NVRTC code, no includes at all.
    ("math", ["runtime/kernels/pointwise_math.h", "generated/pointwise/"], []),
    # The Tensor type the generated code and the runtime share; its method list never changes
    # when an op is added (the definitions of the methods live in the api layer).
    ("tensor", ["generated/api/tensor.h"], ["core"]),
    # Declarations only: the kernels each layer above implements, named by the layers that call
    # them (backend and composite kernels, the Autograd-key kernels, view tracking). A call
    # through one of these is how the dispatch glue reaches a kernel without depending on the
    # layer that defines it.
    ("interfaces", ["generated/kernels/*", "generated/kernels/composite/", "generated/autograd/*.h",
                    "runtime/autograd/view_tracking.h"], ["core", "tensor"]),
    # The device-neutral op layer: iteration, promotion, out= and overlap rules, op meta, the
    # reduction plan, tensor memory through the device registry, views.
    ("ops", ["runtime/kernels/*"], ["core", "interfaces"]),
    ("cpu", ["runtime/kernels/cpu/", "generated/cpu/"], ["core", "interfaces", "ops", "math"]),
    # Formulas as data: the generated table, the interpreter, what the JIT generators will read.
    ("jit", ["runtime/jit/", "generated/jit/"], ["core", "ops", "cpu", "math"]),
    # The operator API and its dispatch glue (tables, backend adapters, entry points).
    ("api", ["generated/api/", "generated/ops/", "runtime/api/"], ["core", "dispatch", "tensor", "interfaces"]),
    # The autograd graph, engine and formulas, and the generated nodes and Autograd kernels.
    ("autograd", ["runtime/autograd/", "generated/autograd/"], ["core", "dispatch", "tensor", "interfaces", "api"]),
    # Kernels written with other ops (CompositeImplicit), and safetensors files.
    ("composite", ["runtime/kernels/composite/"], ["core", "dispatch", "tensor", "interfaces", "ops", "api"]),
    ("serialization", ["runtime/serialization/"], ["core", "dispatch", "tensor", "ops", "api"]),
    ("python", ["runtime/python/", "generated/python/"],
     ["core", "dispatch", "tensor", "interfaces", "ops", "cpu", "jit", "api", "autograd", "composite",
      "serialization"]),
]

# Rules the issue names outright, reported with their own words (they are also layer violations).
FORBIDDEN = [
    ("runtime/core/", "runtime/autograd/", "core must not include autograd"),
    ("runtime/core/", "generated/", "core must not include generated code"),
    ("runtime/kernels/cpu/", "generated/api/", "a backend kernel must not include the generated API above it"),
    ("runtime/kernels/cpu/", "generated/ops/", "a backend kernel must not include the dispatch glue above it"),
    ("runtime/kernels/cpu/", "generated/autograd/", "a backend kernel must not include autograd kernels"),
]

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def layer_of(path: str) -> Optional[str]:
    for name, prefixes, _ in LAYERS:
        for p in prefixes:
            if "*" in p:  # "folder/*" or "folder/*.h": files directly in folder (ending so)
                folder, suffix = p.split("*")
                rest = path[len(folder):]
                if path.startswith(folder) and "/" not in rest and rest.endswith(suffix):
                    return name
            elif path.startswith(p):
                return name
    return None


def source_files(root: str, generated: Optional[str] = None) -> Dict[str, str]:
    """Every .h/.cc of ROOT/runtime and GENERATED (default ROOT/generated): repository path
    ("runtime/...", "generated/...") -> file on disk. tools/gen_build.py walks the same files."""
    out = {}
    for top, base in (("runtime", os.path.join(root, "runtime")), ("generated", generated or os.path.join(root, "generated"))):
        for folder, _, files in os.walk(base):
            for f in files:
                if f.endswith((".h", ".cc")):
                    out[os.path.join(top, os.path.relpath(os.path.join(folder, f), base))] = os.path.join(folder, f)
    return dict(sorted(out.items()))


def include_violations(root: str, generated: Optional[str] = None) -> List[str]:
    """Violations in ROOT/runtime and GENERATED (default ROOT/generated)."""
    allowed: Dict[str, List[str]] = {name: deps for name, _, deps in LAYERS}
    out = []
    for path, disk in source_files(root, generated).items():
        here = layer_of(path)
        if here is None:
            continue
        with open(disk) as fh:
            text = fh.read()
        for inc in INCLUDE.findall(text):
            for src, dst, why in FORBIDDEN:
                if path.startswith(src) and inc.startswith(dst):
                    out.append(f"{path}: includes {inc}: {why}")
            there = layer_of(inc)
            if there is None or there == here or there in allowed[here]:
                continue
            out.append(f"{path}: includes {inc} from layer '{there}', which '{here}' does not depend on "
                       f"directly (it may include: {', '.join([here] + allowed[here])})")
    return out


# Tensor memory is reached through the device registry (runtime/core/device_backend.h) outside
# the CPU backend: no host-only allocation or byte moves. The files allowed raw byte moves, and why.
HOST_MEMORY_CALL = re.compile(r"\b(empty_cpu|zeros_cpu|empty_like_cpu|contiguous_cpu|memcpy|memset)\s*\(")
HOST_MEMORY_ALLOWED = {
    "runtime/core/generator.cc": "the generator's state struct, not tensor data",
    "runtime/core/half.h": "bit casts of one value",
    "runtime/core/small_vector.h": "its own inline buffer",
    "runtime/serialization/file_io.cc": "file bytes into a caller's host buffer (safetensors are read into CPU tensors)",
}


def host_memory_violations(root: str, generated: Optional[str] = None) -> List[str]:
    """Calls that assume tensor data lives in host memory, outside the CPU backend."""
    out = []
    for path, disk in source_files(root, generated).items():
        if path.startswith("runtime/kernels/cpu/") or path in HOST_MEMORY_ALLOWED:
            continue
        with open(disk) as fh:
            for number, line in enumerate(fh, 1):
                code = line.split("//")[0]
                m = HOST_MEMORY_CALL.search(code)
                if m:
                    out.append(f"{path}:{number}: calls {m.group(1)}() outside the CPU backend: go through the "
                               "device registry (runtime/kernels/tensor_memory.h)")
    return out


def main(argv: List[str]) -> int:
    root = argv[1] if len(argv) > 1 else os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    problems = include_violations(root) + host_memory_violations(root)
    for p in problems:
        print(p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
