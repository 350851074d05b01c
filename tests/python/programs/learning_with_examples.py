"""The "Learning PyTorch with Examples" tutorial: fitting y = sin(x) on torch.linspace(-pi, pi, 2000)
with a third-order polynomial, written seven ways as the tutorial does: tensors with hand-written
gradients, autograd (torch.no_grad updates, grad = None), a custom autograd.Function
(LegendrePolynomial3 with ctx.save_for_backward), nn.Sequential(Linear(3, 1), Flatten(0, 1)) on
x.unsqueeze(-1).pow(p) with MSELoss(reduction='sum'), the same with optim.RMSprop, a custom
nn.Module with scalar Parameters (torch.randn(())) and SGD, and DynamicNet (random.randint control
flow, parameter reuse, SGD with momentum)."""
import argparse
import math
import random

import torch


class LegendrePolynomial3(torch.autograd.Function):
    @staticmethod
    def forward(ctx, input):
        ctx.save_for_backward(input)
        return 0.5 * (5 * input ** 3 - 3 * input)

    @staticmethod
    def backward(ctx, grad_output):
        input, = ctx.saved_tensors
        return grad_output * 1.5 * (5 * input ** 2 - 1)


class Polynomial3(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a = torch.nn.Parameter(torch.randn(()))
        self.b = torch.nn.Parameter(torch.randn(()))
        self.c = torch.nn.Parameter(torch.randn(()))
        self.d = torch.nn.Parameter(torch.randn(()))

    def forward(self, x):
        return self.a + self.b * x + self.c * x ** 2 + self.d * x ** 3

    def string(self):
        return f'y = {self.a.item()} + {self.b.item()} x + {self.c.item()} x^2 + {self.d.item()} x^3'


class DynamicNet(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a = torch.nn.Parameter(torch.randn(()))
        self.b = torch.nn.Parameter(torch.randn(()))
        self.c = torch.nn.Parameter(torch.randn(()))
        self.d = torch.nn.Parameter(torch.randn(()))
        self.e = torch.nn.Parameter(torch.randn(()))

    def forward(self, x):
        y = self.a + self.b * x + self.c * x ** 2 + self.d * x ** 3
        for exp in range(4, random.randint(4, 6)):
            y = y + self.e * x ** exp
        return y

    def string(self):
        return f'y = {self.a.item()} + {self.b.item()} x + {self.c.item()} x^2 + {self.d.item()} x^3 + ' \
               f'{self.e.item()} x^4 ? + {self.e.item()} x^5 ?'


def main(argv=None):
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--quiet", action="store_true")
    args = parser.parse_args(argv)
    log = (lambda *a: None) if args.quiet else print
    torch.manual_seed(args.seed)
    random.seed(args.seed)
    dtype = torch.float
    device = torch.device("cpu")
    losses = {}
    results = {}

    # Create random input and output data
    x = torch.linspace(-math.pi, math.pi, 2000, device=device, dtype=dtype)
    y = torch.sin(x)

    # 1. tensors: manual gradients
    a = torch.randn((), device=device, dtype=dtype)
    b = torch.randn((), device=device, dtype=dtype)
    c = torch.randn((), device=device, dtype=dtype)
    d = torch.randn((), device=device, dtype=dtype)
    initial = [a.clone(), b.clone(), c.clone(), d.clone()]
    learning_rate = 1e-6
    losses["tensor"] = []
    for t in range(args.steps):
        y_pred = a + b * x + c * x ** 2 + d * x ** 3
        loss = (y_pred - y).pow(2).sum().item()
        losses["tensor"].append(loss)
        if t % 100 == 99:
            log(t, loss)
        grad_y_pred = 2.0 * (y_pred - y)
        grad_a = grad_y_pred.sum()
        grad_b = (grad_y_pred * x).sum()
        grad_c = (grad_y_pred * x ** 2).sum()
        grad_d = (grad_y_pred * x ** 3).sum()
        a -= learning_rate * grad_a
        b -= learning_rate * grad_b
        c -= learning_rate * grad_c
        d -= learning_rate * grad_d
    results["tensor"] = f'Result: y = {a.item()} + {b.item()} x + {c.item()} x^2 + {d.item()} x^3'

    # 2. autograd
    a = torch.randn((), device=device, dtype=dtype, requires_grad=True)
    b = torch.randn((), device=device, dtype=dtype, requires_grad=True)
    c = torch.randn((), device=device, dtype=dtype, requires_grad=True)
    d = torch.randn((), device=device, dtype=dtype, requires_grad=True)
    losses["autograd"] = []
    for t in range(args.steps):
        y_pred = a + b * x + c * x ** 2 + d * x ** 3
        loss = (y_pred - y).pow(2).sum()
        losses["autograd"].append(loss.item())
        loss.backward()
        with torch.no_grad():
            a -= learning_rate * a.grad
            b -= learning_rate * b.grad
            c -= learning_rate * c.grad
            d -= learning_rate * d.grad
            a.grad = None
            b.grad = None
            c.grad = None
            d.grad = None
    results["autograd"] = f'Result: y = {a.item()} + {b.item()} x + {c.item()} x^2 + {d.item()} x^3'

    # 3. a custom autograd Function
    a = torch.full((), 0.0, device=device, dtype=dtype, requires_grad=True)
    b = torch.full((), -1.0, device=device, dtype=dtype, requires_grad=True)
    c = torch.full((), 0.0, device=device, dtype=dtype, requires_grad=True)
    d = torch.full((), 0.3, device=device, dtype=dtype, requires_grad=True)
    learning_rate = 5e-6
    losses["function"] = []
    for t in range(args.steps):
        P3 = LegendrePolynomial3.apply
        y_pred = a + b * P3(c + d * x)
        loss = (y_pred - y).pow(2).sum()
        losses["function"].append(loss.item())
        loss.backward()
        with torch.no_grad():
            a -= learning_rate * a.grad
            b -= learning_rate * b.grad
            c -= learning_rate * c.grad
            d -= learning_rate * d.grad
            a.grad = None
            b.grad = None
            c.grad = None
            d.grad = None
    results["function"] = f'Result: y = {a.item()} + {b.item()} * P3({c.item()} + {d.item()} x)'

    # 4. nn
    p = torch.tensor([1, 2, 3])
    xx = x.unsqueeze(-1).pow(p)
    model = torch.nn.Sequential(
        torch.nn.Linear(3, 1),
        torch.nn.Flatten(0, 1)
    )
    initial += [v.clone() for v in model.state_dict().values()]
    loss_fn = torch.nn.MSELoss(reduction='sum')
    learning_rate = 1e-6
    losses["nn"] = []
    for t in range(args.steps):
        y_pred = model(xx)
        loss = loss_fn(y_pred, y)
        losses["nn"].append(loss.item())
        model.zero_grad()
        loss.backward()
        with torch.no_grad():
            for param in model.parameters():
                param -= learning_rate * param.grad
    linear_layer = model[0]
    results["nn"] = (f'Result: y = {linear_layer.bias.item()} + {linear_layer.weight[:, 0].item()} x + '
                     f'{linear_layer.weight[:, 1].item()} x^2 + {linear_layer.weight[:, 2].item()} x^3')

    # 5. optim
    model = torch.nn.Sequential(
        torch.nn.Linear(3, 1),
        torch.nn.Flatten(0, 1)
    )
    loss_fn = torch.nn.MSELoss(reduction='sum')
    learning_rate = 1e-3
    optimizer = torch.optim.RMSprop(model.parameters(), lr=learning_rate)
    losses["optim"] = []
    for t in range(args.steps):
        y_pred = model(xx)
        loss = loss_fn(y_pred, y)
        losses["optim"].append(loss.item())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    linear_layer = model[0]
    results["optim"] = (f'Result: y = {linear_layer.bias.item()} + {linear_layer.weight[:, 0].item()} x + '
                        f'{linear_layer.weight[:, 1].item()} x^2 + {linear_layer.weight[:, 2].item()} x^3')

    # 6. a custom nn Module
    model = Polynomial3()
    criterion = torch.nn.MSELoss(reduction='sum')
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-6)
    losses["module"] = []
    for t in range(args.steps):
        y_pred = model(x)
        loss = criterion(y_pred, y)
        losses["module"].append(loss.item())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    results["module"] = f'Result: {model.string()}'

    # 7. control flow and weight sharing
    model = DynamicNet()
    criterion = torch.nn.MSELoss(reduction='sum')
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-8, momentum=0.9)
    losses["dynamic"] = []
    for t in range(args.steps * 15):
        y_pred = model(x)
        loss = criterion(y_pred, y)
        losses["dynamic"].append(loss.item())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    results["dynamic"] = f'Result: {model.string()}'
    for r in results.values():
        log(r)
    step_losses = [v for k in losses for v in losses[k]]
    return {"initial_state": {"p%d" % i: v for i, v in enumerate(initial)}, "step_losses": step_losses,
            "losses": losses, "results": results}


if __name__ == "__main__":
    main()
