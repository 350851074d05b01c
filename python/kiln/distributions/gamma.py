"""The gamma family and what is built from gamma draws: Gamma, Chi2, Dirichlet, Beta and
FisherSnedecor. Draws come from kiln._standard_gamma / kiln._sample_dirichlet (torch's CPU samplers)
and are reparameterized through their implicit gradients (_standard_gamma_grad, _dirichlet_grad)."""
from numbers import Real

import kiln

from . import constraints
from .distribution import Distribution
from .utils import broadcast_all, params_shape, tiny


class Gamma(Distribution):
    """Density rate^c x^(c-1) exp(-rate x) / Gamma(c) on x >= 0 (c = concentration)."""
    arg_constraints = {"concentration": constraints.positive, "rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True

    def __init__(self, concentration, rate, validate_args=None):
        self.concentration, self.rate = broadcast_all(concentration, rate)
        super().__init__(params_shape(concentration, rate), validate_args=validate_args)

    @property
    def mean(self):
        return self.concentration / self.rate

    @property
    def mode(self):
        return ((self.concentration - 1) / self.rate).clamp(min=0)

    @property
    def variance(self):
        return self.concentration / self.rate.pow(2)

    def rsample(self, sample_shape=kiln.Size()):
        shape = self._extended_shape(sample_shape)
        value = kiln._standard_gamma(self.concentration.expand(shape)) / self.rate.expand(shape)
        value.detach().clamp_(min=tiny(value))  # a draw that underflowed to 0 becomes the smallest normal
        return value

    def log_prob(self, value):
        value = kiln.as_tensor(value, dtype=self.rate.dtype)
        if self._validate_args:
            self._validate_sample(value)
        c, r = self.concentration, self.rate
        return kiln.xlogy(c, r) + kiln.xlogy(c - 1, value) - r * value - kiln.lgamma(c)

    def entropy(self):
        c = self.concentration
        return c - self.rate.log() + kiln.lgamma(c) + (1.0 - c) * kiln.digamma(c)


class Chi2(Gamma):
    """Gamma(df / 2, 1 / 2)."""
    arg_constraints = {"df": constraints.positive}

    def __init__(self, df, validate_args=None):
        if isinstance(df, Real):
            df = kiln.tensor(float(df))
        super().__init__(0.5 * df, 0.5, validate_args=validate_args)

    @property
    def df(self):
        return self.concentration * 2


class _DirichletSample(kiln.autograd.Function):
    """Dirichlet draws with the implicit reparameterization gradient."""

    @staticmethod
    def forward(ctx, concentration):
        x = kiln._sample_dirichlet(concentration)
        ctx.save_for_backward(x, concentration)
        return x

    @staticmethod
    def backward(ctx, grad_output):
        x, concentration = ctx.saved_tensors
        total = concentration.sum(-1, keepdim=True).expand_as(concentration)
        dx_dalpha = kiln._dirichlet_grad(x, concentration, total)
        return dx_dalpha * (grad_output - (x * grad_output).sum(-1, keepdim=True))


class Dirichlet(Distribution):
    """Density proportional to prod_i x_i^(a_i - 1) on the simplex."""
    arg_constraints = {"concentration": constraints.independent(constraints.positive, 1)}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, concentration, validate_args=None):
        if concentration.dim() < 1:
            raise ValueError("`concentration` parameter must be at least one-dimensional.")
        self.concentration = concentration
        super().__init__(concentration.shape[:-1], concentration.shape[-1:], validate_args=validate_args)

    def rsample(self, sample_shape=kiln.Size()):
        return _DirichletSample.apply(self.concentration.expand(self._extended_shape(sample_shape)))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        a = self.concentration
        return kiln.xlogy(a - 1.0, value).sum(-1) + kiln.lgamma(a.sum(-1)) - kiln.lgamma(a).sum(-1)

    @property
    def mean(self):
        return self.concentration / self.concentration.sum(-1, keepdim=True)

    @property
    def mode(self):
        a = self.concentration
        excess = (a - 1).clamp(min=0.0)
        interior = excess / excess.sum(-1, keepdim=True)
        # every a_i < 1: the density is largest at the vertex of the largest a_i
        vertex = kiln.nn.functional.one_hot(excess.argmax(-1), a.shape[-1]).to(a.dtype)
        return kiln.where((a < 1).all(-1, keepdim=True), vertex, interior)

    @property
    def variance(self):
        a = self.concentration
        a0 = a.sum(-1, keepdim=True)
        return a * (a0 - a) / (a0.pow(2) * (a0 + 1))

    def entropy(self):
        a = self.concentration
        k = a.size(-1)
        a0 = a.sum(-1)
        return (kiln.lgamma(a).sum(-1) - kiln.lgamma(a0) - (k - a0) * kiln.digamma(a0)
                - ((a - 1.0) * kiln.digamma(a)).sum(-1))


