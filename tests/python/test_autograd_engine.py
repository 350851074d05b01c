"""The autograd engine: backward/grad options, higher order, grad modes, hooks,
in-place checks, views, deep graphs and memory (reference cycles)."""
import gc

import numpy as np
import pytest

import kiln

F64 = kiln.float64


def t(values, requires_grad=True, dtype=F64):
    return kiln.tensor(values, dtype=dtype, requires_grad=requires_grad)


def npy(x):
    return x.detach().numpy().copy()


@pytest.fixture(autouse=True)
def _grad_mode_restored():
    """Every test starts with grad mode on and must leave it on."""
    assert kiln.is_grad_enabled()
    yield
    enabled = kiln.is_grad_enabled()
    kiln.set_grad_enabled(True)
    assert enabled, "test left grad mode disabled"


# ---------------------------------------------------------------- Tensor.backward

def test_backward_scalar_default_gradient():
    x = t([1.0, 2.0, 3.0])
    (x * x).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [2.0, 4.0, 6.0])
    assert x.grad.dtype == F64 and x.grad.shape == (3,)


def test_backward_with_gradient_argument():
    x = t([1.0, 2.0, 3.0])
    (x * x).backward(t([1.0, 0.5, 2.0], requires_grad=False))
    np.testing.assert_allclose(x.grad.numpy(), [2.0, 2.0, 12.0])


def test_backward_gradient_keyword_and_0d():
    x = t([1.0, 2.0])
    (x * 3.0).sum().backward(gradient=t(2.0, requires_grad=False))
    np.testing.assert_allclose(x.grad.numpy(), [6.0, 6.0])


def test_backward_non_scalar_needs_gradient():
    x = t([1.0, 2.0])
    with pytest.raises(RuntimeError, match="implicitly created only for scalar outputs"):
        (x * 2).backward()


def test_backward_gradient_shape_mismatch():
    x = t([1.0, 2.0, 3.0])
    with pytest.raises(RuntimeError, match="[Mm]ismatch in shape"):
        (x * 2).backward(kiln.ones([2], dtype=F64))


def test_backward_twice_without_retain_graph_raises():
    x = t([1.0, 2.0])
    y = (x.exp() * x).sum()
    y.backward()
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        y.backward()


def test_backward_retain_graph_allows_second_call_and_accumulates():
    xn = np.array([0.5, -1.0])
    x = t(xn)
    y = (x.exp() * x).sum()
    y.backward(retain_graph=True)
    first = npy(x.grad)
    np.testing.assert_allclose(first, np.exp(xn) * (1 + xn))
    y.backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * np.exp(xn) * (1 + xn))


def test_gradient_accumulates_across_backward_calls():
    x = t([1.0, 2.0])
    (x * 3.0).sum().backward()
    (x * x).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [3.0 + 2.0, 3.0 + 4.0])
    x.grad = None
    (x * 5.0).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [5.0, 5.0])


def test_backward_create_graph_gives_differentiable_grad():
    xn = np.array([0.5, 1.5])
    x = t(xn)
    (x ** 3).sum().backward(create_graph=True)
    g = x.grad
    assert g.requires_grad
    np.testing.assert_allclose(npy(g), 3 * xn ** 2)
    (gg,) = kiln.autograd.grad(g.sum(), x)
    np.testing.assert_allclose(gg.numpy(), 6 * xn)
    x.grad = None  # break the x -> grad -> graph -> x chain (as in PyTorch)


def test_backward_from_multiple_roots():
    x = t([1.0, 2.0])
    a, b = (x * 2).sum(), (x * x).sum()
    kiln.autograd.backward([a, b])
    np.testing.assert_allclose(x.grad.numpy(), [2.0 + 2.0, 2.0 + 4.0])


def test_backward_through_shared_subgraph():
    # x is used by two branches that meet again: gradients add up in the engine
    xn = np.array([0.3, -0.2])
    x = t(xn)
    y = x.exp()
    z = (y * y + y.tanh()).sum()
    z.backward()
    e = np.exp(xn)
    np.testing.assert_allclose(x.grad.numpy(), (2 * e + (1 - np.tanh(e) ** 2)) * e, rtol=1e-12)


# ---------------------------------------------------------------- kiln.autograd.grad

