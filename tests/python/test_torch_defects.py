"""Regression tests for the defects a differential run against torch found (issue 13): each
checks kiln against torch 1.13 itself, or against hand-computed values where kiln follows torch
2.x (nan clamp bounds)."""
import math

import numpy as np
import pytest
import torch

import kiln
import kiln.nn.functional as F


def both(expr):
    """expr(lib, F) on kiln and on torch: (kiln result, torch result)."""
    return expr(kiln, F), expr(torch, torch.nn.functional)


def same(k, t, tol=1e-6):
    assert str(k.dtype).split(".")[-1] == str(t.dtype).split(".")[-1], (k.dtype, t.dtype)
    assert tuple(k.shape) == tuple(t.shape)
    np.testing.assert_allclose(np.array(k.float().tolist() if k.dtype in (kiln.float16, kiln.bfloat16) else k.tolist(),
                                        dtype=np.float64),
                               np.array(t.float().tolist() if t.dtype in (torch.float16, torch.bfloat16) else t.tolist(),
                                        dtype=np.float64), rtol=tol, atol=tol, equal_nan=True)


def raises_like(expr):
    """kiln raises the exception class torch raises."""
    with pytest.raises(Exception) as t_info:
        expr(torch, torch.nn.functional)
    with pytest.raises(t_info.type):
        expr(kiln, F)


@pytest.mark.parametrize("expr", [
    lambda k, f: k.tensor(5).size(0), lambda k, f: k.tensor(5).size(-1), lambda k, f: k.tensor(5).stride(0),
    lambda k, f: k.tensor(0).roll(-2, 0), lambda k, f: k.tensor(False).roll((3,), (0,)),
    lambda k, f: k.index_select(k.arange(4.), 0, k.tensor([-1])),
    lambda k, f: f.embedding(k.tensor([-1]), k.ones(3, 2)),
    lambda k, f: k.arange(1, 0, -0.25, dtype=k.int64),
    lambda k, f: k.neg(k.tensor([1]), out=k.empty(1)),
    lambda k, f: k.abs(k.tensor([True])), lambda k, f: k.floor(k.tensor([True])),
    lambda k, f: k.relu(k.tensor([True])), lambda k, f: k.bitwise_not(k.tensor([1.0])),
    lambda k, f: k.floor(k.tensor([1.5]), out=k.empty(1, dtype=k.float64)),
    # Found by the differential test (second round):
    lambda k, f: k.clamp(k.ones(3), min=k.zeros(3), max=2.0),  # a number beside a tensor bound: TypeError
    lambda k, f: k.maximum(k.ones(3), 2),  # no Number for a Tensor parameter outside torch's list
    lambda k, f: k.sum(k.ones(3), out=k.empty(0)),  # sum(out=) has no overload without dim
    lambda k, f: k.mm(k.ones(2, 2), k.ones(2, 2), out=k.empty(0, dtype=k.float64)),
    lambda k, f: k.addmm(k.ones(2, 2), k.ones(2, 2), k.ones(2, 2), out=k.empty(0, dtype=k.float64)),
    lambda k, f: k.gather(k.ones(3), 0, k.tensor([3])),  # RuntimeError, not IndexError
    lambda k, f: k.amax(k.empty(0, 3)),
    lambda k, f: k.amax(k.empty(0, 3), 0, out=k.empty(0, dtype=k.float64)),  # dtype checked before the dims
    lambda k, f: k.isclose(k.tensor([1.]), k.ones(2, 1), equal_nan=True),
    lambda k, f: k.ones(3).masked_fill(k.tensor([True, False, True]), k.ones(2)),
    lambda k, f: k.addmm(k.tensor([True, False]), k.empty(2, 0, dtype=k.bool), k.empty(0, 2, dtype=k.bool)),
], ids=["size0", "size-1", "stride0", "roll", "roll_tuple", "index_select_neg", "embedding_neg", "arange_zero_step",
        "neg_out_cast", "abs_bool", "floor_bool", "relu_bool", "bitwise_not_float", "floor_out_cast",
        "clamp_mixed_bounds", "maximum_number", "sum_out_no_dim", "mm_out_double", "addmm_out_double",
        "gather_oob", "amax_empty_all", "amax_out_dtype_first", "isclose_grows_self", "masked_fill_1d_value", "addmm_bool_k0"])
def test_raises_as_torch(expr):
    raises_like(expr)


