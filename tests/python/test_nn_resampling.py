"""F.interpolate (antialias too) / nn.Upsample*, pixel_shuffle, fold/unfold, affine_grid and grid_sample
(4-D and 5-D) against torch (Debian's 1.13, whose CPU kernels are the oracle, quirks included; its Python
rules match torch 2.x's except where noted), forward and backward in float64."""
import warnings

import numpy as np
import pytest

import kiln
import kiln.nn.functional as F

torch = pytest.importorskip("torch")
TF = torch.nn.functional


def _pair(shape, seed=0):
    a = np.random.default_rng(seed).uniform(-2, 2, size=shape)
    return kiln.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)


def _check(kfn, tfn, *shapes, atol=1e-10):
    """Runs both on the same float64 inputs; compares outputs and the gradients of sum(out * w)."""
    ks, ts = zip(*[_pair(s, i) for i, s in enumerate(shapes)])
    ko, to = kfn(*ks), tfn(*ts)
    assert tuple(ko.shape) == tuple(to.shape)
    np.testing.assert_allclose(ko.detach().numpy(), to.detach().numpy(), atol=atol, rtol=1e-9)
    w = np.random.default_rng(7).uniform(-1, 1, size=tuple(to.shape))
    (ko * kiln.tensor(w)).sum().backward()
    (to * torch.tensor(w)).sum().backward()
    for k, t in zip(ks, ts):
        np.testing.assert_allclose(k.grad.numpy(), t.grad.numpy(), atol=atol, rtol=1e-9)


INTERP = [
    ((2, 3, 5), dict(size=9, mode="nearest")), ((2, 3, 5), dict(scale_factor=1.7, mode="nearest")),
    ((2, 3, 7), dict(scale_factor=0.6, mode="nearest-exact")), ((1, 2, 5), dict(size=8, mode="linear")),
    ((1, 2, 5), dict(scale_factor=2.5, mode="linear", align_corners=True)),
    ((1, 2, 4, 5), dict(size=(7, 3), mode="nearest")), ((1, 2, 4, 5), dict(scale_factor=(2, 1.5), mode="nearest-exact")),
    ((1, 2, 4, 5), dict(scale_factor=1.7, mode="bilinear")),
    ((1, 2, 4, 5), dict(scale_factor=1.7, mode="bilinear", recompute_scale_factor=True)),
    ((1, 2, 4, 5), dict(size=(9, 2), mode="bilinear", align_corners=True)),
    ((1, 2, 4, 5), dict(scale_factor=2.3, mode="bicubic")), ((1, 2, 6, 5), dict(size=(3, 8), mode="bicubic", align_corners=True)),
    ((1, 2, 6, 4), dict(size=(3, 2), mode="area")), ((1, 2, 6), dict(scale_factor=0.5, mode="area")),
    ((2, 1, 5, 6, 4), dict(size=(2, 4, 3), mode="area")), ((1, 2, 5, 6, 4), dict(scale_factor=(0.5, 1.7, 1), mode="area")),
    ((1, 1, 3, 4, 2), dict(size=(5, 2, 3), mode="nearest")), ((1, 1, 3, 4, 2), dict(scale_factor=1.5, mode="trilinear")),
    ((1, 1, 3, 4, 2), dict(scale_factor=(0.7, 2, 1.2), mode="trilinear", align_corners=True)),
    ((1, 1, 3, 4, 2), dict(scale_factor=2.5, mode="nearest-exact")),
    # torch 1.13's nearest forward maps o -> floor(o / 1.1) even where the size is unchanged (5 * 1.1 -> 5);
    # its nearest backward and its bicubic backward treat that size as a copy instead
    ((2, 3, 5), dict(scale_factor=1.1, mode="nearest")), ((1, 2, 5, 7), dict(scale_factor=1.1, mode="nearest")),
    ((1, 2, 5, 7), dict(scale_factor=(2.1, 1.1), mode="nearest")),
    ((1, 2, 5, 7), dict(scale_factor=1.1, mode="bicubic")), ((1, 2, 5, 7), dict(scale_factor=(1.1, 0.5), mode="bicubic")),
    # one channel: the input is channels-last contiguous too, so torch's forward takes its channels-last
    # kernel, which has the copy and the halving (1-D input has no such kernel)
    ((2, 1, 5, 7), dict(scale_factor=1.1, mode="nearest")), ((1, 1, 3, 4, 2), dict(scale_factor=(1.2, 2.1, 1), mode="nearest")),
    ((1, 1, 5), dict(scale_factor=1.1, mode="nearest")),
]

