"""Derivatives of every differentiable op in schema/derivatives.yaml.

Each op is checked three ways:
  * gradcheck: autograd's Jacobian against central finite differences (float64);
  * gradgradcheck: the same for the first derivative built with create_graph=True,
    i.e. the backward formulas are differentiable themselves;
  * for a selection of ops, gradients against values computed by hand with NumPy.
"""
import numpy as np
import pytest

import kiln
from kiln.autograd import gradcheck, gradgradcheck

F64 = kiln.float64
TOL = dict(eps=1e-6, atol=1e-5, rtol=1e-3)


def rand(*shape, lo=-1.0, hi=1.0, seed=0, requires_grad=True):
    """A float64 tensor with values uniform in [lo, hi) (deterministic per shape/seed)."""
    rng = np.random.default_rng(seed + 7919 * len(shape) + sum(shape))
    return kiln.tensor(rng.uniform(lo, hi, shape), dtype=F64, requires_grad=requires_grad)


def pos(*shape, seed=0):
    """Positive values, away from zero (for div denominators and fractional powers)."""
    return rand(*shape, lo=0.5, hi=2.0, seed=seed)


def _inplace(method, *args, **kwargs):
    """fn(a, *rest) -> a.clone().<method>_(*rest, ...): the in-place form on a non-leaf."""
    def fn(a, *rest):
        out = a.clone()
        return getattr(out, method)(*rest, *args, **kwargs)
    return fn


def _copy_into_clone(dst, src):
    out = dst.clone()
    out.copy_(src)
    return out


def _index_put_into_clone(a, v):
    out = a.clone()
    out[[1, 3]] = v
    return out


def _fill_then_mul(a):
    out = a.clone()
    out.fill_(2.5)
    return out * a


