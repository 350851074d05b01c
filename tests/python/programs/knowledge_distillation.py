"""Knowledge distillation as haitongli/knowledge-distillation-pytorch writes it (model/net.py's
loss_fn_kd: nn.KLDivLoss()(F.log_softmax(outputs/T, dim=1), F.softmax(teacher_outputs/T, dim=1)) *
(alpha * T * T) + F.cross_entropy(outputs, labels) * (1. - alpha), fetch_teacher_outputs under
teacher_model.eval(), train_kd's RunningAverage, utils' accuracy with np.argmax) and the PyTorch tutorial
"Knowledge Distillation" (DeepNN teacher / LightNN student, soft_targets_loss = torch.sum(soft_targets *
(soft_targets.log() - soft_prob)) / soft_prob.size()[0] * (T**2), and the cosine-similarity hidden
representation loss with nn.CosineEmbeddingLoss and F.avg_pool1d), plus nn.KLDivLoss(reduction=
'batchmean', log_target=True). CIFAR-10 is replaced by random 3x16x16 images with class-coloured blobs."""
import argparse

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim
from torch.utils.data import DataLoader, TensorDataset


class DeepNN(nn.Module):
    def __init__(self, num_classes=10):
        super(DeepNN, self).__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, 32, kernel_size=3, padding=1),
            nn.ReLU(),
            nn.Conv2d(32, 16, kernel_size=3, padding=1),
            nn.ReLU(),
            nn.MaxPool2d(kernel_size=2, stride=2),
            nn.Conv2d(16, 16, kernel_size=3, padding=1),
            nn.ReLU(),
            nn.Conv2d(16, 8, kernel_size=3, padding=1),
            nn.ReLU(),
            nn.MaxPool2d(kernel_size=2, stride=2),
        )
        self.classifier = nn.Sequential(
            nn.Linear(128, 64),
            nn.ReLU(),
            nn.Dropout(0.1),
            nn.Linear(64, num_classes)
        )

    def forward(self, x):
        x = self.features(x)
        x = torch.flatten(x, 1)
        x = self.classifier(x)
        return x


class LightNN(nn.Module):
    def __init__(self, num_classes=10):
        super(LightNN, self).__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, 16, kernel_size=3, padding=1),
            nn.ReLU(),
            nn.MaxPool2d(kernel_size=2, stride=2),
            nn.Conv2d(16, 8, kernel_size=3, padding=1),
            nn.ReLU(),
            nn.MaxPool2d(kernel_size=2, stride=2),
        )
        self.classifier = nn.Sequential(
            nn.Linear(128, 32),
            nn.ReLU(),
            nn.Dropout(0.1),
            nn.Linear(32, num_classes)
        )

    def forward(self, x):
        x = self.features(x)
        x = torch.flatten(x, 1)
        x = self.classifier(x)
        return x


class ModifiedDeepNNCosine(DeepNN):
    def forward(self, x):
        x = self.features(x)
        flattened_conv_output = torch.flatten(x, 1)
        x = self.classifier(flattened_conv_output)
        flattened_conv_output_after_pooling = torch.nn.functional.avg_pool1d(flattened_conv_output, 2)
        return x, flattened_conv_output_after_pooling


class ModifiedLightNNCosine(LightNN):
    def forward(self, x):
        x = self.features(x)
        flattened_conv_output = torch.flatten(x, 1)
        x = self.classifier(flattened_conv_output)
        return x, flattened_conv_output[:, :64]


# ---------------------------------------------------------------- knowledge-distillation-pytorch
def loss_fn_kd(outputs, labels, teacher_outputs, params):
    alpha = params.alpha
    T = params.temperature
    KD_loss = nn.KLDivLoss()(F.log_softmax(outputs / T, dim=1),
                             F.softmax(teacher_outputs / T, dim=1)) * (alpha * T * T) + \
        F.cross_entropy(outputs, labels) * (1. - alpha)
    return KD_loss


def loss_fn_kd_batchmean(outputs, labels, teacher_outputs, params):
    T = params.temperature
    kl = nn.KLDivLoss(reduction='batchmean', log_target=True)
    return kl(F.log_softmax(outputs / T, dim=1), F.log_softmax(teacher_outputs / T, dim=1)) * (params.alpha * T * T) + \
        F.cross_entropy(outputs, labels) * (1. - params.alpha)


