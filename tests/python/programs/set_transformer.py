"""juho-lee/set_transformer (modules.py MAB / SAB / ISAB / PMA, models.py DeepSet and SetTransformer, the
max-regression and mixture-of-Gaussians demos) in plain torch: heads split by torch.cat(Q.split(dim_split, 2), 0),
A = torch.softmax(Q_.bmm(K_.transpose(1, 2)) / math.sqrt(self.dim_V), 2), O = torch.cat((Q_ + A.bmm(V_)).split(
Q.size(0), 0), 2), optional LayerNorms set by setattr-free getattr(self, 'ln0', None) checks, inducing points and
seeds as nn.Parameter(torch.Tensor(1, num_inds, dim_out)) initialised by nn.init.xavier_uniform_, DeepSet's
X.mean(-2) pooling with .reshape(-1, num_outputs, dim_output), and the max-regression task (max of each set,
L1 loss) plus the MoG clustering log-likelihood (torch.distributions.MultivariateNormal-free: the diagonal
Gaussian log-density and torch.logsumexp) trained with Adam."""
import argparse
import math

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


class MAB(nn.Module):
    def __init__(self, dim_Q, dim_K, dim_V, num_heads, ln=False):
        super(MAB, self).__init__()
        self.dim_V = dim_V
        self.num_heads = num_heads
        self.fc_q = nn.Linear(dim_Q, dim_V)
        self.fc_k = nn.Linear(dim_K, dim_V)
        self.fc_v = nn.Linear(dim_K, dim_V)
        if ln:
            self.ln0 = nn.LayerNorm(dim_V)
            self.ln1 = nn.LayerNorm(dim_V)
        self.fc_o = nn.Linear(dim_V, dim_V)

    def forward(self, Q, K):
        Q = self.fc_q(Q)
        K, V = self.fc_k(K), self.fc_v(K)
        dim_split = self.dim_V // self.num_heads
        Q_ = torch.cat(Q.split(dim_split, 2), 0)
        K_ = torch.cat(K.split(dim_split, 2), 0)
        V_ = torch.cat(V.split(dim_split, 2), 0)
        A = torch.softmax(Q_.bmm(K_.transpose(1, 2)) / math.sqrt(self.dim_V), 2)
        O = torch.cat((Q_ + A.bmm(V_)).split(Q.size(0), 0), 2)
        O = O if getattr(self, 'ln0', None) is None else self.ln0(O)
        O = O + F.relu(self.fc_o(O))
        O = O if getattr(self, 'ln1', None) is None else self.ln1(O)
        return O


class SAB(nn.Module):
    def __init__(self, dim_in, dim_out, num_heads, ln=False):
        super(SAB, self).__init__()
        self.mab = MAB(dim_in, dim_in, dim_out, num_heads, ln=ln)

    def forward(self, X):
        return self.mab(X, X)


class ISAB(nn.Module):
    def __init__(self, dim_in, dim_out, num_heads, num_inds, ln=False):
        super(ISAB, self).__init__()
        self.I = nn.Parameter(torch.Tensor(1, num_inds, dim_out))
        nn.init.xavier_uniform_(self.I)
        self.mab0 = MAB(dim_out, dim_in, dim_out, num_heads, ln=ln)
        self.mab1 = MAB(dim_in, dim_out, dim_out, num_heads, ln=ln)

    def forward(self, X):
        H = self.mab0(self.I.repeat(X.size(0), 1, 1), X)
        return self.mab1(X, H)


class PMA(nn.Module):
    def __init__(self, dim, num_heads, num_seeds, ln=False):
        super(PMA, self).__init__()
        self.S = nn.Parameter(torch.Tensor(1, num_seeds, dim))
        nn.init.xavier_uniform_(self.S)
        self.mab = MAB(dim, dim, dim, num_heads, ln=ln)

    def forward(self, X):
        return self.mab(self.S.repeat(X.size(0), 1, 1), X)


class DeepSet(nn.Module):
    def __init__(self, dim_input, num_outputs, dim_output, dim_hidden=32):
        super(DeepSet, self).__init__()
        self.num_outputs = num_outputs
        self.dim_output = dim_output
        self.enc = nn.Sequential(nn.Linear(dim_input, dim_hidden), nn.ReLU(), nn.Linear(dim_hidden, dim_hidden),
                                 nn.ReLU(), nn.Linear(dim_hidden, dim_hidden))
        self.dec = nn.Sequential(nn.Linear(dim_hidden, dim_hidden), nn.ReLU(),
                                 nn.Linear(dim_hidden, num_outputs * dim_output))

    def forward(self, X):
        X = self.enc(X).mean(-2)
        X = self.dec(X).reshape(-1, self.num_outputs, self.dim_output)
        return X


