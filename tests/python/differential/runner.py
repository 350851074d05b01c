"""Running one case in kiln and torch and saying whether they agree.

`run_case` returns None (agree) or "kind: detail" where kind is one of exception, dtype, shape,
values, type, alias, inplace, grad, input (an argument changed differently)."""
from __future__ import annotations

import warnings
from typing import Optional

import numpy as np

from .core import (Built, D, Out, T, build, canonical_exception, compare_results, compare_tensor, dtype_name,
                   flat_tensors, aliases, is_tensor)
from .cases import Case
from .gen import case_rng


def _names(case: Case):
    return [f"_a{i}" for i in range(len(case.args))], {k: f"_k_{k}" for k in case.kwargs}


def _call(lib, case: Case, hint):
    b = Built()
    args = [build(lib, a, b, hint) for a in case.args]
    kwargs = {k: build(lib, v, b, hint) for k, v in case.kwargs.items()}
    an, kn = _names(case)
    ns = {"LIB": lib, "F": lib.nn.functional}
    ns.update(zip(an, args))
    ns.update({kn[k]: v for k, v in kwargs.items()})
    try:
        code = case.expr(an, kn)
        if case.variant == "template" and case.spec.template.startswith("exec:"):
            exec(code, ns)
            res, exc = ns["_r"], None
        else:
            res, exc = eval(code, ns), None
    except Exception as e:  # noqa: BLE001 - any exception is a result to compare
        res, exc = None, e
    return b, args, kwargs, res, exc


_NO_KERNEL = ("not implemented for 'Half'", "not implemented for 'BFloat16'")


def _widened(x):
    """x with float16/bfloat16 tensors as float32 (torch 1.13's CPU lacks many 16-bit kernels)."""
    if isinstance(x, T) and x.dtype in ("float16", "bfloat16"):
        return T(x.base.astype("float32"), "float32", x.view, x.grad)
    if isinstance(x, D) and x in ("float16", "bfloat16"):
        return D("float32")
    if isinstance(x, Out) and x.dtype in ("float16", "bfloat16"):
        return Out("float32", x.shape)
    if isinstance(x, list):
        return [_widened(v) for v in x]
    if isinstance(x, tuple):
        return tuple(_widened(v) for v in x)
    if isinstance(x, dict):
        return {k: _widened(v) for k, v in x.items()}
    return x


def _root_dtypes(case: Case, hint):
    """The dtype of each root tensor build() makes for the case, in build order."""
    found = []

    def walk(x):
        if isinstance(x, T):
            found.append(x.dtype)
        elif isinstance(x, Out):
            found.append(x.dtype or (hint[1] if hint else None))
        elif isinstance(x, (list, tuple)):
            for v in x:
                walk(v)
        elif isinstance(x, dict):
            for v in x.values():
                walk(v)
    walk(list(case.args))
    walk(case.kwargs)
    return found


def _narrowed(torch, x, dt):
    if is_tensor(x) and x.dtype == torch.float32:
        return x.to(dt)
    if isinstance(x, tuple) and hasattr(x, "_fields"):
        return type(x)(*[_narrowed(torch, v, dt) for v in x])
    if isinstance(x, (list, tuple)):
        return type(x)(_narrowed(torch, v, dt) for v in x)
    return x


