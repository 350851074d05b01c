"""karpathy/micrograd in torch: test/test_engine.py's sanity checks written with torch.Tensor([...]).double()
leaves (x.requires_grad = True, relu, ** 3, / and ** -1, y.backward(), x.grad.item()) and demo.ipynb's
binary classifier on moons-like data: an MLP(2, [16, 16, 1]) of Linear + relu layers, the SVM max-margin loss
(1 + -yb * scores).relu(), an L2 penalty alpha * sum(p * p), accuracy by (yi > 0) == (scorei > 0), and
plain SGD by hand (p.data -= learning_rate * p.grad with learning_rate = 1.0 - 0.9 * k / steps)."""
import argparse

import numpy as np
import torch
import torch.nn as nn


def sanity_check():
    x = torch.Tensor([-4.0]).double()
    x.requires_grad = True
    z = 2 * x + 2 + x
    q = z.relu() + z * x
    h = (z * z).relu()
    y = h + q + q * x
    y.backward()
    return y.data.item(), x.grad.item()


def more_ops():
    a = torch.Tensor([-4.0]).double()
    b = torch.Tensor([2.0]).double()
    a.requires_grad = True
    b.requires_grad = True
    c = a + b
    d = a * b + b ** 3
    c = c + c + 1
    c = c + 1 + c + (-a)
    d = d + d * 2 + (b + a).relu()
    d = d + 3 * d + (b - a).relu()
    e = c - d
    f = e ** 2
    g = f / 2.0
    g = g + 10.0 / f
    g.backward()
    return g.data.item(), a.grad.item(), b.grad.item()


def make_moons(n, noise, rng):
    n_out = n // 2
    n_in = n - n_out
    outer = np.stack([np.cos(np.linspace(0, np.pi, n_out)), np.sin(np.linspace(0, np.pi, n_out))], 1)
    inner = np.stack([1 - np.cos(np.linspace(0, np.pi, n_in)), 1 - np.sin(np.linspace(0, np.pi, n_in)) - .5], 1)
    X = np.vstack([outer, inner]) + rng.normal(scale=noise, size=(n, 2))
    y = np.hstack([np.zeros(n_out), np.ones(n_in)])
    return X, y


class MLP(nn.Module):
    def __init__(self, nin, nouts):
        super().__init__()
        sz = [nin] + nouts
        self.layers = nn.ModuleList([nn.Linear(sz[i], sz[i + 1]) for i in range(len(nouts))])

    def forward(self, x):
        for i, layer in enumerate(self.layers):
            x = layer(x)
            if i != len(self.layers) - 1:
                x = x.relu()
        return x


def main(argv=None):
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--batch_size", type=int, default=None)
    parser.add_argument("--quiet", action="store_true")
    args = parser.parse_args(argv)
    log = (lambda *a: None) if args.quiet else print
    np.random.seed(1337)
    torch.manual_seed(1337)
    X, y = make_moons(100, 0.1, np.random)
    y = y * 2 - 1
    model = MLP(2, [16, 16, 1])
    initial_state = {k: v.clone() for k, v in model.state_dict().items()}
    log("number of parameters", sum(p.numel() for p in model.parameters()))

    def loss(batch_size=None):
        if batch_size is None:
            Xb, yb = X, y
        else:
            ri = np.random.permutation(X.shape[0])[:batch_size]
            Xb, yb = X[ri], y[ri]
        inputs = torch.tensor(Xb, dtype=torch.float32)
        scores = model(inputs).squeeze(1)
        yb = torch.tensor(yb, dtype=torch.float32)
        losses = (1 + -yb * scores).relu()
        data_loss = losses.sum() * (1.0 / len(losses))
        alpha = 1e-4
        reg_loss = alpha * sum((p * p).sum() for p in model.parameters())
        total_loss = data_loss + reg_loss
        accuracy = [(yi > 0) == (scorei > 0) for yi, scorei in zip(yb.tolist(), scores.tolist())]
        return total_loss, sum(accuracy) / len(accuracy)

    step_losses, accs = [], []
    for k in range(args.steps):
        total_loss, acc = loss(args.batch_size)
        model.zero_grad()
        total_loss.backward()
        learning_rate = 1.0 - 0.9 * k / args.steps
        for p in model.parameters():
            p.data -= learning_rate * p.grad
        step_losses.append(total_loss.item())
        accs.append(acc)
        log(f"step {k} loss {total_loss.data}, accuracy {acc*100}%")
    xx, yy = np.meshgrid(np.arange(-2, 3, 0.25), np.arange(-1.5, 2, 0.25))
    Xmesh = np.c_[xx.ravel(), yy.ravel()]
    with torch.no_grad():
        scores = model(torch.from_numpy(Xmesh).float())
    Z = np.array([s.item() > 0 for s in scores])
    return {"initial_state": initial_state, "step_losses": step_losses, "accs": accs, "mesh": Z,
            "sanity": sanity_check(), "more_ops": more_ops()}


if __name__ == "__main__":
    main()
