"""torch.utils.data._utils.collate: default_collate and default_convert (defined in ../dataloader.py)."""
from ..dataloader import default_collate, default_convert  # noqa: F401
