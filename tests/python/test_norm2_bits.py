"""The 2-norm's bits and gradient against torch 1.13 (float32): norm(x) of a whole tensor and
norm(x, 2, dim=-1) are torch's vectorized kernel (_norm2, _norm2_lastdim), their gradient torch's
norm_backward, grad * (x / norm) with 0 where the norm is 0; F.normalize, pairwise_distance and
cosine_similarity (torch's formula op for op) follow."""
import numpy as np
import pytest
import torch

import kiln


def run(fn, arrays, threads=1):
    out = []
    for lib in (torch, kiln):
        old = lib.get_num_threads()
        lib.set_num_threads(threads)
        try:
            ts = [lib.from_numpy(a.copy()).requires_grad_() for a in arrays]
            y = fn(lib, *ts)
            g = np.linspace(-1, 1, max(y.numel(), 1), dtype=np.float32).reshape(tuple(y.shape))
            y.backward(lib.from_numpy(g))
            out.append([y.detach().numpy()] + [t.grad.numpy() for t in ts])
        finally:
            lib.set_num_threads(old)
    return out


def rand(*shape, seed=0):
    return np.random.default_rng(seed + sum(shape)).standard_normal(shape).astype(np.float32)


CASES = {
    "norm": (lambda L, a: a.norm(), [rand(37, 11)]),
    "norm dim=1": (lambda L, a: a.norm(dim=1), [rand(32, 64)]),
    "norm dim=-1 keepdim": (lambda L, a: a.norm(2, -1, keepdim=True), [rand(4, 5, 24)]),
    "linalg.vector_norm dim=-1": (lambda L, a: L.linalg.vector_norm(a, dim=-1), [rand(8, 40)]),
    "normalize": (lambda L, a: L.nn.functional.normalize(a, dim=1), [rand(32, 64)]),
    "normalize 3-D last": (lambda L, a: L.nn.functional.normalize(a, dim=-1), [rand(2, 6, 16)]),
    "pairwise_distance": (lambda L, a, b: L.nn.functional.pairwise_distance(a, b), [rand(32, 64), rand(32, 64, seed=1)]),
    "cosine_similarity": (lambda L, a, b: L.nn.functional.cosine_similarity(a, b), [rand(32, 64), rand(32, 64, seed=1)]),
    "cosine_similarity dim=0": (lambda L, a, b: L.nn.functional.cosine_similarity(a, b, dim=0),
                                [rand(16, 8), rand(16, 8, seed=1)]),
}


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("name", list(CASES))
def test_value_and_gradient_are_torchs_bits(name, threads):
    fn, arrays = CASES[name]
    t, k = run(fn, arrays, threads)
    for a, b in zip(t, k):
        assert np.array_equal(a, b), (name, np.abs(a - b).max())


def test_zero_rows_have_a_zero_gradient_as_torch():
    x = np.zeros((3, 8), np.float32)
    x[1] = 1.0
    t, k = run(lambda L, a: a.norm(dim=1), [x])
    assert np.array_equal(t[1], k[1]) and not np.isnan(k[1]).any()
