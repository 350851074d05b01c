"""Sparse COO tensors (kiln.sparse), every function against torch 1.13: construction and its checks, the
attributes, coalesce, to_dense/to_sparse, transposes, products, sums, softmax, conversions, repr, the
gradients (of the values and of the dense operand), custom Functions that save a sparse tensor, and the
errors of what is not supported (NotImplementedError naming the SparseCPU backend, as torch)."""
import numpy as np
import pytest
import torch

import kiln

I = [[0, 1, 1, 0, 2], [2, 0, 2, 2, 1]]  # (0, 2) appears twice: uncoalesced
V = [3.0, 4.0, 5.0, 1.0, -2.0]


def np_of(t):
    if getattr(t, "is_sparse", False):
        t = t.to_dense()
    return np.array(t.detach().tolist())


def both(fn):
    """fn(lib) for torch and kiln."""
    return fn(torch), fn(kiln)


def assert_same(a, b, **kw):
    np.testing.assert_allclose(np_of(b), np_of(a), rtol=kw.get("rtol", 1e-6), atol=kw.get("atol", 1e-7))


def assert_same_sparse(t, k):
    """Same size, nnz, indices, values and coalesced flag."""
    assert tuple(k.shape) == tuple(t.shape)
    assert k._nnz() == t._nnz() and k.sparse_dim() == t.sparse_dim() and k.dense_dim() == t.dense_dim()
    assert k.is_coalesced() == t.is_coalesced()
    np.testing.assert_array_equal(np.array(k._indices().tolist()), np.array(t._indices().tolist()))
    np.testing.assert_allclose(np.array(k._values().detach().tolist()), np.array(t._values().detach().tolist()),
                               rtol=1e-6)
    assert str(k.dtype).split(".")[1] == str(t.dtype).split(".")[1]


def make(lib, indices=I, values=V, size=None, **kw):
    values = values if isinstance(values, (torch.Tensor, kiln.Tensor)) else lib.tensor(values)
    if size is None:
        return lib.sparse_coo_tensor(lib.tensor(indices), values, **kw)
    return lib.sparse_coo_tensor(lib.tensor(indices), values, size, **kw)


# ---------------------------------------------------------------- construction and attributes

CONSTRUCT = {
    "inferred": lambda lib: make(lib),
    "given_size": lambda lib: make(lib, size=(4, 5)),
    "dtype": lambda lib: make(lib, dtype=lib.float64),
    "int_values": lambda lib: lib.sparse_coo_tensor(lib.tensor(I), lib.tensor([1, 2, 3, 4, 5])),
    "lists": lambda lib: lib.sparse_coo_tensor([[0, 1], [1, 0]], [1.0, 2.0], (2, 2)),
    "float_indices": lambda lib: lib.sparse_coo_tensor(lib.tensor([[0.0, 2.0]]), lib.tensor([1.0, 2.0])),
    "hybrid": lambda lib: lib.sparse_coo_tensor(lib.tensor([[0, 2]]), lib.ones(2, 3)),
    "one_dim": lambda lib: lib.sparse_coo_tensor(lib.tensor([[4, 1]]), lib.tensor([1.0, 2.0])),
    "empty": lambda lib: lib.sparse_coo_tensor(lib.zeros(2, 0, dtype=lib.int64), lib.zeros(0), (2, 2)),
    "legacy": lambda lib: lib.sparse.FloatTensor(lib.tensor(I), lib.tensor(V), lib.Size([3, 3])),
    "legacy_double": lambda lib: lib.sparse.DoubleTensor(lib.tensor(I), lib.tensor(V, dtype=lib.float64)),
}


@pytest.mark.parametrize("name", sorted(CONSTRUCT))
def test_construction_matches_torch(name):
    t, k = both(CONSTRUCT[name])
    assert_same_sparse(t, k)
    assert k.is_sparse and k.layout is kiln.sparse_coo and k.dim() == t.dim() and k.numel() == t.numel()
    assert tuple(k.size()) == tuple(t.size()) and k.size(-1) == t.size(-1) and len(k) == len(t)
    assert not k.requires_grad and k.is_leaf
    assert_same(t.to_dense(), k.to_dense())
    assert repr(k) == repr(t).replace("torch.", "kiln.")


def test_layouts():
    assert kiln.ones(2).layout is kiln.strided and not kiln.ones(2).is_sparse
    assert repr(kiln.strided) == "kiln.strided" and repr(kiln.sparse_coo) == "kiln.sparse_coo"
    assert isinstance(kiln.sparse_coo, kiln.layout)
    assert kiln.is_tensor(make(kiln))


