"""kl_divergence(p, q) = E_p[log p(X) - log q(X)], in closed form for the pairs registered here. The
pair is looked up by the classes of p and q, the most specific registered match winning (so a
LogNormal pair uses the rule for two TransformedDistributions)."""
import math

import kiln
import kiln.nn.functional as F

from .bernoulli import Bernoulli
from .categorical import Categorical
from .counts import Binomial, Geometric, OneHotCategorical, Poisson
from .gamma import Beta, Dirichlet, Gamma
from .location_scale import Exponential, Laplace
from .multivariate_normal import LowRankMultivariateNormal, MultivariateNormal
from .normal import Normal
from .relaxed import ContinuousBernoulli
from .transformed import Gumbel, Pareto
from .uniform import Uniform
from .utils import sum_rightmost
from .wrappers import Independent, TransformedDistribution

_KL_REGISTRY = {}
_EULER_GAMMA = 0.57721566490153286060


def register_kl(type_p, type_q):
    """Decorator: registers fun(p, q) as the KL divergence of a type_p from a type_q."""
    def decorator(fun):
        _KL_REGISTRY[type_p, type_q] = fun
        return fun
    return decorator


def _lookup(type_p, type_q):
    mro_p, mro_q = type_p.__mro__, type_q.__mro__
    best, best_rank = None, None
    for (a, b), fun in _KL_REGISTRY.items():
        if a in mro_p and b in mro_q:
            rank = (mro_p.index(a), mro_q.index(b))
            if best_rank is None or rank < best_rank:
                best, best_rank = fun, rank
    return best


def kl_divergence(p, q):
    fun = _lookup(type(p), type(q))
    if fun is None:
        raise NotImplementedError(f"No KL(p || q) is implemented for p type {p.__class__.__name__} and q type "
                                  f"{q.__class__.__name__}")
    return fun(p, q)


def _infinite_where(value, mask):
    return kiln.where(mask, kiln.full_like(value, math.inf), value)


# ------------------------------------------------------------------ continuous, one dimension
@register_kl(Normal, Normal)
def _normal_normal(p, q):
    var_ratio = (p.scale / q.scale).pow(2)
    shift = ((p.loc - q.loc) / q.scale).pow(2)
    return 0.5 * (var_ratio + shift - 1 - var_ratio.log())


@register_kl(Uniform, Uniform)
def _uniform_uniform(p, q):
    result = ((q.high - q.low) / (p.high - p.low)).log()
    return _infinite_where(result, (q.low > p.low) | (q.high < p.high))


@register_kl(Exponential, Exponential)
def _exponential_exponential(p, q):
    ratio = q.rate / p.rate
    return ratio - 1 - ratio.log()


@register_kl(Laplace, Laplace)
def _laplace_laplace(p, q):
    scale_ratio = p.scale / q.scale
    dist = (p.loc - q.loc).abs()
    return -scale_ratio.log() + dist / q.scale + scale_ratio * kiln.exp(-dist / p.scale) - 1


@register_kl(Gamma, Gamma)
def _gamma_gamma(p, q):
    a, b, c, d = p.concentration, p.rate, q.concentration, q.rate
    return (c * (b / d).log() + kiln.lgamma(c) - kiln.lgamma(a) + (a - c) * kiln.digamma(a)
            + (d - b) * (a / b))


@register_kl(Beta, Beta)
def _beta_beta(p, q):
    a1, b1, a2, b2 = p.concentration1, p.concentration0, q.concentration1, q.concentration0
    s1, s2 = a1 + b1, a2 + b2
    log_norms = (kiln.lgamma(a2) + kiln.lgamma(b2) + kiln.lgamma(s1)
                 - kiln.lgamma(a1) - kiln.lgamma(b1) - kiln.lgamma(s2))
    return log_norms + (a1 - a2) * kiln.digamma(a1) + (b1 - b2) * kiln.digamma(b1) + (s2 - s1) * kiln.digamma(s1)


@register_kl(Dirichlet, Dirichlet)
def _dirichlet_dirichlet(p, q):
    a, b = p.concentration, q.concentration
    a0 = a.sum(-1)
    expected_log = kiln.digamma(a) - kiln.digamma(a0).unsqueeze(-1)
    return (kiln.lgamma(a0) - kiln.lgamma(b.sum(-1)) - (kiln.lgamma(a) - kiln.lgamma(b)).sum(-1)
            + ((a - b) * expected_log).sum(-1))


