"""PyTorch Geometric's examples/gcn.py, examples/gat.py and a GATv2/GraphSAGE variant, with the PyG layers
they use written out in plain torch the way PyG 2.3 computes them (no torch_geometric, no torch_scatter):
torch_geometric.utils.scatter (scatter_add_ into new_zeros for 'sum', a count by scatter_add_ of
new_ones and clamp(min=1) for 'mean', scatter_reduce_(reduce='amax', include_self=False) for 'max'),
softmax over edges (src.detach()'s max per target, index_select back, exp, + 1e-16), gcn_norm with
add_remaining_self_loops (loop_attr[edge_index[0][inv_mask]] = edge_attr[inv_mask]), deg.pow_(-0.5) and
masked_fill_(... == float('inf'), 0), GCNConv's propagate either by scatter or by torch.sparse.mm over
a torch.sparse_coo_tensor adjacency (to_torch_coo_tensor), GATConv (att_src/att_dst, leaky_relu,
dropout on alpha), GATv2Conv (leaky_relu(x_i + x_j) then att), SAGEConv's mean aggregation by
Tensor.index_reduce_(..., 'mean', include_self=False), glorot via tensor.data.uniform_(-a, a),
T.NormalizeFeatures (x.sub_(x.min()), div_ by the clamp_'d row sums), the Planetoid-style
train/val/test masks, Adam with weight decay on conv1's parameter group only, and the
train()/test() loop of the examples with @torch.no_grad(). Cora is a synthetic graph (numpy, seeded)."""
import argparse
import math
import time

import numpy as np

import torch
import torch.nn.functional as F
from torch import Tensor
from torch.nn import Parameter


# ---- torch_geometric.nn.inits --------------------------------------------------------------------------------
def glorot(value):
    if isinstance(value, Tensor):
        stdv = math.sqrt(6.0 / (value.size(-2) + value.size(-1)))
        value.data.uniform_(-stdv, stdv)


def zeros(value):
    if isinstance(value, Tensor):
        value.data.fill_(0)


class Linear(torch.nn.Module):
    """torch_geometric.nn.dense.linear.Linear with weight_initializer='glorot' and bias zeros."""
    def __init__(self, in_channels, out_channels, bias=True, weight_initializer='glorot'):
        super().__init__()
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.weight_initializer = weight_initializer
        self.weight = Parameter(torch.empty(out_channels, in_channels))
        if bias:
            self.bias = Parameter(torch.empty(out_channels))
        else:
            self.register_parameter('bias', None)
        self.reset_parameters()

    def reset_parameters(self):
        if self.weight_initializer == 'glorot':
            glorot(self.weight)
        else:
            torch.nn.init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        zeros(self.bias)

    def forward(self, x):
        return F.linear(x, self.weight, self.bias)


# ---- torch_geometric.utils ---------------------------------------------------------------------------------------
def broadcast(src, ref, dim):
    size = ((1, ) * dim) + (-1, ) + ((1, ) * (ref.dim() - dim - 1))
    return src.view(size).expand_as(ref)


def scatter(src, index, dim=0, dim_size=None, reduce='sum'):
    if dim < 0:
        dim = src.dim() + dim
    if dim_size is None:
        dim_size = int(index.max()) + 1 if index.numel() > 0 else 0
    size = list(src.size())
    size[dim] = dim_size

    if reduce == 'sum' or reduce == 'add':
        index = broadcast(index, src, dim)
        return src.new_zeros(size).scatter_add_(dim, index, src)

    if reduce == 'mean':
        count = src.new_zeros(dim_size)
        count.scatter_add_(0, index, src.new_ones(src.size(dim)))
        count = count.clamp(min=1)

        index = broadcast(index, src, dim)
        out = src.new_zeros(size).scatter_add_(dim, index, src)

        return out / broadcast(count, out, dim)

    if reduce == 'min' or reduce == 'max':
        index = broadcast(index, src, dim)
        return src.new_zeros(size).scatter_reduce_(dim, index, src, reduce=f'a{reduce}', include_self=False)

    raise ValueError(f"Encountered invalid `reduce` argument '{reduce}'")


