"""The vectorized CPU kernels of pointwise formulas (generated/cpu/<op>.cc with a vector loop,
runtime/kernels/cpu/vector_formula-inl.h): contiguous float32 runs go to a vector loop on the best
instruction set Highway's dispatch finds. Formulas with exp, log, log1p, sin, cos, erf or another
intrinsic of SLEEF_INTRINSICS (codegen/pointwise.py) are computed in float lanes with Sleef's
functions (torch's; tanh and erf on AVX2 and AVX3 are kiln's own); those with another transcendental
intrinsic (expm1, exp2, hypot, atan2) in
double lanes, rounded once; formulas of exact operations (sqrt, rsqrt, copysign) in float lanes.

Checked on every target this build has for this CPU (kiln._C._simd_targets(): AVX3, AVX2, SSE4 on
an AVX-512 machine, each forced in turn with kiln._C._simd_use_target):
* accuracy: double lanes at most VECTOR_ULP_BOUND float32 ulp from the formula evaluated in float64
  (the formula interpreter, kiln._C._evaluate_formula), Sleef lanes never more ulps off than torch
  on the same inputs, exact float lanes the scalar functor's bits, on a sample of the whole float32
  range;
* the IEEE answers at the special points (infinities, NaN, signed zeros, poles), bit for bit, as
  the C library and torch give them;
* that the vector path runs at all (double and Sleef lanes differ from the scalar functor, the C
  library's float32 functions, somewhere), and that float16, bfloat16 and integer
  inputs take it too;
* that an element's result does not depend on where it sits in a run, on the layout (strided
  runs go through the vector loop too) or on the thread count.
"""
import math

import numpy as np
import pytest

import kiln
from op_db.schema_facts import _load as load_schema
from op_db.schema_facts import NO_PYTHON_OUT, vector_formula_ops
from op_db.ulp import VECTOR_ULP_BOUND, torch_ulp_error, ulp_error

# The one-tensor formulas without Scalars (exp, sigmoid, ...): this file's tests call them as op(x).
# Formulas with Scalars or two tensors (add, gelu, clamp) are checked at the end of this file and,
# on every op record, by test_pointwise_formulas.py.
LANES = {op: lanes for op, lanes in vector_formula_ops().items()
         if [a.type.is_tensor for a in next(nf.schema for nf in load_schema()[0] if nf.schema.full_name == op).arguments]
         == [True]}
ALL_LANES = vector_formula_ops()
VECTOR_OPS = sorted(op for op, lanes in LANES.items() if not lanes.startswith("scalar"))
# Ops that refuse integer inputs (silu, as torch), where exp(int32) computes in float32.
FLOATING_ONLY = {nf.schema.full_name for nf in load_schema()[0]
                 if nf.pointwise is not None and nf.pointwise.dtypes == "floating" and nf.pointwise.promote == "none"}
DOUBLE_LANE_OPS = sorted(op for op, lanes in LANES.items() if lanes == "double")
SLEEF_LANE_OPS = sorted(op for op, lanes in LANES.items() if lanes == "sleef")
FLOAT_LANE_OPS = sorted(op for op, lanes in LANES.items() if lanes == "exact")
TARGETS = kiln._C._simd_targets()
BASELINE = TARGETS[-1]          # Highway's portable baseline: the scalar functors
VECTOR_TARGETS = TARGETS[:-1]


@pytest.fixture
def on_target(request):
    """Runs the test with the vector kernels on `request.param`, then back on the best target."""
    kiln._C._simd_use_target(request.param)
    assert kiln._C._simd_target() == request.param
    yield request.param
    kiln._C._simd_use_target(None)


