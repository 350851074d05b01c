"""The "Spatial Transformer Networks" tutorial: Net with a localization network (Conv2d,
MaxPool2d, ReLU(True)), the fc_loc regressor whose last Linear starts at the identity transform
(weight.data.zero_(), bias.data.copy_(torch.tensor([1, 0, 0, 0, 1, 0], dtype=torch.float))),
stn() through F.affine_grid(theta, x.size()) and F.grid_sample, the classifier with Dropout2d and
F.dropout(training=self.training), SGD(lr=0.01), nll_loss, the test loop with
F.nll_loss(size_average=False) and output.max(1, keepdim=True)[1], and visualize_stn's
convert_image_np of the input and transformed batches (torchvision's make_grid replaced by a
numpy tiling). MNIST is replaced by synthetic 28x28 images."""
from __future__ import print_function

import argparse

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim


class Net(nn.Module):
    def __init__(self):
        super(Net, self).__init__()
        self.conv1 = nn.Conv2d(1, 10, kernel_size=5)
        self.conv2 = nn.Conv2d(10, 20, kernel_size=5)
        self.conv2_drop = nn.Dropout2d()
        self.fc1 = nn.Linear(320, 50)
        self.fc2 = nn.Linear(50, 10)

        # Spatial transformer localization-network
        self.localization = nn.Sequential(
            nn.Conv2d(1, 8, kernel_size=7),
            nn.MaxPool2d(2, stride=2),
            nn.ReLU(True),
            nn.Conv2d(8, 10, kernel_size=5),
            nn.MaxPool2d(2, stride=2),
            nn.ReLU(True)
        )

        # Regressor for the 3 * 2 affine matrix
        self.fc_loc = nn.Sequential(
            nn.Linear(10 * 3 * 3, 32),
            nn.ReLU(True),
            nn.Linear(32, 3 * 2)
        )

        # Initialize the weights/bias with identity transformation
        self.fc_loc[2].weight.data.zero_()
        self.fc_loc[2].bias.data.copy_(torch.tensor([1, 0, 0, 0, 1, 0], dtype=torch.float))

    # Spatial transformer network forward function
    def stn(self, x):
        xs = self.localization(x)
        xs = xs.view(-1, 10 * 3 * 3)
        theta = self.fc_loc(xs)
        theta = theta.view(-1, 2, 3)

        grid = F.affine_grid(theta, x.size())
        x = F.grid_sample(x, grid)

        return x

    def forward(self, x):
        # transform the input
        x = self.stn(x)

        # Perform the usual forward pass
        x = F.relu(F.max_pool2d(self.conv1(x), 2))
        x = F.relu(F.max_pool2d(self.conv2_drop(self.conv2(x)), 2))
        x = x.view(-1, 320)
        x = F.relu(self.fc1(x))
        x = F.dropout(x, training=self.training)
        x = self.fc2(x)
        return F.log_softmax(x, dim=1)


def synthetic_mnist(n, seed):
    """Class-dependent strokes, shifted and scaled at random (what the STN should undo)."""
    rng = np.random.RandomState(seed)
    labels = rng.randint(0, 10, size=n)
    images = rng.rand(n, 1, 28, 28).astype(np.float32) * 0.1
    for k, c in enumerate(labels):
        dy, dx = rng.randint(-3, 4, size=2)
        top, left = 6 + dy, 6 + dx
        images[k, 0, top + c, left:left + 16] = 1.0
        images[k, 0, top:top + 16, left + (c * 7) % 16] = 1.0
    images = (images - 0.1307) / 0.3081
    return torch.tensor(images), torch.tensor(labels)


def make_grid(tensor, nrow=8, padding=2):
    """torchvision.utils.make_grid for a [B, C, H, W] batch, in numpy."""
    b, c, h, w = tensor.shape
    if c == 1:
        tensor = np.concatenate([tensor] * 3, 1)
    xmaps = min(nrow, b)
    ymaps = int(np.ceil(float(b) / xmaps))
    grid = np.zeros((3, ymaps * (h + padding) + padding, xmaps * (w + padding) + padding), tensor.dtype)
    for k in range(b):
        y, x = divmod(k, xmaps)
        grid[:, y * (h + padding) + padding:(y + 1) * (h + padding),
             x * (w + padding) + padding:(x + 1) * (w + padding)] = tensor[k]
    return grid


