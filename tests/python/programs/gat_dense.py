"""Graph attention network (dense), in the style of Diego999/pyGAT.

Ordinary PyTorch code: ``run(torch, ...)`` takes the torch module (real torch or
``kiln``) so the same code runs on both. Synthetic data: a random graph with a
planted community structure, node features correlated with the community.
"""
import glob
import os
import random
import tempfile
import time

import numpy as np
import scipy.sparse as sp


# ---------------------------------------------------------------- utils.py
def encode_onehot(labels):
    classes = set(labels)
    classes_dict = {c: np.identity(len(classes))[i, :] for i, c in enumerate(sorted(classes))}
    labels_onehot = np.array(list(map(classes_dict.get, labels)), dtype=np.int32)
    return labels_onehot


def normalize_adj(mx):
    """Row-normalize sparse matrix"""
    rowsum = np.array(mx.sum(1))
    r_inv_sqrt = np.power(rowsum, -0.5).flatten()
    r_inv_sqrt[np.isinf(r_inv_sqrt)] = 0.
    r_mat_inv_sqrt = sp.diags(r_inv_sqrt)
    return mx.dot(r_mat_inv_sqrt).transpose().dot(r_mat_inv_sqrt)


def normalize_features(mx):
    """Row-normalize sparse matrix"""
    rowsum = np.array(mx.sum(1))
    r_inv = np.power(rowsum, -1).flatten()
    r_inv[np.isinf(r_inv)] = 0.
    r_mat_inv = sp.diags(r_inv)
    mx = r_mat_inv.dot(mx)
    return mx


def make_graph(n_nodes=200, n_feats=100, n_classes=4, p_in=0.08, p_out=0.005, seed=0):
    """Planted-partition random graph with sparse binary bag-of-words features."""
    rng = np.random.RandomState(seed)
    labels = rng.randint(0, n_classes, size=n_nodes)
    same = labels[:, None] == labels[None, :]
    prob = np.where(same, p_in, p_out)
    upper = np.triu(rng.rand(n_nodes, n_nodes) < prob, 1)
    rows, cols = np.nonzero(upper)
    edges = np.stack([rows, cols], 1)
    # each class prefers its own block of words
    word_prob = np.full((n_classes, n_feats), 0.02)
    block = n_feats // n_classes
    for c in range(n_classes):
        word_prob[c, c * block:(c + 1) * block] = 0.15
    feats = (rng.rand(n_nodes, n_feats) < word_prob[labels]).astype(np.float32)
    return sp.csr_matrix(feats), labels, edges


def load_data(torch, n_nodes=200, n_feats=100, n_classes=4, n_train=None, seed=0):
    features, raw_labels, edges = make_graph(n_nodes, n_feats, n_classes, seed=seed)
    labels = encode_onehot(list(raw_labels))
    adj = sp.coo_matrix((np.ones(edges.shape[0]), (edges[:, 0], edges[:, 1])),
                        shape=(labels.shape[0], labels.shape[0]), dtype=np.float32)
    # build symmetric adjacency matrix
    adj = adj + adj.T.multiply(adj.T > adj) - adj.multiply(adj.T > adj)
    features = normalize_features(features)
    adj = normalize_adj(adj + sp.eye(adj.shape[0]))

    if n_train is None:
        n_train = n_nodes * 140 // 2708 if n_nodes < 2708 else 140
        n_train = max(n_train, 4 * n_classes)
    n_val = n_nodes // 5
    idx_train = range(n_train)
    idx_val = range(n_train, n_train + n_val)
    idx_test = range(n_train + n_val, n_nodes)

    adj = torch.FloatTensor(np.array(adj.todense()))
    features = torch.FloatTensor(np.array(features.todense()))
    labels = torch.LongTensor(np.where(labels)[1])

    idx_train = torch.LongTensor(idx_train)
    idx_val = torch.LongTensor(idx_val)
    idx_test = torch.LongTensor(idx_test)
    return adj, features, labels, idx_train, idx_val, idx_test


def accuracy(output, labels):
    preds = output.max(1)[1].type_as(labels)
    correct = preds.eq(labels).double()
    correct = correct.sum()
    return correct / len(labels)


