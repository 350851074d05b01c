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
    group: str                # root cause (docs/DIFFERENTIAL_FINDINGS.md uses the same names)
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
    Known('bool_results', 'sum/prod(dtype=bool) and addmm of bool: torch computes, kiln raises',
          ids=ids(
          'addmm#1', 'mv#2', 'prod#1', 'sum#27', 'sum#28')),
    Known('clamp_mixed_bounds', 'clamp/clip: torch rejects a scalar bound mixed with a tensor bound (TypeError), kiln accepts it',
          ids=ids(
          'clamp#13', 'clamp#15', 'clamp#5', 'clamp#7', 'clamp#8', 'clip#0', 'clip#10', 'clip#11')),
    Known('clamp_tie_grad', 'clamp with tensor bounds, backward where input == bound: torch gives the gradient to the input, kiln splits it 0.5/0.5',
          ids=ids(
          'clamp_ties#5')),
    Known('expanded_writes', 'writes into an expanded tensor (fill_, zero_, copy_, setitem, index_put_) raise in kiln; torch writes',
          ids=ids(
          'index_put#4', 'setitem#14', 'setitem#20', 'setitem#3')),
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
    Known('max_nan_grad', 'max(a, b)/maximum backward with nan',
          ids=ids(
          'max_binary#7')),
    Known('mm_mixed_dtypes_empty', 'mm of mixed dtypes with an empty operand and out=: torch accepts',
          ids=ids(
          'mm#7')),
    Known('out_dtype_rules', "out= dtype checks differ from torch's (which out dtypes an op may write)",
          ids=ids(
          'addmm#16', 'amax#0', 'mean#19', 'mv#7', 'sum#11', 'take#9')),
    Known('pow_scalar_base_grad', 'scalar ** tensor gradient where the power underflows',
          ids=ids(
          's**x#4')),
    Known('reduction_out_without_dim', 'sum/mean(x, out=) without dim: torch has no such overload (TypeError)',
          ids=ids(
          'mean#18', 'sum#1')),
    Known('topk_0dim_bool', 'topk of a 0-dim bool tensor: torch 1.13 returns it (its dim-0 shortcut skips the dtype check), kiln raises',
          ids=ids(
          'topk#17')),
    Known('unclassified', 'unclassified',
          ids=ids(
          'lerp#8')),
]


def known_for(case) -> Optional[Known]:
    for k in KNOWN_DIVERGENCES:
        if k.matches(case):
            return k
    return None
