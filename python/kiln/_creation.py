"""kiln.tensor: a new tensor (a copy) from nested lists, numbers, NumPy arrays or tensors."""
import numpy as np

from . import _C

_NUMPY_OF = {"bool": np.bool_, "int32": np.int32, "int64": np.int64, "float32": np.float32, "float64": np.float64}


def _as_array(data, dtype=None):
    if isinstance(data, np.ndarray):
        return data
    if isinstance(data, (str, bytes)):
        raise TypeError(f"new(): invalid data type '{type(data).__name__}'")
    try:
        arr = np.array(data)
    except (ValueError, TypeError) as e:
        raise ValueError(f"tensor(): could not build a tensor from the data: {e}") from None
    if arr.dtype == object or arr.dtype.kind in "USV":
        raise TypeError(f"new(): invalid data type '{arr.dtype}'")
    if dtype is not None:  # convert once, straight from the Python values
        return arr.astype(_NUMPY_OF[str(dtype).split(".")[1]])
    # Python numbers follow torch's rules: float -> default dtype, int -> int64.
    if arr.dtype.kind == "f":
        arr = arr.astype(_NUMPY_OF[str(_C.get_default_dtype()).split(".")[1]])
    elif arr.dtype.kind in "iu":
        arr = arr.astype(np.int64)
    elif arr.dtype.kind != "b":
        raise TypeError(f"new(): unsupported data type '{arr.dtype}'")
    return arr


def tensor(data, *, dtype=None, device=None, requires_grad=False):
    """Like torch.tensor: always copies `data`."""
    from ._tensor import Tensor
    if isinstance(data, Tensor):
        t = data.detach().clone()
    else:
        t = _C.from_numpy(np.asarray(_as_array(data, dtype), order="C")).clone()
    if dtype is not None and t.dtype != dtype:
        t = t.to(dtype)
    if device is not None and str(device) != "cpu":
        raise RuntimeError(f"tensor(): device {device} is not available")
    if requires_grad:
        t.requires_grad_(True)
    return t
