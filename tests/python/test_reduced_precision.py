"""float16 (kiln.half) and bfloat16: dtypes, finfo, creation, conversions, promotion, pointwise
ops, reductions, data movement, matmul/conv, autograd, nn modules, repr and safetensors.

Every expected value comes from an independent reference, never from kiln itself:
  * float32 <-> float16: NumPy's astype (IEEE round-to-nearest-even, subnormals, overflow to inf);
  * float32 -> bfloat16: the bit-level RNE formula on the float32 bits u,
    (u + 0x7FFF + ((u >> 16) & 1)) >> 16, with NaN staying NaN; bfloat16 -> float32 is b << 16;
  * ops on reduced types compute in float32 and round the result once, so the reference is the
    float32 NumPy result rounded as above (bit-exact for + - * /, within an ulp of the reduced
    type for transcendental functions, a couple of ulps for reductions);
  * repr strings and error texts were copied from torch's output (torch is not imported here).
"""
import io
import json
import struct

import numpy as np
import pytest

import kiln
from kiln import nn

H, B = kiln.float16, kiln.bfloat16
F32, F64, I32, I64 = kiln.float32, kiln.float64, kiln.int32, kiln.int64
REDUCED = [H, B]
IDS = ["float16", "bfloat16"]
both = pytest.mark.parametrize("dtype", REDUCED, ids=IDS)


# ============================================================================ references
def bf16_bits(x32):
    """bfloat16 bits of float32 values by round-to-nearest-even (NaN inputs not special-cased)."""
    x = np.array(x32, dtype=np.float32)  # a copy; keeps 0-d shapes
    u = x.reshape(-1).view(np.uint32).astype(np.uint64)
    return ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16).reshape(x.shape)


def round32(x, dtype):
    """float32 values rounded to `dtype` (float16 / bfloat16), returned as float32 (exactly)."""
    x = np.array(x, dtype=np.float32)  # a copy; keeps 0-d shapes
    with np.errstate(all="ignore"):
        if dtype == H:
            return x.astype(np.float16).astype(np.float32)
        out = (bf16_bits(x.reshape(-1)).astype(np.uint32) << np.uint32(16)).view(np.float32).reshape(x.shape)
        return np.where(np.isnan(x), np.float32(np.nan), out).astype(np.float32)


def to32(x):
    with np.errstate(all="ignore"):
        return np.asarray(x, dtype=np.float64).astype(np.float32)


def kt(x32, dtype, **kwargs):
    """A kiln tensor of `dtype` holding float32 values that are representable in it."""
    x32 = np.ascontiguousarray(x32, dtype=np.float32)
    assert_bits(round32(x32, dtype), x32, "test bug: values not representable")
    t = kiln.from_numpy(x32.copy()).to(dtype)
    if kwargs.get("requires_grad"):
        t.requires_grad_(True)
    return t


def vals(t, dtype=None):
    """float32 NumPy copy of a tensor's values (float16/bfloat16 -> float32 is exact)."""
    if dtype is not None:
        assert t.dtype == dtype, f"dtype {t.dtype}, expected {dtype}"
    return np.asarray(t.detach().float().numpy())


def bits_of(t):
    """The raw 16-bit patterns of a float16 / bfloat16 tensor, via the exact widening to float32."""
    f = vals(t).reshape(-1)
    if t.dtype == H:
        return f.astype(np.float16).view(np.uint16).reshape(tuple(t.shape))
    u = f.view(np.uint32)
    assert not (u & 0xFFFF).any(), "bfloat16 -> float32 must leave the low 16 bits zero"
    return (u >> 16).astype(np.uint16).reshape(tuple(t.shape))


def assert_bits(got, want, msg=""):
    """Same shape and bit patterns (so -0.0 differs from 0.0); NaNs only need to be NaN."""
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape, (got.shape, want.shape, msg)
    assert got.dtype == want.dtype, (got.dtype, want.dtype, msg)
    nan = np.isnan(want)
    np.testing.assert_array_equal(np.isnan(got), nan, err_msg=f"NaN positions differ {msg}")
    ui = {2: np.uint16, 4: np.uint32, 8: np.uint64}[got.dtype.itemsize]
    g, w = got[~nan].reshape(-1).view(ui), want[~nan].reshape(-1).view(ui)
    bad = np.flatnonzero(g != w)
    assert bad.size == 0, (f"{bad.size} of {g.size} differ {msg}; first: got {got[~nan][bad[:8]]!r} "
                           f"expected {want[~nan][bad[:8]]!r}")


def ordinals(x32, dtype):
    """Position of reduced-precision values on the number line (adjacent values differ by 1)."""
    x32 = np.array(x32, dtype=np.float32).reshape(-1)
    with np.errstate(all="ignore"):
        b = x32.astype(np.float16).view(np.uint16) if dtype == H else (x32.view(np.uint32) >> 16).astype(np.uint16)
    b = b.astype(np.int64)
    return np.where(b & 0x8000, -(b & 0x7FFF), b)


def assert_ulps(t, ref, dtype, ulps=1):
    """t (of `dtype`) is within `ulps` units in the last place of the reference (computed in
    float64 or float32 and rounded to the dtype here); NaNs must match, infinities count as the
    value one past the largest finite."""
    assert t.dtype == dtype, f"dtype {t.dtype}, expected {dtype}"
    got = vals(t)
    want = round32(to32(ref), dtype)
    assert got.shape == want.shape, (got.shape, want.shape)
    nan = np.isnan(want)
    np.testing.assert_array_equal(np.isnan(got), nan, err_msg="NaN positions differ")
    d = np.abs(ordinals(got[~nan], dtype) - ordinals(want[~nan], dtype))
    if d.size:
        i = int(np.argmax(d))
        assert d[i] <= ulps, (f"{int((d > ulps).sum())} values off by more than {ulps} ulp; worst: got "
                              f"{got[~nan][i]!r}, expected {want[~nan][i]!r} ({d[i]} ulps)")


def sample(dtype, shape, lo, hi, seed=0):
    rng = np.random.default_rng(seed)
    return round32(rng.uniform(lo, hi, size=shape).astype(np.float32), dtype)


def log_uniform(dtype, n, lo_exp, hi_exp, seed=0, signed=True):
    rng = np.random.default_rng(seed)
    x = np.exp2(rng.uniform(lo_exp, hi_exp, size=n))
    if signed:
        x *= rng.choice([-1.0, 1.0], size=n)
    return round32(to32(x), dtype)