def test_grad_returns_tuple_and_leaves_dot_grad_alone():
    x = t([1.0, 2.0, 3.0])
    g = kiln.autograd.grad((x * x).sum(), x)
    assert isinstance(g, tuple) and len(g) == 1
    np.testing.assert_allclose(g[0].numpy(), [2.0, 4.0, 6.0])
    assert x.grad is None


def test_grad_multiple_inputs_and_outputs():
    x, y = t([1.0, 2.0]), t([3.0, 4.0])
    gx, gy = kiln.autograd.grad([(x * y).sum(), (x * 2).sum()], [x, y])
    np.testing.assert_allclose(gx.numpy(), [3.0 + 2.0, 4.0 + 2.0])
    np.testing.assert_allclose(gy.numpy(), [1.0, 2.0])


def test_grad_with_grad_outputs():
    x = t([1.0, 2.0, 3.0])
    (g,) = kiln.autograd.grad(x * x, x, grad_outputs=t([1.0, 2.0, 3.0], requires_grad=False))
    np.testing.assert_allclose(g.numpy(), [2.0, 8.0, 18.0])
    (g,) = kiln.autograd.grad([x * x], [x], [t([1.0, 0.0, -1.0], requires_grad=False)])
    np.testing.assert_allclose(g.numpy(), [2.0, 0.0, -6.0])


def test_grad_non_scalar_without_grad_outputs_raises():
    x = t([1.0, 2.0])
    with pytest.raises(RuntimeError, match="implicitly created only for scalar outputs"):
        kiln.autograd.grad(x * x, x)


def test_grad_retain_graph():
    x = t([1.0, 2.0])
    y = (x.exp()).sum()
    kiln.autograd.grad(y, x, retain_graph=True)
    (g,) = kiln.autograd.grad(y, x)
    np.testing.assert_allclose(g.numpy(), np.exp([1.0, 2.0]))
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        kiln.autograd.grad(y, x)


def test_grad_allow_unused():
    x, unused = t([1.0, 2.0]), t([3.0, 4.0])
    with pytest.raises(RuntimeError, match="allow_unused=True"):
        kiln.autograd.grad((x * 2).sum(), [x, unused])
    gx, gu = kiln.autograd.grad((x * 2).sum(), [x, unused], allow_unused=True)
    np.testing.assert_allclose(gx.numpy(), [2.0, 2.0])
    assert gu is None


def test_grad_wrt_tensor_not_requiring_grad_raises():
    x = t([1.0, 2.0])
    with pytest.raises(RuntimeError, match="does not require grad"):
        kiln.autograd.grad((x * 2).sum(), kiln.ones([2], dtype=F64))


def test_grad_of_intermediate():
    x = t([1.0, 2.0])
    y = x * 3.0
    z = (y * y).sum()
    (gy,) = kiln.autograd.grad(z, y)
    np.testing.assert_allclose(gy.numpy(), [6.0, 12.0])


def test_grad_without_create_graph_is_not_differentiable():
    x = t([1.0, 2.0])
    (g,) = kiln.autograd.grad((x ** 3).sum(), x)
    assert not g.requires_grad and g.grad_fn is None


# ---------------------------------------------------------------- higher order

def test_second_derivative_of_cube_is_6x():
    xn = np.array([-2.0, 0.5, 3.0])
    x = t(xn)
    (g,) = kiln.autograd.grad((x ** 3).sum(), x, create_graph=True)
    np.testing.assert_allclose(npy(g), 3 * xn ** 2)
    (gg,) = kiln.autograd.grad(g.sum(), x, create_graph=True)
    np.testing.assert_allclose(npy(gg), 6 * xn)
    (ggg,) = kiln.autograd.grad(gg.sum(), x)
    np.testing.assert_allclose(ggg.numpy(), [6.0, 6.0, 6.0])


def test_second_derivative_scalar_chain():
    # f(x) = exp(x) * tanh(x);  f'' by hand
    xv = 0.7
    x = t(np.array(xv))  # (an ndarray: this test is about autograd, not kiln.tensor's parsing)
    (g,) = kiln.autograd.grad(x.exp() * x.tanh(), x, create_graph=True)
    (gg,) = kiln.autograd.grad(g, x)
    e, th = np.exp(xv), np.tanh(xv)
    s2 = 1 - th ** 2
    expected = e * th + 2 * e * s2 + e * (-2 * th * s2)
    np.testing.assert_allclose(gg.item(), expected, rtol=1e-12)


