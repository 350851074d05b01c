"""Spectral losses of neural vocoders as written, on a tiny MelGAN generator. kan-bayashi/ParallelWaveGAN's
losses/stft_loss.py (stft() by torch.stft(x, fft_size, hop_size, win_length, window) in its real form, real = x_stft[...,
0], imag = x_stft[..., 1], torch.sqrt(torch.clamp(real ** 2 + imag ** 2, min=1e-7)).transpose(2, 1); the
SpectralConvergengeLoss torch.norm(y_mag - x_mag, p="fro") / torch.norm(y_mag, p="fro"); LogSTFTMagnitudeLoss
F.l1_loss(torch.log(y_mag), torch.log(x_mag)); STFTLoss registering getattr(torch, window)(win_length) as a buffer;
MultiResolutionSTFTLoss averaging over resolutions), jik876/hifi-gan's meldataset.mel_spectrogram (reflect padding
by (n_fft - hop_size) / 2, torch.stft(..., center=False, pad_mode='reflect', normalized=False, onesided=True), spec =
torch.sqrt(spec.pow(2).sum(-1) + (1e-9)), the mel basis by torch.matmul, dynamic_range_compression_torch) with a
NumPy Slaney mel filterbank in place of librosa's, and descriptinc/melgan-neurips' Generator (ReflectionPad1d,
WNConv1d / WNConvTranspose1d by nn.utils.weight_norm, ResnetBlock with dilations 1, 3, 9 and 1x1 shortcuts,
LeakyReLU(0.2), Tanh); trained with Adam(betas=(0.5, 0.9)); then Griffin-Lim by torch.istft on the real form."""
import argparse
import math

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.utils import weight_norm


def stft(x, fft_size, hop_size, win_length, window):
    x_stft = torch.stft(x, fft_size, hop_size, win_length, window)
    real = x_stft[..., 0]
    imag = x_stft[..., 1]
    return torch.sqrt(torch.clamp(real ** 2 + imag ** 2, min=1e-7)).transpose(2, 1)


class SpectralConvergengeLoss(torch.nn.Module):
    def forward(self, x_mag, y_mag):
        return torch.norm(y_mag - x_mag, p="fro") / torch.norm(y_mag, p="fro")


class LogSTFTMagnitudeLoss(torch.nn.Module):
    def forward(self, x_mag, y_mag):
        return F.l1_loss(torch.log(y_mag), torch.log(x_mag))


class STFTLoss(torch.nn.Module):
    def __init__(self, fft_size=1024, shift_size=120, win_length=600, window="hann_window"):
        super(STFTLoss, self).__init__()
        self.fft_size = fft_size
        self.shift_size = shift_size
        self.win_length = win_length
        self.spectral_convergenge_loss = SpectralConvergengeLoss()
        self.log_stft_magnitude_loss = LogSTFTMagnitudeLoss()
        self.register_buffer("window", getattr(torch, window)(win_length))

    def forward(self, x, y):
        x_mag = stft(x, self.fft_size, self.shift_size, self.win_length, self.window)
        y_mag = stft(y, self.fft_size, self.shift_size, self.win_length, self.window)
        sc_loss = self.spectral_convergenge_loss(x_mag, y_mag)
        mag_loss = self.log_stft_magnitude_loss(x_mag, y_mag)
        return sc_loss, mag_loss


class MultiResolutionSTFTLoss(torch.nn.Module):
    def __init__(self, fft_sizes=[1024, 2048, 512], hop_sizes=[120, 240, 50], win_lengths=[600, 1200, 240],
                 window="hann_window"):
        super(MultiResolutionSTFTLoss, self).__init__()
        assert len(fft_sizes) == len(hop_sizes) == len(win_lengths)
        self.stft_losses = torch.nn.ModuleList()
        for fs, ss, wl in zip(fft_sizes, hop_sizes, win_lengths):
            self.stft_losses += [STFTLoss(fs, ss, wl, window)]

    def forward(self, x, y):
        sc_loss = 0.0
        mag_loss = 0.0
        for f in self.stft_losses:
            sc_l, mag_l = f(x, y)
            sc_loss += sc_l
            mag_loss += mag_l
        sc_loss /= len(self.stft_losses)
        mag_loss /= len(self.stft_losses)
        return sc_loss, mag_loss


