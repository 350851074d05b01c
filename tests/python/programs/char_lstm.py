"""Character-level LSTM language model (batch_first), written for plain PyTorch: a Dataset of
fixed-length windows over a text, a shuffling DataLoader, Adam with a StepLR schedule, gradient
clipping, a held-out loss, a state_dict checkpoint, and sampling with temperature / top-k.

    python char_lstm.py --epochs 3 --hidden 128
"""
import argparse
import math
import os
import tempfile
import time

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset


def make_text(n_lines=400):
    """A deterministic little 'poem' with plenty of repeated structure to learn."""
    animals = ["fox", "owl", "hare", "wolf", "crow", "deer", "mole"]
    colours = ["grey", "brown", "white", "black", "red"]
    places = ["by the brook", "under the hill", "in the wood", "on the moor", "near the mill"]
    lines = []
    for i in range(n_lines):
        a = animals[(i * 3) % len(animals)]
        c = colours[(i * 5 + i // 7) % len(colours)]
        p = places[(i * 2 + i // 3) % len(places)]
        lines.append("the %s %s sleeps %s.\n" % (c, a, p))
    return "".join(lines)


class CharDataset(Dataset):
    def __init__(self, data, block_size):
        self.data = data
        self.block_size = block_size

    def __len__(self):
        return (len(self.data) - 1) // self.block_size

    def __getitem__(self, idx):
        i = idx * self.block_size
        chunk = self.data[i:i + self.block_size + 1]
        return chunk[:-1], chunk[1:]


class CharLSTM(nn.Module):
    def __init__(self, vocab_size, embed_dim, hidden_size, num_layers, dropout):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, embed_dim)
        self.lstm = nn.LSTM(embed_dim, hidden_size, num_layers=num_layers, batch_first=True,
                            dropout=dropout if num_layers > 1 else 0.0)
        self.dropout = nn.Dropout(dropout)
        self.fc = nn.Linear(hidden_size, vocab_size)

    def forward(self, x, hidden=None):
        emb = self.embed(x)
        out, hidden = self.lstm(emb, hidden)
        out = self.dropout(out)
        logits = self.fc(out)
        return logits, hidden


@torch.no_grad()
def sample(model, stoi, itos, device, prompt="the ", length=80, temperature=0.8, top_k=None, greedy=False):
    model.eval()
    idx = torch.tensor([[stoi[c] for c in prompt]], dtype=torch.long, device=device)
    logits, hidden = model(idx)
    out = list(prompt)
    for _ in range(length):
        logits = logits[:, -1, :] / temperature
        if top_k is not None:
            v, _ = torch.topk(logits, min(top_k, logits.size(-1)))
            logits[logits < v[:, [-1]]] = -float("Inf")
        probs = F.softmax(logits, dim=-1)
        if greedy:
            nxt = torch.argmax(probs, dim=-1, keepdim=True)
        else:
            nxt = torch.multinomial(probs, num_samples=1)
        out.append(itos[nxt.item()])
        logits, hidden = model(nxt, hidden)
    return "".join(out)


def get_parser():
    p = argparse.ArgumentParser(description="char-level LSTM")
    p.add_argument("--lines", type=int, default=400)
    p.add_argument("--block-size", type=int, default=32)
    p.add_argument("--batch-size", type=int, default=16)
    p.add_argument("--embed", type=int, default=32)
    p.add_argument("--hidden", type=int, default=64)
    p.add_argument("--layers", type=int, default=2)
    p.add_argument("--dropout", type=float, default=0.1)
    p.add_argument("--lr", type=float, default=3e-3)
    p.add_argument("--epochs", type=int, default=2)
    p.add_argument("--clip", type=float, default=1.0)
    p.add_argument("--seed", type=int, default=42)
    p.add_argument("--max-steps", type=int, default=0)
    p.add_argument("--quiet", action="store_true")
    return p


def main(argv=None):
    args = get_parser().parse_args(argv)
    log = (lambda *a: None) if args.quiet else print
    torch.manual_seed(args.seed)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")

    text = make_text(args.lines)
    chars = sorted(list(set(text)))
    vocab_size = len(chars)
    stoi = {ch: i for i, ch in enumerate(chars)}
    itos = {i: ch for i, ch in enumerate(chars)}
    data = torch.tensor([stoi[c] for c in text], dtype=torch.long)
    n = int(0.9 * len(data))
    train_data, val_data = data[:n], data[n:]

    train_loader = DataLoader(CharDataset(train_data, args.block_size), batch_size=args.batch_size,
                              shuffle=True, drop_last=True)
    val_loader = DataLoader(CharDataset(val_data, args.block_size), batch_size=args.batch_size)

    model = CharLSTM(vocab_size, args.embed, args.hidden, args.layers, args.dropout).to(device)
    n_params = sum(p.numel() for p in model.parameters() if p.requires_grad)
    log(f"vocab {vocab_size}, {n_params} parameters, {len(train_loader)} batches per epoch")
    initial_state = {k: v.detach().clone() for k, v in model.state_dict().items()}

    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=1, gamma=0.5)

    def evaluate():
        model.eval()
        total, count = 0.0, 0
        with torch.no_grad():
            for x, y in val_loader:
                x, y = x.to(device), y.to(device)
                logits, _ = model(x)
                loss = F.cross_entropy(logits.view(-1, vocab_size), y.view(-1), reduction="sum")
                total += loss.item()
                count += y.numel()
        model.train()
        return total / count

    step_losses, val_losses = [], []
    step = 0
    for epoch in range(args.epochs):
        model.train()
        t0 = time.time()
        for x, y in train_loader:
            x, y = x.to(device), y.to(device)
            optimizer.zero_grad(set_to_none=True)
            logits, _ = model(x)
            loss = F.cross_entropy(logits.view(-1, vocab_size), y.view(-1))
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), max_norm=args.clip)
            optimizer.step()
            step_losses.append(loss.item())
            step += 1
            if args.max_steps and step >= args.max_steps:
                break
        scheduler.step()
        val = evaluate()
        val_losses.append(val)
        log(f"epoch {epoch + 1}: train {sum(step_losses[-len(train_loader):]) / len(train_loader):.4f} "
            f"val {val:.4f} (ppl {math.exp(val):.2f}) lr {scheduler.get_last_lr()[0]:.2e} "
            f"{time.time() - t0:.2f}s")

    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "char_lstm.pt")
        torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(), "stoi": stoi}, path)
        ckpt = torch.load(path)
        restored = CharLSTM(vocab_size, args.embed, args.hidden, args.layers, args.dropout).to(device)
        restored.load_state_dict(ckpt["model"])
        restored.eval()
    torch.manual_seed(args.seed + 1)
    greedy_text = sample(restored, stoi, itos, device, greedy=True)
    sampled_text = sample(restored, stoi, itos, device, temperature=0.8, top_k=5)
    log(greedy_text)
    log(sampled_text)
    return {"initial_state": initial_state, "step_losses": step_losses, "val_losses": val_losses,
            "greedy": greedy_text, "sampled": sampled_text, "final_lr": scheduler.get_last_lr()[0]}


if __name__ == "__main__":
    main()
