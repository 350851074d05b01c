"""Pointwise ops (add, sub, mul, div, neg, exp, tanh, pow) against NumPy.

Every op is checked in its function, method and operator forms, for every dtype,
with 0-dim, zero-size, broadcast and non-contiguous inputs, in-place and out=.
Result dtypes follow PyTorch's type promotion (`result_type` below), and the
NumPy reference is computed in that result dtype, as PyTorch's kernels do.
"""
import operator

import numpy as np
import pytest

import kiln

DTYPES = [kiln.bool, kiln.int32, kiln.int64, kiln.float32, kiln.float64]
NUMERIC = [kiln.int32, kiln.int64, kiln.float32, kiln.float64]
FLOATS = [kiln.float32, kiln.float64]
NP = {kiln.bool: np.bool_, kiln.int32: np.int32, kiln.int64: np.int64,
      kiln.float32: np.float32, kiln.float64: np.float64}
TOL = {kiln.float32: dict(rtol=1e-5, atol=1e-6), kiln.float64: dict(rtol=1e-10, atol=1e-12)}


# ----------------------------------------------------------------------------- helpers
def rand(shape, dtype, seed=0, low=-5, high=5):
    """A NumPy array of `dtype` with small random values (no zeros for floats)."""
    rng = np.random.default_rng(seed)
    if dtype == kiln.bool:
        return np.asarray(rng.random(shape) < 0.5)
    if dtype in (kiln.int32, kiln.int64):
        return np.asarray(rng.integers(low, high + 1, size=shape), dtype=NP[dtype])
    return np.asarray(rng.uniform(low, high, size=shape), dtype=NP[dtype])


def kt(a):
    """A contiguous kiln tensor holding a copy of the NumPy array `a`."""
    return kiln.tensor(np.array(a, order="C"))  # (np.ascontiguousarray would make 0-dim 1-dim)


def is_float(dt):
    return dt in FLOATS


def category(dt):
    return 0 if dt == kiln.bool else 2 if is_float(dt) else 1


def promote(a, b):
    """torch.promote_types restricted to kiln's dtypes (None = undefined)."""
    if a is None or b is None:
        return b if a is None else a
    return max(a, b, key=DTYPES.index)


def _combine(higher, lower):  # c10's combine_categories
    if higher is not None and is_float(higher):
        return higher
    if higher == kiln.bool or (lower is not None and is_float(lower)):
        return promote(higher, lower)
    return higher if higher is not None else lower


def result_type(*operands):
    """torch.result_type: dimensioned tensors > 0-dim tensors > Python scalars."""
    dim = zero = wrapped = None
    for x in operands:
        if isinstance(x, kiln.Tensor):
            if x.dim() > 0:
                dim = promote(dim, x.dtype)
            else:
                zero = promote(zero, x.dtype)
        elif isinstance(x, bool):
            wrapped = promote(wrapped, kiln.bool)
        elif isinstance(x, int):
            wrapped = promote(wrapped, kiln.int64)
        else:
            wrapped = promote(wrapped, kiln.float32)  # the default dtype
    return _combine(dim, _combine(zero, wrapped))


def float_result(dt):
    """Ops that always compute in floating point: ints and bool go to the default dtype."""
    return dt if is_float(dt) else kiln.float32


def as_np(x):
    return x.numpy() if isinstance(x, kiln.Tensor) else np.asarray(x)


def assert_tensor(t, expected, dtype):
    """t has `dtype`, the shape of `expected`, and its values (exact for ints and bool)."""
    assert isinstance(t, kiln.Tensor)
    assert t.dtype == dtype, f"dtype {t.dtype}, expected {dtype}"
    expected = np.asarray(expected)
    assert tuple(t.shape) == expected.shape
    got = t.numpy()
    if is_float(dtype):
        np.testing.assert_allclose(got, expected.astype(NP[dtype]), **TOL[dtype])
    else:
        np.testing.assert_array_equal(got, expected.astype(NP[dtype]))


def np_binary(name, a, b, dtype, alpha=1):
    """The reference: both operands cast to the result dtype, then NumPy's op."""
    ct = NP[dtype]
    a, b = as_np(a).astype(ct), as_np(b).astype(ct)
    with np.errstate(all="ignore"):
        if name == "add":
            return a + ct(alpha) * b if alpha != 1 else a + b
        if name == "sub":
            return a - ct(alpha) * b if alpha != 1 else a - b
        if name == "mul":
            return a * b
        return a / b


