"""The pointwise formula table (generated/jit/pointwise_formulas.cc, from the schema's `pointwise:`
entries) against the kernels generated from the same formulas: the interpreter
(runtime/jit/formula_interpreter.h, through kiln._C._evaluate_formula) must agree with each
generated kernel to the bit on every op record's samples, in every dtype and layout, and on edge
values. This is the contract the LLVM and NVRTC code generators will rely on.

It also checks, independently of both, a few formulas against NumPy on values where the math is
known, so a wrong formula in the schema cannot hide behind agreeing renderings.
"""
import itertools

import numpy as np
import pytest

import kiln
from op_db import RECORDS
from op_db.harness import LAYOUTS, describe, kiln_args
from op_db.schema_facts import _load as load_schema
from op_db.schema_facts import NO_PYTHON_OUT, vector_formula_ops
from op_db.ulp import VECTOR_ULP_BOUND, torch_function, ulp_error

# Each formula's overload ("pow.Tensor_Scalar") -> the kiln function it belongs to ("pow").
FORMULAS = {overload: op for op, overload, *_ in kiln._C._pointwise_formulas()}
# The schema's arguments of each formula overload: which are tensors, which Scalars, their defaults;
# and its formula (absent Scalar? values, str choices, bool arguments, out= form).
SCHEMA = {nf.schema.full_name: nf.schema for nf in load_schema()[0] if nf.pointwise is not None}
POINTWISE = {nf.schema.full_name: nf.pointwise for nf in load_schema()[0] if nf.pointwise is not None}
HAS_OUT = {nf.family_head.schema.full_name for nf in load_schema()[0]
           if nf.family_role == "out" and nf.family_head is not None and nf.family_head.pointwise is not None
           and nf.family_head.schema.full_name not in NO_PYTHON_OUT}
VECTOR_KINDS = vector_formula_ops()
VECTOR_OPS = {op for op, kind in VECTOR_KINDS.items() if not kind.startswith("scalar")}
BASELINE = kiln._C._simd_targets()[-1]  # Highway's portable baseline: the kernels' scalar functors


@pytest.fixture(autouse=True)
def formula_loops_only():
    """The library kernels a formula op may hand its call to (`library:`, oneDNN's gelu as torch) are
    not renderings of the formula: off here, held to torch's bits in test_onednn_gelu.py."""
    with kiln.backends.mkldnn.flags(enabled=False):
        yield


@pytest.fixture(params=["scalar functors", "vector loops"])
def kernels(request):
    """Runs the test twice: with every generated kernel on its scalar functor (the vector loops off),
    and with the vector loops on, as kiln runs by default."""
    if request.param == "scalar functors":
        kiln._C._simd_use_target(BASELINE)
    yield request.param
    kiln._C._simd_use_target(None)


@pytest.fixture
def scalar_functors():
    kiln._C._simd_use_target(BASELINE)
    yield
    kiln._C._simd_use_target(None)


def test_the_table_has_every_formula_op_of_the_schema():
    assert sorted(FORMULAS) == sorted(SCHEMA)
    for overload, op in FORMULAS.items():
        assert callable(getattr(kiln, op, None) or getattr(kiln._C, op)), op
        assert overload in RECORDS, f"{overload} has a formula but no op record"


def op_function(overload):
    """The kiln function of a formula overload: kiln.<op>, or kiln._C.<op> for the private fused
    backward ops (_gelu_self_backward), which kiln does not export, as torch does not, and for add,
    sub and addcmul, whose kiln functions may take _fma instead (torch's fused multiply-add)."""
    name = FORMULAS[overload]
    if name in ("add", "sub", "addcmul"):
        return getattr(kiln._C, name)
    return getattr(kiln, name, None) or getattr(kiln._C, name)


def formula_scalar(overload, name, value, dtype):
    """A non-tensor argument as the formula's tree takes it: a str as the index of its value among
    the formula's choices, an absent Scalar? as the extreme the schema names (-inf/inf, or the
    integer dtype's limits)."""
    f = POINTWISE[overload]
    if name in f.choices:
        return f.choices[name].index(value)
    if value is None:
        lowest = f.absent[name] == "lowest"
        if dtype.is_floating_point:
            return float("-inf") if lowest else float("inf")
        info = np.iinfo(str(dtype).replace("kiln.", ""))
        return int(info.min if lowest else info.max)
    return value


