"""Two small research programs as written. greydanus/hamiltonian-nn: the MLP with a choice of nonlinearity
(torch.tanh, orthogonal_ init), HNN.forward splitting y.split(1, 1), time_derivative by
torch.autograd.grad(F1.sum(), x, create_graph=True)[0] and the symplectic permutation M (torch.eye / torch.cat of
-eye rows, permute_tensor by x @ self.M.t()), a spring's noisy (q, p) data with np.random, the L2 loss
(u - v).pow(2).mean(), Adam with weight_decay, then rk4 integration of the learned field through
torch.tensor(..., requires_grad=True) and .data.numpy(). snntorch-style spiking networks (tutorial 5):
a Leaky integrate-and-fire neuron with a custom torch.autograd.Function surrogate (ctx.save_for_backward,
fast-sigmoid grad_input / (slope * |mem| + 1) ** 2), reset by subtraction with detached spikes, rate-coded
inputs by torch.bernoulli, BPTT over num_steps with stacked spike / membrane records, the summed-over-time
cross-entropy and accuracy by spk_rec.sum(dim=0).max(1)."""
import argparse

import numpy as np
import torch
import torch.nn as nn


class MLP(torch.nn.Module):
    def __init__(self, input_dim, hidden_dim, output_dim, nonlinearity='tanh'):
        super(MLP, self).__init__()
        self.linear1 = torch.nn.Linear(input_dim, hidden_dim)
        self.linear2 = torch.nn.Linear(hidden_dim, hidden_dim)
        self.linear3 = torch.nn.Linear(hidden_dim, output_dim, bias=None)
        for l in [self.linear1, self.linear2, self.linear3]:
            torch.nn.init.orthogonal_(l.weight)
        self.nonlinearity = choose_nonlinearity(nonlinearity)

    def forward(self, x, separate_fields=False):
        h = self.nonlinearity(self.linear1(x))
        h = self.nonlinearity(self.linear2(h))
        return self.linear3(h)


def choose_nonlinearity(name):
    if name == 'tanh':
        nl = torch.tanh
    elif name == 'relu':
        nl = torch.relu
    elif name == 'sigmoid':
        nl = torch.sigmoid
    elif name == 'softplus':
        nl = torch.nn.functional.softplus
    elif name == 'selu':
        nl = torch.nn.functional.selu
    elif name == 'elu':
        nl = torch.nn.functional.elu
    elif name == 'swish':
        nl = lambda x: x * torch.sigmoid(x)
    else:
        raise ValueError("nonlinearity not recognized")
    return nl


