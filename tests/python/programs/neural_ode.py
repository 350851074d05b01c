"""rtqichen/torchdiffeq's examples/ode_demo.py (the spiral: true_A, Lambda with torch.mm(y**3, true_A),
get_batch by np.random.choice of time indices and torch.stack, ODEFunc with nn.init.normal_(std=0.1) /
constant_(0), RunningAverageMeter, RMSprop(lr=1e-3)) with odeint written out as torchdiffeq's fixed-grid
solvers compute it (_RungeKutta's 'rk4' is the 3/8 rule rk4_alt_step_func, 'euler' and 'midpoint'; the
solution tensor stacked over the time grid, the interpolation at output times), backpropagating through
the solver steps (adjoint=False)."""
import argparse

import numpy as np
import torch
import torch.nn as nn
import torch.optim as optim


_one_third = 1 / 3
_two_thirds = 2 / 3


def rk4_alt_step_func(func, t0, dt, t1, y0, f0=None, perturb=False):
    """Smaller error with slightly more compute."""
    k1 = f0
    if k1 is None:
        k1 = func(t0, y0)
    k2 = func(t0 + dt * _one_third, y0 + dt * k1 * _one_third)
    k3 = func(t0 + dt * _two_thirds, y0 + dt * (k2 - k1 * _one_third))
    k4 = func(t1, y0 + dt * (k1 - k2 + k3))
    return (k1 + 3 * (k2 + k3) + k4) * dt * 0.125


def euler_step(func, t0, dt, t1, y0):
    return dt * func(t0, y0)


def midpoint_step(func, t0, dt, t1, y0):
    half_dt = 0.5 * dt
    y_mid = y0 + func(t0, y0) * half_dt
    return dt * func(t0 + half_dt, y_mid)


def _linear_interp(t0, t1, y0, y1, t):
    if t == t0:
        return y0
    if t == t1:
        return y1
    slope = (t - t0) / (t1 - t0)
    return y0 + slope * (y1 - y0)


def odeint(func, y0, t, method='rk4', options=None):
    """torchdiffeq's FixedGridODESolver.integrate with grid_constructor from step_size (or t itself)."""
    step = {'rk4': rk4_alt_step_func, 'euler': euler_step, 'midpoint': midpoint_step}[method]
    step_size = (options or {}).get('step_size')
    if step_size is None:
        time_grid = t
    else:
        start_time, end_time = t[0], t[-1]
        niters = torch.ceil((end_time - start_time) / step_size + 1).item()
        time_grid = torch.arange(0, niters, dtype=t.dtype, device=t.device) * step_size + start_time
        time_grid[-1] = t[-1]
    solution = torch.empty(len(t), *y0.shape, dtype=y0.dtype, device=y0.device)
    solution[0] = y0
    j = 1
    for t0, t1 in zip(time_grid[:-1], time_grid[1:]):
        dt = t1 - t0
        dy = step(func, t0, dt, t1, y0)
        y1 = y0 + dy
        while j < len(t) and t1 >= t[j]:
            solution[j] = _linear_interp(t0, t1, y0, y1, t[j])
            j += 1
        y0 = y1
    return solution


class Lambda(nn.Module):
    def __init__(self, true_A):
        super().__init__()
        self.true_A = true_A

    def forward(self, t, y):
        return torch.mm(y**3, self.true_A)


class ODEFunc(nn.Module):

    def __init__(self):
        super(ODEFunc, self).__init__()

        self.net = nn.Sequential(
            nn.Linear(2, 50),
            nn.Tanh(),
            nn.Linear(50, 2),
        )

        for m in self.net.modules():
            if isinstance(m, nn.Linear):
                nn.init.normal_(m.weight, mean=0, std=0.1)
                nn.init.constant_(m.bias, val=0)

    def forward(self, t, y):
        return self.net(y**3)


class RunningAverageMeter(object):
    """Computes and stores the average and current value"""

    def __init__(self, momentum=0.99):
        self.momentum = momentum
        self.reset()

    def reset(self):
        self.val = None
        self.avg = 0

    def update(self, val):
        if self.val is None:
            self.avg = val
        else:
            self.avg = self.avg * self.momentum + val * (1 - self.momentum)
        self.val = val


def main(argv=None):
    parser = argparse.ArgumentParser('ODE demo')
    parser.add_argument('--method', type=str, choices=['rk4', 'euler', 'midpoint'], default='rk4')
    parser.add_argument('--data_size', type=int, default=200)
    parser.add_argument('--batch_time', type=int, default=10)
    parser.add_argument('--batch_size', type=int, default=20)
    parser.add_argument('--niters', type=int, default=2000)
    parser.add_argument('--test_freq', type=int, default=20)
    parser.add_argument('--step_size', type=float, default=None)
    parser.add_argument('--quiet', action='store_true')
    args = parser.parse_args(argv)
    log = (lambda *a: None) if args.quiet else print

    torch.manual_seed(0)
    np.random.seed(0)
    true_y0 = torch.tensor([[2., 0.]])
    t = torch.linspace(0., 25., args.data_size)
    true_A = torch.tensor([[-0.1, 2.0], [-2.0, -0.1]])

    with torch.no_grad():
        true_y = odeint(Lambda(true_A), true_y0, t, method='rk4')

    def get_batch():
        s = torch.from_numpy(np.random.choice(np.arange(args.data_size - args.batch_time, dtype=np.int64),
                                              args.batch_size, replace=False))
        batch_y0 = true_y[s]  # (M, D)
        batch_t = t[:args.batch_time]  # (T)
        batch_y = torch.stack([true_y[s + i] for i in range(args.batch_time)], dim=0)  # (T, M, D)
        return batch_y0, batch_t, batch_y

    func = ODEFunc()
    initial_state = {k: v.clone() for k, v in func.state_dict().items()}
    optimizer = optim.RMSprop(func.parameters(), lr=1e-3)
    loss_meter = RunningAverageMeter(0.97)
    step_losses, test_losses = [], []
    opts = None if args.step_size is None else dict(step_size=args.step_size)
    for itr in range(1, args.niters + 1):
        optimizer.zero_grad()
        batch_y0, batch_t, batch_y = get_batch()
        pred_y = odeint(func, batch_y0, batch_t, method=args.method, options=opts)
        loss = torch.mean(torch.abs(pred_y - batch_y))
        loss.backward()
        optimizer.step()
        loss_meter.update(loss.item())
        step_losses.append(loss.item())

        if itr % args.test_freq == 0:
            with torch.no_grad():
                pred_y = odeint(func, true_y0, t, method=args.method)
                loss = torch.mean(torch.abs(pred_y - true_y))
                test_losses.append(loss.item())
                log('Iter {:04d} | Total Loss {:.6f}'.format(itr, loss.item()))
    return {"initial_state": initial_state, "step_losses": step_losses, "test_losses": test_losses,
            "true_y": true_y, "avg": loss_meter.avg, "final_state": func.state_dict()}


if __name__ == '__main__':
    main()