@register_kl(Gumbel, Gumbel)
def _gumbel_gumbel(p, q):
    ratio = p.scale / q.scale
    shift = (p.loc - q.loc) / q.scale
    return -ratio.log() + shift + ratio * _EULER_GAMMA + kiln.exp(kiln.lgamma(1 + ratio) - shift) - (1 + _EULER_GAMMA)


@register_kl(Pareto, Pareto)
def _pareto_pareto(p, q):
    alpha_ratio = q.alpha / p.alpha
    result = q.alpha * (p.scale / q.scale).log() - alpha_ratio.log() + alpha_ratio - 1
    return _infinite_where(result, p.support.lower_bound < q.support.lower_bound)


@register_kl(ContinuousBernoulli, ContinuousBernoulli)
def _cb_cb(p, q):
    return (p.mean * (p.logits - q.logits) + p._log_normalizer() + kiln.log1p(-p.probs)
            - q._log_normalizer() - kiln.log1p(-q.probs))


# ------------------------------------------------------------------ across families
def _normal_cross_entropy(second_moment_about, q):
    """-E_p[log N(X; q.loc, q.scale)] given E_p[(X - q.loc)^2]."""
    return 0.5 * kiln.log(2 * math.pi * q.scale.pow(2)) + second_moment_about / (2 * q.scale.pow(2))


@register_kl(Normal, Laplace)
def _normal_laplace(p, q):
    d = p.loc - q.loc
    # E|X - q.loc| for X ~ N(p.loc, p.scale^2)
    mean_abs = (math.sqrt(2 / math.pi) * p.scale * kiln.exp(-0.5 * (d / p.scale).pow(2))
                + d * kiln.erf(d / (math.sqrt(2) * p.scale)))
    return -(p.scale / q.scale).log() + mean_abs / q.scale - 0.5 * (1 + math.log(0.5 * math.pi))


@register_kl(Normal, Gumbel)
def _normal_gumbel(p, q):
    shift = (p.loc - q.loc) / q.scale
    return (-p.entropy() + q.scale.log() + shift
            + kiln.exp(-shift + 0.5 * (p.scale / q.scale).pow(2)))


@register_kl(Uniform, Normal)
def _uniform_normal(p, q):
    width = p.high - p.low
    second = width.pow(2) / 12 + ((p.high + p.low) / 2 - q.loc).pow(2)
    return -width.log() + _normal_cross_entropy(second, q)


@register_kl(Gamma, Normal)
def _gamma_normal(p, q):
    mean = p.concentration / p.rate
    second = p.concentration / p.rate.pow(2) + (mean - q.loc).pow(2)
    return -p.entropy() + _normal_cross_entropy(second, q)


@register_kl(Beta, Normal)
def _beta_normal(p, q):
    second = p.variance + (p.mean - q.loc).pow(2)
    return -p.entropy() + _normal_cross_entropy(second, q)


@register_kl(Beta, Uniform)
def _beta_uniform(p, q):
    result = -p.entropy() + (q.high - q.low).log()
    return _infinite_where(result, (q.low > 0) | (q.high < 1))


@register_kl(Exponential, Gamma)
def _exponential_gamma(p, q):
    ratio = q.rate / p.rate
    c = q.concentration
    return -c * ratio.log() + ratio + kiln.lgamma(c) + c * _EULER_GAMMA - (1 + _EULER_GAMMA)


# ------------------------------------------------------------------ discrete
@register_kl(Bernoulli, Bernoulli)
def _bernoulli_bernoulli(p, q):
    t1 = p.probs * (F.softplus(-q.logits) - F.softplus(-p.logits))
    t1 = kiln.where(p.probs == 0, kiln.zeros_like(t1), _infinite_where(t1, q.probs == 0))
    t2 = (1 - p.probs) * (F.softplus(q.logits) - F.softplus(p.logits))
    t2 = kiln.where(p.probs == 1, kiln.zeros_like(t2), _infinite_where(t2, q.probs == 1))
    return t1 + t2