# (id, function, input factory). Every op of derivatives.yaml appears at least once,
# including broadcasting inputs for the binary ops.
CASES = [
    # add.Tensor
    ("add", lambda a, b: kiln.add(a, b), lambda: (rand(2, 3), rand(2, 3, seed=1))),
    ("add_alpha", lambda a, b: kiln.add(a, b, alpha=2.5), lambda: (rand(2, 3), rand(2, 3, seed=1))),
    ("add_broadcast_alpha", lambda a, b: kiln.add(a, b, alpha=-1.5), lambda: (rand(2, 1, 3), rand(4, 1, seed=1))),
    ("add_operator_broadcast", lambda a, b: a + b, lambda: (rand(3), rand(2, 3, seed=1))),
    ("add_0d", lambda a, b: a + b, lambda: (rand(2, 3), rand(seed=1))),
    ("add_scalar_alpha", lambda a: kiln.add(a, 2.0, 3.0), lambda: (rand(3),)),
    ("radd_scalar", lambda a: 2.0 + a, lambda: (rand(3),)),
    ("add_same_input", lambda a: a + a, lambda: (rand(2, 2),)),
    # sub.Tensor
    ("sub", lambda a, b: kiln.sub(a, b), lambda: (rand(2, 3), rand(2, 3, seed=1))),
    ("sub_alpha", lambda a, b: kiln.sub(a, b, alpha=2.5), lambda: (rand(2, 3), rand(2, 3, seed=1))),
    ("sub_method_alpha", lambda a, b: a.sub(b, alpha=-0.5), lambda: (rand(4), rand(4, seed=1))),
    ("sub_broadcast_alpha", lambda a, b: kiln.sub(a, b, alpha=3.0), lambda: (rand(2, 1, 3), rand(4, 1, seed=1))),
    ("sub_scalar_alpha", lambda a: kiln.sub(a, 2.0, 3.0), lambda: (rand(3),)),
    ("rsub_scalar", lambda a: 2.0 - a, lambda: (rand(3),)),
    # mul.Tensor
    ("mul", lambda a, b: kiln.mul(a, b), lambda: (rand(2, 3), rand(2, 3, seed=1))),
    ("mul_broadcast", lambda a, b: a * b, lambda: (rand(2, 1, 3), rand(4, 1, seed=1))),
    ("mul_0d", lambda a, b: a * b, lambda: (rand(2, 3), rand(seed=1))),
    ("mul_scalar", lambda a: a * 4.0, lambda: (rand(3),)),
    ("mul_self", lambda a: a * a, lambda: (rand(3),)),
    # div.Tensor
    ("div", lambda a, b: kiln.div(a, b), lambda: (rand(2, 3), pos(2, 3, seed=1))),
    ("div_broadcast", lambda a, b: a / b, lambda: (rand(2, 3), pos(3, seed=1))),
    ("div_broadcast_numerator", lambda a, b: a / b, lambda: (rand(3, 1), pos(3, 4, seed=1))),
    ("div_scalar", lambda a: a / 4.0, lambda: (rand(3),)),
    ("rdiv_scalar", lambda b: 2.0 / b, lambda: (pos(3),)),
    # neg, exp, tanh
    ("neg", lambda a: kiln.neg(a), lambda: (rand(2, 3),)),
    ("neg_operator", lambda a: -a, lambda: (rand(2, 3),)),
    ("exp", lambda a: kiln.exp(a), lambda: (rand(2, 3),)),
    ("exp_method", lambda a: a.exp(), lambda: (rand(4),)),
    ("tanh", lambda a: kiln.tanh(a), lambda: (rand(2, 3, lo=-2, hi=2),)),
    ("tanh_method", lambda a: a.tanh(), lambda: (rand(4),)),
    ("sigmoid", lambda a: kiln.sigmoid(a), lambda: (rand(2, 3, lo=-3, hi=3),)),
    # abs / sign / relu: values kept away from the kink at 0
    ("abs", lambda a: kiln.abs(a * 1.0 + 0.05), lambda: (rand(2, 3),)),
    ("abs_method_neg", lambda a: (-a).abs(), lambda: (pos(3),)),
    ("sign", lambda a: kiln.sign(a + 0.05) * a, lambda: (rand(4),)),
    ("relu", lambda a: kiln.relu(a + 0.05), lambda: (rand(2, 3),)),
    ("relu_method_inplace", _inplace("relu_"), lambda: (rand(5, lo=0.1, hi=1) * kiln.tensor([1., -1., 1., -1., 1.], dtype=F64),)),
    ("log", lambda a: kiln.log(a), lambda: (pos(2, 3),)),
    ("log_method", lambda a: a.log(), lambda: (pos(4),)),
    ("sqrt", lambda a: kiln.sqrt(a), lambda: (pos(2, 3),)),
    ("sqrt_inplace", _inplace("sqrt_"), lambda: (pos(3),)),
    ("sigmoid_method", lambda a: a.sigmoid(), lambda: (rand(4),)),
    # pow.Tensor_Scalar
    ("pow_0", lambda a: a.pow(0), lambda: (rand(3),)),
    ("pow_0_float", lambda a: kiln.pow(a, 0.0), lambda: (rand(3),)),
    ("pow_0.5", lambda a: a.pow(0.5), lambda: (pos(3),)),
    ("pow_1", lambda a: a.pow(1), lambda: (rand(3),)),
    ("pow_1.5", lambda a: a ** 1.5, lambda: (pos(3),)),
    ("pow_2", lambda a: a ** 2, lambda: (rand(2, 3),)),
    ("pow_3", lambda a: kiln.pow(a, 3), lambda: (rand(2, 3),)),
    ("pow_-1", lambda a: a ** -1, lambda: (pos(3),)),
    ("pow_-2.5", lambda a: a.pow(-2.5), lambda: (pos(3),)),
    # sum (all, dims, keepdim)
    ("sum_all", lambda a: a.sum(), lambda: (rand(2, 3, 2),)),
    ("sum_function", lambda a: kiln.sum(a), lambda: (rand(2, 3),)),
    ("sum_dim0", lambda a: a.sum(0), lambda: (rand(2, 3),)),
    ("sum_dim_neg_keepdim", lambda a: a.sum(-1, keepdim=True), lambda: (rand(2, 3, 2),)),
    ("sum_dims", lambda a: a.sum([0, 2]), lambda: (rand(2, 3, 2),)),
    ("sum_dims_keepdim", lambda a: kiln.sum(a, [0, 2], keepdim=True), lambda: (rand(2, 3, 2),)),
    ("sum_1d", lambda a: a.sum(0), lambda: (rand(5),)),
    # mean
    ("mean_all", lambda a: a.mean(), lambda: (rand(2, 3, 2),)),
    ("mean_function", lambda a: kiln.mean(a), lambda: (rand(4),)),
    ("mean_dim", lambda a: a.mean(1), lambda: (rand(2, 3),)),
    ("mean_dims_keepdim", lambda a: a.mean([0, 2], keepdim=True), lambda: (rand(2, 3, 2),)),
    ("mean_dim_neg", lambda a: kiln.mean(a, -1), lambda: (rand(2, 3, 2),)),
    # view
    ("view", lambda a: a.view(3, 2), lambda: (rand(2, 3),)),
    ("view_list", lambda a: a.view([6]), lambda: (rand(2, 3),)),
    ("view_infer", lambda a: a.view(-1, 2), lambda: (rand(2, 3, 2),)),
    ("view_of_transposed_contiguous", lambda a: a.transpose(0, 1).contiguous().view(-1), lambda: (rand(2, 3),)),
    # unsqueeze / squeeze
    ("unsqueeze", lambda a: kiln.unsqueeze(a, 1) * 1.0, lambda: (rand(2, 3),)),
    ("unsqueeze_end", lambda a: a.unsqueeze(-1).transpose(0, 2), lambda: (rand(2, 3),)),
    ("squeeze_size1", lambda a: kiln.squeeze(a, 1), lambda: (rand(2, 1, 3),)),
    ("squeeze_not_size1", lambda a: a.squeeze(0), lambda: (rand(2, 3),)),
    # pow with tensor exponents, maximum/minimum, clamp, reciprocal, floor_divide, remainder
    ("pow_tensor_tensor", lambda a, b: kiln.pow(a, b), lambda: (pos(2, 3), rand(2, 3, seed=1))),
    ("pow_scalar_base", lambda b: 2.0 ** b, lambda: (rand(4),)),
    ("maximum", lambda a, b: kiln.maximum(a, b), lambda: (rand(2, 3), rand(3, seed=1))),
    ("minimum", lambda a, b: a.minimum(b), lambda: (rand(2, 3), rand(2, 3, seed=2))),
    ("clamp", lambda a: kiln.clamp(a, -0.5, 0.6), lambda: (rand(3, 4),)),
    ("clamp_min_only", lambda a: a.clamp(min=0.1), lambda: (rand(5),)),
    ("reciprocal", lambda a: kiln.reciprocal(a), lambda: (pos(2, 3),)),
    ("floor_divide", lambda a, b: kiln.floor_divide(a * 3.1, b) + a, lambda: (pos(4), pos(4, seed=1))),
    ("remainder", lambda a, b: kiln.remainder(a * 3.0, b), lambda: (pos(4), pos(4, seed=3))),
    # amax / amin (distinct values: ties are covered in test_ops_misc.py)
    ("amax", lambda a: kiln.amax(a, 1), lambda: (rand(3, 4),)),
    ("amin_keepdim", lambda a: a.amin((0, 1), True), lambda: (rand(2, 3, 2),)),
    ("squeeze_all", lambda a: a.squeeze() * 1.0, lambda: (rand(1, 3, 1),)),
    # permute / T
    ("permute", lambda a: kiln.permute(a, [2, 0, 1]) * 1.0, lambda: (rand(2, 3, 4),)),
    ("permute_T_method", lambda a: a.T.permute(1, 0, 2), lambda: (rand(2, 3, 4),)),
    # transpose
    ("transpose", lambda a: a.transpose(0, 1), lambda: (rand(2, 3),)),
    ("transpose_3d", lambda a: kiln.transpose(a, 0, 2), lambda: (rand(2, 3, 4),)),
    ("transpose_neg", lambda a: a.transpose(-1, -2) * 1.0, lambda: (rand(2, 3, 2),)),
    # expand
    ("expand", lambda a: a.expand(3, 4), lambda: (rand(3, 1),)),
    ("expand_new_dims", lambda a: a.expand(2, 3, 4), lambda: (rand(3, 1),)),
    ("expand_list_minus1", lambda a: a.expand([-1, 4]), lambda: (rand(3, 1),)),
    ("expand_0d", lambda a: a.expand(2, 3), lambda: (rand(),)),
    # select
    ("select", lambda a: a.select(0, 1), lambda: (rand(3, 4),)),
    ("select_neg", lambda a: kiln.select(a, 1, -1), lambda: (rand(3, 4),)),
    ("select_3d", lambda a: a.select(2, 0), lambda: (rand(2, 3, 2),)),
    # slice
    ("slice", lambda a: a.slice(0, 1, 3), lambda: (rand(4, 2),)),
    ("slice_step", lambda a: kiln.slice(a, 1, 1, None, 2), lambda: (rand(2, 5),)),
    ("slice_open_start", lambda a: a.slice(1, None, 2), lambda: (rand(2, 5),)),
    ("indexing_basic", lambda a: a[1:, ::2][..., None], lambda: (rand(3, 4),)),
    ("indexing_int", lambda a: a[1, 1:], lambda: (rand(3, 4),)),
    # select_backward / slice_backward as ops of their own
    ("select_backward", lambda g: kiln.select_backward(g, [2, 3], 1, 2), lambda: (rand(2),)),
    ("slice_backward", lambda g: kiln.slice_backward(g, [2, 5], 1, 1, 5, 2), lambda: (rand(2, 2),)),
    # clone / contiguous
    ("clone", lambda a: kiln.clone(a), lambda: (rand(2, 3),)),
    ("clone_method", lambda a: a.transpose(0, 1).clone(), lambda: (rand(2, 3),)),
    ("contiguous", lambda a: a.transpose(0, 1).contiguous(), lambda: (rand(2, 3),)),
    # copy_
    ("copy_", _copy_into_clone, lambda: (rand(2, 3), rand(2, 3, seed=1))),
    ("copy_broadcast_src", _copy_into_clone, lambda: (rand(2, 3), rand(3, seed=1))),
    ("copy_src_only", _copy_into_clone, lambda: (rand(2, 3, requires_grad=False), rand(2, 3, seed=1))),
    # _to_copy / to(dtype)
    ("_to_copy", lambda a: kiln._C._to_copy(a, dtype=F64), lambda: (rand(2, 3),)),
    ("to_copy_true", lambda a: a.to(F64, copy=True), lambda: (rand(2, 3),)),
    ("to_dtype_method", lambda a: a.to(dtype=F64, copy=True) * a, lambda: (rand(3),)),
    # fill_
    ("fill_", _fill_then_mul, lambda: (rand(3),)),
    # in-place forms reuse the functional formulas
    ("add_inplace", _inplace("add_", alpha=2.0), lambda: (rand(3), rand(3, seed=1))),
    ("sub_inplace", _inplace("sub_", alpha=2.0), lambda: (rand(3), rand(3, seed=1))),
    ("mul_inplace", _inplace("mul_"), lambda: (rand(3), rand(3, seed=1))),
    ("mul_inplace_broadcast", _inplace("mul_"), lambda: (rand(2, 3), rand(3, seed=1))),
    ("div_inplace", _inplace("div_"), lambda: (rand(3), pos(3, seed=1))),
    ("neg_inplace", _inplace("neg_"), lambda: (rand(3),)),
    ("exp_inplace", _inplace("exp_"), lambda: (rand(3),)),
    ("tanh_inplace", _inplace("tanh_"), lambda: (rand(3),)),
    ("sigmoid_inplace", _inplace("sigmoid_"), lambda: (rand(3),)),
    ("pow_inplace_3", _inplace("pow_", 3), lambda: (rand(3),)),
    ("pow_inplace_0.5", _inplace("pow_", 0.5), lambda: (pos(3),)),
    # mm
    ("mm", lambda a, b: kiln.mm(a, b), lambda: (rand(2, 3), rand(3, 4, seed=1))),
    ("mm_method", lambda a, b: a.mm(b), lambda: (rand(3, 3), rand(3, 2, seed=1))),
    ("mm_transposed_inputs", lambda a, b: a.transpose(0, 1) @ b.transpose(0, 1), lambda: (rand(3, 2), rand(4, 3, seed=1))),
    ("mm_vector_like", lambda a, b: a @ b, lambda: (rand(1, 3), rand(3, 1, seed=1))),
    # bmm and batched/broadcast matmul
    ("bmm", lambda a, b: kiln.bmm(a, b), lambda: (rand(2, 2, 3), rand(2, 3, 4, seed=1))),
    ("matmul_broadcast_batch", lambda a, b: a @ b, lambda: (rand(2, 1, 2, 3), rand(3, 3, 2, seed=1))),
    ("matmul_vector_batch", lambda a, b: a @ b, lambda: (rand(3), rand(2, 3, 2, seed=1))),
    # max.dim / min.dim (values; indices are not differentiable)
    ("max_dim", lambda a: kiln.max(a, 1).values, lambda: (rand(3, 4),)),
    ("max_dim_keepdim_method", lambda a: a.max(dim=0, keepdim=True)[0], lambda: (rand(3, 4),)),
    ("min_dim", lambda a: kiln.min(a, -1).values, lambda: (rand(2, 3),)),
    # prod (lines with one zero keep exact first and second derivatives)
    ("prod_dim", lambda a: kiln.prod(a, 1), lambda: (rand(3, 4),)),
    ("prod_all", lambda a: a.prod(), lambda: (rand(2, 3),)),
    ("prod_one_zero", lambda a: kiln.prod(a * kiln.tensor([[1.0, 0.0, 1.0]], dtype=F64) + 0.0, 1),
     lambda: (rand(2, 3),)),
    # cat / stack (Tensor[] inputs)
    ("cat", lambda a, b: kiln.cat([a, b], 1), lambda: (rand(2, 3), rand(2, 2, seed=1))),
    ("cat_three_dim0", lambda a, b, c: kiln.cat([a, b, c]), lambda: (rand(1, 2), rand(2, 2, seed=1), rand(1, 2, seed=2))),
    ("stack", lambda a, b: kiln.stack([a, b], -1), lambda: (rand(2, 3), rand(2, 3, seed=1))),
    # index / index_put (advanced indexing)
    ("index", lambda a: a[[0, 2, 2], 1:], lambda: (rand(3, 4),)),
    ("index_mask", lambda a: a[kiln.tensor([True, False, True])], lambda: (rand(3, 2),)),
    ("index_put", lambda a, v: kiln.index_put(a, (kiln.tensor([0, 2]),), v), lambda: (rand(3, 2), rand(2, seed=1))),
    ("index_put_accumulate", lambda a, v: a.index_put((kiln.tensor([0, 0, 1]),), v, accumulate=True),
     lambda: (rand(3), rand(3, seed=1))),
    ("index_put_inplace", lambda a, v: _index_put_into_clone(a, v), lambda: (rand(4, 2), rand(2, seed=1))),
    ("rsqrt", lambda a: kiln.rsqrt(a), lambda: (pos(3),)),
    ("rsqrt_inplace", _inplace("rsqrt_"), lambda: (pos(2, 2),)),
    # rounding ops: zero gradient
    ("floor", lambda a: kiln.floor(a) + a, lambda: (rand(3),)),
    ("ceil", lambda a: a.ceil() * 2 + a, lambda: (rand(3),)),
    ("trunc", lambda a: a.trunc() + a, lambda: (rand(3),)),
    ("round", lambda a: kiln.round(a) + a, lambda: (rand(3),)),
    # as_strided
    ("as_strided", lambda a: kiln.as_strided(a, [2, 2], [1, 1], 1), lambda: (rand(5),)),
    # compositions
    ("nll_loss_backward_direct",
     lambda g, x: kiln.nll_loss_backward(g, x, kiln.tensor([2, 0, 1]), None, 0, -100) * x,
     lambda: (rand(3), rand(3, 4, seed=1))),
    ("composite_chain", lambda a, b: (a * b).tanh().exp().sum(1) / 3.0, lambda: (rand(2, 3), rand(3, seed=1))),
    ("composite_mlp", lambda x, w: (x @ w).tanh().mean(), lambda: (rand(4, 3), rand(3, 2, seed=1))),
]


