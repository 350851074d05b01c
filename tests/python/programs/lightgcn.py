"""gusye1234/LightGCN-PyTorch as written: the normalized bipartite adjacency built with scipy.sparse (dok_matrix /
tolil, D^-1/2 A D^-1/2 with np.power(rowsum, -0.5).flatten() and inf -> 0, sp.diags) and converted by
_convert_sp_mat_to_sp_tensor (coo.row / coo.col via torch.Tensor(...).long(), torch.stack, torch.FloatTensor(data),
torch.sparse.FloatTensor(index, data, torch.Size(coo.shape)), .coalesce()), __dropout_x's edge dropout on
x.indices().t() / x.values() (torch.rand(len(values)) + keep_prob, .int().bool()), computer()'s layer propagation
by torch.sparse.mm and torch.mean(torch.stack(embs, dim=1), dim=1), torch.split(light_out, [num_users, num_items]),
bpr_loss (softplus(neg_scores - pos_scores), the 1/2 * norm(2).pow(2) regulariser), UniformSample with NumPy,
Adam, and Test's getUsersRating (sigmoid of a matmul), rating[exclude_index, exclude_items] = -(1 << 10) and
torch.topk recall / precision / NDCG."""
import argparse

import numpy as np
import scipy.sparse as sp
import torch
from torch import nn


class LightGCN(nn.Module):
    def __init__(self, config, n_users, m_items, UserItemNet):
        super(LightGCN, self).__init__()
        self.config = config
        self.num_users = n_users
        self.num_items = m_items
        self.latent_dim = config['latent_dim_rec']
        self.n_layers = config['lightGCN_n_layers']
        self.keep_prob = config['keep_prob']
        self.A_split = False
        self.embedding_user = torch.nn.Embedding(num_embeddings=self.num_users, embedding_dim=self.latent_dim)
        self.embedding_item = torch.nn.Embedding(num_embeddings=self.num_items, embedding_dim=self.latent_dim)
        nn.init.normal_(self.embedding_user.weight, std=0.1)
        nn.init.normal_(self.embedding_item.weight, std=0.1)
        self.f = nn.Sigmoid()
        self.Graph = self.getSparseGraph(UserItemNet)

    def _convert_sp_mat_to_sp_tensor(self, X):
        coo = X.tocoo().astype(np.float32)
        row = torch.Tensor(coo.row).long()
        col = torch.Tensor(coo.col).long()
        index = torch.stack([row, col])
        data = torch.FloatTensor(coo.data)
        return torch.sparse.FloatTensor(index, data, torch.Size(coo.shape))

    def getSparseGraph(self, UserItemNet):
        adj_mat = sp.dok_matrix((self.num_users + self.num_items, self.num_users + self.num_items), dtype=np.float32)
        adj_mat = adj_mat.tolil()
        R = UserItemNet.tolil()
        adj_mat[:self.num_users, self.num_users:] = R
        adj_mat[self.num_users:, :self.num_users] = R.T
        adj_mat = adj_mat.todok()
        rowsum = np.array(adj_mat.sum(axis=1))
        d_inv = np.power(rowsum, -0.5).flatten()
        d_inv[np.isinf(d_inv)] = 0.
        d_mat = sp.diags(d_inv)
        norm_adj = d_mat.dot(adj_mat)
        norm_adj = norm_adj.dot(d_mat)
        norm_adj = norm_adj.tocsr()
        Graph = self._convert_sp_mat_to_sp_tensor(norm_adj)
        Graph = Graph.coalesce()
        return Graph

    def __dropout_x(self, x, keep_prob):
        size = x.size()
        index = x.indices().t()
        values = x.values()
        random_index = torch.rand(len(values)) + keep_prob
        random_index = random_index.int().bool()
        index = index[random_index]
        values = values[random_index] / keep_prob
        g = torch.sparse.FloatTensor(index.t(), values, size)
        return g

    def computer(self):
        users_emb = self.embedding_user.weight
        items_emb = self.embedding_item.weight
        all_emb = torch.cat([users_emb, items_emb])
        embs = [all_emb]
        if self.config['dropout']:
            if self.training:
                g_droped = self.__dropout_x(self.Graph, self.keep_prob)
            else:
                g_droped = self.Graph
        else:
            g_droped = self.Graph
        for layer in range(self.n_layers):
            all_emb = torch.sparse.mm(g_droped, all_emb)
            embs.append(all_emb)
        embs = torch.stack(embs, dim=1)
        light_out = torch.mean(embs, dim=1)
        users, items = torch.split(light_out, [self.num_users, self.num_items])
        return users, items

    def getUsersRating(self, users):
        all_users, all_items = self.computer()
        users_emb = all_users[users.long()]
        items_emb = all_items
        rating = self.f(torch.matmul(users_emb, items_emb.t()))
        return rating

    def getEmbedding(self, users, pos_items, neg_items):
        all_users, all_items = self.computer()
        users_emb = all_users[users]
        pos_emb = all_items[pos_items]
        neg_emb = all_items[neg_items]
        users_emb_ego = self.embedding_user(users)
        pos_emb_ego = self.embedding_item(pos_items)
        neg_emb_ego = self.embedding_item(neg_items)
        return users_emb, pos_emb, neg_emb, users_emb_ego, pos_emb_ego, neg_emb_ego

    def bpr_loss(self, users, pos, neg):
        (users_emb, pos_emb, neg_emb, userEmb0, posEmb0, negEmb0) = self.getEmbedding(users.long(), pos.long(),
                                                                                      neg.long())
        reg_loss = (1 / 2) * (userEmb0.norm(2).pow(2) + posEmb0.norm(2).pow(2) + negEmb0.norm(2).pow(2)) / float(
            len(users))
        pos_scores = torch.mul(users_emb, pos_emb)
        pos_scores = torch.sum(pos_scores, dim=1)
        neg_scores = torch.mul(users_emb, neg_emb)
        neg_scores = torch.sum(neg_scores, dim=1)
        loss = torch.mean(torch.nn.functional.softplus(neg_scores - pos_scores))
        return loss, reg_loss