def test_which_ops_are_vectorized():
    # Formulas with exp, log, log1p, sin, cos or erf on Sleef: double lanes were slower than torch.
    assert {"exp", "log", "log1p", "sin", "cos", "erf", "tanh", "sigmoid", "log2", "log10", "asin", "acos", "atan", "sinh",
            "cosh", "tan", "asinh", "acosh", "atanh", "erfc"} <= set(SLEEF_LANE_OPS)
    assert {"expm1", "exp2"} <= set(DOUBLE_LANE_OPS)
    assert {"hypot", "atan2"} <= {op for op, lanes in ALL_LANES.items() if lanes == "double"}
    assert {"copysign.Tensor"} <= {op for op, lanes in ALL_LANES.items() if lanes == "exact"}
    assert {"sqrt", "rsqrt"} <= set(FLOAT_LANE_OPS)


def cpu_flags():
    try:
        with open("/proc/cpuinfo") as fh:
            return set(next(line for line in fh if line.startswith("flags")).split(":")[1].split())
    except (OSError, StopIteration):
        return set()


def test_dispatch_picks_the_best_target_this_cpu_has():
    flags = cpu_flags()
    expected = ("AVX3" if {"avx512f", "avx512vl", "avx512dq", "avx512bw"} <= flags else
                "AVX2" if {"avx2", "fma", "bmi2", "f16c"} <= flags else
                "SSE4" if {"sse4_1", "sse4_2", "pclmulqdq", "aes"} <= flags else BASELINE)
    if flags:
        assert kiln._C._simd_target() == expected
    assert TARGETS[0] == kiln._C._simd_target()
    assert BASELINE in ("SCALAR", "EMU128")
    with pytest.raises(ValueError, match="not a target this build has"):
        kiln._C._simd_use_target("NEON")


def sample():
    """~1M float32 values: every 4099th bit pattern (the whole range, both signs, subnormals, inf,
    NaN), a dense run around 0 and +-1, and the special points of the ops."""
    bits = np.arange(0, 2 ** 32, 4099, dtype=np.uint64).astype(np.uint32)
    spread = bits.view(np.float32)
    near = np.linspace(-4, 4, 100001, dtype=np.float32)
    special = np.array([0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 2.0, np.pi, -np.pi, np.pi / 2, 1e-45, -1e-45, 1.1754942e-38,
                        1.1754944e-38, 3.4028235e38, -3.4028235e38, 88.72283, 88.72284, -87.33654, -103.97207,
                        -103.97208, -104.0, 39000.0, -39000.0, 39001.0, 1e6, 1e30, -1e30, 9.01, -9.01,
                        1 - 2 ** -24, 1 + 2 ** -23, -1 + 2 ** -24, np.inf, -np.inf, np.nan], dtype=np.float32)
    return np.concatenate([spread, near, special])


X = sample()
X32 = kiln.from_numpy(X)
with np.errstate(invalid="ignore"):  # NaN payloads
    X64 = kiln.from_numpy(X.astype(np.float64))


@pytest.mark.parametrize("on_target", VECTOR_TARGETS, indirect=True)
@pytest.mark.parametrize("op", DOUBLE_LANE_OPS)
def test_double_lanes_are_within_the_ulp_bound_of_the_float64_formula(op, on_target):
    with np.errstate(all="ignore"):
        reference = kiln._C._evaluate_formula(op, [X64]).numpy()
        got = getattr(kiln, op)(X32).numpy()
    err = ulp_error(got, reference)
    worst = int(np.argmax(err))
    assert err[worst] <= VECTOR_ULP_BOUND, \
        f"{op} on {on_target}: {err[worst]:.4g} ulp at x={X[worst]!r} (got {got[worst]!r}, float64 {reference[worst]!r})"


@pytest.mark.parametrize("on_target", VECTOR_TARGETS, indirect=True)
@pytest.mark.parametrize("op", SLEEF_LANE_OPS)
def test_sleef_lanes_are_never_less_accurate_than_torch(op, on_target):
    # torch's CPU kernels call the same Sleef functions (its AVX2 or AVX-512 build of them); kiln's
    # SSE4 build lacks FMA, so each target is held to torch's worst error on the same inputs.
    pytest.importorskip("torch")
    with np.errstate(all="ignore"):
        reference = kiln._C._evaluate_formula(op, [X64]).numpy()
        got = getattr(kiln, op)(X32).numpy()
    err, bar = ulp_error(got, reference), torch_ulp_error(op, X, reference).max()
    worst = int(np.argmax(err))
    assert err[worst] <= max(bar, VECTOR_ULP_BOUND), \
        f"{op} on {on_target}: {err[worst]:.4g} ulp at x={X[worst]!r} (got {got[worst]!r}, float64 " \
        f"{reference[worst]!r}), torch {bar:.4g}"


