"""adambielski/siamese-triplet: networks.py (EmbeddingNet with Conv2d / PReLU / MaxPool2d and a PReLU
fully connected head, EmbeddingNetL2 dividing by output.pow(2).sum(1, keepdim=True).sqrt(),
SiameseNet, TripletNet), losses.py (ContrastiveLoss with (output2 - output1).pow(2).sum(1) and
F.relu(margin - (distances + eps).sqrt()).pow(2), TripletLoss with F.relu(distance_positive -
distance_negative + margin), OnlineContrastiveLoss and OnlineTripletLoss over selector outputs),
utils.py (pdist by -2 * vectors.mm(torch.t(vectors)) + vectors.pow(2).sum(dim=1).view(1, -1) +
vectors.pow(2).sum(dim=1).view(-1, 1), HardNegativePairSelector, FunctionNegativeTripletSelector with
hardest_negative / random_hard_negative / semihard_negative through np.where and itertools.combinations,
all on .cpu().data.numpy()), datasets.py's BalancedBatchSampler (labels_set, np.random.shuffle,
used_label_indices_count), trainer.py's fit (Adam + StepLR(8, gamma=0.1, last_epoch=-1), the loss
returned as a tuple), and nn.TripletMarginLoss / TripletMarginWithDistanceLoss for comparison.
MNIST is replaced by random 28x28 digits with class strokes."""
import argparse
from itertools import combinations

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.optim import lr_scheduler
import torch.optim as optim
from torch.utils.data.sampler import BatchSampler


class EmbeddingNet(nn.Module):
    def __init__(self):
        super(EmbeddingNet, self).__init__()
        self.convnet = nn.Sequential(nn.Conv2d(1, 8, 5), nn.PReLU(),
                                     nn.MaxPool2d(2, stride=2),
                                     nn.Conv2d(8, 16, 5), nn.PReLU(),
                                     nn.MaxPool2d(2, stride=2))

        self.fc = nn.Sequential(nn.Linear(16 * 4 * 4, 64),
                                nn.PReLU(),
                                nn.Linear(64, 64),
                                nn.PReLU(),
                                nn.Linear(64, 2)
                                )

    def forward(self, x):
        output = self.convnet(x)
        output = output.view(output.size()[0], -1)
        output = self.fc(output)
        return output

    def get_embedding(self, x):
        return self.forward(x)


class EmbeddingNetL2(EmbeddingNet):
    def __init__(self):
        super(EmbeddingNetL2, self).__init__()

    def forward(self, x):
        output = super(EmbeddingNetL2, self).forward(x)
        output /= output.pow(2).sum(1, keepdim=True).sqrt()
        return output

    def get_embedding(self, x):
        return self.forward(x)


class TripletNet(nn.Module):
    def __init__(self, embedding_net):
        super(TripletNet, self).__init__()
        self.embedding_net = embedding_net

    def forward(self, x1, x2, x3):
        output1 = self.embedding_net(x1)
        output2 = self.embedding_net(x2)
        output3 = self.embedding_net(x3)
        return output1, output2, output3

    def get_embedding(self, x):
        return self.embedding_net(x)


class ContrastiveLoss(nn.Module):
    def __init__(self, margin):
        super(ContrastiveLoss, self).__init__()
        self.margin = margin
        self.eps = 1e-9

    def forward(self, output1, output2, target, size_average=True):
        distances = (output2 - output1).pow(2).sum(1)  # squared distances
        losses = 0.5 * (target.float() * distances +
                        (1 + -1 * target).float() * F.relu(self.margin - (distances + self.eps).sqrt()).pow(2))
        return losses.mean() if size_average else losses.sum()


class TripletLoss(nn.Module):
    def __init__(self, margin):
        super(TripletLoss, self).__init__()
        self.margin = margin

    def forward(self, anchor, positive, negative, size_average=True):
        distance_positive = (anchor - positive).pow(2).sum(1)  # .pow(.5)
        distance_negative = (anchor - negative).pow(2).sum(1)  # .pow(.5)
        losses = F.relu(distance_positive - distance_negative + self.margin)
        return losses.mean() if size_average else losses.sum()


