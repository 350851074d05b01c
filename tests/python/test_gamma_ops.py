"""lgamma, digamma and polygamma(1) as formula ops (schema pointwise formulas over the intrinsics of
runtime/kernels/pointwise_math.h), against Debian's torch 1.13 on the same inputs and against SciPy's
float64 gammaln for lgamma's accuracy."""
import numpy as np
import pytest
import scipy.special

import kiln

torch = pytest.importorskip("torch")

SPECIAL = [0.0, -0.0, 1.0, 2.0, -1.0, -2.0, -100.0, 0.5, -0.5, -2.5, 10.0, 1e-30, -1e-30, 1e17, 3e38, -3e38,
           np.inf, -np.inf, np.nan, 1.4616321, 1e-45]


def _inputs(dtype):
    rng = np.random.default_rng(0)
    x = np.concatenate([rng.uniform(-30, 30, 20000), rng.uniform(0, 3, 20000), rng.uniform(-3, 0, 5000),
                        np.exp(rng.uniform(-60, 60, 5000)), SPECIAL])
    with np.errstate(over="ignore"):
        return x.astype(dtype)


def _same_bits(got, want):
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype
    bad = ~((got == want) | (np.isnan(got) & np.isnan(want)))
    assert not bad.any(), f"{bad.sum()} differ, e.g. {got[bad][:3]} vs torch {want[bad][:3]}"


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_digamma_and_trigamma_are_torchs_bits(dtype):
    x = _inputs(dtype)
    _same_bits(kiln.digamma(kiln.from_numpy(x)).numpy(), torch.digamma(torch.from_numpy(x)).numpy())
    _same_bits(kiln.polygamma(1, kiln.from_numpy(x)).numpy(), torch.polygamma(1, torch.from_numpy(x)).numpy())
    _same_bits(kiln.special.psi(kiln.from_numpy(x)).numpy(), torch.special.psi(torch.from_numpy(x)).numpy())


def _ulps(got, ref, dtype):
    ref32 = ref.astype(dtype)
    with np.errstate(invalid="ignore", over="ignore"):
        return np.abs(got.astype(np.float64) - ref) / np.spacing(np.abs(ref32)).astype(np.float64)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_lgamma_is_at_least_as_accurate_as_torch(dtype):
    x = _inputs(dtype)
    ref = scipy.special.gammaln(x.astype(np.float64))
    got = kiln.lgamma(kiln.from_numpy(x)).numpy()
    want = torch.lgamma(torch.from_numpy(x)).numpy()
    finite = np.isfinite(ref) & np.isfinite(want)
    mine, theirs = _ulps(got, ref, dtype)[finite], _ulps(want, ref, dtype)[finite]
    assert mine.max() <= theirs.max()
    if dtype == "float32":  # the double function rounded once; SciPy's float64 value is the reference
        assert mine.max() <= 0.51
    else:  # SciPy's own gammaln is a few float64 ulps off: compare the bulk with torch's
        assert np.percentile(mine, 99) <= 2
    # where the reference is not finite (the poles, +-inf, NaN), torch's values
    _same_bits(got[~finite], want[~finite])


@pytest.mark.parametrize("name", ["lgamma", "digamma"])
@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "int64", "int32", "uint8", "bool"])
def test_other_dtypes_as_torch(name, dtype):
    values = [0.5, 1.5, 3.0, 7.25, 0.0, 1.0, 2.0, 100.0, -1.0, -0.5]
    if dtype in ("uint8", "bool"):
        values = [v for v in values if v >= 0]
    t = torch.tensor(values).to(getattr(torch, dtype))
    k = kiln.tensor(values).to(getattr(kiln, dtype))
    got, want = getattr(kiln, name)(k), getattr(torch, name)(t)
    assert str(got.dtype) == str(want.dtype).replace("torch", "kiln")
    np.testing.assert_array_equal(got.float().numpy(), want.float().numpy())


