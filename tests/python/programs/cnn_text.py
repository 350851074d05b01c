"""Two text CNNs. Shawn1993/cnn-text-classification-pytorch (model.py's CNN_Text: nn.Embedding, a
ModuleList of Conv2d(Ci, Co, (K, D)), x.unsqueeze(1), [F.relu(conv(x)).squeeze(3) for conv in convs1],
[F.max_pool1d(i, i.size(2)).squeeze(2) for i in x], torch.cat, dropout, Linear; static embeddings via
Variable(x) with requires_grad False on the embedding weight; train.py's loop with F.cross_entropy,
torch.max(logit, 1)[1].view(target.size()).data == target.data accuracy, eval with size_average=False,
and predict's softmax) and ahmedbesbes/character-based-cnn (Zhang et al.'s char-CNN: one-hot
characters of a fixed alphabet, Conv1d(kernel 7/3) + ReLU + MaxPool1d(3) stacks, the output size
computed by a dummy forward under torch.rand, _create_weights with normal_(mean, std), Linear +
Dropout classifier, SGD with momentum and a StepLR schedule, class weights in CrossEntropyLoss)."""
import argparse

import numpy as np
import torch
import torch.autograd as autograd
import torch.nn as nn
import torch.nn.functional as F


class CNN_Text(nn.Module):
    def __init__(self, args):
        super(CNN_Text, self).__init__()
        self.args = args

        V = args.embed_num
        D = args.embed_dim
        C = args.class_num
        Ci = 1
        Co = args.kernel_num
        Ks = args.kernel_sizes

        self.embed = nn.Embedding(V, D)
        self.convs = nn.ModuleList([nn.Conv2d(Ci, Co, (K, D)) for K in Ks])
        self.dropout = nn.Dropout(args.dropout)
        self.fc1 = nn.Linear(len(Ks) * Co, C)

        if self.args.static:
            self.embed.weight.requires_grad = False

    def forward(self, x):
        x = self.embed(x)  # (N, W, D)

        x = x.unsqueeze(1)  # (N, Ci, W, D)

        x = [F.relu(conv(x)).squeeze(3) for conv in self.convs]  # [(N, Co, W), ...]*len(Ks)

        x = [F.max_pool1d(i, i.size(2)).squeeze(2) for i in x]  # [(N, Co), ...]*len(Ks)

        x = torch.cat(x, 1)

        x = self.dropout(x)  # (N, len(Ks)*Co)
        logit = self.fc1(x)  # (N, C)
        return logit


def train_kim(train_iter, dev_iter, model, args, step_losses, evals):
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
    steps = 0
    model.train()
    for epoch in range(1, args.epochs + 1):
        for feature, target in train_iter:
            optimizer.zero_grad()
            logit = model(feature)
            loss = F.cross_entropy(logit, target)
            loss.backward()
            optimizer.step()
            steps += 1
            step_losses.append(loss.item())
            corrects = (torch.max(logit, 1)[1].view(target.size()).data == target.data).sum()
            accuracy = 100.0 * corrects / target.shape[0]
        evals.append(eval_kim(dev_iter, model, args))


def eval_kim(data_iter, model, args):
    model.eval()
    corrects, avg_loss = 0, 0
    for feature, target in data_iter:
        logit = model(feature)
        loss = F.cross_entropy(logit, target, size_average=False)

        avg_loss += loss.item()
        corrects += (torch.max(logit, 1)
                     [1].view(target.size()).data == target.data).sum()

    size = len(data_iter.dataset)
    avg_loss /= size
    accuracy = 100.0 * corrects / size
    model.train()
    return avg_loss, float(accuracy)


def predict(text, model, vocab, label_names):
    assert isinstance(text, str)
    model.eval()
    text = [vocab.get(w, 0) for w in text.split()]
    x = torch.tensor(text)
    x = autograd.Variable(x)
    x = x.unsqueeze(0)
    output = model(x)
    _, predicted = torch.max(output, 1)
    return label_names[predicted.item()], F.softmax(output, dim=1)


