"""Distributions built from other distributions: Independent (batch dimensions read as event
dimensions), TransformedDistribution (a base distribution pushed through transforms) and
MixtureSameFamily (a Categorical choice among a batch of components)."""
import kiln

from . import constraints
from .categorical import Categorical
from .distribution import Distribution
from .transform_base import ComposeTransform, Transform
from .utils import sum_rightmost


class Independent(Distribution):
    """The `reinterpreted_batch_ndims` rightmost batch dimensions of a distribution become part of its
    event: log_prob and entropy sum over them."""
    arg_constraints = {}

    def __init__(self, base_distribution, reinterpreted_batch_ndims, validate_args=None):
        n, base = reinterpreted_batch_ndims, base_distribution
        if n > len(base.batch_shape):
            raise ValueError("Expected reinterpreted_batch_ndims <= len(base_distribution.batch_shape), "
                             f"actual {n} vs {len(base.batch_shape)}")
        shape = tuple(base.batch_shape) + tuple(base.event_shape)
        split = len(shape) - n - len(base.event_shape)
        self.base_dist = base
        self.reinterpreted_batch_ndims = n
        super().__init__(shape[:split], shape[split:], validate_args=validate_args)

    @property
    def has_rsample(self):
        return self.base_dist.has_rsample

    @property
    def has_enumerate_support(self):
        return self.reinterpreted_batch_ndims == 0 and self.base_dist.has_enumerate_support

    @constraints.dependent_property
    def support(self):
        if self.reinterpreted_batch_ndims == 0:
            return self.base_dist.support
        return constraints.independent(self.base_dist.support, self.reinterpreted_batch_ndims)

    @property
    def mean(self):
        return self.base_dist.mean

    @property
    def mode(self):
        return self.base_dist.mode

    @property
    def variance(self):
        return self.base_dist.variance

    def sample(self, sample_shape=kiln.Size()):
        return self.base_dist.sample(sample_shape)

    def rsample(self, sample_shape=kiln.Size()):
        return self.base_dist.rsample(sample_shape)

    def log_prob(self, value):
        return sum_rightmost(self.base_dist.log_prob(value), self.reinterpreted_batch_ndims)

    def entropy(self):
        return sum_rightmost(self.base_dist.entropy(), self.reinterpreted_batch_ndims)

    def enumerate_support(self, expand=True):
        if self.reinterpreted_batch_ndims > 0:
            raise NotImplementedError("Enumeration over cartesian product is not implemented")
        return self.base_dist.enumerate_support(expand=expand)

    def __repr__(self):
        return f"{type(self).__name__}({self.base_dist}, {self.reinterpreted_batch_ndims})"


