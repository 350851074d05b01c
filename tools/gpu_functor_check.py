#!/usr/bin/python3
"""Runs every generated pointwise functor (generated/pointwise/<name>.h) on a real GPU, compiled by
NVRTC as the CUDA JIT will compile it, and compares its results with the formula interpreter's on
the host (runtime/jit/formula_interpreter.h, the table the JIT reads) and, for float32 unary ops,
its accuracy with torch's own CUDA kernels on the same inputs.

It runs in two steps because the GPU machine lends no Bazel and a different Python:

  /usr/bin/python3 tools/gpu_functor_check.py dump .gpu [N]  # here: N inputs per case + the interpreter's results
  python3 tools/gpu_functor_check.py run .gpu OUTDIR       # on the GPU machine (needs libcuda, NVRTC, torch)

(The fuzz corpus, ~50,000 small files, counts as ~200 MiB against the device tool's 64 MiB tree
limit: move tests/fuzz/corpus aside for the `run` call and back after it.)

`run` exits 1 when a functor differs from the interpreter where it must not: by any bit for a
formula calling no math-library function (compiled with --fmad=false, as the host compiles it: one
rounding per operation), or, where it calls CUDA's math library (whose float functions are 1-4 ulp,
CUDA C Programming Guide, "Mathematical Functions"), by more than TRANSCENDENTAL_ULP_BOUND
ulps of the result, or that many times the formula's own sensitivity (how far the host's result
moves when every input moves one ulp) or its terms' scale (eps times the product of max(1, |input|)):
where a formula cancels or amplifies, a last-bit difference inside is many ulps of the result. The
report lists every functor with its largest difference.
"""
import json
import os
import re
import sys

import numpy as np

REPO = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
N = 4096
# CUDA's documented float32 bounds are at most 4 ulp for the functions the formulas call (erff 2,
# expf 2, logf 1, tanhf 2, sinf/cosf 2, log1pf 1, expm1f 1, atan2f 3, powf 4); a formula composes a
# few of them, and its own arithmetic rounds again.
TRANSCENDENTAL_ULP_BOUND = 8
# The math-library functions a formula may call (codegen/pointwise.py INTRINSICS): a formula
# calling none of them (arithmetic, comparisons, sqrt, fmod, floor, ...) uses only operations
# NVRTC rounds as the host does with --fmad=false, and must give the host's bits.
TRANSCENDENTAL = {"exp", "expm1", "log", "log1p", "sin", "cos", "tanh", "erf", "atan2", "pow", "pow_scalar",
                  "log2", "log10", "exp2", "asin", "acos", "atan", "sinh", "cosh", "tan", "asinh", "acosh",
                  "atanh", "erfc", "erfinv", "hypot", "lgamma", "digamma", "trigamma"}
# The intrinsics a GPU computes with the host's bits (IEEE-exact operations, or integer ones).
# Every intrinsic of codegen/pointwise.py is in one of the two sets (tested): a new one must be
# classified here, or the check would hold a library function to exact bits.
EXACT = {"abs", "floor", "ceil", "trunc", "round", "minimum", "maximum", "sign", "fmod", "isnan",
         "isinf", "isfinite", "sqrt", "copysign", "fma", "nextafter", "gcd", "lcm"}


def calls_math_library(formula):
    return bool(TRANSCENDENTAL & set(re.findall(r"([A-Za-z_][A-Za-z0-9_]*)\s*\(", formula)))


# As the host computes: one rounding per operation (no contraction into FMA), subnormals kept
# (NVRTC's documented default is --ftz=false; it is named so no caller's default can change it),
# IEEE division and square root.
NVRTC_OPTIONS = ("--std=c++17", "--fmad=false", "--ftz=false", "--prec-div=true", "--prec-sqrt=true")
NUMPY_DTYPES = {"float32": np.float32, "float64": np.float64, "int32": np.int32, "int64": np.int64}
CTYPES = {"float32": "float", "float64": "double", "int32": "int", "int64": "long long"}
# torch's function for float32 unary formulas without Scalars, to compare accuracy on the GPU.
TORCH_UNARY = {"exp": "exp", "log": "log", "tanh": "tanh", "sigmoid": "sigmoid", "sqrt": "sqrt",
               "rsqrt": "rsqrt", "log1p": "log1p", "expm1": "expm1", "sin": "sin", "cos": "cos",
               "erf": "erf", "reciprocal": "reciprocal", "silu": "nn.functional.silu",
               "mish": "nn.functional.mish", "log_sigmoid": "nn.functional.logsigmoid",
               "hardswish": "nn.functional.hardswish", "hardsigmoid": "nn.functional.hardsigmoid",
               "frac": "frac"}


