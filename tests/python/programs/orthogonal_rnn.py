"""Orthogonal / constrained recurrent networks through torch.nn.utils.parametrize, as the PyTorch
"Parametrizations Tutorial" and Lezcano's expRNN (github.com/Lezcano/expRNN, rewritten on torch's
parametrizations) write them: the tutorial's Symmetric (X.triu() + X.triu(1).transpose(-1, -2)), Skew,
MatrixExponential (torch.matrix_exp) and a CayleyMap with right_inverse, register_parametrization chains,
layer.parametrizations.weight.original, parametrize.is_parametrized, the parametrize.cached() context,
remove_parametrizations(leave_parametrized=True); expRNN's modReLU (nn.Parameter bias, torch.abs / sign,
F.relu(norm + b)) computed by a custom torch.autograd.Function with @once_differentiable backward; the
recurrent kernel made orthogonal by torch.nn.utils.parametrizations.orthogonal(nn.Linear(h, h, bias=False),
orthogonal_map=...) initialised by torch.nn.init.orthogonal_ through the right inverse; the copying memory
task (cross entropy over the last T + 10 outputs, RMSprop for the orthogonal parameters and Adam for the rest
as expRNN's two optimizers), and torch.jit.script'd helpers used eagerly."""
import argparse

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.nn.utils.parametrize as P
from torch.autograd.function import once_differentiable


class Symmetric(nn.Module):
    def forward(self, X):
        return X.triu() + X.triu(1).transpose(-1, -2)


class Skew(nn.Module):
    def forward(self, X):
        A = X.triu(1)
        return A - A.transpose(-1, -2)

    def right_inverse(self, A):
        # We assume that A is skew-symmetric
        # We take the upper-triangular elements, as these are those used in the forward
        return A.triu(1)


class MatrixExponential(nn.Module):
    def forward(self, X):
        return torch.matrix_exp(X)


class CayleyMap(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.register_buffer("Id", torch.eye(n))

    def forward(self, X):
        # (I + X)(I - X)^{-1}
        return torch.linalg.solve(self.Id - X, self.Id + X)

    def right_inverse(self, A):
        # (A - I)(A + I)^{-1}
        return torch.linalg.solve(A + self.Id, self.Id - A)


class ModReLUFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, inputs, b):
        norm = torch.abs(inputs)
        biased_norm = norm + b
        magnitude = F.relu(biased_norm)
        phase = torch.sign(inputs)
        ctx.save_for_backward(inputs, biased_norm)
        return phase * magnitude

    @staticmethod
    @once_differentiable
    def backward(ctx, grad_output):
        inputs, biased_norm = ctx.saved_tensors
        active = (biased_norm > 0).to(grad_output.dtype)
        grad_inputs = grad_output * active
        grad_b = (grad_output * torch.sign(inputs) * active).sum(0)
        return grad_inputs, grad_b


class modrelu(nn.Module):
    def __init__(self, features):
        super(modrelu, self).__init__()
        self.features = features
        self.b = nn.Parameter(torch.Tensor(self.features))
        self.reset_parameters()

    def reset_parameters(self):
        self.b.data.uniform_(-0.01, 0.01)

    def forward(self, inputs):
        return ModReLUFunction.apply(inputs, self.b)


@torch.jit.script
def henaff_init_(A: torch.Tensor, diag: torch.Tensor):
    size = A.size(0) // 2
    with torch.no_grad():
        A.zero_()
        for i in range(size):
            A[2 * i, 2 * i + 1] = diag[i]
            A[2 * i + 1, 2 * i] = -diag[i]
    return A


@torch.jit.script
def copy_task_accuracy(out: torch.Tensor, y: torch.Tensor, T: int) -> float:
    return (out.argmax(-1)[:, -10:] == y[:, -10:]).float().mean().item()


