"""_BatchNorm, BatchNorm1d and BatchNorm2d (torch.nn.modules.batchnorm)."""
from ... import _C
from .. import functional as F, init
from ..parameter import Parameter, UninitializedBuffer, UninitializedParameter
from .lazy import LazyModuleMixin
from .module import Module


class _NormBase(Module):
    """What batch and instance normalization share (torch's _NormBase): the learnable affine weight/bias and
    the running statistics (running_mean, running_var, num_batches_tracked buffers, as torch's state_dict)."""
    _expected_dims = ()
    _version = 2  # torch's _NormBase (num_batches_tracked added in version 2)

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True, device=None,
                 dtype=None):
        super().__init__()
        self.num_features, self.eps, self.momentum = num_features, eps, momentum
        self.affine, self.track_running_stats = affine, track_running_stats
        kw = {"dtype": dtype} if dtype is not None else {}
        if affine:
            self.weight = Parameter(_C.ones([num_features], **kw))
            self.bias = Parameter(_C.zeros([num_features], **kw))
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        if track_running_stats:
            self.register_buffer("running_mean", _C.zeros([num_features], **kw))
            self.register_buffer("running_var", _C.ones([num_features], **kw))
            self.register_buffer("num_batches_tracked", _C.zeros([], dtype=_C.int64))
        else:
            self.register_buffer("running_mean", None)
            self.register_buffer("running_var", None)
            self.register_buffer("num_batches_tracked", None)

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                              error_msgs):
        # torch's _NormBase: a state_dict of version < 2 (saved before the buffer existed) or without a version
        # (written by hand) that lacks num_batches_tracked loads with the count 0 instead of a missing key
        key = prefix + "num_batches_tracked"
        version = local_metadata.get("version", None)
        if (version is None or version < 2) and self.track_running_stats and self.num_batches_tracked is not None \
                and key not in state_dict:
            state_dict[key] = _C.zeros([], dtype=_C.int64)
        super()._load_from_state_dict(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                                      error_msgs)

    def reset_running_stats(self):
        if self.track_running_stats:
            init.zeros_(self.running_mean)
            init.ones_(self.running_var)
            init.zeros_(self.num_batches_tracked)

    def reset_parameters(self):
        self.reset_running_stats()
        if self.affine:
            init.ones_(self.weight)
            init.zeros_(self.bias)

    def _check_input_dim(self, input):
        if input.dim() not in self._expected_dims:
            raise ValueError(f"expected {' or '.join(f'{d}D' for d in self._expected_dims)} input "
                             f"(got {input.dim()}D input)")

    def extra_repr(self):
        return (f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, affine={self.affine}, "
                f"track_running_stats={self.track_running_stats}")


class _BatchNorm(_NormBase):
    """Per-channel normalization over the batch (and spatial) dims: batch statistics in training, the running
    ones in eval."""

    def forward(self, input):
        self._check_input_dim(input)
        momentum = 0.0 if self.momentum is None else self.momentum
        if self.training and self.track_running_stats and self.num_batches_tracked is not None:
            self.num_batches_tracked.add_(1)
            if self.momentum is None:  # cumulative moving average
                momentum = 1.0 / float(self.num_batches_tracked.item())
        # Batch statistics when training, or when there are no running ones to use.
        use_batch_stats = self.training or self.running_mean is None
        track = not self.training or self.track_running_stats
        return F.batch_norm(input, self.running_mean if track else None, self.running_var if track else None,
                            self.weight, self.bias, use_batch_stats, momentum, self.eps)


class BatchNorm1d(_BatchNorm):
    """Over (N, C) or (N, C, L) input."""
    _expected_dims = (2, 3)


class BatchNorm2d(_BatchNorm):
    """Over (N, C, H, W) input."""
    _expected_dims = (4,)


class BatchNorm3d(_BatchNorm):
    """Over (N, C, D, H, W) input."""
    _expected_dims = (5,)


class SyncBatchNorm(_BatchNorm):
    """torch's SyncBatchNorm on one process (kiln has no process groups): batch norm over any input of at
    least 2 dims, as BatchNorm does; convert_sync_batchnorm swaps a model's BatchNorm*d for it."""

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True,
                 process_group=None, device=None, dtype=None):
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device, dtype)
        self.process_group = process_group

    def _check_input_dim(self, input):
        if input.dim() < 2:
            raise ValueError(f"expected at least 2D input (got {input.dim()}D input)")

    def _check_non_zero_input_channels(self, input):
        if input.size(1) == 0:
            raise ValueError("SyncBatchNorm number of input channels should be non-zero")

    def forward(self, input):
        self._check_input_dim(input)
        self._check_non_zero_input_channels(input)
        return super().forward(input)

    @classmethod
    def convert_sync_batchnorm(cls, module, process_group=None):
        module_output = module
        if isinstance(module, _BatchNorm) and not isinstance(module, SyncBatchNorm):
            module_output = SyncBatchNorm(module.num_features, module.eps, module.momentum, module.affine,
                                          module.track_running_stats, process_group)
            if module.affine:
                with _no_grad():
                    module_output.weight = module.weight
                    module_output.bias = module.bias
            module_output.running_mean = module.running_mean
            module_output.running_var = module.running_var
            module_output.num_batches_tracked = module.num_batches_tracked
            if hasattr(module, "qconfig"):
                module_output.qconfig = module.qconfig
        for name, child in module.named_children():
            module_output.add_module(name, cls.convert_sync_batchnorm(child, process_group))
        del module
        return module_output


def _no_grad():
    from ...autograd.grad_mode import no_grad
    return no_grad()


class _LazyNormBase(LazyModuleMixin):
    """torch's _LazyNormBase: num_features from the first input's dim 1; weight/bias and the running
    statistics materialized then and reset as the eager layer's."""

    def __init__(self, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True, device=None, dtype=None):
        LazyModuleMixin.__init__(self, 0, eps, momentum, False, False, device, dtype)
        self.affine, self.track_running_stats = affine, track_running_stats
        if self.affine:
            self.weight = UninitializedParameter(dtype=dtype)
            self.bias = UninitializedParameter(dtype=dtype)
        if self.track_running_stats:
            self.running_mean = UninitializedBuffer(dtype=dtype)
            self.running_var = UninitializedBuffer(dtype=dtype)
            self.num_batches_tracked = _C.zeros([], dtype=_C.int64)

    def reset_parameters(self):
        if not self.has_uninitialized_params() and self.num_features != 0:
            super().reset_parameters()

    def initialize_parameters(self, input):
        if self.has_uninitialized_params():
            self.num_features = input.shape[1]
            if self.affine:
                self.weight.materialize((self.num_features,))
                self.bias.materialize((self.num_features,))
            if self.track_running_stats:
                self.running_mean.materialize((self.num_features,))
                self.running_var.materialize((self.num_features,))
            self.reset_parameters()


class LazyBatchNorm1d(_LazyNormBase, _BatchNorm):
    cls_to_become = BatchNorm1d
    _expected_dims = BatchNorm1d._expected_dims


class LazyBatchNorm2d(_LazyNormBase, _BatchNorm):
    cls_to_become = BatchNorm2d
    _expected_dims = BatchNorm2d._expected_dims


class LazyBatchNorm3d(_LazyNormBase, _BatchNorm):
    cls_to_become = BatchNorm3d
    _expected_dims = BatchNorm3d._expected_dims
