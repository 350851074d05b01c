"""yunjey/pytorch-tutorial, two programs in one file (--program):

- resnet: tutorials/02-intermediate/deep_residual_network/main.py: conv3x3 (bias=False), a
  ResidualBlock with nn.ReLU(inplace=True) and `out += residual`, make_layer's downsample
  nn.Sequential(conv3x3, BatchNorm2d), nn.AvgPool2d(8), out.view(out.size(0), -1), Adam whose lr is
  divided by 3 through update_lr's param_group['lr'] = lr, model.eval() under torch.no_grad() with
  torch.max(outputs.data, 1) and (predicted == labels).sum().item(), torch.save of the state_dict;
  the CIFAR-10 transforms (Pad(4), RandomHorizontalFlip, RandomCrop(32), ToTensor) are written out
  on tensors with the torch.rand / torch.randint draws torchvision makes;
- gan: tutorials/03-advanced/generative_adversarial_network/main.py: Sequential D (LeakyReLU(0.2),
  Sigmoid) and G (ReLU, Tanh), BCELoss with torch.ones/zeros labels, reset_grad() zeroing both Adams,
  d_loss_real + d_loss_fake, z = torch.randn(batch_size, latent_size), denorm's (x + 1) / 2 clamped,
  images.reshape(batch_size, -1), real_score.mean(), torch.save of both state_dicts.

What is changed: CIFAR-10 and MNIST become synthetic images (the same per-class patterns, drawn with
NumPy), torchvision's save_image writes nothing, and the sizes and epochs are small."""
import argparse
import os
import tempfile

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


# ---------------------------------------------------------------- torchvision transforms, on tensors
class Pad:
    def __init__(self, padding):
        self.padding = padding

    def __call__(self, img):
        p = self.padding
        return F.pad(img, [p, p, p, p])


class RandomHorizontalFlip:
    def __init__(self, p=0.5):
        self.p = p

    def __call__(self, img):
        if torch.rand(1) < self.p:
            return img.flip(-1)
        return img


class RandomCrop:
    def __init__(self, size):
        self.size = (size, size)

    def __call__(self, img):
        h, w = img.shape[-2:]
        th, tw = self.size
        i = torch.randint(0, h - th + 1, size=(1,)).item()
        j = torch.randint(0, w - tw + 1, size=(1,)).item()
        return img[..., i:i + th, j:j + tw]


class Compose:
    def __init__(self, transforms):
        self.transforms = transforms

    def __call__(self, img):
        for t in self.transforms:
            img = t(img)
        return img


class SyntheticImages(torch.utils.data.Dataset):
    """(harness) CIFAR-10 / MNIST: per-class stripes and blobs plus noise, ToTensor's [0, 1] floats."""

    def __init__(self, n, channels, size, seed, transform=None):
        rng = np.random.default_rng(seed)
        self.labels = rng.integers(0, 10, n)
        ys, xs = np.meshgrid(np.arange(size), np.arange(size), indexing="ij")
        imgs = []
        for c in self.labels:
            base = 0.5 + 0.4 * np.sin((c + 1) * (xs + (c % 3) * ys) / size * np.pi)
            img = np.stack([base * (0.6 + 0.1 * k) for k in range(channels)])
            imgs.append(np.clip(img + rng.normal(0, 0.1, img.shape), 0, 1).astype(np.float32))
        self.images = torch.from_numpy(np.stack(imgs))
        self.transform = transform

    def __len__(self):
        return len(self.labels)

    def __getitem__(self, i):
        img = self.images[i]
        if self.transform is not None:
            img = self.transform(img)
        return img, int(self.labels[i])


# ---------------------------------------------------------------- deep_residual_network/main.py
# 3x3 convolution
def conv3x3(in_channels, out_channels, stride=1):
    return nn.Conv2d(in_channels, out_channels, kernel_size=3,
                     stride=stride, padding=1, bias=False)


# Residual block
class ResidualBlock(nn.Module):
    def __init__(self, in_channels, out_channels, stride=1, downsample=None):
        super(ResidualBlock, self).__init__()
        self.conv1 = conv3x3(in_channels, out_channels, stride)
        self.bn1 = nn.BatchNorm2d(out_channels)
        self.relu = nn.ReLU(inplace=True)
        self.conv2 = conv3x3(out_channels, out_channels)
        self.bn2 = nn.BatchNorm2d(out_channels)
        self.downsample = downsample

    def forward(self, x):
        residual = x
        out = self.conv1(x)
        out = self.bn1(out)
        out = self.relu(out)
        out = self.conv2(out)
        out = self.bn2(out)
        if self.downsample:
            residual = self.downsample(x)
        out += residual
        out = self.relu(out)
        return out


