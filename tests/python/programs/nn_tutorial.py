"""The "What is torch.nn really?" tutorial: MNIST logistic regression from scratch (weights from
torch.randn / math.sqrt(784) with requires_grad_(), log_softmax by x - x.exp().sum(-1).log().
unsqueeze(-1), nll by input[range(n), target].mean(), accuracy), then refactored step by step:
F.cross_entropy, nn.Module with nn.Parameter, nn.Linear, optim, TensorDataset, DataLoader,
get_data/fit/loss_batch with validation, a CNN with F.avg_pool2d, nn.Sequential with a Lambda
module and nn.AdaptiveAvgPool2d, SGD with momentum and a WrappedDataLoader. The pickled MNIST
file is replaced by synthetic numpy arrays mapped through torch.tensor."""
import argparse
import math

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn
from torch import optim
from torch.utils.data import DataLoader, TensorDataset


def synthetic_mnist(n, seed):
    rng = np.random.RandomState(seed)
    y = rng.randint(0, 10, size=n)
    x = rng.rand(n, 784).astype(np.float32) * 0.3
    for k, c in enumerate(y):
        x[k, 28 * (2 + 2 * c):28 * (2 + 2 * c) + 28] = 0.9
    return x, y


class Mnist_Logistic(nn.Module):
    def __init__(self):
        super().__init__()
        self.weights = nn.Parameter(torch.randn(784, 10) / math.sqrt(784))
        self.bias = nn.Parameter(torch.zeros(10))

    def forward(self, xb):
        return xb @ self.weights + self.bias


class Mnist_Logistic_Linear(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(784, 10)

    def forward(self, xb):
        return self.lin(xb)


class Mnist_CNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 16, kernel_size=3, stride=2, padding=1)
        self.conv2 = nn.Conv2d(16, 16, kernel_size=3, stride=2, padding=1)
        self.conv3 = nn.Conv2d(16, 10, kernel_size=3, stride=2, padding=1)

    def forward(self, xb):
        xb = xb.view(-1, 1, 28, 28)
        xb = F.relu(self.conv1(xb))
        xb = F.relu(self.conv2(xb))
        xb = F.relu(self.conv3(xb))
        xb = F.avg_pool2d(xb, 4)
        return xb.view(-1, xb.size(1))


class Lambda(nn.Module):
    def __init__(self, func):
        super().__init__()
        self.func = func

    def forward(self, x):
        return self.func(x)


def preprocess(x, y):
    return x.view(-1, 1, 28, 28), y


class WrappedDataLoader:
    def __init__(self, dl, func):
        self.dl = dl
        self.func = func

    def __len__(self):
        return len(self.dl)

    def __iter__(self):
        for b in self.dl:
            yield (self.func(*b))