class OnlineContrastiveLoss(nn.Module):
    def __init__(self, margin, pair_selector):
        super(OnlineContrastiveLoss, self).__init__()
        self.margin = margin
        self.pair_selector = pair_selector

    def forward(self, embeddings, target):
        positive_pairs, negative_pairs = self.pair_selector.get_pairs(embeddings, target)
        positive_loss = (embeddings[positive_pairs[:, 0]] - embeddings[positive_pairs[:, 1]]).pow(2).sum(1)
        negative_loss = F.relu(
            self.margin - (embeddings[negative_pairs[:, 0]] - embeddings[negative_pairs[:, 1]]).pow(2).sum(
                1).sqrt()).pow(2)
        loss = torch.cat([positive_loss, negative_loss], dim=0)
        return loss.mean()


class OnlineTripletLoss(nn.Module):
    def __init__(self, margin, triplet_selector):
        super(OnlineTripletLoss, self).__init__()
        self.margin = margin
        self.triplet_selector = triplet_selector

    def forward(self, embeddings, target):
        triplets = self.triplet_selector.get_triplets(embeddings, target)

        ap_distances = (embeddings[triplets[:, 0]] - embeddings[triplets[:, 1]]).pow(2).sum(1)  # .pow(.5)
        an_distances = (embeddings[triplets[:, 0]] - embeddings[triplets[:, 2]]).pow(2).sum(1)
        losses = F.relu(ap_distances - an_distances + self.margin)

        return losses.mean(), len(triplets)


def pdist(vectors):
    distance_matrix = -2 * vectors.mm(torch.t(vectors)) + vectors.pow(2).sum(dim=1).view(1, -1) + vectors.pow(2).sum(
        dim=1).view(-1, 1)
    return distance_matrix


class HardNegativePairSelector:
    def __init__(self, cpu=True):
        self.cpu = cpu

    def get_pairs(self, embeddings, labels):
        if self.cpu:
            embeddings = embeddings.cpu()
        distance_matrix = pdist(embeddings)

        labels = labels.cpu().data.numpy()
        all_pairs = np.array(list(combinations(range(len(labels)), 2)))
        all_pairs = torch.LongTensor(all_pairs)
        positive_pairs = all_pairs[(labels[all_pairs[:, 0]] == labels[all_pairs[:, 1]]).nonzero()]
        negative_pairs = all_pairs[(labels[all_pairs[:, 0]] != labels[all_pairs[:, 1]]).nonzero()]

        negative_distances = distance_matrix[negative_pairs[:, 0], negative_pairs[:, 1]]
        negative_distances = negative_distances.cpu().data.numpy()
        top_negatives = np.argpartition(negative_distances, len(positive_pairs))[:len(positive_pairs)]
        top_negative_pairs = negative_pairs[torch.LongTensor(top_negatives)]

        return positive_pairs, top_negative_pairs


def hardest_negative(loss_values):
    hard_negative = np.argmax(loss_values)
    return hard_negative if loss_values[hard_negative] > 0 else None


def random_hard_negative(loss_values):
    hard_negatives = np.where(loss_values > 0)[0]
    return np.random.choice(hard_negatives) if len(hard_negatives) > 0 else None


def semihard_negative(loss_values, margin):
    semihard_negatives = np.where(np.logical_and(loss_values < margin, loss_values > 0))[0]
    return np.random.choice(semihard_negatives) if len(semihard_negatives) > 0 else None


