"""Word2vec skip-gram with negative sampling as Andras7/word2vec-pytorch writes it (model.py's
SkipGramModel: u_embeddings / v_embeddings (dense here: the repo's sparse=True needs SparseAdam),
init.uniform_(-initrange, initrange) and init.constant_(0), forward with torch.sum(torch.mul(emb_u,
emb_v), dim=1), torch.clamp(score, max=10, min=-10), -F.logsigmoid, torch.bmm(emb_neg_v,
emb_u.unsqueeze(2)).squeeze(), the mean of both; data_reader.py's DataReader (word frequency,
discards from subsampling t=1e-4, the unigram^0.75 negatives table consumed in order, np.random.shuffle),
Word2vecDataset's random window with np.random.randint and collate; trainer.py's loop with
optim.lr_scheduler.CosineAnnealingLR(optimizer, len(self.dataloader)), running_loss = running_loss *
0.9 + loss.item() * 0.1, save_embedding's u_embeddings weights) and the word similarities through
F.cosine_similarity / torch.topk."""
import argparse

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim
from torch.nn import init
from torch.utils.data import DataLoader, Dataset

np.random.seed(12345)


class DataReader:
    NEGATIVE_TABLE_SIZE = 1e8

    def __init__(self, sentences, min_count, table_size=1e5):
        self.negatives = []
        self.discards = []
        self.negpos = 0
        self.NEGATIVE_TABLE_SIZE = table_size

        self.word2id = dict()
        self.id2word = dict()
        self.sentences_count = 0
        self.token_count = 0
        self.word_frequency = dict()

        self.sentences = sentences
        self.read_words(min_count)
        self.initTableNegatives()
        self.initTableDiscards()

    def read_words(self, min_count):
        word_frequency = dict()
        for line in self.sentences:
            line = line.split()
            if len(line) > 1:
                self.sentences_count += 1
                for word in line:
                    if len(word) > 0:
                        self.token_count += 1
                        word_frequency[word] = word_frequency.get(word, 0) + 1

        wid = 0
        for w, c in word_frequency.items():
            if c < min_count:
                continue
            self.word2id[w] = wid
            self.id2word[wid] = w
            self.word_frequency[wid] = c
            wid += 1

    def initTableDiscards(self):
        t = 0.0001
        f = np.array(list(self.word_frequency.values())) / self.token_count
        self.discards = np.sqrt(t / f) + (t / f)

    def initTableNegatives(self):
        pow_frequency = np.array(list(self.word_frequency.values())) ** 0.5
        words_pow = sum(pow_frequency)
        ratio = pow_frequency / words_pow
        count = np.round(ratio * self.NEGATIVE_TABLE_SIZE)
        for wid, c in enumerate(count):
            self.negatives += [wid] * int(c)
        self.negatives = np.array(self.negatives)
        np.random.shuffle(self.negatives)

    def getNegatives(self, target, size):  # TODO check equality with target
        response = self.negatives[self.negpos:self.negpos + size]
        self.negpos = (self.negpos + size) % len(self.negatives)
        if len(response) != size:
            return np.concatenate((response, self.negatives[0:self.negpos]))
        return response


class Word2vecDataset(Dataset):
    def __init__(self, data, window_size):
        self.data = data
        self.window_size = window_size

    def __len__(self):
        return self.data.sentences_count

    def __getitem__(self, idx):
        line = self.data.sentences[idx]
        words = line.split()
        if len(words) > 1:
            word_ids = [self.data.word2id[w] for w in words if
                        w in self.data.word2id and np.random.rand() < self.data.discards[self.data.word2id[w]]]

            boundary = np.random.randint(1, self.window_size)
            return [(u, v, self.data.getNegatives(v, 5)) for i, u in enumerate(word_ids) for j, v in
                    enumerate(word_ids[max(i - boundary, 0):i + boundary]) if u != v]
        return []

    @staticmethod
    def collate(batches):
        all_u = [u for batch in batches for u, _, _ in batch if len(batch) > 0]
        all_v = [v for batch in batches for _, v, _ in batch if len(batch) > 0]
        all_neg_v = [neg_v for batch in batches for _, _, neg_v in batch if len(batch) > 0]

        return torch.LongTensor(all_u), torch.LongTensor(all_v), torch.LongTensor(np.array(all_neg_v))


