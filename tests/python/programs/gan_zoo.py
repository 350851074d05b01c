"""eriklindernoren/PyTorch-GAN's implementations as written (cuda = True if torch.cuda.is_available() else False,
FloatTensor = torch.cuda.FloatTensor if cuda else torch.FloatTensor, Variable(Tensor(np.random.normal(0, 1,
(n, latent_dim)))), Variable(Tensor(imgs.size(0), 1).fill_(1.0), requires_grad=False), weights_init_normal by
torch.nn.init.normal_(m.weight.data, ...) / constant_): cgan (nn.Embedding label conditioning by torch.cat,
BatchNorm1d(out_feat, 0.8), LeakyReLU(0.2, inplace=True), MSE adversarial loss), acgan (torch.mul of label
embeddings and noise, Upsample(scale_factor=2) / BatchNorm2d(128, 0.8) / Dropout2d(0.25) convs, auxiliary
softmax classifier, np.argmax accuracy over concatenated predictions), lsgan, and wgan_div (the Wasserstein
divergence penalty by autograd.grad(real_validity, real_imgs, real_grad_out, create_graph=True,
retain_graph=True, only_inputs=True) and torch.pow(real_grad.view(...).pow(2).sum(1), p / 2))."""
import argparse

import numpy as np
import torch
import torch.autograd as autograd
import torch.nn as nn
from torch.autograd import Variable

cuda = True if torch.cuda.is_available() else False


def weights_init_normal(m):
    classname = m.__class__.__name__
    if classname.find("Conv") != -1:
        torch.nn.init.normal_(m.weight.data, 0.0, 0.02)
    elif classname.find("BatchNorm2d") != -1:
        torch.nn.init.normal_(m.weight.data, 1.0, 0.02)
        torch.nn.init.constant_(m.bias.data, 0.0)


class CGenerator(nn.Module):
    def __init__(self, opt, img_shape):
        super().__init__()
        self.img_shape = img_shape
        self.label_emb = nn.Embedding(opt.n_classes, opt.n_classes)

        def block(in_feat, out_feat, normalize=True):
            layers = [nn.Linear(in_feat, out_feat)]
            if normalize:
                layers.append(nn.BatchNorm1d(out_feat, 0.8))
            layers.append(nn.LeakyReLU(0.2, inplace=True))
            return layers

        self.model = nn.Sequential(
            *block(opt.latent_dim + opt.n_classes, 32, normalize=False),
            *block(32, 64),
            nn.Linear(64, int(np.prod(img_shape))),
            nn.Tanh()
        )

    def forward(self, noise, labels):
        gen_input = torch.cat((self.label_emb(labels), noise), -1)
        img = self.model(gen_input)
        img = img.view(img.size(0), *self.img_shape)
        return img


class CDiscriminator(nn.Module):
    def __init__(self, opt, img_shape):
        super().__init__()
        self.label_embedding = nn.Embedding(opt.n_classes, opt.n_classes)
        self.model = nn.Sequential(
            nn.Linear(opt.n_classes + int(np.prod(img_shape)), 64),
            nn.LeakyReLU(0.2, inplace=True),
            nn.Linear(64, 64),
            nn.Dropout(0.4),
            nn.LeakyReLU(0.2, inplace=True),
            nn.Linear(64, 1),
        )

    def forward(self, img, labels):
        d_in = torch.cat((img.view(img.size(0), -1), self.label_embedding(labels)), -1)
        validity = self.model(d_in)
        return validity


class ACGenerator(nn.Module):
    def __init__(self, opt):
        super().__init__()
        self.label_emb = nn.Embedding(opt.n_classes, opt.latent_dim)
        self.init_size = opt.img_size // 4
        self.l1 = nn.Sequential(nn.Linear(opt.latent_dim, 32 * self.init_size ** 2))
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

    def forward(self, noise, labels):
        gen_input = torch.mul(self.label_emb(labels), noise)
        out = self.l1(gen_input)
        out = out.view(out.shape[0], 32, self.init_size, self.init_size)
        img = self.conv_blocks(out)
        return img