@pytest.mark.parametrize("on_target", VECTOR_TARGETS, indirect=True)
def test_log1p_of_huge_values_is_finite(on_target):
    # Sleef's log1pf (and torch's log1p) gives inf from 1e38 up; kiln's takes log there.
    x = np.repeat(np.array([1e38, 1.5e38, 3.4028235e38, -0.5, 1e37], np.float32), 17)
    want = np.log1p(x.astype(np.float64))
    assert ulp_error(kiln.log1p(kiln.from_numpy(x)).numpy(), want).max() <= VECTOR_ULP_BOUND


@pytest.mark.parametrize("on_target", VECTOR_TARGETS, indirect=True)
@pytest.mark.parametrize("op", FLOAT_LANE_OPS)
def test_float_lanes_give_the_scalar_functors_bits(op, on_target):
    # Exact operations round the same in a vector as one at a time.
    assert same_bits(getattr(kiln, op)(X32).numpy(), kiln._C._evaluate_formula(op, [X32]).numpy())


# Special points with the C library's (and torch's) IEEE answers; -0.0 and 0.0 differ here.
INF, NAN = math.inf, math.nan
SPECIAL = {
    "exp": [(INF, INF), (-INF, 0.0), (NAN, NAN), (0.0, 1.0), (-0.0, 1.0), (89.0, INF), (-104.0, 0.0), (1e30, INF)],
    "expm1": [(INF, INF), (-INF, -1.0), (NAN, NAN), (0.0, 0.0), (-0.0, -0.0), (89.0, INF), (-1e30, -1.0)],
    "log": [(0.0, -INF), (-0.0, -INF), (-1.0, NAN), (-INF, NAN), (INF, INF), (NAN, NAN), (1.0, 0.0)],
    "log1p": [(-1.0, -INF), (-2.0, NAN), (-INF, NAN), (INF, INF), (NAN, NAN), (0.0, 0.0), (-0.0, -0.0)],
    "sin": [(INF, NAN), (-INF, NAN), (NAN, NAN), (0.0, 0.0), (-0.0, -0.0)],
    "cos": [(INF, NAN), (-INF, NAN), (NAN, NAN), (0.0, 1.0), (-0.0, 1.0)],
    "tanh": [(INF, 1.0), (-INF, -1.0), (NAN, NAN), (0.0, 0.0), (-0.0, -0.0), (20.0, 1.0), (-20.0, -1.0)],
    "sqrt": [(-0.0, -0.0), (0.0, 0.0), (-1.0, NAN), (INF, INF), (-INF, NAN), (NAN, NAN)],
    "rsqrt": [(0.0, INF), (-0.0, -INF), (-1.0, NAN), (INF, 0.0), (NAN, NAN)],
    "sigmoid": [(INF, 1.0), (-INF, 0.0), (NAN, NAN), (0.0, 0.5), (-0.0, 0.5), (-200.0, 0.0), (200.0, 1.0)],
    "erf": [(INF, 1.0), (-INF, -1.0), (NAN, NAN), (0.0, 0.0), (-0.0, -0.0), (10.0, 1.0), (-10.0, -1.0),
            (1e-45, 1e-45), (-1e-45, -1e-45)],
    "log2": [(0.0, -INF), (-0.0, -INF), (-1.0, NAN), (INF, INF), (NAN, NAN), (1.0, 0.0), (8.0, 3.0)],
    "log10": [(0.0, -INF), (-1.0, NAN), (INF, INF), (NAN, NAN), (1.0, 0.0), (1000.0, 3.0)],
    "exp2": [(INF, INF), (-INF, 0.0), (NAN, NAN), (0.0, 1.0), (10.0, 1024.0), (-149.0, 1e-45), (128.0, INF)],
    "asin": [(2.0, NAN), (-INF, NAN), (NAN, NAN), (0.0, 0.0), (-0.0, -0.0)],
    "acos": [(2.0, NAN), (INF, NAN), (NAN, NAN), (1.0, 0.0)],
    "atan": [(INF, math.pi / 2), (-INF, -math.pi / 2), (NAN, NAN), (0.0, 0.0), (-0.0, -0.0)],
    "sinh": [(INF, INF), (-INF, -INF), (NAN, NAN), (0.0, 0.0), (-0.0, -0.0)],
    "cosh": [(INF, INF), (-INF, INF), (NAN, NAN), (0.0, 1.0), (-0.0, 1.0)],
    "tan": [(INF, NAN), (NAN, NAN), (0.0, 0.0), (-0.0, -0.0)],
    "asinh": [(INF, INF), (-INF, -INF), (NAN, NAN), (0.0, 0.0), (-0.0, -0.0)],
    "acosh": [(1.0, 0.0), (0.5, NAN), (-INF, NAN), (INF, INF), (NAN, NAN)],
    "atanh": [(1.0, INF), (-1.0, -INF), (2.0, NAN), (NAN, NAN), (0.0, 0.0), (-0.0, -0.0)],
    "erfc": [(INF, 0.0), (-INF, 2.0), (NAN, NAN), (0.0, 1.0), (100.0, 0.0)],
}


