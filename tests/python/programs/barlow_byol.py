"""Two self-supervised objectives as their repos write them, on a small CNN over synthetic "augmented" views.

--method barlow: facebookresearch/barlowtwins' main.py: BarlowTwins (a backbone with its fc replaced by
nn.Identity(), a projector built from sizes = [feat] + list(map(int, args.projector.split('-'))) as
Linear(bias=False) / BatchNorm1d / ReLU(inplace=True) layers, self.bn = nn.BatchNorm1d(sizes[-1], affine=False)),
the loss c = self.bn(z1).T @ self.bn(z2), c.div_(batch size), on_diag = torch.diagonal(c).add_(-1).pow_(2).sum(),
off_diagonal(x) by x.flatten()[:-1].view(n - 1, n + 1)[:, 1:].flatten(), LARS (an optim.Optimizer subclass whose
step() is @torch.no_grad(), weight_decay_filter / lars_adaptation_filter by p.ndim == 1, dp.add(p, alpha=...),
torch.norm, torch.where(param_norm > 0., torch.where(update_norm > 0, (g['eta'] * param_norm / update_norm),
one), one), state['mu'] = torch.zeros_like(p), mu.mul_(g['momentum']).add_(dp), p.add_(mu, alpha=-g['lr'])),
parameter groups param_weights / param_biases and adjust_learning_rate's warm-up then cosine.

--method byol: lucidrains/byol-pytorch's byol_pytorch.py: loss_fn (F.normalize(dim=-1, p=2), 2 - 2 * (x * y)
.sum(dim=-1)), EMA (beta * old + (1 - beta) * new), update_moving_average over zip(ma_model.parameters(),
current_model.parameters()) assigning ma_params.data, the target encoder made by copy.deepcopy with
set_requires_grad(False), MLP projector / predictor (Linear, BatchNorm1d, ReLU), the symmetric loss
loss_one + loss_two, and a singleton-cached target (the @singleton decorator over _get_target_encoder)."""
import argparse
import copy
import math
from functools import wraps

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch import optim


class Backbone(nn.Module):
    def __init__(self, width=16, feat=32):
        super().__init__()
        self.conv = nn.Sequential(nn.Conv2d(3, width, 3, padding=1), nn.BatchNorm2d(width), nn.ReLU(inplace=True),
                                  nn.MaxPool2d(2), nn.Conv2d(width, 2 * width, 3, padding=1),
                                  nn.BatchNorm2d(2 * width), nn.ReLU(inplace=True), nn.AdaptiveAvgPool2d(1))
        self.fc = nn.Linear(2 * width, feat)

    def forward(self, x):
        return self.fc(torch.flatten(self.conv(x), 1))


# ---------------------------------------------------------------------------- Barlow Twins
def off_diagonal(x):
    # return a flattened view of the off-diagonal elements of a square matrix
    n, m = x.shape
    assert n == m
    return x.flatten()[:-1].view(n - 1, n + 1)[:, 1:].flatten()


class BarlowTwins(nn.Module):
    def __init__(self, args):
        super().__init__()
        self.args = args
        self.backbone = Backbone()
        self.backbone.fc = nn.Identity()

        # projector
        sizes = [32] + list(map(int, args.projector.split('-')))
        layers = []
        for i in range(len(sizes) - 2):
            layers.append(nn.Linear(sizes[i], sizes[i + 1], bias=False))
            layers.append(nn.BatchNorm1d(sizes[i + 1]))
            layers.append(nn.ReLU(inplace=True))
        layers.append(nn.Linear(sizes[-2], sizes[-1], bias=False))
        self.projector = nn.Sequential(*layers)

        # normalization layer for the representations z1 and z2
        self.bn = nn.BatchNorm1d(sizes[-1], affine=False)

    def forward(self, y1, y2):
        z1 = self.projector(self.backbone(y1))
        z2 = self.projector(self.backbone(y2))

        # empirical cross-correlation matrix
        c = self.bn(z1).T @ self.bn(z2)

        # sum the cross-correlation matrix between all gpus
        c.div_(self.args.batch_size)

        on_diag = torch.diagonal(c).add_(-1).pow_(2).sum()
        off_diag = off_diagonal(c).pow_(2).sum()
        loss = on_diag + self.args.lambd * off_diag
        return loss


