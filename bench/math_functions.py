"""The math functions beyond issue 15's goal list (trigonometric, hyperbolic, log2/log10/exp2, erfc,
erfinv, lgamma, digamma, hypot, atan2, copysign) and a Dirichlet log-likelihood step, kiln against
torch in one run: the median of 7 repetitions of
op(x, out=) on 1M float32, 1 thread, as kiln/torch ratios. Not a test: numbers depend on the
machine (the CPU is printed first) and on whatever else runs on it.

    bazel build //:python_package && PYTHONPATH=bazel-bin /usr/bin/python3 bench/math_functions.py
"""
import numpy as np
import torch

import kiln
from formula_goals import cpu_name, fmt, median_time

# op -> the inputs' range (inside each function's domain, where torch and kiln do real work)
UNARY = {"log2": (0.01, 100), "log10": (0.01, 100), "exp2": (-20, 20), "asin": (-1, 1), "acos": (-1, 1),
         "atan": (-10, 10), "sinh": (-10, 10), "cosh": (-10, 10), "tan": (-1.5, 1.5), "asinh": (-100, 100),
         "acosh": (1, 100), "atanh": (-0.99, 0.99), "erfc": (-4, 4), "erfinv": (-0.99, 0.99),
         "lgamma": (0.01, 50), "digamma": (0.01, 50)}
BINARY = {"hypot": (-100, 100), "atan2": (-100, 100), "copysign": (-100, 100)}


def main():
    kiln.set_num_threads(1)
    torch.set_num_threads(1)
    print(f"CPU: {cpu_name()}; torch {torch.__version__}; kiln's vector kernels: {kiln._C._simd_target()}; "
          "1M float32, out=, 1 thread, median of 7")
    rng = np.random.default_rng(0)
    n = 1 << 20
    kout, tout = kiln.empty(n), torch.empty(n)
    for op, (lo, hi) in list(UNARY.items()) + list(BINARY.items()):
        args = [rng.uniform(lo, hi, n).astype(np.float32) for _ in range(2 if op in BINARY else 1)]
        kargs, targs = [kiln.from_numpy(a) for a in args], [torch.from_numpy(a) for a in args]
        k = median_time(lambda: getattr(kiln, op)(*kargs, out=kout))
        t = median_time(lambda: getattr(torch, op)(*targs, out=tout))
        print(f"  {op:10s} kiln {fmt(k)}  torch {fmt(t)}  kiln/torch {k / t:5.2f}")
    # the distributions' lgamma/digamma-heavy path: a Dirichlet log-likelihood and its gradient
    conc = rng.uniform(0.5, 5, (4096, 32)).astype(np.float32)
    value = rng.dirichlet(np.ones(32), 4096).astype(np.float32)

    def step(lib):
        c = lib.tensor(conc, requires_grad=True)
        lib.distributions.Dirichlet(c).log_prob(lib.from_numpy(value)).sum().backward()
    k, t = median_time(lambda: step(kiln)), median_time(lambda: step(torch))
    print(f"  {'Dirichlet log_prob + backward (4096 x 32)':10s} kiln {fmt(k)}  torch {fmt(t)}  kiln/torch {k / t:5.2f}")


if __name__ == "__main__":
    main()
