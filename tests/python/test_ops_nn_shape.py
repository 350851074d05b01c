"""softmax, log_softmax, nll_loss and the composites t, reshape, flatten, matmul,
against NumPy; gradients by gradcheck (float64)."""
import numpy as np
import pytest

import kiln
from kiln.autograd import gradcheck, gradgradcheck

F64 = kiln.float64


def np_log_softmax(x, axis):
    m = x.max(axis=axis, keepdims=True)
    return x - m - np.log(np.exp(x - m).sum(axis=axis, keepdims=True))


@pytest.mark.parametrize("dtype", [kiln.float32, kiln.float64], ids=str)
@pytest.mark.parametrize("shape,dim", [((5,), 0), ((3, 4), 1), ((3, 4), 0), ((2, 3, 4), 1), ((2, 3, 4), -1), ((0, 3), 1)])
def test_softmax_and_log_softmax(dtype, shape, dim):
    rng = np.random.default_rng(0)
    a = (rng.standard_normal(shape) * 5).astype(np.float32 if dtype == kiln.float32 else np.float64)
    rtol = 1e-5 if dtype == kiln.float32 else 1e-12
    ls = np_log_softmax(a, dim)
    np.testing.assert_allclose(kiln.log_softmax(kiln.tensor(a), dim).numpy(), ls, rtol=rtol, atol=rtol)
    np.testing.assert_allclose(kiln.tensor(a).softmax(dim).numpy(), np.exp(ls), rtol=rtol, atol=rtol)
    if a.ndim == 2:  # non-contiguous input
        t = kiln.transpose(kiln.tensor(np.ascontiguousarray(a.T)), 0, 1)
        np.testing.assert_allclose(kiln.log_softmax(t, dim).numpy(), ls, rtol=rtol, atol=rtol)


def test_log_softmax_is_stable_for_large_values():
    x = kiln.tensor([[1000.0, 0.0, -1000.0]])
    out = kiln.log_softmax(x, 1).numpy()
    assert np.isfinite(out).all()
    np.testing.assert_allclose(out, [[0.0, -1000.0, -2000.0]], rtol=1e-6)
    np.testing.assert_allclose(kiln.softmax(x, 1).numpy(), [[1.0, 0.0, 0.0]])


def test_softmax_int_input_needs_dtype():
    with pytest.raises(RuntimeError, match="floating point"):
        kiln.softmax(kiln.arange(3), 0)
    np.testing.assert_allclose(kiln.softmax(kiln.arange(3), 0, dtype=F64).numpy(),
                               np.exp(np_log_softmax(np.arange(3.0), 0)))


def nll_reference(logp, target, weight=None, reduction="mean", ignore_index=-100):
    w = np.ones(logp.shape[1]) if weight is None else weight
    keep = target != ignore_index
    idx = np.where(keep, target, 0)
    per = np.where(keep, -w[idx] * logp[np.arange(len(target)), idx], 0.0)
    if reduction == "none":
        return per
    if reduction == "sum":
        return per.sum()
    return per.sum() / np.where(keep, w[idx], 0.0).sum()


@pytest.mark.parametrize("reduction,code", [("none", 0), ("mean", 1), ("sum", 2)])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("ignore", [False, True])
def test_nll_loss(reduction, code, weighted, ignore):
    rng = np.random.default_rng(1)
    logp = np_log_softmax(rng.standard_normal((6, 4)), 1)
    target = np.array([0, 3, 1, 1, 2, 3])
    ignore_index = 1 if ignore else -100
    weight = rng.uniform(0.5, 2, 4) if weighted else None
    out = kiln.nll_loss(kiln.tensor(logp), kiln.tensor(target), kiln.tensor(weight) if weighted else None, code,
                        ignore_index)
    np.testing.assert_allclose(out.numpy(), nll_reference(logp, target, weight, reduction, ignore_index), rtol=1e-12)
    x = kiln.tensor(logp, requires_grad=True)
    w = kiln.tensor(weight) if weighted else None
    fn = lambda a: kiln.nll_loss(a, kiln.tensor(target), w, code, ignore_index)  # noqa: E731
    assert gradcheck(fn, (x,), eps=1e-6, atol=1e-5, rtol=1e-3)
    assert gradgradcheck(fn, (x,), eps=1e-6, atol=1e-5, rtol=1e-3)


def test_nll_loss_errors():
    x = kiln.zeros(2, 3)
    with pytest.raises(IndexError, match="out of bounds"):
        kiln.nll_loss(x, kiln.tensor([0, 3]))
    with pytest.raises(IndexError, match="out of bounds"):
        kiln.nll_loss(x, kiln.tensor([-2, 0]))
    with pytest.raises(RuntimeError, match="expected target of shape"):
        kiln.nll_loss(x, kiln.tensor([0, 1, 2]))
    with pytest.raises(RuntimeError, match="integer dtype"):
        kiln.nll_loss(x, kiln.tensor([0.0, 1.0]))
    with pytest.raises(RuntimeError, match="1D or 2D"):
        kiln.nll_loss(kiln.zeros(2, 3, 4), kiln.tensor([0, 1]))


