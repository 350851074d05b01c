"""softmax, log_softmax and nll_loss (forward and backward) on a (700, 10000) float32 input, kiln
against torch in one run (median of 7, one thread unless --threads). Not a test: the numbers
depend on the machine (the CPU is printed first) and on whatever else runs on it.

    bazel build //:python_package && PYTHONPATH=bazel-bin /usr/bin/python3 bench/softmax_nll.py
"""
import argparse
import statistics
import time

import numpy as np
import torch

import kiln

from formula_goals import cpu_name, fmt

REPEATS = 7


def median_time(fn, number=None):
    fn()
    if number is None:
        t0 = time.perf_counter()
        fn()
        once = time.perf_counter() - t0
        number = max(1, min(2000, int(0.05 / max(once, 1e-9))))
    times = []
    for _ in range(REPEATS):
        t0 = time.perf_counter()
        for _ in range(number):
            fn()
        times.append((time.perf_counter() - t0) / number)
    return statistics.median(times)


def cases(lib, x_np, t_np, dtype):
    F = lib.nn.functional
    x = lib.tensor(x_np).to(dtype)
    t = lib.tensor(t_np)
    ls = F.log_softmax(x, 1)
    g = lib.tensor(np.random.default_rng(1).standard_normal(x_np.shape).astype(np.float32)).to(dtype)
    sm = F.softmax(x, 1)

    def train():
        xr = x.detach().requires_grad_(True)
        F.nll_loss(F.log_softmax(xr, 1), t).backward()

    def softmax_bwd():
        xr = x.detach().requires_grad_(True)
        F.softmax(xr, 1).backward(g)

    out = {
        "softmax": lambda: F.softmax(x, 1),
        "log_softmax": lambda: F.log_softmax(x, 1),
        "nll_loss": lambda: F.nll_loss(ls, t),
        "softmax fwd+bwd": softmax_bwd,
        "nll(log_softmax) fwd+bwd": train,
    }
    if dtype == lib.float32:
        out["log_softmax dim=0"] = lambda: F.log_softmax(x, 0)
    return out


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--rows", type=int, default=700)
    p.add_argument("--cols", type=int, default=10000)
    a = p.parse_args()
    torch.set_num_threads(a.threads)
    kiln.set_num_threads(a.threads)
    rng = np.random.default_rng(0)
    x_np = rng.standard_normal((a.rows, a.cols)).astype(np.float32)
    t_np = rng.integers(0, a.cols, a.rows)
    print(f"{cpu_name()}, {a.threads} thread(s), ({a.rows}, {a.cols}), kiln SIMD target {kiln._C._simd_target()}")
    for dname in ["float32", "bfloat16"]:
        kc = cases(kiln, x_np, t_np, getattr(kiln, dname))
        tc = cases(torch, x_np, t_np, getattr(torch, dname))
        for name in kc:
            k = median_time(kc[name])
            t = median_time(tc[name])
            print(f"{dname:9s} {name:26s} kiln {fmt(k)}  torch {fmt(t)}  kiln/torch {k / t:6.2f}")


if __name__ == "__main__":
    main()
