"""pytorch/examples super_resolution (model.py + main.py): the sub-pixel CNN (four Conv2d, ReLU,
nn.PixelShuffle(upscale_factor)) initialised by init.orthogonal_ with init.calculate_gain('relu'),
Adam, MSELoss, PSNR = 10 * log10(1 / mse) on the test set, torch.save(model, path) checkpoints
each epoch. BSDS300 is replaced by synthetic images: targets of crop x crop pixels and inputs
downscaled by the upscale factor (block means), as the example's Y channels would be."""
from __future__ import print_function

import argparse
import os
import tempfile
from math import log10

import numpy as np
import torch
import torch.nn as nn
import torch.nn.init as init
import torch.optim as optim
from torch.utils.data import DataLoader, TensorDataset


class Net(nn.Module):
    def __init__(self, upscale_factor):
        super(Net, self).__init__()

        self.relu = nn.ReLU()
        self.conv1 = nn.Conv2d(1, 64, (5, 5), (1, 1), (2, 2))
        self.conv2 = nn.Conv2d(64, 64, (3, 3), (1, 1), (1, 1))
        self.conv3 = nn.Conv2d(64, 32, (3, 3), (1, 1), (1, 1))
        self.conv4 = nn.Conv2d(32, upscale_factor ** 2, (3, 3), (1, 1), (1, 1))
        self.pixel_shuffle = nn.PixelShuffle(upscale_factor)

        self._initialize_weights()

    def forward(self, x):
        x = self.relu(self.conv1(x))
        x = self.relu(self.conv2(x))
        x = self.relu(self.conv3(x))
        x = self.pixel_shuffle(self.conv4(x))
        return x

    def _initialize_weights(self):
        init.orthogonal_(self.conv1.weight, init.calculate_gain('relu'))
        init.orthogonal_(self.conv2.weight, init.calculate_gain('relu'))
        init.orthogonal_(self.conv3.weight, init.calculate_gain('relu'))
        init.orthogonal_(self.conv4.weight)


def synthetic_set(n, crop, upscale, seed):
    rng = np.random.RandomState(seed)
    yy, xx = np.mgrid[0:crop, 0:crop] / float(crop)
    targets = np.empty((n, 1, crop, crop), np.float32)
    for k in range(n):
        fy, fx, ph = rng.uniform(0.5, 3, size=3)
        targets[k, 0] = 0.5 + 0.4 * np.sin(2 * np.pi * (fy * yy + fx * xx) + ph) * np.cos(3 * ph * xx)
    small = crop // upscale
    inputs = targets.reshape(n, 1, small, upscale, small, upscale).mean(axis=(3, 5)).astype(np.float32)
    return TensorDataset(torch.tensor(inputs), torch.tensor(targets))


def main(argv=None):
    # Training settings
    parser = argparse.ArgumentParser(description='PyTorch Super Res Example')
    parser.add_argument('--upscale_factor', type=int, default=3, help="super resolution upscale factor")
    parser.add_argument('--batchSize', type=int, default=64, help='training batch size')
    parser.add_argument('--testBatchSize', type=int, default=10, help='testing batch size')
    parser.add_argument('--nEpochs', type=int, default=2, help='number of epochs to train for')
    parser.add_argument('--lr', type=float, default=0.01, help='Learning Rate. Default=0.01')
    parser.add_argument('--cuda', action='store_true', help='use cuda?')
    parser.add_argument('--mps', action='store_true', default=False, help='enables macOS GPU training')
    parser.add_argument('--threads', type=int, default=4, help='number of threads for data loader to use')
    parser.add_argument('--seed', type=int, default=123, help='random seed to use. Default=123')
    parser.add_argument('--crop', type=int, default=24)
    parser.add_argument('--n-train', type=int, default=200)
    parser.add_argument('--n-test', type=int, default=100)
    parser.add_argument('--quiet', action='store_true')
    opt = parser.parse_args(argv)
    log = (lambda *a: None) if opt.quiet else print
    log(opt)

    if opt.cuda and not torch.cuda.is_available():
        raise Exception("No GPU found, please run without --cuda")
    if not opt.mps and torch.backends.mps.is_available():
        raise Exception("Found mps device, please run with --mps to enable macOS GPU")

    torch.manual_seed(opt.seed)
    use_mps = opt.mps and torch.backends.mps.is_available()

    if opt.cuda:
        device = torch.device("cuda")
    elif use_mps:
        device = torch.device("mps")
    else:
        device = torch.device("cpu")

    log('===> Loading datasets')
    train_set = synthetic_set(opt.n_train, opt.crop, opt.upscale_factor, 0)
    test_set = synthetic_set(opt.n_test, opt.crop, opt.upscale_factor, 1)
    training_data_loader = DataLoader(dataset=train_set, num_workers=0, batch_size=opt.batchSize, shuffle=True)
    testing_data_loader = DataLoader(dataset=test_set, num_workers=0, batch_size=opt.testBatchSize, shuffle=False)

    log('===> Building model')
    model = Net(upscale_factor=opt.upscale_factor).to(device)
    initial_state = {k: v.clone() for k, v in model.state_dict().items()}
    criterion = nn.MSELoss()

    optimizer = optim.Adam(model.parameters(), lr=opt.lr)
    step_losses, epoch_losses, psnrs = [], [], []
    tmp = tempfile.TemporaryDirectory()

    def train(epoch):
        epoch_loss = 0
        for iteration, batch in enumerate(training_data_loader, 1):
            input, target = batch[0].to(device), batch[1].to(device)

            optimizer.zero_grad()
            loss = criterion(model(input), target)
            epoch_loss += loss.item()
            step_losses.append(loss.item())
            loss.backward()
            optimizer.step()

            log("===> Epoch[{}]({}/{}): Loss: {:.4f}".format(epoch, iteration, len(training_data_loader),
                                                              loss.item()))

        log("===> Epoch {} Complete: Avg. Loss: {:.4f}".format(epoch, epoch_loss / len(training_data_loader)))
        epoch_losses.append(epoch_loss / len(training_data_loader))

    def test():
        avg_psnr = 0
        with torch.no_grad():
            for batch in testing_data_loader:
                input, target = batch[0].to(device), batch[1].to(device)

                prediction = model(input)
                mse = criterion(prediction, target)
                psnr = 10 * log10(1 / mse.item())
                avg_psnr += psnr
        log("===> Avg. PSNR: {:.4f} dB".format(avg_psnr / len(testing_data_loader)))
        psnrs.append(avg_psnr / len(testing_data_loader))

    def checkpoint(epoch):
        model_out_path = os.path.join(tmp.name, "model_epoch_{}.pth".format(epoch))
        torch.save(model, model_out_path)
        log("Checkpoint saved to {}".format(model_out_path))
        return model_out_path

    path = None
    for epoch in range(1, opt.nEpochs + 1):
        train(epoch)
        test()
        path = checkpoint(epoch)

    reloaded = torch.load(path)
    same = all(torch.equal(a, b) for a, b in zip(reloaded.state_dict().values(), model.state_dict().values()))
    tmp.cleanup()
    return {"initial_state": initial_state, "step_losses": step_losses, "epoch_losses": epoch_losses,
            "psnrs": psnrs, "reloaded_same": same, "reloaded_type": type(reloaded).__name__}


if __name__ == "__main__":
    main()