def formula_inputs(overload, args, kwargs, dtype):
    """(tensors, scalars) of a call, in the formula's order (Scalars as given, else their default),
    for a result computed in `dtype`."""
    schema = SCHEMA[overload]
    named = dict(zip([a.name for a in schema.arguments], args), **kwargs)
    tensors = [named[a.name] for a in schema.arguments if a.type.is_tensor]
    scalars = []
    for a in schema.arguments:
        if a.type.is_tensor or a.type.base in ("ScalarType", "Device"):  # a cast's target: not in the tree
            continue
        if a.name in named:
            value = named[a.name]
        elif a.default in ("None",):
            value = None
        elif a.default.startswith("'"):
            value = a.default.strip("'")
        else:
            value = float(a.default) if "." in a.default else int(a.default)
        scalars.append(formula_scalar(overload, a.name, value, dtype))
    return tensors, scalars


def same_bits_each(a, b):
    """Elementwise: the same value, sign of zero included (any NaN equals any NaN)."""
    a, b = a.numpy(), b.numpy()
    if a.dtype.kind == "f":
        return (a == b) & (np.signbit(a) == np.signbit(b)) | (np.isnan(a) & np.isnan(b))
    return a == b


def same_bits(a, b):
    if a.dtype != b.dtype or tuple(a.shape) != tuple(b.shape):
        return False
    return bool(np.all(same_bits_each(a, b)))


# Formulas whose meta function sets the compute dtype (float_power: float64; ldexp: the dtype of
# mul(self, pow(2.0, other))): the interpreter, which promotes as the formula's dtypes say, is given
# the inputs in the result's dtype.
META_COMPUTE = {"float_power.Tensor_Tensor", "float_power.Tensor_Scalar", "ldexp.Tensor"}


def check_kernel(op, kernels, got, inputs, scalars, what, call):
    """got (the generated kernel's result) against the interpreter: to the bit, except where a vector
    loop may have run, where it must be within VECTOR_ULP_BOUND of the formula in float64 (double
    lanes), or no further from it than torch (Sleef lanes)."""
    if op in META_COMPUTE:
        inputs = [t.to(got.dtype) for t in inputs]
    cast_to = [got.dtype] if POINTWISE[op].cast_to else []  # a cast formula converts to the result's dtype
    want = kiln._C._evaluate_formula(op, inputs, scalars, *cast_to)
    assert got.dtype == want.dtype, what
    widen = (lambda t: t.to(kiln.float64)) if got.dtype in (kiln.float16, kiln.bfloat16) else (lambda t: t)
    agree = same_bits_each(widen(got), widen(want))
    if np.all(agree):
        return
    vector = kernels == "vector loops" and op in VECTOR_OPS and got.dtype in (kiln.float32, kiln.float16, kiln.bfloat16)
    assert vector, f"{what}: differs from the interpreter where no vector loop runs"
    if VECTOR_KINDS[op] == "sleef":
        return check_sleef_kernel(op, got, inputs, scalars, what, call)
    # The inputs as the kernel computes on them (an integer input is converted to float32 first).
    exact = [t.to(kiln.float64) if t.dtype.is_floating_point else t.to(kiln.float32).to(kiln.float64) for t in inputs]
    reference = kiln._C._evaluate_formula(op, exact, scalars).numpy()
    err = ulp_error(got.to(kiln.float64).numpy(), reference, str(got.dtype).replace("kiln.", ""))[~agree.reshape(-1)]
    assert err.max() <= VECTOR_ULP_BOUND, \
        f"{what}: {err.max():.4g} ulp from the float64 formula (bound {VECTOR_ULP_BOUND})"


def as_float32(value):
    return value.to(kiln.float32) if isinstance(value, kiln.Tensor) else value


def as_torch(value):
    import torch
    return torch.from_numpy(value.contiguous().numpy()) if isinstance(value, kiln.Tensor) else value


# The fused backward ops (codegen/loader.py, _fused_backward) -> (forward overload, input).
FUSED_BACKWARD = {nf.schema.full_name: nf.fused_backward_of for nf in load_schema()[0] if nf.fused_backward_of}
FORWARD_SCHEMA = {nf.schema.full_name: nf.schema for nf in load_schema()[0]}


