"""Factories (empty, zeros, ones, full, their _like forms, arange) and mm, against NumPy."""
import numpy as np
import pytest

import kiln

DTYPES = [kiln.bool, kiln.int32, kiln.int64, kiln.float32, kiln.float64]
FLOATS = [kiln.float32, kiln.float64]
NP = {kiln.bool: np.bool_, kiln.int32: np.int32, kiln.int64: np.int64,
      kiln.float32: np.float32, kiln.float64: np.float64}


# ----------------------------------------------------------------------------- helpers
def is_float(dt):
    return dt in FLOATS


def kt(a):
    return kiln.tensor(np.array(a, order="C"))


def c_strides(shape):
    strides, acc = [], 1
    for n in reversed(shape):
        strides.append(acc)
        acc *= max(n, 1)
    return tuple(reversed(strides))


def assert_tensor(t, expected, dtype, rtol=0.0, atol=0.0):
    """dtype, shape, contiguous-or-not aside, and values: exact unless a tolerance is given."""
    assert isinstance(t, kiln.Tensor)
    assert t.dtype == dtype, f"dtype {t.dtype}, expected {dtype}"
    expected = np.asarray(expected)
    assert tuple(t.shape) == expected.shape
    if rtol or atol:
        np.testing.assert_allclose(t.numpy(), expected.astype(NP[dtype]), rtol=rtol, atol=atol)
    else:
        np.testing.assert_array_equal(t.numpy(), expected.astype(NP[dtype]))


def size_spellings(shape):
    """The ways a size can be given: varargs, a tuple, a list, size=."""
    forms = [((tuple(shape),), {}), ((list(shape),), {}), ((), {"size": tuple(shape)})]
    if shape:
        forms.append((tuple(shape), {}))
    return forms


SHAPES = [(), (0,), (5,), (2, 3), (0, 3), (2, 3, 4)]
FILL = {"zeros": 0, "ones": 1}


# ----------------------------------------------------------------------------- empty / zeros / ones
@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("dtype", DTYPES + [None], ids=str)
@pytest.mark.parametrize("name", ["empty", "zeros", "ones"])
def test_factory(name, dtype, shape):
    rt = dtype or kiln.float32  # the default dtype
    for args, kwargs in size_spellings(shape):
        kw = dict(kwargs, dtype=dtype) if dtype is not None else kwargs
        t = getattr(kiln, name)(*args, **kw)
        assert t.dtype == rt and tuple(t.shape) == shape
        assert t.is_contiguous() and t.stride() == c_strides(shape)
        assert t.requires_grad is False
        if name != "empty":
            assert_tensor(t, np.full(shape, FILL[name]), rt)


def test_zeros_varargs_and_tuple_agree():
    assert tuple(kiln.zeros(2, 3).shape) == tuple(kiln.zeros((2, 3)).shape) == (2, 3)
    assert tuple(kiln.ones(4).shape) == (4,)
    assert tuple(kiln.zeros([]).shape) == tuple(kiln.zeros(()).shape) == ()


def test_factories_allocate_fresh_memory():
    a, b = kiln.zeros(3), kiln.zeros(3)
    assert a.data_ptr() != b.data_ptr()
    a.fill_(1.0)
    np.testing.assert_array_equal(b.numpy(), [0.0, 0.0, 0.0])


# ----------------------------------------------------------------------------- full
@pytest.mark.parametrize("case", [
    (7, None, kiln.int64, 7), (-3, None, kiln.int64, -3), (2.5, None, kiln.float32, 2.5),
    (True, None, kiln.bool, True), (False, None, kiln.bool, False),
    (3, kiln.float64, kiln.float64, 3.0), (2.9, kiln.int32, kiln.int32, 2), (-2.9, kiln.int64, kiln.int64, -2),
    (0.5, kiln.bool, kiln.bool, True), (0, kiln.bool, kiln.bool, False), (True, kiln.float32, kiln.float32, 1.0),
    (1e-3, kiln.float64, kiln.float64, 1e-3),
], ids=str)
@pytest.mark.parametrize("shape", [(), (4,), (2, 3), (0, 2)], ids=str)
def test_full(shape, case):
    """full infers its dtype from the fill value (int -> int64, float -> default, bool -> bool)."""
    value, dtype, rt, expected = case
    kw = {} if dtype is None else {"dtype": dtype}
    for args, kwargs in size_spellings(shape)[:3]:
        t = kiln.full(*args, value, **kw) if args else kiln.full(fill_value=value, **kwargs, **kw)
        assert t.stride() == c_strides(shape)
        assert_tensor(t, np.full(shape, expected), rt)


