"""AMLab-Amsterdam/AttentionDeepMIL as written: MnistBags-style bags (bag lengths from np.random.normal, a bag label
that is 1 when the target digit is present, labels_in_bag), the Attention and GatedAttention models (the LeNet-like
feature_extractor_part1 / part2, H.view(-1, 50 * 4 * 4), A = self.attention(H), torch.transpose(A, 1, 0),
F.softmax(A, dim=1), M = torch.mm(A, H), Y_prob by a sigmoid classifier, Y_hat = torch.ge(Y_prob, 0.5).float(), the
gated form's attention_V(H) * attention_U(H)), calculate_classification_error (1. - Y_hat.eq(Y).cpu().float().mean()
.data.item()) and calculate_objective (torch.clamp(Y_prob, min=1e-5, max=1. - 1e-5) and the hand-written Bernoulli
negative log-likelihood), main.py's train / test loops (Variable(data), bag_label = label[0], Adam with
betas=(0.9, 0.999) and weight_decay, train_loss += loss.data[0] written as loss.item()) and the attention weights
returned for the test bags."""
import argparse

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim
from torch.autograd import Variable


class Attention(nn.Module):
    def __init__(self):
        super(Attention, self).__init__()
        self.L = 50
        self.D = 16
        self.K = 1
        self.feature_extractor_part1 = nn.Sequential(
            nn.Conv2d(1, 8, kernel_size=5), nn.ReLU(), nn.MaxPool2d(2, stride=2),
            nn.Conv2d(8, 10, kernel_size=5), nn.ReLU(), nn.MaxPool2d(2, stride=2))
        self.feature_extractor_part2 = nn.Sequential(nn.Linear(10 * 4 * 4, self.L), nn.ReLU())
        self.attention = nn.Sequential(nn.Linear(self.L, self.D), nn.Tanh(), nn.Linear(self.D, self.K))
        self.classifier = nn.Sequential(nn.Linear(self.L * self.K, 1), nn.Sigmoid())

    def forward(self, x):
        x = x.squeeze(0)
        H = self.feature_extractor_part1(x)
        H = H.view(-1, 10 * 4 * 4)
        H = self.feature_extractor_part2(H)
        A = self.attention(H)
        A = torch.transpose(A, 1, 0)
        A = F.softmax(A, dim=1)
        M = torch.mm(A, H)
        Y_prob = self.classifier(M)
        Y_hat = torch.ge(Y_prob, 0.5).float()
        return Y_prob, Y_hat, A

    def calculate_classification_error(self, X, Y):
        Y = Y.float()
        _, Y_hat, _ = self.forward(X)
        error = 1. - Y_hat.eq(Y).cpu().float().mean().data.item()
        return error, Y_hat

    def calculate_objective(self, X, Y):
        Y = Y.float()
        Y_prob, _, A = self.forward(X)
        Y_prob = torch.clamp(Y_prob, min=1e-5, max=1. - 1e-5)
        neg_log_likelihood = -1. * (Y * torch.log(Y_prob) + (1. - Y) * torch.log(1. - Y_prob))
        return neg_log_likelihood, A


class GatedAttention(Attention):
    def __init__(self):
        super(GatedAttention, self).__init__()
        self.attention_V = nn.Sequential(nn.Linear(self.L, self.D), nn.Tanh())
        self.attention_U = nn.Sequential(nn.Linear(self.L, self.D), nn.Sigmoid())
        self.attention_weights = nn.Linear(self.D, self.K)
        del self.attention

    def forward(self, x):
        x = x.squeeze(0)
        H = self.feature_extractor_part1(x)
        H = H.view(-1, 10 * 4 * 4)
        H = self.feature_extractor_part2(H)
        A_V = self.attention_V(H)
        A_U = self.attention_U(H)
        A = self.attention_weights(A_V * A_U)
        A = torch.transpose(A, 1, 0)
        A = F.softmax(A, dim=1)
        M = torch.mm(A, H)
        Y_prob = self.classifier(M)
        Y_hat = torch.ge(Y_prob, 0.5).float()
        return Y_prob, Y_hat, A


def make_bags(n_bags, target_number, mean_bag_length, var_bag_length, r):
    digits = torch.randint(0, 10, (400,))
    images = torch.rand(400, 1, 28, 28) * 0.3 + digits.view(-1, 1, 1, 1).float() / 10
    bags = []
    for i in range(n_bags):
        bag_length = int(r.normal(mean_bag_length, var_bag_length, 1))
        if bag_length < 1:
            bag_length = 1
        indices = torch.LongTensor(r.randint(0, 400, bag_length))
        labels_in_bag = digits[indices]
        labels_in_bag = labels_in_bag == target_number
        bags.append((images[indices].unsqueeze(0), [max(labels_in_bag), labels_in_bag]))
    return bags


def main(argv=None):
    parser = argparse.ArgumentParser()
    parser.add_argument('--epochs', type=int, default=2)
    parser.add_argument('--lr', type=float, default=0.0005)
    parser.add_argument('--reg', type=float, default=10e-5)
    parser.add_argument('--target_number', type=int, default=9)
    parser.add_argument('--mean_bag_length', type=int, default=6)
    parser.add_argument('--var_bag_length', type=int, default=2)
    parser.add_argument('--num_bags_train', type=int, default=8)
    parser.add_argument('--model', type=str, default='attention')
    parser.add_argument("--quiet", action="store_true")
    args = parser.parse_args(argv)
    log = (lambda *a: None) if args.quiet else print
    torch.manual_seed(1)
    r = np.random.RandomState(1)
    train_loader = make_bags(args.num_bags_train, args.target_number, args.mean_bag_length, args.var_bag_length, r)
    test_loader = make_bags(4, args.target_number, args.mean_bag_length, args.var_bag_length, r)
    model = Attention() if args.model == 'attention' else GatedAttention()
    initial_state = {k: v.clone() for k, v in model.state_dict().items()}
    optimizer = optim.Adam(model.parameters(), lr=args.lr, betas=(0.9, 0.999), weight_decay=args.reg)
    step_losses, epoch_errors = [], []
    for epoch in range(1, args.epochs + 1):
        model.train()
        train_loss = 0.
        train_error = 0.
        for batch_idx, (data, label) in enumerate(train_loader):
            bag_label = label[0]
            data, bag_label = Variable(data), Variable(bag_label)
            optimizer.zero_grad()
            loss, _ = model.calculate_objective(data, bag_label)
            train_loss += loss.item()
            error, _ = model.calculate_classification_error(data, bag_label)
            train_error += error
            loss.backward()
            optimizer.step()
            step_losses.append(loss.item())
        train_loss /= len(train_loader)
        train_error /= len(train_loader)
        epoch_errors.append(train_error)
        log('Epoch: {}, Loss: {:.4f}, Train error: {:.4f}'.format(epoch, train_loss, train_error))
    model.eval()
    attention_weights, preds = [], []
    for batch_idx, (data, label) in enumerate(test_loader):
        bag_label = label[0]
        instance_labels = label[1]
        loss, attention_weights_ = model.calculate_objective(data, bag_label)
        error, predicted_label = model.calculate_classification_error(data, bag_label)
        attention_weights.append(attention_weights_.detach().squeeze(0))
        preds.append(int(predicted_label.cpu().data.numpy()[0][0]))
    return {"initial_state": initial_state, "step_losses": step_losses, "errors": epoch_errors,
            "attention": torch.cat(attention_weights), "preds": preds}


if __name__ == "__main__":
    main()
