"""torch.autograd.graph: save_on_cpu works (kiln's tensors are all in CPU memory, so it changes nothing, as
torch's does for CPU tensors); saved_tensors_hooks raises NotImplementedError: kiln's autograd saves tensors
for backward in C++ (SavedVariable), where no Python pack/unpack hook can run yet."""

__all__ = ["saved_tensors_hooks", "save_on_cpu", "disable_saved_tensors_hooks"]


class saved_tensors_hooks:
    """torch.autograd.graph.saved_tensors_hooks(pack_hook, unpack_hook): not available in kiln (entering it
    raises NotImplementedError); silently skipping the hooks would change what programs that count or
    transform saved tensors see."""

    def __init__(self, pack_hook, unpack_hook):
        self.pack_hook = pack_hook
        self.unpack_hook = unpack_hook

    def __enter__(self):
        raise NotImplementedError(
            "kiln.autograd.graph.saved_tensors_hooks: kiln saves tensors for backward in C++ and cannot call "
            "pack/unpack hooks on them yet (kiln.autograd.graph.save_on_cpu works: kiln keeps every tensor in "
            "CPU memory)")

    def __exit__(self, *args):
        return False


class save_on_cpu:
    """torch.autograd.graph.save_on_cpu(pin_memory=False): keeps saved tensors in CPU memory, where kiln keeps
    every tensor: a context manager that changes nothing."""

    def __init__(self, pin_memory=False):
        self.pin_memory = pin_memory

    def __enter__(self):
        return self

    def __exit__(self, *args):
        return False


class disable_saved_tensors_hooks:
    """torch 2.x's disable_saved_tensors_hooks(error_message): kiln has no saved-tensor hooks to disable."""

    def __init__(self, error_message):
        self.error_message = error_message

    def __enter__(self):
        return self

    def __exit__(self, *args):
        return False
