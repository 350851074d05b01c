"""Score-based and flow-matching generative models on 2-D toy data as their reference code writes them:
ermongroup/ncsn's anneal_dsm_score_estimation (labels = torch.randint(0, len(sigmas), ...), used_sigmas =
sigmas[labels].view(N, *([1] * len(samples.shape[1:]))), target = -1 / used_sigmas ** 2 * noise, loss weighted by
used_sigmas.squeeze() ** anneal_power), sliced_score_estimation_vr (dup_samples.requires_grad_(True),
torch.randn_like vectors, autograd.grad(gradv, dup_samples, create_graph=True), loss1 + loss2 with
vectors.norm(dim=-1) ** 2), the conditional score network (an nn.Embedding of noise levels scaling features), the
geometric sigma schedule np.exp(np.linspace(np.log(begin), np.log(end), n)), and anneal_Langevin_dynamics
(step_size = step_lr * (sigma / sigmas[-1]) ** 2, x + step_size * grad + noise * np.sqrt(step_size * 2), with
torch.no_grad()); then torchcfm-style conditional flow matching / rectified flow (t = torch.rand, xt = t * x1 +
(1 - t) * x0 + sigma * eps, ut = x1 - x0, a time-conditioned MLP on torch.cat([x, t[:, None]], -1)) sampled by an
Euler loop; Adam for both."""
import argparse

import numpy as np
import torch
import torch.autograd as autograd
import torch.nn as nn


def eight_gaussians(n, generator):
    centers = torch.tensor([(np.cos(a), np.sin(a)) for a in np.arange(8) * np.pi / 4], dtype=torch.float32) * 2
    idx = torch.randint(0, 8, (n,), generator=generator)
    return centers[idx] + 0.1 * torch.randn(n, 2, generator=generator)


class CondScoreNet(nn.Module):
    def __init__(self, n_sigmas, hidden=64):
        super().__init__()
        self.l1 = nn.Linear(2, hidden)
        self.l2 = nn.Linear(hidden, hidden)
        self.l3 = nn.Linear(hidden, 2)
        self.embed = nn.Embedding(n_sigmas, hidden)
        self.embed.weight.data.uniform_()

    def forward(self, x, y):
        gamma = self.embed(y)
        h = nn.functional.softplus(self.l1(x)) * gamma
        h = nn.functional.softplus(self.l2(h)) * gamma
        return self.l3(h)


class ScoreNet(nn.Module):
    def __init__(self, hidden=64):
        super().__init__()
        self.main = nn.Sequential(nn.Linear(2, hidden), nn.Softplus(), nn.Linear(hidden, hidden), nn.Softplus(),
                                  nn.Linear(hidden, 2))

    def forward(self, x):
        return self.main(x)


def anneal_dsm_score_estimation(scorenet, samples, labels, sigmas, anneal_power=2.):
    used_sigmas = sigmas[labels].view(samples.shape[0], *([1] * len(samples.shape[1:])))
    perturbed_samples = samples + torch.randn_like(samples) * used_sigmas
    target = - 1 / (used_sigmas ** 2) * (perturbed_samples - samples)
    scores = scorenet(perturbed_samples, labels)
    target = target.view(target.shape[0], -1)
    scores = scores.view(scores.shape[0], -1)
    loss = 1 / 2. * ((scores - target) ** 2).sum(dim=-1) * used_sigmas.squeeze() ** anneal_power
    return loss.mean(dim=0)


def sliced_score_estimation_vr(score_net, samples, n_particles=1):
    dup_samples = samples.unsqueeze(0).expand(n_particles, *samples.shape).contiguous().view(-1, *samples.shape[1:])
    dup_samples.requires_grad_(True)
    vectors = torch.randn_like(dup_samples)
    grad1 = score_net(dup_samples)
    gradv = torch.sum(grad1 * vectors)
    grad2 = autograd.grad(gradv, dup_samples, create_graph=True)[0]
    grad1 = grad1.view(dup_samples.shape[0], -1)
    loss1 = torch.sum(grad1 * grad1, dim=-1) / 2.
    loss2 = torch.sum((vectors * grad2).view(dup_samples.shape[0], -1), dim=-1)
    loss1 = loss1.view(n_particles, -1)
    loss2 = loss2.view(n_particles, -1)
    loss = loss1 + loss2
    return loss.mean(), loss1.mean(), loss2.mean()


