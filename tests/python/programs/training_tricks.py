"""The training-loop recipes that image-classification repos bolt onto a small CNN, each as its public source
writes it:
- facebookresearch/mixup-cifar10's mixup_data (np.random.beta, torch.randperm(batch_size), lam * x + (1 - lam) *
  x[index, :]) and mixup_criterion; clovaai/CutMix-PyTorch's rand_bbox (np.sqrt(1. - lam), np.int32 cut sizes,
  np.random.randint centres, np.clip) with input[:, :, bbx1:bbx2, bby1:bby2] = input[rand_index, :, bbx1:bbx2,
  bby1:bby2] and the area-adjusted lam;
- timm's LabelSmoothingCrossEntropy (logprobs.gather(dim=-1, index=target.unsqueeze(1)), confidence * nll +
  smoothing * smooth_loss) and SoftTargetCrossEntropy (torch.sum(-target * F.log_softmax(x, dim=-1), dim=-1));
- gradient accumulation (loss / accumulation_steps, step every accumulation_steps) with
  torch.nn.utils.clip_grad_value_ and clip_grad_norm_;
- torch.optim.swa_utils (AveragedModel, SWALR(anneal_strategy='cos'), update_bn over a loader) as the PyTorch SWA
  blog post runs it, and an EMA AveragedModel(model, avg_fn=ema_avg) as torchvision's references do;
- --schedule: SequentialLR(LinearLR warm-up, CosineAnnealingLR), CosineAnnealingWarmRestarts stepped with
  fractional epochs (scheduler.step(epoch + i / iters)), OneCycleLR(three_phase=True), ReduceLROnPlateau on a validation loss, or a LambdaLR + MultiplicativeLR ChainedScheduler;
- data: torch.utils.data.random_split(dataset, [n1, n2], generator=torch.Generator().manual_seed(42)),
  ConcatDataset, Subset, DataLoader(drop_last=True), and a checkpoint round trip mid-training (model, optimizer,
  scheduler state_dicts through torch.save into io.BytesIO, torch.load, load_state_dict into fresh objects)."""
import argparse
import io

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.optim.swa_utils import AveragedModel, SWALR, update_bn
from torch.utils.data import ConcatDataset, DataLoader, Subset, TensorDataset, random_split


def mixup_data(x, y, alpha=1.0, use_cuda=False):
    '''Returns mixed inputs, pairs of targets, and lambda'''
    if alpha > 0:
        lam = np.random.beta(alpha, alpha)
    else:
        lam = 1

    batch_size = x.size()[0]
    if use_cuda:
        index = torch.randperm(batch_size).cuda()
    else:
        index = torch.randperm(batch_size)

    mixed_x = lam * x + (1 - lam) * x[index, :]
    y_a, y_b = y, y[index]
    return mixed_x, y_a, y_b, lam


def mixup_criterion(criterion, pred, y_a, y_b, lam):
    return lam * criterion(pred, y_a) + (1 - lam) * criterion(pred, y_b)


