"""HobbitLong/SupContrast as written: SupConLoss (features of shape [bsz, n_views, ...] normalized by F.normalize,
labels -> mask by torch.eq(labels, labels.T).float(), contrast_feature = torch.cat(torch.unbind(features, dim=1),
dim=0), 'one' / 'all' contrast modes, torch.div(torch.matmul(anchor, contrast.T), temperature), logits_max
subtraction, mask.repeat(anchor_count, contrast_count), logits_mask by torch.scatter(torch.ones_like(mask), 1,
torch.arange(batch_size * anchor_count).view(-1, 1), 0), mask_pos_pairs by torch.where(mask_pos_pairs < 1e-6, 1,
mask_pos_pairs), - (temperature / base_temperature) * mean_log_prob_pos), the SimCLR mode (labels=None) and the
warm-up / cosine learning rate of util.py (adjust_learning_rate, warmup_learning_rate), on a small SupConResNet-style
encoder + projection head with two augmented views of random images, then main_linear.py's linear classifier on the
frozen encoder."""
import argparse
import math

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


class SupConLoss(nn.Module):
    def __init__(self, temperature=0.07, contrast_mode='all', base_temperature=0.07):
        super(SupConLoss, self).__init__()
        self.temperature = temperature
        self.contrast_mode = contrast_mode
        self.base_temperature = base_temperature

    def forward(self, features, labels=None, mask=None):
        device = (torch.device('cuda') if features.is_cuda else torch.device('cpu'))
        if len(features.shape) < 3:
            raise ValueError('`features` needs to be [bsz, n_views, ...],'
                             'at least 3 dimensions are required')
        if len(features.shape) > 3:
            features = features.view(features.shape[0], features.shape[1], -1)
        batch_size = features.shape[0]
        if labels is not None and mask is not None:
            raise ValueError('Cannot define both `labels` and `mask`')
        elif labels is None and mask is None:
            mask = torch.eye(batch_size, dtype=torch.float32).to(device)
        elif labels is not None:
            labels = labels.contiguous().view(-1, 1)
            if labels.shape[0] != batch_size:
                raise ValueError('Num of labels does not match num of features')
            mask = torch.eq(labels, labels.T).float().to(device)
        else:
            mask = mask.float().to(device)
        contrast_count = features.shape[1]
        contrast_feature = torch.cat(torch.unbind(features, dim=1), dim=0)
        if self.contrast_mode == 'one':
            anchor_feature = features[:, 0]
            anchor_count = 1
        elif self.contrast_mode == 'all':
            anchor_feature = contrast_feature
            anchor_count = contrast_count
        else:
            raise ValueError('Unknown mode: {}'.format(self.contrast_mode))
        anchor_dot_contrast = torch.div(torch.matmul(anchor_feature, contrast_feature.T), self.temperature)
        logits_max, _ = torch.max(anchor_dot_contrast, dim=1, keepdim=True)
        logits = anchor_dot_contrast - logits_max.detach()
        mask = mask.repeat(anchor_count, contrast_count)
        logits_mask = torch.scatter(torch.ones_like(mask), 1,
                                    torch.arange(batch_size * anchor_count).view(-1, 1).to(device), 0)
        mask = mask * logits_mask
        exp_logits = torch.exp(logits) * logits_mask
        log_prob = logits - torch.log(exp_logits.sum(1, keepdim=True))
        mask_pos_pairs = mask.sum(1)
        mask_pos_pairs = torch.where(mask_pos_pairs < 1e-6, 1, mask_pos_pairs)
        mean_log_prob_pos = (mask * log_prob).sum(1) / mask_pos_pairs
        loss = - (self.temperature / self.base_temperature) * mean_log_prob_pos
        loss = loss.view(anchor_count, batch_size).mean()
        return loss


class SupConNet(nn.Module):
    def __init__(self, head='mlp', feat_dim=16):
        super().__init__()
        self.encoder = nn.Sequential(nn.Conv2d(3, 16, 3, padding=1, bias=False), nn.BatchNorm2d(16), nn.ReLU(),
                                     nn.Conv2d(16, 32, 3, stride=2, padding=1, bias=False), nn.BatchNorm2d(32),
                                     nn.ReLU(), nn.AdaptiveAvgPool2d((1, 1)), nn.Flatten())
        dim_in = 32
        if head == 'linear':
            self.head = nn.Linear(dim_in, feat_dim)
        elif head == 'mlp':
            self.head = nn.Sequential(nn.Linear(dim_in, dim_in), nn.ReLU(inplace=True), nn.Linear(dim_in, feat_dim))
        else:
            raise NotImplementedError('head not supported: {}'.format(head))

    def forward(self, x):
        feat = self.encoder(x)
        feat = F.normalize(self.head(feat), dim=1)
        return feat


def adjust_learning_rate(args, optimizer, epoch):
    lr = args.learning_rate
    if args.cosine:
        eta_min = lr * (args.lr_decay_rate ** 3)
        lr = eta_min + (lr - eta_min) * (1 + math.cos(math.pi * epoch / args.epochs)) / 2
    else:
        steps = np.sum(epoch > np.asarray(args.lr_decay_epochs))
        if steps > 0:
            lr = lr * (args.lr_decay_rate ** steps)
    for param_group in optimizer.param_groups:
        param_group['lr'] = lr