def distinct(dtype, shape, seed=0):
    """Shuffled distinct values k/8, representable in both reduced types (for exact max/sort)."""
    n = int(np.prod(shape))
    v = (np.arange(n, dtype=np.float32) - n // 2) / 8
    np.random.default_rng(seed).shuffle(v)
    return round32(v.reshape(shape), dtype)


def specials(dtype):
    """±0, ±inf, NaN, ±1, the largest finite, the smallest normal and subnormal of the dtype."""
    if dtype == H:
        big, tiny, sub = 65504.0, 2.0 ** -14, 2.0 ** -24
    else:
        big, tiny, sub = float(np.uint32(0x7F7F0000).view(np.float32)), 2.0 ** -126, 2.0 ** -133
    v = [0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, big, -big, tiny, -tiny, sub, -sub, 3.0, 0.5]
    return np.array(v, dtype=np.float32)


# ============================================================================ dtypes, finfo, iinfo
def test_dtype_objects():
    assert repr(kiln.float16) == "kiln.float16" and str(kiln.float16) == "kiln.float16"
    assert repr(kiln.bfloat16) == "kiln.bfloat16" and str(kiln.bfloat16) == "kiln.bfloat16"
    assert kiln.half == kiln.float16
    assert kiln.float16 != kiln.bfloat16 and kiln.float16 != kiln.float32 and kiln.bfloat16 != kiln.float32
    for dt in REDUCED:
        assert dt.is_floating_point is True
        assert dt.itemsize == 2
        assert isinstance(dt, kiln.dtype)
    assert kiln.float32.itemsize == 4  # unchanged


@both
def test_tensor_dtype_queries(dtype):
    t = kiln.zeros(3, dtype=dtype)
    assert t.dtype == dtype and t.is_floating_point() and kiln.is_floating_point(t)
    assert t.element_size() == 2


FINFO = {  # torch.finfo values
    H: dict(bits=16, eps=0.0009765625, max=65504.0, min=-65504.0, tiny=6.103515625e-05, resolution=0.001,
            name="float16"),
    B: dict(bits=16, eps=0.0078125, max=3.3895313892515355e+38, min=-3.3895313892515355e+38,
            tiny=1.1754943508222875e-38, resolution=0.01, name="bfloat16"),
    F32: dict(bits=32, eps=1.1920928955078125e-07, max=3.4028234663852886e+38, min=-3.4028234663852886e+38,
              tiny=1.1754943508222875e-38, resolution=1e-06, name="float32"),
    F64: dict(bits=64, eps=2.220446049250313e-16, max=1.7976931348623157e+308, min=-1.7976931348623157e+308,
              tiny=2.2250738585072014e-308, resolution=1e-15, name="float64"),
}


@pytest.mark.parametrize("dtype", list(FINFO), ids=["float16", "bfloat16", "float32", "float64"])
def test_finfo(dtype):
    fi, want = kiln.finfo(dtype), FINFO[dtype]
    assert fi.bits == want["bits"]
    for k in ("eps", "max", "min", "tiny", "resolution"):
        assert float(getattr(fi, k)) == want[k], k
    assert float(fi.smallest_normal) == want["tiny"]
    assert str(fi.dtype) in (want["name"], f"kiln.{want['name']}")
    # cross-check the IEEE ones against NumPy
    npt = {H: np.float16, F32: np.float32, F64: np.float64}.get(dtype)
    if npt is not None:
        nf = np.finfo(npt)
        assert float(fi.eps) == float(nf.eps) and float(fi.max) == float(nf.max)
        assert float(fi.tiny) == float(nf.tiny)
    if dtype == B:  # 2**-7, (2 - 2**-7) * 2**127, 2**-126
        assert float(fi.eps) == 2.0 ** -7 and float(fi.max) == (2 - 2.0 ** -7) * 2.0 ** 127
        assert float(fi.tiny) == 2.0 ** -126


@pytest.mark.parametrize("dtype,bits,lo,hi", [(I32, 32, -2 ** 31, 2 ** 31 - 1), (I64, 64, -2 ** 63, 2 ** 63 - 1)],
                         ids=["int32", "int64"])
def test_iinfo(dtype, bits, lo, hi):
    ii = kiln.iinfo(dtype)
    assert ii.bits == bits and ii.min == lo and ii.max == hi


# ============================================================================ creation
@both
def test_factories(dtype):
    for t, v in ((kiln.zeros(2, 3, dtype=dtype), 0.0), (kiln.ones((2, 3), dtype=dtype), 1.0),
                 (kiln.full((2, 3), 2.5, dtype=dtype), 2.5)):
        assert t.dtype == dtype and tuple(t.shape) == (2, 3)
        assert_bits(vals(t), np.full((2, 3), v, np.float32))
    e = kiln.empty(4, 5, dtype=dtype)
    assert e.dtype == dtype and tuple(e.shape) == (4, 5)
    # full with a value that is not representable: rounded to nearest even
    assert_bits(vals(kiln.full((3,), 0.1, dtype=dtype), dtype), round32(np.full(3, 0.1, np.float32), dtype))
    assert_bits(vals(kiln.zeros_like(e), dtype), np.zeros((4, 5), np.float32))
    assert_bits(vals(kiln.ones_like(e), dtype), np.ones((4, 5), np.float32))


@both
def test_arange(dtype):
    t = kiln.arange(-4, 4, 0.25, dtype=dtype)
    assert_bits(vals(t, dtype), np.arange(-4, 4, 0.25, dtype=np.float32))
    t = kiln.arange(3000, dtype=dtype)  # integers above 2048 (float16) / 256 (bfloat16) get rounded
    assert_bits(vals(t, dtype), round32(np.arange(3000, dtype=np.float32), dtype))


@both
def test_rand_randn(dtype):
    kiln.manual_seed(0)
    r = kiln.rand(100000, dtype=dtype)
    assert r.dtype == dtype and tuple(r.shape) == (100000,)
    v = vals(r)
    assert v.min() >= 0.0 and v.max() < 1.0, "rand must stay in [0, 1) after rounding to the dtype"
    assert abs(v.mean() - 0.5) < 0.01
    n = kiln.randn(200, 100, dtype=dtype)
    assert n.dtype == dtype and tuple(n.shape) == (200, 100)
    v = vals(n)
    assert np.isfinite(v).all() and abs(v.mean()) < 0.05 and 0.95 < v.std() < 1.05
    assert kiln.rand(3, 4, dtype=dtype, requires_grad=True).requires_grad


@both
def test_tensor_from_list(dtype):
    data = [float(np.float32(v)) for v in (0.1, -2.5, 1e-3, 300.7, 1e5, -0.0, float("inf"), float("nan"))]
    t = kiln.tensor(data, dtype=dtype)
    assert t.dtype == dtype and tuple(t.shape) == (8,)
    with np.errstate(all="ignore"):
        assert_bits(vals(t), round32(np.array(data, np.float32), dtype))
    nested = kiln.tensor([[1, 2], [3, 4]], dtype=dtype)  # ints
    assert nested.dtype == dtype
    assert_bits(vals(nested), np.array([[1, 2], [3, 4]], np.float32))
    assert kiln.tensor(0.5, dtype=dtype).dim() == 0


def test_from_numpy_float16_shares_memory():
    a = np.array([1.0, 2.5, -3.0, 0.1], dtype=np.float16)
    t = kiln.from_numpy(a)
    assert t.dtype == H and tuple(t.shape) == (4,)
    assert_bits(t.numpy(), a)
    a[0] = 7.0
    assert t[0].item() == 7.0
    t[1] = 9.0
    assert a[1] == np.float16(9.0)
    # 2-D, a view with strides
    m = np.arange(12, dtype=np.float16).reshape(3, 4)
    tm = kiln.from_numpy(m[:, ::2])
    assert tm.dtype == H and tuple(tm.shape) == (3, 2)
    assert_bits(tm.numpy(), m[:, ::2])


def test_tensor_of_numpy_float16_copies():
    a = np.array([[0.5, -1.25], [65504.0, np.inf]], dtype=np.float16)
    t = kiln.tensor(a)
    assert t.dtype == H
    assert_bits(t.numpy(), a)
    a[0, 0] = 3.0
    assert t[0, 0].item() == 0.5
    assert kiln.as_tensor(a).dtype == H


@both
def test_numpy_tolist_item(dtype):
    data = np.array([0.1, 65504.0, -2.0, 1 / 3], np.float32)
    t = kiln.tensor(data.tolist(), dtype=dtype)
    want = round32(data, dtype)
    lst = t.tolist()
    assert all(type(x) is float for x in lst)
    assert lst == [float(x) for x in want]
    item = t[0].item()
    assert type(item) is float and item == float(want[0])
    assert float(t[3]) == float(want[3])
    if dtype == H:
        n = t.numpy()
        assert n.dtype == np.float16
        assert_bits(n, data.astype(np.float16))
    else:
        with pytest.raises(TypeError, match="(?i)bfloat16"):
            t.numpy()


def test_float16_numpy_shares_memory():
    t = kiln.zeros(3, dtype=H)
    n = t.numpy()
    n[1] = 2.5
    assert t.tolist() == [0.0, 2.5, 0.0]


# ============================================================================ conversions
def all_float16():
    return np.arange(65536, dtype=np.uint32).astype(np.uint16).view(np.float16)


def all_bfloat16_as_float32():
    return (np.arange(65536, dtype=np.uint32) << 16).view(np.float32)


def test_float16_to_float32_and_float64_all_bit_patterns():
    h = all_float16()
    t = kiln.from_numpy(h)
    assert t.dtype == H
    f = t.float()
    assert f.dtype == F32
    assert_bits(f.numpy(), h.astype(np.float32))
    d = t.double()
    assert d.dtype == F64
    assert_bits(d.numpy(), h.astype(np.float64))
    assert_bits(t.to(F32).numpy(), h.astype(np.float32))


def test_float16_to_bfloat16_all_bit_patterns():
    h = all_float16()
    t = kiln.from_numpy(h).bfloat16()
    assert t.dtype == B
    assert_bits(vals(t), round32(h.astype(np.float32), B))


def test_bfloat16_all_bit_patterns_widen_exactly():
    x = all_bfloat16_as_float32()
    t = kiln.from_numpy(x).bfloat16()  # exact: every value is a bfloat16
    assert t.dtype == B
    assert_bits(t.float().numpy(), x)
    with np.errstate(invalid="ignore"):  # signalling NaNs widen quietly
        assert_bits(t.double().numpy(), x.astype(np.float64))
    nan = np.isnan(x)
    assert_bits(bits_of(t)[~nan], np.arange(65536, dtype=np.uint32).astype(np.uint16)[~nan])


def test_bfloat16_to_float16_all_bit_patterns():
    x = all_bfloat16_as_float32()
    t = kiln.from_numpy(x).bfloat16().half()
    assert t.dtype == H
    with np.errstate(all="ignore"):
        assert_bits(t.numpy(), x.astype(np.float16))


def float32_cases():
    """Random float32 bit patterns plus every float16 and bfloat16 rounding boundary."""
    rng = np.random.default_rng(1234)
    parts = [rng.integers(0, 2 ** 32, size=1 << 19, dtype=np.uint64).astype(np.uint32)]
    # float32 values: specials, float16 overflow boundary, subnormal boundaries, float32 extremes
    f = np.float32
    v = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 65504.0, 65505.0, 65519.0, 65519.996, 65520.0,
                  65520.004, 65535.0, 65536.0, 1e6, 3.4028235e38, 2.0 ** -24, 2.0 ** -25, 3 * 2.0 ** -26, 2.0 ** -26,
                  2.0 ** -14, 2.0 ** -14 - 2.0 ** -25, 2.0 ** -14 - 2.0 ** -26, 1e-45, 1.1754942e-38,
                  1.1754944e-38, 3.3895314e38, 3.3961776e38, 3.3961778e38, 0.1, 1 / 3], dtype=f)
    parts += [v.view(np.uint32), (-v).view(np.uint32)]
    parts.append(np.array([0x7F800001, 0xFF800001, 0x7FC00000, 0xFFC00000, 0x7FFFFFFF, 0xFFFFFFFF, 0x7F80FFFF,
                           0x7FBFFFFF, 0x00000001, 0x80000001, 0x007FFFFF, 0x00008000, 0x00018000], dtype=np.uint32))
    # midpoints between consecutive float16 values (exact in float32) and their float32 neighbours
    hb = np.arange(0x7C00, dtype=np.uint16).view(np.float16).astype(np.float64)
    mid = ((hb[:-1] + hb[1:]) / 2).astype(np.float32)
    for m in (mid, np.nextafter(mid, f(np.inf)), np.nextafter(mid, f(0))):
        parts += [m.view(np.uint32), (-m).view(np.uint32)]
    # bfloat16 midpoints (low half 0x8000) and their neighbours, for every upper half
    up = np.arange(65536, dtype=np.uint32) << 16
    parts += [up | 0x8000, up | 0x7FFF, up | 0x8001, up | 0x0001, up | 0xFFFF]
    return np.concatenate(parts).view(np.float32)