def test_mixed_partial_derivative():
    # f(x, y) = x^2 * y^3  -> d2f/dxdy = 6 x y^2
    x, y = t(1.5), t(-2.0)
    (gx,) = kiln.autograd.grad(x ** 2 * y ** 3, x, create_graph=True)
    (gxy,) = kiln.autograd.grad(gx, y)
    np.testing.assert_allclose(gxy.item(), 6 * 1.5 * 4.0)


# ---------------------------------------------------------------- grad modes

def test_no_grad_context_manager():
    x = t([1.0, 2.0])
    with kiln.no_grad():
        assert not kiln.is_grad_enabled()
        y = x * 2
    assert kiln.is_grad_enabled()
    assert not y.requires_grad and y.grad_fn is None


def test_no_grad_decorator():
    x = t([1.0, 2.0])

    @kiln.no_grad()
    def double(a):
        assert not kiln.is_grad_enabled()
        return a * 2

    y = double(x)
    assert not y.requires_grad
    assert kiln.is_grad_enabled()
    assert double.__name__ == "double"


def test_no_grad_restores_on_exception():
    with pytest.raises(KeyError):
        with kiln.no_grad():
            raise KeyError("boom")
    assert kiln.is_grad_enabled()


def test_no_grad_nested():
    with kiln.no_grad():
        with kiln.no_grad():
            pass
        assert not kiln.is_grad_enabled()
    assert kiln.is_grad_enabled()


def test_enable_grad_inside_no_grad():
    x = t([1.0, 2.0])
    with kiln.no_grad():
        with kiln.enable_grad():
            assert kiln.is_grad_enabled()
            y = x * 2
        assert not kiln.is_grad_enabled()
    assert y.requires_grad

    @kiln.enable_grad()
    def f(a):
        return a * 3

    with kiln.no_grad():
        z = f(x)
        assert not kiln.is_grad_enabled()
    assert z.requires_grad
    z.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [3.0, 3.0])


def test_set_grad_enabled_as_function():
    x = t([1.0])
    kiln.set_grad_enabled(False)
    try:
        assert not kiln.is_grad_enabled()
        assert not (x * 2).requires_grad
    finally:
        kiln.set_grad_enabled(True)
    assert kiln.is_grad_enabled()
    assert (x * 2).requires_grad


def test_set_grad_enabled_as_context_manager():
    x = t([1.0])
    with kiln.set_grad_enabled(False):
        assert not kiln.is_grad_enabled()
        assert not (x * 2).requires_grad
    assert kiln.is_grad_enabled()
    with kiln.no_grad():
        with kiln.set_grad_enabled(True):
            assert (x * 2).requires_grad
        assert not kiln.is_grad_enabled()


def test_set_grad_enabled_as_decorator():
    x = t([1.0])

    @kiln.set_grad_enabled(False)
    def f(a):
        return a * 2

    assert kiln.is_grad_enabled()  # decorating does not change the mode
    assert not f(x).requires_grad
    assert kiln.is_grad_enabled()


def test_views_made_under_no_grad_of_a_tensor_that_requires_grad():
    # As torch: such a view requires grad through its base, has no history (is a leaf), and its
    # gradient goes nowhere; results of other ops under no_grad do not require grad.
    import torch
    for lib in (torch, kiln):
        x = lib.tensor([1.0, 2.0, 3.0], dtype=lib.float64, requires_grad=True)
        with lib.no_grad():
            views = {"slice": x[1:], "select": x[0], "view": x.view(3, 1),
                     "transpose": x.view(3, 1).transpose(0, 1), "expand": x.expand(2, 3)}
            other = x * 2
        for name, v in views.items():
            assert v.requires_grad and v.is_leaf and v.grad_fn is None, (lib.__name__, name)
            assert v._is_view() and v._base is x, (lib.__name__, name)
        assert not other.requires_grad
        (views["slice"] * 2).sum().backward()
        assert x.grad is None and views["slice"].grad is None, lib.__name__


# ---------------------------------------------------------------- detach / requires_grad_

