"""williamleif/graphsage-simple (graphsage/aggregators.py, encoders.py, model.py), ported to Python 3:
MeanAggregator (random.sample of each neighbor set, set.union of the samples, a torch.zeros(len(samp_neighs),
len(unique_nodes)) mask filled by mask[row_indices, column_indices] = 1 with Python lists, mask.div(
mask.sum(1, keepdim=True)), mask.mm(embed_matrix)), Encoder (features looked up with
torch.LongTensor(nodes) of numpy ints, torch.cat([self_feats, neigh_feats], dim=1), F.relu(self.weight.mm(
combined.t())), nn.Parameter(torch.FloatTensor(embed_dim, ...)) with the deprecated init.xavier_uniform),
SupervisedGraphSage (scores.t(), nn.CrossEntropyLoss, labels.squeeze()), run_cora: an nn.Embedding whose
weight is replaced by nn.Parameter(torch.FloatTensor(feat_data), requires_grad=False), two encoders stacked
through lambdas, np.random.permutation splits, SGD(filter(lambda p : p.requires_grad, ...), lr=0.7),
Variable(torch.LongTensor(labels[np.array(batch_nodes)])), random.shuffle(train), and the validation
micro-F1 of val_output.data.numpy().argmax(axis=1). Python 3.11's random.sample takes no sets, so the
neighbor sets are listed first; the Cora files are a synthetic graph."""
import argparse
import random
import time
from collections import defaultdict

import numpy as np

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.autograd import Variable
from torch.nn import init


class MeanAggregator(nn.Module):
    """
    Aggregates a node's embeddings using mean of neighbors' embeddings
    """
    def __init__(self, features, cuda=False, gcn=False):
        """
        Initializes the aggregator for a specific graph.

        features -- function mapping LongTensor of node ids to FloatTensor of feature values.
        cuda -- whether to use GPU
        gcn --- whether to perform concatenation GraphSAGE-style, or add self-loops GCN-style
        """

        super(MeanAggregator, self).__init__()

        self.features = features
        self.cuda = cuda
        self.gcn = gcn

    def forward(self, nodes, to_neighs, num_sample=10):
        """
        nodes --- list of nodes in a batch
        to_neighs --- list of sets, each set is the set of neighbors for node in batch
        num_sample --- number of neighbors to sample. No sampling if None.
        """
        # Local pointers to functions (speed hack)
        _set = set
        if not num_sample is None:
            _sample = random.sample
            samp_neighs = [_set(_sample(list(to_neigh),
                            num_sample,
                            )) if len(to_neigh) >= num_sample else to_neigh for to_neigh in to_neighs]
        else:
            samp_neighs = to_neighs

        if self.gcn:
            samp_neighs = [samp_neigh | set([nodes[i]]) for i, samp_neigh in enumerate(samp_neighs)]
        unique_nodes_list = list(set.union(*samp_neighs))
        unique_nodes = {n:i for i,n in enumerate(unique_nodes_list)}
        mask = Variable(torch.zeros(len(samp_neighs), len(unique_nodes)))
        column_indices = [unique_nodes[n] for samp_neigh in samp_neighs for n in samp_neigh]
        row_indices = [i for i in range(len(samp_neighs)) for j in range(len(samp_neighs[i]))]
        mask[row_indices, column_indices] = 1
        if self.cuda:
            mask = mask.cuda()
        num_neigh = mask.sum(1, keepdim=True)
        mask = mask.div(num_neigh)
        if self.cuda:
            embed_matrix = self.features(torch.LongTensor(unique_nodes_list).cuda())
        else:
            embed_matrix = self.features(torch.LongTensor(unique_nodes_list))
        to_feats = mask.mm(embed_matrix)
        return to_feats


class Encoder(nn.Module):
    """
    Encodes a node's using 'convolutional' GraphSage approach
    """
    def __init__(self, features, feature_dim,
            embed_dim, adj_lists, aggregator,
            num_sample=10,
            base_model=None, gcn=False, cuda=False,
            feature_transform=False):
        super(Encoder, self).__init__()

        self.features = features
        self.feat_dim = feature_dim
        self.adj_lists = adj_lists
        self.aggregator = aggregator
        self.num_sample = num_sample
        if base_model != None:
            self.base_model = base_model

        self.gcn = gcn
        self.embed_dim = embed_dim
        self.cuda = cuda
        self.aggregator.cuda = cuda
        self.weight = nn.Parameter(
                torch.FloatTensor(embed_dim, self.feat_dim if self.gcn else 2 * self.feat_dim))
        init.xavier_uniform(self.weight)

    def forward(self, nodes):
        """
        Generates embeddings for a batch of nodes.

        nodes     -- list of nodes
        """
        neigh_feats = self.aggregator.forward(nodes, [self.adj_lists[int(node)] for node in nodes],
                self.num_sample)
        if not self.gcn:
            if self.cuda:
                self_feats = self.features(torch.LongTensor(nodes).cuda())
            else:
                self_feats = self.features(torch.LongTensor(nodes))
            combined = torch.cat([self_feats, neigh_feats], dim=1)
        else:
            combined = neigh_feats
        combined = F.relu(self.weight.mm(combined.t()))
        return combined


