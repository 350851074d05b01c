"""Gaussians over vectors: MultivariateNormal (given a covariance, a precision or a lower Cholesky
factor of the covariance) and LowRankMultivariateNormal (covariance W W^T + diag(D)). Both keep a
factor of the covariance without broadcasting it to the batch shape, and work through triangular
solves rather than inverses."""
import math

import kiln

from . import constraints
from .distribution import Distribution
from .utils import _standard_normal, batch_mv, lazy_property


def _solve_lower(tril, rhs):
    """tril^-1 rhs for a batch of vectors rhs (broadcast against the matrices)."""
    return kiln.linalg.solve_triangular(tril, rhs.unsqueeze(-1), upper=False).squeeze(-1)


def _mahalanobis(tril, diff):
    """|| tril^-1 diff ||^2, the squared Mahalanobis distance for covariance tril tril^T."""
    n = diff.size(-1)
    batch = kiln.broadcast_shapes(tuple(tril.shape[:-2]), tuple(diff.shape[:-1]))
    tril = tril.expand(tuple(batch) + (n, n))
    diff = diff.expand(tuple(batch) + (n,))
    return _solve_lower(tril, diff).pow(2).sum(-1)


def _half_log_det(tril):
    return tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)


def _need_matrix(x, name):
    if x.dim() < 2:
        raise ValueError(f"{name} must be at least two-dimensional, with optional leading batch dimensions")


class MultivariateNormal(Distribution):
    """N(loc, Sigma) with Sigma = L L^T given through exactly one of covariance_matrix,
    precision_matrix (Sigma^-1) or scale_tril (L)."""
    arg_constraints = {"loc": constraints.real_vector, "covariance_matrix": constraints.positive_definite,
                       "precision_matrix": constraints.positive_definite, "scale_tril": constraints.lower_cholesky}
    support = constraints.real_vector
    has_rsample = True
    _unbroadcast_attributes = ("_unbroadcasted_scale_tril",)

    def __init__(self, loc, covariance_matrix=None, precision_matrix=None, scale_tril=None, validate_args=None):
        if loc.dim() < 1:
            raise ValueError("loc must be at least one-dimensional.")
        given = [(k, v) for k, v in (("covariance_matrix", covariance_matrix), ("precision_matrix", precision_matrix),
                                     ("scale_tril", scale_tril)) if v is not None]
        if len(given) != 1:
            raise ValueError("Exactly one of covariance_matrix or precision_matrix or scale_tril may be specified.")
        name, matrix = given[0]
        _need_matrix(matrix, "scale_tril matrix" if name == "scale_tril" else name)
        batch_shape = kiln.broadcast_shapes(tuple(matrix.shape[:-2]), tuple(loc.shape[:-1]))
        setattr(self, name, matrix.expand(tuple(batch_shape) + (-1, -1)))
        self.loc = loc.expand(tuple(batch_shape) + (-1,))
        super().__init__(batch_shape, loc.shape[-1:], validate_args=validate_args)
        if name == "scale_tril":
            self._unbroadcasted_scale_tril = matrix
        elif name == "covariance_matrix":
            self._unbroadcasted_scale_tril = kiln.linalg.cholesky(matrix)
        else:
            # the Cholesky factor of the covariance, the inverse of the precision
            self._unbroadcasted_scale_tril = kiln.linalg.cholesky(kiln.linalg.inv(matrix))

    def _full(self, m):
        return m.expand(tuple(self._batch_shape) + tuple(self._event_shape) * 2)

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
        return self.loc

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        return self._unbroadcasted_scale_tril.pow(2).sum(-1).expand(self._extended_shape())

    def rsample(self, sample_shape=kiln.Size()):
        eps = _standard_normal(self._extended_shape(sample_shape), dtype=self.loc.dtype, device=self.loc.device)
        return self.loc + batch_mv(self._unbroadcasted_scale_tril, eps)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        m = _mahalanobis(self._unbroadcasted_scale_tril, value - self.loc)
        n = self._event_shape[0]
        return -0.5 * (n * math.log(2 * math.pi) + m) - _half_log_det(self._unbroadcasted_scale_tril)

    def entropy(self):
        n = self._event_shape[0]
        h = 0.5 * n * (1.0 + math.log(2 * math.pi)) + _half_log_det(self._unbroadcasted_scale_tril)
        return h.expand(self._batch_shape)


def _capacitance_tril(factor, diag):
    """Cholesky factor of I + W^T D^-1 W (the small m x m matrix of the Woodbury identity)."""
    m = factor.size(-1)
    wt_dinv = factor.mT / diag.unsqueeze(-2)
    k = wt_dinv @ factor + kiln.eye(m, dtype=factor.dtype)
    return kiln.linalg.cholesky(k)


