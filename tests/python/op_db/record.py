"""What an op test record is, and the helpers family files use to write one.

A record is the hand-written half of an op's tests: how to make sample inputs (NumPy arrays),
the NumPy reference, the dtypes the op accepts, the result dtype rule and its error inputs. The
other half (variants, in-place and out= forms, which inputs are differentiable, which arguments
are dims or sizes) is read from the schema by `schema_facts.py`. Records never import kiln, so
the coverage table (tools/gen_op_coverage.py) can be generated without a build.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import numpy as np

# kiln's dtypes, by name (kiln.<name>), and the NumPy dtype holding the same values.
ALL = ("bool", "uint8", "int8", "int16", "int32", "int64", "float32", "float64")
NUMERIC = ("uint8", "int8", "int16", "int32", "int64", "float32", "float64")
INTEGRAL = ("bool", "uint8", "int8", "int16", "int32", "int64")
INTS = ("uint8", "int8", "int16", "int32", "int64")
SMALL_INTS = ("uint8", "int8", "int16")  # torch's narrow integers: arithmetic wraps around in them
FLOATS = ("float32", "float64")
NP_DTYPE = {"bool": np.bool_, "uint8": np.uint8, "int8": np.int8, "int16": np.int16, "int32": np.int32,
            "int64": np.int64, "float32": np.float32, "float64": np.float64}
CATEGORY = {"bool": 0, "uint8": 1, "int8": 1, "int16": 1, "int32": 1, "int64": 1, "float32": 2, "float64": 2}
_ORDER = {"bool": 0, "uint8": 1, "int8": 1, "int16": 2, "int32": 3, "int64": 4, "float32": 5, "float64": 6}

# Domains (for the coverage table and the sample makers): where sample values are drawn from.
DOMAINS = {
    "real": (-4.0, 4.0),
    "positive": (0.25, 4.0),      # log, sqrt, rsqrt: away from the pole at 0
    "nonzero": (0.5, 4.0),        # denominators; drawn with random signs
    "unit": (-0.9, 0.9),
    "above one": (1.25, 4.0),     # acosh: away from its branch point at 1
    "probability": (0.05, 0.95),  # logit
}


class DType(str):
    """A dtype argument in a sample (records do not import kiln): DType("float32") -> kiln.float32."""


class Seed(int):
    """A generator= argument in a sample: each call gets a fresh kiln.Generator seeded with this
    value, so a random op gives the same values on every call (gradcheck compares calls)."""


@dataclass
class Sample:
    """One call: tensors are NumPy arrays (lists of arrays for Tensor[]), the rest as passed."""
    args: Tuple[Any, ...]
    kwargs: Dict[str, Any] = field(default_factory=dict)
    note: str = ""                # 'broadcast', '0-dim', ... (shown in test failures)

    def __post_init__(self):
        # NumPy reductions of 0-dim arrays give NumPy scalars: keep them arrays (0-dim tensors).
        fix = lambda x: np.asarray(x) if isinstance(x, np.generic) else x  # noqa: E731
        self.args = tuple(fix(a) for a in self.args)
        self.kwargs = {k: fix(v) for k, v in self.kwargs.items()}

    def arrays(self) -> List[np.ndarray]:
        found = []
        for a in list(self.args) + list(self.kwargs.values()):
            if isinstance(a, np.ndarray):
                found.append(a)
            elif isinstance(a, (list, tuple)):
                found.extend(x for x in a if isinstance(x, np.ndarray))
        return found


@dataclass
class ErrorInput:
    """A call that must raise `exc` with a message matching `match` (a regex)."""
    call: Callable[[Any], Any]    # call(kiln) makes the call
    exc: type
    match: str
    note: str


@dataclass
class OpRecord:
    name: str                                     # schema name with overload: 'add.Tensor'
    family: str                                   # the family file that wrote it
    dtypes: Sequence[str]                         # dtypes the op accepts (checked both ways)
    samples: Callable[[str], List[Sample]]        # dtype -> samples
    ref: Optional[Callable[..., Any]] = None      # NumPy reference on the sample's arrays
    result_dtype: Callable[[Sample, str], str] = None  # default: the first array's dtype
    domain: str = "real"
    operator: Optional[Callable[..., Any]] = None  # Python operator form: operator.add, ...
    api: Optional[str] = None                     # Python name when not the schema name
    # Checks run instead of comparing with `ref` (random ops, empty): check(kiln, result, sample).
    check: Optional[Callable[..., None]] = None
    tol: Dict[str, Dict[str, float]] = field(default_factory=dict)  # dtype -> rtol/atol override
    grad_samples: Optional[Callable[[], List[Sample]]] = None  # float64 samples for gradcheck
    gradgrad: Any = True                          # True, or a string saying why not
    # Why finite differences cannot check the op's gradient (a random op whose declared gradient is
    # not the derivative of its draws held fixed: _standard_gamma's reparameterized one): None, or why.
    no_gradcheck: Optional[str] = None
    # wrapper(argument index, x) is applied to each differentiable input inside gradcheck (torch's
    # OpInfo gradcheck_wrapper): an op that reads only part of its input (eigh: one triangle) is
    # checked on (x + x^T) / 2, where finite differences see the whole gradient.
    gradcheck_wrapper: Optional[Callable[[int, Any], Any]] = None
    error_inputs: Callable[[], List[ErrorInput]] = lambda: []
    undeclared_error: Tuple[type, ...] = (TypeError, RuntimeError)
    # Reads the input's bytes as another dtype (view(dtype)): its float32 samples mean nothing in
    # float16/bfloat16, so the reduced-precision rerun skips it (its own samples cover them).
    reinterprets_bytes: bool = False
    # Why the op refuses float16/bfloat16 (torch's CPU LAPACK ops do), so the reduced-precision rerun
    # of its float32 samples (test_op_records_reduced.py) expects that error instead.
    no_reduced_precision: Optional[str] = None
    # Why the op has no 0-dim / zero-size / non-contiguous sample (None: it must have them).
    no_zero_dim: Optional[str] = None
    no_zero_size: Optional[str] = None
    no_noncontiguous: Optional[str] = None
    no_self_broadcast: Optional[str] = None   # why no sample broadcasts self (in-place refusal)
    # out= takes the dtype of out, as torch's sum/prod: any out dtype is accepted.
    out_sets_dtype: bool = False
    # The in-place form needs self of the result's dtype, even where a cast would be safe
    # (float_power_: "the base given to float_power_ has dtype Float but ... requires dtype Double").
    inplace_needs_result_dtype: bool = False
    # The result dtype of a sample rerun with its float32 arrays in float16/bfloat16 `dtype`, where
    # it is not `dtype` itself (ldexp: an integer exponent makes float32): (sample, dtype) -> dtype.
    reduced_result_dtype: Optional[Callable[[Sample, str], str]] = None
    # A dtype argument of the samples is the result's dtype (sum's dtype=); False where it is not
    # (_softmax_backward_data's input_dtype: the result has its inputs' dtype, as torch's CPU kernels).
    dtype_arg_sets_result: bool = True
    # A CompositeImplicit op is differentiable when the ops it calls are; one that is not
    # (eq.Scalar calls eq.Tensor) says so here. Checked both ways by the generated tests.
    differentiable: Optional[bool] = None
    # Tensor arguments no gradient flows to although they are floating (a composite's running
    # statistics: batch_norm refuses them requiring grad, as torch).
    not_differentiable: Sequence[str] = ()
    # An op without a derivative that raises NotImplementedError when an input requires grad (the
    # fused recurrent kernels' backward ops, under a second derivative), rather than returning a
    # result that does not require grad: why.
    derivative_not_implemented: Optional[str] = None
    # An op whose inputs are views of each other by design (copy_ into itself) opts out of
    # the harness's non-contiguous re-layout of its inputs.

    @property
    def base(self) -> str:
        return self.name.split(".")[0]

    @property
    def python_name(self) -> str:
        return self.api or self.base

    def is_differentiable(self, facts) -> bool:
        return facts.differentiable if self.differentiable is None else self.differentiable


# ----------------------------------------------------------------------------- values
def values(shape, dtype: str, domain: str = "real", seed: int = 0) -> np.ndarray:
    """Deterministic random values of `dtype` in `domain` (floats avoid exact integers)."""
    rng = np.random.default_rng(seed * 7919 + 31 * len(tuple(shape)) + int(np.prod(shape, dtype=np.int64)))
    lo, hi = DOMAINS[domain]
    if dtype == "bool":
        if domain in ("positive", "nonzero"):
            return np.ones(shape, dtype=bool)
        return np.asarray(rng.random(shape) < 0.5)
    if dtype in INTS:
        ilo, ihi = (1, 5) if domain in ("positive", "nonzero") else (int(lo), int(hi))
        if dtype == "uint8":  # no negative values to draw: the domain's non-negative part
            ilo, ihi = max(ilo, 0), max(ihi, 1)
        v = rng.integers(ilo, ihi + 1, size=shape)
        if domain == "nonzero" and dtype != "uint8":
            v = v * rng.choice([-1, 1], size=shape)
        return np.asarray(v, dtype=NP_DTYPE[dtype])
    v = rng.uniform(lo, hi, size=shape)
    if domain == "nonzero":
        v = v * rng.choice([-1.0, 1.0], size=shape)
    return np.asarray(v, dtype=NP_DTYPE[dtype])


# Shapes every elementwise family samples: 0-dim, zero-size, 1-D, 2-D and 3-D.
SHAPES = [(), (0,), (5,), (3, 4), (2, 0, 3), (2, 3, 4)]


def shape_samples(dtype: str, nargs: int = 1, domain: str = "real", extra=(), kwargs=None) -> List[Sample]:
    """Samples of `nargs` arrays of one shape, for each of SHAPES, plus broadcast pairs."""
    kwargs = kwargs or {}
    out = [Sample(tuple(values(s, dtype, domain, seed=i) for i in range(nargs)) + tuple(extra), dict(kwargs),
                  note=f"shape {s}") for s in SHAPES]
    if nargs >= 2:
        # Broadcast: a row against a column, a 0-dim against a matrix, an expanded (stride 0) input.
        col = values((3, 1), dtype, domain, seed=1)
        out.append(Sample((values((3, 4), dtype, domain), values((4,), dtype, domain, seed=1))
                          + tuple(values((3, 4), dtype, domain, seed=i) for i in range(2, nargs)) + tuple(extra),
                          dict(kwargs), note="broadcast (3,4) with (4,)"))
        out.append(Sample((values((1, 4), dtype, domain), col)
                          + tuple(values((3, 4), dtype, domain, seed=i) for i in range(2, nargs)) + tuple(extra),
                          dict(kwargs), note="broadcast (1,4) with (3,1)"))
        out.append(Sample((values((2, 3), dtype, domain), values((), dtype, domain, seed=1))
                          + tuple(values((2, 3), dtype, domain, seed=i) for i in range(2, nargs)) + tuple(extra),
                          dict(kwargs), note="0-dim other"))
        out.append(Sample((values((3, 4), dtype, domain), np.broadcast_to(col, (3, 4)))
                          + tuple(values((3, 4), dtype, domain, seed=i) for i in range(2, nargs)) + tuple(extra),
                          dict(kwargs), note="expanded other"))
    return out


def wrap_int_scalar(a, c):
    """A Python int operand as torch uses it with an integer tensor `a`: converted to a's dtype,
    wrapping (uint8 with -1 compares, divides and clamps as with 255)."""
    if isinstance(c, (int, np.integer)) and not isinstance(c, (bool, np.bool_)) and \
            isinstance(a, np.ndarray) and a.dtype.kind in "iu":
        return np.array(c, dtype=np.int64).astype(a.dtype)[()]
    return c


# ----------------------------------------------------------------------------- result dtypes
def promote(a: str, b: str) -> str:
    """PyTorch's promote_types on kiln's dtypes."""
    if CATEGORY[a] != CATEGORY[b]:
        return a if CATEGORY[a] > CATEGORY[b] else b
    if {a, b} == {"uint8", "int8"}:  # neither holds the other
        return "int16"
    return a if _ORDER[a] >= _ORDER[b] else b


def result_type(sample: Sample) -> str:
    """torch.result_type over a sample's arguments: dimensioned tensors, then 0-dim tensors,
    then Python scalars; a lower group only counts when its category is higher."""
    dims, zero_dims, scalars = [], [], []
    for a in sample.args:
        if isinstance(a, np.ndarray):
            (dims if a.ndim else zero_dims).append(a.dtype.name)
        elif isinstance(a, (bool, np.bool_)):
            scalars.append("bool")
        elif isinstance(a, int):
            scalars.append("int64")
        elif isinstance(a, float):
            scalars.append("float32")   # the default dtype
    result = None
    for group in (dims, zero_dims, scalars):
        if not group:
            continue
        g = group[0]
        for d in group[1:]:
            g = promote(g, d)
        if result is None:
            result = g
        elif CATEGORY[g] > CATEGORY[result]:
            result = g if group is not scalars else {1: "int64", 2: "float32"}[CATEGORY[g]]
    return result


def same_dtype(sample: Sample, dtype: str) -> str:
    return sample.arrays()[0].dtype.name if sample.arrays() else dtype


def promoted(sample: Sample, dtype: str) -> str:
    return result_type(sample)


def promoted_float(sample: Sample, dtype: str) -> str:
    """Ops that compute in floating point: integral inputs give the default dtype, float32."""
    r = result_type(sample)
    return r if r in FLOATS else "float32"


def always(name: str) -> Callable[[Sample, str], str]:
    return lambda sample, dtype: name


def reference_dtype(dtype: str) -> np.dtype:
    """NumPy computes references for float inputs in float64, for the rest in their own dtype."""
    return np.float64 if dtype in FLOATS else NP_DTYPE[dtype]