def _torch_call(torch, case: Case, hint, widen=False):
    """torch's answer; where torch 1.13 has no 16-bit CPU kernel (or `widen`), the float32
    computation rounded to the 16-bit dtype (what kiln, and later torch releases, compute)."""
    got = _call(torch, case, hint)
    exc = got[4]
    if not widen and (exc is None or not any(m in str(exc) for m in _NO_KERNEL)):
        return got + (False,)
    dargs = {str(v) for v in list(case.args) + list(case.kwargs.values()) if isinstance(v, D)}
    dts = set(case.arg_dtypes())
    small_d = dargs & {"float16", "bfloat16"}
    small = dts & {"float16", "bfloat16"}
    if len(small_d) == 1:           # dtype=float16: the result has that dtype
        small = small_d
    elif len(small) != 1 or dts & {"float32", "float64"} or dargs:
        return got + ((),) if widen else got + (False,)
    dt = getattr(torch, small.pop())
    if case.variant == "out":
        return _emulated_out(torch, case, hint, got)
    wide = Case(case.spec, case.index, case.seed, case.variant, case.dtype, case.grad,
                _widened(case.args), _widened(case.kwargs))
    whint = (hint[0], "float32") if hint and hint[1] in ("float16", "bfloat16") else hint
    b, args, kwargs, res, exc = _call(torch, wide, whint)
    if exc is not None:
        return got + (False,)
    flags = (res is args[0] if args else False, res is kwargs.get("out"))
    b.roots = [_narrowed(torch, r, getattr(torch, o)) if o in ("float16", "bfloat16") else r
               for r, o in zip(b.roots, _root_dtypes(case, hint))]
    return b, args, kwargs, _narrowed(torch, res, dt), None, flags


def _emulated_out(torch, case: Case, hint, got):
    """op(..., out=o) where torch has no 16-bit kernel: the result without out= (itself through the
    float32 fallback), written into o as torch's out= does (cast allowed by can_cast, resize)."""
    plain = Case(case.spec, case.index, case.seed, "func", case.dtype, False, case.args,
                 {k: v for k, v in case.kwargs.items() if not isinstance(v, Out)})
    _, _, _, res, exc, _ = _torch_call(torch, plain, None)
    if exc is not None or not is_tensor(res):
        return got + (False,)
    b = Built()
    args = [build(torch, a, b, hint) for a in case.args]
    kwargs = {k: build(torch, v, b, hint) for k, v in case.kwargs.items()}
    out = kwargs["out"]
    if not torch.can_cast(res.dtype, out.dtype):
        return b, args, kwargs, None, RuntimeError(f"result type {res.dtype} can't be cast to {out.dtype}"), (False, False)
    if tuple(out.shape) != tuple(res.shape):
        out.resize_(res.shape)
    out.copy_(res)
    return b, args, kwargs, out, None, (False, True)


def _out_hint(torch, case: Case):
    """(shape, dtype) of torch's result without out=: the out tensor's 'right' shape and dtype."""
    if case.variant != "out":
        return None
    plain = Case(case.spec, case.index, case.seed, "func", case.dtype, False, case.args,
                 {k: v for k, v in case.kwargs.items() if not isinstance(v, Out)})
    _, _, _, res, exc, _ = _torch_call(torch, plain, None)
    if exc is not None or not is_tensor(res):
        return ((0,), "float32")
    return (tuple(res.shape), dtype_name(res.dtype))


def _grad_check(kiln, torch, case: Case, kb: Built, tb: Built, kr, tr) -> Optional[str]:
    touts = [o for o in flat_tensors(tr) if o.requires_grad]
    kouts = [o for o in flat_tensors(kr) if getattr(o, "requires_grad", False)]
    if [tuple(o.shape) for o in touts] != [tuple(o.shape) for o in kouts]:
        return (f"grad: outputs requiring grad differ: kiln {[tuple(o.shape) for o in kouts]}, "
                f"torch {[tuple(o.shape) for o in touts]}")
    if not touts:
        return None
    rng = case_rng(case.seed, case.spec.key + "/w", case.index)
    ws = [np.round(rng.uniform(-2, 2, tuple(o.shape)) * 8) / 8 for o in touts]

    def backward(lib, outs, built):
        try:
            loss = None
            for o, w in zip(outs, ws):
                term = (o * lib.tensor(w, dtype=o.dtype)).sum()
                loss = term if loss is None else loss + term
            loss.backward()
            return [None if l.grad is None else l.grad for l in built.leaves], None
        except Exception as e:  # noqa: BLE001
            return None, e

    tg, te = backward(torch, touts, tb)
    kg, ke = backward(kiln, kouts, kb)
    if te is not None or ke is not None:
        if te is None or ke is None or canonical_exception(te) != canonical_exception(ke):
            return (f"grad: backward raised: kiln {_exc(ke)}, torch {_exc(te)}")
        return None
    for i, (a, b) in enumerate(zip(kg, tg)):
        if (a is None) != (b is None):
            return f"grad: leaf {i}: kiln {'None' if a is None else 'a tensor'}, torch {'None' if b is None else 'a tensor'}"
        if a is not None:
            # through a 16-bit intermediate (dtype=float16), gradients carry its rounding
            small = {"float16", "bfloat16"} & ({str(v) for v in case.kwargs.values() if isinstance(v, D)} | set(case.arg_dtypes()))
            r = compare_tensor(a, b, f"grad of leaf {i}", tol_scale=case.spec.tol * (2e4 if small else 10))
            if r:
                return "grad: " + r.split(": ", 1)[1]
    return None


