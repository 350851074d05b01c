"""locuslab/TCN: TCN/tcn.py (Chomp1d's x[:, :, :-self.chomp_size].contiguous(), TemporalBlock of two
weight_norm(nn.Conv1d(..., padding=padding, dilation=dilation)) with chomp, ReLU and Dropout, a 1x1
downsample, init_weights' .weight.data.normal_(0, 0.01), TemporalConvNet with dilation 2 ** i) and two
of its experiments: adding_problem (data_generator's torch.rand / torch.zeros marker positions picked by
np.random.choice, the TCN + Linear on y1[:, :, -1], F.mse_loss, clip_grad_norm_, getattr(optim,
args.optim)) and char_cnn (an Embedding + TCN + tied-free decoder over Penn-Treebank characters with
nn.CrossEntropyLoss on output[:, eff_history:] and the learning rate divided by 10 when the
validation loss stalls). The datasets are synthetic."""
import argparse

import numpy as np

import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim
from torch.nn.utils import weight_norm


class Chomp1d(nn.Module):
    def __init__(self, chomp_size):
        super(Chomp1d, self).__init__()
        self.chomp_size = chomp_size

    def forward(self, x):
        return x[:, :, :-self.chomp_size].contiguous()


class TemporalBlock(nn.Module):
    def __init__(self, n_inputs, n_outputs, kernel_size, stride, dilation, padding, dropout=0.2):
        super(TemporalBlock, self).__init__()
        self.conv1 = weight_norm(nn.Conv1d(n_inputs, n_outputs, kernel_size,
                                           stride=stride, padding=padding, dilation=dilation))
        self.chomp1 = Chomp1d(padding)
        self.relu1 = nn.ReLU()
        self.dropout1 = nn.Dropout(dropout)

        self.conv2 = weight_norm(nn.Conv1d(n_outputs, n_outputs, kernel_size,
                                           stride=stride, padding=padding, dilation=dilation))
        self.chomp2 = Chomp1d(padding)
        self.relu2 = nn.ReLU()
        self.dropout2 = nn.Dropout(dropout)

        self.net = nn.Sequential(self.conv1, self.chomp1, self.relu1, self.dropout1,
                                 self.conv2, self.chomp2, self.relu2, self.dropout2)
        self.downsample = nn.Conv1d(n_inputs, n_outputs, 1) if n_inputs != n_outputs else None
        self.relu = nn.ReLU()
        self.init_weights()

    def init_weights(self):
        self.conv1.weight.data.normal_(0, 0.01)
        self.conv2.weight.data.normal_(0, 0.01)
        if self.downsample is not None:
            self.downsample.weight.data.normal_(0, 0.01)

    def forward(self, x):
        out = self.net(x)
        res = x if self.downsample is None else self.downsample(x)
        return self.relu(out + res)


class TemporalConvNet(nn.Module):
    def __init__(self, num_inputs, num_channels, kernel_size=2, dropout=0.2):
        super(TemporalConvNet, self).__init__()
        layers = []
        num_levels = len(num_channels)
        for i in range(num_levels):
            dilation_size = 2 ** i
            in_channels = num_inputs if i == 0 else num_channels[i-1]
            out_channels = num_channels[i]
            layers += [TemporalBlock(in_channels, out_channels, kernel_size, stride=1, dilation=dilation_size,
                                     padding=(kernel_size-1) * dilation_size, dropout=dropout)]

        self.network = nn.Sequential(*layers)

    def forward(self, x):
        return self.network(x)


# ---- adding_problem/model.py, utils.py, add_test.py ----------------------------------------------------------
class TCN(nn.Module):
    def __init__(self, input_size, output_size, num_channels, kernel_size, dropout):
        super(TCN, self).__init__()
        self.tcn = TemporalConvNet(input_size, num_channels, kernel_size=kernel_size, dropout=dropout)
        self.linear = nn.Linear(num_channels[-1], output_size)
        self.init_weights()

    def init_weights(self):
        self.linear.weight.data.normal_(0, 0.01)

    def forward(self, x):
        y1 = self.tcn(x)
        return self.linear(y1[:, :, -1])


def data_generator(N, seq_length):
    """
    Args:
        seq_length: Length of the adding problem data
        N: # of data in the set
    """
    X_num = torch.rand([N, 1, seq_length])
    X_mask = torch.zeros([N, 1, seq_length])
    Y = torch.zeros([N, 1])
    for i in range(N):
        positions = np.random.choice(seq_length, size=2, replace=False)
        X_mask[i, 0, positions[0]] = 1
        X_mask[i, 0, positions[1]] = 1
        Y[i, 0] = X_num[i, 0, positions[0]] + X_num[i, 0, positions[1]]
    X = torch.cat((X_num, X_mask), dim=1)
    return X, Y


