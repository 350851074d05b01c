"""pytorch/examples word_language_model's LSTM language model with its decoder swapped for
nn.AdaptiveLogSoftmaxWithLoss, as the adaptive-softmax forks of it do (a frequency-sorted vocabulary,
cutoffs splitting it into a shortlist and tail clusters, div_value=4.0): batchify, get_batch with
bptt, repackage_hidden, `output, loss = model.crit(output.view(-1, nhid), targets)` in training,
clip_grad_norm_ and the manual update p.data.add_(p.grad, alpha=-lr), evaluation by the same loss and by
the full crit.log_prob(...) gathered at the targets, greedy generation with crit.predict, and the
learning-rate annealing by 4 when the validation loss stops improving. The corpus is Zipf-distributed
synthetic words."""
import argparse
import math

import numpy as np

import torch
import torch.nn as nn


class Dictionary(object):
    def __init__(self):
        self.word2idx = {}
        self.idx2word = []

    def add_word(self, word):
        if word not in self.word2idx:
            self.idx2word.append(word)
            self.word2idx[word] = len(self.idx2word) - 1
        return self.word2idx[word]

    def __len__(self):
        return len(self.idx2word)


class Corpus(object):
    def __init__(self, n_words, vocab, seed):
        rng = np.random.RandomState(seed)
        # a Zipf-like unigram distribution with some bigram structure
        ranks = np.arange(1, vocab + 1)
        probs = 1.0 / ranks ** 1.1
        probs /= probs.sum()
        words = ["w%d" % r for r in range(vocab)]
        toks = []
        prev = 0
        for _ in range(n_words):
            if rng.rand() < 0.4:
                nxt = (prev * 7 + 3) % vocab
            else:
                nxt = int(rng.choice(vocab, p=probs))
            toks.append(nxt)
            prev = nxt
        self.dictionary = Dictionary()
        # sorted by frequency, as the adaptive softmax requires
        counts = np.bincount(toks, minlength=vocab)
        order = np.argsort(-counts, kind="stable")
        for i in order:
            self.dictionary.add_word(words[i])
        ids = [self.dictionary.word2idx[words[t]] for t in toks]
        n = len(ids)
        self.train = torch.tensor(ids[:int(n * 0.8)], dtype=torch.int64)
        self.valid = torch.tensor(ids[int(n * 0.8):int(n * 0.9)], dtype=torch.int64)
        self.test = torch.tensor(ids[int(n * 0.9):], dtype=torch.int64)


class RNNModel(nn.Module):
    """Container module with an encoder, a recurrent module, and an adaptive softmax."""

    def __init__(self, rnn_type, ntoken, ninp, nhid, nlayers, cutoffs, dropout=0.5):
        super(RNNModel, self).__init__()
        self.ntoken = ntoken
        self.drop = nn.Dropout(dropout)
        self.encoder = nn.Embedding(ntoken, ninp)
        self.rnn = getattr(nn, rnn_type)(ninp, nhid, nlayers, dropout=dropout)
        self.crit = nn.AdaptiveLogSoftmaxWithLoss(nhid, ntoken, cutoffs=cutoffs, div_value=4.0)

        self.init_weights()

        self.rnn_type = rnn_type
        self.nhid = nhid
        self.nlayers = nlayers

    def init_weights(self):
        initrange = 0.1
        nn.init.uniform_(self.encoder.weight, -initrange, initrange)

    def forward(self, input, hidden):
        emb = self.drop(self.encoder(input))
        output, hidden = self.rnn(emb, hidden)
        output = self.drop(output)
        return output, hidden

    def init_hidden(self, bsz):
        weight = next(self.parameters())
        if self.rnn_type == 'LSTM':
            return (weight.new_zeros(self.nlayers, bsz, self.nhid),
                    weight.new_zeros(self.nlayers, bsz, self.nhid))
        else:
            return weight.new_zeros(self.nlayers, bsz, self.nhid)


def batchify(data, bsz):
    # Work out how cleanly we can divide the dataset into bsz parts.
    nbatch = data.size(0) // bsz
    # Trim off any extra elements that wouldn't cleanly fit (remainders).
    data = data.narrow(0, 0, nbatch * bsz)
    # Evenly divide the data across the bsz batches.
    data = data.view(bsz, -1).t().contiguous()
    return data


def repackage_hidden(h):
    """Wraps hidden states in new Tensors, to detach them from their history."""

    if isinstance(h, torch.Tensor):
        return h.detach()
    else:
        return tuple(repackage_hidden(v) for v in h)


def get_batch(source, i, bptt):
    seq_len = min(bptt, len(source) - 1 - i)
    data = source[i:i+seq_len]
    target = source[i+1:i+1+seq_len].view(-1)
    return data, target


