"""The fma(a, b, c) intrinsic and `_fma`, its formula op: a * b + c rounded once, against exact
rational arithmetic, on every SIMD target this CPU runs (SSE4 has no FMA instruction: lane by lane
there), in strided layouts (the scalar functor), through the interpreter, and under autograd. Then
the routing: kiln's add/sub with alpha round as torch's on this CPU and under
ATEN_CPU_CAPABILITY=default, where torch does not fuse."""
import os
import subprocess
import sys
from fractions import Fraction

import numpy as np
import pytest
import torch

import kiln


def exact_fma(a, b, c):
    """a * b + c rounded once to a's dtype (ties to even), from the exact rational value."""
    out = np.empty_like(a)
    dt = a.dtype.type
    for i, (x, y, z) in enumerate(zip(a.ravel(), b.ravel(), c.ravel())):
        v = Fraction(float(x)) * Fraction(float(y)) + Fraction(float(z))
        r = dt(float(v))  # float(Fraction) rounds correctly; a float32 may be off by the second rounding
        best = min((r, np.nextafter(r, dt(np.inf)), np.nextafter(r, dt(-np.inf))),
                   key=lambda cand: (abs(Fraction(float(cand)) - v), int(np.frombuffer(cand.tobytes(), dtype=a.dtype.str.replace("f", "u"))[0]) & 1))
        out.ravel()[i] = best
    return out


def cancelling_operands(dtype, n=257, seed=0):
    """a, b, c with c close to -a*b: the sum is the product's rounding error, which only a fused
    multiply-add keeps (two roundings give 0 or a multiple of c's last bit)."""
    rng = np.random.default_rng(seed)
    a = (rng.standard_normal(n) * 10.0 ** rng.integers(-3, 4, n)).astype(dtype)
    b = (rng.standard_normal(n) * 10.0 ** rng.integers(-3, 4, n)).astype(dtype)
    c = (-(a.astype(np.float64) * b.astype(np.float64))).astype(dtype)
    c[::3] = rng.standard_normal(len(c[::3])).astype(dtype)  # and some ordinary sums
    return a, b, c


def bits(x):
    return x.view(np.uint32 if x.dtype == np.float32 else np.uint64)


@pytest.fixture(params=kiln._C._simd_targets())
def on_target(request):
    kiln._C._simd_use_target(request.param)
    yield request.param
    kiln._C._simd_use_target(None)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_fma_rounds_once_on_every_target(on_target, dtype):
    a, b, c = cancelling_operands(dtype)
    want = exact_fma(a, b, c)
    got = kiln._fma(kiln.from_numpy(c), kiln.from_numpy(a), kiln.from_numpy(b)).numpy()
    assert np.array_equal(bits(got), bits(want)), on_target
    # the products' rounding errors survive: two roundings would give zeros where c = -a*b
    assert np.count_nonzero(want[1::3]) > 0.9 * len(want[1::3])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_fma_strided_and_broadcast_and_interpreted(dtype):
    a, b, c = cancelling_operands(dtype, n=240, seed=1)
    want = exact_fma(a, b, c)
    ka, kb, kc = (kiln.from_numpy(x) for x in (a, b, c))
    # transposed views: the scalar functor's loop
    t = lambda x: x.reshape(12, 20).t()  # noqa: E731
    got = kiln._fma(t(kc), t(ka), t(kb)).t().reshape(-1).numpy()
    assert np.array_equal(bits(got), bits(want))
    # a one-element tensor2 broadcast (what add with alpha passes)
    s = b[:1]
    want_s = exact_fma(a, np.repeat(s, len(a)), c)
    got_s = kiln._fma(kc, ka, kiln.from_numpy(s.reshape(()).copy())).numpy()
    assert np.array_equal(bits(got_s), bits(want_s))
    # the interpreter over the formula table
    got_i = kiln._C._evaluate_formula("_fma", [kc, ka, kb], []).numpy()
    assert np.array_equal(bits(got_i), bits(want))


def test_fma_special_values_follow_ieee():
    inf, nan = float("inf"), float("nan")
    a = kiln.tensor([inf, 0.0, inf, 1.0, nan, 3.0e38])
    b = kiln.tensor([0.0, inf, 1.0, 1.0, 1.0, 10.0])
    c = kiln.tensor([1.0, 1.0, -inf, nan, 0.0, -inf])
    got = kiln._fma(c, a, b).tolist()
    assert np.isnan(got[0]) and np.isnan(got[1]) and np.isnan(got[2]) and np.isnan(got[3]) and np.isnan(got[4])
    assert got[5] == -inf  # the product overflows float32, the sum does not come back from -inf


def test_fma_half_precision_computes_in_float32():
    a = torch.randn(64, dtype=torch.float16)
    b = torch.randn(64, dtype=torch.float16)
    c = torch.randn(64, dtype=torch.float16)
    want = exact_fma(a.float().numpy(), b.float().numpy(), c.float().numpy())
    got = kiln._fma(kiln.from_numpy(c.numpy()), kiln.from_numpy(a.numpy()), kiln.from_numpy(b.numpy()))
    assert got.dtype == kiln.float16
    assert np.array_equal(got.numpy(), want.astype(np.float16))


def test_fma_gradients_match_torch_addcmul():
    ka = kiln.randn(3, 4, requires_grad=True)
    kb = kiln.randn(4, requires_grad=True)   # broadcast: its gradient is summed
    kc = kiln.randn(3, 1, requires_grad=True)
    (kiln._fma(kc, ka, kb) * kiln.arange(12.0).reshape(3, 4)).sum().backward()
    ta, tb, tc = (torch.tensor(x.detach().numpy(), requires_grad=True) for x in (ka, kb, kc))
    (torch.addcmul(tc, ta, tb) * torch.arange(12.0).reshape(3, 4)).sum().backward()
    for k, t in ((ka, ta), (kb, tb), (kc, tc)):
        np.testing.assert_allclose(k.grad.numpy(), t.grad.numpy(), rtol=1e-6, atol=1e-6)


ROUTING = r"""
import numpy as np, torch, kiln
rng = np.random.default_rng(3)
p = rng.standard_normal(4099).astype(np.float32)
g = rng.standard_normal(4099).astype(np.float32)
c = rng.standard_normal(4099).astype(np.float32)
out = []
for lib in (torch, kiln):
    t = lib.from_numpy(p.copy())
    t.add_(lib.from_numpy(g), alpha=-0.0123)
    u = lib.from_numpy(p.copy()).sub(lib.from_numpy(g), alpha=0.37)
    w = lib.from_numpy(c.copy()).addcmul(lib.from_numpy(p), lib.from_numpy(g), value=0.5)
    out.append([t.numpy().view(np.uint32), u.numpy().view(np.uint32), w.numpy().view(np.uint32)])
print(all(np.array_equal(x, y) for x, y in zip(*out)), kiln._C._torch_kernels_use_fma())
"""


@pytest.mark.parametrize("capability", [None, "default"])
def test_add_with_alpha_rounds_as_torch(capability):
    env = dict(os.environ)
    env.pop("ATEN_CPU_CAPABILITY", None)
    if capability:
        env["ATEN_CPU_CAPABILITY"] = capability
    out = subprocess.run([sys.executable, "-c", ROUTING], env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    same, fused = out.stdout.split()
    assert same == "True"
    if capability == "default":
        assert fused == "False"
