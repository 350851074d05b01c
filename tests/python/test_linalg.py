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