def test_detach_shares_memory_and_has_no_grad():
    x = t([1.0, 2.0, 3.0])
    d = x.detach()
    assert not d.requires_grad and d.grad_fn is None and d.is_leaf
    assert d.data_ptr() == x.data_ptr()
    d[0] = 10.0
    np.testing.assert_array_equal(npy(x), [10.0, 2.0, 3.0])
    y = (x * 2).detach()
    assert not y.requires_grad


def test_requires_grad_():
    x = kiln.tensor([1.0, 2.0])
    assert not x.requires_grad
    assert x.requires_grad_() is x
    assert x.requires_grad and x.is_leaf
    (x * x).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [2.0, 4.0])
    x.requires_grad_(False)
    assert not x.requires_grad


def test_requires_grad_on_non_leaf_cannot_be_cleared():
    x = t([1.0, 2.0])
    y = x * 2
    with pytest.raises(RuntimeError, match="leaf"):
        y.requires_grad_(False)


def test_is_leaf_and_grad_fn():
    x = t([1.0])
    y = x * 2
    assert x.is_leaf and x.grad_fn is None
    assert not y.is_leaf and y.grad_fn.name() == "MulBackward0"
    assert kiln.tensor([1.0]).is_leaf


# ---------------------------------------------------------------- retain_grad / hooks

def test_retain_grad_on_non_leaf():
    xn = np.array([1.0, 2.0])
    x = t(xn)
    y = x * 2
    y.retain_grad()
    assert y.retains_grad
    z = y.exp()
    z.retain_grad()
    z.sum().backward()
    np.testing.assert_allclose(z.grad.numpy(), [1.0, 1.0])
    np.testing.assert_allclose(y.grad.numpy(), np.exp(2 * xn))
    np.testing.assert_allclose(x.grad.numpy(), 2 * np.exp(2 * xn))


def test_non_leaf_grad_is_none_without_retain_grad():
    x = t([1.0, 2.0])
    y = x * 2
    y.sum().backward()
    assert y.grad is None


def test_hook_on_leaf_modifies_gradient_and_can_be_removed():
    x = t([1.0, 2.0, 3.0])
    seen = []

    def hook(g):
        seen.append(npy(g))
        return g * 2

    handle = x.register_hook(hook)
    (x * 3.0).sum().backward()
    np.testing.assert_allclose(seen[0], [3.0, 3.0, 3.0])
    np.testing.assert_allclose(x.grad.numpy(), [6.0, 6.0, 6.0])
    handle.remove()
    x.grad = None
    (x * 3.0).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [3.0, 3.0, 3.0])
    assert len(seen) == 1


def test_hook_on_non_leaf_changes_upstream_gradient():
    x = t([1.0, 2.0])
    y = x * 3.0
    handle = y.register_hook(lambda g: g * 10)
    (y * y).sum().backward()
    # dL/dy = 2y = [6, 12] -> hook -> [60, 120] -> dL/dx = 3 * that
    np.testing.assert_allclose(x.grad.numpy(), [180.0, 360.0])
    handle.remove()
    x.grad = None
    y = x * 3.0
    (y * y).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [18.0, 36.0])


def test_hook_returning_none_keeps_gradient():
    x = t([1.0, 2.0])
    seen = []
    x.register_hook(lambda g: seen.append(1))
    (x * 4.0).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [4.0, 4.0])
    assert seen == [1]


def test_hook_with_retain_grad_sees_hooked_value():
    x = t([1.0, 2.0])
    y = x * 1.0
    y.retain_grad()
    y.register_hook(lambda g: g + 1)
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [2.0, 2.0])
    np.testing.assert_allclose(y.grad.numpy(), [2.0, 2.0])  # PyTorch >= 2.0: retains_grad runs after hooks


def test_hook_on_tensor_without_grad_raises():
    with pytest.raises(RuntimeError, match="doesn't require gradient"):
        kiln.tensor([1.0]).register_hook(lambda g: g)


# ---------------------------------------------------------------- in-place correctness checks

def test_inplace_on_leaf_requiring_grad_raises():
    x = t([1.0, 2.0])
    for op in (lambda: x.add_(1), lambda: x.mul_(2), lambda: x.exp_(), lambda: x.fill_(0.0)):
        with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
            op()
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        x[0] = 5.0
    np.testing.assert_array_equal(npy(x), [1.0, 2.0])