def softmax(src, index, num_nodes, dim=0):
    N = num_nodes
    src_max = scatter(src.detach(), index, dim, dim_size=N, reduce='max')
    out = src - src_max.index_select(dim, index)
    out = out.exp()
    out_sum = scatter(out, index, dim, dim_size=N, reduce='sum') + 1e-16
    out_sum = out_sum.index_select(dim, index)
    return out / out_sum


def remove_self_loops(edge_index, edge_attr=None):
    mask = edge_index[0] != edge_index[1]
    edge_index = edge_index[:, mask]
    if edge_attr is None:
        return edge_index, None
    return edge_index, edge_attr[mask]


def add_self_loops(edge_index, num_nodes):
    loop_index = torch.arange(0, num_nodes, dtype=torch.long, device=edge_index.device)
    loop_index = loop_index.unsqueeze(0).repeat(2, 1)
    return torch.cat([edge_index, loop_index], dim=1)


def add_remaining_self_loops(edge_index, edge_attr=None, fill_value=None, num_nodes=None):
    N = num_nodes
    mask = edge_index[0] != edge_index[1]

    loop_index = torch.arange(0, N, dtype=torch.long, device=edge_index.device)
    loop_index = loop_index.unsqueeze(0).repeat(2, 1)

    if edge_attr is not None:
        loop_attr = edge_attr.new_full((N, ) + edge_attr.size()[1:], fill_value)

        inv_mask = ~mask
        loop_attr[edge_index[0][inv_mask]] = edge_attr[inv_mask]

        edge_attr = torch.cat([edge_attr[mask], loop_attr], dim=0)

    edge_index = torch.cat([edge_index[:, mask], loop_index], dim=1)
    return edge_index, edge_attr


def gcn_norm(edge_index, edge_weight=None, num_nodes=None, improved=False, add_self_loops=True, dtype=None):
    fill_value = 2. if improved else 1.

    if add_self_loops:
        edge_index, edge_weight = add_remaining_self_loops(edge_index, edge_weight, fill_value, num_nodes)

    if edge_weight is None:
        edge_weight = torch.ones((edge_index.size(1), ), dtype=dtype, device=edge_index.device)

    row, col = edge_index[0], edge_index[1]
    idx = col
    deg = scatter(edge_weight, idx, dim=0, dim_size=num_nodes, reduce='sum')
    deg_inv_sqrt = deg.pow_(-0.5)
    deg_inv_sqrt.masked_fill_(deg_inv_sqrt == float('inf'), 0)
    edge_weight = deg_inv_sqrt[row] * edge_weight * deg_inv_sqrt[col]

    return edge_index, edge_weight


def to_torch_coo_tensor(edge_index, edge_attr=None, size=None):
    if edge_attr is None:
        edge_attr = torch.ones(edge_index.size(1), device=edge_index.device)
    adj = torch.sparse_coo_tensor(
        indices=edge_index,
        values=edge_attr,
        size=tuple(size) + edge_attr.size()[1:],
        device=edge_index.device,
    )
    adj = adj.coalesce()
    return adj


