"""Two probabilistic regressions as their public code writes them.

--program mdn: sagelywizard/pytorch-mdn's mdn/mdn.py (MDN with pi = nn.Sequential(nn.Linear, nn.Softmax(dim=1)),
sigma = torch.exp(self.sigma(minibatch)).view(-1, self.num_gaussians, self.out_features), ONEOVERSQRT2PI,
gaussian_probability by target.unsqueeze(1).expand_as(sigma), torch.exp(-0.5 * ((target - mu) / sigma)**2),
torch.prod(ret, 2); mdn_loss = -torch.log(torch.sum(pi * prob, dim=1)); sample() with Categorical(pi).sample()
.view(...), sigma.data.new(...).normal_(), gather of the chosen components) on the inverted-sine toy of its
example.py, plus the same mixture as torch.distributions.MixtureSameFamily(Categorical(probs=pi),
Independent(Normal(mu, sigma), 1)) and its log_prob / sample.

--program bbb: nitarshan's "Weight Uncertainty in Neural Networks" notebook (Bayes by Backprop): Gaussian with
sigma = torch.log1p(torch.exp(self.rho)), sample() by self.normal.sample(self.rho.size()) with
torch.distributions.Normal(0, 1), log_prob with math.log(math.sqrt(2 * math.pi)); ScaleMixtureGaussian
(torch.exp(self.gaussian1.log_prob(input)), torch.log(pi * prob1 + (1-pi) * prob2).sum()); BayesianLinear
(Parameter(torch.Tensor(...).uniform_(-0.2, 0.2)) mu / rho, log_prior / log_variational_posterior kept on the
module), BayesianNetwork.sample_elbo (outputs = torch.zeros(samples, BATCH_SIZE, CLASSES), F.nll_loss(
outputs.mean(0), target, size_average=False), the KL weighted by 2 ** (M - i) / (2 ** M - 1)), and the
ensemble test accuracy."""
import argparse
import math

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim
from torch.distributions import Categorical

ONEOVERSQRT2PI = 1.0 / math.sqrt(2 * math.pi)


class MDN(nn.Module):
    def __init__(self, in_features, out_features, num_gaussians):
        super(MDN, self).__init__()
        self.in_features = in_features
        self.out_features = out_features
        self.num_gaussians = num_gaussians
        self.pi = nn.Sequential(
            nn.Linear(in_features, num_gaussians),
            nn.Softmax(dim=1)
        )
        self.sigma = nn.Linear(in_features, out_features * num_gaussians)
        self.mu = nn.Linear(in_features, out_features * num_gaussians)

    def forward(self, minibatch):
        pi = self.pi(minibatch)
        sigma = torch.exp(self.sigma(minibatch))
        sigma = sigma.view(-1, self.num_gaussians, self.out_features)
        mu = self.mu(minibatch)
        mu = mu.view(-1, self.num_gaussians, self.out_features)
        return pi, sigma, mu


def gaussian_probability(sigma, mu, target):
    target = target.unsqueeze(1).expand_as(sigma)
    ret = ONEOVERSQRT2PI * torch.exp(-0.5 * ((target - mu) / sigma)**2) / sigma
    return torch.prod(ret, 2)


def mdn_loss(pi, sigma, mu, target):
    prob = pi * gaussian_probability(sigma, mu, target)
    nll = -torch.log(torch.sum(prob, dim=1))
    return torch.mean(nll)


def sample(pi, sigma, mu):
    # Choose which gaussian we'll sample from
    pis = Categorical(pi).sample().view(pi.size(0), 1, 1)
    # Choose a random sample, one randn for batch X output dims
    # Do a (output dims)X(batch size) tensor here, so the broadcast works in
    # the next step, but we have to transpose back.
    gaussian_noise = torch.randn(
        (sigma.size(2), sigma.size(0)), requires_grad=False)
    variance_samples = sigma.gather(1, pis).detach().squeeze()
    mean_samples = mu.detach().gather(1, pis).squeeze()
    return (gaussian_noise * variance_samples + mean_samples).transpose(0, 1)


