"""William Falcon's "Variational Autoencoder Demystified With PyTorch Implementation" (the PyTorch
Lightning VAE), with its LightningModule's methods kept and the Trainer written out as a loop: fc_mu /
fc_var heads, a learned log_scale = nn.Parameter(torch.Tensor([0.0])) for the Gaussian likelihood,
torch.distributions.Normal(mu, std).rsample(), gaussian_likelihood's Normal(x_hat, torch.exp(logscale))
.log_prob(x).sum(dim=(1, 2, 3)) (a (1,) scale broadcast over images), the Monte-Carlo kl_divergence from
two Normals' log_prob, elbo = (kl - recon_loss).mean(), Adam(lr=1e-4). The --analytic variant is the
usual rewrite with torch.distributions.Independent(Normal(...), 1) and torch.distributions.kl_divergence.
The article's pl_bolts resnet18 encoder/decoder are replaced by small convolutional ones and CIFAR-10 by
synthetic images."""
import argparse

import torch
from torch import nn
from torch.nn import functional as F


class Encoder(nn.Module):
    def __init__(self, enc_out_dim):
        super().__init__()
        self.net = nn.Sequential(nn.Conv2d(3, 16, 3, stride=2, padding=1), nn.ReLU(),
                                 nn.Conv2d(16, 32, 3, stride=2, padding=1), nn.ReLU(),
                                 nn.AdaptiveAvgPool2d((1, 1)), nn.Flatten(), nn.Linear(32, enc_out_dim))

    def forward(self, x):
        return self.net(x)


class Decoder(nn.Module):
    def __init__(self, latent_dim, input_height):
        super().__init__()
        self.input_height = input_height
        self.fc = nn.Linear(latent_dim, 32 * (input_height // 4) ** 2)
        self.net = nn.Sequential(nn.ReLU(), nn.ConvTranspose2d(32, 16, 4, stride=2, padding=1), nn.ReLU(),
                                 nn.ConvTranspose2d(16, 3, 4, stride=2, padding=1))

    def forward(self, z):
        h = self.fc(z).view(-1, 32, self.input_height // 4, self.input_height // 4)
        return self.net(h)


class VAE(nn.Module):
    def __init__(self, enc_out_dim=512, latent_dim=256, input_height=32, analytic=False):
        super().__init__()

        self.analytic = analytic
        # encoder, decoder
        self.encoder = Encoder(enc_out_dim)
        self.decoder = Decoder(latent_dim=latent_dim, input_height=input_height)

        # distribution parameters
        self.fc_mu = nn.Linear(enc_out_dim, latent_dim)
        self.fc_var = nn.Linear(enc_out_dim, latent_dim)

        # for the gaussian likelihood
        self.log_scale = nn.Parameter(torch.Tensor([0.0]))

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=1e-4)

    def gaussian_likelihood(self, x_hat, logscale, x):
        scale = torch.exp(logscale)
        mean = x_hat
        dist = torch.distributions.Normal(mean, scale)

        # measure prob of seeing image under p(x|z)
        log_pxz = dist.log_prob(x)
        return log_pxz.sum(dim=(1, 2, 3))

    def kl_divergence(self, z, mu, std):
        # --------------------------
        # Monte carlo KL divergence
        # --------------------------
        # 1. define the first two probabilities (in this case Normal for both)
        p = torch.distributions.Normal(torch.zeros_like(mu), torch.ones_like(std))
        q = torch.distributions.Normal(mu, std)

        # 2. get the probabilities from the equation
        log_qzx = q.log_prob(z)
        log_pz = p.log_prob(z)

        # kl
        kl = (log_qzx - log_pz)
        kl = kl.sum(-1)
        return kl

    def training_step(self, batch, batch_idx):
        x, _ = batch

        # encode x to get the mu and variance parameters
        x_encoded = self.encoder(x)
        mu, log_var = self.fc_mu(x_encoded), self.fc_var(x_encoded)

        # sample z from q
        std = torch.exp(log_var / 2)
        if self.analytic:
            q = torch.distributions.Independent(torch.distributions.Normal(mu, std), 1)
            z = q.rsample()
            x_hat = self.decoder(z)
            likelihood = torch.distributions.Independent(torch.distributions.Normal(x_hat, torch.exp(self.log_scale)), 3)
            recon_loss = likelihood.log_prob(x)
            prior = torch.distributions.Independent(
                torch.distributions.Normal(torch.zeros_like(mu), torch.ones_like(std)), 1)
            kl = torch.distributions.kl_divergence(q, prior)
        else:
            q = torch.distributions.Normal(mu, std)
            z = q.rsample()

            # decoded
            x_hat = self.decoder(z)

            # reconstruction loss
            recon_loss = self.gaussian_likelihood(x_hat, self.log_scale, x)

            # kl
            kl = self.kl_divergence(z, mu, std)

        # elbo
        elbo = (kl - recon_loss)
        elbo = elbo.mean()

        logs = {
            'elbo': elbo.item(),
            'kl': kl.mean().item(),
            'recon_loss': recon_loss.mean().item(),
            'reconstruction': recon_loss.mean().item(),
        }

        return elbo, logs


def main(argv=None):
    parser = argparse.ArgumentParser()
    parser.add_argument('--max_epochs', type=int, default=30)
    parser.add_argument('--batch_size', type=int, default=32)
    parser.add_argument('--n_images', type=int, default=256)
    parser.add_argument('--latent_dim', type=int, default=256)
    parser.add_argument('--enc_out_dim', type=int, default=512)
    parser.add_argument('--input_height', type=int, default=32)
    parser.add_argument('--analytic', action='store_true')
    parser.add_argument('--quiet', action='store_true')
    args = parser.parse_args(argv)
    log = (lambda *a: None) if args.quiet else print

    # pl.seed_everything(1234)
    torch.manual_seed(1234)
    g = torch.Generator().manual_seed(0)
    h = args.input_height
    centers = torch.rand(args.n_images, 2, generator=g) * h
    yy, xx = torch.meshgrid(torch.arange(h).float(), torch.arange(h).float(), indexing="ij")
    blobs = torch.exp(-((yy - centers[:, 0, None, None]) ** 2 + (xx - centers[:, 1, None, None]) ** 2) / 20.0)
    colors = torch.rand(args.n_images, 3, 1, 1, generator=g)
    images = blobs[:, None] * colors + 0.05 * torch.randn(args.n_images, 3, h, h, generator=g)
    dataset = torch.utils.data.TensorDataset(images, torch.zeros(args.n_images))
    train_loader = torch.utils.data.DataLoader(dataset, batch_size=args.batch_size, shuffle=True)

    vae = VAE(args.enc_out_dim, args.latent_dim, h, analytic=args.analytic)
    initial_state = {k: v.clone() for k, v in vae.state_dict().items()}
    optimizer = vae.configure_optimizers()
    record = {'initial_state': initial_state, 'step_losses': [], 'logs': []}
    for epoch in range(args.max_epochs):
        vae.train()
        for batch_idx, batch in enumerate(train_loader):
            loss, logs = vae.training_step(batch, batch_idx)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            record['step_losses'].append(loss.item())
            record['logs'].append(logs)
        log(f"epoch {epoch}: {record['logs'][-1]}")
    record['log_scale'] = vae.log_scale.item()
    return record


if __name__ == '__main__':
    main()
