"""Continuous stand-ins for binary and categorical variables: the relaxed (Concrete / Gumbel-softmax)
Bernoulli and one-hot categorical at a temperature, and the continuous Bernoulli on [0, 1]."""
import math
from numbers import Number

import kiln
import kiln.nn.functional as F

from . import constraints
from .categorical import Categorical
from .distribution import Distribution
from .transforms import ExpTransform, SigmoidTransform
from .utils import broadcast_all, clamp_probs, lazy_property, logits_to_probs, probs_to_logits
from .wrappers import TransformedDistribution


class LogitRelaxedBernoulli(Distribution):
    """The logit of a RelaxedBernoulli: (logit(u) + logits) / temperature, u uniform."""
    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.real

    def __init__(self, temperature, probs=None, logits=None, validate_args=None):
        self.temperature = temperature
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        given = probs if probs is not None else logits
        if probs is not None:
            self.probs, = broadcast_all(probs)
        else:
            self.logits, = broadcast_all(logits)
        self._param = self.probs if probs is not None else self.logits
        super().__init__(kiln.Size() if isinstance(given, Number) else self._param.size(),
                         validate_args=validate_args)

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self):
        return logits_to_probs(self.logits, is_binary=True)

    @property
    def param_shape(self):
        return self._param.size()

    def rsample(self, sample_shape=kiln.Size()):
        shape = self._extended_shape(sample_shape)
        probs = clamp_probs(self.probs.expand(shape))
        u = clamp_probs(kiln.rand(shape, dtype=probs.dtype, device=probs.device))
        return (u.log() - (-u).log1p() + probs.log() - (-probs).log1p()) / self.temperature

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        diff = logits - value * self.temperature
        return self.temperature.log() + diff - 2 * F.softplus(diff)


class RelaxedBernoulli(TransformedDistribution):
    """sigmoid of a LogitRelaxedBernoulli: values in (0, 1) that approach Bernoulli draws as the
    temperature goes to 0."""
    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.unit_interval
    has_rsample = True

    def __init__(self, temperature, probs=None, logits=None, validate_args=None):
        base = LogitRelaxedBernoulli(temperature, probs, logits)
        super().__init__(base, SigmoidTransform(), validate_args=validate_args)

    @property
    def temperature(self):
        return self.base_dist.temperature

    @property
    def logits(self):
        return self.base_dist.logits

    @property
    def probs(self):
        return self.base_dist.probs


class ExpRelaxedCategorical(Distribution):
    """The log of a RelaxedOneHotCategorical: log-softmax of (logits + Gumbel noise) / temperature."""
    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    support = constraints.real_vector
    has_rsample = True

    def __init__(self, temperature, probs=None, logits=None, validate_args=None):
        self._categorical = Categorical(probs, logits)
        self.temperature = temperature
        super().__init__(self._categorical.batch_shape, self._categorical.param_shape[-1:],
                         validate_args=validate_args)

    @property
    def param_shape(self):
        return self._categorical.param_shape

    @property
    def logits(self):
        return self._categorical.logits

    @property
    def probs(self):
        return self._categorical.probs

    def rsample(self, sample_shape=kiln.Size()):
        shape = self._extended_shape(sample_shape)
        u = clamp_probs(kiln.rand(shape, dtype=self.logits.dtype, device=self.logits.device))
        gumbels = -((-(u.log())).log())
        scores = (self.logits + gumbels) / self.temperature
        return scores - scores.logsumexp(dim=-1, keepdim=True)

    def log_prob(self, value):
        k = self._categorical._num_events
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        log_scale = math.lgamma(k) + (k - 1) * self.temperature.log()
        score = logits - value * self.temperature
        score = (score - score.logsumexp(dim=-1, keepdim=True)).sum(-1)
        return score + log_scale


class RelaxedOneHotCategorical(TransformedDistribution):
    """Points of the simplex that approach one-hot Categorical draws as the temperature goes to 0."""
    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, temperature, probs=None, logits=None, validate_args=None):
        base = ExpRelaxedCategorical(temperature, probs, logits, validate_args=validate_args)
        super().__init__(base, ExpTransform(), validate_args=validate_args)

    @property
    def temperature(self):
        return self.base_dist.temperature

    @property
    def logits(self):
        return self.base_dist.logits

    @property
    def probs(self):
        return self.base_dist.probs


