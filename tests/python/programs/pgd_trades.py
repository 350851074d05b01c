"""Adversarial training as written in MadryLab-style PGD and yaodongyu/TRADES (trades.py): PGD with a random
start (x + torch.zeros_like(x).uniform_(-eps, eps)), x_adv.requires_grad_(), torch.autograd.grad(loss, [x_adv])[0],
x_adv.detach() + step_size * torch.sign(grad.detach()), torch.min(torch.max(x_adv, x_natural - epsilon), x_natural +
epsilon), torch.clamp(x_adv, 0.0, 1.0); TRADES' x_adv = x_natural.detach() + 0.001 * torch.randn(x_natural.shape)
.detach(), criterion_kl = nn.KLDivLoss(size_average=False) over F.log_softmax / F.softmax, model.eval() during the
attack and model.train() after, Variable(torch.clamp(x_adv, 0.0, 1.0), requires_grad=False), the natural
cross-entropy plus (1.0 / batch_size) * beta * KL robust loss, and the "l2" variant (delta = 0.001 *
torch.randn(...), Variable(delta.data, requires_grad=True), optim.SGD([delta], lr=epsilon / perturb_steps * 2),
grad renormalisation by delta.grad.view(batch_size, -1).norm(p=2, dim=1), torch.randn_like on zero norms,
delta.data.add_(x_natural), clamp_(0, 1).sub_(x_natural), delta.data.renorm_(p=2, dim=0, maxnorm=epsilon)); then
FGSM / PGD robust accuracy with adjust_learning_rate by epochs."""
import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim
from torch.autograd import Variable


class SmallCNN(nn.Module):
    def __init__(self, drop=0.5):
        super(SmallCNN, self).__init__()
        self.num_channels = 1
        self.num_labels = 4
        activ = nn.ReLU(True)
        self.feature_extractor = nn.Sequential(
            nn.Conv2d(self.num_channels, 8, 3), activ,
            nn.Conv2d(8, 8, 3), activ,
            nn.MaxPool2d(2, 2))
        self.classifier = nn.Sequential(
            nn.Linear(8 * 4 * 4, 32), activ,
            nn.Dropout(drop),
            nn.Linear(32, self.num_labels))
        for m in self.modules():
            if isinstance(m, (nn.Conv2d)):
                nn.init.kaiming_normal_(m.weight)
                if m.bias is not None:
                    nn.init.constant_(m.bias, 0)
        nn.init.constant_(self.classifier[-1].weight, 0)
        nn.init.constant_(self.classifier[-1].bias, 0)

    def forward(self, input):
        features = self.feature_extractor(input)
        logits = self.classifier(features.view(-1, 8 * 4 * 4))
        return logits


def trades_loss(model, x_natural, y, optimizer, step_size=0.003, epsilon=0.031, perturb_steps=10, beta=1.0,
                distance='l_inf'):
    criterion_kl = nn.KLDivLoss(size_average=False)
    model.eval()
    batch_size = len(x_natural)
    x_adv = x_natural.detach() + 0.001 * torch.randn(x_natural.shape).detach()
    if distance == 'l_inf':
        for _ in range(perturb_steps):
            x_adv.requires_grad_()
            with torch.enable_grad():
                loss_kl = criterion_kl(F.log_softmax(model(x_adv), dim=1), F.softmax(model(x_natural), dim=1))
            grad = torch.autograd.grad(loss_kl, [x_adv])[0]
            x_adv = x_adv.detach() + step_size * torch.sign(grad.detach())
            x_adv = torch.min(torch.max(x_adv, x_natural - epsilon), x_natural + epsilon)
            x_adv = torch.clamp(x_adv, 0.0, 1.0)
    elif distance == 'l_2':
        delta = 0.001 * torch.randn(x_natural.shape).detach()
        delta = Variable(delta.data, requires_grad=True)
        optimizer_delta = optim.SGD([delta], lr=epsilon / perturb_steps * 2)
        for _ in range(perturb_steps):
            adv = x_natural + delta
            optimizer_delta.zero_grad()
            with torch.enable_grad():
                loss = (-1) * criterion_kl(F.log_softmax(model(adv), dim=1), F.softmax(model(x_natural), dim=1))
            loss.backward()
            grad_norms = delta.grad.view(batch_size, -1).norm(p=2, dim=1)
            delta.grad.div_(grad_norms.view(-1, 1, 1, 1))
            if (grad_norms == 0).any():
                delta.grad[grad_norms == 0] = torch.randn_like(delta.grad[grad_norms == 0])
            optimizer_delta.step()
            delta.data.add_(x_natural)
            delta.data.clamp_(0, 1).sub_(x_natural)
            delta.data.renorm_(p=2, dim=0, maxnorm=epsilon)
        x_adv = Variable(x_natural + delta, requires_grad=False)
    else:
        x_adv = torch.clamp(x_adv, 0.0, 1.0)
    model.train()
    x_adv = Variable(torch.clamp(x_adv, 0.0, 1.0), requires_grad=False)
    optimizer.zero_grad()
    logits = model(x_natural)
    loss_natural = F.cross_entropy(logits, y)
    loss_robust = (1.0 / batch_size) * criterion_kl(F.log_softmax(model(x_adv), dim=1), F.softmax(model(x_natural), dim=1))
    loss = loss_natural + beta * loss_robust
    return loss


