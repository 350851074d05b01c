"""Paths kiln takes for speed, checked against torch's results and errors: adaptive_avg_pool2d to
1 x 1 as the mean over the last two dims (torch's composite), tril/triu zeroing one span per row, cat
moving contiguous blocks, nearest interpolation as one gather, flat unique by hashing, and
batch_norm's fused training kernel with its fused gradient."""
import numpy as np
import pytest
import torch

import kiln


@pytest.mark.parametrize("shape", [(8, 16, 13, 11), (3, 7, 7), (4, 4), (2, 3, 1, 1)])
def test_global_adaptive_avg_pool_is_torchs_mean(shape):
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    g = np.random.default_rng(1).standard_normal(shape[:-2] + (1, 1)).astype(np.float32)
    out = []
    for lib in (kiln, torch):
        X = lib.tensor(x, requires_grad=True)
        y = lib.nn.functional.adaptive_avg_pool2d(X, 1)  # a 2-D input too: torch's mean takes it
        y.backward(lib.tensor(g))
        out.append((y.detach().numpy(), X.grad.numpy()))
    np.testing.assert_array_equal(out[0][0], out[1][0])
    np.testing.assert_array_equal(out[0][1], out[1][1])


def test_global_adaptive_avg_pool_of_integers_raises_means_error():
    for lib in (kiln, torch):
        with pytest.raises(RuntimeError, match="could not infer output dtype"):
            lib.nn.functional.adaptive_avg_pool2d(lib.zeros(1, 2, 4, 4, dtype=lib.int64), 1)


def test_other_adaptive_sizes_still_check_the_input():
    for lib in (kiln, torch):
        with pytest.raises(RuntimeError, match="3D or 4D"):
            lib.nn.functional.adaptive_avg_pool2d(lib.zeros(4, 4), 2)


@pytest.mark.parametrize("diagonal", [0, 1, -1, 3, -3, 7, -7, 100, -100, 2**62, -(2**62)])
@pytest.mark.parametrize("shape", [(5, 7), (7, 5), (2, 3, 4, 6)])
def test_tril_triu_zero_one_span_per_row(shape, diagonal):
    x = np.random.default_rng(2).standard_normal(shape).astype(np.float32)
    for op in ("tril", "triu"):
        got = getattr(kiln.from_numpy(x), op)(diagonal).numpy()
        want = getattr(torch.from_numpy(x), op)(diagonal).numpy()
        np.testing.assert_array_equal(got, want, err_msg=f"{op} {diagonal}")
        t = kiln.from_numpy(x.copy()).transpose(-1, -2)  # strided rows
        np.testing.assert_array_equal(getattr(t, op)(diagonal).numpy(),
                                      getattr(torch.from_numpy(x.copy()).transpose(-1, -2), op)(diagonal).numpy())


@pytest.mark.parametrize("dim", [0, 1, 2, -1])
def test_cat_of_contiguous_parts_moves_blocks(dim):
    """Contiguous parts of the result's dtype are copied a block at a time; mixed dtypes, strided
    parts and 1-D empty parts take the general path: all agree with torch."""
    rng = np.random.default_rng(3)
    shapes = [[2, 3, 4], [2, 3, 4], [2, 3, 4]]
    for s, n in zip(shapes, (1, 2, 3)):
        s[dim] = n
    parts = [rng.standard_normal(s).astype(np.float32) for s in shapes]
    for lib_parts in ([p for p in parts], [parts[0], parts[1].astype(np.float64), parts[2]]):
        got = kiln.cat([kiln.from_numpy(p) for p in lib_parts], dim).numpy()
        want = torch.cat([torch.from_numpy(p) for p in lib_parts], dim).numpy()
        np.testing.assert_array_equal(got, want)
    strided = kiln.from_numpy(parts[0]).transpose(0, 1).contiguous().transpose(0, 1)
    np.testing.assert_array_equal(kiln.cat([strided, kiln.from_numpy(parts[1])], dim).numpy(),
                                  torch.cat([torch.from_numpy(parts[0]), torch.from_numpy(parts[1])], dim).numpy())
    np.testing.assert_array_equal(kiln.stack([kiln.from_numpy(p[..., :1]) for p in parts[:1] * 4], dim).numpy(),
                                  torch.stack([torch.from_numpy(p[..., :1]) for p in parts[:1] * 4], dim).numpy())


def test_cat_into_out_sharing_the_inputs_storage():
    """An out= in the same storage as the parts (here disjoint from them) takes the general path."""
    base = np.arange(12, dtype=np.float32)
    k, t = kiln.from_numpy(base.copy()), torch.from_numpy(base.copy())
    kiln.cat([k[:3], k[3:6]], out=k[6:])
    torch.cat([t[:3], t[3:6]], out=t[6:])
    np.testing.assert_array_equal(k.numpy(), t.numpy())


@pytest.mark.parametrize("mode", ["nearest", "nearest-exact"])
@pytest.mark.parametrize("shape,kw", [((2, 3, 5, 7), dict(scale_factor=2)), ((2, 3, 5, 7), dict(size=(3, 11))),
                                      ((2, 3, 9), dict(scale_factor=1.7)), ((1, 2, 3, 4, 5), dict(size=(5, 2, 7))),
                                      ((2, 3, 5, 7), dict(scale_factor=(0.5, 3.0)))])