# ResNet
class ResNet(nn.Module):
    def __init__(self, block, layers, num_classes=10):
        super(ResNet, self).__init__()
        self.in_channels = 16
        self.conv = conv3x3(3, 16)
        self.bn = nn.BatchNorm2d(16)
        self.relu = nn.ReLU(inplace=True)
        self.layer1 = self.make_layer(block, 16, layers[0])
        self.layer2 = self.make_layer(block, 32, layers[1], 2)
        self.layer3 = self.make_layer(block, 64, layers[2], 2)
        self.avg_pool = nn.AvgPool2d(8)
        self.fc = nn.Linear(64, num_classes)

    def make_layer(self, block, out_channels, blocks, stride=1):
        downsample = None
        if (stride != 1) or (self.in_channels != out_channels):
            downsample = nn.Sequential(
                conv3x3(self.in_channels, out_channels, stride=stride),
                nn.BatchNorm2d(out_channels))
        layers = []
        layers.append(block(self.in_channels, out_channels, stride, downsample))
        self.in_channels = out_channels
        for i in range(1, blocks):
            layers.append(block(out_channels, out_channels))
        return nn.Sequential(*layers)

    def forward(self, x):
        out = self.conv(x)
        out = self.bn(out)
        out = self.relu(out)
        out = self.layer1(out)
        out = self.layer2(out)
        out = self.layer3(out)
        out = self.avg_pool(out)
        out = out.view(out.size(0), -1)
        out = self.fc(out)
        return out


def run_resnet(args, log, tmpdir):
    device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')
    num_epochs = args.num_epochs
    learning_rate = args.learning_rate

    # Image preprocessing modules
    transform = Compose([Pad(4), RandomHorizontalFlip(), RandomCrop(32)])

    # CIFAR-10 dataset
    train_dataset = SyntheticImages(args.n_train, 3, 32, 0, transform=transform)
    test_dataset = SyntheticImages(args.n_test, 3, 32, 1)

    # Data loader
    train_loader = torch.utils.data.DataLoader(dataset=train_dataset, batch_size=args.batch_size, shuffle=True)
    test_loader = torch.utils.data.DataLoader(dataset=test_dataset, batch_size=args.batch_size, shuffle=False)

    model = ResNet(ResidualBlock, [2, 2, 2]).to(device)
    initial_state = {k: v.clone() for k, v in model.state_dict().items()}

    # Loss and optimizer
    criterion = nn.CrossEntropyLoss()
    optimizer = torch.optim.Adam(model.parameters(), lr=learning_rate)

    # For updating learning rate
    def update_lr(optimizer, lr):
        for param_group in optimizer.param_groups:
            param_group['lr'] = lr

    # Train the model
    step_losses, lrs = [], []
    total_step = len(train_loader)
    curr_lr = learning_rate
    for epoch in range(num_epochs):
        for i, (images, labels) in enumerate(train_loader):
            images = images.to(device)
            labels = labels.to(device)

            # Forward pass
            outputs = model(images)
            loss = criterion(outputs, labels)

            # Backward and optimize
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            step_losses.append(loss.item())

            if (i+1) % 100 == 0:
                log("Epoch [{}/{}], Step [{}/{}] Loss: {:.4f}"
                    .format(epoch+1, num_epochs, i+1, total_step, loss.item()))

        # Decay learning rate
        if (epoch+1) % args.decay_every == 0:
            curr_lr /= 3
            update_lr(optimizer, curr_lr)
        lrs.append(optimizer.param_groups[0]['lr'])

    # Test the model
    model.eval()
    with torch.no_grad():
        correct = 0
        total = 0
        for images, labels in test_loader:
            images = images.to(device)
            labels = labels.to(device)
            outputs = model(images)
            _, predicted = torch.max(outputs.data, 1)
            total += labels.size(0)
            correct += (predicted == labels).sum().item()

        log('Accuracy of the model on the test images: {} %'.format(100 * correct / total))

    # Save the model checkpoint
    torch.save(model.state_dict(), os.path.join(tmpdir, 'resnet.ckpt'))
    return {"initial_state": initial_state, "step_losses": step_losses, "lrs": lrs, "correct": correct,
            "running_var": model.bn.running_var.clone()}