class LARS(optim.Optimizer):
    def __init__(self, params, lr, weight_decay=0, momentum=0.9, eta=0.001,
                 weight_decay_filter=False, lars_adaptation_filter=False):
        defaults = dict(lr=lr, weight_decay=weight_decay, momentum=momentum,
                        eta=eta, weight_decay_filter=weight_decay_filter,
                        lars_adaptation_filter=lars_adaptation_filter)
        super().__init__(params, defaults)

    def exclude_bias_and_norm(self, p):
        return p.ndim == 1

    @torch.no_grad()
    def step(self):
        for g in self.param_groups:
            for p in g['params']:
                dp = p.grad

                if dp is None:
                    continue

                if not g['weight_decay_filter'] or not self.exclude_bias_and_norm(p):
                    dp = dp.add(p, alpha=g['weight_decay'])

                if not g['lars_adaptation_filter'] or not self.exclude_bias_and_norm(p):
                    param_norm = torch.norm(p)
                    update_norm = torch.norm(dp)
                    one = torch.ones_like(param_norm)
                    q = torch.where(param_norm > 0.,
                                    torch.where(update_norm > 0,
                                                (g['eta'] * param_norm / update_norm), one), one)
                    dp = dp.mul(q)

                param_state = self.state[p]
                if 'mu' not in param_state:
                    param_state['mu'] = torch.zeros_like(p)
                mu = param_state['mu']
                mu.mul_(g['momentum']).add_(dp)

                p.add_(mu, alpha=-g['lr'])


def exclude_bias_and_norm(p):
    return p.ndim == 1


def adjust_learning_rate(args, optimizer, loader_len, step):
    max_steps = args.epochs * loader_len
    warmup_steps = 2 * loader_len
    base_lr = args.batch_size / 256
    if step < warmup_steps:
        lr = base_lr * step / warmup_steps
    else:
        step -= warmup_steps
        max_steps -= warmup_steps
        q = 0.5 * (1 + math.cos(math.pi * step / max_steps))
        end_lr = base_lr * 0.001
        lr = base_lr * q + end_lr * (1 - q)
    optimizer.param_groups[0]['lr'] = lr * args.learning_rate_weights
    optimizer.param_groups[1]['lr'] = lr * args.learning_rate_biases


# ---------------------------------------------------------------------------- BYOL
def default(val, def_val):
    return def_val if val is None else val


def singleton(cache_key):
    def inner_fn(fn):
        @wraps(fn)
        def wrapper(self, *args, **kwargs):
            instance = getattr(self, cache_key)
            if instance is not None:
                return instance

            instance = fn(self, *args, **kwargs)
            setattr(self, cache_key, instance)
            return instance
        return wrapper
    return inner_fn


def loss_fn(x, y):
    x = F.normalize(x, dim=-1, p=2)
    y = F.normalize(y, dim=-1, p=2)
    return 2 - 2 * (x * y).sum(dim=-1)


def set_requires_grad(model, val):
    for p in model.parameters():
        p.requires_grad = val


class EMA():
    def __init__(self, beta):
        super().__init__()
        self.beta = beta

    def update_average(self, old, new):
        if old is None:
            return new
        return old * self.beta + (1 - self.beta) * new


def update_moving_average(ema_updater, ma_model, current_model):
    for current_params, ma_params in zip(current_model.parameters(), ma_model.parameters()):
        old_weight, up_weight = ma_params.data, current_params.data
        ma_params.data = ema_updater.update_average(old_weight, up_weight)


def MLP(dim, projection_size, hidden_size=4096):
    return nn.Sequential(
        nn.Linear(dim, hidden_size),
        nn.BatchNorm1d(hidden_size),
        nn.ReLU(inplace=True),
        nn.Linear(hidden_size, projection_size)
    )