# ---- the convolutions -------------------------------------------------------------------------------------------
class GCNConv(torch.nn.Module):
    def __init__(self, in_channels, out_channels, improved=False, cached=False, add_self_loops=True,
                 normalize=True, bias=True, sparse=False):
        super().__init__()
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.improved = improved
        self.cached = cached
        self.add_self_loops = add_self_loops
        self.normalize = normalize
        self.sparse = sparse  # propagate by torch.sparse.mm over the transposed adjacency (a SparseTensor input)

        self._cached_edge_index = None
        self._cached_adj_t = None

        self.lin = Linear(in_channels, out_channels, bias=False, weight_initializer='glorot')

        if bias:
            self.bias = Parameter(torch.empty(out_channels))
        else:
            self.register_parameter('bias', None)

        self.reset_parameters()

    def reset_parameters(self):
        self.lin.reset_parameters()
        zeros(self.bias)
        self._cached_edge_index = None
        self._cached_adj_t = None

    def forward(self, x, edge_index, edge_weight=None):
        num_nodes = x.size(0)
        if self.normalize:
            cache = self._cached_edge_index
            if cache is None:
                edge_index, edge_weight = gcn_norm(edge_index, edge_weight, num_nodes, self.improved,
                                                   self.add_self_loops, dtype=x.dtype)
                if self.cached:
                    self._cached_edge_index = (edge_index, edge_weight)
            else:
                edge_index, edge_weight = cache[0], cache[1]

        x = self.lin(x)

        if self.sparse:
            adj_t = self._cached_adj_t
            if adj_t is None:
                adj_t = to_torch_coo_tensor(edge_index.flip([0]), edge_weight, size=(num_nodes, num_nodes))
                if self.cached:
                    self._cached_adj_t = adj_t
            out = torch.sparse.mm(adj_t, x)
        else:
            # propagate: message edge_weight.view(-1, 1) * x_j, then sum into the targets
            x_j = x.index_select(0, edge_index[0])
            msg = x_j if edge_weight is None else edge_weight.view(-1, 1) * x_j
            out = scatter(msg, edge_index[1], dim=0, dim_size=num_nodes, reduce='sum')

        if self.bias is not None:
            out = out + self.bias

        return out


class GATConv(torch.nn.Module):
    def __init__(self, in_channels, out_channels, heads=1, concat=True, negative_slope=0.2, dropout=0.0,
                 add_self_loops=True, bias=True):
        super().__init__()
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.heads = heads
        self.concat = concat
        self.negative_slope = negative_slope
        self.dropout = dropout
        self.add_self_loops = add_self_loops

        self.lin_src = Linear(in_channels, heads * out_channels, bias=False, weight_initializer='glorot')
        self.lin_dst = self.lin_src

        # The learnable parameters to compute attention coefficients:
        self.att_src = Parameter(torch.empty(1, heads, out_channels))
        self.att_dst = Parameter(torch.empty(1, heads, out_channels))

        if bias and concat:
            self.bias = Parameter(torch.empty(heads * out_channels))
        elif bias and not concat:
            self.bias = Parameter(torch.empty(out_channels))
        else:
            self.register_parameter('bias', None)

        self.reset_parameters()

    def reset_parameters(self):
        self.lin_src.reset_parameters()
        self.lin_dst.reset_parameters()
        glorot(self.att_src)
        glorot(self.att_dst)
        zeros(self.bias)

    def forward(self, x, edge_index, return_attention_weights=None):
        H, C = self.heads, self.out_channels

        x_src = x_dst = self.lin_src(x).view(-1, H, C)

        alpha_src = (x_src * self.att_src).sum(dim=-1)
        alpha_dst = (x_dst * self.att_dst).sum(-1)

        if self.add_self_loops:
            num_nodes = x_src.size(0)
            edge_index, _ = remove_self_loops(edge_index)
            edge_index = add_self_loops(edge_index, num_nodes=num_nodes)

        j, i = edge_index[0], edge_index[1]
        # edge_update
        alpha = alpha_src.index_select(0, j) + alpha_dst.index_select(0, i)
        alpha = F.leaky_relu(alpha, self.negative_slope)
        alpha = softmax(alpha, i, num_nodes=x.size(0))
        alpha = F.dropout(alpha, p=self.dropout, training=self.training)

        # propagate: message alpha.unsqueeze(-1) * x_j
        msg = alpha.unsqueeze(-1) * x_src.index_select(0, j)
        out = scatter(msg, i, dim=0, dim_size=x.size(0), reduce='sum')

        if self.concat:
            out = out.view(-1, self.heads * self.out_channels)
        else:
            out = out.mean(dim=1)

        if self.bias is not None:
            out = out + self.bias

        if isinstance(return_attention_weights, bool):
            return out, (edge_index, alpha)
        return out


