"""Transforms: invertible (or at least differentiable) maps y = t(x) with the log |det dy/dx| that
TransformedDistribution needs. Each knows its domain and codomain constraints; `t.inv` is the inverse
map, and with cache_size=1 a transform remembers its latest (x, y) pair so that inverting a value it
just produced gives back the exact x it came from. The classes that combine transforms live in transform_base.py
and are re-exported here."""
import math
from numbers import Number

import kiln
import kiln.nn.functional as F

from . import constraints
from .transform_base import (CatTransform, ComposeTransform, IndependentTransform, ReshapeTransform,  # noqa: F401
                             StackTransform, Transform, _InverseTransform, identity_transform)
from .utils import clamp_probs, sum_rightmost

__all__ = ["AbsTransform", "AffineTransform", "CatTransform", "ComposeTransform", "CorrCholeskyTransform",
           "CumulativeDistributionTransform", "ExpTransform", "IndependentTransform", "LowerCholeskyTransform",
           "PowerTransform", "ReshapeTransform", "SigmoidTransform", "SoftmaxTransform", "SoftplusTransform",
           "StackTransform", "StickBreakingTransform", "TanhTransform", "Transform", "identity_transform"]


class ExpTransform(Transform):
    """y = exp(x)."""
    domain = constraints.real
    codomain = constraints.positive
    bijective = True
    sign = 1

    def __eq__(self, other):
        return isinstance(other, ExpTransform)

    __hash__ = Transform.__hash__

    def _call(self, x):
        return x.exp()

    def _inverse(self, y):
        return y.log()

    def log_abs_det_jacobian(self, x, y):
        return x


class PowerTransform(Transform):
    """y = x ** exponent on the positive half line."""
    domain = constraints.positive
    codomain = constraints.positive
    bijective = True

    def __init__(self, exponent, cache_size=0):
        super().__init__(cache_size=cache_size)
        self.exponent = exponent if isinstance(exponent, kiln.Tensor) else kiln.tensor(float(exponent))

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return PowerTransform(self.exponent, cache_size=cache_size)

    @property
    def sign(self):
        return self.exponent.sign()

    def __eq__(self, other):
        return isinstance(other, PowerTransform) and bool(self.exponent.eq(other.exponent).all())

    __hash__ = Transform.__hash__

    def _call(self, x):
        return x.pow(self.exponent)

    def _inverse(self, y):
        return y.pow(1 / self.exponent)

    def log_abs_det_jacobian(self, x, y):
        return (self.exponent * y / x).abs().log()

    def forward_shape(self, shape):
        return kiln.broadcast_shapes(tuple(shape), tuple(self.exponent.shape))

    inverse_shape = forward_shape


class SigmoidTransform(Transform):
    """y = 1 / (1 + exp(-x)), kept strictly inside (0, 1)."""
    domain = constraints.real
    codomain = constraints.unit_interval
    bijective = True
    sign = 1

    def __eq__(self, other):
        return isinstance(other, SigmoidTransform)

    __hash__ = Transform.__hash__

    def _call(self, x):
        return clamp_probs(kiln.sigmoid(x))

    def _inverse(self, y):
        y = clamp_probs(y)
        return y.log() - (-y).log1p()

    def log_abs_det_jacobian(self, x, y):
        return -F.softplus(-x) - F.softplus(x)


class SoftplusTransform(Transform):
    """y = log(1 + exp(x))."""
    domain = constraints.real
    codomain = constraints.positive
    bijective = True
    sign = 1

    def __eq__(self, other):
        return isinstance(other, SoftplusTransform)

    __hash__ = Transform.__hash__

    def _call(self, x):
        return F.softplus(x)

    def _inverse(self, y):
        # log(exp(y) - 1) = y + log(1 - exp(-y))
        return (-y).expm1().neg().log() + y

    def log_abs_det_jacobian(self, x, y):
        return -F.softplus(-x)


class TanhTransform(Transform):
    """y = tanh(x); its log-det 2 (log 2 - x - softplus(-2x)) stays finite for large |x|."""
    domain = constraints.real
    codomain = constraints.interval(-1.0, 1.0)
    bijective = True
    sign = 1

    def __eq__(self, other):
        return isinstance(other, TanhTransform)

    __hash__ = Transform.__hash__

    def _call(self, x):
        return x.tanh()

    def _inverse(self, y):
        return kiln.atanh(y)

    def log_abs_det_jacobian(self, x, y):
        return 2.0 * (math.log(2.0) - x - F.softplus(-2.0 * x))


