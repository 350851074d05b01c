"""vsitzmann/siren's explore_siren.ipynb in plain torch: SineLayer with the first-layer / hidden-layer uniform
init under torch.no_grad() (self.linear.weight.uniform_(-1 / self.in_features, 1 / self.in_features) and
-np.sqrt(6 / self.in_features) / self.omega_0), torch.sin(self.omega_0 * self.linear(input)), the Siren network
with an outermost linear layer, get_mgrid by torch.linspace / torch.meshgrid(*tensors) / torch.stack(..., dim=-1)
/ reshape(-1, dim), coords.clone().detach().requires_grad_(True) so the network's input gradient can be taken,
the gradient / divergence / laplace operators by torch.autograd.grad(y, [x], grad_outputs=torch.ones_like(y),
create_graph=True), image fitting with MSE and Adam, Poisson-equation fitting on the gradients (second-order
backprop), and forward_with_activations's retain_grad() of intermediate activations."""
import argparse
from collections import OrderedDict

import numpy as np
import torch
from torch import nn


class SineLayer(nn.Module):
    def __init__(self, in_features, out_features, bias=True, is_first=False, omega_0=30):
        super().__init__()
        self.omega_0 = omega_0
        self.is_first = is_first
        self.in_features = in_features
        self.linear = nn.Linear(in_features, out_features, bias=bias)
        self.init_weights()

    def init_weights(self):
        with torch.no_grad():
            if self.is_first:
                self.linear.weight.uniform_(-1 / self.in_features, 1 / self.in_features)
            else:
                self.linear.weight.uniform_(-np.sqrt(6 / self.in_features) / self.omega_0,
                                            np.sqrt(6 / self.in_features) / self.omega_0)

    def forward(self, input):
        return torch.sin(self.omega_0 * self.linear(input))

    def forward_with_intermediate(self, input):
        intermediate = self.omega_0 * self.linear(input)
        return torch.sin(intermediate), intermediate


class Siren(nn.Module):
    def __init__(self, in_features, hidden_features, hidden_layers, out_features, outermost_linear=False,
                 first_omega_0=30, hidden_omega_0=30.):
        super().__init__()
        self.net = []
        self.net.append(SineLayer(in_features, hidden_features, is_first=True, omega_0=first_omega_0))
        for i in range(hidden_layers):
            self.net.append(SineLayer(hidden_features, hidden_features, is_first=False, omega_0=hidden_omega_0))
        if outermost_linear:
            final_linear = nn.Linear(hidden_features, out_features)
            with torch.no_grad():
                final_linear.weight.uniform_(-np.sqrt(6 / hidden_features) / hidden_omega_0,
                                             np.sqrt(6 / hidden_features) / hidden_omega_0)
            self.net.append(final_linear)
        else:
            self.net.append(SineLayer(hidden_features, out_features, is_first=False, omega_0=hidden_omega_0))
        self.net = nn.Sequential(*self.net)

    def forward(self, coords):
        coords = coords.clone().detach().requires_grad_(True)
        output = self.net(coords)
        return output, coords

    def forward_with_activations(self, coords, retain_grad=False):
        activations = OrderedDict()
        activation_count = 0
        x = coords.clone().detach().requires_grad_(True)
        activations['input'] = x
        for i, layer in enumerate(self.net):
            if isinstance(layer, SineLayer):
                x, intermed = layer.forward_with_intermediate(x)
                if retain_grad:
                    x.retain_grad()
                    intermed.retain_grad()
                activations['_'.join((str(layer.__class__), "%d" % activation_count))] = intermed
                activation_count += 1
            else:
                x = layer(x)
                if retain_grad:
                    x.retain_grad()
            activations['_'.join((str(layer.__class__), "%d" % activation_count))] = x
            activation_count += 1
        return activations


def laplace(y, x):
    grad = gradient(y, x)
    return divergence(grad, x)


def divergence(y, x):
    div = 0.
    for i in range(y.shape[-1]):
        div += torch.autograd.grad(y[..., i], x, torch.ones_like(y[..., i]), create_graph=True)[0][..., i:i + 1]
    return div


def gradient(y, x, grad_outputs=None):
    if grad_outputs is None:
        grad_outputs = torch.ones_like(y)
    grad = torch.autograd.grad(y, [x], grad_outputs=grad_outputs, create_graph=True)[0]
    return grad


def get_mgrid(sidelen, dim=2):
    tensors = tuple(dim * [torch.linspace(-1, 1, steps=sidelen)])
    mgrid = torch.stack(torch.meshgrid(*tensors), dim=-1)
    mgrid = mgrid.reshape(-1, dim)
    return mgrid


def get_image(sidelen):
    coords = get_mgrid(sidelen)
    x, y = coords[:, 0], coords[:, 1]
    img = torch.sin(3 * x) * torch.cos(2 * y) + 0.5 * torch.exp(-(x ** 2 + y ** 2) * 4)
    return img.view(-1, 1)


def main(argv=None):
    parser = argparse.ArgumentParser()
    parser.add_argument("--task", default="image")
    parser.add_argument("--steps", type=int, default=15)
    parser.add_argument("--quiet", action="store_true")
    args = parser.parse_args(argv)
    log = (lambda *a: None) if args.quiet else print
    torch.manual_seed(0)
    sidelen = 16
    model_input = get_mgrid(sidelen, 2)
    pixels = get_image(sidelen)
    img_siren = Siren(in_features=2, out_features=1, hidden_features=32, hidden_layers=2, outermost_linear=True)
    initial_state = {k: v.clone() for k, v in img_siren.state_dict().items()}
    optim = torch.optim.Adam(lr=1e-4, params=img_siren.parameters())
    step_losses, extra = [], {}
    if args.task == "poisson":
        # fit the image's gradient field (Sobel-free: the exact gradient of the analytic image)
        coords = model_input.clone().requires_grad_(True)
        x, y = coords[:, 0], coords[:, 1]
        img = torch.sin(3 * x) * torch.cos(2 * y) + 0.5 * torch.exp(-(x ** 2 + y ** 2) * 4)
        gt_grads = torch.autograd.grad(img.sum(), coords)[0].detach()
    for step in range(args.steps):
        model_output, coords = img_siren(model_input)
        if args.task == "image":
            loss = ((model_output - pixels) ** 2).mean()
        else:
            img_grad = gradient(model_output, coords)
            loss = ((img_grad - gt_grads) ** 2).mean()
        optim.zero_grad()
        loss.backward()
        optim.step()
        step_losses.append(loss.item())
        log("Step %d, Total loss %0.6f" % (step, loss))
    model_output, coords = img_siren(model_input)
    img_grad = gradient(model_output, coords)
    img_laplacian = laplace(model_output, coords)
    activations = img_siren.forward_with_activations(model_input[:20], retain_grad=True)
    out = activations[list(activations.keys())[-1]]
    out.sum().backward()
    grads = [v.grad for k, v in activations.items() if v.grad is not None]
    extra.update({"grad": img_grad.detach(), "laplacian": img_laplacian.detach(),
                  "act_grads": [g.clone() for g in grads], "act_keys": list(activations.keys())})
    return {"initial_state": initial_state, "step_losses": step_losses, **extra}


if __name__ == "__main__":
    main()
