"""nn.CrossMapLRN2d: the legacy (Lua Torch) cross-channel local response normalization, as torch keeps it.

Its forward and backward are torch's legacy Function's, which are not each other's exact derivative, so both are
written out here (an autograd Function) rather than left to autograd:
* forward: scale[c] = k + alpha / size * (sum of x^2 over the channel window), output = x * scale ** -beta, where
  the window of channel c is [c - pre_pad + 1, c + pre_pad - 1] clipped to the channels (pre_pad = (size - 1) // 2
  + 1) and, for c > pre_pad, channel 0 as well: the legacy running sum never subtracts channel 0's square;
* backward: scale ** -beta * grad - 2 alpha beta / size * x * (sum of grad * output / scale over channels
  [c - q, c + size - 1 - q]), q = size - (size - 1) // 2 (the legacy kernel's offset, not centred).
"""
from ... import _C
from ...autograd.function import Function
from .module import Module


class _CrossMapLRN2dFunction(Function):
    @staticmethod
    def forward(ctx, input, size, alpha=1e-4, beta=0.75, k=1):
        if input.dim() != 4:
            raise AssertionError("CrossMapLRN2d: expected a 4-D input (N, C, H, W)")
        pre_pad = int((size - 1) / 2 + 1)
        channels = input.shape[1]
        sq = input * input
        # the legacy running sum, in its order (so the rounding is torch's): channel 0's window, then each next
        # channel's by adding the square entering it and removing the one leaving it
        window = _C.empty_like(input)
        first = _C.zeros_like(input[:, 0])
        for c in range(min(pre_pad, channels)):
            first += sq[:, c]
        window[:, 0] = first
        for c in range(1, channels):
            current = window[:, c - 1].clone()
            if c < channels - pre_pad + 1:
                current += sq[:, c + pre_pad - 1]
            if c > pre_pad:
                current -= sq[:, c - pre_pad]
            window[:, c] = current
        scale = window * (alpha / size) + k
        output = scale.pow(-beta) * input
        ctx.size, ctx.alpha, ctx.beta, ctx.k = size, alpha, beta, k
        ctx.save_for_backward(input, output, scale)
        return output

    @staticmethod
    def backward(ctx, grad_output):
        input, output, scale = ctx.saved_tensors
        size = ctx.size
        inverse_pre_pad = int(size - (size - 1) / 2)
        ratio = grad_output * output / scale
        channels = input.shape[1]
        # the legacy kernel's running sum over a zero-padded copy of ratio (ratio[c] at padded row c + q); for
        # size 1 that copy does not fit, and torch's narrow fails the same way
        if inverse_pre_pad + channels > channels + size - 1:
            raise RuntimeError(f"start ({inverse_pre_pad}) + length ({channels}) exceeds dimension size "
                               f"({channels + size - 1}).")
        padded = _C.zeros([input.shape[0], channels + size - 1] + list(input.shape[2:]), dtype=input.dtype)
        padded[:, inverse_pre_pad:inverse_pre_pad + channels] = ratio
        running = _C.zeros_like(input[:, 0])
        for j in range(size - 1):
            running += padded[:, j]
        accum = _C.empty_like(input)
        for c in range(channels):
            running = running + padded[:, c + size - 1]
            accum[:, c] = running
            running = running - padded[:, c]
        grad_input = scale.pow(-ctx.beta) * grad_output - (2 * ctx.alpha * ctx.beta / size) * input * accum
        return grad_input, None, None, None, None


class CrossMapLRN2d(Module):
    def __init__(self, size, alpha=1e-4, beta=0.75, k=1):
        super().__init__()
        self.size = size
        self.alpha = alpha
        self.beta = beta
        self.k = k

    def forward(self, input):
        return _CrossMapLRN2dFunction.apply(input, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self):
        return "{size}, alpha={alpha}, beta={beta}, k={k}".format(**self.__dict__)
