"""kiln.utils.data: Dataset, TensorDataset and DataLoader, as torch.utils.data."""
from .dataloader import DataLoader, default_collate
from .dataset import Dataset, TensorDataset

__all__ = ["Dataset", "TensorDataset", "DataLoader", "default_collate"]