# antialias=True (bilinear / bicubic on 4-D): downsampling widens the filter by the scale
AA = [dict(size=(3, 4)), dict(size=(2, 1)), dict(size=(17, 5)), dict(scale_factor=0.3), dict(scale_factor=(0.45, 2.5)),
      dict(scale_factor=0.3, recompute_scale_factor=True), dict(scale_factor=1.1), dict(scale_factor=(1.1, 0.5)),
      dict(size=(1, 1)), dict(size=(11, 9))]


@pytest.mark.parametrize("shape,kw", INTERP, ids=[f"{kw['mode']}-{i}" for i, (_, kw) in enumerate(INTERP)])
def test_interpolate_matches_torch(shape, kw):
    _check(lambda x: F.interpolate(x, **kw), lambda x: TF.interpolate(x, **kw), shape)


@pytest.mark.parametrize("mode", ["bilinear", "bicubic"])
@pytest.mark.parametrize("align", [False, True])
@pytest.mark.parametrize("kw", AA, ids=[str(i) for i in range(len(AA))])
def test_antialias_matches_torch(mode, align, kw):
    kw = dict(kw, mode=mode, align_corners=align, antialias=True)
    _check(lambda x: F.interpolate(x, **kw), lambda x: TF.interpolate(x, **kw), (2, 3, 11, 9))


@pytest.mark.parametrize("mode", ["bilinear", "bicubic"])
def test_antialias_half_precision_is_float32_rounded(mode):
    # torch 1.13 has no float16 / bfloat16 kernel: kiln computes in float32 and rounds the result once, so
    # it is within one unit of the 16-bit type of torch's float32 result rounded (torch's fused multiply-adds
    # can tip a rounding)
    x = np.random.default_rng(4).uniform(-1, 1, size=(1, 2, 12, 10)).astype(np.float32)
    for dtype, tdtype, ulp in ((kiln.float16, torch.float16, 2.0 ** -10), (kiln.bfloat16, torch.bfloat16, 2.0 ** -7)):
        k = kiln.tensor(x).to(dtype)
        got = F.interpolate(k, size=(5, 4), mode=mode, antialias=True)
        assert got.dtype == dtype
        want = TF.interpolate(torch.tensor(x).to(tdtype).float(), size=(5, 4), mode=mode, antialias=True).to(tdtype)
        np.testing.assert_allclose(got.float().numpy(), want.float().numpy(), rtol=ulp, atol=ulp / 64)


@pytest.mark.parametrize("mode", ["bilinear", "bicubic"])
def test_antialias_float32_and_zero_batch(mode):
    x = np.random.default_rng(3).uniform(-1, 1, size=(2, 3, 19, 13)).astype(np.float32)
    kx, tx = kiln.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    ko = F.interpolate(kx, size=(5, 6), mode=mode, antialias=True)
    to = TF.interpolate(tx, size=(5, 6), mode=mode, antialias=True)
    assert ko.dtype == kiln.float32
    np.testing.assert_allclose(ko.detach().numpy(), to.detach().numpy(), rtol=1e-5, atol=1e-6)
    ko.sum().backward()
    to.sum().backward()
    np.testing.assert_allclose(kx.grad.numpy(), tx.grad.numpy(), rtol=1e-5, atol=1e-6)
    empty = kiln.zeros(0, 2, 8, 8, requires_grad=True)
    out = F.interpolate(empty, size=3, mode=mode, antialias=True)
    assert tuple(out.shape) == (0, 2, 3, 3)
    out.sum().backward()
    assert tuple(empty.grad.shape) == (0, 2, 8, 8)


