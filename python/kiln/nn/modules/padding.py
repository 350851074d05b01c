"""Padding layers (torch.nn.modules.padding) over F.pad: an int pads every side of the last n dims."""
from .. import functional as F
from .module import Module


def _sides(padding, n):
    return (padding,) * (2 * n) if isinstance(padding, int) else tuple(padding)


class _ConstantPadNd(Module):
    def __init__(self, padding, value):
        super().__init__()
        self.padding, self.value = _sides(padding, self._n), value

    def forward(self, input):
        return F.pad(input, self.padding, "constant", self.value)

    def extra_repr(self):
        return f"padding={self.padding}, value={self.value}"


class ConstantPad1d(_ConstantPadNd):
    _n = 1


class ConstantPad2d(_ConstantPadNd):
    _n = 2


class ConstantPad3d(_ConstantPadNd):
    _n = 3


class _ZeroPadNd(_ConstantPadNd):
    def __init__(self, padding):
        super().__init__(padding, 0.0)

    def extra_repr(self):
        return f"{self.padding}"


class ZeroPad1d(_ZeroPadNd):
    _n = 1


class ZeroPad2d(_ZeroPadNd):
    _n = 2


class ZeroPad3d(_ZeroPadNd):
    _n = 3


class _IndexedPadNd(Module):
    def __init__(self, padding):
        super().__init__()
        self.padding = _sides(padding, self._n)

    def forward(self, input):
        return F.pad(input, self.padding, self._mode)

    def extra_repr(self):
        return f"{self.padding}"


class ReflectionPad1d(_IndexedPadNd):
    _n, _mode = 1, "reflect"


class ReflectionPad2d(_IndexedPadNd):
    _n, _mode = 2, "reflect"


class ReflectionPad3d(_IndexedPadNd):
    _n, _mode = 3, "reflect"


class ReplicationPad1d(_IndexedPadNd):
    _n, _mode = 1, "replicate"


class ReplicationPad2d(_IndexedPadNd):
    _n, _mode = 2, "replicate"


class ReplicationPad3d(_IndexedPadNd):
    _n, _mode = 3, "replicate"


class CircularPad1d(_IndexedPadNd):
    _n, _mode = 1, "circular"


class CircularPad2d(_IndexedPadNd):
    _n, _mode = 2, "circular"


class CircularPad3d(_IndexedPadNd):
    _n, _mode = 3, "circular"
