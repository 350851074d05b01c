"""kiln.distributions beyond Normal/Uniform/Bernoulli/Categorical, against torch.distributions 1.13.

For every distribution, on the same parameters (float32 and float64, broadcast batch shapes): batch and
event shapes, log_prob of torch's samples, entropy, mean, mode, variance, stddev, cdf/icdf,
enumerate_support, expand, and the gradients of log_prob, entropy and rsample with respect to the
parameters. Samples: after kiln.manual_seed(s) kiln draws torch's numbers after torch.manual_seed(s)
(normal_/uniform_/exponential_/cauchy_ fills, and the Gamma/Poisson/Binomial samplers, which follow
torch's CPU kernels); the Gamma, Beta, Dirichlet, Poisson and Binomial samplers are also checked
statistically (mean and variance within a few standard errors). Validation errors raise as torch's.
An actor-critic PPO update with a MultivariateNormal policy runs under both and gives the same losses.
"""
import math

import numpy as np
import pytest
import torch

import kiln

RNG = np.random.default_rng(0)


def np_of(t):
    return t.detach().numpy() if hasattr(t, "detach") else np.asarray(t)


def tol(dtype):
    return dict(rtol=2e-5, atol=2e-5) if dtype == "float32" else dict(rtol=1e-9, atol=1e-10)


def close(a, b, dtype, what=""):
    a, b = np_of(a), np_of(b)
    assert a.shape == b.shape, f"{what}: shape {a.shape} vs {b.shape}"
    np.testing.assert_allclose(a.astype(np.float64), b.astype(np.float64), err_msg=what, equal_nan=True,
                               **tol(dtype))


def pos(*shape, lo=0.5, hi=3.0):
    return RNG.uniform(lo, hi, size=shape)


def real(*shape):
    return RNG.normal(size=shape)


def simplex(*shape):
    p = RNG.uniform(0.1, 1.0, size=shape)
    return p / p.sum(-1, keepdims=True)


def unit(*shape):
    return RNG.uniform(0.1, 0.9, size=shape)


def spd(*batch, n=3):
    a = RNG.normal(size=batch + (n, n))
    return a @ np.swapaxes(a, -1, -2) + n * np.eye(n)


def tril(*batch, n=3):
    return np.linalg.cholesky(spd(*batch, n=n))


def lowrank_args(m, p):
    return m.distributions.LowRankMultivariateNormal(p["loc"], p["cov_factor"], p["cov_diag"])


