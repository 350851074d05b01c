"""christiancosgrove/pytorch-spectral-normalization-gan: spectral_normalization.py (SpectralNorm wrapping a
module: l2normalize, _made_params / _make_params that del self.module._parameters[self.name] and register
name + "_u" / "_v" (requires_grad=False) and name + "_bar" Parameters, _update_u_v's power iteration with
torch.mv(torch.t(w.view(height,-1).data), u.data), sigma = u.dot(w.view(height, -1).mv(v)), setattr(self.module,
self.name, w / sigma.expand_as(w))), model_resnet.py's ResBlockGenerator / ResBlockDiscriminator /
FirstResBlockDiscriminator (nn.init.xavier_uniform_(..., 1.) and np.sqrt(2) gains, nn.Upsample(scale_factor=2),
nn.AvgPool2d, a bypass Sequential), and main.py's hinge loss (nn.ReLU()(1.0 - discriminator(data)).mean() +
nn.ReLU()(1.0 + discriminator(fake)).mean()), Adam(betas=(0.0, 0.9)) with filter(lambda p: p.requires_grad,
...), ExponentialLR(gamma=0.99) per epoch, disc_iters, Variable(torch.randn(...)) noise and --loss wasserstein /
bce. --sn torch uses torch.nn.utils.spectral_norm instead of the repo's class."""
import argparse

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim
from torch.optim.lr_scheduler import ExponentialLR
from torch.autograd import Variable
from torch.nn import Parameter


def l2normalize(v, eps=1e-12):
    return v / (v.norm() + eps)


class SpectralNorm(nn.Module):
    def __init__(self, module, name='weight', power_iterations=1):
        super(SpectralNorm, self).__init__()
        self.module = module
        self.name = name
        self.power_iterations = power_iterations
        if not self._made_params():
            self._make_params()

    def _update_u_v(self):
        u = getattr(self.module, self.name + "_u")
        v = getattr(self.module, self.name + "_v")
        w = getattr(self.module, self.name + "_bar")

        height = w.data.shape[0]
        for _ in range(self.power_iterations):
            v.data = l2normalize(torch.mv(torch.t(w.view(height,-1).data), u.data))
            u.data = l2normalize(torch.mv(w.view(height,-1).data, v.data))

        # sigma = torch.dot(u.data, torch.mv(w.view(height,-1).data, v.data))
        sigma = u.dot(w.view(height, -1).mv(v))
        setattr(self.module, self.name, w / sigma.expand_as(w))

    def _made_params(self):
        try:
            u = getattr(self.module, self.name + "_u")
            v = getattr(self.module, self.name + "_v")
            w = getattr(self.module, self.name + "_bar")
            return True
        except AttributeError:
            return False

    def _make_params(self):
        w = getattr(self.module, self.name)

        height = w.data.shape[0]
        width = w.view(height, -1).data.shape[1]

        u = Parameter(w.data.new(height).normal_(0, 1), requires_grad=False)
        v = Parameter(w.data.new(width).normal_(0, 1), requires_grad=False)
        u.data = l2normalize(u.data)
        v.data = l2normalize(v.data)
        w_bar = Parameter(w.data)

        del self.module._parameters[self.name]

        self.module.register_parameter(self.name + "_u", u)
        self.module.register_parameter(self.name + "_v", v)
        self.module.register_parameter(self.name + "_bar", w_bar)

    def forward(self, *args):
        self._update_u_v()
        return self.module.forward(*args)


SN = SpectralNorm
channels = 3


class ResBlockGenerator(nn.Module):

    def __init__(self, in_channels, out_channels, stride=1):
        super(ResBlockGenerator, self).__init__()

        self.conv1 = nn.Conv2d(in_channels, out_channels, 3, 1, padding=1)
        self.conv2 = nn.Conv2d(out_channels, out_channels, 3, 1, padding=1)
        nn.init.xavier_uniform_(self.conv1.weight.data, 1.)
        nn.init.xavier_uniform_(self.conv2.weight.data, 1.)

        self.model = nn.Sequential(
            nn.BatchNorm2d(in_channels),
            nn.ReLU(),
            nn.Upsample(scale_factor=2),
            self.conv1,
            nn.BatchNorm2d(out_channels),
            nn.ReLU(),
            self.conv2
            )
        self.bypass = nn.Sequential()
        if stride != 1:
            self.bypass = nn.Upsample(scale_factor=2)

    def forward(self, x):
        return self.model(x) + self.bypass(x)