class GATv2Conv(torch.nn.Module):
    def __init__(self, in_channels, out_channels, heads=1, concat=True, negative_slope=0.2, dropout=0.0,
                 add_self_loops=True, bias=True, share_weights=False):
        super().__init__()
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.heads = heads
        self.concat = concat
        self.negative_slope = negative_slope
        self.dropout = dropout
        self.add_self_loops = add_self_loops
        self.share_weights = share_weights

        self.lin_l = Linear(in_channels, heads * out_channels, bias=bias, weight_initializer='glorot')
        if share_weights:
            self.lin_r = self.lin_l
        else:
            self.lin_r = Linear(in_channels, heads * out_channels, bias=bias, weight_initializer='glorot')

        self.att = Parameter(torch.empty(1, heads, out_channels))

        if bias and concat:
            self.bias = Parameter(torch.empty(heads * out_channels))
        elif bias and not concat:
            self.bias = Parameter(torch.empty(out_channels))
        else:
            self.register_parameter('bias', None)

        self.reset_parameters()

    def reset_parameters(self):
        self.lin_l.reset_parameters()
        self.lin_r.reset_parameters()
        glorot(self.att)
        zeros(self.bias)

    def forward(self, x, edge_index):
        H, C = self.heads, self.out_channels
        x_l = self.lin_l(x).view(-1, H, C)
        x_r = self.lin_r(x).view(-1, H, C)

        if self.add_self_loops:
            num_nodes = x_l.size(0)
            edge_index, _ = remove_self_loops(edge_index)
            edge_index = add_self_loops(edge_index, num_nodes=num_nodes)

        j, i = edge_index[0], edge_index[1]
        x_j, x_i = x_l.index_select(0, j), x_r.index_select(0, i)
        # edge_update
        x = x_i + x_j
        x = F.leaky_relu(x, self.negative_slope)
        alpha = (x * self.att).sum(dim=-1)
        alpha = softmax(alpha, i, num_nodes=x_l.size(0))
        alpha = F.dropout(alpha, p=self.dropout, training=self.training)

        out = scatter(x_j * alpha.unsqueeze(-1), i, dim=0, dim_size=x_l.size(0), reduce='sum')

        if self.concat:
            out = out.view(-1, self.heads * self.out_channels)
        else:
            out = out.mean(dim=1)

        if self.bias is not None:
            out = out + self.bias
        return out


class SAGEConv(torch.nn.Module):
    def __init__(self, in_channels, out_channels, aggr='mean', normalize=False, root_weight=True, bias=True):
        super().__init__()
        self.aggr = aggr
        self.normalize = normalize
        self.root_weight = root_weight
        self.lin_l = Linear(in_channels, out_channels, bias=bias, weight_initializer='kaiming_uniform')
        if self.root_weight:
            self.lin_r = Linear(in_channels, out_channels, bias=False, weight_initializer='kaiming_uniform')

    def forward(self, x, edge_index):
        j, i = edge_index[0], edge_index[1]
        x_j = x.index_select(0, j)
        if self.aggr == 'index_reduce':
            out = x.new_zeros(x.size()).index_reduce_(0, i, x_j, 'mean', include_self=False)
        else:
            out = scatter(x_j, i, dim=0, dim_size=x.size(0), reduce=self.aggr)
        out = self.lin_l(out)

        if self.root_weight:
            out = out + self.lin_r(x)

        if self.normalize:
            out = F.normalize(out, p=2., dim=-1)

        return out


