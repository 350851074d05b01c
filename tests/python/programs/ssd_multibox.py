"""amdegroot/ssd.pytorch's detection parts as written: PriorBox (itertools.product over feature maps, sqrt'd
aspect-ratio boxes, torch.Tensor(mean).view(-1, 4), output.clamp_(max=1, min=0)), layers/box_utils.py (point_form,
center_size, intersect by expand'ed torch.min / torch.max and torch.clamp(min=0), jaccard, match with
best_truth_overlap.index_fill_(0, best_prior_idx, 2) and the per-truth loop, encode / decode with variances,
log_sum_exp by x.data.max(), and nms with torch.index_select(..., out=xx1) / torch.clamp(xx1, min=x1[i]) into
preallocated tensors and v.sort(0)), and MultiBoxLoss (loc_t = torch.Tensor(num, num_priors, 4), conf_t =
torch.LongTensor(...), Variable(loc_t, requires_grad=False), pos.unsqueeze(pos.dim()).expand_as(loc_data),
smooth_l1_loss(size_average=False), hard negative mining by loss_c.sort(1, descending=True) then
loss_idx.sort(1), num_neg = torch.clamp(negpos_ratio * num_pos, max=pos.size(1) - 1), (pos_idx + neg_idx).gt(0)
selections, cross_entropy(size_average=False)), on a small two-scale SSD head over random images / boxes, trained
with SGD(momentum=0.9, weight_decay=5e-4), then decoded and NMS'd per class as Detect does."""
import argparse
from itertools import product
from math import sqrt

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.autograd import Variable


def point_form(boxes):
    return torch.cat((boxes[:, :2] - boxes[:, 2:] / 2, boxes[:, :2] + boxes[:, 2:] / 2), 1)


def center_size(boxes):
    return torch.cat(((boxes[:, 2:] + boxes[:, :2]) / 2, boxes[:, 2:] - boxes[:, :2]), 1)


def intersect(box_a, box_b):
    A = box_a.size(0)
    B = box_b.size(0)
    max_xy = torch.min(box_a[:, 2:].unsqueeze(1).expand(A, B, 2), box_b[:, 2:].unsqueeze(0).expand(A, B, 2))
    min_xy = torch.max(box_a[:, :2].unsqueeze(1).expand(A, B, 2), box_b[:, :2].unsqueeze(0).expand(A, B, 2))
    inter = torch.clamp((max_xy - min_xy), min=0)
    return inter[:, :, 0] * inter[:, :, 1]


def jaccard(box_a, box_b):
    inter = intersect(box_a, box_b)
    area_a = ((box_a[:, 2] - box_a[:, 0]) * (box_a[:, 3] - box_a[:, 1])).unsqueeze(1).expand_as(inter)
    area_b = ((box_b[:, 2] - box_b[:, 0]) * (box_b[:, 3] - box_b[:, 1])).unsqueeze(0).expand_as(inter)
    union = area_a + area_b - inter
    return inter / union


def match(threshold, truths, priors, variances, labels, loc_t, conf_t, idx):
    overlaps = jaccard(truths, point_form(priors))
    best_prior_overlap, best_prior_idx = overlaps.max(1, keepdim=True)
    best_truth_overlap, best_truth_idx = overlaps.max(0, keepdim=True)
    best_truth_idx.squeeze_(0)
    best_truth_overlap.squeeze_(0)
    best_prior_idx.squeeze_(1)
    best_prior_overlap.squeeze_(1)
    best_truth_overlap.index_fill_(0, best_prior_idx, 2)
    for j in range(best_prior_idx.size(0)):
        best_truth_idx[best_prior_idx[j]] = j
    matches = truths[best_truth_idx]
    conf = labels[best_truth_idx] + 1
    conf[best_truth_overlap < threshold] = 0
    loc = encode(matches, priors, variances)
    loc_t[idx] = loc
    conf_t[idx] = conf


