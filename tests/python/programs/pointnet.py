"""fxia22/pointnet.pytorch (pointnet/model.py STN3d / STNkd / PointNetfeat / PointNetCls / PointNetDenseCls and
feature_transform_regularizer, utils/train_classification.py's loop) in plain torch on synthetic point clouds:
Conv1d(3, 64, 1) point-wise MLPs with BatchNorm1d, torch.max(x, 2, keepdim=True)[0] global pooling,
x.view(-1, 1024), the T-Net's identity added by Variable(torch.from_numpy(np.array([1, 0, 0, 0, 1, 0, 0, 0,
1]).astype(np.float32))).view(1, 9).repeat(batchsize, 1) (and torch.eye(self.k).flatten() for STNkd),
torch.bmm(x.transpose(2, 1), trans).transpose(2, 1), the regularizer torch.mean(torch.norm(torch.bmm(trans,
trans.transpose(2, 1)) - I, dim=(1, 2))), F.log_softmax / F.nll_loss, pred.data.max(1)[1] accuracy with
pred_choice.eq(target.data).cpu().sum(), Adam(betas=(0.9, 0.999)) with StepLR(step_size=20, gamma=0.5), random
rotations about the up axis and jitter as the dataset's augmentation, and the segmentation head
(x.transpose(2, 1).contiguous(), F.log_softmax(x.view(-1, self.k), dim=-1)) as a second task."""
import argparse

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim
import torch.utils.data
from torch.autograd import Variable


class STN3d(nn.Module):
    def __init__(self, width=32):
        super(STN3d, self).__init__()
        self.conv1 = torch.nn.Conv1d(3, width, 1)
        self.conv2 = torch.nn.Conv1d(width, 2 * width, 1)
        self.fc1 = nn.Linear(2 * width, width)
        self.fc3 = nn.Linear(width, 9)
        self.relu = nn.ReLU()
        self.bn1 = nn.BatchNorm1d(width)
        self.bn2 = nn.BatchNorm1d(2 * width)
        self.bn4 = nn.BatchNorm1d(width)
        self.width = width

    def forward(self, x):
        batchsize = x.size()[0]
        x = F.relu(self.bn1(self.conv1(x)))
        x = F.relu(self.bn2(self.conv2(x)))
        x = torch.max(x, 2, keepdim=True)[0]
        x = x.view(-1, 2 * self.width)
        x = F.relu(self.bn4(self.fc1(x)))
        x = self.fc3(x)
        iden = Variable(torch.from_numpy(np.array([1, 0, 0, 0, 1, 0, 0, 0, 1]).astype(np.float32))).view(
            1, 9).repeat(batchsize, 1)
        if x.is_cuda:
            iden = iden.cuda()
        x = x + iden
        x = x.view(-1, 3, 3)
        return x


class STNkd(nn.Module):
    def __init__(self, k=16, width=32):
        super(STNkd, self).__init__()
        self.conv1 = torch.nn.Conv1d(k, width, 1)
        self.fc1 = nn.Linear(width, width)
        self.fc3 = nn.Linear(width, k * k)
        self.relu = nn.ReLU()
        self.bn1 = nn.BatchNorm1d(width)
        self.bn4 = nn.BatchNorm1d(width)
        self.k = k
        self.width = width

    def forward(self, x):
        batchsize = x.size()[0]
        x = F.relu(self.bn1(self.conv1(x)))
        x = torch.max(x, 2, keepdim=True)[0]
        x = x.view(-1, self.width)
        x = F.relu(self.bn4(self.fc1(x)))
        x = self.fc3(x)
        iden = Variable(torch.from_numpy(np.eye(self.k).flatten().astype(np.float32))).view(
            1, self.k * self.k).repeat(batchsize, 1)
        x = x + iden
        x = x.view(-1, self.k, self.k)
        return x