# ---- the models of the examples ---------------------------------------------------------------------------
class GCN(torch.nn.Module):
    def __init__(self, in_channels, hidden_channels, out_channels, sparse=False):
        super().__init__()
        self.conv1 = GCNConv(in_channels, hidden_channels, cached=True, normalize=True, sparse=sparse)
        self.conv2 = GCNConv(hidden_channels, out_channels, cached=True, normalize=True, sparse=sparse)

    def forward(self, x, edge_index, edge_weight=None):
        x = F.dropout(x, p=0.5, training=self.training)
        x = self.conv1(x, edge_index, edge_weight).relu()
        x = F.dropout(x, p=0.5, training=self.training)
        x = self.conv2(x, edge_index, edge_weight)
        return x


class GAT(torch.nn.Module):
    def __init__(self, in_channels, hidden_channels, out_channels, heads, v2=False):
        super().__init__()
        Conv = GATv2Conv if v2 else GATConv
        self.conv1 = Conv(in_channels, hidden_channels, heads, dropout=0.6)
        # On the Pubmed dataset, use `heads` output heads in `conv2`.
        self.conv2 = Conv(hidden_channels * heads, out_channels, heads=1, concat=False, dropout=0.6)

    def forward(self, x, edge_index):
        x = F.dropout(x, p=0.6, training=self.training)
        x = F.elu(self.conv1(x, edge_index))
        x = F.dropout(x, p=0.6, training=self.training)
        x = self.conv2(x, edge_index)
        return x


class SAGE(torch.nn.Module):
    def __init__(self, in_channels, hidden_channels, out_channels, aggr):
        super().__init__()
        self.conv1 = SAGEConv(in_channels, hidden_channels, aggr=aggr)
        self.conv2 = SAGEConv(hidden_channels, out_channels, aggr=aggr, normalize=False)

    def forward(self, x, edge_index):
        x = F.dropout(x, p=0.5, training=self.training)
        x = self.conv1(x, edge_index).relu()
        x = F.dropout(x, p=0.5, training=self.training)
        return self.conv2(x, edge_index)


class Data:
    pass