@pytest.mark.parametrize("on_target", VECTOR_TARGETS, indirect=True)
def test_large_arguments_of_hyperbolic_functions_stay_finite(on_target):
    # Sleef's sinhf, coshf (torch's: inf from 88.72 up, though the result is finite up to 89.41),
    # asinhf and acoshf (inf from 2^64 up) overflow early; kiln's take another way there.
    x = np.repeat(np.array([88.75, -89.4, 89.0, 1e20, 3.4028235e38, 2.0 ** 62, 2.0 ** 64], np.float32), 17)
    x64 = x.astype(np.float64)
    for op, want in (("sinh", np.sinh(x64[:51])), ("cosh", np.cosh(x64[:51])),
                     ("asinh", np.arcsinh(x64[51:])), ("acosh", np.arccosh(x64[51:]))):
        got = getattr(kiln, op)(kiln.from_numpy(x[:51] if op in ("sinh", "cosh") else x[51:])).numpy()
        assert ulp_error(got, want).max() <= 1.0, (op, on_target, got[::17], want[::17])


def same_bits(a, b):
    a, b = np.asarray(a, np.float32), np.asarray(b, np.float32)
    return bool(np.all((np.isnan(a) & np.isnan(b)) | ((a == b) & (np.signbit(a) == np.signbit(b)))))


def test_the_special_points_are_of_vectorized_ops():
    assert set(SPECIAL) <= set(VECTOR_OPS)


# For any double-lane op, a new one included: the float64 formula at these points, rounded once.
GENERIC_SPECIAL = [0.0, -0.0, INF, -INF, NAN, 1.0, -1.0, 0.5, -2.0, 1e-45, -1e-45, 3.4028235e38, -3.4028235e38,
                   89.0, -104.0, 1e30, -1e30]


@pytest.mark.parametrize("on_target", VECTOR_TARGETS, indirect=True)
@pytest.mark.parametrize("op", DOUBLE_LANE_OPS)
def test_double_lanes_round_the_float64_formula_at_special_points(op, on_target):
    x = np.repeat(np.array(GENERIC_SPECIAL, np.float32), 17)
    with np.errstate(all="ignore"):
        want = kiln._C._evaluate_formula(op, [kiln.from_numpy(x.astype(np.float64))]).numpy().astype(np.float32)
    got = getattr(kiln, op)(kiln.from_numpy(x)).numpy()
    assert same_bits(got, want), (op, on_target, GENERIC_SPECIAL, got[::17], want[::17])


