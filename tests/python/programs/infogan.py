"""eriklindernoren/PyTorch-GAN's implementations/infogan/infogan.py (and acgan.py's auxiliary classifier, --model
acgan) written for torch 0.4: `cuda = True if torch.cuda.is_available() else False`, FloatTensor / LongTensor
picked as torch.cuda.FloatTensor if cuda else torch.FloatTensor, weights_init_normal by classname.find("Conv") /
("BatchNorm") with torch.nn.init.normal_(m.weight.data, 1.0, 0.02) / constant_(m.bias.data, 0.0), to_categorical
via np.zeros and y[range(y.shape[0]), y] = 1 wrapped in Variable(FloatTensor(y_cat)), the Generator (nn.Upsample
(scale_factor=2), nn.BatchNorm2d(128, 0.8) - eps 0.8 as written -, LeakyReLU(0.2, inplace=True), Tanh), the
Discriminator's discriminator_block (Conv2d(in, out, 3, 2, 1), LeakyReLU, Dropout2d(0.25), optional
BatchNorm2d(out, 0.8)) with adv / aux (Softmax) / latent heads, Variable(FloatTensor(batch_size, 1).fill_(1.0),
requires_grad=False) targets, Variable(FloatTensor(np.random.normal(0, 1, (batch_size, opt.latent_dim)))) noise,
Variable(LongTensor(np.random.randint(0, n_classes, batch_size))) labels, MSELoss adversarial loss, categorical
CrossEntropyLoss and continuous MSELoss info losses, an optimizer_info over itertools.chain(generator.parameters(),
discriminator.parameters()), and the acgan's accuracy by np.concatenate([real_aux.data.cpu().numpy(), ...]).
MNIST is synthetic 16x16 digits-like blobs."""
import argparse
import itertools

import numpy as np
import torch
import torch.nn as nn
from torch.autograd import Variable

cuda = True if torch.cuda.is_available() else False


def weights_init_normal(m):
    classname = m.__class__.__name__
    if classname.find("Conv") != -1:
        torch.nn.init.normal_(m.weight.data, 0.0, 0.02)
    elif classname.find("BatchNorm") != -1:
        torch.nn.init.normal_(m.weight.data, 1.0, 0.02)
        torch.nn.init.constant_(m.bias.data, 0.0)


def to_categorical(y, num_columns):
    """Returns one-hot encoded Variable"""
    y_cat = np.zeros((y.shape[0], num_columns))
    y_cat[range(y.shape[0]), y] = 1.0

    return Variable(FloatTensor(y_cat))


class Generator(nn.Module):
    def __init__(self, opt, input_dim):
        super(Generator, self).__init__()

        self.init_size = opt.img_size // 4  # Initial size before upsampling
        self.l1 = nn.Sequential(nn.Linear(input_dim, 32 * self.init_size ** 2))

        self.conv_blocks = nn.Sequential(
            nn.BatchNorm2d(32),
            nn.Upsample(scale_factor=2),
            nn.Conv2d(32, 32, 3, stride=1, padding=1),
            nn.BatchNorm2d(32, 0.8),
            nn.LeakyReLU(0.2, inplace=True),
            nn.Upsample(scale_factor=2),
            nn.Conv2d(32, 16, 3, stride=1, padding=1),
            nn.BatchNorm2d(16, 0.8),
            nn.LeakyReLU(0.2, inplace=True),
            nn.Conv2d(16, opt.channels, 3, stride=1, padding=1),
            nn.Tanh(),
        )

    def forward(self, noise, labels, code=None):
        gen_input = torch.cat((noise, labels) if code is None else (noise, labels, code), -1)
        out = self.l1(gen_input)
        out = out.view(out.shape[0], 32, self.init_size, self.init_size)
        img = self.conv_blocks(out)
        return img


class Discriminator(nn.Module):
    def __init__(self, opt):
        super(Discriminator, self).__init__()

        def discriminator_block(in_filters, out_filters, bn=True):
            """Returns layers of each discriminator block"""
            block = [nn.Conv2d(in_filters, out_filters, 3, 2, 1), nn.LeakyReLU(0.2, inplace=True), nn.Dropout2d(0.25)]
            if bn:
                block.append(nn.BatchNorm2d(out_filters, 0.8))
            return block

        self.conv_blocks = nn.Sequential(
            *discriminator_block(opt.channels, 8, bn=False),
            *discriminator_block(8, 16),
            *discriminator_block(16, 32),
        )

        # The height and width of downsampled image
        ds_size = opt.img_size // 2 ** 3

        # Output layers
        self.adv_layer = nn.Sequential(nn.Linear(32 * ds_size ** 2, 1))
        self.aux_layer = nn.Sequential(nn.Linear(32 * ds_size ** 2, opt.n_classes), nn.Softmax())
        self.latent_layer = nn.Sequential(nn.Linear(32 * ds_size ** 2, opt.code_dim))

    def forward(self, img):
        out = self.conv_blocks(img)
        out = out.view(out.shape[0], -1)
        validity = self.adv_layer(out)
        label = self.aux_layer(out)
        latent_code = self.latent_layer(out)

        return validity, label, latent_code