@pytest.mark.parametrize("fn,make", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_gradcheck(fn, make):
    assert gradcheck(fn, make(), **TOL)


@pytest.mark.parametrize("fn,make", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_gradgradcheck(fn, make):
    assert gradgradcheck(fn, make(), **TOL)


COMPARISONS = ["eq", "ne", "lt", "le", "gt", "ge"]


@pytest.mark.parametrize("name", COMPARISONS)
def test_comparisons_are_not_differentiable(name):
    a = rand(3)
    b = rand(3, seed=1)
    out = getattr(kiln, name)(a, b)
    assert out.dtype == kiln.bool and not out.requires_grad and out.grad_fn is None
    with pytest.raises(RuntimeError, match="does not require grad"):
        out.sum().backward()


# ---------------------------------------------------------------- a failing gradcheck is detected

def test_gradcheck_detects_a_wrong_derivative():
    """gradcheck itself must be able to fail: a function whose 'gradient' is cut by detach()."""
    x = rand(3)
    # f(x) = x * x, but one factor is detached: autograd gives x, finite differences give 2x.
    assert gradcheck(lambda a: a * a.detach(), (x,), raise_exception=False, **TOL) is False
    with pytest.raises(RuntimeError, match="Jacobian mismatch"):
        gradcheck(lambda a: a * a.detach(), (x,), **TOL)


# ---------------------------------------------------------------- hand-computed gradients

def _np(t):
    return t.detach().numpy().copy()


def test_hand_mul_add_broadcast():
    a, b = rand(2, 3), rand(3, seed=1)
    an, bn = _np(a), _np(b)
    out = (a * b + b).sum()
    out.backward()
    np.testing.assert_allclose(out.item(), (an * bn + bn).sum(), rtol=1e-12)
    np.testing.assert_allclose(a.grad.numpy(), np.broadcast_to(bn, (2, 3)), rtol=1e-12)
    np.testing.assert_allclose(b.grad.numpy(), an.sum(0) + 2.0, rtol=1e-12)


def test_hand_sub_alpha():
    a, b = rand(3), rand(3, seed=1)
    kiln.sub(a, b, alpha=2.5).sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), np.ones(3))
    np.testing.assert_allclose(b.grad.numpy(), np.full(3, -2.5))


