"""The AWD-LSTM language model: fastai's text/models/awdlstm.py modules (dropout_mask's
x.new_empty(*sz).bernoulli_(1-p).div_(1-p), RNNDropout, WeightDropout wrapping nn.LSTM (delattr of
weight_hh_l0, a registered weight_hh_l0_raw Parameter, setattr(self.module, layer, F.dropout(raw_w))
before every call, flatten_parameters replaced by a no-op), EmbeddingDropout through F.embedding with
padding_idx, AWD_LSTM with batch-first LSTMs, its detached hidden states, _change_hidden on a new
batch size, reset(), LinearDecoder tied to the encoder) trained by salesforce/awd-lstm-lm's main.py
loop: batchify, get_batch, the variable BPTT length (np.random.random() < 0.95, np.random.normal(bptt,
5)) with the learning rate scaled by seq_len / bptt, activation and temporal activation regularization
(dropped_rnn_h.pow(2).mean(), (rnn_h[1:] - rnn_h[:-1]).pow(2).mean()), clip_grad_norm_, evaluation
without dropout, and NT-ASGD: the switch from SGD to torch.optim.ASGD(t0=0, lambd=0.) when the
validation loss stops improving, then evaluating with the averaged weights (prm.data =
optimizer.state[prm]['ax'].clone()) and restoring them. The Penn Treebank is a generated corpus."""
import argparse
import math
import random
import warnings

import numpy as np

import torch
import torch.nn as nn
import torch.nn.functional as F


# ---- fastai/text/models/awdlstm.py ----------------------------------------------------------------------------
def dropout_mask(x, sz, p):
    "Return a dropout mask of the same type as `x`, size `sz`, with probability `p` to cancel an element."
    return x.new_empty(*sz).bernoulli_(1-p).div_(1-p)


class RNNDropout(nn.Module):
    "Dropout with probability `p` that is consistent on the seq_len dimension."
    def __init__(self, p=0.5):
        super().__init__()
        self.p = p

    def forward(self, x):
        if not self.training or self.p == 0.:
            return x
        return x * dropout_mask(x.data, (x.size(0), 1, *x.shape[2:]), self.p)


class WeightDropout(nn.Module):
    "A module that wraps another layer in which some weights will be replaced by 0 during training."

    def __init__(self, module, weight_p, layer_names='weight_hh_l0'):
        super().__init__()
        self.module, self.weight_p = module, weight_p
        self.layer_names = [layer_names] if isinstance(layer_names, str) else list(layer_names)
        for layer in self.layer_names:
            #Makes a copy of the weights of the selected layers.
            w = getattr(self.module, layer)
            delattr(self.module, layer)
            self.register_parameter(f'{layer}_raw', nn.Parameter(w.data))
            setattr(self.module, layer, w.clone())
            if isinstance(self.module, (nn.RNNBase, nn.modules.rnn.RNNBase)):
                self.module.flatten_parameters = self._do_nothing

    def _setweights(self):
        "Apply dropout to the raw weights."
        for layer in self.layer_names:
            raw_w = getattr(self, f'{layer}_raw')
            if self.training:
                w = F.dropout(raw_w, p=self.weight_p)
            else:
                w = raw_w.clone()
            setattr(self.module, layer, w)

    def forward(self, *args):
        self._setweights()
        with warnings.catch_warnings():
            # To avoid the warning that comes because the weights aren't flattened.
            warnings.simplefilter("ignore", category=UserWarning)
            return self.module(*args)

    def reset(self):
        for layer in self.layer_names:
            raw_w = getattr(self, f'{layer}_raw')
            setattr(self.module, layer, raw_w.clone())
        if hasattr(self.module, 'reset'):
            self.module.reset()

    def _do_nothing(self):
        pass


