"""bearpaw/pytorch-classification's cifar.py structure with the idioms of PyTorch programs written for the 0.3 - 1.5
era: Variable wrappers (volatile=True for evaluation), nn.init.xavier_uniform / nn.init.constant without the
trailing underscore (deprecated aliases that warn), F.upsample and F.softmax without dim in an auxiliary head,
size_average=False losses divided by the batch, clip_grad_norm (the deprecated alias), AverageMeter / accuracy
with topk, adjust_learning_rate at schedule epochs, save_checkpoint writing state dicts in the legacy
(non-zip) format with torch.save(..., _use_new_zipfile_serialization=False) plus shutil.copyfile of the best model,
resuming from it with torch.load(map_location=lambda storage, loc: storage), and the 0-dim loss.data[0] of old
code replaced the way torch's error message says (loss.item())."""
import argparse
import os
import shutil
import tempfile

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.autograd import Variable


class AverageMeter(object):
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
    maxk = max(topk)
    batch_size = target.size(0)
    _, pred = output.topk(maxk, 1, True, True)
    pred = pred.t()
    correct = pred.eq(target.view(1, -1).expand_as(pred))
    res = []
    for k in topk:
        correct_k = correct[:k].reshape(-1).float().sum(0)
        res.append(correct_k.mul_(100.0 / batch_size))
    return res


class Net(nn.Module):
    def __init__(self, num_classes=10):
        super(Net, self).__init__()
        self.conv1 = nn.Conv2d(3, 8, kernel_size=3, padding=1)
        self.bn1 = nn.BatchNorm2d(8)
        self.conv2 = nn.Conv2d(8, 16, kernel_size=3, stride=2, padding=1)
        self.bn2 = nn.BatchNorm2d(16)
        self.aux = nn.Conv2d(16, 3, kernel_size=1)
        self.fc = nn.Linear(16, num_classes)
        for m in self.modules():
            if isinstance(m, (nn.Conv2d, nn.Linear)):
                nn.init.xavier_uniform(m.weight)
                nn.init.constant(m.bias, 0)

    def forward(self, x):
        x = F.relu(self.bn1(self.conv1(x)))
        x = F.relu(self.bn2(self.conv2(x)))
        # an auxiliary reconstruction head, upsampled back the pre-interpolate way
        recon = F.upsample(self.aux(x), scale_factor=2, mode="nearest")
        x = F.avg_pool2d(x, x.size(3)).view(x.size(0), -1)
        return self.fc(x), recon


def save_checkpoint(state, is_best, checkpoint, filename='checkpoint.pth.tar'):
    filepath = os.path.join(checkpoint, filename)
    torch.save(state, filepath, _use_new_zipfile_serialization=False)
    if is_best:
        shutil.copyfile(filepath, os.path.join(checkpoint, 'model_best.pth.tar'))


def adjust_learning_rate(optimizer, epoch, state, schedule, gamma):
    if epoch in schedule:
        state['lr'] *= gamma
        for param_group in optimizer.param_groups:
            param_group['lr'] = state['lr']


def train(trainloader, model, criterion, optimizer):
    model.train()
    losses, top1, step_losses = AverageMeter(), AverageMeter(), []
    for batch_idx, (inputs, targets) in enumerate(trainloader):
        inputs, targets = Variable(inputs), Variable(targets)
        outputs, recon = model(inputs)
        loss = criterion(outputs, targets) + F.mse_loss(recon, inputs, size_average=False) / inputs.size(0) * 0.01
        prec1, prec5 = accuracy(outputs.data, targets.data, topk=(1, 5))
        try:
            losses.update(loss.data[0], inputs.size(0))
        except IndexError:  # "invalid index of a 0-dim tensor. Use `tensor.item()`..."
            losses.update(loss.item(), inputs.size(0))
        top1.update(prec1.item(), inputs.size(0))
        optimizer.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm(model.parameters(), 5.0)
        optimizer.step()
        step_losses.append(loss.item())
    return losses.avg, top1.avg, step_losses


def test(testloader, model, criterion):
    model.eval()
    losses, top1 = AverageMeter(), AverageMeter()
    probs = []
    for inputs, targets in testloader:
        inputs, targets = Variable(inputs, volatile=True), Variable(targets)
        with torch.no_grad():
            outputs, _ = model(inputs)
            loss = criterion(outputs, targets)
        probs.append(F.softmax(outputs).data)
        prec1, _ = accuracy(outputs.data, targets.data, topk=(1, 5))
        losses.update(loss.item(), inputs.size(0))
        top1.update(prec1.item(), inputs.size(0))
    return losses.avg, top1.avg, torch.cat(probs)


def main(argv=None):
    parser = argparse.ArgumentParser()
    parser.add_argument('--epochs', default=4, type=int)
    parser.add_argument('--lr', default=0.1, type=float)
    parser.add_argument('--schedule', type=int, nargs='+', default=[2, 3])
    parser.add_argument('--gamma', type=float, default=0.1)
    parser.add_argument("--quiet", action="store_true")
    args = parser.parse_args(argv)
    log = (lambda *a: None) if args.quiet else print
    state = {'lr': args.lr}
    torch.manual_seed(0)
    data = torch.randn(96, 3, 8, 8)
    labels = torch.randint(0, 10, (96,))
    data = data + labels.view(-1, 1, 1, 1).float() * 0.2
    dataset = torch.utils.data.TensorDataset(data, labels)
    trainloader = torch.utils.data.DataLoader(dataset, batch_size=16, shuffle=True)
    testloader = torch.utils.data.DataLoader(dataset, batch_size=32, shuffle=False)
    model = Net()
    initial_state = {k: v.clone() for k, v in model.state_dict().items()}
    criterion = nn.CrossEntropyLoss()
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9, weight_decay=5e-4)
    checkpoint = tempfile.mkdtemp()
    best_acc, step_losses, history = 0, [], []
    for epoch in range(args.epochs):
        adjust_learning_rate(optimizer, epoch, state, args.schedule, args.gamma)
        train_loss, train_acc, losses = train(trainloader, model, criterion, optimizer)
        test_loss, test_acc, probs = test(testloader, model, criterion)
        step_losses += losses
        history.append((train_loss, train_acc, test_loss, test_acc, state['lr']))
        is_best = test_acc > best_acc
        best_acc = max(test_acc, best_acc)
        save_checkpoint({'epoch': epoch + 1, 'state_dict': model.state_dict(), 'acc': test_acc, 'best_acc': best_acc,
                         'optimizer': optimizer.state_dict()}, is_best, checkpoint=checkpoint)
        log(f"epoch {epoch} train {train_loss:.4f} test {test_loss:.4f} acc {test_acc:.2f}")
    resumed = torch.load(os.path.join(checkpoint, 'model_best.pth.tar'), map_location=lambda storage, loc: storage)
    model2 = Net()
    model2.load_state_dict(resumed['state_dict'])
    optimizer2 = torch.optim.SGD(model2.parameters(), lr=args.lr, momentum=0.9, weight_decay=5e-4)
    optimizer2.load_state_dict(resumed['optimizer'])
    _, resumed_acc, resumed_probs = test(testloader, model2, criterion)
    shutil.rmtree(checkpoint)
    return {"initial_state": initial_state, "step_losses": step_losses, "history": history, "probs": probs,
            "best_acc": best_acc, "resumed_epoch": resumed['epoch'], "resumed_acc": resumed_acc,
            "resumed_probs": resumed_probs, "momentum_keys": sorted(optimizer2.state_dict()['state'].keys())}


if __name__ == "__main__":
    main()
