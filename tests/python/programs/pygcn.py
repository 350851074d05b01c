"""tkipf/pygcn: GraphConvolution (Parameter(torch.FloatTensor(in, out)) initialised by
weight.data.uniform_, torch.mm then torch.spmm with a sparse adjacency), GCN with F.relu/F.dropout/
F.log_softmax, utils.load_data (np.genfromtxt of cora-format files, scipy.sparse row normalisation,
sparse_mx_to_torch_sparse_tensor via torch.sparse.FloatTensor, torch.LongTensor(range(...))),
accuracy (output.max(1)[1].type_as(labels).eq(labels).double().sum()) and train.py (Adam with
weight_decay, nll_loss on index tensors, eval each epoch). The Cora files are replaced by a
synthetic citation graph written in the same format."""
from __future__ import division
from __future__ import print_function

import argparse
import math
import os
import tempfile
import time

import numpy as np
import scipy.sparse as sp
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim
from torch.nn.parameter import Parameter
from torch.nn.modules.module import Module


class GraphConvolution(Module):
    """
    Simple GCN layer, similar to https://arxiv.org/abs/1609.02907
    """

    def __init__(self, in_features, out_features, bias=True):
        super(GraphConvolution, self).__init__()
        self.in_features = in_features
        self.out_features = out_features
        self.weight = Parameter(torch.FloatTensor(in_features, out_features))
        if bias:
            self.bias = Parameter(torch.FloatTensor(out_features))
        else:
            self.register_parameter('bias', None)
        self.reset_parameters()

    def reset_parameters(self):
        stdv = 1. / math.sqrt(self.weight.size(1))
        self.weight.data.uniform_(-stdv, stdv)
        if self.bias is not None:
            self.bias.data.uniform_(-stdv, stdv)

    def forward(self, input, adj):
        support = torch.mm(input, self.weight)
        output = torch.spmm(adj, support)
        if self.bias is not None:
            return output + self.bias
        else:
            return output

    def __repr__(self):
        return self.__class__.__name__ + ' (' \
            + str(self.in_features) + ' -> ' \
            + str(self.out_features) + ')'


class GCN(nn.Module):
    def __init__(self, nfeat, nhid, nclass, dropout):
        super(GCN, self).__init__()

        self.gc1 = GraphConvolution(nfeat, nhid)
        self.gc2 = GraphConvolution(nhid, nclass)
        self.dropout = dropout

    def forward(self, x, adj):
        x = F.relu(self.gc1(x, adj))
        x = F.dropout(x, self.dropout, training=self.training)
        x = self.gc2(x, adj)
        return F.log_softmax(x, dim=1)


def encode_onehot(labels):
    classes = sorted(set(labels))  # pygcn iterates a set; sorted keeps the label ids reproducible
    classes_dict = {c: np.identity(len(classes))[i, :] for i, c in enumerate(classes)}
    labels_onehot = np.array(list(map(classes_dict.get, labels)), dtype=np.int32)
    return labels_onehot


def normalize(mx):
    """Row-normalize sparse matrix"""
    rowsum = np.array(mx.sum(1))
    with np.errstate(divide='ignore'):
        r_inv = np.power(rowsum, -1).flatten()
    r_inv[np.isinf(r_inv)] = 0.
    r_mat_inv = sp.diags(r_inv)
    mx = r_mat_inv.dot(mx)
    return mx


def accuracy(output, labels):
    preds = output.max(1)[1].type_as(labels)
    correct = preds.eq(labels).double()
    correct = correct.sum()
    return correct / len(labels)


def sparse_mx_to_torch_sparse_tensor(sparse_mx):
    """Convert a scipy sparse matrix to a torch sparse tensor."""
    sparse_mx = sparse_mx.tocoo().astype(np.float32)
    indices = torch.from_numpy(
        np.vstack((sparse_mx.row, sparse_mx.col)).astype(np.int64))
    values = torch.from_numpy(sparse_mx.data)
    shape = torch.Size(sparse_mx.shape)
    return torch.sparse.FloatTensor(indices, values, shape)


def write_synthetic_cora(path, dataset, n_nodes, n_feats, n_classes, rng):
    """<id> <binary features> <label> per line, and "<cited> <citing>" edges, mostly within a class."""
    ids = rng.choice(100000, n_nodes, replace=False)
    labels = rng.randint(n_classes, size=n_nodes)
    proto = rng.rand(n_classes, n_feats) < 0.15
    with open(os.path.join(path, dataset + ".content"), "w") as f:
        for i in range(n_nodes):
            feats = (proto[labels[i]] ^ (rng.rand(n_feats) < 0.05)).astype(int)
            f.write("%d\t%s\tclass_%d\n" % (ids[i], "\t".join(map(str, feats)), labels[i]))
    with open(os.path.join(path, dataset + ".cites"), "w") as f:
        for i in range(n_nodes):
            for _ in range(2):
                same = np.flatnonzero(labels == labels[i]) if rng.rand() < 0.8 else np.arange(n_nodes)
                j = rng.choice(same)
                if j != i:
                    f.write("%d\t%d\n" % (ids[j], ids[i]))