def torch_backward(op, args, kwargs):
    """What torch's own backward kernel gives for a fused backward op's call: the gradient of the
    forward aten op, through torch's autograd, for the same grad and inputs."""
    import torch
    forward, wrt = FUSED_BACKWARD[op]
    named = dict(zip([a.name for a in SCHEMA[op].arguments], args), **kwargs)
    x = as_torch(named[wrt]).requires_grad_()
    positional, keywords = [], {}
    for a in FORWARD_SCHEMA[forward].arguments:
        value = x if a.name == wrt else as_torch(named[a.name])
        if a.kwarg_only:
            keywords[a.name] = value
        else:
            positional.append(value)
    y = getattr(torch.ops.aten, FORWARD_SCHEMA[forward].name)(*positional, **keywords)
    return torch.autograd.grad(y, x, as_torch(named["grad"]))[0].numpy()


def check_sleef_kernel(op, got, inputs, scalars, what, call):
    """A Sleef-lane kernel: its float32 result on the inputs as float32, as the kernel computes
    (float16, bfloat16 and integers are widened), rounded once to got's dtype, and that float32
    result no more ulps from the float64 formula than torch's, called the same way on the same
    inputs. `call` is the (args, kwargs) got came from."""
    args, kwargs = call
    args32 = [as_float32(a) for a in args]
    kwargs32 = {k: as_float32(v) for k, v in kwargs.items()}
    got32 = op_function(op)(*args32, **kwargs32)
    assert np.all(same_bits_each(got.to(kiln.float64), got32.to(got.dtype).to(kiln.float64))), what
    reference = kiln._C._evaluate_formula(op, [t.to(kiln.float32).to(kiln.float64) for t in inputs], scalars).numpy()
    err = ulp_error(got32.numpy(), reference)
    with np.errstate(all="ignore"):
        if op in FUSED_BACKWARD:
            theirs = torch_backward(op, args32, kwargs32)
        else:
            theirs = torch_function(FORMULAS[op])(*[as_torch(a) for a in args32],
                                                  **{k: as_torch(v) for k, v in kwargs32.items()}).numpy()
    theirs_err = ulp_error(theirs, reference)
    bar = theirs_err.max()
    # A few samples are too few to compare maxima of formulas that round several times (softplus:
    # exp, then log1p): there each element may be at most 1 ulp further off than torch's.
    # tests/python/test_vector_formulas.py compares their maxima on large samples.
    # A fused backward formula cancels where the derivative crosses zero (gelu's near x = -0.75):
    # there any float32 evaluation is thousands of ulps off, and two evaluation orders (kiln's tree,
    # torch's hand-written kernel) differ by their rounding sequence. It must stay within twice
    # torch's worst error on the sample.
    factor = 2 if op in FUSED_BACKWARD else 1
    assert err.max() <= max(factor * bar, VECTOR_ULP_BOUND) or np.all(err <= np.maximum(theirs_err, VECTOR_ULP_BOUND) + 1), \
        f"{what}: {err.max():.4g} ulp from the float64 formula, torch {bar:.4g}"


CASES = [(op, dtype) for op in FORMULAS for dtype in RECORDS[op].dtypes]


@pytest.mark.parametrize("op, dtype", CASES, ids=[f"{o}-{d}" for o, d in CASES])
def test_interpreter_agrees_with_the_generated_kernel_on_the_op_records(op, dtype, kernels):
    rec = RECORDS[op]
    n = 0
    for sample in rec.samples(dtype):
        for layout in LAYOUTS:
            args, kwargs = kiln_args(sample, layout)
            got = op_function(op)(*args, **kwargs)
            tensors, scalars = formula_inputs(op, args, kwargs, got.dtype)
            if not all(isinstance(t, kiln.Tensor) for t in tensors):
                continue  # a Python number for a tensor: the Scalar overload's business
            check_kernel(op, kernels, got, tensors, scalars, describe(rec, sample, layout), (args, kwargs))
            n += 1
    assert n > 0


EDGES = [0.0, -0.0, 1.0, -1.0, 0.5, 1e-45, -1e-45, 1e-38, 3.4e38, -3.4e38, 88.7, -103.9, 1e10, -1e10,
         float("inf"), float("-inf"), float("nan")]


INTEGER_DIVISION = {"floor_divide", "remainder.Tensor", "fmod.Tensor"}