@register_kl(Categorical, Categorical)
def _categorical_categorical(p, q):
    t = p.probs * (p.logits - q.logits)
    t = _infinite_where(t, (q.probs == 0).expand_as(t))
    t = kiln.where((p.probs == 0).expand_as(t), kiln.zeros_like(t), t)
    return t.sum(-1)


@register_kl(OneHotCategorical, OneHotCategorical)
def _onehot_onehot(p, q):
    return _categorical_categorical(p._categorical, q._categorical)


@register_kl(Poisson, Poisson)
def _poisson_poisson(p, q):
    return p.rate * (p.rate.log() - q.rate.log()) - (p.rate - q.rate)


@register_kl(Geometric, Geometric)
def _geometric_geometric(p, q):
    return -p.entropy() - kiln.log1p(-q.probs) / p.probs - q.logits


@register_kl(Binomial, Binomial)
def _binomial_binomial(p, q):
    if bool((p.total_count < q.total_count).any()):
        raise NotImplementedError("KL between Binomials where q.total_count > p.total_count is not implemented")
    kl = p.total_count * (p.probs * (p.logits - q.logits) + (-p.probs).log1p() - (-q.probs).log1p())
    return _infinite_where(kl, p.total_count > q.total_count)


@register_kl(Bernoulli, Poisson)
def _bernoulli_poisson(p, q):
    return -p.entropy() - p.probs * q.rate.log() + q.rate


# ------------------------------------------------------------------ Gaussians over vectors
def _gaussian(d):
    """(loc, an unbroadcast lower Cholesky factor of the covariance) of an MVN or low-rank MVN."""
    if isinstance(d, MultivariateNormal):
        return d.loc, d._unbroadcasted_scale_tril
    w, diag = d._unbroadcasted_cov_factor, d._unbroadcasted_cov_diag
    return d.loc, kiln.linalg.cholesky(w @ w.mT + kiln.diag_embed(diag))


def _gaussian_gaussian(p, q):
    if tuple(p.event_shape) != tuple(q.event_shape):
        raise ValueError("KL-divergence between two Multivariate Normals with different event shapes cannot "
                         "be computed")
    loc_p, lp = _gaussian(p)
    loc_q, lq = _gaussian(q)
    n = p.event_shape[0]
    batch = kiln.broadcast_shapes(tuple(lp.shape[:-2]), tuple(lq.shape[:-2]), tuple(loc_p.shape[:-1]),
                                  tuple(loc_q.shape[:-1]))
    lp_b, lq_b = lp.expand(tuple(batch) + (n, n)), lq.expand(tuple(batch) + (n, n))
    half_log_det = (lq.diagonal(dim1=-2, dim2=-1).log().sum(-1) - lp.diagonal(dim1=-2, dim2=-1).log().sum(-1))
    trace = kiln.linalg.solve_triangular(lq_b, lp_b, upper=False).pow(2).sum((-2, -1))
    diff = (loc_q - loc_p).expand(tuple(batch) + (n,))
    maha = kiln.linalg.solve_triangular(lq_b, diff.unsqueeze(-1), upper=False).squeeze(-1).pow(2).sum(-1)
    return half_log_det + 0.5 * (trace + maha - n)


for _p in (MultivariateNormal, LowRankMultivariateNormal):
    for _q in (MultivariateNormal, LowRankMultivariateNormal):
        register_kl(_p, _q)(_gaussian_gaussian)


# ------------------------------------------------------------------ wrappers
@register_kl(Independent, Independent)
def _independent_independent(p, q):
    if p.reinterpreted_batch_ndims != q.reinterpreted_batch_ndims:
        raise NotImplementedError
    return sum_rightmost(kl_divergence(p.base_dist, q.base_dist), p.reinterpreted_batch_ndims)


@register_kl(TransformedDistribution, TransformedDistribution)
def _transformed_transformed(p, q):
    if p.transforms != q.transforms or tuple(p.event_shape) != tuple(q.event_shape):
        raise NotImplementedError
    extra = len(p.event_shape) - len(p.base_dist.event_shape)
    return sum_rightmost(kl_divergence(p.base_dist, q.base_dist), extra)