def encode(matched, priors, variances):
    g_cxcy = (matched[:, :2] + matched[:, 2:]) / 2 - priors[:, :2]
    g_cxcy /= (variances[0] * priors[:, 2:])
    g_wh = (matched[:, 2:] - matched[:, :2]) / priors[:, 2:]
    g_wh = torch.log(g_wh) / variances[1]
    return torch.cat([g_cxcy, g_wh], 1)


def decode(loc, priors, variances):
    boxes = torch.cat((
        priors[:, :2] + loc[:, :2] * variances[0] * priors[:, 2:],
        priors[:, 2:] * torch.exp(loc[:, 2:] * variances[1])), 1)
    boxes[:, :2] -= boxes[:, 2:] / 2
    boxes[:, 2:] += boxes[:, :2]
    return boxes


def log_sum_exp(x):
    x_max = x.data.max()
    return torch.log(torch.sum(torch.exp(x - x_max), 1, keepdim=True)) + x_max


def nms(boxes, scores, overlap=0.5, top_k=200):
    keep = scores.new(scores.size(0)).zero_().long()
    if boxes.numel() == 0:
        return keep, 0
    x1 = boxes[:, 0]
    y1 = boxes[:, 1]
    x2 = boxes[:, 2]
    y2 = boxes[:, 3]
    area = torch.mul(x2 - x1, y2 - y1)
    v, idx = scores.sort(0)
    idx = idx[-top_k:]
    xx1 = boxes.new()
    yy1 = boxes.new()
    xx2 = boxes.new()
    yy2 = boxes.new()
    w = boxes.new()
    h = boxes.new()
    count = 0
    while idx.numel() > 0:
        i = idx[-1]
        keep[count] = i
        count += 1
        if idx.size(0) == 1:
            break
        idx = idx[:-1]
        torch.index_select(x1, 0, idx, out=xx1)
        torch.index_select(y1, 0, idx, out=yy1)
        torch.index_select(x2, 0, idx, out=xx2)
        torch.index_select(y2, 0, idx, out=yy2)
        xx1 = torch.clamp(xx1, min=x1[i])
        yy1 = torch.clamp(yy1, min=y1[i])
        xx2 = torch.clamp(xx2, max=x2[i])
        yy2 = torch.clamp(yy2, max=y2[i])
        w.resize_as_(xx2)
        h.resize_as_(yy2)
        w = xx2 - xx1
        h = yy2 - yy1
        w = torch.clamp(w, min=0.0)
        h = torch.clamp(h, min=0.0)
        inter = w * h
        rem_areas = torch.index_select(area, 0, idx)
        union = (rem_areas - inter) + area[i]
        IoU = inter / union
        idx = idx[IoU.le(overlap)]
    return keep, count


class PriorBox(object):
    def __init__(self, cfg):
        self.image_size = cfg['min_dim']
        self.num_priors = len(cfg['aspect_ratios'])
        self.variance = cfg['variance'] or [0.1]
        self.feature_maps = cfg['feature_maps']
        self.min_sizes = cfg['min_sizes']
        self.max_sizes = cfg['max_sizes']
        self.steps = cfg['steps']
        self.aspect_ratios = cfg['aspect_ratios']
        self.clip = cfg['clip']

    def forward(self):
        mean = []
        for k, f in enumerate(self.feature_maps):
            for i, j in product(range(f), repeat=2):
                f_k = self.image_size / self.steps[k]
                cx = (j + 0.5) / f_k
                cy = (i + 0.5) / f_k
                s_k = self.min_sizes[k] / self.image_size
                mean += [cx, cy, s_k, s_k]
                s_k_prime = sqrt(s_k * (self.max_sizes[k] / self.image_size))
                mean += [cx, cy, s_k_prime, s_k_prime]
                for ar in self.aspect_ratios[k]:
                    mean += [cx, cy, s_k * sqrt(ar), s_k / sqrt(ar)]
                    mean += [cx, cy, s_k / sqrt(ar), s_k * sqrt(ar)]
        output = torch.Tensor(mean).view(-1, 4)
        if self.clip:
            output.clamp_(max=1, min=0)
        return output


