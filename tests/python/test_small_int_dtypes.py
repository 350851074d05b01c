"""uint8, int8 and int16 (kiln.uint8 / int8 / int16, kiln.short; Tensor.byte() / char() / short()),
checked against torch 1.13 on the CPU: promotion over every dtype pair, wraparound arithmetic,
integer division signs, bitwise ops and shifts, casts both ways at the edge values, reductions,
NumPy round trips, uint8 masks, factories, printing, serialization and the generator state.

The reference is always torch (or NumPy where torch is the same), never kiln itself.
"""
import io
import itertools
import warnings

import numpy as np
import pytest

import kiln

torch = pytest.importorskip("torch", reason="PyTorch is not installed (the oracle)")

SMALL = ["uint8", "int8", "int16"]
EVERY = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32", "float64"]
# Values at and around each small type's limits.
EDGES = {
    "uint8": [0, 1, 2, 3, 7, 100, 127, 128, 200, 254, 255],
    "int8": [-128, -127, -100, -7, -2, -1, 0, 1, 3, 100, 126, 127],
    "int16": [-32768, -32767, -1000, -129, -128, -7, -1, 0, 1, 3, 127, 128, 255, 256, 32766, 32767],
}


def K(name):
    return getattr(kiln, name)


def T(name):
    return getattr(torch, name)


def pair(values, dtype):
    """The same values as a kiln and a torch tensor of `dtype`."""
    arr = np.array(values)
    return kiln.tensor(arr.tolist(), dtype=K(dtype)), torch.tensor(arr.tolist(), dtype=T(dtype))


def to_np(t):
    """Values of a kiln or torch tensor for comparison (bfloat16 through float32)."""
    if t.dtype in (kiln.bfloat16, torch.bfloat16):
        t = t.float()
    return t.numpy() if isinstance(t, torch.Tensor) else t.detach().numpy()


def dname(dtype):
    return str(dtype).split(".")[1]


def assert_same(got, want):
    """kiln's result has torch's dtype, shape and values (NaN where torch has NaN)."""
    assert dname(got.dtype) == dname(want.dtype), (got.dtype, want.dtype)
    assert tuple(got.shape) == tuple(want.shape)
    np.testing.assert_array_equal(to_np(got), to_np(want))


def outer(dtype_a, dtype_b):
    """Every pair of edge values of two dtypes, as (kiln a, kiln b, torch a, torch b)."""
    va, vb = EDGES.get(dtype_a, [0, 1]), EDGES.get(dtype_b, [0, 1])
    a, b = zip(*itertools.product(va, vb))
    ka, ta = pair(a, dtype_a)
    kb, tb = pair(b, dtype_b)
    return ka, kb, ta, tb


# ---- dtype objects ----

def test_dtype_objects_and_aliases():
    for name in SMALL:
        d = K(name)
        assert isinstance(d, kiln.dtype) and repr(d) == f"kiln.{name}"
        assert d.itemsize == torch.empty(0, dtype=T(name)).element_size() and d.is_floating_point is False
    assert kiln.short is kiln.int16
    for name in SMALL:
        i, j = kiln.iinfo(K(name)), torch.iinfo(T(name))
        assert (i.min, i.max, i.bits) == (j.min, j.max, j.bits)


def test_conversion_methods_and_legacy_names():
    k, t = pair([1, 2, 300, -1], "int64")
    for method in ("byte", "char", "short"):
        assert_same(getattr(k, method)(), getattr(t, method)())
        assert getattr(k, method)().type() == getattr(t, method)().type().replace("torch.", "kiln.")
    assert kiln.ByteTensor([1, 2]).dtype == kiln.uint8 and kiln.CharTensor(2, 3).shape == (2, 3)
    assert kiln.ShortTensor([1]).dtype == kiln.int16
    assert k.byte().is_signed() == t.byte().is_signed() and k.char().is_signed() == t.char().is_signed()


# ---- promotion ----

@pytest.mark.parametrize("a", EVERY)
def test_promote_types_matches_torch_for_every_pair(a):
    for b in EVERY:
        assert dname(kiln.promote_types(K(a), K(b))) == dname(torch.promote_types(T(a), T(b))), (a, b)