@pytest.mark.parametrize("dim", [0, 1, -1])
def test_softmax_gradients(dim):
    x = kiln.tensor(np.random.default_rng(2).standard_normal((3, 4)), requires_grad=True)
    assert gradcheck(lambda a: kiln.softmax(a, dim), (x,))
    assert gradgradcheck(lambda a: kiln.log_softmax(a, dim), (x,))


def test_t_reshape_flatten():
    a = np.arange(24).reshape(2, 3, 4)
    t = kiln.tensor(a)
    np.testing.assert_array_equal(kiln.tensor(a[0]).t().numpy(), a[0].T)
    assert kiln.tensor([1, 2]).t().shape == (2,)
    with pytest.raises(RuntimeError, match="<= 2 dimensions"):
        t.t()
    r = t.reshape(6, -1)
    np.testing.assert_array_equal(r.numpy(), a.reshape(6, -1))
    r.view(-1)[0] = 100  # contiguous: reshape is a view
    assert t.numpy()[0, 0, 0] == 100
    tt = kiln.transpose(t, 0, 2)  # not viewable: reshape copies
    np.testing.assert_array_equal(tt.reshape(-1).numpy(), np.swapaxes(t.numpy(), 0, 2).reshape(-1))
    np.testing.assert_array_equal(t.flatten().numpy(), t.numpy().reshape(-1))
    np.testing.assert_array_equal(kiln.flatten(t, 1).numpy(), t.numpy().reshape(2, 12))
    np.testing.assert_array_equal(t.flatten(0, 1).numpy(), t.numpy().reshape(6, 4))
    with pytest.raises(RuntimeError, match="invalid for input of size"):
        t.reshape(5, 5)


@pytest.mark.parametrize("sa,sb", [((3,), (3,)), ((2, 3), (3, 4)), ((3,), (3, 4)), ((2, 3), (3,)), ((5, 2, 3), (3, 4))])
def test_matmul(sa, sb):
    rng = np.random.default_rng(3)
    a, b = rng.standard_normal(sa), rng.standard_normal(sb)
    np.testing.assert_allclose((kiln.tensor(a) @ kiln.tensor(b)).numpy(), a @ b, rtol=1e-12)
    x = kiln.tensor(a, requires_grad=True)
    y = kiln.tensor(b, requires_grad=True)
    assert gradcheck(kiln.matmul, (x, y))


def test_matmul_errors():
    with pytest.raises(RuntimeError, match="inconsistent tensor size"):
        kiln.ones(3) @ kiln.ones(4)
    with pytest.raises(RuntimeError, match="cannot be multiplied"):
        kiln.ones(2, 3) @ kiln.ones(2, 3)
    with pytest.raises(RuntimeError, match="at least 1D"):
        kiln.matmul(kiln.tensor(1.0), kiln.ones(2))


def test_argmax_argmin_refuse_bool():
    for name in ("argmax", "argmin"):  # torch has no bool kernel
        with pytest.raises(RuntimeError, match=f"{name}_cpu"):
            getattr(kiln, name)(kiln.tensor([True, False]))


@pytest.mark.parametrize("dtype", [kiln.int32, kiln.int64, kiln.float32, kiln.float64], ids=str)
@pytest.mark.parametrize("dim", [None, 0, 1, -1])
@pytest.mark.parametrize("keepdim", [False, True])
def test_argmax_argmin(dtype, dim, keepdim):
    rng = np.random.default_rng(4)
    a = rng.integers(0, 4, size=(3, 5))  # ties: the first index wins (as NumPy and torch)
    a = a.astype({kiln.bool: bool, kiln.int32: np.int32, kiln.int64: np.int64, kiln.float32: np.float32,
                  kiln.float64: np.float64}[dtype])
    t = kiln.transpose(kiln.tensor(np.ascontiguousarray(a.T)), 0, 1)  # non-contiguous input
    for name, ref in (("argmax", np.argmax), ("argmin", np.argmin)):
        out = getattr(t, name)(dim, keepdim) if dim is not None else getattr(kiln, name)(t, keepdim=keepdim)
        expected = ref(a, axis=dim)
        if keepdim:
            expected = np.expand_dims(expected, dim) if dim is not None else expected.reshape(1, 1)
        assert out.dtype == kiln.int64
        np.testing.assert_array_equal(out.numpy(), expected)


def test_argmax_nan_and_errors():
    assert kiln.tensor([1.0, float("nan"), 5.0]).argmax().item() == 1
    with pytest.raises(IndexError, match="non-zero size"):
        kiln.zeros(0).argmax()
    with pytest.raises(IndexError, match="Dimension out of range"):
        kiln.zeros(2, 3).argmax(2)
    x = kiln.ones(3, requires_grad=True)
    assert not x.argmax().requires_grad  # integer result: not differentiable
