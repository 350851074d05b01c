"""senya-ashukha/real-nvp-pytorch's real-nvp-pytorch.ipynb (RealNVP on two moons: nets / nett as lambdas
returning nn.Sequential with LeakyReLU and Tanh, fixed binary masks as nn.Parameter(mask,
requires_grad=False), a distributions.MultivariateNormal prior, g (sampling direction) and f (the
inverse with its log-determinant), log_prob = prior.log_prob(z) + logp, loss = -flow.log_prob(...).mean(),
Adam over [p for p in flow.parameters() if p.requires_grad==True], sampling with prior.sample_n) and
a Glow-style ActNorm + invertible 1x1 (a learned square matrix with torch.slogdet) variant. sklearn's
make_moons is replaced by its formula in NumPy."""
import argparse

import numpy as np
import torch
from torch import nn
from torch import distributions
from torch.nn.parameter import Parameter


def make_moons(n_samples, noise, rng):
    n_out = n_samples // 2
    n_in = n_samples - n_out
    outer_circ_x = np.cos(np.linspace(0, np.pi, n_out))
    outer_circ_y = np.sin(np.linspace(0, np.pi, n_out))
    inner_circ_x = 1 - np.cos(np.linspace(0, np.pi, n_in))
    inner_circ_y = 1 - np.sin(np.linspace(0, np.pi, n_in)) - .5
    X = np.vstack([np.append(outer_circ_x, inner_circ_x), np.append(outer_circ_y, inner_circ_y)]).T
    X += rng.normal(scale=noise, size=X.shape)
    return X, None


class RealNVP(nn.Module):
    def __init__(self, nets, nett, mask, prior):
        super(RealNVP, self).__init__()

        self.prior = prior
        self.mask = nn.Parameter(mask, requires_grad=False)
        self.t = torch.nn.ModuleList([nett() for _ in range(len(mask))])
        self.s = torch.nn.ModuleList([nets() for _ in range(len(mask))])

    def g(self, z):
        x = z
        for i in range(len(self.t)):
            x_ = x * self.mask[i]
            s = self.s[i](x_) * (1 - self.mask[i])
            t = self.t[i](x_) * (1 - self.mask[i])
            x = x_ + (1 - self.mask[i]) * (x * torch.exp(s) + t)
        return x

    def f(self, x):
        log_det_J, z = x.new_zeros(x.shape[0]), x
        for i in reversed(range(len(self.t))):
            z_ = self.mask[i] * z
            s = self.s[i](z_) * (1 - self.mask[i])
            t = self.t[i](z_) * (1 - self.mask[i])
            z = (1 - self.mask[i]) * (z - t) * torch.exp(-s) + z_
            log_det_J -= s.sum(dim=1)
        return z, log_det_J

    def log_prob(self, x):
        z, logp = self.f(x)
        return self.prior.log_prob(z) + logp

    def sample(self, batchSize):
        z = self.prior.sample((batchSize, 1))
        logp = self.prior.log_prob(z)
        x = self.g(z)
        return x


class ActNorm(nn.Module):
    """Glow's ActNorm with data-dependent init on the first batch."""

    def __init__(self, dim):
        super().__init__()
        self.loc = nn.Parameter(torch.zeros(1, dim))
        self.log_scale = nn.Parameter(torch.zeros(1, dim))
        self.register_buffer('initialized', torch.tensor(0, dtype=torch.uint8))

    def forward(self, x):
        if self.initialized.item() == 0:
            with torch.no_grad():
                self.loc.data.copy_(-x.mean(0, keepdim=True))
                self.log_scale.data.copy_(torch.log(1 / (x.std(0, keepdim=True) + 1e-6)))
                self.initialized.fill_(1)
        z = (x + self.loc) * torch.exp(self.log_scale)
        return z, self.log_scale.sum().expand(x.shape[0])


