"""CIFAR-10 ResNets as their repos write them. akamaster/pytorch_resnet_cifar10's resnet.py (_weights_init
with init.kaiming_normal_ applied by Module.apply, LambdaLayer, BasicBlock's option 'A' shortcut
F.pad(x[:, :, ::2, ::2], (0, 0, 0, 0, planes//4, planes//4), "constant", 0) or option 'B' conv + BN,
resnet20's [3, 3, 3], F.avg_pool2d(out, out.size()[3])) trained by trainer.py (SGD(momentum=0.9,
weight_decay=1e-4), MultiStepLR(milestones=[100, 150], last_epoch=args.start_epoch - 1), AverageMeter,
accuracy with topk, output.float() / loss.float(), save_checkpoint of {'state_dict', 'best_prec1'}), and
kuangliu/pytorch-cifar's models/mobilenetv2.py (Block with expand / depthwise / project convs and the
stride-1 shortcut, the cfg list of (expansion, out_planes, num_blocks, stride), F.avg_pool2d(out, 4))
and models/preact_resnet.py (PreActBlock with the shortcut attribute checked by hasattr), trained by
main.py (SGD(lr=0.1, momentum=0.9, weight_decay=5e-4), CosineAnnealingLR(T_max=200), the progress
accuracy predicted.eq(targets).sum().item()). RandomCrop(32, padding=4) / RandomHorizontalFlip are
written with torch ops over random 32x32 images; widths are reduced for kuangliu's models."""
import argparse

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.nn.init as init
import torch.optim
import torch.utils.data


# ---------------------------------------------------------------- akamaster resnet.py
def _weights_init(m):
    classname = m.__class__.__name__
    if isinstance(m, nn.Linear) or isinstance(m, nn.Conv2d):
        init.kaiming_normal_(m.weight)


class LambdaLayer(nn.Module):
    def __init__(self, lambd):
        super(LambdaLayer, self).__init__()
        self.lambd = lambd

    def forward(self, x):
        return self.lambd(x)


