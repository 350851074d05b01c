"""torch.autograd.graph: hooks on the tensors autograd saves for backward.

Inside `saved_tensors_hooks(pack_hook, unpack_hook)`, every tensor a node saves is handed to
pack_hook (detached, under no_grad; it must not modify it in place) and the node keeps only what
pack_hook returned; backward gets the tensor back from unpack_hook, which must return a Tensor.
The hooks are installed on the C++ side (runtime/autograd/saved_tensor_hooks.h), per thread,
innermost first; the in-place version check of saved tensors is skipped for packed ones, as torch's."""
import abc
import contextlib
import threading

from .. import _C

__all__ = ["saved_tensors_hooks", "save_on_cpu", "disable_saved_tensors_hooks", "Node"]

_state = threading.local()  # the message disable_saved_tensors_hooks raises, per thread


class saved_tensors_hooks:
    """Context manager installing pack/unpack hooks for the tensors saved for backward."""

    def __init__(self, pack_hook, unpack_hook):
        self.pack_hook = pack_hook
        self.unpack_hook = unpack_hook

    def __enter__(self):
        message = getattr(_state, "disabled_message", None)
        if message is not None:
            raise RuntimeError(message)
        _C._push_saved_tensors_hooks(self.pack_hook, self.unpack_hook)
        return self

    def __exit__(self, *args):
        _C._pop_saved_tensors_hooks()
        return False


class save_on_cpu(saved_tensors_hooks):
    """Saved tensors are copied to CPU memory and brought back to their device for backward (torch's
    offloading; kiln's tensors are in CPU memory already, so the copy is the whole effect)."""

    def __init__(self, pin_memory=False, device_type="cuda"):
        def pack_to_cpu(tensor):
            return (tensor.device, tensor.cpu() if not pin_memory else tensor.clone())

        def unpack_from_cpu(packed):
            device, tensor = packed
            return tensor.to(device, non_blocking=pin_memory)

        super().__init__(pack_to_cpu, unpack_from_cpu)


@contextlib.contextmanager
def disable_saved_tensors_hooks(error_message):
    """Entering saved_tensors_hooks inside this block raises RuntimeError(error_message)."""
    previous = getattr(_state, "disabled_message", None)
    try:
        _state.disabled_message = error_message
        yield
    finally:
        _state.disabled_message = previous


class Node(abc.ABC):
    """torch.autograd.graph.Node: isinstance(t.grad_fn, Node) holds for every grad_fn (kiln's C++ nodes and
    custom Functions' backward nodes alike)."""

    @classmethod
    def __subclasshook__(cls, subclass):
        if cls is Node and hasattr(subclass, "next_functions") and callable(getattr(subclass, "name", None)):
            return True
        return NotImplemented


class _NodeHookHandle:
    """What grad_fn.register_hook returns: remove() unregisters the hook (as torch's RemovableHandle)."""

    def __init__(self, hook_id):
        self.id = hook_id

    def remove(self):
        _C._remove_node_hook(self.id)

    def __enter__(self):
        return self

    def __exit__(self, *args):
        self.remove()