class EmbeddingDropout(nn.Module):
    "Apply dropout with probability `embed_p` to an embedding layer `emb`."

    def __init__(self, emb, embed_p):
        super().__init__()
        self.emb, self.embed_p = emb, embed_p

    def forward(self, words, scale=None):
        if self.training and self.embed_p != 0:
            size = (self.emb.weight.size(0), 1)
            mask = dropout_mask(self.emb.weight.data, size, self.embed_p)
            masked_embed = self.emb.weight * mask
        else:
            masked_embed = self.emb.weight
        if scale:
            masked_embed.mul_(scale)
        return F.embedding(words, masked_embed, self.emb.padding_idx if self.emb.padding_idx is not None else -1,
                           self.emb.max_norm, self.emb.norm_type, self.emb.scale_grad_by_freq, self.emb.sparse)


def one_param(m):
    "First parameter in `m`"
    return next(iter(m.parameters()))


def to_detach(b):
    "Recursively detach lists of tensors in `b `"
    if isinstance(b, (list, tuple)):
        return type(b)(to_detach(o) for o in b)
    return b.detach()


class AWD_LSTM(nn.Module):
    "AWD-LSTM inspired by https://arxiv.org/abs/1708.02182"
    initrange = 0.1

    def __init__(self, vocab_sz, emb_sz, n_hid, n_layers, pad_token=1, hidden_p=0.2, input_p=0.6, embed_p=0.1,
                 weight_p=0.5, bidir=False):
        super().__init__()
        self.emb_sz, self.n_hid, self.n_layers, self.pad_token = emb_sz, n_hid, n_layers, pad_token
        self.bs = 1
        self.n_dir = 2 if bidir else 1
        self.encoder = nn.Embedding(vocab_sz, emb_sz, padding_idx=pad_token)
        self.encoder_dp = EmbeddingDropout(self.encoder, embed_p)
        self.rnns = nn.ModuleList([self._one_rnn(emb_sz if l == 0 else n_hid, (n_hid if l != n_layers - 1 else emb_sz)//self.n_dir,
                                                 bidir, weight_p, l) for l in range(n_layers)])
        self.encoder.weight.data.uniform_(-self.initrange, self.initrange)
        self.input_dp = RNNDropout(input_p)
        self.hidden_dps = nn.ModuleList([RNNDropout(hidden_p) for l in range(n_layers)])
        self.reset()

    def forward(self, inp, from_embeds=False):
        bs, sl = inp.shape[:2] if from_embeds else inp.shape
        if bs != self.bs:
            self._change_hidden(bs)

        output = self.input_dp(inp if from_embeds else self.encoder_dp(inp))
        new_hidden = []
        raw_outputs, outputs = [], []
        for l, (rnn, hid_dp) in enumerate(zip(self.rnns, self.hidden_dps)):
            output, new_h = rnn(output, self.hidden[l])
            new_hidden.append(new_h)
            raw_outputs.append(output)
            if l != self.n_layers - 1:
                output = hid_dp(output)
            outputs.append(output)
        self.hidden = to_detach(new_hidden)
        return raw_outputs, outputs

    def _change_hidden(self, bs):
        self.hidden = [self._change_one_hidden(l, bs) for l in range(self.n_layers)]
        self.bs = bs

    def _one_rnn(self, n_in, n_out, bidir, weight_p, l):
        "Return one of the inner rnn"
        rnn = nn.LSTM(n_in, n_out, 1, batch_first=True, bidirectional=bidir)
        return WeightDropout(rnn, weight_p)

    def _one_hidden(self, l):
        "Return one hidden state"
        nh = (self.n_hid if l != self.n_layers - 1 else self.emb_sz) // self.n_dir
        return (one_param(self).new_zeros(self.n_dir, self.bs, nh), one_param(self).new_zeros(self.n_dir, self.bs, nh))

    def _change_one_hidden(self, l, bs):
        if self.bs < bs:
            nh = (self.n_hid if l != self.n_layers - 1 else self.emb_sz) // self.n_dir
            return tuple(torch.cat([h, h.new_zeros(self.n_dir, bs-self.bs, nh)], dim=1) for h in self.hidden[l])
        if self.bs > bs:
            return (self.hidden[l][0][:, :bs].contiguous(), self.hidden[l][1][:, :bs].contiguous())
        return self.hidden[l]

    def reset(self):
        "Reset the hidden states"
        [r.reset() for r in self.rnns if hasattr(r, 'reset')]
        self.hidden = [self._one_hidden(l) for l in range(self.n_layers)]


