"""Regression with a smooth-L1 (Huber) loss: an MLP on a synthetic 1-D curve and a small
box-regression head, trained with DataLoader minibatches, several optimizers and LR schedules.

Ordinary PyTorch code; ``run(torch, ...)`` takes the torch module (real torch or ``kiln``).
"""
import math
import time


def make_data(torch, n=512, noise=0.1):
    """y = sin(3x) + 0.5 x + noise, with a few outliers (where smooth L1 beats MSE)."""
    x = torch.linspace(-2, 2, n).unsqueeze(1)
    y = torch.sin(3 * x) + 0.5 * x + noise * torch.randn(n, 1)
    outliers = torch.randperm(n)[: n // 20]
    y[outliers] += 3.0 * torch.randn(len(outliers), 1)
    # a few extra useless features
    feats = torch.cat([x, x ** 2, torch.cos(x), torch.randn(n, 5)], dim=1)
    return feats, y


def make_boxes(torch, n=512, d=16):
    """A box-regression head: 4 box deltas from a 16-d descriptor, with heavy-tailed noise."""
    w = torch.randn(d, 4) / math.sqrt(d)
    x = torch.randn(n, d)
    y = torch.tanh(x @ w) * 2 + 0.05 * torch.randn(n, 4)
    y[::17] *= 4  # heavy tails
    return x, y


def build_model(torch, kind, in_dim, out_dim, hidden=64, dropout=0.1):
    nn = torch.nn

    class MLP(nn.Module):
        def __init__(self):
            super().__init__()
            self.net = nn.Sequential(
                nn.Linear(in_dim, hidden),
                nn.BatchNorm1d(hidden),
                nn.ReLU(),
                nn.Dropout(dropout),
                nn.Linear(hidden, hidden),
                nn.Tanh(),
                nn.Linear(hidden, out_dim),
            )
            for m in self.modules():
                if isinstance(m, nn.Linear):
                    nn.init.kaiming_normal_(m.weight, mode='fan_in', nonlinearity='relu')
                    nn.init.zeros_(m.bias)

        def forward(self, x):
            return self.net(x)

    class BoxHead(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1 = nn.Linear(in_dim, hidden)
            self.fc2 = nn.Linear(hidden, hidden)
            self.bbox_pred = nn.Linear(hidden, out_dim)
            self.drop = nn.Dropout(p=dropout)
            nn.init.normal_(self.bbox_pred.weight, std=0.001)
            nn.init.constant_(self.bbox_pred.bias, 0)

        def forward(self, x):
            x = x.flatten(start_dim=1)
            x = torch.nn.functional.relu(self.fc1(x))
            x = self.drop(torch.nn.functional.relu(self.fc2(x)))
            return self.bbox_pred(x)

    return MLP() if kind == 'mlp' else BoxHead()


def run(torch, epochs=5, n=512, batch_size=32, kind='mlp', optimizer='sgd', scheduler='step',
        loss='smooth_l1', beta=0.5, lr=None, dropout=0.1, seed=0, init_state=None, threads=None,
        verbose=False):
    """Train; returns per-step training losses, per-epoch eval losses, epoch times and the
    initial state_dict (NumPy arrays)."""
    nn = torch.nn
    F = torch.nn.functional
    from_numpy = torch.from_numpy  # noqa: F841  (kept: scripts often import it)
    if threads is not None:
        torch.set_num_threads(threads)
    torch.manual_seed(seed)

    if kind == 'mlp':
        X, Y = make_data(torch, n)
    else:
        X, Y = make_boxes(torch, n)
    n_train = int(0.8 * n)
    X_train, Y_train = X[:n_train], Y[:n_train]
    X_test, Y_test = X[n_train:], Y[n_train:]
    # standardize with the training statistics
    mean = X_train.mean(dim=0, keepdim=True)
    std = X_train.std(dim=0, keepdim=True) + 1e-8
    X_train = (X_train - mean) / std
    X_test = (X_test - mean) / std

    train_ds = torch.utils.data.TensorDataset(X_train, Y_train)
    loader = torch.utils.data.DataLoader(train_ds, batch_size=batch_size, shuffle=True)

    model = build_model(torch, kind, X.shape[1], Y.shape[1], dropout=dropout)
    if init_state is not None:
        model.load_state_dict({k: torch.tensor(v) for k, v in init_state.items()})
    initial = {k: v.detach().numpy().copy() for k, v in model.state_dict().items()}

    if loss == 'smooth_l1':
        criterion = nn.SmoothL1Loss(beta=beta)
    elif loss == 'huber':
        criterion = nn.HuberLoss(delta=beta)
    else:
        criterion = lambda out, target: F.smooth_l1_loss(out, target, reduction='sum', beta=beta) / out.numel()  # noqa: E731

    if optimizer == 'sgd':
        opt = torch.optim.SGD(model.parameters(), lr=lr or 0.05, momentum=0.9, nesterov=True, weight_decay=1e-4)
    elif optimizer == 'adam':
        opt = torch.optim.Adam(model.parameters(), lr=lr or 1e-3)
    else:
        opt = torch.optim.AdamW(model.parameters(), lr=lr or 1e-3, weight_decay=0.01)

    steps_per_epoch = len(loader)
    if scheduler == 'step':
        sched = torch.optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)
    elif scheduler == 'cosine':
        sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=epochs)
    else:
        sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=lr or 0.01, epochs=epochs,
                                                    steps_per_epoch=steps_per_epoch)

    step_losses, eval_losses, times = [], [], []
    for epoch in range(epochs):
        t0 = time.time()
        model.train()
        running = 0.0
        for xb, yb in loader:
            opt.zero_grad()
            out = model(xb)
            l = criterion(out, yb)
            l.backward()
            opt.step()
            if scheduler == 'onecycle':
                sched.step()
            step_losses.append(l.item())
            running += l.item() * xb.size(0)
        if scheduler != 'onecycle':
            sched.step()
        times.append(time.time() - t0)

        model.eval()
        with torch.no_grad():
            pred = model(X_test)
            test_loss = F.smooth_l1_loss(pred, Y_test, beta=beta).item()
            mae = (pred - Y_test).abs().mean().item()
        eval_losses.append(test_loss)
        if verbose:
            print(f"epoch {epoch + 1:3d} train {running / n_train:.5f} test {test_loss:.5f} mae {mae:.4f} "
                  f"lr {opt.param_groups[0]['lr']:.5f} time {times[-1]:.4f}s")
    return {'steps': step_losses, 'eval': eval_losses, 'times': times, 'initial': initial}


if __name__ == '__main__':
    import argparse
    p = argparse.ArgumentParser()
    p.add_argument('--kiln', action='store_true')
    p.add_argument('--epochs', type=int, default=20)
    p.add_argument('--kind', default='mlp')
    p.add_argument('--optimizer', default='sgd')
    p.add_argument('--scheduler', default='step')
    p.add_argument('--loss', default='smooth_l1')
    args = p.parse_args()
    if args.kiln:
        import kiln as torch
    else:
        import torch
    run(torch, epochs=args.epochs, kind=args.kind, optimizer=args.optimizer, scheduler=args.scheduler,
        loss=args.loss, verbose=True)
