"""kiln.cpu: torch.cpu (its amp.autocast), plus is_available() as torch 2.x has it."""
from . import amp  # noqa: F401


def is_available():
    """The CPU is always there."""
    return True


def device_count():
    return 1


def synchronize(device=None):
    """CPU ops finish before they return: nothing to wait for."""
