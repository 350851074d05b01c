"""Graph classification with a Graph Isomorphism Network written in plain PyTorch the way the
torch_geometric-free tutorials and weihua916/powerful-gnns write it: graphs batched by a collate_fn into one
disjoint union (edge_index offsets by the cumulative node counts, a batch vector from torch.repeat_interleave /
torch.cat of torch.full), message passing by x.index_add_ / torch.zeros(...).scatter_add_(0, dst.unsqueeze(-1)
.expand(-1, F), ...), GINConv's (1 + eps) * x + aggr with a learnable eps Parameter(torch.Tensor([0])), MLPs of
Linear / BatchNorm1d / ReLU, readouts by global_add_pool (index_add_), global_mean_pool (scatter_add_ divided
by torch.bincount(batch).clamp(min=1)), global_max_pool (scatter_reduce(..., 'amax', include_self=False)),
jumping-knowledge concatenation of every layer's pooled features, dropout, Adam with StepLR(50, 0.5), and
powerful-gnns' separate_data by StratifiedKFold-like index splits. The datasets are small synthetic graphs
(cycles vs. paths vs. stars with noisy node features); a torch.utils.data.Dataset of dicts, DataLoader with a
custom collate_fn and a WeightedRandomSampler for the imbalanced classes."""
import argparse

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset, WeightedRandomSampler


def make_graph(kind, n, rng):
    if kind == 0:
        edges = [(i, (i + 1) % n) for i in range(n)]
    elif kind == 1:
        edges = [(i, i + 1) for i in range(n - 1)]
    else:
        edges = [(0, i) for i in range(1, n)]
    for _ in range(rng.randint(0, 2)):
        a, b = rng.randint(0, n, 2)
        if a != b:
            edges.append((a, b))
    e = np.array(edges, dtype=np.int64).T
    edge_index = np.concatenate([e, e[::-1]], axis=1)
    deg = np.bincount(edge_index[0], minlength=n).astype(np.float32)
    x = np.stack([deg, np.ones(n, np.float32), rng.randn(n).astype(np.float32) * 0.1], 1)
    return {"x": torch.from_numpy(x), "edge_index": torch.from_numpy(edge_index.copy()), "y": kind}


class GraphDataset(Dataset):
    def __init__(self, n_graphs, seed):
        rng = np.random.RandomState(seed)
        kinds = rng.choice(3, n_graphs, p=[0.6, 0.25, 0.15])
        self.graphs = [make_graph(int(k), rng.randint(4, 9), rng) for k in kinds]

    def __len__(self):
        return len(self.graphs)

    def __getitem__(self, idx):
        return self.graphs[idx]


def collate(graphs):
    xs, edges, ys, counts = [], [], [], []
    offset = 0
    for g in graphs:
        xs.append(g["x"])
        edges.append(g["edge_index"] + offset)
        ys.append(g["y"])
        counts.append(g["x"].size(0))
        offset += g["x"].size(0)
    batch = torch.repeat_interleave(torch.arange(len(graphs)), torch.tensor(counts))
    return torch.cat(xs, 0), torch.cat(edges, 1), batch, torch.tensor(ys)


def global_add_pool(x, batch, size):
    return torch.zeros(size, x.size(1), dtype=x.dtype).index_add_(0, batch, x)


def global_mean_pool(x, batch, size):
    out = torch.zeros(size, x.size(1), dtype=x.dtype).scatter_add_(0, batch.unsqueeze(-1).expand(-1, x.size(1)), x)
    return out / torch.bincount(batch, minlength=size).clamp(min=1).unsqueeze(-1).to(x.dtype)


def global_max_pool(x, batch, size):
    index = batch.unsqueeze(-1).expand(-1, x.size(1))
    return torch.zeros(size, x.size(1), dtype=x.dtype).scatter_reduce(0, index, x, reduce='amax',
                                                                      include_self=False)


class GINConv(nn.Module):
    def __init__(self, mlp, train_eps=True, aggr='add'):
        super(GINConv, self).__init__()
        self.nn = mlp
        self.aggr = aggr
        if train_eps:
            self.eps = nn.Parameter(torch.Tensor([0]))
        else:
            self.register_buffer('eps', torch.Tensor([0]))

    def forward(self, x, edge_index):
        src, dst = edge_index
        if self.aggr == 'add':
            aggr = torch.zeros_like(x).index_add_(0, dst, x[src])
        else:
            aggr = torch.zeros_like(x).scatter_reduce(0, dst.unsqueeze(-1).expand(-1, x.size(1)), x[src],
                                                      reduce=self.aggr, include_self=False)
        return self.nn((1 + self.eps) * x + aggr)