class BYOL(nn.Module):
    def __init__(self, net, projection_size=16, projection_hidden_size=64, moving_average_decay=0.99,
                 use_momentum=True):
        super().__init__()
        self.net = net
        self.online_encoder = nn.Sequential(net, MLP(32, projection_size, projection_hidden_size))
        self.use_momentum = use_momentum
        self.target_encoder = None
        self.target_ema_updater = EMA(moving_average_decay)
        self.online_predictor = MLP(projection_size, projection_size, projection_hidden_size)

    @singleton('target_encoder')
    def _get_target_encoder(self):
        target_encoder = copy.deepcopy(self.online_encoder)
        set_requires_grad(target_encoder, False)
        return target_encoder

    def update_moving_average(self):
        assert self.use_momentum, 'you do not need to update the moving average, since you have turned off ' \
                                  'momentum for the target encoder'
        assert self.target_encoder is not None, 'target encoder has not been created yet'
        update_moving_average(self.target_ema_updater, self.target_encoder, self.online_encoder)

    def forward(self, image_one, image_two):
        online_proj_one = self.online_encoder(image_one)
        online_proj_two = self.online_encoder(image_two)

        online_pred_one = self.online_predictor(online_proj_one)
        online_pred_two = self.online_predictor(online_proj_two)

        with torch.no_grad():
            target_encoder = self._get_target_encoder() if self.use_momentum else self.online_encoder
            target_proj_one = target_encoder(image_one)
            target_proj_two = target_encoder(image_two)
            target_proj_one.detach_()
            target_proj_two.detach_()

        loss_one = loss_fn(online_pred_one, target_proj_two.detach())
        loss_two = loss_fn(online_pred_two, target_proj_one.detach())

        loss = loss_one + loss_two
        return loss.mean()


def augment(x, gen):
    """Random crop-and-flip views: a random shift by roll and a random horizontal flip per image."""
    shifts = torch.randint(-2, 3, (2,), generator=gen).tolist()
    x = torch.roll(x, shifts=shifts, dims=(2, 3))
    flip = torch.rand(x.size(0), generator=gen) < 0.5
    x = torch.where(flip[:, None, None, None], x.flip(3), x)
    return x + 0.05 * torch.randn(x.shape, generator=gen)


def main(argv=None):
    parser = argparse.ArgumentParser(description='Barlow Twins / BYOL Training')
    parser.add_argument('--method', default='barlow', choices=['barlow', 'byol'])
    parser.add_argument('--epochs', default=3, type=int)
    parser.add_argument('--batch-size', default=16, type=int)
    parser.add_argument('--learning-rate-weights', default=0.2, type=float)
    parser.add_argument('--learning-rate-biases', default=0.0048, type=float)
    parser.add_argument('--weight-decay', default=1e-6, type=float)
    parser.add_argument('--lambd', default=0.0051, type=float)
    parser.add_argument('--projector', default='64-64-64', type=str)
    parser.add_argument('--quiet', action='store_true')
    args = parser.parse_args(argv)
    log = (lambda *a: None) if args.quiet else print

    torch.manual_seed(0)
    rng = np.random.RandomState(0)
    images = torch.from_numpy(rng.rand(48, 3, 12, 12).astype(np.float32))
    loader_len = len(images) // args.batch_size
    gen = torch.Generator().manual_seed(1)

    if args.method == 'barlow':
        model = BarlowTwins(args)
        param_weights = []
        param_biases = []
        for param in model.parameters():
            if param.ndim == 1:
                param_biases.append(param)
            else:
                param_weights.append(param)
        parameters = [{'params': param_weights}, {'params': param_biases}]
        optimizer = LARS(parameters, lr=0, weight_decay=args.weight_decay,
                         weight_decay_filter=True,
                         lars_adaptation_filter=True)
    else:
        model = BYOL(Backbone())
        optimizer = torch.optim.Adam(model.parameters(), lr=3e-4)
    initial_state = {k: v.clone() for k, v in model.state_dict().items()}

    step_losses, lrs = [], []
    step = 0
    for epoch in range(args.epochs):
        perm = torch.randperm(len(images))
        for i in range(loader_len):
            x = images[perm[i * args.batch_size:(i + 1) * args.batch_size]]
            y1, y2 = augment(x, gen), augment(x, gen)
            if args.method == 'barlow':
                adjust_learning_rate(args, optimizer, loader_len, step)
                lrs.append([g['lr'] for g in optimizer.param_groups])
            optimizer.zero_grad()
            loss = model(y1, y2)
            loss.backward()
            optimizer.step()
            if args.method == 'byol':
                model.update_moving_average()
            step_losses.append(loss.item())
            step += 1
            log(epoch, i, loss.item())

    out = {"initial_state": initial_state, "step_losses": step_losses, "lrs": lrs}
    if args.method == 'byol':
        out["target_state"] = {k: v.clone() for k, v in model.target_encoder.state_dict().items()}
        out["target_requires_grad"] = [p.requires_grad for p in model.target_encoder.parameters()]
    else:
        out["final_state"] = {k: v.clone() for k, v in model.state_dict().items()}
    return out


if __name__ == "__main__":
    main()
