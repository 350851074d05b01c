"""Activation checkpointing as training scripts use it (the torch.utils.checkpoint docs, HuggingFace-style
gradient_checkpointing in a GPT block stack, and checkpoint_sequential over an nn.Sequential): a small pre-LN
transformer LM whose blocks run through torch.utils.checkpoint.checkpoint(block, x, use_reentrant=False) (dropout
inside, so the recomputation must replay the same RNG state: preserve_rng_state) or the reentrant form with an
input that requires grad, an MLP head through checkpoint_sequential(segments=2), gradient accumulation over
micro-batches, clip_grad_norm_, AdamW with a warm-up LambdaLR; the run must match an un-checkpointed run's losses and
gradients (in both libraries) and torch's."""
import argparse
import math

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.checkpoint import checkpoint, checkpoint_sequential


class Block(nn.Module):
    def __init__(self, d, n_head, p):
        super().__init__()
        self.ln1 = nn.LayerNorm(d)
        self.attn = nn.MultiheadAttention(d, n_head, dropout=p, batch_first=True)
        self.ln2 = nn.LayerNorm(d)
        self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d), nn.Dropout(p))

    def forward(self, x, mask):
        h = self.ln1(x)
        x = x + self.attn(h, h, h, attn_mask=mask, need_weights=False)[0]
        return x + self.mlp(self.ln2(x))


class LM(nn.Module):
    def __init__(self, vocab, d=32, n_head=4, n_layer=3, p=0.1, mode="none"):
        super().__init__()
        self.mode = mode
        self.tok = nn.Embedding(vocab, d)
        self.pos = nn.Parameter(torch.zeros(1, 16, d))
        self.drop = nn.Dropout(p)
        self.blocks = nn.ModuleList([Block(d, n_head, p) for _ in range(n_layer)])
        self.head = nn.Sequential(nn.LayerNorm(d), nn.Linear(d, d), nn.Tanh(), nn.Dropout(p), nn.Linear(d, vocab))

    def forward(self, idx):
        T = idx.size(1)
        x = self.drop(self.tok(idx) + self.pos[:, :T])
        mask = torch.triu(torch.full((T, T), float("-inf")), diagonal=1)
        for block in self.blocks:
            if self.mode == "nonreentrant" and self.training:
                x = checkpoint(block, x, mask, use_reentrant=False)
            elif self.mode == "reentrant" and self.training:
                x = checkpoint(block, x, mask, use_reentrant=True)
            else:
                x = block(x, mask)
        if self.mode != "none" and self.training:
            return checkpoint_sequential(self.head, 2, x)  # (torch 1.13 has no use_reentrant here)
        return self.head(x)


def run(mode, steps, accum, seed=0):
    torch.manual_seed(seed)
    vocab = 20
    model = LM(vocab, mode=mode)
    initial_state = {k: v.clone() for k, v in model.state_dict().items()}
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=0.1)
    warmup = 4
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: min(1.0, (s + 1) / warmup) * 0.5 *
                                              (1 + math.cos(math.pi * s / steps)))
    data = torch.randint(0, vocab, (steps * accum * 4, 13))
    losses, norms = [], []
    model.train()
    for step in range(steps):
        opt.zero_grad(set_to_none=True)
        total = 0.0
        for micro in range(accum):
            batch = data[(step * accum + micro) * 4:(step * accum + micro + 1) * 4]
            logits = model(batch[:, :-1])
            loss = F.cross_entropy(logits.reshape(-1, vocab), batch[:, 1:].reshape(-1)) / accum
            loss.backward()
            total += loss.item()
        norms.append(float(torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)))
        opt.step()
        sched.step()
        losses.append(total)
    model.eval()
    with torch.no_grad():
        out = model(data[:2, :-1])
    return initial_state, losses, norms, out, torch.rand(3)


def main(argv=None):
    parser = argparse.ArgumentParser()
    parser.add_argument("--mode", default="nonreentrant", choices=["none", "nonreentrant", "reentrant"])
    parser.add_argument("--steps", type=int, default=6)
    parser.add_argument("--accum", type=int, default=2)
    parser.add_argument("--quiet", action="store_true")
    args = parser.parse_args(argv)
    log = (lambda *a: None) if args.quiet else print
    initial_state, losses, norms, out, after = run(args.mode, args.steps, args.accum)
    _, plain_losses, plain_norms, plain_out, plain_after = run("none", args.steps, args.accum)
    for i, l in enumerate(losses):
        log(f"step {i} loss {l:.5f}")
    return {"initial_state": initial_state, "step_losses": losses, "norms": norms, "out": out,
            "rng_after": after, "plain_losses": plain_losses, "plain_norms": plain_norms, "plain_out": plain_out,
            "plain_rng_after": plain_after}


if __name__ == "__main__":
    main()