def test_inplace_on_leaf_allowed_under_no_grad():
    x = t([1.0, 2.0])
    with kiln.no_grad():
        x.mul_(3.0)
    np.testing.assert_array_equal(npy(x), [3.0, 6.0])
    assert x.requires_grad and x.is_leaf


def test_modifying_saved_exp_result_raises():
    x = t([1.0, 2.0])
    y = x.exp()  # ExpBackward saves its result y
    y.add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()


def test_modifying_saved_tanh_result_raises():
    x = t([1.0, 2.0])
    y = x.tanh()
    y.mul_(2)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()


@pytest.mark.parametrize("which", ["self", "other"])
def test_modifying_saved_mul_input_raises(which):
    x = t([1.0, 2.0])
    a, b = x.clone(), x * 3.0  # both require grad, so mul saves both
    c = a * b
    (a if which == "self" else b).add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        c.sum().backward()


def test_modifying_saved_tensor_through_detach_or_no_grad_raises():
    x = t([1.0, 2.0])
    y = x.exp()
    y.detach().add_(1)  # detach shares the version counter
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()
    y = x.exp()
    with kiln.no_grad():
        y[0:1].add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()


def test_modifying_unsaved_input_is_fine():
    # exp saves only its result: modifying its input afterwards is legal.
    xn = np.array([0.5, 1.0])
    x = t(xn)
    a = x.clone()
    e = a.exp()
    a.add_(1)
    e.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.exp(xn))


def test_modifying_input_not_needed_by_mul_backward_is_fine():
    # PyTorch saves `self` for mul only when `other` requires grad: here it doesn't,
    # so modifying `a` after `a * c` must not break backward.
    x = t([1.0, 2.0])
    c = t([3.0, 5.0], requires_grad=False)
    a = x.clone()
    w = a * c
    a.add_(1)
    w.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [3.0, 5.0])


def test_inplace_on_non_leaf_gives_correct_gradient():
    xn = np.array([0.5, -1.0, 2.0])
    x = t(xn)
    y = x * 2.0
    y.pow_(2)  # y = (2x)^2
    y.add_(1.0)
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 8 * xn)


def test_version_counter_increments():
    x = kiln.zeros([3], dtype=F64)
    v0 = x._version
    x.add_(1)
    assert x._version == v0 + 1
    x[0].fill_(2.0)  # through a view: shared counter
    assert x._version == v0 + 2


# ---------------------------------------------------------------- in-place on views

X0 = np.array([0.5, -1.0, 2.0])
Y0 = np.array([1.5, 0.25])


def _run_view_case(fn):
    """Runs fn(x, y); returns the gradients, or None if kiln raised a clear error."""
    x, y = t(X0), t(Y0)
    try:
        fn(x, y)
    except (RuntimeError, NotImplementedError) as e:
        assert "inplace" in str(e) or "in-place" in str(e), f"unclear error: {e}"
        return None
    gx = np.zeros(3) if x.grad is None else x.grad.numpy()
    gy = np.zeros(2) if y.grad is None else y.grad.numpy()
    return gx, gy


def _slice_add(x, y):
    b = x.clone()
    b[1:].add_(1)
    (b * b).sum().backward()


def _slice_mul(x, y):
    b = x.clone()
    b[1:].mul_(3)
    (b * b).sum().backward()


def _slice_exp(x, y):
    b = x.clone()
    b[1:].exp_()
    b.sum().backward()


def _slice_copy(x, y):
    b = x.clone()
    b[:2].copy_(y)
    (b * b).sum().backward()


def _setitem_tensor(x, y):
    b = x.clone()
    b[:2] = y
    (b * b).sum().backward()


def _setitem_scalar(x, y):
    b = x.clone()
    b[0] = 7.0
    (b * b).sum().backward()


def _slice_mul_tensor(x, y):
    b = x.clone()
    b[1:].mul_(y)
    b.sum().backward()


def _select_mul_tensor(x, y):
    b = x.clone()
    b.select(0, 2).mul_(y[1])
    b.sum().backward()


def _view_of_view(x, y):
    b = x.clone()
    v = b[1:]
    v[1:].mul_(3)
    (b * b).sum().backward()


def _use_view_after(x, y):
    b = x.clone()
    v = b[1:]
    v.add_(1)
    (v * v).sum().backward()


def _base_modified_then_view(x, y):
    b = x.clone()
    v = b[1:]
    b.mul_(2)
    (v * v).sum().backward()


