"""Sentence-level language models on variable-length sentences, written for plain PyTorch:
padding with pad_sequence in a collate_fn, packed GRU, CrossEntropyLoss(ignore_index=PAD,
label_smoothing), random_split, orthogonal / xavier init through named_parameters and
model.apply, AdamW or SGD (Nesterov) with ReduceLROnPlateau, a warm-up LambdaLR, clip_grad_value_,
masked token accuracy, and an LSTMCell model unrolled by hand. Greedy decoding at the end.

    python seq_gru_lm.py --epochs 3 --arch gru
    python seq_gru_lm.py --arch cell --optim sgd
"""
import argparse
import math
import random

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence, pad_sequence
from torch.utils.data import DataLoader, Dataset, random_split

PAD, BOS, EOS = 0, 1, 2


def make_sentences(n, seed):
    rng = random.Random(seed)
    nouns = ["sun", "rain", "wind", "snow", "sea", "sky", "stone", "leaf", "star", "road"]
    adjs = ["cold", "bright", "quiet", "long", "dark", "warm"]
    verbs = ["falls", "rises", "sings", "waits", "turns", "burns"]
    out = []
    for _ in range(n):
        words = ["the"]
        words += [rng.choice(adjs) for _ in range(rng.randint(0, 3))]
        words += [rng.choice(nouns), rng.choice(verbs)]
        if rng.random() < 0.5:
            words += ["and", "the", rng.choice(nouns), rng.choice(verbs)]
        out.append(words)
    return out


class Vocab:
    def __init__(self, sentences):
        self.itos = ["<pad>", "<bos>", "<eos>"] + sorted({w for s in sentences for w in s})
        self.stoi = {w: i for i, w in enumerate(self.itos)}

    def encode(self, words):
        return [BOS] + [self.stoi[w] for w in words] + [EOS]

    def __len__(self):
        return len(self.itos)


class SentenceDataset(Dataset):
    def __init__(self, sentences, vocab):
        self.items = [torch.tensor(vocab.encode(s), dtype=torch.long) for s in sentences]

    def __len__(self):
        return len(self.items)

    def __getitem__(self, i):
        return self.items[i]


def collate(batch):
    lengths = torch.tensor([len(s) - 1 for s in batch])
    inputs = pad_sequence([s[:-1] for s in batch], batch_first=True, padding_value=PAD)
    targets = pad_sequence([s[1:] for s in batch], batch_first=True, padding_value=PAD)
    return inputs, targets, lengths


class GRULM(nn.Module):
    def __init__(self, vocab_size, dim, num_layers, dropout):
        super().__init__()
        self.embedding = nn.Embedding(vocab_size, dim, padding_idx=PAD)
        self.gru = nn.GRU(dim, dim, num_layers=num_layers, batch_first=True, dropout=dropout)
        self.norm = nn.LayerNorm(dim)
        self.out = nn.Linear(dim, vocab_size)
        self.out.weight = self.embedding.weight  # tied
        for name, p in self.gru.named_parameters():
            if "weight_hh" in name:
                nn.init.orthogonal_(p)
            elif "weight_ih" in name:
                nn.init.xavier_uniform_(p)
            elif "bias" in name:
                nn.init.constant_(p, 0.0)

    def forward(self, x, lengths=None, h=None):
        emb = self.embedding(x)
        if lengths is not None:
            packed = pack_padded_sequence(emb, lengths.cpu(), batch_first=True, enforce_sorted=False)
            out, h = self.gru(packed, h)
            out, _ = pad_packed_sequence(out, batch_first=True, total_length=x.size(1))
        else:
            out, h = self.gru(emb, h)
        return self.out(self.norm(out)), h


class CellLM(nn.Module):
    """An LSTMCell unrolled in Python, with a small attention over earlier states."""

    def __init__(self, vocab_size, dim, num_layers, dropout):
        super().__init__()
        self.embedding = nn.Embedding(vocab_size, dim, padding_idx=PAD)
        self.cells = nn.ModuleList([nn.LSTMCell(dim, dim) for _ in range(num_layers)])
        self.drop = nn.Dropout(dropout)
        self.query = nn.Linear(dim, dim, bias=False)
        self.out = nn.Sequential(nn.Linear(2 * dim, dim), nn.Tanh(), nn.Linear(dim, vocab_size))
        self.register_buffer("scale", torch.tensor(1.0 / math.sqrt(dim)), persistent=False)
        self.apply(self._init)

    @staticmethod
    def _init(m):
        if isinstance(m, nn.Linear):
            nn.init.kaiming_uniform_(m.weight, a=math.sqrt(5))
            if m.bias is not None:
                nn.init.zeros_(m.bias)
        elif isinstance(m, nn.Embedding):
            nn.init.normal_(m.weight, mean=0.0, std=0.1)

    def forward(self, x, lengths=None, h=None):
        B, T = x.shape
        emb = self.drop(self.embedding(x))
        if h is None:
            h = [(emb.new_zeros(B, c.hidden_size), emb.new_zeros(B, c.hidden_size)) for c in self.cells]
        states = []
        for t in range(T):
            inp = emb[:, t]
            new_h = []
            for cell, (hx, cx) in zip(self.cells, h):
                hx, cx = cell(inp, (hx, cx))
                new_h.append((hx, cx))
                inp = self.drop(hx)
            h = new_h
            states.append(inp)
        H = torch.stack(states, dim=1)                               # B, T, D
        scores = torch.bmm(self.query(H), H.transpose(1, 2)) * self.scale
        causal = torch.ones(T, T, dtype=torch.bool).tril()
        scores = scores.masked_fill(~causal, float("-inf"))
        ctx = torch.einsum("bts,bsd->btd", F.softmax(scores, dim=-1), H)
        return self.out(torch.cat([H, ctx], dim=-1)), h


