"""LKJCholesky: a distribution over Cholesky factors L of correlation matrices, with density
proportional to det(L L^T)^(concentration - 1). Drawn by the onion method (Lewandowski, Kurowicka and
Joe, 2009): row i of L is a uniform direction in its first i coordinates scaled by the square root of
a Beta draw, the diagonal entry takes what is left of the unit norm."""
import math

import kiln

from . import constraints
from .distribution import Distribution
from .gamma import Beta
from .utils import broadcast_all


class LKJCholesky(Distribution):
    arg_constraints = {"concentration": constraints.positive}
    support = constraints.corr_cholesky

    def __init__(self, dim, concentration=1.0, validate_args=None):
        if dim < 2:
            raise ValueError(f"Expected dim to be an integer greater than or equal to 2. Found dim={dim}.")
        self.dim = dim
        self.concentration, = broadcast_all(concentration)
        eta = self.concentration
        # squared norms of the off-diagonal parts of the rows: Beta(i/2, eta + (dim - 2)/2 - i/2) for row
        # i >= 1 (the draw for row 0 is made but unused)
        offset = kiln.arange(dim - 1, dtype=eta.dtype)
        offset = kiln.cat([offset.new_zeros((1,)), offset])
        self._beta = Beta(offset + 0.5, (eta + 0.5 * (dim - 2)).unsqueeze(-1) - 0.5 * offset)
        super().__init__(eta.shape, (dim, dim), validate_args=validate_args)

    def sample(self, sample_shape=kiln.Size()):
        with kiln.no_grad():
            y = self._beta.sample(sample_shape).unsqueeze(-1)
            normal = kiln.randn(self._extended_shape(sample_shape), dtype=y.dtype).tril(-1)
            direction = normal / normal.norm(dim=-1, keepdim=True)
            direction[..., 0, :] = 0.0  # row 0 has no off-diagonal part (0 / 0 above)
            w = y.sqrt() * direction
            diag = (1 - w.pow(2).sum(-1)).clamp(min=kiln.finfo(w.dtype).tiny).sqrt()
            return w + kiln.diag_embed(diag)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        d, eta = self.dim, self.concentration
        diag = value.diagonal(dim1=-2, dim2=-1)[..., 1:]
        # L_kk carries the power 2 (eta - 1) + d - k, k = 2..d
        powers = 2 * (eta - 1).unsqueeze(-1) + d - kiln.arange(2, d + 1, dtype=eta.dtype)
        unnormalized = (powers * diag.log()).sum(-1)
        alpha = eta + 0.5 * (d - 1)
        log_norm = 0.5 * (d - 1) * math.log(math.pi) + kiln.mvlgamma(alpha - 0.5, d - 1) - (d - 1) * kiln.lgamma(alpha)
        return unnormalized - log_norm