def float_samples(rng, dtype, n):
    info = np.finfo(dtype)
    edges = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 0.5, -0.5, 2.0, 3.0, -3.0,
                      info.tiny, -info.tiny, info.tiny / 4, info.max, -info.max, 88.5, -88.5, 710.0,
                      -710.0, 1e-8, -1e-8, 20.0, -20.0, 0.9185, 4.0], dtype)
    body = np.concatenate([rng.standard_normal(n // 2) * 3, rng.uniform(-30, 30, n // 4),
                           np.exp(rng.uniform(-40, 40, n - n // 2 - n // 4)) * rng.choice([-1, 1], n - n // 2 - n // 4)])
    return np.concatenate([edges, body.astype(dtype)])[:n]


def int_samples(rng, dtype, n, nonzero, nonnegative):
    x = rng.integers(-20, 21, n).astype(dtype)
    if nonnegative:
        x = np.abs(x) % 6
    if nonzero:
        x[x == 0] = 3
    return x


def dump(outdir, n=N):
    import kiln
    os.makedirs(outdir, exist_ok=True)
    rng = np.random.default_rng(15)
    cases, arrays = [], {}
    for op, overload, formula, tensors, scalars, dtypes, functor in kiln._C._pointwise_formulas():
        kinds = {"floating": ["float32", "float64"], "integral": ["int32", "int64"]}.get(
            dtypes, ["float32", "float64", "int32", "int64"])
        if formula.startswith("cast("):  # a cast: every pair of dtypes, its functor <From, To>
            for source in kinds:
                x = (float_samples(rng, NUMPY_DTYPES[source], n) if source.startswith("float") else
                     int_samples(rng, NUMPY_DTYPES[source], n, nonzero=False, nonnegative=False))
                for target in kinds:
                    key = f"{functor}.{source}.{target}"
                    arrays[key + ".in0"] = x
                    arrays[key + ".want"] = kiln._C._evaluate_formula(
                        overload, [kiln.from_numpy(x)], [], getattr(kiln, target)).double().numpy()
                    cases.append({"key": key, "functor": functor, "op": op, "dtype": source, "to": target,
                                  "tensors": 1, "scalars": [], "formula": formula})
            continue
        for dtype in kinds:
            for scalar_value in (1, 2):
                key = f"{functor}.{dtype}.{scalar_value}"
                if dtype.startswith("float"):
                    inputs = [float_samples(rng, NUMPY_DTYPES[dtype], n) for _ in tensors]
                    for x in inputs[1:]:
                        rng.shuffle(x)
                else:
                    inputs = [int_samples(rng, NUMPY_DTYPES[dtype], n, nonzero=i > 0, nonnegative=i > 0 and "pow" in functor)
                              for i in range(len(tensors))]
                    if "pow" in functor:
                        inputs[0] = np.clip(inputs[0], -9, 9)
                try:
                    want = kiln._C._evaluate_formula(overload, [kiln.from_numpy(x) for x in inputs],
                                                     [scalar_value] * len(scalars)).double().numpy()
                except Exception as e:  # the interpreter refuses this dtype: say so in the report
                    cases.append({"key": key, "functor": functor, "dtype": dtype, "skipped": f"{type(e).__name__}: {e}"})
                    continue
                reference = None
                if dtype == "float32":  # the formula in float64 on the same float32 inputs
                    reference = kiln._C._evaluate_formula(
                        overload, [kiln.from_numpy(x.astype(np.float64)) for x in inputs],
                        [scalar_value] * len(scalars)).double().numpy()
                    arrays[key + ".reference"] = reference
                if dtype.startswith("float") and calls_math_library(formula):
                    # The formula's sensitivity: its value with every input one ulp up, and down.
                    for name, toward in (("up", np.inf), ("down", -np.inf)):
                        with np.errstate(over="ignore"):
                            moved = [np.nextafter(x, np.asarray(toward, x.dtype)) for x in inputs]
                        arrays[f"{key}.{name}"] = kiln._C._evaluate_formula(
                            overload, [kiln.from_numpy(x) for x in moved], [scalar_value] * len(scalars)).double().numpy()
                for i, x in enumerate(inputs):
                    arrays[f"{key}.in{i}"] = x
                arrays[key + ".want"] = want
                cases.append({"key": key, "functor": functor, "op": op, "dtype": dtype, "tensors": len(tensors),
                              "scalars": [scalar_value] * len(scalars), "formula": formula})
    np.savez_compressed(os.path.join(outdir, "functors.npz"), **arrays)
    with open(os.path.join(outdir, "functors.json"), "w") as f:
        json.dump(cases, f, indent=1)
    print(f"{len(cases)} cases for {len({c['functor'] for c in cases})} functors -> {outdir}")


def ulp_distance(a, b, dtype):
    """Elementwise ulps between a and b in dtype, from their bits ordered like the values
    (NaN == NaN; NaN against a number counts 2**62)."""
    a, b = np.asarray(a, dtype), np.asarray(b, dtype)
    as_int, magnitude = (np.int32, 0x7FFFFFFF) if dtype == np.float32 else (np.int64, 0x7FFFFFFFFFFFFFFF)

    def key(x):
        bits = x.view(as_int).astype(np.int64)
        return np.where(bits < 0, -(bits & magnitude), bits)

    ka, kb = key(a), key(b)
    # Exact in int64 where the signs agree (no overflow); across zero the float sum is close enough.
    same_sign = (ka >= 0) == (kb >= 0)
    d = np.where(same_sign, np.abs(np.where(same_sign, ka - kb, 0)).astype(np.float64),
                 np.abs(ka.astype(np.float64)) + np.abs(kb.astype(np.float64)))
    na, nb = np.isnan(a), np.isnan(b)
    d[na & nb] = 0
    d[na != nb] = 2.0**62
    return d


def kernel_source(cases):
    headers = sorted({c["functor"] for c in cases if "skipped" not in c})
    lines = [f'#include "generated/pointwise/{h}.h"' for h in headers]
    for i, c in enumerate(cases):
        if "skipped" in c:
            continue
        t = CTYPES[c["dtype"]]
        params = ", ".join(f"const {t}* x{j}" for j in range(c["tensors"]))
        args = ", ".join(f"x{j}[i]" for j in range(c["tensors"]))
        scalars = ", ".join(f"static_cast<{t}>({s})" for s in c["scalars"])
        types = f"{t}, {CTYPES[c['to']]}" if "to" in c else t  # a cast's functor: <From, To>
        lines.append(f'extern "C" __global__ void case{i}({params}, double* y, int n) {{\n'
                     f'  const int i = blockIdx.x * blockDim.x + threadIdx.x;\n'
                     f'  if (i < n) y[i] = static_cast<double>(kiln::formulas::{c["functor"]}<{types}>{{{scalars}}}({args}));\n'
                     '}')
    return "\n".join(lines) + "\n"


class Gpu:
    """The CUDA driver API and NVRTC through ctypes, as kiln's CUDA JIT will call them (no CuPy: on
    the H100 its RawModule flushed float32 subnormals to zero even when given --ftz=false)."""

    def __init__(self):
        import ctypes
        self.ct = ctypes
        self.cuda = ctypes.CDLL("libcuda.so.1")
        self.nvrtc = self._load_nvrtc()
        self.check(self.cuda.cuInit(0), "cuInit")
        dev, self.ctx = ctypes.c_int(), ctypes.c_void_p()
        self.check(self.cuda.cuDeviceGet(ctypes.byref(dev), 0), "cuDeviceGet")
        name = ctypes.create_string_buffer(256)
        self.cuda.cuDeviceGetName(name, 256, dev)
        self.name = name.value.decode()
        major, minor = ctypes.c_int(), ctypes.c_int()
        self.cuda.cuDeviceGetAttribute(ctypes.byref(major), 75, dev)  # COMPUTE_CAPABILITY_MAJOR
        self.cuda.cuDeviceGetAttribute(ctypes.byref(minor), 76, dev)  # COMPUTE_CAPABILITY_MINOR
        self.arch = f"sm_{major.value}{minor.value}"
        self.check(self.cuda.cuDevicePrimaryCtxRetain(ctypes.byref(self.ctx), dev), "cuDevicePrimaryCtxRetain")
        self.check(self.cuda.cuCtxSetCurrent(self.ctx), "cuCtxSetCurrent")
        self.cuda.cuMemAlloc_v2.argtypes = [ctypes.POINTER(ctypes.c_uint64), ctypes.c_size_t]
        self.cuda.cuMemcpyHtoD_v2.argtypes = [ctypes.c_uint64, ctypes.c_void_p, ctypes.c_size_t]
        self.cuda.cuMemcpyDtoH_v2.argtypes = [ctypes.c_void_p, ctypes.c_uint64, ctypes.c_size_t]
        self.cuda.cuMemFree_v2.argtypes = [ctypes.c_uint64]

    def _load_nvrtc(self):
        import glob
        candidates = ["libnvrtc.so", "libnvrtc.so.13", "/usr/local/cuda/lib64/libnvrtc.so"]
        candidates += sorted(glob.glob("/usr/local/cuda*/lib64/libnvrtc.so*"))
        for path in candidates:
            try:
                return self.ct.CDLL(path)
            except OSError:
                continue
        raise OSError("libnvrtc not found")

    def check(self, status, what):
        if status != 0:
            raise RuntimeError(f"{what} failed with CUDA status {status}")

    def compile(self, source, options):
        """NVRTC -> cubin for this GPU -> a loaded module."""
        ct = self.ct
        prog = ct.c_void_p()
        assert self.nvrtc.nvrtcCreateProgram(ct.byref(prog), source.encode(), b"functors.cu", 0, None, None) == 0
        opts = [o.encode() for o in options] + [f"--gpu-architecture={self.arch}".encode()]
        status = self.nvrtc.nvrtcCompileProgram(prog, len(opts), (ct.c_char_p * len(opts))(*opts))
        size = ct.c_size_t()
        self.nvrtc.nvrtcGetProgramLogSize(prog, ct.byref(size))
        log = ct.create_string_buffer(size.value)
        self.nvrtc.nvrtcGetProgramLog(prog, log)
        if status != 0:
            raise RuntimeError("NVRTC: " + log.value.decode(errors="replace"))
        self.nvrtc.nvrtcGetCUBINSize(prog, ct.byref(size))
        cubin = ct.create_string_buffer(size.value)
        self.nvrtc.nvrtcGetCUBIN(prog, cubin)
        module = ct.c_void_p()
        self.check(self.cuda.cuModuleLoadData(ct.byref(module), cubin), "cuModuleLoadData")
        return module

    def to_device(self, array):
        ptr = self.ct.c_uint64()
        self.check(self.cuda.cuMemAlloc_v2(self.ct.byref(ptr), max(array.nbytes, 1)), "cuMemAlloc")
        self.check(self.cuda.cuMemcpyHtoD_v2(ptr.value, array.ctypes.data, array.nbytes), "cuMemcpyHtoD")
        return ptr

    def launch(self, module, name, pointers, n):
        """name(pointers..., y, n) over n threads; returns y (float64) from the device."""
        ct = self.ct
        fn = ct.c_void_p()
        self.check(self.cuda.cuModuleGetFunction(ct.byref(fn), module, name.encode()), "cuModuleGetFunction")
        out = np.zeros(n, np.float64)
        y = self.to_device(out)
        count = ct.c_int(n)
        args = [ct.byref(p) for p in pointers] + [ct.byref(y), ct.byref(count)]
        params = (ct.c_void_p * len(args))(*[ct.cast(a, ct.c_void_p) for a in args])
        self.check(self.cuda.cuLaunchKernel(fn, (n + 255) // 256, 1, 1, 256, 1, 1, 0, None, params, None), "cuLaunchKernel")
        self.check(self.cuda.cuCtxSynchronize(), "kernel")
        self.check(self.cuda.cuMemcpyDtoH_v2(out.ctypes.data, y.value, out.nbytes), "cuMemcpyDtoH")
        for p in list(pointers) + [y]:
            self.cuda.cuMemFree_v2(p.value)
        return out


def run(indir, outdir):
    import torch
    with open(os.path.join(indir, "functors.json")) as f:
        cases = json.load(f)
    data = np.load(os.path.join(indir, "functors.npz"))
    gpu = Gpu()
    module = gpu.compile(kernel_source(cases), NVRTC_OPTIONS + (f"-I{REPO}",))
    device = f"{gpu.name} ({gpu.arch})"
    n = data[f"{cases[0]['key']}.in0"].size
    report, failures = [f"# Generated pointwise functors on {device}, NVRTC {' '.join(NVRTC_OPTIONS)}, {n} inputs each", ""], []
    report.append("| functor | dtype | scalars | max ulp vs interpreter | float32: max ulp from the float64 formula: GPU functor / host functor / torch GPU | largest difference |")
    report.append("|---|---|---|---|---|---|")
    for i, c in enumerate(cases):
        if "skipped" in c:
            report.append(f"| {c['functor']} | {c['dtype'] + ' -> ' + c['to'] if 'to' in c else c['dtype']} | | not run: {c['skipped'][:80]} | | |")
            continue
        dtype = NUMPY_DTYPES[c.get("to", c["dtype"])]  # the result's (a cast's target)
        arrays = [np.ascontiguousarray(data[f"{c['key']}.in{j}"]) for j in range(c["tensors"])]
        got = gpu.launch(module, f"case{i}", [gpu.to_device(a) for a in arrays], arrays[0].size)
        want = data[c["key"] + ".want"]
        if dtype in (np.float32, np.float64):
            diff = ulp_distance(got.astype(dtype), want.astype(dtype), dtype)
        else:
            diff = np.where(got == want, 0.0, np.inf)
        exact = not calls_math_library(c["formula"]) or not c["dtype"].startswith("float")  # integer math is exact
        accuracy, bad, where = "", exact and diff.max() > 0, int(np.argmax(diff))
        if c["dtype"] == "float32" and "to" not in c:
            # Against the float64 formula: the GPU's float32 functor may lose no more than
            # TRANSCENDENTAL_ULP_BOUND beyond what the host's float32 functor loses on each input.
            reference = data[c["key"] + ".reference"]
            with np.errstate(over="ignore"):
                reference = reference.astype(np.float32)
            gpu_err = ulp_distance(got.astype(np.float32), reference, np.float32)
            host_err = ulp_distance(want.astype(np.float32), reference, np.float32)
            accuracy = f"{gpu_err.max():.0f} / {host_err.max():.0f}"
            torch_name = TORCH_UNARY.get(c["functor"])
            if torch_name:
                fn = torch
                for part in torch_name.split("."):
                    fn = getattr(fn, part)
                torch_got = fn(torch.from_numpy(data[f"{c['key']}.in0"]).cuda()).cpu().numpy()
                accuracy += f" / {ulp_distance(torch_got, reference, np.float32).max():.0f}"
        if not exact:
            # The formula's own sensitivity: how far its value moves when the inputs move one ulp
            # (where it cancels, or amplifies as erfinv near 1, a last-bit difference in one math
            # function is many ulps of the result). The GPU may differ from the host by
            # TRANSCENDENTAL_ULP_BOUND ulps of the result, or as many times that sensitivity.
            with np.errstate(invalid="ignore", over="ignore"):
                moves = np.maximum(np.abs(data[c["key"] + ".up"] - want), np.abs(data[c["key"] + ".down"] - want))
            moves = np.where(np.isnan(moves), np.inf, moves)
            # ... or of its terms' scale: a math function's last bit is an ulp of values as large as
            # the inputs (gelu's 1 + erf(x) far below 0 cancels to ~0 from terms of size 1).
            terms = np.finfo(dtype).eps * np.prod([np.maximum(1.0, np.abs(data[f"{c['key']}.in{j}"].astype(np.float64)))
                                                   for j in range(c["tensors"])], axis=0)
            with np.errstate(invalid="ignore"):
                beyond = (diff > TRANSCENDENTAL_ULP_BOUND) & ~(np.abs(got - want) <= TRANSCENDENTAL_ULP_BOUND *
                                                               np.maximum(moves, terms))
            if beyond.any():
                bad, where = True, int(np.argmax(beyond))
        worst = diff.max()
        detail = ""
        if worst > 0:
            at = where if bad else int(np.argmax(diff))
            args = ", ".join(repr(float(data[f"{c['key']}.in{j}"][at])) for j in range(c["tensors"]))
            detail = f"at ({args}): GPU {got[at]!r}, host {want[at]!r}"
            if bad:
                failures.append(f"{c['key']} scalars {c['scalars']}: {detail}")
        report.append(f"| {c['functor']} | {c['dtype'] + ' -> ' + c['to'] if 'to' in c else c['dtype']} | {c['scalars']} | {worst:.0f}{' (exact formula)' if exact else ''}"
                      f"{' **FAIL**' if bad else ''} | {accuracy} | {detail} |")
    report += ["", f"{len(failures)} failures"] + failures
    os.makedirs(outdir, exist_ok=True)
    with open(os.path.join(outdir, "gpu_functors.md"), "w") as f:
        f.write("\n".join(report) + "\n")
    print("\n".join(report[-(len(failures) + 2):]))
    return 1 if failures else 0


if __name__ == "__main__":
    if len(sys.argv) >= 3 and sys.argv[1] == "dump":  # dump DIR [N inputs per case]
        dump(sys.argv[2], int(sys.argv[3]) if len(sys.argv) > 3 else N)
    elif len(sys.argv) >= 4 and sys.argv[1] == "run":
        sys.exit(run(sys.argv[2], sys.argv[3]))
    else:
        sys.exit(__doc__)
