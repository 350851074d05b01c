"""In-place view methods (t_, transpose_, swapdims_, swapaxes_, unsqueeze_, squeeze_, as_strided_) and
resize_/resize_as_, against torch 1.13: the geometry they leave (sizes, strides, offset, same storage,
self returned), the version bump, torch's autograd rules (a leaf that requires grad, or a view of one,
refuses; a non-leaf or a view of one records the view op, so backward through later uses gives torch's
gradients) and the errors, of the same type as torch's."""
import numpy as np
import pytest
import torch

import kiln

# name -> f(t): an in-place view method applied to a (2, 3, 1) or smaller tensor, returning its result.
OPS = {
    "t_": (lambda t: t.t_(), (2, 3)),
    "t_1d": (lambda t: t.t_(), (4,)),
    "transpose_": (lambda t: t.transpose_(0, 2), (2, 3, 1)),
    "transpose_neg": (lambda t: t.transpose_(-1, 0), (2, 3)),
    "swapdims_": (lambda t: t.swapdims_(1, 0), (2, 3)),
    "swapaxes_": (lambda t: t.swapaxes_(0, 1), (2, 3)),
    "unsqueeze_": (lambda t: t.unsqueeze_(1), (2, 3)),
    "unsqueeze_neg": (lambda t: t.unsqueeze_(-1), (2, 3)),
    "squeeze_": (lambda t: t.squeeze_(), (2, 1, 3, 1)),
    "squeeze_dim": (lambda t: t.squeeze_(1), (2, 1, 3)),
    "squeeze_dim_noop": (lambda t: t.squeeze_(0), (2, 1, 3)),
    "as_strided_": (lambda t: t.as_strided_((3, 2), (1, 3)), (2, 3)),
    "as_strided_offset": (lambda t: t.as_strided_((2, 2), (3, 1), 1), (2, 3)),
}


def _data(shape, lib):
    n = int(np.prod(shape))
    return lib.tensor((np.arange(n, dtype=np.float64).reshape(shape) + 1) / 3, dtype=lib.float64)


@pytest.mark.parametrize("name", sorted(OPS))
def test_geometry_matches_torch(name):
    fn, shape = OPS[name]
    out = {}
    for lib in (torch, kiln):
        t = _data(shape, lib)
        ptr = t.data_ptr()
        v0 = t._version
        r = fn(t)
        assert r is t
        assert t.data_ptr() - t.storage_offset() * 8 == ptr  # same storage
        out[lib.__name__] = (tuple(t.shape), tuple(t.stride()), t.storage_offset(), t._version - v0,
                             np.array(t.tolist()))
    k, tt = out["kiln"], out["torch"]
    assert k[:4] == tt[:4]
    np.testing.assert_array_equal(k[4], tt[4])


@pytest.mark.parametrize("name", sorted(OPS))
def test_gradient_through_nonleaf_matches_torch(name):
    """x = leaf * 2; x.op_(); (x * w).sum().backward(): the leaf's gradient, and x's grad_fn recorded."""
    fn, shape = OPS[name]
    grads = {}
    for lib in (torch, kiln):
        leaf = _data(shape, lib).requires_grad_()
        x = leaf * 2
        fn(x)
        assert x.grad_fn is not None and not x.is_leaf
        w = lib.tensor(np.arange(x.numel(), dtype=np.float64).reshape(tuple(x.shape)) + 1, dtype=lib.float64)
        (x * w).sum().backward()
        grads[lib.__name__] = np.array(leaf.grad.tolist())
    np.testing.assert_allclose(grads["kiln"], grads["torch"], rtol=0, atol=1e-12)


def test_chain_of_inplace_views_gradient():
    grads = {}
    for lib in (torch, kiln):
        leaf = _data((2, 3), lib).requires_grad_()
        x = leaf.sin()  # saves its input, not x (whose version the views bump)
        x.unsqueeze_(0).transpose_(0, 2).squeeze_().t_()
        x.as_strided_((3, 2), (1, 3))
        w = lib.tensor([[1.0, -2.0], [3.0, 0.5], [4.0, 5.0]], dtype=lib.float64)
        (x * w).sum().backward()
        grads[lib.__name__] = np.array(leaf.grad.tolist())
    np.testing.assert_allclose(grads["kiln"], grads["torch"], rtol=1e-12)


@pytest.mark.parametrize("name", sorted(OPS))
def test_leaf_requiring_grad_refuses(name):
    fn, shape = OPS[name]
    for lib in (torch, kiln):
        leaf = _data(shape, lib).requires_grad_()
        with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used in an in-place"):
            fn(leaf)
        assert tuple(leaf.shape) == shape  # unchanged


def test_leaf_under_no_grad_changes_geometry():
    for lib in (torch, kiln):
        leaf = _data((2, 3), lib).requires_grad_()
        with lib.no_grad():
            leaf.t_()
        assert tuple(leaf.shape) == (3, 2) and leaf.is_leaf and leaf.requires_grad and leaf.grad_fn is None


def test_view_of_leaf_refuses():
    for lib in (torch, kiln):
        leaf = _data((2, 3), lib).requires_grad_()
        with pytest.raises(RuntimeError, match="a view of a leaf Variable that requires grad"):
            leaf[0].unsqueeze_(0)


