#!/usr/bin/env python3
"""Checks the runtime's layering over every `#include "..."` line.

Bazel (with gcc) already fails a build when a target includes a header of a target it does not
depend on at all. This adds what clang's layering_check would: a file may include headers only
from its own layer and the layers its Bazel target depends on *directly* (not through another
layer), and the table below must match the deps written in BUILD.bazel.

    /usr/bin/python3 tools/check_layers.py [REPO_ROOT]     # prints violations, exit 1 if any
"""
from __future__ import annotations

import os
import re
import sys
from typing import Dict, List, Optional, Tuple

# Layer (the Bazel target in //:BUILD.bazel) -> (the files it owns, the layers it may include).
# Order: a path goes to the first layer with a matching prefix (a prefix ending in "*" owns the
# files directly in that folder, not its subfolders).
LAYERS: List[Tuple[str, List[str], List[str]]] = [
    ("core", ["runtime/core/"], []),
    ("dispatch", ["runtime/dispatch/"], ["core"]),
    ("cpu_kernels", ["runtime/kernels/cpu/", "runtime/kernels/*", "generated/kernels/*"], ["core"]),
    ("kiln", ["runtime/api/", "runtime/autograd/", "runtime/kernels/composite/", "runtime/serialization/",
              "generated/api/", "generated/ops/", "generated/autograd/", "generated/kernels/composite/"],
     ["core", "dispatch", "cpu_kernels"]),
    ("kiln/_C.so", ["runtime/python/", "generated/python/"], ["core", "dispatch", "cpu_kernels", "kiln"]),
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
            if p.endswith("*"):
                folder = p[:-1]
                if path.startswith(folder) and "/" not in path[len(folder):]:
                    return name
            elif path.startswith(p):
                return name
    return None


def include_violations(root: str) -> List[str]:
    allowed: Dict[str, List[str]] = {name: deps for name, _, deps in LAYERS}
    out = []
    for top in ("runtime", "generated"):
        for folder, _, files in os.walk(os.path.join(root, top)):
            for f in sorted(files):
                if not f.endswith((".h", ".cc")):
                    continue
                path = os.path.relpath(os.path.join(folder, f), root)
                here = layer_of(path)
                if here is None:
                    continue
                with open(os.path.join(root, path)) as fh:
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


def build_deps(root: str) -> Dict[str, List[str]]:
    """The local (//:x) deps of each cc target in BUILD.bazel."""
    with open(os.path.join(root, "BUILD.bazel")) as fh:
        text = fh.read()
    deps = {}
    for m in re.finditer(r'cc_(?:library|binary)\(\s*name = "([^"]+)",(.*?)\n\)', text, re.S):
        body = m.group(2)
        d = re.search(r"deps = \[(.*?)\]", body, re.S)
        deps[m.group(1)] = sorted(x for x in re.findall(r'"(?://)?:([^"]+)"', d.group(1) if d else ""))
    return deps


def build_mismatches(root: str) -> List[str]:
    deps = build_deps(root)
    out = []
    for name, _, allowed in LAYERS:
        if name not in deps:
            out.append(f"BUILD.bazel: no cc target '{name}' (the layer table in tools/check_layers.py names it)")
        elif deps[name] != sorted(allowed):
            out.append(f"BUILD.bazel: '{name}' depends on {deps[name]}, the layer table says {sorted(allowed)}")
    return out


def main(argv: List[str]) -> int:
    root = argv[1] if len(argv) > 1 else os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    problems = build_mismatches(root) + include_violations(root)
    for p in problems:
        print(p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
