"""torch 1.13's deprecated linear algebra as older programs call it (PCA / ZCA whitening by torch.symeig,
spectral clustering): symeig's values, vectors, gradients, warning and errors against torch; solve, lstsq, eig and
matrix_rank raise torch's "removed" RuntimeError."""
import warnings

import numpy as np
import pytest
import torch

import kiln


def quiet(fn, *args):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(*args)


def spd(seed, *batch, n=4, dtype=np.float64):
    a = np.random.RandomState(seed).randn(*batch, n, n).astype(dtype)
    return a @ np.swapaxes(a, -1, -2) + n * np.eye(n, dtype=dtype)


@pytest.mark.parametrize("upper", [True, False])
@pytest.mark.parametrize("batch", [(), (2,)])
def test_symeig_values_vectors_and_gradients(upper, batch):
    a = spd(0, *batch)
    a = a + np.triu(np.ones_like(a), 1) * (0.3 if upper else -0.3)  # the unread triangle differs
    results = []
    for T in (torch, kiln):
        t = T.tensor(a, requires_grad=True)
        values, vectors = quiet(lambda: T.symeig(t, eigenvectors=True, upper=upper))
        (values.pow(2).sum() + (vectors[..., 0, :] * vectors[..., 1, :]).sum()).backward()
        results.append((values.detach().numpy(), np.abs(vectors.detach().numpy()), t.grad.numpy()))
    for a_, b_ in zip(*results):
        np.testing.assert_allclose(b_, a_, rtol=1e-10, atol=1e-12)


def test_symeig_without_vectors_method_form_and_types():
    a = spd(1).astype(np.float32)
    rt = quiet(lambda: torch.tensor(a).symeig())
    rk = quiet(lambda: kiln.tensor(a).symeig())
    assert type(rk).__name__ == "symeig" and rk._fields == ("eigenvalues", "eigenvectors")
    np.testing.assert_allclose(rk.eigenvalues.numpy(), rt.eigenvalues.numpy(), rtol=1e-5)
    assert tuple(rk.eigenvectors.shape) == tuple(rt.eigenvectors.shape) == (0,)
    assert rk.eigenvectors.dtype == kiln.float32


def test_symeig_warns_and_its_errors_match_torch():
    with pytest.warns(UserWarning, match="torch.symeig is deprecated in favor of torch.linalg.eigh"):
        kiln.symeig(kiln.eye(3))
    for T in (torch, kiln):
        t = T.tensor(spd(2), requires_grad=True)
        values, _ = quiet(lambda: T.symeig(t))
        with pytest.raises(RuntimeError, match="torch.symeig\\(A, eigenvectors=False\\) is not differentiable"):
            values.sum().backward()
        with pytest.raises(RuntimeError, match="A must be batches of square matrices, but they are 2 by 3"):
            quiet(lambda: T.symeig(T.randn(2, 3)))


@pytest.mark.parametrize("call", [
    lambda T, A: T.solve(A, A), lambda T, A: A.solve(A), lambda T, A: T.lstsq(A, A), lambda T, A: A.lstsq(A),
    lambda T, A: T.eig(A, eigenvectors=True), lambda T, A: A.eig(), lambda T, A: T.matrix_rank(A),
])
def test_removed_functions_raise_torchs_error(call):
    messages = []
    for T in (torch, kiln):
        with pytest.raises(RuntimeError) as info:
            call(T, T.eye(3))
        messages.append(str(info.value))
    assert messages[0] == messages[1] and "deprecated since version 1.9 and is now removed" in messages[0]


def test_zca_whitening_with_symeig():
    # the classic ZCA whitening of an older program: cov = X^T X / n, symeig, U diag(1 / sqrt(S + eps)) U^T
    x = np.random.RandomState(3).randn(50, 6)
    out = []
    for T in (torch, kiln):
        X = T.tensor(x)
        X = X - X.mean(0)
        cov = X.t().mm(X) / X.size(0)
        S, U = quiet(lambda: T.symeig(cov, eigenvectors=True))
        W = U.mm(T.diag(1.0 / T.sqrt(S + 1e-5))).mm(U.t())
        out.append(X.mm(W).numpy())
    np.testing.assert_allclose(out[1], out[0], rtol=1e-9, atol=1e-10)
