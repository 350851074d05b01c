"""kiln.multiprocessing, as torch.multiprocessing: Python's multiprocessing, with tensors in shared
memory (Tensor.share_memory_) passed to other processes by file descriptor instead of by value
(reductions.py), and spawn(fn, args, nprocs) as torch's."""
import multiprocessing
from multiprocessing import *  # noqa: F401,F403 (Process, Queue, Pool, set_start_method, ...)

from .reductions import init_reductions
from .spawn import ProcessExitedException, ProcessRaisedException, spawn, start_processes  # noqa: F401

__all__ = list(multiprocessing.__all__) + ["spawn", "start_processes", "get_sharing_strategy",
                                           "set_sharing_strategy", "get_all_sharing_strategies"]

_STRATEGIES = {"file_descriptor"}


def get_all_sharing_strategies():
    return set(_STRATEGIES)


def get_sharing_strategy():
    return "file_descriptor"


def set_sharing_strategy(new_strategy):
    """Only torch's Linux default, file_descriptor, is implemented: anything else is refused."""
    if new_strategy not in _STRATEGIES:
        raise ValueError(f"sharing strategy {new_strategy!r} is not supported by kiln (only 'file_descriptor')")


init_reductions()