def rand_bbox(size, lam):
    W = size[2]
    H = size[3]
    cut_rat = np.sqrt(1. - lam)
    cut_w = np.int32(W * cut_rat)
    cut_h = np.int32(H * cut_rat)

    # uniform
    cx = np.random.randint(W)
    cy = np.random.randint(H)

    bbx1 = np.clip(cx - cut_w // 2, 0, W)
    bby1 = np.clip(cy - cut_h // 2, 0, H)
    bbx2 = np.clip(cx + cut_w // 2, 0, W)
    bby2 = np.clip(cy + cut_h // 2, 0, H)

    return bbx1, bby1, bbx2, bby2


class LabelSmoothingCrossEntropy(nn.Module):
    """ NLL loss with label smoothing.
    """
    def __init__(self, smoothing=0.1):
        super(LabelSmoothingCrossEntropy, self).__init__()
        assert smoothing < 1.0
        self.smoothing = smoothing
        self.confidence = 1. - smoothing

    def forward(self, x: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        logprobs = F.log_softmax(x, dim=-1)
        nll_loss = -logprobs.gather(dim=-1, index=target.unsqueeze(1))
        nll_loss = nll_loss.squeeze(1)
        smooth_loss = -logprobs.mean(dim=-1)
        loss = self.confidence * nll_loss + self.smoothing * smooth_loss
        return loss.mean()


class SoftTargetCrossEntropy(nn.Module):

    def __init__(self):
        super(SoftTargetCrossEntropy, self).__init__()

    def forward(self, x: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        loss = torch.sum(-target * F.log_softmax(x, dim=-1), dim=-1)
        return loss.mean()


class ExponentialMovingAverage(torch.optim.swa_utils.AveragedModel):
    """Maintains moving averages of model parameters using an exponential decay.
    ``ema_avg = decay * avg_model_param + (1 - decay) * model_param`` (torchvision's references)"""

    def __init__(self, model, decay, device="cpu"):
        def ema_avg(avg_model_param, model_param, num_averaged):
            return decay * avg_model_param + (1 - decay) * model_param

        super().__init__(model, device, ema_avg, use_buffers=True)


class Net(nn.Module):
    def __init__(self, num_classes=4):
        super(Net, self).__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(inplace=True), nn.MaxPool2d(2),
            nn.Conv2d(8, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(inplace=True),
            nn.AdaptiveAvgPool2d((1, 1)))
        self.classifier = nn.Linear(16, num_classes)

    def forward(self, x):
        return self.classifier(torch.flatten(self.features(x), 1))


def make_scheduler(name, optimizer, iters, epochs):
    if name == 'sequential':
        warmup = torch.optim.lr_scheduler.LinearLR(optimizer, start_factor=0.1, total_iters=iters)
        cosine = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=(epochs - 1) * iters, eta_min=1e-4)
        return torch.optim.lr_scheduler.SequentialLR(optimizer, [warmup, cosine], milestones=[iters])
    if name == 'warm_restarts':
        return torch.optim.lr_scheduler.CosineAnnealingWarmRestarts(optimizer, T_0=2, T_mult=2, eta_min=1e-4)
    if name == 'onecycle':
        return torch.optim.lr_scheduler.OneCycleLR(optimizer, max_lr=0.1, total_steps=epochs * iters,
                                                   three_phase=True, anneal_strategy='cos')
    if name == 'plateau':
        return torch.optim.lr_scheduler.ReduceLROnPlateau(optimizer, mode='min', factor=0.5, patience=0,
                                                          threshold=1e-3)
    if name == 'chained':
        return torch.optim.lr_scheduler.ChainedScheduler([
            torch.optim.lr_scheduler.LambdaLR(optimizer, lr_lambda=lambda step: 1.0 / (1.0 + 0.1 * step)),
            torch.optim.lr_scheduler.MultiplicativeLR(optimizer, lr_lambda=lambda step: 0.98)])
    raise ValueError(name)


def main(argv=None):
    parser = argparse.ArgumentParser()
    parser.add_argument('--aug', default='mixup', choices=['mixup', 'cutmix', 'none'])
    parser.add_argument('--loss', default='smoothing', choices=['smoothing', 'soft', 'ce'])
    parser.add_argument('--schedule', default='sequential',
                        choices=['sequential', 'warm_restarts', 'onecycle', 'plateau', 'chained'])
    parser.add_argument('--epochs', type=int, default=4)
    parser.add_argument('--batch-size', type=int, default=8)
    parser.add_argument('--accumulation-steps', type=int, default=2)
    parser.add_argument('--swa-start', type=int, default=2)
    parser.add_argument('--quiet', action='store_true')
    args = parser.parse_args(argv)
    log = (lambda *a: None) if args.quiet else print

    torch.manual_seed(0)
    np.random.seed(0)
    rng = np.random.RandomState(0)
    labels = rng.randint(0, 4, 88)
    images = rng.rand(88, 3, 8, 8).astype(np.float32) * 0.5
    for i, c in enumerate(labels):
        images[i, c % 3, (c // 3) * 4:(c // 3) * 4 + 4] += 0.8
    full = TensorDataset(torch.from_numpy(images), torch.from_numpy(labels))
    train_a, rest = random_split(full, [56, 32], generator=torch.Generator().manual_seed(42))
    train_b, val_set = random_split(rest, [16, 16], generator=torch.Generator().manual_seed(42))
    train_set = ConcatDataset([train_a, Subset(train_b, list(range(8)))])
    train_loader = DataLoader(train_set, batch_size=args.batch_size, shuffle=True, drop_last=True)
    val_loader = DataLoader(val_set, batch_size=16)

    model = Net()
    initial_state = {k: v.clone() for k, v in model.state_dict().items()}
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9, weight_decay=5e-4, nesterov=True)
    iters = len(train_loader) // args.accumulation_steps
    scheduler = make_scheduler(args.schedule, optimizer, iters, args.epochs)
    swa_model = AveragedModel(model)
    swa_scheduler = SWALR(optimizer, swa_lr=0.01, anneal_epochs=1, anneal_strategy='cos')
    ema_model = ExponentialMovingAverage(model, decay=0.9)
    if args.loss == 'smoothing':
        criterion = LabelSmoothingCrossEntropy(0.1)
    elif args.loss == 'soft':
        criterion = SoftTargetCrossEntropy()
    else:
        criterion = nn.CrossEntropyLoss()

    step_losses, lrs, val_losses, grad_norms = [], [], [], []
    for epoch in range(args.epochs):
        model.train()
        optimizer.zero_grad()
        for i, (inputs, targets) in enumerate(train_loader):
            if args.loss == 'soft':
                soft = F.one_hot(targets, 4).float() * 0.9 + 0.025
            if args.aug == 'mixup':
                inputs, targets_a, targets_b, lam = mixup_data(inputs, targets, 1.0)
                if args.loss == 'soft':
                    soft_b = F.one_hot(targets_b, 4).float() * 0.9 + 0.025
                    loss = criterion(model(inputs), lam * soft + (1 - lam) * soft_b)
                else:
                    loss = mixup_criterion(criterion, model(inputs), targets_a, targets_b, lam)
            elif args.aug == 'cutmix':
                lam = np.random.beta(1.0, 1.0)
                rand_index = torch.randperm(inputs.size()[0])
                target_a = targets
                target_b = targets[rand_index]
                bbx1, bby1, bbx2, bby2 = rand_bbox(inputs.size(), lam)
                inputs[:, :, bbx1:bbx2, bby1:bby2] = inputs[rand_index, :, bbx1:bbx2, bby1:bby2]
                # adjust lambda to exactly match pixel ratio
                lam = 1 - ((bbx2 - bbx1) * (bby2 - bby1) / (inputs.size()[-1] * inputs.size()[-2]))
                output = model(inputs)
                if args.loss == 'soft':
                    loss = criterion(output, lam * soft + (1 - lam) * F.one_hot(target_b, 4).float())
                else:
                    loss = criterion(output, target_a) * lam + criterion(output, target_b) * (1. - lam)
            else:
                loss = criterion(model(inputs), targets) if args.loss != 'soft' else criterion(model(inputs), soft)
            step_losses.append(loss.item())
            loss = loss / args.accumulation_steps
            loss.backward()
            if (i + 1) % args.accumulation_steps == 0:
                torch.nn.utils.clip_grad_value_(model.parameters(), clip_value=1.0)
                grad_norms.append(float(torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=2.0)))
                optimizer.step()
                optimizer.zero_grad()
                ema_model.update_parameters(model)
                if epoch < args.swa_start:
                    if args.schedule == 'warm_restarts':
                        scheduler.step(epoch + (i + 1) / len(train_loader))
                    elif args.schedule != 'plateau':
                        scheduler.step()
                lrs.append(optimizer.param_groups[0]['lr'])
        if epoch >= args.swa_start:
            swa_model.update_parameters(model)
            swa_scheduler.step()

        model.eval()
        with torch.no_grad():
            val_loss = sum(F.cross_entropy(model(x), y, reduction='sum').item() for x, y in val_loader) / 16
        val_losses.append(val_loss)
        if args.schedule == 'plateau' and epoch < args.swa_start:
            scheduler.step(val_loss)
        log("epoch", epoch, "val", val_loss, "lr", optimizer.param_groups[0]['lr'])

        if epoch == 1:
            # checkpoint round trip mid-training
            buffer = io.BytesIO()
            torch.save({'epoch': epoch, 'model': model.state_dict(), 'optimizer': optimizer.state_dict(),
                        'scheduler': scheduler.state_dict()}, buffer)
            buffer.seek(0)
            checkpoint = torch.load(buffer)
            model2 = Net()
            model2.load_state_dict(checkpoint['model'])
            optimizer2 = torch.optim.SGD(model2.parameters(), lr=0.05, momentum=0.9, weight_decay=5e-4,
                                         nesterov=True)
            optimizer2.load_state_dict(checkpoint['optimizer'])
            model.load_state_dict(model2.state_dict())
            optimizer.load_state_dict(optimizer2.state_dict())
            scheduler.load_state_dict(checkpoint['scheduler'])

    update_bn(train_loader, swa_model)
    swa_model.eval()
    ema_model.eval()
    with torch.no_grad():
        x_val = torch.stack([val_set[i][0] for i in range(len(val_set))])
        swa_out, ema_out = swa_model(x_val), ema_model(x_val)
    return {"initial_state": initial_state, "step_losses": step_losses, "lrs": lrs, "val_losses": val_losses,
            "grad_norms": grad_norms, "swa_out": swa_out, "ema_out": ema_out,
            "n_averaged": int(swa_model.n_averaged), "split": [train_a.indices[:8], val_set.indices]}


if __name__ == "__main__":
    main()
