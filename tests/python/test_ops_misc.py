"""permute/T, all/any, isclose/allclose, eye, linspace, is_tensor, cuda.is_available."""
import numpy as np
import pytest

import kiln


def test_permute_and_T_are_views_matching_numpy():
    a = np.arange(24).reshape(2, 3, 4)
    t = kiln.tensor(a)
    p = t.permute(2, 0, 1)
    np.testing.assert_array_equal(p.numpy(), np.transpose(a, (2, 0, 1)))
    assert p.stride() == (1, 12, 4) and p.data_ptr() == t.data_ptr()
    np.testing.assert_array_equal(kiln.permute(t, [-1, 0, 1]).numpy(), np.transpose(a, (2, 0, 1)))
    np.testing.assert_array_equal(t.T.numpy(), a.T)
    np.testing.assert_array_equal(t.mT.numpy(), np.swapaxes(a, -1, -2))
    with pytest.raises(RuntimeError, match="number of dims don't match"):
        t.permute(0, 1)
    with pytest.raises(RuntimeError, match="repeated dim"):
        t.permute(0, 0, 1)
    with pytest.raises(IndexError, match="Dimension out of range"):
        t.permute(0, 1, 3)


@pytest.mark.parametrize("dtype", [kiln.bool, kiln.int32, kiln.int64, kiln.float32, kiln.float64], ids=str)
def test_all_any_match_numpy(dtype):
    a = np.random.default_rng(0).integers(0, 2, size=(3, 4)).astype(bool)
    a[0] = True
    t = kiln.tensor(a).to(dtype)
    assert t.all().item() == a.all() and t.any().item() == a.any()
    for dim in (0, 1, -1):
        np.testing.assert_array_equal(t.all(dim).numpy(), a.all(axis=dim))
        np.testing.assert_array_equal(kiln.any(t, dim, True).numpy(), a.any(axis=dim, keepdims=True))
    assert kiln.zeros(0).all().item() is True and kiln.zeros(0).any().item() is False
    nc = kiln.transpose(kiln.tensor(np.ascontiguousarray(a.T)), 0, 1)
    np.testing.assert_array_equal(nc.all(1).numpy(), a.all(axis=1))


def test_isclose_allclose():
    a = kiln.tensor([1.0, 1e10, float("inf"), float("nan"), 0.0])
    b = kiln.tensor([1.0 + 1e-6, 1.00001e10, float("inf"), float("nan"), 1e-7])
    expected = np.isclose(a.numpy(), b.numpy())
    np.testing.assert_array_equal(kiln.isclose(a, b).numpy(), expected)
    np.testing.assert_array_equal(a.isclose(b, equal_nan=True).numpy(), np.isclose(a.numpy(), b.numpy(), equal_nan=True))
    assert kiln.allclose(kiln.ones(3), kiln.ones(3) + 1e-9) is True
    assert kiln.allclose(kiln.ones(3), kiln.zeros(3)) is False
    assert kiln.allclose(kiln.ones(3), kiln.ones(3) * 1.01, rtol=0.02)
    with pytest.raises(RuntimeError, match="same dtype"):
        kiln.isclose(kiln.ones(2), kiln.ones(2, dtype=kiln.float64))


def test_eye_and_linspace():
    np.testing.assert_array_equal(kiln.eye(3).numpy(), np.eye(3))
    np.testing.assert_array_equal(kiln.eye(2, 4, dtype=kiln.int64).numpy(), np.eye(2, 4, dtype=np.int64))
    assert kiln.eye(0).shape == (0, 0)
    np.testing.assert_allclose(kiln.linspace(-1, 2, 7, dtype=kiln.float64).numpy(), np.linspace(-1, 2, 7), rtol=1e-15)
    assert kiln.linspace(0, 1, 5)[-1].item() == 1.0
    assert kiln.linspace(3, 5, 1).tolist() == [3.0] and kiln.linspace(0, 1, 0).shape == (0,)
    assert kiln.eye(2, requires_grad=True).requires_grad
    with pytest.raises(RuntimeError, match="non-negative"):
        kiln.linspace(0, 1, -1)
    with pytest.raises(RuntimeError, match="non-negative"):
        kiln.eye(-2)


def test_module_helpers():
    assert kiln.is_tensor(kiln.ones(1)) and not kiln.is_tensor(1.0)
    assert kiln.cuda.is_available() is False


@pytest.mark.parametrize("dtype", [kiln.int32, kiln.int64, kiln.float32, kiln.float64], ids=str)
def test_amax_amin_max_min(dtype):
    a = np.random.default_rng(6).integers(-9, 9, size=(2, 3, 4)).astype(
        {kiln.int32: np.int32, kiln.int64: np.int64, kiln.float32: np.float32, kiln.float64: np.float64}[dtype])
    t = kiln.permute(kiln.tensor(np.ascontiguousarray(np.transpose(a, (2, 0, 1)))), [1, 2, 0])  # non-contiguous
    for dim in ((), 0, -1, (0, 2)):
        for keepdim in (False, True):
            axis = None if dim == () else dim
            np.testing.assert_array_equal(t.amax(dim, keepdim).numpy(), a.max(axis=axis, keepdims=keepdim))
            np.testing.assert_array_equal(kiln.amin(t, dim, keepdim).numpy(), a.min(axis=axis, keepdims=keepdim))
    assert t.max().item() == a.max() and kiln.min(t).item() == a.min()


