"""kiln.utils.data: Dataset, TensorDataset, samplers and DataLoader, as torch.utils.data."""
from .dataloader import DataLoader, default_collate
from .dataset import ConcatDataset, Dataset, Subset, TensorDataset, random_split
from .sampler import BatchSampler, RandomSampler, Sampler, SequentialSampler

__all__ = ["Dataset", "TensorDataset", "Subset", "ConcatDataset", "random_split", "DataLoader", "default_collate", "Sampler", "SequentialSampler",
           "RandomSampler", "BatchSampler"]