@pytest.mark.parametrize("a", SMALL)
def test_result_type_with_tensors_of_every_dtype_and_numbers(a):
    ka, ta = pair([1, 2], a)
    for b in EVERY:
        kb, tb = pair([1, 0], b)
        k0, t0 = kiln.ones((), dtype=K(b)), torch.ones((), dtype=T(b))
        assert dname(kiln.result_type(ka, kb)) == dname(torch.result_type(ta, tb)), (a, b)
        assert dname(kiln.result_type(ka, k0)) == dname(torch.result_type(ta, t0)), (a, b, "0-dim")
        assert dname(kiln.result_type(k0, ka)) == dname(torch.result_type(t0, ta)), (b, "0-dim", a)
        assert dname((ka + kb).dtype) == dname((ta + tb).dtype), (a, b)
        assert dname((kb * ka[:1]).dtype) == dname((tb * ta[:1]).dtype), (b, a)
    for number in (1, -3, 2.5, True, 300):
        assert dname(kiln.result_type(ka, number)) == dname(torch.result_type(ta, number)), (a, number)
        assert dname((ka + number).dtype) == dname((ta + number).dtype), (a, number)


# ---- arithmetic ----

@pytest.mark.parametrize("a,b", [(a, b) for a in SMALL for b in SMALL + ["bool", "int32"]])
@pytest.mark.parametrize("op", ["add", "sub", "mul", "maximum", "minimum", "eq", "lt", "ge", "ne"])
def test_binary_arithmetic_wraps_as_torch(a, b, op):
    if op == "sub" and "bool" in (a, b):
        pytest.skip("bool subtraction is an error (tested in test_ops_arith.py)")
    ka, kb, ta, tb = outer(a, b)
    assert_same(getattr(kiln, op)(ka, kb), getattr(torch, op)(ta, tb))


@pytest.mark.parametrize("dtype", SMALL)
def test_wraparound_examples(dtype):
    k, t = pair(EDGES[dtype], dtype)
    for f in (lambda x: x + 1, lambda x: x - 1, lambda x: x * 3, lambda x: -x, lambda x: x + 300,
              lambda x: 1 - x, lambda x: x * x, lambda x: x.abs(), lambda x: x.sign(), lambda x: x ** 2,
              lambda x: x.clamp(-5, 100) if dtype != "uint8" else x.clamp(5, 100), lambda x: x.neg()):
        assert_same(f(k), f(t))
    kk = k.clone()
    kk += 200
    tt = t.clone()
    tt += 200
    assert_same(kk, tt)
    assert pair([255], "uint8")[0].add(1).tolist() == [0]


@pytest.mark.parametrize("a", SMALL)
@pytest.mark.parametrize("b", SMALL)
@pytest.mark.parametrize("op", ["floor_divide", "remainder", "fmod", "div", "true_divide"])
def test_integer_division_signs_as_torch(a, b, op):
    ka, kb, ta, tb = outer(a, b)
    keep = tb != 0
    ka, kb = ka[kiln.from_numpy(keep.numpy())], kb[kiln.from_numpy(keep.numpy())]
    ta, tb = ta[keep], tb[keep]
    got, want = getattr(kiln, op)(ka, kb), getattr(torch, op)(ta, tb)
    assert dname(got.dtype) == dname(want.dtype)
    np.testing.assert_allclose(to_np(got), to_np(want), rtol=1e-6)


def test_integer_division_by_zero_raises_as_torch():
    for dtype in SMALL:
        k, t = pair([1, 2], dtype)
        with pytest.raises(RuntimeError, match="ZeroDivisionError"):
            t // torch.zeros(2, dtype=T(dtype))
        with pytest.raises(RuntimeError, match="ZeroDivisionError"):
            k // kiln.zeros(2, dtype=K(dtype))


@pytest.mark.parametrize("a", SMALL + ["bool"])
@pytest.mark.parametrize("op", ["bitwise_and", "bitwise_or", "bitwise_xor"])
def test_bitwise_ops(a, op):
    for b in SMALL + ["bool", "int64"]:
        ka, kb, ta, tb = outer(a, b)
        assert_same(getattr(kiln, op)(ka, kb), getattr(torch, op)(ta, tb))
    k, t = pair(EDGES.get(a, [0, 1]), a)
    assert_same(~k, ~t)
    assert_same(k & 6, t & 6)


