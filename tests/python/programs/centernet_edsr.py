"""Two dense-output programs as written. xingyizhou/CenterNet's training / decoding pieces (trimmed): gaussian2D
/ draw_umich_gaussian heatmaps in NumPy (np.ogrid, np.maximum of the masked slices), _sigmoid by
torch.clamp(x.sigmoid_(), min=1e-4, max=1 - 1e-4), _neg_loss (pos_inds = gt.eq(1).float(), neg_weights =
torch.pow(1 - gt, 4), torch.log(1 - pred) * torch.pow(pred, 2), num_pos == 0 branch), _gather_feat by
ind.unsqueeze(2).expand(...) and feat.gather(1, ind), _transpose_and_gather_feat (permute(0, 2, 3, 1).contiguous()
.view), RegL1Loss with mask.unsqueeze(2).expand_as(pred).float() and F.l1_loss(pred * mask, target * mask,
size_average=False) / (mask.sum() + 1e-4), the head's fill_(-2.19) bias, and ctdet_decode (_nms by
F.max_pool2d(heat, (kernel, kernel), stride=1, padding=pad) and (hmax == heat).float(), _topk by torch.topk on
views, topk_inds / width int division, topk_clses = (topk_ind / K).int(), _gather_feat on the flattened indices,
torch.cat of the boxes). sanghyun-son/EDSR-PyTorch's EDSR (MeanShift as a Conv2d whose weight is
torch.eye(3).view(3, 3, 1, 1) / std.view(3, 1, 1, 1) with requires_grad = False, default_conv, ResBlock with
res_scale by .mul(), Upsampler of conv + nn.PixelShuffle(2) for math.log(scale, 2) stages, add_mean / sub_mean),
trained with L1Loss and Adam(betas=(0.9, 0.999), eps=1e-8) under MultiStepLR, with calc_psnr on quantized
outputs (mul(pixel_range).clamp(0, 255).round().div(pixel_range)) and a shaved border, and load_state_dict's
strict=False tail skipping for the upsampler in its own loop."""
import argparse
import math

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


def gaussian2D(shape, sigma=1):
    m, n = [(ss - 1.) / 2. for ss in shape]
    y, x = np.ogrid[-m:m + 1, -n:n + 1]
    h = np.exp(-(x * x + y * y) / (2 * sigma * sigma))
    h[h < np.finfo(h.dtype).eps * h.max()] = 0
    return h


def draw_umich_gaussian(heatmap, center, radius, k=1):
    diameter = 2 * radius + 1
    gaussian = gaussian2D((diameter, diameter), sigma=diameter / 6)
    x, y = int(center[0]), int(center[1])
    height, width = heatmap.shape[0:2]
    left, right = min(x, radius), min(width - x, radius + 1)
    top, bottom = min(y, radius), min(height - y, radius + 1)
    masked_heatmap = heatmap[y - top:y + bottom, x - left:x + right]
    masked_gaussian = gaussian[radius - top:radius + bottom, radius - left:radius + right]
    if min(masked_gaussian.shape) > 0 and min(masked_heatmap.shape) > 0:
        np.maximum(masked_heatmap, masked_gaussian * k, out=masked_heatmap)
    return heatmap


def _sigmoid(x):
    y = torch.clamp(x.sigmoid_(), min=1e-4, max=1 - 1e-4)
    return y


def _neg_loss(pred, gt):
    pos_inds = gt.eq(1).float()
    neg_inds = gt.lt(1).float()
    neg_weights = torch.pow(1 - gt, 4)
    loss = 0
    pos_loss = torch.log(pred) * torch.pow(1 - pred, 2) * pos_inds
    neg_loss = torch.log(1 - pred) * torch.pow(pred, 2) * neg_weights * neg_inds
    num_pos = pos_inds.float().sum()
    pos_loss = pos_loss.sum()
    neg_loss = neg_loss.sum()
    if num_pos == 0:
        loss = loss - neg_loss
    else:
        loss = loss - (pos_loss + neg_loss) / num_pos
    return loss


def _gather_feat(feat, ind, mask=None):
    dim = feat.size(2)
    ind = ind.unsqueeze(2).expand(ind.size(0), ind.size(1), dim)
    feat = feat.gather(1, ind)
    if mask is not None:
        mask = mask.unsqueeze(2).expand_as(feat)
        feat = feat[mask]
        feat = feat.view(-1, dim)
    return feat


