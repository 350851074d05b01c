"""pmixer/SASRec.pytorch as written: PointWiseFeedForward by Conv1d(kernel_size=1) over transpose(-1, -2), SASRec's
log2feats (item_emb(torch.LongTensor(log_seqs)) scaled by embedding_dim ** 0.5, NumPy positions
np.tile(np.arange(1, L + 1), [B, 1]) * (log_seqs != 0), timeline_mask = torch.BoolTensor(log_seqs == 0),
seqs *= ~timeline_mask.unsqueeze(-1), attention_mask = ~torch.tril(torch.ones((tl, tl), dtype=torch.bool)),
MultiheadAttention over torch.transpose(seqs, 0, 1) with a boolean attn_mask, LayerNorm(eps=1e-8) residuals), the
main.py training loop (xavier_normal_ on every parameter inside try / except, which skips the 1-D ones, zeroed
padding rows, BCEWithLogitsLoss on np.where(pos != 0) indices, the l2_emb * torch.norm(param) penalty, Adam with
betas=(0.9, 0.98)), WarpSampler-style negative sampling with NumPy, and evaluate()'s NDCG@10 / HR@10 from
-model.predict(...) argsort().argsort()[0]."""
import argparse

import numpy as np
import torch


class PointWiseFeedForward(torch.nn.Module):
    def __init__(self, hidden_units, dropout_rate):
        super(PointWiseFeedForward, self).__init__()
        self.conv1 = torch.nn.Conv1d(hidden_units, hidden_units, kernel_size=1)
        self.dropout1 = torch.nn.Dropout(p=dropout_rate)
        self.relu = torch.nn.ReLU()
        self.conv2 = torch.nn.Conv1d(hidden_units, hidden_units, kernel_size=1)
        self.dropout2 = torch.nn.Dropout(p=dropout_rate)

    def forward(self, inputs):
        outputs = self.dropout2(self.conv2(self.relu(self.dropout1(self.conv1(inputs.transpose(-1, -2))))))
        outputs = outputs.transpose(-1, -2)
        outputs += inputs
        return outputs


class SASRec(torch.nn.Module):
    def __init__(self, user_num, item_num, args):
        super(SASRec, self).__init__()
        self.user_num = user_num
        self.item_num = item_num
        self.dev = args.device
        self.item_emb = torch.nn.Embedding(self.item_num + 1, args.hidden_units, padding_idx=0)
        self.pos_emb = torch.nn.Embedding(args.maxlen + 1, args.hidden_units, padding_idx=0)
        self.emb_dropout = torch.nn.Dropout(p=args.dropout_rate)
        self.attention_layernorms = torch.nn.ModuleList()
        self.attention_layers = torch.nn.ModuleList()
        self.forward_layernorms = torch.nn.ModuleList()
        self.forward_layers = torch.nn.ModuleList()
        self.last_layernorm = torch.nn.LayerNorm(args.hidden_units, eps=1e-8)
        for _ in range(args.num_blocks):
            new_attn_layernorm = torch.nn.LayerNorm(args.hidden_units, eps=1e-8)
            self.attention_layernorms.append(new_attn_layernorm)
            new_attn_layer = torch.nn.MultiheadAttention(args.hidden_units, args.num_heads, args.dropout_rate)
            self.attention_layers.append(new_attn_layer)
            new_fwd_layernorm = torch.nn.LayerNorm(args.hidden_units, eps=1e-8)
            self.forward_layernorms.append(new_fwd_layernorm)
            new_fwd_layer = PointWiseFeedForward(args.hidden_units, args.dropout_rate)
            self.forward_layers.append(new_fwd_layer)

    def log2feats(self, log_seqs):
        seqs = self.item_emb(torch.LongTensor(log_seqs).to(self.dev))
        seqs *= self.item_emb.embedding_dim ** 0.5
        poss = np.tile(np.arange(1, log_seqs.shape[1] + 1), [log_seqs.shape[0], 1])
        poss *= (log_seqs != 0)
        seqs += self.pos_emb(torch.LongTensor(poss).to(self.dev))
        seqs = self.emb_dropout(seqs)
        tl = seqs.shape[1]
        attention_mask = ~torch.tril(torch.ones((tl, tl), dtype=torch.bool, device=self.dev))
        for i in range(len(self.attention_layers)):
            seqs = torch.transpose(seqs, 0, 1)
            Q = self.attention_layernorms[i](seqs)
            mha_outputs, _ = self.attention_layers[i](Q, seqs, seqs, attn_mask=attention_mask)
            seqs = Q + mha_outputs
            seqs = torch.transpose(seqs, 0, 1)
            seqs = self.forward_layernorms[i](seqs)
            seqs = self.forward_layers[i](seqs)
        log_feats = self.last_layernorm(seqs)
        return log_feats

    def forward(self, user_ids, log_seqs, pos_seqs, neg_seqs):
        log_feats = self.log2feats(log_seqs)
        pos_embs = self.item_emb(torch.LongTensor(pos_seqs).to(self.dev))
        neg_embs = self.item_emb(torch.LongTensor(neg_seqs).to(self.dev))
        pos_logits = (log_feats * pos_embs).sum(dim=-1)
        neg_logits = (log_feats * neg_embs).sum(dim=-1)
        return pos_logits, neg_logits

    def predict(self, user_ids, log_seqs, item_indices):
        log_feats = self.log2feats(log_seqs)
        final_feat = log_feats[:, -1, :]
        item_embs = self.item_emb(torch.LongTensor(item_indices).to(self.dev))
        logits = item_embs.matmul(final_feat.unsqueeze(-1)).squeeze(-1)
        return logits


