"""Regression tests for the eighth differential hunt (pointwise ops and reductions on edge values: ±0, ±inf,
NaN, subnormals, float limits, exp-overflow boundaries, integer extremes, float16/bfloat16 rounding, mixed
dtypes with Python numbers and 0-dim tensors, out= and in-place forms). Each snippet runs with `torch` bound
to kiln and to torch (1.13, the oracle): both must raise the same exception class or give the same dtypes,
shapes and values, NaN positions and signs of zeros included (differential/snippets.py). The drivers that
found them are in tools/differential_hunt8/ (docs/DIFFERENTIAL_FINDINGS.md, section 0h)."""
import pytest

torch_ref = pytest.importorskip("torch", reason="torch is the oracle")

import kiln  # noqa: E402
from differential.snippets import assert_same_outcome  # noqa: E402

_E = "torch.tensor([nan, inf, -inf, -0.0, 0.0, 1e-45, 1e-40, 3.4e38, -3.4e38, 88.7, 89.0, -103.9, 0.5, -1.0, 2.5])"
_H = "torch.tensor([-65504.0, -2.0, 1.0, 1.0009765625, 65504.0, -0.0], dtype=torch.float16)"
_B = "torch.tensor([-3.0e38, -2.0, 1.0, 1.0078125, 3.0e38, -0.0], dtype=torch.bfloat16)"