class FunctionNegativeTripletSelector:
    def __init__(self, margin, negative_selection_fn, cpu=True):
        super(FunctionNegativeTripletSelector, self).__init__()
        self.cpu = cpu
        self.margin = margin
        self.negative_selection_fn = negative_selection_fn

    def get_triplets(self, embeddings, labels):
        if self.cpu:
            embeddings = embeddings.cpu()
        distance_matrix = pdist(embeddings)
        distance_matrix = distance_matrix.cpu()

        labels = labels.cpu().data.numpy()
        triplets = []

        for label in set(labels):
            label_mask = (labels == label)
            label_indices = np.where(label_mask)[0]
            if len(label_indices) < 2:
                continue
            negative_indices = np.where(np.logical_not(label_mask))[0]
            anchor_positives = list(combinations(label_indices, 2))  # All anchor-positive pairs
            anchor_positives = np.array(anchor_positives)

            ap_distances = distance_matrix[anchor_positives[:, 0], anchor_positives[:, 1]]
            for anchor_positive, ap_distance in zip(anchor_positives, ap_distances):
                loss_values = ap_distance - distance_matrix[
                    torch.LongTensor(np.array([anchor_positive[0]])), torch.LongTensor(negative_indices)] + self.margin
                loss_values = loss_values.data.cpu().numpy()
                hard_negative = self.negative_selection_fn(loss_values)
                if hard_negative is not None:
                    hard_negative = negative_indices[hard_negative]
                    triplets.append([anchor_positive[0], anchor_positive[1], hard_negative])

        if len(triplets) == 0:
            triplets.append([anchor_positive[0], anchor_positive[1], negative_indices[0]])

        triplets = np.array(triplets)

        return torch.LongTensor(triplets)


def HardestNegativeTripletSelector(margin, cpu=False):
    return FunctionNegativeTripletSelector(margin=margin, negative_selection_fn=hardest_negative, cpu=cpu)


def RandomNegativeTripletSelector(margin, cpu=False):
    return FunctionNegativeTripletSelector(margin=margin, negative_selection_fn=random_hard_negative, cpu=cpu)


def SemihardNegativeTripletSelector(margin, cpu=False):
    return FunctionNegativeTripletSelector(margin=margin,
                                           negative_selection_fn=lambda x: semihard_negative(x, margin), cpu=cpu)


class BalancedBatchSampler(BatchSampler):
    def __init__(self, labels, n_classes, n_samples):
        self.labels = labels
        self.labels_set = list(set(self.labels.numpy()))
        self.label_to_indices = {label: np.where(self.labels.numpy() == label)[0]
                                 for label in self.labels_set}
        for l in self.labels_set:
            np.random.shuffle(self.label_to_indices[l])
        self.used_label_indices_count = {label: 0 for label in self.labels_set}
        self.count = 0
        self.n_classes = n_classes
        self.n_samples = n_samples
        self.n_dataset = len(self.labels)
        self.batch_size = self.n_samples * self.n_classes

    def __iter__(self):
        self.count = 0
        while self.count + self.batch_size < self.n_dataset:
            classes = np.random.choice(self.labels_set, self.n_classes, replace=False)
            indices = []
            for class_ in classes:
                indices.extend(self.label_to_indices[class_][
                               self.used_label_indices_count[class_]:self.used_label_indices_count[
                                                                         class_] + self.n_samples])
                self.used_label_indices_count[class_] += self.n_samples
                if self.used_label_indices_count[class_] + self.n_samples > len(self.label_to_indices[class_]):
                    np.random.shuffle(self.label_to_indices[class_])
                    self.used_label_indices_count[class_] = 0
            yield indices
            self.count += self.n_classes * self.n_samples

    def __len__(self):
        return self.n_dataset // self.batch_size


class TripletDataset(torch.utils.data.Dataset):
    """datasets.py's TripletMNIST (train mode): a random positive and a random negative per anchor."""

    def __init__(self, data, labels):
        self.data, self.labels = data, labels
        self.labels_set = set(labels.numpy())
        self.label_to_indices = {label: np.where(labels.numpy() == label)[0] for label in self.labels_set}

    def __getitem__(self, index):
        img1, label1 = self.data[index], self.labels[index].item()
        positive_index = index
        while positive_index == index:
            positive_index = np.random.choice(self.label_to_indices[label1])
        negative_label = np.random.choice(list(self.labels_set - set([label1])))
        negative_index = np.random.choice(self.label_to_indices[negative_label])
        return (img1, self.data[positive_index], self.data[negative_index]), []

    def __len__(self):
        return len(self.data)