class LinearDecoder(nn.Module):
    "To go on top of a RNNCore module and create a Language Model."
    initrange = 0.1

    def __init__(self, n_out, n_hid, output_p=0.1, tie_encoder=None, bias=True):
        super().__init__()
        self.decoder = nn.Linear(n_hid, n_out, bias=bias)
        self.decoder.weight.data.uniform_(-self.initrange, self.initrange)
        self.output_dp = RNNDropout(output_p)
        if bias:
            self.decoder.bias.data.zero_()
        if tie_encoder:
            self.decoder.weight = tie_encoder.weight

    def forward(self, input):
        raw_outputs, outputs = input
        dp_inp = self.output_dp(outputs[-1])
        return self.decoder(dp_inp), raw_outputs, outputs[:-1] + [dp_inp]


class SequentialRNN(nn.Sequential):
    "A sequential module that passes the reset call to its children."
    def reset(self):
        for c in self.children():
            if hasattr(c, 'reset'):
                c.reset()


# ---- salesforce/awd-lstm-lm: data.py, utils.py ---------------------------------------------------------------
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


def synthetic_ptb(n_sentences, seed):
    rng = random.Random(seed)
    subjects = ["the company", "the market", "investors", "the government", "analysts", "the bank", "traders"]
    verbs = ["said", "expects", "reported", "sold", "bought", "raised", "cut"]
    objects = ["shares", "prices", "the stock", "interest rates", "its stake", "N million", "the bonds"]
    tails = ["last year", "in the quarter", "on monday", "<unk>", "by N %", "yesterday"]
    return [" ".join([rng.choice(subjects), rng.choice(verbs), rng.choice(objects), rng.choice(tails)])
            for _ in range(n_sentences)]


def tokenize(dictionary, lines):
    ids = []
    for line in lines:
        words = line.split() + ['<eos>']
        for word in words:
            ids.append(dictionary.add_word(word))
    return torch.LongTensor(ids)


def batchify(data, bsz, args):
    # Work out how cleanly we can divide the dataset into bsz parts.
    nbatch = data.size(0) // bsz
    # Trim off any extra elements that wouldn't cleanly fit (remainders).
    data = data.narrow(0, 0, nbatch * bsz)
    # Evenly divide the data across the bsz batches.
    data = data.view(bsz, -1).t().contiguous()
    return data


def get_batch(source, i, args, seq_len=None, evaluation=False):
    seq_len = min(seq_len if seq_len else args.bptt, len(source) - 1 - i)
    data = source[i:i+seq_len]
    target = source[i+1:i+1+seq_len].view(-1)
    return data, target