_BIT_EXACT = """
import numpy as np, torch, kiln
import kiln.nn.functional as F
rng = np.random.default_rng(0)
for mode in ("bilinear", "bicubic"):
    for size in ((3, 4), (17, 5), (40, 33), (7, 2)):
        for align in (False, True):
            x = rng.uniform(-1, 1, size=(2, 3, 23, 19)).astype(np.float32)
            a = F.interpolate(kiln.tensor(x), size=size, mode=mode, antialias=True, align_corners=align).numpy()
            b = torch.nn.functional.interpolate(torch.tensor(x), size=size, mode=mode, antialias=True,
                                                align_corners=align).numpy()
            assert (a == b).all(), (mode, size, align, abs(a - b).max())
"""


def test_antialias_float32_equals_torch_to_the_bit():
    # against torch's kernel without fused multiply-adds (its AVX2 build contracts them: ~1 ulp apart)
    import os
    import subprocess
    import sys
    env = dict(os.environ, ATEN_CPU_CAPABILITY="default", PYTHONPATH=os.pathsep.join(sys.path))
    subprocess.run([sys.executable, "-c", _BIT_EXACT], env=env, check=True)


def test_antialias_rejects_what_torch_rejects():
    for dtype in (kiln.int64, kiln.uint8):  # torch 2.x's uint8 antialias is not in 1.13
        with pytest.raises(RuntimeError, match="_upsample_bilinear2d_aa.*not implemented for"):
            F.interpolate(kiln.zeros(1, 1, 4, 4, dtype=dtype), size=2, mode="bilinear", antialias=True)
    with pytest.raises(ValueError, match="Anti-alias option is only supported for bilinear and bicubic"):
        F.interpolate(kiln.zeros(1, 1, 4, 4, 4), size=2, mode="trilinear", antialias=True)
    with pytest.raises(ValueError, match="Anti-alias option"):
        F.interpolate(kiln.zeros(1, 1, 4), size=2, mode="bilinear", antialias=True)


def test_nearest_follows_the_input_strides_as_torch():
    # torch picks its nearest kernel by the input's memory format: channels-last strides, channels-last kernel
    a = np.random.default_rng(2).uniform(size=(2, 3, 5, 7))
    k = kiln.tensor(a).permute(0, 2, 3, 1).contiguous().permute(0, 3, 1, 2)
    t = torch.tensor(a).contiguous(memory_format=torch.channels_last)
    for sf in (1.1, (2.1, 1.1)):
        np.testing.assert_array_equal(F.interpolate(k, scale_factor=sf).numpy(), TF.interpolate(t, scale_factor=sf).numpy())
        np.testing.assert_array_equal(F.interpolate(kiln.tensor(a), scale_factor=sf).numpy(),
                                      TF.interpolate(torch.tensor(a), scale_factor=sf).numpy())


@pytest.mark.parametrize("mode", ["nearest", "nearest-exact"])
@pytest.mark.parametrize("shape", [(2, 3, 5), (1, 2, 4, 5), (1, 2, 3, 4, 2)])
def test_nearest_takes_uint8_as_torch(shape, mode):
    a = np.random.default_rng(0).integers(0, 256, size=shape).astype(np.uint8)
    for kw in (dict(scale_factor=1.7), dict(size=3)):
        k = F.interpolate(kiln.tensor(a), mode=mode, **kw)
        assert k.dtype == kiln.uint8
        np.testing.assert_array_equal(k.numpy(), TF.interpolate(torch.tensor(a), mode=mode, **kw).numpy())
    for bad in (kiln.int64, kiln.int32):  # only uint8, as torch
        with pytest.raises(RuntimeError, match="not implemented for"):
            F.interpolate(kiln.zeros(shape, dtype=bad), mode=mode, size=3)
    with pytest.raises(RuntimeError, match="not implemented for"):
        F.interpolate(kiln.tensor(a), mode="bilinear" if len(shape) == 4 else "area", size=3)


