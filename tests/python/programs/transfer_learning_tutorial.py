"""PyTorch tutorial "Transfer Learning for Computer Vision" (beginner_source/transfer_learning_tutorial.py,
the CUB-subset version with Co-Tuning): train_model() with model.train()/model.eval() phases,
torch.set_grad_enabled(phase == 'train'), torch.max(target_outputs, 1), running_corrects +=
torch.sum(preds == labels.data) and running_corrects.double() / size, copy.deepcopy(model.state_dict())
of the best epoch and load_state_dict at the end, StepLR(step_size=7, gamma=0.1); the three
scenarios: a frozen ResNet-18 (param.requires_grad = False, a new nn.Linear fc trained by SGD with
momentum), fine-tuning with two parameter groups of their own lr chosen by name ('fc' in name), and
Co-Tuning (`from torch.functional import F`, a CoTuningHead returning (old, new) logits, a
CoTuningLoss module overriding to(), fit() with torch.stack of torch.mean(old_prob[new_labels == i],
dim=0), self.relationship[target] soft labels); visualize_model's eval-mode predictions.

What is changed: the pretrained ResNet-18 is torchvision's ResNet code with its own random
initialisation (copied in, as torchvision writes it); the CUB images become synthetic 32x32 images
of 10 classes; the train transform keeps RandomHorizontalFlip (torch.rand, as torchvision) and
Normalize but not RandomResizedCrop/Resize/CenterCrop (the images already have their size);
matplotlib is gone; sizes, epochs and step_size are small."""
import argparse
import copy
import random
import time

import numpy as np
import torch
import torch.nn as nn
import torch.optim as optim
from torch.optim import lr_scheduler


# ---------------------------------------------------------------- torchvision/models/resnet.py (ResNet-18)
def conv3x3(in_planes, out_planes, stride=1, groups=1, dilation=1):
    """3x3 convolution with padding"""
    return nn.Conv2d(in_planes, out_planes, kernel_size=3, stride=stride, padding=dilation, groups=groups,
                     bias=False, dilation=dilation)


def conv1x1(in_planes, out_planes, stride=1):
    """1x1 convolution"""
    return nn.Conv2d(in_planes, out_planes, kernel_size=1, stride=stride, bias=False)


class BasicBlock(nn.Module):
    expansion = 1

    def __init__(self, inplanes, planes, stride=1, downsample=None, groups=1, base_width=64, dilation=1,
                 norm_layer=None):
        super().__init__()
        if norm_layer is None:
            norm_layer = nn.BatchNorm2d
        if groups != 1 or base_width != 64:
            raise ValueError("BasicBlock only supports groups=1 and base_width=64")
        if dilation > 1:
            raise NotImplementedError("Dilation > 1 not supported in BasicBlock")
        # Both self.conv1 and self.downsample layers downsample the input when stride != 1
        self.conv1 = conv3x3(inplanes, planes, stride)
        self.bn1 = norm_layer(planes)
        self.relu = nn.ReLU(inplace=True)
        self.conv2 = conv3x3(planes, planes)
        self.bn2 = norm_layer(planes)
        self.downsample = downsample
        self.stride = stride

    def forward(self, x):
        identity = x

        out = self.conv1(x)
        out = self.bn1(out)
        out = self.relu(out)

        out = self.conv2(out)
        out = self.bn2(out)

        if self.downsample is not None:
            identity = self.downsample(x)

        out += identity
        out = self.relu(out)

        return out


