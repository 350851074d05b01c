"""Issue 15's performance goals, kiln against torch in one run: the median of 7 repetitions per case
(kiln's and torch's interleaved), at 1 and at 2 threads, as kiln/torch ratios beside each goal. Not a
test: numbers depend on the machine (the CPU is printed first) and on whatever else runs on it.

    bazel build //:python_package && PYTHONPATH=bazel-bin /usr/bin/python3 bench/formula_goals.py

Goals (lower ratio is better): add mul where at 1e4, 1e5, 1e6 elements (fresh result) <= 0.9;
add(out=) on 16M <= 1.0; sum mean amax amin argmax on 16M <= 1.0; exp log tanh sigmoid gelu erf on
16M (out= and fresh) <= 1.0; float16/bfloat16 add and sum on 1M <= 1.0; and exp log tanh sigmoid
gelu with out= on 16M within 2x of kiln's own add(out=) there.
"""
import platform
import statistics
import subprocess
import time

import numpy as np
import torch

import kiln

REPEATS = 7


def calls_for(fn, number):
    """number, or as many calls as take about 20 ms (after one warm-up call: allocator caches, the first dispatch)."""
    fn()
    if number is not None:
        return number
    t0 = time.perf_counter()
    fn()
    once = time.perf_counter() - t0
    return max(1, min(20000, int(0.02 / max(once, 1e-9))))


def block_time(fn, number):
    t0 = time.perf_counter()
    for _ in range(number):
        fn()
    return (time.perf_counter() - t0) / number


def median_time(fn, number=None):
    """The median over REPEATS of the time per call (number calls each, chosen for ~20 ms)."""
    number = calls_for(fn, number)
    return statistics.median(block_time(fn, number) for _ in range(REPEATS))


def paired_times(kiln_fn, torch_fn, number=None):
    """The median times per call of kiln_fn and torch_fn, their repetitions interleaved (kiln, torch,
    kiln, ...): this virtual machine's memory speed drifts by a third within a minute, and measuring one
    library's repetitions all before the other's put that drift into the ratio."""
    nk, nt = calls_for(kiln_fn, number), calls_for(torch_fn, number)
    ks, ts = [], []
    for _ in range(REPEATS):
        ks.append(block_time(kiln_fn, nk))
        ts.append(block_time(torch_fn, nt))
    return statistics.median(ks), statistics.median(ts)


