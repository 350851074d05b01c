"""The fast paths of conv2d (im2col runs, output written by per-image GEMMs), max_pool2d (windows
inside the input, taken tap by tap across a row) and sums that keep middle dims (a convolution's bias
gradient), against torch, including the cases they must leave to the general code."""
import numpy as np
import pytest
import torch

import kiln

POOLS = [((2, 3, 8, 8), 2, 2, 0, 1, False), ((2, 3, 9, 9), 3, 2, 1, 1, True), ((1, 2, 7, 7), 2, 1, 0, 2, False),
         ((2, 2, 5, 5), 2, 2, 0, 1, True), ((1, 1, 6, 6), 3, 3, 0, 1, False), ((1, 2, 6, 6), 3, 1, 1, 1, False)]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("geometry", POOLS, ids=str)
def test_max_pool2d_values_and_indices_with_nans_and_ties(geometry, dtype):
    shape, ks, st, pad, dil, ceil = geometry
    rng = np.random.default_rng(1)
    for _ in range(10):
        x = rng.standard_normal(shape)
        x.flat[rng.integers(0, x.size, 5)] = np.nan  # several NaNs in a window: torch keeps the last
        x.flat[rng.integers(0, x.size, 5)] = 1.0     # ties: the first
        t = torch.nn.functional.max_pool2d(torch.tensor(x).to(getattr(torch, dtype)), ks, st, pad, dil, ceil,
                                           return_indices=True)
        k = kiln.nn.functional.max_pool2d(kiln.tensor(x).to(getattr(kiln, dtype)), ks, st, pad, dil, ceil,
                                          return_indices=True)
        np.testing.assert_array_equal(k[0].numpy(), t[0].numpy())
        np.testing.assert_array_equal(k[1].numpy(), t[1].numpy())


CONVS = [((2, 3, 9, 9), (4, 3, 3, 3), 1, 1, 1, 1), ((2, 4, 9, 9), (4, 2, 3, 3), 2, 0, 1, 2),
         ((1, 2, 7, 7), (3, 2, 2, 3), 1, (0, 2), 2, 1), ((3, 1, 5, 5), (2, 1, 5, 5), 1, 2, 1, 1),
         ((2, 2, 6, 7), (2, 2, 3, 2), (2, 3), (1, 2), 1, 1)]


@pytest.mark.parametrize("geometry", CONVS, ids=str)
def test_conv2d_and_gradients(geometry):
    shape, w, st, pad, dil, g = geometry
    rng = np.random.default_rng(2)
    x, wt, b = (rng.standard_normal(s).astype(np.float32) for s in (shape, w, (w[0],)))
    res = []
    for lib in (torch, kiln):
        X, W, B = (lib.tensor(a, requires_grad=True) for a in (x, wt, b))
        y = lib.nn.functional.conv2d(X, W, B, st, pad, dil, g)
        (y * y).sum().backward()
        res.append([y.detach().numpy(), X.grad.numpy(), W.grad.numpy(), B.grad.numpy()])
    for got, want in zip(res[1], res[0]):
        np.testing.assert_allclose(got, want, rtol=2e-5, atol=2e-5)


SUMS = [((6, 5, 7, 8), (0, 2, 3)), ((3, 4, 5), (0, 2)), ((2, 3, 4, 5), (0, 3)), ((2, 3, 4, 5), (0, 1, 3)),
        ((5, 1, 3, 1), (0, 2)), ((0, 3, 4), (0, 2)), ((2, 3, 0), (0, 2))]


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16", "int64", "int32", "bool"])
@pytest.mark.parametrize("case", SUMS, ids=str)
def test_sum_keeping_middle_dims(case, dtype):
    shape, dims = case
    x = np.random.default_rng(3).standard_normal(shape) * 3
    k = kiln.tensor(x).to(getattr(kiln, dtype)).sum(dims)
    t = torch.tensor(x).to(getattr(torch, dtype)).sum(dims)
    assert str(k.dtype).split(".")[1] == str(t.dtype).split(".")[1] and tuple(k.shape) == tuple(t.shape)
    exact = torch.tensor(x).to(getattr(torch, dtype)).double().sum(dims).numpy()  # the inputs' exact sum
    if dtype in ("float16", "bfloat16", "float32"):
        # within torch's error plus the classic bound of a float sum, eps * sum |x| (cancellation can
        # leave either a few units in the last place from the exact sum) and the result's rounding
        eps = {"float16": 2.0 ** -10, "bfloat16": 2.0 ** -7, "float32": 2.0 ** -23}[dtype]
        rounded = torch.tensor(x).to(getattr(torch, dtype)).double()
        bound = eps * (rounded.abs().sum(dims).numpy() + np.abs(exact))
        err_k = np.abs(k.double().numpy() - exact)
        err_t = np.abs(t.double().numpy() - exact)
        assert np.all(err_k <= err_t + bound)
    elif dtype == "float64":
        np.testing.assert_allclose(k.numpy(), t.numpy(), rtol=1e-12)
    else:
        np.testing.assert_array_equal(k.numpy(), t.numpy())


@pytest.mark.parametrize("layout", ["expanded", "transposed", "sliced"])
def test_big_strided_sums_match_torch(layout):
    # a broadcast gradient summed back to a per-channel shape (autograd's sum_to) and other big
    # strided inputs: summed from a contiguous copy
    x = np.random.default_rng(4).standard_normal((16, 8, 12, 20)).astype(np.float32)

    def make(lib):
        t = lib.tensor(x)
        return {"expanded": t[:1].expand(16, 8, 12, 20), "transposed": t.transpose(1, 3),
                "sliced": t[:, :, ::2]}[layout]
    for dims in [(0, 2, 3), (0,), (1, 3), None]:
        k = make(kiln).sum(dims) if dims else make(kiln).sum()
        t = make(torch).sum(dims) if dims else make(torch).sum()
        np.testing.assert_allclose(k.numpy(), t.numpy(), rtol=1e-5, atol=1e-4)