def load_data(path="../data/cora/", dataset="cora", splits=(140, 200, 500, 1500)):
    """Load citation network dataset (cora only for now)"""
    idx_features_labels = np.genfromtxt("{}{}.content".format(path, dataset), dtype=np.dtype(str))
    features = sp.csr_matrix(idx_features_labels[:, 1:-1], dtype=np.float32)
    labels = encode_onehot(idx_features_labels[:, -1])

    # build graph
    idx = np.array(idx_features_labels[:, 0], dtype=np.int32)
    idx_map = {j: i for i, j in enumerate(idx)}
    edges_unordered = np.genfromtxt("{}{}.cites".format(path, dataset), dtype=np.int32)
    edges = np.array(list(map(idx_map.get, edges_unordered.flatten())),
                     dtype=np.int32).reshape(edges_unordered.shape)
    adj = sp.coo_matrix((np.ones(edges.shape[0]), (edges[:, 0], edges[:, 1])),
                        shape=(labels.shape[0], labels.shape[0]),
                        dtype=np.float32)

    # build symmetric adjacency matrix
    adj = adj + adj.T.multiply(adj.T > adj) - adj.multiply(adj.T > adj)

    features = normalize(features)
    adj = normalize(adj + sp.eye(adj.shape[0]))

    a, b, c, d = splits
    idx_train = range(a)
    idx_val = range(b, c)
    idx_test = range(c, d)

    features = torch.FloatTensor(np.array(features.todense()))
    labels = torch.LongTensor(np.where(labels)[1])
    adj = sparse_mx_to_torch_sparse_tensor(adj)

    idx_train = torch.LongTensor(idx_train)
    idx_val = torch.LongTensor(idx_val)
    idx_test = torch.LongTensor(idx_test)

    return adj, features, labels, idx_train, idx_val, idx_test


def main(argv=None):
    # Training settings
    parser = argparse.ArgumentParser()
    parser.add_argument('--no-cuda', action='store_true', default=False, help='Disables CUDA training.')
    parser.add_argument('--fastmode', action='store_true', default=False,
                        help='Validate during training pass.')
    parser.add_argument('--seed', type=int, default=42, help='Random seed.')
    parser.add_argument('--epochs', type=int, default=200, help='Number of epochs to train.')
    parser.add_argument('--lr', type=float, default=0.01, help='Initial learning rate.')
    parser.add_argument('--weight_decay', type=float, default=5e-4,
                        help='Weight decay (L2 loss on parameters).')
    parser.add_argument('--hidden', type=int, default=16, help='Number of hidden units.')
    parser.add_argument('--dropout', type=float, default=0.5, help='Dropout rate (1 - keep probability).')
    parser.add_argument('--nodes', type=int, default=2708)
    parser.add_argument('--feats', type=int, default=1433)
    parser.add_argument('--quiet', action='store_true')
    args = parser.parse_args(argv)
    args.cuda = not args.no_cuda and torch.cuda.is_available()
    log = (lambda *a: None) if args.quiet else print

    tmp = tempfile.TemporaryDirectory()
    write_synthetic_cora(tmp.name, "cora", args.nodes, args.feats, 7, np.random.RandomState(0))
    n = args.nodes
    splits = (n * 140 // 2708, n * 200 // 2708, n * 500 // 2708, n * 1500 // 2708)

    np.random.seed(args.seed)
    torch.manual_seed(args.seed)
    if args.cuda:
        torch.cuda.manual_seed(args.seed)

    # Load data
    adj, features, labels, idx_train, idx_val, idx_test = load_data(tmp.name + "/", splits=splits)

    # Model and optimizer
    model = GCN(nfeat=features.shape[1],
                nhid=args.hidden,
                nclass=labels.max().item() + 1,
                dropout=args.dropout)
    initial_state = {k: v.clone() for k, v in model.state_dict().items()}
    optimizer = optim.Adam(model.parameters(), lr=args.lr, weight_decay=args.weight_decay)

    if args.cuda:
        model.cuda()
        features = features.cuda()
        adj = adj.cuda()
        labels = labels.cuda()
        idx_train = idx_train.cuda()
        idx_val = idx_val.cuda()
        idx_test = idx_test.cuda()

    history = {"loss_train": [], "acc_train": [], "loss_val": [], "acc_val": []}

    def train(epoch):
        t = time.time()
        model.train()
        optimizer.zero_grad()
        output = model(features, adj)
        loss_train = F.nll_loss(output[idx_train], labels[idx_train])
        acc_train = accuracy(output[idx_train], labels[idx_train])
        loss_train.backward()
        optimizer.step()

        if not args.fastmode:
            # Evaluate validation set performance separately,
            # deactivates dropout during validation run.
            model.eval()
            output = model(features, adj)

        loss_val = F.nll_loss(output[idx_val], labels[idx_val])
        acc_val = accuracy(output[idx_val], labels[idx_val])
        log('Epoch: {:04d}'.format(epoch + 1),
            'loss_train: {:.4f}'.format(loss_train.item()),
            'acc_train: {:.4f}'.format(acc_train.item()),
            'loss_val: {:.4f}'.format(loss_val.item()),
            'acc_val: {:.4f}'.format(acc_val.item()),
            'time: {:.4f}s'.format(time.time() - t))
        for k, v in (("loss_train", loss_train), ("acc_train", acc_train), ("loss_val", loss_val),
                     ("acc_val", acc_val)):
            history[k].append(v.item())

    def test():
        model.eval()
        output = model(features, adj)
        loss_test = F.nll_loss(output[idx_test], labels[idx_test])
        acc_test = accuracy(output[idx_test], labels[idx_test])
        log("Test set results:",
            "loss= {:.4f}".format(loss_test.item()),
            "accuracy= {:.4f}".format(acc_test.item()))
        return loss_test.item(), acc_test.item()

    # Train model
    t_total = time.time()
    for epoch in range(args.epochs):
        train(epoch)
    log("Optimization Finished!")
    log("Total time elapsed: {:.4f}s".format(time.time() - t_total))

    # Testing
    loss_test, acc_test = test()
    tmp.cleanup()
    return {"initial_state": initial_state, "step_losses": history["loss_train"], "history": history,
            "loss_test": loss_test, "acc_test": acc_test, "repr": repr(model)}


if __name__ == '__main__':
    main()
