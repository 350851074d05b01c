"""karpathy/pytorch-made (made.py MaskedLinear / MADE, run.py's run_epoch with connectivity-agnostic mask
resampling and order-agnostic ensembling) and a masked autoregressive flow built on it as
karpathy/pytorch-normalizing-flows (nflows/flows.py MAF / ARMLP, NormalizingFlowModel with a
TransformedDistribution-free prior.log_prob(zs[-1]).view(x.size(0), -1).sum(1)) write them, in plain torch:
register_buffer('mask', torch.ones(out_features, in_features)), self.mask.data.copy_(torch.from_numpy(mask.astype(
np.uint8).T)) (a uint8 array copied into a float buffer), F.linear(input, self.mask * self.weight, self.bias),
NumPy-seeded orderings (rng.permutation / rng.randint), binary_cross_entropy_with_logits(xbhat, xb,
size_average=False), torch.distributions.MultivariateNormal(torch.zeros(2), torch.eye(2)) as the flow's prior,
torch.exp(s) / torch.sum(s, dim=1) log-dets, reversed orders via x.flip(dims=(1,)), backward sampling, Adam with
weight_decay and a StepLR."""
import argparse

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


class MaskedLinear(nn.Linear):
    def __init__(self, in_features, out_features, bias=True):
        super().__init__(in_features, out_features, bias)
        self.register_buffer('mask', torch.ones(out_features, in_features))

    def set_mask(self, mask):
        self.mask.data.copy_(torch.from_numpy(mask.astype(np.uint8).T))

    def forward(self, input):
        return F.linear(input, self.mask * self.weight, self.bias)


class MADE(nn.Module):
    def __init__(self, nin, hidden_sizes, nout, num_masks=1, natural_ordering=False):
        super().__init__()
        self.nin = nin
        self.nout = nout
        self.hidden_sizes = hidden_sizes
        assert self.nout % self.nin == 0, "nout must be integer multiple of nin"
        self.net = []
        hs = [nin] + hidden_sizes + [nout]
        for h0, h1 in zip(hs, hs[1:]):
            self.net.extend([MaskedLinear(h0, h1), nn.ReLU()])
        self.net.pop()
        self.net = nn.Sequential(*self.net)
        self.natural_ordering = natural_ordering
        self.num_masks = num_masks
        self.seed = 0
        self.m = {}
        self.update_masks()

    def update_masks(self):
        if self.m and self.num_masks == 1:
            return
        L = len(self.hidden_sizes)
        rng = np.random.RandomState(self.seed)
        self.seed = (self.seed + 1) % self.num_masks
        self.m[-1] = np.arange(self.nin) if self.natural_ordering else rng.permutation(self.nin)
        for l in range(L):
            self.m[l] = rng.randint(self.m[l - 1].min(), self.nin - 1, size=self.hidden_sizes[l])
        masks = [self.m[l - 1][:, None] <= self.m[l][None, :] for l in range(L)]
        masks.append(self.m[L - 1][:, None] < self.m[-1][None, :])
        if self.nout > self.nin:
            k = int(self.nout / self.nin)
            masks[-1] = np.concatenate([masks[-1]] * k, axis=1)
        layers = [l for l in self.net.modules() if isinstance(l, MaskedLinear)]
        for l, m in zip(layers, masks):
            l.set_mask(m)

    def forward(self, x):
        return self.net(x)


class ARMLP(nn.Module):
    def __init__(self, nin, nout, nh):
        super().__init__()
        self.net = MADE(nin, [nh, nh, nh], nout, num_masks=1, natural_ordering=True)

    def forward(self, x):
        return self.net(x)


class MAF(nn.Module):
    def __init__(self, dim, parity, net_class=ARMLP, nh=24):
        super().__init__()
        self.dim = dim
        self.net = net_class(dim, dim * 2, nh)
        self.parity = parity

    def forward(self, x):
        st = self.net(x)
        s, t = st.split(self.dim, dim=1)
        z = x * torch.exp(s) + t
        z = z.flip(dims=(1,)) if self.parity else z
        log_det = torch.sum(s, dim=1)
        return z, log_det

    def backward(self, z):
        x = torch.zeros_like(z)
        log_det = torch.zeros(z.size(0))
        z = z.flip(dims=(1,)) if self.parity else z
        for i in range(self.dim):
            st = self.net(x.clone())
            s, t = st.split(self.dim, dim=1)
            x[:, i] = (z[:, i] - t[:, i]) * torch.exp(-s[:, i])
            log_det += -s[:, i]
        return x, log_det


