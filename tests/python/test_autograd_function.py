"""kiln.autograd.Function: custom ops written in Python, checked against finite differences
(gradcheck/gradgradcheck), NumPy, hand-computed derivatives and kiln's built-in ops."""
import copy
import gc
import weakref

import numpy as np
import pytest

import kiln
from kiln import nn
from kiln.autograd import Function
from kiln.autograd.function import FunctionCtx, once_differentiable

F64 = kiln.float64


def t(a, requires_grad=True):
    return kiln.tensor(np.asarray(a, dtype=np.float64), requires_grad=requires_grad)


def rand(shape, seed=0):
    return np.random.default_rng(seed).uniform(-1.5, 1.5, size=shape)


def _live():
    while gc.collect():
        pass
    return kiln._C._live_tensor_count()


class MyExp(Function):
    @staticmethod
    def forward(ctx, x, scale=1.0):
        y = x.exp() * scale
        ctx.save_for_backward(y)  # an output: saved without a reference cycle
        ctx.scale = scale
        return y

    @staticmethod
    def backward(ctx, grad):
        (y,) = ctx.saved_tensors
        return grad * y, None  # one more than apply(x) got: trailing Nones are allowed


class MyMul(Function):
    """x * alpha * y, with the tensors in positions 0 and 2."""

    @staticmethod
    def forward(ctx, x, alpha, y):
        ctx.save_for_backward(x, y)
        ctx.alpha = alpha
        return x * y * alpha

    @staticmethod
    def backward(ctx, grad):
        x, y = ctx.saved_tensors
        gx = grad * y * ctx.alpha if ctx.needs_input_grad[0] else None
        gy = grad * x * ctx.alpha if ctx.needs_input_grad[2] else None
        return gx, None, gy