def UniformSample(users, allPos, m_items, rng):
    S = []
    for user in users:
        posForUser = allPos[user]
        if len(posForUser) == 0:
            continue
        posindex = rng.randint(0, len(posForUser))
        positem = posForUser[posindex]
        while True:
            negitem = rng.randint(0, m_items)
            if negitem in posForUser:
                continue
            else:
                break
        S.append([user, positem, negitem])
    return np.array(S)


def main(argv=None):
    parser = argparse.ArgumentParser()
    parser.add_argument("--layers", type=int, default=3)
    parser.add_argument("--dropout", type=int, default=0)
    parser.add_argument("--epochs", type=int, default=10)
    parser.add_argument("--quiet", action="store_true")
    args = parser.parse_args(argv)
    log = (lambda *a: None) if args.quiet else print
    torch.manual_seed(2020)
    rng = np.random.RandomState(2020)
    n_users, m_items = 30, 40
    R = (rng.rand(n_users, m_items) < 0.12).astype(np.float32)
    UserItemNet = sp.csr_matrix(R)
    allPos = [UserItemNet[u].nonzero()[1] for u in range(n_users)]
    config = {'latent_dim_rec': 16, 'lightGCN_n_layers': args.layers, 'keep_prob': 0.6, 'dropout': args.dropout,
              'decay': 1e-4}
    model = LightGCN(config, n_users, m_items, UserItemNet)
    initial_state = {k: v.clone() for k, v in model.state_dict().items()}
    opt = torch.optim.Adam(model.parameters(), lr=0.01)
    step_losses = []
    for epoch in range(args.epochs):
        model.train()
        S = UniformSample(rng.randint(0, n_users, 48), allPos, m_items, rng)
        users = torch.Tensor(S[:, 0]).long()
        posItems = torch.Tensor(S[:, 1]).long()
        negItems = torch.Tensor(S[:, 2]).long()
        loss, reg_loss = model.bpr_loss(users, posItems, negItems)
        reg_loss = reg_loss * config['decay']
        loss = loss + reg_loss
        opt.zero_grad()
        loss.backward()
        opt.step()
        step_losses.append(loss.item())
        log(f"EPOCH[{epoch + 1}] loss{loss.item():.3f}")
    model.eval()
    with torch.no_grad():
        batch_users_gpu = torch.Tensor(list(range(10))).long()
        rating = model.getUsersRating(batch_users_gpu)
        exclude_index, exclude_items = [], []
        for range_i, items in enumerate(allPos[:10]):
            exclude_index.extend([range_i] * len(items))
            exclude_items.extend(items)
        rating[exclude_index, exclude_items] = -(1 << 10)
        _, rating_K = torch.topk(rating, k=5)
    graph = model.Graph
    return {"initial_state": initial_state, "step_losses": step_losses, "rating": rating, "rating_K": rating_K,
            "graph_values": graph.values(), "graph_indices": graph.indices(), "nnz": graph._nnz()}


if __name__ == "__main__":
    main()