class NormalizingFlow(nn.Module):
    def __init__(self, flows):
        super().__init__()
        self.flows = nn.ModuleList(flows)

    def forward(self, x):
        m, _ = x.shape
        log_det = torch.zeros(m)
        zs = [x]
        for flow in self.flows:
            x, ld = flow.forward(x)
            log_det += ld
            zs.append(x)
        return zs, log_det

    def backward(self, z):
        m, _ = z.shape
        log_det = torch.zeros(m)
        xs = [z]
        for flow in self.flows[::-1]:
            z, ld = flow.backward(z)
            log_det += ld
            xs.append(z)
        return xs, log_det


class NormalizingFlowModel(nn.Module):
    def __init__(self, prior, flows):
        super().__init__()
        self.prior = prior
        self.flow = NormalizingFlow(flows)

    def forward(self, x):
        zs, log_det = self.flow.forward(x)
        prior_logprob = self.prior.log_prob(zs[-1]).view(x.size(0), -1).sum(1)
        return zs, prior_logprob, log_det

    def sample(self, num_samples):
        z = self.prior.sample((num_samples,))
        xs, _ = self.flow.backward(z)
        return xs


def run_made(args, log):
    torch.manual_seed(42)
    np.random.seed(42)
    n, d = 128, 12
    proto = (np.random.rand(3, d) > 0.5)
    xtr = proto[np.random.randint(0, 3, n)] ^ (np.random.rand(n, d) < 0.05)
    xtr = torch.from_numpy(xtr.astype(np.float32))
    model = MADE(d, [32, 32], d, num_masks=args.num_masks, natural_ordering=False)
    initial_state = {k: v.clone() for k, v in model.state_dict().items()}
    opt = torch.optim.Adam(model.parameters(), 1e-2, weight_decay=1e-4)
    scheduler = torch.optim.lr_scheduler.StepLR(opt, step_size=45, gamma=0.1)
    step_losses = []
    for epoch in range(2):
        model.train()
        for b in range(0, n, 32):
            xb = xtr[b:b + 32]
            if b % 64 == 0:
                model.update_masks()
            xbhat = model(xb)
            loss = F.binary_cross_entropy_with_logits(xbhat, xb, size_average=False) / xb.size(0)
            opt.zero_grad()
            loss.backward()
            opt.step()
            step_losses.append(loss.item())
        scheduler.step()
        log(epoch, loss.item())
    model.eval()
    with torch.no_grad():
        xbhat = torch.zeros_like(xtr[:16])
        for s in range(args.num_masks):
            model.update_masks()
            xbhat += model(xtr[:16])
        xbhat /= args.num_masks
        test_loss = F.binary_cross_entropy_with_logits(xbhat, xtr[:16], size_average=False) / 16
    return {"initial_state": initial_state, "step_losses": step_losses, "test_loss": test_loss,
            "mask": model.net[0].mask.clone()}


def run_maf(args, log):
    torch.manual_seed(0)
    n = 256
    rng = np.random.RandomState(0)
    x2 = rng.randn(n) * 2
    x1 = rng.randn(n) + x2 ** 2 / 4
    data = torch.from_numpy(np.stack([x1, x2], 1).astype(np.float32))
    prior = torch.distributions.MultivariateNormal(torch.zeros(2), torch.eye(2))
    flows = [MAF(dim=2, parity=i % 2, nh=24) for i in range(3)]
    model = NormalizingFlowModel(prior, flows)
    initial_state = {k: v.clone() for k, v in model.state_dict().items()}
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3, weight_decay=1e-5)
    step_losses = []
    model.train()
    for k in range(30):
        x = data[(k * 64) % n:(k * 64) % n + 64]
        zs, prior_logprob, log_det = model(x)
        logprob = prior_logprob + log_det
        loss = -torch.sum(logprob)
        model.zero_grad()
        loss.backward()
        optimizer.step()
        step_losses.append(loss.item())
        if k % 10 == 0:
            log(k, loss.item())
    model.eval()
    with torch.no_grad():
        zs = model.sample(16)
        zs_fwd, _, ld = model(data[:8])
    return {"initial_state": initial_state, "step_losses": step_losses, "samples": zs[-1], "z": zs_fwd[-1],
            "log_det": ld}


def main(argv=None):
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", default="made")
    parser.add_argument("--num-masks", type=int, default=1)
    parser.add_argument("--quiet", action="store_true")
    args = parser.parse_args(argv)
    log = (lambda *a: None) if args.quiet else print
    return run_made(args, log) if args.model == "made" else run_maf(args, log)


if __name__ == "__main__":
    main()
