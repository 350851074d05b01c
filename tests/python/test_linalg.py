"""kiln.linalg against torch 1.13 (the oracle): values and gradients of solve, inv, det, slogdet
(and their legacy names), on batched, broadcast, singular, badly shaped and wrongly typed inputs,
in float32 and float64. Gradients are compared with torch's, and checked by finite differences
(gradcheck) in float64."""
import numpy as np
import pytest
import torch

import kiln
from kiln.autograd import gradcheck, gradgradcheck

FLOATS = ["float32", "float64"]
TOL = {"float32": dict(rtol=1e-4, atol=1e-5), "float64": dict(rtol=1e-9, atol=1e-10)}


def well_conditioned(shape, dtype, seed=0):
    """Random square matrices with a dominant diagonal (invertible, condition number ~ 1)."""
    rng = np.random.default_rng(seed)
    a = rng.standard_normal(shape)
    n = shape[-1]
    return (a + 3 * n ** 0.5 * np.eye(n) * np.sign(rng.standard_normal(shape[:-1])[..., None])).astype(dtype)


def rand(shape, dtype, seed=1):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def pair(*arrays, requires_grad=False):
    """The same arrays as kiln and as torch tensors."""
    ks = [kiln.from_numpy(a.copy()).requires_grad_(requires_grad) for a in arrays]
    ts = [torch.from_numpy(a.copy()).requires_grad_(requires_grad) for a in arrays]
    return ks, ts


def close(k, t, dtype):
    k = k.detach().numpy() if isinstance(k, kiln.Tensor) else np.asarray(k)
    t = t.detach().numpy() if isinstance(t, torch.Tensor) else np.asarray(t)
    assert k.shape == t.shape, (k.shape, t.shape)
    assert k.dtype == t.dtype, (k.dtype, t.dtype)
    np.testing.assert_allclose(k, t, **TOL[dtype])


def grads_close(kfn, tfn, arrays, dtype, seed=5):
    """Runs both functions on the arrays, backpropagates the same random cotangents through
    every output, and compares outputs and input gradients."""
    ks, ts = pair(*arrays, requires_grad=True)
    kout, tout = kfn(*ks), tfn(*ts)
    kout = kout if isinstance(kout, tuple) else (kout,)
    tout = tout if isinstance(tout, tuple) else (tout,)
    kloss, tloss = 0, 0
    for i, (ko, to) in enumerate(zip(kout, tout)):
        close(ko, to, dtype)
        if not to.requires_grad:
            continue
        w = rand(tuple(to.shape), dtype, seed=seed + i)
        kloss = kloss + (ko * kiln.from_numpy(w)).sum()
        tloss = tloss + (to * torch.from_numpy(w)).sum()
    kloss.backward()
    tloss.backward()
    for k, t in zip(ks, ts):
        if t.grad is None:  # torch's det backward gives no gradient to an empty input
            assert k.grad is None or k.grad.numel() == 0
            continue
        close(k.grad, t.grad, dtype)


# ----------------------------------------------------------------------------- solve
SOLVE_SHAPES = [
    ((3, 3), (3,), "vector"),
    ((3, 3), (3, 2), "matrix"),
    ((2, 4, 4), (2, 4), "batch of vectors"),
    ((2, 4, 4), (2, 4, 3), "batch of matrices"),
    ((2, 1, 3, 3), (4, 3, 2), "broadcast batches (2, 1) and (4,)"),
    ((3, 3), (5, 3, 1), "A broadcast over B's batch"),
    ((2, 3, 3), (3,), "1-D B against a batch"),
    ((0, 3, 3), (0, 3), "empty batch"),
    ((0, 0), (0, 2), "0 x 0"),
]


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("a_shape,b_shape,note", SOLVE_SHAPES, ids=[c[2] for c in SOLVE_SHAPES])
def test_solve_values_and_gradients(a_shape, b_shape, note, dtype):
    a, b = well_conditioned(a_shape, dtype), rand(b_shape, dtype)
    grads_close(kiln.linalg.solve, torch.linalg.solve, [a, b], dtype)


@pytest.mark.parametrize("dtype", FLOATS)
def test_solve_left_false(dtype):
    a, b = well_conditioned((2, 3, 3), dtype), rand((2, 4, 3), dtype)
    grads_close(lambda x, y: kiln.linalg.solve(x, y, left=False),
                lambda x, y: torch.linalg.solve(x, y, left=False), [a, b], dtype)