def main(argv=None):
    parser = argparse.ArgumentParser(description='PyTorch PennTreeBank RNN/LSTM Language Model')
    parser.add_argument('--emsize', type=int, default=400, help='size of word embeddings')
    parser.add_argument('--nhid', type=int, default=1150, help='number of hidden units per layer')
    parser.add_argument('--nlayers', type=int, default=3, help='number of layers')
    parser.add_argument('--lr', type=float, default=30, help='initial learning rate')
    parser.add_argument('--clip', type=float, default=0.25, help='gradient clipping')
    parser.add_argument('--epochs', type=int, default=8000, help='upper epoch limit')
    parser.add_argument('--batch_size', type=int, default=80, metavar='N', help='batch size')
    parser.add_argument('--bptt', type=int, default=70, help='sequence length')
    parser.add_argument('--dropout', type=float, default=0.4, help='dropout applied to layers (0 = no dropout)')
    parser.add_argument('--dropouth', type=float, default=0.3, help='dropout for rnn layers (0 = no dropout)')
    parser.add_argument('--dropouti', type=float, default=0.65, help='dropout for input embedding layers (0 = no dropout)')
    parser.add_argument('--dropoute', type=float, default=0.1, help='dropout to remove words from embedding layer (0 = no dropout)')
    parser.add_argument('--wdrop', type=float, default=0.5, help='amount of weight dropout to apply to the RNN hidden to hidden matrix')
    parser.add_argument('--seed', type=int, default=1111, help='random seed')
    parser.add_argument('--nonmono', type=int, default=5, help='random seed')
    parser.add_argument('--alpha', type=float, default=2, help='alpha L2 regularization on RNN activation (alpha = 0 means no regularization)')
    parser.add_argument('--beta', type=float, default=1, help='beta slowness regularization applied on RNN activiation (beta = 0 means no regularization)')
    parser.add_argument('--wdecay', type=float, default=1.2e-6, help='weight decay applied to all weights')
    parser.add_argument('--optimizer', type=str,  default='sgd', help='optimizer to use (sgd, adam)')
    parser.add_argument('--when', nargs="+", type=int, default=[-1], help='When (which epochs) to divide the learning rate by 10 - accepts multiple')
    parser.add_argument('--sentences', type=int, default=3000)
    parser.add_argument('--quiet', action='store_true')
    args = parser.parse_args(argv)
    args.tied = True
    log = (lambda *a: None) if args.quiet else print

    # Set the random seed manually for reproducibility.
    np.random.seed(args.seed)
    torch.manual_seed(args.seed)

    dictionary = Dictionary()
    dictionary.add_word('<pad>')
    dictionary.add_word('xxpad')  # fastai's pad_token=1
    train_ids = tokenize(dictionary, synthetic_ptb(args.sentences, 1))
    valid_ids = tokenize(dictionary, synthetic_ptb(args.sentences // 10, 2))

    eval_batch_size = 10
    test_batch_size = 1
    train_data = batchify(train_ids, args.batch_size, args)
    val_data = batchify(valid_ids, eval_batch_size, args)

    ntokens = len(dictionary)
    encoder = AWD_LSTM(ntokens, args.emsize, args.nhid, args.nlayers, pad_token=1, hidden_p=args.dropouth,
                       input_p=args.dropouti, embed_p=args.dropoute, weight_p=args.wdrop)
    model = SequentialRNN(encoder, LinearDecoder(ntokens, args.emsize, args.dropout, tie_encoder=encoder.encoder))
    initial_state = {k: v.clone() for k, v in model.state_dict().items()}
    criterion = nn.CrossEntropyLoss()
    params = list(model.parameters())
    total_params = sum(x.size()[0] * x.size()[1] if len(x.size()) > 1 else x.size()[0] for x in params if x.size())
    log('Model total parameters:', total_params)

    record = {'initial_state': initial_state, 'step_losses': [], 'seq_lens': [], 'val_losses': [], 'switched': None,
              'grad_norms': []}

    def evaluate(data_source, batch_size=10):
        # Turn on evaluation mode which disables dropout.
        model.eval()
        model.reset()
        total_loss = 0
        with torch.no_grad():
            for i in range(0, data_source.size(0) - 1, args.bptt):
                data, targets = get_batch(data_source, i, args, evaluation=True)
                output, _, _ = model(data.t())
                total_loss += len(data) * criterion(output.transpose(0, 1).reshape(-1, ntokens), targets).data
        return total_loss.item() / len(data_source)

    def train(optimizer):
        # Turn on training mode which enables dropout.
        total_loss = 0
        batch, i = 0, 0
        model.reset()
        while i < train_data.size(0) - 1 - 1:
            bptt = args.bptt if np.random.random() < 0.95 else args.bptt / 2.
            # Prevent excessively small or negative sequence lengths
            seq_len = max(5, int(np.random.normal(bptt, 5)))
            # There's a very small chance that it could select a very long sequence length resulting in OOM
            # seq_len = min(seq_len, args.bptt + 10)

            lr2 = optimizer.param_groups[0]['lr']
            optimizer.param_groups[0]['lr'] = lr2 * seq_len / args.bptt
            model.train()
            data, targets = get_batch(train_data, i, args, seq_len=seq_len)

            # Starting each batch, we detach the hidden state from how it was previously produced.
            # If we didn't, the model would try backpropagating all the way to start of the dataset.
            optimizer.zero_grad()

            output, rnn_hs, dropped_rnn_hs = model(data.t())
            raw_loss = criterion(output.transpose(0, 1).reshape(-1, ntokens), targets)

            loss = raw_loss
            # Activiation Regularization
            if args.alpha:
                loss = loss + sum(args.alpha * dropped_rnn_h.pow(2).mean() for dropped_rnn_h in dropped_rnn_hs[-1:])
            # Temporal Activation Regularization (slowness)
            if args.beta:
                loss = loss + sum(args.beta * (rnn_h[:, 1:] - rnn_h[:, :-1]).pow(2).mean() for rnn_h in rnn_hs[-1:])
            loss.backward()

            # `clip_grad_norm` helps prevent the exploding gradient problem in RNNs / LSTMs.
            if args.clip:
                record['grad_norms'].append(float(torch.nn.utils.clip_grad_norm_(params, args.clip)))
            optimizer.step()

            total_loss += raw_loss.data
            optimizer.param_groups[0]['lr'] = lr2
            record['step_losses'].append(raw_loss.item())
            record['seq_lens'].append(seq_len)
            batch += 1
            i += seq_len
        return total_loss.item() / batch

    # Loop over epochs.
    lr = args.lr
    best_val_loss = []
    stored_loss = 100000000
    saved = {}

    optimizer = None
    # Ensure the optimizer is optimizing params, which includes both the model's weights as well as the criterion's weight (i.e. Adaptive Softmax)
    if args.optimizer == 'sgd':
        optimizer = torch.optim.SGD(params, lr=args.lr, weight_decay=args.wdecay)
    if args.optimizer == 'adam':
        optimizer = torch.optim.Adam(params, lr=args.lr, weight_decay=args.wdecay)
    for epoch in range(1, args.epochs+1):
        train_loss = train(optimizer)
        if 't0' in optimizer.param_groups[0]:
            tmp = {}
            for prm in model.parameters():
                tmp[prm] = prm.data.clone()
                prm.data = optimizer.state[prm]['ax'].clone()

            val_loss2 = evaluate(val_data)
            record['val_losses'].append(val_loss2)
            log('| end of epoch {:3d} | valid loss {:5.2f} | valid ppl {:8.2f} | (averaged)'.format(
                epoch, val_loss2, math.exp(val_loss2)))

            if val_loss2 < stored_loss:
                saved = {k: v.clone() for k, v in model.state_dict().items()}
                log('Saving Averaged (new best validation)')
                stored_loss = val_loss2

            for prm in model.parameters():
                prm.data = tmp[prm].clone()

        else:
            val_loss = evaluate(val_data, eval_batch_size)
            record['val_losses'].append(val_loss)
            log('| end of epoch {:3d} | train loss {:5.2f} | valid loss {:5.2f} | valid ppl {:8.2f}'.format(
                epoch, train_loss, val_loss, math.exp(val_loss)))

            if val_loss < stored_loss:
                saved = {k: v.clone() for k, v in model.state_dict().items()}
                log('Saving model (new best validation)')
                stored_loss = val_loss

            if args.optimizer == 'sgd' and 't0' not in optimizer.param_groups[0] and (len(best_val_loss)>args.nonmono and val_loss > min(best_val_loss[:-args.nonmono])):
                log('Switching to ASGD')
                record['switched'] = epoch
                optimizer = torch.optim.ASGD(model.parameters(), lr=args.lr, t0=0, lambd=0., weight_decay=args.wdecay)

            if epoch in args.when:
                log('Dividing learning rate by 10')
                optimizer.param_groups[0]['lr'] /= 10.

            best_val_loss.append(val_loss)

    model.load_state_dict(saved)
    record['final_val'] = evaluate(val_data, eval_batch_size)
    # a batch of another size: AWD_LSTM._change_hidden
    model.eval()
    model.reset()
    with torch.no_grad():
        out3 = model(val_data[:8, :3].t())[0]
        out5 = model(val_data[8:16, :5].t())[0]
    record['change_hidden'] = (out3, out5)
    record['n_params'] = total_params
    record['param_names'] = [n for n, _ in model.named_parameters()]
    return record


if __name__ == '__main__':
    main()