@pytest.fixture(scope="module")
def f32_cases():
    return float32_cases()


def test_float32_to_float16_matches_numpy(f32_cases):
    t = kiln.from_numpy(f32_cases)
    h = t.half()
    assert h.dtype == H
    with np.errstate(all="ignore"):
        want = f32_cases.astype(np.float16)
    assert_bits(h.numpy(), want)
    assert_bits(t.to(H).numpy(), want)
    assert_bits(t.to(dtype=kiln.half).numpy(), want)


def test_float32_to_bfloat16_matches_bit_reference(f32_cases):
    b = kiln.from_numpy(f32_cases).bfloat16()
    assert b.dtype == B
    got = bits_of(b)
    nan = np.isnan(f32_cases)
    assert_bits(got[~nan], bf16_bits(f32_cases)[~nan])
    # NaN stays NaN (the formula alone would turn 0x7F800001 into inf and 0x7FFFFFFF into -0)
    assert np.isnan(vals(b)[nan]).all()
    assert_bits(vals(kiln.from_numpy(f32_cases).to(B)), round32(f32_cases, B))


def test_float64_to_reduced(f32_cases):
    with np.errstate(invalid="ignore"):  # signalling NaNs widen quietly
        x = f32_cases[::7].astype(np.float64)  # float64 values that are float32 values: one rounding either way
    t = kiln.from_numpy(x)
    with np.errstate(all="ignore"):
        assert_bits(t.half().numpy(), x.astype(np.float16))
    assert_bits(vals(t.bfloat16()), round32(x.astype(np.float32), B))


@both
def test_same_dtype_conversion_keeps_values(dtype):
    x = sample(dtype, 50, -10, 10, seed=3)
    t = kt(x, dtype)
    for c in (t.to(dtype), t.float().to(dtype), t.double().to(dtype), t.clone()):
        assert c.dtype == dtype
        assert_bits(vals(c), x)


INTS = np.array([-70000, -65520, -65519, -2049, -2048, -257, -1, 0, 1, 255, 256, 257, 258, 259, 2047, 2049, 2050,
                 2051, 4097, 65504, 65505, 65519, 65520, 100000, 2 ** 24 - 1], dtype=np.int64)


@both
@pytest.mark.parametrize("int_dtype", [I32, I64], ids=["int32", "int64"])
def test_int_to_reduced(dtype, int_dtype):
    npi = np.int32 if int_dtype == I32 else np.int64
    t = kiln.from_numpy(INTS.astype(npi))
    r = t.to(dtype)
    assert r.dtype == dtype
    assert_bits(vals(r), round32(INTS.astype(np.float32), dtype))
    assert_bits(vals(t.half() if dtype == H else t.bfloat16(), dtype), round32(INTS.astype(np.float32), dtype))


@both
def test_reduced_to_int_and_bool(dtype):
    x = round32(np.array([-2.75, -2.5, -1.5, -0.5, 0.0, 0.5, 1.5, 1.9, 2.5, 100.7, 2049.0, -300.3], np.float32), dtype)
    t = kt(x, dtype)
    for conv, npt, kd in ((t.long(), np.int64, I64), (t.int(), np.int32, I32), (t.to(I64), np.int64, I64)):
        assert conv.dtype == kd
        np.testing.assert_array_equal(conv.numpy(), np.trunc(x).astype(npt))
    sub = 2.0 ** -24 if dtype == H else 2.0 ** -133
    y = np.array([0.0, -0.0, 0.5, np.nan, np.inf, -sub], np.float32)
    b = kt(y, dtype).bool()
    assert b.dtype == kiln.bool
    assert b.tolist() == [False, False, True, True, True, True]  # a subnormal is not zero
    back = kiln.tensor([True, False, True]).to(dtype)
    assert back.dtype == dtype and back.tolist() == [1.0, 0.0, 1.0]


def test_conversion_is_differentiable():
    x = kiln.tensor([1.5, -2.0, 0.1], requires_grad=True)
    (x.half() * 2).sum().backward()
    assert x.grad.dtype == F32 and x.grad.tolist() == [2.0, 2.0, 2.0]
    y = kt(np.array([1.0, 2.0], np.float32), B, requires_grad=True)
    y.float().sum().backward()
    assert y.grad.dtype == B and y.grad.tolist() == [1.0, 1.0]


# ============================================================================ type promotion
PROMOTION = [
    (H, H, H), (B, B, B), (H, B, F32), (B, H, F32), (H, F32, F32), (F32, H, F32), (B, F32, F32), (F32, B, F32),
    (H, F64, F64), (B, F64, F64), (F64, B, F64), (H, I64, H), (I64, H, H), (H, I32, H), (I32, B, B), (B, I64, B),
    (kiln.bool, H, H), (B, kiln.bool, B),
]


def name(dt):
    return str(dt).split(".")[-1]


@pytest.mark.parametrize("a,b,want", PROMOTION, ids=[f"{name(a)}-{name(b)}" for a, b, _ in PROMOTION])
def test_binary_promotion(a, b, want):
    x, y = kiln.ones(3, dtype=a), kiln.ones(3, dtype=b)
    r = x + y
    assert r.dtype == want
    assert r.tolist() == [2.0, 2.0, 2.0]
    assert (x * y).dtype == want
    assert (x == y).dtype == kiln.bool and (x == y).all()
    assert kiln.promote_types(a, b) == want


