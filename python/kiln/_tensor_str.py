"""repr(tensor), formatted like torch's."""
import math

from . import _C

_DTYPES_NOT_SHOWN = {"int64", "bool"}  # nor the default float dtype
_THRESHOLD, _EDGE = 1000, 3


def _dtype_name(t):
    return str(t.dtype).split(".")[1]


class _Formatter:
    def __init__(self, values, floating):
        self.floating = floating
        finite = [v for v in values if math.isfinite(v)] if floating else values
        self.int_mode = not floating or all(float(v).is_integer() for v in finite)
        self.sci = False
        if floating and finite and not self.int_mode:
            nonzero = [abs(v) for v in finite if v != 0]
            if nonzero:
                hi, lo = max(nonzero), min(nonzero)
                self.sci = hi / lo > 1000 or hi > 1e8 or lo < 1e-4
        elif floating and finite and self.int_mode:
            self.sci = max(abs(v) for v in finite) > 1e8
        self.width = max((len(self.fmt(v)) for v in values), default=1)

    def fmt(self, v):
        if not self.floating:
            return str(bool(v)) if isinstance(v, bool) else str(v)
        if not math.isfinite(v):
            return "nan" if math.isnan(v) else ("inf" if v > 0 else "-inf")
        if self.sci:
            return f"{v:.4e}"
        if self.int_mode:
            return f"{v:.0f}."
        return f"{v:.4f}"

    def __call__(self, v):
        return self.fmt(v).rjust(self.width)


def _shown(t, summarize):
    """The elements that will be printed (the edges of each long dim when summarizing)."""
    import numpy as np
    data = t.detach().numpy()
    if summarize:
        for d in range(data.ndim):
            if data.shape[d] > 2 * _EDGE:
                idx = list(range(_EDGE)) + list(range(data.shape[d] - _EDGE, data.shape[d]))
                data = np.take(data, idx, axis=d)
    return data


def _depth(x):
    d = 0
    while isinstance(x, list):
        d, x = d + 1, (x[0] if x else None)
    return d


def _format(data, shape, fmt, indent, summarize):
    if not isinstance(data, list):
        return fmt(data)
    parts = [_format(x, shape[1:], fmt, indent + 1, summarize) for x in data]
    if summarize and shape[0] > 2 * _EDGE:
        parts = parts[:_EDGE] + ["..."] + parts[_EDGE:]
    if _depth(data) > 1:
        sep = "," + "\n" * (_depth(data) - 1) + " " * (indent + 1)
        return "[" + sep.join(parts) + "]"
    return "[" + ", ".join(parts) + "]"


def tensor_repr(t):
    suffixes = []
    summarize = t.numel() > _THRESHOLD
    floating = t.is_floating_point()
    if t.numel() == 0:
        body = "[]"
        if t.dim() != 1:
            suffixes.append(f"size={tuple(t.shape)}")
    else:
        shown = _shown(t, summarize)
        fmt = _Formatter(shown.ravel().tolist(), floating)
        body = _format(shown.tolist(), list(t.shape), fmt, len("tensor("), summarize)
    name = _dtype_name(t)
    if name not in _DTYPES_NOT_SHOWN and name != _dtype_name_of_default():
        suffixes.append(f"dtype=kiln.{name}")
    if t.grad_fn is not None:
        suffixes.append(f"grad_fn=<{t.grad_fn.name()}>")
    elif t.requires_grad:
        suffixes.append("requires_grad=True")
    return "tensor(" + ", ".join([body] + suffixes) + ")"


def _dtype_name_of_default():
    return str(_C.get_default_dtype()).split(".")[1]
