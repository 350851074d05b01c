"""DeepAR-style probabilistic forecasting as zhykoties/TimeSeries (model/net.py) and the PyTorch forecasting
tutorials write it: an nn.LSTM stepped one time step at a time with (hidden, cell) carried, the per-series
nn.Embedding concatenated to the input, forget-gate biases set through named_parameters() (filter(lambda n:
"bias" in n, ...), bias.data[start:end].fill_(1.)), distribution_mu / distribution_presigma Linear heads on
hidden.permute(1, 2, 0).contiguous().view(hidden.shape[1], -1), nn.Softplus() sigma, loss_fn by
torch.distributions.normal.Normal(mu[zero_index], sigma[zero_index]).log_prob(...) over a (labels != 0) mask,
the scaled series (v_batch / mean of the conditioning range), test_time sampling (distribution.sample() fed
back as the next input, torch.median over samples, the sample std), and the ND / RMSE metrics. --loss nll
swaps the likelihood for F.gaussian_nll_loss(mu, labels, sigma ** 2, full=True) / nn.GaussianNLLLoss as later
ports do."""
import argparse

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


class Net(nn.Module):
    def __init__(self, params):
        super(Net, self).__init__()
        self.params = params
        self.embedding = nn.Embedding(params.num_class, params.embedding_dim)

        self.lstm = nn.LSTM(input_size=1 + params.cov_dim + params.embedding_dim,
                            hidden_size=params.lstm_hidden_dim,
                            num_layers=params.lstm_layers,
                            bias=True,
                            batch_first=False,
                            dropout=params.lstm_dropout)
        # initialize LSTM forget gate bias to be 1 as recommanded by http://proceedings.mlr.press/v37/jozefowicz15.pdf
        for names in self.lstm._all_weights:
            for name in filter(lambda n: "bias" in n, names):
                bias = getattr(self.lstm, name)
                n = bias.size(0)
                start, end = n // 4, n // 2
                bias.data[start:end].fill_(1.)

        self.relu = nn.ReLU()
        self.distribution_mu = nn.Linear(params.lstm_hidden_dim * params.lstm_layers, 1)
        self.distribution_presigma = nn.Linear(params.lstm_hidden_dim * params.lstm_layers, 1)
        self.distribution_sigma = nn.Softplus()

    def forward(self, x, idx, hidden, cell):
        onehot_embed = self.embedding(idx)  # TODO: is it possible to do this only once per window instead of per step?
        lstm_input = torch.cat((x, onehot_embed), dim=2)
        output, (hidden, cell) = self.lstm(lstm_input, (hidden, cell))
        # use h from all three layers to calculate mu and sigma
        hidden_permute = hidden.permute(1, 2, 0).contiguous().view(hidden.shape[1], -1)
        pre_sigma = self.distribution_presigma(hidden_permute)
        mu = self.distribution_mu(hidden_permute)
        sigma = self.distribution_sigma(pre_sigma)  # softplus to make sure standard deviation is positive
        return torch.squeeze(mu), torch.squeeze(sigma), hidden, cell

    def init_hidden(self, input_size):
        return torch.zeros(self.params.lstm_layers, input_size, self.params.lstm_hidden_dim)

    def init_cell(self, input_size):
        return torch.zeros(self.params.lstm_layers, input_size, self.params.lstm_hidden_dim)

    def test(self, x, v_batch, id_batch, hidden, cell, sampling=False):
        batch_size = x.shape[1]
        if sampling:
            samples = torch.zeros(self.params.sample_times, batch_size, self.params.predict_steps)
            for j in range(self.params.sample_times):
                decoder_hidden = hidden
                decoder_cell = cell
                for t in range(self.params.predict_steps):
                    mu_de, sigma_de, decoder_hidden, decoder_cell = self(x[self.params.predict_start + t].unsqueeze(0),
                                                                         id_batch, decoder_hidden, decoder_cell)
                    gaussian = torch.distributions.normal.Normal(mu_de, sigma_de)
                    pred = gaussian.sample()  # not scaled
                    samples[j, :, t] = pred * v_batch[:, 0] + v_batch[:, 1]
                    if t < (self.params.predict_steps - 1):
                        x[self.params.predict_start + t + 1, :, 0] = pred

            sample_mu = torch.median(samples, dim=0)[0]
            sample_sigma = samples.std(dim=0)
            return samples, sample_mu, sample_sigma
        else:
            decoder_hidden = hidden
            decoder_cell = cell
            sample_mu = torch.zeros(batch_size, self.params.predict_steps)
            sample_sigma = torch.zeros(batch_size, self.params.predict_steps)
            for t in range(self.params.predict_steps):
                mu_de, sigma_de, decoder_hidden, decoder_cell = self(x[self.params.predict_start + t].unsqueeze(0),
                                                                     id_batch, decoder_hidden, decoder_cell)
                sample_mu[:, t] = mu_de * v_batch[:, 0] + v_batch[:, 1]
                sample_sigma[:, t] = sigma_de * v_batch[:, 0]
                if t < (self.params.predict_steps - 1):
                    x[self.params.predict_start + t + 1, :, 0] = mu_de
            return sample_mu, sample_sigma


def loss_fn(mu, sigma, labels):
    zero_index = (labels != 0)
    distribution = torch.distributions.normal.Normal(mu[zero_index], sigma[zero_index])
    likelihood = distribution.log_prob(labels[zero_index])
    return -torch.mean(likelihood)


def loss_fn_nll(mu, sigma, labels):
    zero_index = (labels != 0)
    return F.gaussian_nll_loss(mu[zero_index], labels[zero_index], sigma[zero_index] ** 2, full=True)