class ContinuousBernoulli(Distribution):
    """Density C(p) p^x (1 - p)^(1 - x) on [0, 1], C(p) the normalizer. Near p = 1/2 the closed
    forms divide 0 by 0, so inside `lims` a Taylor expansion around 1/2 is used instead."""
    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.unit_interval
    has_rsample = True

    def __init__(self, probs=None, logits=None, lims=(0.499, 0.501), validate_args=None):
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        given = probs if probs is not None else logits
        if probs is not None:
            self.probs, = broadcast_all(probs)
            if self._validate_args and not bool(constraints.unit_interval.check(self.probs).all()):
                raise ValueError("The parameter probs has invalid values")
            self.probs = clamp_probs(self.probs)
        else:
            self.logits, = broadcast_all(logits)
        self._param = self.probs if probs is not None else self.logits
        self._lims = lims
        super().__init__(kiln.Size() if isinstance(given, Number) else self._param.size(),
                         validate_args=validate_args)

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self):
        return clamp_probs(logits_to_probs(self.logits, is_binary=True))

    @property
    def param_shape(self):
        return self._param.size()

    def _stable(self):
        return (self.probs <= self._lims[0]) | (self.probs > self._lims[1])

    def _safe_probs(self):
        """probs outside the unstable band; a harmless placeholder inside it (never used there)."""
        return kiln.where(self._stable(), self.probs, self._lims[0] * kiln.ones_like(self.probs))

    def _log_normalizer(self):
        p = self._safe_probs()
        below = kiln.where(p <= 0.5, p, kiln.zeros_like(p))
        above = kiln.where(p >= 0.5, p, kiln.ones_like(p))
        exact = kiln.log(kiln.abs(kiln.log1p(-p) - kiln.log(p))) - kiln.where(
            p <= 0.5, kiln.log1p(-2.0 * below), kiln.log(2.0 * above - 1.0))
        x = (self.probs - 0.5).pow(2)
        taylor = math.log(2.0) + (4.0 / 3.0 + 104.0 / 45.0 * x) * x
        return kiln.where(self._stable(), exact, taylor)

    @property
    def mean(self):
        p = self._safe_probs()
        exact = p / (2.0 * p - 1.0) + 1.0 / (kiln.log1p(-p) - kiln.log(p))
        x = self.probs - 0.5
        taylor = 0.5 + (1.0 / 3.0 + 16.0 / 45.0 * x.pow(2)) * x
        return kiln.where(self._stable(), exact, taylor)

    @property
    def variance(self):
        p = self._safe_probs()
        exact = p * (p - 1.0) / (1.0 - 2.0 * p).pow(2) + 1.0 / (kiln.log1p(-p) - kiln.log(p)).pow(2)
        x = (self.probs - 0.5).pow(2)
        taylor = 1.0 / 12.0 - (1.0 / 15.0 - 128.0 / 945.0 * x) * x
        return kiln.where(self._stable(), exact, taylor)

    def sample(self, sample_shape=kiln.Size()):
        with kiln.no_grad():
            return self.rsample(sample_shape)

    def rsample(self, sample_shape=kiln.Size()):
        u = kiln.rand(self._extended_shape(sample_shape), dtype=self.probs.dtype, device=self.probs.device)
        return self.icdf(u)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        return -F.binary_cross_entropy_with_logits(logits, value, reduction="none") + self._log_normalizer()

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        p = self._safe_probs()
        exact = (p.pow(value) * (1.0 - p).pow(1.0 - value) + p - 1.0) / (2.0 * p - 1.0)
        inside = kiln.where(self._stable(), exact, value)
        return kiln.where(value <= 0.0, kiln.zeros_like(inside), kiln.where(value >= 1.0, kiln.ones_like(inside),
                                                                             inside))

    def icdf(self, value):
        p = self._safe_probs()
        exact = (kiln.log1p(-p + value * (2.0 * p - 1.0)) - kiln.log1p(-p)) / (kiln.log(p) - kiln.log1p(-p))
        return kiln.where(self._stable(), exact, value)

    def entropy(self):
        log_q = kiln.log1p(-self.probs)
        log_p = kiln.log(self.probs)
        return self.mean * (log_q - log_p) - self._log_normalizer() - log_q