def _transposed_view(x, y):
    b = x.view(3, 1).clone()
    b.transpose(0, 1)[0, 1:].mul_(2)
    (b * b).sum().backward()


def _no_grad_base(x, y):
    b = kiln.zeros([3], dtype=F64)
    b[1:] = y
    (b * b).sum().backward()


def _view_used_before(x, y):
    b = x.clone()
    v = b[1:]
    w = v * 2.0
    v.add_(1)
    (w.sum() + (b * b).sum()).backward()


VIEW_CASES = [
    ("slice_add_", _slice_add, (2 * (X0 + [0, 1, 1]), [0, 0])),
    ("slice_mul_", _slice_mul, (2 * X0 * [1, 9, 9], [0, 0])),
    ("slice_exp_", _slice_exp, ([1, np.exp(X0[1]), np.exp(X0[2])], [0, 0])),
    ("slice_copy_", _slice_copy, ([0, 0, 2 * X0[2]], 2 * Y0)),
    ("setitem_tensor", _setitem_tensor, ([0, 0, 2 * X0[2]], 2 * Y0)),
    ("setitem_scalar", _setitem_scalar, ([0, 2 * X0[1], 2 * X0[2]], [0, 0])),
    ("slice_mul_tensor", _slice_mul_tensor, ([1, Y0[0], Y0[1]], X0[1:])),
    ("select_mul_tensor", _select_mul_tensor, ([1, 1, Y0[1]], [0, X0[2]])),
    ("view_of_view", _view_of_view, (2 * X0 * [1, 1, 9], [0, 0])),
    ("use_view_after", _use_view_after, ([0, 2 * (X0[1] + 1), 2 * (X0[2] + 1)], [0, 0])),
    ("base_modified_then_view", _base_modified_then_view, ([0, 8 * X0[1], 8 * X0[2]], [0, 0])),
    ("transposed_view", _transposed_view, (2 * X0 * [1, 4, 4], [0, 0])),
    ("no_grad_base", _no_grad_base, ([0, 0, 0], 2 * Y0)),
    ("view_used_before", _view_used_before, ([0, 2, 2] + 2 * (X0 + [0, 1, 1]), [0, 0])),
]


@pytest.mark.parametrize("fn,expected", [c[1:] for c in VIEW_CASES], ids=[c[0] for c in VIEW_CASES])
def test_inplace_on_view_is_right_or_a_clear_error(fn, expected):
    got = _run_view_case(fn)
    if got is None:
        return  # a clear error is acceptable; a wrong number is not
    np.testing.assert_allclose(got[0], expected[0], rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(got[1], expected[1], rtol=1e-12, atol=1e-12)


def test_inplace_on_view_updates_base_values():
    x = t(X0)
    b = x.clone()
    b[1:].mul_(3)
    np.testing.assert_allclose(npy(b), X0 * [1, 3, 3])
    assert b.requires_grad and not b.is_leaf


def test_inplace_on_view_of_leaf_raises():
    x = t(X0)
    with pytest.raises(RuntimeError, match="view of a leaf Variable"):
        x[1:].mul_(2)
    np.testing.assert_array_equal(npy(x), X0)


# ---------------------------------------------------------------- broadcasting reductions

@pytest.mark.parametrize("sa,sb", [((2, 3), (3,)), ((2, 1, 3), (4, 1)), ((3, 1), (1, 4)), ((2, 3), ()), ((1,), (2, 2))])
def test_gradients_reduced_through_broadcasting(sa, sb):
    rng = np.random.default_rng(3)
    an, bn = rng.standard_normal(sa), rng.standard_normal(sb)
    a, b = t(an), t(bn)
    out_shape = np.broadcast_shapes(sa, sb)
    gn = rng.standard_normal(out_shape)
    (a * b + a - b).backward(t(gn, requires_grad=False))
    assert a.grad.shape == sa and b.grad.shape == sb

    def reduce_to(g, shape):
        while g.ndim > len(shape):
            g = g.sum(0)
        for d, s in enumerate(shape):
            if s == 1 and g.shape[d] != 1:
                g = g.sum(d, keepdims=True)
        return g

    np.testing.assert_allclose(a.grad.numpy(), reduce_to(gn * np.broadcast_to(bn, out_shape) + gn, sa), rtol=1e-12)
    np.testing.assert_allclose(b.grad.numpy(), reduce_to(gn * np.broadcast_to(an, out_shape) - gn, sb), rtol=1e-12)


def test_grad_dtype_and_shape_match_leaf():
    a = kiln.tensor([[1.0, 2.0]], requires_grad=True)  # float32 leaf
    (a * kiln.tensor([[1.0], [2.0], [3.0]])).sum().backward()
    assert a.grad.dtype == kiln.float32 and a.grad.shape == (1, 2)
    np.testing.assert_allclose(a.grad.numpy(), [[6.0, 6.0]])


# ---------------------------------------------------------------- deep graphs

def test_chain_of_100k_ops_backpropagates():
    x = t([1.0])
    y = x
    for _ in range(100_000):
        y = y * 1.0001
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [1.0001 ** 100_000], rtol=1e-9)


