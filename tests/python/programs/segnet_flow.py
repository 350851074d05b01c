"""Two dense-prediction programs as written. SegNet (the common PyTorch port): encoder stages ending in
F.max_pool2d(..., return_indices=True), decoder stages opening with F.max_unpool2d(x, idx, kernel_size=2,
stride=2, output_size=size), a per-pixel NLL over log_softmax with class weights and ignore_index, and an IoU
from torch.bincount of n * target + pred. PWC-Net / SpyNet style optical flow: warp() by a torch.meshgrid base
grid plus flow, normalised to [-1, 1] and F.grid_sample(padding_mode='border' / 'zeros', align_corners=True) with
an occlusion mask from warping ones, a local cost volume by F.pad and shifted products with leaky_relu(0.1),
coarse-to-fine refinement with F.interpolate(scale_factor=2, mode='bilinear', align_corners=False) * 2, and the
multi-scale EPE loss by torch.norm(p=2, dim=1), trained with Adam."""
import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F


class SegNet(nn.Module):
    def __init__(self, in_ch=3, n_classes=5):
        super().__init__()
        def block(i, o, n):
            layers = []
            for k in range(n):
                layers += [nn.Conv2d(i if k == 0 else o, o, 3, padding=1), nn.BatchNorm2d(o), nn.ReLU(inplace=True)]
            return nn.Sequential(*layers)
        self.enc1 = block(in_ch, 8, 2)
        self.enc2 = block(8, 16, 2)
        self.enc3 = block(16, 16, 2)
        self.dec3 = block(16, 16, 2)
        self.dec2 = block(16, 8, 2)
        self.dec1 = nn.Sequential(nn.Conv2d(8, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(inplace=True),
                                  nn.Conv2d(8, n_classes, 3, padding=1))

    def forward(self, x):
        x1 = self.enc1(x)
        size1 = x1.size()
        x, id1 = F.max_pool2d(x1, kernel_size=2, stride=2, return_indices=True)
        x2 = self.enc2(x)
        size2 = x2.size()
        x, id2 = F.max_pool2d(x2, kernel_size=2, stride=2, return_indices=True)
        x3 = self.enc3(x)
        size3 = x3.size()
        x, id3 = F.max_pool2d(x3, kernel_size=2, stride=2, return_indices=True)
        x = F.max_unpool2d(x, id3, kernel_size=2, stride=2, output_size=size3)
        x = self.dec3(x)
        x = F.max_unpool2d(x, id2, kernel_size=2, stride=2, output_size=size2)
        x = self.dec2(x)
        x = F.max_unpool2d(x, id1, kernel_size=2, stride=2, output_size=size1)
        return self.dec1(x)


def fast_hist(pred, target, n):
    k = (target >= 0) & (target < n)
    return torch.bincount(n * target[k] + pred[k], minlength=n ** 2).reshape(n, n)


def mesh_grid(B, H, W):
    yy, xx = torch.meshgrid(torch.arange(0, H), torch.arange(0, W))
    xx = xx.view(1, 1, H, W).repeat(B, 1, 1, 1)
    yy = yy.view(1, 1, H, W).repeat(B, 1, 1, 1)
    return torch.cat((xx, yy), 1).float()


def warp(x, flo, padding_mode='zeros'):
    B, C, H, W = x.size()
    grid = mesh_grid(B, H, W)
    vgrid = grid + flo
    vgrid[:, 0, :, :] = 2.0 * vgrid[:, 0, :, :].clone() / max(W - 1, 1) - 1.0
    vgrid[:, 1, :, :] = 2.0 * vgrid[:, 1, :, :].clone() / max(H - 1, 1) - 1.0
    vgrid = vgrid.permute(0, 2, 3, 1)
    output = F.grid_sample(x, vgrid, padding_mode=padding_mode, align_corners=True)
    mask = torch.ones(x.size())
    mask = F.grid_sample(mask, vgrid, align_corners=True)
    mask[mask < 0.9999] = 0
    mask[mask > 0] = 1
    return output * mask


def corr(f1, f2, md=2):
    b, c, h, w = f1.shape
    f2p = F.pad(f2, [md, md, md, md])
    out = []
    for i in range(2 * md + 1):
        for j in range(2 * md + 1):
            out.append((f1 * f2p[:, :, i:i + h, j:j + w]).mean(1, keepdim=True))
    return F.leaky_relu(torch.cat(out, 1), 0.1)


class FlowEstimator(nn.Module):
    def __init__(self, ch_in):
        super().__init__()
        self.net = nn.Sequential(nn.Conv2d(ch_in, 16, 3, 1, 1), nn.LeakyReLU(0.1, inplace=True),
                                 nn.Conv2d(16, 8, 3, 1, 1), nn.LeakyReLU(0.1, inplace=True),
                                 nn.Conv2d(8, 2, 3, 1, 1))

    def forward(self, x):
        return self.net(x)


class TinyPWC(nn.Module):
    def __init__(self, md=2, padding_mode='zeros'):
        super().__init__()
        self.md = md
        self.padding_mode = padding_mode
        self.feat1 = nn.Sequential(nn.Conv2d(3, 8, 3, 2, 1), nn.LeakyReLU(0.1, inplace=True))
        self.feat2 = nn.Sequential(nn.Conv2d(8, 16, 3, 2, 1), nn.LeakyReLU(0.1, inplace=True))
        nd = (2 * md + 1) ** 2
        self.est2 = FlowEstimator(nd + 16)
        self.est1 = FlowEstimator(nd + 8 + 2)

    def forward(self, im1, im2):
        c11, c21 = self.feat1(im1), self.feat1(im2)
        c12, c22 = self.feat2(c11), self.feat2(c21)
        flow2 = self.est2(torch.cat((corr(c12, c22, self.md), c12), 1))
        up_flow2 = F.interpolate(flow2, scale_factor=2, mode='bilinear', align_corners=False) * 2
        warp1 = warp(c21, up_flow2, self.padding_mode)
        flow1 = up_flow2 + self.est1(torch.cat((corr(c11, warp1, self.md), c11, up_flow2), 1))
        return flow1, flow2


def multiscale_epe(flows, target, weights=(0.32, 0.08)):
    loss = 0
    for flow, w in zip(flows, weights):
        b, _, h, w_ = flow.size()
        scale = target.size(2) / h
        target_scaled = F.interpolate(target, (h, w_), mode='area') / scale
        loss += w * torch.norm(target_scaled - flow, p=2, dim=1).mean()
    return loss


def main(argv=None):
    parser = argparse.ArgumentParser()
    parser.add_argument("--task", default="segnet", choices=["segnet", "flow"])
    parser.add_argument("--padding_mode", default="zeros")
    parser.add_argument("--steps", type=int, default=8)
    parser.add_argument("--quiet", action="store_true")
    args = parser.parse_args(argv)
    log = (lambda *a: None) if args.quiet else print
    torch.manual_seed(0)
    step_losses = []
    if args.task == "segnet":
        n = 5
        model = SegNet(n_classes=n)
        initial_state = {k: v.clone() for k, v in model.state_dict().items()}
        optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
        images = torch.randn(args.steps, 2, 3, 24, 20)
        labels = (images[:, :, 0] > 0).long() + 2 * (images[:, :, 1] > 0.5).long()
        labels[:, :, :2, :] = -1
        weight = torch.tensor([1.0, 2.0, 0.5, 1.5, 1.0])
        for i in range(args.steps):
            out = model(images[i])
            loss = F.nll_loss(F.log_softmax(out, dim=1), labels[i], weight=weight, ignore_index=-1)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            step_losses.append(loss.item())
            log("step %d loss %.4f" % (i, loss.item()))
        model.eval()
        with torch.no_grad():
            out = model(images[0])
        pred = out.argmax(1)
        hist = fast_hist(pred.flatten(), labels[0].flatten(), n).float()
        iou = torch.diag(hist) / (hist.sum(1) + hist.sum(0) - torch.diag(hist))
        x = torch.randn(2, 3, 7, 9, requires_grad=True)
        p, idx = F.max_pool2d(x, 3, 2, 1, return_indices=True)
        u = F.max_unpool2d(p, idx, 3, 2, 1, output_size=x.shape[-2:])
        u.pow(2).sum().backward()
        unpool1d = nn.MaxUnpool1d(2)(*nn.MaxPool1d(2, return_indices=True)(x[:, :, 0]))
        return {"initial_state": initial_state, "step_losses": step_losses, "out": out, "hist": hist,
                "iou": iou, "unpooled": u, "x_grad": x.grad, "unpool1d": unpool1d}
    model = TinyPWC(padding_mode=args.padding_mode)
    initial_state = {k: v.clone() for k, v in model.state_dict().items()}
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3, betas=(0.9, 0.999), weight_decay=4e-4)
    im1 = torch.rand(args.steps, 2, 3, 16, 16)
    true_flow = torch.randn(args.steps, 2, 2, 16, 16).clamp(-2, 2)
    im2 = torch.stack([warp(im1[s], true_flow[s]) for s in range(args.steps)])
    for i in range(args.steps):
        flows = model(im1[i], im2[i])
        loss = multiscale_epe(flows, true_flow[i])
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        step_losses.append(loss.item())
        log("step %d loss %.4f" % (i, loss.item()))
    with torch.no_grad():
        flow1, flow2 = model(im1[0], im2[0])
    return {"initial_state": initial_state, "step_losses": step_losses, "flow1": flow1, "im2": im2}


if __name__ == "__main__":
    main()