def test_hand_add_alpha_broadcast():
    a, b = rand(2, 3), rand(2, 1, seed=1)
    kiln.add(a, b, alpha=-4.0).sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), np.ones((2, 3)))
    np.testing.assert_allclose(b.grad.numpy(), np.full((2, 1), -12.0))


def test_hand_div():
    a, b = rand(3), pos(3, seed=1)
    an, bn = _np(a), _np(b)
    (a / b).sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), 1.0 / bn, rtol=1e-12)
    np.testing.assert_allclose(b.grad.numpy(), -an / bn ** 2, rtol=1e-12)


def test_hand_sigmoid():
    xn = np.array([-3.0, -0.5, 0.0, 0.5, 4.0])
    x = kiln.tensor(xn, dtype=F64, requires_grad=True)
    y = x.sigmoid()
    s = 1.0 / (1.0 + np.exp(-xn))
    np.testing.assert_allclose(_np(y), s, rtol=1e-12)
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), s * (1 - s), rtol=1e-12)
    x.grad = None
    (g,) = kiln.autograd.grad(x.sigmoid().sum(), x, create_graph=True)
    (gg,) = kiln.autograd.grad(g.sum(), x)
    np.testing.assert_allclose(gg.numpy(), s * (1 - s) * (1 - 2 * s), rtol=1e-10)