def test_chain_of_100k_ops_freed_without_backward():
    gc.collect()
    before = kiln._C._live_tensor_count()
    x = t([1.0])
    y = x
    for _ in range(100_000):
        y = y + 1.0
    del y, x
    gc.collect()
    assert kiln._C._live_tensor_count() == before


def test_deep_chain_double_backward():
    x = t([0.5])
    y = x
    for _ in range(5_000):
        y = y * 1.0001
    y = y ** 2
    (g,) = kiln.autograd.grad(y.sum(), x, create_graph=True)
    (gg,) = kiln.autograd.grad(g.sum(), x)
    c = 1.0001 ** 5_000
    np.testing.assert_allclose(npy(g), [2 * c * c * 0.5], rtol=1e-9)
    np.testing.assert_allclose(gg.numpy(), [2 * c * c], rtol=1e-9)


# ---------------------------------------------------------------- memory: no reference cycles

def _live():
    # Collect until nothing is left: a cycle freed in one pass can release another
    # (e.g. a leaf kept alive only by the graph of a collected non-leaf).
    while gc.collect():
        pass
    return kiln._C._live_tensor_count()


def test_no_leak_after_backward_of_graph_saving_outputs():
    base = _live()

    def run():
        x = t([0.1, 0.2, 0.3])
        y = x.exp()       # saves its output
        z = y.tanh()      # saves its output
        s = z.sigmoid()   # saves its output
        w = (s * y).sum()  # saves both inputs
        w.backward()
        assert x.grad is not None
        del x, y, z, s, w

    run()
    assert _live() == base


def test_no_leak_when_graph_is_dropped_without_backward():
    base = _live()
    x = t([0.1, 0.2])
    y = x.exp().tanh()
    z = (y * y).sum()
    del x, y, z
    assert _live() == base


def test_no_leak_with_retain_grad_and_double_backward():
    base = _live()
    x = t([0.1, 0.2])
    y = x.exp()
    y.retain_grad()
    z = (y.tanh() * y).sum()
    (g,) = kiln.autograd.grad(z, x, create_graph=True)
    (g * g).sum().backward()
    assert y.grad is not None
    del x, y, z, g
    assert _live() == base


def test_no_leak_with_python_attribute_cycle():
    base = _live()
    x = t([1.0])
    y = x.exp()
    x.partner, y.partner = y, x
    del x, y
    assert _live() == base


def test_no_leak_with_hooks_capturing_their_tensor():
    # tensor -> hook -> closure -> tensor is a cycle through C++; PyTorch's gc traversal
    # visits the hooks, so such cycles are collected.
    base = _live()

    def run():
        x = t([1.0, 2.0])
        y = x * 2
        y.register_hook(lambda g: g * y.detach())
        x.register_hook(lambda g: g + x.detach())
        y.sum().backward()
        np.testing.assert_allclose(x.grad.numpy(), [2 * 2 + 1, 2 * 4 + 2])
        # no `del x, y`: that would empty the closure cells and break the cycle by hand

    run()
    assert _live() == base


def test_no_leak_with_hook_on_leaf_capturing_itself_no_backward():
    base = _live()

    def run():
        x = t([1.0, 2.0])
        x.register_hook(lambda g: g + x.detach())

    run()
    assert _live() == base