def binary_dtype(name, a, b):
    rt = result_type(a, b)
    return float_result(rt) if name == "div" else rt


BINARY = ["add", "sub", "mul", "div"]
OPERATOR = {"add": operator.add, "sub": operator.sub, "mul": operator.mul, "div": operator.truediv}
IOPERATOR = {"add": operator.iadd, "sub": operator.isub, "mul": operator.imul, "div": operator.itruediv}


def binary_forms(name, a, b):
    """The function, method and operator spellings of one binary op."""
    return {
        "function": getattr(kiln, name)(a, b),
        "method": getattr(a, name)(b),
        "operator": OPERATOR[name](a, b),
    }


def bool_sub(name, *operands):
    """PyTorch refuses `-` when either operand is bool."""
    return name == "sub" and any(
        (x.dtype == kiln.bool if isinstance(x, kiln.Tensor) else isinstance(x, bool)) for x in operands)


# (shape of self, shape of other): same shapes, 0-dim, zero-size and broadcasting
SHAPE_PAIRS = [
    ((), ()),
    ((5,), (5,)),
    ((3, 4), (3, 4)),
    ((2, 3, 4), (2, 3, 4)),
    ((0, 3), (0, 3)),
    ((0, 3), (1, 3)),
    ((3, 1), (1, 4)),
    ((2, 3, 4), (4,)),
    ((4,), (2, 3, 4)),
    ((2, 1, 4), (3, 1)),
    ((5,), ()),
    ((), (2, 3)),
]


# ----------------------------------------------------------------------------- binary: Tensor, Tensor
@pytest.mark.parametrize("shapes", SHAPE_PAIRS, ids=str)
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("name", BINARY)
def test_binary_tensor_tensor(name, dtype, shapes):
    a_np, b_np = rand(shapes[0], dtype, seed=1), rand(shapes[1], dtype, seed=2)
    a, b = kt(a_np), kt(b_np)
    if bool_sub(name, a, b):
        for form in (lambda: kiln.sub(a, b), lambda: a.sub(b), lambda: a - b):
            with pytest.raises(RuntimeError):
                form()
        return
    rt = binary_dtype(name, a, b)
    expected = np_binary(name, a_np, b_np, rt)
    for form, result in binary_forms(name, a, b).items():
        assert_tensor(result, expected, rt)
    # inputs untouched
    np.testing.assert_array_equal(a.numpy(), a_np)
    np.testing.assert_array_equal(b.numpy(), b_np)


@pytest.mark.parametrize("dtype_b", DTYPES, ids=str)
@pytest.mark.parametrize("dtype_a", DTYPES, ids=str)
@pytest.mark.parametrize("name", BINARY)
def test_binary_mixed_dtypes(name, dtype_a, dtype_b):
    a_np, b_np = rand((3, 4), dtype_a, seed=3), rand((4,), dtype_b, seed=4)
    a, b = kt(a_np), kt(b_np)
    if bool_sub(name, a, b):
        with pytest.raises(RuntimeError):
            kiln.sub(a, b)
        return
    rt = binary_dtype(name, a, b)
    expected = np_binary(name, a_np, b_np, rt)
    for form, result in binary_forms(name, a, b).items():
        assert_tensor(result, expected, rt)


@pytest.mark.parametrize("zero_dtype", DTYPES, ids=str)
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("name", ["add", "mul", "div"])
def test_binary_with_zero_dim_tensor(name, dtype, zero_dtype):
    """A 0-dim tensor only changes the result dtype when it is of a higher category."""
    a_np, s_np = rand((2, 3), dtype, seed=5), rand((), zero_dtype, seed=6)
    a, s = kt(a_np), kt(s_np)
    assert s.dim() == 0
    rt = binary_dtype(name, a, s)
    expected = np_binary(name, a_np, s_np, rt)
    assert_tensor(getattr(kiln, name)(a, s), expected, rt)
    assert_tensor(OPERATOR[name](a, s), expected, rt)
    # and from the other side
    assert_tensor(getattr(kiln, name)(s, a), np_binary(name, s_np, a_np, rt), rt)