# (name, constructor(m, params), params as NumPy arrays, differentiable params, samples equal to torch's)
CASES = [
    ("Exponential", lambda m, p: m.distributions.Exponential(p["rate"]), {"rate": pos(2, 3)}, True),
    ("Laplace", lambda m, p: m.distributions.Laplace(p["loc"], p["scale"]), {"loc": real(3), "scale": pos(2, 3)},
     True),
    ("Cauchy", lambda m, p: m.distributions.Cauchy(p["loc"], p["scale"]), {"loc": real(2, 3), "scale": pos(3)},
     True),
    ("Gumbel", lambda m, p: m.distributions.Gumbel(p["loc"], p["scale"]), {"loc": real(2, 3), "scale": pos(2, 3)},
     True),
    ("HalfNormal", lambda m, p: m.distributions.HalfNormal(p["scale"]), {"scale": pos(4)}, True),
    ("HalfCauchy", lambda m, p: m.distributions.HalfCauchy(p["scale"]), {"scale": pos(4)}, True),
    ("LogNormal", lambda m, p: m.distributions.LogNormal(p["loc"], p["scale"]), {"loc": real(2, 3),
                                                                                  "scale": pos(1, 3)}, True),
    ("Gamma", lambda m, p: m.distributions.Gamma(p["concentration"], p["rate"]),
     {"concentration": pos(2, 3, lo=0.3, hi=5.0), "rate": pos(3)}, True),
    ("Chi2", lambda m, p: m.distributions.Chi2(p["df"]), {"df": pos(4, lo=0.5, hi=6.0)}, True),
    ("Beta", lambda m, p: m.distributions.Beta(p["a"], p["b"]), {"a": pos(2, 3, lo=0.5, hi=4.0),
                                                                  "b": pos(3, lo=0.5, hi=4.0)}, True),
    ("Dirichlet", lambda m, p: m.distributions.Dirichlet(p["concentration"]),
     {"concentration": pos(2, 4, lo=0.5, hi=4.0)}, True),
    ("StudentT", lambda m, p: m.distributions.StudentT(p["df"], p["loc"], p["scale"]),
     {"df": pos(3, lo=2.5, hi=8.0), "loc": real(2, 3), "scale": pos(3)}, True),
    ("Poisson", lambda m, p: m.distributions.Poisson(p["rate"]), {"rate": pos(2, 4, lo=0.5, hi=30.0)}, True),
    ("Binomial", lambda m, p: m.distributions.Binomial(10, probs=p["probs"]), {"probs": unit(2, 3)}, True),
    ("BinomialTensorCount", lambda m, p: m.distributions.Binomial(m.tensor([[5.0], [40.0]], dtype=p["probs"].dtype),
                                                                  logits=p["probs"]), {"probs": real(2, 3)}, True),
    ("Geometric", lambda m, p: m.distributions.Geometric(p["probs"]), {"probs": unit(2, 3)}, True),
    ("GeometricLogits", lambda m, p: m.distributions.Geometric(logits=p["logits"]), {"logits": real(4)}, True),
    ("Multinomial", lambda m, p: m.distributions.Multinomial(6, probs=p["probs"]), {"probs": simplex(2, 4)}, True),
    ("OneHotCategorical", lambda m, p: m.distributions.OneHotCategorical(probs=p["probs"]), {"probs": simplex(2, 4)},
     True),
    ("OneHotCategoricalLogits", lambda m, p: m.distributions.OneHotCategorical(logits=p["logits"]),
     {"logits": real(3, 5)}, True),
    ("RelaxedBernoulli", lambda m, p: m.distributions.RelaxedBernoulli(m.tensor(0.7, dtype=p["probs"].dtype),
                                                                       probs=p["probs"]), {"probs": unit(2, 3)}, True),
    ("RelaxedOneHotCategorical",
     lambda m, p: m.distributions.RelaxedOneHotCategorical(m.tensor(0.5, dtype=p["probs"].dtype), probs=p["probs"]),
     {"probs": simplex(2, 4)}, True),
    ("MultivariateNormalCov",
     lambda m, p: m.distributions.MultivariateNormal(p["loc"], covariance_matrix=p["cov"]),
     {"loc": real(2, 3), "cov": spd(n=3)}, True),
    ("MultivariateNormalPrec",
     lambda m, p: m.distributions.MultivariateNormal(p["loc"], precision_matrix=p["prec"]),
     {"loc": real(3), "prec": spd(2, n=3)}, True),
    ("MultivariateNormalTril",
     lambda m, p: m.distributions.MultivariateNormal(p["loc"], scale_tril=p["tril"]),
     {"loc": real(4, 2, 3), "tril": tril(2, n=3)}, True),
    ("LowRankMultivariateNormal", lowrank_args,
     {"loc": real(2, 3), "cov_factor": real(3, 2), "cov_diag": pos(3)}, True),
    ("IndependentNormal",
     lambda m, p: m.distributions.Independent(m.distributions.Normal(p["loc"], p["scale"]), 1),
     {"loc": real(2, 3), "scale": pos(2, 3)}, True),
    ("IndependentBeta2",
     lambda m, p: m.distributions.Independent(m.distributions.Beta(p["a"], p["b"]), 2),
     {"a": pos(2, 3), "b": pos(2, 3)}, True),
    ("TransformedTanhNormal",
     lambda m, p: m.distributions.TransformedDistribution(
         m.distributions.Normal(p["loc"], p["scale"]), [m.distributions.transforms.TanhTransform(cache_size=1)]),
     {"loc": real(2, 3) * 0.5, "scale": pos(2, 3, lo=0.2, hi=0.8)}, True),
    ("TransformedAffineExp",
     lambda m, p: m.distributions.TransformedDistribution(
         m.distributions.Normal(p["loc"], p["scale"]),
         [m.distributions.transforms.AffineTransform(1.5, 2.0), m.distributions.transforms.ExpTransform()]),
     {"loc": real(3), "scale": pos(3)}, True),
    ("TransformedSigmoidCompose",
     lambda m, p: m.distributions.TransformedDistribution(
         m.distributions.Normal(p["loc"], p["scale"]),
         m.distributions.transforms.ComposeTransform([m.distributions.transforms.AffineTransform(0.5, 3.0),
                                                      m.distributions.transforms.SigmoidTransform()])),
     {"loc": real(2), "scale": pos(2)}, True),
    ("MixtureSameFamilyNormal",
     lambda m, p: m.distributions.MixtureSameFamily(m.distributions.Categorical(logits=p["logits"]),
                                                    m.distributions.Normal(p["loc"], p["scale"])),
     {"logits": real(2, 4), "loc": real(2, 4), "scale": pos(2, 4)}, True),
    ("MixtureSameFamilyMVN",
     lambda m, p: m.distributions.MixtureSameFamily(
         m.distributions.Categorical(probs=p["probs"]),
         m.distributions.Independent(m.distributions.Normal(p["loc"], p["scale"]), 1)),
     {"probs": simplex(3), "loc": real(3, 2), "scale": pos(3, 2)}, True),
    ("Pareto", lambda m, p: m.distributions.Pareto(p["scale"], p["alpha"]), {"scale": pos(3), "alpha": pos(2, 3, lo=2.5,
                                                                                                            hi=5)},
     True),
    ("Weibull", lambda m, p: m.distributions.Weibull(p["scale"], p["c"]), {"scale": pos(3), "c": pos(3)}, True),
    ("Kumaraswamy", lambda m, p: m.distributions.Kumaraswamy(p["a"], p["b"]), {"a": pos(3), "b": pos(3)}, True),
    ("FisherSnedecor", lambda m, p: m.distributions.FisherSnedecor(p["d1"], p["d2"]),
     {"d1": pos(3, lo=1, hi=6), "d2": pos(3, lo=5, hi=9)}, True),
    ("NegativeBinomial", lambda m, p: m.distributions.NegativeBinomial(p["n"], probs=p["p"]),
     {"n": pos(3, lo=1, hi=6), "p": unit(3)}, True),
    ("ContinuousBernoulli", lambda m, p: m.distributions.ContinuousBernoulli(probs=p["p"]), {"p": unit(2, 3)}, True),
    ("Wishart", lambda m, p: m.distributions.Wishart(p["df"], covariance_matrix=p["cov"]),
     {"df": pos(2, lo=4.0, hi=7.0), "cov": spd(n=3)}, True),
    ("WishartTril", lambda m, p: m.distributions.Wishart(p["df"], scale_tril=p["tril"]),
     {"df": pos(1, lo=4.0, hi=7.0), "tril": tril(2, n=2)}, True),
    ("LKJCholesky", lambda m, p: m.distributions.LKJCholesky(3, p["c"]), {"c": pos(2, lo=0.5, hi=3.0)}, True),
    ("VonMises", lambda m, p: m.distributions.VonMises(p["loc"], p["k"]), {"loc": real(3), "k": pos(2, 3)}, True),
    ("LogisticNormal", lambda m, p: m.distributions.LogisticNormal(p["loc"], p["scale"]),
     {"loc": real(2, 3), "scale": pos(3)}, True),
    ("Normal", lambda m, p: m.distributions.Normal(p["loc"], p["scale"]), {"loc": real(2, 3), "scale": pos(3)}, True),
    ("Uniform", lambda m, p: m.distributions.Uniform(p["low"], p["low"] + p["width"]),
     {"low": real(3), "width": pos(2, 3)}, True),
    ("Categorical", lambda m, p: m.distributions.Categorical(probs=p["probs"]), {"probs": simplex(3, 4)}, True),
    ("Bernoulli", lambda m, p: m.distributions.Bernoulli(logits=p["logits"]), {"logits": real(2, 3)}, True),
]
IDS = [c[0] for c in CASES]
DTYPES = ["float32", "float64"]


def make(m, case, dtype, grad=True):
    name, ctor, params, _ = case
    ts = {k: m.tensor(v, dtype=getattr(m, dtype), requires_grad=grad) for k, v in params.items()}
    return ctor(m, ts), ts


def attempt(fn):
    """fn()'s value, or the type of the exception it raised."""
    try:
        return fn()
    except (NotImplementedError, ValueError, RuntimeError, AttributeError, TypeError) as e:
        return type(e)


def same_outcome(a, b, dtype, what):
    if isinstance(a, type) or isinstance(b, type):
        if isinstance(a, type) and isinstance(b, type):
            if a is NotImplementedError or b is NotImplementedError:
                assert a is b, f"{what}: torch raised {a.__name__}, kiln {b.__name__}"
            return
        raise AssertionError(f"{what}: torch gave {a}, kiln gave {b}")
    close(a, b, dtype, what)