def test_scalar_and_zero_dim_promotion():
    h, b = kiln.ones(2, dtype=H), kiln.ones(2, dtype=B)
    i, f = kiln.ones(2, dtype=I64), kiln.ones(2)
    z = lambda dt: kiln.tensor(1, dtype=dt)  # noqa: E731
    cases = [
        (h + 2.5, H), (b * 3, B), (2 - h, H), (h / 2, H), (h + True, H), (b ** 2, B),
        (i + z(H), H), (i + z(B), B), (kiln.ones(2, dtype=kiln.bool) + z(H), H),
        (f + z(H), F32), (h + z(F32), H), (h + z(F64), H), (b + z(H), B), (h + z(B), H),
        (z(H) + z(B), F32), (z(H) + 2.5, H), (z(B) + z(F64), F64), (i + 1.5, F32),
    ]
    for k, (r, want) in enumerate(cases):
        assert r.dtype == want, f"case {k}: {r.dtype} != {want}"
    assert (h + 2.5).tolist() == [3.5, 3.5]
    assert (i + z(H)).tolist() == [2.0, 2.0]


def test_result_type():
    assert kiln.result_type(kiln.ones(2, dtype=H), 1.0) == H
    assert kiln.result_type(kiln.ones(2, dtype=I64), kiln.tensor(1, dtype=H)) == H
    assert kiln.result_type(kiln.ones(2, dtype=H), kiln.ones(2, dtype=B)) == F32


def test_cat_promotes():
    assert kiln.cat([kiln.ones(2, dtype=H), kiln.ones(2)]).dtype == F32
    assert kiln.cat([kiln.ones(2, dtype=H), kiln.ones(2, dtype=B)]).dtype == F32
    assert kiln.cat([kiln.ones(2, dtype=B), kiln.ones(2, dtype=B)]).dtype == B


# ============================================================================ pointwise
def operands(dtype, seed=0):
    """Pairs of representable values: moderate randoms, a wide log-uniform spread (overflow,
    underflow, subnormal results), and every pair of special values."""
    lo, hi = (-26, 17) if dtype == H else (-135, 128)
    a = np.concatenate([sample(dtype, 1500, -8, 8, seed), log_uniform(dtype, 1500, lo, hi, seed + 1)])
    b = np.concatenate([sample(dtype, 1500, -8, 8, seed + 2), log_uniform(dtype, 1500, lo, hi, seed + 3)])
    s = specials(dtype)
    sa, sb = np.meshgrid(s, s)
    return np.concatenate([a, sa.ravel()]), np.concatenate([b, sb.ravel()])


BINARY = {
    "add": (lambda x, y: x + y, lambda x, y: kiln.add(x, y), np.add),
    "sub": (lambda x, y: x - y, lambda x, y: kiln.sub(x, y), np.subtract),
    "mul": (lambda x, y: x * y, lambda x, y: kiln.mul(x, y), np.multiply),
    "div": (lambda x, y: x / y, lambda x, y: kiln.div(x, y), np.divide),
}


@both
@pytest.mark.parametrize("op", list(BINARY))
def test_binary_arithmetic_rounds_once(dtype, op):
    a, b = operands(dtype)
    ka, kb = kt(a, dtype), kt(b, dtype)
    operator_form, function_form, np_op = BINARY[op]
    with np.errstate(all="ignore"):
        want = round32(np_op(a, b), dtype)  # float32 arithmetic, one rounding
    for r in (operator_form(ka, kb), function_form(ka, kb), getattr(ka, op)(kb)):
        assert r.dtype == dtype
        assert_bits(vals(r), want, op)


@both
def test_binary_broadcast_and_non_contiguous(dtype):
    a = sample(dtype, (6, 1), -4, 4, 1)
    b = sample(dtype, (1, 7), -4, 4, 2)
    assert_bits(vals(kt(a, dtype) + kt(b, dtype), dtype), round32(a + b, dtype))
    m = sample(dtype, (7, 6), -4, 4, 3)
    n = sample(dtype, (6, 7), -4, 4, 4)
    r = kt(m, dtype).t() * kt(n, dtype)
    assert_bits(vals(r, dtype), round32(m.T * n, dtype))
    r = kt(n, dtype)[:, ::2] - kt(m, dtype).t()[:, ::2]
    assert_bits(vals(r, dtype), round32(n[:, ::2] - m.T[:, ::2], dtype))


@both
def test_scalar_operands(dtype):
    a = sample(dtype, 500, -100, 100, 5)
    ka = kt(a, dtype)
    f = np.float32
    cases = [(ka + 2.5, a + f(2.5)), (ka * 3, a * f(3)), (2 - ka, f(2) - a), (ka / 4, a / f(4)),
             (ka - 0.5, a - f(0.5)), (ka * -1.5, a * f(-1.5)), (ka + 1, a + f(1))]
    for k, (r, want) in enumerate(cases):
        assert r.dtype == dtype, k
        assert_bits(vals(r), round32(want, dtype), f"case {k}")
    # integer tensor + reduced tensor: small integers are exact in both types
    i = np.arange(-20, 20)
    x = sample(dtype, 40, -4, 4, 6)
    r = kiln.from_numpy(i) + kt(x, dtype)
    assert_bits(vals(r, dtype), round32(i.astype(np.float32) + x, dtype))


@both
def test_exact_unary_and_selection(dtype):
    x = np.concatenate([sample(dtype, 400, -6, 6, 7), np.array([np.inf, -np.inf, 2.5, -1.0], np.float32)])
    y = np.concatenate([sample(dtype, 400, -6, 6, 8), np.array([1.0, 1.0, -np.inf, 3.0], np.float32)])
    kx, ky = kt(x, dtype), kt(y, dtype)
    cases = {
        "neg": (-kx, -x), "neg()": (kiln.neg(kx), -x), "abs": (kx.abs(), np.abs(x)),
        "relu": (kiln.relu(kx), np.maximum(x, 0)),
        "clamp": (kx.clamp(-1.0, 2.5), np.clip(x, -1.0, 2.5)), "clamp_min": (kiln.clamp(kx, min=0.5), np.maximum(x, 0.5)),
        "maximum": (kiln.maximum(kx, ky), np.maximum(x, y)), "max(a, b)": (kiln.max(kx, ky), np.maximum(x, y)),
        "where": (kiln.where(kx > ky, kx, ky), np.where(x > y, x, y)),
    }
    for k, (r, want) in cases.items():
        assert r.dtype == dtype, k
        assert_bits(vals(r), want.astype(np.float32), k)
    n = np.array([np.nan, -0.0, 0.0, -3.0], np.float32)
    assert_bits(vals(-kt(n, dtype)), -n)
    assert_bits(vals(kt(n, dtype).abs()), np.abs(n))


def pos_inputs(dtype, seed):
    lo = -24 if dtype == H else -125
    hi = 16 if dtype == H else 120
    x = np.concatenate([log_uniform(dtype, 600, lo, hi, seed, signed=False), sample(dtype, 400, 0, 10, seed + 1),
                        np.array([0.0, 1.0, np.inf], np.float32)])
    return x


TRANSCENDENTAL = {  # kiln op, float64 reference, input maker
    "exp": (lambda t: t.exp(), np.exp, lambda d, s: sample(d, 1000, -20, 12, s)),
    "exp()": (lambda t: kiln.exp(t), np.exp, lambda d, s: sample(d, 1000, -20, 12, s)),
    "log": (lambda t: t.log(), np.log, pos_inputs),
    "sqrt": (lambda t: t.sqrt(), np.sqrt, pos_inputs),
    "sin": (lambda t: t.sin(), np.sin, lambda d, s: sample(d, 1000, -10, 10, s)),
    "tanh": (lambda t: t.tanh(), np.tanh, lambda d, s: sample(d, 1000, -6, 6, s)),
    "sigmoid": (lambda t: kiln.sigmoid(t), lambda x: 1 / (1 + np.exp(-x)), lambda d, s: sample(d, 1000, -20, 20, s)),
    "pow2": (lambda t: t ** 2, lambda x: x * x, lambda d, s: sample(d, 1000, -300, 300, s)),
    "pow0.5": (lambda t: kiln.pow(t, 0.5), np.sqrt, pos_inputs),
}


