"""kiln.func: torch.func's functional_call (the transforms grad/vmap/jacrev are not here yet)."""
from ..nn.utils.stateless import functional_call

__all__ = ["functional_call"]
