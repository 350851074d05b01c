"""kiln.distributions (Categorical, Normal, Bernoulli) against torch.distributions: with the same seed the
same samples, and the same log_prob, entropy, moments and gradients; invalid parameters and samples raise
ValueError as torch's validation does."""
import numpy as np
import pytest
import torch

import kiln


def both(fn):
    out = []
    for m in (torch, kiln):
        m.manual_seed(7)
        out.append(fn(m))
    return out


def np_of(t):
    return t.detach().numpy()


def assert_same(a, b, exact=True):
    assert a.shape == tuple(b.shape)
    if exact:
        np.testing.assert_array_equal(np_of(b), np_of(a))
    else:
        np.testing.assert_allclose(np_of(b), np_of(a), rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("param", ["probs", "logits"])
@pytest.mark.parametrize("shape", [(4,), (3, 5), (2, 3, 4)])
def test_categorical(param, shape):
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)

    def run(m):
        v = m.tensor(x, requires_grad=True)
        arg = m.softmax(v, -1) if param == "probs" else v
        d = m.distributions.Categorical(**{param: arg})
        s1, s2 = d.sample(), d.sample((6,))
        lp = d.log_prob(s2)
        (lp.sum() + d.entropy().sum()).backward()
        return [s1, s2, lp, d.entropy(), d.probs, d.logits, v.grad, d.enumerate_support()], d.batch_shape

    (rt, bt), (rk, bk) = both(run)
    assert tuple(bk) == tuple(bt)
    for a, b in zip(rt[:2], rk[:2]):  # multinomial draws
        assert_same(a, b)
    for a, b in zip(rt[2:], rk[2:]):
        assert_same(a, b, exact=False)


def test_categorical_policy_step():
    """reinforce.py's select_action: Categorical(probs).sample() then log_prob of it, many times."""
    def run(m):
        lin = m.nn.Linear(4, 2)
        actions, lps = [], []
        for _ in range(50):
            probs = m.nn.functional.softmax(lin(m.randn(1, 4)), dim=1)
            c = m.distributions.Categorical(probs)
            a = c.sample()
            actions.append(a.item())
            lps.append(c.log_prob(a))
        m.cat(lps).sum().backward()
        return actions, m.cat(lps), lin.weight.grad

    (at, lt, gt), (ak, lk, gk) = both(run)
    assert ak == at
    assert_same(lt, lk, exact=False)
    assert_same(gt, gk, exact=False)


def test_normal():
    def run(m):
        loc = m.tensor([0.5, -1.0, 2.0], requires_grad=True)
        scale = m.tensor([1.0, 0.3, 2.5], requires_grad=True)
        d = m.distributions.Normal(loc, scale)
        s, r = d.sample((4,)), d.rsample((2,))
        lp = d.log_prob(r)
        (lp.sum() + d.entropy().sum() + r.sum()).backward()
        d0 = m.distributions.Normal(0.0, 1.0)
        return [s, r, lp, d.entropy(), d.cdf(s), d.mean, d.stddev, d.variance, loc.grad, scale.grad,
                d0.sample((3,)), d0.log_prob(m.tensor(0.5))]

    rt, rk = both(run)
    for a, b in zip(rt[:2], rk[:2]):
        assert_same(a, b)
    for a, b in zip(rt[2:], rk[2:]):
        assert_same(a, b, exact=False)


@pytest.mark.parametrize("param", ["probs", "logits"])
def test_bernoulli(param):
    def run(m):
        v = m.tensor([0.2, 0.7, 0.5, 0.9], requires_grad=True)
        d = m.distributions.Bernoulli(**{param: v})
        s = d.sample((5,))
        lp = d.log_prob(s)
        (lp.sum() + d.entropy().sum()).backward()
        return [s, lp, d.entropy(), d.mean, d.variance, v.grad]

    rt, rk = both(run)
    assert_same(rt[0], rk[0])
    for a, b in zip(rt[1:], rk[1:]):
        assert_same(a, b, exact=False)