@pytest.mark.parametrize("case", [
    # (self dtype, self shape, other, expected dtype): the examples PyTorch documents and users hit
    (kiln.int64, (3,), 1.5, kiln.float32),
    (kiln.int64, (3,), 2, kiln.int64),
    (kiln.int32, (3,), 2, kiln.int32),
    (kiln.int32, (3,), True, kiln.int32),
    (kiln.bool, (3,), 1, kiln.int64),
    (kiln.bool, (3,), True, kiln.bool),
    (kiln.bool, (3,), 2.5, kiln.float32),
    (kiln.float64, (3,), 1.5, kiln.float64),
    (kiln.float32, (3,), 2, kiln.float32),
    (kiln.int32, (3,), ("tensor0", kiln.int64), kiln.int32),
    (kiln.int32, (3,), ("tensor0", kiln.float64), kiln.float64),
    (kiln.float32, (3,), ("tensor0", kiln.float64), kiln.float32),
    (kiln.bool, (3,), ("tensor0", kiln.int64), kiln.int64),
    (kiln.int64, (), ("tensor0", kiln.float32), kiln.float32),
    (kiln.int32, (3,), ("tensor1", kiln.int64), kiln.int64),
    (kiln.int64, (3,), ("tensor1", kiln.float32), kiln.float32),
    (kiln.int32, (), ("tensor1", kiln.float64), kiln.float64),
], ids=str)
def test_add_promotion_table(case):
    self_dtype, shape, other, expected = case
    a = kt(rand(shape, self_dtype, seed=7))
    if isinstance(other, tuple):
        other = kt(rand(() if other[0] == "tensor0" else (3,), other[1], seed=8))
    assert kiln.add(a, other).dtype == expected
    assert (a + other).dtype == expected


@pytest.mark.parametrize("case", [
    (kiln.int64, 2, kiln.float32),
    (kiln.int32, 2, kiln.float32),
    (kiln.bool, True, kiln.float32),
    (kiln.int64, ("tensor", kiln.int64), kiln.float32),
    (kiln.int32, ("tensor", kiln.float64), kiln.float64),
    (kiln.float64, 2, kiln.float64),
], ids=str)
def test_div_is_true_division(case):
    self_dtype, other, expected = case
    a_np = rand((4,), self_dtype, seed=9, low=1, high=7)
    a = kt(a_np)
    if isinstance(other, tuple):
        other_np = rand((4,), other[1], seed=10, low=1, high=7)
        other = kt(other_np)
    else:
        other_np = other
    out = kiln.div(a, other)
    assert_tensor(out, np_binary("div", a_np, other_np, expected), expected)


# ----------------------------------------------------------------------------- binary: Tensor, Scalar
SCALARS = [2, -3, 0, 1.5, -0.25, True, False]


@pytest.mark.parametrize("shape", [(), (4,), (2, 3), (0, 3)], ids=str)
@pytest.mark.parametrize("scalar", SCALARS, ids=repr)
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("name", BINARY)
def test_binary_tensor_scalar(name, dtype, scalar, shape):
    a_np = rand(shape, dtype, seed=11)
    a = kt(a_np)
    if bool_sub(name, a, scalar):
        for form in (lambda: kiln.sub(a, scalar), lambda: a.sub(scalar), lambda: a - scalar,
                     lambda: scalar - a):
            with pytest.raises(RuntimeError):
                form()
        return
    rt = binary_dtype(name, a, scalar)
    expected = np_binary(name, a_np, scalar, rt)
    for form, result in binary_forms(name, a, scalar).items():
        assert_tensor(result, expected, rt)
    # the reflected operator: scalar (op) tensor
    assert_tensor(OPERATOR[name](scalar, a), np_binary(name, scalar, a_np, rt), rt)


# ----------------------------------------------------------------------------- non-contiguous inputs
def layout(shape, dtype, kind, seed):
    """(kiln tensor, NumPy array) of logical `shape` laid out as `kind`, built the same way in both."""
    if kind == "contiguous":
        base = rand(shape, dtype, seed)
        return kt(base), base
    if kind == "transposed":  # first and last dims swapped in memory
        base = rand((shape[-1],) + shape[1:-1] + (shape[0],), dtype, seed)
        return kiln.transpose(kt(base), 0, -1), np.swapaxes(base, 0, -1)
    if kind == "step":  # every other element of the last dim
        base = rand(shape[:-1] + (2 * shape[-1],), dtype, seed)
        return kiln.slice(kt(base), -1, 0, None, 2), base[..., ::2]
    if kind == "offset":  # a slice of the last dim that does not start at the storage's beginning
        base = rand(shape[:-1] + (shape[-1] + 2,), dtype, seed)
        return kiln.slice(kt(base), -1, 1, shape[-1] + 1), base[..., 1:shape[-1] + 1]
    if kind == "expanded":  # stride 0 along the first dim
        base = rand((1,) + shape[1:], dtype, seed)
        return kt(base).expand(list(shape)), np.broadcast_to(base, shape)
    raise ValueError(kind)


