"""Memory formats (torch.memory_format): kiln.contiguous_format, channels_last, channels_last_3d and
preserve_format, and the `memory_format=` arguments that take them.

kiln tensors are strided, so a memory format is only a choice of strides: channels_last is NCHW with
strides (H*W*C, 1, W*C, C) (NHWC in memory), channels_last_3d NCDHW with C innermost. What takes a
format, with torch's strides (tests/python/test_memory_format.py checks each against torch 1.13):

* ``Tensor.contiguous(memory_format=)``, ``Tensor.is_contiguous(memory_format=)``,
  ``Tensor.clone(memory_format=)``, ``Tensor.to(..., memory_format=)``, ``nn.Module.to(memory_format=)``;
* ``kiln.empty(..., memory_format=)``, ``empty_like``, ``zeros_like``, ``ones_like``, ``full_like``,
  ``rand_like``, ``randn_like`` (``memory_format=``).

``preserve_format`` (the default of clone, the ``*_like`` factories and ``to``) keeps the input's strides
when it is dense and non-overlapping; otherwise clone and the ``*_like`` factories give dense strides in the
input's order of strides, and ``to`` gives channels-last strides where the input's strides look channels-last
(torch's heuristic), else row-major; all as torch.

What differs from torch: kiln's operators compute the same values on channels-last inputs (conv2d,
batch_norm, relu, add, max_pool2d, ... : tests/python/test_memory_format.py), but their results are
row-major (contiguous) where torch's CPU kernels return channels-last results for channels-last inputs
(torch: conv2d, batch_norm, max_pool2d, avg_pool2d, relu, add, interpolate, adaptive_avg_pool2d give
NHWC strides). Code that only reads values, or calls ``.contiguous()`` / ``.contiguous(memory_format=...)``
where it needs a layout, behaves the same; code that asserts an op's output
``is_contiguous(memory_format=channels_last)`` does not. A copy made through a format
(``clone(memory_format=)``, ``contiguous(memory_format=)``, ``to(memory_format=)``) records
``CopyBackward0`` where torch records ``CloneBackward0``/``ToCopyBackward0``; the gradients are the same.
"""
from . import _C


class memory_format:
    """torch.memory_format: one of kiln.contiguous_format, channels_last, channels_last_3d, preserve_format."""
    __module__ = "kiln"

    def __init__(self, name):
        self._name = name

    def __repr__(self):
        return "torch." + self._name  # torch's repr, which scripts print and compare

    def __reduce__(self):  # pickled by name: a copy is the same object
        return self._name


contiguous_format = memory_format("contiguous_format")
channels_last = memory_format("channels_last")
channels_last_3d = memory_format("channels_last_3d")
preserve_format = memory_format("preserve_format")


def _check_format(fmt, fn):
    if not isinstance(fmt, memory_format):
        raise TypeError(f"{fn}(): argument 'memory_format' must be torch.memory_format, not {type(fmt).__name__}")


def _channels_last_strides(sizes, fmt):
    """torch's get_channels_last_strides_2d/3d (no max(size, 1): a zero size makes outer strides 0)."""
    nd = len(sizes)
    if fmt is channels_last and nd != 4:
        raise RuntimeError("required rank 4 tensor to use channels_last format")
    if fmt is channels_last_3d and nd != 5:
        raise RuntimeError("required rank 5 tensor to use channels_last_3d format")
    s = [0] * nd
    s[1] = 1
    s[nd - 1] = sizes[1]
    for d in range(nd - 2, 1, -1):
        s[d] = s[d + 1] * sizes[d + 1]
    s[0] = s[2] * sizes[2]
    return s


def _contiguous_strides(sizes):
    s, acc = [0] * len(sizes), 1
    for d in range(len(sizes) - 1, -1, -1):
        s[d] = acc
        acc *= max(sizes[d], 1)
    return s


def _format_strides(sizes, fmt):
    if fmt is contiguous_format:
        return _contiguous_strides(sizes)
    return _channels_last_strides(sizes, fmt)


def _channels_last_contiguous(sizes, strides, order):
    """torch's compute_channels_last_contiguous_2d/3d: dims of size 1 do not count."""
    expected = 1
    for d in order:
        if sizes[d] != 1:
            if strides[d] != expected:
                return False
            expected *= sizes[d]
    return True


def _strides_like_channels_last(sizes, strides):
    """torch's is_channels_last_strides_2d_s4 / 3d_s5 (what suggest_memory_format() reads)."""
    nd = len(sizes)
    if nd == 4:
        order = (1, 3, 2, 0)
    elif nd == 5:
        order = (1, 4, 3, 2, 0)
    else:
        return False
    if strides[1] == 0:
        return False
    m = 0
    for d in order:
        if sizes[d] == 0 or strides[d] < m:
            return False
        if d == 0 and m == strides[1]:
            return False
        m = strides[d]
        if sizes[d] > 1:
            m *= sizes[d]
    return True


def suggest_memory_format(t):
    """torch's Tensor.suggest_memory_format(): channels_last(_3d) when t's strides look so, else contiguous."""
    if _strides_like_channels_last(t.shape, t.stride()):
        return channels_last if t.dim() == 4 else channels_last_3d
    return contiguous_format