def test_scale_factor_sets_the_coordinate_map():
    # 5 * 2.3 = 11.5 -> 11 outputs; the map uses 1 / 2.3, not 5 / 11, unless recompute_scale_factor
    x = kiln.arange(5.0).reshape(1, 1, 5)
    a = F.interpolate(x, scale_factor=2.3, mode="linear").numpy()
    b = F.interpolate(x, scale_factor=2.3, mode="linear", recompute_scale_factor=True).numpy()
    c = F.interpolate(x, size=11, mode="linear").numpy()
    assert a.shape == b.shape == (1, 1, 11)
    np.testing.assert_allclose(b, c)
    assert not np.allclose(a, c)
    np.testing.assert_allclose(a, TF.interpolate(torch.arange(5.0).reshape(1, 1, 5), scale_factor=2.3,
                                                 mode="linear").numpy(), rtol=1e-6)


@pytest.mark.parametrize("make,kmake", [
    (lambda: torch.nn.Upsample(scale_factor=2, mode="nearest"), lambda: kiln.nn.Upsample(scale_factor=2, mode="nearest")),
    (lambda: torch.nn.Upsample(size=(5, 7), mode="bilinear", align_corners=False),
     lambda: kiln.nn.Upsample(size=(5, 7), mode="bilinear", align_corners=False)),
    (lambda: torch.nn.Upsample(scale_factor=(1.5, 2), mode="bicubic"),
     lambda: kiln.nn.Upsample(scale_factor=(1.5, 2), mode="bicubic")),
    (lambda: torch.nn.UpsamplingNearest2d(scale_factor=3), lambda: kiln.nn.UpsamplingNearest2d(scale_factor=3)),
    (lambda: torch.nn.UpsamplingBilinear2d(size=(6, 5)), lambda: kiln.nn.UpsamplingBilinear2d(size=(6, 5))),
    (lambda: torch.nn.PixelShuffle(2), lambda: kiln.nn.PixelShuffle(2)),
    (lambda: torch.nn.Unfold((2, 3), dilation=(1, 2), padding=1, stride=(2, 1)),
     lambda: kiln.nn.Unfold((2, 3), dilation=(1, 2), padding=1, stride=(2, 1))),
])
def test_modules_match_torch(make, kmake):
    m, km = make(), kmake()
    assert km.extra_repr().replace("'", "") == m.extra_repr().replace("'", "")  # 1.13 printed mode unquoted
    _check(km, m, (2, 4, 4, 6))


def test_pixel_unshuffle_and_fold_modules():
    _check(kiln.nn.PixelUnshuffle(2), torch.nn.PixelUnshuffle(2), (2, 3, 4, 6))
    _check(kiln.nn.Fold((4, 5), (2, 2), stride=(1, 2)), torch.nn.Fold((4, 5), (2, 2), stride=(1, 2)), (2, 12, 6))
    _check(lambda x: F.fold(F.unfold(x, 3, padding=1), (4, 5), 3, padding=1),
           lambda x: TF.fold(TF.unfold(x, 3, padding=1), (4, 5), 3, padding=1), (1, 2, 4, 5))
    # torch 2.x also takes unbatched (C, H, W) / (C * k * k, L) inputs (1.13 raises): compare with a batch of one
    _check(lambda x: F.unfold(x, 2), lambda x: TF.unfold(x[None], 2)[0], (3, 4, 4))
    _check(lambda x: F.fold(x, (3, 3), 2), lambda x: TF.fold(x[None], (3, 3), 2)[0], (8, 4))


@pytest.mark.parametrize("size,align", [([2, 3, 4, 5], False), ([2, 3, 4, 5], True), ([2, 1, 3, 1], False),
                                        ([2, 1, 2, 3, 4], False), ([2, 1, 2, 3, 4], True)])
def test_affine_grid_matches_torch(size, align):
    theta = (2, 2, 3) if len(size) == 4 else (2, 3, 4)
    _check(lambda t: F.affine_grid(t, size, align_corners=align), lambda t: TF.affine_grid(t, size, align_corners=align),
           theta)


@pytest.mark.parametrize("mode", ["bilinear", "nearest", "bicubic"])
@pytest.mark.parametrize("padding_mode", ["zeros", "border", "reflection"])
@pytest.mark.parametrize("align", [False, True])
def test_grid_sample_matches_torch(mode, padding_mode, align):
    def k(x, g):
        return F.grid_sample(x, g * 0.7, mode=mode, padding_mode=padding_mode, align_corners=align)

    def t(x, g):
        return TF.grid_sample(x, g * 0.7, mode=mode, padding_mode=padding_mode, align_corners=align)
    _check(k, t, (2, 3, 4, 5), (2, 3, 6, 2), atol=1e-9)


