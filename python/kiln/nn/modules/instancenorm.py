"""InstanceNorm1d/2d/3d (torch.nn.modules.instancenorm)."""
import warnings

from .. import functional as F
from .batchnorm import _LazyNormBase, _NormBase


class _InstanceNorm(_NormBase):
    """Per-sample, per-channel normalization over the spatial dims; the parameters and buffers of
    _NormBase (weight/bias when affine, running_mean/running_var/num_batches_tracked when
    track_running_stats), as torch's state_dict."""
    _no_batch_dim = 2

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=False, track_running_stats=False, device=None,
                 dtype=None):
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device, dtype)

    def _apply_instance_norm(self, input):
        return F.instance_norm(input, self.running_mean, self.running_var, self.weight, self.bias,
                               self.training or not self.track_running_stats,
                               self.momentum if self.momentum is not None else 0.0, self.eps)

    def forward(self, input):
        self._check_input_dim(input)
        feature_dim = input.dim() - self._no_batch_dim
        if input.shape[feature_dim] != self.num_features:
            if self.affine:
                raise ValueError(f"expected input's size at dim={feature_dim} to match num_features "
                                 f"({self.num_features}), but got: {input.shape[feature_dim]}.")
            warnings.warn(f"input's size at dim={feature_dim} does not match num_features. You can silence this "
                          "warning by not passing in num_features, which is not used because affine=False")
        if input.dim() == self._no_batch_dim:
            return self._apply_instance_norm(input.unsqueeze(0)).squeeze(0)
        return self._apply_instance_norm(input)


class InstanceNorm1d(_InstanceNorm):
    """(N, C, L) or (C, L) input."""
    _expected_dims = (2, 3)
    _no_batch_dim = 2


class InstanceNorm2d(_InstanceNorm):
    """(N, C, H, W) or (C, H, W) input."""
    _expected_dims = (3, 4)
    _no_batch_dim = 3


class InstanceNorm3d(_InstanceNorm):
    """(N, C, D, H, W) or (C, D, H, W) input."""
    _expected_dims = (4, 5)
    _no_batch_dim = 4


class LazyInstanceNorm1d(_LazyNormBase, _InstanceNorm):
    cls_to_become = InstanceNorm1d
    _expected_dims, _no_batch_dim = InstanceNorm1d._expected_dims, InstanceNorm1d._no_batch_dim
    # torch's defaults are _LazyNormBase's: affine=True, track_running_stats=True (unlike InstanceNorm's)


class LazyInstanceNorm2d(LazyInstanceNorm1d):
    cls_to_become = InstanceNorm2d
    _expected_dims, _no_batch_dim = InstanceNorm2d._expected_dims, InstanceNorm2d._no_batch_dim


class LazyInstanceNorm3d(LazyInstanceNorm1d):
    cls_to_become = InstanceNorm3d
    _expected_dims, _no_batch_dim = InstanceNorm3d._expected_dims, InstanceNorm3d._no_batch_dim