class HNN(torch.nn.Module):
    def __init__(self, input_dim, differentiable_model, field_type='solenoidal', baseline=False, assume_canonical_coords=True):
        super(HNN, self).__init__()
        self.baseline = baseline
        self.differentiable_model = differentiable_model
        self.assume_canonical_coords = assume_canonical_coords
        self.M = self.permutation_tensor(input_dim)
        self.field_type = field_type

    def forward(self, x):
        if self.baseline:
            return self.differentiable_model(x)
        y = self.differentiable_model(x)
        assert y.dim() == 2 and y.shape[1] == 2, "Output tensor should have shape [batch_size, 2]"
        return y.split(1, 1)

    def time_derivative(self, x, t=None, separate_fields=False):
        if self.baseline:
            return self.differentiable_model(x)
        F1, F2 = self.forward(x)
        conservative_field = torch.zeros_like(x)
        solenoidal_field = torch.zeros_like(x)
        if self.field_type != 'solenoidal':
            dF1 = torch.autograd.grad(F1.sum(), x, create_graph=True)[0]
            conservative_field = dF1 @ torch.eye(*self.M.shape)
        if self.field_type != 'conservative':
            dF2 = torch.autograd.grad(F2.sum(), x, create_graph=True)[0]
            solenoidal_field = dF2 @ self.M.t()
        if separate_fields:
            return [conservative_field, solenoidal_field]
        return conservative_field + solenoidal_field

    def permutation_tensor(self, n):
        M = None
        if self.assume_canonical_coords:
            M = torch.eye(n)
            M = torch.cat([M[n // 2:], -M[:n // 2]])
        else:
            M = torch.ones(n, n)
            M *= 1 - torch.eye(n)
            M[::2] *= -1
            M[:, ::2] *= -1
            for i in range(n):
                for j in range(i + 1, n):
                    M[i, j] *= -1
        return M


def L2_loss(u, v):
    return (u - v).pow(2).mean()


def get_spring_data(seed=0, samples=40, noise_std=0.1):
    np.random.seed(seed)
    xs, dxs = [], []
    for s in range(samples):
        t = np.linspace(0, 3, 10)
        r = np.random.rand() * 0.9 + 0.1
        phase = np.random.rand() * 2 * np.pi
        q, p = r * np.cos(t + phase), -r * np.sin(t + phase)
        dq, dp = p, -q
        q += np.random.randn(*q.shape) * noise_std
        p += np.random.randn(*p.shape) * noise_std
        xs.append(np.stack([q, p]).T)
        dxs.append(np.stack([dq, dp]).T)
    return np.concatenate(xs), np.concatenate(dxs)


def rk4(fun, y0, t, dt):
    dt2 = dt / 2.0
    k1 = fun(y0, t)
    k2 = fun(y0 + dt2 * k1, t + dt2)
    k3 = fun(y0 + dt2 * k2, t + dt2)
    k4 = fun(y0 + dt * k3, t + dt)
    return dt / 6.0 * (k1 + 2 * k2 + 2 * k3 + k4)


class SpikeGrad(torch.autograd.Function):
    slope = 25

    @staticmethod
    def forward(ctx, mem):
        ctx.save_for_backward(mem)
        return (mem > 0).float()

    @staticmethod
    def backward(ctx, grad_output):
        (mem,) = ctx.saved_tensors
        grad_input = grad_output.clone()
        return grad_input / (SpikeGrad.slope * torch.abs(mem) + 1.0) ** 2


class Leaky(nn.Module):
    def __init__(self, beta, threshold=1.0):
        super().__init__()
        self.beta = beta
        self.threshold = threshold
        self.spike_grad = SpikeGrad.apply

    def forward(self, input_, mem):
        spk = self.spike_grad(mem - self.threshold)
        reset = spk.detach()
        mem = self.beta * mem + input_ - reset * self.threshold
        spk = self.spike_grad(mem - self.threshold)
        return spk, mem


class SNN(nn.Module):
    def __init__(self, num_inputs, num_hidden, num_outputs, beta, num_steps):
        super().__init__()
        self.num_steps = num_steps
        self.fc1 = nn.Linear(num_inputs, num_hidden)
        self.lif1 = Leaky(beta=beta)
        self.fc2 = nn.Linear(num_hidden, num_outputs)
        self.lif2 = Leaky(beta=beta)

    def forward(self, x):
        mem1 = torch.zeros(x.size(1), self.fc1.out_features)
        mem2 = torch.zeros(x.size(1), self.fc2.out_features)
        spk2_rec, mem2_rec = [], []
        for step in range(self.num_steps):
            cur1 = self.fc1(x[step])
            spk1, mem1 = self.lif1(cur1, mem1)
            cur2 = self.fc2(spk1)
            spk2, mem2 = self.lif2(cur2, mem2)
            spk2_rec.append(spk2)
            mem2_rec.append(mem2)
        return torch.stack(spk2_rec, dim=0), torch.stack(mem2_rec, dim=0)


def main(argv=None):
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", default="hnn", choices=["hnn", "baseline", "snn"])
    parser.add_argument("--field_type", default="solenoidal")
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--quiet", action="store_true")
    args = parser.parse_args(argv)
    log = (lambda *a: None) if args.quiet else print
    torch.manual_seed(0)
    step_losses = []
    if args.model == "snn":
        num_steps = 12
        net = SNN(20, 32, 4, beta=0.9, num_steps=num_steps)
        initial_state = {k: v.clone() for k, v in net.state_dict().items()}
        optimizer = torch.optim.Adam(net.parameters(), lr=5e-3, betas=(0.9, 0.999))
        loss_fn = nn.CrossEntropyLoss()
        protos = torch.rand(4, 20)
        accs = []
        for it in range(args.steps // 2):
            targets = torch.randint(0, 4, (16,))
            rates = (protos[targets] * 0.8 + 0.1).clamp(0, 1)
            spikes_in = torch.bernoulli(rates.unsqueeze(0).repeat(num_steps, 1, 1))
            net.train()
            spk_rec, mem_rec = net(spikes_in)
            loss_val = torch.zeros((1), dtype=torch.float)
            for step in range(num_steps):
                loss_val += loss_fn(mem_rec[step], targets)
            optimizer.zero_grad()
            loss_val.backward()
            optimizer.step()
            _, idx = spk_rec.sum(dim=0).max(1)
            accs.append(np.mean((targets == idx).detach().cpu().numpy()))
            step_losses.append(loss_val.item())
            log("iter %d loss %.4f acc %.3f" % (it, loss_val.item(), accs[-1]))
        return {"initial_state": initial_state, "step_losses": step_losses, "accs": accs,
                "spikes": spk_rec.detach()}
    output_dim = 2
    nn_model = MLP(2, 32, output_dim, 'tanh')
    model = HNN(2, differentiable_model=nn_model, field_type=args.field_type, baseline=(args.model == "baseline"))
    initial_state = {k: v.clone() for k, v in model.state_dict().items()}
    optim = torch.optim.Adam(model.parameters(), 1e-2, weight_decay=1e-4)
    x_np, dx_np = get_spring_data()
    x = torch.tensor(x_np, requires_grad=True, dtype=torch.float32)
    dxdt = torch.Tensor(dx_np)
    for step in range(args.steps):
        dxdt_hat = model.time_derivative(x)
        loss = L2_loss(dxdt, dxdt_hat)
        loss.backward()
        optim.step()
        optim.zero_grad()
        step_losses.append(loss.item())
        log("step {}, train_loss {:.4e}".format(step, loss.item()))

    def fun(np_x, t):
        x = torch.tensor(np_x, requires_grad=True, dtype=torch.float32).view(1, 2)
        dx = model.time_derivative(x).data.numpy().reshape(-1)
        return dx

    y = np.array([0.5, 0.0])
    traj = [y]
    for i in range(20):
        y = y + rk4(fun, y, i * 0.1, 0.1)
        traj.append(y)
    return {"initial_state": initial_state, "step_losses": step_losses, "traj": np.stack(traj),
            "M": model.M, "M_general": model.permutation_tensor.__func__(
                type("H", (), {"assume_canonical_coords": False})(), 4)}


if __name__ == "__main__":
    main()
