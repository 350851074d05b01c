"""The PyTorch port of Raissi's physics-informed neural networks (the widely copied "PINNs/Burgers Identification
(PyTorch)" notebook): DNN built from an OrderedDict of ('layer_%d', torch.nn.Linear) / ('activation_%d',
torch.nn.Tanh) entries, PhysicsInformedNN with lambda_1 / lambda_2 as torch.nn.Parameter(torch.tensor([0.0],
requires_grad=True)) registered on the network by register_parameter, net_f's derivatives by
torch.autograd.grad(u, x, grad_outputs=torch.ones_like(u), retain_graph=True, create_graph=True)[0] (u_t, u_x and
u_xx of u_x), the loss torch.mean((self.u - u_pred) ** 2) + torch.mean(f_pred ** 2), the LBFGS optimizer
(lr=1.0, history_size=50, tolerance_change=1.0 * np.finfo(float).eps, line_search_fn="strong_wolfe") with a
closure counting self.iter, and the Adam phase. The training data is the analytic viscous Burgers solution of a travelling tanh front."""
import argparse
from collections import OrderedDict

import numpy as np
import torch


class DNN(torch.nn.Module):
    def __init__(self, layers):
        super(DNN, self).__init__()

        # parameters
        self.depth = len(layers) - 1

        # set up layer order dict
        self.activation = torch.nn.Tanh

        layer_list = list()
        for i in range(self.depth - 1):
            layer_list.append(
                ('layer_%d' % i, torch.nn.Linear(layers[i], layers[i+1]))
            )
            layer_list.append(('activation_%d' % i, self.activation()))

        layer_list.append(
            ('layer_%d' % (self.depth - 1), torch.nn.Linear(layers[-2], layers[-1]))
        )
        layerDict = OrderedDict(layer_list)

        # deploy layers
        self.layers = torch.nn.Sequential(layerDict)

    def forward(self, x):
        out = self.layers(x)
        return out


class PhysicsInformedNN():
    def __init__(self, X, u, layers, lb, ub, device, log, max_iter):

        # boundary conditions
        self.lb = torch.tensor(lb).float().to(device)
        self.ub = torch.tensor(ub).float().to(device)

        # data
        self.x = torch.tensor(X[:, 0:1], requires_grad=True).float().to(device)
        self.t = torch.tensor(X[:, 1:2], requires_grad=True).float().to(device)
        self.u = torch.tensor(u).float().to(device)

        # settings
        self.lambda_1 = torch.tensor([0.0], requires_grad=True).to(device)
        self.lambda_2 = torch.tensor([-6.0], requires_grad=True).to(device)

        self.lambda_1 = torch.nn.Parameter(self.lambda_1)
        self.lambda_2 = torch.nn.Parameter(self.lambda_2)

        # deep neural networks
        self.dnn = DNN(layers).to(device)
        self.dnn.register_parameter('lambda_1', self.lambda_1)
        self.dnn.register_parameter('lambda_2', self.lambda_2)

        # optimizers: using the same settings
        self.optimizer = torch.optim.LBFGS(
            self.dnn.parameters(),
            lr=1.0,
            max_iter=max_iter,
            max_eval=max_iter,
            history_size=50,
            tolerance_grad=1e-5,
            tolerance_change=1.0 * np.finfo(float).eps,
            line_search_fn="strong_wolfe"       # can be "strong_wolfe"
        )

        self.optimizer_Adam = torch.optim.Adam(self.dnn.parameters())
        self.iter = 0
        self.log = log
        self.losses = []

    def net_u(self, x, t):
        u = self.dnn(torch.cat([x, t], dim=1))
        return u

    def net_f(self, x, t):
        """ The pytorch autograd version of calculating residual """
        lambda_1 = self.lambda_1
        lambda_2 = torch.exp(self.lambda_2)
        u = self.net_u(x, t)

        u_t = torch.autograd.grad(
            u, t,
            grad_outputs=torch.ones_like(u),
            retain_graph=True,
            create_graph=True
        )[0]
        u_x = torch.autograd.grad(
            u, x,
            grad_outputs=torch.ones_like(u),
            retain_graph=True,
            create_graph=True
        )[0]
        u_xx = torch.autograd.grad(
            u_x, x,
            grad_outputs=torch.ones_like(u_x),
            retain_graph=True,
            create_graph=True
        )[0]

        f = u_t + lambda_1 * u * u_x - lambda_2 * u_xx
        return f

    def loss_func(self):
        u_pred = self.net_u(self.x, self.t)
        f_pred = self.net_f(self.x, self.t)
        loss = torch.mean((self.u - u_pred) ** 2) + torch.mean(f_pred ** 2)
        self.optimizer.zero_grad()
        loss.backward()

        self.iter += 1
        self.losses.append(loss.item())
        if self.iter % 10 == 0:
            self.log(
                'Loss: %e, l1: %.5f, l2: %.5f' %
                (
                    loss.item(),
                    self.lambda_1.item(),
                    torch.exp(self.lambda_2.detach()).item()
                )
            )
        return loss

    def train(self, nIter):
        self.dnn.train()
        for epoch in range(nIter):
            u_pred = self.net_u(self.x, self.t)
            f_pred = self.net_f(self.x, self.t)
            loss = torch.mean((self.u - u_pred) ** 2) + torch.mean(f_pred ** 2)

            # Backward and optimize
            self.optimizer_Adam.zero_grad()
            loss.backward()
            self.optimizer_Adam.step()
            self.losses.append(loss.item())

            if epoch % 10 == 0:
                self.log(
                    'It: %d, Loss: %.3e, Lambda_1: %.3f, Lambda_2: %.6f' %
                    (
                        epoch,
                        loss.item(),
                        self.lambda_1.item(),
                        torch.exp(self.lambda_2).item()
                    )
                )

        # Backward and optimize
        self.optimizer.step(self.loss_func)

    def predict(self, X):
        x = torch.tensor(X[:, 0:1], requires_grad=True).float()
        t = torch.tensor(X[:, 1:2], requires_grad=True).float()

        self.dnn.eval()
        u = self.net_u(x, t)
        f = self.net_f(x, t)
        u = u.detach().cpu().numpy()
        f = f.detach().cpu().numpy()
        return u, f


