"""jakesnell/prototypical-networks (protonets/models/few_shot.py and utils): Flatten, conv_block (Conv2d,
BatchNorm2d, ReLU, MaxPool2d), Protonet.loss over a sample dict {'xs': support, 'xq': query} (Variable inputs,
target_inds = torch.arange(0, n_class).view(n_class, 1, 1).expand(n_class, n_query, 1).long(), torch.cat of
support and query flattened by .view(n_class * n_support, *xs.size()[2:]), prototypes by
z[:n_class*n_support].view(n_class, n_support, z_dim).mean(1), euclidean_dist by x.unsqueeze(1).expand(n, m, d)
- y.unsqueeze(0).expand(n, m, d), log_softmax(-dists, dim=1).view(n_class, n_query, -1), loss_val =
-log_p_y.gather(2, target_inds).squeeze().view(-1).mean(), y_hat = log_p_y.max(2) and acc_val by
torch.eq(y_hat, target_inds.squeeze()).float().mean()), the episodic training loop with Adam and
StepLR(step_size=..., gamma=0.5), and the episode sampler (torch.randperm of classes and examples). Plus the
same distances by torch.cdist as later ports write them. Omniglot is replaced by synthetic 28x28 glyph
classes."""
import argparse

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim
from torch.autograd import Variable


class Flatten(nn.Module):
    def __init__(self):
        super(Flatten, self).__init__()

    def forward(self, x):
        return x.view(x.size(0), -1)


def euclidean_dist(x, y):
    # x: N x D
    # y: M x D
    n = x.size(0)
    m = y.size(0)
    d = x.size(1)
    assert d == y.size(1)

    x = x.unsqueeze(1).expand(n, m, d)
    y = y.unsqueeze(0).expand(n, m, d)

    return torch.pow(x - y, 2).sum(2)


class Protonet(nn.Module):
    def __init__(self, encoder, dist='euclidean'):
        super(Protonet, self).__init__()
        self.encoder = encoder
        self.dist = dist

    def loss(self, sample):
        xs = Variable(sample['xs'])  # support
        xq = Variable(sample['xq'])  # query

        n_class = xs.size(0)
        assert xq.size(0) == n_class
        n_support = xs.size(1)
        n_query = xq.size(1)

        target_inds = torch.arange(0, n_class).view(n_class, 1, 1).expand(n_class, n_query, 1).long()
        target_inds = Variable(target_inds, requires_grad=False)

        x = torch.cat([xs.view(n_class * n_support, *xs.size()[2:]),
                       xq.view(n_class * n_query, *xq.size()[2:])], 0)

        z = self.encoder.forward(x)
        z_dim = z.size(-1)

        z_proto = z[:n_class*n_support].view(n_class, n_support, z_dim).mean(1)
        zq = z[n_class*n_support:]

        if self.dist == 'euclidean':
            dists = euclidean_dist(zq, z_proto)
        else:
            dists = torch.cdist(zq, z_proto) ** 2

        log_p_y = F.log_softmax(-dists, dim=1).view(n_class, n_query, -1)

        loss_val = -log_p_y.gather(2, target_inds).squeeze().view(-1).mean()

        _, y_hat = log_p_y.max(2)
        acc_val = torch.eq(y_hat, target_inds.squeeze()).float().mean()

        return loss_val, {
            'loss': loss_val.item(),
            'acc': acc_val.item()
        }


def load_protonet_conv(x_dim, hid_dim, z_dim, dist):
    def conv_block(in_channels, out_channels):
        return nn.Sequential(
            nn.Conv2d(in_channels, out_channels, 3, padding=1),
            nn.BatchNorm2d(out_channels),
            nn.ReLU(),
            nn.MaxPool2d(2)
        )

    encoder = nn.Sequential(
        conv_block(x_dim[0], hid_dim),
        conv_block(hid_dim, hid_dim),
        conv_block(hid_dim, hid_dim),
        conv_block(hid_dim, z_dim),
        Flatten()
    )

    return Protonet(encoder, dist)


def make_glyphs(n_classes, n_per_class, rng):
    protos = (rng.rand(n_classes, 1, 7, 7) > 0.6).astype(np.float32)
    data = []
    for c in range(n_classes):
        big = np.kron(protos[c], np.ones((1, 4, 4), np.float32))
        data.append(np.stack([np.roll(big, rng.randint(-2, 3), axis=2) + 0.2 * rng.rand(1, 28, 28)
                              for _ in range(n_per_class)]).astype(np.float32))
    return torch.from_numpy(np.stack(data))  # (classes, examples, 1, 28, 28)


def main(argv=None):
    parser = argparse.ArgumentParser(description='Train prototypical networks')
    parser.add_argument('--data.way', type=int, default=4, dest='way')
    parser.add_argument('--data.shot', type=int, default=3, dest='shot')
    parser.add_argument('--data.query', type=int, default=3, dest='query')
    parser.add_argument('--train.episodes', type=int, default=10, dest='episodes')
    parser.add_argument('--model.dist', default='euclidean', choices=['euclidean', 'cdist'], dest='dist')
    parser.add_argument('--quiet', action='store_true')
    opt = parser.parse_args(argv)
    log = (lambda *a: None) if opt.quiet else print

    torch.manual_seed(1234)
    rng = np.random.RandomState(1234)
    data = make_glyphs(10, 8, rng)
    model = load_protonet_conv([1, 28, 28], 16, 16, opt.dist)
    initial_state = {k: v.clone() for k, v in model.state_dict().items()}
    optimizer = optim.Adam(model.parameters(), lr=0.001)
    scheduler = optim.lr_scheduler.StepLR(optimizer, 5, gamma=0.5, last_epoch=-1)

    step_losses, accs = [], []
    for episode in range(opt.episodes):
        model.train()
        classes = torch.randperm(data.size(0))[:opt.way]
        xs, xq = [], []
        for c in classes:
            perm = torch.randperm(data.size(1))
            xs.append(data[c][perm[:opt.shot]])
            xq.append(data[c][perm[opt.shot:opt.shot + opt.query]])
        sample = {'xs': torch.stack(xs), 'xq': torch.stack(xq)}
        optimizer.zero_grad()
        loss, output = model.loss(sample)
        loss.backward()
        optimizer.step()
        scheduler.step()
        step_losses.append(output['loss'])
        accs.append(output['acc'])
        log("episode", episode, output)

    model.eval()
    with torch.no_grad():
        _, out = model.loss({'xs': data[6:, :3].contiguous(), 'xq': data[6:, 3:6].contiguous()})
    return {"initial_state": initial_state, "step_losses": step_losses, "accs": accs, "eval": out}


if __name__ == "__main__":
    main()
