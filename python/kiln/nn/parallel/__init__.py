"""kiln.nn.parallel: DataParallel (a pass-through without GPUs) and DistributedDataParallel (needs
a process group kiln cannot start yet), at torch's paths."""
from .data_parallel import DataParallel
from .distributed import DistributedDataParallel

__all__ = ["DataParallel", "DistributedDataParallel"]