LAYOUTS = ["transposed", "step", "offset", "expanded"]


@pytest.mark.parametrize("shape", [(3, 4), (2, 3, 4)], ids=str)
@pytest.mark.parametrize("kind_b", ["contiguous"] + LAYOUTS)
@pytest.mark.parametrize("kind_a", LAYOUTS)
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("name", BINARY)
def test_binary_noncontiguous(name, dtype, kind_a, kind_b, shape):
    a, a_np = layout(shape, dtype, kind_a, seed=12)
    b, b_np = layout(shape, dtype, kind_b, seed=13)
    assert not a.is_contiguous()
    np.testing.assert_array_equal(a.numpy(), a_np)  # the view itself reads back right
    if bool_sub(name, a, b):
        with pytest.raises(RuntimeError):
            kiln.sub(a, b)
        return
    rt = binary_dtype(name, a, b)
    expected = np_binary(name, a_np, b_np, rt)
    for form, result in binary_forms(name, a, b).items():
        assert_tensor(result, expected, rt)
        assert result.is_contiguous()


@pytest.mark.parametrize("name", BINARY)
def test_binary_broadcast_mismatch_raises(name):
    with pytest.raises(RuntimeError):
        getattr(kiln, name)(kiln.ones(3), kiln.ones(2))
    with pytest.raises(RuntimeError):
        getattr(kiln, name)(kiln.ones(2, 3), kiln.ones(3, 2))


# ----------------------------------------------------------------------------- alpha
@pytest.mark.parametrize("overload", ["tensor", "scalar"])
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("name", ["add", "sub"])
def test_alpha(name, dtype, overload):
    a_np = rand((3, 4), dtype, seed=14)
    a = kt(a_np)
    if overload == "tensor":
        other_np = rand((4,), dtype, seed=15)
        other = kt(other_np)
    else:
        other = other_np = {kiln.bool: True, kiln.int32: 3, kiln.int64: -2}.get(dtype, 1.25)
    alphas = {kiln.bool: [True, 2], kiln.int32: [3, -1], kiln.int64: [-4, 0]}.get(dtype, [2.5, -0.5, 3])
    if bool_sub(name, a, other):
        with pytest.raises(RuntimeError):
            getattr(kiln, name)(a, other, alpha=1)
        return
    rt = binary_dtype(name, a, other)
    for alpha in alphas:
        expected = np_binary(name, a_np, other_np, rt, alpha=alpha)
        assert_tensor(getattr(kiln, name)(a, other, alpha=alpha), expected, rt)
        assert_tensor(getattr(a, name)(other, alpha=alpha), expected, rt)
        b = kt(a_np)
        getattr(b, name + "_")(other, alpha=alpha)
        assert_tensor(b, expected, rt)


@pytest.mark.parametrize("dtype", [kiln.bool, kiln.int32, kiln.int64], ids=str)
@pytest.mark.parametrize("name", ["add", "sub"])
def test_float_alpha_with_integral_inputs_raises(name, dtype):
    a = kt(rand((3,), dtype, seed=16))
    other = kt(rand((3,), kiln.int64, seed=17))
    with pytest.raises(RuntimeError):
        getattr(kiln, name)(a, other, alpha=0.5)
    with pytest.raises(RuntimeError):
        getattr(kiln, name)(a.to(kiln.int64), 2, alpha=0.5)