class ResNet(nn.Module):
    def __init__(self, block, layers, num_classes=1000, zero_init_residual=False, groups=1, width_per_group=64,
                 replace_stride_with_dilation=None, norm_layer=None):
        super().__init__()
        if norm_layer is None:
            norm_layer = nn.BatchNorm2d
        self._norm_layer = norm_layer

        self.inplanes = 64
        self.dilation = 1
        if replace_stride_with_dilation is None:
            # each element in the tuple indicates if we should replace
            # the 2x2 stride with a dilated convolution instead
            replace_stride_with_dilation = [False, False, False]
        if len(replace_stride_with_dilation) != 3:
            raise ValueError(
                "replace_stride_with_dilation should be None "
                f"or a 3-element tuple, got {replace_stride_with_dilation}"
            )
        self.groups = groups
        self.base_width = width_per_group
        self.conv1 = nn.Conv2d(3, self.inplanes, kernel_size=7, stride=2, padding=3, bias=False)
        self.bn1 = norm_layer(self.inplanes)
        self.relu = nn.ReLU(inplace=True)
        self.maxpool = nn.MaxPool2d(kernel_size=3, stride=2, padding=1)
        self.layer1 = self._make_layer(block, 64, layers[0])
        self.layer2 = self._make_layer(block, 128, layers[1], stride=2, dilate=replace_stride_with_dilation[0])
        self.layer3 = self._make_layer(block, 256, layers[2], stride=2, dilate=replace_stride_with_dilation[1])
        self.layer4 = self._make_layer(block, 512, layers[3], stride=2, dilate=replace_stride_with_dilation[2])
        self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Linear(512 * block.expansion, num_classes)

        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")
            elif isinstance(m, (nn.BatchNorm2d, nn.GroupNorm)):
                nn.init.constant_(m.weight, 1)
                nn.init.constant_(m.bias, 0)

        # Zero-initialize the last BN in each residual branch,
        # so that the residual branch starts with zeros, and each residual block behaves like an identity.
        # This improves the model by 0.2~0.3% according to https://arxiv.org/abs/1706.02677
        if zero_init_residual:
            for m in self.modules():
                if isinstance(m, BasicBlock) and m.bn2.weight is not None:
                    nn.init.constant_(m.bn2.weight, 0)  # type: ignore[arg-type]

    def _make_layer(self, block, planes, blocks, stride=1, dilate=False):
        norm_layer = self._norm_layer
        downsample = None
        previous_dilation = self.dilation
        if dilate:
            self.dilation *= stride
            stride = 1
        if stride != 1 or self.inplanes != planes * block.expansion:
            downsample = nn.Sequential(
                conv1x1(self.inplanes, planes * block.expansion, stride),
                norm_layer(planes * block.expansion),
            )

        layers = []
        layers.append(
            block(
                self.inplanes, planes, stride, downsample, self.groups, self.base_width, previous_dilation, norm_layer
            )
        )
        self.inplanes = planes * block.expansion
        for _ in range(1, blocks):
            layers.append(
                block(
                    self.inplanes,
                    planes,
                    groups=self.groups,
                    base_width=self.base_width,
                    dilation=self.dilation,
                    norm_layer=norm_layer,
                )
            )

        return nn.Sequential(*layers)

    def _forward_impl(self, x):
        # See note [TorchScript super()]
        x = self.conv1(x)
        x = self.bn1(x)
        x = self.relu(x)
        x = self.maxpool(x)

        x = self.layer1(x)
        x = self.layer2(x)
        x = self.layer3(x)
        x = self.layer4(x)

        x = self.avgpool(x)
        x = torch.flatten(x, 1)
        x = self.fc(x)

        return x

    def forward(self, x):
        return self._forward_impl(x)


def resnet18(weights=None):
    return ResNet(BasicBlock, [2, 2, 2, 2])


# ---------------------------------------------------------------- data (harness)
class RandomHorizontalFlip:
    def __call__(self, img):
        if torch.rand(1) < 0.5:
            return img.flip(-1)
        return img


class Normalize:
    def __init__(self, mean, std):
        self.mean, self.std = mean, std

    def __call__(self, img):
        mean = torch.as_tensor(self.mean, dtype=img.dtype).view(-1, 1, 1)
        std = torch.as_tensor(self.std, dtype=img.dtype).view(-1, 1, 1)
        return (img - mean) / std


class Compose:
    def __init__(self, transforms):
        self.transforms = transforms

    def __call__(self, img):
        for t in self.transforms:
            img = t(img)
        return img