def cpu_name():
    try:
        for line in subprocess.run(["lscpu"], capture_output=True, text=True).stdout.splitlines():
            if line.startswith("Model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def fmt(seconds):
    return f"{seconds * 1e3:9.3f} ms" if seconds >= 1e-3 else f"{seconds * 1e6:9.2f} us"


class Table:
    def __init__(self):
        self.missed = []

    def row(self, name, times, goal):
        k, t = times
        ratio = k / t
        ok = ratio <= goal
        if not ok:
            self.missed.append(name)
        print(f"  {name:44s} kiln {fmt(k)}  torch {fmt(t)}  kiln/torch {ratio:5.2f}  goal <= {goal:.1f}  "
              f"{'met' if ok else 'MISSED'}")


def run(threads, table):
    kiln.set_num_threads(threads)
    torch.set_num_threads(threads)
    rng = np.random.default_rng(0)
    print(f"\n{threads} thread(s); kiln's vector kernels: {kiln._C._simd_target()}")
    for n in (10 ** 4, 10 ** 5, 10 ** 6):
        a, b = rng.standard_normal(n).astype(np.float32), rng.standard_normal(n).astype(np.float32)
        ka, kb, ta, tb = kiln.from_numpy(a), kiln.from_numpy(b), torch.from_numpy(a), torch.from_numpy(b)
        kc, tc = ka > 0, ta > 0
        table.row(f"add {n:.0e} fresh", paired_times(lambda: ka + kb, lambda: ta + tb), 0.9)
        table.row(f"mul {n:.0e} fresh", paired_times(lambda: ka * kb, lambda: ta * tb), 0.9)
        table.row(f"where {n:.0e} fresh", paired_times(lambda: kiln.where(kc, ka, kb), lambda: torch.where(tc, ta, tb)), 0.9)

    n = 16 * 1024 * 1024
    x = rng.standard_normal(n).astype(np.float32)
    kx, tx = kiln.from_numpy(x), torch.from_numpy(x)  # the same memory: reads cost both the same
    kout, tout = kiln.empty(n), torch.empty(n)
    add_times = paired_times(lambda: kiln.add(kx, kx, out=kout), lambda: torch.add(tx, tx, out=tout), 3)
    k_add = add_times[0]
    table.row("add 16M out=", add_times, 1.0)
    for op in ("sum", "mean", "amax", "amin", "argmax"):
        table.row(f"{op} 16M", paired_times(lambda: getattr(kiln, op)(kx), lambda: getattr(torch, op)(tx), 3), 1.0)
    # log takes |x|; gelu through torch._C._nn for its out= (torch.nn.functional.gelu has none).
    kabs, tabs = kx.abs(), tx.abs()
    ops = {
        "exp": (lambda o: kiln.exp(kx, out=o), lambda o: torch.exp(tx, out=o), kiln.exp, torch.exp, False),
        "log": (lambda o: kiln.log(kabs, out=o), lambda o: torch.log(tabs, out=o), kiln.log, torch.log, True),
        "tanh": (lambda o: kiln.tanh(kx, out=o), lambda o: torch.tanh(tx, out=o), kiln.tanh, torch.tanh, False),
        "sigmoid": (lambda o: kiln.sigmoid(kx, out=o), lambda o: torch.sigmoid(tx, out=o), kiln.sigmoid,
                    torch.sigmoid, False),
        "gelu": (lambda o: kiln.gelu(kx, out=o), lambda o: torch._C._nn.gelu(tx, out=o), kiln.nn.functional.gelu,
                 torch.nn.functional.gelu, False),
        "erf": (lambda o: kiln.erf(kx, out=o), lambda o: torch.erf(tx, out=o), kiln.erf, torch.erf, False),
    }
    own = []
    for op, (k_out, t_out, k_fn, t_fn, uses_abs) in ops.items():
        kin, tin = (kabs, tabs) if uses_abs else (kx, tx)
        out_times = paired_times(lambda: k_out(kout), lambda: t_out(tout), 3)
        k = out_times[0]
        table.row(f"{op} 16M out=", out_times, 1.0)
        table.row(f"{op} 16M fresh", paired_times(lambda: k_fn(kin), lambda: t_fn(tin), 3), 1.0)
        if op != "erf":
            own.append((op, k))
    for op, k in own:
        ratio = k / k_add
        ok = ratio <= 2.0
        if not ok:
            table.missed.append(f"{op} 16M out= vs add(out=)")
        print(f"  {op + ' 16M out= / kiln add(out=)':44s} {ratio:5.2f}  goal <= 2.0  {'met' if ok else 'MISSED'}")

    m = 1 << 20
    y = rng.standard_normal(m).astype(np.float32)
    for name in ("float16", "bfloat16"):
        ky = kiln.from_numpy(y).to(getattr(kiln, name))
        ty = torch.from_numpy(y.copy()).to(getattr(torch, name))
        table.row(f"add 1M {name} fresh", paired_times(lambda: ky + ky, lambda: ty + ty), 1.0)
        table.row(f"sum 1M {name}", paired_times(lambda: ky.sum(), lambda: ty.sum()), 1.0)


def main():
    print(f"CPU: {cpu_name()}; torch {torch.__version__}; median of {REPEATS} repetitions per case, kiln's and torch's interleaved")
    table = Table()
    for threads in (1, 2):
        run(threads, table)
    print(f"\n{len(table.missed)} goal(s) missed" + (": " + ", ".join(table.missed) if table.missed else ""))


if __name__ == "__main__":
    main()