class TransformedDistribution(Distribution):
    """The law of t_n(...t_1(x)) for x drawn from base_distribution. log_prob inverts the transforms
    and subtracts their log-determinants."""
    arg_constraints = {}

    def __init__(self, base_distribution, transforms, validate_args=None):
        if isinstance(transforms, Transform):
            self.transforms = [transforms]
        elif isinstance(transforms, list):
            if not all(isinstance(t, Transform) for t in transforms):
                raise ValueError("transforms must be a Transform or a list of Transforms")
            self.transforms = transforms
        else:
            raise ValueError(f"transforms must be a Transform or list, but was {transforms}")
        base_shape = tuple(base_distribution.batch_shape) + tuple(base_distribution.event_shape)
        base_event_dim = len(base_distribution.event_shape)
        chain = ComposeTransform(self.transforms)
        if len(base_shape) < chain.domain.event_dim:
            raise ValueError(f"base_distribution needs to have shape with size at least {chain.domain.event_dim},"
                             f" but got {base_shape}.")
        shape = tuple(chain.forward_shape(base_shape))
        needed = tuple(chain.inverse_shape(shape))
        if needed != base_shape:  # transform parameters broadcast the base's batch shape
            base_distribution = base_distribution.expand(needed[:len(needed) - base_event_dim])
        extra = chain.domain.event_dim - base_event_dim
        if extra > 0:
            base_distribution = Independent(base_distribution, extra)
        self.base_dist = base_distribution
        event_dim = chain.codomain.event_dim + max(base_event_dim - chain.domain.event_dim, 0)
        super().__init__(shape[:len(shape) - event_dim], shape[len(shape) - event_dim:], validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = super().expand(batch_shape, _instance)
        shape = tuple(batch_shape) + tuple(self.event_shape)
        for t in reversed(self.transforms):
            shape = tuple(t.inverse_shape(shape))
        new.base_dist = self.base_dist.expand(shape[:len(shape) - len(self.base_dist.event_shape)])
        return new

    @property
    def has_rsample(self):
        return self.base_dist.has_rsample

    @constraints.dependent_property
    def support(self):
        if not self.transforms:
            return self.base_dist.support
        support = self.transforms[-1].codomain
        if len(self.event_shape) > support.event_dim:
            support = constraints.independent(support, len(self.event_shape) - support.event_dim)
        return support

    def sample(self, sample_shape=kiln.Size()):
        with kiln.no_grad():
            x = self.base_dist.sample(sample_shape)
            for t in self.transforms:
                x = t(x)
            return x

    def rsample(self, sample_shape=kiln.Size()):
        x = self.base_dist.rsample(sample_shape)
        for t in self.transforms:
            x = t(x)
        return x

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        event_dim = len(self.event_shape)
        total = 0.0
        y = value
        for t in reversed(self.transforms):
            x = t.inv(y)
            event_dim += t.domain.event_dim - t.codomain.event_dim
            total = total - sum_rightmost(t.log_abs_det_jacobian(x, y), event_dim - t.domain.event_dim)
            y = x
        return total + sum_rightmost(self.base_dist.log_prob(y), event_dim - len(self.base_dist.event_shape))

    def _monotonize_cdf(self, value):
        """cdf of the base at the preimage is 1 - cdf when the transforms reverse the order."""
        sign = 1
        for t in self.transforms:
            sign = sign * t.sign
        if isinstance(sign, int) and sign == 1:
            return value
        return sign * (value - 0.5) + 0.5

    def cdf(self, value):
        for t in self.transforms[::-1]:
            value = t.inv(value)
        if self._validate_args:
            self.base_dist._validate_sample(value)
        return self._monotonize_cdf(self.base_dist.cdf(value))

    def icdf(self, value):
        value = self.base_dist.icdf(self._monotonize_cdf(value))
        for t in self.transforms:
            value = t(value)
        return value


class MixtureSameFamily(Distribution):
    """A mixture whose components are the last batch dimension of one distribution, weighted by a
    Categorical over that dimension."""
    arg_constraints = {}
    has_rsample = False

    def __init__(self, mixture_distribution, component_distribution, validate_args=None):
        if not isinstance(mixture_distribution, Categorical):
            # (torch's message, spelling included, so that the two read alike)
            raise ValueError(" The Mixture distribution needs to be an  instance of kiln.distribtutions.Categorical")
        if not isinstance(component_distribution, Distribution):
            raise ValueError("The Component distribution need to be an instance of "
                             "kiln.distributions.Distribution")
        mix_batch = tuple(mixture_distribution.batch_shape)
        comp_batch = tuple(component_distribution.batch_shape)[:-1]
        for a, b in zip(reversed(mix_batch), reversed(comp_batch)):
            if a != 1 and b != 1 and a != b:
                raise ValueError(f"`mixture_distribution.batch_shape` ({mix_batch}) is not compatible with "
                                 f"`component_distribution.batch_shape`({comp_batch})")
        k_mix = mixture_distribution.logits.shape[-1]
        k_comp = component_distribution.batch_shape[-1]
        if k_mix != k_comp:
            raise ValueError(f"`mixture_distribution component` ({k_mix}) does not equal "
                             f"`component_distribution.batch_shape[-1]` ({k_comp})")
        self.mixture_distribution = mixture_distribution
        self.component_distribution = component_distribution
        self._num_component = k_mix
        self._event_ndims = len(component_distribution.event_shape)
        super().__init__(comp_batch, component_distribution.event_shape, validate_args=validate_args)

    @constraints.dependent_property
    def support(self):
        return self.component_distribution.support

    def _weights(self):
        """Mixture probabilities shaped to broadcast against per-component quantities."""
        probs = self.mixture_distribution.probs
        return probs.reshape(tuple(probs.shape) + (1,) * self._event_ndims)

    def _component_axis(self, x):
        return x.unsqueeze(-1 - self._event_ndims)

    @property
    def mean(self):
        return (self._weights() * self.component_distribution.mean).sum(-1 - self._event_ndims)

    @property
    def variance(self):
        w, comp, dim = self._weights(), self.component_distribution, -1 - self._event_ndims
        within = (w * comp.variance).sum(dim)
        between = (w * (comp.mean - self._component_axis(self.mean)).pow(2)).sum(dim)
        return within + between

    def cdf(self, x):
        x = self._component_axis(x)
        return (self.component_distribution.cdf(x) * self.mixture_distribution.probs).sum(-1)

    def log_prob(self, x):
        if self._validate_args:
            self._validate_sample(x)
        per_component = self.component_distribution.log_prob(self._component_axis(x))
        log_weights = kiln.log_softmax(self.mixture_distribution.logits, dim=-1)
        return kiln.logsumexp(per_component + log_weights, dim=-1)

    def sample(self, sample_shape=kiln.Size()):
        with kiln.no_grad():
            which = self.mixture_distribution.sample(sample_shape)
            draws = self.component_distribution.sample(sample_shape)
            axis = len(sample_shape) + len(self.batch_shape)
            index = which.reshape(tuple(which.shape) + (1,) * (self._event_ndims + 1))
            index = index.expand(tuple(which.shape) + (1,) + tuple(self.event_shape))
            return draws.gather(axis, index).squeeze(axis)

    def __repr__(self):
        return f"MixtureSameFamily(\n  {self.mixture_distribution},\n  {self.component_distribution})"
