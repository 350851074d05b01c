"""Knowledge-graph embeddings as mklimasz/TransE-PyTorch (model.py TransE, data.py, main.py) and the OpenKE-style
TransH / DistMult variants write them: nn.Embedding weights initialised by .data.uniform_(-uniform_range,
uniform_range) with uniform_range = 6 / np.sqrt(dim), the relation rows normalised once with
.weight.data[:-1, :].div_(.weight.data[:-1, :].norm(p=1, dim=1, keepdim=True)), entity re-normalisation every
step, padding rows (num_embeddings=entity_count + 1, padding_idx=entity_count), torch.norm(heads + relations -
tails, p=self.norm, dim=1), nn.MarginRankingLoss(margin=..., reduction='none') against a target of -1, corrupted
triples by torch.randint / torch.where of a head-or-tail coin (torch.randint(high=2, size=...)), hit@k by
topk-free ranking (argsort of distances then (indices == target).nonzero()[:, 1] + 1), mean reciprocal rank,
SGD; TransH's projection by F.normalize(norm_vector) and (e * n).sum(-1, keepdim=True) * n; DistMult with the
softplus loss and an L2 regulariser, Adagrad."""
import argparse

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils import data as torch_data


class TransE(nn.Module):
    def __init__(self, entity_count, relation_count, device, norm=1, dim=16, margin=1.0):
        super(TransE, self).__init__()
        self.entity_count = entity_count
        self.relation_count = relation_count
        self.device = device
        self.norm = norm
        self.dim = dim
        self.entities_emb = self._init_enitity_emb()
        self.relations_emb = self._init_relation_emb()
        self.criterion = nn.MarginRankingLoss(margin=margin, reduction='none')

    def _init_enitity_emb(self):
        entities_emb = nn.Embedding(num_embeddings=self.entity_count + 1, embedding_dim=self.dim,
                                    padding_idx=self.entity_count)
        uniform_range = 6 / np.sqrt(self.dim)
        entities_emb.weight.data.uniform_(-uniform_range, uniform_range)
        return entities_emb

    def _init_relation_emb(self):
        relations_emb = nn.Embedding(num_embeddings=self.relation_count + 1, embedding_dim=self.dim,
                                     padding_idx=self.relation_count)
        uniform_range = 6 / np.sqrt(self.dim)
        relations_emb.weight.data.uniform_(-uniform_range, uniform_range)
        relations_emb.weight.data[:-1, :].div_(relations_emb.weight.data[:-1, :].norm(p=1, dim=1, keepdim=True))
        return relations_emb

    def forward(self, positive_triplets: torch.LongTensor, negative_triplets: torch.LongTensor):
        self.entities_emb.weight.data[:-1, :].div_(self.entities_emb.weight.data[:-1, :].norm(p=2, dim=1,
                                                                                               keepdim=True))
        assert positive_triplets.size()[1] == 3
        positive_distances = self._distance(positive_triplets)
        assert negative_triplets.size()[1] == 3
        negative_distances = self._distance(negative_triplets)
        return self.loss(positive_distances, negative_distances), positive_distances, negative_distances

    def predict(self, triplets: torch.LongTensor):
        return self._distance(triplets)

    def loss(self, positive_distances, negative_distances):
        target = torch.tensor([-1], dtype=torch.long, device=self.device)
        return self.criterion(positive_distances, negative_distances, target)

    def _distance(self, triplets):
        assert triplets.size()[1] == 3
        heads = triplets[:, 0]
        relations = triplets[:, 1]
        tails = triplets[:, 2]
        return (self.entities_emb(heads) + self.relations_emb(relations) - self.entities_emb(tails)).norm(
            p=self.norm, dim=1)


class TransH(nn.Module):
    def __init__(self, ent_tot, rel_tot, dim=16, p_norm=1, margin=1.0):
        super(TransH, self).__init__()
        self.ent_embeddings = nn.Embedding(ent_tot, dim)
        self.rel_embeddings = nn.Embedding(rel_tot, dim)
        self.norm_vector = nn.Embedding(rel_tot, dim)
        self.p_norm = p_norm
        nn.init.xavier_uniform_(self.ent_embeddings.weight.data)
        nn.init.xavier_uniform_(self.rel_embeddings.weight.data)
        nn.init.xavier_uniform_(self.norm_vector.weight.data)
        self.margin = nn.Parameter(torch.Tensor([margin]))
        self.margin.requires_grad = False

    def _transfer(self, e, norm):
        norm = F.normalize(norm, p=2, dim=-1)
        return e - torch.sum(e * norm, -1, True) * norm

    def _calc(self, h, t, r):
        h = F.normalize(h, 2, -1)
        r = F.normalize(r, 2, -1)
        t = F.normalize(t, 2, -1)
        score = h + (r - t)
        return torch.norm(score, self.p_norm, -1).flatten()

    def predict(self, triplets):
        h = self.ent_embeddings(triplets[:, 0])
        t = self.ent_embeddings(triplets[:, 2])
        r = self.rel_embeddings(triplets[:, 1])
        r_norm = self.norm_vector(triplets[:, 1])
        return self._calc(self._transfer(h, r_norm), self._transfer(t, r_norm), r)

    def forward(self, pos, neg):
        p_score, n_score = self.predict(pos), self.predict(neg)
        return (torch.max(p_score - n_score, -self.margin)).mean() + self.margin, p_score, n_score