@pytest.mark.parametrize("expr", [
    lambda k, f: k.tensor(0).roll(1),
    lambda k, f: f.cosine_similarity(k.arange(12.).reshape(3, 4), k.tensor([[1., -2., 0.5, 3.]])),
    lambda k, f: f.cosine_similarity(k.arange(12.).reshape(3, 4), k.tensor(2.), dim=1),
    lambda k, f: k.logical_and(k.tensor([True, False]), k.tensor([[True], [False]])),
    lambda k, f: k.logical_or(k.tensor([1, 0]), k.tensor([[0], [2]]), out=k.empty(0)),
    lambda k, f: k.logical_xor(k.tensor([1., 0.]), k.tensor([1., 1.]), out=k.empty(5, dtype=k.int64)),
    lambda k, f: 2 ** k.tensor([-1, 2]),
    lambda k, f: k.tensor([2, 3, 1, -1]) ** k.tensor([-1, -1, -2, -3]),
    lambda k, f: k.clamp(k.tensor([1., 2.]), min=k.tensor([float("nan"), 0.])),
    lambda k, f: k.minimum(k.tensor([1.1], dtype=k.float16), k.tensor([1.1], dtype=k.bfloat16), out=k.empty(1)),
    lambda k, f: k.cumsum(k.tensor([1, 2]), 0, out=k.empty(2)),
    lambda k, f: k.cumprod(k.tensor([1, 2]), 0, out=k.empty(2, dtype=k.float64)),
    lambda k, f: k.exp(k.tensor([1, 2]), out=k.empty(2, dtype=k.float64)),
    lambda k, f: k.sign(k.tensor([True, False])),
    lambda k, f: f.hardtanh(k.tensor([3, -3, 0])),
    lambda k, f: k.addmm(k.full((2, 2), 3, dtype=k.int64), k.ones(2, 2, dtype=k.int64), k.ones(2, 2, dtype=k.int64),
                         beta=0.5, alpha=1.5),
    lambda k, f: k.arange(2.25, dtype=k.int64), lambda k, f: k.arange(-1.5, 2.5, 1.5, dtype=k.int32),
    lambda k, f: k.tensor([[1., 2.]]).expand(3, 2).ravel(),
    lambda k, f: k.tensor([[1., 2.]]).expand(3, 2).fill_(3.),
    lambda k, f: k.tensor([[1., 2.]]).expand(3, 2).zero_(),
    lambda k, f: f.cross_entropy(k.tensor([[1., 2., 3.], [1., 0., 0.]]), k.tensor([0, 1]), label_smoothing=0.1,
                                 ignore_index=0),
    lambda k, f: f.cross_entropy(k.tensor([[1., 2., 3.], [1., 0., 0.5]]), k.tensor([0, 2]),
                                 weight=k.tensor([1., 2., 3.]), label_smoothing=0.1, ignore_index=0),
    lambda k, f: k.lerp(k.tensor([0.1, -3.], dtype=k.float64), k.tensor([0.7, 5.], dtype=k.float64), 0.75),
    lambda k, f: k.lerp(k.tensor([0.1, -3.]), k.tensor([0.7, 5.]), k.tensor([0.25, 0.9])),
    lambda k, f: k.remainder(k.tensor([5., -3.]), 2.5), lambda k, f: k.eq(k.tensor([1, 2]), 2, out=k.empty(2)),
    lambda k, f: k.where(k.tensor([True, False]), k.tensor([1., 2.]), 0.5),
    lambda k, f: k.clamp(k.tensor([-1., 0.5, 3.]), k.zeros(3), k.ones(3), out=k.empty(3, dtype=k.float64)),
    lambda k, f: k.tensor([[True, False], [False, False]]).sum(dtype=k.bool),
    lambda k, f: k.tensor([[True, False], [True, True]]).sum(1, dtype=k.bool),
    lambda k, f: k.tensor([0.5, 2., 0.]).prod(dtype=k.bool), lambda k, f: k.tensor([[1, 2], [0, 3]]).prod(1, dtype=k.bool),
    lambda k, f: k.addmm(k.empty(0, 2, dtype=k.bool), k.empty(0, 3, dtype=k.bool), k.ones(3, 2, dtype=k.bool)),
    lambda k, f: k.mm(k.empty(4, 0), k.empty(0, 1, dtype=k.float16)),
    lambda k, f: k.ones(3).isclose(k.ones(2, 3), equal_nan=False),
    lambda k, f: k.tensor([1, 2]).isclose(k.ones(2, 2, dtype=k.int64), equal_nan=True),
    lambda k, f: f.log_softmax(k.empty(4, 0, dtype=k.int32), 0), lambda k, f: k.empty(0).tril_(),
    lambda k, f: k.empty(0, dtype=k.int64).floor_divide(0),
    lambda k, f: k.tensor([[1., 2.]]).expand(3, 2).masked_fill_(k.tensor([[True, False]]), 7.),
    lambda k, f: k.tensor([[1., 2.]]).expand(3, 2).masked_fill_(k.tensor([False, True]), k.tensor(-1.)),
    lambda k, f: k.tensor(-0.5).expand(2).index_put_((k.tensor([1, 0]),), k.tensor(0.25), accumulate=True),
    lambda k, f: k.exp(k.tensor([-3.4375, 0.15625], dtype=k.bfloat16), out=k.empty(2, dtype=k.float64)),
    lambda k, f: k.atan2(k.tensor(False), k.tensor([-3.59375, 2.84375], dtype=k.bfloat16), out=k.empty(2)),
], ids=["roll_0dim_flat", "cosine_broadcast", "cosine_0dim", "logical_broadcast", "logical_or_out_int",
        "logical_xor_out_resize", "rpow_int", "pow_int_negative", "clamp_tensor_nan", "minimum_out_f32",
        "cumsum_out_float", "cumprod_out_double", "exp_out_double", "sign_bool", "hardtanh_int", "addmm_int_beta",
        "arange_int_end", "arange_int_bounds", "ravel_expanded", "fill_expanded", "zero_expanded", "ce_smoothing_ignore",
        "ce_smoothing_weight_ignore", "lerp_scalar_high", "lerp_tensor", "remainder_number", "eq_number_out",
        "where_number", "clamp_tensor_out", "sum_bool", "sum_dim_bool", "prod_bool", "prod_dim_bool",
        "addmm_bool_empty", "mm_mixed_empty", "isclose_broadcast", "isclose_int_equal_nan", "log_softmax_empty_int",
        "tril_empty_1d", "floor_divide_empty_by_0", "masked_fill_expanded", "masked_fill_tensor_expanded",
        "index_put_expanded_accumulate", "exp_bf16_out_rounds", "atan2_bf16_out_rounds"])
