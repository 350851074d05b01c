"""Distributions of counts: Poisson, Binomial, Geometric, NegativeBinomial, Multinomial and
OneHotCategorical."""
from numbers import Number

import kiln
import kiln.nn.functional as F

from . import constraints
from .categorical import Categorical
from .distribution import Distribution
from .gamma import Gamma
from .utils import broadcast_all, lazy_property, logits_to_probs, params_shape, probs_to_logits, tiny


def _one_of_probs_logits(probs, logits):
    if (probs is None) == (logits is None):
        raise ValueError("Either `probs` or `logits` must be specified, but not both.")


class _BinaryParametrized(Distribution):
    """A family given by a success probability or, equivalently, its log-odds."""

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self):
        return logits_to_probs(self.logits, is_binary=True)

    @property
    def param_shape(self):
        return self._param.size()


class Poisson(Distribution):
    """P(k) = rate^k exp(-rate) / k!."""
    arg_constraints = {"rate": constraints.nonnegative}
    support = constraints.nonnegative_integer

    def __init__(self, rate, validate_args=None):
        self.rate, = broadcast_all(rate)
        super().__init__(params_shape(rate), validate_args=validate_args)

    @property
    def mean(self):
        return self.rate

    @property
    def mode(self):
        return self.rate.floor()

    @property
    def variance(self):
        return self.rate

    def sample(self, sample_shape=kiln.Size()):
        with kiln.no_grad():
            return kiln.poisson(self.rate.expand(self._extended_shape(sample_shape)))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        rate, value = broadcast_all(self.rate, value)
        return value.xlogy(rate) - rate - (value + 1).lgamma()


def _relu_half(x):
    """max(x, 0), written so that its gradient at x = 0 is 1/2 (the mean of the one-sided slopes)."""
    return (x.clamp(min=0) + x - x.clamp(max=0)) / 2


class Binomial(_BinaryParametrized):
    """Successes among total_count independent trials with success probability probs."""
    arg_constraints = {"total_count": constraints.nonnegative_integer, "probs": constraints.unit_interval,
                       "logits": constraints.real}
    has_enumerate_support = True

    def __init__(self, total_count=1, probs=None, logits=None, validate_args=None):
        _one_of_probs_logits(probs, logits)
        if probs is not None:
            self.total_count, self.probs = broadcast_all(total_count, probs)
            self.total_count = self.total_count.type_as(self.probs)
        else:
            self.total_count, self.logits = broadcast_all(total_count, logits)
            self.total_count = self.total_count.type_as(self.logits)
        self._param = self.probs if probs is not None else self.logits
        super().__init__(self._param.size(), validate_args=validate_args)

    @constraints.dependent_property(is_discrete=True, event_dim=0)
    def support(self):
        return constraints.integer_interval(0, self.total_count)

    @property
    def mean(self):
        return self.total_count * self.probs

    @property
    def mode(self):
        return ((self.total_count + 1) * self.probs).floor().clamp(max=self.total_count)

    @property
    def variance(self):
        return self.total_count * self.probs * (1 - self.probs)

    def sample(self, sample_shape=kiln.Size()):
        shape = self._extended_shape(sample_shape)
        with kiln.no_grad():
            return kiln.binomial(self.total_count.expand(shape), self.probs.expand(shape))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        n, k, logits = self.total_count, value, self.logits
        log_choose = kiln.lgamma(n + 1) - kiln.lgamma(k + 1) - kiln.lgamma(n - k + 1)
        # n log(1 + exp(logits)), written to stay finite for large |logits|
        log_norm = n * _relu_half(logits) + n * kiln.log1p(kiln.exp(-logits.abs()))
        return k * logits + log_choose - log_norm

    def _common_total_count(self, what):
        n = int(self.total_count.max())
        if not bool((self.total_count.min() == n)):
            raise NotImplementedError(f"Inhomogeneous total count not supported by `{what}`.")
        return n

    def entropy(self):
        self._common_total_count("entropy")
        lp = self.log_prob(self.enumerate_support(False))
        return -(kiln.exp(lp) * lp).sum(0)

    def enumerate_support(self, expand=True):
        n = self._common_total_count("enumerate_support")
        values = kiln.arange(1 + n, dtype=self._param.dtype)
        values = values.view((-1,) + (1,) * len(self._batch_shape))
        if expand:
            values = values.expand((-1,) + tuple(self._batch_shape))
        return values


