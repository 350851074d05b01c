"""The Python fast paths for small calls (x[i], x[a:b], x[idx], tolist, tensor([numbers]), to(dtype),
add_/sub_/addcmul_ fused into self) against torch: the same values, dtypes, views and errors as the
general paths they skip."""
import numpy as np
import pytest
import torch

import kiln

DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32", "float64"]


def both(fn):
    return fn(torch), fn(kiln)


def outcome(fn, lib):
    try:
        return ("ok", fn(lib))
    except Exception as e:  # the exception class is part of the contract
        return ("raised", type(e).__name__)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("layout", ["contiguous", "transposed", "expanded", "0-dim", "empty"])
def test_tolist_matches_torch(dtype, layout):
    base = np.array([[0, 1.5, -2.25], [3e38, -0.0, 7]])

    def make(lib):
        t = lib.tensor(base, dtype=lib.float64).to(getattr(lib, dtype))
        return {"contiguous": t, "transposed": t.t(), "expanded": t[:1].expand(3, 3), "0-dim": t[0, 1],
                "empty": t[:, :0]}[layout]
    expected, got = (make(lib).tolist() for lib in (torch, kiln))
    assert repr(got) == repr(expected)  # also each element's Python type (int, bool, float)


def test_tolist_of_a_tensor_requiring_grad():
    t, k = both(lambda lib: lib.tensor([1.25, 2.5], requires_grad=True).tolist())
    assert k == t


@pytest.mark.parametrize("data", [[1.5, 2.0], [1, 2, 3], [1, 2.5], [True, 1], [2 ** 63], [-2 ** 63], [], [1e300, -1e300],
                                  [float("nan"), float("inf")], [0.1, 1 / 3], [1, "a"], [[1, 2], [3, 4]]])
@pytest.mark.parametrize("default", ["float32", "float64"])
def test_tensor_of_a_list_matches_torch(data, default):
    results = []
    for lib in (torch, kiln):
        old = lib.get_default_dtype()
        lib.set_default_dtype(getattr(lib, default))
        try:
            results.append(outcome(lambda L: L.tensor(data), lib))
        finally:
            lib.set_default_dtype(old)
    (tk, t), (kk, k) = results
    assert kk == tk
    if tk == "ok":
        assert str(k.dtype).split(".")[1] == str(t.dtype).split(".")[1]
        np.testing.assert_array_equal(k.numpy(), t.numpy())
    else:
        assert k == t


def test_tensor_of_a_list_is_an_ordinary_resizable_copy():
    data = [1.0, 2.0]
    k = kiln.tensor(data, requires_grad=True)
    assert k.requires_grad and k.is_leaf
    k = kiln.tensor(data)
    k.resize_(5)  # a storage of its own, not a NumPy buffer
    assert k.shape == (5,)


INDICES = [0, -1, 2, 3, -4, slice(1, 3), slice(None, None, 2), slice(-10, 10), slice(2, 1), (1, 2), (0, slice(1, 3)),
           (slice(None), 1), (1, 2, 0), (-1, -1)]


@pytest.mark.parametrize("index", INDICES, ids=repr)
def test_basic_indexing_matches_torch(index):
    t, k = (outcome(lambda L: L.arange(12.).reshape(3, 4)[index], lib) for lib in (torch, kiln))
    assert k[0] == t[0]
    if t[0] == "ok":
        np.testing.assert_array_equal(k[1].numpy(), t[1].numpy())
    else:
        assert k[1] == t[1]


def test_basic_indexing_returns_views_and_assigns_through_them():
    k = kiln.arange(12.).reshape(3, 4)
    row = k[1]
    row[0] = 100.0
    k[2, 1:3] = kiln.tensor([7.0, 8.0])
    t = torch.arange(12.).reshape(3, 4)
    t[1][0] = 100.0
    t[2, 1:3] = torch.tensor([7.0, 8.0])
    np.testing.assert_array_equal(k.numpy(), t.numpy())
    x = kiln.arange(4.0, requires_grad=True)
    (x[1] * 3 + x[2:].sum()).backward()
    np.testing.assert_array_equal(x.grad.numpy(), [0.0, 3.0, 1.0, 1.0])


@pytest.mark.parametrize("make_index", [lambda L: L.tensor([2, -1, 0]), lambda L: L.tensor([[0], [1]]),
                                        lambda L: L.tensor([3]), lambda L: L.tensor([True, False, True]),
                                        lambda L: L.tensor([True, False]), lambda L: L.ones(3, 4, 2, dtype=L.bool),
                                        lambda L: L.tensor(1), lambda L: L.tensor(True)])
def test_tensor_indexing_matches_torch(make_index):
    t, k = (outcome(lambda L: L.arange(12.).reshape(3, 4)[make_index(L)], lib) for lib in (torch, kiln))
    assert k[0] == t[0]
    if t[0] == "ok":
        np.testing.assert_array_equal(k[1].numpy(), t[1].numpy())
    else:
        assert k[1] == t[1]


@pytest.mark.parametrize("name", ["float", "double", "half", "bfloat16", "long", "int", "short", "char", "byte", "bool"])
def test_dtype_methods(name):
    k = kiln.tensor([1.5, -2.0, 0.0])
    t = torch.tensor([1.5, -2.0, 0.0])
    kr, tr = getattr(k, name)(), getattr(t, name)()
    assert str(kr.dtype).split(".")[1] == str(tr.dtype).split(".")[1]
    np.testing.assert_array_equal(kr.float().numpy(), tr.float().numpy())
    assert (getattr(kr, name)() is kr) and (kr.to(kr.dtype) is kr)  # nothing to convert: the tensor itself


@pytest.mark.parametrize("op", ["add_", "sub_", "addcmul_"])
def test_fused_in_place_updates_self_as_torch(op):
    rng = np.random.default_rng(5)
    p, g = rng.standard_normal(1000).astype(np.float32), rng.standard_normal(1000).astype(np.float32)
    out = []
    for lib in (torch, kiln):
        x = lib.from_numpy(p.copy())
        v0 = x._version
        args = (lib.from_numpy(g), lib.from_numpy(g)) if op == "addcmul_" else (lib.from_numpy(g),)
        kwargs = {"value": 0.3} if op == "addcmul_" else {"alpha": -0.01}
        assert getattr(x, op)(*args, **kwargs) is x
        assert x._version > v0
        out.append(x.numpy().view(np.uint32))
    np.testing.assert_array_equal(out[1], out[0])  # to the bit


def test_fused_in_place_overlap_raises_under_the_ops_name():
    k = kiln.arange(6.0)
    with pytest.raises(RuntimeError, match=r"^add\(\): unsupported operation"):
        k[1:].add_(k[:-1], alpha=2)
    t = torch.arange(6.0)
    t.add_(t, alpha=2)
    k.add_(k, alpha=2)  # exactly the same memory is allowed, as torch
    np.testing.assert_array_equal(k.numpy(), t.numpy())


def test_add_out_without_alpha_returns_out():
    a = kiln.ones(3)
    out = kiln.empty(0)
    assert kiln.add(a, a, out=out) is out and out.tolist() == [2.0, 2.0, 2.0]
    assert kiln.sub(a, a, out=out) is out and out.tolist() == [0.0, 0.0, 0.0]