@pytest.mark.parametrize("on_target", TARGETS, indirect=True)
@pytest.mark.parametrize("op", sorted(SPECIAL))
def test_special_points_give_the_ieee_answers(op, on_target):
    inputs, expected = zip(*SPECIAL[op])
    # Repeated so full vectors (and the padded tail) of every width see each point.
    x = np.repeat(np.array(inputs, np.float32), 17)
    got = getattr(kiln, op)(kiln.from_numpy(x)).numpy()
    assert same_bits(got, np.repeat(np.array(expected, np.float32), 17)), (op, on_target, inputs, got[::17])


@pytest.mark.parametrize("op", sorted(SPECIAL))
def test_special_points_agree_with_torch(op):
    torch = pytest.importorskip("torch")
    x = np.array([i for i, _ in SPECIAL[op]], np.float32)
    assert same_bits(getattr(kiln, op)(kiln.from_numpy(x)).numpy(), getattr(torch, op)(torch.from_numpy(x)).numpy())


def scalar_functor_result(op, x):
    """The scalar functor on every element: the kernel with the vector loops off (the baseline)."""
    kiln._C._simd_use_target(BASELINE)
    try:
        return getattr(kiln, op)(x).numpy()
    finally:
        kiln._C._simd_use_target(None)


@pytest.mark.parametrize("op", VECTOR_OPS)
def test_the_vector_path_runs_on_contiguous_float32(op):
    if not VECTOR_TARGETS:
        pytest.fail("no vector target on this CPU: the test needs SSE4 at least")
    x = kiln.from_numpy(np.random.default_rng(0).uniform(0.01, 8, 1 << 16).astype(np.float32))
    vector, scalar = getattr(kiln, op)(x).numpy(), scalar_functor_result(op, x)
    if op in FLOAT_LANE_OPS:
        # Exact operations: the vector loop gives the scalar functor's bits (only the dispatch test
        # above can tell that it ran).
        assert same_bits(vector, scalar)
    else:
        # The C library's float32 functions (and a formula rounded after every step) are not
        # correctly rounded everywhere; the double-lane path nearly is, and Sleef's functions
        # err elsewhere. Some results must differ, unless the scalar functor is correctly rounded
        # on these inputs too (exp2f): then both must be.
        with np.errstate(all="ignore"):
            reference = kiln._C._evaluate_formula(op, [x.double()]).numpy()
        if ulp_error(scalar, reference).max() <= 0.5 and op in DOUBLE_LANE_OPS:
            assert ulp_error(vector, reference).max() <= VECTOR_ULP_BOUND
        else:
            assert not same_bits(vector, scalar), f"{op}: contiguous float32 gave the scalar functor's bits"
    # Strided input and strided out= go through the same vector loop (via a buffer): same bits.
    big = kiln.zeros(2 * x.numel())
    big[::2].copy_(x)
    assert same_bits(getattr(kiln, op)(big[::2]).numpy(), vector)
    if op in NO_PYTHON_OUT:  # relu: no out= in torch's API
        return
    out = kiln.zeros(2 * x.numel())
    getattr(kiln, op)(x, out=out[::2])
    assert same_bits(out[::2].numpy(), vector)


@pytest.mark.parametrize("op", VECTOR_OPS)
@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "int32"])
def test_reduced_and_integer_inputs_take_the_float32_vector_path(op, dtype):
    # The CPU loop widens them a chunk at a time into float32 buffers: contiguous runs, so the
    # result is the float32 kernel's, rounded to the output dtype.
    x = kiln.from_numpy(np.random.default_rng(1).uniform(-6, 6, 3001).astype(np.float32))
    x = x.to(getattr(kiln, dtype))
    if dtype == "int32" and op in FLOATING_ONLY:
        with pytest.raises(RuntimeError, match="not implemented for 'int32'"):  # silu: floating only, as torch
            getattr(kiln, op)(x)
        return
    got = getattr(kiln, op)(x)
    want = getattr(kiln, op)(x.float()).to(got.dtype)
    assert same_bits(got.float().numpy(), want.float().numpy())