def test_solve_non_contiguous_inputs():
    a, b = well_conditioned((3, 4, 4), "float64"), rand((4, 3, 2), "float64")
    (ka, kb), (ta, tb) = pair(a, b)
    close(kiln.linalg.solve(ka.transpose(-2, -1), kb.permute(1, 0, 2)[:, :, :1]),
          torch.linalg.solve(ta.transpose(-2, -1), tb.permute(1, 0, 2)[:, :, :1]), "float64")


def test_solve_gradcheck_and_gradgradcheck():
    a = kiln.from_numpy(well_conditioned((2, 3, 3), "float64")).requires_grad_()
    b = kiln.from_numpy(rand((3, 2), "float64")).requires_grad_()  # broadcast over A's batch
    assert gradcheck(kiln.linalg.solve, (a, b))
    assert gradgradcheck(kiln.linalg.solve, (a, b))
    v = kiln.from_numpy(rand((2, 3), "float64")).requires_grad_()
    assert gradcheck(kiln.linalg.solve, (a, v))


def test_solve_singular_raises_linalg_error():
    with pytest.raises(kiln.linalg.LinAlgError, match=r"^torch.linalg.solve: The solver failed because the input "
                                                      r"matrix is singular.$"):
        kiln.linalg.solve(kiln.zeros(2, 2), kiln.ones(2))
    batched = np.stack([np.eye(2), np.zeros((2, 2))])
    with pytest.raises(RuntimeError, match=r"\(Batch element 1\): The solver failed"):
        kiln.linalg.solve(kiln.from_numpy(batched), kiln.ones(2, 2, 1, dtype=kiln.float64))
    assert issubclass(kiln.linalg.LinAlgError, RuntimeError)


@pytest.mark.parametrize("call,exc,match", [
    (lambda k: k.linalg.solve(k.ones(2, 3), k.ones(2)), RuntimeError,
     "linalg.solve: A must be batches of square matrices, but they are 2 by 3 matrices"),
    (lambda k: k.linalg.solve(k.eye(2), k.ones(3)), RuntimeError,
     r"linalg.solve: Incompatible shapes of A and B for the equation AX = B \(2x2 and 3x1\)"),
    (lambda k: k.linalg.solve(k.eye(2), k.ones(2), left=False), RuntimeError,
     r"linalg.solve: Incompatible shapes of A and B for the equation XA = B \(2x2 and 2x1\)"),
    (lambda k: k.linalg.solve(k.eye(2, dtype=k.int64), k.ones(2)), RuntimeError,
     "linalg.solve: Expected a floating point or complex tensor as input. Got Long"),
    (lambda k: k.linalg.solve(k.eye(2), k.ones(2, dtype=k.float64)), RuntimeError,
     "linalg.solve: Expected A and B to have the same dtype, but found A of type Float and B of type Double"),
    (lambda k: k.linalg.solve(k.ones(2), k.ones(2)), RuntimeError,
     "linalg.solve: The input tensor A must have at least 2 dimensions."),
    (lambda k: k.linalg.solve(k.eye(2), k.ones([])), RuntimeError,
     "linalg.solve: The input tensor B must have at least 2 dimensions."),
    (lambda k: k.linalg.solve(k.eye(2).expand(3, 2, 2), k.ones(2, 2, 1)), RuntimeError, "must match"),
])
def test_solve_errors_match_torch(call, exc, match):
    with pytest.raises(exc, match=match):
        call(torch)
    with pytest.raises(exc, match=match):
        call(kiln)


# ----------------------------------------------------------------------------- inv
INV_SHAPES = [(3, 3), (1, 1), (2, 4, 4), (2, 1, 3, 3), (0, 2, 2), (0, 0)]


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape", INV_SHAPES, ids=str)
def test_inv_values_and_gradients(shape, dtype):
    a = well_conditioned(shape, dtype)
    grads_close(kiln.linalg.inv, torch.linalg.inv, [a], dtype)
    ka, ta = kiln.from_numpy(a), torch.from_numpy(a)
    close(kiln.inverse(ka), torch.inverse(ta), dtype)
    close(ka.inverse(), ta.inverse(), dtype)


def test_inv_gradcheck_and_gradgradcheck():
    a = kiln.from_numpy(well_conditioned((2, 3, 3), "float64")).requires_grad_()
    assert gradcheck(kiln.linalg.inv, (a,))
    assert gradgradcheck(kiln.linalg.inv, (a,))