class SupervisedGraphSage(nn.Module):

    def __init__(self, num_classes, enc):
        super(SupervisedGraphSage, self).__init__()
        self.enc = enc
        self.xent = nn.CrossEntropyLoss()

        self.weight = nn.Parameter(torch.FloatTensor(num_classes, enc.embed_dim))
        init.xavier_uniform(self.weight)

    def forward(self, nodes):
        embeds = self.enc(nodes)
        scores = self.weight.mm(embeds)
        return scores.t()

    def loss(self, nodes, labels):
        scores = self.forward(nodes)
        return self.xent(scores, labels.squeeze())


def load_cora(num_nodes, num_feats, seed=7):
    rng = np.random.RandomState(seed)
    feat_data = np.zeros((num_nodes, num_feats))
    labels = np.empty((num_nodes,1), dtype=np.int64)
    classes = rng.randint(0, 7, size=num_nodes)
    protos = rng.rand(7, num_feats) < 0.08
    for i in range(num_nodes):
        feat_data[i, :] = ((rng.rand(num_feats) < 0.02) | (protos[classes[i]] & (rng.rand(num_feats) < 0.5))).astype(float)
        labels[i] = classes[i]
    adj_lists = defaultdict(set)
    for paper1 in range(num_nodes):
        for _ in range(rng.poisson(2) + 1):
            pool = np.flatnonzero(classes == classes[paper1]) if rng.rand() < 0.8 else np.arange(num_nodes)
            paper2 = int(rng.choice(pool))
            adj_lists[paper1].add(paper2)
            adj_lists[paper2].add(paper1)
    return feat_data, labels, adj_lists


def f1_score_micro(y_true, y_pred):
    # sklearn's f1_score(average="micro") of a single-label problem is the accuracy
    return float(np.mean(np.asarray(y_true).ravel() == np.asarray(y_pred).ravel()))


def run_cora(args, log):
    np.random.seed(1)
    random.seed(1)
    torch.manual_seed(1)
    num_nodes = args.num_nodes
    num_feats = args.num_feats
    feat_data, labels, adj_lists = load_cora(num_nodes, num_feats)
    features = nn.Embedding(num_nodes, num_feats)
    features.weight = nn.Parameter(torch.FloatTensor(feat_data), requires_grad=False)
    # features.cuda()

    agg1 = MeanAggregator(features, cuda=True)
    enc1 = Encoder(features, num_feats, args.embed_dim, adj_lists, agg1, gcn=args.gcn, cuda=False)
    agg2 = MeanAggregator(lambda nodes : enc1(nodes).t(), cuda=False)
    enc2 = Encoder(lambda nodes : enc1(nodes).t(), enc1.embed_dim, args.embed_dim, adj_lists, agg2,
            base_model=enc1, gcn=args.gcn, cuda=False)
    enc1.num_samples = 5
    enc2.num_samples = 5

    graphsage = SupervisedGraphSage(7, enc2)
    # graphsage.cuda()
    initial_state = {k: v.clone() for k, v in graphsage.state_dict().items()}
    rand_indices = np.random.permutation(num_nodes)
    test = rand_indices[:num_nodes // 3]
    val = rand_indices[num_nodes // 3:num_nodes // 2]
    train = list(rand_indices[num_nodes // 2:])

    optimizer = torch.optim.SGD(filter(lambda p : p.requires_grad, graphsage.parameters()), lr=0.7)
    times = []
    losses = []
    for batch in range(args.batches):
        batch_nodes = train[:256]
        random.shuffle(train)
        start_time = time.time()
        optimizer.zero_grad()
        loss = graphsage.loss(batch_nodes,
                Variable(torch.LongTensor(labels[np.array(batch_nodes)])))
        loss.backward()
        optimizer.step()
        end_time = time.time()
        times.append(end_time-start_time)
        losses.append(loss.item())
        log(batch, loss.data.item())

    val_output = graphsage.forward(val)
    f1 = f1_score_micro(labels[val], val_output.data.numpy().argmax(axis=1))
    log("Validation F1:", f1)
    log("Average batch time:", np.mean(times))
    return {'initial_state': initial_state, 'step_losses': losses, 'val_f1': f1, 'val_output': val_output.detach(),
            'param_names': [n for n, _ in graphsage.named_parameters()]}


def main(argv=None):
    parser = argparse.ArgumentParser()
    parser.add_argument('--num_nodes', type=int, default=2708)
    parser.add_argument('--num_feats', type=int, default=1433)
    parser.add_argument('--embed_dim', type=int, default=128)
    parser.add_argument('--batches', type=int, default=100)
    parser.add_argument('--gcn', type=int, default=1)
    parser.add_argument('--quiet', action='store_true')
    args = parser.parse_args(argv)
    log = (lambda *a: None) if args.quiet else print
    return run_cora(args, log)


if __name__ == '__main__':
    main()
