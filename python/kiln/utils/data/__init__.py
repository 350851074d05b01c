"""kiln.utils.data: datasets, samplers and DataLoader (with worker processes), as torch.utils.data."""
from ._worker import get_worker_info
from .dataloader import DataLoader, default_collate, default_convert
from .dataset import (ChainDataset, ConcatDataset, Dataset, IterableDataset, StackDataset, Subset, TensorDataset,
                      random_split)
from . import _utils  # noqa: F401
from . import distributed  # noqa: F401
from .distributed import DistributedSampler
from .sampler import (BatchSampler, RandomSampler, Sampler, SequentialSampler, SubsetRandomSampler,
                      WeightedRandomSampler)

__all__ = ["Dataset", "IterableDataset", "TensorDataset", "StackDataset", "Subset", "ConcatDataset", "ChainDataset", "random_split",
           "DataLoader", "default_collate", "default_convert", "get_worker_info", "Sampler", "SequentialSampler",
           "RandomSampler", "SubsetRandomSampler", "WeightedRandomSampler", "BatchSampler", "DistributedSampler"]