@pytest.mark.parametrize("dtype", SMALL + ["int32", "int64"])
def test_shifts_as_torch(dtype):
    values = EDGES.get(dtype, [-2 ** 31 + 5, -7, -1, 0, 1, 3, 12345, 2 ** 30 + 1])
    bits = np.dtype(dtype).itemsize * 8
    counts = list(range(0, bits))
    if dtype in SMALL:  # torch's small-type kernels shift in int: counts up to 31 are defined there
        counts += [bits, bits + 1, 31]
    a, b = zip(*itertools.product(values, counts))
    ka, ta = pair(a, dtype)
    kb, tb = pair(b, dtype)
    assert_same(ka << kb, ta << tb)
    assert_same(ka >> kb, ta >> tb)
    assert_same(kiln.bitwise_left_shift(ka, 3), torch.bitwise_left_shift(ta, 3))
    assert_same(ka.bitwise_right_shift(kb), ta.bitwise_right_shift(tb))
    assert_same(2 << kb[:5], 2 << tb[:5])
    k, t = ka.clone(), ta.clone()
    k <<= 1
    t <<= 1
    assert_same(k, t)
    k >>= 2
    t >>= 2
    assert_same(k, t)


def test_shifts_mixed_dtypes_and_refusals():
    ka, kb, ta, tb = outer("uint8", "int8")
    ok = (tb >= 0) & (tb < 16)  # the int16 result's width: torch's wider counts are undefined behaviour
    kok = kiln.from_numpy(ok.numpy())
    assert_same(ka[kok] << kb[kok], ta[ok] << tb[ok])
    assert_same(kiln.tensor([True]) << 1, torch.tensor([True]) << 1)
    for bad in (lambda m: m.tensor([1.5]) << 2, lambda m: m.tensor([True]) << m.tensor([True]),
                lambda m: m.tensor([4]) >> 1.5):
        with pytest.raises(RuntimeError, match="shift_cpu\" not implemented for"):
            bad(torch)
        with pytest.raises(RuntimeError, match="shift_cpu\" not implemented for"):
            bad(kiln)


# ---- casts ----

FLOAT_EDGES = [0.0, -0.0, 0.4, -0.6, 1.5, -1.5, -1.0, 100.7, 127.0, 128.0, 200.0, 255.0, 255.9, 256.0, 300.0,
               -129.0, -200.0, 32767.0, 32768.0, 65535.0, 65536.0 + 7, -32769.0, 2.0 ** 31, -2.0 ** 31 - 1e3,
               1e10, -1e10, 2.0 ** 40 + 5, float("nan"), float("inf"), float("-inf")]
INT_EDGES = [0, 1, -1, 127, 128, -128, -129, 255, 256, 300, -300, 32767, 32768, -32768, -32769, 65535, 65537,
             2 ** 31 - 1, -2 ** 31, 2 ** 40 + 3, -2 ** 63, 2 ** 63 - 1]


@pytest.mark.parametrize("source", ["float16", "bfloat16", "float32", "float64"])
@pytest.mark.parametrize("target", SMALL)
def test_float_to_small_int_matches_torch_at_edge_values(source, target):
    k, t = pair(FLOAT_EDGES, "float64")
    k, t = k.to(K(source)), t.to(T(source))
    assert_same(k.to(K(target)), t.to(T(target)))
    big_k, big_t = k.repeat(300), t.repeat(300)  # long enough for torch's vectorized loop
    assert_same(big_k.to(K(target)), big_t.to(T(target)))


@pytest.mark.parametrize("source", ["bool", "int16", "int32", "int64", "uint8", "int8"])
@pytest.mark.parametrize("target", SMALL + ["bool", "int32", "int64", "float16", "bfloat16", "float32", "float64"])
def test_integer_casts_both_ways(source, target):
    ints = [v for v in INT_EDGES if np.iinfo(np.int64).min <= v <= np.iinfo(np.int64).max]
    k, t = pair(ints, "int64")
    k, t = k.to(K(source)), t.to(T(source))
    assert_same(k, t)
    assert_same(k.to(K(target)), t.to(T(target)))


def test_item_tolist_and_python_conversions():
    for dtype in SMALL:
        k, t = pair(EDGES[dtype], dtype)
        assert k.tolist() == t.tolist()
        assert [type(v) for v in k.tolist()] == [int] * len(EDGES[dtype])
        assert k[-1].item() == t[-1].item() and int(k[0]) == int(t[0]) and float(k[1]) == float(t[1])
        one = EDGES[dtype].index(1)
        assert [0, 1, 2, 3][k[one]] == [0, 1, 2, 3][t[one]] == 1  # __index__


