"""kiln.distributions: torch.distributions' Categorical, Normal, MultivariateNormal, Bernoulli, Uniform
and Independent (the ones policy-gradient and VAE scripts use) and kl_divergence between two of a kind, written as torch 1.13
writes them, so that with the same seed sample() draws torch's numbers (Categorical through
multinomial, Normal through normal / normal_, Bernoulli through bernoulli, Uniform through rand) and
log_prob / entropy / kl_divergence round as torch's."""
from . import constraints
from .bernoulli import Bernoulli
from .categorical import Categorical
from .distribution import Distribution
from .independent import Independent
from .kl import kl_divergence, register_kl
from .multivariate_normal import MultivariateNormal
from .normal import Normal
from .uniform import Uniform

__all__ = ["Bernoulli", "Categorical", "Distribution", "Independent", "MultivariateNormal", "Normal", "Uniform", "constraints", "kl_divergence",
           "register_kl"]
