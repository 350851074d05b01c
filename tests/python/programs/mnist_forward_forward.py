"""pytorch/examples mnist_forward_forward/main.py (Hinton's Forward-Forward algorithm): Layer subclasses
nn.Linear (super().__init__(in, out, bias, device, dtype)) with its own Adam and a train() that shadows
Module.train, goodness h.pow(2).mean(1), loss log(1 + exp(cat([-g_pos + t, g_neg - t]))).mean(),
x / (x.norm(2, 1, keepdim=True) + 1e-4), torch.mm(x, self.weight.T) + self.bias.unsqueeze(0);
overlay_y_on_x (x_[:, :classes] *= 0.0, x_[range(n), y] = x.max()), get_y_neg (list.remove,
torch.tensor(allowed)[torch.randint(...)].item()), predict by argmax over the summed goodness; Net
keeps its layers in a Python list. MNIST and torchvision's Compose(ToTensor, Normalize, Lambda(flatten))
are replaced by synthetic digits normalised and flattened the same way. The harness seeds torch (the
example does not) and returns the losses."""
import argparse
import numpy as np
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset
from torch.optim import Adam


def get_y_neg(y):
    y_neg = y.clone()
    for idx, y_samp in enumerate(y):
        allowed_indices = list(range(10))
        allowed_indices.remove(y_samp.item())
        y_neg[idx] = torch.tensor(allowed_indices)[
            torch.randint(len(allowed_indices), size=(1,))
        ].item()
    return y_neg.to(device)


def overlay_y_on_x(x, y, classes=10):
    x_ = x.clone()
    x_[:, :classes] *= 0.0
    x_[range(x.shape[0]), y] = x.max()
    return x_


class Net(torch.nn.Module):
    def __init__(self, dims):

        super().__init__()
        self.layers = []
        for d in range(len(dims) - 1):
            self.layers = self.layers + [Layer(dims[d], dims[d + 1]).to(device)]

    def predict(self, x):
        goodness_per_label = []
        for label in range(10):
            h = overlay_y_on_x(x, label)
            goodness = []
            for layer in self.layers:
                h = layer(h)
                goodness = goodness + [h.pow(2).mean(1)]
            goodness_per_label += [sum(goodness).unsqueeze(1)]
        goodness_per_label = torch.cat(goodness_per_label, 1)
        return goodness_per_label.argmax(1)

    def train(self, x_pos, x_neg):
        h_pos, h_neg = x_pos, x_neg
        for i, layer in enumerate(self.layers):
            log("training layer: ", i)
            h_pos, h_neg = layer.train(h_pos, h_neg)


class Layer(nn.Linear):
    def __init__(self, in_features, out_features, bias=True, device=None, dtype=None):
        super().__init__(in_features, out_features, bias, device, dtype)
        self.relu = torch.nn.ReLU()
        self.opt = Adam(self.parameters(), lr=args.lr)
        self.threshold = args.threshold
        self.num_epochs = args.epochs

    def forward(self, x):
        x_direction = x / (x.norm(2, 1, keepdim=True) + 1e-4)
        return self.relu(torch.mm(x_direction, self.weight.T) + self.bias.unsqueeze(0))

    def train(self, x_pos, x_neg):
        for i in range(self.num_epochs):
            g_pos = self.forward(x_pos).pow(2).mean(1)
            g_neg = self.forward(x_neg).pow(2).mean(1)
            # The following loss pushes pos (neg) samples to
            # values larger (smaller) than the self.threshold.
            loss = torch.log(
                1
                + torch.exp(
                    torch.cat([-g_pos + self.threshold, g_neg - self.threshold])
                )
            ).mean()
            self.opt.zero_grad()
            # this backward just compute the derivative and hence
            # is not considered backpropagation.
            loss.backward()
            self.opt.step()
            step_losses.append(loss.item())
            if i % args.log_interval == 0:
                log("Loss: ", loss.item())
        return self.forward(x_pos).detach(), self.forward(x_neg).detach()