def test_inv_singular_messages_match_torch():
    for shape in [(2, 2), (3, 2, 2)]:
        with pytest.raises(torch.linalg.LinAlgError) as t:
            torch.linalg.inv(torch.zeros(shape))
        with pytest.raises(kiln.linalg.LinAlgError) as k:
            kiln.linalg.inv(kiln.zeros(shape))
        assert str(k.value) == str(t.value)


@pytest.mark.parametrize("call", [
    lambda k: k.linalg.inv(k.ones(3)),
    lambda k: k.linalg.inv(k.ones(2, 3)),
    lambda k: k.linalg.inv(k.ones(2, 2, dtype=k.int32)),
    lambda k: k.inverse(k.ones(2, 3, 4)),
])
def test_inv_errors_match_torch(call):
    with pytest.raises(RuntimeError) as t:
        call(torch)
    with pytest.raises(RuntimeError) as k:
        call(kiln)
    assert str(k.value) == str(t.value)


# ----------------------------------------------------------------------------- det, slogdet, logdet
DET_SHAPES = [(3, 3), (1, 1), (2, 4, 4), (2, 1, 3, 3), (0, 2, 2)]


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape", DET_SHAPES, ids=str)
def test_det_values_and_gradients(shape, dtype):
    a = well_conditioned(shape, dtype)
    grads_close(kiln.linalg.det, torch.linalg.det, [a], dtype)
    grads_close(kiln.det, torch.det, [a], dtype)
    grads_close(lambda x: x.det(), lambda x: x.det(), [a], dtype)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape", DET_SHAPES, ids=str)
def test_slogdet_values_and_gradients(shape, dtype):
    a = well_conditioned(shape, dtype)
    grads_close(kiln.linalg.slogdet, torch.linalg.slogdet, [a], dtype)
    grads_close(kiln.slogdet, torch.slogdet, [a], dtype)
    spd = a @ np.swapaxes(a, -1, -2)  # positive determinant: logdet is finite
    grads_close(kiln.logdet, torch.logdet, [spd], dtype)


def test_det_of_empty_and_singular_matrices():
    for shape in [(0, 0), (2, 0, 0)]:
        close(kiln.linalg.det(kiln.zeros(shape)), torch.linalg.det(torch.zeros(shape)), "float32")
    sing = np.array([[1.0, 2.0], [2.0, 4.0]])
    (k,), (t,) = pair(sing)
    close(kiln.linalg.det(k), torch.linalg.det(t), "float64")
    ks, kl = kiln.linalg.slogdet(k)
    ts, tl = torch.linalg.slogdet(t)
    close(ks, ts, "float64")
    close(kl, tl, "float64")
    close(kiln.logdet(k), torch.logdet(t), "float64")
    neg = -np.eye(3)
    close(kiln.logdet(kiln.from_numpy(neg)), torch.logdet(torch.from_numpy(neg)), "float64")  # nan


