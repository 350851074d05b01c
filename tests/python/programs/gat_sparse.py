"""Sparse graph attention network (SpGAT), in the style of Diego999/pyGAT (layers.py, models.py and
train.py with --sparse).

Ordinary PyTorch code: ``run(torch, ...)`` takes the torch module (real torch or ``kiln``) so the same
code runs on both. The attention is computed on the edge list only: `adj.nonzero().t()` gives the edges,
a custom autograd Function (pyGAT's SpecialSpmmFunction) multiplies the sparse attention matrix
`torch.sparse_coo_tensor(indices, values, shape)` with dense features through `torch.matmul`, and its
backward reads `a._indices()` and `a.t().matmul(grad_output)` from the sparse tensor it saved with
`ctx.save_for_backward`. model_kind='autograd' replaces that Function with `torch.sparse.mm` on a
sparse tensor whose values require grad (torch's own sparse gradient). The data are gat_dense.py's
synthetic planted-partition graph.
"""
import os
import random
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gat_dense import accuracy, load_data  # noqa: E402


# ---------------------------------------------------------------- layers.py
def build_model_classes(torch):
    nn = torch.nn
    F = torch.nn.functional

    class SpecialSpmmFunction(torch.autograd.Function):
        """Special function for only sparse region backpropataion layer."""

        @staticmethod
        def forward(ctx, indices, values, shape, b):
            assert indices.requires_grad == False  # noqa: E712  (pyGAT's line)
            a = torch.sparse_coo_tensor(indices, values, shape)
            ctx.save_for_backward(a, b)
            ctx.N = shape[0]
            return torch.matmul(a, b)

        @staticmethod
        def backward(ctx, grad_output):
            a, b = ctx.saved_tensors
            grad_values = grad_b = None
            if ctx.needs_input_grad[1]:
                grad_a_dense = grad_output.matmul(b.t())
                edge_idx = a._indices()[0, :] * ctx.N + a._indices()[1, :]
                grad_values = grad_a_dense.view(-1)[edge_idx]
            if ctx.needs_input_grad[3]:
                grad_b = a.t().matmul(grad_output)
            return None, grad_values, None, grad_b

    class SpecialSpmm(nn.Module):
        def forward(self, indices, values, shape, b):
            return SpecialSpmmFunction.apply(indices, values, shape, b)

    class AutogradSpmm(nn.Module):
        """The same product through torch's sparse autograd: the values' gradient comes from sparse.mm."""

        def forward(self, indices, values, shape, b):
            return torch.sparse.mm(torch.sparse_coo_tensor(indices, values, shape), b)

    class SpGraphAttentionLayer(nn.Module):
        """Sparse version GAT layer, similar to https://arxiv.org/abs/1710.10903"""

        def __init__(self, in_features, out_features, dropout, alpha, concat=True, spmm='function'):
            super(SpGraphAttentionLayer, self).__init__()
            self.in_features = in_features
            self.out_features = out_features
            self.alpha = alpha
            self.concat = concat

            self.W = nn.Parameter(torch.zeros(size=(in_features, out_features)))
            nn.init.xavier_normal_(self.W.data, gain=1.414)

            self.a = nn.Parameter(torch.zeros(size=(1, 2 * out_features)))
            nn.init.xavier_normal_(self.a.data, gain=1.414)

            self.dropout = nn.Dropout(dropout)
            self.leakyrelu = nn.LeakyReLU(self.alpha)
            self.special_spmm = SpecialSpmm() if spmm == 'function' else AutogradSpmm()

        def forward(self, input, adj):
            dv = 'cuda' if input.is_cuda else 'cpu'

            N = input.size()[0]
            edge = adj.nonzero().t()

            h = torch.mm(input, self.W)
            # h: N x out
            assert not torch.isnan(h).any()

            # Self-attention on the nodes - Shared attention mechanism
            edge_h = torch.cat((h[edge[0, :], :], h[edge[1, :], :]), dim=1).t()
            # edge: 2*D x E

            edge_e = torch.exp(-self.leakyrelu(self.a.mm(edge_h).squeeze()))
            assert not torch.isnan(edge_e).any()
            # edge_e: E

            e_rowsum = self.special_spmm(edge, edge_e, torch.Size([N, N]), torch.ones(size=(N, 1), device=dv))
            # e_rowsum: N x 1

            edge_e = self.dropout(edge_e)
            # edge_e: E

            h_prime = self.special_spmm(edge, edge_e, torch.Size([N, N]), h)
            assert not torch.isnan(h_prime).any()
            # h_prime: N x out

            h_prime = h_prime.div(e_rowsum)
            # h_prime: N x out
            assert not torch.isnan(h_prime).any()

            if self.concat:
                # if this layer is not the last layer,
                return F.elu(h_prime)
            else:
                # if this layer is last layer,
                return h_prime

        def __repr__(self):
            return self.__class__.__name__ + ' (' + str(self.in_features) + ' -> ' + str(self.out_features) + ')'

    # ------------------------------------------------------------ models.py
    class SpGAT(nn.Module):
        def __init__(self, nfeat, nhid, nclass, dropout, alpha, nheads, spmm='function'):
            """Sparse version of GAT."""
            super(SpGAT, self).__init__()
            self.dropout = dropout

            self.attentions = [SpGraphAttentionLayer(nfeat, nhid, dropout=dropout, alpha=alpha, concat=True,
                                                     spmm=spmm) for _ in range(nheads)]
            for i, attention in enumerate(self.attentions):
                self.add_module('attention_{}'.format(i), attention)

            self.out_att = SpGraphAttentionLayer(nhid * nheads, nclass, dropout=dropout, alpha=alpha,
                                                 concat=False, spmm=spmm)

        def forward(self, x, adj):
            x = F.dropout(x, self.dropout, training=self.training)
            x = torch.cat([att(x, adj) for att in self.attentions], dim=1)
            x = F.dropout(x, self.dropout, training=self.training)
            x = F.elu(self.out_att(x, adj))
            return F.log_softmax(x, dim=1)

    return SpGAT