class SyntheticMNIST(Dataset):
    """MNIST(...) with transform=Compose([ToTensor(), Normalize((0.1307,), (0.3081,)),
    Lambda(lambda x: torch.flatten(x))]): (784,) float images and int labels."""

    def __init__(self, root, train=True, download=False, n=0):
        rng = np.random.RandomState(0 if train else 1)
        self.targets = rng.randint(0, 10, size=n)
        images = rng.randint(0, 50, size=(n, 1, 28, 28)).astype(np.uint8)
        for k, c in enumerate(self.targets):
            images[k, 0, 3 + 2 * c:5 + 2 * c, 4:24] = 255
            images[k, 0, 4:24, 3 + c:5 + c] = 200
        self.data = images

    def __len__(self):
        return len(self.targets)

    def __getitem__(self, i):
        x = torch.tensor(self.data[i].astype(np.float32) / 255)  # ToTensor
        x = (x - 0.1307) / 0.3081  # Normalize
        return torch.flatten(x), int(self.targets[i])  # Lambda


def log(*a):
    if not args.quiet:
        print(*a)


def main(argv=None):
    global args, device, step_losses
    parser = argparse.ArgumentParser()
    parser.add_argument(
        "--epochs",
        type=int,
        default=1000,
        metavar="N",
        help="number of epochs to train (default: 1000)",
    )
    parser.add_argument(
        "--lr",
        type=float,
        default=0.03,
        metavar="LR",
        help="learning rate (default: 0.03)",
    )
    parser.add_argument(
        "--no_cuda", action="store_true", default=False, help="disables CUDA training"
    )
    parser.add_argument(
        "--no_mps", action="store_true", default=False, help="disables MPS training"
    )
    parser.add_argument(
        "--seed", type=int, default=1, metavar="S", help="random seed (default: 1)"
    )
    parser.add_argument(
        "--save_model",
        action="store_true",
        default=False,
        help="For saving the current Model",
    )
    parser.add_argument(
        "--train_size", type=int, default=50000, help="size of training set"
    )
    parser.add_argument(
        "--threshold", type=float, default=2, help="threshold for training"
    )
    parser.add_argument("--test_size", type=int, default=10000, help="size of test set")
    parser.add_argument(
        "--log-interval",
        type=int,
        default=10,
        metavar="N",
        help="how many batches to wait before logging training status",
    )
    parser.add_argument("--dims", type=int, nargs="+", default=[784, 500, 500])
    parser.add_argument("--quiet", action="store_true")
    args = parser.parse_args(argv)
    use_cuda = not args.no_cuda and torch.cuda.is_available()
    use_mps = not args.no_mps and torch.backends.mps.is_available()
    if use_cuda:
        device = torch.device("cuda")
    elif use_mps:
        device = torch.device("mps")
    else:
        device = torch.device("cpu")
    torch.manual_seed(args.seed)  # (harness)

    train_kwargs = {"batch_size": args.train_size}
    test_kwargs = {"batch_size": args.test_size}

    if use_cuda:
        cuda_kwargs = {"num_workers": 1, "pin_memory": True, "shuffle": True}
        train_kwargs.update(cuda_kwargs)
        test_kwargs.update(cuda_kwargs)

    train_loader = DataLoader(SyntheticMNIST("./data/", train=True, download=True, n=args.train_size),
                              **train_kwargs)
    test_loader = DataLoader(SyntheticMNIST("./data/", train=False, download=True, n=args.test_size),
                             **test_kwargs)
    net = Net(args.dims)
    initial_state = {"layer%d.%s" % (i, k): v.clone() for i, layer in enumerate(net.layers)
                     for k, v in layer.state_dict().items()}
    step_losses = []
    x, y = next(iter(train_loader))
    x, y = x.to(device), y.to(device)
    x_pos = overlay_y_on_x(x, y)
    y_neg = get_y_neg(y)
    x_neg = overlay_y_on_x(x, y_neg)
    net.train(x_pos, x_neg)
    train_error = 1.0 - net.predict(x).eq(y).float().mean().item()
    log("train error:", train_error)
    x_te, y_te = next(iter(test_loader))
    x_te, y_te = x_te.to(device), y_te.to(device)
    test_error = 1.0 - net.predict(x_te).eq(y_te).float().mean().item()
    log("test error:", test_error)
    return {"initial_state": initial_state, "step_losses": step_losses, "y_neg": y_neg.tolist(),
            "train_error": train_error, "test_error": test_error, "net_state": list(net.state_dict())}


if __name__ == "__main__":
    main()
