"""kiln.nn.utils.parametrizations: weight_norm, spectral_norm and orthogonal as parametrizations
(kiln.nn.utils.parametrize), following torch 2.x's torch/nn/utils/parametrizations.py: the same
modules, buffers and state_dict keys, so torch checkpoints load both ways."""
from enum import Enum, auto

import kiln

from .. import functional as F
from ..modules.module import Module
from . import _orthogonal_maps as maps
from . import parametrize
from .weight_norm import norm_except_dim

__all__ = ["orthogonal", "spectral_norm", "weight_norm"]


# ---- weight_norm ----
class _WeightNorm(Module):
    """weight = g * v / ||v||, the norm over every dim but `dim` (dim=None: over all dims)."""

    def __init__(self, dim=0):
        super().__init__()
        self.dim = -1 if dim is None else dim

    def forward(self, weight_g, weight_v):
        return weight_v * (weight_g / norm_except_dim(weight_v, 2, self.dim))

    def right_inverse(self, weight):
        return norm_except_dim(weight, 2, self.dim), weight


def weight_norm(module, name="weight", dim=0):
    """Weight normalization as a parametrization (torch 2.1+): module.parametrizations.<name> holds
    original0 = g and original1 = v. Checkpoints of the old hook style (<name>_g, <name>_v) load too."""
    parametrize.register_parametrization(module, name, _WeightNorm(dim), unsafe=True)

    def _weight_norm_compat_hook(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                                 error_msgs):
        g_key, v_key = f"{prefix}{name}_g", f"{prefix}{name}_v"
        if g_key in state_dict and v_key in state_dict:
            state_dict[f"{prefix}parametrizations.{name}.original0"] = state_dict.pop(g_key)
            state_dict[f"{prefix}parametrizations.{name}.original1"] = state_dict.pop(v_key)

    module._register_load_state_dict_pre_hook(_weight_norm_compat_hook)
    return module


# ---- spectral_norm ----
class _SpectralNorm(Module):
    """weight / sigma, sigma the largest singular value of the weight reshaped to a matrix, estimated
    by power iteration on the buffers _u and _v (advanced in training mode); 1-D weights are
    normalized exactly."""

    def __init__(self, weight, n_power_iterations=1, dim=0, eps=1e-12):
        super().__init__()
        ndim = weight.ndim
        if dim >= ndim or dim < -ndim:
            raise IndexError("Dimension out of range (expected to be in range of "
                             f"[-{ndim}, {ndim - 1}] but got {dim})")
        if n_power_iterations <= 0:
            raise ValueError("Expected n_power_iterations to be positive, but "
                             f"got n_power_iterations={n_power_iterations}")
        self.dim = dim if dim >= 0 else dim + ndim
        self.eps = eps
        if ndim > 1:
            self.n_power_iterations = n_power_iterations
            weight_mat = self._reshape_weight_to_matrix(weight)
            h, w = weight_mat.size()
            # drawn in torch's order (u, then v) from the default generator: seeded runs match torch
            u = weight_mat.new_empty(h).normal_(0, 1)
            v = weight_mat.new_empty(w).normal_(0, 1)
            self.register_buffer("_u", F.normalize(u, dim=0, eps=self.eps))
            self.register_buffer("_v", F.normalize(v, dim=0, eps=self.eps))
            self._power_method(weight_mat, 15)

    def _reshape_weight_to_matrix(self, weight):
        if self.dim != 0:
            weight = weight.permute(self.dim, *(d for d in range(weight.dim()) if d != self.dim))
        return weight.flatten(1)

    def _power_method(self, weight_mat, n_power_iterations):
        # in place: the buffers are the module's state (and torch's DataParallel relies on it)
        with kiln.no_grad():
            for _ in range(n_power_iterations):
                self._u.copy_(F.normalize(kiln.mv(weight_mat, self._v), dim=0, eps=self.eps))
                self._v.copy_(F.normalize(kiln.mv(weight_mat.t(), self._u), dim=0, eps=self.eps))

    def forward(self, weight):
        if weight.ndim == 1:
            return F.normalize(weight, dim=0, eps=self.eps)
        weight_mat = self._reshape_weight_to_matrix(weight)
        if self.training:
            self._power_method(weight_mat, self.n_power_iterations)
        # clones: a second forward's in-place update must not invalidate the first one's graph
        u = self._u.clone()
        v = self._v.clone()
        sigma = kiln.dot(u, kiln.mv(weight_mat, v))
        return weight / sigma

    def right_inverse(self, value):
        return value


