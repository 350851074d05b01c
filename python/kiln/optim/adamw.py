"""torch.optim.adamw: `from torch.optim.adamw import AdamW`."""
from .adam import AdamW  # noqa: F401
