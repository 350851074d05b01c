"""torch.nn.utils.convert_conv2d_weight_memory_format and skip_init."""
import inspect

import kiln


def convert_conv2d_weight_memory_format(module, memory_format):
    """Gives every Conv2d / ConvTranspose2d weight in module (recursively) the memory format memory_format
    (channels_last: NHWC strides), the values unchanged; returns module."""
    if isinstance(module, (kiln.nn.Conv2d, kiln.nn.ConvTranspose2d)):
        weight = module.weight.detach().clone().contiguous(memory_format=memory_format)
        module.weight.data = weight
    for child in module.children():
        convert_conv2d_weight_memory_format(child, memory_format)
    return module


def skip_init(module_cls, *args, **kwargs):
    """module_cls(*args, **kwargs) without its initialisation's effect: the parameters are there, their values
    unspecified, and the random stream is left as it was (torch builds the module on the meta device, drawing
    nothing). module_cls must take a device argument, as torch requires."""
    if not issubclass(module_cls, kiln.nn.Module):
        raise RuntimeError(f"Expected a Module; got {module_cls}")
    if "device" not in inspect.signature(module_cls).parameters:
        raise RuntimeError("Module must support a 'device' arg to skip initialization")
    state = kiln.get_rng_state()
    try:
        return module_cls(*args, **kwargs)
    finally:
        kiln.set_rng_state(state)