class ResBlockDiscriminator(nn.Module):

    def __init__(self, in_channels, out_channels, stride=1):
        super(ResBlockDiscriminator, self).__init__()

        self.conv1 = nn.Conv2d(in_channels, out_channels, 3, 1, padding=1)
        self.conv2 = nn.Conv2d(out_channels, out_channels, 3, 1, padding=1)
        nn.init.xavier_uniform_(self.conv1.weight.data, 1.)
        nn.init.xavier_uniform_(self.conv2.weight.data, 1.)

        if stride == 1:
            self.model = nn.Sequential(
                nn.ReLU(),
                SN(self.conv1),
                nn.ReLU(),
                SN(self.conv2)
                )
        else:
            self.model = nn.Sequential(
                nn.ReLU(),
                SN(self.conv1),
                nn.ReLU(),
                SN(self.conv2),
                nn.AvgPool2d(2, stride=stride, padding=0)
                )
        self.bypass = nn.Sequential()
        if stride != 1:

            self.bypass_conv = nn.Conv2d(in_channels, out_channels, 1, 1, padding=0)
            nn.init.xavier_uniform_(self.bypass_conv.weight.data, np.sqrt(2))

            self.bypass = nn.Sequential(
                SN(self.bypass_conv),
                nn.AvgPool2d(2, stride=stride, padding=0)
            )

    def forward(self, x):
        return self.model(x) + self.bypass(x)


# special ResBlock just for the first layer of the discriminator
class FirstResBlockDiscriminator(nn.Module):

    def __init__(self, in_channels, out_channels, stride=1):
        super(FirstResBlockDiscriminator, self).__init__()

        self.conv1 = nn.Conv2d(in_channels, out_channels, 3, 1, padding=1)
        self.conv2 = nn.Conv2d(out_channels, out_channels, 3, 1, padding=1)
        self.bypass_conv = nn.Conv2d(in_channels, out_channels, 1, 1, padding=0)
        nn.init.xavier_uniform_(self.conv1.weight.data, 1.)
        nn.init.xavier_uniform_(self.conv2.weight.data, 1.)
        nn.init.xavier_uniform_(self.bypass_conv.weight.data, np.sqrt(2))

        # we don't want to apply ReLU activation to raw image before convolution transformation.
        self.model = nn.Sequential(
            SN(self.conv1),
            nn.ReLU(),
            SN(self.conv2),
            nn.AvgPool2d(2)
            )
        self.bypass = nn.Sequential(
            nn.AvgPool2d(2),
            SN(self.bypass_conv),
        )

    def forward(self, x):
        return self.model(x) + self.bypass(x)


class Generator(nn.Module):
    def __init__(self, z_dim, GEN_SIZE=16):
        super(Generator, self).__init__()
        self.z_dim = z_dim
        self.GEN_SIZE = GEN_SIZE

        self.dense = nn.Linear(self.z_dim, 4 * 4 * GEN_SIZE)
        self.final = nn.Conv2d(GEN_SIZE, channels, 3, stride=1, padding=1)
        nn.init.xavier_uniform_(self.dense.weight.data, 1.)
        nn.init.xavier_uniform_(self.final.weight.data, 1.)

        self.model = nn.Sequential(
            ResBlockGenerator(GEN_SIZE, GEN_SIZE, stride=2),
            ResBlockGenerator(GEN_SIZE, GEN_SIZE, stride=2),
            nn.BatchNorm2d(GEN_SIZE),
            nn.ReLU(),
            self.final,
            nn.Tanh())

    def forward(self, z):
        return self.model(self.dense(z).view(-1, self.GEN_SIZE, 4, 4))


class Discriminator(nn.Module):
    def __init__(self, DISC_SIZE=16, sn='repo'):
        super(Discriminator, self).__init__()
        global SN
        SN = SpectralNorm if sn == 'repo' else nn.utils.spectral_norm
        self.DISC_SIZE = DISC_SIZE

        self.model = nn.Sequential(
                FirstResBlockDiscriminator(channels, DISC_SIZE, stride=2),
                ResBlockDiscriminator(DISC_SIZE, DISC_SIZE, stride=2),
                ResBlockDiscriminator(DISC_SIZE, DISC_SIZE),
                nn.ReLU(),
                nn.AvgPool2d(4),
            )
        self.fc = nn.Linear(DISC_SIZE, 1)
        nn.init.xavier_uniform_(self.fc.weight.data, 1.)
        self.fc = SN(self.fc)

    def forward(self, x):
        return self.fc(self.model(x).view(-1, self.DISC_SIZE))


