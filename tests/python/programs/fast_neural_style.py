"""pytorch/examples fast_neural_style (neural_style/neural_style.py train() and stylize(),
transformer_net.py, vgg.py, utils.py): the TransformerNet (ConvLayer = ReflectionPad2d + Conv2d,
InstanceNorm2d(affine=True), five ResidualBlocks, UpsampleConvLayer with nn.Upsample(mode='nearest',
scale_factor=2)), a Vgg16 cut into four nn.Sequential slices with add_module(str(x), features[x]) and
its parameters frozen (requires_grad = False), a namedtuple of the relu outputs, utils.gram_matrix
(features.bmm(features.transpose(1, 2)) / (ch * h * w)), utils.normalize_batch (batch.new_tensor(...)
.view(-1, 1, 1) and an in-place batch.div_(255.0) on the network's output), style.repeat(batch, 1, 1,
1), MSELoss content and style terms with gm_s[:n_batch, :, :], Adam, a checkpoint saved after
transformer.eval().cpu() and training resumed with .to(device).train(), and stylize()'s torch.load +
the re.search filter on running_* keys + load_state_dict under torch.no_grad(), then save_image's
clamp(0, 255).numpy() as uint8.

What is changed: torchvision's pretrained VGG-16 becomes its make_layers on configuration 'D' with
random weights (kaiming_normal_(fan_out) and zero biases, as VGG._initialize_weights) and the channel
widths divided by --vgg-width-div; the ImageFolder dataset and the style/content photos become
synthetic 0-255 images (transforms' Resize/CenterCrop/ToTensor/mul(255) become a float tensor of that
size); sizes and epochs are small."""
import argparse
import os
import re
import tempfile
from collections import namedtuple

import numpy as np
import torch
from torch.optim import Adam
from torch.utils.data import DataLoader


# ---------------------------------------------------------------- transformer_net.py
class TransformerNet(torch.nn.Module):
    def __init__(self):
        super(TransformerNet, self).__init__()
        # Initial convolution layers
        self.conv1 = ConvLayer(3, 32, kernel_size=9, stride=1)
        self.in1 = torch.nn.InstanceNorm2d(32, affine=True)
        self.conv2 = ConvLayer(32, 64, kernel_size=3, stride=2)
        self.in2 = torch.nn.InstanceNorm2d(64, affine=True)
        self.conv3 = ConvLayer(64, 128, kernel_size=3, stride=2)
        self.in3 = torch.nn.InstanceNorm2d(128, affine=True)
        # Residual layers
        self.res1 = ResidualBlock(128)
        self.res2 = ResidualBlock(128)
        self.res3 = ResidualBlock(128)
        self.res4 = ResidualBlock(128)
        self.res5 = ResidualBlock(128)
        # Upsampling Layers
        self.deconv1 = UpsampleConvLayer(128, 64, kernel_size=3, stride=1, upsample=2)
        self.in4 = torch.nn.InstanceNorm2d(64, affine=True)
        self.deconv2 = UpsampleConvLayer(64, 32, kernel_size=3, stride=1, upsample=2)
        self.in5 = torch.nn.InstanceNorm2d(32, affine=True)
        self.deconv3 = ConvLayer(32, 3, kernel_size=9, stride=1)
        # Non-linearities
        self.relu = torch.nn.ReLU()

    def forward(self, X):
        y = self.relu(self.in1(self.conv1(X)))
        y = self.relu(self.in2(self.conv2(y)))
        y = self.relu(self.in3(self.conv3(y)))
        y = self.res1(y)
        y = self.res2(y)
        y = self.res3(y)
        y = self.res4(y)
        y = self.res5(y)
        y = self.relu(self.in4(self.deconv1(y)))
        y = self.relu(self.in5(self.deconv2(y)))
        y = self.deconv3(y)
        return y


class ConvLayer(torch.nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride):
        super(ConvLayer, self).__init__()
        reflection_padding = kernel_size // 2
        self.reflection_pad = torch.nn.ReflectionPad2d(reflection_padding)
        self.conv2d = torch.nn.Conv2d(in_channels, out_channels, kernel_size, stride)

    def forward(self, x):
        out = self.reflection_pad(x)
        out = self.conv2d(out)
        return out


