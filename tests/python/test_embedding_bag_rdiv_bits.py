"""EmbeddingBag's sum/mean forward and weight gradient and `number / tensor` give torch 1.13's bits:
torch adds a bag's rows one after another (axpy into the bag's output, then a division by the bag's
size); its weight gradient visits the indices in torch.sort's order and adds each bag gradient,
scaled by (float)(1.0 / bag_size), by a fused multiply-add; and its
Tensor.__rdiv__ is self.reciprocal() * other, two roundings (clip_grad_norm_'s coefficient
max_norm / (total_norm + 1e-6) is one). The text classification tutorial's logits and clip
coefficients were an ulp off."""
import numpy as np
import pytest
import torch

import kiln


@pytest.mark.parametrize("mode", ["sum", "mean"])
def test_embedding_bag_offsets_forward_bits(mode):
    rng = np.random.RandomState(0)
    text = rng.randint(0, 500, size=400)
    lens = rng.randint(4, 14, size=40)
    lens[-1] = 400 - lens[:-1].sum()
    offsets = np.concatenate([[0], np.cumsum(lens[:-1])])
    w = rng.uniform(-0.5, 0.5, size=(500, 64)).astype(np.float32)
    out = []
    for lib in (torch, kiln):
        bag = lib.nn.EmbeddingBag(500, 64, mode=mode)
        with torch.no_grad(), kiln.no_grad():
            bag.weight.copy_(lib.tensor(w))
        out.append(bag(lib.tensor(text), lib.tensor(offsets)).detach().numpy())
    np.testing.assert_array_equal(out[1], out[0])


@pytest.mark.parametrize("mode", ["sum", "mean"])
def test_embedding_bag_weight_gradient_bits(mode):
    rng = np.random.RandomState(0)
    text = rng.randint(0, 50, size=300)  # many repeated indices
    lens = rng.randint(1, 14, size=30)
    lens[-1] = 300 - lens[:-1].sum()
    offsets = np.concatenate([[0], np.cumsum(lens[:-1])])
    w = rng.uniform(-0.5, 0.5, size=(50, 16)).astype(np.float32)
    g = rng.randn(30, 16).astype(np.float32)
    out = []
    for lib in (torch, kiln):
        bag = lib.nn.EmbeddingBag(50, 16, mode=mode)
        with torch.no_grad(), kiln.no_grad():
            bag.weight.copy_(lib.tensor(w))
        y = bag(lib.tensor(text), lib.tensor(offsets))
        y.backward(lib.tensor(g))
        out.append((y.detach().numpy(), bag.weight.grad.numpy()))
    np.testing.assert_array_equal(out[1][0], out[0][0])
    np.testing.assert_array_equal(out[1][1], out[0][1])


def test_embedding_bag_2d_input_and_gradient_flows():
    rng = np.random.RandomState(1)
    idx = rng.randint(0, 20, size=(6, 5))
    w = rng.randn(20, 8).astype(np.float32)
    out = []
    for lib in (torch, kiln):
        weight = lib.tensor(w, requires_grad=True)
        y = lib.nn.functional.embedding_bag(lib.tensor(idx), weight, mode="mean")
        y.pow(2).sum().backward()
        out.append((y.detach().numpy(), weight.grad.numpy()))
    np.testing.assert_array_equal(out[1][0], out[0][0])
    np.testing.assert_allclose(out[1][1], out[0][1], rtol=1e-6, atol=1e-7)


def test_number_divided_by_tensor_bits():
    rng = np.random.RandomState(3)
    x = (rng.rand(1000) * 10 + 1e-3).astype(np.float32)
    for c in (0.5, 0.1, 7, 2.5e-3):
        want = (c / torch.tensor(x)).numpy()
        np.testing.assert_array_equal((c / kiln.tensor(x)).numpy(), want)
    np.testing.assert_array_equal((1 / kiln.tensor([3, 0, -2])).numpy(), (1 / torch.tensor([3, 0, -2])).numpy())
    t, k = torch.tensor(x[:5], requires_grad=True), kiln.tensor(x[:5], requires_grad=True)
    (0.1 / t).sum().backward()
    (0.1 / k).sum().backward()
    np.testing.assert_array_equal(k.grad.numpy(), t.grad.numpy())