class DistMult(nn.Module):
    def __init__(self, ent_tot, rel_tot, dim=16, lmbda=0.01):
        super(DistMult, self).__init__()
        self.ent_embeddings = nn.Embedding(ent_tot, dim)
        self.rel_embeddings = nn.Embedding(rel_tot, dim)
        nn.init.xavier_uniform_(self.ent_embeddings.weight.data)
        nn.init.xavier_uniform_(self.rel_embeddings.weight.data)
        self.lmbda = lmbda

    def predict(self, triplets):
        h = self.ent_embeddings(triplets[:, 0])
        t = self.ent_embeddings(triplets[:, 2])
        r = self.rel_embeddings(triplets[:, 1])
        return -torch.sum(h * r * t, -1).flatten()

    def regularization(self, triplets):
        h = self.ent_embeddings(triplets[:, 0])
        t = self.ent_embeddings(triplets[:, 2])
        r = self.rel_embeddings(triplets[:, 1])
        return (torch.mean(h ** 2) + torch.mean(t ** 2) + torch.mean(r ** 2)) / 3

    def forward(self, pos, neg):
        p_score, n_score = self.predict(pos), self.predict(neg)
        loss = (F.softplus(p_score).mean() + F.softplus(-n_score).mean()) / 2
        return loss + self.lmbda * self.regularization(torch.cat([pos, neg])), p_score, n_score


class FB15KDataset(torch_data.Dataset):
    def __init__(self, triples):
        self.data = triples

    def __len__(self):
        return len(self.data)

    def __getitem__(self, index):
        head, relation, tail = self.data[index]
        return head, relation, tail


def hit_at_k(predictions: torch.Tensor, ground_truth_idx: torch.Tensor, device, k: int = 10) -> int:
    assert predictions.size(0) == ground_truth_idx.size(0)
    zero_tensor = torch.tensor([0], device=device)
    one_tensor = torch.tensor([1], device=device)
    _, indices = predictions.topk(k=k, largest=False)
    return torch.where(indices == ground_truth_idx, one_tensor, zero_tensor).sum().item()


def mrr(predictions: torch.Tensor, ground_truth_idx: torch.Tensor) -> float:
    indices = predictions.argsort()
    return (1.0 / (indices == ground_truth_idx).nonzero()[:, 1].float().add(1.0)).sum().item()


def main(argv=None):
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", default="transe")
    parser.add_argument("--norm", type=int, default=1)
    parser.add_argument("--epochs", type=int, default=4)
    parser.add_argument("--quiet", action="store_true")
    args = parser.parse_args(argv)
    log = (lambda *a: None) if args.quiet else print
    torch.random.manual_seed(1234)
    rng = np.random.RandomState(0)
    n_ent, n_rel = 30, 4
    triples = [(int(h), int(r), int((h + 3 * r + 1) % n_ent)) for h, r in zip(rng.randint(0, n_ent, 120),
                                                                               rng.randint(0, n_rel, 120))]
    device = torch.device('cpu')
    if args.model == "transe":
        model = TransE(entity_count=n_ent, relation_count=n_rel, dim=16, margin=1.0, device=device, norm=args.norm)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    elif args.model == "transh":
        model = TransH(n_ent, n_rel, p_norm=args.norm)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    else:
        model = DistMult(n_ent, n_rel)
        optimizer = torch.optim.Adagrad(model.parameters(), lr=0.1)
    initial_state = {k: v.clone() for k, v in model.state_dict().items()}
    train_generator = torch_data.DataLoader(FB15KDataset(triples), batch_size=24, shuffle=True)
    step_losses = []
    for epoch_id in range(args.epochs):
        model.train()
        for local_heads, local_relations, local_tails in train_generator:
            local_heads, local_relations, local_tails = (local_heads.to(device), local_relations.to(device),
                                                         local_tails.to(device))
            positive_triples = torch.stack((local_heads, local_relations, local_tails), dim=1)
            head_or_tail = torch.randint(high=2, size=local_heads.size(), device=device)
            random_entities = torch.randint(high=n_ent, size=local_heads.size(), device=device)
            broken_heads = torch.where(head_or_tail == 1, random_entities, local_heads)
            broken_tails = torch.where(head_or_tail == 0, random_entities, local_tails)
            negative_triples = torch.stack((broken_heads, local_relations, broken_tails), dim=1)
            optimizer.zero_grad()
            loss, pd, nd = model(positive_triples, negative_triples)
            loss.mean().backward()
            optimizer.step()
            step_losses.append(loss.mean().item())
        log(epoch_id, step_losses[-1])
    model.eval()
    with torch.no_grad():
        test = torch.tensor(triples[:20])
        heads, relations, tails = test[:, 0], test[:, 1], test[:, 2]
        entity_ids = torch.arange(end=n_ent, device=device).unsqueeze(0)
        all_entities = entity_ids.repeat(test.size(0), 1)
        heads_r = heads.reshape(-1, 1).repeat(1, all_entities.size()[1])
        relations_r = relations.reshape(-1, 1).repeat(1, all_entities.size()[1])
        tails_r = tails.reshape(-1, 1).repeat(1, all_entities.size()[1])
        triplets = torch.stack((heads_r, relations_r, all_entities), dim=2).reshape(-1, 3)
        tails_predictions = model.predict(triplets).reshape(test.size(0), -1)
        ground_truth_entity_id = tails.reshape(-1, 1)
        hits1 = hit_at_k(tails_predictions, ground_truth_entity_id, device=device, k=1)
        hits10 = hit_at_k(tails_predictions, ground_truth_entity_id, device=device, k=10)
        mrr_score = mrr(tails_predictions, ground_truth_entity_id)
    return {"initial_state": initial_state, "step_losses": step_losses, "hits": [hits1, hits10],
            "mrr": mrr_score, "predictions": tails_predictions}


if __name__ == "__main__":
    main()
