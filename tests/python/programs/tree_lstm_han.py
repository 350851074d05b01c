"""Two structured-text classifiers as written. stanfordnlp/treelstm.pytorch's Child-Sum Tree-LSTM (Tree objects
with add_child / num_children, node_forward with torch.sum(child_h, dim=0, keepdim=True), ioux / iouh split by
torch.split(iou, iou.size(1) // 3, dim=1), F.sigmoid / F.tanh, fx(inputs).repeat(len(child_h), 1),
torch.mul(f, child_c), the recursive forward filling tree.state, child_c = inputs[0].detach().new(1, mem_dim)
.fill_(0.).requires_grad_(), the Similarity module's torch.mul / torch.abs(torch.add(lvec, -rvec)) features,
the sparse target distribution of map_label_to_target and KLDivLoss over log_softmax, Adagrad with
weight_decay), and sgrvinod's Hierarchical Attention Network (sentences and words packed by
pack_padded_sequence(enforce_sorted=False), attention computed on PackedSequence.data and re-wrapped as
PackedSequence(data=..., batch_sizes=..., sorted_indices=..., unsorted_indices=...), pad_packed_sequence,
exp-then-normalise word / sentence attention with max subtraction, bidirectional GRUs, Adam and
clip_grad_norm_)."""
import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.utils.rnn import PackedSequence, pack_padded_sequence, pad_packed_sequence


class Tree(object):
    def __init__(self):
        self.parent = None
        self.num_children = 0
        self.children = list()

    def add_child(self, child):
        child.parent = self
        self.num_children += 1
        self.children.append(child)

    def size(self):
        if getattr(self, '_size', None):
            return self._size
        count = 1
        for i in range(self.num_children):
            count += self.children[i].size()
        self._size = count
        return self._size