class RunningAverage():
    def __init__(self):
        self.steps = 0
        self.total = 0

    def update(self, val):
        self.total += val
        self.steps += 1

    def __call__(self):
        return self.total / float(self.steps)


def accuracy(outputs, labels):
    outputs = np.argmax(outputs, axis=1)
    return np.sum(outputs == labels) / float(labels.size)


def fetch_teacher_outputs(teacher_model, dataloader):
    teacher_model.eval()
    teacher_outputs = []
    for i, (data_batch, labels_batch) in enumerate(dataloader):
        output_teacher_batch = teacher_model(data_batch).data.cpu().numpy()
        teacher_outputs.append(output_teacher_batch)
    return teacher_outputs


def train_kd(model, teacher_outputs, optimizer, loss_fn_kd, dataloader, params, step_losses):
    model.train()
    loss_avg = RunningAverage()
    for i, (train_batch, labels_batch) in enumerate(dataloader):
        output_batch = model(train_batch)
        output_teacher_batch = torch.from_numpy(teacher_outputs[i])
        loss = loss_fn_kd(output_batch, labels_batch, output_teacher_batch, params)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        loss_avg.update(loss.item())
        step_losses.append(loss.item())
    return loss_avg()


# ---------------------------------------------------------------- the tutorial
def train(model, train_loader, epochs, learning_rate, step_losses):
    criterion = nn.CrossEntropyLoss()
    optimizer = optim.Adam(model.parameters(), lr=learning_rate)
    model.train()
    for epoch in range(epochs):
        running_loss = 0.0
        for inputs, labels in train_loader:
            optimizer.zero_grad()
            outputs = model(inputs)
            loss = criterion(outputs, labels)
            loss.backward()
            optimizer.step()
            running_loss += loss.item()
            step_losses.append(loss.item())


def test(model, test_loader):
    model.eval()
    correct = 0
    total = 0
    with torch.no_grad():
        for inputs, labels in test_loader:
            outputs = model(inputs)
            if isinstance(outputs, tuple):
                outputs = outputs[0]
            _, predicted = torch.max(outputs.data, 1)
            total += labels.size(0)
            correct += (predicted == labels).sum().item()
    accuracy = 100 * correct / total
    return accuracy


def train_knowledge_distillation(teacher, student, train_loader, epochs, learning_rate, T, soft_target_loss_weight,
                                 ce_loss_weight, step_losses):
    ce_loss = nn.CrossEntropyLoss()
    optimizer = optim.Adam(student.parameters(), lr=learning_rate)
    teacher.eval()
    student.train()
    for epoch in range(epochs):
        for inputs, labels in train_loader:
            optimizer.zero_grad()
            with torch.no_grad():
                teacher_logits = teacher(inputs)
            student_logits = student(inputs)
            soft_targets = nn.functional.softmax(teacher_logits / T, dim=-1)
            soft_prob = nn.functional.log_softmax(student_logits / T, dim=-1)
            soft_targets_loss = torch.sum(soft_targets * (soft_targets.log() - soft_prob)) / soft_prob.size()[0] * (T**2)
            label_loss = ce_loss(student_logits, labels)
            loss = soft_target_loss_weight * soft_targets_loss + ce_loss_weight * label_loss
            loss.backward()
            optimizer.step()
            step_losses.append(loss.item())


def train_cosine_loss(teacher, student, train_loader, epochs, learning_rate, hidden_rep_loss_weight, ce_loss_weight,
                      step_losses):
    ce_loss = nn.CrossEntropyLoss()
    cosine_loss = nn.CosineEmbeddingLoss()
    optimizer = optim.Adam(student.parameters(), lr=learning_rate)
    teacher.eval()
    student.train()
    for epoch in range(epochs):
        for inputs, labels in train_loader:
            optimizer.zero_grad()
            with torch.no_grad():
                _, teacher_hidden_representation = teacher(inputs)
            student_logits, student_hidden_representation = student(inputs)
            hidden_rep_loss = cosine_loss(student_hidden_representation, teacher_hidden_representation,
                                          target=torch.ones(inputs.size(0)))
            label_loss = ce_loss(student_logits, labels)
            loss = hidden_rep_loss_weight * hidden_rep_loss + ce_loss_weight * label_loss
            loss.backward()
            optimizer.step()
            step_losses.append(loss.item())