class AbsTransform(Transform):
    """y = |x| (not invertible: its `inv` returns the nonnegative preimage)."""
    domain = constraints.real
    codomain = constraints.positive

    def __eq__(self, other):
        return isinstance(other, AbsTransform)

    __hash__ = Transform.__hash__

    def _call(self, x):
        return x.abs()

    def _inverse(self, y):
        return y


class AffineTransform(Transform):
    """y = loc + scale * x, elementwise; with event_dim > 0 the log-det sums over that many rightmost
    dimensions."""
    bijective = True

    def __init__(self, loc, scale, event_dim=0, cache_size=0):
        super().__init__(cache_size=cache_size)
        self.loc, self.scale = loc, scale
        self._event_dim = event_dim

    @property
    def event_dim(self):
        return self._event_dim

    @property
    def domain(self):
        return constraints.real if self._event_dim == 0 else constraints.independent(constraints.real,
                                                                                      self._event_dim)

    codomain = domain

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return AffineTransform(self.loc, self.scale, self._event_dim, cache_size=cache_size)

    def __eq__(self, other):
        if not isinstance(other, AffineTransform):
            return False

        def same(a, b):
            if isinstance(a, Number) and isinstance(b, Number):
                return a == b
            return bool(kiln.as_tensor(a == b).all())
        return same(self.loc, other.loc) and same(self.scale, other.scale)

    __hash__ = Transform.__hash__

    @property
    def sign(self):
        if isinstance(self.scale, Number):
            return 1 if self.scale > 0 else -1 if self.scale < 0 else 0
        return self.scale.sign()

    def _call(self, x):
        return self.loc + self.scale * x

    def _inverse(self, y):
        return (y - self.loc) / self.scale

    def log_abs_det_jacobian(self, x, y):
        shape = tuple(x.shape)
        if isinstance(self.scale, Number):
            result = kiln.full_like(x, math.log(abs(self.scale)))
        else:
            result = self.scale.abs().log()
        if self._event_dim:
            result = sum_rightmost(result, self._event_dim)
            shape = shape[:len(shape) - self._event_dim]
        return result.expand(shape)

    def forward_shape(self, shape):
        return kiln.broadcast_shapes(tuple(shape), tuple(getattr(self.loc, "shape", ())),
                                     tuple(getattr(self.scale, "shape", ())))

    inverse_shape = forward_shape


class SoftmaxTransform(Transform):
    """Real vectors to the simplex by exp-and-normalize (not injective: `inv` returns log y)."""
    domain = constraints.real_vector
    codomain = constraints.simplex

    def __eq__(self, other):
        return isinstance(other, SoftmaxTransform)

    __hash__ = Transform.__hash__

    def _call(self, x):
        probs = (x - x.max(-1, keepdim=True)[0]).exp()
        return probs / probs.sum(-1, keepdim=True)

    def _inverse(self, y):
        return y.log()


def _stick_offsets(x):
    """log of K, K-1, ..., 1 for a vector of K reals: centres the logits so that x = 0 maps to the
    uniform point of the simplex."""
    k = x.shape[-1]
    return (k + 1 - x.new_ones(k).cumsum(-1)).log()


class StickBreakingTransform(Transform):
    """Real K-vectors to the K+1 simplex: each coordinate, through a sigmoid, takes its share of what
    the previous ones left."""
    domain = constraints.real_vector
    codomain = constraints.simplex
    bijective = True

    def __eq__(self, other):
        return isinstance(other, StickBreakingTransform)

    __hash__ = Transform.__hash__

    def _call(self, x):
        finfo = kiln.finfo(x.dtype)
        z = kiln.sigmoid(x - _stick_offsets(x)).clamp(min=finfo.tiny, max=1 - finfo.eps)
        remaining = (1 - z).cumprod(-1)
        return F.pad(z, [0, 1], value=1) * F.pad(remaining, [1, 0], value=1)

    def _inverse(self, y):
        head = y[..., :-1]
        k = head.shape[-1]
        left = (1 - head.cumsum(-1)).clamp(min=kiln.finfo(y.dtype).tiny)
        return head.log() - left.log() + (k + 1 - y.new_ones(k).cumsum(-1)).log()

    def log_abs_det_jacobian(self, x, y):
        x = x - _stick_offsets(x)
        return (-x + F.logsigmoid(x) + y[..., :-1].log()).sum(-1)

    def forward_shape(self, shape):
        return tuple(shape[:-1]) + (shape[-1] + 1,)

    def inverse_shape(self, shape):
        return tuple(shape[:-1]) + (shape[-1] - 1,)