def test_hand_exp_tanh_neg():
    x = kiln.tensor([-1.0, 0.0, 0.5, 2.0], dtype=F64, requires_grad=True)
    xn = np.array([-1.0, 0.0, 0.5, 2.0])
    (x.exp() + x.tanh() - x).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.exp(xn) + 1 - np.tanh(xn) ** 2 - 1, rtol=1e-12)


@pytest.mark.parametrize("p", [0, 0.5, 1, 2, 3, -1, 2.5])
def test_hand_pow(p):
    xn = np.array([0.25, 1.0, 1.5, 3.0])
    x = kiln.tensor(xn, dtype=F64, requires_grad=True)
    y = x ** p
    np.testing.assert_allclose(_np(y), xn ** p, rtol=1e-12)
    y.sum().backward()
    expected = np.zeros_like(xn) if p == 0 else p * xn ** (p - 1)
    np.testing.assert_allclose(x.grad.numpy(), expected, rtol=1e-12)


def test_hand_pow_0_at_zero_and_negative():
    # d/dx x**0 is 0 everywhere (PyTorch: zeros, also at x = 0).
    x = kiln.tensor([0.0, -2.0, 3.0], dtype=F64, requires_grad=True)
    x.pow(0).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), np.zeros(3))


def test_hand_pow_2_negative_inputs():
    x = kiln.tensor([-3.0, -0.5, 0.0], dtype=F64, requires_grad=True)
    (x ** 2).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [-6.0, -1.0, 0.0])


