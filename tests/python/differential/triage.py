"""Grouping disagreements by root cause (heuristic rules on the op and the message), and writing
the KNOWN_DIVERGENCES table for them.

    PYTHONPATH=bazel-bin python3 -m differential.triage            # run everything, print the groups
    PYTHONPATH=bazel-bin python3 -m differential.triage --known    # print known.py's table for them
"""
from __future__ import annotations

import re
import sys
from collections import defaultdict

# (group, reason, predicate(op, message, repro)); the first that matches names the group.
RULES = [
    ("div_rounding_mode", "div_(rounding_mode=) and div(rounding_mode=, out=) are missing from kiln's bindings",
     lambda op, m, r: "rounding_mode" in r and "invalid combination" in m),
    ("round_decimals", "round(decimals=) is missing from kiln's bindings",
     lambda op, m, r: "decimals=" in r and "invalid combination" in m),
    ("movedim_tuples", "movedim with tuples of dims is missing from kiln's bindings",
     lambda op, m, r: op == "movedim"),
    ("no_out_overload", "kiln's binding has no out= form of this op (torch has one)",
     lambda op, m, r: re.search(r"kiln TypeError\('\w+\(\) received an invalid combination of arguments - got \(.*out=", m)),
    ("unsupported_dtype_class", "an op that does not support a dtype raises TypeError in kiln, RuntimeError in torch",
     lambda op, m, r: re.search(r"kiln TypeError\(.*not implemented for", m) and "torch RuntimeError" in m),
    ("sign_bool", "sign/sign_ of bool works in torch, kiln raises",
     lambda op, m, r: op == "sign" and "torch no exception" in m),
    ("out_dtype_rules", "out= dtype checks differ from torch's (which out dtypes an op may write)",
     lambda op, m, r: "out=" in r and ("Found dtype" in m or "Expected out tensor to have dtype" in m
                                       or "can't be cast to the desired output" in m or "dtype for input and out" in m
                                       or "must have the same scalar type" in m or "does not match input dtype" in m
                                       or "expected to have the same dtype" in m
                                       or "bool results are not supported" in m)),
    ("logical_out_resize", "logical_and/or/xor with out= do not resize/broadcast like torch",
     lambda op, m, r: op.startswith("logical_") and "out=" in r),
    ("expanded_writes", "writes into an expanded tensor (fill_, zero_, copy_, setitem, index_put_) raise in kiln; torch writes",
     lambda op, m, r: "more than one element of the written-to tensor" in m and "torch no exception" in m),
    ("zero_dim_size_stride", "size(d)/stride(d) of a 0-dim tensor must raise IndexError",
     lambda op, m, r: op in ("size(d)", "stride(d)")),
    ("roll_0dim", "roll of a 0-dim tensor", lambda op, m, r: op == "roll" and "0-dim" in m),
    ("cosine_similarity", "F.cosine_similarity broadcasting", lambda op, m, r: op == "F.cosine_similarity"),
    ("hardtanh_int", "F.hardtanh of an int tensor must keep the dtype", lambda op, m, r: op == "F.hardtanh"),
    ("addmm_int_scalars", "addmm of int tensors with a float beta/alpha", lambda op, m, r: op == "addmm" and "dtype:" in m),
    ("ravel_expanded", "ravel of an expanded tensor must copy", lambda op, m, r: op == "ravel"),
    ("pow_negative_int", "integer ** negative integer tensor: torch computes, kiln raises",
     lambda op, m, r: "negative integer powers" in m),
    ("nan_grads", "nan gradients where torch has finite ones (std of a constant, bce at 0/1, ...)",
     lambda op, m, r: m.startswith("grad") and op in ("std", "var", "F.binary_cross_entropy", "norm",
                                                       "F.binary_cross_entropy_with_logits",
                                                       "torch.binary_cross_entropy_with_logits")),
    ("cross_entropy_smoothing", "cross_entropy with label_smoothing", lambda op, m, r: op == "F.cross_entropy" and "label_smoothing" in r),
    ("arange_int_step", "arange with dtype=int and a fractional step (torch truncates the step first)",
     lambda op, m, r: op == "arange"),
    ("gelu_extremes", "gelu overflows to inf for huge finite inputs (torch gives x)", lambda op, m, r: op == "F.gelu"),
    ("tril_triu_1d", "tril/triu of a tensor with < 2 dims: torch raises IndexError (dim -2 out of range), kiln RuntimeError",
     lambda op, m, r: op in ("tril", "triu") and "at least 2 dimensions" in m),
    ("bool_kernels", "kiln accepts bool where torch has no kernel (mm/matmul/linear/addmm, argmax/argmin)",
     lambda op, m, r: (re.search(r"not implemented for \\?'Bool", m) or (op == "F.linear" and "dtype=kiln.bool" in r))
     and "kiln no exception" in m),
    ("bool_results", "sum/prod(dtype=bool) and addmm of bool: torch computes, kiln raises",
     lambda op, m, r: ("dtype=kiln.bool" in r and op in ("sum", "prod")) or "\"addmm\" not implemented for" in m
     or "\"mv\" not implemented for" in m),
    ("lerp_mixed_dtypes", "lerp with end/weight of another dtype: torch raises, kiln promotes",
     lambda op, m, r: op == "lerp" and "expected dtype" in m),
    ("mm_mixed_dtypes_empty", "mm of mixed dtypes with an empty operand and out=: torch accepts",
     lambda op, m, r: "expected mat1 and mat2 to have the same dtype" in m),
    ("inplace_self_alias", "y.mul_(y): torch's backward raises (a saved input was modified in place); kiln computes 2*y",
     lambda op, m, r: op == "autograd.mul_self_"),
    ("crash", "kiln crashes (SIGFPE): roll of a 0-dim tensor reads a stale size(0) (the 0-dim size/stride defect) and divides by it",
     lambda op, m, r: m.startswith("crash")),
    ("out_computes_in_out_dtype", "op(16-bit inputs, out=wider tensor): torch computes in the result dtype and rounds, then casts into out; kiln computes in out's dtype",
     lambda op, m, r: "out=" in r and (m.startswith("values") or m.startswith("input: values"))),
    ("dropout_16bit_dtype", "F.dropout (training) of float16/bfloat16 returns float32", lambda op, m, r: op.startswith("F.dropout") and "dtype" in m),
    ("einsum_views", "einsum that is a pure diagonal/permutation returns a view in torch, a copy in kiln", lambda op, m, r: op == "einsum" and m.startswith("alias")),
    ("masked_select_grad_noncontig", "masked_select backward on a non-contiguous input puts gradients in the wrong places",
     lambda op, m, r: op == "masked_select" and m.startswith("grad")),
    ("masked_fill_value_grad", "masked_fill with a 0-dim value tensor that requires grad: no gradient for the value",
     lambda op, m, r: op == "masked_fill" and "kiln None" in m),
    ("softmax_int_with_dtype", "softmax/log_softmax of an empty int tensor: torch returns it, kiln raises (dtype checked first)",
     lambda op, m, r: "expected a floating point dtype" in m),
    ("remainder_grad_other", "remainder backward w.r.t. the divisor: torch raises 'not implemented', kiln computes",
     lambda op, m, r: "derivative for aten::remainder" in m),
    ("setitem_index_put_dtype", "x[index_tensor] = value of another dtype: torch 1.13 raises, kiln converts",
     lambda op, m, r: "Index put requires the source and destination dtypes match" in m),
    ("bce_weight_grows_output", "binary_cross_entropy whose weight broadcasts to a bigger shape than the input: torch raises",
     lambda op, m, r: op in ("F.binary_cross_entropy", "F.binary_cross_entropy_with_logits") and "doesn't match the broadcast shape" in m),
    ("scalar_overflow_checks", "a scalar operand that does not fit the result dtype (fmod(int32, 2**32) divides by the wrapped 0; where(c, 1e300, ...)): torch raises",
     lambda op, m, r: "ZeroDivisionError" in m or "without overflow" in m),
    ("index_errors_class", "index_select out-of-range / empty-dim errors: class or check differs",
     lambda op, m, r: op in ("index_select", "F.embedding", "torch.embedding") and m.startswith("exception")),
    ("clamp_tie_grad", "clamp with tensor bounds, backward where input == bound: torch gives the gradient to the input, kiln splits it 0.5/0.5",
     lambda op, m, r: op == "clamp_ties" and m.startswith("grad")),
    ("relu_nan_grad", "relu/relu_ backward at nan: torch passes the gradient (threshold_backward: x <= 0 ? 0 : g), kiln gives 0",
     lambda op, m, r: (op in ("relu", "F.relu") or op.startswith("autograd.relu")) and m.startswith("grad")),
    ("silu_grad_extreme", "silu backward at -max: nan in kiln, -0 in torch", lambda op, m, r: op == "F.silu" and m.startswith("grad")),
    ("linspace_int", "linspace with an integer dtype: torch truncates start/step first, kiln rounds the float sequence",
     lambda op, m, r: op == "linspace"),
    ("empty_reductions", "amax/amin of an empty tensor without dim: IndexError in kiln, RuntimeError in torch",
     lambda op, m, r: "Expected reduction dim" in m),
    ("expand_strides", "expand: strides of new leading size-1 dims (torch: size*stride of the next dim, kiln 0)",
     lambda op, m, r: op == "props" and "result[6]" in m),
    ("batch_norm_single_value_stats", "torch.batch_norm training with one value per channel: torch's running_var becomes nan (unbiased var of 1 value), kiln keeps it",
     lambda op, m, r: op in ("torch.batch_norm", "F.batch_norm") and "argument buffer" in m),
    ("logsumexp_empty_dims", "logsumexp(int tensor, dim=()): torch raises (its out shape check), kiln reduces",
     lambda op, m, r: op == "logsumexp" and "broadcast shape" in m),
    ("add_bool_alpha", "add/sub with alpha=True on a non-bool result must raise", lambda op, m, r: "Boolean alpha" in m),
    ("clamp_mixed_bounds", "clamp/clip: torch rejects a scalar bound mixed with a tensor bound (TypeError), kiln accepts it",
     lambda op, m, r: op in ("clamp", "clip") and ("TypeError" in m or m.startswith("dtype"))),
    ("floor_divide_inf", "floor division with an infinite operand differs from torch's formula (a - fmod(a, b)) / b",
     lambda op, m, r: op in ("floor_divide", "x//y", "s//x", "div_mode", "x//=y")),
    ("random_overloads", "random_() with no arguments / normal(Tensor, float) missing",
     lambda op, m, r: op in ("random_", "normal")),
    ("reduction_out_without_dim", "sum/mean(x, out=) without dim: torch has no such overload (TypeError)",
     lambda op, m, r: op in ("sum", "mean") and "torch TypeError" in m),
    ("constant_pad_negative", "constant padding that makes a negative size must raise",
     lambda op, m, r: op in ("F.pad", "constant_pad_nd") and "negative output size" in m),
    ("layer_norm_f16", "layer_norm of float16 overflows in the variance", lambda op, m, r: op == "F.layer_norm"),
    ("topk_0dim_bool", "topk of a 0-dim bool tensor: torch 1.13 returns it (its dim-0 shortcut skips the dtype check), kiln raises",
     lambda op, m, r: op == "topk"),
    ("max_nan_grad", "max(a, b)/maximum backward with nan", lambda op, m, r: op in ("max_binary", "maximum") and m.startswith("grad")),
    ("pow_scalar_base_grad", "scalar ** tensor gradient where the power underflows", lambda op, m, r: op == "s**x" and m.startswith("grad")),
    ("lerp_extremes", "lerp with huge weights/extremes: nan where torch has ±inf", lambda op, m, r: op == "lerp" and "values" in m),
    ("index_oob_class", "out-of-range index: torch RuntimeError, kiln IndexError (gather, take)",
     lambda op, m, r: op in ("gather", "take") and "kiln IndexError" in m),
    ("isclose_broadcast_self", "isclose where broadcasting would grow self: torch raises", lambda op, m, r: op in ("isclose", "allclose")),
]


