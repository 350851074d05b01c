"""One cc_library per runtime or generated source file (the table is generated/build_targets.bzl,
written by tools/gen_build.py): `h/<path>` for a header, `c/<path>` for a .cc file, each depending
on the targets of the headers it includes. See tools/gen_build.py for why."""

load("@rules_cc//cc:defs.bzl", "cc_library")
load("//:generated/build_targets.bzl", "KILN_FILES")

def _label(path):
    return ":" + ("h/" if path.endswith(".h") else "c/") + path

def kiln_file_targets(copts, python_copts):
    """Declares the per-file targets; returns (all .cc targets, the .cc targets of the Python extension)."""
    sources, python_sources = [], []
    for path, (includes, external) in KILN_FILES.items():
        python = path.startswith("runtime/python/") or path.startswith("generated/python/")
        deps = [_label(i) for i in includes] + external
        if path.endswith(".h"):
            cc_library(name = "h/" + path, hdrs = [path], deps = deps)
        else:
            cc_library(
                name = "c/" + path,
                srcs = [path],
                deps = deps,
                copts = python_copts if python else copts,
                alwayslink = 1,
            )
            (python_sources if python else sources).append(_label(path))
    return sources, python_sources

def kiln_headers(prefix):
    """The header targets of every file under `prefix` (what a user of the C++ API may include)."""
    return [_label(p) for p in KILN_FILES if p.endswith(".h") and p.startswith(prefix)]