# ---------------------------------------------------------------- train.py (--sparse)
def run(torch, epochs=10, n_nodes=120, n_feats=60, n_classes=3, hidden=8, nb_heads=4, dropout=0.6, alpha=0.2,
        lr=0.005, weight_decay=5e-4, seed=72, spmm='function', verbose=False):
    """Train an SpGAT; returns the per-epoch train and validation losses, the initial weights (NumPy)
    and the final test loss and accuracy."""
    F = torch.nn.functional
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)

    adj, features, labels, idx_train, idx_val, idx_test = load_data(
        torch, n_nodes=n_nodes, n_feats=n_feats, n_classes=n_classes)
    SpGAT = build_model_classes(torch)
    model = SpGAT(nfeat=features.shape[1], nhid=hidden, nclass=int(labels.max()) + 1, dropout=dropout,
                  nheads=nb_heads, alpha=alpha, spmm=spmm)
    initial = {k: v.detach().numpy().copy() for k, v in model.state_dict().items()}
    optimizer = torch.optim.Adam(model.parameters(), lr=lr, weight_decay=weight_decay)

    train_losses, val_losses = [], []
    for epoch in range(epochs):
        model.train()
        optimizer.zero_grad()
        output = model(features, adj)
        loss_train = F.nll_loss(output[idx_train], labels[idx_train])
        acc_train = accuracy(output[idx_train], labels[idx_train])
        loss_train.backward()
        optimizer.step()

        model.eval()
        output = model(features, adj)
        loss_val = F.nll_loss(output[idx_val], labels[idx_val])
        acc_val = accuracy(output[idx_val], labels[idx_val])
        if verbose:
            print('Epoch: {:04d}'.format(epoch + 1), 'loss_train: {:.4f}'.format(loss_train.data.item()),
                  'acc_train: {:.4f}'.format(acc_train.data.item()), 'loss_val: {:.4f}'.format(loss_val.data.item()),
                  'acc_val: {:.4f}'.format(acc_val.data.item()))
        train_losses.append(loss_train.data.item())
        val_losses.append(loss_val.data.item())

    model.eval()
    output = model(features, adj)
    loss_test = F.nll_loss(output[idx_test], labels[idx_test])
    acc_test = accuracy(output[idx_test], labels[idx_test])
    return {'train': train_losses, 'val': val_losses, 'initial': initial, 'test_loss': loss_test.item(),
            'test_acc': acc_test.item()}


if __name__ == '__main__':
    import argparse
    p = argparse.ArgumentParser()
    p.add_argument('--kiln', action='store_true')
    p.add_argument('--epochs', type=int, default=100)
    p.add_argument('--spmm', default='function')
    args = p.parse_args()
    if args.kiln:
        import kiln as torch
    else:
        import torch
    r = run(torch, epochs=args.epochs, spmm=args.spmm, verbose=True)
    print('test acc', r['test_acc'])
