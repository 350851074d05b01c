"""The "Language Modeling with nn.Transformer and torchtext" tutorial: TransformerModel
(nn.Embedding, PositionalEncoding with a register_buffer'd pe table, TransformerEncoder of
TransformerEncoderLayer, a Linear decoder; init_weights by nn.init.uniform_ / .data.zero_()),
generate_square_subsequent_mask (torch.triu of -inf, diagonal=1), data_process / batchify /
get_batch, CrossEntropyLoss, SGD(lr=5.0), StepLR(1.0, gamma=0.95), clip_grad_norm_(0.5), the mask
trimmed for the last short batch, evaluate under torch.no_grad, copy.deepcopy of the best model
and its test loss. WikiText-2 and torchtext's tokenizer/vocab are replaced by a synthetic corpus, a
whitespace tokenizer and a small vocab with '<unk>'."""
import argparse
import copy
import math
import random
import time
from collections import Counter
from typing import Tuple

import torch
from torch import nn, Tensor
import torch.nn.functional as F
from torch.nn import TransformerEncoder, TransformerEncoderLayer


class TransformerModel(nn.Module):

    def __init__(self, ntoken: int, d_model: int, nhead: int, d_hid: int,
                 nlayers: int, dropout: float = 0.5):
        super().__init__()
        self.model_type = 'Transformer'
        self.pos_encoder = PositionalEncoding(d_model, dropout)
        encoder_layers = TransformerEncoderLayer(d_model, nhead, d_hid, dropout)
        self.transformer_encoder = TransformerEncoder(encoder_layers, nlayers)
        self.encoder = nn.Embedding(ntoken, d_model)
        self.d_model = d_model
        self.decoder = nn.Linear(d_model, ntoken)

        self.init_weights()

    def init_weights(self) -> None:
        initrange = 0.1
        nn.init.uniform_(self.encoder.weight, -initrange, initrange)
        self.decoder.bias.data.zero_()
        self.decoder.weight.data.uniform_(-initrange, initrange)

    def forward(self, src: Tensor, src_mask: Tensor) -> Tensor:
        """
        Args:
            src: Tensor, shape [seq_len, batch_size]
            src_mask: Tensor, shape [seq_len, seq_len]

        Returns:
            output Tensor of shape [seq_len, batch_size, ntoken]
        """
        src = self.encoder(src) * math.sqrt(self.d_model)
        src = self.pos_encoder(src)
        output = self.transformer_encoder(src, src_mask)
        output = self.decoder(output)
        return output


def generate_square_subsequent_mask(sz: int) -> Tensor:
    """Generates an upper-triangular matrix of -inf, with zeros on diag."""
    return torch.triu(torch.ones(sz, sz) * float('-inf'), diagonal=1)


class PositionalEncoding(nn.Module):

    def __init__(self, d_model: int, dropout: float = 0.1, max_len: int = 5000):
        super().__init__()
        self.dropout = nn.Dropout(p=dropout)

        position = torch.arange(max_len).unsqueeze(1)
        div_term = torch.exp(torch.arange(0, d_model, 2) * (-math.log(10000.0) / d_model))
        pe = torch.zeros(max_len, 1, d_model)
        pe[:, 0, 0::2] = torch.sin(position * div_term)
        pe[:, 0, 1::2] = torch.cos(position * div_term)
        self.register_buffer('pe', pe)

    def forward(self, x: Tensor) -> Tensor:
        """
        Args:
            x: Tensor, shape [seq_len, batch_size, embedding_dim]
        """
        x = x + self.pe[:x.size(0)]
        return self.dropout(x)


WORDS = ("the of and to in a is was for on as with by at from that it his her an "
         "city river king army music game film album team season war church school river "
         "north south east west first second new old large small early late").split()


def synthetic_wikitext(n_lines, seed):
    rng = random.Random(seed)
    lines = []
    for _ in range(n_lines):
        if rng.random() < 0.1:
            lines.append("")  # blank lines, as in WikiText
            continue
        k = rng.randint(3, 12)
        w = [rng.choice(WORDS[:20])]
        for _ in range(k):
            # a word mostly determined by the previous one, so there is something to learn
            prev = WORDS.index(w[-1])
            w.append(WORDS[(prev * 7 + 3) % len(WORDS)] if rng.random() < 0.7 else rng.choice(WORDS))
        if rng.random() < 0.05:
            w.append("zyzzyva")  # a word only in this split: '<unk>' elsewhere
        lines.append(" ".join(w))
    return lines