class ACDiscriminator(nn.Module):
    def __init__(self, opt, aux=True):
        super().__init__()

        def discriminator_block(in_filters, out_filters, bn=True):
            block = [nn.Conv2d(in_filters, out_filters, 3, 2, 1), nn.LeakyReLU(0.2, inplace=True), nn.Dropout2d(0.25)]
            if bn:
                block.append(nn.BatchNorm2d(out_filters, 0.8))
            return block

        self.conv_blocks = nn.Sequential(
            *discriminator_block(opt.channels, 8, bn=False),
            *discriminator_block(8, 16),
            *discriminator_block(16, 32),
        )
        ds_size = opt.img_size // 2 ** 3
        self.adv_layer = nn.Sequential(nn.Linear(32 * ds_size ** 2, 1), nn.Sigmoid() if aux else nn.Identity())
        self.aux = aux
        if aux:
            self.aux_layer = nn.Sequential(nn.Linear(32 * ds_size ** 2, opt.n_classes), nn.Softmax())

    def forward(self, img):
        out = self.conv_blocks(img)
        out = out.view(out.shape[0], -1)
        validity = self.adv_layer(out)
        if not self.aux:
            return validity
        label = self.aux_layer(out)
        return validity, label


def main(argv=None):
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", default="cgan", choices=["cgan", "acgan", "lsgan", "wgan_div"])
    parser.add_argument("--n_batches", type=int, default=8)
    parser.add_argument("--batch_size", type=int, default=16)
    parser.add_argument("--lr", type=float, default=0.0002)
    parser.add_argument("--b1", type=float, default=0.5)
    parser.add_argument("--b2", type=float, default=0.999)
    parser.add_argument("--latent_dim", type=int, default=16)
    parser.add_argument("--n_classes", type=int, default=4)
    parser.add_argument("--img_size", type=int, default=16)
    parser.add_argument("--channels", type=int, default=1)
    parser.add_argument("--n_critic", type=int, default=2)
    parser.add_argument("--quiet", action="store_true")
    opt = parser.parse_args(argv)
    log = (lambda *a: None) if opt.quiet else print
    torch.manual_seed(0)
    np.random.seed(0)
    img_shape = (opt.channels, opt.img_size, opt.img_size)
    FloatTensor = torch.cuda.FloatTensor if cuda else torch.FloatTensor
    LongTensor = torch.cuda.LongTensor if cuda else torch.LongTensor
    Tensor = FloatTensor
    adversarial_loss = torch.nn.MSELoss() if opt.model in ("cgan", "lsgan") else torch.nn.BCELoss()
    auxiliary_loss = torch.nn.CrossEntropyLoss()
    if opt.model == "cgan":
        generator, discriminator = CGenerator(opt, img_shape), CDiscriminator(opt, img_shape)
    else:
        generator = ACGenerator(opt)
        discriminator = ACDiscriminator(opt, aux=opt.model == "acgan")
        generator.apply(weights_init_normal)
        discriminator.apply(weights_init_normal)
    initial_state = {"G." + k: v.clone() for k, v in generator.state_dict().items()}
    initial_state.update({"D." + k: v.clone() for k, v in discriminator.state_dict().items()})
    optimizer_G = torch.optim.Adam(generator.parameters(), lr=opt.lr, betas=(opt.b1, opt.b2))
    optimizer_D = torch.optim.Adam(discriminator.parameters(), lr=opt.lr, betas=(opt.b1, opt.b2))
    # the "dataset": blurred class-dependent blobs in [-1, 1]
    data = torch.rand(opt.n_batches * opt.batch_size, *img_shape) * 2 - 1
    targets = torch.randint(0, opt.n_classes, (data.size(0),))
    data = (data + targets.view(-1, 1, 1, 1).float() / opt.n_classes).clamp(-1, 1)
    step_losses, d_losses, accs = [], [], []
    k, p = 2, 6
    for i in range(opt.n_batches):
        imgs = data[i * opt.batch_size:(i + 1) * opt.batch_size]
        labels = targets[i * opt.batch_size:(i + 1) * opt.batch_size]
        batch_size = imgs.shape[0]
        valid = Variable(FloatTensor(batch_size, 1).fill_(1.0), requires_grad=False)
        fake = Variable(FloatTensor(batch_size, 1).fill_(0.0), requires_grad=False)
        real_imgs = Variable(imgs.type(FloatTensor))
        labels = Variable(labels.type(LongTensor))
        if opt.model == "wgan_div":
            real_imgs = Variable(imgs.type(Tensor), requires_grad=True)
            optimizer_D.zero_grad()
            z = Variable(Tensor(np.random.normal(0, 1, (imgs.shape[0], opt.latent_dim))))
            gen_labels = Variable(LongTensor(np.random.randint(0, opt.n_classes, batch_size)))
            fake_imgs = generator(z, gen_labels)
            real_validity = discriminator(real_imgs)
            fake_validity = discriminator(fake_imgs)
            real_grad_out = Variable(Tensor(real_imgs.size(0), 1).fill_(1.0), requires_grad=False)
            real_grad = autograd.grad(real_validity, real_imgs, real_grad_out, create_graph=True, retain_graph=True,
                                      only_inputs=True)[0]
            real_grad_norm = real_grad.view(real_grad.size(0), -1).pow(2).sum(1) ** (p / 2)
            fake_grad_out = Variable(Tensor(fake_imgs.size(0), 1).fill_(1.0), requires_grad=False)
            fake_grad = autograd.grad(fake_validity, fake_imgs, fake_grad_out, create_graph=True, retain_graph=True,
                                      only_inputs=True)[0]
            fake_grad_norm = fake_grad.view(fake_grad.size(0), -1).pow(2).sum(1) ** (p / 2)
            div_gp = torch.mean(real_grad_norm + fake_grad_norm) * k / 2
            d_loss = -torch.mean(real_validity) + torch.mean(fake_validity) + div_gp
            d_loss.backward()
            optimizer_D.step()
            d_losses.append(d_loss.item())
            optimizer_G.zero_grad()
            if i % opt.n_critic == 0:
                fake_imgs = generator(z, gen_labels)
                fake_validity = discriminator(fake_imgs)
                g_loss = -torch.mean(fake_validity)
                g_loss.backward()
                optimizer_G.step()
                step_losses.append(g_loss.item())
            continue
        optimizer_G.zero_grad()
        z = Variable(FloatTensor(np.random.normal(0, 1, (batch_size, opt.latent_dim))))
        gen_labels = Variable(LongTensor(np.random.randint(0, opt.n_classes, batch_size)))
        gen_imgs = generator(z, gen_labels)
        if opt.model == "cgan":
            validity = discriminator(gen_imgs, gen_labels)
            g_loss = adversarial_loss(validity, valid)
        elif opt.model == "acgan":
            validity, pred_label = discriminator(gen_imgs)
            g_loss = 0.5 * (adversarial_loss(validity, valid) + auxiliary_loss(pred_label, gen_labels))
        else:
            g_loss = adversarial_loss(discriminator(gen_imgs), valid)
        g_loss.backward()
        optimizer_G.step()
        optimizer_D.zero_grad()
        if opt.model == "cgan":
            d_real_loss = adversarial_loss(discriminator(real_imgs, labels), valid)
            d_fake_loss = adversarial_loss(discriminator(gen_imgs.detach(), gen_labels), fake)
        elif opt.model == "acgan":
            real_pred, real_aux = discriminator(real_imgs)
            d_real_loss = (adversarial_loss(real_pred, valid) + auxiliary_loss(real_aux, labels)) / 2
            fake_pred, fake_aux = discriminator(gen_imgs.detach())
            d_fake_loss = (adversarial_loss(fake_pred, fake) + auxiliary_loss(fake_aux, gen_labels)) / 2
            pred = np.concatenate([real_aux.data.cpu().numpy(), fake_aux.data.cpu().numpy()], axis=0)
            gt = np.concatenate([labels.data.cpu().numpy(), gen_labels.data.cpu().numpy()], axis=0)
            accs.append(np.mean(np.argmax(pred, axis=1) == gt))
        else:
            d_real_loss = adversarial_loss(discriminator(real_imgs), valid)
            d_fake_loss = adversarial_loss(discriminator(gen_imgs.detach()), fake)
        d_loss = (d_real_loss + d_fake_loss) / 2
        d_loss.backward()
        optimizer_D.step()
        step_losses.append(g_loss.item())
        d_losses.append(d_loss.item())
        log("[Batch %d/%d] [D loss: %f] [G loss: %f]" % (i, opt.n_batches, d_loss.item(), g_loss.item()))
    generator.eval()
    with torch.no_grad():
        z = Variable(FloatTensor(np.random.normal(0, 1, (8, opt.latent_dim))))
        labels = Variable(LongTensor(np.array([num for num in range(opt.n_classes) for _ in range(2)])))
        samples = generator(z, labels)
    return {"initial_state": initial_state, "step_losses": step_losses, "d_losses": d_losses, "accs": accs,
            "samples": samples}


if __name__ == "__main__":
    main()
