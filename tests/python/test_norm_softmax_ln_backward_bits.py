"""torch 1.13's bits for what a transformer's training step adds after its forward pass:
softmax's and log_softmax's backward (sum(g * o) or sum(g) as vec::map2_reduce_all / reduce_all,
multiply-adds fused, lanes by AVX2's shuffle tree; log_softmax's g - exp(o) * sum fused too), layer_norm's backward (the same reductions, dw/db in per-thread buffers) and the
whole-tensor 2-norm of clip_grad_norm_ (vectors of squares, lanes in order, then the tail).
Before, the transformer tutorial's gradients and clip coefficients were an ulp off, and its losses
parted from torch's after a few steps."""
import numpy as np
import pytest
import torch

import kiln


@pytest.mark.parametrize("fn", ["softmax", "log_softmax"])
def test_softmax_backward_bits(fn):
    rng = np.random.RandomState(0)
    for n in list(range(1, 40)) + [64, 100, 1000]:
        s = (rng.randn(7, n) * 3).astype(np.float32)
        g = rng.randn(7, n).astype(np.float32)
        out = []
        for lib in (torch, kiln):
            x = lib.tensor(s, requires_grad=True)
            getattr(lib, fn)(x, -1).backward(lib.tensor(g))
            out.append(x.grad.numpy())
        np.testing.assert_array_equal(out[1], out[0], err_msg=str(n))


def test_cross_entropy_gradient_bits():
    rng = np.random.RandomState(2)
    logits, labels = rng.randn(40, 4).astype(np.float32), rng.randint(0, 4, size=40)
    out = []
    for lib in (torch, kiln):
        x = lib.tensor(logits, requires_grad=True)
        lib.nn.CrossEntropyLoss()(x, lib.tensor(labels)).backward()
        out.append(x.grad.numpy())
    np.testing.assert_array_equal(out[1], out[0])


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("affine", [True, False])
def test_layer_norm_backward_bits(dtype, affine):
    rng = np.random.RandomState(5)
    for n in list(range(1, 40)) + [64, 100, 257, 1000]:
        x, gy, w, b = rng.randn(5, n) * 2 + 0.5, rng.randn(5, n), rng.randn(n), rng.randn(n)
        outs = []
        for lib in (torch, kiln):
            d = getattr(lib, dtype)
            X = lib.tensor(x, dtype=d, requires_grad=True)
            W = lib.tensor(w, dtype=d, requires_grad=True) if affine else None
            B = lib.tensor(b, dtype=d, requires_grad=True) if affine else None
            lib.nn.functional.layer_norm(X, [n], W, B).backward(lib.tensor(gy, dtype=d))
            outs.append([X.grad.numpy()] + ([W.grad.numpy(), B.grad.numpy()] if affine else []))
        for got, want in zip(outs[1], outs[0]):
            np.testing.assert_array_equal(got, want, err_msg=str(n))


@pytest.mark.parametrize("dtype", ["float32"])  # float64: torch's order is another, not reproduced
def test_whole_tensor_2norm_bits(dtype):
    rng = np.random.RandomState(0)
    # lengths that are multiples of 8 (torch's vectors, no tail): exact
    shapes = [(32,), (1000,), (64, 32), (96, 32), (50, 200), (40000,), (100000,)]
    shapes += [(8 * int(n),) for n in rng.randint(1, 400, size=100)]
    for shape in shapes:
        x = rng.randn(*shape) * rng.uniform(0.01, 3)
        want = torch.norm(torch.tensor(x, dtype=getattr(torch, dtype)))
        assert kiln.norm(kiln.tensor(x, dtype=getattr(kiln, dtype))).item() == want.item(), shape
        assert kiln.linalg.vector_norm(kiln.tensor(x, dtype=getattr(kiln, dtype))).item() == want.item(), shape
    # with a tail, torch's rounding of the last few squares is not reproduced: an ulp at most
    for n in list(range(1, 8)) + [13, 37, 1001]:
        x = (rng.randn(n) * rng.uniform(0.01, 3)).astype(np.float32)
        np.testing.assert_allclose(kiln.norm(kiln.tensor(x)).item(), torch.norm(torch.tensor(x)).item(), rtol=2.5e-7)


def test_norm_with_a_gradient_still_differentiates():
    x = kiln.tensor([3.0, 4.0], requires_grad=True)
    y = kiln.norm(x)
    y.backward()
    assert y.item() == 5.0
    np.testing.assert_allclose(x.grad.numpy(), [0.6, 0.8], rtol=1e-6)


def test_clip_grad_norm_bits():
    rng = np.random.RandomState(1)
    grads = [rng.randn(*s).astype(np.float32) * 0.03 for s in [(96, 32), (96,), (32, 64), (50, 32), (3000,)]]
    for g in grads:
        assert kiln.norm(kiln.tensor(g)).item() == torch.norm(torch.tensor(g)).item()
    out = []
    for lib in (torch, kiln):
        ps = [lib.nn.Parameter(lib.zeros(g.shape)) for g in grads]
        for p, g in zip(ps, grads):
            p.grad = lib.tensor(g)
        total = lib.nn.utils.clip_grad_norm_(ps, 0.5)
        out.append((total.item(), [p.grad.numpy() for p in ps]))
    # every per-gradient norm is exact (lengths multiples of 8), the norm of the 5 norms to an ulp
    np.testing.assert_allclose(out[1][0], out[0][0], rtol=2.5e-7)
    for got, want in zip(out[1][1], out[0][1]):
        np.testing.assert_allclose(got, want, rtol=5e-7)
