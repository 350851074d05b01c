"""kiln.distributions: probability distributions with torch.distributions' interface (shapes, sample /
rsample, log_prob, entropy, moments, cdf, validation) and kl_divergence between them. Seeded draws use
the generator as torch's do, so the same seed gives the same samples."""
from . import constraints, transforms
from .bernoulli import Bernoulli
from .categorical import Categorical
from .constraint_registry import biject_to, transform_to
from .counts import (Binomial, Geometric, Multinomial, NegativeBinomial, OneHotCategorical,
                     OneHotCategoricalStraightThrough, Poisson)
from .distribution import Distribution
from .exp_family import ExponentialFamily
from .gamma import Beta, Chi2, Dirichlet, FisherSnedecor, Gamma
from .kl import kl_divergence, register_kl
from .lkj import LKJCholesky
from .location_scale import Cauchy, Exponential, Laplace, StudentT
from .multivariate_normal import LowRankMultivariateNormal, MultivariateNormal
from .normal import Normal
from .relaxed import (ContinuousBernoulli, ExpRelaxedCategorical, LogitRelaxedBernoulli, RelaxedBernoulli,
                      RelaxedOneHotCategorical)
from .transformed import Gumbel, HalfCauchy, HalfNormal, Kumaraswamy, LogisticNormal, LogNormal, Pareto, Weibull
from .transforms import *  # noqa: F401,F403
from .uniform import Uniform
from .von_mises import VonMises
from .wishart import Wishart
from .wrappers import Independent, MixtureSameFamily, TransformedDistribution

__all__ = ["Bernoulli", "Beta", "Binomial", "Categorical", "Cauchy", "Chi2", "ContinuousBernoulli", "Dirichlet",
           "Distribution", "ExpRelaxedCategorical", "Exponential", "ExponentialFamily", "FisherSnedecor", "Gamma",
           "Geometric", "Gumbel", "HalfCauchy", "HalfNormal", "Independent", "Kumaraswamy", "LKJCholesky", "Laplace",
           "LogNormal", "LogisticNormal", "LogitRelaxedBernoulli", "LowRankMultivariateNormal", "MixtureSameFamily",
           "Multinomial", "MultivariateNormal", "NegativeBinomial", "Normal", "OneHotCategorical",
           "OneHotCategoricalStraightThrough", "Pareto", "Poisson", "RelaxedBernoulli", "RelaxedOneHotCategorical",
           "StudentT", "TransformedDistribution", "Uniform", "VonMises", "Weibull", "Wishart", "biject_to",
           "constraints", "kl_divergence", "register_kl", "transform_to", "transforms"]

# torch's one-module-per-distribution names (torch.distributions.beta, .studentT, ...)
from . import _torch_modules  # noqa: E402
_torch_modules.install(__import__("sys").modules[__name__])