@pytest.mark.parametrize("mode", ["bilinear", "nearest"])
@pytest.mark.parametrize("padding_mode", ["zeros", "border", "reflection"])
@pytest.mark.parametrize("align", [False, True])
def test_grid_sample_5d_matches_torch(mode, padding_mode, align):
    # points out to 1.6 so every padding mode matters (reflection folds some more than once)
    def k(x, g):
        return F.grid_sample(x, g * 1.6, mode=mode, padding_mode=padding_mode, align_corners=align)

    def t(x, g):
        return TF.grid_sample(x, g * 1.6, mode=mode, padding_mode=padding_mode, align_corners=align)
    _check(k, t, (2, 3, 4, 3, 5), (2, 2, 3, 4, 3), atol=1e-9)


@pytest.mark.parametrize("padding_mode", ["zeros", "border", "reflection"])
def test_grid_sample_nearest_ties_as_torch(padding_mode):
    # grid points on exact half pixels: torch 1.13 rounds them half to even in 2-D, away from zero in 3-D
    rng = np.random.default_rng(5)
    for shape, grid in [((1, 2, 3, 2), (1, 4, 5, 2)), ((1, 2, 2, 3, 2), (1, 2, 4, 5, 3))]:
        x = rng.uniform(-2, 2, size=shape)
        g = rng.integers(-40, 40, size=grid) / 16
        for align in (False, True):
            kw = dict(mode="nearest", padding_mode=padding_mode, align_corners=align)
            np.testing.assert_array_equal(F.grid_sample(kiln.tensor(x), kiln.tensor(g), **kw).numpy(),
                                          TF.grid_sample(torch.tensor(x), torch.tensor(g), **kw).numpy())


def test_affine_grid_then_grid_sample_5d():
    theta = np.random.default_rng(4).uniform(-1, 1, size=(2, 3, 4))
    _check(lambda x: F.grid_sample(x, F.affine_grid(kiln.tensor(theta), [2, 2, 3, 4, 5], align_corners=True),
                                   align_corners=True),
           lambda x: TF.grid_sample(x, TF.affine_grid(torch.tensor(theta), [2, 2, 3, 4, 5], align_corners=True),
                                    align_corners=True), (2, 2, 3, 4, 5))


def test_affine_grid_then_grid_sample_rotates():
    c, s = np.cos(0.3), np.sin(0.3)
    theta = np.array([[[c, -s, 0.1], [s, c, -0.2]]])
    _check(lambda x: F.grid_sample(x, F.affine_grid(kiln.tensor(theta), [1, 2, 5, 6], align_corners=False),
                                   align_corners=False),
           lambda x: TF.grid_sample(x, TF.affine_grid(torch.tensor(theta), [1, 2, 5, 6], align_corners=False),
                                    align_corners=False), (1, 2, 5, 6))