# ---------------------------------------------------------------- layers.py / models.py
def build_model_classes(torch):
    nn = torch.nn
    F = torch.nn.functional

    class GraphAttentionLayer(nn.Module):
        """Simple GAT layer, similar to https://arxiv.org/abs/1710.10903"""

        def __init__(self, in_features, out_features, dropout, alpha, concat=True):
            super(GraphAttentionLayer, self).__init__()
            self.dropout = dropout
            self.in_features = in_features
            self.out_features = out_features
            self.alpha = alpha
            self.concat = concat

            self.W = nn.Parameter(torch.empty(size=(in_features, out_features)))
            nn.init.xavier_uniform_(self.W.data, gain=1.414)
            self.a = nn.Parameter(torch.empty(size=(2 * out_features, 1)))
            nn.init.xavier_uniform_(self.a.data, gain=1.414)

            self.leakyrelu = nn.LeakyReLU(self.alpha)

        def forward(self, h, adj):
            Wh = torch.mm(h, self.W)  # h.shape: (N, in_features), Wh.shape: (N, out_features)
            e = self._prepare_attentional_mechanism_input(Wh)

            zero_vec = -9e15 * torch.ones_like(e)
            attention = torch.where(adj > 0, e, zero_vec)
            attention = F.softmax(attention, dim=1)
            attention = F.dropout(attention, self.dropout, training=self.training)
            h_prime = torch.matmul(attention, Wh)

            if self.concat:
                return F.elu(h_prime)
            else:
                return h_prime

        def _prepare_attentional_mechanism_input(self, Wh):
            # Wh.shape (N, out_feature)
            # self.a.shape (2 * out_feature, 1)
            # Wh1&2.shape (N, 1)
            # e.shape (N, N)
            Wh1 = torch.matmul(Wh, self.a[:self.out_features, :])
            Wh2 = torch.matmul(Wh, self.a[self.out_features:, :])
            # broadcast add
            e = Wh1 + Wh2.T
            return self.leakyrelu(e)

        def __repr__(self):
            return self.__class__.__name__ + ' (' + str(self.in_features) + ' -> ' + str(self.out_features) + ')'

    class GAT(nn.Module):
        def __init__(self, nfeat, nhid, nclass, dropout, alpha, nheads):
            """Dense version of GAT."""
            super(GAT, self).__init__()
            self.dropout = dropout

            self.attentions = [GraphAttentionLayer(nfeat, nhid, dropout=dropout, alpha=alpha, concat=True) for _ in range(nheads)]
            for i, attention in enumerate(self.attentions):
                self.add_module('attention_{}'.format(i), attention)

            self.out_att = GraphAttentionLayer(nhid * nheads, nclass, dropout=dropout, alpha=alpha, concat=False)

        def forward(self, x, adj):
            x = F.dropout(x, self.dropout, training=self.training)
            x = torch.cat([att(x, adj) for att in self.attentions], dim=1)
            x = F.dropout(x, self.dropout, training=self.training)
            x = F.elu(self.out_att(x, adj))
            return F.log_softmax(x, dim=1)

    class ScatterGATLayer(nn.Module):
        """Edge-list GAT layer written with gather/scatter/index_add_, tutorial style."""

        def __init__(self, in_features, out_features, heads=1, negative_slope=0.2):
            super().__init__()
            self.heads = heads
            self.out_features = out_features
            self.lin = nn.Linear(in_features, heads * out_features, bias=False)
            self.att_src = nn.Parameter(torch.empty(1, heads, out_features))
            self.att_dst = nn.Parameter(torch.empty(1, heads, out_features))
            self.bias = nn.Parameter(torch.zeros(heads * out_features))
            self.negative_slope = negative_slope
            nn.init.xavier_uniform_(self.lin.weight)
            nn.init.xavier_uniform_(self.att_src)
            nn.init.xavier_uniform_(self.att_dst)

        def forward(self, x, edge_index):
            N = x.size(0)
            H, C = self.heads, self.out_features
            src, dst = edge_index[0], edge_index[1]
            h = self.lin(x).view(-1, H, C)
            a_src = (h * self.att_src).sum(dim=-1)  # [N, H]
            a_dst = (h * self.att_dst).sum(dim=-1)
            alpha = a_src.index_select(0, src) + a_dst[dst]  # [E, H]
            alpha = F.leaky_relu(alpha, self.negative_slope)
            # softmax over incoming edges of every destination node
            amax = torch.full((N, H), float('-inf'), dtype=alpha.dtype)
            amax = amax.scatter_reduce(0, dst.unsqueeze(-1).expand_as(alpha), alpha,
                                       reduce='amax', include_self=True)
            alpha = (alpha - amax.gather(0, dst.unsqueeze(-1).expand_as(alpha)).detach()).exp()
            denom = torch.zeros(N, H).index_add_(0, dst, alpha)
            alpha = alpha / (denom[dst] + 1e-16)
            msg = h[src] * alpha.unsqueeze(-1)  # [E, H, C]
            out = torch.zeros(N, H, C, dtype=x.dtype)
            out = out.scatter_add(0, dst.view(-1, 1, 1).expand_as(msg), msg)
            return out.reshape(N, H * C) + self.bias

    class ScatterGAT(nn.Module):
        def __init__(self, nfeat, nhid, nclass, heads, dropout=0.6):
            super().__init__()
            self.dropout = dropout
            self.conv1 = ScatterGATLayer(nfeat, nhid, heads=heads)
            self.conv2 = ScatterGATLayer(nhid * heads, nclass, heads=1)

        def forward(self, x, edge_index):
            x = F.dropout(x, p=self.dropout, training=self.training)
            x = F.elu(self.conv1(x, edge_index))
            x = F.dropout(x, p=self.dropout, training=self.training)
            x = self.conv2(x, edge_index)
            return F.log_softmax(x, dim=-1)

    return GAT, ScatterGAT


