"""A sentiment classifier on nn.TransformerEncoder, as the IMDB examples that build one write it: a
padding_idx embedding scaled by math.sqrt(d_model), the tutorial's PositionalEncoding (batch-first
buffer of sin/cos), nn.TransformerEncoderLayer(batch_first=True, activation="gelu") stacked by
nn.TransformerEncoder(..., enable_nested_tensor=True) with a final LayerNorm, src_key_padding_mask =
(src == PAD_IDX), pooling by a [CLS] token, a masked mean or a plain x.mean(dim=1) (which in inference
sees torch's nested-tensor path: zeros at the padded positions), CrossEntropyLoss(label_smoothing=0.1),
AdamW with a linear warmup/decay through LambdaLR (transformers' get_linear_schedule_with_warmup),
clip_grad_norm_, evaluation under torch.inference_mode(), and the predictions of a few reviews. The
IMDB reviews are synthetic (sentiment words among neutral ones) padded by pad_sequence in a
collate_fn."""
import argparse
import math
import random

import torch
import torch.nn as nn
from torch.nn.utils.rnn import pad_sequence
from torch.utils.data import DataLoader, Dataset

PAD_IDX, CLS_IDX, UNK_IDX = 0, 1, 2


class PositionalEncoding(nn.Module):

    def __init__(self, d_model: int, dropout: float = 0.1, max_len: int = 5000):
        super().__init__()
        self.dropout = nn.Dropout(p=dropout)

        position = torch.arange(max_len).unsqueeze(1)
        div_term = torch.exp(torch.arange(0, d_model, 2) * (-math.log(10000.0) / d_model))
        pe = torch.zeros(1, max_len, d_model)
        pe[0, :, 0::2] = torch.sin(position * div_term)
        pe[0, :, 1::2] = torch.cos(position * div_term)
        self.register_buffer('pe', pe)

    def forward(self, x):
        """
        Args:
            x: Tensor, shape [batch_size, seq_len, embedding_dim]
        """
        x = x + self.pe[:, :x.size(1)]
        return self.dropout(x)


class TransformerClassifier(nn.Module):
    def __init__(self, vocab_size, d_model=128, nhead=4, dim_feedforward=256, num_layers=2, num_classes=2,
                 dropout=0.1, pooling='cls'):
        super().__init__()
        self.d_model = d_model
        self.pooling = pooling
        self.embedding = nn.Embedding(vocab_size, d_model, padding_idx=PAD_IDX)
        self.pos_encoder = PositionalEncoding(d_model, dropout)
        encoder_layer = nn.TransformerEncoderLayer(d_model, nhead, dim_feedforward, dropout,
                                                   activation="gelu", batch_first=True)
        self.encoder = nn.TransformerEncoder(encoder_layer, num_layers, norm=nn.LayerNorm(d_model),
                                             enable_nested_tensor=True)
        self.dropout = nn.Dropout(dropout)
        self.classifier = nn.Linear(d_model, num_classes)
        self.init_weights()

    def init_weights(self):
        initrange = 0.1
        self.embedding.weight.data.uniform_(-initrange, initrange)
        self.classifier.bias.data.zero_()
        self.classifier.weight.data.uniform_(-initrange, initrange)

    def forward(self, src):
        src_key_padding_mask = src == PAD_IDX
        x = self.embedding(src) * math.sqrt(self.d_model)
        x = self.pos_encoder(x)
        x = self.encoder(x, src_key_padding_mask=src_key_padding_mask)
        if self.pooling == 'cls':
            x = x[:, 0]
        elif self.pooling == 'masked_mean':
            keep = (~src_key_padding_mask).unsqueeze(-1).type_as(x)
            x = (x * keep).sum(dim=1) / keep.sum(dim=1).clamp(min=1.0)
        else:
            x = x.mean(dim=1)
        return self.classifier(self.dropout(x))


def get_linear_schedule_with_warmup(optimizer, num_warmup_steps, num_training_steps, last_epoch=-1):
    def lr_lambda(current_step: int):
        if current_step < num_warmup_steps:
            return float(current_step) / float(max(1, num_warmup_steps))
        return max(
            0.0, float(num_training_steps - current_step) / float(max(1, num_training_steps - num_warmup_steps))
        )

    return torch.optim.lr_scheduler.LambdaLR(optimizer, lr_lambda, last_epoch)


class ReviewDataset(Dataset):
    def __init__(self, n, seed, vocab):
        rng = random.Random(seed)
        pos, neg = ["great", "wonderful", "loved", "superb", "moving"], ["awful", "boring", "hated", "dull", "mess"]
        neutral = ["the", "movie", "film", "plot", "actor", "was", "a", "and", "it", "story", "scene", "very"]
        self.items = []
        for _ in range(n):
            label = rng.randint(0, 1)
            words = [rng.choice(neutral) for _ in range(rng.randint(4, 20))]
            for _ in range(rng.randint(1, 3)):
                words.insert(rng.randrange(len(words) + 1), rng.choice(pos if label else neg))
            if rng.random() < 0.1:  # a few unknown words
                words.insert(0, "zzz%d" % rng.randrange(100))
            self.items.append((label, " ".join(words)))
        self.vocab = vocab

    def __len__(self):
        return len(self.items)

    def __getitem__(self, idx):
        return self.items[idx]