def bfloat16_patterns(n, seed):
    """n bfloat16 values from random bit patterns: every sign, subnormals, infinities, NaN payloads."""
    bits = np.random.default_rng(seed).integers(0, 2 ** 16, n, dtype=np.uint32)
    return kiln.from_numpy((bits << 16).view(np.float32)).to(kiln.bfloat16)


BINARY_VECTOR_OPS = sorted(op for op, lanes in ALL_LANES.items()
                           if not lanes.startswith("scalar") and op.split(".")[0] in {"add", "sub", "mul", "div", "atan2",
                                                                                        "maximum", "minimum", "hypot"})


@pytest.mark.parametrize("on_target", TARGETS, indirect=True)
@pytest.mark.parametrize("op", VECTOR_OPS + BINARY_VECTOR_OPS)
def test_bfloat16_runs_give_the_float32_kernels_bits_rounded(op, on_target):
    # All-bfloat16 operands run the vector loop on their bfloat16 runs (widened and rounded in
    # registers); the answer must be the float32 kernel's on the widened values, rounded to nearest
    # even by the scalar conversion (NaN quiet), for contiguous, strided, broadcast and out= runs.
    name = op.split(".")[0]
    fn = getattr(kiln, name)
    args = [bfloat16_patterns(4099, 7)] if op in VECTOR_OPS else [bfloat16_patterns(4099, 7), bfloat16_patterns(4099, 8)]

    def check(got, *inputs):
        want = fn(*[t.float() for t in inputs]).to(kiln.bfloat16)
        assert got.dtype == kiln.bfloat16
        assert same_bits(got.float().numpy(), want.float().numpy()), op

    with np.errstate(all="ignore"):
        check(fn(*args), *args)
        strided = [t.reshape(-1)[:4096].reshape(64, 64).t() for t in args]
        check(fn(*strided), *strided)
        if len(args) == 2:
            row = args[1][:64]
            check(fn(strided[0], row), strided[0], row)
            check(fn(args[0][5], args[1]), args[0][5], args[1])
        if name in NO_PYTHON_OUT:  # relu: no out= in torch's API
            return
        out = kiln.zeros(2 * 4099, dtype=kiln.bfloat16)
        fn(*args, out=out[::2])
        check(out[::2], *args)


@pytest.mark.parametrize("op", ["add", "sub", "mul", "div", "maximum", "minimum"])
def test_exact_bfloat16_ops_give_torchs_bits(op):
    # Exact operations round once from float32, so torch's bfloat16 kernels (float32 in registers,
    # rounded to nearest even) are an independent oracle, bit for bit, NaN payloads aside.
    torch = pytest.importorskip("torch")
    a, b = bfloat16_patterns(10007, 11), bfloat16_patterns(10007, 12)
    ta, tb = (torch.from_numpy(t.float().numpy()).to(torch.bfloat16) for t in (a, b))
    got = getattr(kiln, op)(a, b).float().numpy()
    want = getattr(torch, op)(ta, tb).float().numpy()
    nan = np.isnan(want)
    assert np.array_equal(np.isnan(got), nan)
    assert np.array_equal(got[~nan].view(np.uint32), want[~nan].view(np.uint32))


@pytest.mark.parametrize("on_target", VECTOR_TARGETS, indirect=True)
@pytest.mark.parametrize("op", ["tanh", "exp", "sin", "rsqrt"])
def test_a_result_does_not_depend_on_its_place_in_the_run(op, on_target):
    # Full vectors and the padded last vector run the same code: every offset and length agrees.
    x = np.random.default_rng(2).uniform(0.01, 3, 100).astype(np.float32)
    whole = getattr(kiln, op)(kiln.from_numpy(x)).numpy()
    for start in range(0, 17):
        for stop in (start + 1, start + 7, 100):
            part = getattr(kiln, op)(kiln.from_numpy(x[start:stop].copy())).numpy()
            assert same_bits(part, whole[start:stop]), (start, stop)
    # In place (out is the input) gives the same bits.
    y = kiln.from_numpy(x.copy())
    getattr(y, op + "_")()
    assert same_bits(y.numpy(), whole)


