"""PyTorch tutorial "Neural Transfer Using PyTorch" (advanced_source/neural_style_tutorial.py):
ContentLoss/StyleLoss modules that keep a detached target and store self.loss in forward, the gram
matrix (input.view(a * b, c * d), torch.mm(features, features.t()), G.div), a Normalization module
built with torch.tensor(tensor).view(-1, 1, 1), copy.deepcopy of the CNN, a new nn.Sequential grown
with add_module while iterating cnn.children() (isinstance checks, in-place ReLUs replaced), running
the partial model to make the targets, trimming it with model[:(i + 1)], and optim.LBFGS on the input
image ([input_img.requires_grad_()]) stepped with a closure that clamps input_img.data in place.

What is changed: the pretrained VGG-19 becomes torchvision's vgg19().features copied in (make_layers
on the 'E' configuration, its _initialize_weights: kaiming_normal_(fan_out, relu) and zero biases)
with the channel widths divided by --width-div, and the picasso/dancing photos become two synthetic
images of --imsize pixels (stripes and a smooth gradient)."""
import argparse
import copy

import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")

# torchvision.models.vgg: make_layers and configuration 'E' (vgg19)
cfg_E = [64, 64, "M", 128, 128, "M", 256, 256, 256, 256, "M", 512, 512, 512, 512, "M",
         512, 512, 512, 512, "M"]


def make_layers(cfg, batch_norm=False):
    layers = []
    in_channels = 3
    for v in cfg:
        if v == "M":
            layers += [nn.MaxPool2d(kernel_size=2, stride=2)]
        else:
            conv2d = nn.Conv2d(in_channels, v, kernel_size=3, padding=1)
            if batch_norm:
                layers += [conv2d, nn.BatchNorm2d(v), nn.ReLU(inplace=True)]
            else:
                layers += [conv2d, nn.ReLU(inplace=True)]
            in_channels = v
    return nn.Sequential(*layers)


