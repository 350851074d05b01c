"""torch.nn.utils.clip_grad: the module the clipping functions live in (`from torch.nn.utils.clip_grad import
clip_grad_norm_`)."""
from . import clip_grad_norm, clip_grad_norm_, clip_grad_value_  # noqa: F401