def edge_inputs(op, dtype):
    """Every pair of edge values (one tensor each for a binary op; a ternary op gets every triple
    of a shorter list). An argument the formula reads as bool gets alternating bools."""
    values = EDGES if dtype.is_floating_point else ([False, True] if dtype == kiln.bool else
                                                     [0, 1, -1, 7, -2 ** 31, 2 ** 31 - 1])
    names = [a.name for a in SCHEMA[op].arguments if a.type.is_tensor]
    if len(names) == 3:
        values = values[::2]
    columns = [list(c) for c in zip(*itertools.product(values, repeat=len(names)))]
    if op in INTEGER_DIVISION and not dtype.is_floating_point:
        columns[1] = [3 if y == 0 else y for y in columns[1]]  # a zero divisor raises ZeroDivisionError
    tensors = []
    for name, column in zip(names, columns):
        if name in POINTWISE[op].bool_args:
            tensors.append(kiln.tensor([k % 3 == 0 for k in range(len(column))]))
        else:
            tensors.append(kiln.tensor(column, dtype=kiln.float64).to(dtype))
    return tensors


def accepts(op, dtype):
    return dtype in [getattr(kiln, d) for d in RECORDS[op].dtypes]


# Ops whose bool tensor with a bool Scalar (True, below) has no kernel, as in torch (a bool tensor
# with an int Scalar computes in int64, which the int64 cases cover).
NO_BOOL_WITH_BOOL_SCALAR = {"clamp_min", "clamp_max", "pow.Tensor_Scalar"}

# (Cast formulas have their own test below, over every pair of dtypes.)
EDGE_CASES = [(op, dt) for op in sorted(FORMULAS)
              for dt in (kiln.float32, kiln.float64, kiln.bfloat16, kiln.float16, kiln.int64, kiln.int32, kiln.bool)
              if accepts(op, dt) and not POINTWISE[op].cast_to
              and not (dt == kiln.bool and op in NO_BOOL_WITH_BOOL_SCALAR)]


@pytest.mark.parametrize("op, dtype", EDGE_CASES, ids=[f"{o}-{d}" for o, d in EDGE_CASES])
def test_interpreter_agrees_with_the_generated_kernel_on_edge_values(op, dtype, kernels):
    tensors = edge_inputs(op, dtype)
    others = [a for a in SCHEMA[op].arguments if not a.type.is_tensor]
    # Every value of a str argument, one call each; Scalars are 2 (True for bool).
    choices = [POINTWISE[op].choices.get(a.name) for a in others]
    for choice in ([None] if not any(choices) else [c for cs in choices if cs for c in cs]):
        kw = {a.name: (choice if cs else 2 if dtype != kiln.bool else True) for a, cs in zip(others, choices)}
        got = op_function(op)(*tensors, **kw)
        scalars = [formula_scalar(op, a.name, kw[a.name], got.dtype) for a in others]
        check_kernel(op, kernels, got, tensors, scalars, f"{op}({dtype}, {kw})", (tensors, kw))
        if op in HAS_OUT:  # out of place and out= run the same kernel
            out = kiln.empty(0, dtype=got.dtype)
            assert same_bits(op_function(op)(*tensors, **kw, out=out).to(kiln.float64),
                             got.to(kiln.float64))


@pytest.mark.parametrize("op, numpy_fn", [
    ("exp", np.exp), ("log", np.log), ("sqrt", np.sqrt), ("tanh", np.tanh), ("expm1", np.expm1),
    ("log1p", np.log1p), ("sin", np.sin), ("cos", np.cos),
    ("sigmoid", lambda x: 1 / (1 + np.exp(-x))), ("rsqrt", lambda x: 1 / np.sqrt(x)),
])
def test_formulas_match_numpy_in_float64(op, numpy_fn):
    x = np.array([0.25, 0.5, 1.0, 2.0, 3.5, 10.0])
    got = kiln._C._evaluate_formula(op, [kiln.tensor(x)], []).numpy()
    np.testing.assert_allclose(got, numpy_fn(x), rtol=1e-15)