def warmup_learning_rate(args, epoch, batch_id, total_batches, optimizer):
    if args.warm and epoch <= args.warm_epochs:
        p = (batch_id + (epoch - 1) * total_batches) / (args.warm_epochs * total_batches)
        lr = args.warmup_from + p * (args.warmup_to - args.warmup_from)
        for param_group in optimizer.param_groups:
            param_group['lr'] = lr


def two_crop(images):
    """TwoCropTransform with torch-op augmentations: random flips and a brightness jitter per view."""
    views = []
    for _ in range(2):
        flip = torch.rand(images.size(0)) < 0.5
        v = torch.where(flip.view(-1, 1, 1, 1), images.flip(3), images)
        v = v * (0.8 + 0.4 * torch.rand(images.size(0), 1, 1, 1))
        views.append(v)
    return views


def main(argv=None):
    parser = argparse.ArgumentParser()
    parser.add_argument('--method', type=str, default='SupCon', choices=['SupCon', 'SimCLR'])
    parser.add_argument('--contrast_mode', type=str, default='all')
    parser.add_argument('--epochs', type=int, default=3)
    parser.add_argument('--learning_rate', type=float, default=0.05)
    parser.add_argument('--lr_decay_epochs', type=str, default='2,3')
    parser.add_argument('--lr_decay_rate', type=float, default=0.1)
    parser.add_argument('--temp', type=float, default=0.1)
    parser.add_argument('--cosine', action='store_true')
    parser.add_argument('--warm', action='store_true')
    parser.add_argument("--quiet", action="store_true")
    opt = parser.parse_args(argv)
    log = (lambda *a: None) if opt.quiet else print
    opt.lr_decay_epochs = [int(it) for it in opt.lr_decay_epochs.split(',')]
    opt.warmup_from = 0.01
    opt.warm_epochs = 2
    if opt.cosine:
        eta_min = opt.learning_rate * (opt.lr_decay_rate ** 3)
        opt.warmup_to = eta_min + (opt.learning_rate - eta_min) * (
            1 + math.cos(math.pi * opt.warm_epochs / opt.epochs)) / 2
    else:
        opt.warmup_to = opt.learning_rate
    torch.manual_seed(0)
    model = SupConNet()
    initial_state = {k: v.clone() for k, v in model.state_dict().items()}
    criterion = SupConLoss(temperature=opt.temp, contrast_mode=opt.contrast_mode)
    optimizer = torch.optim.SGD(model.parameters(), lr=opt.learning_rate, momentum=0.9, weight_decay=1e-4)
    data = torch.rand(64, 3, 8, 8)
    targets = torch.randint(0, 4, (64,))
    data = data + targets.view(-1, 1, 1, 1).float() * 0.3
    step_losses, lrs = [], []
    bsz = 16
    for epoch in range(1, opt.epochs + 1):
        adjust_learning_rate(opt, optimizer, epoch)
        model.train()
        for idx in range(4):
            images = two_crop(data[idx * bsz:(idx + 1) * bsz])
            labels = targets[idx * bsz:(idx + 1) * bsz]
            images = torch.cat([images[0], images[1]], dim=0)
            warmup_learning_rate(opt, epoch, idx, 4, optimizer)
            features = model(images)
            f1, f2 = torch.split(features, [bsz, bsz], dim=0)
            features = torch.cat([f1.unsqueeze(1), f2.unsqueeze(1)], dim=1)
            if opt.method == 'SupCon':
                loss = criterion(features, labels)
            else:
                loss = criterion(features)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            step_losses.append(loss.item())
            lrs.append(optimizer.param_groups[0]['lr'])
        log('epoch {}, loss {:.3f}'.format(epoch, loss.item()))
    # main_linear.py: a linear classifier on the frozen encoder
    model.eval()
    classifier = nn.Linear(32, 4)
    initial_state.update({"classifier." + k: v.clone() for k, v in classifier.state_dict().items()})
    opt_c = torch.optim.SGD(classifier.parameters(), lr=0.1, momentum=0.9)
    ce = nn.CrossEntropyLoss()
    linear_losses, correct = [], 0
    for idx in range(4):
        images, labels = data[idx * bsz:(idx + 1) * bsz], targets[idx * bsz:(idx + 1) * bsz]
        with torch.no_grad():
            features = model.encoder(images)
        output = classifier(features.detach())
        loss = ce(output, labels)
        opt_c.zero_grad()
        loss.backward()
        opt_c.step()
        linear_losses.append(loss.item())
        correct += (output.argmax(1) == labels).sum().item()
    masked = SupConLoss(temperature=opt.temp)(F.normalize(torch.randn(8, 3, 5), dim=2),
                                              mask=(torch.rand(8, 8) > 0.5).float())
    return {"initial_state": initial_state, "step_losses": step_losses, "lrs": lrs, "linear": linear_losses,
            "correct": correct, "masked": masked.detach()}


if __name__ == "__main__":
    main()
