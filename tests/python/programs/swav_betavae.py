"""Two self-supervised / generative programs as written. facebookresearch/swav's main_swav.py (trimmed): the
projection head and prototypes nn.Linear(bias=False), w = model.prototypes.weight.data.clone(); w =
nn.functional.normalize(w, dim=1, p=2); model.prototypes.weight.copy_(w) under torch.no_grad(), multi-crop
outputs, distributed_sinkhorn without the all_reduce (Q = torch.exp(out / epsilon).t(), Q /= sum_Q, row and
column normalisation loops, Q *= B; return Q.t()), the swapped prediction loss -torch.mean(torch.sum(q *
F.log_softmax(x / temperature, dim=1), dim=1)), a queue used once filled (torch.cat((torch.mm(queue[i],
model.prototypes.weight.t()), out))), freezing the prototypes' grads for the first iterations (p.grad = None by
name), and the LARS-free SGD with a warmup + cosine schedule written into param_groups. 1Konny/Beta-VAE
(model.py / solver.py): reparametrize by std.data.new(std.size()).normal_(), kaiming_init over self._modules,
View, BetaVAE_B's conv encoder / ConvTranspose2d decoder, reconstruction_loss by F.binary_cross_entropy_with_logits
(size_average=False).div(batch_size), kl_divergence's total_kld / dimension_wise_kld / mean_kld, the H objective
(beta * KLD) and the B objective with the capacity C = torch.clamp(self.C_max / self.C_stop_iter * self.global_iter,
0, self.C_max.data[0]) written as the Variable(torch.FloatTensor([C_max])) it is, and traverse-style latent
interpolation by torch.arange(-limit, limit + 0.1, inter)."""
import argparse
import math

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.nn.init as init
from torch.autograd import Variable


class SwAVNet(nn.Module):
    def __init__(self, output_dim=16, hidden_mlp=32, nmb_prototypes=10):
        super().__init__()
        self.backbone = nn.Sequential(nn.Conv2d(3, 8, 3, 2, 1), nn.BatchNorm2d(8), nn.ReLU(inplace=True),
                                      nn.AdaptiveAvgPool2d((1, 1)), nn.Flatten())
        self.projection_head = nn.Sequential(nn.Linear(8, hidden_mlp), nn.BatchNorm1d(hidden_mlp), nn.ReLU(inplace=True),
                                             nn.Linear(hidden_mlp, output_dim))
        self.l2norm = True
        self.prototypes = nn.Linear(output_dim, nmb_prototypes, bias=False)

    def forward_head(self, x):
        x = self.projection_head(x)
        if self.l2norm:
            x = nn.functional.normalize(x, dim=1, p=2)
        return x, self.prototypes(x)

    def forward(self, inputs):
        if not isinstance(inputs, list):
            inputs = [inputs]
        idx_crops = torch.cumsum(torch.unique_consecutive(
            torch.tensor([inp.shape[-1] for inp in inputs]), return_counts=True)[1], 0)
        start_idx = 0
        for end_idx in idx_crops:
            _out = self.backbone(torch.cat(inputs[start_idx: end_idx]))
            if start_idx == 0:
                output = _out
            else:
                output = torch.cat((output, _out))
            start_idx = end_idx
        return self.forward_head(output)


@torch.no_grad()
def distributed_sinkhorn(out, epsilon=0.05, sinkhorn_iterations=3):
    Q = torch.exp(out / epsilon).t()
    B = Q.shape[1]
    K = Q.shape[0]
    sum_Q = torch.sum(Q)
    Q /= sum_Q
    for it in range(sinkhorn_iterations):
        sum_of_rows = torch.sum(Q, dim=1, keepdim=True)
        Q /= sum_of_rows
        Q /= K
        Q /= torch.sum(Q, dim=0, keepdim=True)
        Q /= B
    Q *= B
    return Q.t()


def reparametrize(mu, logvar):
    std = logvar.div(2).exp()
    eps = Variable(std.data.new(std.size()).normal_())
    return mu + std * eps


class View(nn.Module):
    def __init__(self, size):
        super(View, self).__init__()
        self.size = size

    def forward(self, tensor):
        return tensor.view(self.size)