def test_values_as_torch(expr):
    k, t = both(expr)
    same(k, t)


def test_ravel_of_expanded_is_a_contiguous_copy():
    a = kiln.tensor([[1., 2.]]).expand(3, 2)
    r = a.ravel()
    assert r.is_contiguous() and r.data_ptr() != a.data_ptr() and r.tolist() == [1., 2.] * 3


def test_fill_of_expanded_writes_the_shared_memory():
    base = kiln.tensor([[1., 2.]])
    base.expand(3, 2).fill_(7.)
    assert base.tolist() == [[7., 7.]]


def test_clamp_with_nan_scalar_bound():
    # torch (1.13 and 2.x, TensorCompare.cpp's clamp_out): two bounds with a NaN fill NaN; one NaN
    # bound alone goes to the one-bound loop, std::max(a, nan) == a, so the input comes back;
    # clamp_min/clamp_max themselves fill NaN (test_differential_fixes2.py compares with torch).
    nan = float("nan")
    assert all(math.isnan(v) for v in kiln.clamp(kiln.tensor([1., 2.]), min=nan, max=1.).tolist())
    assert all(math.isnan(v) for v in kiln.clip(kiln.tensor([1., 2.]), min=0., max=nan).tolist())
    assert kiln.clamp(kiln.tensor([1., 2.]), min=nan).tolist() == [1., 2.]
    assert kiln.clip(kiln.tensor([1., 2.]), max=nan).tolist() == [1., 2.]
    assert all(math.isnan(v) for v in kiln.clamp_min(kiln.tensor([1., 2.]), nan).tolist())
    assert kiln.clamp(kiln.tensor([1., nan]), 0., 1.5).tolist()[0] == 1.0


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_reduced_precision_composites_round_once(dtype):
    # Each result is the float32 computation rounded once (hand reference: float32 math, one cast).
    x = kiln.linspace(-4, 4, 257).to(getattr(kiln, dtype))
    x32 = x.float()
    with kiln.backends.mkldnn.flags(enabled=False):  # float32's formula (not oneDNN's gelu, float32 only)
        gelu32 = F.gelu(x32)
    for got, ref in [(F.gelu(x), gelu32), (F.gelu(x, approximate="tanh"), F.gelu(x32, approximate="tanh")),
                     (F.silu(x), F.silu(x32)), (F.softplus(x), F.softplus(x32)),
                     (kiln.lerp(x, x.flip(0), 0.3), kiln.lerp(x32, x32.flip(0), 0.3))]:
        assert got.dtype == x.dtype
        assert got.tolist() == ref.to(x.dtype).tolist()