def test_repr_with_grad_matches_torch():
    t, k = both(lambda lib: make(lib, requires_grad=True))
    assert repr(k) == repr(t).replace("torch.", "kiln.")
    t, k = both(lambda lib: make(lib, values=lib.tensor(V, requires_grad=True) * 2))
    assert repr(k).split("layout")[0] == repr(t).split("layout")[0].replace("torch.", "kiln.")
    assert "grad_fn=<" in repr(k)


CONSTRUCT_ERRORS = {
    "negative_index": (lambda lib: lib.sparse_coo_tensor(lib.tensor([[-1, 0]]), lib.tensor([1.0, 2.0])),
                       "found negative index -1 for dim 0"),
    "size_too_small": (lambda lib: make(lib, size=(1, 4)), "size is inconsistent with indices: for dim 0"),
    "nnz_mismatch": (lambda lib: lib.sparse_coo_tensor(lib.tensor(I), lib.ones(3)),
                     "indices and values must have same nnz, but got nnz from indices: 5, nnz from values: 3"),
    "indices_1d": (lambda lib: lib.sparse_coo_tensor(lib.tensor([0, 1]), lib.ones(2)),
                   r"indices must be sparse_dim x nnz, but got: \[2\]"),
    "size_ndim": (lambda lib: make(lib, size=(3, 3, 3)), r"number of dimensions must be sparse_dim \(2\)"),
}


@pytest.mark.parametrize("name", sorted(CONSTRUCT_ERRORS))
def test_construction_errors_match_torch(name):
    fn, message = CONSTRUCT_ERRORS[name]
    for lib in (torch, kiln):
        with pytest.raises(RuntimeError, match=message):
            fn(lib)


def test_indices_and_values_need_coalesced():
    for lib in (torch, kiln):
        s = make(lib)
        with pytest.raises(RuntimeError, match="Cannot get indices on an uncoalesced tensor, please call "
                                               r"\.coalesce\(\) first"):
            s.indices()
        with pytest.raises(RuntimeError, match="Cannot get values on an uncoalesced tensor"):
            s.values()
    t, k = both(lambda lib: make(lib).coalesce())
    np.testing.assert_array_equal(np.array(k.indices().tolist()), np.array(t.indices().tolist()))
    np.testing.assert_array_equal(np.array(k.values().tolist()), np.array(t.values().tolist()))


# ---------------------------------------------------------------- coalesce, conversions, shape

def test_coalesce_matches_torch():
    t, k = both(lambda lib: make(lib).coalesce())
    assert_same_sparse(t, k)
    assert k.coalesce() is k
    t, k = both(lambda lib: lib.sparse_coo_tensor(lib.tensor([[1, 0, 1, 1]]), lib.tensor([[1.0, 2], [3, 4], [5, 6],
                                                                                        [7, 8]])).coalesce())
    assert_same_sparse(t, k)


def test_to_dense_sums_duplicates_and_keeps_dtype():
    t, k = both(lambda lib: lib.sparse_coo_tensor(lib.tensor(I), lib.tensor([1, 2, 3, 4, 5]), (3, 4)).to_dense())
    assert k.dtype == kiln.int64
    np.testing.assert_array_equal(np_of(k), np_of(t))


@pytest.mark.parametrize("sparse_dim", [None, 1, 2])
def test_to_sparse_matches_torch(sparse_dim):
    dense = np.array([[0.0, 1.5, 0.0], [0.0, 0.0, 0.0], [2.0, 0.0, -3.0]])
    t, k = both(lambda lib: lib.tensor(dense).to_sparse() if sparse_dim is None else
                lib.tensor(dense).to_sparse(sparse_dim))
    assert_same_sparse(t, k)


def test_t_and_transpose_match_torch():
    for op in (lambda s: s.t(), lambda s: s.transpose(0, 1), lambda s: s.transpose(-1, 0), lambda s: s.coalesce().t()):
        t, k = both(lambda lib: op(make(lib)))
        assert_same_sparse(t, k)
    for lib in (torch, kiln):
        with pytest.raises(RuntimeError, match="sparse transpose: transposed dimensions must be sparse"):
            lib.sparse_coo_tensor(lib.tensor([[0, 2]]), lib.arange(12.0).view(2, 2, 3)).transpose(1, 2)
        with pytest.raises(IndexError):
            make(lib).transpose(0, 2)
        with pytest.raises(RuntimeError, match=r"t\(\) expects a tensor with <= 2 sparse and 0 dense dimensions"):
            lib.sparse_coo_tensor(lib.tensor([[0], [0], [0]]), lib.ones(1)).t()