def test_evaluate_formula_errors():
    with pytest.raises(ValueError, match="no pointwise formula for 'matmul'"):
        kiln._C._evaluate_formula("matmul", [kiln.ones(2)])
    with pytest.raises(RuntimeError, match="the formula takes 1 tensors, got 2"):
        kiln._C._evaluate_formula("exp", [kiln.ones(2), kiln.ones(2)])
    with pytest.raises(TypeError, match="expected tensors"):
        kiln._C._evaluate_formula("exp", [1.0])
    with pytest.raises(RuntimeError, match="the formula takes 1 Scalars, got 0"):
        kiln._C._evaluate_formula("add", [kiln.ones(2), kiln.ones(2)], [])


def test_scalar_arguments_reach_the_formula():
    a, b = kiln.tensor([1.0, 2.0]), kiln.tensor([10.0, 20.0])
    assert kiln._C._evaluate_formula("add", [a, b], [3]).tolist() == [31.0, 62.0]
    assert kiln._C._evaluate_formula("sub", [a, b], [0.5]).tolist() == [-4.0, -8.0]


# ---- derivatives: derivatives.yaml's expression-language entries of the formula ops ----

DERIVATIVES = [(op, inp) for op, inp, _ in kiln._C._pointwise_derivatives()]
POSITIVE_DOMAIN = {"log", "sqrt", "rsqrt", "log1p", "pow.Tensor_Scalar", "pow.Tensor_Tensor"}


def test_every_differentiable_formula_op_has_its_derivatives_in_the_table():
    ops = {op for op, _ in DERIVATIVES}
    for op in FORMULAS:
        tensors = [a.name for a in SCHEMA[op].arguments if a.type.is_tensor]
        if op in ops:
            bool_args = POINTWISE[op].bool_args  # where's condition: non_differentiable
            assert sorted(i for o, i in DERIVATIVES if o == op) == sorted(set(tensors) - set(bool_args)), op
    assert {"exp", "sigmoid", "add.Tensor", "maximum", "atan2", "relu", "pow.Tensor_Scalar", "gelu", "where.self",
            "lerp.Tensor", "clamp"} <= ops


@pytest.mark.parametrize("dtype", [kiln.float64, kiln.float32])
@pytest.mark.parametrize("op, inp", DERIVATIVES, ids=[f"{o}-d{i}" for o, i in DERIVATIVES])
def test_derivative_tree_agrees_with_autograd(op, inp, dtype, scalar_functors):
    """The tree of each derivative, interpreted element by element, gives autograd's gradient (the
    kiln ops rendered from the same tree) to the bit: same operations, same roundings (the kernels
    on their scalar functors: a vector tanh rounds better than the C library's tanhf)."""
    kiln.manual_seed(0)
    names = [a.name for a in SCHEMA[op].arguments if a.type.is_tensor]
    tensors = []
    for k, name in enumerate(names):
        t = kiln.randn(64, dtype=dtype)
        if op in POSITIVE_DOMAIN:
            t = t.abs() + 0.1
        if k == 1 and len(names) == 2:
            t[:8] = tensors[0][:8].detach()  # ties (maximum/minimum split the gradient there)
        tensors.append(t > 0 if name in POINTWISE[op].bool_args else t.requires_grad_())
    # Scalars 0.5 (clamp's bounds -0.5 and 0.5), str arguments their last choice (gelu: 'tanh').
    kw = {}
    for a in SCHEMA[op].arguments:
        if not a.type.is_tensor:
            choices = POINTWISE[op].choices.get(a.name)
            kw[a.name] = choices[-1] if choices else -0.5 if a.name == "min" else 0.5
    scalars = [formula_scalar(op, name, value, dtype) for name, value in kw.items()]
    result = op_function(op)(*tensors, **kw)
    grad = kiln.randn(64, dtype=dtype)
    want, = kiln.autograd.grad([result], [tensors[names.index(inp)]], [grad])
    operands = [grad, result.detach()] + [t.detach() for t in tensors]
    if op in META_COMPUTE:  # computed in the result's dtype (float_power: float64), then converted back
        operands = [t.to(result.dtype) for t in operands]
    got = kiln._C._evaluate_derivative(op, inp, operands, scalars).to(want.dtype)
    assert same_bits(got, want), (got, want)


# ---- the cast formula (`_to_copy`: cast(self, dtype)) ----

