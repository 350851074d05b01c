"""DeepLabV3 semantic segmentation as VainF/DeepLabV3Plus-Pytorch (network/_deeplab.py ASPP / ASPPConv /
ASPPPooling / DeepLabHeadV3Plus, utils/scheduler.py PolyLR, metrics/stream_metrics.py StreamSegMetrics) and
torchvision's deeplabv3 write it, in plain torch with a small dilated backbone: ASPPConv's
Conv2d(padding=dilation, dilation=dilation), ASPPPooling's nn.AdaptiveAvgPool2d(1) and F.interpolate(x, size=size,
mode='bilinear', align_corners=False), torch.cat of the branches, the V3+ decoder (low-level 1x1 projection,
upsampling to its size, concatenation), _init_weight with nn.init.kaiming_normal_ and BatchNorm / GroupNorm
constant_ init, nn.CrossEntropyLoss(ignore_index=255, reduction='mean') on (N, C, H, W) logits, PolyLR(_LRScheduler)
with max(base_lr * (1 - self.last_epoch / self.max_iters) ** self.power, self.min_lr), SGD(momentum=0.9,
weight_decay, nesterov), separate backbone / classifier lr groups, and the confusion-matrix metrics by
np.bincount(n_class * label_true[mask].astype(int) + label_pred[mask], minlength=n_class ** 2) and the same by
torch.bincount; the F.interpolate of the logits to the input size (bilinear) and outputs.detach().max(dim=1)[1]."""
import argparse

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn
from torch.optim.lr_scheduler import _LRScheduler


class ASPPConv(nn.Sequential):
    def __init__(self, in_channels, out_channels, dilation):
        modules = [
            nn.Conv2d(in_channels, out_channels, 3, padding=dilation, dilation=dilation, bias=False),
            nn.BatchNorm2d(out_channels),
            nn.ReLU(inplace=True)
        ]
        super(ASPPConv, self).__init__(*modules)


class ASPPPooling(nn.Sequential):
    def __init__(self, in_channels, out_channels):
        super(ASPPPooling, self).__init__(
            nn.AdaptiveAvgPool2d(1),
            nn.Conv2d(in_channels, out_channels, 1, bias=False),
            nn.BatchNorm2d(out_channels),
            nn.ReLU(inplace=True))

    def forward(self, x):
        size = x.shape[-2:]
        x = super(ASPPPooling, self).forward(x)
        return F.interpolate(x, size=size, mode='bilinear', align_corners=False)


class ASPP(nn.Module):
    def __init__(self, in_channels, atrous_rates, out_channels=16):
        super(ASPP, self).__init__()
        modules = []
        modules.append(nn.Sequential(
            nn.Conv2d(in_channels, out_channels, 1, bias=False),
            nn.BatchNorm2d(out_channels),
            nn.ReLU(inplace=True)))
        rate1, rate2, rate3 = tuple(atrous_rates)
        modules.append(ASPPConv(in_channels, out_channels, rate1))
        modules.append(ASPPConv(in_channels, out_channels, rate2))
        modules.append(ASPPConv(in_channels, out_channels, rate3))
        modules.append(ASPPPooling(in_channels, out_channels))
        self.convs = nn.ModuleList(modules)
        self.project = nn.Sequential(
            nn.Conv2d(5 * out_channels, out_channels, 1, bias=False),
            nn.BatchNorm2d(out_channels),
            nn.ReLU(inplace=True),
            nn.Dropout(0.1),)

    def forward(self, x):
        res = []
        for conv in self.convs:
            res.append(conv(x))
        res = torch.cat(res, dim=1)
        return self.project(res)


class DeepLabHeadV3Plus(nn.Module):
    def __init__(self, in_channels, low_level_channels, num_classes, aspp_dilate=[2, 4, 6]):
        super(DeepLabHeadV3Plus, self).__init__()
        self.project = nn.Sequential(
            nn.Conv2d(low_level_channels, 8, 1, bias=False),
            nn.BatchNorm2d(8),
            nn.ReLU(inplace=True),
        )
        self.aspp = ASPP(in_channels, aspp_dilate)
        self.classifier = nn.Sequential(
            nn.Conv2d(24, 16, 3, padding=1, bias=False),
            nn.BatchNorm2d(16),
            nn.ReLU(inplace=True),
            nn.Conv2d(16, num_classes, 1)
        )
        self._init_weight()

    def forward(self, feature):
        low_level_feature = self.project(feature['low_level'])
        output_feature = self.aspp(feature['out'])
        output_feature = F.interpolate(output_feature, size=low_level_feature.shape[2:], mode='bilinear',
                                       align_corners=False)
        return self.classifier(torch.cat([low_level_feature, output_feature], dim=1))

    def _init_weight(self):
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight)
            elif isinstance(m, (nn.BatchNorm2d, nn.GroupNorm)):
                nn.init.constant_(m.weight, 1)
                nn.init.constant_(m.bias, 0)


class Backbone(nn.Module):
    """A two-stage dilated backbone returning {'low_level': stride 2, 'out': stride 4} features."""

    def __init__(self):
        super().__init__()
        self.stage1 = nn.Sequential(nn.Conv2d(3, 8, 3, 2, 1, bias=False), nn.BatchNorm2d(8), nn.ReLU(inplace=True))
        self.stage2 = nn.Sequential(nn.Conv2d(8, 16, 3, 2, 1, bias=False), nn.BatchNorm2d(16), nn.ReLU(inplace=True),
                                    nn.Conv2d(16, 16, 3, 1, 2, dilation=2, bias=False), nn.BatchNorm2d(16),
                                    nn.ReLU(inplace=True))

    def forward(self, x):
        low = self.stage1(x)
        return {'low_level': low, 'out': self.stage2(low)}


