"""kiln.distributions: torch.distributions' Categorical, Normal and Bernoulli (the ones policy-gradient
and VAE scripts use), written as torch 1.13 writes them, so that with the same seed sample() draws
torch's numbers (Categorical through multinomial, Normal through normal / normal_, Bernoulli through
bernoulli) and log_prob / entropy round as torch's."""
from . import constraints
from .bernoulli import Bernoulli
from .categorical import Categorical
from .distribution import Distribution
from .normal import Normal

__all__ = ["Bernoulli", "Categorical", "Distribution", "Normal", "constraints"]
