"""The "Text classification with the torchtext library" tutorial: TextClassificationModel
(nn.EmbeddingBag(vocab_size, embed_dim, sparse=False), mode 'mean', then a Linear; weights set by
.data.uniform_ and .data.zero_()), collate_batch (labels and token ids as int64 tensors, offsets by
torch.tensor(offsets[:-1]).cumsum(dim=0) and torch.cat of the texts), DataLoader with collate_fn
and shuffle, random_split of the training set, CrossEntropyLoss, SGD(lr=5), StepLR(1.0,
gamma=0.1) stepped when the validation accuracy drops, clip_grad_norm_(0.1), argmax accuracy, and
predict() on a new sentence with offsets torch.tensor([0]). AG_NEWS, torchtext's basic_english
tokenizer and build_vocab_from_iterator are replaced by a synthetic four-topic corpus, a lowercasing
splitter and a small Vocab with '<unk>' as default index."""
import argparse
import random
import re
import time
from collections import Counter

import torch
from torch import nn
from torch.utils.data import DataLoader
from torch.utils.data.dataset import random_split

TOPICS = {
    1: ["election", "minister", "government", "treaty", "border", "president", "vote", "parliament"],
    2: ["match", "goal", "season", "coach", "league", "striker", "title", "tournament"],
    3: ["shares", "market", "profit", "bank", "investors", "earnings", "stocks", "economy"],
    4: ["software", "computer", "internet", "chip", "startup", "phone", "data", "robot"],
}
COMMON = ["the", "a", "of", "in", "on", "new", "says", "after", "with", "for", "and", "to", "is", "its"]


def synthetic_ag_news(n, seed):
    rng = random.Random(seed)
    rows = []
    for _ in range(n):
        label = rng.randint(1, 4)
        words = []
        for _ in range(rng.randint(4, 14)):
            r = rng.random()
            if r < 0.35:
                words.append(rng.choice(TOPICS[label]))
            elif r < 0.45:
                words.append(rng.choice(TOPICS[rng.randint(1, 4)]))
            else:
                words.append(rng.choice(COMMON))
        rows.append((label, " ".join(words).capitalize() + "."))
    return rows


def tokenizer(line):
    """torchtext's basic_english: lowercase, punctuation split off."""
    line = line.lower()
    line = re.sub(r"([.,!?'])", r" \1 ", line)
    return line.split()


class Vocab:
    def __init__(self, counter, specials):
        self.itos = list(specials) + [w for w, _ in sorted(counter.items(), key=lambda x: (-x[1], x[0]))
                                      if w not in specials]
        self.stoi = {w: i for i, w in enumerate(self.itos)}
        self.default_index = None

    def set_default_index(self, index):
        self.default_index = index

    def __getitem__(self, token):
        return self.stoi.get(token, self.default_index)

    def __call__(self, tokens):
        return [self.stoi.get(t, self.default_index) for t in tokens]

    def __len__(self):
        return len(self.itos)


def build_vocab_from_iterator(iterator, specials):
    counter = Counter()
    for tokens in iterator:
        counter.update(tokens)
    return Vocab(counter, specials)


class TextClassificationModel(nn.Module):

    def __init__(self, vocab_size, embed_dim, num_class):
        super(TextClassificationModel, self).__init__()
        self.embedding = nn.EmbeddingBag(vocab_size, embed_dim, sparse=False)
        self.fc = nn.Linear(embed_dim, num_class)
        self.init_weights()

    def init_weights(self):
        initrange = 0.5
        self.embedding.weight.data.uniform_(-initrange, initrange)
        self.fc.weight.data.uniform_(-initrange, initrange)
        self.fc.bias.data.zero_()

    def forward(self, text, offsets):
        embedded = self.embedding(text, offsets)
        return self.fc(embedded)


