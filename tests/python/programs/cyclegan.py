"""junyanz/pytorch-CycleGAN-and-pix2pix (models/networks.py ResnetGenerator / ResnetBlock / NLayerDiscriminator /
UnetGenerator / GANLoss, util/image_pool.py ImagePool, models/cycle_gan_model.py and pix2pix_model.py) in plain
torch: functools.partial(nn.InstanceNorm2d, affine=False, track_running_stats=False) / nn.BatchNorm2d norm
layers with the use_bias = norm_layer.func == nn.InstanceNorm2d check, nn.ReflectionPad2d(3),
ConvTranspose2d(..., output_padding=1), nn.Tanh, init_weights by init.normal_(m.weight.data, 0.0, init_gain)
through net.apply(init_func) with classname.find('Conv') checks, GANLoss with register_buffer('real_label',
torch.tensor(target_real_label)) and .expand_as(prediction), lsgan (MSELoss) / vanilla (BCEWithLogitsLoss),
ImagePool's random.uniform / random.randint swap of history images (torch.unsqueeze(image.data, 0), .clone()),
set_requires_grad(nets, False), itertools.chain of both generators' parameters in one Adam(betas=(0.5, 0.999)),
the cycle / identity L1 losses, and LambdaLR's linear decay; the pix2pix mode uses the UNet generator with
skip connections by torch.cat([x, self.model(x)], 1), Dropout(0.5), and the conditional PatchGAN on
torch.cat((real_A, fake_B), 1)."""
import argparse
import functools
import itertools
import random

import torch
import torch.nn as nn
from torch.nn import init


def get_norm_layer(norm_type='instance'):
    if norm_type == 'batch':
        norm_layer = functools.partial(nn.BatchNorm2d, affine=True, track_running_stats=True)
    elif norm_type == 'instance':
        norm_layer = functools.partial(nn.InstanceNorm2d, affine=False, track_running_stats=False)
    else:
        raise NotImplementedError('normalization layer [%s] is not found' % norm_type)
    return norm_layer


def init_weights(net, init_type='normal', init_gain=0.02):
    def init_func(m):
        classname = m.__class__.__name__
        if hasattr(m, 'weight') and (classname.find('Conv') != -1 or classname.find('Linear') != -1):
            if init_type == 'normal':
                init.normal_(m.weight.data, 0.0, init_gain)
            elif init_type == 'xavier':
                init.xavier_normal_(m.weight.data, gain=init_gain)
            elif init_type == 'kaiming':
                init.kaiming_normal_(m.weight.data, a=0, mode='fan_in')
            elif init_type == 'orthogonal':
                init.orthogonal_(m.weight.data, gain=init_gain)
            if hasattr(m, 'bias') and m.bias is not None:
                init.constant_(m.bias.data, 0.0)
        elif classname.find('BatchNorm2d') != -1:
            init.normal_(m.weight.data, 1.0, init_gain)
            init.constant_(m.bias.data, 0.0)
    net.apply(init_func)


class ResnetBlock(nn.Module):
    def __init__(self, dim, padding_type, norm_layer, use_dropout, use_bias):
        super(ResnetBlock, self).__init__()
        self.conv_block = self.build_conv_block(dim, padding_type, norm_layer, use_dropout, use_bias)

    def build_conv_block(self, dim, padding_type, norm_layer, use_dropout, use_bias):
        conv_block = []
        p = 0
        if padding_type == 'reflect':
            conv_block += [nn.ReflectionPad2d(1)]
        elif padding_type == 'replicate':
            conv_block += [nn.ReplicationPad2d(1)]
        elif padding_type == 'zero':
            p = 1
        conv_block += [nn.Conv2d(dim, dim, kernel_size=3, padding=p, bias=use_bias), norm_layer(dim), nn.ReLU(True)]
        if use_dropout:
            conv_block += [nn.Dropout(0.5)]
        p = 0
        if padding_type == 'reflect':
            conv_block += [nn.ReflectionPad2d(1)]
        elif padding_type == 'replicate':
            conv_block += [nn.ReplicationPad2d(1)]
        elif padding_type == 'zero':
            p = 1
        conv_block += [nn.Conv2d(dim, dim, kernel_size=3, padding=p, bias=use_bias), norm_layer(dim)]
        return nn.Sequential(*conv_block)

    def forward(self, x):
        out = x + self.conv_block(x)
        return out