def test_validation_errors():
    for m in (torch, kiln):
        D = m.distributions
        with pytest.raises(ValueError):
            D.Categorical(probs=m.tensor([0.5, -0.1, 0.6]))
        with pytest.raises(ValueError):
            D.Categorical()
        with pytest.raises(ValueError):
            D.Categorical(probs=m.tensor([0.5, 0.5]), logits=m.tensor([0.0, 0.0]))
        with pytest.raises(ValueError):
            D.Normal(m.zeros(2), m.tensor([1.0, -1.0]))
        with pytest.raises(ValueError):
            D.Categorical(logits=m.zeros(3)).log_prob(m.tensor(3))  # outside the support
        with pytest.raises(ValueError):
            D.Bernoulli(probs=m.tensor([0.5, 1.5]))
        D.Normal(m.zeros(2), m.tensor([1.0, -1.0]), validate_args=False)  # not checked when told so


def test_uniform():
    def run(m):
        low = m.tensor([0.0, -1.0, 2.0], requires_grad=True)
        high = m.tensor([1.0, 3.0, 2.5], requires_grad=True)
        d = m.distributions.Uniform(low, high)
        s, r = d.sample((4,)), d.rsample((2,))
        lp = d.log_prob(r)
        (lp.sum() + d.entropy().sum() + r.sum()).backward()
        return [s, r, lp, d.entropy(), d.cdf(s), d.mean, d.stddev, d.variance, low.grad, high.grad,
                m.distributions.Uniform(0.0, 2.0).sample((3,))]

    rt, rk = both(run)
    for a, b in zip(rt[:2], rk[:2]):
        assert_same(a, b)
    for a, b in zip(rt[2:], rk[2:]):
        assert_same(a, b, exact=False)
    for m in (torch, kiln):
        with pytest.raises(ValueError):
            m.distributions.Uniform(m.tensor([1.0]), m.tensor([0.5]))


def test_kl_divergence():
    def run(m):
        D = m.distributions
        loc = m.tensor([0.5, -1.0], requires_grad=True)
        out = [D.kl_divergence(D.Normal(loc, m.tensor([1.0, 0.5])), D.Normal(m.zeros(2), m.ones(2)))]
        p = m.tensor([[0.2, 0.8, 0.0], [0.3, 0.3, 0.4]])
        q = m.tensor([[0.5, 0.5, 0.0], [0.1, 0.0, 0.9]])
        out.append(D.kl_divergence(D.Categorical(probs=p), D.Categorical(probs=q)))
        out.append(D.kl_divergence(D.Bernoulli(probs=m.tensor([0.3, 0.0, 1.0])),
                                   D.Bernoulli(probs=m.tensor([0.6, 0.5, 0.5]))))
        out.append(D.kl_divergence(D.Uniform(m.tensor([0.0, 0.0]), m.tensor([1.0, 2.0])),
                                   D.Uniform(m.tensor([-1.0, 0.5]), m.tensor([2.0, 3.0]))))
        out[0].sum().backward()
        out.append(loc.grad)
        with pytest.raises(NotImplementedError):
            D.kl_divergence(D.Normal(0.0, 1.0), D.Bernoulli(probs=m.tensor(0.5)))
        return out

    rt, rk = both(run)
    for a, b in zip(rt, rk):
        assert_same(a, b, exact=False)


def test_tril_vector_utils_match_torch():
    from torch.distributions.utils import tril_matrix_to_vec as t_to_vec, vec_to_tril_matrix as t_to_mat

    from kiln.distributions.utils import tril_matrix_to_vec, vec_to_tril_matrix
    a = np.random.default_rng(1).normal(size=(2, 4, 4))
    for diag in (-1, 0, 1):
        vk, vt = tril_matrix_to_vec(kiln.tensor(a), diag), t_to_vec(torch.tensor(a), diag)
        np.testing.assert_array_equal(vk.numpy(), vt.numpy())
        np.testing.assert_array_equal(vec_to_tril_matrix(vk, diag).numpy(), t_to_mat(vt, diag).numpy())