def test_full_requires_a_size_sequence():
    with pytest.raises(TypeError):
        kiln.full(2, 3)  # as in PyTorch: size must be a sequence


@pytest.mark.parametrize("case", [((2,), 2**40, kiln.int32), ((2,), 1e300, None), ((2,), -1e300, kiln.float32),
                                  ((2,), 2**31, kiln.int32)], ids=str)
def test_full_value_that_overflows_the_dtype_raises(case):
    """PyTorch converts the fill value with a checked conversion: 'value cannot be converted
    to type ... without overflow' (RuntimeError), rather than wrapping or giving inf."""
    shape, value, dtype = case
    with pytest.raises(RuntimeError):
        kiln.full(shape, value, dtype=dtype) if dtype else kiln.full(shape, value)


# ----------------------------------------------------------------------------- requires_grad
@pytest.mark.parametrize("name", ["empty", "zeros", "ones", "full"])
@pytest.mark.parametrize("dtype", FLOATS + [None], ids=str)
def test_factory_requires_grad(name, dtype):
    args = ((2, 3), 1.5) if name == "full" else ((2, 3),)
    kw = {"dtype": dtype} if dtype else {}
    t = getattr(kiln, name)(*args, requires_grad=True, **kw)
    assert t.requires_grad and t.is_leaf and t.grad_fn is None
    assert not getattr(kiln, name)(*args, requires_grad=False, **kw).requires_grad


@pytest.mark.parametrize("dtype", [kiln.bool, kiln.int32, kiln.int64], ids=str)
@pytest.mark.parametrize("name", ["empty", "zeros", "ones"])
def test_integral_factory_requires_grad_raises(name, dtype):
    with pytest.raises(RuntimeError):
        getattr(kiln, name)(2, 3, dtype=dtype, requires_grad=True)
    with pytest.raises(RuntimeError):
        kiln.full((2,), 3, requires_grad=True)  # inferred int64


# ----------------------------------------------------------------------------- negative sizes
@pytest.mark.parametrize("shape", [(-1,), (2, -3), (-2, 0)], ids=str)
@pytest.mark.parametrize("name", ["empty", "zeros", "ones", "full"])
def test_negative_size_raises_like_torch(name, shape):
    """PyTorch: RuntimeError 'Trying to create tensor with negative dimension -1: [-1]'."""
    with pytest.raises(RuntimeError, match="negative dimension"):
        if name == "full":
            kiln.full(shape, 1.0)
        else:
            getattr(kiln, name)(shape)


# ----------------------------------------------------------------------------- *_like
LIKE_SOURCES = [((2, 3), kiln.int32), ((), kiln.float64), ((0, 4), kiln.bool), ((3, 1, 2), kiln.float32),
                ((5,), kiln.int64)]


@pytest.mark.parametrize("dtype", [None] + DTYPES, ids=str)
@pytest.mark.parametrize("src", LIKE_SOURCES, ids=str)
@pytest.mark.parametrize("name", ["empty_like", "zeros_like", "ones_like", "full_like"])
def test_like(name, src, dtype):
    shape, src_dtype = src
    x = kiln.zeros(shape, dtype=src_dtype)
    rt = dtype or src_dtype
    kw = {"dtype": dtype} if dtype else {}
    t = kiln.full_like(x, 3, **kw) if name == "full_like" else getattr(kiln, name)(x, **kw)
    assert t.dtype == rt and tuple(t.shape) == shape
    assert t.numel() == 0 or t.data_ptr() != x.data_ptr()
    assert not t.requires_grad
    if name != "empty_like":
        assert_tensor(t, np.full(shape, {"zeros_like": 0, "ones_like": 1, "full_like": 3}[name]), rt)


