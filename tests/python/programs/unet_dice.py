"""milesial/Pytorch-UNet: unet/unet_parts.py (DoubleConv with bias-free convs, BatchNorm2d and
ReLU(inplace=True), Down = MaxPool2d + DoubleConv, Up with nn.Upsample(scale_factor=2, mode='bilinear',
align_corners=True) or ConvTranspose2d, F.pad by the size difference, torch.cat([x2, x1], dim=1), OutConv),
unet/unet_model.py, utils/dice_score.py (dice_coeff with reduce_batch_first and its epsilon, multiclass_dice_coeff
over flatten(0, 1), dice_loss), and train.py's step (RMSprop(weight_decay=1e-8, momentum=0.999,
foreach=True), ReduceLROnPlateau('max', patience), GradScaler(enabled=False), CrossEntropyLoss or
BCEWithLogitsLoss plus dice_loss of F.softmax(masks_pred, dim=1) against F.one_hot(true_masks,
n_classes).permute(0, 3, 1, 2).float(), clip_grad_norm_, evaluate.py's argmax / one_hot dice).
The channel widths (64..1024) are divided by --width_div; images are random 32x32 shapes."""
import argparse

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch import optim
from torch import Tensor
from torch.utils.data import DataLoader, TensorDataset, random_split


class DoubleConv(nn.Module):
    """(convolution => [BN] => ReLU) * 2"""

    def __init__(self, in_channels, out_channels, mid_channels=None):
        super().__init__()
        if not mid_channels:
            mid_channels = out_channels
        self.double_conv = nn.Sequential(
            nn.Conv2d(in_channels, mid_channels, kernel_size=3, padding=1, bias=False),
            nn.BatchNorm2d(mid_channels),
            nn.ReLU(inplace=True),
            nn.Conv2d(mid_channels, out_channels, kernel_size=3, padding=1, bias=False),
            nn.BatchNorm2d(out_channels),
            nn.ReLU(inplace=True)
        )

    def forward(self, x):
        return self.double_conv(x)


class Down(nn.Module):
    """Downscaling with maxpool then double conv"""

    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.maxpool_conv = nn.Sequential(
            nn.MaxPool2d(2),
            DoubleConv(in_channels, out_channels)
        )

    def forward(self, x):
        return self.maxpool_conv(x)