class ResnetGenerator(nn.Module):
    def __init__(self, input_nc, output_nc, ngf=8, norm_layer=nn.BatchNorm2d, use_dropout=False, n_blocks=2,
                 padding_type='reflect'):
        assert(n_blocks >= 0)
        super(ResnetGenerator, self).__init__()
        if type(norm_layer) == functools.partial:
            use_bias = norm_layer.func == nn.InstanceNorm2d
        else:
            use_bias = norm_layer == nn.InstanceNorm2d
        model = [nn.ReflectionPad2d(3),
                 nn.Conv2d(input_nc, ngf, kernel_size=7, padding=0, bias=use_bias),
                 norm_layer(ngf),
                 nn.ReLU(True)]
        n_downsampling = 2
        for i in range(n_downsampling):
            mult = 2 ** i
            model += [nn.Conv2d(ngf * mult, ngf * mult * 2, kernel_size=3, stride=2, padding=1, bias=use_bias),
                      norm_layer(ngf * mult * 2),
                      nn.ReLU(True)]
        mult = 2 ** n_downsampling
        for i in range(n_blocks):
            model += [ResnetBlock(ngf * mult, padding_type=padding_type, norm_layer=norm_layer,
                                  use_dropout=use_dropout, use_bias=use_bias)]
        for i in range(n_downsampling):
            mult = 2 ** (n_downsampling - i)
            model += [nn.ConvTranspose2d(ngf * mult, int(ngf * mult / 2), kernel_size=3, stride=2, padding=1,
                                         output_padding=1, bias=use_bias),
                      norm_layer(int(ngf * mult / 2)),
                      nn.ReLU(True)]
        model += [nn.ReflectionPad2d(3)]
        model += [nn.Conv2d(ngf, output_nc, kernel_size=7, padding=0)]
        model += [nn.Tanh()]
        self.model = nn.Sequential(*model)

    def forward(self, input):
        return self.model(input)


class UnetSkipConnectionBlock(nn.Module):
    def __init__(self, outer_nc, inner_nc, input_nc=None, submodule=None, outermost=False, innermost=False,
                 norm_layer=nn.BatchNorm2d, use_dropout=False):
        super(UnetSkipConnectionBlock, self).__init__()
        self.outermost = outermost
        if type(norm_layer) == functools.partial:
            use_bias = norm_layer.func == nn.InstanceNorm2d
        else:
            use_bias = norm_layer == nn.InstanceNorm2d
        if input_nc is None:
            input_nc = outer_nc
        downconv = nn.Conv2d(input_nc, inner_nc, kernel_size=4, stride=2, padding=1, bias=use_bias)
        downrelu = nn.LeakyReLU(0.2, True)
        downnorm = norm_layer(inner_nc)
        uprelu = nn.ReLU(True)
        upnorm = norm_layer(outer_nc)
        if outermost:
            upconv = nn.ConvTranspose2d(inner_nc * 2, outer_nc, kernel_size=4, stride=2, padding=1)
            down = [downconv]
            up = [uprelu, upconv, nn.Tanh()]
            model = down + [submodule] + up
        elif innermost:
            upconv = nn.ConvTranspose2d(inner_nc, outer_nc, kernel_size=4, stride=2, padding=1, bias=use_bias)
            down = [downrelu, downconv]
            up = [uprelu, upconv, upnorm]
            model = down + up
        else:
            upconv = nn.ConvTranspose2d(inner_nc * 2, outer_nc, kernel_size=4, stride=2, padding=1, bias=use_bias)
            down = [downrelu, downconv, downnorm]
            up = [uprelu, upconv, upnorm]
            if use_dropout:
                model = down + [submodule] + up + [nn.Dropout(0.5)]
            else:
                model = down + [submodule] + up
        self.model = nn.Sequential(*model)

    def forward(self, x):
        if self.outermost:
            return self.model(x)
        else:
            return torch.cat([x, self.model(x)], 1)


