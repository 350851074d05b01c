"""Stochastic Weight Averaging as the torch.optim.swa_utils documentation and the SWA blog post's recipe write it:
AveragedModel(model) for SWA (equal averages, n_averaged buffer) and AveragedModel(model, avg_fn=ema_avg) for an
exponential moving average, SWALR(optimizer, swa_lr=..., anneal_epochs=..., anneal_strategy='cos' / 'linear')
taking over from CosineAnnealingLR at swa_start, swa_model.update_parameters(model) each epoch after it,
torch.optim.swa_utils.update_bn(loader, swa_model) to recompute BatchNorm statistics with a DataLoader, and
evaluation of the averaged model; a small BatchNorm CNN on random CIFAR-shaped data."""
import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.optim.lr_scheduler import CosineAnnealingLR
from torch.optim.swa_utils import SWALR, AveragedModel, update_bn
from torch.utils.data import DataLoader, TensorDataset


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(),
                                      nn.MaxPool2d(2), nn.Conv2d(8, 16, 3, padding=1), nn.BatchNorm2d(16),
                                      nn.ReLU(), nn.AdaptiveAvgPool2d(1))
        self.fc = nn.Linear(16, 5)

    def forward(self, x):
        return self.fc(torch.flatten(self.features(x), 1))


def main(argv=None):
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=6)
    parser.add_argument("--swa_start", type=int, default=3)
    parser.add_argument("--anneal_strategy", default="cos")
    parser.add_argument("--quiet", action="store_true")
    args = parser.parse_args(argv)
    log = (lambda *a: None) if args.quiet else print
    torch.manual_seed(0)
    x = torch.randn(96, 3, 8, 8)
    y = torch.randint(0, 5, (96,))
    loader = DataLoader(TensorDataset(x, y), batch_size=16, shuffle=True)
    model = Net()
    initial_state = {k: v.clone() for k, v in model.state_dict().items()}
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    swa_model = AveragedModel(model)
    ema_avg = lambda averaged_model_parameter, model_parameter, num_averaged: \
        0.9 * averaged_model_parameter + 0.1 * model_parameter
    ema_model = AveragedModel(model, avg_fn=ema_avg)
    scheduler = CosineAnnealingLR(optimizer, T_max=100)
    swa_scheduler = SWALR(optimizer, swa_lr=0.05, anneal_epochs=2, anneal_strategy=args.anneal_strategy)
    loss_fn = nn.CrossEntropyLoss()
    step_losses, lrs = [], []
    for epoch in range(args.epochs):
        for input, target in loader:
            optimizer.zero_grad()
            loss = loss_fn(model(input), target)
            loss.backward()
            optimizer.step()
            ema_model.update_parameters(model)
            step_losses.append(loss.item())
        if epoch > args.swa_start:
            swa_model.update_parameters(model)
            swa_scheduler.step()
        else:
            scheduler.step()
        lrs.append(optimizer.param_groups[0]["lr"])
        log(f"epoch {epoch} loss {loss.item():.4f} lr {lrs[-1]:.5f}")
    update_bn(loader, swa_model)
    update_bn(loader, ema_model)
    swa_model.eval()
    ema_model.eval()
    with torch.no_grad():
        preds = swa_model(x[:16])
        ema_preds = ema_model(x[:16])
    return {"initial_state": initial_state, "step_losses": step_losses, "lrs": lrs, "preds": preds,
            "ema_preds": ema_preds, "n_averaged": swa_model.n_averaged.clone(),
            "swa_state": {k: v.clone() for k, v in swa_model.state_dict().items()},
            "swa_keys": list(swa_model.state_dict()),
            "running_mean": swa_model.module.features[1].running_mean.clone()}


if __name__ == "__main__":
    main()