def main(argv=None):
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=10)
    parser.add_argument("--lr", type=float, default=5)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--emsize", type=int, default=64)
    parser.add_argument("--train-size", type=int, default=12000)
    parser.add_argument("--test-size", type=int, default=760)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--quiet", action="store_true")
    args = parser.parse_args(argv)
    log = (lambda *a: None) if args.quiet else print

    torch.manual_seed(args.seed)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")

    train_iter = synthetic_ag_news(args.train_size, 1)

    def yield_tokens(data_iter):
        for _, text in data_iter:
            yield tokenizer(text)

    vocab = build_vocab_from_iterator(yield_tokens(train_iter), specials=["<unk>"])
    vocab.set_default_index(vocab["<unk>"])

    text_pipeline = lambda x: vocab(tokenizer(x))
    label_pipeline = lambda x: int(x) - 1

    def collate_batch(batch):
        label_list, text_list, offsets = [], [], [0]
        for (_label, _text) in batch:
            label_list.append(label_pipeline(_label))
            processed_text = torch.tensor(text_pipeline(_text), dtype=torch.int64)
            text_list.append(processed_text)
            offsets.append(processed_text.size(0))
        label_list = torch.tensor(label_list, dtype=torch.int64)
        offsets = torch.tensor(offsets[:-1]).cumsum(dim=0)
        text_list = torch.cat(text_list)
        return label_list.to(device), text_list.to(device), offsets.to(device)

    num_class = len(set([label for (label, text) in train_iter]))
    vocab_size = len(vocab)
    model = TextClassificationModel(vocab_size, args.emsize, num_class).to(device)
    initial_state = {k: v.clone() for k, v in model.state_dict().items()}

    step_losses = []

    def train(dataloader):
        model.train()
        total_acc, total_count = 0, 0
        log_interval = 500
        start_time = time.time()

        for idx, (label, text, offsets) in enumerate(dataloader):
            optimizer.zero_grad()
            predicted_label = model(text, offsets)
            loss = criterion(predicted_label, label)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 0.1)
            optimizer.step()
            step_losses.append(loss.item())
            total_acc += (predicted_label.argmax(1) == label).sum().item()
            total_count += label.size(0)
            if idx % log_interval == 0 and idx > 0:
                elapsed = time.time() - start_time
                log('| epoch {:3d} | {:5d}/{:5d} batches '
                    '| accuracy {:8.3f}'.format(epoch, idx, len(dataloader),
                                                total_acc / total_count))
                total_acc, total_count = 0, 0
                start_time = time.time()

    def evaluate(dataloader):
        model.eval()
        total_acc, total_count = 0, 0

        with torch.no_grad():
            for idx, (label, text, offsets) in enumerate(dataloader):
                predicted_label = model(text, offsets)
                loss = criterion(predicted_label, label)
                total_acc += (predicted_label.argmax(1) == label).sum().item()
                total_count += label.size(0)
        return total_acc / total_count

    # Hyperparameters
    EPOCHS = args.epochs  # epoch
    LR = args.lr  # learning rate
    BATCH_SIZE = args.batch_size  # batch size for training

    criterion = torch.nn.CrossEntropyLoss()
    optimizer = torch.optim.SGD(model.parameters(), lr=LR)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, 1.0, gamma=0.1)
    total_accu = None
    train_dataset = train_iter  # to_map_style_dataset(train_iter)
    test_dataset = synthetic_ag_news(args.test_size, 2)
    num_train = int(len(train_dataset) * 0.95)
    split_train_, split_valid_ = \
        random_split(train_dataset, [num_train, len(train_dataset) - num_train])

    train_dataloader = DataLoader(split_train_, batch_size=BATCH_SIZE,
                                  shuffle=True, collate_fn=collate_batch)
    valid_dataloader = DataLoader(split_valid_, batch_size=BATCH_SIZE,
                                  shuffle=True, collate_fn=collate_batch)
    test_dataloader = DataLoader(test_dataset, batch_size=BATCH_SIZE,
                                 shuffle=True, collate_fn=collate_batch)

    val_accs, lrs = [], []
    for epoch in range(1, EPOCHS + 1):
        epoch_start_time = time.time()
        train(train_dataloader)
        accu_val = evaluate(valid_dataloader)
        if total_accu is not None and total_accu > accu_val:
            scheduler.step()
        else:
            total_accu = accu_val
        val_accs.append(accu_val)
        lrs.append(scheduler.get_last_lr()[0])
        log('-' * 59)
        log('| end of epoch {:3d} | time: {:5.2f}s | '
            'valid accuracy {:8.3f} '.format(epoch, time.time() - epoch_start_time, accu_val))
        log('-' * 59)

    log('Checking the results of test dataset.')
    accu_test = evaluate(test_dataloader)
    log('test accuracy {:8.3f}'.format(accu_test))

    ag_news_label = {1: "World", 2: "Sports", 3: "Business", 4: "Sci/Tec"}

    def predict(text, text_pipeline):
        with torch.no_grad():
            text = torch.tensor(text_pipeline(text))
            output = model(text, torch.tensor([0]))
            return output.argmax(1).item() + 1

    ex_text_str = "The striker scored a late goal as the coach celebrated the league title with the season over."
    model = model.to("cpu")
    predicted = ag_news_label[predict(ex_text_str, text_pipeline)]
    log("This is a %s news" % predicted)
    return {"initial_state": initial_state, "step_losses": step_losses, "val_accs": val_accs, "lrs": lrs,
            "accu_test": accu_test, "predicted": predicted, "vocab_size": vocab_size}


if __name__ == "__main__":
    main()
