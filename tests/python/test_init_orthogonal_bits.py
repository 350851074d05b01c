"""nn.init.orthogonal_ gives torch 1.13's bits: its QR is kiln.linalg.qr (torch's LAPACK calls) in
the tensor's dtype, not NumPy's in float64 (pytorch/examples super_resolution's initial weights)."""
import numpy as np
import pytest
import torch

import kiln


@pytest.mark.parametrize("shape", [(64, 1, 5, 5), (9, 32, 3, 3), (10, 10), (3, 7), (5, 2), (32, 64, 3, 3)])
@pytest.mark.parametrize("gain", [1.0, "relu"])
def test_orthogonal_bits(shape, gain):
    out = []
    for lib in (torch, kiln):
        lib.manual_seed(0)
        w = lib.empty(*shape)
        lib.nn.init.orthogonal_(w, lib.nn.init.calculate_gain(gain) if isinstance(gain, str) else gain)
        out.append(w.numpy())
    np.testing.assert_array_equal(out[1], out[0])
    rows = shape[0]
    m = out[1].reshape(rows, -1).astype(np.float64)
    small = min(m.shape)
    gram = m @ m.T if rows <= m.shape[1] else m.T @ m
    g2 = 2.0 if gain == "relu" else 1.0
    np.testing.assert_allclose(gram, g2 * np.eye(small), atol=1e-5)
