"""repr(tensor) and kiln.set_printoptions, laid out exactly as torch 1.13 does it.

The layout follows torch/_tensor_str.py rule for rule, quirks included, so that
kiln and torch print the same text (only the dtype prefix differs: kiln.int32).
"""
import math

from . import _C


class _PrintOptions:
    """The current settings; set_printoptions changes them for every later repr."""
    precision = 4       # digits after the point (and in the mantissa in sci mode)
    threshold = 1000    # more elements than this are summarized with "..."
    edgeitems = 3       # elements kept at each end of a summarized dim
    linewidth = 80      # rows longer than this wrap
    sci_mode = None     # None: chosen per tensor from its values


PRINT_OPTS = _PrintOptions()

_PROFILES = {
    "default": dict(precision=4, threshold=1000, edgeitems=3, linewidth=80),
    "short": dict(precision=2, threshold=1000, edgeitems=2, linewidth=80),
    "full": dict(precision=4, threshold=math.inf, edgeitems=3, linewidth=80),
}


def set_printoptions(precision=None, threshold=None, edgeitems=None, linewidth=None, profile=None,
                     sci_mode=None):
    """Set options for printing tensors (as torch.set_printoptions).

    Args:
        precision: digits of precision for floating point output (default 4).
        threshold: number of elements above which repr summarizes (default 1000).
        edgeitems: items shown at the start and end of each summarized dim (default 3).
        linewidth: characters per line before rows wrap (default 80).
        profile: "default", "short" or "full": resets the four options above,
            then any of them given explicitly overrides the profile.
        sci_mode: True / False forces scientific notation on / off; None (the
            default, and what every call without it restores) picks it per tensor.
    """
    if profile is not None:
        # As torch, an unknown profile name is ignored.
        for name, value in _PROFILES.get(profile, {}).items():
            setattr(PRINT_OPTS, name, value)
    for name, value in (("precision", precision), ("threshold", threshold),
                        ("edgeitems", edgeitems), ("linewidth", linewidth)):
        if value is not None:
            setattr(PRINT_OPTS, name, value)
    PRINT_OPTS.sci_mode = sci_mode  # unlike the others, None here means "automatic" and is set too


# ---------------------------------------------------------------- element formatting

class _Formatter:
    """Chooses one notation and one width for all the elements that will be shown.

    For floats only the nonzero finite values take part: nan, inf and 0 don't
    widen the columns and don't affect the choice of notation.
    """

    def __init__(self, values, floating):
        self.floating = floating
        self.int_mode = True   # floats that are all whole print as "2." ...
        self.sci_mode = False  # ... or, spread widely, as "2.0000e+00"
        self.max_width = 1
        if not floating:
            self.max_width = max([1] + [len(str(v)) for v in values])
            return
        nonzero = [v for v in values if math.isfinite(v) and v != 0]
        if not nonzero:
            return  # torch returns here, so a forced sci_mode has no effect on such a tensor
        self.int_mode = all(v == math.ceil(v) for v in nonzero)
        self.sci_mode = self._needs_sci([abs(v) for v in nonzero])
        self.max_width = max(len(self._plain(v)) for v in nonzero)
        if PRINT_OPTS.sci_mode is not None:
            self.sci_mode = PRINT_OPTS.sci_mode  # the width stays the one measured above, as torch

    def _needs_sci(self, magnitudes):
        hi, lo = max(magnitudes), min(magnitudes)
        # Tiny fractions would round to 0.0000; whole numbers have no digits to lose.
        return hi / lo > 1000.0 or hi > 1.0e8 or (not self.int_mode and lo < 1.0e-4)

    def _plain(self, value):
        """The text of a finite value before padding."""
        precision = PRINT_OPTS.precision
        if self.sci_mode:
            return f"{value:.{precision}e}"
        if self.int_mode:
            return f"{value:.0f}."  # the point marks a floating tensor
        return f"{value:.{precision}f}"

    def __call__(self, value):
        if not self.floating:
            text = str(value)
        elif not math.isfinite(value):
            text = f"{value:.{PRINT_OPTS.precision}f}"  # "nan", "inf", "-inf": no trailing point
        else:
            text = self._plain(value)
        return text.rjust(self.max_width)


# ---------------------------------------------------------------- layout

def _summarized(a):
    """The elements shown when summarizing: the first and last edgeitems of each long dim."""
    import numpy as np
    edge = PRINT_OPTS.edgeitems
    if a.ndim == 0:
        return a
    if a.ndim == 1:
        return np.concatenate([a[:edge], a[-edge:]]) if len(a) > 2 * edge else a
    return np.stack([_summarized(a[i]) for i in _kept_rows(len(a), True) if i is not None])


def _kept_rows(n, summarize):
    """Row indices printed for a dim of size n (None stands for the "..." row)."""
    edge = PRINT_OPTS.edgeitems
    if summarize and n > 2 * edge:
        return list(range(edge)) + [None] + list(range(n - edge, n))
    return list(range(n))


