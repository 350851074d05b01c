"""torch's rules for in-place writes into views that autograd cannot rebase (its CreationMeta), against
torch 1.13: outputs of ops that return several views (unbind, split, chunk, split_with_sizes) and
views made under no_grad of a tensor that requires grad may not be modified in place while autograd
records, neither directly nor through their base or a sibling view; the same writes under no_grad,
or with nothing requiring grad, are allowed. Also Tensor._base and Tensor._is_view()."""
import numpy as np
import pytest
import torch

import kiln

MULTI = {
    "unbind": lambda t: t.unbind(0),
    "split": lambda t: t.split(2),
    "chunk": lambda t: t.chunk(2),
    "split_with_sizes": lambda t: t.split_with_sizes([1, 3]),
}


def _base(lib, requires_grad=True):
    x = lib.tensor(np.arange(16.0).reshape(4, 4), requires_grad=requires_grad)
    return x.clone() if requires_grad else x


def _outcome(fn):
    """('ok', result as numpy) or ('raise', exception class, message)."""
    try:
        r = fn()
    except Exception as e:  # noqa: BLE001 - the class is what is compared
        return ("raise", type(e), str(e))
    return ("ok", None if r is None else np.asarray(r.detach().numpy()), "")


def _same(fn):
    rt, rk = _outcome(lambda: fn(torch)), _outcome(lambda: fn(kiln))
    assert rk[0] == rt[0], (rt, rk)
    if rt[0] == "raise":
        assert rk[1] is rt[1], (rt, rk)
    elif rt[1] is not None:
        np.testing.assert_array_equal(rk[1], rt[1])
    return rt, rk


@pytest.mark.parametrize("op", sorted(MULTI))
def test_multi_output_view_written_in_place_refuses(op):
    def f(lib):
        outs = MULTI[op](_base(lib))
        outs[0].mul_(2)
    rt, rk = _same(f)
    assert rt[0] == "raise" and "returns multiple views" in rk[2] and "is being modified inplace" in rk[2]


@pytest.mark.parametrize("op", sorted(MULTI))
def test_view_of_a_multi_output_view_keeps_the_rule(op):
    def f(lib):
        outs = MULTI[op](_base(lib))
        outs[0][..., 1:].add_(1)
    rt, rk = _same(f)
    assert rt[0] == "raise" and "returns multiple views" in rk[2]


@pytest.mark.parametrize("op", sorted(MULTI))
def test_multi_output_view_written_under_no_grad_or_without_grad_is_allowed(op):
    def under_no_grad(lib):
        x = _base(lib)
        outs = MULTI[op](x)
        with lib.no_grad():
            outs[0].mul_(2)
        return x

    def without_grad(lib):
        x = _base(lib, requires_grad=False)
        MULTI[op](x)[0].mul_(2)
        return x
    for f in (under_no_grad, without_grad):
        rt, _ = _same(f)
        assert rt[0] == "ok"


def test_multi_output_view_refuses_when_only_the_other_operand_requires_grad():
    def f(lib):
        w = lib.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
        _base(lib, requires_grad=False).unbind(0)[0].mul_(w)
    rt, _ = _same(f)
    assert rt[0] == "raise"


def test_multi_output_view_used_after_its_base_was_written_refuses():
    def through_base(lib):
        x = _base(lib)
        outs = x.unbind(0)
        x.mul_(2)
        return (outs[0] * 2).sum()

    def grad_fn_after_base_write(lib):
        x = _base(lib)
        outs = x.split(2)
        x.add_(1)
        outs[1].grad_fn
    for f in (through_base, grad_fn_after_base_write):
        rt, rk = _same(f)
        assert rt[0] == "raise" and "its base or another view of its base has been" in rk[2]


def test_tensor_split_outputs_may_be_written_in_place():
    # torch builds tensor_split from slices: ordinary views, gradients through the write.
    def f(lib):
        leaf = lib.tensor(np.arange(16.0).reshape(4, 4), requires_grad=True)
        x = leaf * 1
        outs = x.tensor_split(2)
        outs[0].mul_(3)
        (x * x).sum().backward()
        return leaf.grad
    rt, _ = _same(f)
    assert rt[0] == "ok"


def test_no_grad_view_written_in_place_with_grad_enabled_refuses():
    def of_leaf(lib):
        w = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        with lib.no_grad():
            v = w[0:2]
        v.mul_(2)

    def of_non_leaf(lib):
        x = _base(lib)
        with lib.no_grad():
            v = x[1]
        v.add_(1)

    def base_written_after(lib):
        x = _base(lib)
        with lib.no_grad():
            v = x[1]
        x.add_(1)
        return v * 2
    for f in (of_leaf, of_non_leaf, base_written_after):
        rt, rk = _same(f)
        assert rt[0] == "raise" and "A view was created in no_grad mode" in rk[2]


def test_no_grad_views_written_under_no_grad_are_allowed():
    def f(lib):
        x = _base(lib)
        with lib.no_grad():
            v = x[1]
            v.add_(1)
        return x
    rt, _ = _same(f)
    assert rt[0] == "ok"


def test_base_and_is_view():
    for lib in (torch, kiln):
        x = lib.ones(3, 4)
        y = lib.ones(3, 4, requires_grad=True)
        assert x._base is None and not x._is_view()
        v = x[1:].t()
        assert v._is_view() and v._base is x  # a view of a view: the root
        assert y.view(12)._base is y
        assert not (y * 2)._is_view() and (y * 2)._base is None
        assert x.unbind(0)[2]._base is x
