"""torch.stft / torch.istft in the real form (return_complex=False, torch 1.13's default for real inputs, with its
warning) that audio programs call: HiFi-GAN's mel_spectrogram (magnitude by sqrt(spec.pow(2).sum(-1) + 1e-9)),
ParallelWaveGAN's multi-resolution STFT loss (x_stft[..., 0] / [..., 1]), Griffin-Lim round trips through istft.
kiln computes the DFT as float64 products with cos / sin bases (torch: pocketfft), so values agree with torch to a
few float32 ulps of the spectrum's largest magnitude and gradients likewise."""
import warnings

import numpy as np
import pytest
import torch

import kiln

STFT_CASES = [
    dict(n_fft=64, hop_length=16),
    dict(n_fft=64, hop_length=16, win_length=40),
    dict(n_fft=63, hop_length=10, center=False),
    dict(n_fft=32, normalized=True),
    dict(n_fft=32, onesided=False),
    dict(n_fft=32, pad_mode="constant"),
    dict(n_fft=16),  # hop_length n_fft // 4, no window: a rectangular one
]


def run(lib, fn):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(lib)


def rel(a, b):
    return float(np.abs(a - b).max() / max(np.abs(a).max(), 1e-30))


@pytest.mark.parametrize("kw", STFT_CASES, ids=[str(i) for i in range(len(STFT_CASES))])
@pytest.mark.parametrize("batched", [True, False])
def test_stft_values_and_gradients(kw, batched):
    x = np.random.RandomState(0).randn(2, 300).astype(np.float32)
    x = x if batched else x[0]

    def go(T):
        t = T.tensor(x, requires_grad=True)
        window = T.hann_window(kw.get("win_length", kw["n_fft"])) if kw["n_fft"] != 16 else None
        s = T.stft(t, window=window, return_complex=False, **kw)
        mag = T.sqrt(s.pow(2).sum(-1) + 1e-9)  # HiFi-GAN's spectral magnitude
        (mag.log().mean() + s[..., 0].abs().mean()).backward()
        return s.detach().numpy(), t.grad.numpy()

    (st, gt), (sk, gk) = run(torch, go), run(kiln, go)
    assert sk.shape == st.shape and sk.dtype == st.dtype
    assert rel(st, sk) < 1e-6
    assert rel(gt, gk) < 1e-4  # through log(|X|): the smallest magnitudes' relative rounding, amplified


def test_stft_float64_and_method_form():
    x = np.random.RandomState(1).randn(3, 200)
    st = run(torch, lambda T: T.tensor(x).stft(50, hop_length=12, window=T.hamming_window(50, dtype=T.float64),
                                               return_complex=False))
    sk = run(kiln, lambda T: T.tensor(x).stft(50, hop_length=12, window=T.hamming_window(50, dtype=T.float64),
                                              return_complex=False))
    assert sk.dtype == kiln.float64 and tuple(sk.shape) == tuple(st.shape)
    assert rel(st.numpy(), sk.numpy()) < 1e-13


ISTFT_CASES = [
    dict(n_fft=64, hop_length=16),
    dict(n_fft=64, hop_length=16, win_length=40),
    dict(n_fft=64, hop_length=16, length=290),
    dict(n_fft=32, normalized=True),
    dict(n_fft=33, hop_length=8, onesided=False),
    dict(n_fft=32, hop_length=8, center=False, rect=True),
    dict(n_fft=32, hop_length=8, length=330),  # longer than the frames cover: zeros at the tail, with a warning
]