@both
@pytest.mark.parametrize("op", list(TRANSCENDENTAL))
def test_transcendental_within_one_ulp(dtype, op):
    fn, ref, make = TRANSCENDENTAL[op]
    x = make(dtype, 11)
    r = fn(kt(x, dtype))
    with np.errstate(all="ignore"):
        assert_ulps(r, ref(x.astype(np.float64)), dtype, ulps=1)


@both
def test_pow_tensor_exponent(dtype):
    a = sample(dtype, 500, 0.5, 4, 12)
    b = sample(dtype, 500, -3, 3, 13)
    r = kiln.pow(kt(a, dtype), kt(b, dtype))
    assert_ulps(r, np.power(a.astype(np.float64), b.astype(np.float64)), dtype, ulps=1)


@both
def test_comparisons_and_classification(dtype):
    a, b = operands(dtype, 20)
    ka, kb = kt(a, dtype), kt(b, dtype)
    for r, want in ((ka == kb, a == b), (ka < kb, a < b), (kiln.eq(ka, kb), a == b), (kiln.lt(ka, kb), a < b),
                    (ka > kb, a > b), (ka <= kb, a <= b), (ka != kb, a != b), (ka < 0.5, a < 0.5), (ka == 3, a == 3)):
        assert r.dtype == kiln.bool
        np.testing.assert_array_equal(r.numpy(), want)
    assert kiln.isnan(ka).dtype == kiln.bool
    np.testing.assert_array_equal(kiln.isnan(ka).numpy(), np.isnan(a))
    np.testing.assert_array_equal(kiln.isinf(ka).numpy(), np.isinf(a))
    big = kiln.tensor([1e6, -1e6, 65504.0]).half()
    assert kiln.isinf(big).tolist() == [True, True, False]


@both
def test_in_place_ops_keep_dtype(dtype):
    a = sample(dtype, 300, -50, 50, 14)
    b = sample(dtype, 300, -50, 50, 15)
    c = np.random.default_rng(16).uniform(-1, 1, 300).astype(np.float32)  # not representable: float32 operand
    t = kt(a, dtype)
    t.add_(kt(b, dtype))
    want = round32(a + b, dtype)
    assert t.dtype == dtype
    assert_bits(vals(t), want)
    t.mul_(2)
    want = round32(want * np.float32(2), dtype)
    assert_bits(vals(t, dtype), want)
    t.sub_(1.5)
    want = round32(want - np.float32(1.5), dtype)
    assert_bits(vals(t, dtype), want)
    t.add_(kiln.from_numpy(c))  # computed in float32, rounded once into the reduced tensor
    want = round32(want + c, dtype)
    assert_bits(vals(t, dtype), want)
    t.div_(kt(round32(np.full(300, 4.0, np.float32), dtype), dtype))
    want = round32(want / np.float32(4), dtype)
    assert_bits(vals(t, dtype), want)
    with pytest.raises(RuntimeError, match="can't be cast"):
        kiln.ones(3, dtype=I64).add_(kiln.ones(3, dtype=dtype))


@both
def test_out_argument(dtype):
    a = sample(dtype, 100, -10, 10, 17)
    b = sample(dtype, 100, -10, 10, 18)
    out = kiln.empty(100, dtype=dtype)
    r = kiln.add(kt(a, dtype), kt(b, dtype), out=out)
    assert out.dtype == dtype
    assert_bits(vals(out), round32(a + b, dtype))
    assert_bits(vals(r, dtype), round32(a + b, dtype))
    c = np.random.default_rng(19).uniform(-10, 10, 100).astype(np.float32)
    d = np.random.default_rng(20).uniform(-10, 10, 100).astype(np.float32)
    kiln.mul(kiln.from_numpy(c), kiln.from_numpy(d), out=out)  # float32 inputs, reduced out
    assert out.dtype == dtype
    assert_bits(vals(out), round32(c * d, dtype))
    with pytest.raises(RuntimeError):
        kiln.add(kt(a, dtype), kt(b, dtype), out=kiln.empty(100, dtype=I64))


# ============================================================================ reductions
@both
def test_sum_accumulates_in_float32(dtype):
    s = kiln.ones(4096, dtype=dtype).sum()  # a float16 accumulator stops at 2048, a bfloat16 one at 256
    assert s.dtype == dtype and s.dim() == 0 and s.item() == 4096.0
    assert kiln.sum(kiln.ones(64, 64, dtype=dtype)).item() == 4096.0
    s32 = kiln.ones(4096, dtype=dtype).sum(dtype=F32)
    assert s32.dtype == F32 and s32.item() == 4096.0
    r = kiln.ones(3, 4096, dtype=dtype).sum(1)
    assert r.dtype == dtype and r.tolist() == [4096.0] * 3
    r = kiln.ones(4096, 3, dtype=dtype).sum(0, keepdim=True)  # strided reduction
    assert r.dtype == dtype and tuple(r.shape) == (1, 3) and r.tolist() == [[4096.0] * 3]
    assert kiln.ones(4096, dtype=dtype).mean().item() == 1.0


@both
def test_sum_of_tenths(dtype):
    tenth = float(round32(np.float32(0.1), dtype)[()])
    s = kiln.full((1000,), 0.1, dtype=dtype).sum()
    assert_ulps(s, np.float64(1000 * tenth), dtype, ulps=1)
    s32 = kiln.full((1000,), 0.1, dtype=dtype).sum(dtype=F32)
    assert s32.dtype == F32
    np.testing.assert_allclose(s32.item(), 1000 * tenth, rtol=1e-5)


def test_float16_sum_overflows_but_float32_sum_does_not():
    t = kiln.full((1000,), 100.0, dtype=H)
    s = t.sum()
    assert s.dtype == H and s.item() == float("inf")
    assert t.sum(dtype=F32).item() == 100000.0
    assert kiln.full((1000,), 100.0, dtype=B).sum(dtype=F32).item() == 100000.0


@both
def test_cumsum_accumulates_in_float32(dtype):
    c = kiln.ones(3000, dtype=dtype).cumsum(0)
    assert c.dtype == dtype
    assert_bits(vals(c), round32(np.arange(1, 3001, dtype=np.float32), dtype))
    c2 = kiln.cumsum(kiln.ones(2, 3000, dtype=dtype), 1)
    assert_bits(vals(c2, dtype), np.tile(round32(np.arange(1, 3001, dtype=np.float32), dtype), (2, 1)))
    c3 = kiln.ones(3000, dtype=dtype).cumsum(0, dtype=F32)
    assert c3.dtype == F32 and c3.numpy()[-1] == 3000.0
    x = sample(dtype, (5, 40), -3, 3, 21)
    assert_ulps(kt(x, dtype).cumsum(1), np.cumsum(x.astype(np.float64), axis=1), dtype, ulps=1)


REDUCTIONS = {  # name: (kiln call, float64 reference, input range)
    "sum": (lambda t: t.sum(), lambda x: x.sum(), (0.5, 2)),
    "sum_dim1": (lambda t: t.sum(1), lambda x: x.sum(1), (0.5, 2)),
    "sum_dim0_keepdim": (lambda t: kiln.sum(t, 0, keepdim=True), lambda x: x.sum(0, keepdims=True), (0.5, 2)),
    "sum_dims": (lambda t: t.sum((0, 1)), lambda x: x.sum((0, 1)), (0.5, 2)),
    "mean": (lambda t: t.mean(), lambda x: x.mean(), (-1, 3)),
    "mean_dim": (lambda t: t.mean(1, keepdim=True), lambda x: x.mean(1, keepdims=True), (0.5, 2)),
    "prod": (lambda t: t.prod(1), lambda x: x.prod(1), (0.9, 1.1)),
    "prod_all": (lambda t: t[:3].prod(), lambda x: x[:3].prod(), (0.97, 1.03)),
    "var": (lambda t: t.var(), lambda x: x.var(ddof=1), (0.5, 3)),
    "var_dim": (lambda t: t.var(1), lambda x: x.var(1, ddof=1), (0.5, 3)),
    "std_dim0": (lambda t: t.std(0), lambda x: x.std(0, ddof=1), (0.5, 3)),
    "std": (lambda t: kiln.std(t), lambda x: x.std(ddof=1), (0.5, 3)),
    "logsumexp": (lambda t: kiln.logsumexp(t, 1), lambda x: np.log(np.exp(x).sum(1)), (-3, 3)),
    "logsumexp_all": (lambda t: t.logsumexp((0, 1)), lambda x: np.log(np.exp(x).sum()), (-3, 3)),
    "norm": (lambda t: t.norm(), lambda x: np.sqrt((x * x).sum()), (-2, 2)),
    "norm1": (lambda t: kiln.norm(t, 1), lambda x: np.abs(x).sum(), (-2, 2)),
    "norm_dim": (lambda t: kiln.norm(t, dim=1), lambda x: np.sqrt((x * x).sum(1)), (-2, 2)),
}