class DeepLabV3(nn.Module):
    def __init__(self, backbone, classifier):
        super(DeepLabV3, self).__init__()
        self.backbone = backbone
        self.classifier = classifier

    def forward(self, x):
        input_shape = x.shape[-2:]
        features = self.backbone(x)
        x = self.classifier(features)
        x = F.interpolate(x, size=input_shape, mode='bilinear', align_corners=False)
        return x


class PolyLR(_LRScheduler):
    def __init__(self, optimizer, max_iters, power=0.9, last_epoch=-1, min_lr=1e-6):
        self.power = power
        self.max_iters = max_iters
        self.min_lr = min_lr
        super(PolyLR, self).__init__(optimizer, last_epoch)

    def get_lr(self):
        return [max(base_lr * (1 - self.last_epoch / self.max_iters) ** self.power, self.min_lr)
                for base_lr in self.base_lrs]


class StreamSegMetrics(object):
    def __init__(self, n_classes):
        self.n_classes = n_classes
        self.confusion_matrix = np.zeros((n_classes, n_classes))

    def update(self, label_trues, label_preds):
        for lt, lp in zip(label_trues, label_preds):
            self.confusion_matrix += self._fast_hist(lt.flatten(), lp.flatten())

    def _fast_hist(self, label_true, label_pred):
        mask = (label_true >= 0) & (label_true < self.n_classes)
        hist = np.bincount(
            self.n_classes * label_true[mask].astype(int) + label_pred[mask],
            minlength=self.n_classes ** 2,
        ).reshape(self.n_classes, self.n_classes)
        return hist

    def get_results(self):
        hist = self.confusion_matrix
        acc = np.diag(hist).sum() / hist.sum()
        iu = np.diag(hist) / (hist.sum(axis=1) + hist.sum(axis=0) - np.diag(hist))
        return {"Overall Acc": acc, "Mean IoU": np.nanmean(iu)}


def torch_confusion(pred, target, n):
    k = (target >= 0) & (target < n)
    return torch.bincount(n * target[k].to(torch.int64) + pred[k], minlength=n ** 2).reshape(n, n)


def make_data(n, rng):
    imgs = rng.rand(n, 3, 24, 24).astype(np.float32) * 0.3
    labels = np.zeros((n, 24, 24), dtype=np.int64)
    for i in range(n):
        c = rng.randint(1, 3)
        y0, x0 = rng.randint(0, 12, 2)
        imgs[i, c - 1, y0:y0 + 10, x0:x0 + 10] += 0.7
        labels[i, y0:y0 + 10, x0:x0 + 10] = c
        labels[i, y0, x0:x0 + 10] = 255  # boundary pixels ignored, as VOC's
    return torch.from_numpy(imgs), torch.from_numpy(labels)


def main(argv=None):
    parser = argparse.ArgumentParser()
    parser.add_argument("--lr", type=float, default=0.05)
    parser.add_argument("--total_itrs", type=int, default=12)
    parser.add_argument("--nesterov", action="store_true")
    parser.add_argument("--quiet", action="store_true")
    args = parser.parse_args(argv)
    log = (lambda *a: None) if args.quiet else print
    torch.manual_seed(1)
    rng = np.random.RandomState(1)
    num_classes = 3
    model = DeepLabV3(Backbone(), DeepLabHeadV3Plus(16, 8, num_classes))
    initial_state = {k: v.clone() for k, v in model.state_dict().items()}
    optimizer = torch.optim.SGD(params=[
        {'params': model.backbone.parameters(), 'lr': 0.1 * args.lr},
        {'params': model.classifier.parameters(), 'lr': args.lr},
    ], lr=args.lr, momentum=0.9, weight_decay=1e-4, nesterov=args.nesterov)
    scheduler = PolyLR(optimizer, args.total_itrs, power=0.9)
    criterion = nn.CrossEntropyLoss(ignore_index=255, reduction='mean')
    images, labels = make_data(32, rng)
    step_losses, lrs = [], []
    cur_itrs = 0
    while cur_itrs < args.total_itrs:
        model.train()
        for b in range(0, 32, 8):
            cur_itrs += 1
            x, y = images[b:b + 8], labels[b:b + 8]
            optimizer.zero_grad()
            outputs = model(x)
            loss = criterion(outputs, y)
            loss.backward()
            optimizer.step()
            scheduler.step()
            step_losses.append(loss.detach().cpu().numpy().item())
            lrs.append([g['lr'] for g in optimizer.param_groups])
            if cur_itrs >= args.total_itrs:
                break
        log(cur_itrs, step_losses[-1])
    metrics = StreamSegMetrics(num_classes)
    model.eval()
    conf = torch.zeros(num_classes, num_classes, dtype=torch.long)
    with torch.no_grad():
        outputs = model(images[:8])
        preds = outputs.detach().max(dim=1)[1].cpu().numpy()
        targets = labels[:8].cpu().numpy()
        metrics.update(targets, preds)
        conf += torch_confusion(outputs.argmax(1), labels[:8], num_classes)
    return {"initial_state": initial_state, "step_losses": step_losses, "lrs": lrs,
            "results": metrics.get_results(), "conf": conf, "np_conf": metrics.confusion_matrix, "eval_out": outputs}


if __name__ == "__main__":
    main()