def test_nearest_interpolation_copies_each_source(mode, shape, kw):
    """One pass copying each output's source element: values, -0.0 and NaN as torch's."""
    x = np.random.default_rng(4).standard_normal(shape).astype(np.float32)
    x.flat[::5] = -0.0
    x.flat[::7] = np.nan
    got = kiln.nn.functional.interpolate(kiln.from_numpy(x), mode=mode, **kw).numpy()
    want = torch.nn.functional.interpolate(torch.from_numpy(x), mode=mode, **kw).numpy()
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(np.signbit(got), np.signbit(want))


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64, np.int8, np.uint8, np.bool_])
def test_flat_unique_by_hashing_is_torchs(dtype):
    """Sorted flat unique finds each distinct value's first element by hashing: values, inverse and
    counts as torch's for many repeats, signed zeros merged (the first kept)."""
    rng = np.random.default_rng(5)
    x = (rng.integers(-20, 20, 5000) / 4).astype(dtype)
    if dtype in (np.float32, np.float64):
        x[::13] = -0.0
    got = kiln.unique(kiln.from_numpy(x), return_inverse=True, return_counts=True)
    want = torch.unique(torch.from_numpy(x), return_inverse=True, return_counts=True)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g.numpy(), w.numpy())
    np.testing.assert_array_equal(np.signbit(got[0].numpy()), np.signbit(want[0].numpy()))


def test_flat_unique_nans_each_their_own_group_last():
    """torch 2.x: NaNs never compare equal, so each is its own value, after every number."""
    x = np.array([np.nan, 1.0, np.nan, -1.0, 1.0], dtype=np.float32)
    values, inverse, counts = kiln.unique(kiln.from_numpy(x), return_inverse=True, return_counts=True)
    np.testing.assert_array_equal(values.numpy(), [-1.0, 1.0, np.nan, np.nan])
    np.testing.assert_array_equal(inverse.numpy(), [2, 1, 3, 0, 1])
    np.testing.assert_array_equal(counts.numpy(), [1, 2, 1, 1])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(8, 3, 5, 5), (2, 5, 7), (16, 64, 9, 9), (1, 2, 3, 4, 5), (3, 6, 1, 2)])
@pytest.mark.parametrize("affine", [True, False])
def test_batch_norm_training_kernel_is_torchs(dtype, shape, affine):
    """The fused training pass and its fused backward: output, running statistics and every gradient
    bit for bit as torch's contiguous kernels (sums in double in its order, per-image vector sums in
    the backward)."""
    rng = np.random.default_rng(6)
    x = (rng.standard_normal(shape) * 3 + 1).astype(dtype)
    c = shape[1]
    w, b = rng.standard_normal(c).astype(dtype), rng.standard_normal(c).astype(dtype)
    g = rng.standard_normal(shape).astype(dtype)
    res = []
    for lib in (kiln, torch):
        X = lib.tensor(x, requires_grad=True)
        W, B = (lib.tensor(w, requires_grad=True), lib.tensor(b, requires_grad=True)) if affine else (None, None)
        rm, rv = lib.zeros(c, dtype=X.dtype), lib.ones(c, dtype=X.dtype)
        y = lib.nn.functional.batch_norm(X, rm, rv, W, B, training=True, momentum=0.1, eps=1e-5)
        y.backward(lib.tensor(g))
        res.append([y.detach().numpy(), rm.numpy(), rv.numpy(), X.grad.numpy()] +
                   ([W.grad.numpy(), B.grad.numpy()] if affine else []))
    for got, want in zip(res[0], res[1]):
        np.testing.assert_array_equal(got, want)


def test_batch_norm_training_second_derivative_is_torchs():
    x = np.random.default_rng(7).standard_normal((4, 3, 5))
    out = []
    for lib in (kiln, torch):
        X = lib.tensor(x, requires_grad=True)
        W = lib.tensor(np.array([0.5, 1.5, -2.0]), requires_grad=True)
        y = lib.nn.functional.batch_norm(X, None, None, W, None, training=True)
        gx, gw = lib.autograd.grad((y ** 3).sum(), (X, W), create_graph=True)
        gg = lib.autograd.grad((gx ** 2).sum() + (gw ** 2).sum(), (X, W))
        out.append([t.detach().numpy() for t in (gx, gw) + tuple(gg)])
    for got, want in zip(*out):
        np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-9)


def test_batch_norm_constant_channel_without_eps():
    """eps = 0 and a constant channel: torch's InvStd is 0 there, so the output is the bias."""
    x = np.ones((4, 2, 3), dtype=np.float32)
    x[:, 1] = np.arange(12, dtype=np.float32).reshape(4, 3)
    got = kiln.nn.functional.batch_norm(kiln.from_numpy(x), None, None, kiln.ones(2), kiln.full((2,), 0.5),
                                        training=True, eps=0.0).numpy()
    want = torch.nn.functional.batch_norm(torch.from_numpy(x), None, None, torch.ones(2), torch.full((2,), 0.5),
                                          training=True, eps=0.0).numpy()
    np.testing.assert_array_equal(got, want)


def test_batch_norm_training_of_an_empty_batch_gives_zero_parameter_gradients():
    grads = []
    for lib in (kiln, torch):
        x = lib.zeros(0, 3, 2, requires_grad=True)
        w, b = lib.ones(3, requires_grad=True), lib.zeros(3, requires_grad=True)
        lib.nn.functional.batch_norm(x, None, None, w, b, training=True).sum().backward()
        grads.append((w.grad.numpy(), b.grad.numpy()))
    for got, want in zip(*grads):
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64, np.int16])
def test_flat_unique_with_many_distinct_values_is_torchs(dtype):
    """Thousands of distinct values (the hash table grows several times), whole numbers in a float
    dtype too (they differ only in exponent and high mantissa bits)."""
    x = np.random.default_rng(8).integers(-3000, 3000, 40000).astype(dtype)
    got = kiln.unique(kiln.from_numpy(x), return_inverse=True, return_counts=True)
    want = torch.unique(torch.from_numpy(x), return_inverse=True, return_counts=True)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g.numpy(), w.numpy())
