"""torch.nn.utils.stateless: functional_call (defined once, in kiln.func)."""
from ...func import functional_call

__all__ = ["functional_call"]