def pgd_attack(model, X, y, epsilon=0.031, num_steps=5, step_size=0.01, random=True):
    out = model(X)
    err = (out.data.max(1)[1] != y.data).float().sum()
    X_pgd = Variable(X.data, requires_grad=True)
    if random:
        random_noise = torch.FloatTensor(*X_pgd.shape).uniform_(-epsilon, epsilon)
        X_pgd = Variable(X_pgd.data + random_noise, requires_grad=True)
    for _ in range(num_steps):
        opt = optim.SGD([X_pgd], lr=1e-3)
        opt.zero_grad()
        with torch.enable_grad():
            loss = nn.CrossEntropyLoss()(model(X_pgd), y)
        loss.backward()
        eta = step_size * X_pgd.grad.data.sign()
        X_pgd = Variable(X_pgd.data + eta, requires_grad=True)
        eta = torch.clamp(X_pgd.data - X.data, -epsilon, epsilon)
        X_pgd = Variable(X.data + eta, requires_grad=True)
        X_pgd = Variable(torch.clamp(X_pgd, 0, 1.0), requires_grad=True)
    err_pgd = (model(X_pgd).data.max(1)[1] != y.data).float().sum()
    return err, err_pgd


def adjust_learning_rate(optimizer, epoch, lr=0.05):
    if epoch >= 3:
        lr = lr * 0.1
    for param_group in optimizer.param_groups:
        param_group['lr'] = lr


def main(argv=None):
    parser = argparse.ArgumentParser()
    parser.add_argument("--distance", default="l_inf", choices=["l_inf", "l_2", "madry"])
    parser.add_argument("--steps", type=int, default=5)
    parser.add_argument("--quiet", action="store_true")
    args = parser.parse_args(argv)
    log = (lambda *a: None) if args.quiet else print
    torch.manual_seed(0)
    model = SmallCNN(drop=0.2)
    initial_state = {k: v.clone() for k, v in model.state_dict().items()}
    optimizer = optim.SGD(model.parameters(), lr=0.05, momentum=0.9, weight_decay=2e-4)
    protos = torch.rand(4, 1, 12, 12)
    step_losses, errs = [], []
    for epoch in range(args.steps):
        adjust_learning_rate(optimizer, epoch)
        y = torch.randint(0, 4, (8,))
        data = (protos[y] + 0.2 * torch.randn(8, 1, 12, 12)).clamp(0, 1)
        model.train()
        if args.distance == "madry":
            x_adv = data + torch.zeros_like(data).uniform_(-0.1, 0.1)
            for _ in range(3):
                x_adv.requires_grad_()
                with torch.enable_grad():
                    l = F.cross_entropy(model(x_adv), y)
                grad = torch.autograd.grad(l, [x_adv])[0]
                x_adv = x_adv.detach() + 0.03 * torch.sign(grad.detach())
                x_adv = torch.min(torch.max(x_adv, data - 0.1), data + 0.1).clamp(0, 1)
            optimizer.zero_grad()
            loss = F.cross_entropy(model(x_adv), y)
        else:
            loss = trades_loss(model=model, x_natural=data, y=y, optimizer=optimizer, step_size=0.01, epsilon=0.1,
                               perturb_steps=4, beta=6.0, distance=args.distance)
        loss.backward()
        optimizer.step()
        step_losses.append(loss.item())
        model.eval()
        err, err_pgd = pgd_attack(model, data, y, epsilon=0.1, num_steps=3, step_size=0.03)
        errs.append((err.item(), err_pgd.item()))
        log("epoch %d loss %.4f err %d pgd err %d" % (epoch, loss.item(), err.item(), err_pgd.item()))
    return {"initial_state": initial_state, "step_losses": step_losses, "errs": errs}


if __name__ == "__main__":
    main()