class SyntheticImageFolder(torch.utils.data.Dataset):
    """datasets.ImageFolder stand-in: per-class coloured patterns with noise, ToTensor's [0, 1] floats."""

    def __init__(self, n, n_classes, size, seed, transform):
        rng = np.random.default_rng(seed)
        self.targets = [int(c) for c in rng.integers(0, n_classes, n)]
        self.classes = ["%03d.class_%d" % (c + 1, c) for c in range(n_classes)]
        ys, xs = np.meshgrid(np.linspace(0, 1, size), np.linspace(0, 1, size), indexing="ij")
        self.images = []
        for c in self.targets:
            img = np.stack([np.sin((c + 1) * xs * 3 + k) * 0.3 + 0.5 + 0.1 * np.cos((c % 4 + 1) * ys * 5)
                            for k in range(3)])
            self.images.append(np.clip(img + rng.normal(0, 0.08, img.shape), 0, 1).astype(np.float32))
        self.transform = transform

    def __len__(self):
        return len(self.targets)

    def __getitem__(self, i):
        return self.transform(torch.from_numpy(self.images[i])), self.targets[i]


# ---------------------------------------------------------------- the tutorial
def main(argv=None):
    parser = argparse.ArgumentParser()
    parser.add_argument("--scenario", choices=["conv", "ft", "ct"], default="conv")
    parser.add_argument("--num-epochs", type=int, default=25)
    parser.add_argument("--step-size", type=int, default=7)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--num-workers", type=int, default=4)
    parser.add_argument("--n-train", type=int, default=300)
    parser.add_argument("--n-val", type=int, default=300)
    parser.add_argument("--image-size", type=int, default=224)
    parser.add_argument("--quiet", action="store_true")
    args = parser.parse_args(argv)
    log = (lambda *a: None) if args.quiet else print

    from torch import nn
    from torch.functional import F

    seed = 0  # set seed for reproducibility
    torch.manual_seed(seed)
    random.seed(seed)
    np.random.seed(seed)

    # Data augmentation and normalization for training
    # Just normalization for validation
    data_transforms = {
        'train': Compose([RandomHorizontalFlip(), Normalize([0.485, 0.456, 0.406], [0.229, 0.224, 0.225])]),
        'val': Compose([Normalize([0.485, 0.456, 0.406], [0.229, 0.224, 0.225])]),
    }
    sizes = {'train': args.n_train, 'val': args.n_val}
    image_datasets = {x: SyntheticImageFolder(sizes[x], 10, args.image_size, 0 if x == 'train' else 1,
                                              data_transforms[x])
                      for x in ['train', 'val']}
    dataloaders = {x: torch.utils.data.DataLoader(image_datasets[x], batch_size=args.batch_size,
                                                  shuffle=(x == 'train'), num_workers=args.num_workers)
                   for x in ['train', 'val']}
    dataset_sizes = {x: len(image_datasets[x]) for x in ['train', 'val']}
    class_names = image_datasets['train'].classes

    device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")
    step_losses, epochs = [], []

    def train_model(model, criterion, optimizer, scheduler, num_epochs=25):
        since = time.time()

        best_model_wts = copy.deepcopy(model.state_dict())
        best_acc = 0.0

        for epoch in range(num_epochs):
            log('Epoch {}/{}'.format(epoch, num_epochs - 1))
            log('-' * 10)

            # Each epoch has a training and validation phase
            for phase in ['train', 'val']:
                if phase == 'train':
                    model.train()  # Set model to training mode
                else:
                    model.eval()   # Set model to evaluate mode

                running_loss = 0.0
                running_corrects = 0

                # Iterate over data.
                for inputs, labels in dataloaders[phase]:
                    inputs = inputs.to(device)
                    labels = labels.to(device)

                    # zero the parameter gradients
                    optimizer.zero_grad()

                    # forward
                    # compute gradients if only in train
                    with torch.set_grad_enabled(phase == 'train'):
                        outputs = model(inputs)
                        target_outputs = outputs[1] if isinstance(outputs, tuple) else outputs
                        _, preds = torch.max(target_outputs, 1)
                        loss = criterion(outputs, labels)

                        # backward + optimize only if in training phase
                        if phase == 'train':
                            loss.backward()
                            optimizer.step()
                            step_losses.append(loss.item())  # (harness)

                    # statistics
                    running_loss += loss.item() * inputs.size(0)
                    running_corrects += torch.sum(preds == labels.data)
                if phase == 'train':
                    scheduler.step()

                epoch_loss = running_loss / dataset_sizes[phase]
                epoch_acc = running_corrects.double() / dataset_sizes[phase]

                log('{} Loss: {:.4f} Acc: {:.4f}'.format(
                    phase, epoch_loss, epoch_acc))
                epochs.append((phase, epoch_loss, epoch_acc.item(), optimizer.param_groups[0]['lr']))

                # deep copy the model
                if phase == 'val' and epoch_acc > best_acc:
                    best_acc = epoch_acc
                    best_model_wts = copy.deepcopy(model.state_dict())

            log()

        time_elapsed = time.time() - since
        log('Training complete in {:.0f}m {:.0f}s'.format(
            time_elapsed // 60, time_elapsed % 60))
        log('Best val Acc: {:4f}'.format(best_acc))

        # load best model weights
        model.load_state_dict(best_model_wts)
        return model

    def visualize_model(model, num_images=6):
        was_training = model.training
        model.eval()
        images_so_far = 0
        shown = []

        with torch.no_grad():
            for i, (inputs, labels) in enumerate(dataloaders['val']):
                inputs = inputs.to(device)
                labels = labels.to(device)

                outputs = model(inputs)
                target_outputs = outputs[1] if isinstance(outputs, tuple) else outputs
                _, preds = torch.max(target_outputs, 1)

                for j in range(inputs.size()[0]):
                    label = labels[j].item()
                    images_so_far += 1
                    shown.append('label:{}; predicted: {}'.format(class_names[label], class_names[preds[j]]))

                    if images_so_far == num_images:
                        model.train(mode=was_training)
                        return shown
            model.train(mode=was_training)
        return shown

    if args.scenario == "conv":
        # 1. ConvNet as fixed feature extractor
        model_conv = resnet18()
        for param in model_conv.parameters():
            param.requires_grad = False

        # Parameters of newly constructed modules have requires_grad=True by default
        num_ftrs = model_conv.fc.in_features
        model_conv.fc = nn.Linear(num_ftrs, len(class_names))

        model_conv = model_conv.to(device)
        initial_state = {k: v.clone() for k, v in model_conv.state_dict().items()}

        criterion = nn.CrossEntropyLoss()

        # Observe that only parameters of final layer are being optimized as
        # opposed to before.
        optimizer_conv = optim.SGD(model_conv.fc.parameters(), lr=0.01, momentum=0.9)

        # Decay LR by a factor of 0.1 every 7 epochs
        exp_lr_scheduler = lr_scheduler.StepLR(optimizer_conv, step_size=args.step_size, gamma=0.1)

        model = train_model(model_conv, criterion, optimizer_conv, exp_lr_scheduler, num_epochs=args.num_epochs)
        frozen_grads = [p.grad is None for p in model_conv.parameters()]
    elif args.scenario == "ft":
        # Finetuning the convnet
        model_ft = resnet18()
        num_ftrs = model_ft.fc.in_features
        model_ft.fc = nn.Linear(num_ftrs, len(class_names))

        model_ft = model_ft.to(device)
        initial_state = {k: v.clone() for k, v in model_ft.state_dict().items()}

        criterion = nn.CrossEntropyLoss()

        params = [{"params": [p for name, p in model_ft.named_parameters() if 'fc' in name], "lr": 1e-2},
                  {"params": [p for name, p in model_ft.named_parameters() if 'fc' not in name], "lr": 1e-3}]

        # Observe that all parameters are being optimized
        optimizer_ft = optim.SGD(params, momentum=0.9)

        # Decay LR by a factor of 0.1 every 7 epochs
        exp_lr_scheduler = lr_scheduler.StepLR(optimizer_ft, step_size=args.step_size, gamma=0.1)

        model = train_model(model_ft, criterion, optimizer_ft, exp_lr_scheduler, num_epochs=args.num_epochs)
        frozen_grads = []
    else:
        # Finetuning the convnet with an advanced method: Co-Tuning
        class CoTuningHead(nn.Module):
            """
            Implements the Co-Tuning algorithm as described in the NeurIPS 2020 paper `Co-Tuning for Transfer Learning`.
            """
            def __init__(self, old_head: nn.Linear, num_class: int):
                super(CoTuningHead, self).__init__()
                self.old_head = old_head
                self.new_head = nn.Linear(old_head.in_features, num_class)

            def forward(self, features):
                old_output = self.old_head(features)
                new_output = self.new_head(features)
                return old_output, new_output

            def deploy(self):
                """
                When training finishes, convert the CoTuningHead to an ordinary Linear layer
                """
                return copy.deepcopy(self.new_head)

        class CoTuningLoss(nn.Module):
            def __init__(self, trade_off: float):
                super().__init__()
                self.trade_off = trade_off
                self.fitted = False
                self.relationship = torch.Tensor([0, 0, 0])  # placeholder

            def to(self, device):
                self.relationship = self.relationship.to(device=device)
                return self

            def fit(self, old_logits: torch.Tensor, new_labels: torch.Tensor):
                Ct = new_labels.max().item() + 1
                old_prob = F.softmax(old_logits, dim=-1)
                self.relationship = torch.stack([torch.mean(old_prob[new_labels == i], dim=0) for i in range(Ct)])
                self.fitted = True

            def forward(self, inputs, target):
                if not self.fitted:
                    raise Exception("please call fit() first!")
                old_output, new_output = inputs
                target_loss = F.cross_entropy(new_output, target)
                old_softlabel = self.relationship[target]
                cotuning_loss = - (F.log_softmax(old_output, dim=-1) * old_softlabel).sum(dim=-1).mean(dim=0)
                return target_loss + self.trade_off * cotuning_loss

        model_ct = resnet18().to(device)
        initial_state = {k: v.clone() for k, v in model_ct.state_dict().items()}
        criterion = CoTuningLoss(trade_off=2.3)

        with torch.no_grad():
            was_training = model_ct.training
            model_ct.eval()
            old_logits = []
            new_labels = []
            for i, (inputs, labels) in enumerate(dataloaders['train']):
                inputs = inputs.to(device)
                labels = labels.to(device)

                outputs = model_ct(inputs)
                target_outputs = outputs[1] if isinstance(outputs, tuple) else outputs
                old_logits.append(target_outputs.cpu())
                new_labels.append(labels.cpu())
            old_logits = torch.cat(old_logits)
            new_labels = torch.cat(new_labels)
            criterion.fit(old_logits, new_labels)
            model_ct.train(mode=was_training)

        model_ct.fc = CoTuningHead(model_ct.fc, len(class_names))

        model_ct = model_ct.to(device)
        criterion = criterion.to(device)

        params = [{"params": [p for name, p in model_ct.named_parameters() if 'new' in name], "lr": 1e-2},
                  {"params": [p for name, p in model_ct.named_parameters() if 'new' not in name], "lr": 1e-3}]

        # Observe that all parameters are being optimized
        optimizer_ct = optim.SGD(params, momentum=0.9)

        # Decay LR by a factor of 0.1 every 7 epochs
        exp_lr_scheduler = lr_scheduler.StepLR(optimizer_ct, step_size=args.step_size, gamma=0.1)

        model = train_model(model_ct, criterion, optimizer_ct, exp_lr_scheduler, num_epochs=args.num_epochs)
        frozen_grads = [criterion.relationship.detach().clone(), type(model.fc.deploy()).__name__]

    shown = visualize_model(model)
    return {"initial_state": initial_state, "step_losses": step_losses, "epochs": epochs, "shown": shown,
            "frozen": frozen_grads}


if __name__ == "__main__":
    main()