def make_data(n, seed):
    rng = np.random.RandomState(seed)
    y = rng.randint(0, 10, size=n)
    x = rng.randn(n, 3, 16, 16).astype(np.float32) * 0.5
    for i, c in enumerate(y):
        x[i, c % 3, (c // 3) * 4:(c // 3) * 4 + 4, :] += 1.5
    return torch.from_numpy(x), torch.from_numpy(y)


class Params:
    pass


def main(argv=None):
    p = argparse.ArgumentParser()
    p.add_argument('--mode', default='tutorial', choices=['tutorial', 'cosine', 'haitongli', 'batchmean'])
    p.add_argument('--epochs', type=int, default=2)
    p.add_argument('--n', type=int, default=256)
    p.add_argument('--batch_size', type=int, default=32)
    p.add_argument('--T', type=float, default=2)
    p.add_argument('--quiet', action='store_true')
    args = p.parse_args(argv)

    torch.manual_seed(42)
    xtr, ytr = make_data(args.n, 0)
    xte, yte = make_data(128, 1)
    train_loader = DataLoader(TensorDataset(xtr, ytr), batch_size=args.batch_size, shuffle=True)
    test_loader = DataLoader(TensorDataset(xte, yte), batch_size=64, shuffle=False)

    cosine = args.mode == 'cosine'
    torch.manual_seed(42)
    nn_deep = (ModifiedDeepNNCosine if cosine else DeepNN)(num_classes=10)
    torch.manual_seed(42)
    nn_light = (ModifiedLightNNCosine if cosine else LightNN)(num_classes=10)
    initial_state = {**{'t.' + k: v.clone() for k, v in nn_deep.state_dict().items()},
                     **{'s.' + k: v.clone() for k, v in nn_light.state_dict().items()}}
    teacher_losses, step_losses = [], []
    if cosine:
        nn_deep.eval()  # the tutorial loads the trained teacher's weights into the modified network
        train(_Wrap(nn_deep), train_loader, args.epochs, 0.001, teacher_losses)
    else:
        train(nn_deep, train_loader, args.epochs, 0.001, teacher_losses)
    test_accuracy_deep = test(nn_deep, test_loader)

    if args.mode == 'tutorial':
        train_knowledge_distillation(teacher=nn_deep, student=nn_light, train_loader=train_loader, epochs=args.epochs,
                                     learning_rate=0.001, T=args.T, soft_target_loss_weight=0.25, ce_loss_weight=0.75,
                                     step_losses=step_losses)
    elif cosine:
        train_cosine_loss(teacher=nn_deep, student=nn_light, train_loader=train_loader, epochs=args.epochs,
                          learning_rate=0.001, hidden_rep_loss_weight=0.25, ce_loss_weight=0.75, step_losses=step_losses)
    else:
        params = Params()
        params.alpha, params.temperature = 0.9, args.T
        fixed_loader = DataLoader(TensorDataset(xtr, ytr), batch_size=args.batch_size, shuffle=False)
        teacher_outputs = fetch_teacher_outputs(nn_deep, fixed_loader)
        optimizer = optim.SGD(nn_light.parameters(), lr=0.05, momentum=0.9, weight_decay=5e-4)
        fn = loss_fn_kd if args.mode == 'haitongli' else loss_fn_kd_batchmean
        for epoch in range(args.epochs):
            train_kd(nn_light, teacher_outputs, optimizer, fn, fixed_loader, params, step_losses)
        nn_light.eval()
        with torch.no_grad():
            out = nn_light(xte).numpy()
        teacher_losses.append(accuracy(out, yte.numpy()))
    test_accuracy_light = test(nn_light, test_loader)
    return {"initial_state": initial_state, "teacher_losses": teacher_losses, "step_losses": step_losses,
            "accs": [test_accuracy_deep, test_accuracy_light], "final_state": nn_light.state_dict()}


class _Wrap(nn.Module):
    """(harness) trains the cosine teacher on its logits, as the tutorial's DeepNN was."""

    def __init__(self, m):
        super().__init__()
        self.m = m

    def forward(self, x):
        return self.m(x)[0]


if __name__ == '__main__':
    main()