class SkipGramModel(nn.Module):

    def __init__(self, emb_size, emb_dimension):
        super(SkipGramModel, self).__init__()
        self.emb_size = emb_size
        self.emb_dimension = emb_dimension
        self.u_embeddings = nn.Embedding(emb_size, emb_dimension)
        self.v_embeddings = nn.Embedding(emb_size, emb_dimension)

        initrange = 1.0 / self.emb_dimension
        init.uniform_(self.u_embeddings.weight.data, -initrange, initrange)
        init.constant_(self.v_embeddings.weight.data, 0)

    def forward(self, pos_u, pos_v, neg_v):
        emb_u = self.u_embeddings(pos_u)
        emb_v = self.v_embeddings(pos_v)
        emb_neg_v = self.v_embeddings(neg_v)

        score = torch.sum(torch.mul(emb_u, emb_v), dim=1)
        score = torch.clamp(score, max=10, min=-10)
        score = -F.logsigmoid(score)

        neg_score = torch.bmm(emb_neg_v, emb_u.unsqueeze(2)).squeeze()
        neg_score = torch.clamp(neg_score, max=10, min=-10)
        neg_score = -torch.sum(F.logsigmoid(-neg_score), dim=1)

        return torch.mean(score + neg_score)

    def save_embedding(self, id2word):
        embedding = self.u_embeddings.weight.cpu().data.numpy()
        lines = ['%d %d' % (len(id2word), self.emb_dimension)]
        for wid, w in id2word.items():
            e = ' '.join(map(lambda x: str(x), embedding[wid]))
            lines.append('%s %s' % (w, e))
        return lines


class Word2VecTrainer:
    def __init__(self, sentences, emb_dimension=100, batch_size=32, window_size=5, iterations=3,
                 initial_lr=0.001, min_count=1, optimizer='adam'):
        self.data = DataReader(sentences, min_count)
        dataset = Word2vecDataset(self.data, window_size)
        self.dataloader = DataLoader(dataset, batch_size=batch_size,
                                     shuffle=False, num_workers=0, collate_fn=dataset.collate)

        self.emb_size = len(self.data.word2id)
        self.emb_dimension = emb_dimension
        self.batch_size = batch_size
        self.iterations = iterations
        self.initial_lr = initial_lr
        self.optimizer_name = optimizer
        self.skip_gram_model = SkipGramModel(self.emb_size, self.emb_dimension)
        self.device = torch.device("cpu")

    def train(self, step_losses):
        for iteration in range(self.iterations):
            if self.optimizer_name == 'adam':
                optimizer = optim.Adam(self.skip_gram_model.parameters(), lr=self.initial_lr)
            else:
                optimizer = optim.SGD(self.skip_gram_model.parameters(), lr=self.initial_lr)
            scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, len(self.dataloader))

            running_loss = 0.0
            for i, sample_batched in enumerate(self.dataloader):
                if len(sample_batched[0]) > 1:
                    pos_u = sample_batched[0].to(self.device)
                    pos_v = sample_batched[1].to(self.device)
                    neg_v = sample_batched[2].to(self.device)

                    optimizer.zero_grad()
                    loss = self.skip_gram_model.forward(pos_u, pos_v, neg_v)
                    loss.backward()
                    optimizer.step()
                    scheduler.step()

                    running_loss = running_loss * 0.9 + loss.item() * 0.1
                    step_losses.append(loss.item())
        return running_loss


def main(argv=None):
    p = argparse.ArgumentParser()
    p.add_argument('--iterations', type=int, default=3)
    p.add_argument('--emb_dimension', type=int, default=24)
    p.add_argument('--lr', type=float, default=0.01)
    p.add_argument('--optimizer', default='adam')
    p.add_argument('--quiet', action='store_true')
    args = p.parse_args(argv)

    np.random.seed(12345)
    torch.manual_seed(0)
    rng = np.random.RandomState(3)
    topics = [["king", "queen", "royal", "crown", "palace"], ["dog", "cat", "pet", "puppy", "kitten"],
              ["car", "road", "drive", "wheel", "engine"]]
    common = ["the", "a", "of", "and", "is", "in"]
    sentences = []
    for _ in range(400):
        t = topics[rng.randint(3)]
        sentences.append(" ".join(rng.choice(t + common, size=rng.randint(6, 12))))
    w2v = Word2VecTrainer(sentences, emb_dimension=args.emb_dimension, batch_size=8, iterations=args.iterations,
                          initial_lr=args.lr, optimizer=args.optimizer)
    initial_state = {k: v.clone() for k, v in w2v.skip_gram_model.state_dict().items()}
    step_losses = []
    running = w2v.train(step_losses)
    emb = w2v.skip_gram_model.u_embeddings.weight.detach()
    q = emb[w2v.data.word2id["dog"]]
    sims = F.cosine_similarity(q.unsqueeze(0), emb, dim=1)
    top = torch.topk(sims, 4)
    return {"initial_state": initial_state, "step_losses": step_losses, "running": running,
            "neighbours": [w2v.data.id2word[i] for i in top.indices.tolist()], "sims": sims,
            "saved": w2v.skip_gram_model.save_embedding(w2v.data.id2word)[:3]}


if __name__ == '__main__':
    main()