class LowRankMultivariateNormal(Distribution):
    """N(loc, W W^T + diag(D)) with W = cov_factor (n x m, m small) and D = cov_diag > 0."""
    arg_constraints = {"loc": constraints.real_vector,
                       "cov_factor": constraints.independent(constraints.real, 2),
                       "cov_diag": constraints.independent(constraints.positive, 1)}
    support = constraints.real_vector
    has_rsample = True
    _unbroadcast_attributes = ("_unbroadcasted_cov_factor", "_unbroadcasted_cov_diag", "_capacitance_tril")

    def __init__(self, loc, cov_factor, cov_diag, validate_args=None):
        if loc.dim() < 1:
            raise ValueError("loc must be at least one-dimensional.")
        event_shape = loc.shape[-1:]
        if cov_factor.dim() < 2:
            raise ValueError("cov_factor must be at least two-dimensional, with optional leading batch dimensions")
        if tuple(cov_factor.shape[-2:-1]) != tuple(event_shape):
            raise ValueError(f"cov_factor must be a batch of matrices with shape {event_shape[0]} x m")
        if tuple(cov_diag.shape[-1:]) != tuple(event_shape):
            raise ValueError(f"cov_diag must be a batch of vectors with shape {tuple(event_shape)}")
        try:
            loc_, self.cov_factor, diag_ = kiln.broadcast_tensors(loc.unsqueeze(-1), cov_factor,
                                                                  cov_diag.unsqueeze(-1))
        except RuntimeError as e:
            raise ValueError(f"Incompatible batch shapes: loc {tuple(loc.shape)}, cov_factor "
                             f"{tuple(cov_factor.shape)}, cov_diag {tuple(cov_diag.shape)}") from e
        self.loc = loc_[..., 0]
        self.cov_diag = diag_[..., 0]
        self._unbroadcasted_cov_factor = cov_factor
        self._unbroadcasted_cov_diag = cov_diag
        self._capacitance_tril = _capacitance_tril(cov_factor, cov_diag)
        super().__init__(self.loc.shape[:-1], event_shape, validate_args=validate_args)

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @lazy_property
    def variance(self):
        w, d = self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag
        return (w.pow(2).sum(-1) + d).expand(self._extended_shape())

    def _full(self, m):
        return m.expand(tuple(self._batch_shape) + tuple(self._event_shape) * 2)

    @lazy_property
    def covariance_matrix(self):
        w, d = self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag
        return self._full(w @ w.mT + kiln.diag_embed(d))

    @lazy_property
    def scale_tril(self):
        # D^1/2 chol(I + D^-1/2 W W^T D^-1/2), the Cholesky factor of W W^T + D
        w, d = self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag
        root = d.sqrt().unsqueeze(-1)
        scaled = w / root
        k = scaled @ scaled.mT + kiln.eye(w.size(-2), dtype=w.dtype)
        return self._full(root * kiln.linalg.cholesky(k))

    @lazy_property
    def precision_matrix(self):
        # Woodbury: D^-1 - D^-1 W (I + W^T D^-1 W)^-1 W^T D^-1
        w, d = self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag
        a = kiln.linalg.solve_triangular(self._capacitance_tril, w.mT / d.unsqueeze(-2), upper=False)
        return self._full(kiln.diag_embed(d.reciprocal()) - a.mT @ a)

    def _log_det(self):
        return 2 * _half_log_det(self._capacitance_tril) + self._unbroadcasted_cov_diag.log().sum(-1)

    def _mahalanobis(self, diff):
        w, d = self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag
        diff_d = diff / d
        wt_diff = batch_mv(w.mT, diff_d)
        tril = self._capacitance_tril
        batch = kiln.broadcast_shapes(tuple(tril.shape[:-2]), tuple(wt_diff.shape[:-1]))
        m = tril.size(-1)
        solved = _solve_lower(tril.expand(tuple(batch) + (m, m)), wt_diff.expand(tuple(batch) + (m,)))
        return (diff * diff_d).sum(-1) - solved.pow(2).sum(-1)

    def rsample(self, sample_shape=kiln.Size()):
        shape = self._extended_shape(sample_shape)
        w_shape = tuple(shape[:-1]) + tuple(self.cov_factor.shape[-1:])
        eps_w = _standard_normal(w_shape, dtype=self.loc.dtype, device=self.loc.device)
        eps_d = _standard_normal(shape, dtype=self.loc.dtype, device=self.loc.device)
        return (self.loc + batch_mv(self._unbroadcasted_cov_factor, eps_w)
                + self._unbroadcasted_cov_diag.sqrt() * eps_d)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        n = self._event_shape[0]
        return -0.5 * (n * math.log(2 * math.pi) + self._log_det() + self._mahalanobis(value - self.loc))

    def entropy(self):
        n = self._event_shape[0]
        h = 0.5 * (n * (1.0 + math.log(2 * math.pi)) + self._log_det())
        return h.expand(self._batch_shape)