def _vector_str(a, indent, summarize, fmt):
    """A 1-D row, wrapped to linewidth; continuation lines align under its first element."""
    edge = PRINT_OPTS.edgeitems
    if summarize and len(a) > 2 * edge:
        # " ..." after ", " leaves two spaces before the dots, as torch prints.
        items = [fmt(v) for v in a[:edge].tolist()] + [" ..."] + [fmt(v) for v in a[-edge:].tolist()]
    else:
        items = [fmt(v) for v in a.tolist()]
    # Each item takes its width plus ", "; wrap so a line stays within linewidth.
    per_line = max(1, int(math.floor((PRINT_OPTS.linewidth - indent) / (fmt.max_width + 2))))
    lines = [", ".join(items[i:i + per_line]) for i in range(0, len(items), per_line)]
    return "[" + (",\n" + " " * (indent + 1)).join(lines) + "]"


def _array_str(a, indent, summarize, fmt):
    """The bracketed text of `a`, whose first bracket sits at column `indent`."""
    if a.ndim == 0:
        return fmt(a.item())
    if a.ndim == 1:
        return _vector_str(a, indent, summarize, fmt)
    slices = ["..." if i is None else _array_str(a[i], indent + 1, summarize, fmt)
              for i in _kept_rows(len(a), summarize)]
    # Blocks of a 3-D (or higher) tensor are set apart by ndim - 1 newlines.
    return "[" + ("," + "\n" * (a.ndim - 1) + " " * (indent + 1)).join(slices) + "]"


def _tensor_str(t, indent):
    """The elements of a non-empty tensor, all formatted by one _Formatter."""
    # The 16-bit floats print through float32, as torch does it (NumPy has no bfloat16).
    a = (t.detach().float() if t.dtype in (_C.float16, _C.bfloat16) else t.detach()).numpy()
    summarize = a.size > PRINT_OPTS.threshold
    shown = _summarized(a) if summarize else a
    fmt = _Formatter(shown.ravel().tolist(), t.is_floating_point())
    return _array_str(a, indent, summarize, fmt)


def _add_suffixes(text, suffixes, indent, force_newline=False):
    """Appends ", suffix" for each suffix, moving one to its own line when it would pass linewidth (the
    first one always, with force_newline: torch's layout of a sparse tensor)."""
    # torch counts 2 more than the last line holds (it measures from the "\n" and adds 1).
    last_line_len = len(text) - text.rfind("\n") + 1
    parts = [text]
    for suffix in suffixes:
        width = _torch_width(suffix)
        if force_newline or last_line_len + width + 2 > PRINT_OPTS.linewidth:
            parts.append(",\n" + " " * indent + suffix)
            last_line_len = indent + width
            force_newline = False
        else:
            parts.append(", " + suffix)
            last_line_len += width + 2
    return "".join(parts) + ")"


def _torch_width(suffix):
    """The suffix's length as torch prints it ("torch.int32" is one letter longer than "kiln.int32"),
    so that lines break where torch breaks them."""
    return len(suffix) + suffix.count("kiln.")


def _prefix(t):
    """"tensor(" for plain tensors and Parameters, else the subclass name (as torch)."""
    from ._tensor import Tensor
    from .nn.parameter import Parameter
    return "tensor(" if type(t) in (Tensor, Parameter) else type(t).__name__ + "("


def tensor_repr(t):
    prefix = _prefix(t)
    indent = len(prefix)
    suffixes = []
    if t.device.type != "cpu":
        suffixes.append(f"device='{t.device}'")
    default_dtype = _C.get_default_dtype()
    if t.numel() == 0:
        # No elements to tell the dtype from, so any but the default is shown (int64 too);
        # and the shape, unless it is plain (0,), as NumPy.
        if t.dim() != 1:
            suffixes.append(f"size={tuple(t.shape)}")
        if t.dtype != default_dtype:
            suffixes.append(f"dtype={t.dtype}")
        text = "[]"
    else:
        if t.dtype not in (default_dtype, _C.int64, _C.bool):
            suffixes.append(f"dtype={t.dtype}")
        text = _tensor_str(t, indent)
    if t.grad_fn is not None:
        suffixes.append(f"grad_fn=<{t.grad_fn.name()}>")
    elif t.requires_grad:
        suffixes.append("requires_grad=True")
    return _add_suffixes(prefix + text, suffixes, indent)


def sparse_repr(s):
    """A sparse COO tensor as torch prints one: its indices and values, then size, nnz, the dtype when it
    is not a default one, the layout and the autograd suffix."""
    indent = len("tensor(")
    default_dtype = _C.get_default_dtype()

    def part(name, t):
        prefix = name + "=tensor("
        text = _tensor_str(t, indent + len(prefix)) if t.numel() else "[]"
        if t.numel() == 0:
            text += f", size={tuple(t.shape)}"
        return prefix + text + ")"
    text = part("indices", s._indices().detach()) + ",\n" + " " * indent + part("values", s._values().detach())
    suffixes = [f"size={tuple(s.shape)}", f"nnz={s._nnz()}"]
    if s.dtype not in (default_dtype, _C.int64, _C.bool):
        suffixes.append(f"dtype={s.dtype}")
    suffixes.append(f"layout={s.layout}")
    if s.grad_fn is not None:
        suffixes.append(f"grad_fn=<{s.grad_fn.name()}>")
    elif s.requires_grad:
        suffixes.append("requires_grad=True")
    return _add_suffixes("tensor(" + text, suffixes, indent, force_newline=True)
