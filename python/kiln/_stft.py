"""torch.stft / torch.istft in the real form torch 1.13 still takes (return_complex=False: the last dim holds
the real and imaginary parts), which audio programs written before complex tensors call (HiFi-GAN's
mel_spectrogram, ParallelWaveGAN's multi-resolution STFT loss, Griffin-Lim by istft). kiln has no complex dtype,
so return_complex=True raises.

Composed of differentiable ops: frames by unfold, the window, and the DFT as products with cos / sin bases
computed in float64 (float32 inputs are transformed in float64 and rounded once, so the result is within an ulp
or two of torch's FFT); istft as the inverse real DFT, the window, overlap-add by fold and the division by the
summed squared window, as torch's. tests/python/test_stft.py compares values, gradients, warnings and errors with
torch."""
import math
import warnings

import numpy as np

_kiln = None


def _k():
    global _kiln
    if _kiln is None:
        import kiln
        _kiln = kiln
    return _kiln


def _bases(n_fft, n_freq, dtype):
    """cos and sin of 2 pi k n / n_fft for k < n_freq, n < n_fft: [n_fft, n_freq] (k n reduced mod n_fft so the
    angles are exact)."""
    k = np.arange(n_freq)[None, :]
    n = np.arange(n_fft)[:, None]
    angle = 2 * np.pi * ((k * n) % n_fft) / n_fft
    kiln = _k()
    return kiln.tensor(np.cos(angle), dtype=dtype), kiln.tensor(np.sin(angle), dtype=dtype)


def _describe(name, x, n_fft, hop_length, win_length, window, extra):
    shape = ", ".join(str(s) for s in x.shape)
    w = "None" if window is None else f"{window.type()}{{[{', '.join(str(s) for s in window.shape)}]}}"
    return (f"{name}({x.type()}[{shape}], n_fft={n_fft}, hop_length={hop_length}, win_length={win_length}, "
            f"window={w}, {extra})")


def _full_window(window, win_length, n_fft, dtype, where):
    """The window as n_fft values: ones when None, a shorter one zero-padded on both sides (centred)."""
    kiln = _k()
    if window is None:
        window = kiln.ones(win_length, dtype=dtype)
    elif window.dim() != 1 or window.shape[0] != win_length:
        raise RuntimeError(f"{where} : expected a 1D window tensor of size equal to win_length={win_length}, "
                           f"but got window with size {list(window.shape)}")
    if win_length < n_fft:
        left = (n_fft - win_length) // 2
        window = kiln.nn.functional.pad(window, [left, n_fft - win_length - left])
    return window


