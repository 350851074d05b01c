"""kiln.nn: modules, parameters and functional ops for building networks, mirroring torch.nn."""
from .parameter import Buffer, Parameter, UninitializedBuffer, UninitializedParameter
from .modules import *  # noqa: F401,F403
from .modules import __all__ as _modules_all
from . import attention, common_types, functional, grad, init, parallel, utils
from .parallel import DataParallel

__all__ = ["Parameter", "Buffer", "UninitializedParameter", "UninitializedBuffer", "DataParallel", "functional", "init",
           "parallel", "utils"] + _modules_all