@pytest.mark.parametrize("conv", ["double", "float", "to64", "to_int", "long"])
def test_dtype_conversions_match_torch(conv):
    fn = {"double": lambda s, lib: s.double(), "float": lambda s, lib: s.double().float(),
          "to64": lambda s, lib: s.to(lib.float64), "to_int": lambda s, lib: s.to(lib.int32),
          "long": lambda s, lib: s.long()}[conv]
    t, k = both(lambda lib: fn(make(lib), lib))
    assert_same_sparse(t, k)


@pytest.mark.parametrize("op", ["mul", "rmul", "div", "neg", "mul_0dim", "add_sparse", "clone", "detach"])
def test_elementwise_matches_torch(op):
    fn = {"mul": lambda s, lib: s * 2.5, "rmul": lambda s, lib: 3 * s, "div": lambda s, lib: s / 4,
          "neg": lambda s, lib: -s, "mul_0dim": lambda s, lib: s * lib.tensor(2.0),
          "add_sparse": lambda s, lib: s + make(lib, values=[1.0, 1, 1, 1, 1]),
          "clone": lambda s, lib: s.clone(), "detach": lambda s, lib: s.detach()}[op]
    t, k = both(lambda lib: fn(make(lib), lib))
    assert k.is_sparse
    assert_same(t, k)


# ---------------------------------------------------------------- products and sums

DENSE = np.arange(12, dtype=np.float32).reshape(3, 4) / 5 - 1


@pytest.mark.parametrize("how", ["sparse.mm", "mm", "matmul", "matmul_op", "method_mm", "method_matmul",
                                 "coalesced", "vector", "transposed", "addmm"])
def test_products_match_torch(how):
    def run(lib):
        s, d = make(lib, size=(3, 3)), lib.tensor(DENSE)
        return {"sparse.mm": lambda: lib.sparse.mm(s, d), "mm": lambda: lib.mm(s, d),
                "matmul": lambda: lib.matmul(s, d), "matmul_op": lambda: s @ d, "method_mm": lambda: s.mm(d),
                "method_matmul": lambda: s.matmul(d), "coalesced": lambda: lib.mm(s.coalesce(), d),
                "vector": lambda: s @ d[:, 0], "transposed": lambda: s.t().matmul(d),
                "addmm": lambda: lib.sparse.addmm(lib.ones(3, 4), s, d, beta=0.5, alpha=2.0)}[how]()
    t, k = both(run)
    assert not k.is_sparse
    assert_same(t, k)


def test_product_of_empty_sparse_is_zeros():
    t, k = both(lambda lib: lib.sparse.mm(lib.sparse_coo_tensor(lib.zeros(2, 0, dtype=lib.int64), lib.zeros(0),
                                                                (2, 3)), lib.tensor(DENSE)))
    assert_same(t, k)


PRODUCT_ERRORS = {
    "shape": (lambda lib: lib.sparse.mm(make(lib), lib.ones(4, 2)), RuntimeError, "Expected dim 0 size 3, got 4"),
    "dtype": (lambda lib: lib.sparse.mm(make(lib), lib.ones(3, 2, dtype=lib.float64)), RuntimeError,
              "expected scalar type Float but found Double"),
    "3d": (lambda lib: lib.sparse.mm(lib.sparse_coo_tensor(lib.tensor([[0], [0], [0]]), lib.ones(1), (2, 2, 2)),
                                     lib.ones(2, 2)), RuntimeError, "matrices expected, got 3D tensor"),
    "dense_at_sparse": (lambda lib: lib.ones(2, 3) @ make(lib), NotImplementedError, "SparseCPU|sparse"),
}


@pytest.mark.parametrize("name", sorted(PRODUCT_ERRORS))
def test_product_errors_match_torch(name):
    fn, err, message = PRODUCT_ERRORS[name]
    for lib in (torch, kiln):
        with pytest.raises(err, match=message):
            fn(lib)


