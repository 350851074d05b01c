"""jzbontar/pixelcnn-pytorch's main.py: MaskedConv2d (a Conv2d subclass with register_buffer('mask',
self.weight.data.clone()), mask.fill_(1), type 'A' / 'B' masks set by slicing, and
self.weight.data *= self.mask before super().forward), the net of 8 masked 7x7 / 3x3 blocks with
BatchNorm2d and ReLU and a 256-way 1x1 output, F.cross_entropy against (input.data[:, 0] * 255).long(),
Adam, and the sampling loop (torch.multinomial of F.softmax(out[:, :, i, j]) filled pixel by pixel under
no_grad). MNIST is replaced by random binary-ish 12x12 digits; fm is reduced."""
import argparse
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch import optim
from torch.utils import data


class MaskedConv2d(nn.Conv2d):
    def __init__(self, mask_type, *args, **kwargs):
        super(MaskedConv2d, self).__init__(*args, **kwargs)
        assert mask_type in {'A', 'B'}
        self.register_buffer('mask', self.weight.data.clone())
        _, _, kH, kW = self.weight.size()
        self.mask.fill_(1)
        self.mask[:, :, kH // 2, kW // 2 + (mask_type == 'B'):] = 0
        self.mask[:, :, kH // 2 + 1:] = 0

    def forward(self, x):
        self.weight.data *= self.mask
        return super(MaskedConv2d, self).forward(x)


def make_net(fm):
    return nn.Sequential(
        MaskedConv2d('A', 1, fm, 7, 1, 3, bias=False), nn.BatchNorm2d(fm), nn.ReLU(True),
        MaskedConv2d('B', fm, fm, 7, 1, 3, bias=False), nn.BatchNorm2d(fm), nn.ReLU(True),
        MaskedConv2d('B', fm, fm, 7, 1, 3, bias=False), nn.BatchNorm2d(fm), nn.ReLU(True),
        MaskedConv2d('B', fm, fm, 7, 1, 3, bias=False), nn.BatchNorm2d(fm), nn.ReLU(True),
        MaskedConv2d('B', fm, fm, 7, 1, 3, bias=False), nn.BatchNorm2d(fm), nn.ReLU(True),
        MaskedConv2d('B', fm, fm, 7, 1, 3, bias=False), nn.BatchNorm2d(fm), nn.ReLU(True),
        MaskedConv2d('B', fm, fm, 7, 1, 3, bias=False), nn.BatchNorm2d(fm), nn.ReLU(True),
        MaskedConv2d('B', fm, fm, 7, 1, 3, bias=False), nn.BatchNorm2d(fm), nn.ReLU(True),
        nn.Conv2d(fm, 256, 1))


def main(argv=None):
    p = argparse.ArgumentParser()
    p.add_argument('--fm', type=int, default=16)
    p.add_argument('--epochs', type=int, default=2)
    p.add_argument('--n', type=int, default=64)
    p.add_argument('--size', type=int, default=12)
    p.add_argument('--quiet', action='store_true')
    args = p.parse_args(argv)
    log = (lambda *a: None) if args.quiet else print

    torch.manual_seed(1)
    rng = np.random.RandomState(0)
    imgs = (rng.rand(args.n, 1, args.size, args.size) < 0.15).astype(np.float32)
    imgs[:, :, 3:9, 5:7] = 1.0
    tr = data.DataLoader(data.TensorDataset(torch.from_numpy(imgs), torch.zeros(args.n)), batch_size=16,
                         shuffle=True, num_workers=0, pin_memory=True)
    te = data.DataLoader(data.TensorDataset(torch.from_numpy(imgs[:16]), torch.zeros(16)), batch_size=16,
                         shuffle=False, num_workers=0, pin_memory=True)

    net = make_net(args.fm)
    initial_state = {k: v.clone() for k, v in net.state_dict().items()}
    optimizer = optim.Adam(net.parameters())
    step_losses, test_losses = [], []
    for epoch in range(args.epochs):
        # train
        err_tr = []
        time_tr = time.time()
        net.train(True)
        for input, _ in tr:
            target = (input.data[:, 0] * 255).long()
            loss = F.cross_entropy(net(input), target)
            err_tr.append(loss.item())
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            step_losses.append(loss.item())
        time_tr = time.time() - time_tr

        # compute error on test set
        err_te = []
        net.train(False)
        with torch.no_grad():
            for input, _ in te:
                target = (input.data[:, 0] * 255).long()
                loss = F.cross_entropy(net(input), target)
                err_te.append(loss.item())
        test_losses.append(np.mean(err_te))
        log('epoch={}; nll_tr={:.7f}; nll_te={:.7f}'.format(epoch, np.mean(err_tr), np.mean(err_te)))

    # sample
    sample = torch.Tensor(4, 1, args.size, args.size)
    sample.fill_(0)
    net.train(False)
    with torch.no_grad():
        for i in range(args.size):
            for j in range(args.size):
                out = net(sample)
                probs = F.softmax(out[:, :, i, j], dim=-1).data
                sample[:, :, i, j] = torch.multinomial(probs, 1).float() / 255.
    return {"initial_state": initial_state, "step_losses": step_losses, "test_losses": test_losses,
            "sample": sample, "final_state": net.state_dict()}


if __name__ == '__main__':
    main()
