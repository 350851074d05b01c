"""Growing Neural Cellular Automata (Mordvintsev et al., distill.pub 2020) in its common PyTorch port
(chenmingxiang110/Growing-Neural-Cellular-Automata): CAModel's perceive() by F.conv2d with identity / Sobel
filters built with np.outer, stacked, repeat'ed per channel and applied with groups=channel_n, the alive mask
F.max_pool2d(x[:, 3:4], kernel_size=3, stride=1, padding=1) > 0.1, the stochastic update mask
torch.rand([...]) > fire_rate, living cells by pre & post masks, the fc0 / fc1 update rule with fc1 zero-initialised,
x.transpose(1, 3) layouts, the sample pool with the worst sample replaced by the seed (argsort of per-sample losses),
make_seed, the loss on RGBA channels, per-parameter gradient normalisation p.grad /= (p.grad.norm() + 1e-8) and Adam
with MultiStepLR."""
import argparse

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim


class CAModel(nn.Module):
    def __init__(self, channel_n, fire_rate, device, hidden_size=128):
        super(CAModel, self).__init__()
        self.device = device
        self.channel_n = channel_n
        self.fc0 = nn.Linear(channel_n * 3, hidden_size)
        self.fc1 = nn.Linear(hidden_size, channel_n, bias=False)
        with torch.no_grad():
            self.fc1.weight.zero_()
        self.fire_rate = fire_rate
        self.to(self.device)

    def alive(self, x):
        return F.max_pool2d(x[:, 3:4, :, :], kernel_size=3, stride=1, padding=1) > 0.1

    def perceive(self, x, angle):
        def _perceive_with(x, weight):
            conv_weights = torch.from_numpy(weight.astype(np.float32)).to(self.device)
            conv_weights = conv_weights.view(1, 1, 3, 3).repeat(self.channel_n, 1, 1, 1)
            return F.conv2d(x, conv_weights, padding=1, groups=self.channel_n)

        dx = np.outer([1, 2, 1], [-1, 0, 1]) / 8.0
        dy = dx.T
        c = np.cos(angle * np.pi / 180)
        s = np.sin(angle * np.pi / 180)
        w1 = c * dx - s * dy
        w2 = s * dx + c * dy
        y1 = _perceive_with(x, w1)
        y2 = _perceive_with(x, w2)
        y = torch.cat((x, y1, y2), 1)
        return y

    def update(self, x, fire_rate, angle):
        x = x.transpose(1, 3)
        pre_life_mask = self.alive(x)
        dx = self.perceive(x, angle)
        dx = dx.transpose(1, 3)
        dx = self.fc0(dx)
        dx = F.relu(dx)
        dx = self.fc1(dx)
        if fire_rate is None:
            fire_rate = self.fire_rate
        stochastic = torch.rand([dx.size(0), dx.size(1), dx.size(2), 1]) > fire_rate
        stochastic = stochastic.float().to(self.device)
        dx = dx * stochastic
        x = x + dx.transpose(1, 3)
        post_life_mask = self.alive(x)
        life_mask = (pre_life_mask & post_life_mask).float()
        x = x * life_mask
        return x.transpose(1, 3)

    def forward(self, x, steps=1, fire_rate=None, angle=0.0):
        for step in range(steps):
            x = self.update(x, fire_rate, angle)
        return x


def make_seed(shape, n_channels):
    seed = np.zeros([shape[0], shape[1], n_channels], np.float32)
    seed[shape[0] // 2, shape[1] // 2, 3:] = 1.0
    return seed


def make_target(size):
    yy, xx = np.mgrid[:size, :size]
    r = np.sqrt((yy - size / 2 + 0.5) ** 2 + (xx - size / 2 + 0.5) ** 2)
    alpha = (r < size / 3).astype(np.float32)
    rgb = np.stack([np.sin(xx / 3.0) * 0.5 + 0.5, np.cos(yy / 4.0) * 0.5 + 0.5, np.full_like(r, 0.3)], -1)
    return np.concatenate([rgb * alpha[..., None], alpha[..., None]], -1).astype(np.float32)


def main(argv=None):
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=8)
    parser.add_argument("--ca_steps", type=int, default=12)
    parser.add_argument("--angle", type=float, default=0.0)
    parser.add_argument("--quiet", action="store_true")
    args = parser.parse_args(argv)
    log = (lambda *a: None) if args.quiet else print
    np.random.seed(0)
    torch.manual_seed(0)
    device = torch.device("cpu")
    CHANNEL_N, TARGET_SIZE, POOL_SIZE, BATCH_SIZE, CELL_FIRE_RATE = 12, 12, 16, 4, 0.5
    target_img = make_target(TARGET_SIZE)
    p = 2
    pad_target = np.pad(target_img, [(p, p), (p, p), (0, 0)])
    h, w = pad_target.shape[:2]
    pad_target = np.expand_dims(pad_target, axis=0)
    pad_target = torch.from_numpy(pad_target.astype(np.float32)).to(device)
    seed = make_seed((h, w), CHANNEL_N)
    pool = np.repeat(seed[None, ...], POOL_SIZE, 0)
    ca = CAModel(CHANNEL_N, CELL_FIRE_RATE, device, hidden_size=32).to(device)
    initial_state = {k: v.clone() for k, v in ca.state_dict().items()}
    optimizer = optim.Adam(ca.parameters(), lr=2e-3, betas=(0.5, 0.5))
    scheduler = optim.lr_scheduler.MultiStepLR(optimizer, [4], 0.1)

    def loss_f(x, target):
        return torch.mean(torch.pow(x[..., :4] - target, 2), [-2, -3, -1])

    step_losses, grad_norms = [], []
    for i in range(args.steps):
        batch = np.random.choice(POOL_SIZE, BATCH_SIZE, replace=False)
        x0 = pool[batch]
        loss_rank = loss_f(torch.from_numpy(x0.astype(np.float32)).to(device), pad_target).detach().cpu().numpy()
        loss_rank = loss_rank.argsort()[::-1]
        x0 = x0[loss_rank]
        x0[:1] = seed
        x0 = torch.from_numpy(x0.astype(np.float32)).to(device)
        x = ca(x0, steps=args.ca_steps, angle=args.angle)
        loss = F.mse_loss(x[:, :, :, :4], pad_target.expand(BATCH_SIZE, -1, -1, -1))
        optimizer.zero_grad()
        loss.backward()
        norms = []
        for p_ in ca.parameters():
            norms.append(p_.grad.norm().item())
            p_.grad /= (p_.grad.norm() + 1e-8)
        optimizer.step()
        scheduler.step()
        pool[batch] = x.detach().cpu().numpy()
        step_losses.append(loss.item())
        grad_norms.append(norms)
        log(i, "loss =", loss.item())
    with torch.no_grad():
        grown = ca(torch.from_numpy(seed[None]).to(device), steps=args.ca_steps, fire_rate=0.0)
    return {"initial_state": initial_state, "step_losses": step_losses, "grad_norms": grad_norms,
            "grown": grown, "pool": pool}


if __name__ == "__main__":
    main()