def main(argv=None):
    parser = argparse.ArgumentParser()
    parser.add_argument('--n', type=int, default=200)
    parser.add_argument('--adam', type=int, default=20)
    parser.add_argument('--lbfgs', type=int, default=30)
    parser.add_argument('--quiet', action='store_true')
    args = parser.parse_args(argv)
    log = (lambda *a: None) if args.quiet else print

    if True:
        np.random.seed(1234)
        torch.manual_seed(1234)
        device = torch.device('cpu')
        nu = 0.01 / np.pi
        x = np.linspace(-1, 1, 64)
        t = np.linspace(0, 1, 32)
        X, T = np.meshgrid(x, t)
        Exact = 0.5 * (1 - np.tanh((X - 0.5 * T) / (4 * nu * 20)))  # a travelling front (a Burgers solution)
        X_star = np.hstack((X.flatten()[:, None], T.flatten()[:, None]))
        u_star = Exact.flatten()[:, None]
        lb, ub = X_star.min(0), X_star.max(0)
        idx = np.random.choice(X_star.shape[0], args.n, replace=False)
        X_u_train = X_star[idx, :]
        u_train = u_star[idx, :]
        layers = [2, 16, 16, 16, 1]

        model = PhysicsInformedNN(X_u_train, u_train, layers, lb, ub, device, log, args.lbfgs)
        initial_state = {k: v.clone() for k, v in model.dnn.state_dict().items()}
        model.train(args.adam)
        u_pred, f_pred = model.predict(X_star)
        error_u = np.linalg.norm(u_star - u_pred, 2) / np.linalg.norm(u_star, 2)
        return {"initial_state": initial_state, "step_losses": model.losses, "n_closure": model.iter,
                "lambda_1": model.lambda_1.item(), "lambda_2": torch.exp(model.lambda_2).item(),
                "error_u": error_u, "f_pred": f_pred, "dtype": str(model.x.dtype)}


if __name__ == "__main__":
    main()