def test_full_like_casts_the_value_to_the_dtype():
    assert_tensor(kiln.full_like(kiln.zeros(3, dtype=kiln.int64), 2.7), [2, 2, 2], kiln.int64)
    assert_tensor(kiln.full_like(kiln.zeros(2), True), [1.0, 1.0], kiln.float32)
    assert_tensor(kiln.full_like(kiln.zeros(2, dtype=kiln.bool), 5), [True, True], kiln.bool)
    assert_tensor(kiln.full_like(kiln.zeros(2, dtype=kiln.int32), -7.5, dtype=kiln.float64), [-7.5, -7.5],
                  kiln.float64)


@pytest.mark.parametrize("name", ["empty_like", "zeros_like", "ones_like", "full_like"])
def test_like_requires_grad(name):
    make = (lambda x, **kw: kiln.full_like(x, 2.0, **kw)) if name == "full_like" else getattr(kiln, name)
    t = make(kiln.zeros(2, 3), requires_grad=True)
    assert t.requires_grad and t.is_leaf and t.grad_fn is None


@pytest.mark.parametrize("name", ["empty_like", "zeros_like", "ones_like", "full_like"])
def test_integral_like_requires_grad_raises(name):
    make = (lambda x, **kw: kiln.full_like(x, 2, **kw)) if name == "full_like" else getattr(kiln, name)
    with pytest.raises(RuntimeError):
        make(kiln.zeros(2, dtype=kiln.int64), requires_grad=True)


@pytest.mark.parametrize("name", ["empty_like", "zeros_like", "ones_like", "full_like"])
def test_like_preserves_strides_of_dense_permuted_input(name):
    """PyTorch's *_like default to memory_format=preserve_format: a transposed (dense,
    non-overlapping) input gives a result with the same strides."""
    x = kiln.zeros(2, 3, 4).transpose(0, 2)  # (4, 3, 2), strides (1, 4, 12)
    t = kiln.full_like(x, 1.0) if name == "full_like" else getattr(kiln, name)(x)
    assert t.stride() == (1, 4, 12)


# ----------------------------------------------------------------------------- arange
ARANGE_CASES = [  # (args, NumPy dtype PyTorch infers)
    ((5,), np.int64), ((5.0,), np.float32), ((0,), np.int64), ((1, 2.5, 0.5), np.float32),
    ((10, 0, -3), np.int64), ((0, 1, 0.1), np.float32), ((-5, 5, 2), np.int64), ((2.5, -1.0, -0.5), np.float32),
    ((0, 10, 3), np.int64), ((3, 3), np.int64), ((-1, -10, -1), np.int64), ((0, 1, 0.3), np.float32),
    ((1.0, 1.0, -0.5), np.float32),
]


@pytest.mark.parametrize("case", ARANGE_CASES, ids=str)
def test_arange(case):
    args, np_dtype = case
    expected = np.arange(*[float(a) for a in args]).astype(np_dtype)  # PyTorch steps in double
    t = kiln.arange(*args)
    dtype = kiln.float32 if np_dtype == np.float32 else kiln.int64
    tol = dict(rtol=1e-6, atol=1e-7) if np_dtype == np.float32 else {}
    assert_tensor(t, expected, dtype, **tol)
    assert t.is_contiguous()


@pytest.mark.parametrize("dtype", [kiln.int32, kiln.int64, kiln.float32, kiln.float64], ids=str)
@pytest.mark.parametrize("args", [(7,), (2, 11, 3), (10, -2, -4), (0, 2.5), (0.5, 4)], ids=str)
def test_arange_dtype(args, dtype):
    expected = np.arange(*[float(a) for a in args])
    if dtype == kiln.int64:
        # start, end and step are cast to int64 first, as torch: arange(0, 2.5) is [0, 1]
        expected = np.arange(*[int(a) for a in args])
    elif not is_float(dtype):
        # torch's other integer dtypes: the length from the float bounds, values from the cast start and step
        bounds = [0.0, float(args[0]), 1.0] if len(args) == 1 else [float(a) for a in args] + [1.0] * (3 - len(args))
        n = int(np.ceil((bounds[1] - bounds[0]) / bounds[2]))
        expected = int(bounds[0]) + int(bounds[2]) * np.arange(n)
    t = kiln.arange(*args, dtype=dtype)
    assert_tensor(t, expected, dtype, rtol=1e-12 if is_float(dtype) else 0)


