"""Continuous families sampled by transforming one standard draw: Exponential, Laplace, Cauchy and
Student's t. Each fills a tensor of the sample shape with the same generator call torch makes, so
that seeded samples agree."""
import math

import kiln

from . import constraints
from .distribution import Distribution
from .gamma import Chi2
from .utils import _standard_normal, broadcast_all, eps, params_shape


class Exponential(Distribution):
    """Density rate * exp(-rate * x) on x >= 0."""
    arg_constraints = {"rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True

    def __init__(self, rate, validate_args=None):
        self.rate, = broadcast_all(rate)
        super().__init__(params_shape(rate), validate_args=validate_args)

    @property
    def mean(self):
        return self.rate.reciprocal()

    @property
    def mode(self):
        return kiln.zeros_like(self.rate)

    @property
    def stddev(self):
        return self.rate.reciprocal()

    @property
    def variance(self):
        return self.rate.pow(-2)

    def rsample(self, sample_shape=kiln.Size()):
        draw = self.rate.new_empty(self._extended_shape(sample_shape)).exponential_()
        return draw / self.rate

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return self.rate.log() - self.rate * value

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return 1 - kiln.exp(-self.rate * value)

    def icdf(self, value):
        return -kiln.log1p(-value) / self.rate

    def entropy(self):
        return 1.0 - self.rate.log()


class Laplace(Distribution):
    """Density exp(-|x - loc| / scale) / (2 scale)."""
    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, loc, scale, validate_args=None):
        self.loc, self.scale = broadcast_all(loc, scale)
        super().__init__(params_shape(loc, scale), validate_args=validate_args)

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        return 2 * self.scale.pow(2)

    @property
    def stddev(self):
        return math.sqrt(2) * self.scale

    def rsample(self, sample_shape=kiln.Size()):
        # u uniform on (-1, 1): its sign picks the side, -log(1 - |u|) is a standard exponential
        u = self.loc.new_empty(self._extended_shape(sample_shape)).uniform_(eps(self.loc) - 1, 1)
        return self.loc - self.scale * u.sign() * kiln.log1p(-u.abs())

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return -kiln.log(2 * self.scale) - (value - self.loc).abs() / self.scale

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        z = value - self.loc
        return 0.5 - 0.5 * z.sign() * kiln.expm1(-z.abs() / self.scale)

    def icdf(self, value):
        centred = value - 0.5
        return self.loc - self.scale * centred.sign() * kiln.log1p(-2 * centred.abs())

    def entropy(self):
        return 1 + kiln.log(2 * self.scale)


class Cauchy(Distribution):
    """Density 1 / (pi scale (1 + ((x - loc) / scale)^2)); no mean, infinite variance."""
    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, loc, scale, validate_args=None):
        self.loc, self.scale = broadcast_all(loc, scale)
        super().__init__(params_shape(loc, scale), validate_args=validate_args)

    @property
    def mean(self):
        return kiln.full(self._extended_shape(), math.nan, dtype=self.loc.dtype)

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        return kiln.full(self._extended_shape(), math.inf, dtype=self.loc.dtype)

    def rsample(self, sample_shape=kiln.Size()):
        draw = self.loc.new_empty(self._extended_shape(sample_shape)).cauchy_()
        return self.loc + draw * self.scale

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        z = (value - self.loc) / self.scale
        return -math.log(math.pi) - self.scale.log() - z.pow(2).log1p()

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return kiln.atan((value - self.loc) / self.scale) / math.pi + 0.5

    def icdf(self, value):
        return kiln.tan(math.pi * (value - 0.5)) * self.scale + self.loc

    def entropy(self):
        return math.log(4 * math.pi) + self.scale.log()


class StudentT(Distribution):
    """loc + scale * Z / sqrt(V / df), Z standard normal and V chi-square with df degrees of freedom."""
    arg_constraints = {"df": constraints.positive, "loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, df, loc=0.0, scale=1.0, validate_args=None):
        self.df, self.loc, self.scale = broadcast_all(df, loc, scale)
        self._chi2 = Chi2(self.df)
        super().__init__(self.df.size(), validate_args=validate_args)

    @property
    def mean(self):
        return kiln.where(self.df > 1, self.loc, kiln.full_like(self.loc, math.nan))

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        df = self.df
        finite = self.scale.pow(2) * df / (df - 2)
        return kiln.where(df > 2, finite, kiln.where(df > 1, kiln.full_like(df, math.inf),
                                                     kiln.full_like(df, math.nan)))

    def rsample(self, sample_shape=kiln.Size()):
        z = _standard_normal(self._extended_shape(sample_shape), dtype=self.df.dtype, device=self.df.device)
        v = self._chi2.rsample(sample_shape)
        return self.loc + self.scale * (z * kiln.rsqrt(v / self.df))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        df = self.df
        y = (value - self.loc) / self.scale
        log_norm = (self.scale.log() + 0.5 * df.log() + 0.5 * math.log(math.pi) + kiln.lgamma(0.5 * df)
                    - kiln.lgamma(0.5 * (df + 1.0)))
        return -0.5 * (df + 1.0) * kiln.log1p(y.pow(2) / df) - log_norm

    def entropy(self):
        df = self.df
        log_beta = kiln.lgamma(0.5 * df) + math.lgamma(0.5) - kiln.lgamma(0.5 * (df + 1))
        return (self.scale.log() + 0.5 * (df + 1) * (kiln.digamma(0.5 * (df + 1)) - kiln.digamma(0.5 * df))
                + 0.5 * df.log() + log_beta)
