"""lucidrains/reformer-pytorch's LSHAttention and its helpers as written (einops-free): random rotations
torch.randn(rotations_shape) per hash round, rotated_vecs = torch.einsum('btf,bfhi->bhti', vecs, random_rotations),
buckets by torch.argmax(torch.cat([rotated_vecs, -rotated_vecs], dim=-1), dim=-1), offsets added per hash round,
sort_key_val (values.expand_as + torch.sort + gather), batched_index_select via gather over expand'ed indices,
chunked look-one-back attention (torch.cat of the chunk and its predecessor), the self-attention mask by
bq_t[:, :, :, None] == bkv_t[:, :, None, :] with masked_fill_(..., TOKEN_SELF_ATTN_VALUE), causal masking by
positions, logsumexp over hash rounds to combine, undo-sort by scatter / gather of sticker indices, and
torch.exp(slogits - torch.logsumexp(slogits, dim=0, keepdim=True)) weights; trained as a tiny causal LM with the
reversible-free LSH self-attention block (shared QK: F.normalize'd keys), Adam, and a full-attention reference."""
import argparse
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

TOKEN_SELF_ATTN_VALUE = -5e4


def sort_key_val(t1, t2, dim=-1):
    values, indices = t1.sort(dim=dim)
    t2 = t2.expand_as(t1)
    return values, t2.gather(dim, indices)


def batched_index_select(values, indices):
    last_dim = values.shape[-1]
    return values.gather(1, indices[:, :, None].expand(-1, -1, last_dim))


def max_neg_value(tensor):
    return -torch.finfo(tensor.dtype).max


class LSHAttention(nn.Module):
    def __init__(self, bucket_size=4, n_hashes=2, causal=False, dropout=0.):
        super().__init__()
        self.dropout = nn.Dropout(dropout)
        self.bucket_size = bucket_size
        self.n_hashes = n_hashes
        self.causal = causal

    def hash_vectors(self, n_buckets, vecs):
        batch_size = vecs.shape[0]
        device = vecs.device
        assert n_buckets % 2 == 0
        rot_size = n_buckets
        rotations_shape = (1, vecs.shape[-1], self.n_hashes, rot_size // 2)
        random_rotations = torch.randn(rotations_shape, dtype=vecs.dtype, device=device).expand(batch_size, -1, -1, -1)
        rotated_vecs = torch.einsum('btf,bfhi->bhti', vecs, random_rotations)
        rotated_vecs = torch.cat([rotated_vecs, -rotated_vecs], dim=-1)
        buckets = torch.argmax(rotated_vecs, dim=-1)
        offsets = torch.arange(self.n_hashes, device=device)
        offsets = torch.reshape(offsets * n_buckets, (1, -1, 1))
        buckets = torch.reshape(buckets + offsets, (batch_size, -1,))
        return buckets

    def forward(self, qk, v):
        batch_size, seqlen, dim, device = *qk.shape, qk.device
        n_buckets = seqlen // self.bucket_size
        buckets = self.hash_vectors(n_buckets, qk)
        assert int(buckets.shape[1]) == self.n_hashes * seqlen
        total_hashes = self.n_hashes
        ticker = torch.arange(total_hashes * seqlen, device=device).unsqueeze(0).expand_as(buckets)
        buckets_and_t = seqlen * buckets + (ticker % seqlen)
        buckets_and_t = buckets_and_t.detach()
        sbuckets_and_t, sticker = sort_key_val(buckets_and_t, ticker, dim=-1)
        _, undo_sort = sticker.sort(dim=-1)
        del ticker
        sbuckets_and_t = sbuckets_and_t.detach()
        sticker = sticker.detach()
        undo_sort = undo_sort.detach()
        st = (sticker % seqlen)
        sqk = batched_index_select(qk, st)
        sv = batched_index_select(v, st)
        chunk_size = total_hashes * n_buckets
        bq_t = bkv_t = torch.reshape(st, (batch_size, chunk_size, -1))
        bqk = torch.reshape(sqk, (batch_size, chunk_size, -1, dim))
        bv = torch.reshape(sv, (batch_size, chunk_size, -1, dim))
        bq = bqk
        bk = F.normalize(bqk, p=2, dim=-1).type_as(bq)

        def look_one_back(x):
            x_extra = torch.cat([x[:, -1:, ...], x[:, :-1, ...]], dim=1)
            return torch.cat([x, x_extra], dim=2)
        bk = look_one_back(bk)
        bv = look_one_back(bv)
        bkv_t = look_one_back(bkv_t)
        dots = torch.einsum('bhie,bhje->bhij', bq, bk) * (dim ** -0.5)
        masked_value = max_neg_value(dots)
        if self.causal:
            mask = bq_t[:, :, :, None] < bkv_t[:, :, None, :]
            dots.masked_fill_(mask, masked_value)
            del mask
        self_mask = bq_t[:, :, :, None] == bkv_t[:, :, None, :]
        dots.masked_fill_(self_mask, TOKEN_SELF_ATTN_VALUE)
        del self_mask
        dots_logsumexp = torch.logsumexp(dots, dim=-1, keepdim=True)
        dots = torch.exp(dots - dots_logsumexp).type_as(dots)
        dropped_dots = self.dropout(dots)
        bo = torch.einsum('buij,buje->buie', dropped_dots, bv)
        so = torch.reshape(bo, (batch_size, -1, dim))
        slogits = torch.reshape(dots_logsumexp, (batch_size, -1,))
        o = batched_index_select(so, undo_sort)
        logits = slogits.gather(1, undo_sort)
        o = torch.reshape(o, (batch_size, total_hashes, seqlen, dim))
        logits = torch.reshape(logits, (batch_size, total_hashes, seqlen, 1))
        probs = torch.exp(logits - torch.logsumexp(logits, dim=1, keepdim=True))
        out = torch.sum(o * probs, dim=1)
        return out, buckets


class LSHBlock(nn.Module):
    def __init__(self, dim, heads, bucket_size, n_hashes, causal, full=False):
        super().__init__()
        self.heads = heads
        self.full = full
        self.causal = causal
        self.norm1 = nn.LayerNorm(dim)
        self.toqk = nn.Linear(dim, dim, bias=False)
        self.tov = nn.Linear(dim, dim, bias=False)
        self.to_out = nn.Linear(dim, dim)
        self.attn = LSHAttention(bucket_size=bucket_size, n_hashes=n_hashes, causal=causal)
        self.norm2 = nn.LayerNorm(dim)
        self.ff = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim))

    def split_heads(self, x):
        b, t, d = x.shape
        return x.view(b, t, self.heads, -1).transpose(1, 2).reshape(b * self.heads, t, -1)

    def forward(self, x):
        b, t, d = x.shape
        h = self.norm1(x)
        qk, v = self.split_heads(self.toqk(h)), self.split_heads(self.tov(h))
        if self.full:
            k = F.normalize(qk, p=2, dim=-1)
            dots = qk @ k.transpose(1, 2) * (qk.shape[-1] ** -0.5)
            if self.causal:
                dots = dots.masked_fill(torch.triu(torch.ones(t, t, dtype=torch.bool), 1), max_neg_value(dots))
            dots = dots.masked_fill(torch.eye(t, dtype=torch.bool), TOKEN_SELF_ATTN_VALUE)
            out = dots.softmax(-1) @ v
            self.last_buckets = None
        else:
            out, self.last_buckets = self.attn(qk, v)
        out = out.view(b, self.heads, t, -1).transpose(1, 2).reshape(b, t, d)
        x = x + self.to_out(out)
        return x + self.ff(self.norm2(x))


