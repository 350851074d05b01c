"""torch.nn.modules.utils: the small argument helpers custom layers import (_pair for a conv's
kernel_size, ...)."""
import collections.abc
from itertools import repeat

__all__ = []


def _ntuple(n, name="parse"):
    def parse(x):
        if isinstance(x, collections.abc.Iterable):
            return tuple(x)
        return tuple(repeat(x, n))

    parse.__name__ = name
    return parse


_single = _ntuple(1, "_single")
_pair = _ntuple(2, "_pair")
_triple = _ntuple(3, "_triple")
_quadruple = _ntuple(4, "_quadruple")


def _reverse_repeat_tuple(t, n):
    """Reverses t and repeats each element n times: F.pad's padding from a conv's (padding_h, padding_w)."""
    return tuple(x for x in reversed(t) for _ in range(n))


def _list_with_default(out_size, defaults):
    """An adaptive pool's output size with None entries taken from the input's trailing dims."""
    import numbers
    if isinstance(out_size, (numbers.Integral,)):
        return out_size
    if len(defaults) <= len(out_size):
        raise ValueError(f"Input dimension should be at least {len(out_size) + 1}")
    return [v if v is not None else d for v, d in zip(out_size, defaults[-len(out_size):])]