def synthetic_planetoid(rng, num_nodes, num_features, num_classes, weighted):
    y = rng.randint(0, num_classes, size=num_nodes)
    proto = rng.rand(num_classes, num_features) < 0.1
    x = ((rng.rand(num_nodes, num_features) < 0.03) | (proto[y] & (rng.rand(num_nodes, num_features) < 0.5)))
    edges = set()
    for u in range(num_nodes):
        for _ in range(rng.poisson(2)):
            pool = np.flatnonzero(y == y[u]) if rng.rand() < 0.75 else np.arange(num_nodes)
            v = int(rng.choice(pool))
            edges.add((u, v))  # a few self loops too (add_remaining_self_loops keeps their weights)
            edges.add((v, u))
    edge_index = np.array(sorted(edges)).T
    data = Data()
    data.x = torch.tensor(x.astype(np.float32))
    data.y = torch.tensor(y, dtype=torch.long)
    data.edge_index = torch.tensor(edge_index, dtype=torch.long)
    data.edge_attr = (torch.tensor(rng.rand(edge_index.shape[1]).astype(np.float32) + 0.5) if weighted else None)
    # Planetoid's public split: 20 per class for training, then 500 val, 1000 test (scaled down)
    train_mask = torch.zeros(num_nodes, dtype=torch.bool)
    for c in range(num_classes):
        train_mask[torch.nonzero(data.y == c).view(-1)[:20]] = True
    rest = torch.nonzero(~train_mask).view(-1)
    data.val_mask = torch.zeros(num_nodes, dtype=torch.bool)
    data.val_mask[rest[:num_nodes // 5]] = True
    data.test_mask = torch.zeros(num_nodes, dtype=torch.bool)
    data.test_mask[rest[num_nodes // 5:]] = True
    data.train_mask = train_mask
    data.num_features, data.num_classes = num_features, num_classes
    return data


def normalize_features(data):
    """T.NormalizeFeatures()"""
    value = data.x
    value = value - value.min()
    value.div_(value.sum(dim=-1, keepdim=True).clamp_(min=1.))
    data.x = value
    return data


def main(argv=None):
    parser = argparse.ArgumentParser()
    parser.add_argument('--model', choices=['gcn', 'gat', 'gatv2', 'sage'], default='gcn')
    parser.add_argument('--sparse', action='store_true', help='GCN propagation by torch.sparse.mm')
    parser.add_argument('--weighted', action='store_true', help='edge weights (data.edge_attr)')
    parser.add_argument('--aggr', default='mean')
    parser.add_argument('--hidden_channels', type=int, default=16)
    parser.add_argument('--heads', type=int, default=8)
    parser.add_argument('--lr', type=float, default=0.01)
    parser.add_argument('--epochs', type=int, default=200)
    parser.add_argument('--num_nodes', type=int, default=400)
    parser.add_argument('--num_features', type=int, default=120)
    parser.add_argument('--quiet', action='store_true')
    args = parser.parse_args(argv)
    log_print = (lambda *a: None) if args.quiet else print

    torch.manual_seed(12345)
    data = synthetic_planetoid(np.random.RandomState(7), args.num_nodes, args.num_features, 6, args.weighted)
    data = normalize_features(data)

    if args.model == 'gcn':
        model = GCN(data.num_features, args.hidden_channels, data.num_classes, sparse=args.sparse)
        optimizer = torch.optim.Adam([
            dict(params=model.conv1.parameters(), weight_decay=5e-4),
            dict(params=model.conv2.parameters(), weight_decay=0)
        ], lr=args.lr)  # Only perform weight-decay on first convolution.
    elif args.model in ('gat', 'gatv2'):
        model = GAT(data.num_features, args.hidden_channels, data.num_classes, args.heads, v2=args.model == 'gatv2')
        optimizer = torch.optim.Adam(model.parameters(), lr=0.005, weight_decay=5e-4)
    else:
        model = SAGE(data.num_features, args.hidden_channels, data.num_classes, args.aggr)
        optimizer = torch.optim.Adam(model.parameters(), lr=args.lr, weight_decay=5e-4)
    initial_state = {k: v.clone() for k, v in model.state_dict().items()}

    def forward():
        if args.model == 'gcn':
            return model(data.x, data.edge_index, data.edge_attr)
        return model(data.x, data.edge_index)

    def train():
        model.train()
        optimizer.zero_grad()
        out = forward()
        loss = F.cross_entropy(out[data.train_mask], data.y[data.train_mask])
        loss.backward()
        optimizer.step()
        return float(loss)

    @torch.no_grad()
    def test():
        model.eval()
        pred = forward().argmax(dim=-1)

        accs = []
        for mask in [data.train_mask, data.val_mask, data.test_mask]:
            accs.append(int((pred[mask] == data.y[mask]).sum()) / int(mask.sum()))
        return accs

    best_val_acc = test_acc = 0
    times = []
    losses, accs = [], []
    for epoch in range(1, args.epochs + 1):
        start = time.time()
        loss = train()
        train_acc, val_acc, tmp_test_acc = test()
        if val_acc > best_val_acc:
            best_val_acc = val_acc
            test_acc = tmp_test_acc
        losses.append(loss)
        accs.append((train_acc, val_acc, tmp_test_acc))
        log_print(f'Epoch: {epoch:03d}, Loss: {loss:.4f}, Train: {train_acc:.4f}, Val: {val_acc:.4f}, Test: {test_acc:.4f}')
        times.append(time.time() - start)
    log_print(f'Median time per epoch: {torch.tensor(times).median():.4f}s')
    with torch.no_grad():
        model.eval()
        final = forward()
    return {"initial_state": initial_state, "step_losses": losses, "accs": accs, "test_acc": test_acc,
            "final": final, "x": data.x}


if __name__ == '__main__':
    main()