def spectral_norm(module, name="weight", n_power_iterations=1, eps=1e-12, dim=None):
    """Spectral normalization as a parametrization; dim defaults to 1 for ConvTranspose, else 0."""
    weight = getattr(module, name, None)
    if not isinstance(weight, kiln.Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if dim is None:
        from ..modules import conv
        transposed = tuple(getattr(conv, c) for c in ("ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d")
                           if hasattr(conv, c))
        dim = 1 if transposed and isinstance(module, transposed) else 0
    parametrize.register_parametrization(module, name, _SpectralNorm(weight, n_power_iterations, dim, eps))
    return module


# ---- orthogonal ----
class _OrthMaps(Enum):
    matrix_exp = auto()
    cayley = auto()
    householder = auto()


def _is_orthogonal(Q):
    n, k = Q.size(-2), Q.size(-1)
    eye = kiln.eye(k, dtype=Q.dtype)
    eps = 10.0 * n * kiln.finfo(Q.dtype).eps
    return kiln.allclose(Q.transpose(-2, -1) @ Q, eye, atol=eps)


class _Orthogonal(Module):
    """Maps an unconstrained matrix (batch) to an orthogonal one: exp of a skew-symmetric matrix, or
    a product of Householder reflectors; with use_trivialization the result is left-multiplied by the
    orthogonal buffer `base` (the dynamic trivialization of Lezcano-Casado, 2019)."""

    def __init__(self, weight, orthogonal_map, *, use_trivialization=True):
        super().__init__()
        self.shape = weight.shape
        self.orthogonal_map = orthogonal_map
        if use_trivialization:
            self.register_buffer("base", None)

    def forward(self, X):
        n, k = X.size(-2), X.size(-1)
        transposed = n < k
        if transposed:
            X = X.transpose(-2, -1)
            n, k = k, n
        # X is tall here
        if self.orthogonal_map in (_OrthMaps.matrix_exp, _OrthMaps.cayley):
            X = X.tril()
            if n != k:  # embed into a square matrix
                X = kiln.cat([X, X.new_zeros(n, n - k).expand(*X.shape[:-2], -1, -1)], dim=-1)
            A = X - X.transpose(-2, -1)  # skew-symmetric
            if self.orthogonal_map == _OrthMaps.matrix_exp:
                Q = maps.matrix_exp(A)
            else:  # the Cayley retraction (I - A/2)^{-1} (I + A/2)
                Id = kiln.eye(n, dtype=A.dtype)
                Q = kiln.linalg.solve(kiln.add(Id, A, alpha=-0.5), kiln.add(Id, A, alpha=0.5))
            if n != k:
                Q = Q[..., :k]
        else:
            A = X.tril(diagonal=-1)
            tau = 2.0 / (1.0 + (A * A).sum(dim=-2))
            Q = maps.householder_product(A, tau)
            # X's diagonal holds the signs (+-1) of Q's columns; not differentiated, as in torch
            Q = Q * X.diagonal(dim1=-2, dim2=-1).int().unsqueeze(-2)
        if "base" in self._buffers:  # torch: hasattr(self, "base"), true once registered
            Q = self.base @ Q
        if transposed:
            Q = Q.transpose(-2, -1)
        return Q

    def right_inverse(self, Q):
        with kiln.no_grad():
            return self._right_inverse(Q)

    def _right_inverse(self, Q):
        if Q.shape != self.shape:
            raise ValueError(f"Expected a matrix or batch of matrices of shape {self.shape}. "
                             f"Got a tensor of shape {Q.shape}.")
        Q_init = Q
        n, k = Q.size(-2), Q.size(-1)
        transpose = n < k
        if transpose:
            Q = Q.transpose(-2, -1)
            n, k = k, n

        if "base" not in self._buffers:
            # without trivialization only the Householder map can be inverted (torch's note
            # [right_inverse expm cayley]): the reflectors of Q's QR, R's diagonal signs on the diagonal
            if self.orthogonal_map in (_OrthMaps.matrix_exp, _OrthMaps.cayley):
                raise NotImplementedError("It is not possible to assign to the matrix exponential "
                                          "or the Cayley parametrizations when use_trivialization=False.")
            A, tau = maps.geqrf(Q)
            diag = A.diagonal(dim1=-2, dim2=-1)
            diag.sign_()
            diag.copy_(kiln.where(tau == 0.0, -diag, diag))
            return A.transpose(-2, -1) if transpose else A

        if n == k:
            Q = Q.clone() if _is_orthogonal(Q) else maps.make_orthogonal(Q)
        else:  # complete Q to an n x n orthogonal matrix
            N = kiln.randn(*(tuple(Q.size()[:-2]) + (n, n - k)), dtype=Q.dtype)
            Q = maps.make_orthogonal(kiln.cat([Q, N], dim=-1))
        self.base = Q
        # -Id: the Householder map sends zeros with a diagonal of -1 to the identity's columns
        neg_id = kiln.zeros_like(Q_init)
        neg_id.diagonal(dim1=-2, dim2=-1).fill_(-1.0)
        return neg_id


def orthogonal(module, name="weight", orthogonal_map=None, *, use_trivialization=True):
    """Makes module.<name> (a matrix or batch of matrices) orthogonal: orthonormal columns when it is
    tall, rows when it is wide. orthogonal_map: "matrix_exp" (default for square matrices) or
    "householder" (default otherwise) or "cayley" ((I - A/2)^{-1} (I + A/2) through linalg.solve, A
    skew-symmetric), as torch."""
    weight = getattr(module, name, None)
    if not isinstance(weight, kiln.Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if weight.ndim < 2:
        raise ValueError(f"Expected a matrix or batch of matrices. Got a tensor of {weight.ndim} dimensions.")
    if orthogonal_map is None:
        orthogonal_map = "matrix_exp" if weight.size(-2) == weight.size(-1) else "householder"
    orth_enum = getattr(_OrthMaps, orthogonal_map, None)
    if orth_enum is None:
        raise ValueError('orthogonal_map has to be one of "matrix_exp", "cayley", "householder". '
                         f"Got: {orthogonal_map}")
    orth = _Orthogonal(weight, orth_enum, use_trivialization=use_trivialization)
    parametrize.register_parametrization(module, name, orth, unsafe=True)
    return module
