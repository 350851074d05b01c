"""kiln.nn.init: in-place initialisers (under no_grad), like torch.nn.init. Those that draw
random numbers take generator= (a kiln.Generator; None: the default generator), as torch 2.x."""
import math

import kiln


def uniform_(tensor, a=0.0, b=1.0, generator=None):
    """Fills `tensor` with values drawn from U(a, b)."""
    with kiln.no_grad():
        return tensor.uniform_(a, b, generator=generator)


def normal_(tensor, mean=0.0, std=1.0, generator=None):
    """Fills `tensor` with values drawn from N(mean, std^2)."""
    with kiln.no_grad():
        return tensor.normal_(mean, std, generator=generator)


def constant_(tensor, val):
    with kiln.no_grad():
        return tensor.fill_(val)


def zeros_(tensor):
    with kiln.no_grad():
        return tensor.zero_()


def ones_(tensor):
    return constant_(tensor, 1.0)


def _calculate_fan_in_and_fan_out(tensor):
    if tensor.dim() < 2:
        raise ValueError("Fan in and fan out can not be computed for tensor with fewer than 2 dimensions")
    receptive = 1
    for s in tensor.shape[2:]:
        receptive *= s
    return tensor.shape[1] * receptive, tensor.shape[0] * receptive


def kaiming_uniform_(tensor, a=0.0, mode="fan_in", nonlinearity="leaky_relu", generator=None):
    """U(-bound, bound) with bound = gain * sqrt(3 / fan); leaky_relu gain sqrt(2 / (1 + a^2))."""
    if nonlinearity != "leaky_relu":
        raise NotImplementedError(f"kaiming_uniform_: nonlinearity '{nonlinearity}' is not supported yet")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    fan = fan_in if mode == "fan_in" else fan_out
    gain = math.sqrt(2.0 / (1 + a * a))
    bound = gain * math.sqrt(3.0 / fan) if fan > 0 else 0.0
    return uniform_(tensor, -bound, bound, generator=generator)
