"""Two popular classification heads/losses as their repos write them: clcarwin/focal_loss_pytorch's FocalLoss
(Variable, the isinstance(alpha, (float, int)) / list alpha turned into torch.Tensor, input.view(N, C, -1)
.transpose(1, 2).contiguous(), logpt.gather(1, target), logpt.data.exp(), `self.alpha.type() != input.data.type()`
then type_as, at = self.alpha.gather(0, target.data.view(-1)), size_average) and ronghuaiyang/arcface-pytorch's
ArcMarginProduct / AddMarginProduct (F.linear(F.normalize(input), F.normalize(self.weight)), sine by
torch.sqrt((1.0 - torch.pow(cosine, 2)).clamp(0, 1)), torch.where(cosine > self.th, phi, cosine - self.mm),
one_hot.scatter_(1, label.view(-1, 1).long(), 1)) on a small CNN embedding over a 2-d "segmentation" focal
loss too (N, C, H, W logits)."""
import argparse
import math

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.autograd import Variable
from torch.nn import Parameter


class FocalLoss(nn.Module):
    def __init__(self, gamma=0, alpha=None, size_average=True):
        super(FocalLoss, self).__init__()
        self.gamma = gamma
        self.alpha = alpha
        if isinstance(alpha, (float, int)): self.alpha = torch.Tensor([alpha, 1 - alpha])
        if isinstance(alpha, list): self.alpha = torch.Tensor(alpha)
        self.size_average = size_average

    def forward(self, input, target):
        if input.dim() > 2:
            input = input.view(input.size(0), input.size(1), -1)  # N,C,H,W => N,C,H*W
            input = input.transpose(1, 2)    # N,C,H*W => N,H*W,C
            input = input.contiguous().view(-1, input.size(2))   # N,H*W,C => N*H*W,C
        target = target.view(-1, 1)

        logpt = F.log_softmax(input)
        logpt = logpt.gather(1, target)
        logpt = logpt.view(-1)
        pt = Variable(logpt.data.exp())

        if self.alpha is not None:
            if self.alpha.type() != input.data.type():
                self.alpha = self.alpha.type_as(input.data)
            at = self.alpha.gather(0, target.data.view(-1))
            logpt = logpt * Variable(at)

        loss = -1 * (1 - pt)**self.gamma * logpt
        if self.size_average: return loss.mean()
        else: return loss.sum()


class ArcMarginProduct(nn.Module):
    r"""Implement of large margin arc distance: :
        Args:
            in_features: size of each input sample
            out_features: size of each output sample
            s: norm of input feature
            m: margin

            cos(theta + m)
        """
    def __init__(self, in_features, out_features, s=30.0, m=0.50, easy_margin=False):
        super(ArcMarginProduct, self).__init__()
        self.in_features = in_features
        self.out_features = out_features
        self.s = s
        self.m = m
        self.weight = Parameter(torch.FloatTensor(out_features, in_features))
        nn.init.xavier_uniform_(self.weight)

        self.easy_margin = easy_margin
        self.cos_m = math.cos(m)
        self.sin_m = math.sin(m)
        self.th = math.cos(math.pi - m)
        self.mm = math.sin(math.pi - m) * m

    def forward(self, input, label):
        # --------------------------- cos(theta) & phi(theta) ---------------------------
        cosine = F.linear(F.normalize(input), F.normalize(self.weight))
        sine = torch.sqrt((1.0 - torch.pow(cosine, 2)).clamp(0, 1))
        phi = cosine * self.cos_m - sine * self.sin_m
        if self.easy_margin:
            phi = torch.where(cosine > 0, phi, cosine)
        else:
            phi = torch.where(cosine > self.th, phi, cosine - self.mm)
        # --------------------------- convert label to one-hot ---------------------------
        # one_hot = torch.zeros(cosine.size(), requires_grad=True, device='cuda')
        one_hot = torch.zeros(cosine.size(), device='cpu')
        one_hot.scatter_(1, label.view(-1, 1).long(), 1)
        # -------------torch.where(out_i = {x_i if condition_i else y_i) -------------
        output = (one_hot * phi) + ((1.0 - one_hot) * cosine)  # you can use torch.where if your torch.__version__ is 0.4
        output *= self.s

        return output


class AddMarginProduct(nn.Module):
    r"""Implement of large margin cosine distance: :"""

    def __init__(self, in_features, out_features, s=30.0, m=0.40):
        super(AddMarginProduct, self).__init__()
        self.in_features = in_features
        self.out_features = out_features
        self.s = s
        self.m = m
        self.weight = Parameter(torch.FloatTensor(out_features, in_features))
        nn.init.xavier_uniform_(self.weight)

    def forward(self, input, label):
        cosine = F.linear(F.normalize(input), F.normalize(self.weight))
        phi = cosine - self.m
        one_hot = torch.zeros(cosine.size(), device='cpu')
        one_hot.scatter_(1, label.view(-1, 1).long(), 1)
        output = (one_hot * phi) + ((1.0 - one_hot) * cosine)
        output *= self.s
        return output

    def __repr__(self):
        return self.__class__.__name__ + '(' \
               + 'in_features=' + str(self.in_features) \
               + ', out_features=' + str(self.out_features) \
               + ', s=' + str(self.s) \
               + ', m=' + str(self.m) + ')'


