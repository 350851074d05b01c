"""labmlai/annotated_deep_learning_paper_implementations: labml_nn/graphs/gat (GraphAttentionLayer: g.repeat
(n_nodes, 1, 1) and g.repeat_interleave(n_nodes, dim=0) concatenated into every pair, an nn.Linear(2 *
n_hidden, 1) attention, LeakyReLU, e.masked_fill(adj_mat == 0, float('-inf')) with a boolean
(N, N, 1) adjacency broadcast over the heads, nn.Softmax(dim=1), dropout, torch.einsum('ijh,jhf->ihf',
a, g), concat by reshape or mean over the heads) and labml_nn/graphs/gatv2 (GraphAttentionV2Layer:
linear_l / linear_r (optionally shared), the attention applied after LeakyReLU(g_l + g_r)), with their
experiments' GAT model (dropout, ELU, a one-head output layer), CoraDataset's adjacency
(torch.eye(n, dtype=torch.bool) with adj_mat[edges[:, 0], edges[:, 1]] = True both ways, features
normalized by their row sums), torch.randperm train/valid split, Adam(lr=5e-3, weight_decay=5e-4),
CrossEntropyLoss and accuracy by output.argmax(dim=-1).eq(labels). Cora is a synthetic graph."""
import argparse

import numpy as np

import torch
from torch import nn


class GraphAttentionLayer(nn.Module):
    def __init__(self, in_features: int, out_features: int, n_heads: int,
                 is_concat: bool = True,
                 dropout: float = 0.6,
                 leaky_relu_negative_slope: float = 0.2):
        super().__init__()

        self.is_concat = is_concat
        self.n_heads = n_heads

        # Calculate the number of dimensions per head
        if is_concat:
            assert out_features % n_heads == 0
            # If we are concatenating the multiple heads
            self.n_hidden = out_features // n_heads
        else:
            # If we are averaging the multiple heads
            self.n_hidden = out_features

        # Linear layer for initial transformation;
        # i.e. to transform the node embeddings before self-attention
        self.linear = nn.Linear(in_features, self.n_hidden * n_heads, bias=False)
        # Linear layer to compute attention score $e_{ij}$
        self.attn = nn.Linear(self.n_hidden * 2, 1, bias=False)
        # The activation for attention score $e_{ij}$
        self.activation = nn.LeakyReLU(negative_slope=leaky_relu_negative_slope)
        # Softmax to compute attention $\alpha_{ij}$
        self.softmax = nn.Softmax(dim=1)
        # Dropout layer to be applied for attention
        self.dropout = nn.Dropout(dropout)

    def forward(self, h: torch.Tensor, adj_mat: torch.Tensor):
        # Number of nodes
        n_nodes = h.shape[0]
        # The initial transformation,
        # for each head.
        # We do single linear transformation and then split it up for each head.
        g = self.linear(h).view(n_nodes, self.n_heads, self.n_hidden)

        # #### Calculate attention score
        g_repeat = g.repeat(n_nodes, 1, 1)
        g_repeat_interleave = g.repeat_interleave(n_nodes, dim=0)
        g_concat = torch.cat([g_repeat_interleave, g_repeat], dim=-1)
        # Reshape so that `g_concat[i, j]` is $\overrightarrow{g_i} \Vert \overrightarrow{g_j}$
        g_concat = g_concat.view(n_nodes, n_nodes, self.n_heads, 2 * self.n_hidden)

        e = self.activation(self.attn(g_concat))
        # Remove the last dimension of size `1`
        e = e.squeeze(-1)

        # The adjacency matrix should have shape
        # `[n_nodes, n_nodes, n_heads]` or`[n_nodes, n_nodes, 1]`
        assert adj_mat.shape[0] == 1 or adj_mat.shape[0] == n_nodes
        assert adj_mat.shape[1] == 1 or adj_mat.shape[1] == n_nodes
        assert adj_mat.shape[2] == 1 or adj_mat.shape[2] == self.n_heads
        # Mask $e_{ij}$ based on adjacency matrix.
        # $e_{ij}$ is set to $- \infty$ if there is no edge from $i$ to $j$.
        e = e.masked_fill(adj_mat == 0, float('-inf'))

        a = self.softmax(e)

        # Apply dropout regularization
        a = self.dropout(a)

        attn_res = torch.einsum('ijh,jhf->ihf', a, g)

        # Concatenate the heads
        if self.is_concat:
            return attn_res.reshape(n_nodes, self.n_heads * self.n_hidden)
        # Take the mean of the heads
        else:
            return attn_res.mean(dim=1)