class Up(nn.Module):
    """Upscaling then double conv"""

    def __init__(self, in_channels, out_channels, bilinear=True):
        super().__init__()

        # if bilinear, use the normal convolutions to reduce the number of channels
        if bilinear:
            self.up = nn.Upsample(scale_factor=2, mode='bilinear', align_corners=True)
            self.conv = DoubleConv(in_channels, out_channels, in_channels // 2)
        else:
            self.up = nn.ConvTranspose2d(in_channels, in_channels // 2, kernel_size=2, stride=2)
            self.conv = DoubleConv(in_channels, out_channels)

    def forward(self, x1, x2):
        x1 = self.up(x1)
        # input is CHW
        diffY = x2.size()[2] - x1.size()[2]
        diffX = x2.size()[3] - x1.size()[3]

        x1 = F.pad(x1, [diffX // 2, diffX - diffX // 2,
                        diffY // 2, diffY - diffY // 2])
        x = torch.cat([x2, x1], dim=1)
        return self.conv(x)


class OutConv(nn.Module):
    def __init__(self, in_channels, out_channels):
        super(OutConv, self).__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size=1)

    def forward(self, x):
        return self.conv(x)


class UNet(nn.Module):
    def __init__(self, n_channels, n_classes, bilinear=False, width_div=1):
        super(UNet, self).__init__()
        self.n_channels = n_channels
        self.n_classes = n_classes
        self.bilinear = bilinear
        w = [c // width_div for c in (64, 128, 256, 512, 1024)]

        self.inc = (DoubleConv(n_channels, w[0]))
        self.down1 = (Down(w[0], w[1]))
        self.down2 = (Down(w[1], w[2]))
        self.down3 = (Down(w[2], w[3]))
        factor = 2 if bilinear else 1
        self.down4 = (Down(w[3], w[4] // factor))
        self.up1 = (Up(w[4], w[3] // factor, bilinear))
        self.up2 = (Up(w[3], w[2] // factor, bilinear))
        self.up3 = (Up(w[2], w[1] // factor, bilinear))
        self.up4 = (Up(w[1], w[0], bilinear))
        self.outc = (OutConv(w[0], n_classes))

    def forward(self, x):
        x1 = self.inc(x)
        x2 = self.down1(x1)
        x3 = self.down2(x2)
        x4 = self.down3(x3)
        x5 = self.down4(x4)
        x = self.up1(x5, x4)
        x = self.up2(x, x3)
        x = self.up3(x, x2)
        x = self.up4(x, x1)
        logits = self.outc(x)
        return logits


# ---------------------------------------------------------------- utils/dice_score.py
def dice_coeff(input: Tensor, target: Tensor, reduce_batch_first: bool = False, epsilon: float = 1e-6):
    # Average of Dice coefficient for all batches, or for a single mask
    assert input.size() == target.size()
    assert input.dim() == 3 or not reduce_batch_first

    sum_dim = (-1, -2) if input.dim() == 2 or not reduce_batch_first else (-1, -2, -3)

    inter = 2 * (input * target).sum(dim=sum_dim)
    sets_sum = input.sum(dim=sum_dim) + target.sum(dim=sum_dim)
    sets_sum = torch.where(sets_sum == 0, inter, sets_sum)

    dice = (inter + epsilon) / (sets_sum + epsilon)
    return dice.mean()


def multiclass_dice_coeff(input: Tensor, target: Tensor, reduce_batch_first: bool = False, epsilon: float = 1e-6):
    # Average of Dice coefficient for all classes
    return dice_coeff(input.flatten(0, 1), target.flatten(0, 1), reduce_batch_first, epsilon)


def dice_loss(input: Tensor, target: Tensor, multiclass: bool = False):
    # Dice loss (objective to minimize) between 0 and 1
    fn = multiclass_dice_coeff if multiclass else dice_coeff
    return 1 - fn(input, target, reduce_batch_first=True)


# ---------------------------------------------------------------- evaluate.py
@torch.inference_mode()
def evaluate(net, dataloader, device, amp):
    net.eval()
    num_val_batches = len(dataloader)
    dice_score = 0

    # iterate over the validation set
    with torch.autocast(device.type if device.type != 'mps' else 'cpu', enabled=amp):
        for batch in dataloader:
            image, mask_true = batch['image'], batch['mask']

            # move images and labels to correct device and type
            image = image.to(device=device, dtype=torch.float32, memory_format=torch.channels_last)
            mask_true = mask_true.to(device=device, dtype=torch.long)

            # predict the mask
            mask_pred = net(image)

            if net.n_classes == 1:
                assert mask_true.min() >= 0 and mask_true.max() <= 1, 'True mask indices should be in [0, 1]'
                mask_pred = (F.sigmoid(mask_pred.squeeze(1)) > 0.5).float()
                # compute the Dice score
                dice_score += dice_coeff(mask_pred, mask_true, reduce_batch_first=False)
            else:
                assert mask_true.min() >= 0 and mask_true.max() < net.n_classes, 'True mask indices should be in [0, n_classes['
                # convert to one-hot format
                mask_true = F.one_hot(mask_true, net.n_classes).permute(0, 3, 1, 2).float()
                mask_pred = F.one_hot(mask_pred.argmax(dim=1), net.n_classes).permute(0, 3, 1, 2).float()
                # compute the Dice score, ignoring background
                dice_score += multiclass_dice_coeff(mask_pred[:, 1:], mask_true[:, 1:], reduce_batch_first=False)

    net.train()
    return dice_score / max(num_val_batches, 1)


class DictDataset(TensorDataset):
    def __getitem__(self, index):
        image, mask = super().__getitem__(index)
        return {'image': image, 'mask': mask}


def make_shapes(n, size, n_classes, seed):
    rng = np.random.RandomState(seed)
    images = rng.rand(n, 3, size, size).astype(np.float32) * 0.3
    masks = np.zeros((n, size, size), dtype=np.int64)
    yy, xx = np.mgrid[:size, :size]
    for i in range(n):
        for c in range(1, n_classes if n_classes > 1 else 2):
            cy, cx, r = rng.randint(6, size - 6), rng.randint(6, size - 6), rng.randint(3, 6)
            disk = (yy - cy) ** 2 + (xx - cx) ** 2 < r * r
            masks[i][disk] = c
            images[i, c % 3][disk] += 0.6
    return torch.from_numpy(images), torch.from_numpy(masks)


def main(argv=None):
    p = argparse.ArgumentParser()
    p.add_argument('--epochs', type=int, default=2)
    p.add_argument('--batch-size', type=int, default=4)
    p.add_argument('--learning-rate', type=float, default=1e-5)
    p.add_argument('--val', type=float, default=20.0)
    p.add_argument('--classes', type=int, default=3)
    p.add_argument('--bilinear', action='store_true')
    p.add_argument('--width_div', type=int, default=8)
    p.add_argument('--n', type=int, default=40)
    p.add_argument('--quiet', action='store_true')
    args = p.parse_args(argv)

    torch.manual_seed(0)
    device = torch.device('cpu')
    model = UNet(n_channels=3, n_classes=args.classes, bilinear=args.bilinear, width_div=args.width_div)
    model = model.to(memory_format=torch.channels_last)
    initial_state = {k: v.clone() for k, v in model.state_dict().items()}

    images, masks = make_shapes(args.n, 32, args.classes, 0)
    if args.classes == 1:
        masks = (masks > 0).long()
    dataset = DictDataset(images, masks)
    n_val = int(len(dataset) * (args.val / 100))
    n_train = len(dataset) - n_val
    train_set, val_set = random_split(dataset, [n_train, n_val], generator=torch.Generator().manual_seed(0))
    loader_args = dict(batch_size=args.batch_size, num_workers=0, pin_memory=True)
    train_loader = DataLoader(train_set, shuffle=True, **loader_args)
    val_loader = DataLoader(val_set, shuffle=False, drop_last=True, **loader_args)

    amp, weight_decay, momentum, gradient_clipping = False, 1e-8, 0.999, 1.0
    optimizer = optim.RMSprop(model.parameters(),
                              lr=args.learning_rate, weight_decay=weight_decay, momentum=momentum, foreach=True)
    scheduler = optim.lr_scheduler.ReduceLROnPlateau(optimizer, 'max', patience=1)  # goal: maximize Dice score
    grad_scaler = torch.cuda.amp.GradScaler(enabled=amp)
    criterion = nn.CrossEntropyLoss() if model.n_classes > 1 else nn.BCEWithLogitsLoss()
    global_step = 0
    step_losses, val_scores, lrs = [], [], []
    for epoch in range(1, args.epochs + 1):
        model.train()
        epoch_loss = 0
        for batch in train_loader:
            images, true_masks = batch['image'], batch['mask']

            assert images.shape[1] == model.n_channels, \
                f'Network has been defined with {model.n_channels} input channels, ' \
                f'but loaded images have {images.shape[1]} channels. Please check that ' \
                'the images are loaded correctly.'

            images = images.to(device=device, dtype=torch.float32, memory_format=torch.channels_last)
            true_masks = true_masks.to(device=device, dtype=torch.long)

            with torch.autocast(device.type if device.type != 'mps' else 'cpu', enabled=amp):
                masks_pred = model(images)
                if model.n_classes == 1:
                    loss = criterion(masks_pred.squeeze(1), true_masks.float())
                    loss += dice_loss(F.sigmoid(masks_pred.squeeze(1)), true_masks.float(), multiclass=False)
                else:
                    loss = criterion(masks_pred, true_masks)
                    loss += dice_loss(
                        F.softmax(masks_pred, dim=1).float(),
                        F.one_hot(true_masks, model.n_classes).permute(0, 3, 1, 2).float(),
                        multiclass=True
                    )

            optimizer.zero_grad(set_to_none=True)
            grad_scaler.scale(loss).backward()
            grad_scaler.unscale_(optimizer)
            torch.nn.utils.clip_grad_norm_(model.parameters(), gradient_clipping)
            grad_scaler.step(optimizer)
            grad_scaler.update()

            global_step += 1
            epoch_loss += loss.item()
            step_losses.append(loss.item())

        val_score = evaluate(model, val_loader, device, amp)
        scheduler.step(val_score)
        val_scores.append(float(val_score))
        lrs.append(optimizer.param_groups[0]['lr'])
    model.eval()
    with torch.no_grad():
        pred = model(images[:2])
    return {"initial_state": initial_state, "step_losses": step_losses, "val_scores": val_scores, "lrs": lrs,
            "pred": pred, "final_state": model.state_dict()}


if __name__ == '__main__':
    main()
