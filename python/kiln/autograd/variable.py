"""torch.autograd.variable: `from torch.autograd.variable import Variable` (torch 0.3-era code)."""
from . import Variable  # noqa: F401