def random_neq(l, r, s, rng):
    t = rng.randint(l, r)
    while t in s:
        t = rng.randint(l, r)
    return t


def sample_batch(user_train, usernum, itemnum, batch_size, maxlen, rng):
    def sample():
        user = rng.randint(1, usernum + 1)
        while len(user_train[user]) <= 1:
            user = rng.randint(1, usernum + 1)
        seq = np.zeros([maxlen], dtype=np.int32)
        pos = np.zeros([maxlen], dtype=np.int32)
        neg = np.zeros([maxlen], dtype=np.int32)
        nxt = user_train[user][-1]
        idx = maxlen - 1
        ts = set(user_train[user])
        for i in reversed(user_train[user][:-1]):
            seq[idx] = i
            pos[idx] = nxt
            if nxt != 0:
                neg[idx] = random_neq(1, itemnum + 1, ts, rng)
            nxt = i
            idx -= 1
            if idx == -1:
                break
        return (user, seq, pos, neg)
    return zip(*[sample() for _ in range(batch_size)])


def main(argv=None):
    parser = argparse.ArgumentParser()
    parser.add_argument('--batch_size', default=16, type=int)
    parser.add_argument('--lr', default=0.001, type=float)
    parser.add_argument('--maxlen', default=10, type=int)
    parser.add_argument('--hidden_units', default=16, type=int)
    parser.add_argument('--num_blocks', default=2, type=int)
    parser.add_argument('--num_epochs', default=16, type=int)
    parser.add_argument('--num_heads', default=1, type=int)
    parser.add_argument('--dropout_rate', default=0.2, type=float)
    parser.add_argument('--l2_emb', default=0.0, type=float)
    parser.add_argument('--device', default='cpu', type=str)
    parser.add_argument("--quiet", action="store_true")
    args = parser.parse_args(argv)
    log = (lambda *a: None) if args.quiet else print
    torch.manual_seed(0)
    rng = np.random.RandomState(0)
    usernum, itemnum = 20, 30
    user_train = {u: list(rng.randint(1, itemnum + 1, size=rng.randint(3, 12))) for u in range(1, usernum + 1)}
    user_test = {u: [rng.randint(1, itemnum + 1)] for u in range(1, usernum + 1)}
    model = SASRec(usernum, itemnum, args).to(args.device)
    skipped = []
    for name, param in model.named_parameters():
        try:
            torch.nn.init.xavier_normal_(param.data)
        except Exception:
            skipped.append(name)
    model.pos_emb.weight.data[0, :] = 0
    model.item_emb.weight.data[0, :] = 0
    initial_state = {k: v.clone() for k, v in model.state_dict().items()}
    model.train()
    bce_criterion = torch.nn.BCEWithLogitsLoss()
    adam_optimizer = torch.optim.Adam(model.parameters(), lr=args.lr, betas=(0.9, 0.98))
    step_losses = []
    for epoch in range(1, args.num_epochs + 1):
        u, seq, pos, neg = sample_batch(user_train, usernum, itemnum, args.batch_size, args.maxlen, rng)
        u, seq, pos, neg = np.array(u), np.array(seq), np.array(pos), np.array(neg)
        pos_logits, neg_logits = model(u, seq, pos, neg)
        pos_labels, neg_labels = (torch.ones(pos_logits.shape, device=args.device),
                                  torch.zeros(neg_logits.shape, device=args.device))
        adam_optimizer.zero_grad()
        indices = np.where(pos != 0)
        loss = bce_criterion(pos_logits[indices], pos_labels[indices])
        loss += bce_criterion(neg_logits[indices], neg_labels[indices])
        for param in model.item_emb.parameters():
            loss += args.l2_emb * torch.norm(param)
        loss.backward()
        adam_optimizer.step()
        step_losses.append(loss.item())
        log("loss in epoch {}: {}".format(epoch, loss.item()))
    model.eval()
    NDCG, HT, ranks = 0.0, 0.0, []
    with torch.no_grad():
        for u in range(1, usernum + 1):
            seq = np.zeros([args.maxlen], dtype=np.int32)
            idx = args.maxlen - 1
            for i in reversed(user_train[u]):
                seq[idx] = i
                idx -= 1
                if idx == -1:
                    break
            rated = set(user_train[u])
            rated.add(0)
            item_idx = [user_test[u][0]]
            for _ in range(10):
                t = rng.randint(1, itemnum + 1)
                while t in rated:
                    t = rng.randint(1, itemnum + 1)
                item_idx.append(t)
            predictions = -model.predict(*[np.array(l) for l in [[u], [seq], item_idx]])
            predictions = predictions[0]
            rank = predictions.argsort().argsort()[0].item()
            ranks.append(rank)
            if rank < 10:
                NDCG += 1 / np.log2(rank + 2)
                HT += 1
    return {"initial_state": initial_state, "step_losses": step_losses, "skipped": skipped, "ranks": ranks,
            "ndcg": NDCG / usernum, "hr": HT / usernum}


if __name__ == "__main__":
    main()