def test_threads_do_not_change_results():
    x = kiln.from_numpy(np.random.default_rng(3).standard_normal(300001).astype(np.float32))
    threads = kiln.get_num_threads()
    try:
        kiln.set_num_threads(1)
        one = kiln.tanh(x).numpy()
        kiln.set_num_threads(3)
        assert same_bits(kiln.tanh(x).numpy(), one)
    finally:
        kiln.set_num_threads(threads)


POW_EXPONENTS = [2.0, 3.0, 0.5, -0.5, -1.0, -2.0, 2.5, -1.3, 0.25, 7.0, 0.0, 1.0]


@pytest.mark.parametrize("on_target", TARGETS, indirect=True)
def test_pow_is_never_less_accurate_than_torch(on_target):
    # x ** Scalar and x ** tensor: torch's special exponents (2, 3, +-0.5, -1, -2) as exact operations,
    # the scalar functor's bits on every target; other exponents no more ulps from float64 than
    # torch's pow on the same inputs (the C library's powf lane by lane; torch's is SLEEF's).
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(5)
    x = np.concatenate([rng.uniform(0, 4, 20000), rng.uniform(-4, 0, 2000), [0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0,
                                                                            1e-40, 3e38]]).astype(np.float32)
    for e in POW_EXPONENTS:
        got = kiln.pow(kiln.from_numpy(x), e).numpy()
        kiln._C._simd_use_target(BASELINE)
        try:
            scalar = kiln.pow(kiln.from_numpy(x), e).numpy()
        finally:
            kiln._C._simd_use_target(on_target)
        if e in (2.0, 3.0, 0.5, -0.5, -1.0, -2.0):
            assert same_bits(got, scalar), e
        with np.errstate(all="ignore"):
            ref = np.power(x.astype(np.float64), e)
            theirs = torch.pow(torch.from_numpy(x), e).numpy()
        mine, bar = ulp_error(got, ref).max(), ulp_error(theirs, ref).max()
        assert mine <= max(bar, VECTOR_ULP_BOUND), f"x ** {e}: {mine:.4g} ulp, torch {bar:.4g}"
    # A tensor of exponents is pow itself, lane by lane (torch's pow(Tensor, Tensor): no special
    # exponents, so x ** tensor(3.0) may round differently from x ** 3), never less accurate than torch's.
    es = np.array(POW_EXPONENTS, np.float32)
    xs = np.repeat(x[:2000], len(es))
    ts = np.tile(es, 2000)
    got = kiln.pow(kiln.from_numpy(xs), kiln.from_numpy(ts)).numpy()
    with np.errstate(all="ignore"):
        ref = np.power(xs.astype(np.float64), ts.astype(np.float64))
        theirs = torch.pow(torch.from_numpy(xs), torch.from_numpy(ts)).numpy()
    assert ulp_error(got, ref).max() <= max(ulp_error(theirs, ref).max(), VECTOR_ULP_BOUND)
    # torch's answers where the special exponents would differ: -inf ** 0.5 is inf, -0 ** 0.5 is +0.
    special = kiln.pow(kiln.tensor([-np.inf, -0.0]), kiln.tensor([0.5, 0.5])).numpy()
    want = torch.pow(torch.tensor([-np.inf, -0.0]), torch.tensor([0.5, 0.5])).numpy()
    assert same_bits(special, want), special


def two_argument_sample():
    """Pairs over the float32 range: random bit patterns (signs, subnormals, infinities, NaNs), both
    orders of magnitude apart and close, and every pair of the special points."""
    rng = np.random.default_rng(9)
    bits = rng.integers(0, 2 ** 32, (2, 60000), dtype=np.uint64).astype(np.uint32).view(np.float32)
    dense = rng.uniform(-8, 8, (2, 60000)).astype(np.float32)
    points = np.array([0.0, -0.0, 1.0, -1.0, 1e-45, -1e-45, 3.4028235e38, -3.4028235e38, np.inf, -np.inf, np.nan,
                       1e-30, 1e30], np.float32)
    grid = np.stack(np.meshgrid(points, points)).reshape(2, -1)
    return np.concatenate([bits, dense, np.repeat(grid, 17, axis=1)], axis=1)