def kiln_of(t, dtype=None):
    return kiln.tensor(np_of(t)) if dtype is None else kiln.tensor(np_of(t), dtype=getattr(kiln, dtype))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_deterministic_quantities(case, dtype):
    name = case[0]
    dt, pt = make(torch, case, dtype)
    dk, pk = make(kiln, case, dtype)
    assert tuple(dt.batch_shape) == tuple(dk.batch_shape)
    assert tuple(dt.event_shape) == tuple(dk.event_shape)
    assert dt.has_rsample == dk.has_rsample and dt.has_enumerate_support == dk.has_enumerate_support
    torch.manual_seed(3)
    x_t = dt.sample((2,))
    x_k = kiln.tensor(np_of(x_t), dtype=getattr(kiln, str(x_t.dtype).split(".")[-1]))
    assert dt.support.check(x_t).all() and bool(dk.support.check(x_k).all())
    close(dt.log_prob(x_t), dk.log_prob(x_k), dtype, f"{name} log_prob")
    for attr in ("mean", "mode", "variance", "stddev"):
        same_outcome(attempt(lambda: getattr(dt, attr)), attempt(lambda: getattr(dk, attr)), dtype, f"{name} {attr}")
    same_outcome(attempt(dt.entropy), attempt(dk.entropy), dtype, f"{name} entropy")
    ct, ck = attempt(lambda: dt.cdf(x_t)), attempt(lambda: dk.cdf(x_k))
    same_outcome(ct, ck, dtype, f"{name} cdf")
    if not isinstance(ct, type):
        q = ct.detach().clamp(0.05, 0.95)
        same_outcome(attempt(lambda: dt.icdf(q)), attempt(lambda: dk.icdf(kiln_of(q))), dtype, f"{name} icdf")
    if dt.has_enumerate_support:
        for expand in (True, False):
            et, ek = attempt(lambda: dt.enumerate_support(expand)), attempt(lambda: dk.enumerate_support(expand))
            same_outcome(et, ek, dtype, f"{name} enumerate_support")
            if not isinstance(et, type):
                assert str(et.dtype).split(".")[-1] == str(ek.dtype).split(".")[-1]
    # expand: a new batch shape in front
    new_shape = (4,) + tuple(dt.batch_shape)
    et, ek = dt.expand(new_shape), dk.expand(new_shape)
    assert tuple(ek.batch_shape) == new_shape and tuple(ek.event_shape) == tuple(et.event_shape)
    close(et.log_prob(x_t[0]), ek.log_prob(x_k[0]), dtype, f"{name} expanded log_prob")
    assert tuple(ek.sample((2,)).shape) == tuple(et.sample((2,)).shape)
    # gradients of log_prob (+ entropy where both have it) w.r.t. the parameters
    lt, lk = dt.log_prob(x_t).sum(), dk.log_prob(x_k).sum()
    ht, hk = attempt(dt.entropy), attempt(dk.entropy)
    if not isinstance(ht, type) and ht.requires_grad:
        lt, lk = lt + ht.sum(), lk + hk.sum()
    if lt.requires_grad:
        gt = torch.autograd.grad(lt, list(pt.values()), allow_unused=True)
        gk = kiln.autograd.grad(lk, list(pk.values()), allow_unused=True)
        for k, a, b in zip(pt, gt, gk):
            assert (a is None) == (b is None), f"{name}: grad of {k}"
            if a is not None:
                close(a, b, dtype, f"{name} d(log_prob + entropy)/d{k}")


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_samples_match_torch(case, dtype):
    name = case[0]
    dt, pt = make(torch, case, dtype)
    dk, pk = make(kiln, case, dtype)
    for shape in ((), (3,), (2, 2)):
        torch.manual_seed(11)
        kiln.manual_seed(11)
        st, sk = dt.sample(shape), dk.sample(shape)
        assert tuple(st.shape) == tuple(sk.shape) and not sk.requires_grad
        assert str(st.dtype).split(".")[-1] == str(sk.dtype).split(".")[-1]
        if case[3]:
            close(st, sk, dtype, f"{name} sample{shape}")
            assert np.array_equal(np_of(torch.get_rng_state()), np_of(kiln.get_rng_state())), \
                f"{name}: generator state after sample"
    if dt.has_rsample:
        torch.manual_seed(5)
        kiln.manual_seed(5)
        rt, rk = dt.rsample((3,)), dk.rsample((3,))
        close(rt, rk, dtype, f"{name} rsample")
        assert rk.requires_grad
        wt = torch.tensor(RNG.normal(size=tuple(rt.shape)), dtype=rt.dtype)
        try:
            gt = torch.autograd.grad((rt * wt).sum(), list(pt.values()), allow_unused=True)
        except RuntimeError:
            # torch 1.13's Wishart.rsample redraws a singular sample in place, which its own
            # backward then refuses ("modified by an inplace operation"): nothing to compare
            assert name.startswith("Wishart")
            return
        gk = kiln.autograd.grad((rk * kiln_of(wt)).sum(), list(pk.values()), allow_unused=True)
        for k, a, b in zip(pt, gt, gk):
            assert (a is None) == (b is None), f"{name}: rsample grad of {k}"
            if a is not None:
                close(a, b, dtype, f"{name} d rsample / d{k}")


# ------------------------------------------------------------------ samplers: statistics
def _check_moments(x, mean, var, what, k=5.0):
    x = np_of(x).astype(np.float64)
    n = x.shape[0]
    m, v = x.mean(0), x.var(0)
    mean, var = np.broadcast_to(mean, m.shape), np.broadcast_to(var, v.shape)
    assert (np.abs(m - mean) <= k * np.sqrt(var / n) + 1e-12).all(), f"{what}: mean {m} vs {mean}"
    # the variance of a sample variance ~ 2 var^2 / n (normal) -- heavier tails: a wider bound
    assert (np.abs(v - var) <= 4 * k * var * np.sqrt(2.0 / n) + 1e-12).all(), f"{what}: var {v} vs {var}"