@both
@pytest.mark.parametrize("op", list(REDUCTIONS))
def test_reductions_against_numpy(dtype, op):
    fn, ref, (lo, hi) = REDUCTIONS[op]
    x = sample(dtype, (24, 40), lo, hi, 22)
    r = fn(kt(x, dtype))
    assert_ulps(r, np.asarray(ref(x.astype(np.float64))), dtype, ulps=2)


@both
def test_min_max_arg(dtype):
    x = distinct(dtype, (8, 15), 23)
    t = kt(x, dtype)
    assert t.max().dtype == dtype and t.max().item() == x.max()
    assert t.min().item() == x.min()
    assert t.argmax().item() == int(np.argmax(x)) and t.argmin().item() == int(np.argmin(x))
    for dim in (0, 1):
        mx = t.max(dim=dim)
        assert mx.values.dtype == dtype and mx.indices.dtype == I64
        assert_bits(vals(mx.values), x.max(dim))
        np.testing.assert_array_equal(mx.indices.numpy(), np.argmax(x, dim))
        mn = kiln.min(t, dim, keepdim=True)
        assert_bits(vals(mn.values), x.min(dim, keepdims=True))
        np.testing.assert_array_equal(mn.indices.numpy(), np.expand_dims(np.argmin(x, dim), dim))
        assert_bits(vals(kiln.amax(t, dim), dtype), x.max(dim))
        assert_bits(vals(kiln.amin(t, dim), dtype), x.min(dim))
        np.testing.assert_array_equal(kiln.argmax(t, dim).numpy(), np.argmax(x, dim))
        np.testing.assert_array_equal(t.argmin(dim).numpy(), np.argmin(x, dim))
    n = kt(np.array([1.0, np.nan, 3.0], np.float32), dtype)
    assert np.isnan(n.max().item()) and np.isnan(n.min().item())


# ============================================================================ data movement
@both
def test_indexing_and_views(dtype):
    x = sample(dtype, (4, 6), -8, 8, 24)
    x[0, 0] = -0.0
    t = kt(x, dtype)
    cases = {
        "row": (t[1], x[1]), "col": (t[:, 2], x[:, 2]), "slice": (t[1:3, ::2], x[1:3, ::2]), "neg": (t[-1], x[-1]),
        "reshape": (t.reshape(6, 4), x.reshape(6, 4)), "t": (t.t(), x.T), "T contiguous": (t.t().contiguous(), x.T),
        "clone": (t.clone(), x), "flip0": (t.flip([0]), x[::-1]), "flip01": (kiln.flip(t, [0, 1]), x[::-1, ::-1]),
        "tril": (t.tril(), np.tril(x)), "tril-1": (kiln.tril(t, -1), np.tril(x, -1)),
        "view": (t.view(24), x.reshape(24)), "unsqueeze": (t.unsqueeze(0), x[None]),
        "bool mask": (t[t > 0], x[x > 0]), "index list": (t[[0, 2, 3]], x[[0, 2, 3]]),
    }
    for k, (r, want) in cases.items():
        assert r.dtype == dtype, k
        assert_bits(vals(r), np.ascontiguousarray(want), k)
    assert t.t().contiguous().is_contiguous()
    assert t[2, 3].item() == float(x[2, 3]) and t[0, 0].item() == 0.0


@both
def test_cat_stack_gather_index_select(dtype):
    x = sample(dtype, (3, 4), -8, 8, 25)
    y = sample(dtype, (3, 4), -8, 8, 26)
    tx, ty = kt(x, dtype), kt(y, dtype)
    idx = np.array([[0, 3, 1, 1], [2, 2, 0, 3], [3, 0, 0, 1]])
    cases = {
        "cat0": (kiln.cat([tx, ty]), np.concatenate([x, y])),
        "cat1": (kiln.cat([tx, ty], 1), np.concatenate([x, y], 1)),
        "cat_noncontig": (kiln.cat([tx.t(), ty.t()], 0), np.concatenate([x.T, y.T])),
        "stack": (kiln.stack([tx, ty]), np.stack([x, y])),
        "stack1": (kiln.stack([tx, ty], 1), np.stack([x, y], 1)),
        "gather": (kiln.gather(tx, 1, kiln.from_numpy(idx)), np.take_along_axis(x, idx, 1)),
        "index_select": (kiln.index_select(tx, 0, kiln.tensor([2, 0, 2])), x[[2, 0, 2]]),
        "where": (kiln.where(tx > ty, tx, ty), np.where(x > y, x, y)),
    }
    for k, (r, want) in cases.items():
        assert r.dtype == dtype, k
        assert_bits(vals(r), np.ascontiguousarray(want), k)
    mixed = kiln.cat([tx, kiln.from_numpy(y.copy())])  # float32 joins: promoted
    assert mixed.dtype == F32
    assert_bits(mixed.numpy(), np.concatenate([x, y]))


@both
def test_masked_fill_setitem_copy(dtype):
    x = sample(dtype, (3, 5), -8, 8, 27)
    t = kt(x, dtype)
    mask = x > 0
    r = t.masked_fill(kiln.from_numpy(mask), 0.1)
    assert r.dtype == dtype
    assert_bits(vals(r), np.where(mask, round32(np.float32(0.1), dtype), x))
    r = kiln.masked_fill(t, kiln.from_numpy(mask), float("-inf"))
    assert_bits(vals(r), np.where(mask, np.float32(-np.inf), x))
    c = np.random.default_rng(28).uniform(-5, 5, 5).astype(np.float32)
    t[0, 0] = 0.1
    t[1] = kiln.from_numpy(c)
    t[2, :2] = 3
    want = x.copy()
    want[0, 0] = round32(np.float32(0.1), dtype)
    want[1] = round32(c, dtype)
    want[2, :2] = 3
    assert t.dtype == dtype
    assert_bits(vals(t), want)
    src = np.random.default_rng(29).uniform(-1000, 1000, (3, 5)).astype(np.float32)
    dst = kiln.zeros(3, 5, dtype=dtype)
    dst.copy_(kiln.from_numpy(src))
    assert dst.dtype == dtype
    assert_bits(vals(dst), round32(src, dtype))
    back = kiln.zeros(3, 5)
    back.copy_(dst)
    assert_bits(back.numpy(), round32(src, dtype))


@both
def test_sort_topk(dtype):
    x = distinct(dtype, (5, 12), 30)
    t = kt(x, dtype)
    s = t.sort(1)
    assert s.values.dtype == dtype and s.indices.dtype == I64
    assert_bits(vals(s.values), np.sort(x, 1))
    np.testing.assert_array_equal(s.indices.numpy(), np.argsort(x, 1, kind="stable"))
    d = kiln.sort(t, 0, descending=True)
    assert_bits(vals(d.values), -np.sort(-x, 0))
    np.testing.assert_array_equal(d.indices.numpy(), np.argsort(-x, 0, kind="stable"))
    k = t.topk(3, 1)
    order = np.argsort(-x, 1, kind="stable")[:, :3]
    assert k.values.dtype == dtype
    assert_bits(vals(k.values), np.take_along_axis(x, order, 1))
    np.testing.assert_array_equal(k.indices.numpy(), order)
    k = kiln.topk(t, 2, 1, largest=False)
    order = np.argsort(x, 1, kind="stable")[:, :2]
    assert_bits(vals(k.values), np.take_along_axis(x, order, 1))