class Geometric(_BinaryParametrized):
    """Failures before the first success: P(k) = (1 - p)^k p."""
    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.nonnegative_integer

    def __init__(self, probs=None, logits=None, validate_args=None):
        _one_of_probs_logits(probs, logits)
        given = probs if probs is not None else logits
        if probs is not None:
            self.probs, = broadcast_all(probs)
        else:
            self.logits, = broadcast_all(logits)
        self._param = self.probs if probs is not None else self.logits
        super().__init__(kiln.Size() if isinstance(given, Number) else self._param.size(),
                         validate_args=validate_args)
        if self._validate_args and probs is not None and not bool((self.probs > 0).all()):
            raise ValueError(f"Expected parameter probs ({type(self.probs).__name__} of shape "
                             f"{tuple(self.probs.shape)}) of distribution {self!r} to be positive but found "
                             f"invalid values:\n{self.probs}")

    @property
    def mean(self):
        return 1.0 / self.probs - 1.0

    @property
    def mode(self):
        return kiln.zeros_like(self.probs)

    @property
    def variance(self):
        return (1.0 / self.probs - 1.0) / self.probs

    def sample(self, sample_shape=kiln.Size()):
        # inversion: floor(log u / log(1 - p)) for u uniform on (tiny, 1)
        with kiln.no_grad():
            u = self.probs.new_empty(self._extended_shape(sample_shape)).uniform_(tiny(self.probs), 1)
            return (u.log() / (-self.probs).log1p()).floor()

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        value, probs = broadcast_all(value, self.probs)
        # p = 1 has 0 * log(0) = 0 at k = 0
        fail = kiln.where((probs == 1) & (value == 0), kiln.zeros_like(probs), probs)
        return value * (-fail).log1p() + self.probs.log()

    def entropy(self):
        return F.binary_cross_entropy_with_logits(self.logits, self.probs, reduction="none") / self.probs


class NegativeBinomial(_BinaryParametrized):
    """Successes before total_count failures, success probability probs; drawn as a Poisson whose
    rate is gamma distributed."""
    arg_constraints = {"total_count": constraints.greater_than_eq(0),
                       "probs": constraints.half_open_interval(0.0, 1.0), "logits": constraints.real}
    support = constraints.nonnegative_integer

    def __init__(self, total_count, probs=None, logits=None, validate_args=None):
        _one_of_probs_logits(probs, logits)
        if probs is not None:
            self.total_count, self.probs = broadcast_all(total_count, probs)
            self.total_count = self.total_count.type_as(self.probs)
        else:
            self.total_count, self.logits = broadcast_all(total_count, logits)
            self.total_count = self.total_count.type_as(self.logits)
        self._param = self.probs if probs is not None else self.logits
        super().__init__(self._param.size(), validate_args=validate_args)

    @property
    def mean(self):
        return self.total_count * self.logits.exp()

    @property
    def mode(self):
        return ((self.total_count - 1) * self.logits.exp()).floor().clamp(min=0.0)

    @property
    def variance(self):
        return self.mean / kiln.sigmoid(-self.logits)

    def sample(self, sample_shape=kiln.Size()):
        with kiln.no_grad():
            rate = Gamma(self.total_count, kiln.exp(-self.logits), validate_args=False).sample(sample_shape)
            return kiln.poisson(rate)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        n = self.total_count
        log_unnormalized = n * F.logsigmoid(-self.logits) + value * F.logsigmoid(self.logits)
        log_normalization = -kiln.lgamma(n + value) + kiln.lgamma(1.0 + value) + kiln.lgamma(n)
        log_normalization = log_normalization.masked_fill(n + value == 0.0, 0.0)
        return log_unnormalized - log_normalization


