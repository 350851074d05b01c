"""Records of the fused backward ops: one per expression-language derivative the code generator
turns into a pointwise op of its own (codegen/loader.py, _fused_backward: `_gelu_self_backward`,
`_div_tensor_other_backward`, ...), made here from the schema rather than written by hand, so a new
formula op's fused backward is tested the day it exists.

The reference is independent of the derivative formula: `grad` times the central difference of the
forward op's own NumPy reference (its record's `ref`), in float64, with respect to the input the op
differentiates, at the broadcast shape. Where the op reads the forward result instead of the
input (tanh's backward reads tanh(x)), the input is recovered from the result with the inverse in
INVERSES.
"""
from __future__ import annotations

from typing import Dict, List

import numpy as np

from .record import DOMAINS, FLOATS, SHAPES, ErrorInput, OpRecord, Sample, promoted, values
from .schema_facts import _load as load_schema

FAMILY = "fused_backward"

# The forward input from the forward result, for the ops whose derivative reads the result.
INVERSES = {
    "tanh": np.arctanh,
    "sigmoid": lambda y: np.log(y / (1 - y)),
    "relu": lambda y: np.where(y > 0, y, -1.0),  # any negative input has the result 0
    "sqrt": np.square,
    "rsqrt": lambda y: 1 / (y * y),
    "reciprocal": lambda y: 1 / y,
    "expm1": np.log1p,
    "exp2": np.log2,
    "tan": np.arctan,
}
# The forward inputs a derivative does not read but whose value matters, from the forward result
# and the inputs it does read: (op, input) -> f(output, {input: value}).
RECOVERED = {
    ("hypot", "other"): lambda out, t: np.sqrt(np.maximum(out * out - t["self"] * t["self"], 0)),
    ("hypot", "self"): lambda out, t: np.sqrt(np.maximum(out * out - t["other"] * t["other"], 0)),
    ("copysign", "other"): lambda out, t: out,  # only its sign matters
}
# Where a forward input must be drawn away from a pole or a domain edge.
INPUT_DOMAINS = {
    ("div", "other"): "nonzero", ("fmod", "other"): "nonzero", ("remainder", "other"): "nonzero",
    ("addcdiv", "tensor2"): "nonzero", ("xlogy", "other"): "positive", ("pow", "self"): "positive",
    ("log1p", "self"): "positive", ("sqrt", "self"): "positive", ("rsqrt", "self"): "positive",
    ("reciprocal", "self"): "nonzero", ("sigmoid", "self"): "unit", ("tanh", "self"): "unit",
    ("log2", "self"): "positive", ("log10", "self"): "positive", ("asin", "self"): "unit", ("acos", "self"): "unit",
    ("atanh", "self"): "unit", ("erfinv", "self"): "unit", ("tan", "self"): "unit", ("acosh", "self"): "above one",
    ("logit", "self"): "probability", ("hypot", "other"): "nonzero",
    ("lgamma", "self"): "positive", ("digamma", "self"): "positive",
}
# Derivatives of ops with jumps (fmod and remainder jump where self / other is an integer, which
# rounded reduced-precision samples hit): the derivative by hand, not a difference across the jump.
BY_HAND = {
    ("fmod.Tensor", "other"): lambda grad, self, other: -grad * np.trunc(self / other),
    ("remainder.Tensor", "other"): lambda grad, self, other: -grad * np.floor(self / other),
}
# Values for Scalar arguments without a default (or defaulting to None).
SCALARS = {"min": -0.5, "max": 0.5, "exponent": 2.5, "threshold": 0.5, "value": 0.5, "weight": 0.25,
           "nan": 0.0, "posinf": 1.0, "neginf": -1.0, "eps": 0.2, "other": -1.5}
TOL = {"float32": dict(rtol=1e-4, atol=1e-5), "float64": dict(rtol=1e-6, atol=1e-7)}


def _default(arg) -> object:
    if arg.default is None or arg.default == "None":
        return SCALARS[arg.name]
    if arg.default.startswith("'"):
        return arg.default.strip("'")
    return float(arg.default) if "." in arg.default or "e" in arg.default else int(arg.default)


def _fused_ops():
    functions, _ = load_schema()
    by_name = {nf.schema.full_name: nf for nf in functions}
    return [(nf, by_name[nf.fused_backward_of[0]]) for nf in functions if nf.fused_backward_of]


