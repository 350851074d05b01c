"""KaiyangZhou/pytorch-center-loss: center_loss.py's CenterLoss (nn.Parameter(torch.randn(num_classes, feat_dim)),
distmat = torch.pow(x, 2).sum(dim=1, keepdim=True).expand(...) + ...t(), the deprecated distmat.addmm_(1, -2, x,
self.centers.t()), labels.eq(classes.expand(...)), clamp(min=1e-12, max=1e+12)), models.py's ConvNet (PReLU,
F.max_pool2d, a 2-d feature layer), main.py's two optimizers (SGD for the model with StepLR, SGD for the centers)
and `param.grad.data *= (1. / args.weight_cent)` before the centers' step, AverageMeter and the test accuracy.
MNIST is replaced by synthetic 28x28 class blobs."""
import argparse

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.optim import lr_scheduler


class CenterLoss(nn.Module):
    """Center loss.

    Reference:
    Wen et al. A Discriminative Feature Learning Approach for Deep Face Recognition. ECCV 2016.

    Args:
        num_classes (int): number of classes.
        feat_dim (int): feature dimension.
    """
    def __init__(self, num_classes=10, feat_dim=2, use_gpu=True):
        super(CenterLoss, self).__init__()
        self.num_classes = num_classes
        self.feat_dim = feat_dim
        self.use_gpu = use_gpu

        if self.use_gpu:
            self.centers = nn.Parameter(torch.randn(self.num_classes, self.feat_dim).cuda())
        else:
            self.centers = nn.Parameter(torch.randn(self.num_classes, self.feat_dim))

    def forward(self, x, labels):
        """
        Args:
            x: feature matrix with shape (batch_size, feat_dim).
            labels: ground truth labels with shape (batch_size).
        """
        batch_size = x.size(0)
        distmat = torch.pow(x, 2).sum(dim=1, keepdim=True).expand(batch_size, self.num_classes) + \
                  torch.pow(self.centers, 2).sum(dim=1, keepdim=True).expand(self.num_classes, batch_size).t()
        distmat.addmm_(1, -2, x, self.centers.t())

        classes = torch.arange(self.num_classes).long()
        if self.use_gpu: classes = classes.cuda()
        labels = labels.unsqueeze(1).expand(batch_size, self.num_classes)
        mask = labels.eq(classes.expand(batch_size, self.num_classes))

        dist = distmat * mask.float()
        loss = dist.clamp(min=1e-12, max=1e+12).sum() / batch_size

        return loss


class ConvNet(nn.Module):
    """LeNet++ as described in the Center Loss paper."""
    def __init__(self, num_classes, width=32):
        super(ConvNet, self).__init__()
        self.conv1_1 = nn.Conv2d(1, width, 5, stride=1, padding=2)
        self.prelu1_1 = nn.PReLU()
        self.conv1_2 = nn.Conv2d(width, width, 5, stride=1, padding=2)
        self.prelu1_2 = nn.PReLU()

        self.conv2_1 = nn.Conv2d(width, 2 * width, 5, stride=1, padding=2)
        self.prelu2_1 = nn.PReLU()
        self.conv2_2 = nn.Conv2d(2 * width, 2 * width, 5, stride=1, padding=2)
        self.prelu2_2 = nn.PReLU()

        self.fc1 = nn.Linear(2 * width * 7 * 7, 2)
        self.prelu_fc1 = nn.PReLU()
        self.fc2 = nn.Linear(2, num_classes)

    def forward(self, x):
        x = self.prelu1_1(self.conv1_1(x))
        x = self.prelu1_2(self.conv1_2(x))
        x = F.max_pool2d(x, 2)

        x = self.prelu2_1(self.conv2_1(x))
        x = self.prelu2_2(self.conv2_2(x))
        x = F.max_pool2d(x, 2)

        x = x.view(x.size(0), -1)
        x = self.prelu_fc1(self.fc1(x))
        y = self.fc2(x)

        return x, y


class AverageMeter(object):
    """Computes and stores the average and current value."""
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


