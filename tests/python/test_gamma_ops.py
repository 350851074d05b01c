"""lgamma and digamma as formula ops (schema pointwise formulas over the intrinsics of
runtime/kernels/pointwise_math.h) and polygamma as a C++ op, against Debian's torch 1.13 on the same
inputs, and against SciPy (float32) and mpmath (float64) for lgamma's accuracy."""
import mpmath
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


def _close(name, got, want):
    """digamma is torch's algorithm (the same bits); lgamma rounds better than torch's (an ulp apart)."""
    if name == "digamma":
        _same_bits(got, want)
    else:
        np.testing.assert_allclose(got, want, rtol=3e-7 if got.dtype == np.float32 else 1e-15)


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


def test_lgamma_float32_is_correctly_rounded_where_torch_is_not():
    x = _inputs("float32")
    ref = scipy.special.gammaln(x.astype(np.float64))  # float64: far finer than a float32 ulp
    got = kiln.lgamma(kiln.from_numpy(x)).numpy()
    want = torch.lgamma(torch.from_numpy(x)).numpy()
    finite = np.isfinite(ref) & np.isfinite(want)
    mine, theirs = _ulps(got, ref, "float32")[finite], _ulps(want, ref, "float32")[finite]
    assert mine.max() <= 0.501 < theirs.max()
    # where the reference is not finite (the poles, +-inf, NaN), torch's values
    _same_bits(got[~finite], want[~finite])


def test_lgamma_float64_against_mpmath():
    rng = np.random.default_rng(3)
    # the bulk, and below 0 near lgamma's zeros (x ~ -2.457, -2.747, -3.144), where cancellation is hardest
    x = np.concatenate([rng.uniform(-30, 30, 300), rng.uniform(0, 3, 300), np.exp(rng.uniform(-30, 30, 200)),
                        -2.4570247382208006 + rng.uniform(-1e-4, 1e-4, 100), -2.7476826467 + rng.uniform(-1e-4, 1e-4, 100)])
    mpmath.mp.prec = 120
    ref = np.array([float(mpmath.log(abs(mpmath.gamma(mpmath.mpf(float(v)))))) for v in x])
    got = kiln.lgamma(kiln.from_numpy(x)).numpy()
    want = torch.lgamma(torch.from_numpy(x)).numpy()
    mine, theirs = (np.abs(a - ref) / np.spacing(np.abs(ref)) for a in (got, want))
    assert mine.max() <= 8 and mine.max() <= theirs.max()


@pytest.mark.parametrize("name", ["lgamma", "digamma"])
@pytest.mark.parametrize("dtype", ["bfloat16", "int64", "int32", "uint8", "bool"])
def test_other_dtypes_as_torch(name, dtype):
    values = [0.5, 1.5, 3.0, 7.25, 0.0, 1.0, 2.0, 100.0, -1.0, -0.5]
    if dtype in ("uint8", "bool"):
        values = [v for v in values if v >= 0]
    t = torch.tensor(values).to(getattr(torch, dtype))
    k = kiln.tensor(values).to(getattr(kiln, dtype))
    got, want = getattr(kiln, name)(k), getattr(torch, name)(t)
    assert str(got.dtype) == str(want.dtype).replace("torch", "kiln")
    np.testing.assert_allclose(got.float().numpy(), want.float().numpy(), rtol=1e-6 if dtype != "bfloat16" else 0)


@pytest.mark.parametrize("name", ["lgamma", "digamma"])
def test_float16_rounds_the_float32_value(name):
    """torch 1.13 has no float16 lgamma/digamma on the CPU (torch 2 has): kiln computes in float32, as
    for bfloat16, and rounds once; the reference is torch's float32 value rounded to float16."""
    x = np.array([0.5, 1.5, 3.0, 7.25, 0.0, 1.0, 100.0, -0.5, 1e-3], dtype=np.float16)
    got = getattr(kiln, name)(kiln.from_numpy(x))
    assert got.dtype == kiln.float16
    want = getattr(torch, name)(torch.from_numpy(x).float()).half()
    _same_bits(got.numpy(), want.numpy())


@pytest.mark.parametrize("name", ["lgamma", "digamma"])
def test_strided_and_broadcast_inputs(name):
    base = np.random.default_rng(1).uniform(0.1, 9, (6, 8)).astype(np.float32)
    k, t = kiln.from_numpy(base), torch.from_numpy(base)
    _close(name, getattr(k.t(), name)().numpy(), getattr(t.t(), name)().numpy())
    _close(name, getattr(k[:, ::3], name)().numpy(), getattr(t[:, ::3], name)().numpy())
    _close(name, getattr(k[0:1].expand(4, 8), name)().numpy(), getattr(t[0:1].expand(4, 8), name)().numpy())
    assert getattr(kiln.zeros(0, 3), name)().shape == (0, 3)


