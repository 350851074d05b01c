"""kiln.utils.data: Dataset, TensorDataset, samplers and DataLoader, as torch.utils.data."""
from .dataloader import DataLoader, default_collate
from .dataset import Dataset, TensorDataset
from .sampler import BatchSampler, RandomSampler, Sampler, SequentialSampler

__all__ = ["Dataset", "TensorDataset", "DataLoader", "default_collate", "Sampler", "SequentialSampler",
           "RandomSampler", "BatchSampler"]