class Embedder(nn.Module):
    def __init__(self, emb=16):
        super(Embedder, self).__init__()
        self.features = nn.Sequential(nn.Conv2d(1, 8, 3, padding=1), nn.BatchNorm2d(8), nn.PReLU(),
                                      nn.MaxPool2d(2), nn.Conv2d(8, 16, 3, padding=1), nn.BatchNorm2d(16),
                                      nn.PReLU(), nn.AdaptiveAvgPool2d(2))
        self.fc5 = nn.Linear(16 * 4, emb)
        self.bn5 = nn.BatchNorm1d(emb)

    def forward(self, x):
        x = self.features(x)
        return self.bn5(self.fc5(x.view(x.size(0), -1)))


def make_data(n, classes, seed):
    rng = np.random.RandomState(seed)
    labels = rng.randint(0, classes, n)
    protos = np.random.RandomState(99).randn(classes, 1, 12, 12).astype(np.float32)
    x = protos[labels] + 0.8 * rng.randn(n, 1, 12, 12).astype(np.float32)
    return torch.from_numpy(x), torch.from_numpy(labels)


def main(argv=None):
    parser = argparse.ArgumentParser()
    parser.add_argument('--metric', default='arc_margin', choices=['arc_margin', 'add_margin', 'easy_margin',
                                                                     'segmentation'])
    parser.add_argument('--gamma', type=float, default=2)
    parser.add_argument('--classes', type=int, default=5)
    parser.add_argument('--steps', type=int, default=12)
    parser.add_argument('--quiet', action='store_true')
    opt = parser.parse_args(argv)
    log = (lambda *a: None) if opt.quiet else print
    torch.manual_seed(3)

    if opt.metric == 'segmentation':
        # focal_loss_pytorch's test: N,C,H,W logits with a list alpha, summed
        net = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.Conv2d(8, opt.classes, 1))
        criterion = FocalLoss(gamma=opt.gamma, alpha=[0.1, 0.2, 0.3, 0.2, 0.2][:opt.classes], size_average=False)
        initial_state = {k: v.clone() for k, v in net.state_dict().items()}
        optimizer = torch.optim.SGD(net.parameters(), lr=1e-3, momentum=0.9)
        rng = np.random.RandomState(0)
        x = torch.from_numpy(rng.randn(4, 3, 10, 10).astype(np.float32))
        target = torch.from_numpy(np.argmax(rng.randn(4, opt.classes, 10, 10) + 2 * x.numpy()[:, :1] * np.arange(
            opt.classes)[None, :, None, None], axis=1)).long()
        step_losses = []
        for step in range(opt.steps):
            optimizer.zero_grad()
            loss = criterion(net(x), target)
            loss.backward()
            optimizer.step()
            step_losses.append(loss.item())
            log(step, loss.item())
        return {"initial_state": initial_state, "step_losses": step_losses, "alpha_type": criterion.alpha.type()}

    model = Embedder()
    if opt.metric == 'add_margin':
        metric_fc = AddMarginProduct(16, opt.classes, s=30, m=0.35)
    else:
        metric_fc = ArcMarginProduct(16, opt.classes, s=30, m=0.5, easy_margin=opt.metric == 'easy_margin')
    criterion = FocalLoss(gamma=opt.gamma)
    initial_state = {k: v.clone() for k, v in model.state_dict().items()}
    initial_state.update({"metric." + k: v.clone() for k, v in metric_fc.state_dict().items()})
    optimizer = torch.optim.SGD([{'params': model.parameters()}, {'params': metric_fc.parameters()}],
                                lr=0.1, weight_decay=5e-4)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=5, gamma=0.1)
    x_all, y_all = make_data(96, opt.classes, 0)
    step_losses, accs = [], []
    for step in range(opt.steps):
        model.train()
        idx = torch.arange(step * 32, step * 32 + 32) % 96
        data_input, label = x_all[idx], y_all[idx]
        feature = model(data_input)
        output = metric_fc(feature, label)
        loss = criterion(output, label)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        scheduler.step()
        output = output.data.cpu().numpy()
        output = np.argmax(output, axis=1)
        label = label.data.cpu().numpy()
        acc = np.mean((output == label).astype(int))
        step_losses.append(loss.item())
        accs.append(acc)
        log('iter {} loss {} acc {}'.format(step, loss.item(), acc))
    model.eval()
    with torch.no_grad():
        feats = F.normalize(model(x_all))
    return {"initial_state": initial_state, "step_losses": step_losses, "accs": accs, "feats": feats,
            "alpha_type": str(type(criterion.alpha))}


if __name__ == "__main__":
    main()