# ----------------------------------------------------------------------------- in-place
def inplace_others(dtype):
    """Operands whose promotion with a `dtype` tensor can be written back into it."""
    others = [("same", lambda: kt(rand((3, 4), dtype, seed=18))),
              ("broadcast", lambda: kt(rand((4,), dtype, seed=19))),
              ("zero-dim", lambda: kt(rand((), kiln.int64 if dtype != kiln.bool else kiln.bool, seed=20))),
              ("scalar", lambda: True if dtype == kiln.bool else 3 if not is_float(dtype) else -1.5)]
    if dtype in (kiln.int32, kiln.float32):  # a wider dtype of the same category
        wider = kiln.int64 if dtype == kiln.int32 else kiln.float64
        others.append(("wider", lambda: kt(rand((3, 4), wider, seed=21))))
    return others


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("name", BINARY)
def test_binary_inplace(name, dtype):
    for label, make_other in inplace_others(dtype):
        a_np = rand((3, 4), dtype, seed=22)
        other = make_other()
        rt = None if bool_sub(name, kt(a_np), other) else binary_dtype(name, kt(a_np), other)
        if rt is None or category(rt) > category(dtype):
            # div on ints/bool, sub of bools: the result can't be written back (PyTorch's canCast)
            a = kt(a_np)
            with pytest.raises(RuntimeError):
                getattr(a, name + "_")(other)
            np.testing.assert_array_equal(a.numpy(), a_np)  # left as it was
            continue
        expected = np_binary(name, a_np, as_np(other), rt)  # computed in rt, then cast back
        for spell in ("method", "operator"):
            a = kt(a_np)
            ptr = a.data_ptr()
            result = getattr(a, name + "_")(other) if spell == "method" else IOPERATOR[name](a, other)
            assert result is a, (label, spell)
            assert a.data_ptr() == ptr
            assert_tensor(a, expected, dtype)


@pytest.mark.parametrize("name_dtype", [(n, d) for n in BINARY for d in NUMERIC if n != "div" or is_float(d)],
                         ids=str)  # int div_ raises: test_binary_inplace
def test_binary_inplace_on_view_writes_through(name_dtype):
    name, dtype = name_dtype
    base_np = rand((4, 3), dtype, seed=23)
    base = kt(base_np)
    view = kiln.transpose(base, 0, 1)  # (3, 4), non-contiguous
    other_np = rand((4,), dtype, seed=24, low=1)
    getattr(view, name + "_")(kt(other_np))
    expected = np_binary(name, base_np.T, other_np, dtype)
    assert_tensor(view, expected, dtype)
    assert_tensor(base, expected.T, dtype)


@pytest.mark.parametrize("case", [
    ("add_", kiln.int64, 1.5), ("sub_", kiln.int64, 0.5), ("mul_", kiln.int32, 2.5),
    ("div_", kiln.int64, 2), ("div_", kiln.int32, 2), ("add_", kiln.bool, 1), ("mul_", kiln.bool, 2.0),
    ("add_", kiln.int64, ("tensor", kiln.float32)), ("mul_", kiln.int32, ("tensor", kiln.float64)),
    ("add_", kiln.bool, ("tensor", kiln.int32)), ("add_", kiln.int64, ("tensor0", kiln.float64)),
], ids=str)
def test_inplace_cannot_cast_result_raises(case):
    method, dtype, other = case
    a_np = rand((3,), dtype, seed=25)
    a = kt(a_np)
    if isinstance(other, tuple):
        other = kt(rand(() if other[0] == "tensor0" else (3,), other[1], seed=26))
    with pytest.raises(RuntimeError):
        getattr(a, method)(other)
    np.testing.assert_array_equal(a.numpy(), a_np)


def test_arange_add_float_inplace_raises():
    a = kiln.arange(3)
    with pytest.raises(RuntimeError):
        a.add_(1.5)
    np.testing.assert_array_equal(a.numpy(), [0, 1, 2])


@pytest.mark.parametrize("name", BINARY)
def test_inplace_output_cannot_broadcast_raises(name):
    with pytest.raises(RuntimeError):
        getattr(kiln.ones(3), name + "_")(kiln.ones(2, 3))
    with pytest.raises(RuntimeError):
        getattr(kiln.ones(3, 1), name + "_")(kiln.ones(3, 4))


# ----------------------------------------------------------------------------- out=
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("name", BINARY)
def test_binary_out_empty_is_resized(name, dtype):
    a_np, b_np = rand((3, 1), dtype, seed=27), rand((4,), dtype, seed=28)
    a, b = kt(a_np), kt(b_np)
    if bool_sub(name, a, b):
        with pytest.raises(RuntimeError):
            kiln.sub(a, b, out=kiln.empty(0, dtype=dtype))
        return
    rt = binary_dtype(name, a, b)
    out = kiln.empty(0, dtype=rt)
    result = getattr(kiln, name)(a, b, out=out)
    assert result is out
    assert tuple(out.shape) == (3, 4)
    assert_tensor(out, np_binary(name, a_np, b_np, rt), rt)


