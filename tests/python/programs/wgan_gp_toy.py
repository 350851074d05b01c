"""caogang/wgan-gp's gan_toy.py (WGAN-GP on 8 gaussians / 25 gaussians / swissroll): Generator and
Discriminator MLPs with weights_init (normal_(0.0, 0.02) on Linear weights, bias fill_(0)),
calc_gradient_penalty (alpha = torch.rand(BATCH_SIZE, 1).expand(real_data.size()), autograd.grad with
grad_outputs=torch.ones(...), create_graph=True, retain_graph=True, only_inputs=True, and
((gradients.norm(2, dim=1) - 1) ** 2).mean() * LAMBDA), D_real.backward(mone) / D_fake.backward(one),
CRITIC_ITERS discriminator steps per generator step, Adam(betas=(0.5, 0.9)), Variable(..., volatile=True)
turned into torch.no_grad in the generator's detach. sklearn's make_swiss_roll is replaced by its
formula in NumPy."""
import argparse
import random

import numpy as np
import torch
import torch.autograd as autograd
import torch.nn as nn
import torch.optim as optim


class Generator(nn.Module):
    def __init__(self, DIM, FIXED_GENERATOR=False):
        super(Generator, self).__init__()
        self.FIXED_GENERATOR = FIXED_GENERATOR
        main = nn.Sequential(
            nn.Linear(2, DIM),
            nn.ReLU(True),
            nn.Linear(DIM, DIM),
            nn.ReLU(True),
            nn.Linear(DIM, DIM),
            nn.ReLU(True),
            nn.Linear(DIM, 2),
        )
        self.main = main

    def forward(self, noise, real_data):
        if self.FIXED_GENERATOR:
            return noise + real_data
        else:
            output = self.main(noise)
            return output


class Discriminator(nn.Module):
    def __init__(self, DIM):
        super(Discriminator, self).__init__()
        main = nn.Sequential(
            nn.Linear(2, DIM),
            nn.ReLU(True),
            nn.Linear(DIM, DIM),
            nn.ReLU(True),
            nn.Linear(DIM, DIM),
            nn.ReLU(True),
            nn.Linear(DIM, 1),
        )
        self.main = main

    def forward(self, inputs):
        output = self.main(inputs)
        return output.view(-1)


def weights_init(m):
    classname = m.__class__.__name__
    if classname.find('Linear') != -1:
        m.weight.data.normal_(0.0, 0.02)
        m.bias.data.fill_(0)
    elif classname.find('BatchNorm') != -1:
        m.weight.data.normal_(1.0, 0.02)
        m.bias.data.fill_(0)