@pytest.mark.parametrize("create_graph", [False, True])
def test_det_gradient_of_singular_matrices_matches_torch(create_graph):
    """torch 1.13: 0 in a plain backward pass (its LU solve of grad * det = 0); the adjugate (from
    the SVD) while a graph is built. A batch mixes singular and invertible matrices."""
    a = np.stack([[[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [1.0, 0.0, 1.0]], well_conditioned((3, 3), "float64"),
                  [[1.0, 2.0, 0.0], [2.0, 4.0, 0.0], [0.0, 0.0, 3.0]]])
    (k,), (t,) = pair(a, requires_grad=True)
    kg, = kiln.autograd.grad(kiln.linalg.det(k).sum(), k, create_graph=create_graph)
    tg, = torch.autograd.grad(torch.linalg.det(t).sum(), t, create_graph=create_graph)
    np.testing.assert_allclose(kg.detach().numpy(), tg.detach().numpy(), atol=1e-12)
    if create_graph:  # and second derivatives through the adjugate
        w = rand((3, 3, 3), "float64", seed=2)
        kgg, = kiln.autograd.grad((kg * kiln.from_numpy(w)).sum(), k)
        tgg, = torch.autograd.grad((tg * torch.from_numpy(w)).sum(), t)
        np.testing.assert_allclose(kgg.numpy(), tgg.numpy(), atol=1e-10)


def test_slogdet_named_tuple():
    out = kiln.linalg.slogdet(kiln.eye(3) * 2)
    assert out.sign.item() == 1.0
    assert abs(out.logabsdet.item() - 3 * np.log(2)) < 1e-6
    sign, logabsdet = kiln.slogdet(-kiln.eye(3))
    assert sign.item() == -1.0 and logabsdet.item() == 0.0
    assert type(out).__name__ == "linalg_slogdet"


def test_det_slogdet_gradcheck_and_gradgradcheck():
    a = kiln.from_numpy(well_conditioned((2, 3, 3), "float64")).requires_grad_()
    assert gradcheck(kiln.linalg.det, (a,))
    assert gradgradcheck(kiln.linalg.det, (a,))
    assert gradcheck(lambda x: kiln.linalg.slogdet(x)[1], (a,))
    assert gradgradcheck(lambda x: kiln.linalg.slogdet(x)[1], (a,))


@pytest.mark.parametrize("call", [
    lambda k: k.linalg.det(k.ones(2, 3)),
    lambda k: k.linalg.det(k.ones(2, 2, dtype=k.int32)),
    lambda k: k.linalg.slogdet(k.ones(2, 2, dtype=k.int32)),
    lambda k: k.linalg.slogdet(k.ones(3)),
    lambda k: k.det(k.ones(4)),
])
def test_det_errors_match_torch(call):
    with pytest.raises(RuntimeError) as t:
        call(torch)
    with pytest.raises(RuntimeError) as k:
        call(kiln)
    assert str(k.value) == str(t.value)


# ----------------------------------------------------------------------------- cholesky
def spd(shape, dtype, seed=0):
    a = np.random.default_rng(seed).standard_normal(shape)
    n = shape[-1]
    return (a @ np.swapaxes(a, -1, -2) + n * np.eye(n)).astype(dtype)


def sym_grad(fn):
    """fn of (A + A^T) / 2: finite differences then see the symmetric gradient torch returns for
    ops that read one triangle (cholesky, eigh)."""
    return lambda x, *rest: fn((x + x.transpose(-2, -1)) / 2, *rest)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape", [(3, 3), (1, 1), (2, 4, 4), (2, 1, 3, 3), (0, 2, 2)], ids=str)
@pytest.mark.parametrize("upper", [False, True])
def test_cholesky_values_and_gradients(shape, dtype, upper):
    a = spd(shape, dtype)
    grads_close(lambda x: kiln.linalg.cholesky(x, upper=upper), lambda x: torch.linalg.cholesky(x, upper=upper),
                [a], dtype)
    grads_close(lambda x: kiln.cholesky(x, upper), lambda x: torch.cholesky(x, upper), [a], dtype)


def test_cholesky_reads_the_lower_triangle_only():
    a = spd((3, 3), "float64")
    junk = a + np.triu(np.full((3, 3), 100.0), 1)
    close(kiln.linalg.cholesky(kiln.from_numpy(junk)), torch.linalg.cholesky(torch.from_numpy(junk)), "float64")


@pytest.mark.parametrize("upper", [False, True])
def test_cholesky_solve_matches_torch(upper):
    a, b = spd((2, 3, 3), "float64"), rand((2, 3, 2), "float64")
    factor = np.linalg.cholesky(a)
    factor = np.swapaxes(factor, -1, -2) if upper else factor
    grads_close(lambda x, f: kiln.cholesky_solve(x, f, upper), lambda x, f: torch.cholesky_solve(x, f, upper),
                [b, factor], "float64")


@pytest.mark.parametrize("upper", [False, True])
def test_cholesky_solve_reads_one_triangle_of_the_factor(upper):
    """torch reads the factor's triangle only (potrs): same values and B gradient. (torch's factor
    gradient multiplies by the whole, non-triangular matrix; kiln's differentiates what is read.)"""
    b, factor = rand((3, 2), "float64"), well_conditioned((3, 3), "float64")
    grads_close(lambda x: kiln.cholesky_solve(x, kiln.from_numpy(factor), upper),
                lambda x: torch.cholesky_solve(x, torch.from_numpy(factor), upper), [b], "float64")


def test_cholesky_gradcheck_and_gradgradcheck():
    a = kiln.from_numpy(spd((2, 3, 3), "float64")).requires_grad_()
    for upper in (False, True):
        fn = sym_grad(lambda x: kiln.linalg.cholesky(x, upper=upper))
        assert gradcheck(fn, (a,))
        assert gradgradcheck(fn, (a,))


def test_cholesky_not_positive_definite_raises_linalg_error():
    for shape, a in [((2, 2), -np.eye(2)), ((3, 2, 2), np.stack([np.eye(2), np.eye(2), np.diag([1.0, -1.0])]))]:
        with pytest.raises(torch.linalg.LinAlgError) as t:
            torch.linalg.cholesky(torch.from_numpy(a))
        with pytest.raises(kiln.linalg.LinAlgError) as k:
            kiln.linalg.cholesky(kiln.from_numpy(a))
        assert str(k.value) == str(t.value)


# ----------------------------------------------------------------------------- eigh
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape", [(3, 3), (1, 1), (2, 4, 4), (0, 2, 2)], ids=str)
@pytest.mark.parametrize("UPLO", ["L", "U"])
def test_eigh_values_and_gradients(shape, dtype, UPLO):
    a = rand(shape, dtype, seed=3)  # not symmetric: only the UPLO triangle counts
    # Eigenvectors are unique up to sign: the loss sees them through V * V (sign-free).
    grads_close(lambda x: (lambda r: (r.eigenvalues, r.eigenvectors * r.eigenvectors))(kiln.linalg.eigh(x, UPLO)),
                lambda x: (lambda r: (r.eigenvalues, r.eigenvectors * r.eigenvectors))(torch.linalg.eigh(x, UPLO)),
                [a], dtype)
    grads_close(lambda x: kiln.linalg.eigvalsh(x, UPLO), lambda x: torch.linalg.eigvalsh(x, UPLO), [a], dtype)


def test_eigh_named_tuple_and_gradcheck():
    out = kiln.linalg.eigh(kiln.from_numpy(spd((3, 3), "float64")))
    assert type(out).__name__ == "linalg_eigh" and out.eigenvalues.shape == (3,)
    a = kiln.from_numpy(spd((2, 3, 3), "float64")).requires_grad_()
    assert gradcheck(sym_grad(kiln.linalg.eigh), (a,))
    assert gradgradcheck(sym_grad(kiln.linalg.eigh), (a,))
    assert gradcheck(sym_grad(lambda x: kiln.linalg.eigh(x)[1]), (a,))  # eigenvectors alone
    assert gradcheck(sym_grad(kiln.linalg.eigvalsh), (a,))


# ----------------------------------------------------------------------------- svd
SVD_SHAPES = [(3, 3), (4, 3), (3, 4), (2, 3, 2), (2, 1, 2, 4), (0, 3, 2), (3, 0)]


def sign_free_svd(lib, full_matrices):
    """U, S, Vh with U's columns and Vh's rows multiplied by each other's sign pattern (U u_i v_i^T is
    sign-free): the loss sees U * U, S and Vh * Vh."""
    def fn(x):
        U, S, Vh = lib.linalg.svd(x, full_matrices=full_matrices)
        return U * U, S, Vh * Vh
    return fn


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape", SVD_SHAPES, ids=str)
@pytest.mark.parametrize("full_matrices", [True, False])
def test_svd_values_and_gradients(shape, dtype, full_matrices):
    a = rand(shape, dtype, seed=3)
    if full_matrices and shape[-1] != shape[-2]:
        # torch drops the gradient of the undetermined extra columns: compare values, and S's gradient
        (k,), (t,) = pair(a)
        for x, y in zip(sign_free_svd(kiln, True)(k), sign_free_svd(torch, True)(t)):
            close(x, y, dtype)
        grads_close(lambda x: kiln.linalg.svd(x)[1], lambda x: torch.linalg.svd(x)[1], [a], dtype)
        return
    grads_close(sign_free_svd(kiln, full_matrices), sign_free_svd(torch, full_matrices), [a], dtype)
    grads_close(kiln.linalg.svdvals, torch.linalg.svdvals, [a], dtype)


@pytest.mark.parametrize("some", [True, False])
@pytest.mark.parametrize("compute_uv", [True, False])
def test_legacy_svd_returns_v(some, compute_uv):
    a = rand((2, 4, 3), "float64", seed=3)
    (k,), (t,) = pair(a)
    ku, ks, kv = kiln.svd(k, some=some, compute_uv=compute_uv)
    tu, ts, tv = torch.svd(t, some=some, compute_uv=compute_uv)
    close(ks, ts, "float64")
    close(ku.abs(), tu.abs(), "float64")
    close(kv.abs(), tv.abs(), "float64")
    close(k.svd()[2].abs(), t.svd()[2].abs(), "float64")


def test_svd_gradcheck_and_gradgradcheck():
    for shape in [(3, 3), (4, 3), (2, 4)]:
        a = kiln.from_numpy(rand(shape, "float64", seed=3)).requires_grad_()
        fn = lambda x: kiln.linalg.svd(x, full_matrices=False)  # noqa: E731
        assert gradcheck(fn, (a,))
        assert gradgradcheck(fn, (a,))
        assert gradcheck(kiln.linalg.svdvals, (a,))


# ----------------------------------------------------------------------------- qr
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape", [(3, 3), (4, 3), (3, 4), (2, 3, 2), (0, 3, 3), (3, 0)], ids=str)
@pytest.mark.parametrize("mode", ["reduced", "complete", "r"])
def test_qr_values_and_gradients(shape, dtype, mode):
    a = rand(shape, dtype, seed=3)
    differentiable = mode == "reduced" or (mode == "complete" and shape[-2] <= shape[-1])
    if not differentiable:
        (k,), (t,) = pair(a)
        for x, y in zip(kiln.linalg.qr(k, mode), torch.linalg.qr(t, mode)):
            close(x, y, dtype)
        return
    grads_close(lambda x: tuple(kiln.linalg.qr(x, mode)), lambda x: tuple(torch.linalg.qr(x, mode)), [a], dtype)


def test_qr_legacy_and_errors():
    a = rand((4, 3), "float64", seed=3)
    (k,), (t,) = pair(a)
    for some in (True, False):
        for x, y in zip(kiln.qr(k, some), torch.qr(t, some)):
            close(x, y, "float64")
    out = kiln.linalg.qr(k)
    assert type(out).__name__ == "linalg_qr" and out.Q.shape == (4, 3) and out.R.shape == (3, 3)
    for mode, match in [("r", "mode='r'"), ("complete", "mode='complete' and nrows > ncols")]:
        x = kiln.from_numpy(a).requires_grad_()
        Q, R = kiln.linalg.qr(x, mode)
        with pytest.raises(RuntimeError, match=match):
            R.sum().backward()
    with pytest.raises(RuntimeError, match="qr received unrecognized mode 'x'"):
        kiln.linalg.qr(k, "x")


def test_qr_gradcheck_and_gradgradcheck():
    for shape in [(3, 3), (4, 3), (3, 4)]:
        a = kiln.from_numpy(rand(shape, "float64", seed=3)).requires_grad_()
        assert gradcheck(kiln.linalg.qr, (a,))
        assert gradgradcheck(kiln.linalg.qr, (a,))


@pytest.mark.parametrize("call", [
    lambda k: k.linalg.cholesky(k.ones(2, 3)),
    lambda k: k.linalg.cholesky(k.ones(2, 2, dtype=k.int64)),
    lambda k: k.linalg.eigh(k.ones(2, 3)),
    lambda k: k.linalg.eigh(k.ones(2, 2), UPLO="X"),
    lambda k: k.linalg.eigvalsh(k.ones(3)),
    lambda k: k.linalg.svd(k.ones(2, dtype=k.float64)),
    lambda k: k.linalg.svdvals(k.ones(2, 2, dtype=k.int32)),
    lambda k: k.linalg.qr(k.ones(2, 2), mode="x"),
    lambda k: k.linalg.qr(k.ones(3)),
])
def test_factorization_errors_match_torch(call):
    with pytest.raises(RuntimeError) as t:
        call(torch)
    with pytest.raises(RuntimeError) as k:
        call(kiln)
    assert str(k.value) == str(t.value)


# ----------------------------------------------------------------------------- norms, exports
NORM_ORDS = ["fro", "nuc", 2, -2, 1, -1, float("inf"), -float("inf")]


@pytest.mark.parametrize("ord", NORM_ORDS, ids=str)
@pytest.mark.parametrize("dim", [(-2, -1), (0, 2), (2, 1)], ids=str)
@pytest.mark.parametrize("keepdim", [False, True])
def test_matrix_norm_matches_torch(ord, dim, keepdim):
    a = rand((2, 3, 4), "float64", seed=4)
    grads_close(lambda x: kiln.linalg.matrix_norm(x, ord, dim, keepdim),
                lambda x: torch.linalg.matrix_norm(x, ord, dim, keepdim), [a], "float64")


@pytest.mark.parametrize("ord", [2, 1, 3.5, float("inf"), -float("inf"), 0], ids=str)
@pytest.mark.parametrize("dim", [None, 1, (0, 2)], ids=str)
def test_vector_norm_matches_torch(ord, dim):
    a = rand((2, 3, 4), "float64", seed=4)
    if ord == 0:  # no gradient to compare
        close(kiln.linalg.vector_norm(kiln.from_numpy(a), ord, dim), torch.linalg.vector_norm(torch.from_numpy(a), ord, dim),
              "float64")
        return
    grads_close(lambda x: kiln.linalg.vector_norm(x, ord, dim), lambda x: torch.linalg.vector_norm(x, ord, dim),
                [a], "float64")


@pytest.mark.parametrize("args", [dict(), dict(ord=1), dict(ord="nuc"), dict(dim=1), dict(dim=(0, 1), ord=-1),
                                  dict(ord=float("inf"), keepdim=True)], ids=str)
def test_linalg_norm_matches_torch(args):
    for shape in [(3, 4), (4,)] if "nuc" not in str(args) and "dim" not in str(args) else [(3, 4)]:
        a = rand(shape, "float64", seed=4)
        grads_close(lambda x: kiln.linalg.norm(x, **args), lambda x: torch.linalg.norm(x, **args), [a], "float64")
    with pytest.raises(RuntimeError, match="input must be 1D or 2D"):
        kiln.linalg.norm(kiln.ones(2, 2, 2), ord=2)


def test_linalg_exports_match_torch():
    names = ["solve", "inv", "det", "slogdet", "cholesky", "qr", "eigh", "eigvalsh", "svd", "svdvals", "norm",
             "vector_norm", "matrix_norm", "LinAlgError", "matrix_exp", "householder_product", "cross", "matrix_power",
             "multi_dot", "solve_triangular", "pinv", "matrix_rank", "cond", "diagonal", "vecdot"]
    for n in names:
        assert hasattr(torch.linalg, n) and hasattr(kiln.linalg, n), n
    a = rand((3, 3), "float64", seed=4)
    close(kiln.linalg.matrix_exp(kiln.from_numpy(a)), torch.linalg.matrix_exp(torch.from_numpy(a)), "float64")


@pytest.mark.parametrize("name", ["solve", "inv", "det", "slogdet", "cholesky", "eigh", "svd", "qr"])
@pytest.mark.parametrize("bad", [float("nan"), float("inf")], ids=["nan", "inf"])
def test_non_finite_inputs_behave_as_torch(name, bad):
    """Same values (NaN where torch has NaN) or the same error as torch."""
    a = np.array([[[1.0, bad], [bad, 2.0]], [[2.0, 0.0], [0.0, 3.0]]])
    if name == "svd" and bad == float("inf"):
        # LAPACK's gesdd never returns on some infinite inputs (torch.linalg.svd hangs there): kiln
        # gives NaNs for that matrix, as torch.linalg.svdvals does.
        a = np.array([[[np.inf, 0.3, 1.0, 2.0], [1.0, 2.0, 3.0, 4.0], [0.5, 1.0, 0.0, 1.0], [2.0, 0.0, 1.0, 1.0]],
                      np.eye(4)])
        U, S, Vh = kiln.linalg.svd(kiln.from_numpy(a))
        np.testing.assert_array_equal(S.numpy(), torch.linalg.svdvals(torch.from_numpy(a)).numpy())
        assert np.isnan(U.numpy()[0]).all() and np.isnan(Vh.numpy()[0]).all()
        np.testing.assert_array_equal(np.abs(U.numpy()[1]), np.eye(4))
        return
    results = []
    for lib in (kiln, torch):
        A = lib.from_numpy(a.copy())
        fn = getattr(lib.linalg, name)
        try:
            out = fn(A, lib.ones(2, 2, dtype=lib.float64)) if name == "solve" else fn(A)
            out = out if isinstance(out, tuple) else (out,)
            results.append([o.numpy() for o in out])
        except RuntimeError as e:
            results.append((type(e).__name__, str(e)))
    k, t = results
    if isinstance(t, tuple) or isinstance(k, tuple):
        assert k == t
        return
    for x, y in zip(k, t):
        np.testing.assert_allclose(x, y, equal_nan=True)


# ----------------------------------------------------------------------------- Python compositions
@pytest.mark.parametrize("n", [0, 1, 2, 3, 5, -1, -3])
def test_matrix_power_matches_torch(n):
    a = well_conditioned((2, 3, 3), "float64") / 3
    grads_close(lambda x: kiln.linalg.matrix_power(x, n), lambda x: torch.linalg.matrix_power(x, n), [a], "float64")


@pytest.mark.parametrize("shapes", [[(3,), (3, 4), (4,)], [(2, 3), (3, 4), (4, 5)], [(3,), (3,)],
                                    [(2, 3), (3,)]], ids=str)
def test_multi_dot_matches_torch(shapes):
    arrays = [rand(s, "float64", seed=i) for i, s in enumerate(shapes)]
    grads_close(lambda *xs: kiln.linalg.multi_dot(list(xs)), lambda *xs: torch.linalg.multi_dot(list(xs)), arrays,
                "float64")


@pytest.mark.parametrize("upper", [False, True])
@pytest.mark.parametrize("left", [True, False])
@pytest.mark.parametrize("unitriangular", [False, True])
@pytest.mark.parametrize("shapes", [((3, 3), (3, 3)), ((2, 3, 3), (3, 3)), ((3, 3), (2, 3, 3))], ids=str)
def test_solve_triangular_matches_torch(upper, left, unitriangular, shapes):
    a, b = well_conditioned(shapes[0], "float64"), rand(shapes[1], "float64")
    grads_close(lambda x, y: kiln.linalg.solve_triangular(x, y, upper=upper, left=left, unitriangular=unitriangular),
                lambda x, y: torch.linalg.solve_triangular(x, y, upper=upper, left=left, unitriangular=unitriangular),
                [a, b], "float64")


@pytest.mark.parametrize("shape", [(3, 3), (4, 3), (2, 3, 5)], ids=str)
@pytest.mark.parametrize("kwargs", [{}, {"rtol": 0.3}, {"atol": 1.0}], ids=str)
def test_pinv_and_matrix_rank_match_torch(shape, kwargs):
    a = rand(shape, "float64", seed=3)
    grads_close(lambda x: kiln.linalg.pinv(x, **kwargs), lambda x: torch.linalg.pinv(x, **kwargs), [a], "float64")
    close(kiln.linalg.matrix_rank(kiln.from_numpy(a), **kwargs), torch.linalg.matrix_rank(torch.from_numpy(a), **kwargs),
          "float64")
    low_rank = rand(shape[:-1] + (1,), "float64") @ rand((1, shape[-1]), "float64", seed=2)
    close(kiln.linalg.matrix_rank(kiln.from_numpy(low_rank)), torch.linalg.matrix_rank(torch.from_numpy(low_rank)),
          "float64")
    s = spd(shape[:-2] + (3, 3), "float64")
    grads_close(lambda x: kiln.linalg.pinv(x, hermitian=True, **kwargs),
                lambda x: torch.linalg.pinv(x, hermitian=True, **kwargs), [s], "float64")


def test_pinv_gradcheck_and_gradgradcheck():
    a = kiln.from_numpy(rand((4, 3), "float64", seed=3)).requires_grad_()
    assert gradcheck(kiln.linalg.pinv, (a,))
    assert gradgradcheck(kiln.linalg.pinv, (a,))
    assert gradcheck(lambda x: kiln.linalg.pinv(x.transpose(0, 1)), (a,))


@pytest.mark.parametrize("p", [None, 2, -2, 1, -1, float("inf"), "fro", "nuc"], ids=str)
def test_cond_matches_torch(p):
    a = well_conditioned((2, 3, 3), "float64")
    if p not in (None, 2, -2):  # torch 1.13's backward of these fails (an in-place op on inv's output)
        close(kiln.linalg.cond(kiln.from_numpy(a), p), torch.linalg.cond(torch.from_numpy(a), p), "float64")
        return
    grads_close(lambda x: kiln.linalg.cond(x, p), lambda x: torch.linalg.cond(x, p), [a], "float64")


def test_diagonal_and_vecdot_match_torch():
    a, b = rand((2, 3, 4), "float64"), rand((2, 3, 4), "float64", seed=2)
    grads_close(lambda x: kiln.linalg.diagonal(x, offset=1), lambda x: torch.linalg.diagonal(x, offset=1), [a],
                "float64")
    grads_close(lambda x, y: kiln.linalg.vecdot(x, y, dim=1), lambda x, y: torch.linalg.vecdot(x, y, dim=1), [a, b],
                "float64")