# ---- reductions ----

@pytest.mark.parametrize("dtype", SMALL)
def test_reductions_promote_as_torch(dtype):
    k, t = pair(EDGES[dtype] * 3, dtype)
    k2, t2 = k.reshape(3, -1), t.reshape(3, -1)
    for f in (lambda x: x.sum(), lambda x: x.sum(1), lambda x: x.prod(1), lambda x: x.cumsum(1),
              lambda x: x.cumprod(0), lambda x: x.max(), lambda x: x.min(1).values, lambda x: x.argmax(1),
              lambda x: x.amax(0), lambda x: x.sum(dtype=T("int16") if isinstance(x, torch.Tensor) else kiln.int16),
              lambda x: x.sort(1).values, lambda x: x.sort(1, descending=True).values, lambda x: x.any(1),
              lambda x: x.all(0), lambda x: x.count_nonzero(), lambda x: x.float().mean(1),
              lambda x: x.flip(0), lambda x: x.t().contiguous(), lambda x: x.unique(), lambda x: x.median(1).values):
        assert_same(f(k2), f(t2))
    with pytest.raises(RuntimeError):
        t.mean()
    with pytest.raises(RuntimeError):
        k.mean()


def test_sum_of_many_uint8_does_not_wrap():
    k = kiln.full((1000,), 255, dtype=kiln.uint8)
    t = torch.full((1000,), 255, dtype=torch.uint8)
    assert_same(k.sum(), t.sum())
    assert k.sum().item() == 255000


# ---- floating-only ops ----

@pytest.mark.parametrize("dtype", SMALL)
def test_float_ops_of_small_ints_compute_in_the_default_dtype(dtype):
    k, t = pair([v for v in EDGES[dtype] if v > 0], dtype)
    for f in (lambda m, x: x.exp(), lambda m, x: x.sqrt(), lambda m, x: x / 3, lambda m, x: x * 0.5,
              lambda m, x: m.sigmoid(x), lambda m, x: x.log1p(), lambda m, x: x.true_divide(x)):
        got, want = f(kiln, k), f(torch, t)
        assert dname(got.dtype) == dname(want.dtype)
        np.testing.assert_allclose(to_np(got), to_np(want), rtol=1e-6)


def test_integer_tensors_cannot_require_grad():
    for dtype in SMALL:
        with pytest.raises(RuntimeError, match="floating point"):
            torch.zeros(2, dtype=T(dtype)).requires_grad_()
        with pytest.raises(RuntimeError, match="floating point"):
            kiln.zeros(2, dtype=K(dtype)).requires_grad_()


# ---- creation ----

@pytest.mark.parametrize("dtype", SMALL)
def test_factories(dtype):
    for f in (lambda m: m.zeros(2, 3, dtype=getattr(m, dtype)), lambda m: m.ones(4, dtype=getattr(m, dtype)),
              lambda m: m.full((2,), 100, dtype=getattr(m, dtype)), lambda m: m.arange(5, dtype=getattr(m, dtype)),
              lambda m: m.arange(2, 90, 7, dtype=getattr(m, dtype)), lambda m: m.zeros_like(m.ones(3), dtype=getattr(m, dtype)),
              lambda m: m.full((3,), 7).to(getattr(m, dtype)), lambda m: m.eye(3, dtype=getattr(m, dtype)),
              lambda m: m.ones(3, dtype=getattr(m, dtype)).fill_(-1),
              lambda m: m.linspace(-10, 10, 4, dtype=getattr(m, dtype)),
              lambda m: m.linspace(3, -2, 6, dtype=getattr(m, dtype)),
              lambda m: m.empty(0, dtype=getattr(m, dtype))):
        assert_same(f(kiln), f(torch))


