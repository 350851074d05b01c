"""kiln.einsum against numpy.einsum, its gradients against finite differences, and its errors."""
import numpy as np
import pytest

import kiln
from kiln.autograd import gradcheck, gradgradcheck

CASES = [
    ("ij,jk->ik", [(3, 4), (4, 5)]), ("ij,jk", [(3, 4), (4, 5)]), ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]),
    ("ii->i", [(4, 4)]), ("ii", [(4, 4)]), ("ij->", [(3, 4)]), ("i,i->", [(5,), (5,)]), ("i,j->ij", [(3,), (4,)]),
    ("...ij,...jk->...ik", [(2, 1, 3, 4), (5, 4, 2)]), ("bhqd,bhkd->bhqk", [(2, 3, 4, 5), (2, 3, 6, 5)]),
    ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 5)]), ("iij->j", [(3, 3, 2)]), ("ij->ji", [(2, 3)]),
    ("i,i,i->i", [(3,), (3,), (3,)]), ("abc,cd->abd", [(2, 1, 3), (3, 4)]), ("i j , j k -> i k", [(2, 3), (3, 2)]),
    ("ij,kl->", [(2, 3), (4, 5)]), ("...,...->...", [(3, 1), (4,)]), ("ij,ij->ij", [(0, 3), (0, 3)]),
]


@pytest.mark.parametrize("equation,shapes", CASES, ids=[c[0] for c in CASES])
def test_einsum_matches_numpy(equation, shapes):
    rng = np.random.default_rng(len(equation))
    arrays = [rng.standard_normal(s) for s in shapes]
    got = kiln.einsum(equation, *[kiln.tensor(a) for a in arrays])
    want = np.einsum(equation, *arrays)
    assert tuple(got.shape) == np.shape(want)
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-12, atol=1e-12)


def test_einsum_takes_a_list_of_operands():
    a, b = kiln.ones(2, 3), kiln.ones(3)
    np.testing.assert_allclose(kiln.einsum("ij,j->i", [a, b]).numpy(), [3.0, 3.0])


@pytest.mark.parametrize("equation,shapes", [("ij,jk->ik", [(3, 4), (4, 2)]), ("bij,bkj->bik", [(2, 2, 3), (2, 3, 3)]),
                                             ("ii->", [(3, 3)]), ("i,j->ij", [(3,), (2,)])])
def test_einsum_gradients(equation, shapes):
    inputs = [kiln.randn(*s, dtype=kiln.float64, requires_grad=True) for s in shapes]
    fn = lambda *xs: kiln.einsum(equation, *xs)  # noqa: E731
    assert gradcheck(fn, inputs)
    assert gradgradcheck(fn, inputs)


@pytest.mark.parametrize("equation,shapes", [
    ("ij,jk->ik", [(3, 4), (5, 5)]), ("ij->k", [(2, 2)]), ("ij", [(2, 2, 2)]), ("ij,jk", [(2, 2)]),
    ("ii->i", [(2, 3)]), ("ij->ii", [(2, 2)]), ("i#->i", [(2, 2)]),
], ids=["size mismatch", "unknown output", "too few subscripts", "operand count", "diagonal sizes",
        "repeated output", "bad character"])
def test_einsum_errors(equation, shapes):
    with pytest.raises((RuntimeError, ValueError), match="einsum"):
        kiln.einsum(equation, *[kiln.ones(*s) for s in shapes])