@pytest.mark.parametrize("on_target", TARGETS, indirect=True)
def test_hypot_and_atan2_round_the_float64_function_once(on_target):
    # Double lanes (lane by lane with the C library's double function at zeros, infinities, NaN and
    # extreme ratios): the float64 function correctly rounded, at most VECTOR_ULP_BOUND off, with
    # its IEEE answers (hypot(inf, nan) = inf, atan2's signed zeros and +-pi).
    a, b = two_argument_sample()
    ka, kb = kiln.from_numpy(a), kiln.from_numpy(b)
    with np.errstate(all="ignore"):
        a64, b64 = a.astype(np.float64), b.astype(np.float64)
        for op, ref in (("hypot", np.hypot(a64, b64)), ("atan2", np.arctan2(a64, b64))):
            got = getattr(kiln, op)(ka, kb).numpy()
            err = ulp_error(got, ref)
            worst = int(np.argmax(err))
            assert err[worst] <= VECTOR_ULP_BOUND, (op, on_target, a[worst], b[worst], got[worst], ref[worst])
            exact = np.isinf(ref) | (ref == 0) | np.isnan(ref)
            assert same_bits(got[exact], ref[exact].astype(np.float32)), (op, on_target)


@pytest.mark.parametrize("on_target", TARGETS, indirect=True)
def test_copysign_gives_torchs_bits(on_target):
    torch = pytest.importorskip("torch")
    a, b = two_argument_sample()
    got = kiln.copysign(kiln.from_numpy(a), kiln.from_numpy(b)).numpy()
    assert same_bits(got, torch.copysign(torch.from_numpy(a), torch.from_numpy(b)).numpy())


@pytest.mark.parametrize("on_target", VECTOR_TARGETS, indirect=True)
@pytest.mark.parametrize("op", ["add", "mul", "div", "pow", "atan2"])
def test_binary_runs_agree_in_every_operand_layout_and_length(op, on_target):
    # The vector loop has one body per layout (both contiguous, either operand one broadcast value,
    # both broadcast), two vectors per iteration, then one, then a padded partial vector: every
    # length up to 70 and every layout gives each element the bits it gets in a long contiguous run.
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(5)
    a = rng.uniform(0.5, 3, 70).astype(np.float32)
    b = rng.uniform(0.5, 3, 70).astype(np.float32)
    fn = getattr(kiln, op)
    whole = fn(kiln.from_numpy(a), kiln.from_numpy(b)).numpy()
    b0 = np.full(70, b[0], dtype=np.float32)
    a0 = np.full(70, a[0], dtype=np.float32)
    with_b0 = fn(kiln.from_numpy(a), kiln.from_numpy(b0)).numpy()
    with_a0 = fn(kiln.from_numpy(a0), kiln.from_numpy(b)).numpy()
    for n in range(1, 71):
        part = fn(kiln.from_numpy(a[:n].copy()), kiln.from_numpy(b[:n].copy())).numpy()
        assert same_bits(part, whole[:n]), n
        scalar_b = fn(kiln.from_numpy(a[:n].copy()), kiln.tensor(float(b[0]))).numpy()  # b's step 0
        assert same_bits(scalar_b, with_b0[:n]), n
        scalar_a = fn(kiln.tensor(float(a[0])), kiln.from_numpy(b[:n].copy())).numpy()  # a's step 0
        assert same_bits(scalar_a, with_a0[:n]), n
        both = fn(kiln.tensor(float(a[0])).expand(n), kiln.tensor(float(b[0])).expand(n)).numpy()
        assert same_bits(both, np.full(n, with_a0[0], dtype=np.float32)), n
    if op in ("add", "mul", "div"):  # exact operations: torch's bits too
        assert same_bits(whole, getattr(torch, op)(torch.from_numpy(a), torch.from_numpy(b)).numpy())
