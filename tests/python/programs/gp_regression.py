"""Exact Gaussian-process regression written in plain torch the way GPyTorch-free tutorials and the "GPs from
scratch in PyTorch" notebooks write it: an RBF (and Matern-5/2) kernel over torch.cdist or the expanded
(x1.unsqueeze(-2) - x2.unsqueeze(-3)).pow(2).sum(-1) distance, positive hyper-parameters through
F.softplus of raw nn.Parameters (and torch.nn.utils.parametrize with a Softplus-like right_inverse), the
negative log marginal likelihood via torch.linalg.cholesky, torch.cholesky_solve and
2 * torch.log(torch.diagonal(L)).sum() (or torch.logdet / torch.linalg.slogdet), jitter by
torch.eye(n) * 1e-5, the predictive mean / variance by torch.linalg.solve_triangular and torch.cholesky_inverse,
Adam then LBFGS over the hyper-parameters, and a MultivariateNormal(mean, scale_tril=L).log_prob check."""
import argparse
import math

import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.nn.utils.parametrize as parametrize


class Positive(nn.Module):
    def forward(self, x):
        return F.softplus(x) + 1e-6

    def right_inverse(self, y):
        y = y - 1e-6
        return y + torch.log(-torch.expm1(-y))


class ExactGP(nn.Module):
    def __init__(self, kernel="rbf", use_parametrize=False):
        super().__init__()
        self.kernel = kernel
        self.use_parametrize = use_parametrize
        if use_parametrize:
            self.lengthscale = nn.Parameter(torch.tensor(0.5))
            self.outputscale = nn.Parameter(torch.tensor(1.0))
            self.noise = nn.Parameter(torch.tensor(0.1))
            for name in ("lengthscale", "outputscale", "noise"):
                parametrize.register_parametrization(self, name, Positive())
        else:
            self.raw_lengthscale = nn.Parameter(torch.tensor(0.0))
            self.raw_outputscale = nn.Parameter(torch.tensor(0.0))
            self.raw_noise = nn.Parameter(torch.tensor(-2.0))
        self.mean_constant = nn.Parameter(torch.zeros(1))

    def hypers(self):
        if self.use_parametrize:
            return self.lengthscale, self.outputscale, self.noise
        return (F.softplus(self.raw_lengthscale), F.softplus(self.raw_outputscale), F.softplus(self.raw_noise))

    def covar(self, x1, x2):
        lengthscale, outputscale, _ = self.hypers()
        if self.kernel == "rbf":
            sq = (x1.unsqueeze(-2) - x2.unsqueeze(-3)).pow(2).sum(-1)
            return outputscale * torch.exp(-0.5 * sq / lengthscale ** 2)
        d = torch.cdist(x1 / lengthscale, x2 / lengthscale, p=2)
        sqrt5_d = math.sqrt(5) * d
        return outputscale * (1 + sqrt5_d + 5.0 / 3.0 * d ** 2) * torch.exp(-sqrt5_d)

    def neg_mll(self, X, y, logdet="cholesky"):
        n = X.shape[0]
        _, _, noise = self.hypers()
        K = self.covar(X, X) + (noise + 1e-5) * torch.eye(n)
        L = torch.linalg.cholesky(K)
        r = (y - self.mean_constant).unsqueeze(-1)
        alpha = torch.cholesky_solve(r, L)
        if logdet == "cholesky":
            ld = 2 * torch.log(torch.diagonal(L)).sum()
        elif logdet == "logdet":
            ld = torch.logdet(K)
        else:
            ld = torch.linalg.slogdet(K)[1]
        return 0.5 * (r * alpha).sum() + 0.5 * ld + 0.5 * n * math.log(2 * math.pi), L

    @torch.no_grad()
    def predict(self, X, y, Xs):
        n = X.shape[0]
        _, _, noise = self.hypers()
        K = self.covar(X, X) + (noise + 1e-5) * torch.eye(n)
        L = torch.linalg.cholesky(K)
        Ks = self.covar(X, Xs)
        Kss = self.covar(Xs, Xs)
        v = torch.linalg.solve_triangular(L, Ks, upper=False)
        w = torch.linalg.solve_triangular(L, (y - self.mean_constant).unsqueeze(-1), upper=False)
        mean = (v.transpose(-1, -2) @ w).squeeze(-1) + self.mean_constant
        var = torch.diagonal(Kss) - v.pow(2).sum(0)
        Kinv = torch.cholesky_inverse(L)
        mean2 = Ks.T @ Kinv @ (y - self.mean_constant) + self.mean_constant
        return mean, var.clamp_min(1e-9), mean2


def main(argv=None):
    parser = argparse.ArgumentParser()
    parser.add_argument("--kernel", default="rbf")
    parser.add_argument("--logdet", default="cholesky")
    parser.add_argument("--parametrize", action="store_true")
    parser.add_argument("--quiet", action="store_true")
    args = parser.parse_args(argv)
    log = (lambda *a: None) if args.quiet else print
    torch.manual_seed(0)
    train_x = torch.linspace(0, 1, 24).unsqueeze(-1)
    train_y = torch.sin(train_x.squeeze(-1) * (2 * math.pi)) + torch.randn(24) * math.sqrt(0.04)
    model = ExactGP(args.kernel, args.parametrize)
    initial_state = {k: v.clone() for k, v in model.state_dict().items()}
    optimizer = torch.optim.Adam(model.parameters(), lr=0.1)
    step_losses, hypers = [], []
    model.train()
    for i in range(15):
        optimizer.zero_grad()
        loss, _ = model.neg_mll(train_x, train_y, args.logdet)
        loss.backward()
        optimizer.step()
        step_losses.append(loss.item())
        hypers.append([h.item() for h in model.hypers()])
        log('Iter %d - Loss: %.3f   lengthscale: %.3f   noise: %.3f' % (i + 1, loss.item(), hypers[-1][0],
                                                                       hypers[-1][2]))
    lbfgs = torch.optim.LBFGS(model.parameters(), lr=0.5, max_iter=10, line_search_fn="strong_wolfe")

    def closure():
        lbfgs.zero_grad()
        loss, _ = model.neg_mll(train_x, train_y, args.logdet)
        loss.backward()
        step_losses.append(loss.item())
        return loss
    lbfgs.step(closure)
    model.eval()
    test_x = torch.linspace(0, 1, 11).unsqueeze(-1)
    mean, var, mean2 = model.predict(train_x, train_y, test_x)
    with torch.no_grad():
        _, L = model.neg_mll(train_x, train_y)
        mvn = torch.distributions.MultivariateNormal(model.mean_constant.expand(24), scale_tril=L)
        mvn_lp = mvn.log_prob(train_y)
        lower, upper = mean - 2 * var.sqrt(), mean + 2 * var.sqrt()
    return {"initial_state": initial_state, "step_losses": step_losses, "hypers": hypers, "mean": mean, "var": var,
            "mean2": mean2, "mvn_lp": mvn_lp, "bounds": torch.stack([lower, upper])}


if __name__ == "__main__":
    main()