def main(argv=None):
    parser = argparse.ArgumentParser(description='PyTorch RNN/LSTM Language Model with an adaptive softmax')
    parser.add_argument('--model', type=str, default='LSTM')
    parser.add_argument('--emsize', type=int, default=200)
    parser.add_argument('--nhid', type=int, default=200)
    parser.add_argument('--nlayers', type=int, default=2)
    parser.add_argument('--lr', type=float, default=20)
    parser.add_argument('--clip', type=float, default=0.25)
    parser.add_argument('--epochs', type=int, default=40)
    parser.add_argument('--batch_size', type=int, default=20, metavar='N')
    parser.add_argument('--bptt', type=int, default=35)
    parser.add_argument('--dropout', type=float, default=0.2)
    parser.add_argument('--cutoffs', nargs='+', type=int, default=[20, 100])
    parser.add_argument('--seed', type=int, default=1111)
    parser.add_argument('--words', type=int, default=20000)
    parser.add_argument('--vocab', type=int, default=400)
    parser.add_argument('--log-interval', type=int, default=200, metavar='N')
    parser.add_argument('--quiet', action='store_true')
    args = parser.parse_args(argv)
    log = (lambda *a: None) if args.quiet else print

    # Set the random seed manually for reproducibility.
    torch.manual_seed(args.seed)
    device = torch.device("cpu")

    corpus = Corpus(args.words, args.vocab, 5)
    eval_batch_size = 10
    train_data = batchify(corpus.train, args.batch_size)
    val_data = batchify(corpus.valid, eval_batch_size)
    test_data = batchify(corpus.test, eval_batch_size)

    ntokens = len(corpus.dictionary)
    model = RNNModel(args.model, ntokens, args.emsize, args.nhid, args.nlayers, args.cutoffs, args.dropout).to(device)
    initial_state = {k: v.clone() for k, v in model.state_dict().items()}
    record = {'initial_state': initial_state, 'step_losses': [], 'val_losses': [], 'lrs': []}

    def evaluate(data_source):
        # Turn on evaluation mode which disables dropout.
        model.eval()
        total_loss = 0.
        total_full = 0.
        hidden = model.init_hidden(eval_batch_size)
        with torch.no_grad():
            for i in range(0, data_source.size(0) - 1, args.bptt):
                data, targets = get_batch(data_source, i, args.bptt)
                output, hidden = model(data, hidden)
                flat = output.view(-1, args.nhid)
                _, loss = model.crit(flat, targets)
                full = model.crit.log_prob(flat).gather(1, targets.unsqueeze(1))
                total_loss += len(data) * loss.item()
                total_full += -full.sum().item() / flat.size(0) * len(data)
                hidden = repackage_hidden(hidden)
        return total_loss / (len(data_source) - 1), total_full / (len(data_source) - 1)

    def train(lr, epoch):
        # Turn on training mode which enables dropout.
        model.train()
        total_loss = 0.
        hidden = model.init_hidden(args.batch_size)
        for batch, i in enumerate(range(0, train_data.size(0) - 1, args.bptt)):
            data, targets = get_batch(train_data, i, args.bptt)
            # Starting each batch, we detach the hidden state from how it was previously produced.
            # If we didn't, the model would try backpropagating all the way to start of the dataset.
            model.zero_grad()
            hidden = repackage_hidden(hidden)
            output, hidden = model(data, hidden)
            output, loss = model.crit(output.view(-1, args.nhid), targets)
            loss.backward()

            # `clip_grad_norm` helps prevent the exploding gradient problem in RNNs / LSTMs.
            torch.nn.utils.clip_grad_norm_(model.parameters(), args.clip)
            for p in model.parameters():
                p.data.add_(p.grad, alpha=-lr)

            total_loss += loss.item()
            record['step_losses'].append(loss.item())

            if batch % args.log_interval == 0 and batch > 0:
                cur_loss = total_loss / args.log_interval
                log('| epoch {:3d} | {:5d}/{:5d} batches | lr {:02.2f} | loss {:5.2f} | ppl {:8.2f}'.format(
                    epoch, batch, len(train_data) // args.bptt, lr, cur_loss, math.exp(cur_loss)))
                total_loss = 0

    # Loop over epochs.
    lr = args.lr
    best_val_loss = None
    best_state = None
    for epoch in range(1, args.epochs+1):
        train(lr, epoch)
        val_loss, val_full = evaluate(val_data)
        record['val_losses'].append((val_loss, val_full))
        record['lrs'].append(lr)
        log('| end of epoch {:3d} | valid loss {:5.2f} | valid ppl {:8.2f}'.format(epoch, val_loss, math.exp(val_loss)))
        # Save the model if the validation loss is the best we've seen so far.
        if not best_val_loss or val_loss < best_val_loss:
            best_state = {k: v.clone() for k, v in model.state_dict().items()}
            best_val_loss = val_loss
        else:
            # Anneal the learning rate if no improvement has been seen in the validation dataset.
            lr /= 4.0

    model.load_state_dict(best_state)
    record['test'] = evaluate(test_data)

    # greedy generation through crit.predict
    model.eval()
    hidden = model.init_hidden(1)
    input = torch.tensor([[0]], dtype=torch.long)
    words = []
    with torch.no_grad():
        for i in range(30):
            output, hidden = model(input, hidden)
            word_idx = model.crit.predict(output.view(-1, args.nhid))
            input.fill_(word_idx.item())
            words.append(corpus.dictionary.idx2word[word_idx.item()])
    record['generated'] = words
    return record


if __name__ == '__main__':
    main()