class PointNetfeat(nn.Module):
    def __init__(self, global_feat=True, feature_transform=False, k=16, width=64):
        super(PointNetfeat, self).__init__()
        self.stn = STN3d()
        self.conv1 = torch.nn.Conv1d(3, k, 1)
        self.conv2 = torch.nn.Conv1d(k, 32, 1)
        self.conv3 = torch.nn.Conv1d(32, width, 1)
        self.bn1 = nn.BatchNorm1d(k)
        self.bn2 = nn.BatchNorm1d(32)
        self.bn3 = nn.BatchNorm1d(width)
        self.global_feat = global_feat
        self.feature_transform = feature_transform
        self.width = width
        if self.feature_transform:
            self.fstn = STNkd(k=k)

    def forward(self, x):
        n_pts = x.size()[2]
        trans = self.stn(x)
        x = x.transpose(2, 1)
        x = torch.bmm(x, trans)
        x = x.transpose(2, 1)
        x = F.relu(self.bn1(self.conv1(x)))
        if self.feature_transform:
            trans_feat = self.fstn(x)
            x = x.transpose(2, 1)
            x = torch.bmm(x, trans_feat)
            x = x.transpose(2, 1)
        else:
            trans_feat = None
        pointfeat = x
        x = F.relu(self.bn2(self.conv2(x)))
        x = self.bn3(self.conv3(x))
        x = torch.max(x, 2, keepdim=True)[0]
        x = x.view(-1, self.width)
        if self.global_feat:
            return x, trans, trans_feat
        else:
            x = x.view(-1, self.width, 1).repeat(1, 1, n_pts)
            return torch.cat([x, pointfeat], 1), trans, trans_feat


class PointNetCls(nn.Module):
    def __init__(self, k=2, feature_transform=False):
        super(PointNetCls, self).__init__()
        self.feature_transform = feature_transform
        self.feat = PointNetfeat(global_feat=True, feature_transform=feature_transform)
        self.fc1 = nn.Linear(64, 32)
        self.fc3 = nn.Linear(32, k)
        self.dropout = nn.Dropout(p=0.3)
        self.bn1 = nn.BatchNorm1d(32)
        self.relu = nn.ReLU()

    def forward(self, x):
        x, trans, trans_feat = self.feat(x)
        x = F.relu(self.bn1(self.dropout(self.fc1(x))))
        x = self.fc3(x)
        return F.log_softmax(x, dim=1), trans, trans_feat


class PointNetDenseCls(nn.Module):
    def __init__(self, k=2, feature_transform=False):
        super(PointNetDenseCls, self).__init__()
        self.k = k
        self.feature_transform = feature_transform
        self.feat = PointNetfeat(global_feat=False, feature_transform=feature_transform)
        self.conv1 = torch.nn.Conv1d(64 + 16, 32, 1)
        self.conv4 = torch.nn.Conv1d(32, self.k, 1)
        self.bn1 = nn.BatchNorm1d(32)

    def forward(self, x):
        batchsize = x.size()[0]
        n_pts = x.size()[2]
        x, trans, trans_feat = self.feat(x)
        x = F.relu(self.bn1(self.conv1(x)))
        x = self.conv4(x)
        x = x.transpose(2, 1).contiguous()
        x = F.log_softmax(x.view(-1, self.k), dim=-1)
        x = x.view(batchsize, n_pts, self.k)
        return x, trans, trans_feat


def feature_transform_regularizer(trans):
    d = trans.size()[1]
    I = torch.eye(d)[None, :, :]
    if trans.is_cuda:
        I = I.cuda()
    loss = torch.mean(torch.norm(torch.bmm(trans, trans.transpose(2, 1)) - I, dim=(1, 2)))
    return loss