@pytest.mark.parametrize("dtype", SMALL)
def test_random_ints_follow_torchs_stream(dtype):
    for f in (lambda m: m.randint(0, 100, (50,), dtype=getattr(m, dtype)),
              lambda m: m.randint(3, (7, 3), dtype=getattr(m, dtype)),
              lambda m: m.zeros(64, dtype=getattr(m, dtype)).random_(),
              lambda m: m.zeros(64, dtype=getattr(m, dtype)).random_(5, 20),
              lambda m: m.randperm(100, dtype=getattr(m, dtype))):
        kiln.manual_seed(3)
        torch.manual_seed(3)
        assert_same(f(kiln), f(torch))
    for args in ((-1, 5), (0, 300)):
        bad = (lambda m: m.zeros(3, dtype=getattr(m, dtype)).random_(*args))
        try:
            bad(torch)
        except RuntimeError:
            with pytest.raises(RuntimeError, match="out of bounds"):
                bad(kiln)
        else:
            bad(kiln)


@pytest.mark.parametrize("data", [[1, 2, 3], [-1], [255], [-255], [1.5, 2.9], [True, False], [[1, 2], [3, 4]]])
@pytest.mark.parametrize("dtype", SMALL)
def test_tensor_from_python_values(data, dtype):
    try:
        want = torch.tensor(data, dtype=T(dtype))
    except RuntimeError as e:
        with pytest.raises(RuntimeError, match=f"^{e}$"):  # torch's words: "... to type uint8 without overflow"
            kiln.tensor(data, dtype=K(dtype))
        return
    assert_same(kiln.tensor(data, dtype=K(dtype)), want)


@pytest.mark.parametrize("data", [[300], [-256], [1.5, -1.0], [255.5], [40000], [-129]])
@pytest.mark.parametrize("dtype", SMALL)
def test_tensor_values_out_of_range(data, dtype):
    try:
        want = torch.tensor(data, dtype=T(dtype))
    except RuntimeError as e:
        with pytest.raises(RuntimeError, match=f"^{e}$"):  # torch's words: "... to type uint8 without overflow"
            kiln.tensor(data, dtype=K(dtype))
        return
    assert_same(kiln.tensor(data, dtype=K(dtype)), want)


def test_fill_values_follow_torchs_range_rule():
    # uint8 takes -255..255 (negatives wrap), torch's rule for unsigned types; floats must fit.
    for dtype, value in [("uint8", -1), ("uint8", -255), ("uint8", 256), ("uint8", -1.5), ("uint8", 1.5),
                         ("int8", 128), ("int8", -128), ("int16", 40000), ("int16", -32768)]:
        def fill(m):
            return m.zeros(2, dtype=getattr(m, dtype)).fill_(value)
        try:
            want = fill(torch)
        except RuntimeError:
            with pytest.raises(RuntimeError, match="value cannot be converted"):
                fill(kiln)
            continue
        assert_same(fill(kiln), want)


def test_refusals_of_small_int_inputs_as_torch():
    for call in (lambda m: m.linspace(0, 300, 3, dtype=m.uint8), lambda m: m.linspace(-200, 1, 3, dtype=m.int8),
                 lambda m: m.nn.functional.one_hot(m.tensor([1, 2], dtype=m.uint8)),
                 lambda m: m.nn.functional.one_hot(m.tensor([1, 2], dtype=m.int32)),
                 lambda m: m.nn.functional.hardtanh(m.ones(2, dtype=m.uint8)),
                 lambda m: m.zeros(2, dtype=m.uint8).mean(), lambda m: m.zeros(3, dtype=m.int8).var(),
                 lambda m: m.nn.functional.softmax(m.zeros(2, dtype=m.int16), 0),
                 lambda m: m.zeros(2, dtype=m.int16).exp_(), lambda m: m.zeros(2, dtype=m.uint8).normal_(),
                 lambda m: m.zeros(2, dtype=m.uint8).bitwise_and(m.ones(2)),
                 lambda m: m.full((2,), 256, dtype=m.uint8), lambda m: m.zeros(2, dtype=m.int8).fill_(200)):
        with pytest.raises(RuntimeError):
            call(torch)
        with pytest.raises(RuntimeError):
            call(kiln)


# ---- NumPy ----