# ---------------------------------------------------------------- character-based-cnn
class CharacterLevelCNN(nn.Module):
    def __init__(self, args, number_of_classes):
        super(CharacterLevelCNN, self).__init__()

        # define conv layers

        self.dropout_input = nn.Dropout2d(args.dropout_input)

        self.conv1 = nn.Sequential(
            nn.Conv1d(args.number_of_characters + len(args.extra_characters), 32, kernel_size=7, padding=0),
            nn.ReLU(),
            nn.MaxPool1d(3),
        )

        self.conv2 = nn.Sequential(
            nn.Conv1d(32, 32, kernel_size=7, padding=0), nn.ReLU(), nn.MaxPool1d(3)
        )

        self.conv3 = nn.Sequential(
            nn.Conv1d(32, 32, kernel_size=3, padding=0), nn.ReLU()
        )

        self.conv4 = nn.Sequential(
            nn.Conv1d(32, 32, kernel_size=3, padding=0), nn.ReLU(), nn.MaxPool1d(3)
        )

        # compute the  output shape after forwarding an input to the conv layers

        input_shape = (
            128,
            args.max_length,
            args.number_of_characters + len(args.extra_characters),
        )
        self.output_dimension = self._get_conv_output(input_shape)

        # define linear layers

        self.fc1 = nn.Sequential(
            nn.Linear(self.output_dimension, 64), nn.ReLU(), nn.Dropout(0.5)
        )

        self.fc2 = nn.Sequential(nn.Linear(64, 64), nn.ReLU(), nn.Dropout(0.5))

        self.fc3 = nn.Linear(64, number_of_classes)

        # initialize weights

        self._create_weights()

    # utility private functions

    def _create_weights(self, mean=0.0, std=0.05):
        for module in self.modules():
            if isinstance(module, nn.Conv1d) or isinstance(module, nn.Linear):
                module.weight.data.normal_(mean, std)

    def _get_conv_output(self, shape):
        x = torch.rand(shape)
        x = x.transpose(1, 2)
        x = self.conv1(x)
        x = self.conv2(x)
        x = self.conv3(x)
        x = self.conv4(x)
        x = x.view(x.size(0), -1)
        output_dimension = x.size(1)
        return output_dimension

    # forward

    def forward(self, x):
        x = self.dropout_input(x)
        x = x.transpose(1, 2)
        x = self.conv1(x)
        x = self.conv2(x)
        x = self.conv3(x)
        x = self.conv4(x)
        x = x.view(x.size(0), -1)
        x = self.fc1(x)
        x = self.fc2(x)
        x = self.fc3(x)
        return x


class MyDataset(torch.utils.data.Dataset):
    def __init__(self, texts, labels, args):
        self.texts, self.labels = texts, labels
        self.vocabulary = list(args.alphabet) + list(args.extra_characters)
        self.max_length = args.max_length
        self.identity_mat = np.identity(len(self.vocabulary))

    def __len__(self):
        return len(self.labels)

    def __getitem__(self, index):
        raw_text = self.texts[index]
        data = np.array([self.identity_mat[self.vocabulary.index(i)] for i in list(raw_text)[::-1]
                         if i in self.vocabulary], dtype=np.float32)
        if len(data) > self.max_length:
            data = data[:self.max_length]
        elif 0 < len(data) < self.max_length:
            data = np.concatenate((data, np.zeros((self.max_length - len(data), len(self.vocabulary)),
                                                  dtype=np.float32)))
        elif len(data) == 0:
            data = np.zeros((self.max_length, len(self.vocabulary)), dtype=np.float32)
        label = self.labels[index]
        data = torch.Tensor(data)
        return data, label


class Args:
    pass