def _transpose_and_gather_feat(feat, ind):
    feat = feat.permute(0, 2, 3, 1).contiguous()
    feat = feat.view(feat.size(0), -1, feat.size(3))
    feat = _gather_feat(feat, ind)
    return feat


class RegL1Loss(nn.Module):
    def forward(self, output, mask, ind, target):
        pred = _transpose_and_gather_feat(output, ind)
        mask = mask.unsqueeze(2).expand_as(pred).float()
        loss = F.l1_loss(pred * mask, target * mask, size_average=False)
        loss = loss / (mask.sum() + 1e-4)
        return loss


def _nms(heat, kernel=3):
    pad = (kernel - 1) // 2
    hmax = F.max_pool2d(heat, (kernel, kernel), stride=1, padding=pad)
    keep = (hmax == heat).float()
    return heat * keep


def _topk(scores, K=10):
    batch, cat, height, width = scores.size()
    topk_scores, topk_inds = torch.topk(scores.view(batch, cat, -1), K)
    topk_inds = topk_inds % (height * width)
    topk_ys = (topk_inds / width).int().float()
    topk_xs = (topk_inds % width).int().float()
    topk_score, topk_ind = torch.topk(topk_scores.view(batch, -1), K)
    topk_clses = (topk_ind / K).int()
    topk_inds = _gather_feat(topk_inds.view(batch, -1, 1), topk_ind).view(batch, K)
    topk_ys = _gather_feat(topk_ys.view(batch, -1, 1), topk_ind).view(batch, K)
    topk_xs = _gather_feat(topk_xs.view(batch, -1, 1), topk_ind).view(batch, K)
    return topk_score, topk_inds, topk_clses, topk_ys, topk_xs


def ctdet_decode(heat, wh, reg=None, K=10):
    batch, cat, height, width = heat.size()
    heat = _nms(heat)
    scores, inds, clses, ys, xs = _topk(heat, K=K)
    if reg is not None:
        reg = _transpose_and_gather_feat(reg, inds)
        reg = reg.view(batch, K, 2)
        xs = xs.view(batch, K, 1) + reg[:, :, 0:1]
        ys = ys.view(batch, K, 1) + reg[:, :, 1:2]
    wh = _transpose_and_gather_feat(wh, inds)
    wh = wh.view(batch, K, 2)
    clses = clses.view(batch, K, 1).float()
    scores = scores.view(batch, K, 1)
    bboxes = torch.cat([xs - wh[..., 0:1] / 2, ys - wh[..., 1:2] / 2, xs + wh[..., 0:1] / 2, ys + wh[..., 1:2] / 2],
                       dim=2)
    return torch.cat([bboxes, scores, clses], dim=2)


class CenterHead(nn.Module):
    def __init__(self, num_classes=3, head_conv=16):
        super().__init__()
        self.base = nn.Sequential(nn.Conv2d(3, 16, 3, 2, 1), nn.BatchNorm2d(16), nn.ReLU(inplace=True),
                                  nn.Conv2d(16, 16, 3, 1, 1), nn.BatchNorm2d(16), nn.ReLU(inplace=True))
        self.heads = {'hm': num_classes, 'wh': 2, 'reg': 2}
        for head in self.heads:
            classes = self.heads[head]
            fc = nn.Sequential(nn.Conv2d(16, head_conv, kernel_size=3, padding=1, bias=True), nn.ReLU(inplace=True),
                               nn.Conv2d(head_conv, classes, kernel_size=1, stride=1, padding=0, bias=True))
            if 'hm' in head:
                fc[-1].bias.data.fill_(-2.19)
            self.__setattr__(head, fc)

    def forward(self, x):
        x = self.base(x)
        ret = {}
        for head in self.heads:
            ret[head] = self.__getattr__(head)(x)
        return [ret]


class MeanShift(nn.Conv2d):
    def __init__(self, rgb_range, rgb_mean=(0.4488, 0.4371, 0.4040), rgb_std=(1.0, 1.0, 1.0), sign=-1):
        super(MeanShift, self).__init__(3, 3, kernel_size=1)
        std = torch.Tensor(rgb_std)
        self.weight.data = torch.eye(3).view(3, 3, 1, 1) / std.view(3, 1, 1, 1)
        self.bias.data = sign * rgb_range * torch.Tensor(rgb_mean) / std
        for p in self.parameters():
            p.requires_grad = False