# ============================================================================ matmul / conv
def grid(shape, seed, k=64, denom=8):
    """Values j/denom with |j| <= k: products and sums of them are exact in float32, so the
    reference is the exact result rounded once to the reduced type."""
    return (np.random.default_rng(seed).integers(-k, k + 1, size=shape) / denom).astype(np.float32)


@both
def test_matmul_rounds_exact_result_once(dtype):
    a, b = grid((5, 33), 31), grid((33, 4), 32)
    exact = (a.astype(np.float64) @ b.astype(np.float64)).astype(np.float32)
    want = round32(exact, dtype)
    assert (want != exact).any(), "test bug: rounding not exercised"
    ka, kb = kt(a, dtype), kt(b, dtype)
    cases = {"@": ka @ kb, "mm": kiln.mm(ka, kb), "matmul": kiln.matmul(ka, kb),
             "transposed b": ka @ kt(b.T.copy(), dtype).t(), "transposed a": kt(a.T.copy(), dtype).t() @ kb}
    for k, r in cases.items():
        assert r.dtype == dtype, k
        assert_bits(vals(r), want, k)
    v = grid(33, 33)
    assert_bits(vals(ka @ kt(v, dtype), dtype), round32((a.astype(np.float64) @ v).astype(np.float32), dtype))
    x, y = grid((3, 5, 33), 34), grid((3, 33, 4), 35)
    r = kiln.bmm(kt(x, dtype), kt(y, dtype))
    assert_bits(vals(r, dtype), round32(np.matmul(x.astype(np.float64), y).astype(np.float32), dtype))


@both
def test_matmul_random_values(dtype):
    a = sample(dtype, (16, 64), -1, 1, 36)
    b = sample(dtype, (64, 8), -1, 1, 37)
    r = kt(a, dtype) @ kt(b, dtype)
    ref = a.astype(np.float64) @ b.astype(np.float64)
    assert r.dtype == dtype
    # one rounding to the reduced type (at most eps * |ref|) plus float32 accumulation error
    eps = 2.0 ** -10 if dtype == H else 2.0 ** -7
    bound = eps * np.abs(ref) + 1e-6 * (np.abs(a).astype(np.float64) @ np.abs(b)) + 2.0 ** -24
    err = np.abs(vals(r).astype(np.float64) - ref)
    assert (err <= bound).all(), f"max error {err.max()} (bound there {bound.flat[np.argmax(err)]})"


@both
def test_linear(dtype):
    x, w = grid((2, 5, 4), 38, k=4, denom=4), grid((3, 4), 39, k=4, denom=4)
    b = grid(3, 40, k=4, denom=4)
    want = (x.astype(np.float64) @ w.T + b).astype(np.float32)  # exact in both reduced types
    assert_bits(round32(want, dtype), want, "test bug")
    r = nn.functional.linear(kt(x, dtype), kt(w, dtype), kt(b, dtype))
    assert r.dtype == dtype
    assert_bits(vals(r), want)
    x, w = grid((6, 40), 41), grid((5, 40), 42)
    r = nn.functional.linear(kt(x, dtype), kt(w, dtype))
    assert_bits(vals(r, dtype), round32((x.astype(np.float64) @ w.T).astype(np.float32), dtype))


def conv2d_ref(x, w, padding):
    x = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (padding, padding), (padding, padding)))
    win = np.lib.stride_tricks.sliding_window_view(x, w.shape[2:], axis=(2, 3))  # N C OH OW kh kw
    return np.einsum("ncijhw,ochw->noij", win, w.astype(np.float64))


@both
def test_conv2d(dtype):
    x, w = grid((2, 3, 6, 6), 43), grid((4, 3, 3, 3), 44)
    r = nn.functional.conv2d(kt(x, dtype), kt(w, dtype), padding=1)
    assert r.dtype == dtype and tuple(r.shape) == (2, 4, 6, 6)
    assert_bits(vals(r), round32(conv2d_ref(x, w, 1).astype(np.float32), dtype))
    # with a bias, on values whose exact results are representable (no double-rounding question)
    x, w = grid((1, 3, 5, 5), 45, k=2, denom=2), grid((2, 3, 3, 3), 46, k=1, denom=2)
    b = grid(2, 47, k=4, denom=4)
    want = (conv2d_ref(x, w, 0) + b[None, :, None, None].astype(np.float64)).astype(np.float32)
    assert_bits(round32(want, dtype), want, "test bug")
    r = kiln.conv2d(kt(x, dtype), kt(w, dtype), kt(b, dtype))
    assert r.dtype == dtype
    assert_bits(vals(r), want)


# ============================================================================ autograd and nn
@both
def test_backward_of_square(dtype):
    x32 = round32(np.array([0.1, -1.5, 3.0, 100.0, -7.3], np.float32), dtype)
    x = kt(x32, dtype, requires_grad=True)
    assert x.requires_grad and x.is_leaf and x.dtype == dtype
    (x * x).sum().backward()
    assert x.grad.dtype == dtype
    assert_bits(vals(x.grad), 2 * x32)


@both
def test_backward_of_exp_and_mean(dtype):
    x32 = sample(dtype, 16, -3, 3, 48)
    x = kt(x32, dtype, requires_grad=True)
    x.exp().sum().backward()
    assert_ulps(x.grad, np.exp(x32.astype(np.float64)), dtype, ulps=1)
    y = kt(x32, dtype, requires_grad=True)
    y.mean().backward()
    assert y.grad.dtype == dtype
    assert_bits(vals(y.grad), np.full(16, 1 / 16, np.float32))
    z = kt(x32.reshape(4, 4), dtype, requires_grad=True)
    (z @ z).sum().backward()
    assert z.grad.dtype == dtype and tuple(z.grad.shape) == (4, 4)


@both
def test_linear_module_in_reduced_precision(dtype):
    kiln.manual_seed(0)
    model = nn.Linear(4, 3).to(dtype)
    assert model.weight.dtype == dtype and model.bias.dtype == dtype
    assert isinstance(model.weight, nn.Parameter) and model.weight.requires_grad
    x32 = grid((2, 4), 49, k=4, denom=4)
    x = kt(x32, dtype, requires_grad=True)
    out = model(x)
    assert out.dtype == dtype and tuple(out.shape) == (2, 3)
    w, b = vals(model.weight).astype(np.float64), vals(model.bias).astype(np.float64)
    assert_ulps(out, x32.astype(np.float64) @ w.T + b, dtype, ulps=2)
    out.sum().backward()
    assert model.weight.grad.dtype == dtype and model.bias.grad.dtype == dtype
    assert_bits(vals(model.bias.grad), np.full(3, 2.0, np.float32))
    assert_bits(vals(model.weight.grad), np.tile(x32.sum(0), (3, 1)))  # exact: small grid values
    assert x.grad.dtype == dtype
    assert_ulps(x.grad, np.tile(w.sum(0), (2, 1)), dtype, ulps=1)


@pytest.mark.parametrize("method,dtype", [("half", H), ("bfloat16", B)])
def test_module_half_bfloat16(method, dtype):
    model = nn.Sequential(nn.Linear(4, 3), nn.BatchNorm1d(3))
    assert getattr(model, method)() is model
    for name, p in model.named_parameters():
        assert p.dtype == dtype, name
    sd = model.state_dict()
    assert sd["1.running_mean"].dtype == dtype and sd["1.running_var"].dtype == dtype
    assert sd["1.num_batches_tracked"].dtype == I64  # not floating: untouched
    assert model.float() is model and model[0].weight.dtype == F32
    assert model.to(dtype)[0].bias.dtype == dtype


# ============================================================================ errors
def test_full_overflow_raises():
    for v in (1e6, -1e6):
        with pytest.raises(RuntimeError, match="overflow"):
            kiln.full((2,), v, dtype=H)
    with pytest.raises(RuntimeError, match="overflow"):
        kiln.full((2,), 1e39, dtype=B)
    assert kiln.full((2,), 65504.0, dtype=H).tolist() == [65504.0, 65504.0]
    assert kiln.full((2,), float("inf"), dtype=H).tolist() == [float("inf")] * 2
    assert np.isnan(kiln.full((1,), float("nan"), dtype=B).item())


