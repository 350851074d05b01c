"""vlukiyanov/pt-dec's Deep Embedded Clustering as written: ClusterAssignment (Student's t kernel
1 / (1 + sum((batch.unsqueeze(1) - cluster_centers) ** 2, 2) / alpha), ** (alpha + 1) / 2, row-normalised, with
cluster centers a Parameter initialised by nn.init.xavier_uniform_), target_distribution ((batch ** 2) /
torch.sum(batch, 0), transposed row normalisation), the KLDivLoss(size_average=False)(output.log(), target) /
output.shape[0] objective, the stacked autoencoder pretraining (ptsdae-style Linear + ReLU encoder / decoder with
MSE and SGD), cluster centers initialised from a k-means of the embeddings (k-means++ seeding and Lloyd steps written
with torch.cdist / argmin / index_add_, as the repo's sklearn KMeans does) copied in with torch.no_grad(), the
delta_label stopping test, and cluster_accuracy by the Hungarian method (scipy.optimize.linear_sum_assignment)."""
import argparse

import numpy as np
import torch
import torch.nn as nn
from scipy.optimize import linear_sum_assignment


class ClusterAssignment(nn.Module):
    def __init__(self, cluster_number, embedding_dimension, alpha=1.0, cluster_centers=None):
        super(ClusterAssignment, self).__init__()
        self.embedding_dimension = embedding_dimension
        self.cluster_number = cluster_number
        self.alpha = alpha
        if cluster_centers is None:
            initial_cluster_centers = torch.zeros(self.cluster_number, self.embedding_dimension, dtype=torch.float)
            nn.init.xavier_uniform_(initial_cluster_centers)
        else:
            initial_cluster_centers = cluster_centers
        self.cluster_centers = nn.Parameter(initial_cluster_centers)

    def forward(self, batch):
        norm_squared = torch.sum((batch.unsqueeze(1) - self.cluster_centers) ** 2, 2)
        numerator = 1.0 / (1.0 + (norm_squared / self.alpha))
        power = float(self.alpha + 1) / 2
        numerator = numerator ** power
        return numerator / torch.sum(numerator, dim=1, keepdim=True)


class DEC(nn.Module):
    def __init__(self, cluster_number, hidden_dimension, encoder, alpha=1.0):
        super(DEC, self).__init__()
        self.encoder = encoder
        self.hidden_dimension = hidden_dimension
        self.cluster_number = cluster_number
        self.alpha = alpha
        self.assignment = ClusterAssignment(cluster_number, self.hidden_dimension, alpha)

    def forward(self, batch):
        return self.assignment(self.encoder(batch))


def target_distribution(batch):
    weight = (batch ** 2) / torch.sum(batch, 0)
    return (weight.t() / torch.sum(weight, 1)).t()


def kmeans(x, k, n_iter, generator):
    """k-means++ seeding and Lloyd iterations (sklearn's KMeans, which the repo calls)."""
    n = x.shape[0]
    centers = [x[torch.randint(0, n, (1,), generator=generator)]]
    for _ in range(1, k):
        d = torch.cdist(x, torch.cat(centers)).min(1)[0] ** 2
        idx = torch.multinomial(d / d.sum(), 1, generator=generator)
        centers.append(x[idx])
    centers = torch.cat(centers)
    for _ in range(n_iter):
        labels = torch.cdist(x, centers).argmin(1)
        sums = torch.zeros_like(centers).index_add_(0, labels, x)
        counts = torch.bincount(labels, minlength=k).clamp(min=1).unsqueeze(1).to(x.dtype)
        centers = sums / counts
    return centers, torch.cdist(x, centers).argmin(1)


def cluster_accuracy(y_true, y_predicted, cluster_number=None):
    if cluster_number is None:
        cluster_number = max(y_predicted.max(), y_true.max()) + 1
    count_matrix = np.zeros((cluster_number, cluster_number), dtype=np.int64)
    for i in range(y_predicted.size):
        count_matrix[y_predicted[i], y_true[i]] += 1
    row_ind, col_ind = linear_sum_assignment(count_matrix.max() - count_matrix)
    reassignment = dict(zip(row_ind, col_ind))
    accuracy = count_matrix[row_ind, col_ind].sum() / y_predicted.size
    return reassignment, accuracy


def main(argv=None):
    parser = argparse.ArgumentParser()
    parser.add_argument("--pretrain_steps", type=int, default=20)
    parser.add_argument("--steps", type=int, default=12)
    parser.add_argument("--alpha", type=float, default=1.0)
    parser.add_argument("--quiet", action="store_true")
    args = parser.parse_args(argv)
    log = (lambda *a: None) if args.quiet else print
    torch.manual_seed(0)
    k, dim, hidden = 4, 12, 3
    means = torch.randn(k, dim) * 3
    y = torch.randint(0, k, (160,))
    x = means[y] + torch.randn(160, dim)
    encoder = nn.Sequential(nn.Linear(dim, 16), nn.ReLU(), nn.Linear(16, hidden))
    decoder = nn.Sequential(nn.Linear(hidden, 16), nn.ReLU(), nn.Linear(16, dim))
    model = DEC(cluster_number=k, hidden_dimension=hidden, encoder=encoder, alpha=args.alpha)
    initial_state = {k_: v.clone() for k_, v in model.state_dict().items()}
    initial_state.update({"decoder." + k_: v.clone() for k_, v in decoder.state_dict().items()})
    ae_opt = torch.optim.SGD(list(encoder.parameters()) + list(decoder.parameters()), lr=0.05, momentum=0.9)
    step_losses = []
    for step in range(args.pretrain_steps):
        batch = x[(step * 32) % 160:(step * 32) % 160 + 32]
        loss = nn.functional.mse_loss(decoder(encoder(batch)), batch)
        ae_opt.zero_grad()
        loss.backward()
        ae_opt.step()
        step_losses.append(loss.item())
    with torch.no_grad():
        features = encoder(x)
    g = torch.Generator().manual_seed(42)
    centers, predicted = kmeans(features, k, 10, g)
    predicted_previous = predicted.clone()
    with torch.no_grad():
        model.assignment.cluster_centers.copy_(centers)
    loss_function = nn.KLDivLoss(size_average=False)
    optimizer = torch.optim.SGD(params=model.parameters(), lr=0.01, momentum=0.9)
    deltas = []
    for step in range(args.steps):
        batch = x[(step * 40) % 160:(step * 40) % 160 + 40]
        output = model(batch)
        target = target_distribution(output).detach()
        loss = loss_function(output.log(), target) / output.shape[0]
        optimizer.zero_grad()
        loss.backward()
        optimizer.step(closure=None)
        step_losses.append(float(loss.item()))
        with torch.no_grad():
            predicted = model(x).max(1)[1]
        delta_label = float((predicted != predicted_previous).float().sum().item()) / predicted_previous.shape[0]
        predicted_previous = predicted
        deltas.append(delta_label)
        log(f"step {step} loss {loss.item():.5f} delta {delta_label:.3f}")
    _, accuracy = cluster_accuracy(y.numpy(), predicted.numpy())
    return {"initial_state": initial_state, "step_losses": step_losses, "deltas": deltas, "accuracy": accuracy,
            "centers": model.assignment.cluster_centers.detach().clone(), "kmeans_centers": centers}


if __name__ == "__main__":
    main()
