"""Word-level language model on a synthetic corpus, in the style of PyTorch's
examples/word_language_model (RNNModel with LSTM / GRU / RNN_TANH, tied weights, and a
Transformer encoder with positional encoding), written for plain PyTorch.

    python word_lm.py --model LSTM --epochs 2
    python word_lm.py --model Transformer --emsize 64 --nhid 128 --nhead 2

No download: the corpus (train/valid/test .txt files) is generated from a small deterministic
grammar into a temporary directory and read back the way data.py reads a text corpus.
"""
import argparse
import math
import os
import random
import tempfile
import time

import torch
import torch.nn as nn
import torch.nn.functional as F


###############################################################################
# Data
###############################################################################

SUBJECTS = ["the cat", "a dog", "the old man", "my sister", "the teacher", "a bird", "the king",
            "our neighbour", "the small child", "a farmer"]
VERBS = ["sees", "likes", "chases", "finds", "watches", "helps", "calls", "follows"]
OBJECTS = ["the ball", "a red apple", "the river", "the house", "a green tree", "the moon",
           "some bread", "the old car", "a letter", "the garden"]
TAILS = ["", "today", "every morning", "in the rain", "at night", "again and again"]


def write_synthetic_corpus(path, n_train=2000, n_valid=200, n_test=200, seed=0, extra_vocab=0):
    rng = random.Random(seed)
    rare = ["w%d" % i for i in range(extra_vocab)]

    def sentence():
        words = [rng.choice(SUBJECTS), rng.choice(VERBS), rng.choice(OBJECTS), rng.choice(TAILS)]
        if rare and rng.random() < 0.7:
            words.append(" ".join(rng.choice(rare) for _ in range(rng.randint(1, 4))))
        return " ".join(w for w in words if w)

    for name, n in (("train.txt", n_train), ("valid.txt", n_valid), ("test.txt", n_test)):
        with open(os.path.join(path, name), "w", encoding="utf8") as f:
            for _ in range(n):
                f.write(" " + sentence() + " \n")


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
    def __init__(self, path):
        self.dictionary = Dictionary()
        self.train = self.tokenize(os.path.join(path, "train.txt"))
        self.valid = self.tokenize(os.path.join(path, "valid.txt"))
        self.test = self.tokenize(os.path.join(path, "test.txt"))

    def tokenize(self, path):
        assert os.path.exists(path)
        with open(path, "r", encoding="utf8") as f:
            for line in f:
                for word in line.split() + ["<eos>"]:
                    self.dictionary.add_word(word)
        with open(path, "r", encoding="utf8") as f:
            idss = []
            for line in f:
                words = line.split() + ["<eos>"]
                ids = [self.dictionary.word2idx[w] for w in words]
                idss.append(torch.tensor(ids).type(torch.int64))
            ids = torch.cat(idss)
        return ids


###############################################################################
# Models
###############################################################################

class RNNModel(nn.Module):
    """Embedding -> recurrent net -> linear decoder."""

    def __init__(self, rnn_type, ntoken, ninp, nhid, nlayers, dropout=0.5, tie_weights=False):
        super(RNNModel, self).__init__()
        self.ntoken = ntoken
        self.drop = nn.Dropout(dropout)
        self.encoder = nn.Embedding(ntoken, ninp)
        if rnn_type in ["LSTM", "GRU"]:
            self.rnn = getattr(nn, rnn_type)(ninp, nhid, nlayers, dropout=dropout)
        else:
            try:
                nonlinearity = {"RNN_TANH": "tanh", "RNN_RELU": "relu"}[rnn_type]
            except KeyError as e:
                raise ValueError("unknown --model " + rnn_type) from e
            self.rnn = nn.RNN(ninp, nhid, nlayers, nonlinearity=nonlinearity, dropout=dropout)
        self.decoder = nn.Linear(nhid, ntoken)
        if tie_weights:
            if nhid != ninp:
                raise ValueError("When using the tied flag, nhid must be equal to emsize")
            self.decoder.weight = self.encoder.weight
        self.init_weights()
        self.rnn_type = rnn_type
        self.nhid = nhid
        self.nlayers = nlayers

    def init_weights(self):
        initrange = 0.1
        nn.init.uniform_(self.encoder.weight, -initrange, initrange)
        nn.init.zeros_(self.decoder.bias)
        nn.init.uniform_(self.decoder.weight, -initrange, initrange)

    def forward(self, input, hidden):
        emb = self.drop(self.encoder(input))
        output, hidden = self.rnn(emb, hidden)
        output = self.drop(output)
        decoded = self.decoder(output)
        decoded = decoded.view(-1, self.ntoken)
        return F.log_softmax(decoded, dim=1), hidden

    def init_hidden(self, bsz):
        weight = next(self.parameters())
        if self.rnn_type == "LSTM":
            return (weight.new_zeros(self.nlayers, bsz, self.nhid),
                    weight.new_zeros(self.nlayers, bsz, self.nhid))
        return weight.new_zeros(self.nlayers, bsz, self.nhid)