class GraphAttentionV2Layer(nn.Module):
    def __init__(self, in_features: int, out_features: int, n_heads: int,
                 is_concat: bool = True,
                 dropout: float = 0.6,
                 leaky_relu_negative_slope: float = 0.2,
                 share_weights: bool = False):
        super().__init__()

        self.is_concat = is_concat
        self.n_heads = n_heads
        self.share_weights = share_weights

        # Calculate the number of dimensions per head
        if is_concat:
            assert out_features % n_heads == 0
            # If we are concatenating the multiple heads
            self.n_hidden = out_features // n_heads
        else:
            # If we are averaging the multiple heads
            self.n_hidden = out_features

        # Linear layer for initial source transformation;
        # i.e. to transform the source node embeddings before self-attention
        self.linear_l = nn.Linear(in_features, self.n_hidden * n_heads, bias=False)
        # If `share_weights` is `True` the same linear layer is used for the target nodes
        if share_weights:
            self.linear_r = self.linear_l
        else:
            self.linear_r = nn.Linear(in_features, self.n_hidden * n_heads, bias=False)
        # Linear layer to compute attention score $e_{ij}$
        self.attn = nn.Linear(self.n_hidden, 1, bias=False)
        # The activation for attention score $e_{ij}$
        self.activation = nn.LeakyReLU(negative_slope=leaky_relu_negative_slope)
        # Softmax to compute attention $\alpha_{ij}$
        self.softmax = nn.Softmax(dim=1)
        # Dropout layer to be applied for attention
        self.dropout = nn.Dropout(dropout)

    def forward(self, h: torch.Tensor, adj_mat: torch.Tensor):
        # Number of nodes
        n_nodes = h.shape[0]
        # The initial transformations,
        # for each head.
        # We do two linear transformations and then split it up for each head.
        g_l = self.linear_l(h).view(n_nodes, self.n_heads, self.n_hidden)
        g_r = self.linear_r(h).view(n_nodes, self.n_heads, self.n_hidden)

        # #### Calculate attention score
        g_l_repeat = g_l.repeat(n_nodes, 1, 1)
        g_r_repeat_interleave = g_r.repeat_interleave(n_nodes, dim=0)
        g_sum = g_l_repeat + g_r_repeat_interleave
        # Reshape so that `g_sum[i, j]` is $\overrightarrow{g_{l,i}} + \overrightarrow{g_{r,j}}$
        g_sum = g_sum.view(n_nodes, n_nodes, self.n_heads, self.n_hidden)

        e = self.attn(self.activation(g_sum))
        # Remove the last dimension of size `1`
        e = e.squeeze(-1)

        # The adjacency matrix should have shape
        # `[n_nodes, n_nodes, n_heads]` or`[n_nodes, n_nodes, 1]`
        assert adj_mat.shape[0] == 1 or adj_mat.shape[0] == n_nodes
        assert adj_mat.shape[1] == 1 or adj_mat.shape[1] == n_nodes
        assert adj_mat.shape[2] == 1 or adj_mat.shape[2] == self.n_heads
        # Mask $e_{ij}$ based on adjacency matrix.
        # $e_{ij}$ is set to $- \infty$ if there is no edge from $i$ to $j$.
        e = e.masked_fill(adj_mat == 0, float('-inf'))

        a = self.softmax(e)

        # Apply dropout regularization
        a = self.dropout(a)

        attn_res = torch.einsum('ijh,jhf->ihf', a, g_r)

        # Concatenate the heads
        if self.is_concat:
            return attn_res.reshape(n_nodes, self.n_heads * self.n_hidden)
        # Take the mean of the heads
        else:
            return attn_res.mean(dim=1)


class GAT(nn.Module):
    def __init__(self, in_features: int, n_hidden: int, n_classes: int, n_heads: int, dropout: float,
                 v2: bool = False, share_weights: bool = True):
        super().__init__()
        if v2:
            # First graph attention layer where we concatenate the heads
            self.layer1 = GraphAttentionV2Layer(in_features, n_hidden, n_heads, is_concat=True, dropout=dropout,
                                                share_weights=share_weights)
            # Output layer (without activation) where it averages the heads
            self.output = GraphAttentionV2Layer(n_hidden, n_classes, 1, is_concat=False, dropout=dropout,
                                                share_weights=share_weights)
        else:
            # First graph attention layer where we concatenate the heads
            self.layer1 = GraphAttentionLayer(in_features, n_hidden, n_heads, is_concat=True, dropout=dropout)
            # Output layer (without activation) where it averages the heads
            self.output = GraphAttentionLayer(n_hidden, n_classes, 1, is_concat=False, dropout=dropout)
        # Activation function after first graph attention layer
        self.activation = nn.ELU()
        # Dropout
        self.dropout = nn.Dropout(dropout)

    def forward(self, x: torch.Tensor, adj_mat: torch.Tensor):
        # Apply dropout to the input
        x = self.dropout(x)
        # First graph attention layer
        x = self.layer1(x, adj_mat)
        # Activation function
        x = self.activation(x)
        # Dropout
        x = self.dropout(x)
        # Output layer (without activation) for logits
        return self.output(x, adj_mat)


def accuracy(output: torch.Tensor, labels: torch.Tensor):
    """
    A simple function to calculate the accuracy
    """
    return output.argmax(dim=-1).eq(labels).sum().item() / len(labels)