def main(argv=None):
    parser = argparse.ArgumentParser()
    parser.add_argument("--n-train", type=int, default=50000)
    parser.add_argument("--n-valid", type=int, default=10000)
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--quiet", action="store_true")
    args = parser.parse_args(argv)
    log = (lambda *a: None) if args.quiet else print
    torch.manual_seed(0)

    x_train, y_train, x_valid, y_valid = map(torch.tensor, synthetic_mnist(args.n_train, 0) +
                                             synthetic_mnist(args.n_valid, 1))
    n, c = x_train.shape
    log(x_train, y_train)
    log(x_train.shape)
    log(y_train.min(), y_train.max())
    step_losses = []
    initial_state = {}

    # from scratch
    weights = torch.randn(784, 10) / math.sqrt(784)
    weights.requires_grad_()
    bias = torch.zeros(10, requires_grad=True)
    initial_state["weights"] = weights.detach().clone()

    def log_softmax(x):
        return x - x.exp().sum(-1).log().unsqueeze(-1)

    def model(xb):
        return log_softmax(xb @ weights + bias)

    bs = 64
    xb = x_train[0:bs]
    preds = model(xb)
    log(preds[0], preds.shape)

    def nll(input, target):
        return -input[range(target.shape[0]), target].mean()

    loss_func = nll
    yb = y_train[0:bs]
    first_loss = loss_func(preds, yb).item()

    def accuracy(out, yb):
        preds = torch.argmax(out, dim=1)
        return (preds == yb).float().mean()

    first_acc = accuracy(preds, yb).item()
    lr = 0.5
    epochs = args.epochs
    for epoch in range(epochs):
        for i in range((n - 1) // bs + 1):
            start_i = i * bs
            end_i = start_i + bs
            xb = x_train[start_i:end_i]
            yb = y_train[start_i:end_i]
            pred = model(xb)
            loss = loss_func(pred, yb)
            step_losses.append(loss.item())
            loss.backward()
            with torch.no_grad():
                weights -= weights.grad * lr
                bias -= bias.grad * lr
                weights.grad.zero_()
                bias.grad.zero_()
    scratch = (loss_func(model(xb), yb).item(), accuracy(model(xb), yb).item())

    # F.cross_entropy, nn.Module, nn.Linear, optim, Dataset, DataLoader
    loss_func = F.cross_entropy

    def get_model():
        model = Mnist_Logistic_Linear()
        return model, optim.SGD(model.parameters(), lr=lr)

    model_m = Mnist_Logistic()
    initial_state["logistic.weights"] = model_m.weights.detach().clone()
    train_ds = TensorDataset(x_train, y_train)
    valid_ds = TensorDataset(x_valid, y_valid)

    def get_data(train_ds, valid_ds, bs):
        return (
            DataLoader(train_ds, batch_size=bs, shuffle=True),
            DataLoader(valid_ds, batch_size=bs * 2),
        )

    def loss_batch(model, loss_func, xb, yb, opt=None):
        loss = loss_func(model(xb), yb)
        if opt is not None:
            loss.backward()
            opt.step()
            opt.zero_grad()
        return loss.item(), len(xb)

    val_history = []

    def fit(epochs, model, loss_func, opt, train_dl, valid_dl):
        for epoch in range(epochs):
            model.train()
            for xb, yb in train_dl:
                step_losses.append(loss_batch(model, loss_func, xb, yb, opt)[0])
            model.eval()
            with torch.no_grad():
                losses, nums = zip(*[loss_batch(model, loss_func, xb, yb) for xb, yb in valid_dl])
            val_loss = np.sum(np.multiply(losses, nums)) / np.sum(nums)
            log(epoch, val_loss)
            val_history.append(float(val_loss))

    train_dl, valid_dl = get_data(train_ds, valid_ds, bs)
    opt = optim.SGD(model_m.parameters(), lr=lr)
    fit(epochs, model_m, loss_func, opt, train_dl, valid_dl)
    model, opt = get_model()
    initial_state["linear.weight"] = model.lin.weight.detach().clone()
    fit(epochs, model, loss_func, opt, train_dl, valid_dl)

    # CNN
    lr = 0.1
    model = Mnist_CNN()
    initial_state["cnn.conv1.weight"] = model.conv1.weight.detach().clone()
    opt = optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    fit(epochs, model, loss_func, opt, train_dl, valid_dl)

    # nn.Sequential with Lambda, WrappedDataLoader, AdaptiveAvgPool2d
    train_dl, valid_dl = get_data(train_ds, valid_ds, bs)
    train_dl = WrappedDataLoader(train_dl, preprocess)
    valid_dl = WrappedDataLoader(valid_dl, preprocess)
    model = nn.Sequential(
        nn.Conv2d(1, 16, kernel_size=3, stride=2, padding=1),
        nn.ReLU(),
        nn.Conv2d(16, 16, kernel_size=3, stride=2, padding=1),
        nn.ReLU(),
        nn.Conv2d(16, 10, kernel_size=3, stride=2, padding=1),
        nn.ReLU(),
        nn.AdaptiveAvgPool2d(1),
        Lambda(lambda x: x.view(x.size(0), -1)),
    )
    initial_state["seq.0.weight"] = model[0].weight.detach().clone()
    opt = optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    fit(epochs, model, loss_func, opt, train_dl, valid_dl)
    return {"initial_state": initial_state, "step_losses": step_losses, "first": (first_loss, first_acc),
            "scratch": scratch, "val_history": val_history}


if __name__ == "__main__":
    main()