# ============================================================================ repr (strings from torch)
@pytest.mark.parametrize("make,expected", [
    (lambda: kiln.tensor([1., 2., 3.], dtype=kiln.float16), "tensor([1., 2., 3.], dtype=kiln.float16)"),
    (lambda: kiln.tensor([0.1, -2.5], dtype=kiln.float16), "tensor([ 0.1000, -2.5000], dtype=kiln.float16)"),
    (lambda: kiln.tensor([0.1], dtype=kiln.bfloat16), "tensor([0.1001], dtype=kiln.bfloat16)"),
    (lambda: kiln.tensor(1.5, dtype=kiln.float16), "tensor(1.5000, dtype=kiln.float16)"),
    (lambda: kiln.tensor(1.5, dtype=kiln.bfloat16), "tensor(1.5000, dtype=kiln.bfloat16)"),
    (lambda: kiln.tensor([float("inf"), float("nan"), 1.], dtype=kiln.float16),
     "tensor([inf, nan, 1.], dtype=kiln.float16)"),
    (lambda: kiln.tensor([], dtype=kiln.float16), "tensor([], dtype=kiln.float16)"),
    (lambda: kiln.tensor([], dtype=kiln.bfloat16), "tensor([], dtype=kiln.bfloat16)"),
    (lambda: kiln.tensor([65504.], dtype=kiln.float16), "tensor([65504.], dtype=kiln.float16)"),
    (lambda: kiln.tensor([1e-4, 1.], dtype=kiln.float16), "tensor([1.0002e-04, 1.0000e+00], dtype=kiln.float16)"),
    (lambda: kiln.tensor([[1., 2.], [3., 4.]], dtype=kiln.bfloat16),
     "tensor([[1., 2.],\n        [3., 4.]], dtype=kiln.bfloat16)"),
    (lambda: kiln.tensor([1 / 3, 100.], dtype=kiln.bfloat16), "tensor([  0.3340, 100.0000], dtype=kiln.bfloat16)"),
    (lambda: kiln.tensor([1 / 3, 100.], dtype=kiln.float16), "tensor([  0.3333, 100.0000], dtype=kiln.float16)"),
    (lambda: kiln.arange(10, dtype=kiln.float16) / 3,
     ("tensor([0.0000, 0.3333, 0.6665, 1.0000, 1.3330, 1.6670, 2.0000, 2.3340, 2.6660,\n"
      "        3.0000], dtype=kiln.float16)")),
    (lambda: kiln.tensor([1e-8], dtype=kiln.bfloat16), "tensor([1.0012e-08], dtype=kiln.bfloat16)"),
    (lambda: kiln.tensor([3e38], dtype=kiln.bfloat16), "tensor([3.0041e+38], dtype=kiln.bfloat16)"),
    (lambda: kiln.tensor([256., 257.], dtype=kiln.bfloat16), "tensor([256., 256.], dtype=kiln.bfloat16)"),
    (lambda: kiln.tensor([2049., 1e5], dtype=kiln.float16), "tensor([2048.,   inf], dtype=kiln.float16)"),
    (lambda: kiln.tensor([1., 2.], dtype=kiln.float16, requires_grad=True),
     "tensor([1., 2.], dtype=kiln.float16, requires_grad=True)"),
])
def test_repr_matches_torch(make, expected):
    with np.errstate(all="ignore"):
        t = make()
    assert repr(t) == expected
    assert str(t) == expected


# ============================================================================ safetensors
def parse_safetensors(raw):
    (n,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8:8 + n])
    data = raw[8 + n:]
    return header, {k: data[v["data_offsets"][0]:v["data_offsets"][1]] for k, v in header.items()
                    if k != "__metadata__"}


def f16_payload():
    rng = np.random.default_rng(50)
    v = np.concatenate([rng.standard_normal(10).astype(np.float32),
                        [0.0, -0.0, np.inf, -np.inf, np.nan, 65504.0, 2.0 ** -24, -2.0 ** -14]]).astype(np.float32)
    return v.reshape(2, 3, 3).astype(np.float16)


def bf16_payload():
    rng = np.random.default_rng(51)
    v = np.concatenate([rng.standard_normal(10).astype(np.float32) * 1e3,
                        [0.0, -0.0, np.inf, -np.inf, np.nan, 3.3895314e38, 2.0 ** -133, 1e-30]]).astype(np.float32)
    return round32(v, B).reshape(3, 6)


def test_safetensors_round_trip(tmp_path):
    h, b32 = f16_payload(), bf16_payload()
    th, tb = kiln.from_numpy(h.copy()), kt(b32, B)
    path = tmp_path / "reduced.safetensors"
    kiln.save_file({"a": th, "b": tb, "c": kiln.ones(2)}, path)
    header, data = parse_safetensors(path.read_bytes())
    assert header["a"]["dtype"] == "F16" and header["a"]["shape"] == [2, 3, 3]
    assert header["b"]["dtype"] == "BF16" and header["b"]["shape"] == [3, 6]
    assert header["c"]["dtype"] == "F32"
    assert data["a"] == h.astype("<f2").tobytes()
    got_b = np.frombuffer(data["b"], dtype="<u2").reshape(b32.shape)
    nan = np.isnan(b32)
    np.testing.assert_array_equal(got_b[~nan], bf16_bits(b32)[~nan])
    assert ((got_b[nan] & 0x7F80) == 0x7F80).all() and (got_b[nan] & 0x7F).all()  # any NaN pattern
    out = kiln.load_file(path)
    assert out["a"].dtype == H and out["b"].dtype == B and out["c"].dtype == F32
    assert tuple(out["a"].shape) == (2, 3, 3) and tuple(out["b"].shape) == (3, 6)
    assert out["a"].numpy().tobytes() == h.tobytes()
    np.testing.assert_array_equal(bits_of(out["b"]), bits_of(tb))
    assert_bits(vals(out["b"]), b32)


def test_safetensors_non_contiguous_reduced(tmp_path):
    h = f16_payload().reshape(3, 6)
    t = kiln.from_numpy(h.copy()).t()
    path = tmp_path / "t.safetensors"
    kiln.save_file({"t": t, "u": kt(bf16_payload(), B)[:, ::2]}, path)
    header, data = parse_safetensors(path.read_bytes())
    assert header["t"]["shape"] == [6, 3] and data["t"] == np.ascontiguousarray(h.T).astype("<f2").tobytes()
    assert header["u"]["dtype"] == "BF16" and header["u"]["shape"] == [3, 3]
    out = kiln.load_file(path)
    assert out["t"].numpy().tobytes() == np.ascontiguousarray(h.T).tobytes()


def test_safetensors_load_hand_written_file(tmp_path):
    h = np.array([1.0, -2.5, 65504.0, 2.0 ** -24], dtype="<f2")
    b32 = np.array([[1.0, -0.5], [3.3895314e38, 1e-3]], np.float32)
    b_bits = bf16_bits(b32).astype("<u2")
    header = {"__metadata__": {"format": "pt"},
              "g": {"dtype": "BF16", "shape": [2, 2], "data_offsets": [0, 8]},
              "h": {"dtype": "F16", "shape": [4], "data_offsets": [8, 16]}}
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    raw = struct.pack("<Q", len(text)) + text + b_bits.tobytes() + h.tobytes()
    path = tmp_path / "hand.safetensors"
    path.write_bytes(raw)
    for out in (kiln.load_file(path), kiln.load(io.BytesIO(raw))):
        assert out["h"].dtype == H and out["g"].dtype == B
        assert_bits(out["h"].numpy(), h.astype(np.float16))
        assert_bits(vals(out["g"]), round32(b32, B))


def test_save_load_bytes_io_and_state_dict():
    model = nn.Linear(4, 3).bfloat16()
    buf = io.BytesIO()
    kiln.save(model.state_dict(), buf)
    loaded = kiln.load(io.BytesIO(buf.getvalue()))
    for k, v in model.state_dict().items():
        assert loaded[k].dtype == B
        np.testing.assert_array_equal(bits_of(loaded[k]), bits_of(v))
    fresh = nn.Linear(4, 3).bfloat16()
    fresh.load_state_dict(loaded)
    np.testing.assert_array_equal(bits_of(fresh.weight), bits_of(model.weight))
