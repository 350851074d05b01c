"""wgrathwohl/JEM (train_wrn_ebm.py: F / CCF energy models with logsumexp energies, the persistent replay buffer
by torch.FloatTensor(buffer_size, *shape).uniform_(-1, 1), sample_p_0 by torch.randint / torch.rand(...) < rho
mixing, sample_q with SGLD: x_k = torch.autograd.Variable(init_sample, requires_grad=True),
f_prime = torch.autograd.grad(f(x_k, y=y).sum(), [x_k], retain_graph=True)[0], x_k.data += sgld_lr * f_prime +
sgld_std * torch.randn_like(x_k), model.eval() / model.train() around sampling, replay_buffer[buffer_inds] =
final_samples.cpu(); the p(x) loss fp - fq, the p(y|x) cross entropy, the p(x|y) class-conditional variant with
gather, and warmup lr by param_groups) in plain torch with a small MLP energy model on 2-d data."""
import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.nn.utils as nn_utils


class F_(nn.Module):
    def __init__(self, n_classes=3, dim=2, hidden=32):
        super().__init__()
        self.f = nn.Sequential(nn.Linear(dim, hidden), nn.SiLU(), nn.Linear(hidden, hidden), nn.SiLU())
        self.energy_output = nn.Linear(hidden, 1)
        self.class_output = nn.Linear(hidden, n_classes)

    def forward(self, x, y=None):
        penult_z = self.f(x)
        return self.energy_output(penult_z).squeeze()

    def classify(self, x):
        penult_z = self.f(x)
        return self.class_output(penult_z).squeeze()


class CCF(F_):
    def forward(self, x, y=None):
        logits = self.classify(x)
        if y is None:
            return logits.logsumexp(1)
        else:
            return torch.gather(logits, 1, y[:, None])


def get_sample_q(args, n_classes, dim):
    def sample_p_0(replay_buffer, bs, y=None):
        if len(replay_buffer) == 0:
            return init_random(bs), []
        buffer_size = len(replay_buffer) if y is None else len(replay_buffer) // n_classes
        inds = torch.randint(0, buffer_size, (bs,))
        if y is not None:
            inds = y.cpu() * buffer_size + inds
            assert not args.uncond, "Can't drawn conditional samples without giving me y"
        buffer_samples = replay_buffer[inds]
        random_samples = init_random(bs)
        choose_random = (torch.rand(bs) < args.reinit_freq).float()[:, None]
        samples = choose_random * random_samples + (1 - choose_random) * buffer_samples
        return samples, inds

    def init_random(bs):
        return torch.FloatTensor(bs, dim).uniform_(-1, 1) * 3

    def sample_q(f, replay_buffer, y=None, n_steps=args.n_steps):
        f.eval()
        bs = args.batch_size if y is None else y.size(0)
        init_sample, buffer_inds = sample_p_0(replay_buffer, bs=bs, y=y)
        x_k = torch.autograd.Variable(init_sample, requires_grad=True)
        for k in range(n_steps):
            f_prime = torch.autograd.grad(f(x_k, y=y).sum(), [x_k], retain_graph=True)[0]
            x_k.data += args.sgld_lr * f_prime + args.sgld_std * torch.randn_like(x_k)
        f.train()
        final_samples = x_k.detach()
        if len(replay_buffer) > 0:
            replay_buffer[buffer_inds] = final_samples.cpu()
        return final_samples
    return sample_q, init_random


def main(argv=None):
    parser = argparse.ArgumentParser("Energy Based Models and Shit")
    parser.add_argument("--uncond", action="store_true")
    parser.add_argument("--p_x_weight", type=float, default=1.)
    parser.add_argument("--p_y_given_x_weight", type=float, default=1.)
    parser.add_argument("--p_x_y_weight", type=float, default=0.)
    parser.add_argument("--n_steps", type=int, default=10)
    parser.add_argument("--sgld_lr", type=float, default=0.5)
    parser.add_argument("--sgld_std", type=float, default=1e-2)
    parser.add_argument("--reinit_freq", type=float, default=.05)
    parser.add_argument("--buffer_size", type=int, default=60)
    parser.add_argument("--batch_size", type=int, default=16)
    parser.add_argument("--warmup_iters", type=int, default=5)
    parser.add_argument("--iters", type=int, default=16)
    parser.add_argument("--quiet", action="store_true")
    args = parser.parse_args(argv)
    log = (lambda *a: None) if args.quiet else print
    torch.manual_seed(1)
    n_classes, dim = 3, 2
    centers = torch.tensor([[2., 0.], [-1., 1.7], [-1., -1.7]])
    labels = torch.randint(0, n_classes, (96,))
    data = centers[labels] + 0.3 * torch.randn(96, dim)
    f = F_(n_classes, dim) if args.uncond else CCF(n_classes, dim)
    initial_state = {k: v.clone() for k, v in f.state_dict().items()}
    sample_q, init_random = get_sample_q(args, n_classes, dim)
    replay_buffer = init_random(args.buffer_size)
    optim = torch.optim.Adam(f.parameters(), lr=1e-2, betas=[.9, .999], weight_decay=0.0)
    step_losses, parts = [], []
    for cur_iter in range(args.iters):
        if cur_iter <= args.warmup_iters:
            lr = 1e-2 * cur_iter / float(args.warmup_iters)
            for param_group in optim.param_groups:
                param_group['lr'] = lr
        b = (cur_iter * args.batch_size) % 96
        x_lab, y_lab = data[b:b + args.batch_size], labels[b:b + args.batch_size]
        L = 0.
        if args.p_x_weight > 0:
            x_q = sample_q(f, replay_buffer)
            fp_all = f(x_lab)
            fq_all = f(x_q)
            fp = fp_all.mean()
            fq = fq_all.mean()
            l_p_x = -(fp - fq)
            L += args.p_x_weight * l_p_x
        if args.p_y_given_x_weight > 0:
            logits = f.classify(x_lab)
            l_p_y_given_x = nn.CrossEntropyLoss()(logits, y_lab)
            acc = (logits.max(1)[1] == y_lab).float().mean()
            L += args.p_y_given_x_weight * l_p_y_given_x
        if args.p_x_y_weight > 0:
            x_q_lab = sample_q(f, replay_buffer, y=y_lab)
            fp, fq = f(x_lab, y_lab).mean(), f(x_q_lab, y_lab).mean()
            l_p_x_y = -(fp - fq)
            L += args.p_x_y_weight * l_p_x_y
        if L.abs().item() > 1e8:
            raise SystemExit("BAD BOIIIIIIIIII")
        optim.zero_grad()
        L.backward()
        nn_utils.clip_grad_norm_(f.parameters(), 10.0)
        optim.step()
        step_losses.append(L.item())
        parts.append([fp.item(), fq.item(), acc.item() if args.p_y_given_x_weight > 0 else 0.])
        log(cur_iter, L.item())
    return {"initial_state": initial_state, "step_losses": step_losses, "parts": parts, "buffer": replay_buffer}


if __name__ == "__main__":
    main()