def test_hand_sum_mean_dims():
    x = rand(2, 3, 4)
    g = kiln.tensor(np.arange(3.0).reshape(1, 3, 1), dtype=F64)
    x.sum([0, 2], keepdim=True).backward(g)
    np.testing.assert_allclose(x.grad.numpy(), np.broadcast_to(np.arange(3.0).reshape(1, 3, 1), (2, 3, 4)))
    x.grad = None
    x.mean(1).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.full((2, 3, 4), 1.0 / 3))
    x.grad = None
    x.mean().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.full((2, 3, 4), 1.0 / 24))


def test_hand_mm():
    a, b = rand(2, 3), rand(3, 4, seed=1)
    an, bn = _np(a), _np(b)
    gn = np.arange(8.0).reshape(2, 4)
    out = a.mm(b)
    np.testing.assert_allclose(_np(out), an @ bn, rtol=1e-12)
    out.backward(kiln.tensor(gn, dtype=F64))
    np.testing.assert_allclose(a.grad.numpy(), gn @ bn.T, rtol=1e-12)
    np.testing.assert_allclose(b.grad.numpy(), an.T @ gn, rtol=1e-12)


def test_hand_views():
    x = rand(3, 4)
    gn = np.arange(12.0).reshape(4, 3)
    x.transpose(0, 1).backward(kiln.tensor(gn, dtype=F64))
    np.testing.assert_allclose(x.grad.numpy(), gn.T)

    x.grad = None
    x.select(1, 2).backward(kiln.tensor([1.0, 2.0, 3.0], dtype=F64))
    expected = np.zeros((3, 4))
    expected[:, 2] = [1.0, 2.0, 3.0]
    np.testing.assert_allclose(x.grad.numpy(), expected)

    x.grad = None
    x.slice(1, 0, 4, 2).backward(kiln.tensor(np.ones((3, 2)) * 5, dtype=F64))
    expected = np.zeros((3, 4))
    expected[:, 0::2] = 5
    np.testing.assert_allclose(x.grad.numpy(), expected)

    x.grad = None
    x.view(2, 6).backward(kiln.tensor(np.arange(12.0).reshape(2, 6), dtype=F64))
    np.testing.assert_allclose(x.grad.numpy(), np.arange(12.0).reshape(3, 4))


