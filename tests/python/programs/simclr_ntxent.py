"""SimCLR's NT-Xent loss two ways: sthalles/SimCLR's simclr.py info_nce_loss (labels from
torch.cat([torch.arange(batch_size) for i in range(n_views)]), (labels.unsqueeze(0) ==
labels.unsqueeze(1)).float(), F.normalize, the similarity matrix with torch.eye(dtype=torch.bool)
removed by labels[~mask].view(...), positives and negatives concatenated with zero labels, logits /
temperature, CrossEntropyLoss, the accuracy helper with topk) around models/resnet_simclr.py's backbone
with its fc replaced by an MLP projection head; and Spijkervet/SimCLR's NT_Xent module
(mask_correlated_samples with fill_diagonal_(0), nn.CosineSimilarity(dim=2) of z.unsqueeze(1) and
z.unsqueeze(0), torch.diag(sim, batch_size), CrossEntropyLoss(reduction="sum") / N). Views are random
crops/flips/noise of random images; a small conv backbone stands in for torchvision's resnet18."""
import argparse

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


class Backbone(nn.Module):
    def __init__(self, num_classes):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 16, 3, padding=1)
        self.bn1 = nn.BatchNorm2d(16)
        self.conv2 = nn.Conv2d(16, 32, 3, stride=2, padding=1)
        self.bn2 = nn.BatchNorm2d(32)
        self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Linear(32, num_classes)

    def forward(self, x):
        x = F.relu(self.bn1(self.conv1(x)))
        x = F.relu(self.bn2(self.conv2(x)))
        x = torch.flatten(self.avgpool(x), 1)
        return self.fc(x)


class ResNetSimCLR(nn.Module):
    def __init__(self, base_model, out_dim):
        super(ResNetSimCLR, self).__init__()
        self.backbone = base_model(num_classes=out_dim)
        dim_mlp = self.backbone.fc.in_features
        # add mlp projection head
        self.backbone.fc = nn.Sequential(nn.Linear(dim_mlp, dim_mlp), nn.ReLU(), self.backbone.fc)

    def forward(self, x):
        return self.backbone(x)


def accuracy(output, target, topk=(1,)):
    """Computes the accuracy over the k top predictions for the specified values of k"""
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


class SimCLR(object):
    def __init__(self, *args, **kwargs):
        self.args = kwargs['args']
        self.model = kwargs['model']
        self.optimizer = kwargs['optimizer']
        self.scheduler = kwargs['scheduler']
        self.criterion = torch.nn.CrossEntropyLoss()

    def info_nce_loss(self, features):
        labels = torch.cat([torch.arange(self.args.batch_size) for i in range(self.args.n_views)], dim=0)
        labels = (labels.unsqueeze(0) == labels.unsqueeze(1)).float()
        labels = labels.to(self.args.device)

        features = F.normalize(features, dim=1)

        similarity_matrix = torch.matmul(features, features.T)

        # discard the main diagonal from both: labels and similarities matrix
        mask = torch.eye(labels.shape[0], dtype=torch.bool).to(self.args.device)
        labels = labels[~mask].view(labels.shape[0], -1)
        similarity_matrix = similarity_matrix[~mask].view(similarity_matrix.shape[0], -1)

        # select and combine multiple positives
        positives = similarity_matrix[labels.bool()].view(labels.shape[0], -1)

        # select only the negatives the negatives
        negatives = similarity_matrix[~labels.bool()].view(similarity_matrix.shape[0], -1)

        logits = torch.cat([positives, negatives], dim=1)
        labels = torch.zeros(logits.shape[0], dtype=torch.long).to(self.args.device)

        logits = logits / self.args.temperature
        return logits, labels

    def train(self, train_loader, step_losses, accs):
        n_iter = 0
        for epoch_counter in range(self.args.epochs):
            for images, _ in train_loader:
                images = torch.cat(images, dim=0)
                images = images.to(self.args.device)

                features = self.model(images)
                logits, labels = self.info_nce_loss(features)
                loss = self.criterion(logits, labels)

                self.optimizer.zero_grad()
                loss.backward()
                self.optimizer.step()
                step_losses.append(loss.item())
                top1, top5 = accuracy(logits, labels, topk=(1, 5))
                accs.append((top1[0].item(), top5[0].item()))
                n_iter += 1

            # warmup for the first 10 epochs
            if epoch_counter >= 10:
                self.scheduler.step()