class Params:
    pass


def make_windows(n_series, T, window, stride, cov_dim, rng):
    t = np.arange(T)
    series = np.stack([(10 + i) * (1.5 + np.sin(2 * np.pi * t / 12 + i)) + rng.gamma(2.0, 1.0 + i / 4, T)
                       for i in range(n_series)])
    xs, vs, ids, labels = [], [], [], []
    for i in range(n_series):
        for s in range(0, T - window, stride):
            w = series[i, s:s + window + 1]
            v = w[1:window // 2 + 1].mean() + 1
            inp = np.zeros((window, 1 + cov_dim), np.float32)
            inp[:, 0] = w[:-1] / v
            inp[:, 1] = np.sin(2 * np.pi * (np.arange(s, s + window) % 12) / 12)
            inp[:, 2] = (np.arange(s, s + window) % 7) / 7.0
            xs.append(inp)
            vs.append([v, 0.0])
            ids.append(i)
            labels.append(w[1:].astype(np.float32))
    return (torch.from_numpy(np.stack(xs)), torch.tensor(vs, dtype=torch.float32), torch.tensor(ids),
            torch.from_numpy(np.stack(labels)))


def main(argv=None):
    parser = argparse.ArgumentParser()
    parser.add_argument('--loss', default='normal', choices=['normal', 'nll', 'module'])
    parser.add_argument('--epochs', type=int, default=2)
    parser.add_argument('--sampling', action='store_true')
    parser.add_argument('--quiet', action='store_true')
    args = parser.parse_args(argv)
    log = (lambda *a: None) if args.quiet else print

    params = Params()
    params.num_class, params.embedding_dim, params.cov_dim = 4, 3, 2
    params.lstm_hidden_dim, params.lstm_layers, params.lstm_dropout = 16, 2, 0.1
    params.train_window, params.predict_start, params.predict_steps = 16, 12, 4
    params.sample_times, params.batch_size, params.learning_rate = 5, 8, 1e-2

    torch.manual_seed(0)
    rng = np.random.RandomState(0)
    train_x, train_v, train_id, train_labels = make_windows(4, 80, params.train_window, 4, params.cov_dim, rng)
    test_x, test_v, test_id, test_labels = train_x[-8:].clone(), train_v[-8:], train_id[-8:], train_labels[-8:]

    model = Net(params)
    initial_state = {k: v.clone() for k, v in model.state_dict().items()}
    optimizer = torch.optim.Adam(model.parameters(), lr=params.learning_rate)
    criterion = {'normal': loss_fn, 'nll': loss_fn_nll}.get(args.loss)
    module_loss = nn.GaussianNLLLoss(full=True, eps=1e-6)

    step_losses = []
    for epoch in range(args.epochs):
        model.train()
        perm = torch.randperm(train_x.shape[0])
        for b in range(train_x.shape[0] // params.batch_size):
            idx = perm[b * params.batch_size:(b + 1) * params.batch_size]
            train_batch = train_x[idx].permute(1, 0, 2).to(torch.float32)
            labels_batch = (train_labels[idx] / train_v[idx, :1]).permute(1, 0).to(torch.float32)
            idx_batch = train_id[idx].unsqueeze(0)
            batch_size = train_batch.shape[1]

            optimizer.zero_grad()
            loss = torch.zeros(1)
            hidden = model.init_hidden(batch_size)
            cell = model.init_cell(batch_size)

            for t in range(params.train_window):
                # if z_t is missing, replace it by output mu from the last time step
                zero_index = (train_batch[t, :, 0] == 0)
                if t > 0 and torch.sum(zero_index) > 0:
                    train_batch[t, zero_index, 0] = mu[zero_index]
                mu, sigma, hidden, cell = model(train_batch[t].unsqueeze_(0).clone(), idx_batch, hidden, cell)
                if criterion is None:
                    loss += module_loss(mu, labels_batch[t], sigma ** 2)
                else:
                    loss += criterion(mu, sigma, labels_batch[t])

            loss.backward()
            optimizer.step()
            loss = loss.item() / params.train_window  # loss per timestep
            step_losses.append(loss)
            log("epoch", epoch, "batch", b, "loss", loss)

    model.eval()
    with torch.no_grad():
        test_batch = test_x.permute(1, 0, 2).to(torch.float32).clone()
        id_batch = test_id.unsqueeze(0)
        v_batch = test_v
        labels = test_labels
        batch_size = test_batch.shape[1]
        hidden = model.init_hidden(batch_size)
        cell = model.init_cell(batch_size)
        for t in range(params.predict_start):
            mu, sigma, hidden, cell = model(test_batch[t].unsqueeze(0), id_batch, hidden, cell)
        if args.sampling:
            samples, sample_mu, sample_sigma = model.test(test_batch, v_batch, id_batch, hidden, cell, sampling=True)
        else:
            sample_mu, sample_sigma = model.test(test_batch, v_batch, id_batch, hidden, cell)
            samples = None
        target = labels[:, params.predict_start:]
        nd = torch.sum(torch.abs(sample_mu - target)).item() / torch.sum(torch.abs(target)).item()
        rmse = torch.sqrt(torch.mean((sample_mu - target) ** 2)).item() / torch.mean(torch.abs(target)).item()
    out = {"initial_state": initial_state, "step_losses": step_losses, "sample_mu": sample_mu,
           "sample_sigma": sample_sigma, "nd": nd, "rmse": rmse}
    if samples is not None:
        out["samples"] = samples
    return out


if __name__ == "__main__":
    main()