# ---------------------------------------------------------------- generative_adversarial_network/main.py
def run_gan(args, log, tmpdir):
    device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')

    # Hyper-parameters
    latent_size = args.latent_size
    hidden_size = args.hidden_size
    image_size = args.image_side ** 2
    num_epochs = args.num_epochs
    batch_size = args.batch_size

    # Image processing: Normalize(mean=[0.5], std=[0.5]) after ToTensor
    transform = lambda img: (img - 0.5) / 0.5

    # MNIST dataset
    mnist = SyntheticImages(args.n_train, 1, args.image_side, 0, transform=transform)

    # Data loader
    data_loader = torch.utils.data.DataLoader(dataset=mnist, batch_size=batch_size, shuffle=True)

    # Discriminator
    D = nn.Sequential(
        nn.Linear(image_size, hidden_size),
        nn.LeakyReLU(0.2),
        nn.Linear(hidden_size, hidden_size),
        nn.LeakyReLU(0.2),
        nn.Linear(hidden_size, 1),
        nn.Sigmoid())

    # Generator
    G = nn.Sequential(
        nn.Linear(latent_size, hidden_size),
        nn.ReLU(),
        nn.Linear(hidden_size, hidden_size),
        nn.ReLU(),
        nn.Linear(hidden_size, image_size),
        nn.Tanh())

    # Device setting
    D = D.to(device)
    G = G.to(device)
    initial_state = {"D." + k: v.clone() for k, v in D.state_dict().items()}
    initial_state.update({"G." + k: v.clone() for k, v in G.state_dict().items()})

    # Binary cross entropy loss and optimizer
    criterion = nn.BCELoss()
    d_optimizer = torch.optim.Adam(D.parameters(), lr=0.0002)
    g_optimizer = torch.optim.Adam(G.parameters(), lr=0.0002)

    def denorm(x):
        out = (x + 1) / 2
        return out.clamp(0, 1)

    def reset_grad():
        d_optimizer.zero_grad()
        g_optimizer.zero_grad()

    # Start training
    step_losses, scores, samples = [], [], []
    total_step = len(data_loader)
    for epoch in range(num_epochs):
        for i, (images, _) in enumerate(data_loader):
            images = images.reshape(batch_size, -1).to(device)

            # Create the labels which are later used as input for the BCE loss
            real_labels = torch.ones(batch_size, 1).to(device)
            fake_labels = torch.zeros(batch_size, 1).to(device)

            # Train the discriminator
            outputs = D(images)
            d_loss_real = criterion(outputs, real_labels)
            real_score = outputs

            # Compute BCELoss using fake images
            z = torch.randn(batch_size, latent_size).to(device)
            fake_images = G(z)
            outputs = D(fake_images)
            d_loss_fake = criterion(outputs, fake_labels)
            fake_score = outputs

            # Backprop and optimize
            d_loss = d_loss_real + d_loss_fake
            reset_grad()
            d_loss.backward()
            d_optimizer.step()

            # Train the generator
            z = torch.randn(batch_size, latent_size).to(device)
            fake_images = G(z)
            outputs = D(fake_images)

            # We train G to maximize log(D(G(z)) instead of minimizing log(1-D(G(z)))
            g_loss = criterion(outputs, real_labels)

            # Backprop and optimize
            reset_grad()
            g_loss.backward()
            g_optimizer.step()
            step_losses += [d_loss.item(), g_loss.item()]
            scores.append((real_score.mean().item(), fake_score.mean().item()))

            if (i+1) % 200 == 0:
                log('Epoch [{}/{}], Step [{}/{}], d_loss: {:.4f}, g_loss: {:.4f}, D(x): {:.2f}, D(G(z)): {:.2f}'
                    .format(epoch, num_epochs, i+1, total_step, d_loss.item(), g_loss.item(),
                            real_score.mean().item(), fake_score.mean().item()))

        # Save sampled images (torchvision's save_image: the denormalised batch is what it would write)
        fake_images = fake_images.reshape(fake_images.size(0), 1, args.image_side, args.image_side)
        samples.append(denorm(fake_images).detach())

    # Save the model checkpoints
    torch.save(G.state_dict(), os.path.join(tmpdir, 'G.ckpt'))
    torch.save(D.state_dict(), os.path.join(tmpdir, 'D.ckpt'))
    return {"initial_state": initial_state, "step_losses": step_losses, "scores": scores, "samples": samples}


def main(argv=None):
    parser = argparse.ArgumentParser()
    parser.add_argument('--program', choices=['resnet', 'gan'], default='resnet')
    parser.add_argument('--num-epochs', type=int, default=80)
    parser.add_argument('--batch-size', type=int, default=100)
    parser.add_argument('--learning-rate', type=float, default=0.001)
    parser.add_argument('--decay-every', type=int, default=20)
    parser.add_argument('--n-train', type=int, default=50000)
    parser.add_argument('--n-test', type=int, default=10000)
    parser.add_argument('--latent-size', type=int, default=64)
    parser.add_argument('--hidden-size', type=int, default=256)
    parser.add_argument('--image-side', type=int, default=28)
    parser.add_argument('--quiet', action='store_true')
    args = parser.parse_args(argv)
    log = (lambda *a: None) if args.quiet else print
    torch.manual_seed(0)  # (harness) the tutorials do not seed
    tmp = tempfile.TemporaryDirectory()
    result = (run_resnet if args.program == 'resnet' else run_gan)(args, log, tmp.name)
    tmp.cleanup()
    return result


if __name__ == '__main__':
    main()