class MultiBoxLoss(nn.Module):
    def __init__(self, num_classes, overlap_thresh, neg_pos, variance):
        super(MultiBoxLoss, self).__init__()
        self.num_classes = num_classes
        self.threshold = overlap_thresh
        self.negpos_ratio = neg_pos
        self.variance = variance

    def forward(self, predictions, targets):
        loc_data, conf_data, priors = predictions
        num = loc_data.size(0)
        priors = priors[:loc_data.size(1), :]
        num_priors = (priors.size(0))
        num_classes = self.num_classes
        loc_t = torch.Tensor(num, num_priors, 4)
        conf_t = torch.LongTensor(num, num_priors)
        for idx in range(num):
            truths = targets[idx][:, :-1].data
            labels = targets[idx][:, -1].data
            defaults = priors.data
            match(self.threshold, truths, defaults, self.variance, labels, loc_t, conf_t, idx)
        loc_t = Variable(loc_t, requires_grad=False)
        conf_t = Variable(conf_t, requires_grad=False)
        pos = conf_t > 0
        num_pos = pos.sum(dim=1, keepdim=True)
        pos_idx = pos.unsqueeze(pos.dim()).expand_as(loc_data)
        loc_p = loc_data[pos_idx].view(-1, 4)
        loc_t = loc_t[pos_idx].view(-1, 4)
        loss_l = F.smooth_l1_loss(loc_p, loc_t, size_average=False)
        batch_conf = conf_data.view(-1, self.num_classes)
        loss_c = log_sum_exp(batch_conf) - batch_conf.gather(1, conf_t.view(-1, 1))
        loss_c = loss_c.view(num, -1)
        loss_c[pos] = 0
        _, loss_idx = loss_c.sort(1, descending=True)
        _, idx_rank = loss_idx.sort(1)
        num_pos = pos.long().sum(1, keepdim=True)
        num_neg = torch.clamp(self.negpos_ratio * num_pos, max=pos.size(1) - 1)
        neg = idx_rank < num_neg.expand_as(idx_rank)
        pos_idx = pos.unsqueeze(2).expand_as(conf_data)
        neg_idx = neg.unsqueeze(2).expand_as(conf_data)
        conf_p = conf_data[(pos_idx + neg_idx).gt(0)].view(-1, self.num_classes)
        targets_weighted = conf_t[(pos + neg).gt(0)]
        loss_c = F.cross_entropy(conf_p, targets_weighted, size_average=False)
        N = num_pos.data.sum().float()
        loss_l /= N
        loss_c /= N
        return loss_l, loss_c


class TinySSD(nn.Module):
    def __init__(self, num_classes, mbox):
        super().__init__()
        self.num_classes = num_classes
        self.base = nn.Sequential(nn.Conv2d(3, 16, 3, padding=1), nn.ReLU(inplace=True), nn.MaxPool2d(2, 2),
                                  nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(inplace=True), nn.MaxPool2d(2, 2))
        self.extra = nn.Sequential(nn.Conv2d(32, 32, 3, stride=2, padding=1), nn.ReLU(inplace=True))
        self.loc = nn.ModuleList([nn.Conv2d(32, mbox[0] * 4, 3, padding=1), nn.Conv2d(32, mbox[1] * 4, 3, padding=1)])
        self.conf = nn.ModuleList([nn.Conv2d(32, mbox[0] * num_classes, 3, padding=1),
                                   nn.Conv2d(32, mbox[1] * num_classes, 3, padding=1)])

    def forward(self, x):
        sources = []
        x = self.base(x)
        sources.append(x)
        x = self.extra(x)
        sources.append(x)
        loc, conf = [], []
        for (x, l, c) in zip(sources, self.loc, self.conf):
            loc.append(l(x).permute(0, 2, 3, 1).contiguous())
            conf.append(c(x).permute(0, 2, 3, 1).contiguous())
        loc = torch.cat([o.view(o.size(0), -1) for o in loc], 1)
        conf = torch.cat([o.view(o.size(0), -1) for o in conf], 1)
        return loc.view(loc.size(0), -1, 4), conf.view(conf.size(0), -1, self.num_classes)