class ChildSumTreeLSTM(nn.Module):
    def __init__(self, in_dim, mem_dim):
        super(ChildSumTreeLSTM, self).__init__()
        self.in_dim = in_dim
        self.mem_dim = mem_dim
        self.ioux = nn.Linear(self.in_dim, 3 * self.mem_dim)
        self.iouh = nn.Linear(self.mem_dim, 3 * self.mem_dim)
        self.fx = nn.Linear(self.in_dim, self.mem_dim)
        self.fh = nn.Linear(self.mem_dim, self.mem_dim)

    def node_forward(self, inputs, child_c, child_h):
        child_h_sum = torch.sum(child_h, dim=0, keepdim=True)
        iou = self.ioux(inputs) + self.iouh(child_h_sum)
        i, o, u = torch.split(iou, iou.size(1) // 3, dim=1)
        i, o, u = F.sigmoid(i), F.sigmoid(o), F.tanh(u)
        f = F.sigmoid(self.fh(child_h) + self.fx(inputs).repeat(len(child_h), 1))
        fc = torch.mul(f, child_c)
        c = torch.mul(i, u) + torch.sum(fc, dim=0, keepdim=True)
        h = torch.mul(o, F.tanh(c))
        return c, h

    def forward(self, tree, inputs):
        for idx in range(tree.num_children):
            self.forward(tree.children[idx], inputs)
        if tree.num_children == 0:
            child_c = inputs[0].detach().new(1, self.mem_dim).fill_(0.).requires_grad_()
            child_h = inputs[0].detach().new(1, self.mem_dim).fill_(0.).requires_grad_()
        else:
            child_c, child_h = zip(*map(lambda x: x.state, tree.children))
            child_c, child_h = torch.cat(child_c, dim=0), torch.cat(child_h, dim=0)
        tree.state = self.node_forward(inputs[tree.idx], child_c, child_h)
        return tree.state


class Similarity(nn.Module):
    def __init__(self, mem_dim, hidden_dim, num_classes):
        super(Similarity, self).__init__()
        self.wh = nn.Linear(2 * mem_dim, hidden_dim)
        self.wp = nn.Linear(hidden_dim, num_classes)

    def forward(self, lvec, rvec):
        mult_dist = torch.mul(lvec, rvec)
        abs_dist = torch.abs(torch.add(lvec, -rvec))
        vec_dist = torch.cat((mult_dist, abs_dist), 1)
        out = F.sigmoid(self.wh(vec_dist))
        out = F.log_softmax(self.wp(out), dim=1)
        return out


class SimilarityTreeLSTM(nn.Module):
    def __init__(self, vocab_size, in_dim, mem_dim, hidden_dim, num_classes, sparsity, freeze):
        super(SimilarityTreeLSTM, self).__init__()
        self.emb = nn.Embedding(vocab_size, in_dim, padding_idx=0, sparse=sparsity)
        if freeze:
            self.emb.weight.requires_grad = False
        self.childsumtreelstm = ChildSumTreeLSTM(in_dim, mem_dim)
        self.similarity = Similarity(mem_dim, hidden_dim, num_classes)

    def forward(self, ltree, linputs, rtree, rinputs):
        linputs = self.emb(linputs)
        rinputs = self.emb(rinputs)
        lstate, lhidden = self.childsumtreelstm(ltree, linputs)
        rstate, rhidden = self.childsumtreelstm(rtree, rinputs)
        output = self.similarity(lstate, rstate)
        return output


def map_label_to_target(label, num_classes):
    target = torch.zeros(1, num_classes, dtype=torch.float)
    ceil = int(math_ceil(label))
    floor = int(math_floor(label))
    if ceil == floor:
        target[0, floor - 1] = 1
    else:
        target[0, floor - 1] = ceil - label
        target[0, ceil - 1] = label - floor
    return target


def math_ceil(x):
    import math
    return math.ceil(x)


def math_floor(x):
    import math
    return math.floor(x)


def random_tree(gen, n):
    nodes = [Tree() for _ in range(n)]
    for i, node in enumerate(nodes):
        node.idx = i
    for i in range(1, n):
        parent = int(torch.randint(0, i, (1,), generator=gen))
        nodes[parent].add_child(nodes[i])
    return nodes[0]


class WordAttention(nn.Module):
    def __init__(self, vocab_size, emb_size, word_rnn_size, word_att_size):
        super().__init__()
        self.embeddings = nn.Embedding(vocab_size, emb_size)
        self.word_rnn = nn.GRU(emb_size, word_rnn_size, num_layers=1, bidirectional=True, batch_first=True)
        self.word_attention = nn.Linear(2 * word_rnn_size, word_att_size)
        self.word_context_vector = nn.Linear(word_att_size, 1, bias=False)

    def forward(self, sentences, words_per_sentence):
        sentences = self.embeddings(sentences)
        packed_words = pack_padded_sequence(sentences, lengths=words_per_sentence.tolist(), batch_first=True,
                                            enforce_sorted=False)
        packed_words, _ = self.word_rnn(packed_words)
        att_w = self.word_attention(packed_words.data)
        att_w = torch.tanh(att_w)
        att_w = self.word_context_vector(att_w).squeeze(1)
        max_value = att_w.max()
        att_w = torch.exp(att_w - max_value)
        att_w, _ = pad_packed_sequence(PackedSequence(data=att_w, batch_sizes=packed_words.batch_sizes,
                                                      sorted_indices=packed_words.sorted_indices,
                                                      unsorted_indices=packed_words.unsorted_indices),
                                       batch_first=True)
        word_alphas = att_w / torch.sum(att_w, dim=1, keepdim=True)
        sentences, _ = pad_packed_sequence(packed_words, batch_first=True)
        sentences = sentences * word_alphas.unsqueeze(2)
        sentences = sentences.sum(dim=1)
        return sentences, word_alphas


class SentenceAttention(nn.Module):
    def __init__(self, vocab_size, emb_size, word_rnn_size, sentence_rnn_size, word_att_size, sentence_att_size):
        super().__init__()
        self.word_attention = WordAttention(vocab_size, emb_size, word_rnn_size, word_att_size)
        self.sentence_rnn = nn.GRU(2 * word_rnn_size, sentence_rnn_size, num_layers=1, bidirectional=True,
                                   batch_first=True)
        self.sentence_attention = nn.Linear(2 * sentence_rnn_size, sentence_att_size)
        self.sentence_context_vector = nn.Linear(sentence_att_size, 1, bias=False)

    def forward(self, documents, sentences_per_document, words_per_sentence):
        packed_sentences = pack_padded_sequence(documents, lengths=sentences_per_document.tolist(),
                                                batch_first=True, enforce_sorted=False)
        packed_words_per_sentence = pack_padded_sequence(words_per_sentence, lengths=sentences_per_document.tolist(),
                                                         batch_first=True, enforce_sorted=False)
        sentences, word_alphas = self.word_attention(packed_sentences.data, packed_words_per_sentence.data)
        packed_sentences, _ = self.sentence_rnn(PackedSequence(data=sentences,
                                                               batch_sizes=packed_sentences.batch_sizes,
                                                               sorted_indices=packed_sentences.sorted_indices,
                                                               unsorted_indices=packed_sentences.unsorted_indices))
        att_s = self.sentence_attention(packed_sentences.data)
        att_s = torch.tanh(att_s)
        att_s = self.sentence_context_vector(att_s).squeeze(1)
        max_value = att_s.max()
        att_s = torch.exp(att_s - max_value)
        att_s, _ = pad_packed_sequence(PackedSequence(data=att_s, batch_sizes=packed_sentences.batch_sizes,
                                                      sorted_indices=packed_sentences.sorted_indices,
                                                      unsorted_indices=packed_sentences.unsorted_indices),
                                       batch_first=True)
        sentence_alphas = att_s / torch.sum(att_s, dim=1, keepdim=True)
        documents, _ = pad_packed_sequence(packed_sentences, batch_first=True)
        documents = documents * sentence_alphas.unsqueeze(2)
        documents = documents.sum(dim=1)
        word_alphas, _ = pad_packed_sequence(PackedSequence(data=word_alphas,
                                                            batch_sizes=packed_sentences.batch_sizes,
                                                            sorted_indices=packed_sentences.sorted_indices,
                                                            unsorted_indices=packed_sentences.unsorted_indices),
                                             batch_first=True)
        return documents, word_alphas, sentence_alphas


class HierarchialAttentionNetwork(nn.Module):
    def __init__(self, n_classes, vocab_size, emb_size=12, word_rnn_size=8, sentence_rnn_size=8, word_att_size=10,
                 sentence_att_size=10, dropout=0.3):
        super().__init__()
        self.sentence_attention = SentenceAttention(vocab_size, emb_size, word_rnn_size, sentence_rnn_size,
                                                    word_att_size, sentence_att_size)
        self.fc = nn.Linear(2 * sentence_rnn_size, n_classes)
        self.dropout = nn.Dropout(dropout)

    def forward(self, documents, sentences_per_document, words_per_sentence):
        document_embeddings, word_alphas, sentence_alphas = self.sentence_attention(
            documents, sentences_per_document, words_per_sentence)
        scores = self.fc(self.dropout(document_embeddings))
        return scores, word_alphas, sentence_alphas


def main(argv=None):
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", default="treelstm", choices=["treelstm", "han"])
    parser.add_argument("--steps", type=int, default=8)
    parser.add_argument("--quiet", action="store_true")
    args = parser.parse_args(argv)
    log = (lambda *a: None) if args.quiet else print
    torch.manual_seed(0)
    step_losses = []
    if args.model == "treelstm":
        num_classes = 5
        model = SimilarityTreeLSTM(30, 10, 12, 8, num_classes, False, False)
        initial_state = {k: v.clone() for k, v in model.state_dict().items()}
        criterion = nn.KLDivLoss()
        optimizer = torch.optim.Adagrad(filter(lambda p: p.requires_grad, model.parameters()), lr=0.05,
                                        weight_decay=1e-4)
        gen = torch.Generator().manual_seed(1)
        preds = []
        for i in range(args.steps):
            optimizer.zero_grad()
            total_loss = 0.0
            for j in range(3):
                nl, nr = int(torch.randint(2, 7, (1,))), int(torch.randint(2, 7, (1,)))
                ltree, rtree = random_tree(gen, nl), random_tree(gen, nr)
                linput, rinput = torch.randint(1, 30, (nl,)), torch.randint(1, 30, (nr,))
                label = 1 + 4 * torch.rand(1).item()
                target = map_label_to_target(label, num_classes)
                output = model(ltree, linput, rtree, rinput)
                loss = criterion(output, target)
                total_loss += loss.item()
                loss.backward()
                preds.append(torch.dot(torch.arange(1, num_classes + 1, dtype=torch.float), output.squeeze().exp()))
            optimizer.step()
            step_losses.append(total_loss / 3)
            log("step %d loss %.4f" % (i, total_loss / 3))
        return {"initial_state": initial_state, "step_losses": step_losses, "preds": torch.stack(preds).detach(),
                "size": ltree.size()}
    model = HierarchialAttentionNetwork(n_classes=3, vocab_size=40)
    initial_state = {k: v.clone() for k, v in model.state_dict().items()}
    optimizer = torch.optim.Adam(params=filter(lambda p: p.requires_grad, model.parameters()), lr=1e-2)
    criterion = nn.CrossEntropyLoss()
    for i in range(args.steps):
        sentences_per_document = torch.randint(1, 5, (4,))
        words_per_sentence = torch.randint(1, 7, (4, 4)) * (torch.arange(4)[None] < sentences_per_document[:, None])
        documents = torch.randint(1, 40, (4, 4, 6)) * (torch.arange(6)[None, None] < words_per_sentence[..., None])
        labels = (documents[:, 0, 0] % 3)
        scores, word_alphas, sentence_alphas = model(documents, sentences_per_document, words_per_sentence)
        loss = criterion(scores, labels)
        optimizer.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 5.0)
        optimizer.step()
        step_losses.append(loss.item())
        log("step %d loss %.4f" % (i, loss.item()))
    return {"initial_state": initial_state, "step_losses": step_losses, "word_alphas": word_alphas.detach(),
            "sentence_alphas": sentence_alphas.detach()}


if __name__ == "__main__":
    main()