def get_parser():
    p = argparse.ArgumentParser(description="sentence LM with padding")
    p.add_argument("--arch", choices=["gru", "cell"], default="gru")
    p.add_argument("--optim", choices=["adamw", "sgd"], default="adamw")
    p.add_argument("--sentences", type=int, default=600)
    p.add_argument("--dim", type=int, default=48)
    p.add_argument("--layers", type=int, default=2)
    p.add_argument("--dropout", type=float, default=0.1)
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--lr", type=float, default=5e-3)
    p.add_argument("--epochs", type=int, default=3)
    p.add_argument("--label-smoothing", type=float, default=0.05)
    p.add_argument("--seed", type=int, default=7)
    p.add_argument("--max-steps", type=int, default=0)
    p.add_argument("--quiet", action="store_true")
    return p


def main(argv=None):
    args = get_parser().parse_args(argv)
    log = (lambda *a: None) if args.quiet else print
    torch.manual_seed(args.seed)
    device = "cuda" if torch.cuda.is_available() else "cpu"

    sentences = make_sentences(args.sentences, args.seed)
    vocab = Vocab(sentences)
    dataset = SentenceDataset(sentences, vocab)
    n_val = len(dataset) // 10
    train_set, val_set = random_split(dataset, [len(dataset) - n_val, n_val],
                                      generator=torch.Generator().manual_seed(args.seed))
    train_loader = DataLoader(train_set, batch_size=args.batch_size, shuffle=True, collate_fn=collate)
    val_loader = DataLoader(val_set, batch_size=64, shuffle=False, collate_fn=collate)

    Model = GRULM if args.arch == "gru" else CellLM
    model = Model(len(vocab), args.dim, args.layers, args.dropout).to(device)
    initial_state = {k: v.detach().clone() for k, v in model.state_dict().items()}

    if args.optim == "adamw":
        decay = [p for n, p in model.named_parameters() if p.dim() >= 2]
        no_decay = [p for n, p in model.named_parameters() if p.dim() < 2]
        optimizer = torch.optim.AdamW([{"params": decay, "weight_decay": 0.01},
                                       {"params": no_decay, "weight_decay": 0.0}],
                                      lr=args.lr, betas=(0.9, 0.98), eps=1e-9)
    else:
        optimizer = torch.optim.SGD(model.parameters(), lr=args.lr * 100, momentum=0.9, nesterov=True)
    warmup = 5
    warm = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda s: min(1.0, (s + 1) / warmup))
    plateau = torch.optim.lr_scheduler.ReduceLROnPlateau(optimizer, mode="min", factor=0.5, patience=0)
    criterion = nn.CrossEntropyLoss(ignore_index=PAD, label_smoothing=args.label_smoothing)

    def evaluate():
        model.eval()
        nll, tokens, correct = 0.0, 0, 0
        with torch.no_grad():
            for x, y, lengths in val_loader:
                x, y = x.to(device), y.to(device)
                logits, _ = model(x, lengths)
                logp = F.log_softmax(logits, dim=-1)
                tok_nll = -logp.gather(2, y.unsqueeze(2)).squeeze(2)
                mask = y != PAD
                nll += tok_nll.masked_select(mask).sum().item()
                tokens += int(mask.sum())
                pred = logits.argmax(dim=-1)
                correct += ((pred == y) & mask).sum().item()
        model.train()
        return nll / tokens, correct / tokens

    step_losses, val_losses, accs = [], [], []
    step = 0
    for epoch in range(args.epochs):
        model.train()
        for x, y, lengths in train_loader:
            x, y = x.to(device), y.to(device)
            optimizer.zero_grad()
            logits, _ = model(x, lengths)
            loss = criterion(logits.reshape(-1, logits.size(-1)), y.reshape(-1))
            loss.backward()
            torch.nn.utils.clip_grad_value_(model.parameters(), clip_value=0.5)
            optimizer.step()
            if step < warmup:
                warm.step()
            step_losses.append(loss.item())
            step += 1
            if args.max_steps and step >= args.max_steps:
                break
        val_nll, acc = evaluate()
        plateau.step(val_nll)
        val_losses.append(val_nll)
        accs.append(acc)
        log("epoch %d  loss %.4f  val nll %.4f  ppl %.2f  acc %.3f  lr %.2e" % (
            epoch + 1, step_losses[-1], val_nll, math.exp(val_nll), acc, optimizer.param_groups[0]["lr"]))

    # greedy decoding from <bos>
    model.eval()
    with torch.no_grad():
        seq = torch.full((3, 1), BOS, dtype=torch.long, device=device)
        seq[1:, :] = torch.tensor([[vocab.stoi["the"]], [vocab.stoi["sun"]]])
        finished = torch.zeros(3, dtype=torch.bool)
        for _ in range(12):
            logits, _ = model(seq)
            nxt = logits[:, -1].argmax(-1)
            nxt = torch.where(finished, torch.full_like(nxt, PAD), nxt)
            finished |= nxt == EOS
            seq = torch.cat([seq, nxt.unsqueeze(1)], dim=1)
            if finished.all():
                break
    decoded = [" ".join(vocab.itos[i] for i in row.tolist() if i not in (PAD, BOS, EOS)) for row in seq]
    for d in decoded:
        log(d)
    return {"initial_state": initial_state, "step_losses": step_losses, "val_losses": val_losses,
            "accuracy": accs, "decoded": decoded, "final_lr": optimizer.param_groups[0]["lr"]}


if __name__ == "__main__":
    main()
