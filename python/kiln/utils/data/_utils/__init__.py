"""torch.utils.data._utils: the paths some programs import the collate functions from."""
from . import collate  # noqa: F401
