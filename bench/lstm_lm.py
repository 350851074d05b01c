"""Issue 16's LSTM goal: one training step of a 2-layer LSTM word language model, kiln against torch
in one run, 1 thread (the shape of PyTorch's examples/word_language_model: embedding 200, hidden
200, batch 20, 35 steps, dropout 0.2, gradient clipping 0.25, plain SGD). Median of 7 repetitions
of a few steps each. Not a test: numbers depend on the machine (the CPU is printed first).

    bazel build //:python_package && PYTHONPATH=bazel-bin /usr/bin/python3 bench/lstm_lm.py [--vocab 10000]

Goal: kiln/torch <= 1.2.
"""
import argparse
import statistics
import time

import numpy as np
import torch

import kiln
from formula_goals import cpu_name


def make_model(lib, vocab, emsize, nhid, nlayers, dropout, cell="LSTM"):
    nn = lib.nn

    class RNNModel(nn.Module):
        def __init__(self):
            super().__init__()
            self.drop = nn.Dropout(dropout)
            self.encoder = nn.Embedding(vocab, emsize)
            if cell in ("LSTM", "GRU"):
                self.rnn = getattr(nn, cell)(emsize, nhid, nlayers, dropout=dropout)
            else:  # RNN_TANH, RNN_RELU, as examples/word_language_model
                self.rnn = nn.RNN(emsize, nhid, nlayers, nonlinearity=cell[4:].lower(), dropout=dropout)
            self.decoder = nn.Linear(nhid, vocab)

        def forward(self, input, hidden):
            emb = self.drop(self.encoder(input))
            output, hidden = self.rnn(emb, hidden)
            output = self.drop(output)
            decoded = self.decoder(output).view(-1, vocab)
            return nn.functional.log_softmax(decoded, dim=1), hidden

    return RNNModel()


def step_fn(lib, model, data, targets, nlayers, batch, nhid, cell, lr=20.0, clip=0.25):
    hidden = lib.zeros(nlayers, batch, nhid)
    if cell == "LSTM":
        hidden = (hidden, lib.zeros(nlayers, batch, nhid))
    criterion = lib.nn.NLLLoss()

    def step():
        model.zero_grad()
        output, _ = model(data, hidden)
        loss = criterion(output, targets)
        loss.backward()
        lib.nn.utils.clip_grad_norm_(model.parameters(), clip)
        with lib.no_grad():
            for p in model.parameters():
                p.add_(p.grad, alpha=-lr)
        return loss

    return step


def median_step(step, repeats=7, number=3):
    step()
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(number):
            step()
        times.append((time.perf_counter() - t0) / number)
    return statistics.median(times)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--vocab", type=int, default=10000)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--model", default="LSTM", choices=["LSTM", "GRU", "RNN_TANH", "RNN_RELU"],
                    help="the recurrent layer (the goal is set for LSTM)")
    args = ap.parse_args()
    bptt, batch, emsize, nhid, nlayers, dropout = 35, 20, 200, 200, 2, 0.2
    kiln.set_num_threads(args.threads)
    torch.set_num_threads(args.threads)
    print(f"CPU: {cpu_name()}; {args.threads} thread(s); vocab {args.vocab}, {nlayers}-layer {args.model} {emsize}/{nhid}, "
          f"batch {batch}, {bptt} steps")
    rng = np.random.default_rng(0)
    data = rng.integers(0, args.vocab, (bptt, batch))
    targets = rng.integers(0, args.vocab, bptt * batch)
    torch.manual_seed(0)
    tmodel = make_model(torch, args.vocab, emsize, nhid, nlayers, dropout, args.model)
    kmodel = make_model(kiln, args.vocab, emsize, nhid, nlayers, dropout, args.model)
    kmodel.load_state_dict({n: kiln.from_numpy(v.numpy().copy()) for n, v in tmodel.state_dict().items()})
    t = median_step(step_fn(torch, tmodel, torch.from_numpy(data), torch.from_numpy(targets), nlayers, batch, nhid,
                                 args.model))
    k = median_step(step_fn(kiln, kmodel, kiln.from_numpy(data), kiln.from_numpy(targets), nlayers, batch, nhid,
                                 args.model))
    print(f"training step: kiln {k * 1e3:.1f} ms, torch {t * 1e3:.1f} ms, kiln/torch {k / t:.2f}"
          + (" (goal <= 1.2)" if args.model == "LSTM" else ""))


if __name__ == "__main__":
    main()
