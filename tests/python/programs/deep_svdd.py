"""lukasruff/Deep-SVDD-PyTorch: MNIST_LeNet (bias-free convs, BatchNorm2d(eps=1e-04, affine=False),
F.leaky_relu, MaxPool2d) and its autoencoder for pretraining (F.interpolate(scale_factor=2),
ConvTranspose2d), AETrainer (torch.sum((outputs - inputs) ** 2, dim=tuple(range(1, outputs.dim())))),
DeepSVDDTrainer (init_center_c with the eps push away from zero, one-class and soft-boundary objectives,
get_radius by np.quantile(np.sqrt(dist), 1 - nu), Adam(amsgrad=...) with MultiStepLR, the center c as a
plain tensor), the network's weights initialised from the pretrained encoder through
state_dict filtering, and the test scores' ROC AUC (sklearn's roc_auc_score)."""
import argparse

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim
from torch.utils.data import DataLoader, Dataset
from sklearn.metrics import roc_auc_score


class BaseNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.rep_dim = None

    def forward(self, *input):
        raise NotImplementedError


class MNIST_LeNet(BaseNet):
    def __init__(self):
        super().__init__()
        self.rep_dim = 32
        self.pool = nn.MaxPool2d(2, 2)
        self.conv1 = nn.Conv2d(1, 8, 5, bias=False, padding=2)
        self.bn1 = nn.BatchNorm2d(8, eps=1e-04, affine=False)
        self.conv2 = nn.Conv2d(8, 4, 5, bias=False, padding=2)
        self.bn2 = nn.BatchNorm2d(4, eps=1e-04, affine=False)
        self.fc1 = nn.Linear(4 * 7 * 7, self.rep_dim, bias=False)

    def forward(self, x):
        x = self.conv1(x)
        x = self.pool(F.leaky_relu(self.bn1(x)))
        x = self.conv2(x)
        x = self.pool(F.leaky_relu(self.bn2(x)))
        x = x.view(x.size(0), -1)
        x = self.fc1(x)
        return x


class MNIST_LeNet_Autoencoder(BaseNet):
    def __init__(self):
        super().__init__()
        self.rep_dim = 32
        self.pool = nn.MaxPool2d(2, 2)
        # Encoder (must match the Deep SVDD network above)
        self.conv1 = nn.Conv2d(1, 8, 5, bias=False, padding=2)
        self.bn1 = nn.BatchNorm2d(8, eps=1e-04, affine=False)
        self.conv2 = nn.Conv2d(8, 4, 5, bias=False, padding=2)
        self.bn2 = nn.BatchNorm2d(4, eps=1e-04, affine=False)
        self.fc1 = nn.Linear(4 * 7 * 7, self.rep_dim, bias=False)
        # Decoder
        self.deconv1 = nn.ConvTranspose2d(2, 4, 5, bias=False, padding=2)
        self.bn3 = nn.BatchNorm2d(4, eps=1e-04, affine=False)
        self.deconv2 = nn.ConvTranspose2d(4, 8, 5, bias=False, padding=3)
        self.bn4 = nn.BatchNorm2d(8, eps=1e-04, affine=False)
        self.deconv3 = nn.ConvTranspose2d(8, 1, 5, bias=False, padding=2)

    def forward(self, x):
        x = self.conv1(x)
        x = self.pool(F.leaky_relu(self.bn1(x)))
        x = self.conv2(x)
        x = self.pool(F.leaky_relu(self.bn2(x)))
        x = x.view(x.size(0), -1)
        x = self.fc1(x)
        x = x.view(x.size(0), int(self.rep_dim / 16), 4, 4)
        x = F.interpolate(F.leaky_relu(x), scale_factor=2)
        x = self.deconv1(x)
        x = F.interpolate(F.leaky_relu(self.bn3(x)), scale_factor=2)
        x = self.deconv2(x)
        x = F.interpolate(F.leaky_relu(self.bn4(x)), scale_factor=2)
        x = self.deconv3(x)
        x = torch.sigmoid(x)
        return x