@pytest.mark.parametrize("dtype", NUMERIC, ids=str)
@pytest.mark.parametrize("name", BINARY)
def test_binary_out_noncontiguous_keeps_strides(name, dtype):
    a_np, b_np = rand((3, 4), dtype, seed=29), rand((3, 4), dtype, seed=30, low=1)
    rt = binary_dtype(name, kt(a_np), kt(b_np))
    base = kiln.zeros(4, 3, dtype=rt)
    out = kiln.transpose(base, 0, 1)  # (3, 4) with strides (1, 3)
    getattr(kiln, name)(kt(a_np), kt(b_np), out=out)
    assert out.stride() == (1, 3)
    expected = np_binary(name, a_np, b_np, rt)
    assert_tensor(out, expected, rt)
    assert_tensor(base, expected.T, rt)
    # a strided slice as out: only every other column is written
    base2 = kiln.zeros(3, 8, dtype=rt)
    out2 = kiln.slice(base2, 1, 0, None, 2)
    getattr(kiln, name)(kt(a_np), kt(b_np), out=out2)
    assert out2.stride() == (8, 2)
    full = np.zeros((3, 8), NP[rt])
    full[:, ::2] = expected
    assert_tensor(base2, full, rt)


@pytest.mark.parametrize("name", BINARY)
def test_binary_out_dtype(name):
    a, b = kt(rand((2, 3), kiln.float32, seed=31)), kt(rand((2, 3), kiln.float32, seed=32))
    # a wider out dtype of the same category is fine ...
    out = kiln.empty(2, 3, dtype=kiln.float64)
    getattr(kiln, name)(a, b, out=out)
    np.testing.assert_allclose(out.numpy(), getattr(kiln, name)(a, b).numpy(), rtol=1e-6)
    # ... an integral out for a floating result is not
    with pytest.raises(RuntimeError):
        getattr(kiln, name)(a, b, out=kiln.empty(2, 3, dtype=kiln.int64))
    with pytest.raises(RuntimeError):
        getattr(kiln, name)(a, b, out=kiln.empty(2, 3, dtype=kiln.bool))


def test_div_ints_into_int_out_raises():
    with pytest.raises(RuntimeError):
        kiln.div(kiln.arange(3), kiln.arange(1, 4), out=kiln.empty(3, dtype=kiln.int64))


@pytest.mark.parametrize("name", BINARY)
def test_binary_out_with_python_scalar_other(name):
    """torch.add(t, 2, out=o) works in PyTorch (the Python scalar is wrapped into a tensor)."""
    a_np = rand((2, 3), kiln.float32, seed=33)
    out = kiln.empty(0)
    getattr(kiln, name)(kt(a_np), 2, out=out)
    assert_tensor(out, np_binary(name, a_np, 2, kiln.float32), kiln.float32)


# ----------------------------------------------------------------------------- bool tensors
def test_bool_add_mul_stay_bool():
    a_np = np.array([True, True, False, False])
    b_np = np.array([True, False, True, False])
    a, b = kt(a_np), kt(b_np)
    assert_tensor(a + b, a_np | b_np, kiln.bool)
    assert_tensor(kiln.add(a, b), a_np | b_np, kiln.bool)
    assert_tensor(a * b, a_np & b_np, kiln.bool)
    assert_tensor(kiln.mul(a, b), a_np & b_np, kiln.bool)


def test_bool_neg_and_sub_raise():
    a = kiln.tensor([True, False])
    for f in (lambda: -a, lambda: kiln.neg(a), lambda: a.neg(), lambda: a.neg_(),
              lambda: kiln.neg(a, out=kiln.empty(0, dtype=kiln.bool)),
              lambda: a - a, lambda: kiln.sub(a, a), lambda: a.sub(a), lambda: a.sub_(a), lambda: a - True):
        with pytest.raises(RuntimeError):
            f()


def test_any_bool_operand_of_minus_is_refused():
    """As torch: `-` with a bool tensor on either side raises, with torch's message."""
    a = kiln.tensor([True, False])
    for f in (lambda: a - 1, lambda: 1 - a, lambda: a - kiln.tensor([1, 1], dtype=kiln.int32),
              lambda: kiln.tensor([1.0, 2.0]) - a):
        with pytest.raises(RuntimeError, match="with a bool tensor is not supported"):
            f()


# ----------------------------------------------------------------------------- unary: neg, exp, tanh
UNARY = {"neg": np.negative, "exp": np.exp, "tanh": np.tanh}
UNARY_SHAPES = [(), (7,), (3, 4), (0, 3), (2, 0, 4), (2, 3, 4)]