class ShapeDataset(torch.utils.data.Dataset):
    """Spheres, cubes and cylinders; part labels by the sign of z."""

    def __init__(self, n, npoints, seed, data_augmentation=True):
        rng = np.random.RandomState(seed)
        self.items = []
        for i in range(n):
            c = i % 3
            p = rng.randn(npoints, 3)
            if c == 0:
                p /= np.linalg.norm(p, axis=1, keepdims=True)
            elif c == 1:
                p = rng.uniform(-1, 1, (npoints, 3))
            else:
                a = rng.uniform(0, 2 * np.pi, npoints)
                p = np.stack([np.cos(a), np.sin(a), rng.uniform(-1, 1, npoints)], 1)
            self.items.append((p.astype(np.float32), c, (p[:, 2] > 0).astype(np.int64)))
        self.data_augmentation = data_augmentation

    def __len__(self):
        return len(self.items)

    def __getitem__(self, index):
        point_set, cls, seg = self.items[index]
        point_set = point_set - np.expand_dims(np.mean(point_set, axis=0), 0)
        dist = np.max(np.sqrt(np.sum(point_set ** 2, axis=1)), 0)
        point_set = point_set / dist
        if self.data_augmentation:
            theta = np.random.uniform(0, np.pi * 2)
            rotation_matrix = np.array([[np.cos(theta), -np.sin(theta)], [np.sin(theta), np.cos(theta)]])
            point_set[:, [0, 2]] = point_set[:, [0, 2]].dot(rotation_matrix)
            point_set += np.random.normal(0, 0.02, size=point_set.shape)
        point_set = torch.from_numpy(point_set.astype(np.float32))
        cls = torch.from_numpy(np.array([cls]).astype(np.int64))
        return point_set, cls, torch.from_numpy(seg)


def main(argv=None):
    parser = argparse.ArgumentParser()
    parser.add_argument('--batchSize', type=int, default=8)
    parser.add_argument('--num_points', type=int, default=64)
    parser.add_argument('--nepoch', type=int, default=2)
    parser.add_argument('--feature_transform', action='store_true')
    parser.add_argument('--task', default='cls')
    parser.add_argument('--quiet', action='store_true')
    opt = parser.parse_args(argv)
    log = (lambda *a: None) if opt.quiet else print
    opt.manualSeed = 1
    np.random.seed(opt.manualSeed)
    torch.manual_seed(opt.manualSeed)
    dataset = ShapeDataset(48, opt.num_points, 0)
    dataloader = torch.utils.data.DataLoader(dataset, batch_size=opt.batchSize, shuffle=True, num_workers=0)
    num_classes = 3
    if opt.task == 'cls':
        classifier = PointNetCls(k=num_classes, feature_transform=opt.feature_transform)
    else:
        classifier = PointNetDenseCls(k=2, feature_transform=opt.feature_transform)
    initial_state = {k: v.clone() for k, v in classifier.state_dict().items()}
    optimizer = optim.Adam(classifier.parameters(), lr=0.001, betas=(0.9, 0.999))
    scheduler = optim.lr_scheduler.StepLR(optimizer, step_size=20, gamma=0.5)
    num_batch = len(dataset) / opt.batchSize
    step_losses, accs, regs = [], [], []
    for epoch in range(opt.nepoch):
        for i, data in enumerate(dataloader, 0):
            points, target, seg = data
            target = target[:, 0]
            points = points.transpose(2, 1)
            optimizer.zero_grad()
            classifier = classifier.train()
            pred, trans, trans_feat = classifier(points)
            if opt.task == 'cls':
                loss = F.nll_loss(pred, target)
            else:
                pred = pred.view(-1, 2)
                loss = F.nll_loss(pred, seg.view(-1))
            if opt.feature_transform:
                reg = feature_transform_regularizer(trans_feat)
                regs.append(reg.item())
                loss += reg * 0.001
            loss.backward()
            optimizer.step()
            pred_choice = pred.data.max(1)[1]
            correct = pred_choice.eq((target if opt.task == 'cls' else seg.view(-1)).data).cpu().sum()
            accs.append(correct.item())
            step_losses.append(loss.item())
            log('[%d: %d/%d] train loss: %f accuracy: %f' % (epoch, i, num_batch, loss.item(),
                                                              correct.item() / float(opt.batchSize)))
        scheduler.step()
    classifier.eval()
    with torch.no_grad():
        points = torch.stack([dataset[j][0] for j in range(4)]).transpose(2, 1)
        pred, trans, _ = classifier(points)
        reg_trans = feature_transform_regularizer(trans)
    return {"initial_state": initial_state, "step_losses": step_losses, "accs": accs, "regs": regs,
            "eval_pred": pred, "trans": trans, "reg_trans": reg_trans}


if __name__ == "__main__":
    main()