class UnetGenerator(nn.Module):
    def __init__(self, input_nc, output_nc, num_downs, ngf=8, norm_layer=nn.BatchNorm2d, use_dropout=False):
        super(UnetGenerator, self).__init__()
        unet_block = UnetSkipConnectionBlock(ngf * 4, ngf * 4, input_nc=None, submodule=None,
                                             norm_layer=norm_layer, innermost=True)
        for i in range(num_downs - 4):
            unet_block = UnetSkipConnectionBlock(ngf * 4, ngf * 4, input_nc=None, submodule=unet_block,
                                                 norm_layer=norm_layer, use_dropout=use_dropout)
        unet_block = UnetSkipConnectionBlock(ngf * 2, ngf * 4, input_nc=None, submodule=unet_block,
                                             norm_layer=norm_layer)
        unet_block = UnetSkipConnectionBlock(ngf, ngf * 2, input_nc=None, submodule=unet_block, norm_layer=norm_layer)
        self.model = UnetSkipConnectionBlock(output_nc, ngf, input_nc=input_nc, submodule=unet_block,
                                             outermost=True, norm_layer=norm_layer)

    def forward(self, input):
        return self.model(input)


class NLayerDiscriminator(nn.Module):
    def __init__(self, input_nc, ndf=8, n_layers=2, norm_layer=nn.BatchNorm2d):
        super(NLayerDiscriminator, self).__init__()
        if type(norm_layer) == functools.partial:
            use_bias = norm_layer.func == nn.InstanceNorm2d
        else:
            use_bias = norm_layer == nn.InstanceNorm2d
        kw = 4
        padw = 1
        sequence = [nn.Conv2d(input_nc, ndf, kernel_size=kw, stride=2, padding=padw), nn.LeakyReLU(0.2, True)]
        nf_mult = 1
        nf_mult_prev = 1
        for n in range(1, n_layers):
            nf_mult_prev = nf_mult
            nf_mult = min(2 ** n, 8)
            sequence += [
                nn.Conv2d(ndf * nf_mult_prev, ndf * nf_mult, kernel_size=kw, stride=2, padding=padw, bias=use_bias),
                norm_layer(ndf * nf_mult),
                nn.LeakyReLU(0.2, True)
            ]
        nf_mult_prev = nf_mult
        nf_mult = min(2 ** n_layers, 8)
        sequence += [
            nn.Conv2d(ndf * nf_mult_prev, ndf * nf_mult, kernel_size=kw, stride=1, padding=padw, bias=use_bias),
            norm_layer(ndf * nf_mult),
            nn.LeakyReLU(0.2, True)
        ]
        sequence += [nn.Conv2d(ndf * nf_mult, 1, kernel_size=kw, stride=1, padding=padw)]
        self.model = nn.Sequential(*sequence)

    def forward(self, input):
        return self.model(input)


class GANLoss(nn.Module):
    def __init__(self, gan_mode, target_real_label=1.0, target_fake_label=0.0):
        super(GANLoss, self).__init__()
        self.register_buffer('real_label', torch.tensor(target_real_label))
        self.register_buffer('fake_label', torch.tensor(target_fake_label))
        self.gan_mode = gan_mode
        if gan_mode == 'lsgan':
            self.loss = nn.MSELoss()
        elif gan_mode == 'vanilla':
            self.loss = nn.BCEWithLogitsLoss()
        elif gan_mode in ['wgangp']:
            self.loss = None
        else:
            raise NotImplementedError('gan mode %s not implemented' % gan_mode)

    def get_target_tensor(self, prediction, target_is_real):
        if target_is_real:
            target_tensor = self.real_label
        else:
            target_tensor = self.fake_label
        return target_tensor.expand_as(prediction)

    def __call__(self, prediction, target_is_real):
        if self.gan_mode in ['lsgan', 'vanilla']:
            target_tensor = self.get_target_tensor(prediction, target_is_real)
            loss = self.loss(prediction, target_tensor)
        elif self.gan_mode == 'wgangp':
            if target_is_real:
                loss = -prediction.mean()
            else:
                loss = prediction.mean()
        return loss