def build_vocab(datasets):
    itos = ["<pad>", "<cls>", "<unk>"]
    for ds in datasets:
        for _, text in ds:
            for w in text.split():
                if w not in itos and not w.startswith("zzz"):
                    itos.append(w)
    return {w: i for i, w in enumerate(itos)}


def main(argv=None):
    parser = argparse.ArgumentParser()
    parser.add_argument('--epochs', type=int, default=3)
    parser.add_argument('--batch_size', type=int, default=32)
    parser.add_argument('--n_train', type=int, default=512)
    parser.add_argument('--d_model', type=int, default=64)
    parser.add_argument('--nhead', type=int, default=4)
    parser.add_argument('--layers', type=int, default=2)
    parser.add_argument('--dropout', type=float, default=0.1)
    parser.add_argument('--pooling', choices=['cls', 'masked_mean', 'mean'], default='cls')
    parser.add_argument('--lr', type=float, default=5e-4)
    parser.add_argument('--quiet', action='store_true')
    args = parser.parse_args(argv)
    log = (lambda *a: None) if args.quiet else print

    torch.manual_seed(0)
    random.seed(0)
    train_ds = ReviewDataset(args.n_train, 1, None)
    test_ds = ReviewDataset(128, 2, None)
    vocab = build_vocab([train_ds])

    def text_pipeline(x):
        return [CLS_IDX] + [vocab.get(w, UNK_IDX) for w in x.split()]

    def collate_batch(batch):
        label_list, text_list = [], []
        for (_label, _text) in batch:
            label_list.append(_label)
            text_list.append(torch.tensor(text_pipeline(_text), dtype=torch.int64))
        return torch.tensor(label_list, dtype=torch.int64), pad_sequence(text_list, batch_first=True,
                                                                         padding_value=PAD_IDX)

    train_loader = DataLoader(train_ds, batch_size=args.batch_size, shuffle=True, collate_fn=collate_batch)
    test_loader = DataLoader(test_ds, batch_size=64, shuffle=False, collate_fn=collate_batch)

    model = TransformerClassifier(len(vocab), args.d_model, args.nhead, 2 * args.d_model, args.layers, 2,
                                  args.dropout, args.pooling)
    initial_state = {k: v.clone() for k, v in model.state_dict().items()}
    criterion = nn.CrossEntropyLoss(label_smoothing=0.1)
    no_decay = ["bias", "norm"]
    optimizer = torch.optim.AdamW([
        {"params": [p for n, p in model.named_parameters() if not any(nd in n for nd in no_decay)],
         "weight_decay": 0.01},
        {"params": [p for n, p in model.named_parameters() if any(nd in n for nd in no_decay)],
         "weight_decay": 0.0},
    ], lr=args.lr)
    total_steps = len(train_loader) * args.epochs
    scheduler = get_linear_schedule_with_warmup(optimizer, num_warmup_steps=total_steps // 10,
                                                num_training_steps=total_steps)

    def evaluate(loader):
        model.eval()
        total_acc, total_count, total_loss, logits = 0, 0, 0.0, []
        with torch.inference_mode():
            for label, text in loader:
                predicted_label = model(text)
                total_loss += criterion(predicted_label, label).item() * label.size(0)
                total_acc += (predicted_label.argmax(1) == label).sum().item()
                total_count += label.size(0)
                logits.append(predicted_label)
        return total_acc / total_count, total_loss / total_count, torch.cat(logits)

    record = {'initial_state': initial_state, 'step_losses': [], 'lrs': [], 'grad_norms': [], 'eval': []}
    for epoch in range(1, args.epochs + 1):
        model.train()
        for idx, (label, text) in enumerate(train_loader):
            optimizer.zero_grad()
            predicted_label = model(text)
            loss = criterion(predicted_label, label)
            loss.backward()
            grad_norm = torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            scheduler.step()
            record['step_losses'].append(loss.item())
            record['grad_norms'].append(grad_norm.item())
            record['lrs'].append(scheduler.get_last_lr()[0])
        acc, test_loss, logits = evaluate(test_loader)
        record['eval'].append((acc, test_loss))
        log(f'| epoch {epoch:3d} | test accuracy {acc:8.3f} | test loss {test_loss:8.4f}')
    record['test_logits'] = logits

    # predictions of a few reviews, one at a time (no padding) and as one padded batch
    reviews = ["the film was wonderful and moving", "a boring mess", "it was dull , the plot awful and the actor bad"]
    model.eval()
    with torch.no_grad():
        single = [model(torch.tensor([text_pipeline(r)])).softmax(-1)[0] for r in reviews]
        batch = model(pad_sequence([torch.tensor(text_pipeline(r)) for r in reviews], batch_first=True)).softmax(-1)
        # the encoder's own output at the padded positions of the batch
        text = pad_sequence([torch.tensor(text_pipeline(r)) for r in reviews], batch_first=True)
        x = model.pos_encoder(model.embedding(text) * math.sqrt(model.d_model))
        encoded = model.encoder(x, src_key_padding_mask=text == PAD_IDX)
    record['single'] = torch.stack(single)
    record['batch'] = batch
    record['encoded'] = encoded
    return record


if __name__ == '__main__':
    main()