@pytest.mark.parametrize("dtype", DTYPES)
def test_sampler_statistics(dtype):
    kiln.manual_seed(2024)
    f = getattr(kiln, dtype)
    D = kiln.distributions
    n = 20000
    a = np.array([0.2, 1.0, 3.5, 40.0])
    r = np.array([1.0, 2.0, 0.5, 3.0])
    _check_moments(D.Gamma(kiln.tensor(a, dtype=f), kiln.tensor(r, dtype=f)).sample((n,)), a / r, a / r ** 2,
                   "Gamma")
    b = np.array([0.5, 2.0, 5.0, 1.0])
    _check_moments(D.Beta(kiln.tensor(a, dtype=f), kiln.tensor(b, dtype=f)).sample((n,)), a / (a + b),
                   a * b / ((a + b) ** 2 * (a + b + 1)), "Beta")
    c = np.array([0.3, 1.0, 2.0, 6.0])
    c0 = c.sum()
    _check_moments(D.Dirichlet(kiln.tensor(c, dtype=f)).sample((n,)), c / c0, c * (c0 - c) / (c0 ** 2 * (c0 + 1)),
                   "Dirichlet")
    lam = np.array([0.3, 4.0, 10.0, 250.0])
    _check_moments(D.Poisson(kiln.tensor(lam, dtype=f)).sample((n,)), lam, lam, "Poisson")
    cnt = np.array([3.0, 30.0, 200.0, 1000.0])
    p = np.array([0.2, 0.6, 0.1, 0.97])
    _check_moments(D.Binomial(kiln.tensor(cnt, dtype=f), kiln.tensor(p, dtype=f)).sample((n,)), cnt * p,
                   cnt * p * (1 - p), "Binomial")
    s = D.Binomial(kiln.tensor(cnt, dtype=f), kiln.tensor(p, dtype=f)).sample((50,))
    assert (np_of(s) == np.round(np_of(s))).all() and (np_of(s) <= cnt).all() and (np_of(s) >= 0).all()
    ds = D.Dirichlet(kiln.tensor(c, dtype=f)).sample((100,))
    np.testing.assert_allclose(np_of(ds).sum(-1), 1.0, rtol=1e-5)
    g = D.Geometric(kiln.tensor([0.2, 0.7], dtype=f)).sample((n,))
    q = np.array([0.2, 0.7])
    _check_moments(g, (1 - q) / q, (1 - q) / q ** 2, "Geometric")


def test_sampler_ops_match_torch():
    """The samplers themselves (kiln._standard_gamma, poisson, binomial, _sample_dirichlet) and the
    reparameterized gradients (_standard_gamma_grad, _dirichlet_grad), element for element."""
    for dt in DTYPES:
        al = np.array([0.05, 0.5, 1.0, 2.5, 10.0, 100.0, 0.0] * 9, dtype=dt)
        lam = np.array([0.0, 0.5, 3.0, 9.9, 10.0, 50.0, 1000.0] * 9, dtype=dt)
        cnt = np.array([0, 5, 20, 100, 1000, 7, 50] * 9, dtype=dt)
        pr = np.array([0.3, 0.9, 0.5, 0.05, 0.7, 1.0, 0.02] * 9, dtype=dt)
        conc = np.abs(RNG.normal(size=(5, 4))).astype(dt) + 0.1
        for seed in (0, 1):
            for fk, ft in [(lambda m: m._standard_gamma(m.tensor(al)), None),
                           (lambda m: m.poisson(m.tensor(lam)), None),
                           (lambda m: m.binomial(m.tensor(cnt), m.tensor(pr)), None),
                           (lambda m: m._sample_dirichlet(m.tensor(conc)), None)]:
                torch.manual_seed(seed)
                kiln.manual_seed(seed)
                np.testing.assert_array_equal(np_of(fk(kiln)), np_of(fk(torch)))
        x = RNG.uniform(0.01, 30, 300)
        a = RNG.uniform(0.01, 30, 300)
        x = np.concatenate([x, [0.1, 9.1, 19, 40, 0.5]]).astype(dt)
        a = np.concatenate([a, [0.3, 9, 20, 50, 0.7]]).astype(dt)
        np.testing.assert_array_equal(np_of(kiln._standard_gamma_grad(kiln.tensor(a), kiln.tensor(x))),
                                      np_of(torch._standard_gamma_grad(torch.tensor(a), torch.tensor(x))))
        xs = RNG.uniform(0.001, 0.999, 305).astype(dt)
        tot = (a + RNG.uniform(0.01, 30, 305)).astype(dt)
        np.testing.assert_array_equal(
            np_of(kiln._dirichlet_grad(kiln.tensor(xs), kiln.tensor(a), kiln.tensor(tot))),
            np_of(torch._dirichlet_grad(torch.tensor(xs), torch.tensor(a), torch.tensor(tot))))
    g = kiln.Generator().manual_seed(3)
    a1 = kiln._standard_gamma(kiln.full([5], 2.0), generator=g)
    kiln.manual_seed(3)
    np.testing.assert_array_equal(np_of(a1), np_of(kiln._standard_gamma(kiln.full([5], 2.0))))
    with pytest.raises(RuntimeError, match="non-negative"):
        kiln.poisson(kiln.tensor([1.0, -1.0]))


def test_standard_gamma_grad_through_autograd():
    for m in (torch, kiln):
        m.manual_seed(0)
    outs = []
    for m in (torch, kiln):
        a = m.tensor([0.5, 1.5, 9.0], dtype=m.float64, requires_grad=True)
        m.manual_seed(4)
        x = m._standard_gamma(a)
        x.sum().backward()
        outs.append((x, a.grad))
    close(outs[0][0], outs[1][0], "float64")
    close(outs[0][1], outs[1][1], "float64")