def unary_dtype(name, dtype):
    return dtype if name == "neg" else float_result(dtype)


def np_unary(name, a_np, rt):
    """exp/tanh computed in float64 and rounded to the result dtype; neg exactly."""
    if name == "neg":
        return -a_np.astype(NP[rt])
    return UNARY[name](a_np.astype(np.float64)).astype(NP[rt])


@pytest.mark.parametrize("shape", UNARY_SHAPES, ids=str)
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("name", list(UNARY))
def test_unary(name, dtype, shape):
    a_np = rand(shape, dtype, seed=34)
    a = kt(a_np)
    forms = {"function": lambda: getattr(kiln, name)(a), "method": lambda: getattr(a, name)()}
    if name == "neg":
        forms["operator"] = lambda: -a
    if name == "neg" and dtype == kiln.bool:
        for f in forms.values():
            with pytest.raises(RuntimeError):
                f()
        return
    rt = unary_dtype(name, dtype)
    expected = np_unary(name, a_np, rt)
    for form, f in forms.items():
        assert_tensor(f(), expected, rt)
    np.testing.assert_array_equal(a.numpy(), a_np)


@pytest.mark.parametrize("kind", LAYOUTS)
@pytest.mark.parametrize("dtype", NUMERIC, ids=str)
@pytest.mark.parametrize("name", list(UNARY))
def test_unary_noncontiguous(name, dtype, kind):
    a, a_np = layout((3, 5), dtype, kind, seed=35)
    assert not a.is_contiguous()
    rt = unary_dtype(name, dtype)
    assert_tensor(getattr(kiln, name)(a), np_unary(name, a_np, rt), rt)


def test_unary_special_values():
    x = kiln.tensor([0.0, -0.0, np.inf, -np.inf, np.nan, 100.0, -80.0, 1e-8, -1e-8], dtype=kiln.float64)
    x_np = x.numpy().copy()
    with np.errstate(all="ignore"):
        for name in ("exp", "tanh"):
            np.testing.assert_allclose(getattr(kiln, name)(x).numpy(), UNARY[name](x_np), rtol=1e-12)
            np.testing.assert_allclose(getattr(kiln, name)(x.to(kiln.float32)).numpy(),
                                       UNARY[name](x_np.astype(np.float32)), rtol=1e-5)
    finite = ~np.isnan(x_np)
    for dt in FLOATS:
        np.testing.assert_array_equal(np.signbit(kiln.neg(x.to(dt)).numpy())[finite], np.signbit(-x_np)[finite])


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("name", list(UNARY))
def test_unary_inplace(name, dtype):
    a_np = rand((3, 4), dtype, seed=36)
    a = kt(a_np)
    if (name == "neg" and dtype == kiln.bool) or unary_dtype(name, dtype) != dtype:
        with pytest.raises(RuntimeError):  # exp_/tanh_ of ints, neg_ of bool
            getattr(a, name + "_")()
        np.testing.assert_array_equal(a.numpy(), a_np)
        return
    ptr = a.data_ptr()
    assert getattr(a, name + "_")() is a
    assert a.data_ptr() == ptr
    assert_tensor(a, np_unary(name, a_np, dtype), dtype)
    # on a transposed view: the base sees the result
    base = kt(a_np)
    view = kiln.transpose(base, 0, 1)
    getattr(view, name + "_")()
    assert_tensor(base, np_unary(name, a_np, dtype), dtype)


@pytest.mark.parametrize("dtype", NUMERIC, ids=str)
@pytest.mark.parametrize("name", list(UNARY))
def test_unary_out(name, dtype):
    a_np = rand((3, 4), dtype, seed=37)
    rt = unary_dtype(name, dtype)
    expected = np_unary(name, a_np, rt)
    out = kiln.empty(0, dtype=rt)
    assert getattr(kiln, name)(kt(a_np), out=out) is out
    assert_tensor(out, expected, rt)
    base = kiln.zeros(4, 3, dtype=rt)
    out = kiln.transpose(base, 0, 1)
    getattr(kiln, name)(kt(a_np), out=out)
    assert out.stride() == (1, 3)
    assert_tensor(base, expected.T, rt)


