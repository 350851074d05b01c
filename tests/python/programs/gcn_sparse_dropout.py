"""dragen1860/GCN-PyTorch, a PyTorch port of Kipf's TensorFlow GCN: sparse node features and a sparse
normalized adjacency made with torch.sparse.FloatTensor(i.t(), v, shape) from scipy-style
(coords, values, shape) tuples (preprocess_features' row normalization, preprocess_adj's
D^-1/2 (A + I) D^-1/2), sparse_dropout (torch.floor(1 - rate + torch.rand(noise_shape)).byte() as a
mask over x._indices() / x._values(), out * (1. / (1 - rate))), GraphConvolution (torch.sparse.mm of the
sparse input by the weight, then of the support by the product, `out += self.bias`), the GCN in
nn.Sequential over (x, support) tuples, l2_loss over the first layer's parameters with `loss += ...`,
masked_loss / masked_acc (cross_entropy(reduction='none') times mask / mask.mean()), Adam. Cora is a
synthetic graph (numpy); scipy's sparse helpers are written with numpy."""
import argparse

import numpy as np

import torch
from torch import nn
from torch import optim
from torch.nn import functional as F


def sparse_dropout(x, rate, noise_shape):
    """

    :param x:
    :param rate:
    :param noise_shape: int scalar
    :return:
    """
    random_tensor = 1 - rate
    random_tensor += torch.rand(noise_shape).to(x.device)
    dropout_mask = torch.floor(random_tensor).byte()
    i = x._indices() # [2, 49216]
    v = x._values() # [49216]

    # [2, 4926] => [49216, 2] => [remained node, 2] => [2, remained node]
    i = i[:, dropout_mask]
    v = v[dropout_mask]

    out = torch.sparse.FloatTensor(i, v, x.shape).to(x.device)

    out = out * (1./ (1-rate))

    return out


def dot(x, y, sparse=False):
    if sparse:
        res = torch.sparse.mm(x, y)
    else:
        res = torch.mm(x, y)

    return res


class GraphConvolution(nn.Module):

    def __init__(self, input_dim, output_dim, num_features_nonzero,
                 dropout=0.,
                 is_sparse_inputs=False,
                 bias=False,
                 activation = F.relu,
                 featureless=False):
        super(GraphConvolution, self).__init__()

        self.dropout = dropout
        self.bias = bias
        self.activation = activation
        self.is_sparse_inputs = is_sparse_inputs
        self.featureless = featureless
        self.num_features_nonzero = num_features_nonzero

        self.weight = nn.Parameter(torch.randn(input_dim, output_dim))
        self.bias = None
        if bias:
            self.bias = nn.Parameter(torch.zeros(output_dim))

    def forward(self, inputs):
        # print('inputs:', inputs)
        x, support = inputs

        if self.training and self.is_sparse_inputs:
            x = sparse_dropout(x, self.dropout, self.num_features_nonzero)
        elif self.training:
            x = F.dropout(x, self.dropout)

        # convolve
        if not self.featureless: # if it has features x
            if self.is_sparse_inputs:
                xw = torch.sparse.mm(x, self.weight)
            else:
                xw = torch.mm(x, self.weight)
        else:
            xw = self.weight

        out = torch.sparse.mm(support, xw)

        if self.bias is not None:
            out += self.bias

        return self.activation(out), support


class GCN(nn.Module):

    def __init__(self, input_dim, output_dim, num_features_nonzero, args):
        super(GCN, self).__init__()

        self.input_dim = input_dim # 1433
        self.output_dim = output_dim

        self.layers = nn.Sequential(GraphConvolution(self.input_dim, args.hidden, num_features_nonzero,
                                                     activation=F.relu,
                                                     dropout=args.dropout,
                                                     is_sparse_inputs=True,
                                                     bias=bool(args.bias)),

                                    GraphConvolution(args.hidden, output_dim, num_features_nonzero,
                                                     activation=lambda x: x,
                                                     dropout=args.dropout,
                                                     is_sparse_inputs=False,
                                                     bias=bool(args.bias)),

                                    )

    def forward(self, inputs):
        x, support = inputs

        x = self.layers((x, support))

        return x

    def l2_loss(self):

        layer = self.layers.children()
        layer = next(iter(layer))

        loss = None

        for p in layer.parameters():
            if loss is None:
                loss = p.pow(2).sum()
            else:
                loss += p.pow(2).sum()

        return loss


def masked_loss(out, label, mask):

    loss = F.cross_entropy(out, label, reduction='none')
    mask = mask.float()
    mask = mask / mask.mean()
    loss *= mask
    loss = loss.mean()
    return loss


def masked_acc(out, label, mask):
    # [node, f]
    pred = out.argmax(dim=1)
    correct = torch.eq(pred, label).float()
    mask = mask.float()
    mask = mask / mask.mean()
    correct *= mask
    acc = correct.mean()
    return acc