ERRORS = [
    (lambda f, x: f.interpolate(x, size=4, scale_factor=2), ValueError, "only one of size or scale_factor"),
    (lambda f, x: f.interpolate(x), ValueError, "either size or scale_factor"),
    (lambda f, x: f.interpolate(x, size=(2, 3, 4)), ValueError, "same number of spatial dimensions"),
    (lambda f, x: f.interpolate(x, scale_factor=(2, 3, 4)), ValueError, "same number of spatial dimensions"),
    (lambda f, x: f.interpolate(x, size=4, recompute_scale_factor=True), ValueError, "recompute_scale_factor"),
    (lambda f, x: f.interpolate(x, size=4, align_corners=True), ValueError, "align_corners option"),
    (lambda f, x: f.interpolate(x, size=4, mode="linear"), NotImplementedError, "Got 4D input, but linear mode needs 3D"),
    (lambda f, x: f.interpolate(x, size=4, mode="trilinear"), NotImplementedError, "trilinear mode needs 5D"),
    (lambda f, x: f.interpolate(x, size=4, mode="foo"), NotImplementedError, "Input Error"),
    (lambda f, x: f.interpolate(x[0, 0], size=4), NotImplementedError, "Input Error"),
    (lambda f, x: f.interpolate(x, size=(-1, 2)), RuntimeError, "Input and output sizes should be greater than 0"),
    (lambda f, x: f.interpolate(x, scale_factor=-2.0, mode="bilinear"), RuntimeError,
     "Input and output sizes should be greater than 0"),
    (lambda f, x: f.interpolate(x, size=(2.5, 2)), TypeError, "expected size"),
    (lambda f, x: f.interpolate(x, size=4, mode="nearest", antialias=True), ValueError, "Anti-alias"),
    (lambda f, x: f.pixel_shuffle(x, 3), RuntimeError, "divisible by the square of upscale_factor"),
    (lambda f, x: f.pixel_unshuffle(x, 3), RuntimeError, "height to be divisible by downscale_factor"),
    (lambda f, x: f.unfold(x, 5), RuntimeError, "must be at least one"),
    (lambda f, x: f.unfold(x[0, 0], 2), RuntimeError, "Expected 3D or 4D"),
    (lambda f, x: f.fold(x[0, :, :3], (4, 4), 2), RuntimeError, "Expected size of input's dimension 1 to be divisible"),
    (lambda f, x: f.grid_sample(x, x, mode="cubic"), ValueError, "expected mode to be"),
    (lambda f, x: f.grid_sample(x, x, padding_mode="wrap"), ValueError, "expected padding_mode to be"),
    (lambda f, x: f.grid_sample(x, x[:1, ..., :2], align_corners=False), RuntimeError, "same batch size"),
    (lambda f, x: f.grid_sample(x[..., None], x[:, :2, :2, :2, None].expand(2, 2, 2, 2, 3), mode="bicubic",
                                align_corners=False), RuntimeError, "bicubic interpolation only supports 4D input"),
    (lambda f, x: f.grid_sample(x[..., None], x[:, :2, :2, :2], align_corners=False), RuntimeError, "expected 5D input"),
    (lambda f, x: f.grid_sample(x[0], x[0, :2, :2, :2], align_corners=False), RuntimeError, "expected 5D input"),
    (lambda f, x: f.affine_grid(x[0], [1, 2, 3, 3], align_corners=False), ValueError, "Nx2x3"),
    (lambda f, x: f.affine_grid(x[0, :, :2, :3], [1, 2, 3], align_corners=False), NotImplementedError,
     "only supports 4D and 5D sizes"),
    (lambda f, x: f.affine_grid(x[0, :1, :2, :3], [1, 2, 0, 3], align_corners=False), ValueError, "positive output size"),
]


@pytest.mark.parametrize("call,exc,match", ERRORS, ids=[f"error-{i}" for i in range(len(ERRORS))])
def test_errors_match_torch(call, exc, match):
    x = np.zeros((2, 4, 4, 4))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(exc, match=match):
            call(F, kiln.tensor(x))
        if "expected size" in match or "Expected 3D or 4D" in match:
            # 2.x behaviours 1.13 lacks: the integer-size TypeError, im2col's own check of a 2-D input
            # (1.13's F.unfold raises IndexError first)
            return
        with pytest.raises(exc):
            call(TF, torch.tensor(x))


def test_deprecated_aliases_warn_and_match():
    x = np.random.default_rng(0).uniform(size=(1, 1, 3, 4))
    with pytest.warns(UserWarning, match="deprecated"):
        a = F.upsample_bilinear(kiln.tensor(x), scale_factor=2).numpy()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        np.testing.assert_allclose(a, TF.upsample_bilinear(torch.tensor(x), scale_factor=2).numpy())
        np.testing.assert_allclose(F.upsample(kiln.tensor(x), size=(5, 5)).numpy(),
                                   TF.upsample(torch.tensor(x), size=(5, 5)).numpy())
        np.testing.assert_allclose(F.upsample_nearest(kiln.tensor(x), scale_factor=3).numpy(),
                                   TF.upsample_nearest(torch.tensor(x), scale_factor=3).numpy())