def is_contiguous(self, *, memory_format=contiguous_format):  # keyword-only, as torch
    """Whether the tensor is contiguous in memory_format (channels_last: NHWC order in memory)."""
    _check_format(memory_format, "is_contiguous")
    if memory_format is channels_last:
        return self.dim() == 4 and _channels_last_contiguous(self.shape, self.stride(), (1, 3, 2, 0))
    if memory_format is channels_last_3d:
        return self.dim() == 5 and _channels_last_contiguous(self.shape, self.stride(), (1, 4, 3, 2, 0))
    return _C.TensorBase.is_contiguous(self)


def _copy_with_strides(self, strides, dtype=None):
    out = _C.empty_strided(list(self.shape), strides, dtype=dtype or self.dtype)
    if self.numel() == 0:  # channels-last strides of an empty tensor overlap (zeros): nothing to copy
        return out.requires_grad_(self.requires_grad) if self.requires_grad else out
    return out.copy_(self)


def contiguous(self, *, memory_format=contiguous_format):  # keyword-only, as torch
    """self if already contiguous in memory_format, else a copy laid out in it."""
    if memory_format is contiguous_format:
        return _C.TensorBase.contiguous(self)
    _check_format(memory_format, "contiguous")
    if is_contiguous(self, memory_format=memory_format):
        return self
    if memory_format is preserve_format:
        raise RuntimeError("preserve memory format is unsupported by the contiguous operator")
    return _copy_with_strides(self, _format_strides(list(self.shape), memory_format))


def clone(self, *, memory_format=preserve_format):
    """A copy; preserve_format (the default) keeps a dense tensor's strides, as torch."""
    if memory_format is preserve_format or memory_format is None:
        return _C.TensorBase.clone(self)
    _check_format(memory_format, "clone")
    return _copy_with_strides(self, _format_strides(list(self.shape), memory_format))


def _like_strides(input, memory_format, fn):
    """The strides of a *_like factory's result for a format other than preserve_format."""
    _check_format(memory_format, fn)
    return _format_strides(list(input.shape), memory_format)


def _wants_layout(memory_format):
    return memory_format is not None and memory_format is not preserve_format


def to_memory_format(self, dtype, memory_format, copy):
    """Tensor.to(..., memory_format=): self when nothing changes (torch's to_will_alias), else a copy in the format."""
    _check_format(memory_format, "to")
    same_dtype = dtype is None or dtype == self.dtype
    if memory_format is preserve_format:
        return None  # the caller's usual path
    if same_dtype and not copy and suggest_memory_format(self) is memory_format:
        return self
    return _copy_with_strides(self, _format_strides(list(self.shape), memory_format), dtype)


def empty(*size, memory_format=contiguous_format, **kwargs):
    """kiln.empty with torch's memory_format= (contiguous_format, channels_last, channels_last_3d)."""
    if memory_format is contiguous_format or memory_format is None:
        return _C.empty(*size, **kwargs)
    _check_format(memory_format, "empty")
    if memory_format is preserve_format:
        raise RuntimeError("unsupported memory format Preserve")
    if not size and "size" in kwargs:
        size = (kwargs.pop("size"),)
    shape = list(size[0]) if len(size) == 1 and not isinstance(size[0], int) else list(size)
    requires_grad = kwargs.pop("requires_grad", False)
    kwargs.pop("pin_memory", None)
    kwargs.pop("layout", None)
    out = kwargs.pop("out", None)
    if out is not None:
        raise RuntimeError("empty(): memory_format with out= is not supported")
    t = _C.empty_strided(shape, _format_strides(shape, memory_format), **kwargs)
    return t.requires_grad_(requires_grad) if requires_grad else t


def _make_like(name, fill):
    base = getattr(_C, name)

    def like(input, *args, memory_format=preserve_format, **kwargs):
        if not _wants_layout(memory_format):
            return base(input, *args, **kwargs)
        strides = _like_strides(input, memory_format, name)
        requires_grad = kwargs.pop("requires_grad", False)
        kwargs.pop("layout", None)
        kwargs.pop("pin_memory", None)
        dtype = kwargs.pop("dtype", None) or input.dtype
        generator = kwargs.pop("generator", None)
        t = _C.empty_strided(list(input.shape), strides, dtype=dtype, **kwargs)
        if t.numel():  # an empty tensor's channels-last strides overlap (zeros): nothing to fill
            fill(t, *args, generator=generator)
        return t.requires_grad_(requires_grad) if requires_grad else t

    like.__name__ = like.__qualname__ = name
    like.__doc__ = f"kiln.{name} with torch's memory_format= (preserve_format by default: a dense input's strides)."
    return like


def _gen(generator):
    return {} if generator is None else {"generator": generator}


empty_like = _make_like("empty_like", lambda t, generator=None: None)
zeros_like = _make_like("zeros_like", lambda t, generator=None: t.zero_())
ones_like = _make_like("ones_like", lambda t, generator=None: t.fill_(1))
full_like = _make_like("full_like", lambda t, value, generator=None: t.fill_(value))
rand_like = _make_like("rand_like", lambda t, generator=None: t.uniform_(0, 1, **_gen(generator)))
randn_like = _make_like("randn_like", lambda t, generator=None: t.normal_(0, 1, **_gen(generator)))