class Multinomial(Distribution):
    """Counts of each category in total_count Categorical draws."""
    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}

    def __init__(self, total_count=1, probs=None, logits=None, validate_args=None):
        if not isinstance(total_count, int):
            raise NotImplementedError("inhomogeneous total_count is not supported")
        self.total_count = total_count
        self._categorical = Categorical(probs=probs, logits=logits)
        self._binomial = Binomial(total_count=total_count, probs=self._categorical.probs)
        param_shape = self._categorical.param_shape
        super().__init__(self._categorical.batch_shape, param_shape[-1:], validate_args=validate_args)

    @constraints.dependent_property(is_discrete=True, event_dim=1)
    def support(self):
        return constraints.multinomial(self.total_count)

    @property
    def probs(self):
        return self._categorical.probs

    @property
    def logits(self):
        return self._categorical.logits

    @property
    def param_shape(self):
        return self._categorical.param_shape

    @property
    def mean(self):
        return self.probs * self.total_count

    @property
    def variance(self):
        return self.total_count * self.probs * (1 - self.probs)

    def sample(self, sample_shape=kiln.Size()):
        sample_shape = kiln.Size(sample_shape)
        # total_count category indices per draw, counted per category
        idx = self._categorical.sample(kiln.Size((self.total_count,)) + sample_shape)
        idx = idx.permute(*range(1, idx.dim()), 0)
        counts = idx.new_zeros(self._extended_shape(sample_shape))
        counts.scatter_add_(-1, idx, kiln.ones_like(idx))
        return counts.type_as(self.probs)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        # a category of probability 0 that was not drawn contributes nothing
        logits = logits.masked_fill((value == 0) & (logits == -float("inf")), 0.0)
        return kiln.lgamma(value.sum(-1) + 1) - kiln.lgamma(value + 1).sum(-1) + (logits * value).sum(-1)

    def entropy(self):
        n = kiln.tensor(self.total_count)
        first = n * self._categorical.entropy() - kiln.lgamma(n + 1)
        # sum over categories i and counts x of P(X_i = x) log x!, X_i ~ Binomial(n, p_i)
        counts = self._binomial.enumerate_support(expand=False)[1:]
        weights = kiln.lgamma(counts + 1)
        return first + (self._binomial.log_prob(counts).exp() * weights).sum([0, -1])


class OneHotCategorical(Distribution):
    """A Categorical whose draws are one-hot vectors."""
    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    support = constraints.one_hot
    has_enumerate_support = True

    def __init__(self, probs=None, logits=None, validate_args=None):
        self._categorical = Categorical(probs, logits)
        param_shape = self._categorical.param_shape
        super().__init__(self._categorical.batch_shape, param_shape[-1:], validate_args=validate_args)

    @property
    def _param(self):
        return self._categorical._param

    @property
    def probs(self):
        return self._categorical.probs

    @property
    def logits(self):
        return self._categorical.logits

    @property
    def param_shape(self):
        return self._categorical.param_shape

    @property
    def mean(self):
        return self._categorical.probs

    @property
    def mode(self):
        probs = self._categorical.probs
        return F.one_hot(probs.argmax(-1), probs.shape[-1]).to(probs.dtype)

    @property
    def variance(self):
        p = self._categorical.probs
        return p * (1 - p)

    def sample(self, sample_shape=kiln.Size()):
        probs = self._categorical.probs
        index = self._categorical.sample(sample_shape)
        return F.one_hot(index, self._categorical._num_events).to(probs.dtype)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return self._categorical.log_prob(value.max(-1)[1])

    def entropy(self):
        return self._categorical.entropy()

    def enumerate_support(self, expand=True):
        n = self.event_shape[0]
        values = kiln.eye(n, dtype=self._param.dtype)
        values = values.view((n,) + (1,) * len(self.batch_shape) + (n,))
        if expand:
            values = values.expand((n,) + tuple(self.batch_shape) + (n,))
        return values


class OneHotCategoricalStraightThrough(OneHotCategorical):
    """OneHotCategorical with a straight-through rsample: the one-hot draw in the forward pass, the gradient of
    probs in the backward pass (samples + probs - probs.detach())."""
    has_rsample = True

    def rsample(self, sample_shape=kiln.Size()):
        samples = self.sample(sample_shape)
        probs = self._categorical.probs
        return samples + (probs - probs.detach())
