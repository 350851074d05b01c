"""kiln.cpu.amp.autocast: kiln.autocast('cpu', ...) (bfloat16) with torch 1.13's signature."""
from ... import _C
from ...amp import autocast_mode as _autocast_mode


class autocast(_autocast_mode.autocast):
    """kiln.autocast('cpu', ...) (see kiln.amp)."""

    def __init__(self, enabled=True, dtype=_C.bfloat16, cache_enabled=True):
        super().__init__("cpu", dtype=dtype, enabled=enabled, cache_enabled=cache_enabled)

