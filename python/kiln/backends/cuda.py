"""kiln.backends.cuda: torch.backends.cuda on a machine without CUDA: is_built() False, and
matmul.allow_tf32 / allow_fp16_reduced_precision_reduction settable as in torch. allow_tf32 is the
float32 matmul precision seen from here ('highest' <-> False), as in torch."""
import contextlib

from .. import _global_flags
from ._flag_module import check_bool


def is_built():
    return False


class cuBLASModule:
    """backends.cuda.matmul; an unknown attribute raises AssertionError, as in torch."""

    _fp16_reduction = [True]

    def __getattr__(self, name):
        if name == "allow_tf32":
            return _global_flags.get_float32_matmul_precision() != "highest"
        if name == "allow_fp16_reduced_precision_reduction":
            return self._fp16_reduction[0]
        raise AssertionError("Unknown attribute " + name)

    def __setattr__(self, name, value):
        if name == "allow_tf32":
            check_bool("backends.cuda.matmul.allow_tf32", value)
            _global_flags.set_float32_matmul_precision("high" if value else "highest")
        elif name == "allow_fp16_reduced_precision_reduction":
            check_bool("backends.cuda.matmul.allow_fp16_reduced_precision_reduction", value)
            self._fp16_reduction[0] = value
        else:
            raise AssertionError("Unknown attribute " + name)


matmul = cuBLASModule()

# Which scaled-dot-product-attention kernels may run (torch's defaults: all on). Despite the module,
# torch's switches hold for the CPU too: F.scaled_dot_product_attention runs when "math" or "flash"
# (kiln's one CPU kernel stands for both) is on, and raises torch's "No available kernel" otherwise.
# kiln.nn.attention.sdpa_kernel sets them too.
_sdp = {"flash": True, "mem_efficient": True, "math": True, "cudnn": True}


def _sdp_setter(kind):
    def enable(enabled):
        check_bool(f"backends.cuda.enable_{kind}_sdp", enabled)
        _sdp[kind] = enabled
    enable.__name__ = f"enable_{kind}_sdp"
    return enable


def flash_sdp_enabled():
    return _sdp["flash"]


def mem_efficient_sdp_enabled():
    return _sdp["mem_efficient"]


def math_sdp_enabled():
    return _sdp["math"]


enable_flash_sdp = _sdp_setter("flash")
enable_mem_efficient_sdp = _sdp_setter("mem_efficient")
enable_math_sdp = _sdp_setter("math")
enable_cudnn_sdp = _sdp_setter("cudnn")


def cudnn_sdp_enabled():
    return _sdp["cudnn"]


@contextlib.contextmanager
def sdp_kernel(enable_flash=True, enable_math=True, enable_mem_efficient=True, enable_cudnn=True):
    """torch's older context manager (deprecated in 2.x for kiln.nn.attention.sdpa_kernel)."""
    saved = dict(_sdp)
    try:
        _sdp.update(flash=enable_flash, math=enable_math, mem_efficient=enable_mem_efficient, cudnn=enable_cudnn)
        yield
    finally:
        _sdp.clear()
        _sdp.update(saved)