@pytest.mark.parametrize("dim", [None, 0, 1, -1, (0, 1), "hybrid_dense", "hybrid_sparse", "hybrid_all"])
def test_sparse_sum_matches_torch(dim):
    def run(lib):
        if isinstance(dim, str):
            h = lib.sparse_coo_tensor(lib.tensor([[0, 2, 0]]), lib.arange(6.0).view(3, 2))
            return lib.sparse.sum(h, {"hybrid_dense": 1, "hybrid_sparse": 0, "hybrid_all": (0, 1)}[dim])
        return lib.sparse.sum(make(lib)) if dim is None else lib.sparse.sum(make(lib), dim)
    t, k = both(run)
    assert k.is_sparse == t.is_sparse
    if t.is_sparse:
        assert_same_sparse(t, k)
    else:
        assert_same(t, k)


@pytest.mark.parametrize("fn", ["softmax", "log_softmax"])
@pytest.mark.parametrize("dim", [0, 1])
def test_sparse_softmax_matches_torch(fn, dim):
    t, k = both(lambda lib: getattr(lib.sparse, fn)(make(lib, values=[0.5, -1.0, 2.0, 0.25, 3.0]), dim))
    assert k.is_sparse
    assert_same_sparse(t.coalesce(), k.coalesce())
    # torch 1.13 refuses a negative dim here ("dim must be non-negative"); kiln wraps it as everywhere
    assert_same_sparse(k, getattr(kiln.sparse, fn)(make(kiln, values=[0.5, -1.0, 2.0, 0.25, 3.0]), dim - 2))


def test_sparse_softmax_of_hybrid_matches_torch():
    t, k = both(lambda lib: lib.sparse.softmax(lib.sparse_coo_tensor(lib.tensor([[0, 2, 0]]),
                                                                     lib.arange(6.0).view(3, 2) / 3), 1))
    assert_same_sparse(t.coalesce(), k.coalesce())


# ---------------------------------------------------------------- autograd

def _grads(lib, use, coalesce=False):
    v = lib.tensor(V, requires_grad=True)
    d = lib.tensor(DENSE, requires_grad=True)
    s = lib.sparse_coo_tensor(lib.tensor(I), v, (3, 3))
    if coalesce:
        s = s.coalesce()
    w = lib.tensor(np.arange(12, dtype=np.float32).reshape(3, 4) - 4)
    # torch 1.13's matmul has no gradient for a sparse operand's values: its reference is sparse.mm
    matmul = lib.sparse.mm if lib is torch else lib.matmul
    out = {"mm": lambda: lib.sparse.mm(s, d) * w, "matmul": lambda: matmul(s, d) * w,
           "t_matmul": lambda: matmul(s.t(), d) * w, "to_dense": lambda: s.to_dense() * w[:, :3],
           "sum": lambda: lib.sparse.sum(s, 1).to_dense() * w[:, 0],
           "scaled": lambda: (s * 3).to_dense() * w[:, :3],
           "softmax": lambda: lib.sparse.softmax(s, 1).to_dense() * w[:, :3]}[use]()
    out.sum().backward()
    return np.array(v.grad.tolist()), None if d.grad is None else np.array(d.grad.tolist())


@pytest.mark.parametrize("coalesce", [False, True], ids=["uncoalesced", "coalesced"])
@pytest.mark.parametrize("use", ["mm", "matmul", "t_matmul", "to_dense", "sum", "scaled", "softmax"])
def test_gradients_match_torch(use, coalesce):
    (tv, td), (kv, kd) = both(lambda lib: _grads(lib, use, coalesce))
    np.testing.assert_allclose(kv, tv, rtol=1e-5, atol=1e-6)
    if td is None:
        assert kd is None
    else:
        np.testing.assert_allclose(kd, td, rtol=1e-5, atol=1e-6)


def test_leaf_sparse_gets_a_sparse_gradient_of_its_pattern():
    """torch.sparse.mm's documented rule: the gradient of the sparse input is sparse, same pattern."""
    def run(lib):
        s = make(lib, size=(3, 3), requires_grad=True)
        assert s.requires_grad and s.is_leaf
        lib.sparse.mm(s, lib.tensor(DENSE)).pow(2).sum().backward()
        return s.grad
    t, k = both(run)
    assert k.is_sparse and t.is_sparse
    assert_same(t, k, rtol=1e-5)
    assert k.is_coalesced()  # torch's has the coalesced pattern without the flag
    np.testing.assert_array_equal(np.array(k._indices().tolist()), np.array(t._indices().tolist()))
    np.testing.assert_array_equal(np.array(k._indices().tolist()), np.array(make(kiln).coalesce()._indices().tolist()))