def run_adding(args, log):
    torch.manual_seed(args.seed)
    np.random.seed(args.seed)
    input_channels = 2
    n_classes = 1
    batch_size = args.batch_size
    seq_length = args.seq_len
    epochs = args.epochs

    X_train, Y_train = data_generator(args.n_train, seq_length)
    X_test, Y_test = data_generator(args.n_test, seq_length)

    # Note: We use a very simple setting here (assuming all levels have the same # of channels.
    channel_sizes = [args.nhid]*args.levels
    kernel_size = args.ksize
    dropout = args.dropout
    model = TCN(input_channels, n_classes, channel_sizes, kernel_size=kernel_size, dropout=dropout)
    initial_state = {k: v.clone() for k, v in model.state_dict().items()}

    lr = args.lr
    optimizer = getattr(optim, args.optim)(model.parameters(), lr=lr)
    record = {'initial_state': initial_state, 'step_losses': [], 'test_losses': []}

    def train(epoch):
        model.train()
        batch_idx = 1
        total_loss = 0
        for i in range(0, X_train.size(0), batch_size):
            if i + batch_size > X_train.size(0):
                x, y = X_train[i:], Y_train[i:]
            else:
                x, y = X_train[i:(i+batch_size)], Y_train[i:(i+batch_size)]
            optimizer.zero_grad()
            output = model(x)
            loss = F.mse_loss(output, y)
            loss.backward()
            if args.clip > 0:
                torch.nn.utils.clip_grad_norm_(model.parameters(), args.clip)
            optimizer.step()
            batch_idx += 1
            total_loss += loss.item()
            record['step_losses'].append(loss.item())

    def evaluate():
        model.eval()
        with torch.no_grad():
            output = model(X_test)
            test_loss = F.mse_loss(output, Y_test)
            log('\nTest set: Average loss: {:.6f}\n'.format(test_loss.item()))
            return test_loss.item()

    for ep in range(1, epochs+1):
        train(ep)
        record['test_losses'].append(evaluate())
    return record


# ---- char_cnn/model.py, char_cnn_test.py ------------------------------------------------------------------------
class CharTCN(nn.Module):
    def __init__(self, input_size, output_size, num_channels, kernel_size=2, dropout=0.2, emb_dropout=0.2):
        super(CharTCN, self).__init__()
        self.encoder = nn.Embedding(output_size, input_size)
        self.tcn = TemporalConvNet(input_size, num_channels, kernel_size=kernel_size, dropout=dropout)
        self.decoder = nn.Linear(input_size, output_size)
        self.decoder.weight = self.encoder.weight
        self.drop = nn.Dropout(emb_dropout)
        self.init_weights()

    def init_weights(self):
        self.encoder.weight.data.normal_(0, 0.01)
        self.decoder.bias.data.fill_(0)
        self.decoder.weight.data.normal_(0, 0.01)

    def forward(self, x):
        # input has dimension (N, L_in), and emb has dimension (N, L_in, C_in)
        emb = self.drop(self.encoder(x))
        y = self.tcn(emb.transpose(1, 2))
        o = self.decoder(y.transpose(1, 2))
        return o.contiguous()