class ExpRNN(nn.Module):
    def __init__(self, input_size, hidden_size, orthogonal_map):
        super(ExpRNN, self).__init__()
        self.hidden_size = hidden_size
        self.input_kernel = nn.Linear(input_size, hidden_size, bias=False)
        self.nonlinearity = modrelu(hidden_size)
        self.recurrent_kernel = nn.Linear(hidden_size, hidden_size, bias=False)
        if orthogonal_map in ("matrix_exp", "cayley", "householder"):
            nn.utils.parametrizations.orthogonal(self.recurrent_kernel, orthogonal_map=orthogonal_map)
        elif orthogonal_map == "skew_exp":  # the tutorial's Skew -> MatrixExponential chain
            P.register_parametrization(self.recurrent_kernel, "weight", Skew())
            P.register_parametrization(self.recurrent_kernel, "weight", MatrixExponential())
        else:  # "cayley_tutorial": Skew -> CayleyMap with its right_inverse
            P.register_parametrization(self.recurrent_kernel, "weight", Skew())
            P.register_parametrization(self.recurrent_kernel, "weight", CayleyMap(hidden_size))
        self.reset_parameters(orthogonal_map)

    def reset_parameters(self, orthogonal_map):
        nn.init.kaiming_normal_(self.input_kernel.weight.data, nonlinearity="relu")
        if orthogonal_map in ("matrix_exp", "cayley", "householder"):
            # through the parametrization's right_inverse
            self.recurrent_kernel.weight = nn.init.orthogonal_(torch.empty(self.hidden_size, self.hidden_size))
        else:
            original = self.recurrent_kernel.parametrizations.weight.original
            henaff_init_(original.data, torch.empty(self.hidden_size // 2).uniform_(-np.pi, np.pi))

    def default_hidden(self, input):
        return input.new_zeros(input.size(0), self.hidden_size, requires_grad=False)

    def forward(self, input, hidden):
        input = self.input_kernel(input)
        hidden = self.recurrent_kernel(hidden)
        out = input + hidden
        out = self.nonlinearity(out)
        return out, out


class Model(nn.Module):
    def __init__(self, n_classes, hidden_size, orthogonal_map):
        super(Model, self).__init__()
        self.hidden_size = hidden_size
        self.rnn = ExpRNN(n_classes + 1, hidden_size, orthogonal_map)
        self.lin = nn.Linear(hidden_size, n_classes)
        self.loss_func = nn.CrossEntropyLoss()

    def forward(self, inputs):
        state = self.rnn.default_hidden(inputs[:, 0, ...])
        outputs = []
        with P.cached():
            for input in torch.unbind(inputs, dim=1):
                out_rnn, state = self.rnn(input, state)
                outputs.append(self.lin(out_rnn))
        return torch.stack(outputs, dim=1)

    def loss(self, logits, y):
        return self.loss_func(logits.view(-1, 9), y.view(-1))


def copying_data(L, K, batch_size, rng):
    seq = rng.randint(1, high=9, size=(batch_size, K))
    zeros1 = np.zeros((batch_size, L))
    zeros2 = np.zeros((batch_size, K - 1))
    zeros3 = np.zeros((batch_size, K + L))
    marker = 9 * np.ones((batch_size, 1))
    x = torch.LongTensor(np.concatenate((seq, zeros1, marker, zeros2), axis=1))
    y = torch.LongTensor(np.concatenate((zeros3, seq), axis=1))
    return x, y


def onehot(input_x, n_classes):
    # input_x: (batch, time) int64 -> (batch, time, n_classes + 1)
    return F.one_hot(input_x, n_classes + 1).float()


def main(argv=None):
    parser = argparse.ArgumentParser(description='Exponential Layer Copy Task')
    parser.add_argument('--batch_size', type=int, default=16)
    parser.add_argument('--hidden_size', type=int, default=12)
    parser.add_argument('--iterations', type=int, default=10)
    parser.add_argument('--L', type=int, default=6)
    parser.add_argument('--lr', type=float, default=2e-3)
    parser.add_argument('--lr_orth', type=float, default=2e-4)
    parser.add_argument("--mode", choices=["matrix_exp", "cayley", "householder", "skew_exp", "cayley_tutorial"],
                        default="matrix_exp", type=str)
    parser.add_argument('--quiet', action='store_true')
    args = parser.parse_args(argv)
    log = (lambda *a: None) if args.quiet else print

    torch.manual_seed(5544)
    rng = np.random.RandomState(5544)
    n_classes = 9
    K = 10
    model = Model(n_classes, args.hidden_size, args.mode)
    initial_state = {k: v.clone() for k, v in model.state_dict().items()}

    orth_params = [p for n, p in model.named_parameters() if "recurrent_kernel" in n]
    un_params = [p for n, p in model.named_parameters() if "recurrent_kernel" not in n]
    optim = torch.optim.Adam(un_params, args.lr)
    optim_orth = torch.optim.RMSprop(orth_params, lr=args.lr_orth)

    # the tutorial's checks on a symmetric-parametrized layer
    layer = nn.Linear(3, 3)
    P.register_parametrization(layer, "weight", Symmetric())
    sym_ok = bool(torch.allclose(layer.weight, layer.weight.T))
    is_param = P.is_parametrized(layer), P.is_parametrized(layer, "bias")
    P.remove_parametrizations(layer, "weight", leave_parametrized=True)

    step_losses, accs, orth_err = [], [], []
    for step in range(args.iterations):
        batch_x, batch_y = copying_data(args.L, K, args.batch_size, rng)
        x_onehot = onehot(batch_x, n_classes)
        logits = model(x_onehot)
        loss = model.loss(logits, batch_y)

        optim.zero_grad()
        optim_orth.zero_grad()
        loss.backward()
        optim.step()
        optim_orth.step()

        with torch.no_grad():
            accuracy = copy_task_accuracy(logits, batch_y, args.L)
            W = model.rnn.recurrent_kernel.weight
            orth_err.append((W.T @ W - torch.eye(args.hidden_size)).abs().max().item())
        step_losses.append(loss.item())
        accs.append(accuracy)
        log("Iter {}: Loss= {:.6f}, Accuracy= {:.5f}".format(step, loss.item(), accuracy))

    return {"initial_state": initial_state, "step_losses": step_losses, "accs": accs, "orth_err": orth_err,
            "sym_ok": sym_ok, "is_param": is_param, "names": list(model.state_dict()),
            "W": model.rnn.recurrent_kernel.weight.detach().clone(),
            "sym_layer": dict(layer.named_parameters())["weight"].detach().clone()}


if __name__ == "__main__":
    main()