# ---------------------------------------------------------------- train.py
def run(torch, epochs=20, n_nodes=200, n_feats=100, n_classes=4, hidden=8, nb_heads=8,
        dropout=0.6, alpha=0.2, lr=0.005, weight_decay=5e-4, patience=100, seed=72,
        init_state=None, model_kind='dense', save_dir=None, verbose=False, threads=None):
    """Train a GAT; returns a dict with per-epoch train/val losses, epoch times, the
    initial state_dict (as NumPy arrays) and the test loss/accuracy of the best epoch."""
    F = torch.nn.functional
    optim = torch.optim
    if threads is not None:
        torch.set_num_threads(threads)
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)

    adj, features, labels, idx_train, idx_val, idx_test = load_data(
        torch, n_nodes=n_nodes, n_feats=n_feats, n_classes=n_classes)
    GAT, ScatterGAT = build_model_classes(torch)
    if model_kind == 'dense':
        model = GAT(nfeat=features.shape[1], nhid=hidden, nclass=int(labels.max()) + 1,
                    dropout=dropout, nheads=nb_heads, alpha=alpha)
        graph = adj
    else:
        model = ScatterGAT(features.shape[1], hidden, int(labels.max()) + 1, heads=nb_heads,
                           dropout=dropout)
        # edge list (with self loops) from the adjacency matrix
        graph = adj.nonzero().t().contiguous()
    if init_state is not None:
        model.load_state_dict({k: torch.tensor(v) for k, v in init_state.items()})
    initial = {k: v.detach().numpy().copy() for k, v in model.state_dict().items()}
    optimizer = optim.Adam(model.parameters(), lr=lr, weight_decay=weight_decay)

    def train(epoch):
        t = time.time()
        model.train()
        optimizer.zero_grad()
        output = model(features, graph)
        loss_train = F.nll_loss(output[idx_train], labels[idx_train])
        acc_train = accuracy(output[idx_train], labels[idx_train])
        loss_train.backward()
        optimizer.step()

        model.eval()
        with torch.no_grad():
            output = model(features, graph)
        loss_val = F.nll_loss(output[idx_val], labels[idx_val])
        acc_val = accuracy(output[idx_val], labels[idx_val])
        if verbose:
            print('Epoch: {:04d}'.format(epoch + 1),
                  'loss_train: {:.4f}'.format(loss_train.data.item()),
                  'acc_train: {:.4f}'.format(acc_train.data.item()),
                  'loss_val: {:.4f}'.format(loss_val.data.item()),
                  'acc_val: {:.4f}'.format(acc_val.data.item()),
                  'time: {:.4f}s'.format(time.time() - t))
        return loss_train.data.item(), loss_val.data.item(), time.time() - t

    own_dir = save_dir is None
    if own_dir:
        tmp = tempfile.TemporaryDirectory()
        save_dir = tmp.name
    cwd = os.getcwd()
    os.chdir(save_dir)
    try:
        train_losses, val_losses, times = [], [], []
        bad_counter = 0
        best = epochs + 1
        best_epoch = 0
        for epoch in range(epochs):
            lt, lv, dt = train(epoch)
            train_losses.append(lt)
            val_losses.append(lv)
            times.append(dt)
            torch.save(model.state_dict(), '{}.pkl'.format(epoch))
            if val_losses[-1] < best:
                best = val_losses[-1]
                best_epoch = epoch
                bad_counter = 0
            else:
                bad_counter += 1

            if bad_counter == patience:
                break

            files = glob.glob('*.pkl')
            for file in files:
                epoch_nb = int(file.split('.')[0])
                if epoch_nb < best_epoch:
                    os.remove(file)

        files = glob.glob('*.pkl')
        for file in files:
            epoch_nb = int(file.split('.')[0])
            if epoch_nb > best_epoch:
                os.remove(file)

        # Restore best model
        model.load_state_dict(torch.load('{}.pkl'.format(best_epoch)))
        model.eval()
        with torch.no_grad():
            output = model(features, graph)
        loss_test = F.nll_loss(output[idx_test], labels[idx_test])
        acc_test = accuracy(output[idx_test], labels[idx_test])
        if verbose:
            print("Test set results:",
                  "loss= {:.4f}".format(loss_test.item()),
                  "accuracy= {:.4f}".format(acc_test.item()))
    finally:
        os.chdir(cwd)
        if own_dir:
            tmp.cleanup()
    return {'train': train_losses, 'val': val_losses, 'times': times, 'initial': initial,
            'best_epoch': best_epoch, 'test_loss': loss_test.item(), 'test_acc': acc_test.item()}


if __name__ == '__main__':
    import argparse
    p = argparse.ArgumentParser()
    p.add_argument('--kiln', action='store_true')
    p.add_argument('--epochs', type=int, default=200)
    p.add_argument('--nodes', type=int, default=200)
    p.add_argument('--feats', type=int, default=100)
    p.add_argument('--kind', default='dense')
    args = p.parse_args()
    if args.kiln:
        import kiln as torch
    else:
        import torch
    r = run(torch, epochs=args.epochs, n_nodes=args.nodes, n_feats=args.feats,
            model_kind=args.kind, verbose=True)
    print('test acc', r['test_acc'])