FloatTensor = torch.cuda.FloatTensor if cuda else torch.FloatTensor
LongTensor = torch.cuda.LongTensor if cuda else torch.LongTensor


def main(argv=None):
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", type=str, default="infogan", choices=["infogan", "acgan"])
    parser.add_argument("--n_epochs", type=int, default=2, help="number of epochs of training")
    parser.add_argument("--batch_size", type=int, default=16, help="size of the batches")
    parser.add_argument("--lr", type=float, default=0.0002, help="adam: learning rate")
    parser.add_argument("--b1", type=float, default=0.5, help="adam: decay of first order momentum of gradient")
    parser.add_argument("--b2", type=float, default=0.999, help="adam: decay of first order momentum of gradient")
    parser.add_argument("--latent_dim", type=int, default=16, help="dimensionality of the latent space")
    parser.add_argument("--code_dim", type=int, default=2, help="latent code")
    parser.add_argument("--n_classes", type=int, default=4, help="number of classes for dataset")
    parser.add_argument("--img_size", type=int, default=16, help="size of each image dimension")
    parser.add_argument("--channels", type=int, default=1, help="number of image channels")
    parser.add_argument("--quiet", action="store_true")
    opt = parser.parse_args(argv)
    log = (lambda *a: None) if opt.quiet else print

    torch.manual_seed(0)
    np.random.seed(0)

    # Loss functions
    adversarial_loss = torch.nn.MSELoss()
    categorical_loss = torch.nn.CrossEntropyLoss()
    continuous_loss = torch.nn.MSELoss()
    auxiliary_loss = torch.nn.CrossEntropyLoss()

    # Loss weights
    lambda_cat = 1
    lambda_con = 0.1

    # Initialize generator and discriminator
    input_dim = opt.latent_dim + opt.n_classes + (opt.code_dim if opt.model == "infogan" else 0)
    generator = Generator(opt, input_dim)
    discriminator = Discriminator(opt)

    # Initialize weights
    generator.apply(weights_init_normal)
    discriminator.apply(weights_init_normal)
    initial_state = {"G." + k: v.clone() for k, v in generator.state_dict().items()}
    initial_state.update({"D." + k: v.clone() for k, v in discriminator.state_dict().items()})

    rng = np.random.RandomState(1)
    labels_all = rng.randint(0, opt.n_classes, 64)
    yy, xx = np.mgrid[0:16, 0:16]
    images_all = np.stack([np.tanh(2 * np.exp(-((yy - 4 - 3 * (c % 2)) ** 2 + (xx - 4 - 3 * (c // 2)) ** 2) / 6.0)
                                   - 1 + 0.1 * rng.randn(16, 16)) for c in labels_all]).astype(np.float32)[:, None]

    # Optimizers
    optimizer_G = torch.optim.Adam(generator.parameters(), lr=opt.lr, betas=(opt.b1, opt.b2))
    optimizer_D = torch.optim.Adam(discriminator.parameters(), lr=opt.lr, betas=(opt.b1, opt.b2))
    optimizer_info = torch.optim.Adam(
        itertools.chain(generator.parameters(), discriminator.parameters()), lr=opt.lr, betas=(opt.b1, opt.b2)
    )

    step_losses, g_losses, info_losses, d_accs = [], [], [], []
    for epoch in range(opt.n_epochs):
        for i in range(len(images_all) // opt.batch_size):
            imgs = torch.from_numpy(images_all[i * opt.batch_size:(i + 1) * opt.batch_size])
            labels = torch.from_numpy(labels_all[i * opt.batch_size:(i + 1) * opt.batch_size])
            batch_size = imgs.shape[0]

            # Adversarial ground truths
            valid = Variable(FloatTensor(batch_size, 1).fill_(1.0), requires_grad=False)
            fake = Variable(FloatTensor(batch_size, 1).fill_(0.0), requires_grad=False)

            # Configure input
            real_imgs = Variable(imgs.type(FloatTensor))
            labels = to_categorical(labels.numpy(), num_columns=opt.n_classes) if opt.model == "infogan" \
                else Variable(labels.type(LongTensor))

            # -----------------
            #  Train Generator
            # -----------------
            optimizer_G.zero_grad()

            # Sample noise and labels as generator input
            z = Variable(FloatTensor(np.random.normal(0, 1, (batch_size, opt.latent_dim))))
            if opt.model == "infogan":
                label_input = to_categorical(np.random.randint(0, opt.n_classes, batch_size), num_columns=opt.n_classes)
                code_input = Variable(FloatTensor(np.random.uniform(-1, 1, (batch_size, opt.code_dim))))
                gen_imgs = generator(z, label_input, code_input)
                validity, _, _ = discriminator(gen_imgs)
                g_loss = adversarial_loss(validity, valid)
            else:
                gen_labels = Variable(LongTensor(np.random.randint(0, opt.n_classes, batch_size)))
                gen_imgs = generator(z, to_categorical(gen_labels.numpy(), opt.n_classes))
                validity, pred_label, _ = discriminator(gen_imgs)
                g_loss = 0.5 * (adversarial_loss(validity, valid) + auxiliary_loss(pred_label, gen_labels))

            g_loss.backward()
            optimizer_G.step()

            # ---------------------
            #  Train Discriminator
            # ---------------------
            optimizer_D.zero_grad()

            # Loss for real images
            real_pred, real_aux, _ = discriminator(real_imgs)
            # Loss for fake images
            fake_pred, fake_aux, _ = discriminator(gen_imgs.detach())
            if opt.model == "infogan":
                d_real_loss = adversarial_loss(real_pred, valid)
                d_fake_loss = adversarial_loss(fake_pred, fake)
            else:
                d_real_loss = (adversarial_loss(real_pred, valid) + auxiliary_loss(real_aux, labels)) / 2
                d_fake_loss = (adversarial_loss(fake_pred, fake) + auxiliary_loss(fake_aux, gen_labels)) / 2

            # Total discriminator loss
            d_loss = (d_real_loss + d_fake_loss) / 2

            d_loss.backward()
            optimizer_D.step()
            step_losses.append(d_loss.item())
            g_losses.append(g_loss.item())

            if opt.model == "acgan":
                # Calculate discriminator accuracy
                pred = np.concatenate([real_aux.data.cpu().numpy(), fake_aux.data.cpu().numpy()], axis=0)
                gt = np.concatenate([labels.data.cpu().numpy(), gen_labels.data.cpu().numpy()], axis=0)
                d_acc = np.mean(np.argmax(pred, axis=1) == gt)
                d_accs.append(d_acc)
                log("[Epoch %d/%d] [Batch %d] [D loss: %f, acc: %d%%] [G loss: %f]"
                    % (epoch, opt.n_epochs, i, d_loss.item(), 100 * d_acc, g_loss.item()))
                continue

            # ------------------
            # Information Loss
            # ------------------
            optimizer_info.zero_grad()

            # Sample labels
            sampled_labels = np.random.randint(0, opt.n_classes, batch_size)

            # Ground truth labels
            gt_labels = Variable(LongTensor(sampled_labels), requires_grad=False)

            # Sample noise, labels and code as generator input
            z = Variable(FloatTensor(np.random.normal(0, 1, (batch_size, opt.latent_dim))))
            label_input = to_categorical(sampled_labels, num_columns=opt.n_classes)
            code_input = Variable(FloatTensor(np.random.uniform(-1, 1, (batch_size, opt.code_dim))))

            gen_imgs = generator(z, label_input, code_input)
            _, pred_label, pred_code = discriminator(gen_imgs)

            info_loss = lambda_cat * categorical_loss(pred_label, gt_labels) + lambda_con * continuous_loss(
                pred_code, code_input
            )

            info_loss.backward()
            optimizer_info.step()
            info_losses.append(info_loss.item())
            log("[Epoch %d/%d] [Batch %d] [D loss: %f] [G loss: %f] [info loss: %f]"
                % (epoch, opt.n_epochs, i, d_loss.item(), g_loss.item(), info_loss.item()))

    return {"initial_state": initial_state, "step_losses": step_losses, "g_losses": g_losses,
            "info_losses": info_losses, "d_accs": d_accs}


if __name__ == "__main__":
    main()