def synthetic_mnist(n, num_classes, seed):
    rng = np.random.RandomState(seed)
    labels = rng.randint(0, num_classes, size=n)
    yy, xx = np.mgrid[0:28, 0:28]
    images = rng.rand(n, 1, 28, 28).astype(np.float32) * 0.3
    for i, c in enumerate(labels):
        cy, cx = 6 + 4 * (c % 4), 6 + 5 * (c // 4)
        images[i, 0] += np.exp(-((yy - cy) ** 2 + (xx - cx) ** 2) / 8.0).astype(np.float32)
    return torch.from_numpy(images), torch.from_numpy(labels)


def main(argv=None):
    parser = argparse.ArgumentParser("Center Loss Example")
    parser.add_argument('--batch-size', type=int, default=32)
    parser.add_argument('--lr-model', type=float, default=0.001, help="learning rate for model")
    parser.add_argument('--lr-cent', type=float, default=0.5, help="learning rate for center loss")
    parser.add_argument('--weight-cent', type=float, default=1, help="weight for center loss")
    parser.add_argument('--max-epoch', type=int, default=2)
    parser.add_argument('--stepsize', type=int, default=1)
    parser.add_argument('--gamma', type=float, default=0.5, help="learning rate decay")
    parser.add_argument('--num-classes', type=int, default=6)
    parser.add_argument('--width', type=int, default=8)
    parser.add_argument('--n-train', type=int, default=128)
    parser.add_argument('--seed', type=int, default=1)
    parser.add_argument('--quiet', action='store_true')
    args = parser.parse_args(argv)
    log = (lambda *a: None) if args.quiet else print

    torch.manual_seed(args.seed)
    use_gpu = torch.cuda.is_available()
    x_all, y_all = synthetic_mnist(args.n_train, args.num_classes, 0)
    x_test, y_test = synthetic_mnist(64, args.num_classes, 1)

    model = ConvNet(num_classes=args.num_classes, width=args.width)
    criterion_xent = nn.CrossEntropyLoss()
    criterion_cent = CenterLoss(num_classes=args.num_classes, feat_dim=2, use_gpu=use_gpu)
    initial_state = {k: v.clone() for k, v in model.state_dict().items()}
    initial_state["centers"] = criterion_cent.centers.detach().clone()
    optimizer_model = torch.optim.SGD(model.parameters(), lr=args.lr_model, weight_decay=5e-04, momentum=0.9)
    optimizer_centloss = torch.optim.SGD(criterion_cent.parameters(), lr=args.lr_cent)
    scheduler = lr_scheduler.StepLR(optimizer_model, step_size=args.stepsize, gamma=args.gamma)

    step_losses, xent_losses, cent_losses, accs = [], [], [], []
    for epoch in range(args.max_epoch):
        model.train()
        xent_meter, cent_meter, losses = AverageMeter(), AverageMeter(), AverageMeter()
        perm = torch.randperm(args.n_train)
        for batch_idx in range(args.n_train // args.batch_size):
            idx = perm[batch_idx * args.batch_size:(batch_idx + 1) * args.batch_size]
            data, labels = x_all[idx], y_all[idx]
            features, outputs = model(data)
            loss_xent = criterion_xent(outputs, labels)
            loss_cent = criterion_cent(features, labels)
            loss_cent *= args.weight_cent
            loss = loss_xent + loss_cent
            optimizer_model.zero_grad()
            optimizer_centloss.zero_grad()
            loss.backward()
            optimizer_model.step()
            # by doing so, weight_cent would not impact on the learning of centers
            for param in criterion_cent.parameters():
                param.grad.data *= (1. / args.weight_cent)
            optimizer_centloss.step()

            losses.update(loss.item(), labels.size(0))
            xent_meter.update(loss_xent.item(), labels.size(0))
            cent_meter.update(loss_cent.item(), labels.size(0))
            step_losses.append(loss.item())
            xent_losses.append(loss_xent.item())
            cent_losses.append(loss_cent.item())
            log("Batch {}\t Loss {:.6f} ({:.6f}) XentLoss {:.6f} CenterLoss {:.6f}".format(
                batch_idx + 1, losses.val, losses.avg, xent_meter.avg, cent_meter.avg))
        scheduler.step()

        model.eval()
        correct, total = 0, 0
        with torch.no_grad():
            features, outputs = model(x_test)
            predictions = outputs.data.max(1)[1]
            total += y_test.size(0)
            correct += (predictions == y_test.data).sum()
        acc = correct * 100. / total
        accs.append(float(acc))
        log("Accuracy (%): {}\t Error rate (%): {}".format(acc, 100. - acc))

    return {"initial_state": initial_state, "step_losses": step_losses, "xent_losses": xent_losses,
            "cent_losses": cent_losses, "accs": accs, "centers": criterion_cent.centers.detach().clone(),
            "features": features}


if __name__ == "__main__":
    main()
