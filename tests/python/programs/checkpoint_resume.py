"""The training-utility code real scripts wrap around a model (the PyTorch recipes "Saving and loading a general
checkpoint", "Reproducibility", the data-loading tutorial and pytorch-template's BaseTrainer._save_checkpoint /
_resume_checkpoint): torch.manual_seed / random.seed / np.random.seed with worker_init_fn and a seeded
torch.Generator for the DataLoader, a custom Sampler (bucketing by length) feeding a BatchSampler, a collate_fn
that pads with pad_sequence and returns lengths, SubsetRandomSampler train / validation split, a checkpoint dict
of {'epoch', 'arch', 'state_dict', 'optimizer', 'scheduler', 'rng_state': torch.get_rng_state(), 'monitor_best'}
written by torch.save(state, filename) to a file and restored by torch.load(filename) into a fresh model /
optimizer / scheduler (torch.set_rng_state), the resumed run continuing bit for bit like the uninterrupted one,
model.eval() with torch.no_grad() and torch.inference_mode() validation, clip_grad_norm_, OneCycleLR with
CosineAnnealingWarmRestarts for the second phase, early stopping on the monitored metric, and
model.load_state_dict(..., strict=False)'s missing / unexpected keys report."""
import argparse
import os
import random
import tempfile

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.utils.rnn import pack_padded_sequence, pad_sequence
from torch.utils.data import BatchSampler, DataLoader, Dataset, Sampler, SubsetRandomSampler


class SequenceDataset(Dataset):
    def __init__(self, n, seed):
        rng = np.random.RandomState(seed)
        self.items = []
        for _ in range(n):
            length = rng.randint(3, 12)
            seq = rng.randint(1, 20, size=length)
            label = int(seq.sum() % 3)
            self.items.append((torch.from_numpy(seq).long(), label))

    def __len__(self):
        return len(self.items)

    def __getitem__(self, idx):
        return self.items[idx]


class BucketSampler(Sampler):
    """Indices sorted by length inside shuffled chunks, so a batch holds sequences of similar length."""

    def __init__(self, lengths, indices, chunk=8, generator=None):
        self.lengths = lengths
        self.indices = list(indices)
        self.chunk = chunk
        self.generator = generator

    def __iter__(self):
        perm = torch.randperm(len(self.indices), generator=self.generator).tolist()
        idx = [self.indices[i] for i in perm]
        out = []
        for s in range(0, len(idx), self.chunk):
            out.extend(sorted(idx[s:s + self.chunk], key=lambda i: self.lengths[i]))
        return iter(out)

    def __len__(self):
        return len(self.indices)


def collate_fn(batch):
    seqs, labels = zip(*batch)
    lengths = torch.tensor([len(s) for s in seqs])
    padded = pad_sequence(seqs, batch_first=True, padding_value=0)
    return padded, lengths, torch.tensor(labels)


def seed_worker(worker_id):
    worker_seed = torch.initial_seed() % 2**32
    np.random.seed(worker_seed)
    random.seed(worker_seed)


class Classifier(nn.Module):
    def __init__(self, vocab=20, emb=8, hidden=16, n_classes=3):
        super().__init__()
        self.embedding = nn.Embedding(vocab, emb, padding_idx=0)
        self.rnn = nn.GRU(emb, hidden, batch_first=True)
        self.dropout = nn.Dropout(0.2)
        self.fc = nn.Linear(hidden, n_classes)

    def forward(self, x, lengths):
        packed = pack_padded_sequence(self.embedding(x), lengths, batch_first=True, enforce_sorted=False)
        _, h = self.rnn(packed)
        return self.fc(self.dropout(h[-1]))


def make_everything(args, seed):
    torch.manual_seed(seed)
    random.seed(seed)
    np.random.seed(seed)
    dataset = SequenceDataset(96, 0)
    indices = list(range(len(dataset)))
    np.random.RandomState(0).shuffle(indices)  # the split is part of the experiment, not of the seed
    split = int(np.floor(0.25 * len(dataset)))
    train_idx, valid_idx = indices[split:], indices[:split]
    g = torch.Generator()
    g.manual_seed(seed)
    lengths = [len(s) for s, _ in dataset.items]
    batch_sampler = BatchSampler(BucketSampler(lengths, train_idx, generator=g), batch_size=8, drop_last=False)
    train_loader = DataLoader(dataset, batch_sampler=batch_sampler, collate_fn=collate_fn, num_workers=0,
                              worker_init_fn=seed_worker)
    valid_loader = DataLoader(dataset, batch_size=8, sampler=SubsetRandomSampler(valid_idx, generator=g),
                              collate_fn=collate_fn)
    model = Classifier()
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.01)
    steps_per_epoch = len(train_loader)
    if args.schedule == "onecycle":
        scheduler = torch.optim.lr_scheduler.OneCycleLR(optimizer, max_lr=args.lr * 10, epochs=args.epochs,
                                                        steps_per_epoch=steps_per_epoch)
    else:
        scheduler = torch.optim.lr_scheduler.CosineAnnealingWarmRestarts(optimizer, T_0=steps_per_epoch, T_mult=2,
                                                                         eta_min=1e-4)
    return model, optimizer, scheduler, train_loader, valid_loader, g, split