CASES = [
    # relu has no out= in torch (its parser's TypeError); kiln's shared out= kernel stays C++-only
    "o = torch.empty(0); r = torch.relu(torch.ones(3), out=o)",
    "r = torch.relu(torch.tensor([-1.0, -0.0, 2.0]))",
    # log_ndtr far in the lower tail: float32's erfc underflows past x = -14.2 (was -inf)
    "r = torch.special.log_ndtr(torch.tensor([-10.5, -14.0, -15.0, -20.0, -30.0, -100.0, -1e10, -inf, nan]))",
    "r = torch.special.log_ndtr(torch.tensor([-10.5, -14.0, -20.0, -40.0], dtype=torch.float64))",
    # addcmul: value=True is the number 1 (torch fuses the product into the addition on AVX2+FMA CPUs;
    # kiln did for value=1 only), a value float32 cannot hold raises
    "a = torch.full((20,), -inf); b = torch.full((20,), 3.4e38); r = torch.addcmul(a, b, b, value=True)",
    "a = torch.full((20,), -inf); b = torch.full((20,), 3.4e38); r = a.clone().addcmul_(b, b, value=True)",
    "a = torch.full((20,), -inf); b = torch.full((20,), 3.4e38); r = torch.addcmul(a, b, b, value=False)",
    "a = torch.ones(3); r = torch.addcmul(a, a, a, value=1e39)",
    "a = torch.ones(3); r = a.addcmul_(a, a, value=-1e39)",
    "a = torch.ones(3); r = torch.addcmul(a, a, a, value=inf)",
    "a = torch.ones(3, dtype=torch.float64); r = torch.addcmul(a, a, a, value=1e39)",
    # reductions with a 16-bit dtype= cast the input first (int32 70000 is inf in float16: inf - inf = nan)
    "r = torch.sum(torch.tensor([70000, -70000], dtype=torch.int32), dtype=torch.float16)",
    "r = torch.sum(torch.tensor([2147483647, -2147483648, 1], dtype=torch.int32), dtype=torch.float16)",
    "r = torch.sum(torch.tensor([[2**62, -2**62], [3, 4]]), 1, dtype=torch.float16)",
    "r = torch.sum(torch.tensor([1e5, -1e5, 1.0]), dtype=torch.float16)",
    "r = torch.sum(torch.tensor([1e39, -1e39, 1.0], dtype=torch.float64), dtype=torch.bfloat16)",
    "r = torch.mean(torch.tensor([70000, -70000, 5], dtype=torch.int64), dtype=torch.float16)",
    "r = torch.mean(torch.tensor([[1e5, -1e5], [1.0, 2.0]]), 1, dtype=torch.float16)",
    "r = torch.nansum(torch.tensor([70000, -70000], dtype=torch.int32), dtype=torch.float16)",
    "r = torch.sum(torch.tensor([1.5, 2.25], dtype=torch.float16), dtype=torch.float16)",
    # var/std over a dim (torch's Welford in double): a slice of one repeated value has variance 0
    "r = torch.std(torch.full((3, 19), 88.7), 1)",
    "r = torch.var(torch.full((3, 19), 3.4e38), -1, keepdim=True)",
    "r = torch.std(torch.full((2, 19), 1.7e308, dtype=torch.float64), 1)",
    "r = torch.var(torch.full((2, 19), 88.7, dtype=torch.float64), 1, correction=0)",
    f"r = torch.std({_E}.reshape(-1, 1).expand(-1, 19).contiguous(), 1)",
    f"r = torch.var({_E}.reshape(-1, 1).expand(-1, 19).contiguous().double(), -1)",
    f"r = torch.var({_E}.reshape(1, -1).expand(19, -1).contiguous(), 0)",
    "r = torch.std(torch.tensor([[1.0, 2.0, 4.0], [3.0, 3.0, 3.0]]), 1)",
    "r = torch.var(torch.full((3, 19), 0.1, dtype=torch.float16), 1)",
    "r = torch.var_mean(torch.full((3, 19), 3.4e38), 1)",
    "r = torch.std_mean(torch.full((3, 19), 88.7), 1)",
    "r = torch.var_mean(torch.full((2, 19), 88.7, dtype=torch.float64), 1)",
    f"r = torch.var_mean({_E}.reshape(-1, 1).expand(-1, 19).contiguous(), 1)",
    # float16/bfloat16 ops read an input of another dtype as a value of the 16-bit dtype (torch casts its
    # inputs to the common dtype): comparisons, xlogy, pow, atan2, where, clamp, maximum, ...
    f"r = {_H} == 1.0001",
    f"r = {_H} != torch.tensor(1.0001)",
    f"r = {_H} < torch.tensor(1.0004, dtype=torch.float64)",
    f"r = torch.eq({_B}, 1.001)",
    f"r = torch.ge({_B}, torch.tensor(1.002))",
    f"r = {_H} + torch.tensor([70000, 1, 2, 3, 4, 5])",
    f"r = {_H} * torch.tensor([70000, 1, 2, 3, 4, 5], dtype=torch.int32)",
    f"r = torch.tensor([70000, -70000, 2, 3, 4, 5]) - {_H}",
    f"r = torch.xlogy({_H}, torch.tensor(9223372036854775807))",
    f"r = torch.pow(torch.tensor(2147483647, dtype=torch.int32), {_H})",
    f"r = torch.atan2({_B}, torch.tensor(1e39, dtype=torch.float64))",
    f"r = torch.maximum({_H}, torch.tensor([70000.0] * 6))",
    f"r = torch.where({_H} > 0, {_H}, torch.tensor(1e5))",
    f"r = torch.clamp({_B}, torch.tensor(1.005), torch.tensor(1e39, dtype=torch.float64))",
    f"r = torch.lerp({_B}, torch.tensor([1.005] * 6, dtype=torch.bfloat16), 0.5)",
    f"r = torch.copysign({_B}, torch.tensor(-1e39, dtype=torch.float64))",
    # ... but a one-element second operand of add/sub/mul/div stays unrounded (torch 2.x's
    # original_scalar_value; kiln's rule, checked with numbers torch 1.13 rounds to the same result)
    f"r = {_H} + 1.5",
    f"r = {_H} * torch.tensor(2.0)",
    f"r = {_H} / 4",
    # out= and the special functions kiln composes: torch's structured out= dtype check
    "o = torch.empty(0, dtype=torch.int64); r = torch.special.xlog1py(torch.tensor([1, 2]), torch.tensor([1, 2]), out=o)",
    "o = torch.empty(0, dtype=torch.int8); r = torch.special.zeta(torch.tensor([2, 3]), torch.tensor([1, 2]), out=o)",
    "o = torch.empty(0, dtype=torch.float64); r = torch.special.xlog1py(torch.tensor([1, 2]), torch.tensor([1, 2]), out=o)",
    # zeta's dtype is TensorIterator's: a 0-dim float64 q does not widen a float32 x
    "r = torch.special.zeta(torch.tensor([2.0, 3.0, inf, nan]), torch.tensor(1.0, dtype=torch.float64))",
    "r = torch.special.zeta(torch.tensor([2, 3]), 1.0)",
    # a Python number q is read in double (1e308 was float32's inf: 0 * inf in the tail sum gave NaN)
    "r = torch.special.zeta(torch.tensor([2.5, 88.7, 1.0, 0.5], dtype=torch.float64), 1e308)",
    "r = torch.special.zeta(torch.tensor([2.5, 88.7]), 1e308)",
    "r = torch.special.zeta(2.5, torch.tensor([1.0, 2.0]))",
    # xlog1py with a Python number (kiln called a missing _C.tensor: AttributeError) and torch's promotion
    f"r = torch.special.xlog1py({_E}, 1.5)",
    f"r = torch.special.xlog1py(1.5, {_E})",
    f"r = torch.special.xlog1py(-0.0, {_E})",
    "r = torch.special.xlog1py(torch.tensor([0, 1, -1, 7, -7, 2**63 - 1]), 0)",
    "r = torch.special.xlog1py(torch.tensor([0, 1, -7]), 2)",
    f"r = torch.special.xlog1py({_E}, nan)",
    f"r = torch.special.xlog1py({_E}.double(), 1e308)",
    f"r = torch.special.xlog1py({_E}, torch.tensor(-0.0, dtype=torch.float64))",
    # diff's prepend/append are Tensors (a number is the parser's TypeError, was AttributeError)
    "r = torch.diff(torch.ones(3), prepend=1.0)",
    "r = torch.diff(torch.ones(3), append=[1.0])",
    "r = torch.diff(torch.tensor([1.0, inf, -inf]), prepend=torch.tensor([nan]))",
    # unary + of a bool tensor raises, as torch.positive
    "r = +torch.tensor([True, False])",
    "r = +torch.tensor([1, 2])",
]