# ---------------------------------------------------------------- Spijkervet/SimCLR simclr/modules/nt_xent.py
class NT_Xent(nn.Module):
    def __init__(self, batch_size, temperature, world_size):
        super(NT_Xent, self).__init__()
        self.batch_size = batch_size
        self.temperature = temperature
        self.world_size = world_size

        self.mask = self.mask_correlated_samples(batch_size, world_size)
        self.criterion = nn.CrossEntropyLoss(reduction="sum")
        self.similarity_f = nn.CosineSimilarity(dim=2)

    def mask_correlated_samples(self, batch_size, world_size):
        N = 2 * batch_size * world_size
        mask = torch.ones((N, N), dtype=bool)
        mask = mask.fill_diagonal_(0)
        for i in range(batch_size * world_size):
            mask[i, batch_size * world_size + i] = 0
            mask[batch_size * world_size + i, i] = 0
        return mask

    def forward(self, z_i, z_j):
        N = 2 * self.batch_size * self.world_size

        z = torch.cat((z_i, z_j), dim=0)

        sim = self.similarity_f(z.unsqueeze(1), z.unsqueeze(0)) / self.temperature

        sim_i_j = torch.diag(sim, self.batch_size * self.world_size)
        sim_j_i = torch.diag(sim, -self.batch_size * self.world_size)

        # We have 2N samples, but with Distributed training every GPU gets N examples too, resulting in: 2xNxN
        positive_samples = torch.cat((sim_i_j, sim_j_i), dim=0).reshape(N, 1)
        negative_samples = sim[self.mask].reshape(N, -1)

        labels = torch.zeros(N).to(positive_samples.device).long()
        logits = torch.cat((positive_samples, negative_samples), dim=1)
        loss = self.criterion(logits, labels)
        loss /= N
        return loss


class ContrastiveViews:
    """(harness) ContrastiveLearningViewGenerator over random images: random flips, shifts and noise."""

    def __init__(self, images, n_views):
        self.images, self.n_views = images, n_views

    def __len__(self):
        return len(self.images)

    def __getitem__(self, i):
        views = []
        for _ in range(self.n_views):
            x = self.images[i]
            if torch.rand(1) < 0.5:
                x = torch.flip(x, [2])
            shift = int(torch.randint(-2, 3, (1,)))
            x = torch.roll(x, shifts=shift, dims=1)
            x = x + 0.1 * torch.randn_like(x)
            views.append(x)
        return views, 0


class Args:
    pass


def main(argv=None):
    p = argparse.ArgumentParser()
    p.add_argument('--loss', default='info_nce', choices=['info_nce', 'nt_xent'])
    p.add_argument('--batch_size', type=int, default=16)
    p.add_argument('--epochs', type=int, default=2)
    p.add_argument('--n', type=int, default=128)
    p.add_argument('--n_views', type=int, default=2)
    p.add_argument('--temperature', type=float, default=0.07)
    p.add_argument('--out_dim', type=int, default=32)
    p.add_argument('--quiet', action='store_true')
    a = p.parse_args(argv)
    args = Args()
    args.__dict__.update(vars(a))
    args.device = torch.device('cpu')

    torch.manual_seed(0)
    images = torch.rand(a.n, 3, 16, 16)
    dataset = ContrastiveViews(images, a.n_views)
    train_loader = torch.utils.data.DataLoader(dataset, batch_size=a.batch_size, shuffle=True, drop_last=True)
    model = ResNetSimCLR(base_model=Backbone, out_dim=a.out_dim)
    initial_state = {k: v.clone() for k, v in model.state_dict().items()}
    optimizer = torch.optim.Adam(model.parameters(), 3e-4, weight_decay=1e-4)
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=len(train_loader), eta_min=0, last_epoch=-1)
    step_losses, accs = [], []
    if a.loss == 'info_nce':
        simclr = SimCLR(model=model, optimizer=optimizer, scheduler=scheduler, args=args)
        simclr.train(train_loader, step_losses, accs)
    else:
        criterion = NT_Xent(a.batch_size, a.temperature, 1)
        for epoch in range(a.epochs):
            for step, ((x_i, x_j), _) in enumerate(train_loader):
                optimizer.zero_grad()
                z_i, z_j = model(x_i), model(x_j)
                loss = criterion(z_i, z_j)
                loss.backward()
                optimizer.step()
                step_losses.append(loss.item())
            scheduler.step()
    return {"initial_state": initial_state, "step_losses": step_losses, "accs": accs,
            "final_state": model.state_dict()}


if __name__ == '__main__':
    main()
