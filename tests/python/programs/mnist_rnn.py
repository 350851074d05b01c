"""pytorch/examples mnist_rnn/main.py: Net reads an image's 28 rows as a sequence (nn.LSTM(28, 64,
batch_first=True), the last step's output, BatchNorm1d, Dropout2d on 2-D activations, two Linear,
log_softmax), train/test with nll_loss, Adadelta with StepLR(step_size=1, gamma=0.7). MNIST is
replaced by synthetic 28x28 images (a class-dependent stroke plus noise), normalised as
transforms.Normalize((0.1307,), (0.3081,)) would."""
from __future__ import print_function

import argparse
import os
import tempfile

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim
from torch.optim.lr_scheduler import StepLR


class Net(nn.Module):
    def __init__(self):
        super(Net, self).__init__()
        self.rnn = nn.LSTM(input_size=28, hidden_size=64, batch_first=True)
        self.batchnorm = nn.BatchNorm1d(64)
        self.dropout1 = nn.Dropout2d(0.25)
        self.dropout2 = nn.Dropout2d(0.5)
        self.fc1 = nn.Linear(64, 32)
        self.fc2 = nn.Linear(32, 10)

    def forward(self, input):
        # Shape of input is (batch_size,1, 28, 28)
        # converting shape of input to (batch_size, 28, 28)
        # as required by RNN when batch_first is set True
        input = input.reshape(-1, 28, 28)
        output, hidden = self.rnn(input)

        # RNN output shape is (seq_len, batch, input_size)
        # Get last output of RNN
        output = output[:, -1, :]
        output = self.batchnorm(output)
        output = self.dropout1(output)
        output = self.fc1(output)
        output = F.relu(output)
        output = self.dropout2(output)
        output = self.fc2(output)
        output = F.log_softmax(output, dim=1)
        return output


def synthetic_mnist(n, seed):
    """uint8-like images in [0, 1] (as ToTensor gives) then Normalize((0.1307,), (0.3081,))."""
    rng = np.random.RandomState(seed)
    labels = rng.randint(0, 10, size=n)
    images = rng.rand(n, 1, 28, 28).astype(np.float32) * 0.2
    for k, c in enumerate(labels):
        row = 3 + 2 * c
        images[k, 0, row:row + 2, 4:24] = 1.0
        images[k, 0, 4:24, 3 + c:5 + c] = 0.8
    images = np.round(images * 255) / 255
    images = (images - 0.1307) / 0.3081
    return torch.tensor(images, dtype=torch.float32), torch.tensor(labels, dtype=torch.int64)


def train(args, model, device, train_loader, optimizer, epoch, log, step_losses):
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
            if args.dry_run:
                break


def test(model, device, test_loader, log):
    model.eval()
    test_loss = 0
    correct = 0
    with torch.no_grad():
        for data, target in test_loader:
            data, target = data.to(device), target.to(device)
            output = model(data)
            test_loss += F.nll_loss(output, target, reduction='sum').item()  # sum up batch loss
            pred = output.argmax(dim=1, keepdim=True)  # get the index of the max log-probability
            correct += pred.eq(target.view_as(pred)).sum().item()

    test_loss /= len(test_loader.dataset)

    log('\nTest set: Average loss: {:.4f}, Accuracy: {}/{} ({:.0f}%)\n'.format(
        test_loss, correct, len(test_loader.dataset),
        100. * correct / len(test_loader.dataset)))
    return test_loss, correct


def main(argv=None):
    # Training settings
    parser = argparse.ArgumentParser(description='PyTorch MNIST Example using RNN')
    parser.add_argument('--batch-size', type=int, default=64, metavar='N',
                        help='input batch size for training (default: 64)')
    parser.add_argument('--test-batch-size', type=int, default=1000, metavar='N',
                        help='input batch size for testing (default: 1000)')
    parser.add_argument('--epochs', type=int, default=14, metavar='N',
                        help='number of epochs to train (default: 14)')
    parser.add_argument('--lr', type=float, default=0.1, metavar='LR',
                        help='learning rate (default: 0.1)')
    parser.add_argument('--gamma', type=float, default=0.7, metavar='M',
                        help='Learning rate step gamma (default: 0.7)')
    parser.add_argument('--no-cuda', action='store_true', default=False,
                        help='disables CUDA training')
    parser.add_argument('--no-mps', action='store_true', default=False,
                        help='disables macOS GPU training')
    parser.add_argument('--dry-run', action='store_true', default=False,
                        help='quickly check a single pass')
    parser.add_argument('--seed', type=int, default=1, metavar='S',
                        help='random seed (default: 1)')
    parser.add_argument('--log-interval', type=int, default=10, metavar='N',
                        help='how many batches to wait before logging training status')
    parser.add_argument('--save-model', action='store_true', default=False,
                        help='For Saving the current Model')
    parser.add_argument('--train-size', type=int, default=60000)
    parser.add_argument('--test-size', type=int, default=10000)
    parser.add_argument('--quiet', action='store_true')
    args = parser.parse_args(argv)
    log = (lambda *a: None) if args.quiet else print
    use_cuda = not args.no_cuda and torch.cuda.is_available()
    use_mps = not args.no_mps and torch.backends.mps.is_available()

    torch.manual_seed(args.seed)

    if use_cuda:
        device = torch.device("cuda")
    elif use_mps:
        device = torch.device("mps")
    else:
        device = torch.device("cpu")

    train_kwargs = {'batch_size': args.batch_size}
    test_kwargs = {'batch_size': args.test_batch_size}
    if use_cuda:
        cuda_kwargs = {'num_workers': 1,
                       'pin_memory': True,
                       'shuffle': True}
        train_kwargs.update(cuda_kwargs)
        test_kwargs.update(cuda_kwargs)

    dataset1 = torch.utils.data.TensorDataset(*synthetic_mnist(args.train_size, 0))
    dataset2 = torch.utils.data.TensorDataset(*synthetic_mnist(args.test_size, 1))
    train_loader = torch.utils.data.DataLoader(dataset1, **train_kwargs)
    test_loader = torch.utils.data.DataLoader(dataset2, **test_kwargs)

    model = Net().to(device)
    initial_state = {k: v.clone() for k, v in model.state_dict().items()}
    optimizer = optim.Adadelta(model.parameters(), lr=args.lr)

    step_losses, tests, lrs = [], [], []
    scheduler = StepLR(optimizer, step_size=1, gamma=args.gamma)
    for epoch in range(1, args.epochs + 1):
        train(args, model, device, train_loader, optimizer, epoch, log, step_losses)
        tests.append(test(model, device, test_loader, log))
        scheduler.step()
        lrs.append(scheduler.get_last_lr()[0])

    saved = None
    if args.save_model:
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "mnist_rnn.pt")
            torch.save(model.state_dict(), path)
            saved = torch.load(path)
    return {"initial_state": initial_state, "step_losses": step_losses, "tests": tests, "lrs": lrs,
            "saved": saved, "final_state": model.state_dict()}


if __name__ == '__main__':
    main()