def vgg19_features(width_div):
    features = make_layers([v if v == "M" else v // width_div for v in cfg_E])
    for m in features.modules():  # VGG._initialize_weights
        if isinstance(m, nn.Conv2d):
            nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")
            if m.bias is not None:
                nn.init.constant_(m.bias, 0)
    return features


class ContentLoss(nn.Module):

    def __init__(self, target,):
        super(ContentLoss, self).__init__()
        # we 'detach' the target content from the tree used
        # to dynamically compute the gradient: this is a stated value,
        # not a variable. Otherwise the forward method of the criterion
        # will throw an error.
        self.target = target.detach()

    def forward(self, input):
        self.loss = F.mse_loss(input, self.target)
        return input


def gram_matrix(input):
    a, b, c, d = input.size()  # a=batch size(=1)
    # b=number of feature maps
    # (c,d)=dimensions of a f. map (N=c*d)

    features = input.view(a * b, c * d)  # resize F_XL into \hat F_XL

    G = torch.mm(features, features.t())  # compute the gram product

    # we 'normalize' the values of the gram matrix
    # by dividing by the number of element in each feature maps.
    return G.div(a * b * c * d)


class StyleLoss(nn.Module):

    def __init__(self, target_feature):
        super(StyleLoss, self).__init__()
        self.target = gram_matrix(target_feature).detach()

    def forward(self, input):
        G = gram_matrix(input)
        self.loss = F.mse_loss(G, self.target)
        return input


cnn_normalization_mean = torch.tensor([0.485, 0.456, 0.406]).to(device)
cnn_normalization_std = torch.tensor([0.229, 0.224, 0.225]).to(device)


# create a module to normalize input image so we can easily put it in a
# nn.Sequential
class Normalization(nn.Module):
    def __init__(self, mean, std):
        super(Normalization, self).__init__()
        # .view the mean and std to make them [C x 1 x 1] so that they can
        # directly work with image Tensor of shape [B x C x H x W].
        # B is batch size. C is number of channels. H is height and W is width.
        self.mean = torch.tensor(mean).view(-1, 1, 1)
        self.std = torch.tensor(std).view(-1, 1, 1)

    def forward(self, img):
        # normalize img
        return (img - self.mean) / self.std


# desired depth layers to compute style/content losses :
content_layers_default = ['conv_4']
style_layers_default = ['conv_1', 'conv_2', 'conv_3', 'conv_4', 'conv_5']


def get_style_model_and_losses(cnn, normalization_mean, normalization_std,
                               style_img, content_img,
                               content_layers=content_layers_default,
                               style_layers=style_layers_default):
    cnn = copy.deepcopy(cnn)

    # normalization module
    normalization = Normalization(normalization_mean, normalization_std).to(device)

    # just in order to have an iterable access to or list of content/syle
    # losses
    content_losses = []
    style_losses = []

    # assuming that cnn is a nn.Sequential, so we make a new nn.Sequential
    # to put in modules that are supposed to be activated sequentially
    model = nn.Sequential(normalization)

    i = 0  # increment every time we see a conv
    for layer in cnn.children():
        if isinstance(layer, nn.Conv2d):
            i += 1
            name = 'conv_{}'.format(i)
        elif isinstance(layer, nn.ReLU):
            name = 'relu_{}'.format(i)
            # The in-place version doesn't play very nicely with the ContentLoss
            # and StyleLoss we insert below. So we replace with out-of-place
            # ones here.
            layer = nn.ReLU(inplace=False)
        elif isinstance(layer, nn.MaxPool2d):
            name = 'pool_{}'.format(i)
        elif isinstance(layer, nn.BatchNorm2d):
            name = 'bn_{}'.format(i)
        else:
            raise RuntimeError('Unrecognized layer: {}'.format(layer.__class__.__name__))

        model.add_module(name, layer)

        if name in content_layers:
            # add content loss:
            target = model(content_img).detach()
            content_loss = ContentLoss(target)
            model.add_module("content_loss_{}".format(i), content_loss)
            content_losses.append(content_loss)

        if name in style_layers:
            # add style loss:
            target_feature = model(style_img).detach()
            style_loss = StyleLoss(target_feature)
            model.add_module("style_loss_{}".format(i), style_loss)
            style_losses.append(style_loss)

    # now we trim off the layers after the last content and style losses
    for i in range(len(model) - 1, -1, -1):
        if isinstance(model[i], ContentLoss) or isinstance(model[i], StyleLoss):
            break

    model = model[:(i + 1)]

    return model, style_losses, content_losses


def get_input_optimizer(input_img):
    # this line to show that input is a parameter that requires a gradient
    optimizer = optim.LBFGS([input_img.requires_grad_()])
    return optimizer


def run_style_transfer(cnn, normalization_mean, normalization_std,
                       content_img, style_img, input_img, num_steps=300,
                       style_weight=1000000, content_weight=1, log=print, step_losses=None):
    """Run the style transfer."""
    log('Building the style transfer model..')
    model, style_losses, content_losses = get_style_model_and_losses(cnn,
        normalization_mean, normalization_std, style_img, content_img)
    optimizer = get_input_optimizer(input_img)

    log('Optimizing..')
    run = [0]
    while run[0] <= num_steps:

        def closure():
            # correct the values of updated input image
            input_img.data.clamp_(0, 1)

            optimizer.zero_grad()
            model(input_img)
            style_score = 0
            content_score = 0

            for sl in style_losses:
                style_score += sl.loss
            for cl in content_losses:
                content_score += cl.loss

            style_score *= style_weight
            content_score *= content_weight

            loss = style_score + content_score
            loss.backward()

            run[0] += 1
            if step_losses is not None:  # (harness)
                step_losses.append(loss.item())
            if run[0] % 50 == 0:
                log("run {}:".format(run))
                log('Style Loss : {:4f} Content Loss: {:4f}'.format(
                    style_score.item(), content_score.item()))
                log()

            return style_score + content_score

        optimizer.step(closure)

    # a last correction...
    input_img.data.clamp_(0, 1)

    return input_img, model


def synthetic_images(imsize):
    """(harness) the style image: diagonal colour stripes; the content image: a smooth blob."""
    ys, xs = torch.meshgrid(torch.linspace(0, 1, imsize), torch.linspace(0, 1, imsize), indexing="ij")
    style = torch.stack([(torch.sin(20 * (xs + ys)) + 1) / 2, (torch.cos(13 * xs) + 1) / 2,
                         (torch.sin(17 * ys) + 1) / 2]).unsqueeze(0)
    blob = torch.exp(-((xs - 0.5) ** 2 + (ys - 0.4) ** 2) * 8)
    content = torch.stack([blob, 1 - blob, xs * blob]).unsqueeze(0)
    return style.to(device, torch.float), content.to(device, torch.float)


def main(argv=None):
    parser = argparse.ArgumentParser()
    parser.add_argument("--imsize", type=int, default=128)
    parser.add_argument("--width-div", type=int, default=1)
    parser.add_argument("--num-steps", type=int, default=300)
    parser.add_argument("--quiet", action="store_true")
    args = parser.parse_args(argv)
    log = (lambda *a: None) if args.quiet else print
    torch.manual_seed(0)

    style_img, content_img = synthetic_images(args.imsize)
    assert style_img.size() == content_img.size(), \
        "we need to import style and content images of the same size"

    cnn = vgg19_features(args.width_div).to(device).eval()
    initial_state = {k: v.clone() for k, v in cnn.state_dict().items()}

    input_img = content_img.clone()
    step_losses = []
    output, model = run_style_transfer(cnn, cnn_normalization_mean, cnn_normalization_std,
                                       content_img, style_img, input_img, num_steps=args.num_steps,
                                       log=log, step_losses=step_losses)
    return {"initial_state": initial_state, "step_losses": step_losses, "output": output.detach(),
            "model_names": [name for name, _ in model.named_children()]}


if __name__ == "__main__":
    main()
