"""philipperemy/n-beats's PyTorch model (nbeats_pytorch/model.py) as written: NBeatsNet with its GENERIC / TREND /
SEASONALITY stacks of blocks (share_weights_in_stack, thetas_dim, hidden_layer_units), Block's four fc layers with
F.relu and the shared theta_b_fc / theta_f_fc (bias=False), linear_space by np.arange, seasonality_model's
torch.tensor(np.array([np.cos(2 * np.pi * i * t) for i in range(p1)])).float() bases and thetas[:, :p1].mm(s1),
trend_model's polynomial bases, the doubly residual forward (backcast = backcast - b, forecast = forecast + f with
torch.zeros(size=(...)) starts, squeeze_last_dim), per-stack forecasts kept for interpretation, and the compile()/
fit() loop's Adam + L1 / MSE loss on a sine + trend series with windows made by NumPy."""
import argparse

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F


def squeeze_last_dim(tensor):
    if len(tensor.shape) == 3 and tensor.shape[-1] == 1:
        return tensor[..., 0]
    return tensor


def seasonality_model(thetas, t, device):
    p = thetas.size()[-1]
    assert p <= thetas.shape[1], 'thetas_dim is too big.'
    p1, p2 = (p // 2, p // 2) if p % 2 == 0 else (p // 2, p // 2 + 1)
    s1 = torch.tensor(np.array([np.cos(2 * np.pi * i * t) for i in range(p1)])).float()
    s2 = torch.tensor(np.array([np.sin(2 * np.pi * i * t) for i in range(p2)])).float()
    S = torch.cat([s1, s2])
    return thetas.mm(S.to(device))


def trend_model(thetas, t, device):
    p = thetas.size()[-1]
    assert p <= 4, 'thetas_dim is too big.'
    T = torch.tensor(np.array([t ** i for i in range(p)])).float()
    return thetas.mm(T.to(device))


def linear_space(backcast_length, forecast_length, is_forecast=True):
    horizon = forecast_length if is_forecast else backcast_length
    return np.arange(0, horizon) / horizon


class Block(nn.Module):
    def __init__(self, units, thetas_dim, device, backcast_length=10, forecast_length=5, share_thetas=False,
                 nb_harmonics=None):
        super(Block, self).__init__()
        self.units = units
        self.thetas_dim = thetas_dim
        self.backcast_length = backcast_length
        self.forecast_length = forecast_length
        self.share_thetas = share_thetas
        self.fc1 = nn.Linear(backcast_length, units)
        self.fc2 = nn.Linear(units, units)
        self.fc3 = nn.Linear(units, units)
        self.fc4 = nn.Linear(units, units)
        self.device = device
        self.backcast_linspace = linear_space(backcast_length, forecast_length, is_forecast=False)
        self.forecast_linspace = linear_space(backcast_length, forecast_length, is_forecast=True)
        if share_thetas:
            self.theta_f_fc = self.theta_b_fc = nn.Linear(units, thetas_dim, bias=False)
        else:
            self.theta_b_fc = nn.Linear(units, thetas_dim, bias=False)
            self.theta_f_fc = nn.Linear(units, thetas_dim, bias=False)

    def forward(self, x):
        x = squeeze_last_dim(x)
        x = F.relu(self.fc1(x.to(self.device)))
        x = F.relu(self.fc2(x))
        x = F.relu(self.fc3(x))
        x = F.relu(self.fc4(x))
        return x


class SeasonalityBlock(Block):
    def __init__(self, units, thetas_dim, device, backcast_length=10, forecast_length=5, nb_harmonics=None):
        if nb_harmonics:
            super(SeasonalityBlock, self).__init__(units, nb_harmonics, device, backcast_length, forecast_length,
                                                   share_thetas=True)
        else:
            super(SeasonalityBlock, self).__init__(units, forecast_length, device, backcast_length, forecast_length,
                                                   share_thetas=True)

    def forward(self, x):
        x = super(SeasonalityBlock, self).forward(x)
        backcast = seasonality_model(self.theta_b_fc(x), self.backcast_linspace, self.device)
        forecast = seasonality_model(self.theta_f_fc(x), self.forecast_linspace, self.device)
        return backcast, forecast


class TrendBlock(Block):
    def __init__(self, units, thetas_dim, device, backcast_length=10, forecast_length=5, nb_harmonics=None):
        super(TrendBlock, self).__init__(units, thetas_dim, device, backcast_length, forecast_length,
                                         share_thetas=True)

    def forward(self, x):
        x = super(TrendBlock, self).forward(x)
        backcast = trend_model(self.theta_b_fc(x), self.backcast_linspace, self.device)
        forecast = trend_model(self.theta_f_fc(x), self.forecast_linspace, self.device)
        return backcast, forecast


class GenericBlock(Block):
    def __init__(self, units, thetas_dim, device, backcast_length=10, forecast_length=5, nb_harmonics=None):
        super(GenericBlock, self).__init__(units, thetas_dim, device, backcast_length, forecast_length)
        self.backcast_fc = nn.Linear(thetas_dim, backcast_length)
        self.forecast_fc = nn.Linear(thetas_dim, forecast_length)

    def forward(self, x):
        x = super(GenericBlock, self).forward(x)
        theta_b = self.theta_b_fc(x)
        theta_f = self.theta_f_fc(x)
        backcast = self.backcast_fc(theta_b)
        forecast = self.forecast_fc(theta_f)
        return backcast, forecast


class NBeatsNet(nn.Module):
    SEASONALITY_BLOCK = 'seasonality'
    TREND_BLOCK = 'trend'
    GENERIC_BLOCK = 'generic'

    def __init__(self, device=torch.device('cpu'), stack_types=(TREND_BLOCK, SEASONALITY_BLOCK), nb_blocks_per_stack=3,
                 forecast_length=5, backcast_length=10, thetas_dim=(4, 8), share_weights_in_stack=False,
                 hidden_layer_units=256, nb_harmonics=None):
        super(NBeatsNet, self).__init__()
        self.forecast_length = forecast_length
        self.backcast_length = backcast_length
        self.hidden_layer_units = hidden_layer_units
        self.nb_blocks_per_stack = nb_blocks_per_stack
        self.share_weights_in_stack = share_weights_in_stack
        self.nb_harmonics = nb_harmonics
        self.stack_types = stack_types
        self.stacks = []
        self.thetas_dim = thetas_dim
        self.parameters = []
        self.device = device
        for stack_id in range(len(self.stack_types)):
            self.stacks.append(self.create_stack(stack_id))
        self.parameters = nn.ParameterList(self.parameters)
        self.to(self.device)
        self._loss = None
        self._opt = None

    def create_stack(self, stack_id):
        stack_type = self.stack_types[stack_id]
        blocks = []
        for block_id in range(self.nb_blocks_per_stack):
            block_init = NBeatsNet.select_block(stack_type)
            if self.share_weights_in_stack and block_id != 0:
                block = blocks[-1]
            else:
                block = block_init(self.hidden_layer_units, self.thetas_dim[stack_id], self.device,
                                   self.backcast_length, self.forecast_length, self.nb_harmonics)
                self.parameters.extend(block.parameters())
            blocks.append(block)
        return blocks

    @staticmethod
    def select_block(block_type):
        if block_type == NBeatsNet.SEASONALITY_BLOCK:
            return SeasonalityBlock
        elif block_type == NBeatsNet.TREND_BLOCK:
            return TrendBlock
        else:
            return GenericBlock

    def forward(self, backcast):
        self._intermediary_outputs = []
        backcast = squeeze_last_dim(backcast)
        forecast = torch.zeros(size=(backcast.size()[0], self.forecast_length,))
        for stack_id in range(len(self.stacks)):
            for block_id in range(len(self.stacks[stack_id])):
                b, f = self.stacks[stack_id][block_id](backcast)
                backcast = backcast.to(self.device) - b
                forecast = forecast.to(self.device) + f
                block_type = self.stacks[stack_id][block_id].__class__.__name__
                layer_name = f'stack_{stack_id}-{block_type}_{block_id}'
                self._intermediary_outputs.append({'value': f.detach().numpy(), 'layer': layer_name})
        return backcast, forecast


def main(argv=None):
    parser = argparse.ArgumentParser()
    parser.add_argument("--stacks", default="trend,seasonality")
    parser.add_argument("--share", action="store_true")
    parser.add_argument("--loss", default="mae")
    parser.add_argument("--steps", type=int, default=15)
    parser.add_argument("--quiet", action="store_true")
    args = parser.parse_args(argv)
    log = (lambda *a: None) if args.quiet else print
    torch.manual_seed(0)
    np.random.seed(0)
    backcast_length, forecast_length = 20, 5
    stack_types = tuple(args.stacks.split(","))
    thetas = tuple(4 if s == "trend" else 8 for s in stack_types)
    net = NBeatsNet(stack_types=stack_types, forecast_length=forecast_length, backcast_length=backcast_length,
                    hidden_layer_units=32, share_weights_in_stack=args.share, thetas_dim=thetas, nb_blocks_per_stack=2)
    initial_state = {k: v.clone() for k, v in net.state_dict().items()}
    t = np.arange(400)
    series = np.sin(t / 6.0) + 0.002 * t + 0.05 * np.random.randn(400)
    x, y = [], []
    for i in range(backcast_length, len(series) - forecast_length):
        x.append(series[i - backcast_length:i])
        y.append(series[i:i + forecast_length])
    x, y = np.array(x), np.array(y)
    optimiser = torch.optim.Adam(lr=1e-3, params=net.parameters())
    loss_fn = F.l1_loss if args.loss == "mae" else F.mse_loss
    step_losses = []
    for step in range(args.steps):
        idx = np.random.randint(0, len(x), 32)
        x_batch, y_batch = torch.tensor(x[idx], dtype=torch.float32), torch.tensor(y[idx], dtype=torch.float32)
        optimiser.zero_grad()
        net.train()
        _, forecast = net(x_batch)
        loss = loss_fn(forecast, squeeze_last_dim(y_batch))
        loss.backward()
        optimiser.step()
        step_losses.append(loss.item())
        log(f"step {step} loss {loss.item():.5f}")
    net.eval()
    with torch.no_grad():
        backcast, forecast = net(torch.tensor(x[:8], dtype=torch.float32).unsqueeze(-1))
    return {"initial_state": initial_state, "step_losses": step_losses, "forecast": forecast, "backcast": backcast,
            "n_params": len(list(net.parameters())), "stack_outputs": np.stack([o["value"] for o in net._intermediary_outputs]),
            "layers": [o["layer"] for o in net._intermediary_outputs]}


if __name__ == "__main__":
    main()