@pytest.mark.parametrize("make", ["select", "t", "slice"])
def test_view_of_nonleaf_gradient_matches_torch(make):
    grads = {}
    for lib in (torch, kiln):
        leaf = _data((3, 4), lib).requires_grad_()
        base = leaf * 1.5
        v = {"select": lambda: base[1], "t": lambda: base.t(), "slice": lambda: base[:, 1:3]}[make]()
        if make == "select":
            v.unsqueeze_(0)
        elif make == "t":
            v.t_()
        else:
            v.transpose_(0, 1)
        assert v.grad_fn is not None
        w = lib.tensor(np.arange(v.numel(), dtype=np.float64).reshape(tuple(v.shape)) - 2, dtype=lib.float64)
        ((v * w).sum() + base.sum() * 0.25).backward()
        grads[lib.__name__] = np.array(leaf.grad.tolist())
    np.testing.assert_allclose(grads["kiln"], grads["torch"], rtol=1e-12)


def test_view_then_base_written_in_place_gradient_matches_torch():
    """After v.t_(), an in-place write to the base through another view: v's history is rebuilt from the
    base with v's new geometry."""
    grads = {}
    for lib in (torch, kiln):
        leaf = _data((3, 3), lib).requires_grad_()
        base = leaf * 1.0
        v = base[:, :2]
        v.t_()
        base[0].mul_(3)
        w = lib.tensor(np.arange(6, dtype=np.float64).reshape(2, 3) + 1, dtype=lib.float64)
        (v * w).sum().backward()
        grads[lib.__name__] = np.array(leaf.grad.tolist())
    np.testing.assert_allclose(grads["kiln"], grads["torch"], rtol=1e-12)


def test_saved_tensor_modified_by_inplace_view_raises_at_backward():
    for lib in (torch, kiln):
        leaf = _data((2, 3), lib).requires_grad_()
        x = leaf * 2
        y = (x * x).sum()  # mul saves x
        x.t_()  # bumps x's version, as torch
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            y.backward()


def test_plain_tensor_stays_untracked():
    x = kiln.ones(2, 3)
    x.t_()
    assert x.grad_fn is None and not x.requires_grad and x.is_leaf


ERRORS = [
    ("transpose_ dim", lambda t: t.transpose_(5, 0), (2, 3), IndexError),
    ("unsqueeze_ dim", lambda t: t.unsqueeze_(3), (2, 3), IndexError),
    ("squeeze_ dim", lambda t: t.squeeze_(-3), (2, 3), IndexError),
    ("t_ 3-D", lambda t: t.t_(), (2, 3, 4), RuntimeError),
    ("as_strided_ negative stride", lambda t: t.as_strided_((2,), (-1,)), (2, 3), RuntimeError),
    ("as_strided_ out of bounds", lambda t: t.as_strided_((20,), (1,)), (2, 3), RuntimeError),
    ("squeeze_ tuple", lambda t: t.squeeze_((0, 1)), (2, 3), TypeError),
    ("resize_ negative", lambda t: t.resize_(-1), (2, 3), RuntimeError),
]


@pytest.mark.parametrize("case", ERRORS, ids=[e[0] for e in ERRORS])
def test_errors_have_torchs_types(case):
    _, fn, shape, err = case
    for lib in (torch, kiln):
        t = _data(shape, lib)
        with pytest.raises(err):
            fn(t)
        if lib is kiln:  # a failed call leaves self as it was (torch's resize_(-1) leaves size (-1,))
            assert tuple(t.shape) == shape


@pytest.mark.parametrize("shape,new", [((2, 3), (3, 2)), ((2, 3), (4, 4)), ((2, 3), (2,)), ((2, 3), (0,)),
                                       ((2, 3), (2, 3))])
def test_resize_matches_torch(shape, new):
    out = {}
    for lib in (torch, kiln):
        t = _data(shape, lib)
        r = t.resize_(*new)
        assert r is t
        keep = min(int(np.prod(shape)), int(np.prod(new)))  # the elements that were there keep their values
        out[lib.__name__] = (tuple(t.shape), tuple(t.stride()), np.array(t.reshape(-1)[:keep].tolist()))
        s = _data(shape, lib)
        s.resize_as_(lib.empty(new))
        assert tuple(s.shape) == tuple(new)
    assert out["kiln"][:2] == out["torch"][:2]
    np.testing.assert_array_equal(out["kiln"][2], out["torch"][2])


def test_resize_keeps_strides_when_sizes_match():
    for lib in (torch, kiln):
        t = _data((2, 3), lib).t()
        t.resize_(3, 2)
        assert tuple(t.stride()) == (1, 3)


def test_resize_refuses_requires_grad():
    for lib in (torch, kiln):
        with pytest.raises(RuntimeError, match="cannot resize variables that require grad"):
            _data((2, 3), lib).requires_grad_().resize_(6)
        with pytest.raises(RuntimeError, match="cannot resize variables that require grad"):
            (_data((2, 3), lib).requires_grad_() * 2).resize_(2, 3)


def test_resize_of_a_view_shares_the_storage():
    for lib in (torch, kiln):
        base = _data((2, 3), lib)
        v = base.view(6)
        v.resize_(3)
        v.fill_(0)
        assert base.tolist()[0] == [0.0, 0.0, 0.0]
