"""Ben Graham's "Fractional Max-Pooling" network as the PyTorch ports write it: convolution + LeakyReLU blocks
each followed by nn.FractionalMaxPool2d(2, output_ratio=1 / 2 ** 0.5) (or output_size= for the last stage), with
Dropout growing with depth, trained with SGD(momentum=0.9, nesterov=True) on CIFAR-shaped batches; the test-time
"model averaging" of the paper (the prediction averaged over several random poolings, each drawing new samples from
torch.rand), F.fractional_max_pool2d with return_indices=True and fixed _random_samples (a pseudorandom, repeatable
pooling) used with F.max_unpool2d, and nn.FractionalMaxPool3d on a small volume."""
import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F


class FMPNet(nn.Module):
    def __init__(self, n_classes=10, width=8):
        super().__init__()
        layers = []
        c_in = 3
        for i in range(3):
            c_out = width * (i + 1)
            layers += [nn.Conv2d(c_in, c_out, 2, padding=1), nn.LeakyReLU(0.3),
                       nn.FractionalMaxPool2d(2, output_ratio=1 / 2 ** 0.5) if i < 2
                       else nn.FractionalMaxPool2d(2, output_size=3),
                       nn.Dropout(0.1 * i)]
            c_in = c_out
        self.features = nn.Sequential(*layers)
        self.classifier = nn.Linear(c_in * 9, n_classes)

    def forward(self, x):
        return self.classifier(torch.flatten(self.features(x), 1))


def main(argv=None):
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--repeats", type=int, default=4)
    parser.add_argument("--quiet", action="store_true")
    args = parser.parse_args(argv)
    log = (lambda *a: None) if args.quiet else print
    torch.manual_seed(0)
    model = FMPNet()
    initial_state = {k: v.clone() for k, v in model.state_dict().items()}
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9, nesterov=True, weight_decay=5e-4)
    criterion = nn.CrossEntropyLoss()
    data = torch.randn(args.steps, 16, 3, 16, 16)
    targets = torch.randint(0, 10, (args.steps, 16))
    step_losses = []
    model.train()
    for i in range(args.steps):
        optimizer.zero_grad()
        loss = criterion(model(data[i]), targets[i])
        loss.backward()
        optimizer.step()
        step_losses.append(loss.item())
        log(f"step {i} loss {loss.item():.4f}")
    model.eval()
    with torch.no_grad():
        probs = sum(F.softmax(model(data[0]), 1) for _ in range(args.repeats)) / args.repeats
    x = torch.randn(2, 4, 9, 9, requires_grad=True)
    samples = torch.rand(2, 4, 2)
    pooled, idx = F.fractional_max_pool2d(x, 3, output_size=(5, 5), return_indices=True, _random_samples=samples)
    again, idx2 = F.fractional_max_pool2d(x, 3, output_size=(5, 5), return_indices=True, _random_samples=samples)
    unpooled = F.max_unpool2d(pooled, idx, kernel_size=2, output_size=x.shape[-2:])
    (pooled.sum() + unpooled.pow(2).sum()).backward()
    vol = torch.randn(1, 2, 6, 7, 8)
    out3d, idx3d = nn.FractionalMaxPool3d((2, 2, 3), output_ratio=(0.5, 0.6, 0.5), return_indices=True)(vol)
    return {"initial_state": initial_state, "step_losses": step_losses, "probs": probs, "pooled": pooled.detach(),
            "idx": idx, "same": bool(torch.equal(idx, idx2) and torch.equal(pooled, again)), "x_grad": x.grad,
            "out3d": out3d, "idx3d": idx3d}


if __name__ == "__main__":
    main()
