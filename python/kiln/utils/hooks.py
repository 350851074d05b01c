"""torch.utils.hooks: RemovableHandle (the class every register_*_hook returns) and the hook helpers."""
import warnings

from ..nn.modules.module import RemovableHandle

__all__ = ["RemovableHandle", "unserializable_hook", "warn_if_has_hooks"]


def unserializable_hook(f):
    """Marks a hook as not to be serialized with its tensor (torch's decorator)."""
    f.__torch_unserializable__ = True
    return f


def warn_if_has_hooks(tensor):
    hooks = getattr(tensor, "_backward_hooks", None)
    if hooks:
        for k in hooks:
            hook = hooks[k]
            if not hasattr(hook, "__torch_unserializable__"):
                warnings.warn(f"backward hook {repr(hook)} on tensor will not be serialized.  If this is expected, "
                              "you can decorate the function with @torch.utils.hooks.unserializable_hook to "
                              "suppress this warning")


