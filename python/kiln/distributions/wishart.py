"""The Wishart distribution over positive definite p x p matrices: the law of X^T X for df rows X_i
drawn from N(0, Sigma). Drawn by the Bartlett decomposition: Sigma^1/2 A A^T Sigma^1/2 with A lower
triangular, chi variables on its diagonal and standard normals below."""
import math
from numbers import Number

import kiln

from . import constraints
from .distribution import Distribution
from .gamma import Chi2
from .utils import lazy_property


def _mvdigamma(x, p):
    """d/dx of log of the multivariate gamma function Gamma_p(x)."""
    return kiln.digamma(x.unsqueeze(-1) - kiln.arange(p, dtype=x.dtype) / 2).sum(-1)


class Wishart(Distribution):
    arg_constraints = {"covariance_matrix": constraints.positive_definite,
                       "precision_matrix": constraints.positive_definite,
                       "scale_tril": constraints.lower_cholesky, "df": constraints.greater_than(0)}
    support = constraints.positive_definite
    has_rsample = True
    _unbroadcast_attributes = ("_unbroadcasted_scale_tril",)

    def __init__(self, df, covariance_matrix=None, precision_matrix=None, scale_tril=None, validate_args=None):
        given = [(k, v) for k, v in (("covariance_matrix", covariance_matrix), ("precision_matrix", precision_matrix),
                                     ("scale_tril", scale_tril)) if v is not None]
        if len(given) != 1:
            raise ValueError("Exactly one of covariance_matrix or precision_matrix or scale_tril may be specified.")
        name, matrix = given[0]
        if matrix.dim() < 2:
            raise ValueError("scale_tril must be at least two-dimensional, with optional leading batch dimensions")
        if isinstance(df, Number):
            batch_shape = tuple(matrix.shape[:-2])
            df = kiln.tensor(df, dtype=matrix.dtype)
        else:
            batch_shape = tuple(kiln.broadcast_shapes(tuple(matrix.shape[:-2]), tuple(df.shape)))
        self.df = df.expand(batch_shape)
        event_shape = tuple(matrix.shape[-2:])
        setattr(self, name, matrix.expand(batch_shape + (-1, -1)))
        p = event_shape[-1]
        if bool(self.df.le(p - 1).any()):
            raise ValueError(f"Value of df={df} expected to be greater than ndim - 1 = {p - 1}.")
        super().__init__(batch_shape, event_shape, validate_args=validate_args)
        if name == "scale_tril":
            self._unbroadcasted_scale_tril = matrix
        elif name == "covariance_matrix":
            self._unbroadcasted_scale_tril = kiln.linalg.cholesky(matrix)
        else:
            self._unbroadcasted_scale_tril = kiln.linalg.cholesky(kiln.linalg.inv(matrix))
        # squared Bartlett diagonal entries: chi-square with df, df - 1, ..., df - p + 1 degrees of freedom
        self._chi2 = Chi2(self.df.unsqueeze(-1) - kiln.arange(p, dtype=self.df.dtype).expand(batch_shape + (p,)))

    def _full(self, m):
        return m.expand(tuple(self._batch_shape) + tuple(self._event_shape))

    @lazy_property
    def scale_tril(self):
        return self._full(self._unbroadcasted_scale_tril)

    @lazy_property
    def covariance_matrix(self):
        tril = self._unbroadcasted_scale_tril
        return self._full(tril @ tril.mT)

    @lazy_property
    def precision_matrix(self):
        return self._full(kiln.cholesky_inverse(self._unbroadcasted_scale_tril))

    @property
    def mean(self):
        return self.df[..., None, None] * self.covariance_matrix

    @property
    def mode(self):
        factor = self.df - self._event_shape[-1] - 1
        factor = kiln.where(factor <= 0, kiln.full_like(factor, math.nan), factor)
        return factor[..., None, None] * self.covariance_matrix

    @property
    def variance(self):
        v = self.covariance_matrix
        d = v.diagonal(dim1=-2, dim2=-1)
        return self.df[..., None, None] * (v.pow(2) + d.unsqueeze(-1) * d.unsqueeze(-2))

    def _bartlett(self, sample_shape):
        p = self._event_shape[-1]
        chi = self._chi2.rsample(sample_shape).sqrt()
        a = kiln.diag_embed(chi.clamp(min=kiln.finfo(chi.dtype).eps))
        rows, cols = kiln.tril_indices(p, p, offset=-1)
        below = kiln.randn(tuple(sample_shape) + tuple(self._batch_shape) + (p * (p - 1) // 2,), dtype=a.dtype)
        a = _fill_below(a, rows, cols, below)
        factor = self._unbroadcasted_scale_tril @ a
        return factor @ factor.mT

    def _accepted(self, sample):
        """Per sample index, whether any batch element passes the positive-definiteness check."""
        ok = self.support.check(sample)
        for _ in range(len(self._batch_shape)):
            ok = ok.any(-1)
        return ok

    def rsample(self, sample_shape=kiln.Size()):
        sample_shape = kiln.Size(sample_shape)
        sample = self._bartlett(sample_shape)
        # torch 1.13 draws again wherever its singularity test fires, and that test fires on the
        # positive definite draws: replacing those (up to 10 times) keeps kiln's seeded draws equal to
        # torch's
        redraw = self._accepted(sample)
        for _ in range(10):
            if not bool(redraw.any()):
                break
            new = self._bartlett(sample_shape)
            mask = redraw.reshape(tuple(redraw.shape) + (1,) * (len(self._batch_shape) + 2))
            sample = kiln.where(mask, new, sample)
            redraw = redraw & ~self._accepted(new)
        return sample

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        nu, p = self.df, self._event_shape[-1]
        tril = self._unbroadcasted_scale_tril
        half_log_det = tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)
        trace = kiln.cholesky_solve(value, tril).diagonal(dim1=-2, dim2=-1).sum(-1)
        return (-nu * (p * math.log(2) / 2 + half_log_det) - kiln.mvlgamma(nu / 2, p)
                + (nu - p - 1) / 2 * kiln.logdet(value) - trace / 2)

    def entropy(self):
        nu, p = self.df, self._event_shape[-1]
        half_log_det = self._unbroadcasted_scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)
        return ((p + 1) * (p * math.log(2) / 2 + half_log_det) + kiln.mvlgamma(nu / 2, p)
                - (nu - p - 1) / 2 * _mvdigamma(nu / 2, p) + nu * p / 2)


def _fill_below(a, rows, cols, values):
    """a with a[..., rows[k], cols[k]] = values[..., k] (differentiably)."""
    p = a.shape[-1]
    flat_index = (rows * p + cols)
    flat = a.reshape(tuple(a.shape[:-2]) + (p * p,))
    scatter = kiln.zeros_like(flat).index_add(-1, flat_index, values)
    keep = kiln.ones(p * p, dtype=a.dtype).index_fill(0, flat_index, 0.0)
    return (flat * keep + scatter).reshape(tuple(a.shape))