def train_epoch(model, optimizer, scheduler, loader, epoch, log, step_losses, lrs, norms):
    model.train()
    n = len(loader)
    for batch_idx, (x, lengths, y) in enumerate(loader):
        optimizer.zero_grad()
        out = model(x, lengths)
        loss = F.cross_entropy(out, y)
        loss.backward()
        norms.append(float(torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)))
        optimizer.step()
        if isinstance(scheduler, torch.optim.lr_scheduler.CosineAnnealingWarmRestarts):
            scheduler.step(epoch + batch_idx / n)
        else:
            scheduler.step()
        lrs.append(scheduler.get_last_lr()[0])
        step_losses.append(loss.item())
    log("epoch", epoch, step_losses[-1])


def validate(model, loader, mode):
    model.eval()
    total, correct, loss_sum = 0, 0, 0.0
    ctx = torch.inference_mode() if mode == "inference" else torch.no_grad()
    with ctx:
        for x, lengths, y in loader:
            out = model(x, lengths)
            loss_sum += F.cross_entropy(out, y, reduction="sum").item()
            correct += (out.argmax(1) == y).sum().item()
            total += len(y)
    return loss_sum / total, correct / total


def main(argv=None):
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=4)
    parser.add_argument("--resume_at", type=int, default=2)
    parser.add_argument("--lr", type=float, default=3e-3)
    parser.add_argument("--schedule", default="onecycle")
    parser.add_argument("--quiet", action="store_true")
    args = parser.parse_args(argv)
    log = (lambda *a: None) if args.quiet else print

    # the uninterrupted run
    model, optimizer, scheduler, train_loader, valid_loader, g, split = make_everything(args, 0)
    initial_state = {k: v.clone() for k, v in model.state_dict().items()}
    step_losses, lrs, norms, val = [], [], [], []
    for epoch in range(args.epochs):
        train_epoch(model, optimizer, scheduler, train_loader, epoch, log, step_losses, lrs, norms)
        val.append(validate(model, valid_loader, "no_grad"))
    full_state = {k: v.clone() for k, v in model.state_dict().items()}

    # the same run stopped after resume_at epochs, saved, and resumed into fresh objects
    model, optimizer, scheduler, train_loader, valid_loader, g, _ = make_everything(args, 0)
    r_losses, r_lrs, r_norms, r_val = [], [], [], []
    monitor_best = float("inf")
    with tempfile.TemporaryDirectory() as d:
        filename = os.path.join(d, "checkpoint-epoch{}.pth".format(args.resume_at))
        for epoch in range(args.resume_at):
            train_epoch(model, optimizer, scheduler, train_loader, epoch, log, r_losses, r_lrs, r_norms)
            r_val.append(validate(model, valid_loader, "inference"))
            monitor_best = min(monitor_best, r_val[-1][0])
        state = {
            'arch': type(model).__name__,
            'epoch': args.resume_at,
            'state_dict': model.state_dict(),
            'optimizer': optimizer.state_dict(),
            'scheduler': scheduler.state_dict(),
            'rng_state': torch.get_rng_state(),
            'loader_rng_state': g.get_state(),
            'monitor_best': monitor_best,
        }
        torch.save(state, filename)
        del model, optimizer, scheduler
        model, optimizer, scheduler, train_loader, valid_loader, g, _ = make_everything(args, 123)
        checkpoint = torch.load(filename)
        start_epoch = checkpoint['epoch']
        assert checkpoint['arch'] == type(model).__name__
        model.load_state_dict(checkpoint['state_dict'])
        optimizer.load_state_dict(checkpoint['optimizer'])
        scheduler.load_state_dict(checkpoint['scheduler'])
        torch.set_rng_state(checkpoint['rng_state'])
        g.set_state(checkpoint['loader_rng_state'])
        file_size = os.path.getsize(filename) > 0
    for epoch in range(start_epoch, args.epochs):
        train_epoch(model, optimizer, scheduler, train_loader, epoch, log, r_losses, r_lrs, r_norms)
        r_val.append(validate(model, valid_loader, "inference"))
    resumed_state = {k: v.clone() for k, v in model.state_dict().items()}
    # a head-less model loaded non-strictly reports what it missed
    partial = {k: v for k, v in resumed_state.items() if not k.startswith("fc.")}
    partial["extra.weight"] = torch.zeros(1)
    report = Classifier().load_state_dict(partial, strict=False)
    return {"initial_state": initial_state, "step_losses": step_losses, "lrs": lrs, "norms": norms, "val": val,
            "full_state": full_state, "resumed_losses": r_losses, "resumed_lrs": r_lrs, "resumed_val": r_val,
            "resumed_state": resumed_state, "report": (list(report.missing_keys), list(report.unexpected_keys)),
            "split": split, "file_written": file_size, "opt_state_keys": sorted(optimizer.state_dict().keys())}


if __name__ == "__main__":
    main()
