"""A denoising diffusion probabilistic model as the public PyTorch ports write it (lucidrains/denoising-diffusion-
pytorch's GaussianDiffusion and the widely copied "Annotated Diffusion Model" blog post): linear / cosine beta
schedules (torch.linspace, torch.cos(((x / timesteps) + s) / (1 + s) * math.pi * 0.5) ** 2, torch.clip),
alphas_cumprod by torch.cumprod, alphas_cumprod_prev by F.pad(alphas_cumprod[:-1], (1, 0), value=1.0), buffers
registered as float32 with register_buffer, extract(a, t, x_shape) by a.gather(-1, t).reshape(b, *((1,) *
(len(x_shape) - 1))), q_sample, SinusoidalPositionEmbeddings (torch.exp(torch.arange(half_dim) * -embeddings),
torch.cat((embeddings.sin(), embeddings.cos()), dim=-1)), a small U-Net of GroupNorm / SiLU ResNet blocks with
time-embedding scale-shift (chunk(2, dim=1)), Downsample by a strided Conv2d and Upsample by
nn.Upsample(scale_factor=2, mode="nearest"), a random timestep torch.randint(0, timesteps, (batch_size,)).long(),
l1 / l2 / huber losses (F.smooth_l1_loss), Adam, and p_sample / p_sample_loop under @torch.no_grad() with
torch.randn_like noise, posterior_variance and the nonzero_mask, plus EMA of the weights."""
import argparse
import copy
import math
from functools import partial

import torch
import torch.nn.functional as F
from torch import nn


def exists(x):
    return x is not None


def default(val, d):
    if exists(val):
        return val
    return d() if callable(d) else d


def linear_beta_schedule(timesteps):
    beta_start = 0.0001
    beta_end = 0.02
    return torch.linspace(beta_start, beta_end, timesteps)


def cosine_beta_schedule(timesteps, s=0.008):
    steps = timesteps + 1
    x = torch.linspace(0, timesteps, steps)
    alphas_cumprod = torch.cos(((x / timesteps) + s) / (1 + s) * torch.pi * 0.5) ** 2
    alphas_cumprod = alphas_cumprod / alphas_cumprod[0]
    betas = 1 - (alphas_cumprod[1:] / alphas_cumprod[:-1])
    return torch.clip(betas, 0.0001, 0.9999)


def extract(a, t, x_shape):
    batch_size = t.shape[0]
    out = a.gather(-1, t.cpu())
    return out.reshape(batch_size, *((1,) * (len(x_shape) - 1))).to(t.device)


