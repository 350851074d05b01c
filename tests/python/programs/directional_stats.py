"""Deep Directional Statistics (Prokudin et al.) style angle regression and a Poisson GLM with its classical tests,
as their PyTorch code writes them: a network predicting a von Mises mean as (cos, sin) normalised by F.normalize and
a concentration kappa by softplus, trained on the von Mises negative log-likelihood written with the exponentially
scaled Bessel function for stability (-kappa * cos(theta - mu) + log(2 pi) + log(torch.special.i0e(kappa)) + kappa),
the circular mean absolute error, the i1e / i0e mean resultant length A(kappa); then a Poisson GLM fitted by LBFGS
(strong Wolfe) with torch.distributions.Poisson, its deviance, the chi-square goodness-of-fit p-value
torch.special.gammaincc(df / 2, deviance / 2), Gamma CDF values by torch.special.gammainc / torch.igamma, and the
erfcx-based Mills ratio of a truncated-normal (Tobit) likelihood."""
import argparse
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class AngleNet(nn.Module):
    def __init__(self, d_in=6, hidden=32):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(d_in, hidden), nn.ReLU(), nn.Linear(hidden, hidden), nn.ReLU())
        self.mu = nn.Linear(hidden, 2)
        self.kappa = nn.Linear(hidden, 1)

    def forward(self, x):
        h = self.body(x)
        mu = F.normalize(self.mu(h), dim=1)
        kappa = F.softplus(self.kappa(h)) + 1e-3
        return mu, kappa.squeeze(1)


def von_mises_nll(mu_cossin, kappa, theta):
    cos_diff = mu_cossin[:, 0] * torch.cos(theta) + mu_cossin[:, 1] * torch.sin(theta)
    log_norm = math.log(2 * math.pi) + torch.log(torch.special.i0e(kappa)) + kappa
    return (-kappa * cos_diff + log_norm).mean()


def tobit_nll(pred, sigma, y, left=0.0):
    """Left-censored normal likelihood; the censored part log Phi((left - pred) / sigma) by erfcx for stability."""
    z = (left - pred) / sigma
    t = -z / math.sqrt(2)
    log_cdf = torch.where(t > 0, torch.log(0.5 * torch.special.erfcx(t)) - t * t,
                          torch.log(0.5 * torch.erfc(t)))
    log_pdf = -0.5 * ((y - pred) / sigma) ** 2 - torch.log(sigma) - 0.5 * math.log(2 * math.pi)
    censored = y <= left
    return -(torch.where(censored, log_cdf, log_pdf)).mean()


def main(argv=None):
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=25)
    parser.add_argument("--lbfgs_steps", type=int, default=5)
    parser.add_argument("--quiet", action="store_true")
    args = parser.parse_args(argv)
    log = (lambda *a: None) if args.quiet else print
    torch.manual_seed(0)
    x = torch.randn(128, 6)
    theta = torch.atan2(x[:, 0] + 0.3 * x[:, 1], x[:, 2]) + 0.2 * torch.randn(128)
    net = AngleNet()
    initial_state = {k: v.clone() for k, v in net.state_dict().items()}
    opt = torch.optim.Adam(net.parameters(), lr=5e-3)
    step_losses = []
    for step in range(args.steps):
        mu, kappa = net(x)
        loss = von_mises_nll(mu, kappa, theta)
        opt.zero_grad()
        loss.backward()
        opt.step()
        step_losses.append(loss.item())
        log(f"step {step} nll {loss.item():.4f}")
    with torch.no_grad():
        mu, kappa = net(x)
        pred = torch.atan2(mu[:, 1], mu[:, 0])
        mae = torch.abs(torch.atan2(torch.sin(pred - theta), torch.cos(pred - theta))).mean()
        resultant = torch.special.i1e(kappa) / torch.special.i0e(kappa)
    # Poisson GLM by LBFGS
    X = torch.cat([torch.ones(200, 1), torch.randn(200, 3)], 1).double()
    beta_true = torch.tensor([0.5, 0.8, -0.4, 0.2], dtype=torch.float64)
    counts = torch.distributions.Poisson(torch.exp(X @ beta_true)).sample()
    beta = torch.zeros(4, dtype=torch.float64, requires_grad=True)
    lbfgs = torch.optim.LBFGS([beta], lr=1, max_iter=20, line_search_fn="strong_wolfe")
    glm_losses = []

    def closure():
        lbfgs.zero_grad()
        nll = -torch.distributions.Poisson(torch.exp(X @ beta)).log_prob(counts).mean()
        nll.backward()
        return nll
    for _ in range(args.lbfgs_steps):
        glm_losses.append(lbfgs.step(closure).item())
    with torch.no_grad():
        mu_hat = torch.exp(X @ beta)
        dev_terms = torch.where(counts > 0, counts * torch.log(counts / mu_hat), torch.zeros_like(counts))
        deviance = 2 * (dev_terms - (counts - mu_hat)).sum()
        df = torch.tensor(float(X.shape[0] - X.shape[1]), dtype=torch.float64)
        p_value = torch.special.gammaincc(df / 2, deviance / 2)
        gamma_cdf = torch.special.gammainc(torch.tensor([2., 3., 0.5]), torch.tensor([1., 4., 0.2]))
        igamma = torch.igamma(torch.full((3,), 2.5), torch.tensor([0.5, 2.5, 9.]))
    # Tobit regression with erfcx in the censored tail
    w = torch.zeros(6, requires_grad=True)
    log_sigma = torch.zeros(1, requires_grad=True)
    y = torch.clamp(x @ torch.tensor([1., -2., 0.5, 0., 0., 3.]) - 1.0, min=0.0)
    tobit_opt = torch.optim.Adam([w, log_sigma], lr=0.05)
    tobit_losses = []
    for _ in range(15):
        loss = tobit_nll(x @ w, torch.exp(log_sigma), y)
        tobit_opt.zero_grad()
        loss.backward()
        tobit_opt.step()
        tobit_losses.append(loss.item())
    return {"initial_state": initial_state, "step_losses": step_losses, "mae": mae, "kappa": kappa,
            "resultant": resultant, "glm_losses": glm_losses, "beta": beta.detach(), "deviance": deviance,
            "p_value": p_value, "gamma_cdf": gamma_cdf, "igamma": igamma, "tobit_losses": tobit_losses,
            "w": w.detach()}


if __name__ == "__main__":
    main()
