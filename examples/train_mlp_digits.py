"""Train a small MLP on scikit-learn's 8x8 digits with kiln, written as PyTorch code.

    tools/demo.sh            (or: PYTHONPATH=bazel-bin /usr/bin/python3 examples/train_mlp_digits.py)

Prints a progress bar per epoch, the held-out test accuracy, and saves the loss
curve to mlp_loss.png (or the path given with --plot).
"""
import argparse
import sys
import time

import numpy as np
from sklearn.datasets import load_digits

import kiln as torch
import kiln.nn as nn
import kiln.nn.functional as F


def progress(epoch, epochs, step, steps, loss, width=30):
    done = int(width * step / steps)
    bar = "#" * done + "-" * (width - done)
    sys.stdout.write(f"\repoch {epoch + 1:2d}/{epochs} [{bar}] loss {loss:.4f}")
    sys.stdout.flush()


def load_data(seed):
    digits = load_digits()
    x = digits.data.astype(np.float32) / 16.0  # pixels in [0, 1]
    y = digits.target.astype(np.int64)
    order = np.random.default_rng(seed).permutation(len(x))
    x, y = x[order], y[order]
    n_test = len(x) // 5
    return (torch.tensor(x[n_test:]), torch.tensor(y[n_test:])), (torch.tensor(x[:n_test]), torch.tensor(y[:n_test]))


def accuracy(model, x, y):
    with torch.no_grad():
        pred = model(x).argmax(dim=1)
    return (pred == y).float().mean().item()


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--epochs", type=int, default=30)
    ap.add_argument("--batch-size", type=int, default=32)
    ap.add_argument("--lr", type=float, default=0.1)
    ap.add_argument("--plot", default="mlp_loss.png")
    args = ap.parse_args()

    torch.manual_seed(0)
    (x_train, y_train), (x_test, y_test) = load_data(seed=0)
    model = nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 64), nn.ReLU(), nn.Linear(64, 10))
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9, weight_decay=1e-4)
    print(model)

    n = x_train.shape[0]
    steps = (n + args.batch_size - 1) // args.batch_size
    rng = np.random.default_rng(1)
    losses = []
    start = time.perf_counter()
    for epoch in range(args.epochs):
        model.train()
        order = torch.tensor(rng.permutation(n))
        epoch_loss = 0.0
        for step in range(steps):
            idx = order[step * args.batch_size:(step + 1) * args.batch_size]
            xb, yb = x_train[idx], y_train[idx]
            loss = F.cross_entropy(model(xb), yb)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            epoch_loss += loss.item()
            progress(epoch, args.epochs, step + 1, steps, epoch_loss / (step + 1))
        losses.append(epoch_loss / steps)
        sys.stdout.write(f"  test acc {accuracy(model, x_test, y_test):.3f}\n")
    elapsed = time.perf_counter() - start

    acc = accuracy(model, x_test, y_test)
    print(f"held-out test accuracy: {acc * 100:.2f}% ({x_test.shape[0]} images), "
          f"training took {elapsed:.1f} s ({elapsed / args.epochs * 1000:.0f} ms per epoch)")

    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    plt.figure(figsize=(5, 3.5))
    plt.plot(range(1, len(losses) + 1), losses, marker="o")
    plt.xlabel("epoch")
    plt.ylabel("training loss (cross entropy)")
    plt.title("kiln MLP on 8x8 digits")
    plt.yscale("log")
    plt.tight_layout()
    plt.savefig(args.plot, dpi=100)
    print(f"loss curve saved to {args.plot}")
    return 0 if acc >= 0.95 else 1


if __name__ == "__main__":
    sys.exit(main())