def test_extremum_nan_ties_and_errors():
    assert np.isnan(kiln.tensor([1.0, float("nan"), 3.0]).max().item())
    x = kiln.tensor([1.0, 3.0, 3.0, 2.0], requires_grad=True)
    x.max().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [0, 0.5, 0.5, 0])  # ties share the gradient
    with pytest.raises(RuntimeError, match="numel\\(\\) == 0"):
        kiln.zeros(0).max()
    with pytest.raises(IndexError, match="non-zero size"):  # as torch
        kiln.zeros(0, 3).amax(0)


def test_squeeze_all():
    t = kiln.zeros(1, 3, 1, 2)
    s = t.squeeze()
    assert s.shape == (3, 2) and s.data_ptr() == t.data_ptr()
    assert kiln.squeeze(kiln.zeros(1)).shape == ()


def test_writes_that_would_read_overwritten_values_are_refused():
    a = kiln.arange(5.0)
    with pytest.raises(RuntimeError, match="refer to a single memory location"):
        a[1:] = a[:-1]
    with pytest.raises(RuntimeError, match="refer to a single memory location"):
        a[1:].mul_(a[:-1])
    sq = kiln.arange(4.0).reshape(2, 2)
    with pytest.raises(RuntimeError, match="refer to a single memory location"):
        sq += sq.t()  # same memory, other layout
    np.testing.assert_array_equal(a.numpy(), [0.0, 1.0, 2.0, 3.0, 4.0])  # untouched
    # Same elements, or disjoint interleaved ones (two columns), are fine.
    a.add_(a)
    np.testing.assert_array_equal(a.numpy(), [0.0, 2.0, 4.0, 6.0, 8.0])
    x = kiln.arange(6.0).view(2, 3)
    x[:, 0] += x[:, 1]
    np.testing.assert_array_equal(x.numpy(), [[1.0, 1.0, 2.0], [7.0, 4.0, 5.0]])
    with pytest.raises(RuntimeError, match="more than one element of the written-to tensor"):
        kiln.zeros(1).expand(3).add_(1)


def test_out_that_is_also_an_input_is_refused_where_it_would_be_read_after_writing():
    # Found by the fuzzer: prod(x, 1, out=x) resized x before reading it (a heap overflow).
    x = kiln.ones(3, 4)
    for call in (lambda: kiln.prod(x, 1, out=x), lambda: kiln.sum(x, 0, out=x),
                 lambda: kiln.mm(x[:, :3], x[:3], out=x), lambda: kiln.add(x[0], x, out=x[0])):
        with pytest.raises(RuntimeError, match="out= tensor shares memory with an input"):
            call()
    np.testing.assert_array_equal(x.numpy(), np.ones((3, 4)))
    kiln.add(x, x, out=x)  # same shape, element by element: fine
    np.testing.assert_array_equal(x.numpy(), np.full((3, 4), 2.0))


def test_isclose_is_torchs_composition():
    # torch computes |a - b| <= atol + |rtol * b| in the tensors' dtype (float32 rounding included),
    # integers and bool in the default dtype after an exact equality test: compare edge cases.
    torch = pytest.importorskip("torch")
    cases = [
        ([2 ** 40, 5, -7], [2 ** 40 + 1, 5, -8], "int64", dict(rtol=0, atol=0.5)),
        ([2 ** 40, 5, -7], [2 ** 40 + 1, 5, -8], "int64", dict(rtol=0, atol=0)),
        ([100, 2 ** 31 - 1], [-2 ** 31 + 100, 2 ** 31 - 2], "int32", dict(atol=10)),
        ([True, False, True], [True, True, False], "bool", dict(atol=1)),
        ([3e38, 1e-45, float("inf"), 1.0, float("nan"), 1e10], [-3e38, 0.0, float("inf"), 1.0000001, float("nan"),
                                                               1.00001e10], "float32", dict(equal_nan=True)),
        ([1.0, 0.0, 1e-3], [1.001, 1e-8, 1.1e-3], "float16", dict(rtol=1e-3, atol=1e-8)),
        ([1.0, 2.0], [1.0 + 1e-12, 2.0 + 1e-8], "float64", dict(rtol=1e-9, atol=0)),
    ]
    for a, b, dtype, kwargs in cases:
        got = kiln.isclose(kiln.tensor(a, dtype=getattr(kiln, dtype)), kiln.tensor(b, dtype=getattr(kiln, dtype)), **kwargs)
        want = torch.isclose(torch.tensor(a, dtype=getattr(torch, dtype)), torch.tensor(b, dtype=getattr(torch, dtype)),
                             **kwargs)
        assert got.dtype == kiln.bool and got.tolist() == want.tolist(), (a, b, dtype, kwargs)
    with pytest.raises(RuntimeError, match=r"doesn't match the broadcast shape \[2, 3\]"):
        kiln.isclose(kiln.ones(1), kiln.ones(2, 3), equal_nan=True)
    with pytest.raises(RuntimeError, match="non-negative"):
        kiln.isclose(kiln.ones(1), kiln.ones(1), rtol=-1)