def test_arange_out_and_requires_grad():
    out = kiln.empty(0)
    assert kiln.arange(0, 5, 2, out=out) is out
    assert_tensor(out, [0.0, 2.0, 4.0], kiln.float32)
    out = kiln.empty(7, dtype=kiln.int32)  # the wrong size is resized
    kiln.arange(1, 4, out=out)
    assert_tensor(out, [1, 2, 3], kiln.int32)
    t = kiln.arange(3.0, requires_grad=True)
    assert t.requires_grad and t.is_leaf
    with pytest.raises(RuntimeError):
        kiln.arange(3, requires_grad=True)  # int64


@pytest.mark.parametrize("args", [(0, 1, 0), (0.0, 1.0, 0.0), (0, 10, -1), (10, 0, 1), (-5,), (1.5, 0.5, 0.1), (1, 0.5),
                                  (float("nan"),), (float("inf"),), (0, float("inf"), 1)], ids=str)
def test_arange_bad_range_raises_runtime_error(args):
    """PyTorch raises RuntimeError: 'step must be nonzero', 'upper bound and larger bound
    inconsistent with step sign', 'unsupported range'."""
    with pytest.raises(RuntimeError):
        kiln.arange(*args)


# ----------------------------------------------------------------------------- mm
MM_SHAPES = [((2, 3), (3, 4)), ((1, 1), (1, 1)), ((5, 7), (7, 1)), ((1, 7), (7, 5)), ((64, 33), (33, 17)),
             ((0, 3), (3, 2)), ((2, 0), (0, 2)), ((3, 2), (2, 0)), ((130, 70), (70, 90))]
MM_DTYPES = [kiln.int32, kiln.int64, kiln.float32, kiln.float64]
MM_TOL = {kiln.float32: dict(rtol=1e-5, atol=1e-5), kiln.float64: dict(rtol=1e-12, atol=1e-12)}


def mm_operands(shape, dtype, seed):
    rng = np.random.default_rng(seed)
    if is_float(dtype):
        return rng.standard_normal(shape).astype(NP[dtype])
    return rng.integers(-20, 21, size=shape).astype(NP[dtype])


def assert_mm(t, a_np, b_np, dtype):
    expected = a_np.astype(np.float64) @ b_np.astype(np.float64) if is_float(dtype) \
        else a_np.astype(np.int64) @ b_np.astype(np.int64)
    assert_tensor(t, expected, dtype, **MM_TOL.get(dtype, {}))


@pytest.mark.parametrize("shapes", MM_SHAPES, ids=str)
@pytest.mark.parametrize("dtype", MM_DTYPES, ids=str)
def test_mm(dtype, shapes):
    a_np, b_np = mm_operands(shapes[0], dtype, 1), mm_operands(shapes[1], dtype, 2)
    a, b = kt(a_np), kt(b_np)
    for form, r in {"function": kiln.mm(a, b), "method": a.mm(b), "operator": a @ b}.items():
        assert_mm(r, a_np, b_np, dtype)
        assert r.is_contiguous()


def mm_layout(shape, dtype, kind, seed):
    """(kiln matrix, NumPy matrix) of `shape` laid out as `kind`."""
    if kind == "contiguous":
        m = mm_operands(shape, dtype, seed)
        return kt(m), m
    if kind == "transposed":
        m = mm_operands(shape[::-1], dtype, seed)
        return kiln.transpose(kt(m), 0, 1), m.T
    if kind == "step":  # every other column, starting at 1
        m = mm_operands((shape[0], 2 * shape[1] + 1), dtype, seed)
        return kiln.slice(kt(m), 1, 1, None, 2), m[:, 1::2]
    if kind == "rows":  # every other row: row stride 2 * ncols
        m = mm_operands((2 * shape[0], shape[1]), dtype, seed)
        return kiln.slice(kt(m), 0, 0, None, 2), m[::2]
    if kind == "expanded":  # stride 0 rows
        m = mm_operands((1, shape[1]), dtype, seed)
        return kt(m).expand(list(shape)), np.broadcast_to(m, shape)
    raise ValueError(kind)