class PositionalEncoding(nn.Module):
    def __init__(self, d_model, dropout=0.1, max_len=5000):
        super(PositionalEncoding, self).__init__()
        self.dropout = nn.Dropout(p=dropout)
        pe = torch.zeros(max_len, d_model)
        position = torch.arange(0, max_len, dtype=torch.float).unsqueeze(1)
        div_term = torch.exp(torch.arange(0, d_model, 2).float() * (-math.log(10000.0) / d_model))
        pe[:, 0::2] = torch.sin(position * div_term)
        pe[:, 1::2] = torch.cos(position * div_term)
        pe = pe.unsqueeze(0).transpose(0, 1)
        self.register_buffer("pe", pe)

    def forward(self, x):
        x = x + self.pe[:x.size(0), :]
        return self.dropout(x)


class TransformerModel(nn.Transformer):
    """The newer example: an nn.Transformer subclass whose encoder alone is used."""

    def __init__(self, ntoken, ninp, nhead, nhid, nlayers, dropout=0.5):
        super(TransformerModel, self).__init__(d_model=ninp, nhead=nhead, dim_feedforward=nhid,
                                               num_encoder_layers=nlayers, dropout=dropout)
        self.model_type = "Transformer"
        self.src_mask = None
        self.pos_encoder = PositionalEncoding(ninp, dropout)
        self.input_emb = nn.Embedding(ntoken, ninp)
        self.ninp = ninp
        self.decoder = nn.Linear(ninp, ntoken)
        self.init_weights()

    def _generate_square_subsequent_mask(self, sz):
        return torch.log(torch.tril(torch.ones(sz, sz)))

    def init_weights(self):
        initrange = 0.1
        nn.init.uniform_(self.input_emb.weight, -initrange, initrange)
        nn.init.zeros_(self.decoder.bias)
        nn.init.uniform_(self.decoder.weight, -initrange, initrange)

    def forward(self, src, has_mask=True):
        if has_mask:
            device = src.device
            if self.src_mask is None or self.src_mask.size(0) != len(src):
                mask = self._generate_square_subsequent_mask(len(src)).to(device)
                self.src_mask = mask
        else:
            self.src_mask = None
        src = self.input_emb(src) * math.sqrt(self.ninp)
        src = self.pos_encoder(src)
        output = self.encoder(src, mask=self.src_mask)
        output = self.decoder(output)
        return F.log_softmax(output, dim=-1)


class TransformerEncoderModel(nn.Module):
    """The older example: TransformerEncoder(Layer) and a boolean-then-float causal mask."""

    def __init__(self, ntoken, ninp, nhead, nhid, nlayers, dropout=0.5):
        super(TransformerEncoderModel, self).__init__()
        self.model_type = "Transformer"
        self.src_mask = None
        self.pos_encoder = PositionalEncoding(ninp, dropout)
        encoder_layers = nn.TransformerEncoderLayer(ninp, nhead, nhid, dropout)
        self.transformer_encoder = nn.TransformerEncoder(encoder_layers, nlayers)
        self.encoder = nn.Embedding(ntoken, ninp)
        self.ninp = ninp
        self.decoder = nn.Linear(ninp, ntoken)
        self.init_weights()

    def _generate_square_subsequent_mask(self, sz):
        mask = (torch.triu(torch.ones(sz, sz)) == 1).transpose(0, 1)
        mask = mask.float().masked_fill(mask == 0, float("-inf")).masked_fill(mask == 1, float(0.0))
        return mask

    def init_weights(self):
        initrange = 0.1
        self.encoder.weight.data.uniform_(-initrange, initrange)
        self.decoder.bias.data.zero_()
        self.decoder.weight.data.uniform_(-initrange, initrange)

    def forward(self, src, has_mask=True):
        if has_mask:
            if self.src_mask is None or self.src_mask.size(0) != len(src):
                self.src_mask = self._generate_square_subsequent_mask(len(src)).to(src.device)
        else:
            self.src_mask = None
        src = self.encoder(src) * math.sqrt(self.ninp)
        src = self.pos_encoder(src)
        output = self.transformer_encoder(src, self.src_mask)
        output = self.decoder(output)
        return F.log_softmax(output, dim=-1)


