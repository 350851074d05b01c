"""Disagreements with torch that are known and not fixed yet. Each entry marks the cases it matches
as strict xfail: while kiln disagrees they xfail; once fixed they XPASS, which fails the run, so the
entry has to be removed. Match by spec key (`ops`), optionally narrowed by `when(case)` (a case has
variant, dtype, grad, args, kwargs, arg_dtypes(), repro()) or by exact case ids (`ids`)."""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Callable, FrozenSet, Optional, Tuple


@dataclass(frozen=True)
class Known:
    group: str                # root cause (DIFFERENTIAL_FINDINGS.md uses the same names)
    reason: str
    when: Optional[Callable] = None
    ids: FrozenSet[str] = field(default_factory=frozenset)

    def matches(self, case) -> bool:
        if self.ids:
            return case.id in self.ids
        return self.when is not None and bool(self.when(case))


def src(pattern: str):
    """A predicate: the case's kiln repro matches the regex."""
    rx = re.compile(pattern)
    return lambda c: rx.search(c.repro()) is not None


def ids(*names: str) -> FrozenSet[str]:
    return frozenset(names)


KNOWN_DIVERGENCES = [
    Known('add_bool_alpha', 'add/sub with alpha=True on a non-bool result must raise',
          ids=ids(
          'add_alpha#0', 'add_alpha#12', 'add_alpha#13', 'add_alpha#8', 'add_alpha#9')),
    Known('addmm_int_scalars', 'addmm of int tensors with a float beta/alpha',
          ids=ids(
          'addmm#12', 'addmm#9')),
    Known('arange_int_step', 'arange with dtype=int and a fractional step (torch truncates the step first)',
          ids=ids(
          'arange#21')),
    Known('bool_kernels', 'kiln accepts bool where torch has no kernel (mm/matmul/linear/addmm, argmax/argmin)',
          ids=ids(
          'F.linear#6', 'argmax#5', 'argmax#6', 'argmin#15', 'matmul#1', 'matmul#20', 'mm#13',
          'mm#6')),
    Known('bool_results', 'sum/prod(dtype=bool) and addmm of bool: torch computes, kiln raises',
          ids=ids(
          'addmm#1', 'prod#1', 'sum#27', 'sum#28')),
    Known('clamp_mixed_bounds', 'clamp/clip: torch rejects a scalar bound mixed with a tensor bound (TypeError), kiln accepts it',
          ids=ids(
          'clamp#13', 'clamp#15', 'clamp#5', 'clamp#7', 'clamp#8', 'clip#0', 'clip#10', 'clip#11')),
    Known('clamp_tie_grad', 'clamp with tensor bounds, backward where input == bound: torch gives the gradient to the input, kiln splits it 0.5/0.5',
          ids=ids(
          'clamp_ties#0', 'clamp_ties#1', 'clamp_ties#3', 'clamp_ties#4', 'clamp_ties#5')),
    Known('constant_pad_negative', 'constant padding that makes a negative size must raise',
          ids=ids(
          'F.pad#1', 'F.pad#17')),
    Known('cosine_similarity', 'F.cosine_similarity broadcasting',
          ids=ids(
          'F.cosine_similarity#0', 'F.cosine_similarity#1', 'F.cosine_similarity#14',
          'F.cosine_similarity#4', 'F.cosine_similarity#8', 'F.cosine_similarity#9')),
    Known('crash', 'kiln crashes (SIGFPE): roll of a 0-dim tensor reads a stale size(0) (the 0-dim size/stride defect) and divides by it',
          ids=ids(
          'roll.after_empty_roll#0', 'roll.after_empty_roll#1')),
    Known('div_rounding_mode', "div_(rounding_mode=) and div(rounding_mode=, out=) are missing from kiln's bindings",
          ids=ids(
          'div_mode#0', 'div_mode#1', 'div_mode#12', 'div_mode#13', 'div_mode#14', 'div_mode#15',
          'div_mode#16', 'div_mode#4', 'div_mode#7', 'div_mode#8', 'div_mode#9')),
    Known('expanded_writes', 'writes into an expanded tensor (fill_, zero_, copy_, setitem, index_put_) raise in kiln; torch writes',
          ids=ids(
          'fill_#3', 'index_put#4', 'setitem#1', 'setitem#14', 'setitem#20', 'setitem#3', 'zero_#0',
          'zero_#6')),
    Known('floor_divide_inf', "floor division with an infinite operand differs from torch's formula (a - fmod(a, b)) / b",
          ids=ids(
          'floor_divide#16', 'floor_divide#17', 's//x#6', 'x//y#2')),
    Known('gelu_extremes', 'gelu overflows to inf for huge finite inputs (torch gives x)',
          ids=ids(
          'F.gelu#3', 'F.gelu#5')),
    Known('hardtanh_int', 'F.hardtanh of an int tensor must keep the dtype',
          ids=ids(
          'F.hardtanh#7', 'F.hardtanh#9')),
    Known('index_oob_class', 'out-of-range index: torch RuntimeError, kiln IndexError (gather, take)',
          ids=ids(
          'gather#7')),
    Known('inplace_self_alias', "y.mul_(y): torch's backward raises (a saved input was modified in place); kiln computes 2*y",
          ids=ids(
          'autograd.mul_self_#1', 'autograd.mul_self_#11', 'autograd.mul_self_#4',
          'autograd.mul_self_#5', 'autograd.mul_self_#6', 'autograd.mul_self_#7',
          'autograd.mul_self_#8', 'autograd.mul_self_#9')),
    Known('isclose_broadcast_self', 'isclose where broadcasting would grow self: torch raises',
          ids=ids(
          'isclose#8')),
    Known('lerp_extremes', 'lerp with huge weights/extremes: nan where torch has ±inf',
          ids=ids(
          'lerp#8', 'lerp#9')),
    Known('lerp_mixed_dtypes', 'lerp with end/weight of another dtype: torch raises, kiln promotes',
          ids=ids(
          'lerp#1', 'lerp#17', 'lerp#7')),
    Known('max_nan_grad', 'max(a, b)/maximum backward with nan',
          ids=ids(
          'max_binary#7')),
    Known('mm_mixed_dtypes_empty', 'mm of mixed dtypes with an empty operand and out=: torch accepts',
          ids=ids(
          'mm#7')),
    Known('movedim_tuples', "movedim with tuples of dims is missing from kiln's bindings",
          ids=ids(
          'movedim#0', 'movedim#14', 'movedim#4', 'movedim#6', 'movedim#9')),
    Known('nan_grads', 'nan gradients where torch has finite ones (std of a constant, bce at 0/1, ...)',
          ids=ids(
          'F.binary_cross_entropy#1', 'std#15')),
    Known('no_out_overload', "kiln's binding has no out= form of this op (torch has one)",
          ids=ids(
          'addmm#13', 'addmm#14', 'addmm#16', 'addmm#3', 'addmm#6', 'addmm#8', 'amax#0', 'amax#1',
          'amax#13', 'amax#14', 'amax#15', 'amax#16', 'amax#17', 'amax#2', 'amax#3', 'amin#0',
          'amin#10', 'amin#14', 'amin#15', 'amin#2', 'dot#2', 'index_select#11', 'index_select#13',
          'index_select#14', 'index_select#2', 'lerp#10', 'lerp#12', 'lerp#13', 'lerp#15', 'lerp#3',
          'lerp#4', 'lerp#6', 'logsumexp#1', 'logsumexp#10', 'logsumexp#14', 'logsumexp#15',
          'matmul#0', 'matmul#15', 'matmul#18', 'matmul#19', 'matmul#3', 'matmul#4', 'matmul#9',
          'mv#0', 'mv#10', 'mv#2', 'mv#5', 'mv#7', 'mv#9', 'outer#1', 'outer#2', 'outer#3',
          'outer#5', 'outer#8', 'outer#9', 'stack#1', 'stack#11', 'stack#12', 'stack#3', 'stack#7',
          'stack#9')),
    Known('out_dtype_rules', "out= dtype checks differ from torch's (which out dtypes an op may write)",
          ids=ids(
          'abs#7', 'clamp#1', 'clamp#11', 'clamp#3', 'cumsum#17', 'mean#19', 'neg#17', 'round#18',
          'round#4', 'sum#11', 'take#9')),
    Known('pow_negative_int', 'integer ** negative integer tensor: torch computes, kiln raises',
          ids=ids(
          'pow#1', 'x**=y#5')),
    Known('pow_scalar_base_grad', 'scalar ** tensor gradient where the power underflows',
          ids=ids(
          's**x#4')),
    Known('ravel_expanded', 'ravel of an expanded tensor must copy',
          ids=ids(
          'ravel#1')),
    Known('reduction_out_without_dim', 'sum/mean(x, out=) without dim: torch has no such overload (TypeError)',
          ids=ids(
          'mean#18', 'sum#1')),
    Known('roll_0dim', 'roll of a 0-dim tensor',
          ids=ids(
          'roll#3')),
    Known('round_decimals', "round(decimals=) is missing from kiln's bindings",
          ids=ids(
          'round_decimals#0', 'round_decimals#1', 'round_decimals#10', 'round_decimals#11',
          'round_decimals#2', 'round_decimals#3', 'round_decimals#4', 'round_decimals#5',
          'round_decimals#6', 'round_decimals#7', 'round_decimals#8', 'round_decimals#9')),
    Known('sign_bool', 'sign/sign_ of bool works in torch, kiln raises',
          ids=ids(
          'sign#9')),
    Known('topk_0dim_bool', 'topk of a 0-dim bool tensor: torch 1.13 returns it (its dim-0 shortcut skips the dtype check), kiln raises',
          ids=ids(
          'topk#17')),
    Known('tril_triu_1d', 'tril/triu of a tensor with < 2 dims: torch raises IndexError (dim -2 out of range), kiln RuntimeError',
          ids=ids(
          'tril#11', 'tril#14', 'tril#2', 'tril#3', 'tril#4', 'tril#6', 'tril#8', 'tril#9',
          'triu#1', 'triu#10', 'triu#14', 'triu#4')),
    Known('unsupported_dtype_class', 'an op that does not support a dtype raises TypeError in kiln, RuntimeError in torch',
          ids=ids(
          'bitwise_not#3', 'bitwise_not#6', 'bitwise_not#9', 'ceil#13', 'ceil#19', 'ceil#9',
          'floor#14', 'floor#18', 'floor#7', 'fmod#18', 'pow#3', 'pow#5', 'relu#14', 'relu#4',
          'relu#5', 'relu#9', 'round#13', 'round#16', 'round#17', 'round#7', 's**x#0', 'sign#5',
          'trunc#3', 'trunc#9', 'x**y#7')),
    Known('zero_dim_size_stride', 'size(d)/stride(d) of a 0-dim tensor must raise IndexError',
          ids=ids(
          'size(d)#3', 'size(d)#4', 'size(d)#7', 'size(d)#8', 'stride(d)#5')),
]


def known_for(case) -> Optional[Known]:
    for k in KNOWN_DIVERGENCES:
        if k.matches(case):
            return k
    return None
