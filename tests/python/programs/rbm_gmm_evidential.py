"""Three probabilistic programs as written. odie2630's RBM (W = nn.Parameter(torch.randn(n_hin, n_vis) * 1e-2),
sample_from_p by F.relu(torch.sign(p - Variable(torch.rand(p.size())))), v_to_h / h_to_v through F.linear with
W.t(), k-step Gibbs CD, free_energy by vbias_term = v.mv(self.v_bias) and hidden_term = wx_b.exp().add(1).log()
.sum(1), loss = free_energy(v) - free_energy(v1), SGD(0.1), and a torchvision-free make_grid stand-in by
torch.cat). ldeecke/gmm-torch's GaussianMixture fitted by EM (the "diag" covariance: _estimate_log_prob with
torch.rsqrt(var), log_det by torch.sum(torch.log(var)), torch.logsumexp(weighted_log_prob, dim=1, keepdim=True),
_m_step's eps-regularised means / variances, __em updating pi / mu / var with .data, the converging loop on
log-likelihood deltas and predict by torch.max(..., 1)) on k-means++-free random initial means. Amini et al.'s
Deep Evidential Regression (DenseNormalGamma with F.softplus evidence, torch.split, NIG_NLL with torch.lgamma,
NIG_Reg |y - gamma| * (2 v + alpha)) and Sensoy et al.'s evidential classification (ReLU evidence, Dirichlet
alpha, loglikelihood_loss, KL to the uniform Dirichlet by torch.lgamma / torch.digamma with annealing
min(1, epoch / 10))."""
import argparse
import math

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.autograd import Variable


class RBM(nn.Module):
    def __init__(self, n_vis=16, n_hin=8, k=3):
        super(RBM, self).__init__()
        self.W = nn.Parameter(torch.randn(n_hin, n_vis) * 1e-2)
        self.v_bias = nn.Parameter(torch.zeros(n_vis))
        self.h_bias = nn.Parameter(torch.zeros(n_hin))
        self.k = k

    def sample_from_p(self, p):
        return F.relu(torch.sign(p - Variable(torch.rand(p.size()))))

    def v_to_h(self, v):
        p_h = F.sigmoid(F.linear(v, self.W, self.h_bias))
        sample_h = self.sample_from_p(p_h)
        return p_h, sample_h

    def h_to_v(self, h):
        p_v = F.sigmoid(F.linear(h, self.W.t(), self.v_bias))
        sample_v = self.sample_from_p(p_v)
        return p_v, sample_v

    def forward(self, v):
        pre_h1, h1 = self.v_to_h(v)
        h_ = h1
        for _ in range(self.k):
            pre_v_, v_ = self.h_to_v(h_)
            pre_h_, h_ = self.v_to_h(v_)
        return v, v_

    def free_energy(self, v):
        vbias_term = v.mv(self.v_bias)
        wx_b = F.linear(v, self.W, self.h_bias)
        hidden_term = wx_b.exp().add(1).log().sum(1)
        return (-hidden_term - vbias_term).mean()