def kaiming_init(m):
    if isinstance(m, (nn.Linear, nn.Conv2d)):
        init.kaiming_normal_(m.weight)
        if m.bias is not None:
            m.bias.data.fill_(0)
    elif isinstance(m, (nn.BatchNorm1d, nn.BatchNorm2d)):
        m.weight.data.fill_(1)
        if m.bias is not None:
            m.bias.data.fill_(0)


class BetaVAE_B(nn.Module):
    def __init__(self, z_dim=4, nc=1):
        super(BetaVAE_B, self).__init__()
        self.nc = nc
        self.z_dim = z_dim
        self.encoder = nn.Sequential(
            nn.Conv2d(nc, 8, 4, 2, 1), nn.ReLU(True),
            nn.Conv2d(8, 8, 4, 2, 1), nn.ReLU(True),
            View((-1, 8 * 4 * 4)),
            nn.Linear(8 * 4 * 4, 32), nn.ReLU(True),
            nn.Linear(32, z_dim * 2),
        )
        self.decoder = nn.Sequential(
            nn.Linear(z_dim, 32), nn.ReLU(True),
            nn.Linear(32, 8 * 4 * 4), nn.ReLU(True),
            View((-1, 8, 4, 4)),
            nn.ConvTranspose2d(8, 8, 4, 2, 1), nn.ReLU(True),
            nn.ConvTranspose2d(8, nc, 4, 2, 1),
        )
        self.weight_init()

    def weight_init(self):
        for block in self._modules:
            for m in self._modules[block]:
                kaiming_init(m)

    def forward(self, x):
        distributions = self._encode(x)
        mu = distributions[:, :self.z_dim]
        logvar = distributions[:, self.z_dim:]
        z = reparametrize(mu, logvar)
        x_recon = self._decode(z).view(x.size())
        return x_recon, mu, logvar

    def _encode(self, x):
        return self.encoder(x)

    def _decode(self, z):
        return self.decoder(z)


def reconstruction_loss(x, x_recon, distribution):
    batch_size = x.size(0)
    assert batch_size != 0
    if distribution == 'bernoulli':
        recon_loss = F.binary_cross_entropy_with_logits(x_recon, x, size_average=False).div(batch_size)
    elif distribution == 'gaussian':
        x_recon = F.sigmoid(x_recon)
        recon_loss = F.mse_loss(x_recon, x, size_average=False).div(batch_size)
    else:
        recon_loss = None
    return recon_loss


def kl_divergence(mu, logvar):
    batch_size = mu.size(0)
    assert batch_size != 0
    if mu.data.ndimension() == 4:
        mu = mu.view(mu.size(0), mu.size(1))
    if logvar.data.ndimension() == 4:
        logvar = logvar.view(logvar.size(0), logvar.size(1))
    klds = -0.5 * (1 + logvar - mu.pow(2) - logvar.exp())
    total_kld = klds.sum(1).mean(0, True)
    dimension_wise_kld = klds.mean(0)
    mean_kld = klds.mean(1).mean(0, True)
    return total_kld, dimension_wise_kld, mean_kld