def stft(input, n_fft, hop_length=None, win_length=None, window=None, center=True, pad_mode="reflect",
         normalized=False, onesided=None, return_complex=None):
    kiln = _k()
    if return_complex:
        raise RuntimeError("stft(): return_complex=True needs a complex dtype, which kiln does not have; "
                           "return_complex=False gives the real and imaginary parts in a last dim of size 2")
    if return_complex is None:
        warnings.warn("stft will soon require the return_complex parameter be given for real inputs, and will "
                      "further require that return_complex=True in a future PyTorch release.", UserWarning,
                      stacklevel=2)
    if center:  # as torch.functional.stft: the signal padded by n_fft // 2 on both sides first
        signal_dim = input.dim()
        extended = [1] * (3 - signal_dim) + list(input.shape)
        pad = int(n_fft // 2)
        input = kiln.nn.functional.pad(input.view(extended), [pad, pad], pad_mode)
        input = input.view(input.shape[-signal_dim:])
    hop_length = n_fft // 4 if hop_length is None else hop_length
    win_length = n_fft if win_length is None else win_length
    where = _describe("stft", input, n_fft, hop_length, win_length, window,
                      f"normalized={int(bool(normalized))}, onesided={onesided}, return_complex=0")
    if input.dim() not in (1, 2):
        raise RuntimeError(f"{where} : expected a 1D or 2D tensor")
    if not input.is_floating_point():
        raise RuntimeError(f"{where} : expected a tensor of floating point or complex values")
    length = input.shape[-1]
    if n_fft <= 0 or n_fft > length:
        raise RuntimeError(f"{where} : expected 0 < n_fft < {length}, but got n_fft={n_fft}")
    if hop_length <= 0:
        raise RuntimeError(f"{where} : expected hop_length > 0, but got hop_length={hop_length}")
    if win_length <= 0 or win_length > n_fft:
        raise RuntimeError(f"{where} : expected 0 < win_length <= n_fft, but got win_length={win_length}")
    window = _full_window(window, win_length, n_fft, input.dtype, where)
    batched = input.dim() == 2
    x = input if batched else input.unsqueeze(0)
    frames = x.unfold(-1, n_fft, hop_length) * window  # [B, frames, n_fft]
    n_freq = n_fft // 2 + 1 if onesided is None or onesided else n_fft
    wide = kiln.float64 if input.dtype in (kiln.float32, kiln.float16, kiln.bfloat16) else input.dtype
    cos, sin = _bases(n_fft, n_freq, wide)
    f = frames.to(wide)
    real, imag = f.matmul(cos), -f.matmul(sin)  # [B, frames, n_freq]
    out = kiln.stack([real, imag], -1).transpose(1, 2)  # [B, n_freq, frames, 2]
    if normalized:
        out = out * (1.0 / math.sqrt(n_fft))
    out = out.to(input.dtype)
    return out if batched else out.squeeze(0)


def istft(input, n_fft, hop_length=None, win_length=None, window=None, center=True, normalized=False,
          onesided=None, length=None, return_complex=False):
    kiln = _k()
    hop_length = n_fft // 4 if hop_length is None else hop_length
    win_length = n_fft if win_length is None else win_length
    where = _describe("istft", input, n_fft, hop_length, win_length, window,
                      f"center={int(bool(center))}, normalized={int(bool(normalized))}, onesided={onesided}, "
                      f"length={length}, return_complex={int(bool(return_complex))}")
    if return_complex:
        raise RuntimeError("istft(): return_complex=True needs a complex dtype, which kiln does not have")
    if input.dim() < 3:  # torch reads the frames' size (dim -2) and the bins' (dim -3) first
        wanted = -2 if input.dim() == 1 else -3
        raise IndexError(f"Dimension out of range (expected to be in range of [{-input.dim()}, {input.dim() - 1}], "
                         f"but got {wanted})")
    if input.dim() > 4:
        raise RuntimeError(f"{where} : expected a tensor with 3 or 4 dimensions, but got {input.dim()}")
    if input.shape[-1] != 2:
        raise RuntimeError(f"{where} : expected the last dimension to be 2 (corresponding to real and imaginary "
                           f"parts), but got {input.shape[-1]}")
    warnings.warn("istft will require a complex-valued input tensor in a future PyTorch release. Matching the "
                  "output from stft with return_complex=True. ", UserWarning, stacklevel=2)
    if not input.is_floating_point():
        raise RuntimeError(f"{where} : expected a tensor of floating point values")
    batched = input.dim() == 4
    spec = input if batched else input.unsqueeze(0)
    n_freq, n_frames = spec.shape[1], spec.shape[2]
    onesided = (n_freq != n_fft) if onesided is None else onesided
    if onesided:
        if n_freq != n_fft // 2 + 1:
            raise RuntimeError(f"{where} : expected the frequency dimension (3rd to the last) of the input tensor to "
                               f"match n_fft / 2 + 1 when onesided=True, but got {n_freq}")
    elif n_freq != n_fft:
        raise RuntimeError(f"{where} : expected the frequency dimension (3rd to the last) of the input tensor to "
                           f"match n_fft when onesided=False, but got {n_freq}")
    if hop_length <= 0 or hop_length > win_length:
        raise RuntimeError(f"{where} : expected 0 < hop_length <= win_length")
    if win_length <= 0 or win_length > n_fft:
        raise RuntimeError(f"{where} : expected 0 < win_length <= n_fft")
    window = _full_window(window, win_length, n_fft, input.dtype, where)
    half = n_fft // 2 + 1
    if not onesided:
        spec = spec.narrow(1, 0, half)  # a real signal's spectrum: the first half, as torch's irfft reads it
    # the inverse real DFT over the half spectrum: DC and Nyquist once, the others twice (their conjugates);
    # their imaginary parts drop out (sin 0 = sin(pi n) = 0)
    wide = kiln.float64 if input.dtype in (kiln.float32, kiln.float16, kiln.bfloat16) else input.dtype
    cos, sin = _bases(n_fft, half, wide)
    weight = np.full(half, 2.0)
    weight[0] = 1.0
    if n_fft % 2 == 0:
        weight[-1] = 1.0
    weight = kiln.tensor(weight / (math.sqrt(n_fft) if normalized else n_fft), dtype=wide)
    s = spec.to(wide).transpose(1, 2)  # [B, frames, half, 2]
    frames = (s[..., 0] * weight).matmul(cos.t()) - (s[..., 1] * weight).matmul(sin.t())  # [B, frames, n_fft]
    frames = frames.to(input.dtype) * window
    expected = n_fft + hop_length * (n_frames - 1)
    fold = kiln.nn.functional.fold
    y = fold(frames.transpose(1, 2), (1, expected), (1, n_fft), stride=(1, hop_length)).reshape(-1, expected)
    envelope = fold(window.pow(2).view(1, n_fft, 1).expand(1, n_fft, n_frames), (1, expected), (1, n_fft),
                    stride=(1, hop_length)).reshape(1, expected)
    start = n_fft // 2 if center else 0
    end = start + length if length is not None else (expected - n_fft // 2 if center else expected)
    y = y[:, start:end]
    envelope = envelope[:, start:end]
    lowest = envelope.abs().min()
    if bool(lowest < 1e-11):
        raise RuntimeError(f"{where} window overlap add min: {float(lowest)}")
    y = y / envelope
    if end > expected:
        warnings.warn("The length of signal is shorter than the length parameter. Result is being padded with zeros "
                      "in the tail. Please check your center and hop_length settings.", UserWarning, stacklevel=2)
        y = kiln.nn.functional.pad(y, [0, end - expected])
    return y if batched else y.squeeze(0)


def install(namespace, tensor_class):
    namespace["stft"] = stft
    namespace["istft"] = istft
    tensor_class.stft = lambda self, *args, **kwargs: stft(self, *args, **kwargs)
    tensor_class.istft = lambda self, *args, **kwargs: istft(self, *args, **kwargs)
    tensor_class.stft.__name__ = tensor_class.stft.__qualname__ = "stft"
    tensor_class.istft.__name__ = tensor_class.istft.__qualname__ = "istft"
