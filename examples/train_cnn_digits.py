"""Train a small CNN on scikit-learn's 8x8 digits with kiln, written as PyTorch code.

    tools/demo.sh            (or: PYTHONPATH=bazel-bin /usr/bin/python3 examples/train_cnn_digits.py)

conv -> batchnorm -> relu -> maxpool, twice, then a linear layer; Adam; batches from a
DataLoader. After training, the weights are saved in the safetensors format, loaded into a
fresh model, and the held-out accuracy is checked again. Prints the time per epoch.
"""
import argparse
import os
import sys
import tempfile
import time

import numpy as np
from sklearn.datasets import load_digits

import kiln as torch
import kiln.nn as nn
import kiln.nn.functional as F
from kiln.utils.data import DataLoader, TensorDataset


class DigitsCNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(1, 16, kernel_size=3, padding=1), nn.BatchNorm2d(16), nn.ReLU(), nn.MaxPool2d(2),   # 16x4x4
            nn.Conv2d(16, 32, kernel_size=3, padding=1), nn.BatchNorm2d(32), nn.ReLU(), nn.MaxPool2d(2),  # 32x2x2
        )
        self.classifier = nn.Linear(32 * 2 * 2, 10)

    def forward(self, x):
        return self.classifier(torch.flatten(self.features(x), 1))


def load_data(seed):
    digits = load_digits()
    x = (digits.images.astype(np.float32) / 16.0)[:, None]  # (N, 1, 8, 8), pixels in [0, 1]
    y = digits.target.astype(np.int64)
    order = np.random.default_rng(seed).permutation(len(x))
    x, y = x[order], y[order]
    n_test = len(x) // 5
    return (torch.tensor(x[n_test:]), torch.tensor(y[n_test:])), (torch.tensor(x[:n_test]), torch.tensor(y[:n_test]))


def accuracy(model, x, y):
    model.eval()
    with torch.no_grad():
        pred = model(x).argmax(dim=1)
    return (pred == y).float().mean().item()


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--epochs", type=int, default=15)
    ap.add_argument("--batch-size", type=int, default=32)
    ap.add_argument("--lr", type=float, default=3e-3)
    ap.add_argument("--weights", default=None, help="where to save the weights (default: a temporary file)")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()

    torch.manual_seed(args.seed)
    (x_train, y_train), (x_test, y_test) = load_data(seed=0)
    loader = DataLoader(TensorDataset(x_train, y_train), batch_size=args.batch_size, shuffle=True)
    model = DigitsCNN()
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=args.epochs)
    print(model)

    epoch_times = []
    for epoch in range(args.epochs):
        model.train()
        start = time.perf_counter()
        total, batches = 0.0, 0
        for xb, yb in loader:
            loss = F.cross_entropy(model(xb), yb)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            total += loss.item()
            batches += 1
        scheduler.step()
        epoch_times.append(time.perf_counter() - start)
        print(f"epoch {epoch + 1:2d}/{args.epochs}  loss {total / batches:.4f}  "
              f"test acc {accuracy(model, x_test, y_test):.3f}  ({epoch_times[-1] * 1000:.0f} ms)")

    acc = accuracy(model, x_test, y_test)
    print(f"held-out test accuracy: {acc * 100:.2f}% ({x_test.shape[0]} images), "
          f"{np.median(epoch_times) * 1000:.0f} ms per epoch (median of {args.epochs})")

    # Save the weights as safetensors, load them into a fresh model, check the accuracy again.
    path = args.weights or os.path.join(tempfile.mkdtemp(), "digits_cnn.safetensors")
    torch.save_file(model.state_dict(), path)
    reloaded = DigitsCNN()
    reloaded.load_state_dict(torch.load_file(path))
    acc_reloaded = accuracy(reloaded, x_test, y_test)
    print(f"weights saved to {path} ({os.path.getsize(path)} bytes); "
          f"accuracy after reloading: {acc_reloaded * 100:.2f}%")
    if acc < 0.98 or acc_reloaded != acc:
        print("FAILED: expected >= 98% accuracy, unchanged after reloading", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