class GaussianMixture(torch.nn.Module):
    def __init__(self, n_components, n_features, mu_init=None, var_init=None, eps=1.e-6):
        super(GaussianMixture, self).__init__()
        self.n_components = n_components
        self.n_features = n_features
        self.mu_init = mu_init
        self.var_init = var_init
        self.eps = eps
        self.log_likelihood = -np.inf
        self._init_params()

    def _init_params(self):
        if self.mu_init is not None:
            self.mu = torch.nn.Parameter(self.mu_init, requires_grad=False)
        else:
            self.mu = torch.nn.Parameter(torch.randn(1, self.n_components, self.n_features), requires_grad=False)
        if self.var_init is not None:
            self.var = torch.nn.Parameter(self.var_init, requires_grad=False)
        else:
            self.var = torch.nn.Parameter(torch.ones(1, self.n_components, self.n_features), requires_grad=False)
        self.pi = torch.nn.Parameter(torch.Tensor(1, self.n_components, 1), requires_grad=False).fill_(1. / self.n_components)
        self.params_fitted = False

    def check_size(self, x):
        if len(x.size()) == 2:
            x = x.unsqueeze(1)
        return x

    def fit(self, x, delta=1e-3, n_iter=100, log=None):
        x = self.check_size(x)
        i = 0
        j = np.inf
        history = []
        while (i <= n_iter) and (j >= delta):
            log_likelihood_old = self.log_likelihood
            self.__em(x)
            self.log_likelihood = self.__score(x)
            history.append(self.log_likelihood.item())
            if torch.isinf(self.log_likelihood.abs()) or torch.isnan(self.log_likelihood):
                self.__init__(self.n_components, self.n_features, mu_init=self.mu_init, var_init=self.var_init,
                              eps=self.eps)
            i += 1
            j = self.log_likelihood - log_likelihood_old
        self.params_fitted = True
        return history

    def predict(self, x, probs=False):
        x = self.check_size(x)
        weighted_log_prob = self._estimate_log_prob(x) + torch.log(self.pi)
        if probs:
            p_k = torch.exp(weighted_log_prob)
            return torch.squeeze(p_k / (p_k.sum(1, keepdim=True)))
        return torch.squeeze(torch.max(weighted_log_prob, 1)[1].type(torch.LongTensor))

    def _estimate_log_prob(self, x):
        x = self.check_size(x)
        mu = self.mu
        prec = torch.rsqrt(self.var)
        log_p = torch.sum((mu * mu + x * x - 2 * x * mu) * (prec ** 2), dim=2, keepdim=True)
        log_det = torch.sum(torch.log(prec), dim=2, keepdim=True)
        return -.5 * (self.n_features * np.log(2. * math.pi) + log_p) + log_det

    def _e_step(self, x):
        x = self.check_size(x)
        weighted_log_prob = self._estimate_log_prob(x) + torch.log(self.pi)
        log_prob_norm = torch.logsumexp(weighted_log_prob, dim=1, keepdim=True)
        log_resp = weighted_log_prob - log_prob_norm
        return torch.mean(log_prob_norm), log_resp

    def _m_step(self, x, log_resp):
        x = self.check_size(x)
        resp = torch.exp(log_resp)
        pi = torch.sum(resp, dim=0, keepdim=True) + self.eps
        mu = torch.sum(resp * x, dim=0, keepdim=True) / pi
        x2 = (resp * x * x).sum(0, keepdim=True) / pi
        mu2 = mu * mu
        xmu = (resp * mu * x).sum(0, keepdim=True) / pi
        var = x2 - 2 * xmu + mu2 + self.eps
        pi = pi / x.shape[0]
        return pi, mu, var

    def __em(self, x):
        _, log_resp = self._e_step(x)
        pi, mu, var = self._m_step(x, log_resp)
        self.pi.data = pi
        self.mu.data = mu
        self.var.data = var

    def __score(self, x, as_average=True):
        weighted_log_prob = self._estimate_log_prob(x) + torch.log(self.pi)
        per_sample_score = torch.logsumexp(weighted_log_prob, dim=1)
        if as_average:
            return per_sample_score.mean()
        return torch.squeeze(per_sample_score)


class DenseNormalGamma(nn.Module):
    def __init__(self, in_features, out_units):
        super().__init__()
        self.units = int(out_units)
        self.dense = nn.Linear(in_features, 4 * self.units)

    def evidence(self, x):
        return F.softplus(x)

    def forward(self, x):
        output = self.dense(x)
        mu, logv, logalpha, logbeta = torch.split(output, self.units, dim=-1)
        v = self.evidence(logv)
        alpha = self.evidence(logalpha) + 1
        beta = self.evidence(logbeta)
        return torch.cat([mu, v, alpha, beta], dim=-1)


def NIG_NLL(y, gamma, v, alpha, beta, reduce=True):
    twoBlambda = 2 * beta * (1 + v)
    nll = 0.5 * torch.log(np.pi / v) \
        - alpha * torch.log(twoBlambda) \
        + (alpha + 0.5) * torch.log(v * (y - gamma) ** 2 + twoBlambda) \
        + torch.lgamma(alpha) \
        - torch.lgamma(alpha + 0.5)
    return torch.mean(nll) if reduce else nll


def NIG_Reg(y, gamma, v, alpha, beta, reduce=True):
    error = torch.abs(y - gamma)
    evi = 2 * v + (alpha)
    reg = error * evi
    return torch.mean(reg) if reduce else reg


def EvidentialRegression(y_true, evidential_output, coeff=1.0):
    gamma, v, alpha, beta = torch.split(evidential_output, 1, dim=-1)
    loss_nll = NIG_NLL(y_true, gamma, v, alpha, beta)
    loss_reg = NIG_Reg(y_true, gamma, v, alpha, beta)
    return loss_nll + coeff * loss_reg


def kl_divergence(alpha, num_classes):
    ones = torch.ones([1, num_classes], dtype=torch.float32)
    sum_alpha = torch.sum(alpha, dim=1, keepdim=True)
    first_term = (torch.lgamma(sum_alpha) - torch.lgamma(alpha).sum(dim=1, keepdim=True)
                  + torch.lgamma(ones).sum(dim=1, keepdim=True) - torch.lgamma(ones.sum(dim=1, keepdim=True)))
    second_term = ((alpha - ones).mul(torch.digamma(alpha) - torch.digamma(sum_alpha)).sum(dim=1, keepdim=True))
    kl = first_term + second_term
    return kl


def loglikelihood_loss(y, alpha):
    S = torch.sum(alpha, dim=1, keepdim=True)
    loglikelihood_err = torch.sum((y - (alpha / S)) ** 2, dim=1, keepdim=True)
    loglikelihood_var = torch.sum(alpha * (S - alpha) / (S * S * (S + 1)), dim=1, keepdim=True)
    return loglikelihood_err + loglikelihood_var