def _exc(e) -> str:
    if e is None:
        return "no exception"
    msg = str(e).strip().splitlines()[0] if str(e).strip() else ""
    return f"{canonical_exception(e)}({msg[:160]!r})"


def run_case(kiln, torch, case: Case) -> Optional[str]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        hint = _out_hint(torch, case)
        tb, targs, tkw, tr, te, tflags = _torch_call(torch, case, hint)
        no_oracle = te is not None and (any(m in str(te) for m in _NO_KERNEL) or "not implemented for half" in str(te)
                                         or "INTERNAL ASSERT FAILED" in str(te))  # torch's own bug: no answer
        fell_back = bool(tflags)
        if not tflags:
            tflags = (bool(targs) and tr is targs[0], tr is tkw.get("out"))
        kb, kargs, kkw, kr, ke = _call(kiln, case, hint)
        case.out_hint = hint
        if no_oracle and ke is None:
            # torch 1.13 has no 16-bit CPU kernel here and the float32 fallback did not apply
            # (mixed dtypes): no answer to compare with, which is not a disagreement
            return None
        if te is not None or ke is not None:
            if te is None or ke is None:
                return f"exception: kiln {_exc(ke)}, torch {_exc(te)}"
            if canonical_exception(te) != canonical_exception(ke):
                return f"exception: kiln {_exc(ke)}, torch {_exc(te)}"
            return None
        r = compare_results(kr, tr, "result", case.spec.values, case.spec.tol, case.spec.signed_zeros)
        if r and r.startswith("values") and not fell_back:
            # 16-bit results: torch 1.13's own 16-bit kernels round intermediates (layer_norm,
            # softmax...); kiln computes in float32 and rounds once, so the float32 computation
            # rounded to the dtype is the other acceptable answer.
            wide = _torch_call(torch, case, hint, widen=True)
            if wide[5] and wide[4] is None and not compare_results(kr, wide[3], "result", True, case.spec.tol):
                r = None
        if r:
            return r
        # the same arguments changed the same way (in-place forms, out=, ops that must not write)
        for i, (a, b) in enumerate(zip(kb.roots, tb.roots)):
            r = compare_tensor(a, b, f"argument buffer {i} after the call", case.spec.values, case.spec.tol)
            if r:
                return "input: " + r
        if case.variant == "inplace":
            if (kr is kargs[0]) != tflags[0]:
                return f"inplace: returns self: kiln {kr is kargs[0]}, torch {tflags[0]}"
        elif case.variant == "out":
            if (kr is kkw["out"]) != tflags[1]:
                return f"inplace: out= call returns out: kiln {kr is kkw['out']}, torch {tflags[1]}"
        elif case.spec.values:
            ka, ta = aliases(kr, kb.roots), aliases(tr, tb.roots)
            if ka != ta:
                return f"alias: result shares an argument's memory: kiln {ka}, torch {ta}"
        if case.grad:
            return _grad_check(kiln, torch, case, kb, tb, kr, tr)
        return None