@pytest.mark.parametrize("kw", ISTFT_CASES, ids=[str(i) for i in range(len(ISTFT_CASES))])
def test_istft_round_trip_and_gradients(kw):
    kw = dict(kw)
    rect = kw.pop("rect", False)
    x = np.random.RandomState(2).randn(2, 300).astype(np.float32)

    def go(T):
        n = kw.get("win_length", kw["n_fft"])
        window = T.ones(n) if rect else T.hann_window(n)
        skw = {k: v for k, v in kw.items() if k != "length"}
        s = T.stft(T.tensor(x), window=window, return_complex=False, **skw).detach().requires_grad_()
        y = T.istft(s, window=window, **kw)
        (y.pow(2).sum() + y[:, :5].sum()).backward()
        return y.detach().numpy(), s.grad.numpy()

    (yt, gt), (yk, gk) = run(torch, go), run(kiln, go)
    assert yk.shape == yt.shape
    assert rel(yt, yk) < 1e-5  # divided by the summed squared window, small near uncovered edges
    assert rel(gt, gk) < 1e-5
    n = min(yk.shape[1], x.shape[1]) - (32 if kw.get("center") is False else 0)
    np.testing.assert_allclose(yk[:, :n], x[:, :n], atol=1e-5)  # the round trip gives the signal back


def test_griffin_lim_style_loop_matches_torch():
    rng = np.random.RandomState(3)
    x = rng.randn(400).astype(np.float32)
    phase = rng.rand(33, 26).astype(np.float32) * 2 * np.pi

    def go(T):
        window = T.hann_window(64)
        spec = T.stft(T.tensor(x), 64, hop_length=16, window=window, return_complex=False)
        mag = spec.pow(2).sum(-1).sqrt()
        angles = T.stack([T.tensor(phase).cos(), T.tensor(phase).sin()], -1)
        for _ in range(3):
            y = T.istft(mag.unsqueeze(-1) * angles, 64, hop_length=16, window=window, length=400)
            rebuilt = T.stft(y, 64, hop_length=16, window=window, return_complex=False)
            angles = rebuilt / (rebuilt.pow(2).sum(-1, keepdim=True).sqrt() + 1e-16)
        return y.numpy()

    yt, yk = run(torch, go), run(kiln, go)
    assert rel(yt, yk) < 1e-5


def test_warnings_as_torch():
    x = kiln.randn(100)
    with pytest.warns(UserWarning, match="stft will soon require the return_complex parameter"):
        s = kiln.stft(x, 16)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        kiln.stft(x, 16, return_complex=False)  # given: no warning
    with pytest.warns(UserWarning, match="istft will require a complex-valued input tensor"):
        kiln.istft(s, 16)


@pytest.mark.parametrize("call, match", [
    (lambda T, x: T.stft(x.unsqueeze(0).unsqueeze(0), 16, return_complex=False), "expected a 1D or 2D tensor"),
    (lambda T, x: T.stft(x, 16, hop_length=0, return_complex=False), "expected hop_length > 0"),
    (lambda T, x: T.stft(x, 16, win_length=20, return_complex=False), "expected 0 < win_length <= n_fft"),
    (lambda T, x: T.stft(x, 16, window=T.ones(10), return_complex=False),
     "expected a 1D window tensor of size equal to win_length=16"),
    (lambda T, x: T.stft(x, 200, center=False, return_complex=False), "expected 0 < n_fft < 100"),
    (lambda T, x: T.istft(T.stft(x, 16, return_complex=False)[None, ..., 0], 16),
     "expected the last dimension to be 2"),
    (lambda T, x: T.istft(T.stft(x, 16, return_complex=False)[None, None], 16),
     "expected a tensor with 3 or 4 dimensions, but got 5"),
    (lambda T, x: T.istft(T.stft(x, 16, return_complex=False), 16, window=T.zeros(16)), "window overlap add min"),
    (lambda T, x: T.istft(T.stft(x, 16, return_complex=False), 20),
     "match n_fft / 2 \\+ 1 when one?sided=True"),  # (torch's message spells it "onsided")
])
def test_errors_match_torch(call, match):
    for T in (torch, kiln):
        x = T.randn(100)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with pytest.raises(RuntimeError, match=match):
                call(T, x)


def test_return_complex_true_says_why():
    with pytest.raises(RuntimeError, match="complex dtype"):
        kiln.stft(kiln.randn(100), 16, return_complex=True)


def test_istft_of_a_two_dim_input_is_torchs_index_error():
    for T in (torch, kiln):
        spec = run(T, lambda L: L.stft(L.randn(100), 16, return_complex=False))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with pytest.raises(IndexError, match="Dimension out of range"):
                T.istft(spec[..., 0], 16)