class SyntheticMNISTAD(Dataset):
    """(harness) one normal class of blurry strokes vs. outliers; returns (img, target, idx) as MyMNIST."""

    def __init__(self, n, seed, normal_only):
        rng = np.random.RandomState(seed)
        y = np.zeros(n, dtype=np.int64) if normal_only else (rng.rand(n) < 0.3).astype(np.int64)
        x = rng.rand(n, 1, 28, 28).astype(np.float32) * 0.3
        for i in range(n):
            if y[i] == 0:
                x[i, 0, 6:22, 12:16] += 0.7
            else:
                x[i, 0, 12:16, 4:24] += 0.7
        self.x, self.y = torch.from_numpy(x), torch.from_numpy(y)

    def __len__(self):
        return len(self.y)

    def __getitem__(self, index):
        return self.x[index], int(self.y[index]), index


class AETrainer:
    def __init__(self, lr, n_epochs, lr_milestones, batch_size, weight_decay, amsgrad=False):
        self.lr, self.n_epochs, self.lr_milestones = lr, n_epochs, lr_milestones
        self.batch_size, self.weight_decay, self.amsgrad = batch_size, weight_decay, amsgrad

    def train(self, train_set, ae_net, step_losses):
        train_loader = DataLoader(train_set, batch_size=self.batch_size, shuffle=True)
        optimizer = optim.Adam(ae_net.parameters(), lr=self.lr, weight_decay=self.weight_decay, amsgrad=self.amsgrad)
        scheduler = optim.lr_scheduler.MultiStepLR(optimizer, milestones=self.lr_milestones, gamma=0.1)
        ae_net.train()
        for epoch in range(self.n_epochs):
            loss_epoch = 0.0
            n_batches = 0
            for data in train_loader:
                inputs, _, _ = data
                optimizer.zero_grad()
                outputs = ae_net(inputs)
                scores = torch.sum((outputs - inputs) ** 2, dim=tuple(range(1, outputs.dim())))
                loss = torch.mean(scores)
                loss.backward()
                optimizer.step()
                loss_epoch += loss.item()
                n_batches += 1
                step_losses.append(loss.item())
            scheduler.step()
        return ae_net


class DeepSVDDTrainer:
    def __init__(self, objective, R, c, nu, lr, n_epochs, lr_milestones, batch_size, weight_decay, amsgrad=False):
        assert objective in ('one-class', 'soft-boundary'), \
            "Objective must be either 'one-class' or 'soft-boundary'."
        self.objective = objective
        self.R = torch.tensor(R)
        self.c = torch.tensor(c) if c is not None else None
        self.nu = nu
        self.warm_up_n_epochs = 1
        self.lr, self.n_epochs, self.lr_milestones = lr, n_epochs, lr_milestones
        self.batch_size, self.weight_decay, self.amsgrad = batch_size, weight_decay, amsgrad

    def train(self, train_set, net, step_losses, radii):
        train_loader = DataLoader(train_set, batch_size=self.batch_size, shuffle=True)
        optimizer = optim.Adam(net.parameters(), lr=self.lr, weight_decay=self.weight_decay, amsgrad=self.amsgrad)
        scheduler = optim.lr_scheduler.MultiStepLR(optimizer, milestones=self.lr_milestones, gamma=0.1)
        if self.c is None:
            self.c = self.init_center_c(train_loader, net)
        net.train()
        for epoch in range(self.n_epochs):
            scheduler.step()
            loss_epoch = 0.0
            n_batches = 0
            for data in train_loader:
                inputs, _, _ = data
                optimizer.zero_grad()
                outputs = net(inputs)
                dist = torch.sum((outputs - self.c) ** 2, dim=1)
                if self.objective == 'soft-boundary':
                    scores = dist - self.R ** 2
                    loss = self.R ** 2 + (1 / self.nu) * torch.mean(torch.max(torch.zeros_like(scores), scores))
                else:
                    loss = torch.mean(dist)
                loss.backward()
                optimizer.step()
                if (self.objective == 'soft-boundary') and (epoch >= self.warm_up_n_epochs):
                    self.R.data = torch.tensor(get_radius(dist, self.nu))
                    radii.append(float(self.R))
                loss_epoch += loss.item()
                n_batches += 1
                step_losses.append(loss.item())
        return net

    def test(self, test_set, net):
        test_loader = DataLoader(test_set, batch_size=self.batch_size, shuffle=False)
        idx_label_score = []
        net.eval()
        with torch.no_grad():
            for data in test_loader:
                inputs, labels, idx = data
                outputs = net(inputs)
                dist = torch.sum((outputs - self.c) ** 2, dim=1)
                if self.objective == 'soft-boundary':
                    scores = dist - self.R ** 2
                else:
                    scores = dist
                idx_label_score += list(zip(idx.cpu().data.numpy().tolist(),
                                            labels.cpu().data.numpy().tolist(),
                                            scores.cpu().data.numpy().tolist()))
        _, labels, scores = zip(*idx_label_score)
        labels = np.array(labels)
        scores = np.array(scores)
        return roc_auc_score(labels, scores), scores

    def init_center_c(self, train_loader, net, eps=0.1):
        """Initialize hypersphere center c as the mean from an initial forward pass on the data."""
        n_samples = 0
        c = torch.zeros(net.rep_dim)
        net.eval()
        with torch.no_grad():
            for data in train_loader:
                inputs, _, _ = data
                outputs = net(inputs)
                n_samples += outputs.shape[0]
                c += torch.sum(outputs, dim=0)
        c /= n_samples
        # If c_i is too close to 0, set to +-eps. Reason: a zero unit can be trivially matched with zero weights.
        c[(abs(c) < eps) & (c < 0)] = -eps
        c[(abs(c) < eps) & (c > 0)] = eps
        return c