def test_custom_function_saves_a_sparse_tensor():
    def run(lib):
        class Spmm(lib.autograd.Function):
            @staticmethod
            def forward(ctx, indices, values, b):
                a = lib.sparse_coo_tensor(indices, values, (3, 3))
                ctx.save_for_backward(a, b)
                return lib.matmul(a, b)

            @staticmethod
            def backward(ctx, grad):
                a, b = ctx.saved_tensors
                assert a.is_sparse and a.shape == (3, 3) and not b.is_sparse
                idx = a._indices()
                grad_values = grad.matmul(b.t()).view(-1)[idx[0] * 3 + idx[1]]
                return None, grad_values, a.t().matmul(grad)
        v = lib.tensor(V, requires_grad=True)
        d = lib.tensor(DENSE, requires_grad=True)
        (Spmm.apply(lib.tensor(I), v, d) * lib.tensor(DENSE[:, ::-1].copy())).sum().backward()
        return np.array(v.grad.tolist()), np.array(d.grad.tolist())
    (tv, td), (kv, kd) = both(run)
    np.testing.assert_allclose(kv, tv, rtol=1e-6)
    np.testing.assert_allclose(kd, td, rtol=1e-6)


def test_saved_sparse_values_modified_in_place_raise_at_backward():
    class Keep(kiln.autograd.Function):
        @staticmethod
        def forward(ctx, values):
            a = kiln.sparse_coo_tensor(kiln.tensor(I), values, (3, 3))
            ctx.save_for_backward(a)
            return a.to_dense()

        @staticmethod
        def backward(ctx, grad):
            (a,) = ctx.saved_tensors
            return grad[tuple(a._indices())]
    v = kiln.tensor(V, requires_grad=True)
    out = Keep.apply(v * 1)
    v.data.mul_(2)  # not the saved values: backward works
    out.sum().backward()
    np.testing.assert_array_equal(np.array(v.grad.tolist()), np.ones(5))
    w = kiln.tensor(V, requires_grad=True) * 1
    out = Keep.apply(w)
    w.mul_(2)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        out.sum().backward()


# ---------------------------------------------------------------- what is not supported

UNSUPPORTED = {
    "exp": lambda lib, s: lib.exp(s),
    "method_exp": lambda lib, s: s.exp(),
    "view": lambda lib, s: s.view(9),
    "relu": lambda lib, s: lib.nn.functional.relu(s),
}


@pytest.mark.parametrize("name", sorted(UNSUPPORTED))
def test_unsupported_ops_raise_not_implemented_like_torch(name):
    for lib in (torch, kiln):
        with pytest.raises(NotImplementedError, match="SparseCPU"):
            UNSUPPORTED[name](lib, make(lib))


def test_dense_plus_sparse_is_dense():
    """dense + sparse_coo and dense - sparse_coo are dense, promoted as torch (pytorch/examples gat's
    torch.eye(V) + adj_mat with an int64 adjacency)."""
    i = [[0, 1, 1, 2], [2, 0, 0, 1]]
    for m in (torch, kiln):
        s = m.sparse_coo_tensor(i, m.ones(4), (3, 3), dtype=m.int64)
        a, b, c = m.eye(3) + s, m.eye(3).double() + s, m.ones(3, 3) - s
        if m is torch:
            want = [x.numpy() for x in (a, b, c)]
        else:
            for got, w in zip((a, b, c), want):
                assert str(got.dtype)[5:] == str(w.dtype) and not got.is_sparse
                np.testing.assert_array_equal(got.numpy(), w)
    # dense * sparse_coo is sparse (tests/python/test_program_gaps5.py checks it against torch)
    prod = kiln.eye(3) * kiln.sparse_coo_tensor(i, kiln.ones(4), (3, 3))
    assert prod.is_sparse and prod.to_dense().tolist() == (torch.eye(3) * torch.sparse_coo_tensor(
        i, torch.ones(4), (3, 3))).to_dense().tolist()


KILN_ONLY_UNSUPPORTED = {
    # torch supports these; kiln refuses them clearly rather than computing something else
    "select": lambda s: s[0],
    "cat": lambda s: kiln.cat([s, s]),
    "dense_matmul_sparse": lambda s: kiln.ones(3, 3).matmul(s),
    "numpy": lambda s: np.asarray(s),
}


@pytest.mark.parametrize("name", sorted(KILN_ONLY_UNSUPPORTED))
def test_kiln_refuses_clearly(name):
    with pytest.raises((NotImplementedError, TypeError), match="sparse|SparseCPU"):
        KILN_ONLY_UNSUPPORTED[name](make(kiln))