class SetTransformer(nn.Module):
    def __init__(self, dim_input, num_outputs, dim_output, num_inds=8, dim_hidden=32, num_heads=4, ln=False,
                 isab=True):
        super(SetTransformer, self).__init__()
        if isab:
            self.enc = nn.Sequential(ISAB(dim_input, dim_hidden, num_heads, num_inds, ln=ln),
                                     ISAB(dim_hidden, dim_hidden, num_heads, num_inds, ln=ln))
        else:
            self.enc = nn.Sequential(SAB(dim_input, dim_hidden, num_heads, ln=ln),
                                     SAB(dim_hidden, dim_hidden, num_heads, ln=ln))
        self.dec = nn.Sequential(PMA(dim_hidden, num_heads, num_outputs, ln=ln),
                                 SAB(dim_hidden, dim_hidden, num_heads, ln=ln),
                                 nn.Linear(dim_hidden, dim_output))

    def forward(self, X):
        return self.dec(self.enc(X))


def gen_max_data(batch_size, max_length=10, x_min=-10, x_max=10, rng=None):
    length = rng.randint(1, max_length)
    x = rng.randint(x_min, x_max, (batch_size, length, 1))
    y = np.max(x, axis=1)
    return x, y


def mog_log_likelihood(X, params, K):
    # params: (B, K, 1 + 2 D): mixture logits, means, log-stddevs of a diagonal Gaussian mixture
    D = X.shape[-1]
    logits, mu, log_sigma = params[..., 0], params[..., 1:1 + D], params[..., 1 + D:]
    log_pi = torch.log_softmax(logits, -1)
    diff = (X.unsqueeze(2) - mu.unsqueeze(1)) / log_sigma.exp().unsqueeze(1)
    log_prob = -0.5 * diff.pow(2).sum(-1) - log_sigma.sum(-1).unsqueeze(1) - 0.5 * D * math.log(2 * math.pi)
    ll = torch.logsumexp(log_pi.unsqueeze(1) + log_prob, -1)
    return ll.mean(), (log_pi.unsqueeze(1) + log_prob).argmax(-1)


def main(argv=None):
    parser = argparse.ArgumentParser()
    parser.add_argument("--task", default="max")
    parser.add_argument("--model", default="set_transformer")
    parser.add_argument("--ln", action="store_true")
    parser.add_argument("--sab", action="store_true")
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--quiet", action="store_true")
    args = parser.parse_args(argv)
    log = (lambda *a: None) if args.quiet else print
    torch.manual_seed(0)
    rng = np.random.RandomState(0)
    if args.task == "max":
        if args.model == "deepset":
            model = DeepSet(1, 1, 1)
        else:
            model = SetTransformer(1, 1, 1, ln=args.ln, isab=not args.sab)
        dim_out = 1
    else:
        K, D = 3, 2
        model = SetTransformer(D, K, 1 + 2 * D, ln=args.ln, isab=not args.sab)
    initial_state = {k: v.clone() for k, v in model.state_dict().items()}
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    criterion = nn.L1Loss()
    step_losses, outs = [], []
    model.train()
    for step in range(args.steps):
        if args.task == "max":
            x, y = gen_max_data(16, rng=rng)
            x, y = torch.from_numpy(x).float(), torch.from_numpy(y).float()
            loss = criterion(model(x).squeeze(-1), y)
        else:
            centers = torch.from_numpy(rng.randn(8, K, D).astype(np.float32)) * 3
            labels = torch.from_numpy(rng.randint(0, K, (8, 30)))
            X = torch.gather(centers, 1, labels.unsqueeze(-1).expand(-1, -1, D)) + torch.randn(8, 30, D) * 0.3
            ll, _ = mog_log_likelihood(X, model(X), K)
            loss = -ll
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        step_losses.append(loss.item())
        log(step, loss.item())
    model.eval()
    with torch.no_grad():
        if args.task == "max":
            x, y = gen_max_data(4, rng=rng)
            out = model(torch.from_numpy(x).float())
        else:
            X = torch.randn(2, 20, D)
            out = model(X)
            outs = mog_log_likelihood(X, out, K)[1]
    return {"initial_state": initial_state, "step_losses": step_losses, "out": out, "assign": outs}


if __name__ == "__main__":
    main()
