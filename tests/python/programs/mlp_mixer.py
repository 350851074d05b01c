"""lucidrains/mlp-mixer-pytorch's mlp_mixer_pytorch.py (PreNormResidual, FeedForward with dense =
partial(nn.Conv1d, kernel_size = 1) for token mixing and nn.Linear for channel mixing, pair(), MLPMixer
as one nn.Sequential) with einops' Rearrange('b c (h p1) (w p2) -> b (h w) (p1 p2 c)') and
Reduce('b n c -> b c', 'mean') written as small modules over view / permute / reshape / mean, trained
with Adam and a OneCycleLR schedule on random 3x16x16 images."""
import argparse
from functools import partial

import numpy as np
import torch
from torch import nn


class Rearrange(nn.Module):
    """einops.layers.torch.Rearrange for the one pattern the mixer uses."""

    def __init__(self, pattern, p1, p2):
        super().__init__()
        self.pattern, self.p1, self.p2 = pattern, p1, p2

    def forward(self, x):
        b, c, H, W = x.shape
        h, w = H // self.p1, W // self.p2
        x = x.reshape(b, c, h, self.p1, w, self.p2)
        x = x.permute(0, 2, 4, 3, 5, 1)
        return x.reshape(b, h * w, self.p1 * self.p2 * c)


class Reduce(nn.Module):
    def __init__(self, pattern, reduction):
        super().__init__()
        self.pattern, self.reduction = pattern, reduction

    def forward(self, x):
        return x.mean(dim=1)


pair = lambda x: x if isinstance(x, tuple) else (x, x)  # noqa: E731


class PreNormResidual(nn.Module):
    def __init__(self, dim, fn):
        super().__init__()
        self.fn = fn
        self.norm = nn.LayerNorm(dim)

    def forward(self, x):
        return self.fn(self.norm(x)) + x


def FeedForward(dim, expansion_factor=4, dropout=0., dense=nn.Linear):
    inner_dim = int(dim * expansion_factor)
    return nn.Sequential(
        dense(dim, inner_dim),
        nn.GELU(),
        nn.Dropout(dropout),
        dense(inner_dim, dim),
        nn.Dropout(dropout)
    )


def MLPMixer(*, image_size, channels, patch_size, dim, depth, num_classes, expansion_factor=4,
             expansion_factor_token=0.5, dropout=0.):
    image_h, image_w = pair(image_size)
    assert (image_h % patch_size) == 0 and (image_w % patch_size) == 0, 'image must be divisible by patch size'
    num_patches = (image_h // patch_size) * (image_w // patch_size)
    chan_first, chan_last = partial(nn.Conv1d, kernel_size=1), nn.Linear

    return nn.Sequential(
        Rearrange('b c (h p1) (w p2) -> b (h w) (p1 p2 c)', p1=patch_size, p2=patch_size),
        nn.Linear((patch_size ** 2) * channels, dim),
        *[nn.Sequential(
            PreNormResidual(dim, FeedForward(num_patches, expansion_factor, dropout, chan_first)),
            PreNormResidual(dim, FeedForward(dim, expansion_factor_token, dropout, chan_last))
        ) for _ in range(depth)],
        nn.LayerNorm(dim),
        Reduce('b n c -> b c', 'mean'),
        nn.Linear(dim, num_classes)
    )


def main(argv=None):
    p = argparse.ArgumentParser()
    p.add_argument('--steps', type=int, default=16)
    p.add_argument('--batch_size', type=int, default=16)
    p.add_argument('--dim', type=int, default=32)
    p.add_argument('--depth', type=int, default=3)
    p.add_argument('--dropout', type=float, default=0.1)
    p.add_argument('--quiet', action='store_true')
    args = p.parse_args(argv)

    torch.manual_seed(0)
    model = MLPMixer(image_size=16, channels=3, patch_size=4, dim=args.dim, depth=args.depth, num_classes=6,
                     dropout=args.dropout)
    initial_state = {k: v.clone() for k, v in model.state_dict().items()}
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    scheduler = torch.optim.lr_scheduler.OneCycleLR(optimizer, max_lr=3e-3, total_steps=args.steps)
    rng = np.random.RandomState(0)
    step_losses, lrs = [], []
    for step in range(args.steps):
        img = torch.from_numpy(rng.rand(args.batch_size, 3, 16, 16).astype(np.float32))
        y = torch.from_numpy(rng.randint(0, 6, size=args.batch_size))
        img[:, 2, :4] += y.view(-1, 1, 1) * 0.2
        model.train()
        loss = nn.functional.cross_entropy(model(img), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        scheduler.step()
        step_losses.append(loss.item())
        lrs.append(scheduler.get_last_lr()[0])
    model.eval()
    with torch.no_grad():
        preds = model(img)
    return {"initial_state": initial_state, "step_losses": step_losses, "lrs": lrs, "preds": preds,
            "final_state": model.state_dict()}


if __name__ == '__main__':
    main()