class LM(nn.Module):
    def __init__(self, vocab, dim, depth, heads, bucket_size, n_hashes, full):
        super().__init__()
        self.emb = nn.Embedding(vocab, dim)
        self.pos = nn.Embedding(64, dim)
        self.blocks = nn.ModuleList([LSHBlock(dim, heads, bucket_size, n_hashes, True, full) for _ in range(depth)])
        self.norm = nn.LayerNorm(dim)
        self.out = nn.Linear(dim, vocab)

    def forward(self, idx):
        x = self.emb(idx) + self.pos(torch.arange(idx.shape[1]))
        for blk in self.blocks:
            x = blk(x)
        return self.out(self.norm(x))


def main(argv=None):
    parser = argparse.ArgumentParser()
    parser.add_argument("--full", action="store_true")
    parser.add_argument("--n_hashes", type=int, default=2)
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--quiet", action="store_true")
    args = parser.parse_args(argv)
    log = (lambda *a: None) if args.quiet else print
    torch.manual_seed(0)
    vocab, seqlen = 16, 32
    model = LM(vocab, 32, 2, 2, bucket_size=4, n_hashes=args.n_hashes, full=args.full)
    initial_state = {k: v.clone() for k, v in model.state_dict().items()}
    opt = torch.optim.Adam(model.parameters(), lr=2e-3)
    base = torch.arange(seqlen + 1) % vocab
    step_losses, buckets = [], []
    for step in range(args.steps):
        shift = torch.randint(0, vocab, (4, 1))
        seq = (base.unsqueeze(0) + shift) % vocab
        logits = model(seq[:, :-1])
        loss = F.cross_entropy(logits.reshape(-1, vocab), seq[:, 1:].reshape(-1))
        opt.zero_grad()
        loss.backward()
        opt.step()
        step_losses.append(loss.item())
        if model.blocks[0].last_buckets is not None:
            buckets.append(model.blocks[0].last_buckets.clone())
        log(f"step {step} loss {loss.item():.4f}")
    return {"initial_state": initial_state, "step_losses": step_losses,
            "buckets": torch.stack(buckets) if buckets else torch.zeros(0)}


if __name__ == "__main__":
    main()