def grads(expr, lib, *values, dtype="float64"):
    xs = [lib.tensor(v, dtype=getattr(lib, dtype), requires_grad=True) for v in values]
    expr(lib, *xs).backward()
    return [np.array(x.grad.tolist()) for x in xs]


@pytest.mark.parametrize("expr,values", [
    (lambda k, x: x.std(), ([2., 2., 2.],)),
    (lambda k, x: x.std(dim=0).sum(), ([[1., 2.], [1., 3.]],)),
    (lambda k, x: k.norm(x, 0.5), ([0., 1., -2.],)),
    (lambda k, x: k.norm(x, -1.5), ([0., 1., -2.],)),
    (lambda k, x: k.norm(x, 1.5), ([0., 1., -2.],)),
    (lambda k, x, t: k.nn.functional.binary_cross_entropy(x, t), ([0.2, 1., 0.5, 0.], [1., 0., 0.3, 0.])),
    (lambda k, x, t: k.nn.functional.binary_cross_entropy(x, t, reduction="sum"), ([0.2, 0.9], [1., 0.])),
    (lambda k, x, t: k.nn.functional.binary_cross_entropy_with_logits(x, t), ([math.inf, -math.inf, 2.], [0.3, 0.6, 1.])),
    (lambda k, x, t: k.nn.functional.binary_cross_entropy_with_logits(
        x, t, pos_weight=k.tensor([2., 1., 3.], dtype=k.float64)), ([1.5, -2., 0.], [0.3, 0.6, 1.])),
    (lambda k, x: k.relu(x).sum(), ([float("nan"), -1., 0., 2.],)),
    (lambda k, x: k.nn.functional.hardtanh(x).sum(), ([-1., 0., 1., 2., float("nan"), -3.],)),
    (lambda k, x: (0 ** x).sum(), ([0.5, 0., -1.25, 2.],)),
    (lambda k, x, e: (x ** e).sum(), ([0., 1., 0., 2.], [0., 2., 3., 0.])),
    (lambda k, x, v: x.masked_fill(x > 0, v).sum(), ([1., -2., 3.], 5.)),
    (lambda k, x: k.einsum("ii->i", x).sum(), ([[1., 2.], [3., 4.]],)),
], ids=["std_constant", "std_dim_constant", "norm_half_at_0", "norm_negative_p_at_0", "norm_1.5_at_0", "bce_at_0_1",
        "bce_sum_target", "bce_logits_inf", "bce_logits_pos_weight_target", "relu_nan", "hardtanh_bounds_nan",
        "pow_zero_base", "pow_zero_exponent", "masked_fill_value", "einsum_diagonal"])
def test_gradients_as_torch(expr, values):
    for k, t in zip(grads(expr, kiln, *values), grads(expr, torch, *values)):
        np.testing.assert_allclose(k, t, rtol=1e-9, atol=1e-9)


def test_bce_double_backward_matches_finite_differences():
    x = kiln.tensor([0.2, 0.7, 0.4], dtype=kiln.float64, requires_grad=True)
    t = kiln.tensor([1., 0., 0.5], dtype=kiln.float64)
    assert kiln.autograd.gradgradcheck(lambda p: F.binary_cross_entropy(p, t), (x,))
    z = kiln.tensor([0.3, -1.2, 2.0], dtype=kiln.float64, requires_grad=True)
    assert kiln.autograd.gradgradcheck(lambda v: F.binary_cross_entropy_with_logits(v, t), (z,))


@pytest.mark.parametrize("shapes", [((2, 1), (3,)), ((), (4, 1), (1, 5)), ((0, 1), (3,)), (3, (2, 1)), ((2,), (3,))])
def test_broadcast_shapes_as_torch(shapes):
    try:
        expected = tuple(torch.broadcast_shapes(*shapes))
    except RuntimeError:
        with pytest.raises(RuntimeError):
            kiln.broadcast_shapes(*shapes)
        return
    assert tuple(kiln.broadcast_shapes(*shapes)) == expected


def test_einsum_diagonal_is_a_view_as_in_torch():
    a = kiln.arange(9.).reshape(3, 3)
    d = kiln.einsum("ii->i", a)
    assert d.data_ptr() == a.data_ptr() and d.tolist() == [0., 4., 8.]
    t = torch.arange(9.).reshape(3, 3)
    assert torch.einsum("ii->i", t).data_ptr() == t.data_ptr()


def test_inplace_op_on_itself_raises_in_backward_as_torch():
    # x.mul_(x) saves x, which the op then modifies: torch's backward refuses, and so does kiln's.
    for lib in (torch, kiln):
        x = lib.tensor([1., 2.], requires_grad=True) * 1
        x.mul_(x)
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            x.sum().backward()