class InvLinear(nn.Module):
    """Glow's invertible 1x1 convolution on vectors: W initialised as a random rotation (torch.linalg.qr)."""

    def __init__(self, dim):
        super().__init__()
        w = torch.linalg.qr(torch.randn(dim, dim))[0]
        self.weight = nn.Parameter(w)

    def forward(self, x):
        return x @ self.weight, torch.slogdet(self.weight)[1].expand(x.shape[0])


class Coupling(nn.Module):
    def __init__(self, dim, hidden, parity):
        super().__init__()
        self.parity = parity
        self.net = nn.Sequential(nn.Linear(dim // 2, hidden), nn.LeakyReLU(), nn.Linear(hidden, hidden),
                                 nn.LeakyReLU(), nn.Linear(hidden, dim))

    def forward(self, x):
        x0, x1 = x.chunk(2, dim=1)
        if self.parity:
            x0, x1 = x1, x0
        s, t = self.net(x0).chunk(2, dim=1)
        s = torch.tanh(s)
        z1 = torch.exp(s) * x1 + t
        z = torch.cat([z1, x0] if self.parity else [x0, z1], dim=1)
        return z, torch.sum(s, dim=1)


class GlowFlow(nn.Module):
    def __init__(self, dim, hidden, n_steps, prior):
        super().__init__()
        self.prior = prior
        layers = []
        for i in range(n_steps):
            layers += [ActNorm(dim), InvLinear(dim), Coupling(dim, hidden, i % 2)]
        self.flows = nn.ModuleList(layers)

    def log_prob(self, x):
        log_det = torch.zeros(x.shape[0])
        for flow in self.flows:
            x, ld = flow(x)
            log_det += ld
        return self.prior.log_prob(x) + log_det


def main(argv=None):
    p = argparse.ArgumentParser()
    p.add_argument('--model', default='realnvp', choices=['realnvp', 'glow'])
    p.add_argument('--steps', type=int, default=60)
    p.add_argument('--hidden', type=int, default=64)
    p.add_argument('--quiet', action='store_true')
    args = p.parse_args(argv)

    torch.manual_seed(0)
    rng = np.random.RandomState(0)
    prior = distributions.MultivariateNormal(torch.zeros(2), torch.eye(2))
    if args.model == 'realnvp':
        nets = lambda: nn.Sequential(nn.Linear(2, args.hidden), nn.LeakyReLU(), nn.Linear(args.hidden, args.hidden),  # noqa
                                     nn.LeakyReLU(), nn.Linear(args.hidden, 2), nn.Tanh())
        nett = lambda: nn.Sequential(nn.Linear(2, args.hidden), nn.LeakyReLU(), nn.Linear(args.hidden, args.hidden),  # noqa
                                     nn.LeakyReLU(), nn.Linear(args.hidden, 2))
        masks = torch.from_numpy(np.array([[0, 1], [1, 0]] * 3).astype(np.float32))
        flow = RealNVP(nets, nett, masks, prior)
    else:
        flow = GlowFlow(2, args.hidden, 4, prior)
    initial_state = {k: v.clone() for k, v in flow.state_dict().items()}

    optimizer = torch.optim.Adam([p for p in flow.parameters() if p.requires_grad == True], lr=1e-4)  # noqa: E712
    step_losses = []
    for t in range(args.steps):
        noisy_moons = torch.from_numpy(make_moons(n_samples=100, noise=.05, rng=rng)[0].astype(np.float32))
        loss = -flow.log_prob(noisy_moons).mean()

        optimizer.zero_grad()
        loss.backward(retain_graph=True)
        optimizer.step()
        step_losses.append(loss.item())

    out = {"initial_state": initial_state, "step_losses": step_losses, "final_state": flow.state_dict()}
    with torch.no_grad():
        if args.model == 'realnvp':
            z, logdet = flow.f(noisy_moons)
            out["z"], out["logdet"] = z, logdet
            out["x"] = flow.sample(50)
        else:
            out["logp"] = flow.log_prob(noisy_moons)
    return out


if __name__ == '__main__':
    main()