class CoraDataset:
    """The Cora dataset as labml's CoraDataset holds it: a content table and a citation list, built
    here from a synthetic graph."""

    def __init__(self, include_edges: bool = True, n_nodes: int = 300, n_feats: int = 200, seed: int = 3):
        self.include_edges = include_edges
        rng = np.random.RandomState(seed)
        classes = rng.randint(0, 7, n_nodes)
        protos = rng.rand(7, n_feats) < 0.1
        content = ((rng.rand(n_nodes, n_feats) < 0.02) | (protos[classes] & (rng.rand(n_nodes, n_feats) < 0.5)))
        content = content.astype(np.float32)
        # Load the paper ids
        paper_ids = np.arange(1000, 1000 + n_nodes)
        # Load the feature vectors
        features = torch.tensor(np.array(content, dtype=np.float32))
        # Normalize the feature vectors
        self.features = features / features.sum(dim=1, keepdim=True).clamp(min=1.0)
        # Get the class names and assign an unique integer to each of them
        self.classes = {s: i for i, s in enumerate(sorted(set(classes.tolist())))}
        # Get the labels as those integers
        self.labels = torch.tensor([self.classes[i] for i in classes], dtype=torch.long)

        # Load the citations, it's a list of pairs of integers.
        cites = []
        for i in range(n_nodes):
            for _ in range(rng.poisson(2)):
                pool = np.flatnonzero(classes == classes[i]) if rng.rand() < 0.8 else np.arange(n_nodes)
                cites.append((paper_ids[i], paper_ids[int(rng.choice(pool))]))
        # Map paper ids to indices
        ids_to_idx = {id_: i for i, id_ in enumerate(paper_ids)}

        # Empty adjacency matrix - an identity matrix
        self.adj_mat = torch.eye(len(self.labels), dtype=torch.bool)

        # Mark the citations in the adjacency matrix
        if self.include_edges:
            for e in cites:
                # The pair of paper indexes
                e1, e2 = ids_to_idx[e[0]], ids_to_idx[e[1]]
                # We build a symmetrical graph, where if paper $i$ referenced
                # paper $j$ we place an adge from $i$ to $j$ as well as an edge
                # from $j$ to $i$.
                self.adj_mat[e1][e2] = True
                self.adj_mat[e2][e1] = True


def main(argv=None):
    parser = argparse.ArgumentParser()
    parser.add_argument('--v2', action='store_true')
    parser.add_argument('--share_weights', type=int, default=1)
    parser.add_argument('--include_edges', type=int, default=1)
    parser.add_argument('--epochs', type=int, default=1000)
    parser.add_argument('--n_hidden', type=int, default=64)
    parser.add_argument('--n_heads', type=int, default=8)
    parser.add_argument('--dropout', type=float, default=0.6)
    parser.add_argument('--training_samples', type=int, default=500)
    parser.add_argument('--n_nodes', type=int, default=300)
    parser.add_argument('--quiet', action='store_true')
    args = parser.parse_args(argv)
    log = (lambda *a: None) if args.quiet else print

    torch.manual_seed(0)
    dataset = CoraDataset(bool(args.include_edges), n_nodes=args.n_nodes)
    device = torch.device('cpu')
    model = GAT(dataset.features.shape[1], args.n_hidden, len(dataset.classes), args.n_heads, args.dropout,
                v2=args.v2, share_weights=bool(args.share_weights)).to(device)
    initial_state = {k: v.clone() for k, v in model.state_dict().items()}
    optimizer = torch.optim.Adam(model.parameters(), lr=5e-3, weight_decay=5e-4)
    loss_func = nn.CrossEntropyLoss()

    # Move the feature vectors to the device
    features = dataset.features.to(device)
    # Move the labels to the device
    labels = dataset.labels.to(device)
    # Move the adjacency matrix to the device
    edges_adj = dataset.adj_mat.to(device)
    # Add an empty third dimension for the heads
    edges_adj = edges_adj.unsqueeze(-1)

    # Random indexes
    idx_rand = torch.randperm(len(labels))
    # Nodes for training
    idx_train = idx_rand[:args.training_samples]
    # Nodes for validation
    idx_valid = idx_rand[args.training_samples:]

    record = {'initial_state': initial_state, 'step_losses': [], 'train_acc': [], 'valid': []}
    # Training loop
    for epoch in range(args.epochs):
        # Set the model to training mode
        model.train()
        # Make all the gradients zero
        optimizer.zero_grad()
        # Evaluate the model
        output = model(features, edges_adj)
        # Get the loss for training nodes
        loss = loss_func(output[idx_train], labels[idx_train])
        # Calculate gradients
        loss.backward()
        # Take optimization step
        optimizer.step()
        # Log the loss
        record['step_losses'].append(loss.item())
        # Log the accuracy
        record['train_acc'].append(accuracy(output[idx_train], labels[idx_train]))

        # Set mode to evaluation mode for validation
        model.eval()

        # No need to compute gradients
        with torch.no_grad():
            # Evaluate the model again
            output = model(features, edges_adj)
            # Calculate the loss for validation nodes
            loss = loss_func(output[idx_valid], labels[idx_valid])
            # Log the accuracy
            record['valid'].append((loss.item(), accuracy(output[idx_valid], labels[idx_valid])))
        if epoch % 10 == 0:
            log(f"epoch {epoch}: train loss {record['step_losses'][-1]:.4f} valid {record['valid'][-1]}")
    record['final'] = output
    return record


if __name__ == '__main__':
    main()