def test_python_exception_in_hook_propagates_and_process_survives():
    # Runs in a subprocess: a wrongly owned Python error used to crash the interpreter at exit.
    import subprocess
    import sys
    code = (
        "import kiln\n"
        "a = kiln.ones(2, requires_grad=True); a.register_hook(lambda g: 1 / 0)\n"
        "try:\n    (a * 2).sum().backward()\nexcept ZeroDivisionError as e:\n    print('leaf', e)\n"
        "b = kiln.ones(2, requires_grad=True); c = b * 2; c.register_hook(lambda g: 1 / 0)\n"
        "try:\n    c.sum().backward()\nexcept ZeroDivisionError as e:\n    print('nonleaf', e)\n"
        "import gc; gc.collect(); print('alive')\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=_child_env())
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split("\n")[:3] == ["leaf division by zero", "nonleaf division by zero", "alive"]


def _child_env():
    import os
    import kiln as k
    env = dict(os.environ)
    env["PYTHONPATH"] = os.path.dirname(os.path.dirname(k.__file__)) + os.pathsep + env.get("PYTHONPATH", "")
    return env


def test_leaf_grad_is_a_plain_tensor_of_its_own():
    # The incoming gradient may be a broadcast (stride 0) or transposed view; .grad never is.
    w = kiln.ones(3, requires_grad=True)
    w.sum().backward()
    assert w.grad.stride() == (1,)
    w.grad.zero_()
    w.sum().backward()
    w.sum().backward()
    np.testing.assert_array_equal(w.grad.numpy(), [2.0, 2.0, 2.0])
    m = kiln.ones(2, 3, requires_grad=True)
    x = kiln.ones(4, 2)
    (x @ m).sum().backward()  # the gradient of m arrives transposed
    assert m.grad.is_contiguous() and m.grad.stride() == (3, 1)
    assert m.grad.view(-1).shape == (6,)
    np.testing.assert_array_equal(m.grad.numpy(), np.full((2, 3), 4.0))


def test_leaf_hook_may_not_change_the_gradient_shape():
    a = kiln.ones(2, requires_grad=True)
    a.register_hook(lambda g: kiln.ones(3))
    with pytest.raises(RuntimeError, match="changed the size of value"):
        (a * 2).sum().backward()


def test_inplace_op_with_itself_as_argument():
    # Found by the fuzzer: x.mul_(x) saved x itself as `other`, a reference cycle through x's
    # grad_fn (a leak). It is saved as the node's output now: no cycle, and, as in torch, the
    # saved value is the one the in-place op modified, so backward raises.
    base = _live()
    a = kiln.tensor([2.0, 3.0], requires_grad=True)
    x = a * 1
    x.mul_(x)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        x.sum().backward()
    torch = pytest.importorskip("torch")
    ta = torch.tensor([2.0, 3.0], requires_grad=True)
    tx = ta * 1
    tx.mul_(tx)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        tx.sum().backward()
    y = a * 1
    y.remainder_(y)
    del a, x, y
    gc.collect()
    assert _live() == base


def test_gradients_accumulated_in_place_match_torch_and_spare_what_others_hold():
    """The engine adds a second gradient into the first in place when nothing else holds it
    (torch's InputBuffer): a weight used at every step, a tensor used twice by one op (its node
    returns one gradient object twice), and gradients a hook kept must all come out as torch's."""
    import numpy as np
    import torch
    rng = np.random.default_rng(3)
    w0, x0, v0 = rng.standard_normal((4, 4)), rng.standard_normal((3, 4)), rng.standard_normal(4)
    results = {}
    for lib in (torch, kiln):
        w = lib.tensor(w0, requires_grad=True)
        v = lib.tensor(v0, requires_grad=True)
        h = lib.tensor(x0)
        kept = []
        for _ in range(5):  # w's gradient arrives once per step
            h = lib.tanh(h @ w + v)
            h.register_hook(lambda g: kept.append(g))
        u = h * 1.0
        (u + u).sum().backward()  # AddBackward hands u's node the same gradient twice
        results[lib.__name__] = (w.grad.numpy().copy(), v.grad.numpy().copy(),
                                 [g.numpy().copy() for g in kept])
    tw, tv, tk = results["torch"]
    kw, kv, kk = results["kiln"]
    np.testing.assert_allclose(kw, tw, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(kv, tv, rtol=1e-12, atol=1e-12)
    assert len(kk) == len(tk)
    for a, b in zip(kk, tk):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)
