"""facebookresearch/moco (moco/builder.py MoCo and main_moco.py) in plain torch, single process: encoder_q /
encoder_k built by base_encoder(num_classes=dim) with the v2 MLP head (nn.Sequential(nn.Linear(dim_mlp, dim_mlp),
nn.ReLU(), self.encoder_q.fc)), param_k.data.copy_(param_q.data) and requires_grad = False, the queue buffer
normalized by nn.functional.normalize(self.queue, dim=0), a long queue_ptr buffer, the momentum update
param_k.data = param_k.data * m + param_q.data * (1. - m) under @torch.no_grad(), the shuffle-BN trick on one
device (torch.randperm / torch.argsort), positive and negative logits by torch.einsum('nc,nc->n', [q, k]) and
torch.einsum('nc,ck->nk', [q, self.queue.clone().detach()]), labels of torch.zeros(..., dtype=torch.long), the
enqueue self.queue[:, ptr:ptr + batch_size] = keys.T, accuracy(output, target, topk=(1, 5)) and the cosine
adjust_learning_rate, with AverageMeter / ProgressMeter. The base encoder is a small ResNet-style net and the
two augmented views come from flips and noise."""
import argparse
import math

import torch
import torch.nn as nn


class BasicBlock(nn.Module):
    expansion = 1

    def __init__(self, inplanes, planes, stride=1, downsample=None):
        super().__init__()
        self.conv1 = nn.Conv2d(inplanes, planes, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(planes)
        self.relu = nn.ReLU(inplace=True)
        self.conv2 = nn.Conv2d(planes, planes, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(planes)
        self.downsample = downsample

    def forward(self, x):
        identity = x
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        if self.downsample is not None:
            identity = self.downsample(x)
        out += identity
        return self.relu(out)


class TinyResNet(nn.Module):
    def __init__(self, num_classes=16, width=8):
        super().__init__()
        self.conv1 = nn.Conv2d(3, width, 3, 1, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(width)
        self.relu = nn.ReLU(inplace=True)
        down = nn.Sequential(nn.Conv2d(width, 2 * width, 1, 2, bias=False), nn.BatchNorm2d(2 * width))
        self.layer1 = BasicBlock(width, 2 * width, 2, down)
        self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Linear(2 * width, num_classes)
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")
            elif isinstance(m, (nn.BatchNorm2d, nn.GroupNorm)):
                nn.init.constant_(m.weight, 1)
                nn.init.constant_(m.bias, 0)

    def forward(self, x):
        x = self.relu(self.bn1(self.conv1(x)))
        x = self.layer1(x)
        x = torch.flatten(self.avgpool(x), 1)
        return self.fc(x)


class MoCo(nn.Module):
    def __init__(self, base_encoder, dim=16, K=64, m=0.999, T=0.07, mlp=False):
        super(MoCo, self).__init__()
        self.K = K
        self.m = m
        self.T = T
        self.encoder_q = base_encoder(num_classes=dim)
        self.encoder_k = base_encoder(num_classes=dim)
        if mlp:
            dim_mlp = self.encoder_q.fc.weight.shape[1]
            self.encoder_q.fc = nn.Sequential(nn.Linear(dim_mlp, dim_mlp), nn.ReLU(), self.encoder_q.fc)
            self.encoder_k.fc = nn.Sequential(nn.Linear(dim_mlp, dim_mlp), nn.ReLU(), self.encoder_k.fc)
        for param_q, param_k in zip(self.encoder_q.parameters(), self.encoder_k.parameters()):
            param_k.data.copy_(param_q.data)
            param_k.requires_grad = False
        self.register_buffer("queue", torch.randn(dim, K))
        self.queue = nn.functional.normalize(self.queue, dim=0)
        self.register_buffer("queue_ptr", torch.zeros(1, dtype=torch.long))

    @torch.no_grad()
    def _momentum_update_key_encoder(self):
        for param_q, param_k in zip(self.encoder_q.parameters(), self.encoder_k.parameters()):
            param_k.data = param_k.data * self.m + param_q.data * (1. - self.m)

    @torch.no_grad()
    def _dequeue_and_enqueue(self, keys):
        batch_size = keys.shape[0]
        ptr = int(self.queue_ptr)
        assert self.K % batch_size == 0
        self.queue[:, ptr:ptr + batch_size] = keys.T
        ptr = (ptr + batch_size) % self.K
        self.queue_ptr[0] = ptr

    @torch.no_grad()
    def _batch_shuffle_single_gpu(self, x):
        idx_shuffle = torch.randperm(x.shape[0])
        idx_unshuffle = torch.argsort(idx_shuffle)
        return x[idx_shuffle], idx_unshuffle

    @torch.no_grad()
    def _batch_unshuffle_single_gpu(self, x, idx_unshuffle):
        return x[idx_unshuffle]

    def forward(self, im_q, im_k):
        q = self.encoder_q(im_q)
        q = nn.functional.normalize(q, dim=1)
        with torch.no_grad():
            self._momentum_update_key_encoder()
            im_k, idx_unshuffle = self._batch_shuffle_single_gpu(im_k)
            k = self.encoder_k(im_k)
            k = nn.functional.normalize(k, dim=1)
            k = self._batch_unshuffle_single_gpu(k, idx_unshuffle)
        l_pos = torch.einsum('nc,nc->n', [q, k]).unsqueeze(-1)
        l_neg = torch.einsum('nc,ck->nk', [q, self.queue.clone().detach()])
        logits = torch.cat([l_pos, l_neg], dim=1)
        logits /= self.T
        labels = torch.zeros(logits.shape[0], dtype=torch.long)
        self._dequeue_and_enqueue(k)
        return logits, labels


class AverageMeter(object):
    def __init__(self, name, fmt=':f'):
        self.name = name
        self.fmt = fmt
        self.reset()

    def reset(self):
        self.val = 0
        self.avg = 0
        self.sum = 0
        self.count = 0

    def update(self, val, n=1):
        self.val = val
        self.sum += val * n
        self.count += n
        self.avg = self.sum / self.count

    def __str__(self):
        fmtstr = '{name} {val' + self.fmt + '} ({avg' + self.fmt + '})'
        return fmtstr.format(**self.__dict__)


def accuracy(output, target, topk=(1,)):
    with torch.no_grad():
        maxk = max(topk)
        batch_size = target.size(0)
        _, pred = output.topk(maxk, 1, True, True)
        pred = pred.t()
        correct = pred.eq(target.view(1, -1).expand_as(pred))
        res = []
        for k in topk:
            correct_k = correct[:k].reshape(-1).float().sum(0, keepdim=True)
            res.append(correct_k.mul_(100.0 / batch_size))
        return res


def adjust_learning_rate(optimizer, epoch, args):
    lr = args.lr
    if args.cos:
        lr *= 0.5 * (1. + math.cos(math.pi * epoch / args.epochs))
    else:
        for milestone in args.schedule:
            lr *= 0.1 if epoch >= milestone else 1.
    for param_group in optimizer.param_groups:
        param_group['lr'] = lr


class TwoCropsTransform:
    def __init__(self, base_transform):
        self.base_transform = base_transform

    def __call__(self, x):
        return [self.base_transform(x), self.base_transform(x)]


def augment(x):
    if torch.rand(1).item() < 0.5:
        x = torch.flip(x, dims=[2])
    return x + 0.1 * torch.randn_like(x)


class Images(torch.utils.data.Dataset):
    def __init__(self, n):
        g = torch.Generator().manual_seed(3)
        self.x = torch.randn(n, 3, 8, 8, generator=g)
        self.transform = TwoCropsTransform(augment)

    def __len__(self):
        return len(self.x)

    def __getitem__(self, i):
        return self.transform(self.x[i]), 0


def main(argv=None):
    parser = argparse.ArgumentParser(description='MoCo')
    parser.add_argument('--epochs', default=3, type=int)
    parser.add_argument('--lr', default=0.03, type=float)
    parser.add_argument('--schedule', default=[2], nargs='*', type=int)
    parser.add_argument('--momentum', default=0.9, type=float)
    parser.add_argument('--wd', default=1e-4, type=float, dest='weight_decay')
    parser.add_argument('--moco-dim', default=16, type=int)
    parser.add_argument('--moco-k', default=64, type=int)
    parser.add_argument('--moco-m', default=0.99, type=float)
    parser.add_argument('--moco-t', default=0.2, type=float)
    parser.add_argument('--mlp', action='store_true')
    parser.add_argument('--cos', action='store_true')
    parser.add_argument('--quiet', action='store_true')
    args = parser.parse_args(argv)
    log = (lambda *a: None) if args.quiet else print
    torch.manual_seed(0)
    model = MoCo(TinyResNet, args.moco_dim, args.moco_k, args.moco_m, args.moco_t, args.mlp)
    initial_state = {k: v.clone() for k, v in model.state_dict().items()}
    criterion = nn.CrossEntropyLoss()
    optimizer = torch.optim.SGD(model.parameters(), args.lr, momentum=args.momentum, weight_decay=args.weight_decay)
    train_loader = torch.utils.data.DataLoader(Images(64), batch_size=16, shuffle=True, drop_last=True)
    step_losses, top1s, top5s, ptrs = [], [], [], []
    for epoch in range(args.epochs):
        adjust_learning_rate(optimizer, epoch, args)
        losses = AverageMeter('Loss', ':.4e')
        model.train()
        for i, (images, _) in enumerate(train_loader):
            output, target = model(im_q=images[0], im_k=images[1])
            loss = criterion(output, target)
            acc1, acc5 = accuracy(output, target, topk=(1, 5))
            losses.update(loss.item(), images[0].size(0))
            top1s.append(acc1[0].item())
            top5s.append(acc5[0].item())
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            step_losses.append(loss.item())
            ptrs.append(int(model.queue_ptr))
        log(str(losses), optimizer.param_groups[0]['lr'])
    return {"initial_state": initial_state, "step_losses": step_losses, "top1": top1s, "top5": top5s,
            "ptrs": ptrs, "queue": model.queue.clone(), "key_fc": model.encoder_k.fc.state_dict()}


if __name__ == "__main__":
    main()
