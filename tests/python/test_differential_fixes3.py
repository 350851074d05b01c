"""Regression tests for the third differential hunt (edge values: NaN, ±inf, ±0, subnormals, int
extremes, Python numbers mixed with tensors). Each case is a snippet run with `torch` bound to kiln
and to torch; both must raise the same exception class or give the same dtypes, shapes and values
(NaNs in place, and the sign of zeros): differential/snippets.py."""
import pytest

torch_ref = pytest.importorskip("torch", reason="torch is the oracle")

import kiln  # noqa: E402
from differential.snippets import assert_same_outcome  # noqa: E402

CASES = [
    # hardshrink/softshrink: the dead zone is +0, also for -0.0 and -lambd (a NaN stays NaN in
    # softshrink as torch 2.x; torch 1.13 gives 0 there, so NaN is left out of the comparison)
    "r = torch.nn.functional.hardshrink(torch.tensor([-0.0, 0.0, -0.5, 0.5, nan, -0.3, 2., -inf]))",
    "r = torch.nn.functional.hardshrink(torch.tensor([-0.0, -0.5, 0.25] * 20, dtype=torch.float64), 0.5)",
    "r = torch.nn.functional.hardshrink(torch.tensor([-0.0, -0.5, 0.25, 3.], dtype=torch.bfloat16))",
    "r = torch.nn.functional.softshrink(torch.tensor([-0.0, 0.0, -0.5, 0.5, -0.3, 2., -inf, inf]))",
    "r = torch.nn.functional.softshrink(torch.tensor([-0.0, -0.5, 0.25] * 20, dtype=torch.float64), 0.75)",
    "r = torch.nn.functional.softshrink(torch.tensor([-0.0, -1.0]), 0.)",
    "r = torch.hardshrink(torch.tensor([-0.0, -0.1]), out=torch.empty(2))",
    # fmax/fmin: of two equal values self (fmax(-0.0, 0.0) is -0.0); a NaN loses to a number
    "r = torch.fmax(torch.tensor([-0.0, 0.0, 0.0, nan, 1.]), torch.tensor([0.0, -0.0, 0.0, -0.0, nan]))",
    "r = torch.fmin(torch.tensor([-0.0, 0.0, 0.0, nan, 1.] * 12), torch.tensor([0.0, -0.0, 0.0, -0.0, nan] * 12))",
    "r = torch.fmin(torch.tensor([-0.0, 0.0], dtype=torch.float64), torch.tensor([0.0, -0.0], dtype=torch.float64))",
    "r = torch.fmax(torch.tensor([0, 1, -3]), torch.tensor([-0.0, 1., nan]))",
    "r = torch.fmax(torch.tensor([3, -7], dtype=torch.int8), torch.tensor([3, 5], dtype=torch.int8))",
    # copysign with a number: a wrapped 0-dim tensor, no overflow check (torch: copysign(x, inf))
    "r = torch.copysign(torch.tensor([1, -2], dtype=torch.int32), 1e308)",
    "r = torch.copysign(torch.tensor([1., -2.]), -1e300)",
    "r = torch.copysign(torch.tensor([1., -2.], dtype=torch.float16), -0.0)",
    "r = torch.tensor([1., -2.]).copysign(-3)",
    "x = torch.tensor([1., -2.]); x.copysign_(-1e308); r = x",
    "r = torch.copysign(torch.tensor([True, False]), -1)",
    # ldexp is torch's mul(self, pow(2.0, other)): 2 ** other in other's dtype (float32 for ints)
    "r = torch.ldexp(torch.tensor([1.0], dtype=torch.float64), torch.tensor([200]))",
    "r = torch.ldexp(torch.tensor([1.0, 3.], dtype=torch.float64), torch.tensor([-160, 3]))",
    "r = torch.ldexp(torch.tensor([1.5], dtype=torch.float64), torch.tensor([0.5], dtype=torch.float16))",
    "r = torch.ldexp(torch.tensor([1.5], dtype=torch.float16), torch.tensor([0.5], dtype=torch.bfloat16))",
    "r = torch.ldexp(torch.tensor([3]), torch.tensor([2]))",
    "r = torch.ldexp(torch.tensor([1.5], dtype=torch.float16), torch.tensor([20]))",
    "x = torch.tensor([1.5], dtype=torch.float64); x.ldexp_(torch.tensor([0.5], dtype=torch.float16)); r = x",
    "r = torch.ldexp(torch.tensor([1.0], dtype=torch.float64), torch.tensor([200]), out=torch.empty(1, dtype=torch.float64))",
    "r = torch.ldexp(torch.tensor([1.0]), torch.tensor([2]), out=torch.empty(1, dtype=torch.int64))",
    "r = torch.tensor([2], dtype=torch.int32).ldexp_(torch.tensor([1]))",
    # clamp with two Scalar bounds, one NaN: NaN before any overflow check of the other bound
    "r = torch.clamp(torch.tensor([5, 0, -128], dtype=torch.int8), min=nan, max=1e39)",
    "r = torch.clamp(torch.tensor([128, 3], dtype=torch.uint8), min=1e39, max=nan)",
    "r = torch.clamp(torch.tensor([1., 2.], dtype=torch.bfloat16), min=nan, max=1e300)",
    "r = torch.clamp(torch.tensor([1., 2.], dtype=torch.float16), min=-1e300, max=nan)",
    "r = torch.clamp(torch.tensor([1., 2.], dtype=torch.float16), min=-1e300, max=1.)",  # still raises
    "r = torch.clamp(torch.tensor([1., 2.], dtype=torch.float16), min=1e300)",  # still raises
    # kl_div: the xlogy term is +0 where the target is ±0 (torch's xlogy(t, t) - t * input)
    "r = torch.nn.functional.kl_div(torch.tensor([1.0, -2.0, 0.3]), torch.tensor([0.0, -0.0, -0.0]), reduction='none')",
    "r = torch.nn.functional.kl_div(torch.tensor([[1.0, -2.0], [nan, inf]]), torch.tensor([[-0.0, 0.5], [0.0, 0.0]]), reduction='none')",
    "r = torch.nn.functional.kl_div(torch.tensor([1.0, -2.0]), torch.tensor([-0.0, 0.0]), reduction='sum')",
    # a Python number for a Tensor: any operand of add/sub/mul/div and their aliases (multiply,
    # subtract, divide, true_divide), only the other one of eq/ne/lt/.../fmod/copysign, and never
    # where's condition
    "r = torch.true_divide(2, torch.tensor([1., 2.]))",
    "r = torch.true_divide(True, torch.tensor([1, 2]))",
    "r = torch.multiply(2.5, torch.tensor([1, 2]))",
    "r = torch.subtract(2, torch.tensor([1., 2.]), alpha=3)",
    "r = torch.divide(-1, torch.tensor([0., 2.]), rounding_mode='floor')",
    "r = torch.divide(torch.tensor([7, -7]), 2, rounding_mode='trunc', out=torch.empty(2, dtype=torch.int64))",
    "r = torch.multiply(torch.tensor([1, 2]), torch.tensor([3, 4]), out=torch.empty(2, dtype=torch.int64))",
    "r = torch.rsub(torch.tensor([1., 2.]), 5)",
    "r = torch.rsub(torch.tensor([1, 2]), torch.tensor([5, 5]), alpha=2)",
    "r = torch.rsub(5, torch.tensor([1., 2.]))",
    "r = torch.eq(2, torch.tensor([1., 2.]))",
    "r = torch.eq(torch.tensor([1., 2.]), 2)",
    "r = torch.lt(2.5, torch.tensor([1., 2.]))",
    "r = torch.ge(True, torch.tensor([1., 2.]))",
    "r = torch.not_equal(2, torch.tensor([1., 2.]))",
    "r = torch.fmod(2, torch.tensor([1, 2]))",
    "r = torch.fmod(torch.tensor([5, -5]), 3)",
    "r = torch.copysign(2, torch.tensor([1., -2.]))",
    "r = torch.where(True, torch.tensor([1.]), torch.tensor([2.]))",
    "r = torch.where(torch.tensor([True, False]), 2, torch.tensor([1., 2.]))",
    "r = torch.where(torch.tensor([True, False]), torch.tensor([1., 2.]), 2)",
    "r = torch.lerp(torch.tensor([1., 2.]), 2., 0.5)",
    "r = torch.lerp(torch.tensor([1., 2.]), torch.tensor([3., 4.]), 0.5)",
    "r = torch.remainder(-3, torch.tensor([2, -2]))",
    "r = torch.pow(2, torch.tensor([1, -1]))",
    # a bool is a float for float parameters (torch's arg parser takes any Python int there)
    "r = torch.nan_to_num(torch.tensor([1., nan, inf, -inf]), nan=True, posinf=False)",
    "r = torch.nan_to_num(torch.tensor([1, 2]), nan=True, posinf=True)",
    "r = torch.nn.functional.dropout(torch.tensor([1., -2.]), p=False)",
    "r = torch.nn.functional.leaky_relu(torch.tensor([1., -2.]), True)",
    "r = torch.nn.functional.dropout(torch.tensor([1., -2.]), p=False, training=1)",
    # var_mean/std_mean: any correction; the mean as torch's Welford reduction gives it (NaN where a
    # slice holds an infinity that is not its last and only one)
    "r = torch.var_mean(torch.tensor([1., 2., 4.]), dim=0, correction=3)",
    "r = torch.std_mean(torch.tensor([[1., 2., 4.]]), dim=1, correction=-1)",
    "r = torch.var_mean(torch.tensor([1., 2., 4.], dtype=torch.float64), 0, correction=0, keepdim=True)",
    "r = torch.var_mean(torch.tensor([1., inf, 4.]))",
    "r = torch.var_mean(torch.tensor([1., 4., inf]))",
    "r = torch.var_mean(torch.tensor([1., 4., -inf]), 0)",
    "r = torch.var_mean(torch.tensor([inf, 1., 4.] * 30))",
    "r = torch.var_mean(torch.tensor([inf, -inf, 4.]))",
    "r = torch.var_mean(torch.tensor([nan, 1., inf]))",
    "r = torch.std_mean(torch.tensor([[1., inf], [3., 4.]]), dim=0)",
    "r = torch.std_mean(torch.tensor([[1., inf], [3., 4.]]), dim=1, keepdim=True)",
    "r = torch.std_mean(torch.tensor([[inf, 1.], [inf, 4.]]).t(), dim=(0,))",
    "r = torch.var_mean(torch.tensor([[[1., inf], [3., 4.]], [[1., 2.], [inf, 4.]]]), dim=(0, 2))",
    "r = torch.var_mean(torch.tensor([[[1., inf], [3., 4.]], [[1., 2.], [-inf, 4.]]], dtype=torch.float64), dim=(-1, 0), keepdim=True)",
    "r = torch.var_mean(torch.tensor(inf))",
    "r = torch.var_mean(torch.tensor([inf], dtype=torch.bfloat16))",
    "r = torch.var_mean(torch.empty(0, 3), 0)",
    # var/std of float16/bfloat16 in double from the unrounded values (torch's Welford in double):
    # no overflow of a rounded 16-bit mean's squares
    "r = torch.var(torch.tensor([3e38, 3e38, 3e38], dtype=torch.bfloat16))",
    "r = torch.std(torch.tensor([65504., -65504., 1.], dtype=torch.float16), 0)",
    "r = torch.std(torch.tensor([[1e38, -1e38, 2.5, 1e38], [3., 0.5, -0.5, 1.]], dtype=torch.bfloat16), dim=1)",
    "r = torch.var(torch.tensor([0.1, 0.2, 0.3, 0.4], dtype=torch.float16), unbiased=False)",
    "r = torch.std_mean(torch.tensor([[60000., -60000.], [1., 2.]], dtype=torch.float16), dim=1)",
    # trapezoid/trapz refuse bool samples
    "r = torch.trapezoid(torch.tensor([True, False]))",
    "r = torch.trapz(torch.tensor([1., 2.]), torch.tensor([True, False]))",
    "r = torch.trapz(torch.tensor([1, 2]), dx=True)",
    # linspace in float16/bfloat16: torch's kernel computes in the 16-bit type (step rounded, each
    # operation rounded), 16-lane vectors from their first value
    "r = torch.linspace(0, 1, 7, dtype=torch.float16)",
    "r = torch.linspace(0, 1, 7, dtype=torch.bfloat16)",
    "r = torch.linspace(-3, 7, 100, dtype=torch.float16)",
    "r = torch.linspace(-3, 7, 100, dtype=torch.bfloat16)",
    "r = torch.linspace(0.1, 1000.3, 2049, dtype=torch.float16)",
    "r = torch.linspace(0.1, 1000.3, 2049, dtype=torch.bfloat16)",
    "r = torch.linspace(5, -5, 33, dtype=torch.float16)",
    "r = torch.linspace(-65504, 65504, 5, dtype=torch.float16)",
    "r = torch.linspace(0, inf, 7, dtype=torch.float16)",
    "r = torch.linspace(2, 2, 40, dtype=torch.bfloat16)",
    "r = torch.linspace(-65504, 1000.3, 33, dtype=torch.float16)",  # an infinite step: lane 0 NaN (Half)
    "r = torch.linspace(-3.3e38, 3.3e38, 33, dtype=torch.bfloat16)",  # ... but base itself (BFloat16)
    # arange's length from int64 bounds subtracted as int64 (not as doubles)
    "r = torch.arange(9223372036854775800, 9223372036854775807)",
    "r = torch.arange(-9223372036854775807, -9223372036854775800, 2)",
    "r = torch.arange(9223372036854775806, 9223372036854775800, -1)",
    "r = torch.arange(0.5, 3, dtype=torch.int64)",
    "r = torch.arange(-2.5, 3, 1.5, dtype=torch.int64)",
    # div's gradient for the divisor in torch's order, -grad * ((self / other) / other): softsign of
    # huge values has a 0 gradient, not grad * self overflowing first
    ("x = torch.tensor([2.78125, 2.2e-308, -1.7976931348623157e+308, 1e308, -1e300, 1e-300], dtype=torch.float64, "
     "requires_grad=True); y = torch.nn.functional.softsign(x); (y * torch.arange(6, dtype=torch.float64)).sum().backward(); "
     "r = (y, x.grad)"),
    ("a = torch.tensor([1e308, -3., 2.], dtype=torch.float64, requires_grad=True); "
     "b = torch.tensor([1e308, 1e-300, 4.], dtype=torch.float64, requires_grad=True); "
     "(a / b).backward(torch.tensor([4., 1., 2.], dtype=torch.float64)); r = (a.grad, b.grad)"),
    # dist's other is a Tensor
    "r = torch.dist(torch.ones(2), 2)",
    "r = torch.dist(torch.tensor([0., inf]), torch.tensor([1., inf]))",
    # aminmax takes one dim (torch: TypeError for a tuple)
    "r = torch.aminmax(torch.tensor([1, 2]), dim=(0,))",
    "r = torch.tensor([[1, 2]]).aminmax(dim=[1])",
    "r = torch.aminmax(torch.tensor([[1., nan], [3., -0.0]]), dim=1, keepdim=True)",
]


@pytest.mark.parametrize("src", CASES)
def test_matches_torch(src):
    assert_same_outcome(src, kiln, torch_ref)
