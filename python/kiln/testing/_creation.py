"""torch.testing.make_tensor."""
import collections.abc
import math

from .. import _C

def _types():
    return ([_C.uint8, _C.int8, _C.int16, _C.int32, _C.int64],
            [_C.float16, _C.bfloat16, _C.float32, _C.float64])


def make_tensor(*shape, dtype, device=None, low=None, high=None, requires_grad=False, noncontiguous=False,
                exclude_zero=False, memory_format=None):
    r"""A tensor of ``shape`` and ``dtype`` with values drawn uniformly from ``[low, high)`` (torch.testing.make_tensor).

    Defaults for ``low``/``high``: bool ``[0, 2)``, uint8 ``[0, 10)``, signed integers ``[-9, 10)``, floating
    types ``[-9, 9)``; given bounds outside the dtype's finite range are clamped to it. ``noncontiguous=True``
    returns a non-contiguous view (tensors of two or more elements), ``exclude_zero=True`` replaces zeros by 1
    (bool, integers) or the dtype's ``finfo.tiny``, ``memory_format`` lays the result out in that format
    (torch 2.x; not together with ``noncontiguous``). The values are drawn as torch 1.13's function draws them
    (``kiln.randint``, or ``high * rand + low * (1 - rand)``), so after the same seed they are torch 1.13's.

    Raises ``ValueError`` for ``requires_grad`` with a non-floating dtype, ``low > high`` or a NaN bound, and
    ``TypeError`` for a dtype kiln does not have.
    """
    from .._dtype_info import finfo, iinfo
    integral, floating = _types()

    def modify_low_high(low, high, lowest, highest, default_low, default_high):
        low = low if low is not None else default_low
        high = high if high is not None else default_high
        if low != low or high != high:
            raise ValueError("make_tensor: one of low or high was NaN!")
        if low > high:
            raise ValueError("make_tensor: low must be weakly less than high!")
        low = min(max(low, lowest), highest)
        high = min(max(high, lowest), highest)
        if dtype in integral:
            return math.floor(low), math.ceil(high)
        return low, high

    if len(shape) == 1 and isinstance(shape[0], collections.abc.Sequence):
        shape = shape[0]
    shape = tuple(shape)
    if noncontiguous and memory_format is not None:
        raise ValueError(f"The parameters `noncontiguous` and `memory_format` are mutually exclusive, "
                         f"but got noncontiguous={noncontiguous} and memory_format={memory_format}")
    if requires_grad and dtype not in floating:
        raise ValueError("make_tensor: requires_grad must be False for integral dtype")
    if dtype is _C.bool:
        result = _C.randint(0, 2, list(shape), dtype=dtype, device=device)
    elif dtype in integral:
        info = iinfo(dtype)
        low, high = modify_low_high(low, high, info.min, info.max, 0 if dtype is _C.uint8 else -9, 10)
        result = _C.randint(low, high, list(shape), dtype=dtype, device=device)
    elif dtype in floating:
        info = finfo(dtype)
        low, high = modify_low_high(low, high, info.min, info.max, -9, 9)
        rand_val = _C.rand(list(shape), dtype=dtype, device=device)
        result = high * rand_val + low * (1 - rand_val)
    else:
        raise TypeError(f"The requested dtype '{dtype}' is not supported by torch.testing.make_tensor()."
                        " To request support, file an issue at: https://github.com/pytorch/pytorch/issues")
    if noncontiguous and result.numel() > 1:
        result = _C.repeat_interleave(result, 2, dim=-1)
        result = result[..., ::2]
    elif memory_format is not None:
        result = result.clone(memory_format=memory_format)
    if exclude_zero:
        if dtype in integral or dtype is _C.bool:
            replace_with = 1
        else:
            replace_with = finfo(dtype).tiny
        result[result == 0] = replace_with
    if dtype in floating:
        result.requires_grad = requires_grad
    return result