@pytest.mark.parametrize("name", ["lgamma", "digamma"])
def test_inplace_and_out_forms(name):
    x = np.array([0.25, 1.5, 4.0, 11.0], dtype=np.float64)
    k = kiln.from_numpy(x.copy())
    getattr(k, name + "_")()
    _close(name, k.numpy(), getattr(torch, name)(torch.from_numpy(x)).numpy())
    out = kiln.empty(4, dtype=kiln.float64)
    getattr(kiln, name)(kiln.from_numpy(x), out=out)
    _close(name, out.numpy(), getattr(torch, name)(torch.from_numpy(x)).numpy())
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
    (hk,) = kiln.autograd.grad(gk.sum(), k, create_graph=True)
    (ht,) = torch.autograd.grad(gt.sum(), t, create_graph=True)
    _same_bits(hk.detach().numpy(), ht.detach().numpy())  # trigamma
    (tk,) = kiln.autograd.grad(hk.sum(), k)
    (tt,) = torch.autograd.grad(ht.sum(), t)
    np.testing.assert_allclose(tk.numpy(), tt.numpy(), rtol=1e-12)  # polygamma(2): the zeta series
    k2 = kiln.tensor(x, requires_grad=True)
    t2 = torch.tensor(x, requires_grad=True)
    kiln.digamma(k2).sum().backward()
    torch.digamma(t2).sum().backward()
    _same_bits(k2.grad.numpy(), t2.grad.numpy())


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("n", [0, 1, 2, 3, 4, 7, 20])
def test_polygamma_as_torch(n, dtype):
    x = _inputs(dtype)[::7]
    got = kiln.polygamma(n, kiln.from_numpy(x)).numpy()
    want = torch.polygamma(n, torch.from_numpy(x)).numpy()
    if n <= 1:
        _same_bits(got, want)
        _same_bits(kiln.from_numpy(x).polygamma(n).numpy(), want)
        return
    # n >= 2: the zeta series in double, rounded once (torch sums float32 in float32, so its subnormal
    # results are further from the true value: compared where torch's result is a normal number)
    ok = np.isfinite(want) & (np.abs(want) < np.finfo(dtype).max / 4) & (np.abs(want) >= np.finfo(dtype).tiny)
    rtol = 2e-5 if dtype == "float32" else 1e-12
    apart = np.nonzero(ok & ~np.isclose(got, want, rtol=rtol, atol=0))[0]
    assert len(apart) <= len(x) // 100
    for i in apart:  # torch's float32 sum loses digits at large n and x: mpmath decides
        ref = float(mpmath.polygamma(n, mpmath.mpf(float(x[i]))))
        assert abs(float(got[i]) - ref) <= min(abs(float(want[i]) - ref), abs(ref) * rtol), (x[i], got[i], want[i], ref)
    special = ~np.isfinite(want)
    assert np.array_equal(np.isnan(got[special]), np.isnan(want[special]))
    assert np.array_equal(got[special & ~np.isnan(want)], want[special & ~np.isnan(want)])


def test_polygamma_arguments_and_gradients():
    x = np.array([0.4, 1.3, 6.0], dtype=np.float64)
    for n in (0, 1, 2, 3):
        k = kiln.tensor(x, requires_grad=True)
        t = torch.tensor(x, requires_grad=True)
        kiln.polygamma(n, k).sum().backward()
        torch.polygamma(n, t).sum().backward()
        np.testing.assert_allclose(k.grad.numpy(), t.grad.numpy(), rtol=1e-12)
    with pytest.raises(RuntimeError, match="negative n"):
        kiln.polygamma(-1, kiln.ones(2))
    with pytest.raises(TypeError):
        kiln.polygamma(1.5, kiln.ones(2))
    with pytest.raises(TypeError):
        kiln.polygamma(1, [1.0])
    out = kiln.empty(3, dtype=kiln.float64)
    kiln.polygamma(2, kiln.from_numpy(x), out=out)
    np.testing.assert_allclose(out.numpy(), torch.polygamma(2, torch.from_numpy(x)).numpy(), rtol=1e-12)
    y = kiln.from_numpy(x.copy())
    y.polygamma_(1)
    _same_bits(y.numpy(), torch.polygamma(1, torch.from_numpy(x)).numpy())
    assert kiln.polygamma(2, kiln.tensor([1, 2])).dtype == kiln.float32


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


# ---------------------------------------------------------------------------- special.zeta (C++ op)

