"""Three advanced autograd tutorials of pytorch.org, as written:
- "Double Backward with Custom Functions": Square (save_for_backward of the input), Exp (saving the output), Sinh
  (saving intermediate results by returning them as outputs, with ctx.mark_non_differentiable and the
  create_graph-safe backward), checked by torch.autograd.gradcheck / gradgradcheck on double inputs;
- "Fusing Convolution and Batch Norm using Custom Function": convolution_backward by torch.nn.grad.conv2d_input /
  conv2d_weight, batch_norm_backward by hand, the FusedConvBN2DFunction (ctx.save_for_backward, unbiased var,
  eps), its FusedConvBN module (nn.Parameter(torch.empty(...)) + kaiming_uniform_ / ones_ / zeros_), gradcheck of
  the function, and its Net(fused=True / False) trained on MNIST-shaped batches with Adadelta + StepLR;
- "Forward-mode Automatic Differentiation": fwAD.dual_level(), make_dual, unpack_dual (.tangent) through a function
  and through an nn.Module by torch.nn.utils.stateless.functional_call with dual parameters, compared with
  torch.autograd.functional.jvp; plus torch.autograd.functional.jacobian / hessian / hvp / vhp / vjp driving a
  damped Newton method on a small logistic regression."""
import argparse

import torch
import torch.autograd.forward_ad as fwAD
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim
from torch.autograd.functional import hessian, hvp, jacobian, jvp, vhp, vjp