# ------------------------------------------------------------------ kl_divergence
KL_PAIRS = [
    ("MVN", lambda m, p: (m.distributions.MultivariateNormal(p["l1"], scale_tril=p["t1"]),
                          m.distributions.MultivariateNormal(p["l2"], covariance_matrix=p["c2"])),
     {"l1": real(2, 3), "t1": tril(2), "l2": real(3), "c2": spd()}),
    ("Gamma", lambda m, p: (m.distributions.Gamma(p["a"], p["b"]), m.distributions.Gamma(p["c"], p["d"])),
     {"a": pos(3), "b": pos(3), "c": pos(2, 3), "d": pos(3)}),
    ("Beta", lambda m, p: (m.distributions.Beta(p["a"], p["b"]), m.distributions.Beta(p["c"], p["d"])),
     {"a": pos(3), "b": pos(3), "c": pos(3), "d": pos(3)}),
    ("Dirichlet", lambda m, p: (m.distributions.Dirichlet(p["a"]), m.distributions.Dirichlet(p["b"])),
     {"a": pos(2, 4), "b": pos(4)}),
    ("Exponential", lambda m, p: (m.distributions.Exponential(p["a"]), m.distributions.Exponential(p["b"])),
     {"a": pos(3), "b": pos(3)}),
    ("Laplace", lambda m, p: (m.distributions.Laplace(p["a"], p["b"]), m.distributions.Laplace(p["c"], p["d"])),
     {"a": real(3), "b": pos(3), "c": real(3), "d": pos(3)}),
    ("IndependentNormal", lambda m, p: (
        m.distributions.Independent(m.distributions.Normal(p["a"], p["b"]), 1),
        m.distributions.Independent(m.distributions.Normal(p["c"], p["d"]), 1)),
     {"a": real(2, 3), "b": pos(2, 3), "c": real(2, 3), "d": pos(2, 3)}),
    ("OneHotCategorical", lambda m, p: (m.distributions.OneHotCategorical(probs=p["a"]),
                                        m.distributions.OneHotCategorical(logits=p["b"])),
     {"a": simplex(2, 4), "b": real(2, 4)}),
    ("Poisson", lambda m, p: (m.distributions.Poisson(p["a"]), m.distributions.Poisson(p["b"])),
     {"a": pos(3), "b": pos(3)}),
    ("Geometric", lambda m, p: (m.distributions.Geometric(p["a"]), m.distributions.Geometric(p["b"])),
     {"a": unit(3), "b": unit(3)}),
    ("Binomial", lambda m, p: (m.distributions.Binomial(7, p["a"]), m.distributions.Binomial(7, p["b"])),
     {"a": unit(3), "b": unit(3)}),
    ("LowRankMVN-MVN", lambda m, p: (m.distributions.LowRankMultivariateNormal(p["l1"], p["f"], p["d"]),
                                     m.distributions.MultivariateNormal(p["l2"], covariance_matrix=p["c2"])),
     {"l1": real(3), "f": real(3, 2), "d": pos(3), "l2": real(3), "c2": spd()}),
    ("Normal-Laplace", lambda m, p: (m.distributions.Normal(p["a"], p["b"]),
                                     m.distributions.Laplace(p["c"], p["d"])),
     {"a": real(3), "b": pos(3), "c": real(3), "d": pos(3)}),
    ("Beta-Uniform", lambda m, p: (m.distributions.Beta(p["a"], p["b"]),
                                   m.distributions.Uniform(p["c"] * 0 - 0.1, p["c"] * 0 + 1.5)),
     {"a": pos(3), "b": pos(3), "c": real(3)}),
    ("Exponential-Gamma", lambda m, p: (m.distributions.Exponential(p["a"]),
                                        m.distributions.Gamma(p["b"], p["c"])),
     {"a": pos(3), "b": pos(3), "c": pos(3)}),
    ("Gumbel", lambda m, p: (m.distributions.Gumbel(p["a"], p["b"]), m.distributions.Gumbel(p["c"], p["d"])),
     {"a": real(3), "b": pos(3), "c": real(3), "d": pos(3)}),
    ("HalfNormal", lambda m, p: (m.distributions.HalfNormal(p["a"]), m.distributions.HalfNormal(p["b"])),
     {"a": pos(3), "b": pos(3)}),
    ("LowRank-LowRank", lambda m, p: (m.distributions.LowRankMultivariateNormal(p["l1"], p["f"], p["d"]),
                                      m.distributions.LowRankMultivariateNormal(p["l2"], p["g"], p["e"])),
     {"l1": real(2, 3), "f": real(3, 2), "d": pos(3), "l2": real(3), "g": real(3, 1), "e": pos(3)}),
    ("MVN-LowRank", lambda m, p: (m.distributions.MultivariateNormal(p["l1"], scale_tril=p["t"]),
                                  m.distributions.LowRankMultivariateNormal(p["l2"], p["g"], p["e"])),
     {"l1": real(3), "t": tril(), "l2": real(3), "g": real(3, 2), "e": pos(3)}),
    ("Pareto", lambda m, p: (m.distributions.Pareto(p["a"], p["b"]), m.distributions.Pareto(p["c"], p["d"])),
     {"a": pos(3, lo=1.0, hi=1.5), "b": pos(3), "c": pos(3, lo=0.5, hi=1.0), "d": pos(3)}),
    ("ContinuousBernoulli", lambda m, p: (m.distributions.ContinuousBernoulli(p["a"]),
                                          m.distributions.ContinuousBernoulli(p["b"])),
     {"a": unit(3), "b": unit(3)}),
    ("Uniform-Normal", lambda m, p: (m.distributions.Uniform(p["a"], p["a"] + p["b"]),
                                     m.distributions.Normal(p["c"], p["d"])),
     {"a": real(3), "b": pos(3), "c": real(3), "d": pos(3)}),
    ("Gamma-Normal", lambda m, p: (m.distributions.Gamma(p["a"], p["b"]), m.distributions.Normal(p["c"], p["d"])),
     {"a": pos(3), "b": pos(3), "c": real(3), "d": pos(3)}),
    ("Beta-Normal", lambda m, p: (m.distributions.Beta(p["a"], p["b"]), m.distributions.Normal(p["c"], p["d"])),
     {"a": pos(3), "b": pos(3), "c": real(3), "d": pos(3)}),
    ("Categorical", lambda m, p: (m.distributions.Categorical(logits=p["a"]), m.distributions.Categorical(p["b"])),
     {"a": real(2, 5), "b": simplex(5)}),
    ("Bernoulli-Poisson", lambda m, p: (m.distributions.Bernoulli(p["a"]), m.distributions.Poisson(p["b"])),
     {"a": unit(3), "b": pos(3)}),
    ("Normal-Gumbel", lambda m, p: (m.distributions.Normal(p["a"], p["b"]), m.distributions.Gumbel(p["c"], p["d"])),
     {"a": real(3), "b": pos(3), "c": real(3), "d": pos(3)}),
    ("TransformedSame", lambda m, p: (
        m.distributions.LogNormal(p["a"], p["b"]), m.distributions.LogNormal(p["c"], p["d"])),
     {"a": real(3), "b": pos(3), "c": real(3), "d": pos(3)}),
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("pair", KL_PAIRS, ids=[p[0] for p in KL_PAIRS])
def test_kl_divergence(pair, dtype):
    name, ctor, params = pair
    res = []
    for m in (torch, kiln):
        ts = {k: m.tensor(v, dtype=getattr(m, dtype), requires_grad=True) for k, v in params.items()}
        p, q = ctor(m, ts)
        kl = m.distributions.kl_divergence(p, q)
        grads = m.autograd.grad(kl.sum(), list(ts.values()), allow_unused=True)
        res.append((kl, grads))
    close(res[0][0], res[1][0], dtype, f"kl {name}")
    for a, b in zip(res[0][1], res[1][1]):
        assert (a is None) == (b is None)
        if a is not None:
            close(a, b, dtype, f"kl {name} grad")


def test_kl_not_implemented():
    for m in (torch, kiln):
        D = m.distributions
        with pytest.raises(NotImplementedError):
            D.kl_divergence(D.Poisson(m.tensor([1.0])), D.Cauchy(m.tensor([0.0]), m.tensor([1.0])))


# ------------------------------------------------------------------ validation
BAD = [
    ("Exponential", lambda m: m.distributions.Exponential(m.tensor([1.0, -1.0]))),
    ("Gamma", lambda m: m.distributions.Gamma(m.tensor([1.0, 0.0]), m.tensor(1.0))),
    ("Beta", lambda m: m.distributions.Beta(m.tensor([1.0]), m.tensor([-2.0]))),
    ("Dirichlet", lambda m: m.distributions.Dirichlet(m.tensor([1.0, -0.5]))),
    ("Dirichlet0d", lambda m: m.distributions.Dirichlet(m.tensor(1.0))),
    ("Laplace", lambda m: m.distributions.Laplace(m.tensor(0.0), m.tensor(-1.0))),
    ("StudentT", lambda m: m.distributions.StudentT(m.tensor(-1.0))),
    ("Poisson", lambda m: m.distributions.Poisson(m.tensor([-1.0]))),
    ("Binomial", lambda m: m.distributions.Binomial(5, m.tensor([1.5]))),
    ("BinomialBoth", lambda m: m.distributions.Binomial(5, m.tensor([0.5]), m.tensor([0.0]))),
    ("Geometric", lambda m: m.distributions.Geometric(m.tensor([0.0]))),
    ("Multinomial", lambda m: m.distributions.Multinomial(3, m.tensor([0.5, -0.5]))),
    ("OneHot", lambda m: m.distributions.OneHotCategorical(m.tensor([0.5, -0.5]))),
    ("MVNnone", lambda m: m.distributions.MultivariateNormal(m.zeros(2))),
    ("MVNtwo", lambda m: m.distributions.MultivariateNormal(m.zeros(2), m.eye(2), scale_tril=m.eye(2))),
    ("MVN0d", lambda m: m.distributions.MultivariateNormal(m.tensor(0.0), m.eye(1))),
    ("MVNnotpd", lambda m: m.distributions.MultivariateNormal(m.zeros(2), m.tensor([[1.0, 2.0], [2.0, 1.0]]))),
    ("MVNtril", lambda m: m.distributions.MultivariateNormal(m.zeros(2),
                                                             scale_tril=m.tensor([[1.0, 0.0], [0.5, -1.0]]))),
    ("MVNcov1d", lambda m: m.distributions.MultivariateNormal(m.zeros(2), m.ones(2))),
    ("Independent", lambda m: m.distributions.Independent(m.distributions.Normal(m.zeros(2), m.ones(2)), 2)),
    ("HalfNormal", lambda m: m.distributions.HalfNormal(m.tensor(0.0))),
    ("LogNormal", lambda m: m.distributions.LogNormal(m.tensor(0.0), m.tensor(-0.5))),
    ("Chi2", lambda m: m.distributions.Chi2(m.tensor([-3.0]))),
    ("Mixture", lambda m: m.distributions.MixtureSameFamily(
        m.distributions.Categorical(m.ones(3) / 3), m.distributions.Normal(m.zeros(4), m.ones(4)))),
    ("MixtureType", lambda m: m.distributions.MixtureSameFamily(m.ones(3), m.distributions.Normal(m.zeros(3),
                                                                                                  m.ones(3)))),
    ("LowRank", lambda m: m.distributions.LowRankMultivariateNormal(m.zeros(2), m.ones(2, 1), -m.ones(2))),
    ("Cauchy", lambda m: m.distributions.Cauchy(m.tensor(0.0), m.tensor(0.0))),
    ("Gumbel", lambda m: m.distributions.Gumbel(m.tensor(0.0), m.tensor(-1.0))),
]


@pytest.mark.parametrize("bad", BAD, ids=[b[0] for b in BAD])
def test_invalid_parameters_raise_as_torch(bad):
    kinds = []
    for m in (torch, kiln):
        try:
            bad[1](m)
            kinds.append(None)
        except Exception as e:  # noqa: BLE001  (the same exception type is what is compared)
            kinds.append((type(e), str(e).split("(")[0].split(":")[0].replace("torch", "kiln")))
    assert kinds[0] is not None, "torch accepted it"
    # the same type (torch's LinAlgError and kiln's are both RuntimeErrors named _LinAlgError)
    assert kinds[1] is not None and kinds[1][0].__name__ == kinds[0][0].__name__, kinds
    assert issubclass(kinds[1][0], kinds[0][0].__mro__[1] if kinds[0][0].__module__ != "builtins" else kinds[0][0])
    assert kinds[1][1] == kinds[0][1], kinds


OUTSIDE = [
    ("Exponential", lambda m: m.distributions.Exponential(m.ones(2)), lambda m: m.tensor([1.0, -1.0])),
    ("Beta", lambda m: m.distributions.Beta(m.ones(2), m.ones(2)), lambda m: m.tensor([0.5, 1.5])),
    ("Dirichlet", lambda m: m.distributions.Dirichlet(m.ones(3)), lambda m: m.tensor([0.5, 0.6, 0.1])),
    ("Poisson", lambda m: m.distributions.Poisson(m.ones(2)), lambda m: m.tensor([1.5, 2.0])),
    ("Binomial", lambda m: m.distributions.Binomial(3, m.ones(2) / 2), lambda m: m.tensor([4.0, 1.0])),
    ("MVNshape", lambda m: m.distributions.MultivariateNormal(m.zeros(3), m.eye(3)), lambda m: m.zeros(2)),
    ("OneHot", lambda m: m.distributions.OneHotCategorical(m.ones(3) / 3), lambda m: m.tensor([1.0, 1.0, 0.0])),
    ("Multinomial", lambda m: m.distributions.Multinomial(2, m.ones(3) / 3), lambda m: m.tensor([3.0, 0.0, 0.0])),
    ("Tanh", lambda m: m.distributions.TransformedDistribution(
        m.distributions.Normal(m.zeros(2), m.ones(2)), [m.distributions.transforms.TanhTransform()]),
     lambda m: m.tensor([0.5, 1.5])),
    ("Gamma", lambda m: m.distributions.Gamma(m.ones(2), m.ones(2)), lambda m: m.tensor([-0.5, 1.0])),
    ("Normal", lambda m: m.distributions.Normal(m.ones(2), m.ones(2)), lambda m: 1.0),
]


@pytest.mark.parametrize("case", OUTSIDE, ids=[c[0] for c in OUTSIDE])
def test_log_prob_outside_support_raises(case):
    _, ctor, value = case
    for m in (torch, kiln):
        with pytest.raises(ValueError):
            ctor(m).log_prob(value(m))


def test_validate_args_off_and_default():
    for m in (torch, kiln):
        D = m.distributions
        D.Gamma(m.tensor([-1.0]), m.tensor([1.0]), validate_args=False)
        D.MultivariateNormal(m.zeros(2), scale_tril=m.tensor([[1.0, 0.0], [0.5, -1.0]]), validate_args=False)
        D.Distribution.set_default_validate_args(False)
        try:
            D.Beta(m.tensor([-1.0]), m.tensor([1.0]))
        finally:
            D.Distribution.set_default_validate_args(True)


# ------------------------------------------------------------------ transforms and the registry
def test_transforms_and_registry():
    for dtype in DTYPES:
        x = real(2, 3)
        res = []
        for m in (torch, kiln):
            T = m.distributions.transforms
            C = m.distributions.constraints
            xt = m.tensor(x, dtype=getattr(m, dtype))
            out = []
            for t in [T.ExpTransform(), T.AffineTransform(0.5, 2.0), T.SigmoidTransform(), T.TanhTransform(),
                      T.ComposeTransform([T.AffineTransform(1.0, -0.5), T.ExpTransform()]), T.SoftmaxTransform(),
                      T.StickBreakingTransform(), T.PowerTransform(2.0), T.AbsTransform(),
                      T.ExpTransform().inv, T.SigmoidTransform().inv]:
                src = xt
                if isinstance(t, (T.PowerTransform,)) or (isinstance(t, T._InverseTransform)):
                    src = xt.abs() + 0.1 if isinstance(t.inv if hasattr(t, "inv") else t, T.ExpTransform) else xt
                if isinstance(t, T._InverseTransform) and isinstance(t.inv, T.SigmoidTransform):
                    src = xt.sigmoid()
                if isinstance(t, T.PowerTransform):
                    src = xt.abs() + 0.1
                y = t(src)
                out.append(y)
                if not isinstance(t, (T.AbsTransform, T.SoftmaxTransform)):
                    out.append(t.inv(y))
                if t.bijective and not isinstance(t, T.SoftmaxTransform):
                    out.append(t.log_abs_det_jacobian(src, y))
            for c in [C.positive, C.unit_interval, C.real, C.simplex, C.greater_than(1.0), C.interval(-1.0, 2.0),
                      C.lower_cholesky, C.real_vector, C.independent(C.positive, 1)]:
                tr = m.distributions.transform_to(c)
                src = xt if c.event_dim == 0 else (xt[0] if c is not C.lower_cholesky and
                                                   c is not C.positive_definite else m.tensor(x[:, :2].T @ x[:, :2],
                                                                                          dtype=xt.dtype))
                if c is C.lower_cholesky or c is C.positive_definite:
                    src = m.tensor(np.tril(x[:, :2].T @ x[:, :2]) + 0.1, dtype=xt.dtype)
                y = tr(src)
                assert bool(c.check(y).all())
                out.append(y)
                if c in (C.positive, C.unit_interval, C.real, C.simplex, C.greater_than(1.0)) or c is C.positive:
                    b = m.distributions.biject_to(c)
                    out.append(b(src))
            res.append(out)
        assert len(res[0]) == len(res[1])
        for i, (a, b) in enumerate(zip(*res)):
            close(a, b, dtype, f"transform output {i}")
    T = kiln.distributions.transforms
    t = T.ComposeTransform([T.AffineTransform(0.0, 2.0), T.ExpTransform()])
    assert t.domain.event_dim == 0 and t.codomain is not None
    assert T.identity_transform(kiln.ones(2)).tolist() == [1.0, 1.0]
    assert T.ExpTransform() == T.ExpTransform() and T.ExpTransform().inv.inv == T.ExpTransform()
    assert T.TanhTransform().sign == 1 and T.AffineTransform(0.0, -2.0).sign == -1


def test_tanh_cache_and_sac_policy():
    """SAC's squashed Gaussian: rsample then log_prob of the same value (through the cache) and the
    gradients of the policy loss, under both libraries."""
    res = []
    mu0, ls0 = real(5, 2), real(5, 2) * 0.3
    for m in (torch, kiln):
        m.manual_seed(0)
        D = m.distributions
        mu = m.tensor(mu0, dtype=m.float32, requires_grad=True)
        log_std = m.tensor(ls0, dtype=m.float32, requires_grad=True)
        base = D.Normal(mu, log_std.exp())
        pi = D.TransformedDistribution(base, [D.transforms.TanhTransform(cache_size=1)])
        m.manual_seed(9)
        a = pi.rsample()
        logp = pi.log_prob(a).sum(-1)
        loss = (0.2 * logp - a.pow(2).sum(-1)).mean()
        g = m.autograd.grad(loss, [mu, log_std])
        res.append([a, logp, loss] + list(g))
        ind = D.Independent(D.Normal(mu, log_std.exp()), 1)
        res[-1].append(ind.log_prob(a.detach()))
    for a, b in zip(*res):
        close(a, b, "float32")


# ------------------------------------------------------------------ an end-to-end PPO update
class _ActorCritic:
    def __init__(self, m, obs_dim, act_dim):
        nn = m.nn
        m.manual_seed(0)
        self.actor = nn.Sequential(nn.Linear(obs_dim, 32), nn.Tanh(), nn.Linear(32, act_dim))
        self.critic = nn.Sequential(nn.Linear(obs_dim, 32), nn.Tanh(), nn.Linear(32, 1))
        self.log_std = nn.Parameter(m.full((act_dim,), -0.5))
        self.m = m

    def parameters(self):
        return list(self.actor.parameters()) + list(self.critic.parameters()) + [self.log_std]

    def dist(self, obs):
        mu = self.actor(obs)
        cov = m_diag = self.m.diag(self.log_std.exp().pow(2))
        del m_diag
        return self.m.distributions.MultivariateNormal(mu, covariance_matrix=cov)


def _ppo(m):
    obs_dim, act_dim, n = 4, 2, 64
    ac = _ActorCritic(m, obs_dim, act_dim)
    opt = m.optim.Adam(ac.parameters(), lr=3e-3)
    m.manual_seed(1)
    obs = m.randn(n, obs_dim)
    with m.no_grad():
        d = ac.dist(obs)
        act = d.sample()
        old_logp = d.log_prob(act)
        values = ac.critic(obs).squeeze(-1)
    rewards = -(act - 0.3 * obs[:, :act_dim]).pow(2).sum(-1)
    adv = rewards - values
    adv = (adv - adv.mean()) / (adv.std() + 1e-8)
    returns = rewards
    losses = []
    for _ in range(3):
        d = ac.dist(obs)
        logp = d.log_prob(act)
        ratio = (logp - old_logp).exp()
        clip = m.clamp(ratio, 0.8, 1.2) * adv
        pi_loss = -m.min(ratio * adv, clip).mean()
        v_loss = (ac.critic(obs).squeeze(-1) - returns).pow(2).mean()
        ent = d.entropy().mean()
        loss = pi_loss + 0.5 * v_loss - 0.01 * ent
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append([float(pi_loss), float(v_loss), float(ent), float(loss)])
    return np.array(losses), act


def test_ppo_multivariate_normal_end_to_end():
    lt, at = _ppo(torch)
    lk, ak = _ppo(kiln)
    np.testing.assert_allclose(np_of(ak), np_of(at), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(lk, lt, rtol=1e-4, atol=1e-5)


# ------------------------------------------------------------------ more end-to-end programs
def _train(m, build, steps=3, lr=1e-2):
    """Runs `steps` Adam steps of the loss build(m, params, step) returns; the losses."""
    m.manual_seed(0)
    params, loss_fn = build(m)
    opt = m.optim.Adam(params, lr=lr)
    out = []
    for step in range(steps):
        m.manual_seed(100 + step)
        loss = loss_fn(step)
        opt.zero_grad()
        loss.backward()
        opt.step()
        out.append(float(loss))
    return np.array(out), [np_of(p) for p in params]


def _vae(m):
    nn, D = m.nn, m.distributions
    enc, dec = nn.Linear(6, 4), nn.Linear(2, 6)
    x = m.rand(16, 6)

    def loss(step):
        h = enc(x)
        q = D.Independent(D.Normal(h[:, :2], F_softplus(m, h[:, 2:]) + 1e-3), 1)
        prior = D.Independent(D.Normal(m.zeros(16, 2), m.ones(16, 2)), 1)
        z = q.rsample()
        px = D.Independent(D.Bernoulli(logits=dec(z)), 1)
        return -(px.log_prob(x.round()) - D.kl_divergence(q, prior)).mean()
    return list(enc.parameters()) + list(dec.parameters()), loss


def F_softplus(m, x):
    return m.nn.functional.softplus(x)


def _mdn(m):
    nn, D = m.nn, m.distributions
    net = nn.Sequential(nn.Linear(1, 16), nn.Tanh(), nn.Linear(16, 9))
    x = m.linspace(-1, 1, 32).unsqueeze(-1)
    y = (3 * x).sin().squeeze(-1) + 0.1 * m.randn(32)

    def loss(step):
        out = net(x)
        mix = D.Categorical(logits=out[:, :3])
        comp = D.Normal(out[:, 3:6], F_softplus(m, out[:, 6:]) + 1e-3)
        gmm = D.MixtureSameFamily(mix, comp)
        return -gmm.log_prob(y).mean() + 0 * gmm.sample().sum()
    return list(net.parameters()), loss


def _beta_policy(m):
    nn, D = m.nn, m.distributions
    net = nn.Sequential(nn.Linear(3, 16), nn.Tanh(), nn.Linear(16, 4))
    obs = m.randn(32, 3)
    with m.no_grad():
        out = F_softplus(m, net(obs)) + 1.0
        old = D.Independent(D.Beta(out[:, :2], out[:, 2:]), 1)
        act = old.sample()
        old_logp = old.log_prob(act)
    adv = (act - 0.5).pow(2).sum(-1) - 0.1

    def loss(step):
        out = F_softplus(m, net(obs)) + 1.0
        pi = D.Independent(D.Beta(out[:, :2], out[:, 2:]), 1)
        ratio = (pi.log_prob(act) - old_logp).exp()
        return -m.min(ratio * adv, ratio.clamp(0.8, 1.2) * adv).mean() - 0.01 * pi.entropy().mean()
    return list(net.parameters()), loss


def _gamma_vi(m):
    """Variational inference for a Poisson rate with a Gamma posterior (reparameterized through
    _standard_gamma), a Gamma prior and the analytic kl."""
    D = m.distributions
    log_a = m.tensor([0.3], requires_grad=True)
    log_b = m.tensor([-0.2], requires_grad=True)
    data = m.tensor([3.0, 5.0, 2.0, 4.0, 6.0])

    def loss(step):
        q = D.Gamma(log_a.exp(), log_b.exp())
        rate = q.rsample((8,))
        ll = D.Poisson(rate).log_prob(data).sum(-1).mean()
        return -(ll - D.kl_divergence(q, D.Gamma(m.tensor([2.0]), m.tensor([0.5]))).sum())
    return [log_a, log_b], loss


@pytest.mark.parametrize("build", [_vae, _mdn, _beta_policy, _gamma_vi], ids=["vae", "mdn", "beta_ppo", "gamma_vi"])
def test_training_programs_match_torch(build):
    lt, pt = _train(torch, build)
    lk, pk = _train(kiln, build)
    np.testing.assert_allclose(lk, lt, rtol=1e-4, atol=1e-5)
    for a, b in zip(pk, pt):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)


def test_more_transforms():
    x = real(2, 6)
    res = []
    for m in (torch, kiln):
        T = m.distributions.transforms
        xt = m.tensor(x)
        out = []
        for t in [T.SoftplusTransform(), T.LowerCholeskyTransform(), T.CorrCholeskyTransform(),
                  T.ReshapeTransform((6,), (2, 3)), T.IndependentTransform(T.ExpTransform(), 1),
                  T.CatTransform([T.ExpTransform(), T.AffineTransform(1., 2.)], dim=1, lengths=[3, 3]),
                  T.StackTransform([T.ExpTransform(), T.SigmoidTransform()], dim=0),
                  T.CumulativeDistributionTransform(m.distributions.Normal(0., 1.))]:
            src = xt
            if isinstance(t, T.LowerCholeskyTransform):
                src = xt.reshape(2, 2, 3)[..., :2]
            if isinstance(t, T.CorrCholeskyTransform):
                src = xt[:, :3]
            y = t(src)
            out += [y, t.inv(y), t.log_abs_det_jacobian(src, y) if t.bijective else y]
        res.append(out)
    for i, (a, b) in enumerate(zip(*res)):
        close(a, b, "float64", f"transform {i}")
