"""Per-call overhead of small ops on plain tensors (what the __torch_function__ checks must not slow):
x + y, kiln.add, x.add, kiln.cat, F.relu, x.sum on 10-element tensors; best of 7 x 20000 calls.

    PYTHONPATH=bazel-bin /usr/bin/python3 bench/small_op_overhead.py [--json]

For a before/after comparison run it against both builds alternately, a few times, and keep the
minimum of each (a shared machine's noise is larger than the difference being measured)."""
import json
import sys
import timeit

import kiln

x = kiln.randn(10)
y = kiln.randn(10)
F = kiln.nn.functional
CASES = {
    "x + y": lambda: x + y,
    "kiln.add(x, y)": lambda: kiln.add(x, y),
    "kiln.mul(x, y)": lambda: kiln.mul(x, y),
    "x.add(y)": lambda: x.add(y),
    "kiln.cat([x, y])": lambda: kiln.cat([x, y]),
    "F.relu(x)": lambda: F.relu(x),
    "x.sum()": lambda: x.sum(),
}

if __name__ == "__main__":
    ns = {name: min(timeit.repeat(f, number=20000, repeat=7)) / 20000 * 1e9 for name, f in CASES.items()}
    if "--json" in sys.argv:
        print(json.dumps(ns))
    else:
        for name, t in ns.items():
            print(f"{name:18s} {t:7.0f} ns/call")
