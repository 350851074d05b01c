"""pytorch/examples vae/main.py: the fully connected VAE (fc1, fc21/fc22 for mu and logvar,
reparameterize with torch.exp(0.5*logvar) and torch.randn_like, sigmoid decoder), the loss
F.binary_cross_entropy(..., reduction='sum') plus the KL term, Adam, and after each epoch a test
pass (torch.cat of inputs and reconstructions, as saved to a png) and 64 samples decoded from
torch.randn under torch.no_grad. MNIST is replaced by synthetic 28x28 images in [0, 1]; save_image
is left out (the tensors it would write are returned instead)."""
from __future__ import print_function

import argparse

import numpy as np
import torch
import torch.utils.data
from torch import nn, optim
from torch.nn import functional as F


class VAE(nn.Module):
    def __init__(self):
        super(VAE, self).__init__()

        self.fc1 = nn.Linear(784, 400)
        self.fc21 = nn.Linear(400, 20)
        self.fc22 = nn.Linear(400, 20)
        self.fc3 = nn.Linear(20, 400)
        self.fc4 = nn.Linear(400, 784)

    def encode(self, x):
        h1 = F.relu(self.fc1(x))
        return self.fc21(h1), self.fc22(h1)

    def reparameterize(self, mu, logvar):
        std = torch.exp(0.5 * logvar)
        eps = torch.randn_like(std)
        return mu + eps * std

    def decode(self, z):
        h3 = F.relu(self.fc3(z))
        return torch.sigmoid(self.fc4(h3))

    def forward(self, x):
        mu, logvar = self.encode(x.view(-1, 784))
        z = self.reparameterize(mu, logvar)
        return self.decode(z), mu, logvar


# Reconstruction + KL divergence losses summed over all elements and batch
def loss_function(recon_x, x, mu, logvar):
    BCE = F.binary_cross_entropy(recon_x, x.view(-1, 784), reduction='sum')

    # see Appendix B from VAE paper:
    # Kingma and Welling. Auto-Encoding Variational Bayes. ICLR, 2014
    # https://arxiv.org/abs/1312.6114
    # 0.5 * sum(1 + log(sigma^2) - mu^2 - sigma^2)
    KLD = -0.5 * torch.sum(1 + logvar - mu.pow(2) - logvar.exp())

    return BCE + KLD


def synthetic_images(n, seed):
    """Blobs on a dark background, as ToTensor gives MNIST: [n, 1, 28, 28] in [0, 1]."""
    rng = np.random.RandomState(seed)
    yy, xx = np.mgrid[0:28, 0:28]
    images = np.zeros((n, 1, 28, 28), np.float32)
    for k in range(n):
        cy, cx = rng.uniform(8, 20, size=2)
        r = rng.uniform(3, 7)
        images[k, 0] = np.clip(1.2 - np.hypot(yy - cy, xx - cx) / r, 0, 1)
    images = np.round(images * 255) / 255
    return torch.tensor(images), torch.tensor(rng.randint(0, 10, size=n))


def main(argv=None):
    parser = argparse.ArgumentParser(description='VAE MNIST Example')
    parser.add_argument('--batch-size', type=int, default=128, metavar='N',
                        help='input batch size for training (default: 128)')
    parser.add_argument('--epochs', type=int, default=10, metavar='N',
                        help='number of epochs to train (default: 10)')
    parser.add_argument('--no-cuda', action='store_true', default=False,
                        help='disables CUDA training')
    parser.add_argument('--no-mps', action='store_true', default=False,
                        help='disables macOS GPU training')
    parser.add_argument('--seed', type=int, default=1, metavar='S',
                        help='random seed (default: 1)')
    parser.add_argument('--log-interval', type=int, default=10, metavar='N',
                        help='how many batches to wait before logging training status')
    parser.add_argument('--train-size', type=int, default=60000)
    parser.add_argument('--test-size', type=int, default=10000)
    parser.add_argument('--quiet', action='store_true')
    args = parser.parse_args(argv)
    args.cuda = not args.no_cuda and torch.cuda.is_available()
    use_mps = not args.no_mps and torch.backends.mps.is_available()
    log = (lambda *a: None) if args.quiet else print

    torch.manual_seed(args.seed)

    if args.cuda:
        device = torch.device("cuda")
    elif use_mps:
        device = torch.device("mps")
    else:
        device = torch.device("cpu")

    kwargs = {'num_workers': 1, 'pin_memory': True} if args.cuda else {}
    train_loader = torch.utils.data.DataLoader(
        torch.utils.data.TensorDataset(*synthetic_images(args.train_size, 0)),
        batch_size=args.batch_size, shuffle=True, **kwargs)
    test_loader = torch.utils.data.DataLoader(
        torch.utils.data.TensorDataset(*synthetic_images(args.test_size, 1)),
        batch_size=args.batch_size, shuffle=False, **kwargs)

    model = VAE().to(device)
    initial_state = {k: v.clone() for k, v in model.state_dict().items()}
    optimizer = optim.Adam(model.parameters(), lr=1e-3)
    step_losses, epoch_losses, test_losses, comparisons, samples = [], [], [], [], []

    def train(epoch):
        model.train()
        train_loss = 0
        for batch_idx, (data, _) in enumerate(train_loader):
            data = data.to(device)
            optimizer.zero_grad()
            recon_batch, mu, logvar = model(data)
            loss = loss_function(recon_batch, data, mu, logvar)
            loss.backward()
            train_loss += loss.item()
            optimizer.step()
            step_losses.append(loss.item() / len(data))
            if batch_idx % args.log_interval == 0:
                log('Train Epoch: {} [{}/{} ({:.0f}%)]\tLoss: {:.6f}'.format(
                    epoch, batch_idx * len(data), len(train_loader.dataset),
                    100. * batch_idx / len(train_loader),
                    loss.item() / len(data)))

        log('====> Epoch: {} Average loss: {:.4f}'.format(
              epoch, train_loss / len(train_loader.dataset)))
        epoch_losses.append(train_loss / len(train_loader.dataset))

    def test(epoch):
        model.eval()
        test_loss = 0
        with torch.no_grad():
            for i, (data, _) in enumerate(test_loader):
                data = data.to(device)
                recon_batch, mu, logvar = model(data)
                test_loss += loss_function(recon_batch, data, mu, logvar).item()
                if i == 0:
                    n = min(data.size(0), 8)
                    comparison = torch.cat([data[:n],
                                            recon_batch.view(args.batch_size, 1, 28, 28)[:n]])
                    comparisons.append(comparison.cpu().numpy())  # save_image(comparison.cpu(), ...)

        test_loss /= len(test_loader.dataset)
        log('====> Test set loss: {:.4f}'.format(test_loss))
        test_losses.append(test_loss)

    for epoch in range(1, args.epochs + 1):
        train(epoch)
        test(epoch)
        with torch.no_grad():
            sample = torch.randn(64, 20).to(device)
            sample = model.decode(sample).cpu()
            samples.append(sample.view(64, 1, 28, 28).numpy())  # save_image(sample.view(64, 1, 28, 28), ...)
    return {"initial_state": initial_state, "step_losses": step_losses, "epoch_losses": epoch_losses,
            "test_losses": test_losses, "comparisons": comparisons, "samples": samples}


if __name__ == "__main__":
    main()