###############################################################################
# Training
###############################################################################

def get_parser():
    p = argparse.ArgumentParser(description="PyTorch word-level language model (synthetic corpus)")
    p.add_argument("--data", type=str, default=None, help="corpus directory (default: generate one)")
    p.add_argument("--sentences", type=int, default=2000, help="training sentences to generate")
    p.add_argument("--extra-vocab", type=int, default=0, help="rare words added to the corpus")
    p.add_argument("--model", type=str, default="LSTM",
                   help="RNN_TANH, RNN_RELU, LSTM, GRU, Transformer, TransformerEncoder")
    p.add_argument("--emsize", type=int, default=200)
    p.add_argument("--nhid", type=int, default=200)
    p.add_argument("--nlayers", type=int, default=2)
    p.add_argument("--lr", type=float, default=20)
    p.add_argument("--clip", type=float, default=0.25)
    p.add_argument("--epochs", type=int, default=2)
    p.add_argument("--batch_size", type=int, default=20, metavar="N")
    p.add_argument("--bptt", type=int, default=35)
    p.add_argument("--dropout", type=float, default=0.2)
    p.add_argument("--tied", action="store_true")
    p.add_argument("--seed", type=int, default=1111)
    p.add_argument("--cuda", action="store_true", default=False)
    p.add_argument("--log-interval", type=int, default=20, metavar="N")
    p.add_argument("--save", type=str, default=None, help="path to save the final model")
    p.add_argument("--nhead", type=int, default=2)
    p.add_argument("--max-batches", type=int, default=0, help="stop each epoch after N batches (0: all)")
    p.add_argument("--words", type=int, default=30, help="words to generate at the end")
    p.add_argument("--temperature", type=float, default=1.0)
    p.add_argument("--quiet", action="store_true")
    return p