@pytest.mark.parametrize("src", CASES)
def test_same_outcome_as_torch(src):
    assert_same_outcome(src, kiln, torch_ref)


def test_sinc_float16_computes_in_float32():
    # torch 1.13 has no float16 sinc; 2.x computes pi * x and the quotient in float32 and rounds once
    # (sinc(1.) is -2.8e-8, -0. in float16; float16 steps gave 3.1e-4). Compared with torch's float32 result.
    vals = [1.0, 2.0, 3.0, 0.5, -2.5, 88.75, 0.0, -0.0, float("inf"), float("nan"), 1e-4]
    got = kiln.sinc(kiln.tensor(vals, dtype=kiln.float16))
    want = torch_ref.sinc(torch_ref.tensor(vals, dtype=torch_ref.float16).float()).half()
    assert str(got.dtype) == "kiln.float16"
    g, w = got.float().numpy(), want.float().numpy()
    import numpy as np
    np.testing.assert_array_equal(np.isnan(g), np.isnan(w))
    np.testing.assert_allclose(g, w, rtol=2e-3, atol=0, equal_nan=True)
    # bfloat16 keeps torch 1.13's bfloat16 kernel (each step rounded)
    assert_same_outcome("r = torch.sinc(torch.tensor([1.0, 3.0, 0.5, 88.7], dtype=torch.bfloat16))", kiln, torch_ref)