class GIN(nn.Module):
    def __init__(self, num_layers, input_dim, hidden_dim, output_dim, final_dropout, readout, aggr):
        super(GIN, self).__init__()
        self.final_dropout = final_dropout
        self.readout = readout
        self.convs = nn.ModuleList()
        for layer in range(num_layers):
            d = input_dim if layer == 0 else hidden_dim
            self.convs.append(GINConv(nn.Sequential(nn.Linear(d, hidden_dim), nn.BatchNorm1d(hidden_dim),
                                                    nn.ReLU(), nn.Linear(hidden_dim, hidden_dim), nn.ReLU()),
                                      aggr=aggr))
        self.linears_prediction = nn.ModuleList(
            [nn.Linear(input_dim, output_dim)] + [nn.Linear(hidden_dim, output_dim) for _ in range(num_layers)])

    def forward(self, x, edge_index, batch, num_graphs):
        pool = {'sum': global_add_pool, 'mean': global_mean_pool, 'max': global_max_pool}[self.readout]
        hidden_rep = [x]
        h = x
        for conv in self.convs:
            h = conv(h, edge_index)
            hidden_rep.append(h)
        score_over_layer = 0
        # perform pooling over all nodes in each graph in every layer
        for layer, h in enumerate(hidden_rep):
            pooled_h = pool(h, batch, num_graphs)
            score_over_layer += F.dropout(self.linears_prediction[layer](pooled_h), self.final_dropout,
                                          training=self.training)
        return score_over_layer


def main(argv=None):
    parser = argparse.ArgumentParser(description='PyTorch graph convolutional neural net for whole-graph '
                                                 'classification')
    parser.add_argument('--batch_size', type=int, default=16)
    parser.add_argument('--epochs', type=int, default=3)
    parser.add_argument('--lr', type=float, default=0.01)
    parser.add_argument('--num_layers', type=int, default=3)
    parser.add_argument('--hidden_dim', type=int, default=16)
    parser.add_argument('--final_dropout', type=float, default=0.5)
    parser.add_argument('--graph_pooling_type', type=str, default="sum", choices=["sum", "mean", "max"])
    parser.add_argument('--neighbor_pooling_type', type=str, default="add", choices=["add", "mean", "amax"])
    parser.add_argument('--quiet', action='store_true')
    args = parser.parse_args(argv)
    log = (lambda *a: None) if args.quiet else print

    torch.manual_seed(0)
    np.random.seed(0)
    dataset = GraphDataset(80, 0)
    test_dataset = GraphDataset(30, 1)
    labels = np.array([g["y"] for g in dataset.graphs])
    class_weight = 1.0 / np.bincount(labels)
    sampler = WeightedRandomSampler(weights=class_weight[labels].tolist(), num_samples=len(dataset),
                                    replacement=True)
    train_loader = DataLoader(dataset, batch_size=args.batch_size, sampler=sampler, collate_fn=collate)
    test_loader = DataLoader(test_dataset, batch_size=32, shuffle=False, collate_fn=collate)

    model = GIN(args.num_layers, 3, args.hidden_dim, 3, args.final_dropout, args.graph_pooling_type,
                args.neighbor_pooling_type)
    initial_state = {k: v.clone() for k, v in model.state_dict().items()}
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=50, gamma=0.5)
    criterion = nn.CrossEntropyLoss()

    step_losses, accs, seen = [], [], []
    for epoch in range(1, args.epochs + 1):
        model.train()
        for x, edge_index, batch, y in train_loader:
            seen.append(y.clone())
            output = model(x, edge_index, batch, y.size(0))
            loss = criterion(output, y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            scheduler.step()
            step_losses.append(loss.item())
        model.eval()
        correct = 0
        with torch.no_grad():
            for x, edge_index, batch, y in test_loader:
                pred = model(x, edge_index, batch, y.size(0)).max(1, keepdim=True)[1]
                correct += pred.eq(y.view_as(pred)).sum().cpu().item()
        accs.append(correct / float(len(test_dataset)))
        log("epoch %d loss %.4f test acc %.3f" % (epoch, np.mean(step_losses[-5:]), accs[-1]))
    return {"initial_state": initial_state, "step_losses": step_losses, "accs": accs,
            "seen": torch.cat(seen), "eps": [c.eps.item() for c in model.convs]}


if __name__ == "__main__":
    main()