def run_mdn(args, log):
    torch.manual_seed(0)
    n = 300
    y = torch.rand(n, 1) * 2 - 1
    x = torch.sin(3 * y) * 0.8 + y * 0.5 + torch.randn(n, 1) * 0.05
    model = nn.Sequential(
        nn.Linear(1, 16),
        nn.Tanh(),
        MDN(16, 1, 4)
    )
    initial_state = {k: v.clone() for k, v in model.state_dict().items()}
    optimizer = optim.Adam(model.parameters(), lr=0.01)
    step_losses, dist_losses = [], []
    for epoch in range(args.epochs):
        model.zero_grad()
        pi, sigma, mu = model(x)
        loss = mdn_loss(pi, sigma, mu, y)
        loss.backward()
        optimizer.step()
        step_losses.append(loss.item())
        with torch.no_grad():
            mix = torch.distributions.MixtureSameFamily(
                torch.distributions.Categorical(probs=pi),
                torch.distributions.Independent(torch.distributions.Normal(mu, sigma), 1))
            dist_losses.append(-mix.log_prob(y).mean().item())
        log(epoch, loss.item())
    with torch.no_grad():
        pi, sigma, mu = model(x[:32])
        samples = sample(pi, sigma, mu)
        mix = torch.distributions.MixtureSameFamily(
            torch.distributions.Categorical(probs=pi),
            torch.distributions.Independent(torch.distributions.Normal(mu, sigma), 1))
        mix_samples = mix.sample((3,))
        stats = [mix.mean, mix.variance]
    return {"initial_state": initial_state, "step_losses": step_losses, "dist_losses": dist_losses,
            "samples": samples, "mix_samples": mix_samples, "mix_mean": stats[0], "mix_var": stats[1]}


class Gaussian(object):
    def __init__(self, mu, rho):
        super().__init__()
        self.mu = mu
        self.rho = rho
        self.normal = torch.distributions.Normal(0, 1)

    @property
    def sigma(self):
        return torch.log1p(torch.exp(self.rho))

    def sample(self):
        epsilon = self.normal.sample(self.rho.size())
        return self.mu + self.sigma * epsilon

    def log_prob(self, input):
        return (-math.log(math.sqrt(2 * math.pi))
                - torch.log(self.sigma)
                - ((input - self.mu) ** 2) / (2 * self.sigma ** 2)).sum()


class ScaleMixtureGaussian(object):
    def __init__(self, pi, sigma1, sigma2):
        super().__init__()
        self.pi = pi
        self.sigma1 = sigma1
        self.sigma2 = sigma2
        self.gaussian1 = torch.distributions.Normal(0, sigma1)
        self.gaussian2 = torch.distributions.Normal(0, sigma2)

    def log_prob(self, input):
        prob1 = torch.exp(self.gaussian1.log_prob(input))
        prob2 = torch.exp(self.gaussian2.log_prob(input))
        return (torch.log(self.pi * prob1 + (1 - self.pi) * prob2)).sum()


PI = 0.5
SIGMA_1 = torch.FloatTensor([math.exp(-0)])
SIGMA_2 = torch.FloatTensor([math.exp(-6)])


