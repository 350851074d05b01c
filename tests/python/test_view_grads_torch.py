"""Gradients through every view op, checked against torch: of an ordinary leaf, and of an
expanded leaf (stride 0), whose gradient keeps one value per logical element in torch."""
import numpy as np
import pytest
import torch

import kiln

# name -> f(t, lib): a view of a (3, 4, 2) tensor t. lib is kiln or torch.
VIEWS = {
    "view": lambda t, lib: t.view(3, 8),
    "reshape": lambda t, lib: t.reshape(-1),
    "flatten": lambda t, lib: t.flatten(1),
    "unflatten": lambda t, lib: t.unflatten(1, (2, 2)),
    "permute": lambda t, lib: t.permute(2, 0, 1),
    "transpose": lambda t, lib: t.transpose(0, 2),
    "movedim": lambda t, lib: t.movedim(0, 2),
    "select": lambda t, lib: t.select(1, 2),
    "index_int": lambda t, lib: t[1],
    "slice_step": lambda t, lib: t[:, 1::2],
    "narrow": lambda t, lib: t.narrow(1, 1, 2),
    "squeeze_unsqueeze": lambda t, lib: t.unsqueeze(1).squeeze(1),
    "expand": lambda t, lib: t.unsqueeze(0).expand(2, 3, 4, 2),
    "diagonal": lambda t, lib: t.diagonal(0, 0, 1),
    "diagonal_offset": lambda t, lib: lib.diagonal(t, -1, 1, 0),
    "unfold": lambda t, lib: t.unfold(1, 3, 1),
    "unfold_step": lambda t, lib: t.unfold(0, 2, 1),
    "as_strided": lambda t, lib: t.as_strided((2, 2), (1, 2)),
    "split": lambda t, lib: t.split(3, 1)[1],
    "chunk": lambda t, lib: t.chunk(2, 0)[0],
    "unbind": lambda t, lib: t.unbind(2)[1],
    "t_of_select": lambda t, lib: t.select(2, 0).t(),
    "view_as": lambda t, lib: t.view_as(t),
}


def _leaf(lib, expanded):
    base = np.arange(1, 25, dtype=np.float64).reshape(3, 4, 2) / 7
    if expanded:
        row = lib.tensor(base[:1].copy(), dtype=lib.float64)
        return row.expand(3, 4, 2).requires_grad_()
    return lib.tensor(base, dtype=lib.float64, requires_grad=True)


def _grad(lib, name, expanded):
    t = _leaf(lib, expanded)
    out = VIEWS[name](t, lib)
    weights = lib.tensor(np.arange(out.numel(), dtype=np.float64).reshape(tuple(out.shape)) + 1, dtype=lib.float64)
    (out * weights).sum().backward()
    return np.array(t.grad.tolist())


@pytest.mark.parametrize("expanded", [False, True], ids=["leaf", "expanded_leaf"])
@pytest.mark.parametrize("name", sorted(VIEWS))
def test_view_gradient_matches_torch(name, expanded):
    expected = _grad(torch, name, expanded)
    got = _grad(kiln, name, expanded)
    assert got.shape == expected.shape
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-12)


def test_issue_example_unfold_of_expanded_leaf():
    a = kiln.tensor([[0.4, 1.9]], dtype=kiln.float64).expand(3, 2).requires_grad_()
    (a.unfold(0, 3, 1) * kiln.arange(6., dtype=kiln.float64).reshape(1, 2, 3)).sum().backward()
    assert a.grad.tolist() == [[0, 3], [1, 4], [2, 5]]  # hand-computed: each row gets its window weight


def test_unfold_and_diagonal_double_backward():
    x = kiln.arange(1., 13., dtype=kiln.float64).reshape(3, 4).requires_grad_()
    assert kiln.autograd.gradcheck(lambda t: t.unfold(1, 2, 1) ** 2, (x,))
    assert kiln.autograd.gradgradcheck(lambda t: t.unfold(1, 2, 1) ** 2, (x,))
    assert kiln.autograd.gradgradcheck(lambda t: t.diagonal(1) ** 2, (x,))