class LowerCholeskyTransform(Transform):
    """Square matrices to lower triangular ones with a positive diagonal (exp of the diagonal)."""
    domain = constraints.independent(constraints.real, 2)
    codomain = constraints.lower_cholesky

    def __eq__(self, other):
        return isinstance(other, LowerCholeskyTransform)

    __hash__ = Transform.__hash__

    def _call(self, x):
        return x.tril(-1) + x.diagonal(dim1=-2, dim2=-1).exp().diag_embed()

    def _inverse(self, y):
        return y.tril(-1) + y.diagonal(dim1=-2, dim2=-1).log().diag_embed()


class CorrCholeskyTransform(Transform):
    """Unconstrained vectors of length n(n-1)/2 to Cholesky factors of n x n correlation matrices:
    the entries, through tanh, fill the strict lower triangle row by row, and each row is scaled so
    that it has unit norm."""
    domain = constraints.real_vector
    codomain = constraints.corr_cholesky
    bijective = True

    def __eq__(self, other):
        return isinstance(other, CorrCholeskyTransform)

    __hash__ = Transform.__hash__

    @staticmethod
    def _size(m):
        n = round((0.25 + 2 * m) ** 0.5 + 0.5)
        if n * (n - 1) // 2 != m:
            raise ValueError("The last dimension of the input must be of the form n(n-1)/2")
        return n

    def _call(self, x):
        x = kiln.tanh(x)
        eps = kiln.finfo(x.dtype).eps
        x = x.clamp(min=-1 + eps, max=1 - eps)
        n = self._size(x.shape[-1])
        rows = []
        k = 0
        batch = tuple(x.shape[:-1])
        for i in range(n):
            z = x[..., k:k + i]
            k += i
            # w_ij = z_ij * sqrt(1 - sum_{l<j} w_il^2); diagonal takes what is left
            left = x.new_ones(batch)
            row = []
            for j in range(i):
                row.append(z[..., j] * left.sqrt())
                left = left * (1 - z[..., j].pow(2))
            row.append(left.sqrt())
            row += [x.new_zeros(batch)] * (n - i - 1)
            rows.append(kiln.stack(row, -1))
        return kiln.stack(rows, -2)

    def _inverse(self, y):
        n = y.shape[-1]
        parts = []
        for i in range(1, n):
            left = y.new_ones(tuple(y.shape[:-2]))
            for j in range(i):
                w = y[..., i, j]
                z = w / left.sqrt()
                parts.append(z)
                left = left - w.pow(2)
        z = kiln.stack(parts, -1)
        return kiln.atanh(z)

    def log_abs_det_jacobian(self, x, y):
        # |det| = prod over rows i, columns j < i of sqrt(1 - sum_{l<j} w_il^2) * (1 - tanh^2 x)
        n = y.shape[-1]
        total = 0
        for i in range(1, n):
            left = y.new_ones(tuple(y.shape[:-2]))
            for j in range(i):
                total = total + 0.5 * left.log()
                left = left - y[..., i, j].pow(2)
        tanh_term = (2.0 * (math.log(2.0) - x - F.softplus(-2.0 * x))).sum(-1)
        return total + tanh_term

    def forward_shape(self, shape):
        n = self._size(shape[-1])
        return tuple(shape[:-1]) + (n, n)

    def inverse_shape(self, shape):
        n = shape[-1]
        return tuple(shape[:-2]) + (n * (n - 1) // 2,)


class CumulativeDistributionTransform(Transform):
    """x to the distribution's cdf(x) in [0, 1]; its log-det is the log density."""
    bijective = True
    codomain = constraints.unit_interval
    sign = 1

    def __init__(self, distribution, cache_size=0):
        super().__init__(cache_size=cache_size)
        self.distribution = distribution

    @property
    def domain(self):
        return self.distribution.support

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return CumulativeDistributionTransform(self.distribution, cache_size=cache_size)

    def _call(self, x):
        return self.distribution.cdf(x)

    def _inverse(self, y):
        return self.distribution.icdf(y)

    def log_abs_det_jacobian(self, x, y):
        return self.distribution.log_prob(x)