def classify(op: str, msg: str, repro: str) -> str:
    for name, _, pred in RULES:
        if pred(op, msg, repro):
            return name
    return "unclassified"


def reason(group: str) -> str:
    return next((r for n, r, _ in RULES if n == group), group)


def groups(results, repros):
    by = defaultdict(list)
    for cid, msg in sorted(results.items()):
        if msg:
            op = cid.rsplit("#", 1)[0]
            by[classify(op, msg, repros.get(cid, ""))].append(cid)
    return by


def main(argv):
    import kiln
    import torch
    from .worker import DEFAULT_SEED, all_cases, run_all
    import os
    seed = int(os.environ.get("KILN_DIFF_SEED", DEFAULT_SEED))
    cases = all_cases(seed, kiln, torch)
    results, crashes, repros = run_all(seed, [c.id for c in cases])
    for c in cases:
        if results.get(c.id) and c.id not in repros:
            repros[c.id] = c.repro()
    by = groups(results, repros)
    if "--known" in argv:
        import textwrap
        for g, ids in sorted(by.items()):
            body = textwrap.fill(", ".join(repr(i) for i in ids), 100, initial_indent=" " * 10, subsequent_indent=" " * 10)
            print(f"    Known({g!r}, {reason(g)!r},\n          ids=ids(\n{body})),")
        return
    bad = sum(len(v) for v in by.values())
    print(f"{len(results)} cases, {len(results) - bad} agree")
    for g, ids in sorted(by.items(), key=lambda kv: -len(kv[1])):
        print(f"== {g} ({len(ids)}): {reason(g)}")
        for cid in ids[:int(__import__("os").environ.get("N", 3))]:
            print(f"   {results[cid][:200]}\n      {repros.get(cid, '')[:300]}")


if __name__ == "__main__":
    main(sys.argv[1:])
