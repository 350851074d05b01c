"""Disagreements with torch that are known and not fixed yet. Each entry marks the cases it matches
as strict xfail: while kiln disagrees they xfail; once fixed they XPASS, which fails the run, so the
entry has to be removed (except where torch's answer is memory its bug reads: torch_reads_garbage,
not strict, since that garbage now and then equals kiln's answer). Match by spec key (`ops`), optionally narrowed by `when(case)` (a case has
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
    # torch's answer is whatever memory its bug reads, which now and then equals kiln's: such cases
    # xfail without strict, or the run would fail at random.
    torch_reads_garbage: bool = False

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
    Known('torch_median_expanded', "median/nanmedian over a dim of an expanded (stride-0) tensor: torch 1.13's kernel reads "
          "past the input and returns garbage values and indices (its bug); kiln gives the median of the expanded values",
          when=lambda c: c.id.split("#")[0] in ("median", "nanmedian") and ".expand(" in c.repro()
          and "dim" in c.repro(), torch_reads_garbage=True),
    Known('torch_cat_one_part_strided_out', "hstack/dstack/... of one part into a non-contiguous out=: torch 1.13's cat_out "
          "leaves out unwritten (its bug); kiln writes the part",
          ids=ids('hstack#9', 'dstack#5')),
    Known('torch_sgn_real_grad', "torch 1.13's sgn backward on real tensors (sgn_backward, written for complex) does not give sgn's zero derivative; kiln gives 0 as for sign",
          ids=ids('sgn#9', 'sgn#10')),
    Known('angle_constant_reduced', "torch's deg2rad/rad2deg multiply by a wrapped double scalar, which its TensorIterator rounds to bfloat16 first (180/pi as 57.25); kiln multiplies in float32 by the float32 constant and rounds once (1 bfloat16 ulp apart)",
          ids=ids('rad2deg#14')),
    Known('torch_inplace_inverse_hyperbolic_grad', "torch 1.13 has no derivative for in-place asinh_/acosh_/atanh_ (NotImplementedError: 'the derivative for inplace version of asinh is not implemented'); kiln differentiates them as the out-of-place ops",
          when=lambda c: c.variant == "inplace" and c.grad and re.search(r"\.(arc|a)(sinh|cosh|tanh)_\(", c.repro()) is not None),
    Known('clamp_tie_grad', 'clamp with tensor bounds, backward where input == bound: torch gives the gradient to the input, kiln splits it 0.5/0.5',
          ids=ids(
          'clamp_ties#5')),
    Known('addcmul_fma', "torch's addcmul loop fuses self + value * t1 * t2 into a multiply-add, so a product beyond the dtype's range added to inf stays inf; kiln rounds the product first (inf + -inf: nan)",
          ids=ids(
          'addcmul#5')),
    Known('xlogy_reduced_rounding', "xlogy in bfloat16: torch rounds log(other) to bfloat16 before the multiply, kiln computes in float32 and rounds once (1 ulp)",
          ids=ids(
          'xlogy#21')),
    Known('bmm_unused_input_grad', "baddbmm/addbmm: an input that cannot change the result (self at beta=0, batches with an empty inner dim) gets a zero gradient in torch and none in kiln (as kiln's addmm)",
          ids=ids(
          'baddbmm#7', 'addbmm#3')),
    Known('diag_offset_overflow', 'diag of a transposed bfloat16 matrix with an offset past its columns: torch 1.13 raises "numel: integer multiplication overflow" (its bug), kiln returns the empty diagonal',
          ids=ids(
          'diag#11')),
    Known('pow_scalar_base_grad', 'scalar ** tensor gradient where the power underflows',
          ids=ids(
          's**x#4')),
    Known('softshrink_nan', "softshrink(nan): torch 1.13 gives 0, torch 2.x and kiln give nan",
          ids=ids(
          'F.softshrink#3')),
    Known('topk_0dim_bool', 'topk of a 0-dim bool tensor: torch 1.13 returns it (its dim-0 shortcut skips the dtype check), kiln raises',
          ids=ids(
          'topk#17')),
]


def known_for(case) -> Optional[Known]:
    for k in KNOWN_DIVERGENCES:
        if k.matches(case):
            return k
    return None