def get_radius(dist: torch.Tensor, nu: float):
    """Optimally solve for radius R via the (1-nu)-quantile of distances."""
    return np.quantile(np.sqrt(dist.clone().data.cpu().numpy()), 1 - nu)


def init_network_weights_from_pretraining(net, ae_net):
    net_dict = net.state_dict()
    ae_net_dict = ae_net.state_dict()
    # Filter out decoder network keys
    ae_net_dict = {k: v for k, v in ae_net_dict.items() if k in net_dict}
    # Overwrite values in the existing state_dict
    net_dict.update(ae_net_dict)
    # Load the new state_dict
    net.load_state_dict(net_dict)


def main(argv=None):
    p = argparse.ArgumentParser()
    p.add_argument('--objective', default='one-class')
    p.add_argument('--nu', type=float, default=0.1)
    p.add_argument('--n_epochs', type=int, default=3)
    p.add_argument('--ae_n_epochs', type=int, default=2)
    p.add_argument('--batch_size', type=int, default=32)
    p.add_argument('--n', type=int, default=192)
    p.add_argument('--amsgrad', action='store_true')
    p.add_argument('--quiet', action='store_true')
    args = p.parse_args(argv)

    torch.manual_seed(0)
    np.random.seed(0)
    train_set = SyntheticMNISTAD(args.n, 0, True)
    test_set = SyntheticMNISTAD(96, 1, False)
    net = MNIST_LeNet()
    ae_net = MNIST_LeNet_Autoencoder()
    initial_state = {**{'net.' + k: v.clone() for k, v in net.state_dict().items()},
                     **{'ae.' + k: v.clone() for k, v in ae_net.state_dict().items()}}
    ae_losses, step_losses, radii = [], [], []
    AETrainer(1e-3, args.ae_n_epochs, [1], args.batch_size, 5e-7, args.amsgrad).train(train_set, ae_net, ae_losses)
    init_network_weights_from_pretraining(net, ae_net)
    trainer = DeepSVDDTrainer(args.objective, 0.0, None, args.nu, 1e-3, args.n_epochs, [2], args.batch_size, 5e-7,
                              args.amsgrad)
    trainer.train(train_set, net, step_losses, radii)
    auc, scores = trainer.test(test_set, net)
    return {"initial_state": initial_state, "ae_losses": ae_losses, "step_losses": step_losses, "radii": radii,
            "c": trainer.c, "auc": auc, "scores": scores}


if __name__ == '__main__':
    main()
