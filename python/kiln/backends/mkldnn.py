"""kiln.backends.mkldnn: kiln has no oneDNN kernels, so is_available() is False; the enabled flag is
settable as in torch (it has nothing to switch)."""
from ._flag_module import install_flags


def is_available():
    return False


_flags = install_flags(__name__, {"enabled": True})