def main(argv=None):
    args = get_parser().parse_args(argv)
    log = (lambda *a: None) if args.quiet else print

    torch.manual_seed(args.seed)
    if torch.cuda.is_available() and not args.cuda:
        log("WARNING: You have a CUDA device, so you should probably run with --cuda")
    device = torch.device("cuda" if args.cuda else "cpu")

    tmp = None
    data_dir = args.data
    if data_dir is None:
        tmp = tempfile.TemporaryDirectory()
        data_dir = tmp.name
        write_synthetic_corpus(data_dir, n_train=args.sentences, n_valid=max(20, args.sentences // 10),
                               n_test=max(20, args.sentences // 10), extra_vocab=args.extra_vocab)
    corpus = Corpus(data_dir)

    def batchify(data, bsz):
        nbatch = data.size(0) // bsz
        data = data.narrow(0, 0, nbatch * bsz)
        data = data.view(bsz, -1).t().contiguous()
        return data.to(device)

    eval_batch_size = 10
    train_data = batchify(corpus.train, args.batch_size)
    val_data = batchify(corpus.valid, eval_batch_size)
    test_data = batchify(corpus.test, eval_batch_size)

    ntokens = len(corpus.dictionary)
    if args.model == "Transformer":
        model = TransformerModel(ntokens, args.emsize, args.nhead, args.nhid, args.nlayers, args.dropout).to(device)
    elif args.model == "TransformerEncoder":
        model = TransformerEncoderModel(ntokens, args.emsize, args.nhead, args.nhid, args.nlayers,
                                        args.dropout).to(device)
    else:
        model = RNNModel(args.model, ntokens, args.emsize, args.nhid, args.nlayers, args.dropout,
                         args.tied).to(device)
    is_transformer = args.model.startswith("Transformer")
    criterion = nn.NLLLoss()
    initial_state = {k: v.clone() for k, v in model.state_dict().items()}

    def repackage_hidden(h):
        """Wraps hidden states in new Tensors, to detach them from their history."""
        if isinstance(h, torch.Tensor):
            return h.detach()
        return tuple(repackage_hidden(v) for v in h)

    def get_batch(source, i):
        seq_len = min(args.bptt, len(source) - 1 - i)
        data = source[i:i + seq_len]
        target = source[i + 1:i + 1 + seq_len].view(-1)
        return data, target

    def evaluate(data_source):
        model.eval()
        total_loss = 0.
        if not is_transformer:
            hidden = model.init_hidden(eval_batch_size)
        with torch.no_grad():
            for i in range(0, data_source.size(0) - 1, args.bptt):
                data, targets = get_batch(data_source, i)
                if is_transformer:
                    output = model(data)
                    output = output.view(-1, ntokens)
                else:
                    output, hidden = model(data, hidden)
                    hidden = repackage_hidden(hidden)
                total_loss += len(data) * criterion(output, targets).item()
        return total_loss / (len(data_source) - 1)

    step_losses = []

    def train(epoch, lr):
        model.train()
        total_loss = 0.
        start_time = time.time()
        if not is_transformer:
            hidden = model.init_hidden(args.batch_size)
        for batch, i in enumerate(range(0, train_data.size(0) - 1, args.bptt)):
            if args.max_batches and batch >= args.max_batches:
                break
            data, targets = get_batch(train_data, i)
            model.zero_grad()
            if is_transformer:
                output = model(data)
                output = output.view(-1, ntokens)
            else:
                hidden = repackage_hidden(hidden)
                output, hidden = model(data, hidden)
            loss = criterion(output, targets)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), args.clip)
            for p in model.parameters():
                p.data.add_(p.grad, alpha=-lr)
            total_loss += loss.item()
            step_losses.append(loss.item())
            if batch % args.log_interval == 0 and batch > 0:
                cur_loss = total_loss / args.log_interval
                elapsed = time.time() - start_time
                log("| epoch {:3d} | {:5d}/{:5d} batches | lr {:02.2f} | ms/batch {:5.2f} | "
                    "loss {:5.2f} | ppl {:8.2f}".format(epoch, batch, len(train_data) // args.bptt, lr,
                                                        elapsed * 1000 / args.log_interval, cur_loss,
                                                        math.exp(cur_loss)))
                total_loss = 0
                start_time = time.time()

    save_path = args.save or os.path.join(data_dir, "model.pt")
    lr = args.lr
    best_val_loss = None
    val_losses = []
    for epoch in range(1, args.epochs + 1):
        epoch_start_time = time.time()
        train(epoch, lr)
        val_loss = evaluate(val_data)
        val_losses.append(val_loss)
        log("-" * 89)
        log("| end of epoch {:3d} | time: {:5.2f}s | valid loss {:5.2f} | valid ppl {:8.2f}".format(
            epoch, (time.time() - epoch_start_time), val_loss, math.exp(val_loss)))
        log("-" * 89)
        if not best_val_loss or val_loss < best_val_loss:
            with open(save_path, "wb") as f:
                torch.save(model, f)
            best_val_loss = val_loss
        else:
            lr /= 4.0

    with open(save_path, "rb") as f:
        model = torch.load(f)  # as pytorch/examples: torch 1.13 unpickles by default, kiln trusts its own save
        if not is_transformer:
            model.rnn.flatten_parameters()

    test_loss = evaluate(test_data)
    log("=" * 89)
    log("| End of training | test loss {:5.2f} | test ppl {:8.2f}".format(test_loss, math.exp(test_loss)))
    log("=" * 89)

    # generate.py: sample words from the trained model
    model.eval()
    words = []
    input = torch.randint(ntokens, (1, 1), dtype=torch.long).to(device)
    if not is_transformer:
        hidden = model.init_hidden(1)
    with torch.no_grad():
        for i in range(args.words):
            if is_transformer:
                output = model(input, False)
                word_weights = output[-1].squeeze().div(args.temperature).exp().cpu()
                word_idx = torch.multinomial(word_weights, 1)[0]
                word_tensor = torch.Tensor([[word_idx]]).long().to(device)
                input = torch.cat([input, word_tensor], 0)
            else:
                output, hidden = model(input, hidden)
                word_weights = output.squeeze().div(args.temperature).exp().cpu()
                word_idx = torch.multinomial(word_weights, 1)[0]
                input.fill_(word_idx)
            words.append(corpus.dictionary.idx2word[word_idx])
    log(" ".join(words))

    if tmp is not None:
        tmp.cleanup()
    return {"initial_state": initial_state, "step_losses": step_losses, "val_losses": val_losses,
            "test_loss": test_loss, "test_ppl": math.exp(test_loss), "words": words, "ntokens": ntokens}


if __name__ == "__main__":
    main()