CAST_DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32", "float64"]
# Values that probe each conversion's rules: signed zero, fractions either side of a tie, the
# integer types' edges and just past them, float16/bfloat16 rounding ties, overflow to inf,
# subnormals, infinities and NaN.
CAST_FLOATS = [0.0, -0.0, 0.5, -0.5, 1.5, -1.5, 2.5, 0.7, -0.7, 1.0, -1.0, 127.0, 128.0, -128.0, -129.0, 255.0,
               255.9, 256.0, 300.0, -300.0, 32767.0, 32768.0, -32769.0, 65504.0, 65520.0, 2049.0, 257.0,
               2.0 ** 31 - 128, -2.0 ** 31, 2.0 ** 31, 2.0 ** 40 + 5, -2.0 ** 63, 2.0 ** 63, 1e10, -1e10, 3.4e38,
               1e-40, -1e-45, 6e-8, float("inf"), float("-inf"), float("nan")]
CAST_INTS = [0, 1, -1, 2, 127, 128, 255, 256, -128, -129, 32767, -32768, 65535, 2 ** 24 + 1, 2 ** 31 - 1,
             -2 ** 31, 2 ** 53 + 1, 2 ** 62, -2 ** 63, 2 ** 63 - 1]


def cast_source(name):
    """The edge values `name` can hold, as a kiln tensor and a torch tensor of the same bits."""
    import torch
    if name == "bool":
        values = np.array([False, True, True, False])
    elif name.startswith("float") or name == "bfloat16":
        t = torch.tensor(CAST_FLOATS, dtype=torch.float64).to(getattr(torch, name))
        return kiln.from_numpy(t.to(torch.float64).numpy()).to(getattr(kiln, name)), t
    else:
        info = np.iinfo(name)
        values = np.array([v for v in CAST_INTS if info.min <= v <= info.max], dtype=name)
    return kiln.from_numpy(values.copy()), torch.from_numpy(values.copy())


def same_cast_bits(a, b):
    """same_bits, float16 and bfloat16 widened exactly (NumPy has no bfloat16)."""
    if a.dtype != b.dtype:
        return False
    if a.dtype in (kiln.float16, kiln.bfloat16):
        a, b = a.to(kiln.float64), b.to(kiln.float64)
    return same_bits(a, b)


@pytest.mark.parametrize("source", CAST_DTYPES)
def test_cast_formula_is_the_conversion_of_every_dtype_pair(source):
    """_to_copy's formula, interpreted (kiln::convert: pm::cast, float16/bfloat16 through float), gives
    what kiln's conversion loop gives (to(dtype), strided copy_ too), and torch's bits."""
    import torch
    x, tx = cast_source(source)
    for target in CAST_DTYPES:
        dt = getattr(kiln, target)
        want = kiln._C._evaluate_formula("_to_copy", [x], [], dt)
        assert want.dtype == dt
        got = x.to(dt)
        assert same_cast_bits(got, want), (source, target, x, got, want)
        strided = kiln.empty(2 * x.numel(), dtype=dt)[::2]
        strided.copy_(x)  # the conversion loop's strided path
        assert same_cast_bits(strided.contiguous(), want), (source, target)
        theirs = tx.to(getattr(torch, target))
        ours = want.to(kiln.float64).numpy() if target in ("float16", "bfloat16") else want.numpy()
        ref = theirs.to(torch.float64).numpy() if target in ("float16", "bfloat16") else theirs.numpy()
        same = (ours == ref) | (np.isnan(ours.astype(np.float64)) & np.isnan(ref.astype(np.float64))) \
            if ours.dtype.kind == "f" else ours == ref
        assert np.all(same), (source, target, x, ours, ref)
        if ours.dtype.kind == "f":  # the sign of zeros (a NaN's sign is no value: torch's AVX-512 bfloat16 NaN is negative)
            numbers = ~np.isnan(ref)
            assert np.array_equal(np.signbit(ours)[numbers], np.signbit(ref)[numbers]), (source, target)


def test_cast_formula_takes_its_target_dtype_only():
    x = kiln.tensor([1.5, -2.5])
    assert kiln._C._evaluate_formula("_to_copy", [x], []).dtype == kiln.float32  # None: the input's dtype
    with pytest.raises(RuntimeError, match="only a cast formula takes a dtype"):
        kiln._C._evaluate_formula("exp", [x], [], kiln.float64)
    with pytest.raises(TypeError, match="dtype must be a kiln.dtype"):
        kiln._C._evaluate_formula("_to_copy", [x], [], "float64")