def convert_image_np(inp):
    """Convert a Tensor to numpy image."""
    inp = inp.transpose((1, 2, 0))
    mean = np.array([0.485, 0.456, 0.406])
    std = np.array([0.229, 0.224, 0.225])
    inp = std * inp + mean
    inp = np.clip(inp, 0, 1)
    return inp


def main(argv=None):
    parser = argparse.ArgumentParser()
    parser.add_argument('--epochs', type=int, default=20)
    parser.add_argument('--batch-size', type=int, default=64)
    parser.add_argument('--train-size', type=int, default=60000)
    parser.add_argument('--test-size', type=int, default=10000)
    parser.add_argument('--log-interval', type=int, default=500)
    parser.add_argument('--seed', type=int, default=0)
    parser.add_argument('--quiet', action='store_true')
    args = parser.parse_args(argv)
    log = (lambda *a: None) if args.quiet else print

    torch.manual_seed(args.seed)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")

    # Training dataset
    train_loader = torch.utils.data.DataLoader(
        torch.utils.data.TensorDataset(*synthetic_mnist(args.train_size, 0)),
        batch_size=args.batch_size, shuffle=True, num_workers=0)
    # Test dataset
    test_loader = torch.utils.data.DataLoader(
        torch.utils.data.TensorDataset(*synthetic_mnist(args.test_size, 1)),
        batch_size=args.batch_size, shuffle=True, num_workers=0)

    model = Net().to(device)
    initial_state = {k: v.clone() for k, v in model.state_dict().items()}
    optimizer = optim.SGD(model.parameters(), lr=0.01)
    step_losses, tests = [], []

    def train(epoch):
        model.train()
        for batch_idx, (data, target) in enumerate(train_loader):
            data, target = data.to(device), target.to(device)

            optimizer.zero_grad()
            output = model(data)
            loss = F.nll_loss(output, target)
            loss.backward()
            optimizer.step()
            step_losses.append(loss.item())
            if batch_idx % args.log_interval == 0:
                log('Train Epoch: {} [{}/{} ({:.0f}%)]\tLoss: {:.6f}'.format(
                    epoch, batch_idx * len(data), len(train_loader.dataset),
                    100. * batch_idx / len(train_loader), loss.item()))

    # A simple test procedure to measure the STN performances on MNIST.
    def test():
        with torch.no_grad():
            model.eval()
            test_loss = 0
            correct = 0
            for data, target in test_loader:
                data, target = data.to(device), target.to(device)
                output = model(data)

                # sum up batch loss
                test_loss += F.nll_loss(output, target, size_average=False).item()
                # get the index of the max log-probability
                pred = output.max(1, keepdim=True)[1]
                correct += pred.eq(target.view_as(pred)).sum().item()

            test_loss /= len(test_loader.dataset)
            log('\nTest set: Average loss: {:.4f}, Accuracy: {}/{} ({:.0f}%)\n'
                .format(test_loss, correct, len(test_loader.dataset),
                        100. * correct / len(test_loader.dataset)))
            tests.append((test_loss, correct))

    # We want to visualize the output of the spatial transformers layer
    # after the training, we visualize a batch of input images and
    # the corresponding transformed batch using STN.
    def visualize_stn():
        with torch.no_grad():
            # Get a batch of training data
            data = next(iter(test_loader))[0].to(device)

            input_tensor = data.cpu()
            transformed_input_tensor = model.stn(data).cpu()

            in_grid = convert_image_np(make_grid(input_tensor.numpy()))
            out_grid = convert_image_np(make_grid(transformed_input_tensor.numpy()))
            return in_grid, out_grid

    for epoch in range(1, args.epochs + 1):
        train(epoch)
        test()

    in_grid, out_grid = visualize_stn()
    return {"initial_state": initial_state, "step_losses": step_losses, "tests": tests,
            "in_grid": in_grid, "out_grid": out_grid}


if __name__ == '__main__':
    main()
