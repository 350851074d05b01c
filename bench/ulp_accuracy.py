"""Accuracy of the vectorized formula kernels: max error in float32 ulps against the formula evaluated
in float64 (kiln's formula interpreter, C library double math), for kiln on every SIMD target this
machine has, kiln's scalar functors (the C library's float32 functions), and torch on the same inputs.

    bazel build //:python_package && PYTHONPATH=bazel-bin /usr/bin/python3 bench/ulp_accuracy.py [--stride 67]

The inputs: every STRIDE-th float32 bit pattern (both signs, subnormals, infinities, NaNs), every
float32 in [-4, 4] spaced 2^-12 apart and the ops' special points. --exhaustive takes all 2^32
(about 5 minutes per op and target here). Not a test: tests/python/test_vector_formulas.py asserts
the bound on a smaller sample. The rule (issue 15): no vectorized op less accurate than torch's.
"""
import argparse
import time

import numpy as np

import kiln

try:
    import torch
except ImportError:
    torch = None

OPS = ["exp", "expm1", "log", "log1p", "sin", "cos", "tanh", "sqrt", "rsqrt", "sigmoid", "erf", "log2", "log10", "exp2",
       "asin", "acos", "atan", "sinh", "cosh", "tan", "asinh", "acosh", "atanh", "erfc"]
SPECIAL = np.array([0.0, -0.0, 1e-45, -1e-45, 1.1754942e-38, 1.1754944e-38, 3.4028235e38, -3.4028235e38, np.inf,
                    -np.inf, np.nan, 1.0, -1.0, 0.5, 88.72283, 88.72284, -87.33654, -103.97207, -103.97208, -104.0,
                    39000.0, -39000.0, 39001.0, 1e6, 1e30, np.pi, np.pi / 2, 9.01, -9.01, 1 - 2 ** -24,
                    1 + 2 ** -23, -1 + 2 ** -24], dtype=np.float32)


def ulp_error(got, ref):
    """|got - ref| in float32 ulps at ref (2^-149 below the normal range); 0 where both are NaN or got
    is ref rounded and infinite, inf where only one is NaN or got is an infinity ref does not round to."""
    got = got.astype(np.float64)
    mag = np.abs(ref)
    exponent = np.floor(np.log2(np.where((mag > 0) & np.isfinite(mag), mag, 1.0)))
    ulp = np.exp2(np.maximum(exponent, -126) - 23)
    with np.errstate(invalid="ignore", over="ignore"):
        err = np.abs(got - ref) / ulp
        rounded = ref.astype(np.float32).astype(np.float64)
    err[np.isnan(got) & np.isnan(ref)] = 0
    err[np.isnan(got) != np.isnan(ref)] = np.inf
    infinite = np.isinf(got) | np.isinf(rounded)
    err[infinite] = np.where(got[infinite] == rounded[infinite], 0, np.inf)
    return err


def chunks(stride, exhaustive, size=1 << 23):
    if exhaustive:
        for start in range(0, 2 ** 32, size):
            yield np.arange(start, start + size, dtype=np.uint64).astype(np.uint32).view(np.float32)
        return
    for start in range(0, 2 ** 32, size * stride):
        bits = np.arange(start, min(start + size * stride, 2 ** 32), stride, dtype=np.uint64)
        yield bits.astype(np.uint32).view(np.float32)
    yield np.arange(-4.0, 4.0, 2.0 ** -12, dtype=np.float64).astype(np.float32)
    yield SPECIAL


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--stride", type=int, default=67, help="take every STRIDE-th float32 bit pattern")
    ap.add_argument("--exhaustive", action="store_true", help="every float32 (slow)")
    ap.add_argument("--ops", default=",".join(OPS), help="comma-separated ops")
    args = ap.parse_args()
    targets = kiln._C._simd_targets()
    kernels = [f"kiln {t}" for t in targets[:-1]] + ["kiln scalar (C library)"] + (["torch"] if torch else [])
    if torch:
        torch.set_num_threads(1)
    print(f"kiln vector targets on this CPU: {', '.join(targets[:-1]) or 'none'}; max ulp error vs the formula in "
          f"float64 ({'every float32' if args.exhaustive else f'every {args.stride}th float32 bit pattern'} "
          "+ [-4, 4] every 2^-12 + special points)")
    print(f"{'op':8s} " + " ".join(f"{k:>24s}" for k in kernels))
    for op in args.ops.split(","):
        t0 = time.time()
        worst = {k: (0.0, None) for k in kernels}
        count = 0
        for x in chunks(args.stride, args.exhaustive):
            count += x.size
            with np.errstate(invalid="ignore"):
                x64 = x.astype(np.float64)
            reference = kiln._C._evaluate_formula(op, [kiln.from_numpy(x64)]).numpy()
            kx = kiln.from_numpy(x)
            for k, target in zip(kernels, targets):
                kiln._C._simd_use_target(target)
                got = getattr(kiln, op)(kx).numpy()
                err = ulp_error(got, reference)
                i = int(np.argmax(err))
                if err[i] > worst[k][0]:
                    worst[k] = (float(err[i]), float(x[i]))
            kiln._C._simd_use_target(None)
            if torch:
                err = ulp_error(getattr(torch, op)(torch.from_numpy(x)).numpy(), reference)
                i = int(np.argmax(err))
                if err[i] > worst["torch"][0]:
                    worst["torch"] = (float(err[i]), float(x[i]))
        cells = [f"{e:10.7f} @ {x:<11.4g}" if x is not None else f"{e:10.7f}{'':14s}" for e, x in worst.values()]
        print(f"{op:8s} " + " ".join(f"{c:>24s}" for c in cells) + f"   ({count / 1e6:.0f}M inputs, {time.time() - t0:.0f} s)")


if __name__ == "__main__":
    main()