@pytest.mark.parametrize("np_dtype", [np.uint8, np.int8, np.int16])
def test_numpy_round_trip_shares_memory(np_dtype):
    a = np.array([[0, 1, 2], [3, 4, 5]], dtype=np_dtype)
    k, t = kiln.from_numpy(a), torch.from_numpy(a)
    assert_same(k, t)
    a[0, 0] = 9  # shared
    assert k[0, 0].item() == 9
    back = k.numpy()
    assert back.dtype == np_dtype and np.shares_memory(back, a)
    assert kiln.as_tensor(a).dtype == k.dtype and np.shares_memory(kiln.as_tensor(a).numpy(), a)
    assert_same(kiln.tensor(a), torch.tensor(a))
    assert_same(kiln.tensor(a[:, ::2]), torch.tensor(a[:, ::2]))


def test_numpy_arrays_convert_without_range_checks_as_torch():
    for arr in (np.array([300, -1, 2 ** 20 + 5]), np.array([-1.5, 300.0, 1e10])):
        for dtype in SMALL:
            assert_same(kiln.tensor(arr, dtype=K(dtype)), torch.tensor(arr, dtype=T(dtype)))
    assert_same(kiln.tensor(np.uint8(3)), torch.tensor(np.uint8(3)))
    assert_same(kiln.tensor([np.int8(3), np.int8(-4)]), torch.tensor([np.int8(3), np.int8(-4)]))


def test_unsupported_numpy_dtype_message():
    with pytest.raises(TypeError, match="int16, int8, uint8, and bool"):
        kiln.from_numpy(np.zeros(2, dtype=np.uint16))


# ---- indexing ----

def test_uint8_mask_indexes_as_bool_with_torchs_warning():
    kx, tx = pair(np.arange(12).reshape(3, 4).tolist(), "float32")
    km, tm = pair([[1, 0, 1, 0], [0, 0, 0, 0], [1, 1, 1, 1]], "uint8")
    with pytest.warns(UserWarning, match="indexing with dtype torch.uint8 is now deprecated"):
        want = tx[tm]
    with pytest.warns(UserWarning, match="indexing with dtype kiln.uint8 is now deprecated"):
        got = kx[km]
    assert_same(got, want)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert_same(kx[0][km[0]], tx[0][tm[0]])
        kx[km] = -1
        tx[tm] = -1
        assert_same(kx, tx)
        assert_same(kx[1:, km[0]], tx[1:, tm[0]])


def test_masks_built_from_byte_comparisons():
    kx, tx = pair([5, 200, 17, 255], "uint8")
    assert_same(kx[kx > 100], tx[tx > 100])
    assert_same(kx.masked_fill(kx > 100, 0), tx.masked_fill(tx > 100, 0))
    assert_same(kiln.where(kx > 100, kx, kiln.tensor(1, dtype=kiln.uint8)),
                torch.where(tx > 100, tx, torch.tensor(1, dtype=torch.uint8)))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert_same(kx[(kx > 100).byte()], tx[(tx > 100).byte()])


def test_small_int_index_tensors():
    kx, tx = pair(np.arange(8).tolist(), "float32")
    for dtype in ("int8", "int16"):
        ki, ti = pair([1, 3], dtype)
        with pytest.raises(IndexError, match="tensors used as indices must be long"):
            tx[ti]
        with pytest.raises(IndexError, match="tensors used as indices must be long"):
            kx[ki]
        assert_same(kx[ki[1]], tx[ti[1]])  # 0-dim: an integer
        with pytest.raises(RuntimeError, match="index_select\\(\\): Expected dtype int32"):
            tx.index_select(0, ti)
        with pytest.raises(RuntimeError, match="index_select\\(\\): Expected dtype int32"):
            kx.index_select(0, ki)
    ki, ti = pair([1, 3], "int64")
    assert_same(kx.byte()[ki], tx.byte()[ti])
    assert_same(kx.char().gather(0, ki), tx.char().gather(0, ti))
    assert_same(kx.short().index_select(0, ki), tx.short().index_select(0, ti))


# ---- printing ----

@pytest.mark.parametrize("dtype", SMALL)
def test_repr_as_torch(dtype):
    for values in (EDGES[dtype], [[1, 2], [3, 4]], [], 7):
        k, t = pair(values, dtype)
        assert repr(k) == repr(t).replace("torch.", "kiln."), values
    k, t = pair(list(range(0, 2000)), "int64")
    assert repr(k.to(K(dtype))) == repr(t.to(T(dtype))).replace("torch.", "kiln.")


# ---- serialization ----