def mse_loss(y, alpha, epoch_num, num_classes, annealing_step):
    loglikelihood = loglikelihood_loss(y, alpha)
    annealing_coef = torch.min(torch.tensor(1.0, dtype=torch.float32),
                               torch.tensor(epoch_num / annealing_step, dtype=torch.float32))
    kl_alpha = (alpha - 1) * (1 - y) + 1
    kl_div = annealing_coef * kl_divergence(kl_alpha, num_classes)
    return loglikelihood + kl_div


def edl_log_loss(output, target, epoch_num, num_classes, annealing_step):
    evidence = F.relu(output)
    alpha = evidence + 1
    y = F.one_hot(target, num_classes).float()
    S = torch.sum(alpha, dim=1, keepdim=True)
    A = torch.sum(y * (torch.log(S) - torch.log(alpha)), dim=1, keepdim=True)
    annealing_coef = torch.min(torch.tensor(1.0, dtype=torch.float32),
                               torch.tensor(epoch_num / annealing_step, dtype=torch.float32))
    kl_alpha = (alpha - 1) * (1 - y) + 1
    return torch.mean(A + annealing_coef * kl_divergence(kl_alpha, num_classes))


def main(argv=None):
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", default="rbm", choices=["rbm", "gmm", "evidential"])
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--quiet", action="store_true")
    args = parser.parse_args(argv)
    log = (lambda *a: None) if args.quiet else print
    torch.manual_seed(0)
    step_losses = []
    if args.model == "rbm":
        rbm = RBM(k=2)
        initial_state = {k: v.clone() for k, v in rbm.state_dict().items()}
        train_op = torch.optim.SGD(rbm.parameters(), 0.1)
        protos = (torch.rand(3, 16) > 0.5).float()
        for epoch in range(args.steps):
            loss_ = []
            for b in range(2):
                data = protos[torch.randint(0, 3, (8,))]
                flip = (torch.rand(8, 16) < 0.05).float()
                sample_data = Variable((data - flip).abs().view(-1, 16))
                v, v1 = rbm(sample_data)
                loss = rbm.free_energy(v) - rbm.free_energy(v1)
                loss_.append(loss.data.item())
                train_op.zero_grad()
                loss.backward()
                train_op.step()
            step_losses.append(np.mean(loss_))
            log("Training loss for {} epoch: {}".format(epoch, np.mean(loss_)))
        grid = torch.cat([v1.view(-1, 1, 4, 4)[:4], v.view(-1, 1, 4, 4)[:4]], 3)
        return {"initial_state": initial_state, "step_losses": step_losses, "grid": grid.detach(),
                "free": rbm.free_energy(protos).item()}
    if args.model == "gmm":
        n, d, k = 90, 2, 3
        centers = torch.tensor([[0., 0.], [3., 3.], [-3., 2.]])
        x = torch.cat([centers[i] + torch.randn(n // k, d) * (0.5 + 0.3 * i) for i in range(k)])
        model = GaussianMixture(k, d, mu_init=x[torch.tensor([0, 40, 70])].unsqueeze(0).clone())
        initial_state = {kk: v.clone() for kk, v in model.state_dict().items()}
        history = model.fit(x, delta=1e-6, n_iter=args.steps)
        return {"initial_state": initial_state, "step_losses": history, "mu": model.mu.data, "var": model.var.data,
                "pi": model.pi.data, "pred": model.predict(x), "probs": model.predict(x, probs=True)}
    # evidential regression then classification
    net = nn.Sequential(nn.Linear(1, 32), nn.ReLU(), nn.Linear(32, 32), nn.ReLU(), DenseNormalGamma(32, 1))
    clf = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 3))
    initial_state = {"reg." + kk: v.clone() for kk, v in net.state_dict().items()}
    initial_state.update({"clf." + kk: v.clone() for kk, v in clf.state_dict().items()})
    opt = torch.optim.Adam(list(net.parameters()) + list(clf.parameters()), lr=5e-3)
    xr = torch.linspace(-4, 4, 64).unsqueeze(-1)
    yr = xr ** 3 / 10 + torch.randn(64, 1) * 0.3
    xc = torch.randn(48, 4)
    yc = (xc[:, 0] > 0).long() + (xc[:, 1] > 1).long()
    for epoch in range(args.steps):
        out = net(xr)
        loss_r = EvidentialRegression(yr, out, coeff=1e-2)
        loss_c = edl_log_loss(clf(xc), yc, epoch, 3, 10)
        loss_m = torch.mean(mse_loss(F.one_hot(yc, 3).float(), F.relu(clf(xc)) + 1, epoch, 3, 10))
        loss = loss_r + loss_c + 0.1 * loss_m
        opt.zero_grad()
        loss.backward()
        opt.step()
        step_losses.append(loss.item())
        log("epoch %d loss %.4f" % (epoch, loss.item()))
    with torch.no_grad():
        mu, v, alpha, beta = torch.split(net(xr), 1, dim=-1)
        var = beta / (v * (alpha - 1))
        alpha_c = F.relu(clf(xc)) + 1
        uncertainty = 3 / torch.sum(alpha_c, dim=1, keepdim=True)
    return {"initial_state": initial_state, "step_losses": step_losses, "mu": mu, "var": var,
            "uncertainty": uncertainty}


if __name__ == "__main__":
    main()