class BayesianLinear(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.in_features = in_features
        self.out_features = out_features
        # Weight parameters
        self.weight_mu = nn.Parameter(torch.Tensor(out_features, in_features).uniform_(-0.2, 0.2))
        self.weight_rho = nn.Parameter(torch.Tensor(out_features, in_features).uniform_(-5, -4))
        self.weight = Gaussian(self.weight_mu, self.weight_rho)
        # Bias parameters
        self.bias_mu = nn.Parameter(torch.Tensor(out_features).uniform_(-0.2, 0.2))
        self.bias_rho = nn.Parameter(torch.Tensor(out_features).uniform_(-5, -4))
        self.bias = Gaussian(self.bias_mu, self.bias_rho)
        # Prior distributions
        self.weight_prior = ScaleMixtureGaussian(PI, SIGMA_1, SIGMA_2)
        self.bias_prior = ScaleMixtureGaussian(PI, SIGMA_1, SIGMA_2)
        self.log_prior = 0
        self.log_variational_posterior = 0

    def forward(self, input, sample=False, calculate_log_probs=False):
        if self.training or sample:
            weight = self.weight.sample()
            bias = self.bias.sample()
        else:
            weight = self.weight.mu
            bias = self.bias.mu
        if self.training or calculate_log_probs:
            self.log_prior = self.weight_prior.log_prob(weight) + self.bias_prior.log_prob(bias)
            self.log_variational_posterior = self.weight.log_prob(weight) + self.bias.log_prob(bias)
        else:
            self.log_prior, self.log_variational_posterior = 0, 0

        return F.linear(input, weight, bias)


class BayesianNetwork(nn.Module):
    def __init__(self, d_in, hidden, classes):
        super().__init__()
        self.classes = classes
        self.l1 = BayesianLinear(d_in, hidden)
        self.l2 = BayesianLinear(hidden, hidden)
        self.l3 = BayesianLinear(hidden, classes)

    def forward(self, x, sample=False):
        x = F.relu(self.l1(x, sample))
        x = F.relu(self.l2(x, sample))
        x = F.log_softmax(self.l3(x, sample), dim=1)
        return x

    def log_prior(self):
        return self.l1.log_prior \
               + self.l2.log_prior \
               + self.l3.log_prior

    def log_variational_posterior(self):
        return self.l1.log_variational_posterior \
               + self.l2.log_variational_posterior \
               + self.l3.log_variational_posterior

    def sample_elbo(self, input, target, batch_size, num_batches, samples=2):
        outputs = torch.zeros(samples, batch_size, self.classes)
        log_priors = torch.zeros(samples)
        log_variational_posteriors = torch.zeros(samples)
        for i in range(samples):
            outputs[i] = self(input, sample=True)
            log_priors[i] = self.log_prior()
            log_variational_posteriors[i] = self.log_variational_posterior()
        log_prior = log_priors.mean()
        log_variational_posterior = log_variational_posteriors.mean()
        negative_log_likelihood = F.nll_loss(outputs.mean(0), target, size_average=False)
        loss = (log_variational_posterior - log_prior) / num_batches + negative_log_likelihood
        return loss, log_prior, log_variational_posterior, negative_log_likelihood


def run_bbb(args, log):
    torch.manual_seed(1)
    rng = np.random.RandomState(0)
    X = rng.randn(128, 12).astype(np.float32)
    y = (X[:, :3].sum(1) > 0).astype(np.int64) + 2 * (X[:, 3] > 0.7)
    data_all, target_all = torch.from_numpy(X), torch.from_numpy(y)
    BATCH_SIZE, NUM_BATCHES, SAMPLES = 32, 4, 2
    net = BayesianNetwork(12, 24, 4)
    initial_state = {k: v.clone() for k, v in net.state_dict().items()}
    optimizer = optim.Adam(net.parameters())
    step_losses, parts = [], []
    for epoch in range(args.epochs // 4):
        net.train()
        for batch_idx in range(NUM_BATCHES):
            data = data_all[batch_idx * BATCH_SIZE:(batch_idx + 1) * BATCH_SIZE]
            target = target_all[batch_idx * BATCH_SIZE:(batch_idx + 1) * BATCH_SIZE]
            net.zero_grad()
            loss, log_prior, log_variational_posterior, negative_log_likelihood = net.sample_elbo(
                data, target, BATCH_SIZE, NUM_BATCHES, SAMPLES)
            loss.backward()
            optimizer.step()
            step_losses.append(loss.item())
            parts.append([log_prior.item(), log_variational_posterior.item(), negative_log_likelihood.item()])
            log(epoch, batch_idx, loss.item())
    net.eval()
    with torch.no_grad():
        TEST_SAMPLES = 3
        outputs = torch.zeros(TEST_SAMPLES + 1, 128, 4)
        for i in range(TEST_SAMPLES):
            outputs[i] = net(data_all, sample=True)
        outputs[TEST_SAMPLES] = net(data_all, sample=False)
        output = outputs.mean(0)
        preds = outputs.max(2, keepdim=True)[1]
        pred = output.max(1, keepdim=True)[1]  # index of max log-probability
        corrects = preds.eq(target_all.view_as(pred)).sum(dim=1).squeeze()
        correct = pred.eq(target_all.view_as(pred)).sum().item()
    return {"initial_state": initial_state, "step_losses": step_losses, "parts": parts,
            "corrects": corrects, "correct": correct, "outputs": outputs}


def main(argv=None):
    parser = argparse.ArgumentParser()
    parser.add_argument('--program', default='mdn', choices=['mdn', 'bbb'])
    parser.add_argument('--epochs', type=int, default=40)
    parser.add_argument('--quiet', action='store_true')
    args = parser.parse_args(argv)
    log = (lambda *a: None) if args.quiet else print
    return run_mdn(args, log) if args.program == 'mdn' else run_bbb(args, log)


if __name__ == "__main__":
    main()