def tokenizer(line):
    return line.lower().split()


class Vocab:
    def __init__(self, counter, specials):
        self.itos = list(specials) + sorted((w for w in counter if w not in specials),
                                            key=lambda w: (-counter[w], w))
        self.stoi = {w: i for i, w in enumerate(self.itos)}
        self.default_index = None

    def set_default_index(self, i):
        self.default_index = i

    def __getitem__(self, token):
        return self.stoi.get(token, self.default_index)

    def __call__(self, tokens):
        return [self[t] for t in tokens]

    def __len__(self):
        return len(self.itos)


def build_vocab_from_iterator(it, specials):
    c = Counter()
    for toks in it:
        c.update(toks)
    return Vocab(c, specials)


def main(argv=None):
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--emsize", type=int, default=200)
    parser.add_argument("--d_hid", type=int, default=200)
    parser.add_argument("--nlayers", type=int, default=2)
    parser.add_argument("--nhead", type=int, default=2)
    parser.add_argument("--dropout", type=float, default=0.2)
    parser.add_argument("--bptt", type=int, default=35)
    parser.add_argument("--batch_size", type=int, default=20)
    parser.add_argument("--lines", type=int, default=36718)
    parser.add_argument("--lr", type=float, default=5.0)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--quiet", action="store_true")
    args = parser.parse_args(argv)
    log = (lambda *a: None) if args.quiet else print
    torch.manual_seed(args.seed)

    train_iter = synthetic_wikitext(args.lines, 1)
    vocab = build_vocab_from_iterator(map(tokenizer, train_iter), specials=['<unk>'])
    vocab.set_default_index(vocab['<unk>'])

    def data_process(raw_text_iter) -> Tensor:
        """Converts raw text into a flat Tensor."""
        data = [torch.tensor(vocab(tokenizer(item)), dtype=torch.long) for item in raw_text_iter]
        return torch.cat(tuple(filter(lambda t: t.numel() > 0, data)))

    # train_iter was "consumed" by the process of building the vocab,
    # so we have to create it again
    train_iter, val_iter, test_iter = (synthetic_wikitext(args.lines, 1),
                                       synthetic_wikitext(max(args.lines // 10, 20), 2),
                                       synthetic_wikitext(max(args.lines // 10, 20), 3))
    train_data = data_process(train_iter)
    val_data = data_process(val_iter)
    test_data = data_process(test_iter)

    device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')

    def batchify(data: Tensor, bsz: int) -> Tensor:
        """Divides the data into bsz separate sequences, removing extra elements
        that wouldn't cleanly fit.

        Args:
            data: Tensor, shape [N]
            bsz: int, batch size

        Returns:
            Tensor of shape [N // bsz, bsz]
        """
        seq_len = data.size(0) // bsz
        data = data[:seq_len * bsz]
        data = data.view(bsz, seq_len).t().contiguous()
        return data.to(device)

    batch_size = args.batch_size
    eval_batch_size = 10
    train_data = batchify(train_data, batch_size)  # shape [seq_len, batch_size]
    val_data = batchify(val_data, eval_batch_size)
    test_data = batchify(test_data, eval_batch_size)

    bptt = args.bptt

    def get_batch(source: Tensor, i: int) -> Tuple[Tensor, Tensor]:
        """
        Args:
            source: Tensor, shape [full_seq_len, batch_size]
            i: int

        Returns:
            tuple (data, target), where data has shape [seq_len, batch_size] and
            target has shape [seq_len * batch_size]
        """
        seq_len = min(bptt, len(source) - 1 - i)
        data = source[i:i+seq_len]
        target = source[i+1:i+1+seq_len].reshape(-1)
        return data, target

    ntokens = len(vocab)  # size of vocabulary
    emsize = args.emsize  # embedding dimension
    d_hid = args.d_hid  # dimension of the feedforward network model in nn.TransformerEncoder
    nlayers = args.nlayers  # number of nn.TransformerEncoderLayer in nn.TransformerEncoder
    nhead = args.nhead  # number of heads in nn.MultiheadAttention
    dropout = args.dropout  # dropout probability
    model = TransformerModel(ntokens, emsize, nhead, d_hid, nlayers, dropout).to(device)
    initial_state = {k: v.clone() for k, v in model.state_dict().items()}

    criterion = nn.CrossEntropyLoss()
    lr = args.lr  # learning rate
    optimizer = torch.optim.SGD(model.parameters(), lr=lr)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, 1.0, gamma=0.95)
    step_losses = []

    def train(model: nn.Module) -> None:
        model.train()  # turn on train mode
        total_loss = 0.
        log_interval = 200
        start_time = time.time()
        src_mask = generate_square_subsequent_mask(bptt).to(device)

        num_batches = len(train_data) // bptt
        for batch, i in enumerate(range(0, train_data.size(0) - 1, bptt)):
            data, targets = get_batch(train_data, i)
            seq_len = data.size(0)
            if seq_len != bptt:  # only on last batch
                src_mask = src_mask[:seq_len, :seq_len]
            output = model(data, src_mask)
            loss = criterion(output.view(-1, ntokens), targets)

            optimizer.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 0.5)
            optimizer.step()

            total_loss += loss.item()
            step_losses.append(loss.item())
            if batch % log_interval == 0 and batch > 0:
                lr = scheduler.get_last_lr()[0]
                ms_per_batch = (time.time() - start_time) * 1000 / log_interval
                cur_loss = total_loss / log_interval
                ppl = math.exp(cur_loss)
                log(f'| epoch {epoch:3d} | {batch:5d}/{num_batches:5d} batches | '
                    f'lr {lr:02.2f} | ms/batch {ms_per_batch:5.2f} | '
                    f'loss {cur_loss:5.2f} | ppl {ppl:8.2f}')
                total_loss = 0
                start_time = time.time()

    def evaluate(model: nn.Module, eval_data: Tensor) -> float:
        model.eval()  # turn on evaluation mode
        total_loss = 0.
        src_mask = generate_square_subsequent_mask(bptt).to(device)
        with torch.no_grad():
            for i in range(0, eval_data.size(0) - 1, bptt):
                data, targets = get_batch(eval_data, i)
                seq_len = data.size(0)
                if seq_len != bptt:
                    src_mask = src_mask[:seq_len, :seq_len]
                output = model(data, src_mask)
                output_flat = output.view(-1, ntokens)
                total_loss += seq_len * criterion(output_flat, targets).item()
        return total_loss / (len(eval_data) - 1)

    best_val_loss = float('inf')
    epochs = args.epochs
    best_model = None
    val_losses, lrs = [], []

    for epoch in range(1, epochs + 1):
        epoch_start_time = time.time()
        train(model)
        val_loss = evaluate(model, val_data)
        val_ppl = math.exp(val_loss)
        elapsed = time.time() - epoch_start_time
        log('-' * 89)
        log(f'| end of epoch {epoch:3d} | time: {elapsed:5.2f}s | '
            f'valid loss {val_loss:5.2f} | valid ppl {val_ppl:8.2f}')
        log('-' * 89)
        val_losses.append(val_loss)

        if val_loss < best_val_loss:
            best_val_loss = val_loss
            best_model = copy.deepcopy(model)

        scheduler.step()
        lrs.append(scheduler.get_last_lr()[0])

    test_loss = evaluate(best_model, test_data)
    test_ppl = math.exp(test_loss)
    log('=' * 89)
    log(f'| End of training | test loss {test_loss:5.2f} | '
        f'test ppl {test_ppl:8.2f}')
    log('=' * 89)
    shares = [p.data_ptr() == q.data_ptr() for p, q in zip(model.parameters(), best_model.parameters())]
    return {"initial_state": initial_state, "step_losses": step_losses, "val_losses": val_losses,
            "lrs": lrs, "test_loss": test_loss, "ntokens": ntokens, "best_shares_storage": any(shares),
            "pe_in_state": "pos_encoder.pe" in model.state_dict()}


if __name__ == "__main__":
    main()
