"""kiln.nn: modules, parameters and functional ops for building networks, mirroring torch.nn."""
from .parameter import Parameter
from .modules import *  # noqa: F401,F403
from .modules import __all__ as _modules_all
from . import functional, init, utils

__all__ = ["Parameter", "functional", "init", "utils"] + _modules_all
