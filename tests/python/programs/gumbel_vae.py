"""A categorical VAE with the Gumbel-softmax relaxation as YongfeiYan/Gumbel_Softmax_VAE and ericjang's
gumbel-softmax notebook ports write it in plain torch: sample_gumbel by -torch.log(-torch.log(U + eps) + eps) of
torch.rand(shape), gumbel_softmax_sample / gumbel_softmax with the straight-through hard sample (y.max(dim=-1),
torch.zeros_like(y).view(-1, shape[-1]).scatter_(1, ind.view(-1, 1), 1), (y_hard - y).detach() + y), the same
relaxation by F.gumbel_softmax(logits, tau, hard), an encoder / decoder of Linear + ReLU + Sigmoid, the ELBO of
F.binary_cross_entropy(recon_x, x.view(-1, 784), size_average=False) plus the KL to a uniform categorical
(qy * torch.log(qy * categorical_dim + 1e-20)), the temperature annealed by np.maximum(temp * np.exp(-ANNEAL_RATE
* batch_idx), temp_min), Adam, and sampling from the prior with np.random / torch.from_numpy one-hots; also the
torch.distributions RelaxedOneHotCategorical / OneHotCategorical route."""
import argparse

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn, optim

latent_dim = 4
categorical_dim = 6
image_dim = 64


def sample_gumbel(shape, eps=1e-20):
    U = torch.rand(shape)
    return -torch.log(-torch.log(U + eps) + eps)


def gumbel_softmax_sample(logits, temperature):
    y = logits + sample_gumbel(logits.size())
    return F.softmax(y / temperature, dim=-1)


def gumbel_softmax(logits, temperature, hard=False):
    y = gumbel_softmax_sample(logits, temperature)
    if not hard:
        return y.view(-1, latent_dim * categorical_dim)
    shape = y.size()
    _, ind = y.max(dim=-1)
    y_hard = torch.zeros_like(y).view(-1, shape[-1])
    y_hard.scatter_(1, ind.view(-1, 1), 1)
    y_hard = y_hard.view(*shape)
    y_hard = (y_hard - y).detach() + y
    return y_hard.view(-1, latent_dim * categorical_dim)


class VAE_gumbel(nn.Module):
    def __init__(self, temp, mode):
        super(VAE_gumbel, self).__init__()
        self.mode = mode
        self.fc1 = nn.Linear(image_dim, 32)
        self.fc2 = nn.Linear(32, 16)
        self.fc3 = nn.Linear(16, latent_dim * categorical_dim)
        self.fc4 = nn.Linear(latent_dim * categorical_dim, 16)
        self.fc5 = nn.Linear(16, 32)
        self.fc6 = nn.Linear(32, image_dim)
        self.relu = nn.ReLU()
        self.sigmoid = nn.Sigmoid()

    def encode(self, x):
        h1 = self.relu(self.fc1(x))
        h2 = self.relu(self.fc2(h1))
        return self.relu(self.fc3(h2))

    def decode(self, z):
        h4 = self.relu(self.fc4(z))
        h5 = self.relu(self.fc5(h4))
        return self.sigmoid(self.fc6(h5))

    def forward(self, x, temp, hard):
        q = self.encode(x.view(-1, image_dim))
        q_y = q.view(q.size(0), latent_dim, categorical_dim)
        if self.mode == "manual":
            z = gumbel_softmax(q_y, temp, hard)
        elif self.mode == "functional":
            z = F.gumbel_softmax(q_y, tau=temp, hard=hard).view(-1, latent_dim * categorical_dim)
        else:
            dist = torch.distributions.RelaxedOneHotCategorical(torch.tensor([float(temp)]), logits=q_y)
            z = dist.rsample().view(-1, latent_dim * categorical_dim)
        return self.decode(z), F.softmax(q_y, dim=-1).reshape(*q.size())


def loss_function(recon_x, x, qy):
    BCE = F.binary_cross_entropy(recon_x, x.view(-1, image_dim), size_average=False) / x.shape[0]
    log_ratio = torch.log(qy * categorical_dim + 1e-20)
    KLD = torch.sum(qy * log_ratio, dim=-1).mean()
    return BCE + KLD


def main(argv=None):
    parser = argparse.ArgumentParser(description='VAE MNIST Example')
    parser.add_argument('--batch-size', type=int, default=16)
    parser.add_argument('--epochs', type=int, default=2)
    parser.add_argument('--temp', type=float, default=1.0)
    parser.add_argument('--hard', action='store_true', default=False)
    parser.add_argument('--mode', default='manual')
    parser.add_argument('--seed', type=int, default=1)
    parser.add_argument('--quiet', action='store_true')
    args = parser.parse_args(argv)
    log = (lambda *a: None) if args.quiet else print
    torch.manual_seed(args.seed)
    np.random.seed(args.seed)
    temp_min = 0.5
    ANNEAL_RATE = 0.03
    protos = (torch.rand(categorical_dim, image_dim) > 0.5).float()
    labels = torch.randint(0, categorical_dim, (96,))
    data = (protos[labels] * 0.9 + 0.05).clamp(0, 1)
    data = torch.bernoulli(data)
    train_loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(data, labels),
                                               batch_size=args.batch_size, shuffle=True)
    model = VAE_gumbel(args.temp, args.mode)
    initial_state = {k: v.clone() for k, v in model.state_dict().items()}
    optimizer = optim.Adam(model.parameters(), lr=1e-2)
    step_losses, temps = [], []
    temp = args.temp
    for epoch in range(1, args.epochs + 1):
        model.train()
        train_loss = 0
        for batch_idx, (data_b, _) in enumerate(train_loader):
            optimizer.zero_grad()
            recon_batch, qy = model(data_b, temp, args.hard)
            loss = loss_function(recon_batch, data_b, qy)
            loss.backward()
            train_loss += loss.item() * len(data_b)
            optimizer.step()
            if batch_idx % 2 == 1:
                temp = np.maximum(temp * np.exp(-ANNEAL_RATE * batch_idx), temp_min)
            temps.append(float(temp))
            step_losses.append(loss.item())
        log('====> Epoch: {} Average loss: {:.4f}'.format(epoch, train_loss / len(train_loader.dataset)))
    M = 4 * latent_dim
    np_y = np.zeros((M, categorical_dim), dtype=np.float32)
    np_y[range(M), np.random.choice(categorical_dim, M)] = 1
    np_y = np.reshape(np_y, [M // latent_dim, latent_dim, categorical_dim])
    sample = torch.from_numpy(np_y).view(M // latent_dim, latent_dim * categorical_dim)
    with torch.no_grad():
        sample = model.decode(sample)
        q = model.encode(data[:4]).view(4, latent_dim, categorical_dim)
        one_hot = torch.distributions.OneHotCategorical(logits=q).sample()
        lp = torch.distributions.OneHotCategorical(logits=q).log_prob(one_hot)
    return {"initial_state": initial_state, "step_losses": step_losses, "temps": temps, "sample": sample,
            "one_hot": one_hot, "lp": lp}


if __name__ == "__main__":
    main()