def fit(train_loader, model, loss_fn, optimizer, scheduler, n_epochs, online, step_losses):
    for epoch in range(0, n_epochs):
        model.train()
        for batch_idx, (data, target) in enumerate(train_loader):
            target = target if len(target) > 0 else None
            if not type(data) in (tuple, list):
                data = (data,)
            optimizer.zero_grad()
            outputs = model(*data)
            if type(outputs) not in (tuple, list):
                outputs = (outputs,)
            loss_inputs = outputs
            if target is not None:
                target = (target,)
                loss_inputs += target
            loss_outputs = loss_fn(*loss_inputs)
            loss = loss_outputs[0] if type(loss_outputs) in (tuple, list) else loss_outputs
            loss.backward()
            optimizer.step()
            step_losses.append(loss.item())
        scheduler.step()


def main(argv=None):
    p = argparse.ArgumentParser()
    p.add_argument('--mode', default='online_triplet',
                   choices=['triplet', 'online_triplet', 'online_contrastive', 'margin_loss', 'distance_loss'])
    p.add_argument('--selector', default='hardest', choices=['hardest', 'random', 'semihard'])
    p.add_argument('--l2', action='store_true')
    p.add_argument('--epochs', type=int, default=2)
    p.add_argument('--quiet', action='store_true')
    args = p.parse_args(argv)

    np.random.seed(0)
    torch.manual_seed(0)
    rng = np.random.RandomState(0)
    n = 160
    labels = rng.randint(0, 5, size=n)
    data = rng.rand(n, 1, 28, 28).astype(np.float32) * 0.3
    for i, c in enumerate(labels):
        data[i, 0, 4 + 4 * c:7 + 4 * c, 4:24] = 1
    data, labels = torch.from_numpy(data), torch.from_numpy(labels)

    embedding_net = EmbeddingNetL2() if args.l2 else EmbeddingNet()
    margin = 1.
    if args.mode in ('online_triplet', 'online_contrastive'):
        sampler = BalancedBatchSampler(labels, n_classes=4, n_samples=5)
        loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(data, labels), batch_sampler=sampler)
        model = embedding_net
        if args.mode == 'online_triplet':
            sel = {'hardest': HardestNegativeTripletSelector, 'random': RandomNegativeTripletSelector,
                   'semihard': SemihardNegativeTripletSelector}[args.selector](margin)
            loss_fn = OnlineTripletLoss(margin, sel)
        else:
            loss_fn = OnlineContrastiveLoss(margin, HardNegativePairSelector())
    else:
        loader = torch.utils.data.DataLoader(TripletDataset(data, labels), batch_size=16, shuffle=True)
        model = TripletNet(embedding_net)
        if args.mode == 'triplet':
            loss_fn = TripletLoss(margin)
        elif args.mode == 'margin_loss':
            loss_fn = nn.TripletMarginLoss(margin=margin, p=2, swap=True)
        else:
            loss_fn = nn.TripletMarginWithDistanceLoss(
                distance_function=lambda x, y: 1.0 - F.cosine_similarity(x, y), margin=0.5)
    initial_state = {k: v.clone() for k, v in model.state_dict().items()}
    optimizer = optim.Adam(model.parameters(), lr=1e-3)
    scheduler = lr_scheduler.StepLR(optimizer, 8, gamma=0.1, last_epoch=-1)
    step_losses = []
    fit(loader, model, loss_fn, optimizer, scheduler, args.epochs, args.mode.startswith('online'), step_losses)
    with torch.no_grad():
        model.eval()
        emb = embedding_net.get_embedding(data[:32])
    return {"initial_state": initial_state, "step_losses": step_losses, "emb": emb,
            "final_state": model.state_dict()}


if __name__ == '__main__':
    main()