@pytest.mark.parametrize("name", ["exp", "tanh"])
def test_unary_float_result_into_int_out_raises(name):
    with pytest.raises(RuntimeError):
        getattr(kiln, name)(kiln.arange(3), out=kiln.empty(3, dtype=kiln.int64))


def test_exp_int64_is_float32():
    assert_tensor(kiln.exp(kiln.arange(3)), np.exp(np.arange(3.0)), kiln.float32)
    assert_tensor(kiln.tanh(kiln.arange(3, dtype=kiln.int32)), np.tanh(np.arange(3.0)), kiln.float32)
    assert_tensor(kiln.exp(kiln.tensor([True, False])), np.exp([1.0, 0.0]), kiln.float32)


# ----------------------------------------------------------------------------- pow(Tensor, Scalar)
def np_pow(a_np, exponent, rt):
    ct = NP[rt]
    with np.errstate(all="ignore"):
        if is_float(rt):  # computed in float64, rounded
            return np.power(a_np.astype(np.float64), float(exponent)).astype(ct)
        return np.power(a_np.astype(np.int64), int(exponent)).astype(ct)


POW_EXPONENTS = [0, 1, 2, 3, True, 0.5, 2.0, -1.0, -2.5, 3.5]


@pytest.mark.parametrize("shape", [(), (6,), (3, 4), (0, 3)], ids=str)
@pytest.mark.parametrize("exponent", POW_EXPONENTS, ids=repr)
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_pow(dtype, exponent, shape):
    a_np = rand(shape, dtype, seed=38, low=0, high=4)
    if is_float(dtype):
        a_np = (a_np + 0.5).astype(NP[dtype])  # positive bases: fractional powers stay real
    a = kt(a_np)
    rt = result_type(a, exponent)
    if rt == kiln.bool:  # bool ** True: torch has no bool pow kernel
        with pytest.raises(RuntimeError, match="not implemented for 'Bool'"):
            a ** exponent
        return
    expected = np_pow(a_np, exponent, rt)
    assert_tensor(kiln.pow(a, exponent), expected, rt)
    assert_tensor(a.pow(exponent), expected, rt)
    assert_tensor(a ** exponent, expected, rt)
    out = kiln.empty(0, dtype=rt)
    assert kiln.pow(a, exponent, out=out) is out
    assert_tensor(out, expected, rt)
    b = kt(a_np)
    if rt == dtype:
        assert b.pow_(exponent) is b
        assert_tensor(b, expected, dtype)
    else:
        with pytest.raises(RuntimeError):
            b.pow_(exponent)
        np.testing.assert_array_equal(b.numpy(), a_np)


@pytest.mark.parametrize("kind", LAYOUTS)
@pytest.mark.parametrize("dtype", NUMERIC, ids=str)
def test_pow_noncontiguous(dtype, kind):
    a, a_np = layout((3, 4), dtype, kind, seed=39)
    assert_tensor(a ** 2, np_pow(a_np, 2, dtype), dtype)
    assert_tensor(kiln.pow(a, 3), np_pow(a_np, 3, dtype), dtype)


def test_pow_negative_bases():
    a = kiln.tensor([-2.0, -1.5, 0.0, 1.5], dtype=kiln.float64)
    np.testing.assert_allclose((a ** 3).numpy(), [-8.0, -3.375, 0.0, 3.375])
    np.testing.assert_allclose((a ** -2.0).numpy(), [0.25, 1 / 2.25, np.inf, 1 / 2.25])
    assert np.isnan((a ** 0.5).numpy()[:2]).all()
    assert_tensor(kiln.tensor([-2, 2, -3]) ** 3, [-8, 8, -27], kiln.int64)


@pytest.mark.parametrize("dtype", [kiln.int32, kiln.int64], ids=str)
def test_pow_int_negative_int_exponent_raises(dtype):
    with pytest.raises(RuntimeError):
        kiln.pow(kiln.arange(1, 4, dtype=dtype), -1)


def test_pow_bool_int_exponent_is_int64():
    assert_tensor(kiln.tensor([True, False]) ** 2, [1, 0], kiln.int64)


def test_pow_into_noncontiguous_out():
    base = kiln.zeros(4, 3)
    out = kiln.transpose(base, 0, 1)
    a_np = rand((3, 4), kiln.float32, seed=40, low=0, high=3)
    kiln.pow(kt(a_np), 2, out=out)
    assert out.stride() == (1, 3)
    assert_tensor(base, (a_np.astype(np.float64) ** 2).T, kiln.float32)