class Beta(Distribution):
    """The first coordinate of a Dirichlet(concentration1, concentration0)."""
    arg_constraints = {"concentration1": constraints.positive, "concentration0": constraints.positive}
    support = constraints.unit_interval
    has_rsample = True

    def __init__(self, concentration1, concentration0, validate_args=None):
        if isinstance(concentration1, Real) and isinstance(concentration0, Real):
            both = kiln.tensor([float(concentration1), float(concentration0)])
        else:
            concentration1, concentration0 = broadcast_all(concentration1, concentration0)
            both = kiln.stack([concentration1, concentration0], -1)
        self._dirichlet = Dirichlet(both, validate_args=validate_args)
        super().__init__(self._dirichlet.batch_shape, validate_args=validate_args)

    @property
    def concentration1(self):
        return self._dirichlet.concentration[..., 0]

    @property
    def concentration0(self):
        return self._dirichlet.concentration[..., 1]

    @property
    def mean(self):
        return self.concentration1 / (self.concentration1 + self.concentration0)

    @property
    def mode(self):
        return self._dirichlet.mode[..., 0]

    @property
    def variance(self):
        a, b = self.concentration1, self.concentration0
        total = a + b
        return a * b / (total.pow(2) * (total + 1))

    def rsample(self, sample_shape=()):
        return self._dirichlet.rsample(sample_shape).select(-1, 0)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return self._dirichlet.log_prob(kiln.stack([value, 1.0 - value], -1))

    def entropy(self):
        return self._dirichlet.entropy()


class FisherSnedecor(Distribution):
    """(X1 / df1) / (X2 / df2) for independent chi-squares X1, X2."""
    arg_constraints = {"df1": constraints.positive, "df2": constraints.positive}
    support = constraints.positive
    has_rsample = True

    def __init__(self, df1, df2, validate_args=None):
        self.df1, self.df2 = broadcast_all(df1, df2)
        self._gamma1 = Gamma(self.df1 * 0.5, self.df1)
        self._gamma2 = Gamma(self.df2 * 0.5, self.df2)
        super().__init__(params_shape(df1, df2), validate_args=validate_args)

    @property
    def mean(self):
        d2 = self.df2
        return kiln.where(d2 > 2, d2 / (d2 - 2), kiln.full_like(d2, float("nan")))

    @property
    def mode(self):
        d1, d2 = self.df1, self.df2
        mode = (d1 - 2) / d1 * d2 / (d2 + 2)
        return kiln.where(d1 > 2, mode, kiln.full_like(mode, float("nan")))

    @property
    def variance(self):
        d1, d2 = self.df1, self.df2
        var = 2 * d2.pow(2) * (d1 + d2 - 2) / (d1 * (d2 - 2).pow(2) * (d2 - 4))
        return kiln.where(d2 > 4, var, kiln.full_like(var, float("nan")))

    def rsample(self, sample_shape=kiln.Size()):
        shape = self._extended_shape(sample_shape)
        x1 = self._gamma1.rsample(sample_shape).view(shape)
        x2 = self._gamma2.rsample(sample_shape).view(shape)
        x2 = x2.clamp(min=tiny(x2))
        return (x1 / x2).clamp(min=tiny(x2))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        h1, h2 = self.df1 * 0.5, self.df2 * 0.5
        ratio = self.df1 / self.df2
        log_norm = kiln.lgamma(h1 + h2) - kiln.lgamma(h1) - kiln.lgamma(h2)
        return log_norm + h1 * ratio.log() + (h1 - 1) * value.log() - (h1 + h2) * kiln.log1p(ratio * value)