def make_texts(rng, n):
    pos = "good great fine nice superb love happy".split()
    neg = "bad awful poor hate sad terrible worst".split()
    filler = "the movie was and it a film plot acting really".split()
    texts, labels = [], []
    for _ in range(n):
        y = rng.randint(0, 2)
        ws = list(rng.choice(filler, size=rng.randint(4, 9))) + list(rng.choice(pos if y else neg, size=2))
        rng.shuffle(ws)
        texts.append(" ".join(ws))
        labels.append(y)
    return texts, labels


def main(argv=None):
    p = argparse.ArgumentParser()
    p.add_argument('--model', default='kim', choices=['kim', 'char'])
    p.add_argument('--epochs', type=int, default=3)
    p.add_argument('--static', action='store_true')
    p.add_argument('--lr', type=float, default=0.001)
    p.add_argument('--quiet', action='store_true')
    a = p.parse_args(argv)

    torch.manual_seed(0)
    rng = np.random.RandomState(0)
    texts, labels = make_texts(rng, 160)
    dev_texts, dev_labels = make_texts(rng, 40)
    step_losses, evals = [], []
    if a.model == 'kim':
        vocab = {}
        for t in texts:
            for w in t.split():
                vocab.setdefault(w, len(vocab) + 1)
        W = 12

        def encode(ts, ls):
            x = torch.zeros(len(ts), W, dtype=torch.long)
            for i, t in enumerate(ts):
                ids = [vocab.get(w, 0) for w in t.split()][:W]
                x[i, :len(ids)] = torch.tensor(ids)
            return torch.utils.data.TensorDataset(x, torch.tensor(ls))
        args = Args()
        args.embed_num, args.embed_dim, args.class_num = len(vocab) + 1, 16, 2
        args.kernel_num, args.kernel_sizes, args.dropout, args.static = 8, [3, 4, 5], 0.5, a.static
        args.lr, args.epochs = a.lr, a.epochs
        model = CNN_Text(args)
        initial_state = {k: v.clone() for k, v in model.state_dict().items()}
        if a.static:
            model.embed.weight.requires_grad = False
        train_iter = torch.utils.data.DataLoader(encode(texts, labels), batch_size=16, shuffle=True)
        dev_iter = torch.utils.data.DataLoader(encode(dev_texts, dev_labels), batch_size=16)
        train_kim(train_iter, dev_iter, model, args, step_losses, evals)
        label, probs = predict("the film was great and good", model, vocab, ["negative", "positive"])
        return {"initial_state": initial_state, "step_losses": step_losses, "evals": evals, "label": label,
                "probs": probs, "final_state": model.state_dict()}

    args = Args()
    args.alphabet = "abcdefghijklmnopqrstuvwxyz"
    args.extra_characters = " "
    args.number_of_characters = len(args.alphabet)
    args.max_length = 150
    args.dropout_input = 0.1
    model = CharacterLevelCNN(args, 2)
    initial_state = {k: v.clone() for k, v in model.state_dict().items()}
    training_set = MyDataset(texts, labels, args)
    training_generator = torch.utils.data.DataLoader(training_set, batch_size=16, shuffle=True, drop_last=True)
    class_weights = torch.tensor([1.0, 1.2])
    criterion = nn.CrossEntropyLoss(weight=class_weights)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=1, gamma=0.5)
    for epoch in range(a.epochs):
        model.train()
        for iter, batch in enumerate(training_generator):
            features, labels_b = batch
            optimizer.zero_grad()
            predictions = model(features)
            loss = criterion(predictions, labels_b)
            loss.backward()
            optimizer.step()
            step_losses.append(loss.item())
        scheduler.step()
    model.eval()
    with torch.no_grad():
        out = model(torch.stack([MyDataset(dev_texts, dev_labels, args)[i][0] for i in range(8)]))
    return {"initial_state": initial_state, "step_losses": step_losses, "out": out,
            "dim": model.output_dimension, "final_state": model.state_dict()}


if __name__ == '__main__':
    main()