LAYOUTS = ["contiguous", "transposed", "step", "rows", "expanded"]


@pytest.mark.parametrize("kind_b", LAYOUTS)
@pytest.mark.parametrize("kind_a", LAYOUTS)
@pytest.mark.parametrize("dtype", MM_DTYPES, ids=str)
def test_mm_noncontiguous(dtype, kind_a, kind_b):
    a, a_np = mm_layout((5, 6), dtype, kind_a, 3)
    b, b_np = mm_layout((6, 4), dtype, kind_b, 4)
    np.testing.assert_array_equal(a.numpy(), a_np)
    np.testing.assert_array_equal(b.numpy(), b_np)
    assert_mm(kiln.mm(a, b), a_np, b_np, dtype)


@pytest.mark.parametrize("dtype", MM_DTYPES, ids=str)
def test_mm_out(dtype):
    a_np, b_np = mm_operands((3, 5), dtype, 5), mm_operands((5, 4), dtype, 6)
    out = kiln.empty(0, dtype=dtype)
    assert kiln.mm(kt(a_np), kt(b_np), out=out) is out
    assert_mm(out, a_np, b_np, dtype)
    # a transposed out keeps its strides, and the result lands in its base
    base = kiln.zeros(4, 3, dtype=dtype)
    out = kiln.transpose(base, 0, 1)
    kiln.mm(kt(a_np), kt(b_np), out=out)
    assert out.stride() == (1, 3)
    assert_mm(out, a_np, b_np, dtype)
    assert_mm(kiln.transpose(base, 0, 1), a_np, b_np, dtype)
    # a row-strided out: only the rows it covers are written
    base = kiln.zeros(6, 4, dtype=dtype)
    out = kiln.slice(base, 0, 0, None, 2)
    kiln.mm(kt(a_np), kt(b_np), out=out)
    assert out.stride() == (8, 1)
    np.testing.assert_array_equal(base.numpy()[1::2], 0)
    assert_mm(kiln.slice(base, 0, 0, None, 2), a_np, b_np, dtype)


def test_mm_out_dtype_must_match():
    with pytest.raises(RuntimeError):
        kiln.mm(kiln.ones(2, 2), kiln.ones(2, 2), out=kiln.empty(0, dtype=kiln.float64))
    with pytest.raises(RuntimeError):
        kiln.mm(kiln.ones(2, 2), kiln.ones(2, 2), out=kiln.empty(0, dtype=kiln.int64))


@pytest.mark.parametrize("shapes", [((2, 3), (2, 3)), ((2, 3), (4, 2)), ((1, 0), (1, 0)), ((3, 1), (2, 1))],
                         ids=str)
def test_mm_shape_mismatch_raises(shapes):
    with pytest.raises(RuntimeError):
        kiln.mm(kiln.ones(*shapes[0]), kiln.ones(*shapes[1]))


@pytest.mark.parametrize("shapes", [((3,), (3, 2)), ((2, 3), (3,)), ((3,), (3,)), ((), (1, 1)), ((2, 2, 2), (2, 2)),
                                    ((2, 2), (2, 2, 2))], ids=str)
def test_mm_needs_matrices(shapes):
    with pytest.raises(RuntimeError):
        kiln.mm(kiln.ones(shapes[0]), kiln.ones(shapes[1]))


def test_mm_dtype_mismatch_raises():
    with pytest.raises(RuntimeError):
        kiln.mm(kiln.ones(2, 3), kiln.ones(3, 2, dtype=kiln.float64))
    with pytest.raises(RuntimeError):
        kiln.mm(kiln.ones(2, 3, dtype=kiln.int32), kiln.ones(3, 2, dtype=kiln.int64))