def hz_to_mel(freqs):
    f_sp = 200.0 / 3
    mels = freqs / f_sp
    min_log_hz = 1000.0
    min_log_mel = min_log_hz / f_sp
    logstep = np.log(6.4) / 27.0
    log_t = freqs >= min_log_hz
    mels = np.where(log_t, min_log_mel + np.log(np.maximum(freqs, 1e-10) / min_log_hz) / logstep, mels)
    return mels


def mel_to_hz(mels):
    f_sp = 200.0 / 3
    freqs = f_sp * mels
    min_log_hz = 1000.0
    min_log_mel = min_log_hz / f_sp
    logstep = np.log(6.4) / 27.0
    log_t = mels >= min_log_mel
    return np.where(log_t, min_log_hz * np.exp(logstep * (mels - min_log_mel)), freqs)


def librosa_mel_fn(sr, n_fft, n_mels, fmin, fmax):
    weights = np.zeros((n_mels, int(1 + n_fft // 2)), dtype=np.float32)
    fftfreqs = np.linspace(0, float(sr) / 2, int(1 + n_fft // 2))
    mel_f = mel_to_hz(np.linspace(hz_to_mel(np.array(fmin)), hz_to_mel(np.array(fmax)), n_mels + 2))
    fdiff = np.diff(mel_f)
    ramps = np.subtract.outer(mel_f, fftfreqs)
    for i in range(n_mels):
        lower = -ramps[i] / fdiff[i]
        upper = ramps[i + 2] / fdiff[i + 1]
        weights[i] = np.maximum(0, np.minimum(lower, upper))
    enorm = 2.0 / (mel_f[2:n_mels + 2] - mel_f[:n_mels])
    weights *= enorm[:, np.newaxis]
    return weights


def dynamic_range_compression_torch(x, C=1, clip_val=1e-5):
    return torch.log(torch.clamp(x, min=clip_val) * C)


def spectral_normalize_torch(magnitudes):
    return dynamic_range_compression_torch(magnitudes)


mel_basis = {}
hann_window = {}


def mel_spectrogram(y, n_fft, num_mels, sampling_rate, hop_size, win_size, fmin, fmax, center=False):
    global mel_basis, hann_window
    if fmax not in mel_basis:
        mel = librosa_mel_fn(sampling_rate, n_fft, num_mels, fmin, fmax)
        mel_basis[str(fmax) + '_' + str(y.device)] = torch.from_numpy(mel).float().to(y.device)
        hann_window[str(y.device)] = torch.hann_window(win_size).to(y.device)
    y = torch.nn.functional.pad(y.unsqueeze(1), (int((n_fft - hop_size) / 2), int((n_fft - hop_size) / 2)),
                                mode='reflect')
    y = y.squeeze(1)
    spec = torch.stft(y, n_fft, hop_length=hop_size, win_length=win_size, window=hann_window[str(y.device)],
                      center=center, pad_mode='reflect', normalized=False, onesided=True)
    spec = torch.sqrt(spec.pow(2).sum(-1) + (1e-9))
    spec = torch.matmul(mel_basis[str(fmax) + '_' + str(y.device)], spec)
    spec = spectral_normalize_torch(spec)
    return spec


def WNConv1d(*args, **kwargs):
    return weight_norm(nn.Conv1d(*args, **kwargs))


def WNConvTranspose1d(*args, **kwargs):
    return weight_norm(nn.ConvTranspose1d(*args, **kwargs))


def weights_init(m):
    classname = m.__class__.__name__
    if classname.find("Conv") != -1:
        m.weight.data.normal_(0.0, 0.02)
    elif classname.find("BatchNorm2d") != -1:
        m.weight.data.normal_(1.0, 0.02)
        m.bias.data.fill_(0)


class ResnetBlock(nn.Module):
    def __init__(self, dim, dilation=1):
        super().__init__()
        self.block = nn.Sequential(
            nn.LeakyReLU(0.2),
            nn.ReflectionPad1d(dilation),
            WNConv1d(dim, dim, kernel_size=3, dilation=dilation),
            nn.LeakyReLU(0.2),
            WNConv1d(dim, dim, kernel_size=1),
        )
        self.shortcut = WNConv1d(dim, dim, kernel_size=1)

    def forward(self, x):
        return self.shortcut(x) + self.block(x)


class Generator(nn.Module):
    def __init__(self, input_size, ngf, n_residual_layers, ratios=(4, 4)):
        super().__init__()
        self.hop_length = np.prod(ratios)
        mult = int(2 ** len(ratios))
        model = [nn.ReflectionPad1d(3), WNConv1d(input_size, mult * ngf, kernel_size=7, padding=0)]
        for i, r in enumerate(ratios):
            model += [
                nn.LeakyReLU(0.2),
                WNConvTranspose1d(mult * ngf, mult * ngf // 2, kernel_size=r * 2, stride=r,
                                  padding=r // 2 + r % 2, output_padding=r % 2),
            ]
            for j in range(n_residual_layers):
                model += [ResnetBlock(mult * ngf // 2, dilation=3 ** j)]
            mult //= 2
        model += [nn.LeakyReLU(0.2), nn.ReflectionPad1d(3), WNConv1d(ngf, 1, kernel_size=7, padding=0), nn.Tanh()]
        self.model = nn.Sequential(*model)
        self.apply(weights_init)

    def forward(self, x):
        return self.model(x)


def main(argv=None):
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=6)
    parser.add_argument("--quiet", action="store_true")
    args = parser.parse_args(argv)
    log = (lambda *a: None) if args.quiet else print
    torch.manual_seed(0)
    np.random.seed(0)
    sr, seg = 8000, 1024
    t = np.arange(seg) / sr
    audio = np.stack([0.5 * np.sin(2 * np.pi * f * t) + 0.2 * np.sin(2 * np.pi * 2.5 * f * t + ph)
                      for f, ph in zip(np.random.uniform(100, 900, 8), np.random.uniform(0, 6, 8))]).astype(np.float32)
    audio = torch.from_numpy(audio + 0.05 * np.random.randn(*audio.shape).astype(np.float32))
    mels = mel_spectrogram(audio, 256, 16, sr, 16, 256, 0, sr / 2, center=False)
    netG = Generator(16, 8, 2)
    initial_state = {k: v.clone() for k, v in netG.state_dict().items()}
    optG = torch.optim.Adam(netG.parameters(), lr=1e-3, betas=(0.5, 0.9))
    stft_criterion = MultiResolutionSTFTLoss(fft_sizes=[128, 256, 64], hop_sizes=[16, 32, 8], win_lengths=[80, 160, 40])
    step_losses, sc_losses, mel_losses = [], [], []
    for it in range(args.steps):
        idx = torch.arange(it % 2, 8, 2)
        x = audio[idx]
        y_hat = netG(mels[idx])[:, 0, :seg]
        sc_loss, mag_loss = stft_criterion(y_hat, x)
        y_hat_mel = mel_spectrogram(y_hat, 256, 16, sr, 16, 256, 0, sr / 2)
        loss_mel = F.l1_loss(mels[idx], y_hat_mel)
        loss = sc_loss + mag_loss + 0.1 * loss_mel
        optG.zero_grad()
        loss.backward()
        optG.step()
        step_losses.append(loss.item())
        sc_losses.append(sc_loss.item())
        mel_losses.append(loss_mel.item())
        log("iter %d sc %.4f mag %.4f mel %.4f" % (it, sc_loss.item(), mag_loss.item(), loss_mel.item()))
    window = torch.hann_window(128)
    spec = torch.stft(audio[:2], 128, 32, 128, window, return_complex=False)
    mag = spec.pow(2).sum(-1).sqrt()
    angles = torch.ones_like(spec)
    angles[..., 1] = 0
    for _ in range(4):
        inverse = torch.istft(mag.unsqueeze(-1) * angles, 128, 32, 128, window, length=seg)
        rebuilt = torch.stft(inverse, 128, 32, 128, window, return_complex=False)
        angles = rebuilt / (rebuilt.pow(2).sum(-1, keepdim=True).sqrt() + 1e-16)
    return {"initial_state": initial_state, "step_losses": step_losses, "sc": sc_losses, "mel": mel_losses,
            "mels": mels, "griffin_lim": inverse}


if __name__ == "__main__":
    main()