def run_char(args, log):
    torch.manual_seed(args.seed)
    rng = np.random.RandomState(args.seed)
    words = "the of and to a in is that for it as was with be by on not he i this are or his from at which".split()
    text = " ".join(rng.choice(words, size=args.n_words))
    chars = sorted(set(text))
    idx = torch.LongTensor([chars.index(c) for c in text])
    n_characters = len(chars)
    n = len(idx)
    train_data, val_data = idx[:int(n * 0.9)], idx[int(n * 0.9):]

    def batchify(data, batch_size):
        nbatch = data.size(0) // batch_size
        data = data.narrow(0, 0, nbatch * batch_size)
        data = data.view(batch_size, -1)
        return data

    def get_batch(source, start_index, seq_len, evaluation=False):
        seq_len = min(seq_len, source.size(1) - 1 - start_index)
        end_index = start_index + seq_len
        inp = source[:, start_index:end_index].contiguous()
        target = source[:, start_index+1:end_index+1].contiguous()  # The successors of the inp.
        return inp, target

    train_data = batchify(train_data, args.batch_size)
    val_data = batchify(val_data, 1)

    num_chans = [args.nhid] * (args.levels - 1) + [args.emsize]
    k_size = args.ksize
    dropout = args.dropout
    emb_dropout = args.dropout
    model = CharTCN(args.emsize, n_characters, num_chans, kernel_size=k_size, dropout=dropout, emb_dropout=emb_dropout)
    initial_state = {k: v.clone() for k, v in model.state_dict().items()}
    criterion = nn.CrossEntropyLoss()
    lr = args.lr
    optimizer = getattr(optim, args.optim)(model.parameters(), lr=lr)
    record = {'initial_state': initial_state, 'step_losses': [], 'val_losses': [], 'lrs': []}

    def evaluate(source):
        model.eval()
        total_loss = 0
        count = 0
        source_len = source.size(1)
        with torch.no_grad():
            for batch, i in enumerate(range(0, source_len - 1, args.validseqlen)):
                if i + args.seq_len - args.validseqlen >= source_len:
                    continue
                inp, target = get_batch(source, i, args.seq_len, evaluation=True)
                output = model(inp)
                eff_history = args.seq_len - args.validseqlen
                final_output = output[:, eff_history:].contiguous().view(-1, n_characters)
                final_target = target[:, eff_history:].contiguous().view(-1)
                loss = criterion(final_output, final_target)

                total_loss += loss.data * final_output.size(0)
                count += final_output.size(0)

            val_loss = total_loss.item() / count * 1.0
            return val_loss

    def train(epoch):
        model.train()
        total_loss = 0
        source = train_data
        source_len = source.size(1)
        for batch_idx, i in enumerate(range(0, source_len - 1, args.validseqlen)):
            if i + args.seq_len - args.validseqlen >= source_len:
                continue
            inp, target = get_batch(source, i, args.seq_len)
            optimizer.zero_grad()
            output = model(inp)
            eff_history = args.seq_len - args.validseqlen
            final_output = output[:, eff_history:].contiguous().view(-1, n_characters)
            final_target = target[:, eff_history:].contiguous().view(-1)
            loss = criterion(final_output, final_target)
            loss.backward()

            if args.clip > 0:
                torch.nn.utils.clip_grad_norm_(model.parameters(), args.clip)
            optimizer.step()
            total_loss += loss.item()
            record['step_losses'].append(loss.item())

    all_losses = []
    best_vloss = 1e7
    for epoch in range(1, args.epochs + 1):
        train(epoch)
        vloss = evaluate(val_data)
        record['val_losses'].append(vloss)
        log('| End of epoch {:3d} | valid loss {:5.3f} | valid bpc {:8.3f}'.format(epoch, vloss, vloss / np.log(2)))

        if epoch > 5 and vloss > max(all_losses[-3:]):
            lr = lr / 10.
            for param_group in optimizer.param_groups:
                param_group['lr'] = lr
        all_losses.append(vloss)
        record['lrs'].append(lr)

        if vloss < best_vloss:
            best_vloss = vloss
    return record


def main(argv=None):
    parser = argparse.ArgumentParser(description='Sequence Modeling - TCN')
    parser.add_argument('--task', choices=['adding', 'char'], default='adding')
    parser.add_argument('--batch_size', type=int, default=32, metavar='N')
    parser.add_argument('--dropout', type=float, default=0.0)
    parser.add_argument('--clip', type=float, default=-1)
    parser.add_argument('--epochs', type=int, default=10)
    parser.add_argument('--ksize', type=int, default=7)
    parser.add_argument('--levels', type=int, default=8)
    parser.add_argument('--seq_len', type=int, default=400)
    parser.add_argument('--validseqlen', type=int, default=40)
    parser.add_argument('--lr', type=float, default=4e-3)
    parser.add_argument('--optim', type=str, default='Adam')
    parser.add_argument('--nhid', type=int, default=30)
    parser.add_argument('--emsize', type=int, default=100)
    parser.add_argument('--seed', type=int, default=1111)
    parser.add_argument('--n_train', type=int, default=50000)
    parser.add_argument('--n_test', type=int, default=1000)
    parser.add_argument('--n_words', type=int, default=3000)
    parser.add_argument('--quiet', action='store_true')
    args = parser.parse_args(argv)
    log = (lambda *a: None) if args.quiet else print
    if args.task == 'adding':
        return run_adding(args, log)
    return run_char(args, log)


if __name__ == '__main__':
    main()
