"""Facts about dtypes, as torch has them: finfo / iinfo (numeric limits), promote_types and
result_type (the promotion rules, asked of the kernels' own rule on empty tensors)."""
import numpy as np

from . import _C

# (bits, mantissa bits without the implicit one, minimum normal exponent) of each float dtype.
_FLOAT_LAYOUT = {"float16": (16, 10, -14), "bfloat16": (16, 7, -126), "float32": (32, 23, -126),
                 "float64": (64, 52, -1022)}
_INT_BITS = {"uint8": 8, "int8": 8, "int16": 16, "int32": 32, "int64": 64, "bool": 8}


def _name(dtype):
    if not isinstance(dtype, _C.dtype):
        raise TypeError(f"finfo(): argument 'type' must be kiln.dtype, not {type(dtype).__name__}")
    return str(dtype).split(".")[1]


class finfo:
    """Limits of a floating dtype: bits, eps, max, min, tiny (= smallest_normal), resolution."""

    def __init__(self, type=None):
        dtype = _C.get_default_dtype() if type is None else type
        name = _name(dtype)
        if name not in _FLOAT_LAYOUT:
            raise TypeError(f"finfo(): torch.finfo() requires a floating point input type. Use torch.iinfo to "
                            f"handle 'torch.finfo' (got {dtype})".replace("torch.", "kiln."))
        bits, mantissa, min_exp = _FLOAT_LAYOUT[name]
        max_exp = 1 - min_exp  # the largest exponent: the range is symmetric around the bias
        self.dtype = name
        self.bits = bits
        self.eps = 2.0 ** -mantissa
        self.max = float((2 - 2.0 ** -mantissa) * 2.0 ** max_exp)
        self.min = -self.max
        self.tiny = self.smallest_normal = 2.0 ** min_exp
        self.resolution = 10.0 ** -int(np.floor(mantissa * np.log10(2)))

    def __repr__(self):
        return (f"finfo(resolution={self.resolution}, min={self.min:g}, max={self.max:g}, eps={self.eps:g}, "
                f"smallest_normal={self.tiny:g}, tiny={self.tiny:g}, dtype={self.dtype})")


class iinfo:
    """Limits of an integer dtype: bits, max, min."""

    def __init__(self, type):
        name = _name(type)
        if name == "bool":
            raise TypeError("torch.bool is not supported by torch.iinfo")
        if name not in _INT_BITS:
            raise TypeError(f"iinfo(): requires an integer input type, got {type}")
        self.dtype = name
        self.bits = _INT_BITS[name]
        if name in ("bool", "uint8"):
            self.min, self.max = 0, 2 ** self.bits - 1 if name == "uint8" else 1
        else:
            self.min, self.max = -2 ** (self.bits - 1), 2 ** (self.bits - 1) - 1

    def __repr__(self):
        return f"iinfo(min={self.min}, max={self.max}, dtype={self.dtype})"


def promote_types(type1, type2):
    """The dtype both convert to without losing their category (float16 + bfloat16 -> float32)."""
    _name(type1), _name(type2)
    return _C.add(_C.empty([0], dtype=type1), _C.empty([0], dtype=type2)).dtype


def _stand_in(x):
    """An empty tensor promoting like x (a 0-dim tensor stays 0-dim); numbers stay numbers."""
    if isinstance(x, _C.TensorBase):
        return _C.empty([0] if x.dim() else [], dtype=x.dtype)
    if isinstance(x, (bool, int, float)):
        return x
    raise TypeError(f"result_type(): expected a Tensor or a number, got {type(x).__name__}")


def result_type(tensor, other):
    """The dtype an arithmetic op gives for these operands: dimensioned tensors before 0-dim
    tensors before Python numbers, a weaker one counting only when of a higher category."""
    if not isinstance(tensor, _C.TensorBase) and not isinstance(other, _C.TensorBase):
        # torch's result_type(Scalar, Scalar): the category of the two numbers (bool < int < float)
        if not all(isinstance(v, (bool, int, float)) for v in (tensor, other)):
            raise TypeError("result_type(): at least one argument must be a Tensor")
        if isinstance(tensor, float) or isinstance(other, float):
            return _C.get_default_dtype()
        if all(isinstance(v, bool) for v in (tensor, other)):
            return _C.bool
        return _C.int64
    a, b = _stand_in(tensor), _stand_in(other)
    if not isinstance(a, _C.TensorBase):
        a, b = b, a
    return _C.add(a, b).dtype