_ZETA_X = [1.0, 0.5, -1.0, 1.5, 2.0, 3.0, 4.5, 10.0, 30.0, 100.0, np.inf, np.nan]
_ZETA_Q = [1.0, 0.5, 2.0, 7.25, 1e-3, 1e3, 1e9, 0.0, -0.0, -1.0, -2.5, -3.0, np.inf, -np.inf, np.nan]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_zeta_is_torchs_on_a_grid_with_its_poles_and_domain(dtype):
    """Cephes' domain as torch's: inf at x = 1 and at q a non-positive integer, NaN below x = 1, for
    NaN, and for q < 0 with a fractional x; elsewhere the sum (float32: kiln's double sum rounded once)."""
    x, q = np.meshgrid(np.array(_ZETA_X, dtype=dtype), np.array(_ZETA_Q, dtype=dtype))
    got = kiln.special.zeta(kiln.from_numpy(x.copy()), kiln.from_numpy(q.copy())).numpy()
    want = torch.special.zeta(torch.from_numpy(x.copy()), torch.from_numpy(q.copy())).numpy()
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    np.testing.assert_allclose(got, want, rtol=2e-6 if dtype == "float32" else 1e-13)


def test_zeta_float64_against_scipy_and_mpmath():
    rng = np.random.default_rng(3)
    x = rng.uniform(1.01, 40, 3000)
    q = np.exp(rng.uniform(-5, 8, 3000))
    got = kiln.special.zeta(kiln.from_numpy(x), kiln.from_numpy(q)).numpy()
    np.testing.assert_allclose(got, scipy.special.zeta(x, q), rtol=1e-13)
    for xi, qi, gi in list(zip(x, q, got))[:40]:
        assert gi == pytest.approx(float(mpmath.zeta(xi, qi)), rel=1e-14)


def test_zeta_promotes_broadcasts_and_takes_scalars_and_out():
    ints = kiln.special.zeta(kiln.tensor([2, 3]), kiln.tensor([[1], [2]]))
    want = torch.special.zeta(torch.tensor([2, 3]), torch.tensor([[1], [2]]))
    assert ints.dtype == kiln.float32 and list(ints.shape) == list(want.shape)
    np.testing.assert_allclose(ints.numpy(), want.numpy(), rtol=1e-6)
    q64 = kiln.tensor([1.0, 2.0], dtype=kiln.float64)
    assert kiln.special.zeta(2, q64).dtype == kiln.float64
    np.testing.assert_allclose(kiln.special.zeta(2, q64).numpy(),
                               torch.special.zeta(2, torch.tensor([1.0, 2.0], dtype=torch.float64)).numpy(), rtol=1e-15)
    np.testing.assert_allclose(kiln.special.zeta(kiln.tensor([2.0, 4.0]), 3).numpy(),
                               torch.special.zeta(torch.tensor([2.0, 4.0]), 3).numpy(), rtol=1e-6)
    out = kiln.empty(0)
    result = kiln.special.zeta(kiln.tensor([2.0, 3.0]), kiln.tensor([1.0, 1.0]), out=out)
    assert result is out and out.tolist() == pytest.approx([np.pi ** 2 / 6, 1.2020569031595942], rel=1e-6)
    x = kiln.arange(2.0, 6.0).reshape(2, 2).t()  # non-contiguous
    np.testing.assert_allclose(kiln.special.zeta(x, 2.0).numpy(),
                               torch.special.zeta(torch.arange(2.0, 6.0).reshape(2, 2).t(), 2.0).numpy(), rtol=1e-6)


def test_zeta_refuses_shapes_that_do_not_broadcast():
    with pytest.raises(RuntimeError):
        kiln.special.zeta(kiln.ones(2), kiln.ones(3))


def test_zeta_gradient_is_torchs_in_q_and_refused_in_x():
    xv, qv = [2.0, 3.5, 5.0], [1.5, 2.0, 0.25]
    x, q = kiln.tensor(xv, dtype=kiln.float64), kiln.tensor(qv, dtype=kiln.float64, requires_grad=True)
    tx, tq = torch.tensor(xv, dtype=torch.float64), torch.tensor(qv, dtype=torch.float64, requires_grad=True)
    kiln.special.zeta(x, q).sum().backward()
    torch.special.zeta(tx, tq).sum().backward()
    np.testing.assert_allclose(q.grad.numpy(), tq.grad.numpy(), rtol=1e-13)
    y = kiln.special.zeta(x.requires_grad_(), q.detach())
    with pytest.raises(NotImplementedError, match="derivative for 'zeta'"):
        y.sum().backward()