# ---- data.py (load_data, preprocess_features, preprocess_adj, sparse_to_tuple) with numpy -----------------
def load_data(n_nodes, n_feats, n_classes, seed=11):
    rng = np.random.RandomState(seed)
    y = rng.randint(0, n_classes, n_nodes)
    protos = rng.rand(n_classes, n_feats) < 0.08
    features = ((rng.rand(n_nodes, n_feats) < 0.01) | (protos[y] & (rng.rand(n_nodes, n_feats) < 0.4))).astype(np.float32)
    adj = np.zeros((n_nodes, n_nodes), dtype=np.float32)
    for u in range(n_nodes):
        for _ in range(rng.poisson(2) + 1):
            pool = np.flatnonzero(y == y[u]) if rng.rand() < 0.8 else np.arange(n_nodes)
            v = int(rng.choice(pool))
            if v != u:
                adj[u, v] = adj[v, u] = 1.0
    idx_train, idx_val, idx_test = range(n_classes * 20), range(200, 300), range(300, n_nodes)
    train_mask = np.zeros(n_nodes, dtype=bool)
    train_mask[list(idx_train)] = True
    val_mask = np.zeros(n_nodes, dtype=bool)
    val_mask[list(idx_val)] = True
    test_mask = np.zeros(n_nodes, dtype=bool)
    test_mask[list(idx_test)] = True
    return adj, features, y, train_mask, val_mask, test_mask


def sparse_to_tuple(mx):
    """Convert a (dense stand-in for a scipy) sparse matrix to tuple representation."""
    rows, cols = np.nonzero(mx)
    coords = np.vstack((rows, cols)).transpose()
    values = mx[rows, cols]
    shape = mx.shape
    return coords, values, shape


def preprocess_features(features):
    """Row-normalize feature matrix and convert to tuple representation"""
    rowsum = np.array(features.sum(1)) # get sum of each row, [2708, 1]
    r_inv = np.power(rowsum, -1, where=rowsum != 0, out=np.full_like(rowsum, np.inf)).flatten() # 1/rowsum, [2708]
    r_inv[np.isinf(r_inv)] = 0. # zero inf data
    features = r_inv[:, None] * features # D^-1:[2708, 2708]@X:[2708, 2708]
    return sparse_to_tuple(features) # [coordinates, data, shape], []


def normalize_adj(adj):
    """Symmetrically normalize adjacency matrix."""
    rowsum = np.array(adj.sum(1)) # D
    d_inv_sqrt = np.power(rowsum, -0.5).flatten() # D^-0.5
    d_inv_sqrt[np.isinf(d_inv_sqrt)] = 0.
    return (d_inv_sqrt[:, None] * adj * d_inv_sqrt[None, :]).astype(np.float32) # D^-0.5AD^0.5


def preprocess_adj(adj):
    """Preprocessing of adjacency matrix for simple GCN model and conversion to tuple representation."""
    adj_normalized = normalize_adj(adj + np.eye(adj.shape[0], dtype=np.float32))
    return sparse_to_tuple(adj_normalized)


def main(argv=None):
    parser = argparse.ArgumentParser()
    parser.add_argument('--learning_rate', type=float, default=0.01)
    parser.add_argument('--epochs', type=int, default=200)
    parser.add_argument('--hidden', type=int, default=16)
    parser.add_argument('--dropout', type=float, default=0.5)
    parser.add_argument('--weight_decay', type=float, default=5e-4)
    parser.add_argument('--bias', type=int, default=0)
    parser.add_argument('--n_nodes', type=int, default=500)
    parser.add_argument('--n_feats', type=int, default=300)
    parser.add_argument('--quiet', action='store_true')
    args = parser.parse_args(argv)
    log = (lambda *a: None) if args.quiet else print

    seed = 123
    np.random.seed(seed)
    torch.random.manual_seed(seed)
    device = torch.device('cpu')

    # load data
    adj, features, y, train_mask, val_mask, test_mask = load_data(args.n_nodes, args.n_feats, 7)
    train_label = torch.from_numpy(y).long().to(device)
    num_classes = int(train_label.max().item()) + 1
    train_mask = torch.from_numpy(train_mask.astype(np.int64)).to(device)
    test_label = torch.from_numpy(y).long().to(device)
    test_mask = torch.from_numpy(test_mask.astype(np.int64)).to(device)

    # D^-1@X
    features = preprocess_features(features) # [49216, 2], [49216], [2708, 1433]
    supports = preprocess_adj(adj)

    i = torch.from_numpy(features[0]).long().to(device)
    v = torch.from_numpy(features[1]).to(device)
    feature = torch.sparse.FloatTensor(i.t(), v, features[2]).to(device)

    i = torch.from_numpy(supports[0]).long().to(device)
    v = torch.from_numpy(supports[1]).to(device)
    support = torch.sparse.FloatTensor(i.t(), v, supports[2]).float().to(device)

    num_features_nonzero = feature._nnz()
    feat_dim = feature.shape[1]

    net = GCN(feat_dim, num_classes, num_features_nonzero, args)
    net.to(device)
    initial_state = {k: v.clone() for k, v in net.state_dict().items()}
    optimizer = optim.Adam(net.parameters(), lr=args.learning_rate)

    losses, accs = [], []
    net.train()
    for epoch in range(args.epochs):

        out = net((feature, support))
        out = out[0]
        loss = masked_loss(out, train_label, train_mask)
        loss += args.weight_decay * net.l2_loss()

        acc = masked_acc(out, train_label, train_mask)

        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
        accs.append(acc.item())

        if epoch % 10 == 0:
            log(epoch, loss.item(), acc.item())

    net.eval()

    out = net((feature, support))
    out = out[0]
    acc = masked_acc(out, test_label, test_mask)
    log('test:', acc.item())
    return {'initial_state': initial_state, 'step_losses': losses, 'accs': accs, 'test_acc': acc.item(),
            'out': out.detach()}


if __name__ == '__main__':
    main()
