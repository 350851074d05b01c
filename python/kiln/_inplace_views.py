"""The in-place view methods of Tensor: t_(), transpose_() (swapdims_/swapaxes_), unsqueeze_(),
squeeze_(), as_strided_(), and resize_()/resize_as_().

Each computes the out-of-place view (so argument checks and errors are the view op's, and autograd
records its node) and then makes self take that view's sizes, strides and history
(runtime/autograd/inplace_view.h): self keeps its storage and identity and is returned, as torch.
"""
from . import _C


def _adopt(self, view, name):
    return _C._adopt_view_geometry(self, view, name)


def t_(self):
    _C._check_inplace(self, "t_")
    if self.dim() > 2:
        raise RuntimeError(f"t_() expects a tensor with <= 2 dimensions, but self is {self.dim()}D")
    return _adopt(self, _C.TensorBase.t(self), "t_")


def transpose_(self, dim0, dim1):
    _C._check_inplace(self, "transpose_")  # torch checks autograd first
    return _adopt(self, _C.TensorBase.transpose(self, dim0, dim1), "transpose_")


def unsqueeze_(self, dim):
    _C._check_inplace(self, "unsqueeze_")  # torch checks autograd first
    return _adopt(self, _C.TensorBase.unsqueeze(self, dim), "unsqueeze_")


def squeeze_(self, dim=None):
    _C._check_inplace(self, "squeeze_")  # torch checks autograd first
    view = _C.TensorBase.squeeze(self) if dim is None else _C.TensorBase.squeeze(self, dim)
    return _adopt(self, view, "squeeze_")


def as_strided_(self, size, stride, storage_offset=None):
    _C._check_inplace(self, "as_strided_")  # torch checks autograd first
    return _adopt(self, _C.TensorBase.as_strided(self, list(size), list(stride), storage_offset), "as_strided_")


def resize_(self, *sizes, memory_format=None):
    """Contiguous sizes on the same storage (grown when needed); the strides are kept when the sizes
    do not change, as torch."""
    if len(sizes) == 1 and isinstance(sizes[0], (tuple, list)):
        sizes = sizes[0]
    return _C._resize_(self, list(sizes))


def resize_as_(self, other, memory_format=None):
    return resize_(self, list(other.shape))