def _record(nf, forward, forward_rec) -> OpRecord:
    schema, f = nf.schema, nf.pointwise
    op, wrt = forward.schema.name.lstrip("_"), nf.fused_backward_of[1]
    fwd_args = forward.schema.arguments
    fwd_tensors = [a.name for a in fwd_args if a.type.is_tensor]
    params = [a.name for a in schema.arguments]
    choices = f.choices
    scalar_sets = [{}]
    for s in f.scalars:
        if s in choices:
            scalar_sets = [dict(kw, **{s: v}) for kw in scalar_sets for v in choices[s]]
        else:
            scalar_sets = [dict(kw, **{s: _default(forward.schema.argument(s))}) for kw in scalar_sets]

    def forward_call(tensors: Dict[str, np.ndarray], scalars: Dict[str, object]):
        args = [np.asarray(tensors[a.name], np.float64) if a.type.is_tensor else scalars.get(a.name, _default(a)) for a in fwd_args]
        with np.errstate(all="ignore"):
            return np.asarray(forward_rec.ref(*args), dtype=np.float64)

    def ref(*args):
        named = dict(zip(params, args))
        by_hand = BY_HAND.get(nf.fused_backward_of)
        if by_hand is not None:
            wide = [np.asarray(a, np.float64) for a in args]
            return by_hand(*wide).astype(np.result_type(*[np.asarray(a).dtype for a in args]))
        scalars = {s: named[s] for s in f.scalars}
        tensors = {}
        for t in fwd_tensors:
            if t in named:
                tensors[t] = np.asarray(named[t], np.float64)
            elif "output" in named and t == wrt:
                with np.errstate(all="ignore"):
                    tensors[t] = INVERSES[op](np.asarray(named["output"], np.float64))
            elif "output" in named and (op, t) in RECOVERED:
                continue
            else:  # an input the derivative does not read: its value cannot matter
                tensors[t] = np.zeros((), np.float64)
        for t in fwd_tensors:
            if t not in tensors:
                tensors[t] = RECOVERED[(op, t)](np.asarray(named["output"], np.float64), tensors)
        grad = np.asarray(named["grad"], np.float64)
        shape = np.broadcast_shapes(grad.shape, *[v.shape for v in tensors.values()])
        tensors = {k: np.broadcast_to(v, shape).copy() for k, v in tensors.items()}
        x = tensors[wrt]
        h = 1e-6 * np.maximum(1.0, np.abs(x))
        up = forward_call(dict(tensors, **{wrt: x + h}), scalars)
        down = forward_call(dict(tensors, **{wrt: x - h}), scalars)
        dtype = np.result_type(*[np.asarray(a).dtype for a in args if isinstance(a, np.ndarray)])
        return (np.broadcast_to(grad, shape) * (up - down) / (2 * h)).astype(dtype)

    def samples(dtype: str) -> List[Sample]:
        out = []
        shapes = [(s, s) for s in SHAPES]
        if len(fwd_tensors) > 1:  # broadcast: the first input a row, the others a column
            shapes += [((3, 4), (4,)), ((1, 4), (3, 1))]
        for seed, (first, rest) in enumerate(shapes):
            for scalars in scalar_sets:
                inputs = {t: values(first if i == 0 else rest, dtype, INPUT_DOMAINS.get((op, t), "real"), seed=seed + i)
                          for i, t in enumerate(fwd_tensors)}
                result = forward_call(inputs, scalars).astype(dtype)
                shape = np.broadcast_shapes(*[v.shape for v in inputs.values()])
                grad = values(shape, dtype, "real", seed=seed + 7)
                named = dict(inputs, grad=grad, output=result, **scalars)
                out.append(Sample(tuple(named[p] for p in params), note=f"inputs {first} / {rest} {scalars}"))
        return out

    def error_inputs():
        fn = lambda k: getattr(k._C, schema.name)  # noqa: E731
        ints = [np.ones(2, np.int64)] * len(f.args)
        scalars = [v for v in scalar_sets[0].values()]
        return [ErrorInput(lambda k: fn(k)(*[k.tensor(a) for a in ints], *scalars), RuntimeError, schema.name,
                           "integer tensors: a derivative is of floating tensors"),
                ErrorInput(lambda k: fn(k)(k.ones(2), *[k.ones(3)] * (len(f.args) - 1), *scalars), RuntimeError,
                           "size", "shapes that do not broadcast")]

    return OpRecord(schema.full_name, FAMILY, FLOATS, samples, ref=ref, result_dtype=promoted, tol=TOL,
                    api=f"_C.{schema.name}", domain=", ".join(f"{t} {INPUT_DOMAINS.get((op, t), 'real')}" for t in fwd_tensors),
                    error_inputs=error_inputs,
                    derivative_not_implemented="it runs only when no graph is built for the backward pass: "
                                               "under create_graph the derivative's ops run instead")


def records(forward_records: Dict[str, OpRecord]) -> List[OpRecord]:
    return [_record(nf, forward, forward_records[forward.schema.full_name]) for nf, forward in _fused_ops()]


assert set(DOMAINS) >= {d for d in INPUT_DOMAINS.values()}