class ResidualBlock(torch.nn.Module):
    """ResidualBlock
    introduced in: https://arxiv.org/abs/1512.03385
    recommended architecture: http://torch.ch/blog/2016/02/04/resnets.html
    """

    def __init__(self, channels):
        super(ResidualBlock, self).__init__()
        self.conv1 = ConvLayer(channels, channels, kernel_size=3, stride=1)
        self.in1 = torch.nn.InstanceNorm2d(channels, affine=True)
        self.conv2 = ConvLayer(channels, channels, kernel_size=3, stride=1)
        self.in2 = torch.nn.InstanceNorm2d(channels, affine=True)
        self.relu = torch.nn.ReLU()

    def forward(self, x):
        residual = x
        out = self.relu(self.in1(self.conv1(x)))
        out = self.in2(self.conv2(out))
        out = out + residual
        return out


class UpsampleConvLayer(torch.nn.Module):
    """UpsampleConvLayer
    Upsamples the input and then does a convolution. This method gives better results
    compared to ConvTranspose2d.
    ref: http://distill.pub/2016/deconv-checkerboard/
    """

    def __init__(self, in_channels, out_channels, kernel_size, stride, upsample=None):
        super(UpsampleConvLayer, self).__init__()
        self.upsample = upsample
        if upsample:
            self.upsample_layer = torch.nn.Upsample(mode='nearest', scale_factor=upsample)
        reflection_padding = kernel_size // 2
        self.reflection_pad = torch.nn.ReflectionPad2d(reflection_padding)
        self.conv2d = torch.nn.Conv2d(in_channels, out_channels, kernel_size, stride)

    def forward(self, x):
        x_in = x
        if self.upsample:
            x_in = self.upsample_layer(x_in)
        out = self.reflection_pad(x_in)
        out = self.conv2d(out)
        return out


# ---------------------------------------------------------------- vgg.py (torchvision's vgg16 features inline)
cfg_D = [64, 64, 'M', 128, 128, 'M', 256, 256, 256, 'M', 512, 512, 512, 'M', 512, 512, 512, 'M']


def vgg16_features(width_div):
    """(harness) models.vgg16(pretrained=True).features: torchvision's make_layers and initialisation."""
    layers = []
    in_channels = 3
    for v in cfg_D:
        if v == 'M':
            layers += [torch.nn.MaxPool2d(kernel_size=2, stride=2)]
        else:
            v = v // width_div
            layers += [torch.nn.Conv2d(in_channels, v, kernel_size=3, padding=1), torch.nn.ReLU(inplace=True)]
            in_channels = v
    features = torch.nn.Sequential(*layers)
    for m in features.modules():
        if isinstance(m, torch.nn.Conv2d):
            torch.nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")
            torch.nn.init.constant_(m.bias, 0)
    return features


class Vgg16(torch.nn.Module):
    def __init__(self, requires_grad=False, width_div=1):
        super(Vgg16, self).__init__()
        vgg_pretrained_features = vgg16_features(width_div)
        self.slice1 = torch.nn.Sequential()
        self.slice2 = torch.nn.Sequential()
        self.slice3 = torch.nn.Sequential()
        self.slice4 = torch.nn.Sequential()
        for x in range(4):
            self.slice1.add_module(str(x), vgg_pretrained_features[x])
        for x in range(4, 9):
            self.slice2.add_module(str(x), vgg_pretrained_features[x])
        for x in range(9, 16):
            self.slice3.add_module(str(x), vgg_pretrained_features[x])
        for x in range(16, 23):
            self.slice4.add_module(str(x), vgg_pretrained_features[x])
        if not requires_grad:
            for param in self.parameters():
                param.requires_grad = False

    def forward(self, X):
        h = self.slice1(X)
        h_relu1_2 = h
        h = self.slice2(h)
        h_relu2_2 = h
        h = self.slice3(h)
        h_relu3_3 = h
        h = self.slice4(h)
        h_relu4_3 = h
        vgg_outputs = namedtuple("VggOutputs", ['relu1_2', 'relu2_2', 'relu3_3', 'relu4_3'])
        out = vgg_outputs(h_relu1_2, h_relu2_2, h_relu3_3, h_relu4_3)
        return out