@pytest.mark.parametrize("dtype", SMALL)
def test_torch_checkpoints_both_ways(tmp_path, dtype):
    k, t = pair(EDGES[dtype], dtype)
    torch.save({"x": t, "view": t[1::2], "dtype": T(dtype)}, tmp_path / "t.pt")
    loaded = kiln.load(tmp_path / "t.pt")
    assert_same(loaded["x"], t)
    assert_same(loaded["view"], t[1::2])
    assert loaded["dtype"] is K(dtype)
    kiln.save({"x": k, "dtype": K(dtype)}, tmp_path / "k.pt")
    back = torch.load(tmp_path / "k.pt")
    assert_same(k, back["x"])
    assert back["dtype"] is T(dtype)


def test_torch_state_dict_with_byte_buffers(tmp_path):
    torch.save({"mask": torch.tensor([[1, 0], [0, 1]], dtype=torch.uint8),
                "short": torch.arange(-3, 3, dtype=torch.int16),
                "char": torch.tensor([-128, 127], dtype=torch.int8)}, tmp_path / "sd.pt")
    sd = kiln.load(tmp_path / "sd.pt")
    assert [dname(sd[k].dtype) for k in ("mask", "short", "char")] == ["uint8", "int16", "int8"]
    assert sd["char"].tolist() == [-128, 127]


@pytest.mark.parametrize("dtype,code", [("uint8", "U8"), ("int8", "I8"), ("int16", "I16")])
def test_safetensors_round_trip_and_header(tmp_path, dtype, code):
    k, _ = pair(EDGES[dtype], dtype)
    kiln.save_file({"x": k, "y": k.float()}, tmp_path / "a.safetensors")
    raw = (tmp_path / "a.safetensors").read_bytes()
    assert f'"dtype":"{code}"'.encode() in raw
    back = kiln.load_file(tmp_path / "a.safetensors")
    assert back["x"].dtype == K(dtype) and back["x"].tolist() == EDGES[dtype]
    # The data bytes are NumPy's little-endian bytes of the values.
    assert np.array(EDGES[dtype], dtype=np.dtype(dtype).newbyteorder("<")).tobytes() in raw


# ---- the generator state ----

def test_rng_state_is_torchs_uint8_tensor():
    kiln.manual_seed(5)
    torch.manual_seed(5)
    kiln.rand(3)
    torch.rand(3)
    ks, ts = kiln.get_rng_state(), torch.get_rng_state()
    assert_same(ks, ts)
    torch.set_rng_state(torch.from_numpy(ks.numpy().copy()))  # kiln's state, as torch takes it
    kiln.set_rng_state(kiln.from_numpy(ts.numpy().copy()))
    np.testing.assert_array_equal(kiln.rand(5).numpy(), torch.rand(5).numpy())
    kiln.set_rng_state(ks.long())  # the int64 states of earlier kiln versions still load
    torch.set_rng_state(ts)
    np.testing.assert_array_equal(kiln.rand(5).numpy(), torch.rand(5).numpy())


# ---- DataLoader ----

def test_default_collate_of_uint8_images():
    from torch.utils.data import default_collate as torch_collate
    from kiln.utils.data.dataloader import default_collate
    images = [np.full((2, 3), i * 100, dtype=np.uint8) for i in range(3)]
    assert_same(default_collate(images), torch_collate(images))
    batch = [(img, np.uint8(i)) for i, img in enumerate(images)]
    got, want = default_collate(batch), torch_collate(batch)
    assert_same(got[0], want[0])
    assert_same(got[1], want[1])
    loader = kiln.utils.data.DataLoader(images, batch_size=2)
    assert [dname(b.dtype) for b in loader] == ["uint8", "uint8"]


def test_to_and_type_conversions_of_byte_images():
    img = np.arange(24, dtype=np.uint8).reshape(2, 3, 4) * 10
    k, t = kiln.from_numpy(img), torch.from_numpy(img)
    assert_same(k.float() / 255, t.float() / 255)
    assert_same(k.to(kiln.float32).div(255).mul(255).round().to(kiln.uint8),
                t.to(torch.float32).div(255).mul(255).round().to(torch.uint8))
    assert_same(k.permute(2, 0, 1).contiguous(), t.permute(2, 0, 1).contiguous())
    assert_same(kiln.cat([k, k]), torch.cat([t, t]))
    assert_same(kiln.stack([k, k], 1), torch.stack([t, t], 1))