class ImagePool():
    def __init__(self, pool_size):
        self.pool_size = pool_size
        if self.pool_size > 0:
            self.num_imgs = 0
            self.images = []

    def query(self, images):
        if self.pool_size == 0:
            return images
        return_images = []
        for image in images:
            image = torch.unsqueeze(image.data, 0)
            if self.num_imgs < self.pool_size:
                self.num_imgs = self.num_imgs + 1
                self.images.append(image)
                return_images.append(image)
            else:
                p = random.uniform(0, 1)
                if p > 0.5:
                    random_id = random.randint(0, self.pool_size - 1)
                    tmp = self.images[random_id].clone()
                    self.images[random_id] = image
                    return_images.append(tmp)
                else:
                    return_images.append(image)
        return_images = torch.cat(return_images, 0)
        return return_images


def set_requires_grad(nets, requires_grad=False):
    if not isinstance(nets, list):
        nets = [nets]
    for net in nets:
        if net is not None:
            for param in net.parameters():
                param.requires_grad = requires_grad


def main(argv=None):
    parser = argparse.ArgumentParser()
    parser.add_argument('--model', default='cycle_gan')
    parser.add_argument('--norm', default='instance')
    parser.add_argument('--gan_mode', default='lsgan')
    parser.add_argument('--n_epochs', type=int, default=2)
    parser.add_argument('--n_epochs_decay', type=int, default=2)
    parser.add_argument('--quiet', action='store_true')
    args = parser.parse_args(argv)
    log = (lambda *a: None) if args.quiet else print
    torch.manual_seed(0)
    random.seed(0)
    norm_layer = get_norm_layer(args.norm)
    lambda_A, lambda_B, lambda_identity, lambda_L1 = 10.0, 10.0, 0.5, 100.0
    g = torch.Generator().manual_seed(7)
    A = torch.rand(8, 3, 16, 16, generator=g) * 2 - 1
    B = torch.flip(A, [3]) * 0.5 + 0.1 * torch.randn(8, 3, 16, 16, generator=g)

    def lambda_rule(epoch):
        return 1.0 - max(0, epoch + 1 - args.n_epochs) / float(args.n_epochs_decay + 1)

    step_losses, d_losses = [], []
    if args.model == 'cycle_gan':
        netG_A = ResnetGenerator(3, 3, 8, norm_layer=norm_layer, use_dropout=False, n_blocks=2)
        netG_B = ResnetGenerator(3, 3, 8, norm_layer=norm_layer, use_dropout=False, n_blocks=2)
        netD_A = NLayerDiscriminator(3, 8, n_layers=2, norm_layer=norm_layer)
        netD_B = NLayerDiscriminator(3, 8, n_layers=2, norm_layer=norm_layer)
        nets = nn.ModuleDict({"G_A": netG_A, "G_B": netG_B, "D_A": netD_A, "D_B": netD_B})
        for net in nets.values():
            init_weights(net, 'normal', 0.02)
        initial_state = {k: v.clone() for k, v in nets.state_dict().items()}
        fake_A_pool, fake_B_pool = ImagePool(4), ImagePool(4)
        criterionGAN = GANLoss(args.gan_mode)
        criterionCycle = torch.nn.L1Loss()
        criterionIdt = torch.nn.L1Loss()
        optimizer_G = torch.optim.Adam(itertools.chain(netG_A.parameters(), netG_B.parameters()), lr=0.0002,
                                       betas=(0.5, 0.999))
        optimizer_D = torch.optim.Adam(itertools.chain(netD_A.parameters(), netD_B.parameters()), lr=0.0002,
                                       betas=(0.5, 0.999))
        schedulers = [torch.optim.lr_scheduler.LambdaLR(o, lr_lambda=lambda_rule) for o in (optimizer_G, optimizer_D)]
        for epoch in range(args.n_epochs + args.n_epochs_decay):
            for i in range(0, 8, 2):
                real_A, real_B = A[i:i + 2], B[i:i + 2]
                fake_B = netG_A(real_A)
                rec_A = netG_B(fake_B)
                fake_A = netG_B(real_B)
                rec_B = netG_A(fake_A)
                set_requires_grad([netD_A, netD_B], False)
                optimizer_G.zero_grad()
                idt_A = netG_A(real_B)
                loss_idt_A = criterionIdt(idt_A, real_B) * lambda_B * lambda_identity
                idt_B = netG_B(real_A)
                loss_idt_B = criterionIdt(idt_B, real_A) * lambda_A * lambda_identity
                loss_G_A = criterionGAN(netD_A(fake_B), True)
                loss_G_B = criterionGAN(netD_B(fake_A), True)
                loss_cycle_A = criterionCycle(rec_A, real_A) * lambda_A
                loss_cycle_B = criterionCycle(rec_B, real_B) * lambda_B
                loss_G = loss_G_A + loss_G_B + loss_cycle_A + loss_cycle_B + loss_idt_A + loss_idt_B
                loss_G.backward()
                optimizer_G.step()
                set_requires_grad([netD_A, netD_B], True)
                optimizer_D.zero_grad()
                loss_D = 0
                for netD, real, fake in ((netD_A, real_B, fake_B_pool.query(fake_B)),
                                         (netD_B, real_A, fake_A_pool.query(fake_A))):
                    loss_D_real = criterionGAN(netD(real), True)
                    loss_D_fake = criterionGAN(netD(fake.detach()), False)
                    loss_D_one = (loss_D_real + loss_D_fake) * 0.5
                    loss_D_one.backward()
                    loss_D = loss_D + loss_D_one.item()
                optimizer_D.step()
                step_losses.append(loss_G.item())
                d_losses.append(loss_D)
            for scheduler in schedulers:
                scheduler.step()
            log(epoch, loss_G.item(), optimizer_G.param_groups[0]['lr'])
        with torch.no_grad():
            out = netG_A(A[:2])
        return {"initial_state": initial_state, "step_losses": step_losses, "d_losses": d_losses, "out": out,
                "lr": optimizer_G.param_groups[0]['lr']}
    netG = UnetGenerator(3, 3, 4, 8, norm_layer=norm_layer, use_dropout=True)
    netD = NLayerDiscriminator(6, 8, n_layers=2, norm_layer=norm_layer)
    nets = nn.ModuleDict({"G": netG, "D": netD})
    for net in nets.values():
        init_weights(net, 'normal', 0.02)
    initial_state = {k: v.clone() for k, v in nets.state_dict().items()}
    criterionGAN = GANLoss(args.gan_mode)
    criterionL1 = torch.nn.L1Loss()
    optimizer_G = torch.optim.Adam(netG.parameters(), lr=0.0002, betas=(0.5, 0.999))
    optimizer_D = torch.optim.Adam(netD.parameters(), lr=0.0002, betas=(0.5, 0.999))
    for epoch in range(args.n_epochs + args.n_epochs_decay):
        for i in range(0, 8, 2):
            real_A, real_B = A[i:i + 2], B[i:i + 2]
            fake_B = netG(real_A)
            set_requires_grad(netD, True)
            optimizer_D.zero_grad()
            fake_AB = torch.cat((real_A, fake_B), 1)
            loss_D_fake = criterionGAN(netD(fake_AB.detach()), False)
            real_AB = torch.cat((real_A, real_B), 1)
            loss_D_real = criterionGAN(netD(real_AB), True)
            loss_D = (loss_D_fake + loss_D_real) * 0.5
            loss_D.backward()
            optimizer_D.step()
            set_requires_grad(netD, False)
            optimizer_G.zero_grad()
            loss_G_GAN = criterionGAN(netD(fake_AB), True)
            loss_G_L1 = criterionL1(fake_B, real_B) * lambda_L1
            loss_G = loss_G_GAN + loss_G_L1
            loss_G.backward()
            optimizer_G.step()
            step_losses.append(loss_G.item())
            d_losses.append(loss_D.item())
    netG.eval()
    with torch.no_grad():
        out = netG(A[:2])
    return {"initial_state": initial_state, "step_losses": step_losses, "d_losses": d_losses, "out": out}


if __name__ == "__main__":
    main()