# ---------------------------------------------------------------- utils.py
def save_image(filename, data):
    img = data.clone().clamp(0, 255).numpy()
    img = img.transpose(1, 2, 0).astype("uint8")
    np.save(filename, img)  # (harness) PIL's Image.fromarray(img).save(filename)
    return img


def gram_matrix(y):
    (b, ch, h, w) = y.size()
    features = y.view(b, ch, w * h)
    features_t = features.transpose(1, 2)
    gram = features.bmm(features_t) / (ch * h * w)
    return gram


def normalize_batch(batch):
    # normalize using imagenet mean and std
    mean = batch.new_tensor([0.485, 0.456, 0.406]).view(-1, 1, 1)
    std = batch.new_tensor([0.229, 0.224, 0.225]).view(-1, 1, 1)
    batch = batch.div_(255.0)
    return (batch - mean) / std


# ---------------------------------------------------------------- synthetic images (harness)
def synthetic_image(size, seed):
    """A 3 x size x size float image with values in [0, 255] (ToTensor then mul(255))."""
    g = np.random.default_rng(seed)
    ys, xs = np.meshgrid(np.linspace(0, 1, size), np.linspace(0, 1, size), indexing="ij")
    f = g.uniform(2, 9, size=3)
    img = np.stack([np.sin(f[0] * xs + f[1] * ys), np.cos(f[1] * xs * ys * 3), np.sin(f[2] * (xs - ys))])
    img = (img + 1) / 2 * 0.8 + g.random((3, size, size)) * 0.2
    return torch.from_numpy((img * 255).astype(np.uint8).astype(np.float32))


class SyntheticImageFolder(torch.utils.data.Dataset):
    def __init__(self, n, size):
        self.images = [synthetic_image(size, 100 + i) for i in range(n)]

    def __len__(self):
        return len(self.images)

    def __getitem__(self, i):
        return self.images[i], 0


