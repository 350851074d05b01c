"""kiln against torch on the ops and backward passes training scripts spend their time in, one
thread, at sizes of a small model's activations: the kiln/torch ratio of each, slowest first. Each
case times both libraries alternately (process time, so other load on the machine counts less) and
keeps the best of several repetitions. Not a test: it finds the ops to look at next.

    bazel build //:python_package && PYTHONPATH=bazel-bin /usr/bin/python3 bench/op_survey.py [filter]
"""
import sys
import time

import numpy as np
import torch

import kiln
from formula_goals import cpu_name

REPEATS = 7


def best_time(fn):
    """The shortest time per call over REPEATS blocks of calls (each block ~5 ms of process time)."""
    fn()
    t0 = time.process_time()
    fn()
    once = time.process_time() - t0
    number = max(1, min(2000, int(0.005 / max(once, 1e-6))))
    best = float("inf")
    for _ in range(REPEATS):
        t0 = time.process_time()
        for _ in range(number):
            fn()
        best = min(best, (time.process_time() - t0) / number)
    return best


def backward_of(f):
    """x -> the gradient of f(x).sum() with respect to x."""
    def run(lib, x):
        x = x.detach().requires_grad_()
        f(lib, x).sum().backward()
        return x.grad
    return run


def cases(rng):
    def pair(shape, positive=False):
        a = rng.standard_normal(shape).astype(np.float32)
        if positive:
            a = np.abs(a) + 0.1
        return {kiln: kiln.from_numpy(a.copy()), torch: torch.from_numpy(a.copy())}

    def ints(high, shape):
        a = rng.integers(0, high, shape)
        return {kiln: kiln.from_numpy(a.copy()), torch: torch.from_numpy(a.copy())}

    x, img, seq = pair((256, 1024)), pair((32, 64, 28, 28)), pair((32, 64, 200))
    w2, w1 = pair((64, 64, 3, 3)), pair((64, 64, 5))
    labels, index = ints(1024, (256,)), ints(1024, (256, 64))
    F = lambda lib: lib.nn.functional  # noqa: E731
    ops = {
        "add": (x, lambda L, t: t + t), "x*2+1": (x, lambda L, t: t * 2 + 1), "exp": (x, lambda L, t: t.exp()),
        "tanh": (x, lambda L, t: t.tanh()), "gelu": (x, lambda L, t: F(L).gelu(t)), "relu": (x, lambda L, t: F(L).relu(t)),
        "softmax": (x, lambda L, t: L.softmax(t, 1)), "log_softmax": (x, lambda L, t: L.log_softmax(t, 1)),
        "layer_norm": (x, lambda L, t: F(L).layer_norm(t, (1024,))), "sum(1)": (x, lambda L, t: t.sum(1)),
        "sum(0)": (x, lambda L, t: t.sum(0)), "var(1)": (x, lambda L, t: t.var(1)), "norm(dim=1)": (x, lambda L, t: t.norm(dim=1)),
        "max(1)": (x, lambda L, t: t.max(1)[0]), "topk": (x, lambda L, t: t.topk(5, 1)[0]),
        "sort(1)": (x, lambda L, t: t.sort(1)[0]), "cumsum": (x, lambda L, t: t.cumsum(1)),
        "t().contiguous()": (x, lambda L, t: t.t().contiguous()), "tril": (x, lambda L, t: t.tril()),
        "cat": (x, lambda L, t: L.cat([t, t], 1)), "stack": (x, lambda L, t: L.stack([t[0]] * 64)),
        "matmul": (x, lambda L, t: t @ t.t()), "where": (x, lambda L, t: L.where(t > 0, t, 0.0)),
        "dropout": (x, lambda L, t: F(L).dropout(t, 0.1)), "one_hot": (x, lambda L, t: F(L).one_hot(labels[L], 1024)),
        "gather": (x, lambda L, t: t.gather(1, index[L])), "unique": (x, lambda L, t: L.unique((t * 4).round())),
        "cross_entropy": (x, lambda L, t: F(L).cross_entropy(t, labels[L])),
        "bce_with_logits": (x, lambda L, t: F(L).binary_cross_entropy_with_logits(t, (t > 0).float())),
        "conv2d": (img, lambda L, t: F(L).conv2d(t, w2[L], padding=1)), "conv1d": (seq, lambda L, t: F(L).conv1d(t, w1[L], padding=2)),
        "batch_norm": (img, lambda L, t: F(L).batch_norm(t, None, None, training=True)),
        "group_norm": (img, lambda L, t: F(L).group_norm(t, 8)), "max_pool2d": (img, lambda L, t: F(L).max_pool2d(t, 2)),
        "adaptive_avg_pool2d(1)": (img, lambda L, t: F(L).adaptive_avg_pool2d(t, 1)),
        "pad": (img, lambda L, t: F(L).pad(t, (1, 1, 1, 1))),
        "interpolate nearest": (img, lambda L, t: F(L).interpolate(t, scale_factor=2, mode="nearest")),
        "interpolate bilinear": (img, lambda L, t: F(L).interpolate(t, scale_factor=2, mode="bilinear")),
    }
    differentiable = ["gelu", "softmax", "log_softmax", "layer_norm", "sum(0)", "var(1)", "norm(dim=1)", "max(1)",
                      "matmul", "where", "cross_entropy", "conv2d", "batch_norm", "group_norm", "max_pool2d",
                      "adaptive_avg_pool2d(1)", "pad", "interpolate bilinear", "cat", "tril"]
    for name in differentiable:
        data, f = ops[name]
        ops[name + " backward"] = (data, backward_of(f))
    return ops


def main():
    kiln.set_num_threads(1)
    torch.set_num_threads(1)
    wanted = sys.argv[1] if len(sys.argv) > 1 else ""
    print(f"CPU: {cpu_name()}; torch {torch.__version__}; 1 thread; best of {REPEATS}, process time")
    rows = []
    for name, (data, f) in cases(np.random.default_rng(0)).items():
        if wanted not in name:
            continue
        k = best_time(lambda: f(kiln, data[kiln]))
        t = best_time(lambda: f(torch, data[torch]))
        rows.append((k / t, name, k, t))
    for ratio, name, k, t in sorted(rows, reverse=True):
        print(f"  {name:30s} kiln {k * 1e6:10.1f} us  torch {t * 1e6:10.1f} us  kiln/torch {ratio:5.2f}")


if __name__ == "__main__":
    main()