def main(argv=None):
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", default="swav", choices=["swav", "betavae_H", "betavae_B"])
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--quiet", action="store_true")
    args = parser.parse_args(argv)
    log = (lambda *a: None) if args.quiet else print
    torch.manual_seed(0)
    np.random.seed(0)
    step_losses = []
    if args.model == "swav":
        model = SwAVNet()
        initial_state = {k: v.clone() for k, v in model.state_dict().items()}
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, weight_decay=1e-6)
        warmup_lr_schedule = np.linspace(0.0, 0.3, 3)
        iters = np.arange(args.steps - 3)
        cosine_lr_schedule = np.array([0.001 + 0.5 * (0.3 - 0.001) * (1 + math.cos(math.pi * t / len(iters)))
                                       for t in iters])
        lr_schedule = np.concatenate((warmup_lr_schedule, cosine_lr_schedule))
        crops_for_assign, nmb_crops, temperature, bs = [0, 1], [2, 2], 0.1, 8
        queue = None
        queue_length = 16
        base = torch.rand(args.steps, bs, 3, 16, 16)
        for it in range(args.steps):
            for param_group in optimizer.param_groups:
                param_group["lr"] = lr_schedule[it]
            with torch.no_grad():
                w = model.prototypes.weight.data.clone()
                w = nn.functional.normalize(w, dim=1, p=2)
                model.prototypes.weight.copy_(w)
            inputs = [base[it] + 0.1 * torch.randn_like(base[it]) for _ in range(2)]
            inputs += [F.interpolate(base[it], size=8, mode='bilinear', align_corners=False) for _ in range(2)]
            embedding, output = model(inputs)
            embedding = embedding.detach()
            loss = 0
            if it >= 4 and queue is None:
                queue = torch.zeros(len(crops_for_assign), queue_length, 16)
            for i, crop_id in enumerate(crops_for_assign):
                with torch.no_grad():
                    out = output[bs * crop_id: bs * (crop_id + 1)].detach()
                    if queue is not None:
                        if not torch.all(queue[i, -1, :] == 0):
                            out = torch.cat((torch.mm(queue[i], model.prototypes.weight.t()), out))
                        queue[i, bs:] = queue[i, :-bs].clone()
                        queue[i, :bs] = embedding[crop_id * bs: (crop_id + 1) * bs]
                    q = distributed_sinkhorn(out)[-bs:]
                subloss = 0
                for v in np.delete(np.arange(np.sum(nmb_crops)), crop_id):
                    x = output[bs * v: bs * (v + 1)] / temperature
                    subloss -= torch.mean(torch.sum(q * F.log_softmax(x, dim=1), dim=1))
                loss += subloss / (np.sum(nmb_crops) - 1)
            loss /= len(crops_for_assign)
            optimizer.zero_grad()
            loss.backward()
            if it < 2:
                for name, p in model.named_parameters():
                    if "prototypes" in name:
                        p.grad = None
            optimizer.step()
            step_losses.append(loss.item())
            log("iter %d loss %.4f lr %.4f" % (it, loss.item(), optimizer.param_groups[0]["lr"]))
        return {"initial_state": initial_state, "step_losses": step_losses,
                "prototypes": model.prototypes.weight.detach(), "queue": queue}
    objective = args.model.split("_")[1]
    net = BetaVAE_B(z_dim=4)
    initial_state = {k: v.clone() for k, v in net.state_dict().items()}
    optim = torch.optim.Adam(net.parameters(), lr=1e-3, betas=(0.9, 0.999))
    beta, gamma = 4, 100
    C_max = Variable(torch.FloatTensor([20]))
    C_stop_iter = 50
    centers = torch.rand(3, 2) * 8 + 4
    yy, xx = torch.meshgrid(torch.arange(16.), torch.arange(16.))
    klds, recons = [], []
    for global_iter in range(1, args.steps + 1):
        c = centers[torch.randint(0, 3, (8,))]
        x = (((yy - c[:, 0, None, None]) ** 2 + (xx - c[:, 1, None, None]) ** 2) < 9).float().unsqueeze(1)
        x = Variable(x)
        x_recon, mu, logvar = net(x)
        recon_loss = reconstruction_loss(x, x_recon, 'bernoulli')
        total_kld, dim_wise_kld, mean_kld = kl_divergence(mu, logvar)
        if objective == 'H':
            beta_vae_loss = recon_loss + beta * total_kld
        else:
            C = torch.clamp(C_max / C_stop_iter * global_iter, 0, C_max.data[0])
            beta_vae_loss = recon_loss + gamma * (total_kld - C).abs()
        optim.zero_grad()
        beta_vae_loss.backward()
        optim.step()
        step_losses.append(beta_vae_loss.item())
        klds.append(dim_wise_kld.detach())
        recons.append(recon_loss.item())
        log("[{}] recon_loss:{:.3f} total_kld:{:.3f} mean_kld:{:.3f}".format(
            global_iter, recon_loss.data.item(), total_kld.data[0], mean_kld.data[0]))
    net.eval()
    with torch.no_grad():
        z_ori = net._encode(x[:1])[:, :4]
        interpolation = torch.arange(-3, 3 + 0.1, 2 / 3)
        samples = []
        for row in range(4):
            z = z_ori.clone()
            for val in interpolation:
                z[:, row] = val
                samples.append(F.sigmoid(net._decode(z)).data)
    return {"initial_state": initial_state, "step_losses": step_losses, "klds": torch.stack(klds),
            "recons": recons, "traverse": torch.cat(samples, dim=0), "interpolation": interpolation}


if __name__ == "__main__":
    main()