def test_hand_expand_sums_gradient():
    x = rand(3, 1)
    x.expand(2, 3, 4).backward(kiln.tensor(np.ones((2, 3, 4)), dtype=F64))
    np.testing.assert_allclose(x.grad.numpy(), np.full((3, 1), 8.0))


def test_hand_copy_():
    dst, src = rand(2, 3), rand(2, 3, seed=1)
    out = dst.clone()
    out.copy_(src)
    (out * 3.0).sum().backward()
    np.testing.assert_allclose(dst.grad.numpy(), np.zeros((2, 3)))
    np.testing.assert_allclose(src.grad.numpy(), np.full((2, 3), 3.0))


def test_hand_copy_broadcast_src():
    # PyTorch: copy_ broadcasts src to self; the gradient of src is summed back to its shape.
    dst, src = rand(2, 3), rand(3, seed=1)
    out = dst.clone()
    out.copy_(src)
    np.testing.assert_allclose(_np(out), np.broadcast_to(_np(src), (2, 3)))
    out.sum().backward()
    np.testing.assert_allclose(src.grad.numpy(), np.full(3, 2.0))
    np.testing.assert_allclose(dst.grad.numpy(), np.zeros((2, 3)))


def test_hand_copy_across_dtypes():
    src = rand(3)
    out = kiln.zeros([3], dtype=kiln.float32)
    out.copy_(src)
    assert out.requires_grad
    (out * 2.0).sum().backward()
    assert src.grad.dtype == F64
    np.testing.assert_allclose(src.grad.numpy(), np.full(3, 2.0))


def test_hand_to_dtype_gradient_has_input_dtype():
    x = rand(3)
    y = x.to(kiln.float32)
    assert y.dtype == kiln.float32 and y.requires_grad
    (y * 3.0).sum().backward()
    assert x.grad.dtype == F64
    np.testing.assert_allclose(x.grad.numpy(), np.full(3, 3.0))

    z = kiln.tensor([1.0, 2.0], requires_grad=True)  # float32 -> float64 -> back
    (kiln._C._to_copy(z, dtype=F64) * kiln.tensor([2.0, 4.0], dtype=F64)).sum().backward()
    assert z.grad.dtype == kiln.float32
    np.testing.assert_allclose(z.grad.numpy(), [2.0, 4.0])


def test_hand_fill_():
    x = rand(3)
    out = x.clone()
    out.fill_(2.0)
    (out * x).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.full(3, 2.0))


def test_hand_select_slice_backward_ops():
    g = kiln.tensor([1.0, 2.0], dtype=F64)
    np.testing.assert_array_equal(kiln.select_backward(g, [2, 3], 1, 2).numpy(), [[0, 0, 1], [0, 0, 2]])
    g2 = kiln.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=F64)
    np.testing.assert_array_equal(kiln.slice_backward(g2, [2, 5], 1, 1, 5, 2).numpy(),
                                  [[0, 1, 0, 2, 0], [0, 3, 0, 4, 0]])