# ---------------------------------------------------------------- neural_style.py
def train(args, log, tmpdir):
    device = torch.device("cuda" if args.cuda else "cpu")

    np.random.seed(args.seed)
    torch.manual_seed(args.seed)

    train_dataset = SyntheticImageFolder(args.n_images, args.image_size)
    train_loader = DataLoader(train_dataset, batch_size=args.batch_size)

    transformer = TransformerNet().to(device)
    optimizer = Adam(transformer.parameters(), args.lr)
    mse_loss = torch.nn.MSELoss()

    vgg = Vgg16(requires_grad=False, width_div=args.vgg_width_div).to(device)
    initial_state = {"transformer." + k: v.clone() for k, v in transformer.state_dict().items()}
    initial_state.update({"vgg." + k: v.clone() for k, v in vgg.state_dict().items()})
    style = synthetic_image(args.image_size if args.style_size is None else args.style_size, 7)
    style = style.repeat(args.batch_size, 1, 1, 1).to(device)

    features_style = vgg(normalize_batch(style))
    gram_style = [gram_matrix(y) for y in features_style]

    step_losses, aggregates = [], []
    for e in range(args.epochs):
        transformer.train()
        agg_content_loss = 0.
        agg_style_loss = 0.
        count = 0
        for batch_id, (x, _) in enumerate(train_loader):
            n_batch = len(x)
            count += n_batch
            optimizer.zero_grad()

            x = x.to(device)
            y = transformer(x.to(device))

            y = normalize_batch(y)
            x = normalize_batch(x)

            features_y = vgg(y)
            features_x = vgg(x)

            content_loss = args.content_weight * mse_loss(features_y.relu2_2, features_x.relu2_2)

            style_loss = 0.
            for ft_y, gm_s in zip(features_y, gram_style):
                gm_y = gram_matrix(ft_y)
                style_loss += mse_loss(gm_y, gm_s[:n_batch, :, :])
            style_loss *= args.style_weight

            total_loss = content_loss + style_loss
            total_loss.backward()
            optimizer.step()

            agg_content_loss += content_loss.item()
            agg_style_loss += style_loss.item()
            step_losses.append(total_loss.item())

            if (batch_id + 1) % args.log_interval == 0:
                mesg = "Epoch {}:\t[{}/{}]\tcontent: {:.6f}\tstyle: {:.6f}\ttotal: {:.6f}".format(
                    e + 1, count, len(train_dataset),
                    agg_content_loss / (batch_id + 1),
                    agg_style_loss / (batch_id + 1),
                    (agg_content_loss + agg_style_loss) / (batch_id + 1)
                )
                log(mesg)
                aggregates.append((agg_content_loss / (batch_id + 1), agg_style_loss / (batch_id + 1)))

            if args.checkpoint_model_dir is not None and (batch_id + 1) % args.checkpoint_interval == 0:
                transformer.eval().cpu()
                ckpt_model_filename = "ckpt_epoch_" + str(e) + "_batch_id_" + str(batch_id + 1) + ".pth"
                ckpt_model_path = os.path.join(args.checkpoint_model_dir, ckpt_model_filename)
                torch.save(transformer.state_dict(), ckpt_model_path)
                transformer.to(device).train()

    # save model
    transformer.eval().cpu()
    save_model_filename = "epoch_" + str(args.epochs) + "_" + str(
        args.content_weight) + "_" + str(args.style_weight) + ".model"
    save_model_path = os.path.join(tmpdir, save_model_filename)
    torch.save(transformer.state_dict(), save_model_path)

    log("\nDone, trained model saved at", save_model_path)
    return initial_state, step_losses, aggregates, save_model_path


def stylize(args, model_path, tmpdir):
    device = torch.device("cuda" if args.cuda else "cpu")

    content_image = synthetic_image(args.image_size, 11)
    content_image = content_image.unsqueeze(0).to(device)

    with torch.no_grad():
        style_model = TransformerNet()
        state_dict = torch.load(model_path)
        # remove saved deprecated running_* keys in InstanceNorm from the checkpoint
        for k in list(state_dict.keys()):
            if re.search(r'in\d+\.running_(mean|var)$', k):
                del state_dict[k]
        style_model.load_state_dict(state_dict)
        style_model.to(device)
        output = style_model(content_image).cpu()
    return save_image(os.path.join(tmpdir, "output.npy"), output[0]), output


def main(argv=None):
    parser = argparse.ArgumentParser(description="parser for fast-neural-style")
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--batch-size", type=int, default=4)
    parser.add_argument("--n-images", type=int, default=16)
    parser.add_argument("--image-size", type=int, default=256)
    parser.add_argument("--style-size", type=int, default=None)
    parser.add_argument("--vgg-width-div", type=int, default=1)
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--content-weight", type=float, default=1e5)
    parser.add_argument("--style-weight", type=float, default=1e10)
    parser.add_argument("--lr", type=float, default=1e-3)
    parser.add_argument("--log-interval", type=int, default=500)
    parser.add_argument("--checkpoint-interval", type=int, default=2000)
    parser.add_argument("--quiet", action="store_true")
    args = parser.parse_args(argv)
    args.cuda = 0
    log = (lambda *a: None) if args.quiet else print
    tmp = tempfile.TemporaryDirectory()
    args.checkpoint_model_dir = tmp.name
    initial_state, step_losses, aggregates, model_path = train(args, log, tmp.name)
    checkpoints = sorted(f for f in os.listdir(tmp.name) if f.startswith("ckpt_"))
    image, output = stylize(args, model_path, tmp.name)
    tmp.cleanup()
    return {"initial_state": initial_state, "step_losses": step_losses, "aggregates": aggregates,
            "checkpoints": checkpoints, "image": image, "output": output}


if __name__ == "__main__":
    main()