class BasicBlock(nn.Module):
    expansion = 1

    def __init__(self, in_planes, planes, stride=1, option='A'):
        super(BasicBlock, self).__init__()
        self.conv1 = nn.Conv2d(in_planes, planes, kernel_size=3, stride=stride, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(planes)
        self.conv2 = nn.Conv2d(planes, planes, kernel_size=3, stride=1, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(planes)

        self.shortcut = nn.Sequential()
        if stride != 1 or in_planes != planes:
            if option == 'A':
                """
                For CIFAR10 ResNet paper uses option A.
                """
                self.shortcut = LambdaLayer(lambda x:
                                            F.pad(x[:, :, ::2, ::2], (0, 0, 0, 0, planes // 4, planes // 4),
                                                  "constant", 0))
            elif option == 'B':
                self.shortcut = nn.Sequential(
                    nn.Conv2d(in_planes, self.expansion * planes, kernel_size=1, stride=stride, bias=False),
                    nn.BatchNorm2d(self.expansion * planes)
                )

    def forward(self, x):
        out = F.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        out += self.shortcut(x)
        out = F.relu(out)
        return out


class ResNet(nn.Module):
    def __init__(self, block, num_blocks, num_classes=10, option='A'):
        super(ResNet, self).__init__()
        self.in_planes = 16

        self.conv1 = nn.Conv2d(3, 16, kernel_size=3, stride=1, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(16)
        self.layer1 = self._make_layer(block, 16, num_blocks[0], stride=1, option=option)
        self.layer2 = self._make_layer(block, 32, num_blocks[1], stride=2, option=option)
        self.layer3 = self._make_layer(block, 64, num_blocks[2], stride=2, option=option)
        self.linear = nn.Linear(64, num_classes)

        self.apply(_weights_init)

    def _make_layer(self, block, planes, num_blocks, stride, option):
        strides = [stride] + [1] * (num_blocks - 1)
        layers = []
        for stride in strides:
            layers.append(block(self.in_planes, planes, stride, option))
            self.in_planes = planes * block.expansion

        return nn.Sequential(*layers)

    def forward(self, x):
        out = F.relu(self.bn1(self.conv1(x)))
        out = self.layer1(out)
        out = self.layer2(out)
        out = self.layer3(out)
        out = F.avg_pool2d(out, out.size()[3])
        out = out.view(out.size(0), -1)
        out = self.linear(out)
        return out


def resnet20(option='A'):
    return ResNet(BasicBlock, [3, 3, 3], option=option)


def resnet8(option='A'):
    return ResNet(BasicBlock, [1, 1, 1], option=option)


# ---------------------------------------------------------------- kuangliu models/mobilenetv2.py
class Block(nn.Module):
    '''expand + depthwise + pointwise'''

    def __init__(self, in_planes, out_planes, expansion, stride):
        super(Block, self).__init__()
        self.stride = stride

        planes = expansion * in_planes
        self.conv1 = nn.Conv2d(in_planes, planes, kernel_size=1, stride=1, padding=0, bias=False)
        self.bn1 = nn.BatchNorm2d(planes)
        self.conv2 = nn.Conv2d(planes, planes, kernel_size=3, stride=stride, padding=1, groups=planes, bias=False)
        self.bn2 = nn.BatchNorm2d(planes)
        self.conv3 = nn.Conv2d(planes, out_planes, kernel_size=1, stride=1, padding=0, bias=False)
        self.bn3 = nn.BatchNorm2d(out_planes)

        self.shortcut = nn.Sequential()
        if stride == 1 and in_planes != out_planes:
            self.shortcut = nn.Sequential(
                nn.Conv2d(in_planes, out_planes, kernel_size=1, stride=1, padding=0, bias=False),
                nn.BatchNorm2d(out_planes),
            )

    def forward(self, x):
        out = F.relu(self.bn1(self.conv1(x)))
        out = F.relu(self.bn2(self.conv2(out)))
        out = self.bn3(self.conv3(out))
        out = out + self.shortcut(x) if self.stride == 1 else out
        return out


class MobileNetV2(nn.Module):
    # (expansion, out_planes, num_blocks, stride)
    cfg = [(1, 8, 1, 1),
           (6, 12, 2, 1),  # NOTE: change stride 2 -> 1 for CIFAR10
           (6, 16, 2, 2),
           (6, 24, 2, 2),
           (6, 32, 1, 2)]

    def __init__(self, num_classes=10):
        super(MobileNetV2, self).__init__()
        # NOTE: change conv1 stride 2 -> 1 for CIFAR10
        self.conv1 = nn.Conv2d(3, 16, kernel_size=3, stride=1, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(16)
        self.layers = self._make_layers(in_planes=16)
        self.conv2 = nn.Conv2d(32, 64, kernel_size=1, stride=1, padding=0, bias=False)
        self.bn2 = nn.BatchNorm2d(64)
        self.linear = nn.Linear(64, num_classes)

    def _make_layers(self, in_planes):
        layers = []
        for expansion, out_planes, num_blocks, stride in self.cfg:
            strides = [stride] + [1] * (num_blocks - 1)
            for stride in strides:
                layers.append(Block(in_planes, out_planes, expansion, stride))
                in_planes = out_planes
        return nn.Sequential(*layers)

    def forward(self, x):
        out = F.relu(self.bn1(self.conv1(x)))
        out = self.layers(out)
        out = F.relu(self.bn2(self.conv2(out)))
        # NOTE: change pooling kernel_size 7 -> 4 for CIFAR10
        out = F.avg_pool2d(out, 4)
        out = out.view(out.size(0), -1)
        out = self.linear(out)
        return out


# ---------------------------------------------------------------- kuangliu models/preact_resnet.py
class PreActBlock(nn.Module):
    '''Pre-activation version of the BasicBlock.'''
    expansion = 1

    def __init__(self, in_planes, planes, stride=1):
        super(PreActBlock, self).__init__()
        self.bn1 = nn.BatchNorm2d(in_planes)
        self.conv1 = nn.Conv2d(in_planes, planes, kernel_size=3, stride=stride, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(planes)
        self.conv2 = nn.Conv2d(planes, planes, kernel_size=3, stride=1, padding=1, bias=False)

        if stride != 1 or in_planes != self.expansion * planes:
            self.shortcut = nn.Sequential(
                nn.Conv2d(in_planes, self.expansion * planes, kernel_size=1, stride=stride, bias=False)
            )

    def forward(self, x):
        out = F.relu(self.bn1(x))
        shortcut = self.shortcut(out) if hasattr(self, 'shortcut') else x
        out = self.conv1(out)
        out = self.conv2(F.relu(self.bn2(out)))
        out += shortcut
        return out


class PreActResNet(nn.Module):
    def __init__(self, block, num_blocks, num_classes=10, width=16):
        super(PreActResNet, self).__init__()
        self.in_planes = width

        self.conv1 = nn.Conv2d(3, width, kernel_size=3, stride=1, padding=1, bias=False)
        self.layer1 = self._make_layer(block, width, num_blocks[0], stride=1)
        self.layer2 = self._make_layer(block, width * 2, num_blocks[1], stride=2)
        self.layer3 = self._make_layer(block, width * 4, num_blocks[2], stride=2)
        self.layer4 = self._make_layer(block, width * 8, num_blocks[3], stride=2)
        self.bn = nn.BatchNorm2d(width * 8 * block.expansion)
        self.linear = nn.Linear(width * 8 * block.expansion, num_classes)

    def _make_layer(self, block, planes, num_blocks, stride):
        strides = [stride] + [1] * (num_blocks - 1)
        layers = []
        for stride in strides:
            layers.append(block(self.in_planes, planes, stride))
            self.in_planes = planes * block.expansion
        return nn.Sequential(*layers)

    def forward(self, x):
        out = self.conv1(x)
        out = self.layer1(out)
        out = self.layer2(out)
        out = self.layer3(out)
        out = self.layer4(out)
        out = F.relu(self.bn(out))
        out = F.avg_pool2d(out, 4)
        out = out.view(out.size(0), -1)
        out = self.linear(out)
        return out


# ---------------------------------------------------------------- trainer.py helpers
class AverageMeter(object):
    """Computes and stores the average and current value"""

    def __init__(self):
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


def accuracy(output, target, topk=(1,)):
    """Computes the precision@k for the specified values of k"""
    maxk = max(topk)
    batch_size = target.size(0)

    _, pred = output.topk(maxk, 1, True, True)
    pred = pred.t()
    correct = pred.eq(target.view(1, -1).expand_as(pred))

    res = []
    for k in topk:
        correct_k = correct[:k].view(-1).float().sum(0)
        res.append(correct_k.mul_(100.0 / batch_size))
    return res


class RandomCIFAR(torch.utils.data.Dataset):
    def __init__(self, n, train, seed):
        rng = np.random.RandomState(seed)
        self.y = rng.randint(0, 10, size=n)
        x = rng.rand(n, 3, 32, 32).astype(np.float32)
        for i, c in enumerate(self.y):
            x[i, c % 3, 3 * c:3 * c + 4, :] += 0.8
        self.x = torch.from_numpy(x)
        self.train = train
        self.mean = torch.tensor([0.485, 0.456, 0.406]).view(3, 1, 1)
        self.std = torch.tensor([0.229, 0.224, 0.225]).view(3, 1, 1)

    def __len__(self):
        return len(self.y)

    def __getitem__(self, i):
        img = self.x[i]
        if self.train:
            padded = F.pad(img, (4, 4, 4, 4))
            top, left = torch.randint(0, 9, size=(1,)).item(), torch.randint(0, 9, size=(1,)).item()
            img = padded[:, top:top + 32, left:left + 32]
            if torch.rand(1) < 0.5:
                img = img.flip(-1)
        return (img - self.mean) / self.std, int(self.y[i])


def main(argv=None):
    p = argparse.ArgumentParser()
    p.add_argument('--arch', default='resnet20', choices=['resnet20', 'resnet8', 'mobilenetv2', 'preact'])
    p.add_argument('--option', default='A')
    p.add_argument('--epochs', type=int, default=2)
    p.add_argument('--n', type=int, default=64)
    p.add_argument('--batch_size', type=int, default=16)
    p.add_argument('--lr', type=float, default=0.1)
    p.add_argument('--quiet', action='store_true')
    args = p.parse_args(argv)

    torch.manual_seed(0)
    train_loader = torch.utils.data.DataLoader(RandomCIFAR(args.n, True, 0), batch_size=args.batch_size,
                                               shuffle=True, num_workers=0, pin_memory=True)
    val_loader = torch.utils.data.DataLoader(RandomCIFAR(32, False, 1), batch_size=32, shuffle=False)
    if args.arch in ('resnet20', 'resnet8'):
        model = {'resnet20': resnet20, 'resnet8': resnet8}[args.arch](option=args.option)
        optimizer = torch.optim.SGD(model.parameters(), args.lr, momentum=0.9, weight_decay=1e-4)
        lr_scheduler = torch.optim.lr_scheduler.MultiStepLR(optimizer, milestones=[1, 150], last_epoch=-1)
    else:
        model = MobileNetV2() if args.arch == 'mobilenetv2' else PreActResNet(PreActBlock, [1, 1, 1, 1])
        optimizer = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9, weight_decay=5e-4)
        lr_scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=200)
    initial_state = {k: v.clone() for k, v in model.state_dict().items()}
    criterion = nn.CrossEntropyLoss()
    step_losses, precs, lrs = [], [], []
    best_prec1 = 0
    for epoch in range(args.epochs):
        losses, top1 = AverageMeter(), AverageMeter()
        model.train()
        for i, (input, target) in enumerate(train_loader):
            output = model(input)
            loss = criterion(output, target)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            output = output.float()
            loss = loss.float()
            prec1 = accuracy(output.data, target)[0]
            losses.update(loss.item(), input.size(0))
            top1.update(prec1.item(), input.size(0))
            step_losses.append(loss.item())
        lr_scheduler.step()
        lrs.append(optimizer.param_groups[0]['lr'])
        model.eval()
        correct, total = 0, 0
        with torch.no_grad():
            for inputs, targets in val_loader:
                outputs = model(inputs)
                _, predicted = outputs.max(1)
                total += targets.size(0)
                correct += predicted.eq(targets).sum().item()
        prec1 = 100. * correct / total
        best_prec1 = max(prec1, best_prec1)
        precs.append((top1.avg, losses.avg, prec1))
    checkpoint = {'state_dict': model.state_dict(), 'best_prec1': best_prec1}
    return {"initial_state": initial_state, "step_losses": step_losses, "precs": precs, "lrs": lrs,
            "final_state": checkpoint['state_dict'], "logits": outputs}


if __name__ == '__main__':
    main()