class Square(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x ** 2

    @staticmethod
    def backward(ctx, grad_out):
        x, = ctx.saved_tensors
        return grad_out * 2 * x


class Exp(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        result = torch.exp(x)
        ctx.save_for_backward(result)
        return result

    @staticmethod
    def backward(ctx, grad_out):
        result, = ctx.saved_tensors
        return result * grad_out


class Sinh(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        expx = torch.exp(x)
        expnegx = torch.exp(-x)
        ctx.save_for_backward(expx, expnegx)
        return (expx - expnegx) / 2, expx, expnegx

    @staticmethod
    def backward(ctx, grad_out, _grad_out_exp, _grad_out_negexp):
        expx, expnegx = ctx.saved_tensors
        grad_input = grad_out * (expx + expnegx) / 2
        grad_input += _grad_out_exp * expx
        grad_input -= _grad_out_negexp * expnegx
        return grad_input


def sinh(x):
    return Sinh.apply(x)[0]


def convolution_backward(grad_out, X, weight):
    grad_input = F.conv2d(X.transpose(0, 1), grad_out.transpose(0, 1)).transpose(0, 1)
    grad_X = F.conv_transpose2d(grad_out, weight)
    return grad_X, grad_input


class Conv2D(torch.autograd.Function):
    @staticmethod
    def forward(ctx, X, weight):
        ctx.save_for_backward(X, weight)
        return F.conv2d(X, weight)

    @staticmethod
    def backward(ctx, grad_out):
        X, weight = ctx.saved_tensors
        return convolution_backward(grad_out, X, weight)


def unsqueeze_all(t):
    return t[None, :, None, None]


def batch_norm_backward(grad_out, X, sum, sqrt_var, N, eps):
    tmp = ((X - unsqueeze_all(sum) / N) * grad_out).sum(dim=(0, 2, 3))
    tmp *= -1
    d_denom = tmp / (sqrt_var + eps) ** 2
    d_var = d_denom / (2 * sqrt_var)
    d_mean_dx = grad_out / unsqueeze_all(sqrt_var + eps)
    d_mean_dx = unsqueeze_all(-d_mean_dx.sum(dim=(0, 2, 3)) / N)
    grad_input = X * unsqueeze_all(d_var * N)
    grad_input += unsqueeze_all(-d_var * sum)
    grad_input *= 2 / ((N - 1) * N)
    grad_input += d_mean_dx
    grad_input *= unsqueeze_all(sqrt_var + eps)
    grad_input += grad_out
    grad_input /= unsqueeze_all(sqrt_var + eps)
    return grad_input


class BatchNorm(torch.autograd.Function):
    @staticmethod
    def forward(ctx, X, eps=1e-3):
        sum = X.sum(dim=(0, 2, 3))
        var = X.var(unbiased=True, dim=(0, 2, 3))
        N = X.numel() / X.size(1)
        sqrt_var = torch.sqrt(var)
        ctx.save_for_backward(X)
        ctx.eps = eps
        ctx.sum = sum
        ctx.N = N
        ctx.sqrt_var = sqrt_var
        mean = sum / N
        denom = sqrt_var + eps
        out = X - unsqueeze_all(mean)
        out /= unsqueeze_all(denom)
        return out

    @staticmethod
    def backward(ctx, grad_out):
        X, = ctx.saved_tensors
        return batch_norm_backward(grad_out, X, ctx.sum, ctx.sqrt_var, ctx.N, ctx.eps)


class FusedConvBN2DFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, X, conv_weight, eps=1e-3):
        assert X.ndim == 4
        ctx.save_for_backward(X, conv_weight)
        X = F.conv2d(X, conv_weight)
        sum = X.sum(dim=(0, 2, 3))
        var = X.var(unbiased=True, dim=(0, 2, 3))
        N = X.numel() / X.size(1)
        sqrt_var = torch.sqrt(var)
        ctx.eps = eps
        ctx.sum = sum
        ctx.N = N
        ctx.sqrt_var = sqrt_var
        mean = sum / N
        denom = sqrt_var + eps
        X.sub_(unsqueeze_all(mean))
        X.div_(unsqueeze_all(denom))
        return X

    @staticmethod
    def backward(ctx, grad_out):
        X, conv_weight, = ctx.saved_tensors
        X_conv_out = F.conv2d(X, conv_weight)
        grad_out = batch_norm_backward(grad_out, X_conv_out, ctx.sum, ctx.sqrt_var, ctx.N, ctx.eps)
        grad_X = torch.nn.grad.conv2d_input(X.shape, conv_weight, grad_out)
        grad_input = torch.nn.grad.conv2d_weight(X, conv_weight.shape, grad_out)
        return grad_X, grad_input, None, None, None, None, None


class FusedConvBN(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, exp_avg_factor=0.1, eps=1e-3, device=None,
                 dtype=None):
        super(FusedConvBN, self).__init__()
        factory_kwargs = {'device': device, 'dtype': dtype}
        weight_shape = (out_channels, in_channels, kernel_size, kernel_size)
        self.conv_weight = nn.Parameter(torch.empty(*weight_shape, **factory_kwargs))
        self.eps = eps
        self.reset_parameters()

    def forward(self, X):
        return FusedConvBN2DFunction.apply(X, self.conv_weight, self.eps)

    def reset_parameters(self) -> None:
        torch.nn.init.kaiming_uniform_(self.conv_weight, a=5 ** 0.5)


class Net(nn.Module):
    def __init__(self, fused=True):
        super(Net, self).__init__()
        self.fused = fused
        if fused:
            self.convbn1 = FusedConvBN(1, 8, 3)
            self.convbn2 = FusedConvBN(8, 16, 3)
        else:
            self.conv1 = nn.Conv2d(1, 8, 3, 1, bias=False)
            self.bn1 = nn.BatchNorm2d(8, affine=False, track_running_stats=False)
            self.conv2 = nn.Conv2d(8, 16, 3, 1, bias=False)
            self.bn2 = nn.BatchNorm2d(16, affine=False, track_running_stats=False)
        self.fc1 = nn.Linear(64, 32)
        self.dropout = nn.Dropout(0.5)
        self.fc2 = nn.Linear(32, 10)

    def forward(self, x):
        if self.fused:
            x = self.convbn1(x)
        else:
            x = self.conv1(x)
            x = self.bn1(x)
        F.relu_(x)
        if self.fused:
            x = self.convbn2(x)
        else:
            x = self.conv2(x)
            x = self.bn2(x)
        F.relu_(x)
        x = F.max_pool2d(x, 2)
        F.relu_(x)
        x = x.flatten(1)
        x = self.fc1(x)
        x = self.dropout(x)
        F.relu_(x)
        x = self.fc2(x)
        output = F.log_softmax(x, dim=1)
        return output


def custom_function_checks():
    out = {}
    x = torch.rand(3, 3, requires_grad=True, dtype=torch.double)
    out["square"] = (torch.autograd.gradcheck(Square.apply, x), torch.autograd.gradgradcheck(Square.apply, x))
    out["exp"] = (torch.autograd.gradcheck(Exp.apply, x), torch.autograd.gradgradcheck(Exp.apply, x))
    out["sinh"] = (torch.autograd.gradcheck(sinh, x), torch.autograd.gradgradcheck(sinh, x))
    weight = torch.rand(5, 3, 3, 3, requires_grad=True, dtype=torch.double)
    X = torch.rand(2, 3, 5, 5, requires_grad=True, dtype=torch.double)
    out["conv"] = torch.autograd.gradcheck(Conv2D.apply, (X, weight))
    a = torch.rand(1, 2, 3, 4, requires_grad=True, dtype=torch.double)
    out["bn"] = torch.autograd.gradcheck(BatchNorm.apply, (a,), fast_mode=False)
    weight = torch.rand(5, 3, 3, 3, requires_grad=True, dtype=torch.double)
    X = torch.rand(2, 3, 4, 4, requires_grad=True, dtype=torch.double)
    out["fused"] = torch.autograd.gradcheck(FusedConvBN2DFunction.apply, (X, weight))
    y = torch.tensor([0.3, -1.2, 2.0], dtype=torch.double, requires_grad=True)
    s = sinh(y)
    g, = torch.autograd.grad(s.sum(), y, create_graph=True)
    gg, = torch.autograd.grad(g.sum(), y)
    out["sinh_grads"] = (g.detach(), gg)
    return out


def forward_ad_checks():
    def fn(x, y):
        return x ** 2 + y ** 2

    primal = torch.randn(10, 10)
    tangent = torch.randn(10, 10)
    with fwAD.dual_level():
        dual_input = fwAD.make_dual(primal, tangent)
        plain_tensor = torch.randn(10, 10)
        dual_output = fn(dual_input, plain_tensor)
        jvp_out = fwAD.unpack_dual(dual_output).tangent
    model = nn.Linear(5, 5)
    input = torch.randn(16, 5)
    params = {name: p for name, p in model.named_parameters()}
    tangents = {name: torch.rand_like(p) for name, p in params.items()}
    with fwAD.dual_level():
        for name, p in params.items():
            delattr(model, name)
            setattr(model, name, fwAD.make_dual(p, tangents[name]))
        out = model(input)
        jvp_model = fwAD.unpack_dual(out).tangent
    model2 = nn.Linear(5, 5)
    params2 = {name: p.detach() for name, p in model2.named_parameters()}
    with fwAD.dual_level():
        dual_params = {name: fwAD.make_dual(p, tangents[name]) for name, p in params2.items()}
        out2 = torch.nn.utils.stateless.functional_call(model2, dual_params, (input,))
        jvp_functional = fwAD.unpack_dual(out2).tangent
    _, jvp_ref = jvp(lambda x: fn(x, plain_tensor), (primal,), (tangent,))
    return {"jvp": jvp_out, "jvp_ref": jvp_ref, "jvp_model": jvp_model, "jvp_functional": jvp_functional}


def newton_logistic(steps):
    X = torch.randn(64, 4, dtype=torch.double)
    w_true = torch.tensor([1.5, -2.0, 0.5, 1.0], dtype=torch.double)
    y = (torch.sigmoid(X @ w_true) > torch.rand(64, dtype=torch.double)).double()

    def nll(w):
        return F.binary_cross_entropy_with_logits(X @ w, y) + 0.01 * (w * w).sum()

    w = torch.zeros(4, dtype=torch.double)
    losses, extras = [], {}
    for k in range(steps):
        g = jacobian(nll, w)
        H = hessian(nll, w)
        step = torch.linalg.solve(H, g)
        w = w - step
        losses.append(nll(w).item())
    v = torch.ones(4, dtype=torch.double)
    extras["hvp"] = hvp(nll, w, v)[1]
    extras["vhp"] = vhp(nll, w, v)[1]
    extras["vjp"] = vjp(lambda w: torch.sigmoid(X @ w), w, torch.ones(64, dtype=torch.double))[1]
    extras["jac_vec"] = jacobian(lambda w: torch.sigmoid(X[:5] @ w), w, vectorize=False, create_graph=False)
    extras["w"] = w
    return losses, extras


def main(argv=None):
    parser = argparse.ArgumentParser()
    parser.add_argument("--fused", type=int, default=1)
    parser.add_argument("--steps", type=int, default=12)
    parser.add_argument("--quiet", action="store_true")
    args = parser.parse_args(argv)
    log = (lambda *a: None) if args.quiet else print
    torch.manual_seed(123456)
    checks = custom_function_checks()
    fwd = forward_ad_checks()
    newton_losses, newton = newton_logistic(6)
    model = Net(fused=bool(args.fused))
    initial_state = {k: v.clone() for k, v in model.state_dict().items()}
    optimizer = optim.Adadelta(model.parameters(), lr=1.0)
    scheduler = optim.lr_scheduler.StepLR(optimizer, step_size=4, gamma=0.7)
    data = torch.randn(args.steps, 16, 1, 8, 8)
    target = torch.randint(0, 10, (args.steps, 16))
    step_losses = []
    model.train()
    for batch_idx in range(args.steps):
        optimizer.zero_grad()
        output = model(data[batch_idx])
        loss = F.nll_loss(output, target[batch_idx])
        loss.backward()
        optimizer.step()
        if batch_idx % 4 == 3:
            scheduler.step()
        step_losses.append(loss.item())
        log(f"Train step {batch_idx} loss {loss.item():.6f}")
    return {"initial_state": initial_state, "step_losses": step_losses, "checks": checks, "newton": newton_losses,
            "newton_extras": newton, **fwd}


if __name__ == "__main__":
    main()
