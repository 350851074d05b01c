"""kiln.nn.attention: torch 2.x's choice of scaled-dot-product-attention kernel. kiln has one CPU
kernel (fused, online softmax; see F.scaled_dot_product_attention), which stands for torch's MATH and
FLASH_ATTENTION CPU backends: it runs when either is allowed; allowing only backends with no CPU
kernel (EFFICIENT_ATTENTION, CUDNN_ATTENTION) makes the call fail as torch's does."""
import contextlib
from enum import IntEnum

from ...backends import cuda as _cuda

__all__ = ["SDPBackend", "sdpa_kernel", "WARN_FOR_UNFUSED_KERNELS"]

WARN_FOR_UNFUSED_KERNELS = False


class SDPBackend(IntEnum):
    ERROR = -1
    MATH = 0
    FLASH_ATTENTION = 1
    EFFICIENT_ATTENTION = 2
    CUDNN_ATTENTION = 3
    OVERRIDEABLE = 4


_SWITCH = {SDPBackend.MATH: "math", SDPBackend.FLASH_ATTENTION: "flash",
           SDPBackend.EFFICIENT_ATTENTION: "mem_efficient", SDPBackend.CUDNN_ATTENTION: "cudnn"}


@contextlib.contextmanager
def sdpa_kernel(backends, set_priority=False):
    """Within the block, only `backends` (an SDPBackend or a list of them) may run."""
    if not isinstance(backends, (list, SDPBackend)):
        raise AssertionError("Backend must be an instance of SDPBackend or a list of SDPBackend instances")
    backends = [backends] if isinstance(backends, SDPBackend) else list(backends)
    if not all(isinstance(b, SDPBackend) for b in backends):
        raise AssertionError("Backend must be an instance of SDPBackend or a list of SDPBackend instances")
    saved = dict(_cuda._sdp)
    try:
        for backend, switch in _SWITCH.items():
            _cuda._sdp[switch] = backend in backends
        yield
    finally:
        _cuda._sdp.clear()
        _cuda._sdp.update(saved)
