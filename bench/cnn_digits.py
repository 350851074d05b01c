"""The main example's CNN, one training step (forward, backward, Adam) on a batch of 32 8x8
digits and one eval forward of 359 images: kiln vs PyTorch (when python3-torch is installed),
as ratios from one run.

    bazel build //:python_package && PYTHONPATH=bazel-bin /usr/bin/python3 bench/cnn_digits.py

Ratios > 1 mean kiln is slower. Not a test: numbers depend on the machine.
"""
import time

import numpy as np

import kiln


def make_model(lib):
    nn = lib.nn
    return nn.Sequential(
        nn.Conv2d(1, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(16, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(128, 10))


def timings(lib):
    rng = np.random.default_rng(0)
    xb = lib.tensor(rng.random((32, 1, 8, 8), dtype=np.float32))
    yb = lib.tensor(rng.integers(0, 10, 32))
    x_eval = lib.tensor(rng.random((359, 1, 8, 8), dtype=np.float32))
    model = make_model(lib)
    opt = lib.optim.Adam(model.parameters(), lr=1e-3)

    def step():
        loss = lib.nn.functional.cross_entropy(model(xb), yb)
        opt.zero_grad()
        loss.backward()
        opt.step()

    def evaluate():
        with lib.no_grad():
            model(x_eval)

    out = {}
    for name, fn in (("train step (batch 32)", step), ("eval forward (359 images)", evaluate)):
        for _ in range(5):
            fn()
        best = float("inf")
        for _ in range(5):
            t0 = time.perf_counter()
            for _ in range(20):
                fn()
            best = min(best, (time.perf_counter() - t0) / 20)
        out[name] = best
    return out


def main():
    k = timings(kiln)  # before importing torch: its OpenMP threads would compete with kiln's
    try:
        import torch
        t = timings(torch)
    except ImportError:  # PyTorch is optional
        t = None
    print(f"{'case':28s} {'kiln':>10s} {'torch':>10s} {'kiln/torch':>10s}")
    for name, sec in k.items():
        ts = f"{t[name] * 1e3:8.2f}ms" if t else "       n/a"
        ratio = f"{sec / t[name]:10.2f}" if t else "       n/a"
        print(f"{name:28s} {sec * 1e3:8.2f}ms {ts} {ratio}")


if __name__ == "__main__":
    main()
