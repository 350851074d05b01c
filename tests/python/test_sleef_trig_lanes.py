"""sin, cos and tan of float32 give torch's bits where a vector mixes small and large arguments.
Sleef's u10 functions switch the whole vector to their slower argument reduction when any lane is
beyond 125, which rounds the other lanes differently; torch's AVX2 kernels decide it per 8 lanes,
so kiln's AVX3 target computes these as two 8-lane halves. (The positional-encoding table of the
transformer tutorials, sin(position * div_term) up to 5000, was 1 ulp off in 199 places.)"""
import math

import numpy as np
import pytest
import torch

import kiln

TORCH_LANES = [t for t in kiln._C._simd_targets() if t in ("AVX3", "AVX3_DL", "AVX2")]


@pytest.fixture(params=TORCH_LANES)
def on_target(request):
    kiln._C._simd_use_target(request.param)
    yield request.param
    kiln._C._simd_use_target(None)


def test_this_cpu_has_a_target_with_torchs_lanes():
    assert TORCH_LANES, kiln._C._simd_targets()


@pytest.mark.parametrize("op", ["sin", "cos", "tan"])
def test_mixed_magnitudes(op, on_target):
    rng = np.random.RandomState(0)
    for n in (100003, 16, 24, 13):
        x = (rng.rand(n) * 10).astype(np.float32)
        x[rng.rand(n) < 0.1] *= 1000
        x[0] = 500.0
        np.testing.assert_array_equal(getattr(kiln, op)(kiln.tensor(x)).numpy(),
                                      getattr(torch, op)(torch.tensor(x)).numpy())


def test_positional_encoding_table(on_target):
    d_model, max_len = 32, 5000
    out = []
    for lib in (torch, kiln):
        position = lib.arange(max_len).unsqueeze(1)
        div_term = lib.exp(lib.arange(0, d_model, 2) * (-math.log(10000.0) / d_model))
        pe = lib.zeros(max_len, 1, d_model)
        pe[:, 0, 0::2] = lib.sin(position * div_term)
        pe[:, 0, 1::2] = lib.cos(position * div_term)
        out.append(pe.numpy())
    np.testing.assert_array_equal(out[1], out[0])