class Cube(Function):
    """x ** 3 with a backward written in kiln ops, so it is differentiable again."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x * x

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * 3 * x * x


# ---------------------------------------------------------------- forward and backward

def test_exp_values_and_gradient_match_numpy():
    xv = np.array([-0.5, 0.0, 1.25])
    x = t(xv)
    y = MyExp.apply(x, 2.0)
    np.testing.assert_allclose(y.detach().numpy(), 2 * np.exp(xv), rtol=1e-15)
    assert y.requires_grad and not y.is_leaf
    (y * t([1.0, 2.0, 3.0], False)).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.array([1, 2, 3]) * 2 * np.exp(xv), rtol=1e-14)
    # the default argument: apply(x) passes one argument, backward's extra None is dropped
    x.grad = None
    MyExp.apply(x).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.exp(xv), rtol=1e-14)


def test_gradcheck_exp_and_mul():
    x, y = t(rand([2, 3], 1)), t(rand([2, 3], 2))
    assert kiln.autograd.gradcheck(lambda a: MyExp.apply(a, 0.5), (x,))
    assert kiln.autograd.gradcheck(lambda a, b: MyMul.apply(a, -1.5, b), (x, y))
    # the second tensor broadcast: its gradient is summed back to its shape by the engine
    row = t(rand([3], 3))
    assert kiln.autograd.gradcheck(lambda a, b: MyMul.apply(a, 2.0, b), (x, row))
    MyMul.apply(x, 2.0, row).sum().backward()
    np.testing.assert_allclose(row.grad.numpy(), 2 * x.detach().numpy().sum(0), rtol=1e-14)


def test_mul_gradients_by_hand_and_input_without_grad():
    a, b = t([1.0, -2.0]), t([3.0, 0.5], requires_grad=False)
    out = MyMul.apply(a, 4.0, b)
    out.sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), [12.0, 2.0])
    assert b.grad is None


def test_needs_input_grad():
    seen = []

    class Record(Function):
        @staticmethod
        def forward(ctx, *args):
            seen.append(ctx.needs_input_grad)
            return args[0] * 1.0

        @staticmethod
        def backward(ctx, grad):
            return (grad,) + (None,) * (len(ctx.needs_input_grad) - 1)

    a, b = t([1.0]), t([2.0], requires_grad=False)
    Record.apply(a, 3, b, "s", None)
    Record.apply(b, a)
    Record.apply(b)
    with kiln.no_grad():  # reflects requires_grad, whatever the grad mode (as in torch)
        Record.apply(a)
    assert seen == [(True, False, False, False, False), (False, True), (False,), (True,)]


def test_outputs_require_grad_only_when_recording():
    a, c = t([1.0]), t([1.0], requires_grad=False)
    assert not MyExp.apply(c).requires_grad and MyExp.apply(c).grad_fn is None
    with kiln.no_grad():
        y = MyExp.apply(a)
    assert not y.requires_grad and y.grad_fn is None
    with pytest.raises(RuntimeError, match="does not require grad"):
        y.sum().backward()


def test_grad_fn_name_identity_and_next_functions():
    x = t([1.0, 2.0])
    w = x * 2
    y = MyMul.apply(w, 1.0, x)
    assert type(y.grad_fn).__name__ == "MyMulBackward" and y.grad_fn.name() == "MyMulBackward"
    assert y.grad_fn is y.grad_fn and isinstance(y.grad_fn, FunctionCtx)
    assert "grad_fn=<MyMulBackward>" in repr(y)
    (f0, n0), (f1, _), (f2, _) = y.grad_fn.next_functions
    assert f0.name() == "MulBackward0" and n0 == 0 and f1 is None
    assert f2.name() == "torch::autograd::AccumulateGrad" and type(f2).__name__ == "AccumulateGrad"  # as torch
    z = MyExp.apply(y)
    assert z.grad_fn.next_functions[0][0] is y.grad_fn  # the ctx is reached from later nodes too


def test_retain_graph_runs_backward_twice():
    x = t([0.3, -0.7])
    y = MyExp.apply(x)
    y.sum().backward(retain_graph=True)
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * np.exp([0.3, -0.7]), rtol=1e-14)
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        y.sum().backward()


def test_setup_context_style():
    class Square(Function):
        @staticmethod
        def forward(x, k):
            return x * x * k

        @staticmethod
        def setup_context(ctx, inputs, output):
            x, k = inputs
            ctx.save_for_backward(x)
            ctx.k = k

        @staticmethod
        def backward(ctx, grad):
            (x,) = ctx.saved_tensors
            return grad * 2 * ctx.k * x, None

    x = t(rand([4], 5))
    assert kiln.autograd.gradcheck(lambda a: Square.apply(a, 3.0), (x,))
    Square.apply(x, 3.0).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 6 * x.detach().numpy(), rtol=1e-15)


def test_non_tensor_outputs_and_returned_input():
    got = []

    class WithInfo(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2, "info", x  # x returned as is

        @staticmethod
        def backward(ctx, g0, g_info, g2):
            got.append((g_info, g2 is not None))
            return g0 * 2 + g2

    x = t([1.0, 2.0])
    y, info, same = WithInfo.apply(x)
    assert info == "info"
    # a returned input comes back as a new tensor with the Function's history; x is untouched
    assert same is not x and same.grad_fn is y.grad_fn and x.is_leaf and x.grad_fn is None
    np.testing.assert_array_equal(same.detach().numpy(), [1.0, 2.0])
    (y.sum() + 10 * same.sum()).backward()
    assert got == [(None, True)]
    np.testing.assert_allclose(x.grad.numpy(), [2 * 1 + 10, 2 * 1 + 10])


# ---------------------------------------------------------------- non-differentiable outputs

class SortWithIndices(Function):
    """(sorted values, argsort indices): the indices have no gradient."""

    received = []

    @staticmethod
    def forward(ctx, x, materialize=True):
        order = kiln.tensor(np.argsort(x.detach().numpy(), kind="stable"))
        ctx.mark_non_differentiable(order)
        ctx.set_materialize_grads(materialize)
        ctx.save_for_backward(order)
        ctx.n = x.shape[0]
        return x[order], order

    @staticmethod
    def backward(ctx, grad_values, grad_order):
        SortWithIndices.received.append(grad_order)
        (order,) = ctx.saved_tensors
        g = kiln.zeros(ctx.n, dtype=grad_values.dtype)
        g[order] = grad_values
        return g, None


def test_mark_non_differentiable_argsort():
    xv = np.array([0.3, -1.0, 2.0, 0.1])
    x = t(xv)
    values, order = SortWithIndices.apply(x)
    np.testing.assert_array_equal(order.numpy(), np.argsort(xv))
    np.testing.assert_array_equal(values.detach().numpy(), np.sort(xv))
    assert values.requires_grad and not order.requires_grad and order.grad_fn is None
    weights = np.array([1.0, 2.0, 3.0, 4.0])
    SortWithIndices.received.clear()
    (values * t(weights, False)).sum().backward()
    expected = np.zeros(4)
    expected[np.argsort(xv)] = weights
    np.testing.assert_array_equal(x.grad.numpy(), expected)
    (g_order,) = SortWithIndices.received  # the unused output's gradient arrives as zeros
    assert g_order.dtype == kiln.int64 and g_order.shape == (4,) and not g_order.numpy().any()
    assert kiln.autograd.gradcheck(lambda a: SortWithIndices.apply(a)[0], (t(xv),))


def test_set_materialize_grads_false_gives_none():
    x = t([2.0, 1.0])
    SortWithIndices.received.clear()
    values, _ = SortWithIndices.apply(x, False)
    values.sum().backward()
    assert SortWithIndices.received == [None]
    np.testing.assert_array_equal(x.grad.numpy(), [1.0, 1.0])


def test_non_differentiable_float_output_gets_zero_gradient():
    got = []

    class MeanAndCentered(Function):
        @staticmethod
        def forward(ctx, x):
            m = x.mean()
            ctx.mark_non_differentiable(m)
            return x - m, m

        @staticmethod
        def backward(ctx, g, g_mean):
            got.append(g_mean.numpy().copy())
            return g - g.mean()

    x = t([1.0, 2.0, 6.0])
    centered, m = MeanAndCentered.apply(x)
    assert not m.requires_grad and centered.requires_grad
    (centered * t([1.0, 0.0, 0.0], False)).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [2 / 3, -1 / 3, -1 / 3], rtol=1e-15)
    assert len(got) == 1 and got[0].shape == () and got[0] == 0.0


# ---------------------------------------------------------------- higher order

def test_double_backward_through_backward_written_in_kiln_ops():
    xv = np.array([0.5, -1.0, 2.0])
    x = t(xv)
    (g,) = kiln.autograd.grad(Cube.apply(x).sum(), x, create_graph=True)
    np.testing.assert_allclose(g.detach().numpy(), 3 * xv ** 2, rtol=1e-15)
    (gg,) = kiln.autograd.grad(g.sum(), x, create_graph=True)
    np.testing.assert_allclose(gg.detach().numpy(), 6 * xv, rtol=1e-15)
    (ggg,) = kiln.autograd.grad(gg.sum(), x)
    np.testing.assert_allclose(ggg.numpy(), [6.0, 6.0, 6.0], rtol=1e-15)
    assert kiln.autograd.gradgradcheck(Cube.apply, (t(rand([2, 2], 7)),))


def test_double_backward_through_a_saved_output():
    # exp's backward uses its saved output, whose history is this node again
    xv = np.array([0.2, -0.4])
    x = t(xv)
    (g,) = kiln.autograd.grad(MyExp.apply(x, 3.0).sum(), x, create_graph=True)
    (gg,) = kiln.autograd.grad(g.sum(), x)
    np.testing.assert_allclose(gg.numpy(), 3 * np.exp(xv), rtol=1e-14)
    assert kiln.autograd.gradgradcheck(lambda a, b: MyMul.apply(MyExp.apply(a), 2.0, b),
                                       (t(rand([3], 8)), t(rand([3], 9))))


class OnceExp(Function):
    @staticmethod
    def forward(ctx, x):
        y = x.exp()
        ctx.save_for_backward(y)
        return y

    @staticmethod
    @once_differentiable
    def backward(ctx, grad):
        (y,) = ctx.saved_tensors
        assert not kiln.is_grad_enabled()
        return grad * y


def test_once_differentiable_first_order_and_error_on_second():
    xv = np.array([0.1, 0.7])
    x = t(xv)
    y = OnceExp.apply(x)
    (g,) = kiln.autograd.grad((y * y).sum(), x, create_graph=True)
    np.testing.assert_allclose(g.detach().numpy(), 2 * np.exp(2 * xv), rtol=1e-14)
    assert g.grad_fn.name() == "DelayedErrorBackward"
    with pytest.raises(RuntimeError, match="differentiate twice a function that was marked with @once_differentiable"):
        g.sum().backward()
    # without create_graph it is an ordinary backward
    x2 = t(xv)
    (OnceExp.apply(x2) * 2).sum().backward()
    np.testing.assert_allclose(x2.grad.numpy(), 2 * np.exp(xv), rtol=1e-14)
    assert x2.grad.grad_fn is None


# ---------------------------------------------------------------- in-place forward

class AddOneInplace(Function):
    @staticmethod
    def forward(ctx, x):
        x.add_(1.0)
        ctx.mark_dirty(x)
        return x

    @staticmethod
    def backward(ctx, grad):
        return grad


def test_mark_dirty_rebases_history():
    a = t([1.0, 2.0])
    x = a * 3
    v = x._version
    y = AddOneInplace.apply(x)
    assert y is x and x.grad_fn.name() == "AddOneInplaceBackward" and x._version > v
    np.testing.assert_array_equal(x.detach().numpy(), [4.0, 7.0])
    (x * x).sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), [2 * 4.0 * 3, 2 * 7.0 * 3])


def test_mark_dirty_errors():
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        AddOneInplace.apply(t([1.0]))

    class NotReturned(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.mark_dirty(x)
            return x * 2

        @staticmethod
        def backward(ctx, grad):
            return grad

    with pytest.raises(RuntimeError, match="marked as dirty .* were not returned"):
        NotReturned.apply(t([1.0]) * 1)


def test_mark_dirty_of_a_view_is_not_supported():
    base = t([1.0, 2.0]) * 1
    with pytest.raises(NotImplementedError, match="mark_dirty.. of a view"):
        AddOneInplace.apply(base[0:1])


def test_saved_input_modified_after_forward_inplace_raises():
    a = t([1.0, 2.0])
    x = a * 1
    y = Cube.apply(x)
    x.add_(1.0)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()


def test_saved_output_modified_inplace_raises_like_builtin_ops():
    a = t([1.0, 2.0])
    y = MyExp.apply(a)
    y.mul_(2.0)
    with pytest.raises(RuntimeError, match="modified by an inplace operation") as custom:
        y.sum().backward()
    assert "output 0 of MyExpBackward" in str(custom.value)
    b = a.exp()
    b.mul_(2.0)
    with pytest.raises(RuntimeError, match="modified by an inplace operation") as builtin:
        b.sum().backward()
    assert str(custom.value).split(":")[0] == str(builtin.value).split(":")[0]


# ---------------------------------------------------------------- errors in backward

def make_function(backward, forward=lambda ctx, x, *rest: x * 2):
    return type("Custom", (Function,), {"forward": staticmethod(forward), "backward": staticmethod(backward)})


def test_wrong_number_of_gradients():
    too_many = make_function(lambda ctx, g: (g, g))
    with pytest.raises(RuntimeError, match=r"CustomBackward returned an incorrect number of gradients \(expected 1, got 2\)"):
        too_many.apply(t([1.0])).sum().backward()
    too_few = make_function(lambda ctx, g: g)
    with pytest.raises(RuntimeError, match=r"incorrect number of gradients \(expected 2, got 1\)"):
        too_few.apply(t([1.0]), t([1.0])).sum().backward()


def test_gradient_of_wrong_shape():
    wrong = make_function(lambda ctx, g: kiln.ones(4, dtype=F64))
    with pytest.raises(RuntimeError, match=r"CustomBackward returned an invalid gradient.*\[4\].*\[2, 3\]"):
        wrong.apply(t(np.ones((2, 3)))).sum().backward()


def test_gradient_for_non_tensor_input_and_non_tensor_gradient():
    for_scalar = make_function(lambda ctx, g: (g, kiln.ones(1, dtype=F64)))
    with pytest.raises(RuntimeError, match="different than None at position 2.*not a Tensor"):
        for_scalar.apply(t([1.0]), 3.0).sum().backward()
    not_a_tensor = make_function(lambda ctx, g: 1.5)
    with pytest.raises(RuntimeError, match="returned a gradient of type float"):
        not_a_tensor.apply(t([1.0])).sum().backward()


def test_python_exception_in_backward_propagates():
    raising = make_function(lambda ctx, g: 1 / 0)
    x = t([1.0])
    with pytest.raises(ZeroDivisionError):
        raising.apply(x).sum().backward()
    assert x.grad is None


def test_save_for_backward_rejects_non_tensors_and_base_methods_raise():
    def forward(ctx, x):
        ctx.save_for_backward(x, 3)
        return x * 1

    with pytest.raises(TypeError, match="argument 1 is of type int"):
        make_function(lambda ctx, g: g, forward).apply(t([1.0]))

    class NoBackward(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 1

    with pytest.raises(NotImplementedError, match="backward"):
        NoBackward.apply(t([1.0])).sum().backward()


# ---------------------------------------------------------------- in a training loop

class CustomTanh(Function):
    @staticmethod
    def forward(ctx, x):
        y = x.tanh()
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad):
        (y,) = ctx.saved_tensors
        return grad * (1 - y * y)


def test_training_loop_with_linear_matches_builtin_tanh():
    kiln.manual_seed(0)
    net = nn.Sequential(nn.Linear(3, 8, dtype=F64), nn.Tanh(), nn.Linear(8, 1, dtype=F64))
    custom = copy.deepcopy(net)
    rng = np.random.default_rng(4)
    xs = kiln.tensor(rng.normal(size=(16, 3)))
    target = kiln.tensor(np.sin(xs.numpy().sum(1, keepdims=True)))

    def custom_forward(x):
        return custom[2](CustomTanh.apply(custom[0](x)))

    opt_ref = kiln.optim.SGD(net.parameters(), lr=0.1)
    opt = kiln.optim.SGD(custom.parameters(), lr=0.1)
    losses = []
    for _ in range(30):
        for model, o in ((net, opt_ref), (custom_forward, opt)):
            o.zero_grad()
            loss = ((model(xs) - target) ** 2).mean()
            loss.backward()
            o.step()
            losses.append(loss.item())
    ref_losses, custom_losses = losses[0::2], losses[1::2]
    np.testing.assert_allclose(custom_losses, ref_losses, rtol=1e-12)
    assert custom_losses[-1] < 0.5 * custom_losses[0]
    for p, q in zip(net.parameters(), custom.parameters()):
        np.testing.assert_allclose(q.detach().numpy(), p.detach().numpy(), rtol=1e-12)


# ---------------------------------------------------------------- memory

def test_graph_with_saved_output_is_freed_without_gc():
    base = _live()
    x = t([0.1, 0.2])
    y = MyExp.apply(x)
    ctx_ref, y_ref = weakref.ref(y.grad_fn), weakref.ref(y)
    y.sum().backward()
    gc.disable()
    try:
        del y  # no cycle: the saved output does not hold the node
        assert ctx_ref() is None and y_ref() is None
    finally:
        gc.enable()
    del x
    assert _live() == base


def test_graph_dropped_without_backward_is_freed():
    base = _live()
    x = t([0.1, 0.2])
    y = MyMul.apply(MyExp.apply(x), 2.0, x)
    ctx_ref = weakref.ref(y.grad_fn)
    del x, y
    assert ctx_ref() is None and _live() == base


def test_ctx_attribute_holding_the_output_is_collected():
    class KeepsOutput(Function):
        @staticmethod
        def forward(ctx, x):
            y = x * 2
            ctx.out = y  # ctx -> y -> grad_fn -> ctx: a cycle the garbage collector must see
            return y

        @staticmethod
        def backward(ctx, grad):
            return grad * 2

    base = _live()
    x = t([1.0])
    y = KeepsOutput.apply(x)
    assert y.grad_fn.out is y
    ctx_ref, y_ref = weakref.ref(y.grad_fn), weakref.ref(y)
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [2.0])
    del x, y
    gc.collect()
    assert ctx_ref() is None and y_ref() is None and _live() == base


def test_no_leak_after_double_backward_and_once_differentiable():
    base = _live()
    x = t([0.3, 0.4])
    (g,) = kiln.autograd.grad(Cube.apply(x).sum(), x, create_graph=True)
    g.sum().backward()
    y = OnceExp.apply(x)
    (h,) = kiln.autograd.grad((y * y).sum(), x, create_graph=True)
    del x, g, y, h
    assert _live() == base


def test_ctx_outliving_its_graph():
    x = t([1.0])
    y = MyExp.apply(x)
    ctx = y.grad_fn
    assert len(ctx.next_functions) == 1
    del y  # frees the node and its saved tensors; the ctx itself stays usable
    assert ctx.next_functions == () and ctx.scale == 1.0
    with pytest.raises(RuntimeError, match="graph was freed"):
        ctx.saved_tensors


def test_exports():
    with pytest.raises(RuntimeError, match="Legacy autograd function"):
        MyExp()(t([1.0]))
    assert kiln.autograd.Function is kiln.autograd.function.Function
    assert kiln.autograd.function.FunctionCtx is FunctionCtx
    assert kiln.autograd.function.once_differentiable is once_differentiable
    assert "Function" in kiln.autograd.__all__