def anneal_Langevin_dynamics(x_mod, scorenet, sigmas, n_steps_each=5, step_lr=0.00002):
    images = []
    with torch.no_grad():
        for c, sigma in enumerate(sigmas):
            labels = torch.ones(x_mod.shape[0], device=x_mod.device) * c
            labels = labels.long()
            step_size = step_lr * (sigma / sigmas[-1]) ** 2
            for s in range(n_steps_each):
                images.append(torch.clamp(x_mod, -4.0, 4.0).to('cpu'))
                noise = torch.randn_like(x_mod) * np.sqrt(step_size * 2)
                grad = scorenet(x_mod, labels)
                x_mod = x_mod + step_size * grad + noise
        return images


class FlowNet(nn.Module):
    def __init__(self, dim=2, w=64):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(dim + 1, w), nn.SELU(), nn.Linear(w, w), nn.SELU(), nn.Linear(w, dim))

    def forward(self, x, t):
        return self.net(torch.cat([x, t[:, None]], -1))


def main(argv=None):
    parser = argparse.ArgumentParser()
    parser.add_argument("--method", default="dsm", choices=["dsm", "ssm", "cfm"])
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--quiet", action="store_true")
    args = parser.parse_args(argv)
    log = (lambda *a: None) if args.quiet else print
    torch.manual_seed(0)
    g = torch.Generator().manual_seed(1)
    sigmas_np = np.exp(np.linspace(np.log(1.0), np.log(0.01), 6))
    sigmas = torch.tensor(sigmas_np).float()
    if args.method == "dsm":
        model = CondScoreNet(len(sigmas_np))
    elif args.method == "ssm":
        model = ScoreNet()
    else:
        model = FlowNet()
    initial_state = {k: v.clone() for k, v in model.state_dict().items()}
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3, betas=(0.9, 0.999), eps=1e-8)
    step_losses, extra = [], {}
    for step in range(args.steps):
        X = eight_gaussians(128, g)
        if args.method == "dsm":
            labels = torch.randint(0, len(sigmas), (X.shape[0],), device=X.device)
            loss = anneal_dsm_score_estimation(model, X, labels, sigmas, 2.)
        elif args.method == "ssm":
            loss, *_ = sliced_score_estimation_vr(model, X.detach(), n_particles=2)
        else:
            x0 = torch.randn_like(X)
            t = torch.rand(X.shape[0]).type_as(X)
            xt = t[:, None] * X + (1 - t[:, None]) * x0 + 0.01 * torch.randn_like(X)
            ut = X - x0
            vt = model(xt, t)
            loss = torch.mean((vt - ut) ** 2)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        step_losses.append(loss.item())
        log(f"step {step} loss {loss.item():.5f}")
    if args.method == "dsm":
        images = anneal_Langevin_dynamics(torch.rand(16, 2) * 8 - 4, model, sigmas_np, 3, 0.01)
        extra["samples"] = images[-1]
        extra["n_images"] = len(images)
    elif args.method == "cfm":
        with torch.no_grad():
            x = torch.randn(16, 2)
            for i in range(10):
                t = torch.full((16,), i / 10)
                x = x + model(x, t) / 10
        extra["samples"] = x
    else:
        x = eight_gaussians(8, g)
        _, l1, l2 = sliced_score_estimation_vr(model, x, n_particles=3)
        extra["samples"] = torch.stack([l1.detach(), l2.detach()])
    return {"initial_state": initial_state, "step_losses": step_losses, **extra}


if __name__ == "__main__":
    main()