def main(argv=None):
    parser = argparse.ArgumentParser()
    parser.add_argument('--batch_size', type=int, default=8)
    parser.add_argument('--lr', type=float, default=2e-4)
    parser.add_argument('--loss', type=str, default='hinge')
    parser.add_argument('--sn', type=str, default='repo', choices=['repo', 'torch'])
    parser.add_argument('--epochs', type=int, default=2)
    parser.add_argument('--batches', type=int, default=3)
    parser.add_argument('--quiet', action='store_true')
    args = parser.parse_args(argv)
    log = (lambda *a: None) if args.quiet else print

    torch.manual_seed(1)
    Z_dim = 16
    disc_iters = 2
    discriminator = Discriminator(sn=args.sn)
    generator = Generator(Z_dim)
    initial_state = {"D." + k: v.clone() for k, v in discriminator.state_dict().items()}
    initial_state.update({"G." + k: v.clone() for k, v in generator.state_dict().items()})

    # because the spectral normalization module creates parameters that don't require gradients (u and v), we
    # don't want to optimize these using sgd. We only let the optimizer operate on parameters that _do_ require
    # gradients
    optim_disc = optim.Adam(filter(lambda p: p.requires_grad, discriminator.parameters()), lr=args.lr,
                            betas=(0.0, 0.9))
    optim_gen = optim.Adam(generator.parameters(), lr=args.lr, betas=(0.0, 0.9))

    # use an exponentially decaying learning rate
    scheduler_d = optim.lr_scheduler.ExponentialLR(optim_disc, gamma=0.99)
    scheduler_g = optim.lr_scheduler.ExponentialLR(optim_gen, gamma=0.99)

    rng = np.random.RandomState(0)
    real = np.tanh(rng.randn(args.batches * args.batch_size, 3, 16, 16).cumsum(axis=3) * 0.3).astype(np.float32)
    step_losses, g_losses = [], []
    for epoch in range(args.epochs):
        for batch_idx in range(args.batches):
            data = torch.from_numpy(real[batch_idx * args.batch_size:(batch_idx + 1) * args.batch_size])
            if data.size()[0] != args.batch_size:
                continue
            data = Variable(data)

            # update discriminator
            for _ in range(disc_iters):
                z = Variable(torch.randn(args.batch_size, Z_dim))
                optim_disc.zero_grad()
                optim_gen.zero_grad()
                if args.loss == 'hinge':
                    disc_loss = nn.ReLU()(1.0 - discriminator(data)).mean() + nn.ReLU()(
                        1.0 + discriminator(generator(z))).mean()
                elif args.loss == 'wasserstein':
                    disc_loss = -discriminator(data).mean() + discriminator(generator(z)).mean()
                else:
                    disc_loss = nn.BCEWithLogitsLoss()(discriminator(data), Variable(torch.ones(args.batch_size, 1))) + \
                        nn.BCEWithLogitsLoss()(discriminator(generator(z)), Variable(torch.zeros(args.batch_size, 1)))
                disc_loss.backward()
                optim_disc.step()
                step_losses.append(disc_loss.item())

            z = Variable(torch.randn(args.batch_size, Z_dim))

            # update generator
            optim_disc.zero_grad()
            optim_gen.zero_grad()
            if args.loss == 'hinge' or args.loss == 'wasserstein':
                gen_loss = -discriminator(generator(z)).mean()
            else:
                gen_loss = nn.BCEWithLogitsLoss()(discriminator(generator(z)), Variable(torch.ones(args.batch_size, 1)))
            gen_loss.backward()
            optim_gen.step()
            g_losses.append(gen_loss.item())
            log('disc loss', disc_loss.data.item(), 'gen loss', gen_loss.data.item())
        scheduler_d.step()
        scheduler_g.step()

    generator.eval()
    with torch.no_grad():
        samples = generator(torch.randn(4, Z_dim))
    final = {k: v.clone() for k, v in discriminator.state_dict().items()}
    return {"initial_state": initial_state, "step_losses": step_losses, "g_losses": g_losses,
            "samples": samples, "d_state": final, "d_names": list(final)}


if __name__ == "__main__":
    main()