def inf_train_gen(DATASET, BATCH_SIZE):
    if DATASET == '25gaussians':
        dataset = []
        for i in range(100000 // 25 // 40):
            for x in range(-2, 3):
                for y in range(-2, 3):
                    point = np.random.randn(2) * 0.05
                    point[0] += 2 * x
                    point[1] += 2 * y
                    dataset.append(point)
        dataset = np.array(dataset, dtype='float32')
        np.random.shuffle(dataset)
        dataset /= 2.828  # stdev
        while True:
            for i in range(len(dataset) // BATCH_SIZE):
                yield dataset[i * BATCH_SIZE:(i + 1) * BATCH_SIZE]

    elif DATASET == 'swissroll':
        while True:
            t = 1.5 * np.pi * (1 + 2 * np.random.rand(BATCH_SIZE))
            data = np.stack([t * np.cos(t), 21 * np.random.rand(BATCH_SIZE), t * np.sin(t)], axis=1)
            data += 0.25 * np.random.randn(BATCH_SIZE, 3)
            data = data.astype('float32')[:, [0, 2]]
            data /= 7.5  # stdev plus a little
            yield data

    elif DATASET == '8gaussians':
        scale = 2.
        centers = [
            (1, 0), (-1, 0), (0, 1), (0, -1),
            (1. / np.sqrt(2), 1. / np.sqrt(2)), (1. / np.sqrt(2), -1. / np.sqrt(2)),
            (-1. / np.sqrt(2), 1. / np.sqrt(2)), (-1. / np.sqrt(2), -1. / np.sqrt(2))
        ]
        centers = [(scale * x, scale * y) for x, y in centers]
        while True:
            dataset = []
            for i in range(BATCH_SIZE):
                point = np.random.randn(2) * .02
                center = random.choice(centers)
                point[0] += center[0]
                point[1] += center[1]
                dataset.append(point)
            dataset = np.array(dataset, dtype='float32')
            dataset /= 1.414  # stdev
            yield dataset


def calc_gradient_penalty(netD, real_data, fake_data, BATCH_SIZE, LAMBDA):
    alpha = torch.rand(BATCH_SIZE, 1)
    alpha = alpha.expand(real_data.size())

    interpolates = alpha * real_data + ((1 - alpha) * fake_data)
    interpolates = autograd.Variable(interpolates, requires_grad=True)

    disc_interpolates = netD(interpolates)

    gradients = autograd.grad(outputs=disc_interpolates, inputs=interpolates,
                              grad_outputs=torch.ones(disc_interpolates.size()),
                              create_graph=True, retain_graph=True, only_inputs=True)[0]

    gradient_penalty = ((gradients.norm(2, dim=1) - 1) ** 2).mean() * LAMBDA
    return gradient_penalty


def main(argv=None):
    p = argparse.ArgumentParser()
    p.add_argument('--dataset', default='8gaussians')
    p.add_argument('--dim', type=int, default=512)
    p.add_argument('--fixed_generator', action='store_true')
    p.add_argument('--lambda_', type=float, default=.1)
    p.add_argument('--critic_iters', type=int, default=5)
    p.add_argument('--batch_size', type=int, default=256)
    p.add_argument('--iters', type=int, default=100000)
    p.add_argument('--quiet', action='store_true')
    args = p.parse_args(argv)
    log = (lambda *a: None) if args.quiet else print
    DIM, LAMBDA, CRITIC_ITERS, BATCH_SIZE = args.dim, args.lambda_, args.critic_iters, args.batch_size

    torch.manual_seed(1)
    np.random.seed(1)
    random.seed(1)

    netG = Generator(DIM, args.fixed_generator)
    netD = Discriminator(DIM)
    netD.apply(weights_init)
    netG.apply(weights_init)
    initial_state = {**{'G.' + k: v.clone() for k, v in netG.state_dict().items()},
                     **{'D.' + k: v.clone() for k, v in netD.state_dict().items()}}

    optimizerD = optim.Adam(netD.parameters(), lr=1e-4, betas=(0.5, 0.9))
    optimizerG = optim.Adam(netG.parameters(), lr=1e-4, betas=(0.5, 0.9))

    one = torch.tensor(1, dtype=torch.float)
    mone = one * -1

    data = inf_train_gen(args.dataset, BATCH_SIZE)
    step_losses, wds, gps, g_costs = [], [], [], []
    for iteration in range(args.iters):
        ############################
        # (1) Update D network
        ###########################
        for p_ in netD.parameters():  # reset requires_grad
            p_.requires_grad = True  # they are set to False below in netG update

        for iter_d in range(CRITIC_ITERS):
            _data = next(data)
            real_data = torch.Tensor(_data)
            real_data_v = autograd.Variable(real_data)

            netD.zero_grad()

            # train with real
            D_real = netD(real_data_v)
            D_real = D_real.mean()
            D_real.backward(mone)

            # train with fake
            noise = torch.randn(BATCH_SIZE, 2)
            with torch.no_grad():
                noisev = autograd.Variable(noise)  # totally freeze netG
            fake = autograd.Variable(netG(noisev, real_data_v).data)
            inputv = fake
            D_fake = netD(inputv)
            D_fake = D_fake.mean()
            D_fake.backward(one)

            # train with gradient penalty
            gradient_penalty = calc_gradient_penalty(netD, real_data_v.data, fake.data, BATCH_SIZE, LAMBDA)
            gradient_penalty.backward()

            D_cost = D_fake - D_real + gradient_penalty
            Wasserstein_D = D_real - D_fake
            optimizerD.step()
            step_losses.append(D_cost.item())
            wds.append(Wasserstein_D.item())
            gps.append(gradient_penalty.item())

        if not args.fixed_generator:
            ############################
            # (2) Update G network
            ###########################
            for p_ in netD.parameters():
                p_.requires_grad = False  # to avoid computation
            netG.zero_grad()

            _data = next(data)
            real_data = torch.Tensor(_data)
            real_data_v = autograd.Variable(real_data)

            noise = torch.randn(BATCH_SIZE, 2)
            noisev = autograd.Variable(noise)
            fake = netG(noisev, real_data_v)
            G = netD(fake)
            G = G.mean()
            G.backward(mone)
            G_cost = -G
            optimizerG.step()
            g_costs.append(G_cost.item())
        log(iteration, step_losses[-1], wds[-1])

    with torch.no_grad():
        samples = netG(torch.randn(64, 2), None) if not args.fixed_generator else None
    return {"initial_state": initial_state, "step_losses": step_losses, "wds": wds, "gps": gps,
            "g_costs": g_costs, "samples": samples, "final_D": netD.state_dict()}


if __name__ == '__main__':
    main()