def default_conv(in_channels, out_channels, kernel_size, bias=True):
    return nn.Conv2d(in_channels, out_channels, kernel_size, padding=(kernel_size // 2), bias=bias)


class ResBlock(nn.Module):
    def __init__(self, conv, n_feats, kernel_size, bias=True, bn=False, act=nn.ReLU(True), res_scale=1):
        super(ResBlock, self).__init__()
        m = []
        for i in range(2):
            m.append(conv(n_feats, n_feats, kernel_size, bias=bias))
            if bn:
                m.append(nn.BatchNorm2d(n_feats))
            if i == 0:
                m.append(act)
        self.body = nn.Sequential(*m)
        self.res_scale = res_scale

    def forward(self, x):
        res = self.body(x).mul(self.res_scale)
        res += x
        return res


class Upsampler(nn.Sequential):
    def __init__(self, conv, scale, n_feats, bn=False, act=False, bias=True):
        m = []
        if (scale & (scale - 1)) == 0:
            for _ in range(int(math.log(scale, 2))):
                m.append(conv(n_feats, 4 * n_feats, 3, bias))
                m.append(nn.PixelShuffle(2))
                if bn:
                    m.append(nn.BatchNorm2d(n_feats))
                if act == 'relu':
                    m.append(nn.ReLU(True))
        else:
            raise NotImplementedError
        super(Upsampler, self).__init__(*m)


class EDSR(nn.Module):
    def __init__(self, n_resblocks=2, n_feats=8, scale=2, rgb_range=255, res_scale=0.1, conv=default_conv):
        super(EDSR, self).__init__()
        kernel_size = 3
        act = nn.ReLU(True)
        self.sub_mean = MeanShift(rgb_range)
        self.add_mean = MeanShift(rgb_range, sign=1)
        m_head = [conv(3, n_feats, kernel_size)]
        m_body = [ResBlock(conv, n_feats, kernel_size, act=act, res_scale=res_scale) for _ in range(n_resblocks)]
        m_body.append(conv(n_feats, n_feats, kernel_size))
        m_tail = [Upsampler(conv, scale, n_feats, act=False), conv(n_feats, 3, kernel_size)]
        self.head = nn.Sequential(*m_head)
        self.body = nn.Sequential(*m_body)
        self.tail = nn.Sequential(*m_tail)

    def forward(self, x):
        x = self.sub_mean(x)
        x = self.head(x)
        res = self.body(x)
        res += x
        x = self.tail(res)
        x = self.add_mean(x)
        return x

    def load_state_dict(self, state_dict, strict=True):
        own_state = self.state_dict()
        for name, param in state_dict.items():
            if name in own_state:
                if isinstance(param, nn.Parameter):
                    param = param.data
                try:
                    own_state[name].copy_(param)
                except Exception:
                    if name.find('tail') == -1:
                        raise RuntimeError('While copying the parameter named {}, whose dimensions in the model are '
                                           '{} and whose dimensions in the checkpoint are {}.'
                                           .format(name, own_state[name].size(), param.size()))
            elif strict:
                if name.find('tail') == -1:
                    raise KeyError('unexpected key "{}" in state_dict'.format(name))


def quantize(img, rgb_range):
    pixel_range = 255 / rgb_range
    return img.mul(pixel_range).clamp(0, 255).round().div(pixel_range)


def calc_psnr(sr, hr, scale, rgb_range):
    diff = (sr - hr) / rgb_range
    shave = scale + 6 if False else scale
    gray_coeffs = [65.738, 129.057, 25.064]
    convert = diff.new_tensor(gray_coeffs).view(1, 3, 1, 1) / 256
    diff = diff.mul(convert).sum(dim=1)
    valid = diff[..., shave:-shave, shave:-shave]
    mse = valid.pow(2).mean()
    return -10 * math.log10(mse)


def main(argv=None):
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", default="centernet", choices=["centernet", "edsr"])
    parser.add_argument("--steps", type=int, default=8)
    parser.add_argument("--quiet", action="store_true")
    args = parser.parse_args(argv)
    log = (lambda *a: None) if args.quiet else print
    torch.manual_seed(0)
    np.random.seed(0)
    step_losses = []
    if args.model == "centernet":
        model = CenterHead()
        initial_state = {k: v.clone() for k, v in model.state_dict().items()}
        optimizer = torch.optim.Adam(model.parameters(), 1.25e-3)
        crit_reg = RegL1Loss()
        B, C, H, W, max_objs = 2, 3, 16, 16, 6
        hm_losses = []
        for it in range(args.steps):
            images = torch.randn(B, 3, 2 * H, 2 * W)
            hm = np.zeros((B, C, H, W), dtype=np.float32)
            wh = np.zeros((B, max_objs, 2), dtype=np.float32)
            reg = np.zeros((B, max_objs, 2), dtype=np.float32)
            ind = np.zeros((B, max_objs), dtype=np.int64)
            reg_mask = np.zeros((B, max_objs), dtype=np.uint8)
            for b in range(B):
                for k in range(np.random.randint(1, max_objs)):
                    ct = np.random.rand(2) * (W - 1)
                    ct_int = ct.astype(np.int32)
                    cls = np.random.randint(0, C)
                    draw_umich_gaussian(hm[b, cls], ct_int, np.random.randint(1, 4))
                    wh[b, k] = np.random.rand(2) * 6 + 1
                    ind[b, k] = ct_int[1] * W + ct_int[0]
                    reg[b, k] = ct - ct_int
                    reg_mask[b, k] = 1
            batch = {'hm': torch.from_numpy(hm), 'wh': torch.from_numpy(wh), 'reg': torch.from_numpy(reg),
                     'ind': torch.from_numpy(ind), 'reg_mask': torch.from_numpy(reg_mask)}
            outputs = model(images)
            output = outputs[0]
            output['hm'] = _sigmoid(output['hm'])
            hm_loss = _neg_loss(output['hm'], batch['hm'])
            wh_loss = crit_reg(output['wh'], batch['reg_mask'], batch['ind'], batch['wh'])
            off_loss = crit_reg(output['reg'], batch['reg_mask'], batch['ind'], batch['reg'])
            loss = hm_loss + 0.1 * wh_loss + off_loss
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            step_losses.append(loss.item())
            hm_losses.append(hm_loss.item())
            log("iter %d loss %.4f hm %.4f" % (it, loss.item(), hm_loss.item()))
        model.eval()
        with torch.no_grad():
            output = model(images)[0]
            dets = ctdet_decode(output['hm'].sigmoid_(), output['wh'], reg=output['reg'], K=10)
        return {"initial_state": initial_state, "step_losses": step_losses, "hm_losses": hm_losses, "dets": dets,
                "gaussian": gaussian2D((7, 7), 7 / 6)}
    model = EDSR()
    initial_state = {k: v.clone() for k, v in model.state_dict().items()}
    optimizer = torch.optim.Adam(filter(lambda x: x.requires_grad, model.parameters()), lr=1e-3, betas=(0.9, 0.999),
                                 eps=1e-8)
    scheduler = torch.optim.lr_scheduler.MultiStepLR(optimizer, milestones=[4, 6], gamma=0.5)
    loss_fn = nn.L1Loss()
    hr_all = torch.rand(args.steps, 2, 3, 16, 16) * 255
    psnrs = []
    for it in range(args.steps):
        hr = hr_all[it]
        lr = F.avg_pool2d(hr, 2)
        optimizer.zero_grad()
        sr = model(lr)
        loss = loss_fn(sr, hr)
        loss.backward()
        optimizer.step()
        scheduler.step()
        step_losses.append(loss.item())
        with torch.no_grad():
            psnrs.append(calc_psnr(quantize(sr, 255), hr, 2, 255))
        log("iter %d loss %.4f psnr %.3f" % (it, loss.item(), psnrs[-1]))
    other = EDSR(n_feats=8)
    sd = {k: v for k, v in model.state_dict().items()}
    sd["tail.0.0.weight"] = torch.zeros(1)
    other.load_state_dict(sd, strict=False)
    with torch.no_grad():
        out = other(hr_all[0, :, :, :8, :8])
    return {"initial_state": initial_state, "step_losses": step_losses, "psnr": psnrs, "out": out,
            "mean_w": model.sub_mean.weight.detach()}


if __name__ == "__main__":
    main()
