"""torch.types: the type aliases annotations import (`from torch.types import _size, Number, Device`)."""
import builtins
from typing import Any, List, Sequence, Tuple, Union

from . import _C
from ._device import device as _device_cls
from ._size import Size

_TensorOrTensors = Union[_C.TensorBase, Sequence[_C.TensorBase]]
_int = builtins.int
_float = builtins.float
_bool = builtins.bool
_dtype = _C.dtype
_device = _device_cls
_size = Union[Size, List[_int], Tuple[_int, ...]]
Number = Union[builtins.int, builtins.float, builtins.bool]
Device = Union[_device, str, _int, None]
SymInt = builtins.int

__all__ = ["Any", "Device", "List", "Number", "Sequence", "Tuple", "Union", "_TensorOrTensors", "_bool", "_device",
           "_dtype", "_float", "_int", "_size", "SymInt"]