def xavier(param):
    nn.init.xavier_uniform_(param)


def weights_init(m):
    if isinstance(m, nn.Conv2d):
        xavier(m.weight.data)
        m.bias.data.zero_()


def main(argv=None):
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--quiet", action="store_true")
    args = parser.parse_args(argv)
    log = (lambda *a: None) if args.quiet else print
    torch.manual_seed(0)
    cfg = {'num_classes': 4, 'feature_maps': [8, 4], 'min_dim': 32, 'steps': [4, 8], 'min_sizes': [6, 14],
           'max_sizes': [14, 24], 'aspect_ratios': [[2], [2, 3]], 'variance': [0.1, 0.2], 'clip': True}
    with torch.no_grad():
        priors = Variable(PriorBox(cfg).forward(), volatile=True)
    net = TinySSD(cfg['num_classes'], [4, 6])
    net.apply(weights_init)
    initial_state = {k: v.clone() for k, v in net.state_dict().items()}
    optimizer = torch.optim.SGD(net.parameters(), lr=1e-2, momentum=0.9, weight_decay=5e-4)
    criterion = MultiBoxLoss(cfg['num_classes'], 0.5, 3, cfg['variance'])
    images = torch.rand(args.steps, 4, 3, 32, 32)
    targets = []
    for s in range(args.steps):
        batch = []
        for b in range(4):
            n = int(torch.randint(1, 4, (1,)))
            xy = torch.rand(n, 2) * 0.6
            wh = torch.rand(n, 2) * 0.3 + 0.1
            labels = torch.randint(0, cfg['num_classes'] - 1, (n, 1)).float()
            batch.append(torch.cat([xy, xy + wh, labels], 1))
        targets.append(batch)
    step_losses, loc_losses, conf_losses = [], [], []
    net.train()
    for it in range(args.steps):
        out = net(images[it])
        optimizer.zero_grad()
        loss_l, loss_c = criterion((out[0], out[1], priors), [Variable(ann, volatile=True) for ann in targets[it]])
        loss = loss_l + loss_c
        loss.backward()
        optimizer.step()
        step_losses.append(loss.item())
        loc_losses.append(loss_l.item())
        conf_losses.append(loss_c.item())
        log('iter ' + repr(it) + ' || Loss: %.4f ||' % (loss.item()))
    net.eval()
    with torch.no_grad():
        loc_data, conf_data = net(images[0])
    conf_preds = F.softmax(conf_data, dim=-1).transpose(2, 1)
    dets = []
    for i in range(loc_data.size(0)):
        decoded_boxes = decode(loc_data[i], priors, cfg['variance'])
        conf_scores = conf_preds[i].clone()
        for cl in range(1, cfg['num_classes']):
            c_mask = conf_scores[cl].gt(0.2)
            scores = conf_scores[cl][c_mask]
            if scores.size(0) == 0:
                continue
            l_mask = c_mask.unsqueeze(1).expand_as(decoded_boxes)
            boxes = decoded_boxes[l_mask].view(-1, 4)
            ids, count = nms(boxes, scores, 0.45, 20)
            dets.append(torch.cat((scores[ids[:count]].unsqueeze(1), boxes[ids[:count]]), 1))
    return {"initial_state": initial_state, "step_losses": step_losses, "loc": loc_losses, "conf": conf_losses,
            "priors": priors, "n_dets": [d.shape[0] for d in dets], "dets": torch.cat(dets) if dets else torch.zeros(0),
            "center": center_size(point_form(priors))}


if __name__ == "__main__":
    main()