class SinusoidalPositionEmbeddings(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.dim = dim

    def forward(self, time):
        device = time.device
        half_dim = self.dim // 2
        embeddings = math.log(10000) / (half_dim - 1)
        embeddings = torch.exp(torch.arange(half_dim, device=device) * -embeddings)
        embeddings = time[:, None] * embeddings[None, :]
        embeddings = torch.cat((embeddings.sin(), embeddings.cos()), dim=-1)
        return embeddings


class Residual(nn.Module):
    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def forward(self, x, *args, **kwargs):
        return self.fn(x, *args, **kwargs) + x


class Block(nn.Module):
    def __init__(self, dim, dim_out, groups=4):
        super().__init__()
        self.proj = nn.Conv2d(dim, dim_out, 3, padding=1)
        self.norm = nn.GroupNorm(groups, dim_out)
        self.act = nn.SiLU()

    def forward(self, x, scale_shift=None):
        x = self.proj(x)
        x = self.norm(x)
        if exists(scale_shift):
            scale, shift = scale_shift
            x = x * (scale + 1) + shift
        x = self.act(x)
        return x


class ResnetBlock(nn.Module):
    def __init__(self, dim, dim_out, *, time_emb_dim=None, groups=4):
        super().__init__()
        self.mlp = nn.Sequential(nn.SiLU(), nn.Linear(time_emb_dim, dim_out * 2)) if exists(time_emb_dim) else None
        self.block1 = Block(dim, dim_out, groups=groups)
        self.block2 = Block(dim_out, dim_out, groups=groups)
        self.res_conv = nn.Conv2d(dim, dim_out, 1) if dim != dim_out else nn.Identity()

    def forward(self, x, time_emb=None):
        scale_shift = None
        if exists(self.mlp) and exists(time_emb):
            time_emb = self.mlp(time_emb)
            time_emb = time_emb[:, :, None, None]
            scale_shift = time_emb.chunk(2, dim=1)
        h = self.block1(x, scale_shift=scale_shift)
        h = self.block2(h)
        return h + self.res_conv(x)


class LinearAttention(nn.Module):
    def __init__(self, dim, heads=2, dim_head=8):
        super().__init__()
        self.scale = dim_head ** -0.5
        self.heads = heads
        hidden_dim = dim_head * heads
        self.to_qkv = nn.Conv2d(dim, hidden_dim * 3, 1, bias=False)
        self.to_out = nn.Sequential(nn.Conv2d(hidden_dim, dim, 1), nn.GroupNorm(1, dim))

    def forward(self, x):
        b, c, h, w = x.shape
        qkv = self.to_qkv(x).chunk(3, dim=1)
        q, k, v = map(lambda t: t.reshape(b, self.heads, -1, h * w), qkv)
        q = q.softmax(dim=-2)
        k = k.softmax(dim=-1)
        q = q * self.scale
        context = torch.einsum("b h d n, b h e n -> b h d e", k, v)
        out = torch.einsum("b h d e, b h d n -> b h e n", context, q)
        out = out.reshape(b, -1, h, w)
        return self.to_out(out)


class PreNorm(nn.Module):
    def __init__(self, dim, fn):
        super().__init__()
        self.fn = fn
        self.norm = nn.GroupNorm(1, dim)

    def forward(self, x):
        x = self.norm(x)
        return self.fn(x)


class Unet(nn.Module):
    def __init__(self, dim=8, channels=1, dim_mults=(1, 2), resnet_block_groups=4):
        super().__init__()
        self.channels = channels
        self.init_conv = nn.Conv2d(channels, dim, 1, padding=0)
        dims = [dim, *map(lambda m: dim * m, dim_mults)]
        in_out = list(zip(dims[:-1], dims[1:]))
        block_klass = partial(ResnetBlock, groups=resnet_block_groups)
        time_dim = dim * 4
        self.time_mlp = nn.Sequential(SinusoidalPositionEmbeddings(dim), nn.Linear(dim, time_dim), nn.GELU(),
                                      nn.Linear(time_dim, time_dim))
        self.downs = nn.ModuleList([])
        self.ups = nn.ModuleList([])
        num_resolutions = len(in_out)
        for ind, (dim_in, dim_out) in enumerate(in_out):
            is_last = ind >= (num_resolutions - 1)
            self.downs.append(nn.ModuleList([
                block_klass(dim_in, dim_in, time_emb_dim=time_dim),
                Residual(PreNorm(dim_in, LinearAttention(dim_in))),
                nn.Conv2d(dim_in, dim_out, 4, 2, 1) if not is_last else nn.Conv2d(dim_in, dim_out, 3, padding=1),
            ]))
        mid_dim = dims[-1]
        self.mid_block1 = block_klass(mid_dim, mid_dim, time_emb_dim=time_dim)
        self.mid_block2 = block_klass(mid_dim, mid_dim, time_emb_dim=time_dim)
        for ind, (dim_in, dim_out) in enumerate(reversed(in_out)):
            is_last = ind == (len(in_out) - 1)
            self.ups.append(nn.ModuleList([
                block_klass(dim_out + dim_in, dim_out, time_emb_dim=time_dim),
                Residual(PreNorm(dim_out, LinearAttention(dim_out))),
                nn.Sequential(nn.Upsample(scale_factor=2, mode="nearest"), nn.Conv2d(dim_out, dim_in, 3, padding=1))
                if not is_last else nn.Conv2d(dim_out, dim_in, 3, padding=1),
            ]))
        self.final_res_block = block_klass(dim * 2, dim, time_emb_dim=time_dim)
        self.final_conv = nn.Conv2d(dim, channels, 1)

    def forward(self, x, time):
        x = self.init_conv(x)
        r = x.clone()
        t = self.time_mlp(time)
        h = []
        for block1, attn, downsample in self.downs:
            x = block1(x, t)
            x = attn(x)
            h.append(x)
            x = downsample(x)
        x = self.mid_block1(x, t)
        x = self.mid_block2(x, t)
        for block1, attn, upsample in self.ups:
            x = torch.cat((x, h.pop()), dim=1)
            x = block1(x, t)
            x = attn(x)
            x = upsample(x)
        x = torch.cat((x, r), dim=1)
        x = self.final_res_block(x, t)
        return self.final_conv(x)


class GaussianDiffusion(nn.Module):
    def __init__(self, model, timesteps=50, beta_schedule="linear"):
        super().__init__()
        self.model = model
        betas = linear_beta_schedule(timesteps) if beta_schedule == "linear" else cosine_beta_schedule(timesteps)
        alphas = 1. - betas
        alphas_cumprod = torch.cumprod(alphas, axis=0)
        alphas_cumprod_prev = F.pad(alphas_cumprod[:-1], (1, 0), value=1.0)
        self.num_timesteps = int(betas.shape[0])
        register_buffer = lambda name, val: self.register_buffer(name, val.to(torch.float32))  # noqa: E731
        register_buffer("betas", betas)
        register_buffer("sqrt_recip_alphas", torch.sqrt(1.0 / alphas))
        register_buffer("sqrt_alphas_cumprod", torch.sqrt(alphas_cumprod))
        register_buffer("sqrt_one_minus_alphas_cumprod", torch.sqrt(1. - alphas_cumprod))
        register_buffer("posterior_variance", betas * (1. - alphas_cumprod_prev) / (1. - alphas_cumprod))

    def q_sample(self, x_start, t, noise=None):
        noise = default(noise, lambda: torch.randn_like(x_start))
        sqrt_alphas_cumprod_t = extract(self.sqrt_alphas_cumprod, t, x_start.shape)
        sqrt_one_minus_alphas_cumprod_t = extract(self.sqrt_one_minus_alphas_cumprod, t, x_start.shape)
        return sqrt_alphas_cumprod_t * x_start + sqrt_one_minus_alphas_cumprod_t * noise

    def p_losses(self, x_start, t, noise=None, loss_type="l1"):
        if noise is None:
            noise = torch.randn_like(x_start)
        x_noisy = self.q_sample(x_start=x_start, t=t, noise=noise)
        predicted_noise = self.model(x_noisy, t)
        if loss_type == 'l1':
            loss = F.l1_loss(noise, predicted_noise)
        elif loss_type == 'l2':
            loss = F.mse_loss(noise, predicted_noise)
        elif loss_type == "huber":
            loss = F.smooth_l1_loss(noise, predicted_noise)
        else:
            raise NotImplementedError()
        return loss

    @torch.no_grad()
    def p_sample(self, x, t, t_index):
        betas_t = extract(self.betas, t, x.shape)
        sqrt_one_minus_alphas_cumprod_t = extract(self.sqrt_one_minus_alphas_cumprod, t, x.shape)
        sqrt_recip_alphas_t = extract(self.sqrt_recip_alphas, t, x.shape)
        model_mean = sqrt_recip_alphas_t * (x - betas_t * self.model(x, t) / sqrt_one_minus_alphas_cumprod_t)
        if t_index == 0:
            return model_mean
        posterior_variance_t = extract(self.posterior_variance, t, x.shape)
        noise = torch.randn_like(x)
        return model_mean + torch.sqrt(posterior_variance_t) * noise

    @torch.no_grad()
    def p_sample_loop(self, shape):
        b = shape[0]
        img = torch.randn(shape)
        imgs = []
        for i in reversed(range(0, self.num_timesteps)):
            img = self.p_sample(img, torch.full((b,), i, dtype=torch.long), i)
            imgs.append(img.cpu().numpy())
        return imgs


def main(argv=None):
    parser = argparse.ArgumentParser()
    parser.add_argument("--loss_type", default="huber")
    parser.add_argument("--schedule", default="linear")
    parser.add_argument("--steps", type=int, default=16)
    parser.add_argument("--quiet", action="store_true")
    args = parser.parse_args(argv)
    log = (lambda *a: None) if args.quiet else print
    torch.manual_seed(0)
    image_size, channels, batch_size = 8, 1, 8
    model = Unet(dim=8, channels=channels, dim_mults=(1, 2))
    diffusion = GaussianDiffusion(model, timesteps=50, beta_schedule=args.schedule)
    ema = copy.deepcopy(model).requires_grad_(False)
    initial_state = {k: v.clone() for k, v in diffusion.state_dict().items()}
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    xs = torch.linspace(-1, 1, image_size)
    base = (xs[None, :] * xs[:, None]).expand(32, channels, image_size, image_size)
    data = base * torch.rand(32, 1, 1, 1) * 2 - 0.5
    step_losses = []
    for step in range(args.steps):
        batch = data[(step * batch_size) % 32:(step * batch_size) % 32 + batch_size]
        optimizer.zero_grad()
        t = torch.randint(0, diffusion.num_timesteps, (batch_size,)).long()
        loss = diffusion.p_losses(batch, t, loss_type=args.loss_type)
        if step % 4 == 0:
            log("Loss:", loss.item())
        loss.backward()
        optimizer.step()
        with torch.no_grad():
            for pe, p in zip(ema.parameters(), model.parameters()):
                pe.lerp_(p, 0.1)
        step_losses.append(loss.item())
    samples = diffusion.p_sample_loop(shape=(2, channels, image_size, image_size))
    return {"initial_state": initial_state, "step_losses": step_losses, "samples": samples[-1],
            "sample_mid": samples[25], "ema": {k: v.clone() for k, v in ema.state_dict().items()}}


if __name__ == "__main__":
    main()