@pytest.mark.parametrize("name", ["lgamma", "digamma"])
def test_strided_and_broadcast_inputs(name):
    base = np.random.default_rng(1).uniform(0.1, 9, (6, 8)).astype(np.float32)
    k, t = kiln.from_numpy(base), torch.from_numpy(base)
    _same_bits(getattr(k.t(), name)().numpy(), getattr(t.t(), name)().numpy())
    _same_bits(getattr(k[:, ::3], name)().numpy(), getattr(t[:, ::3], name)().numpy())
    _same_bits(getattr(k[0:1].expand(4, 8), name)().numpy(), getattr(t[0:1].expand(4, 8), name)().numpy())
    assert getattr(kiln.zeros(0, 3), name)().shape == (0, 3)


@pytest.mark.parametrize("name", ["lgamma", "digamma"])
def test_inplace_and_out_forms(name):
    x = np.array([0.25, 1.5, 4.0, 11.0], dtype=np.float64)
    k = kiln.from_numpy(x.copy())
    getattr(k, name + "_")()
    _same_bits(k.numpy(), getattr(torch, name)(torch.from_numpy(x)).numpy())
    out = kiln.empty(4, dtype=kiln.float64)
    getattr(kiln, name)(kiln.from_numpy(x), out=out)
    _same_bits(out.numpy(), getattr(torch, name)(torch.from_numpy(x)).numpy())
    with pytest.raises(RuntimeError, match="can't be cast"):
        getattr(kiln.ones(2, dtype=kiln.int64), name + "_")()
    with pytest.raises(TypeError):
        getattr(kiln, name)([1.0, 2.0])


def test_gradients_as_torch():
    x = np.array([0.3, 1.0, 2.5, 7.0, 15.0, -0.5, -3.7], dtype=np.float64)
    k = kiln.tensor(x, requires_grad=True)
    t = torch.tensor(x, requires_grad=True)
    (gk,) = kiln.autograd.grad(kiln.lgamma(k).sum(), k, create_graph=True)
    (gt,) = torch.autograd.grad(torch.lgamma(t).sum(), t, create_graph=True)
    _same_bits(gk.detach().numpy(), gt.detach().numpy())  # digamma
    (hk,) = kiln.autograd.grad(gk.sum(), k)
    (ht,) = torch.autograd.grad(gt.sum(), t)
    _same_bits(hk.numpy(), ht.numpy())  # trigamma
    k2 = kiln.tensor(x, requires_grad=True)
    t2 = torch.tensor(x, requires_grad=True)
    kiln.digamma(k2).sum().backward()
    torch.digamma(t2).sum().backward()
    _same_bits(k2.grad.numpy(), t2.grad.numpy())
    # polygamma(1)'s derivative is polygamma(2) (Python, float64 then rounded)
    k3 = kiln.tensor(x, requires_grad=True)
    t3 = torch.tensor(x, requires_grad=True)
    kiln.polygamma(1, k3).sum().backward()
    torch.polygamma(1, t3).sum().backward()
    np.testing.assert_allclose(k3.grad.numpy(), t3.grad.numpy(), rtol=1e-12)


def test_digamma_double_backward_is_a_clear_error():
    k = kiln.tensor([1.5, 2.5], requires_grad=True)
    (g,) = kiln.autograd.grad(kiln.digamma(k).sum(), k, create_graph=True)
    with pytest.raises(RuntimeError, match="_trigamma"):
        g.sum().backward()


def test_gamma_log_prob_matches_torch():
    """A Gamma/Dirichlet log-likelihood, the distributions' lgamma-heavy path, and its gradient."""
    rng = np.random.default_rng(2)
    conc = rng.uniform(0.5, 5, (64, 10)).astype(np.float32)
    value = rng.dirichlet(np.ones(10), 64).astype(np.float32)
    kc = kiln.tensor(conc, requires_grad=True)
    tc = torch.tensor(conc, requires_grad=True)
    lk = kiln.distributions.Dirichlet(kc).log_prob(kiln.from_numpy(value)).sum()
    lt = torch.distributions.Dirichlet(tc).log_prob(torch.from_numpy(value)).sum()
    lk.backward()
    lt.backward()
    np.testing.assert_allclose(lk.item(), lt.item(), rtol=1e-5)
    np.testing.assert_allclose(kc.grad.numpy(), tc.grad.numpy(), rtol=1e-4, atol=1e-5)