def test_hand_second_derivatives():
    xn = np.array([0.3, -0.7, 1.2])
    x = kiln.tensor(xn, dtype=F64, requires_grad=True)
    (g,) = kiln.autograd.grad(x.tanh().sum(), x, create_graph=True)
    (gg,) = kiln.autograd.grad(g.sum(), x)
    t = np.tanh(xn)
    np.testing.assert_allclose(g.detach().numpy(), 1 - t ** 2, rtol=1e-12)
    np.testing.assert_allclose(gg.numpy(), -2 * t * (1 - t ** 2), rtol=1e-12)

    x2 = kiln.tensor(xn, dtype=F64, requires_grad=True)
    (g,) = kiln.autograd.grad(x2.exp().sum(), x2, create_graph=True)
    (gg,) = kiln.autograd.grad(g.sum(), x2)
    np.testing.assert_allclose(gg.numpy(), np.exp(xn), rtol=1e-12)

    a = kiln.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=F64, requires_grad=True)
    b = kiln.tensor([[0.5, -1.0], [2.0, 0.25]], dtype=F64, requires_grad=True)
    # d/da sum(a @ b) = ones @ b^T; then d/db of sum(that * w) = a-independent: w^T-ish
    (ga,) = kiln.autograd.grad(a.mm(b).sum(), a, create_graph=True)
    w = kiln.tensor([[1.0, 0.0], [2.0, -1.0]], dtype=F64)
    (gb,) = kiln.autograd.grad((ga * w).sum(), b)
    # ga[i,k] = sum_j b[k,j]; sum(ga*w) = sum_{i,k} w[i,k] * sum_j b[k,j] -> d/db[k,j] = sum_i w[i,k]
    np.testing.assert_allclose(gb.numpy(), np.repeat(np.array([[3.0], [-1.0]]), 2, axis=1))


# ---------------------------------------------------------------- non-differentiable paths

def test_detach_output_does_not_require_grad():
    x = rand(3)
    d = x.detach()
    assert not d.requires_grad and d.grad_fn is None
    with pytest.raises(RuntimeError, match="does not require grad"):
        d.sum().backward()
    with pytest.raises(RuntimeError, match="does not require grad"):
        kiln.detach(x).exp().sum().backward()


def test_no_grad_output_does_not_require_grad():
    x = rand(3)
    with kiln.no_grad():
        y = x * 2
    with pytest.raises(RuntimeError, match="does not require grad"):
        y.sum().backward()


def test_detach_in_the_middle_cuts_the_gradient():
    x = rand(3)
    y = x.detach() * x  # only the second factor is differentiated
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), _np(x))


def test_as_strided_gradient_accumulates_over_overlaps():
    x = rand(6)
    assert gradcheck(lambda t: kiln.as_strided(t, [3, 2], [1, 1], 1), (x,), **TOL)
    assert gradgradcheck(lambda t: kiln.as_strided(t, [2, 2], [2, 1]), (x,), **TOL)
    y = rand(3, 4)
    assert gradcheck(lambda t: t.t().as_strided([2, 3], [1, 4], 1), (y,), **TOL)
    # Each input element gets one unit per view element it appears in (by hand: windows of 2 over 4).
    z = kiln.ones(4, requires_grad=True)
    z.as_strided([3, 2], [1, 1]).sum().backward()
    np.testing.assert_array_equal(z.grad.numpy(), [1.0, 2.0, 2.0, 1.0])


def test_as_strided_without_grad_works():
    base = np.arange(6.0)
    x = kiln.tensor(base, dtype=F64, requires_grad=True)
    expected = np.lib.stride_tricks.as_strided(base[1:], (2, 2), (8, 16))
    with kiln.no_grad():
        y = kiln.as_strided(x, [2, 2], [1, 2], 1)
    np.testing.assert_array_equal(y.detach().numpy(), expected)
    np.testing.assert_array_equal(kiln.as_strided(x.detach(), [2, 2], [1, 2], 1).numpy(), expected)


def test_out_variant_refuses_autograd():
    x = rand(3)
    with pytest.raises(RuntimeError, match="out=.*automatic differentiation"):
        kiln.exp(x, out=kiln.empty([3], dtype=F64))


def test_integer_tensors_cannot_require_grad():
    with pytest.raises(RuntimeError, match="floating point"):
        kiln.tensor([1, 2]).requires_grad_()
