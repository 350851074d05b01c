"""Issue 16's attention goal: one training step of a GPT-style block (nanoGPT's Block: pre-norm causal
self-attention and a GELU MLP, B=16, T=64, C=128, 4 heads), kiln against torch in one run, 1 thread,
median of 7 repetitions. kiln's attention is F.scaled_dot_product_attention (the fused kernel);
torch 1.13 has none, so its block computes attention as nanoGPT does without it (masked softmax of
q @ k^T). Not a test: numbers depend on the machine (the CPU is printed first).

    bazel build //:python_package && PYTHONPATH=bazel-bin:bench /usr/bin/python3 bench/gpt_block.py

Goal: kiln/torch <= 1.0.
"""
import argparse
import math
import statistics
import time

import numpy as np
import torch

import kiln
from formula_goals import cpu_name


def make_block(lib, C, heads, T):
    nn, F = lib.nn, lib.nn.functional
    fused = hasattr(F, "scaled_dot_product_attention")

    class CausalSelfAttention(nn.Module):
        def __init__(self):
            super().__init__()
            self.c_attn = nn.Linear(C, 3 * C)
            self.c_proj = nn.Linear(C, C)
            self.register_buffer("bias", lib.tril(lib.ones(T, T)).view(1, 1, T, T))

        def forward(self, x):
            B, T_, _ = x.size()
            q, k, v = self.c_attn(x).split(C, dim=2)
            q, k, v = (t.view(B, T_, heads, C // heads).transpose(1, 2) for t in (q, k, v))
            if fused:
                y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            else:
                att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
                att = att.masked_fill(self.bias[:, :, :T_, :T_] == 0, float("-inf"))
                y = F.softmax(att, dim=-1) @ v
            return self.c_proj(y.transpose(1, 2).contiguous().view(B, T_, C))

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln_1, self.attn = nn.LayerNorm(C), CausalSelfAttention()
            self.ln_2 = nn.LayerNorm(C)
            self.mlp = nn.Sequential(nn.Linear(C, 4 * C), nn.GELU(), nn.Linear(4 * C, C))

        def forward(self, x):
            x = x + self.attn(self.ln_1(x))
            return x + self.mlp(self.ln_2(x))

    return Block()


def median_step(lib, block, x):
    opt = lib.optim.AdamW(block.parameters(), lr=1e-3)

    def step():
        opt.zero_grad()
        block(x).pow(2).mean().backward()
        opt.step()

    step()
    times = []
    for _ in range(7):
        t0 = time.perf_counter()
        for _ in range(5):
            step()
        times.append((time.perf_counter() - t0) / 5)
    return statistics.median(times)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args()
    B, T, C, heads = 16, 64, 128, 4
    kiln.set_num_threads(args.threads)
    torch.set_num_threads(args.threads)
    print(f"CPU: {cpu_name()}; {args.threads} thread(s); GPT block B={B} T={T} C={C} heads={heads}")
    torch.manual_seed(0)
    tblock = make_block(torch, C, heads, T)
    kblock = make_block(kiln, C, heads, T)
    kblock.load_state_dict({n: kiln.from_numpy(v.numpy().copy()) for n, v in tblock.state_dict().items()})
    x = np.random.default_rng(0).standard_normal((B, T, C)).astype(np.float32)
    with torch.no_grad():
        want = tblock(torch.from_numpy(x)).numpy()
    got = kblock(kiln.from_numpy(x)).detach().numpy()
    print(f"forward agrees with torch to {np.abs(got - want).max():.2e}")
    t = median_step(torch, tblock, torch.from_numpy(x))
    k = median_step(kiln, kblock, kiln.from_numpy(x))
    print(f"training step: kiln {k * 1e3:.2f} ms, torch {t * 1e3:.2f} ms, kiln/torch {k / t:.2f} (goal <= 1.0)")


if __name__ == "__main__":
    main()
