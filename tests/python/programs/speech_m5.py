"""The PyTorch tutorial "Speech Command Classification with torchaudio" (intermediate_source/
speech_command_classification_with_torchaudio_tutorial.py), its model and training loop in plain torch: M5
(Conv1d(n_input, n_channel, kernel_size=80, stride=16), BatchNorm1d, MaxPool1d(4), three more conv blocks,
F.avg_pool1d(x, x.shape[-1]), x.permute(0, 2, 1), F.log_softmax(x, dim=2)), count_parameters, the collate_fn
with pad_sequence(batch, batch_first=True, padding_value=0.).permute(0, 2, 1) over tensors and
label_to_index by torch.tensor(labels.index(word)), train() with F.nll_loss(output.squeeze(), target), test()
with get_likely_index (tensor.argmax(dim=-1)) and number_of_correct (pred.squeeze().eq(target).sum().item()),
Adam(lr=0.01, weight_decay=0.0001) with StepLR(step_size=20, gamma=0.1), and the resample step replaced by
F.avg_pool1d downsampling. The SpeechCommands waveforms are synthetic tones of different pitch and shape."""
import argparse

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim


class M5(nn.Module):
    def __init__(self, n_input=1, n_output=35, stride=16, n_channel=32):
        super().__init__()
        self.conv1 = nn.Conv1d(n_input, n_channel, kernel_size=80, stride=stride)
        self.bn1 = nn.BatchNorm1d(n_channel)
        self.pool1 = nn.MaxPool1d(4)
        self.conv2 = nn.Conv1d(n_channel, n_channel, kernel_size=3)
        self.bn2 = nn.BatchNorm1d(n_channel)
        self.pool2 = nn.MaxPool1d(4)
        self.conv3 = nn.Conv1d(n_channel, 2 * n_channel, kernel_size=3)
        self.bn3 = nn.BatchNorm1d(2 * n_channel)
        self.pool3 = nn.MaxPool1d(4)
        self.conv4 = nn.Conv1d(2 * n_channel, 2 * n_channel, kernel_size=3)
        self.bn4 = nn.BatchNorm1d(2 * n_channel)
        self.pool4 = nn.MaxPool1d(4)
        self.fc1 = nn.Linear(2 * n_channel, n_output)

    def forward(self, x):
        x = self.conv1(x)
        x = F.relu(self.bn1(x))
        x = self.pool1(x)
        x = self.conv2(x)
        x = F.relu(self.bn2(x))
        x = self.pool2(x)
        x = self.conv3(x)
        x = F.relu(self.bn3(x))
        x = self.pool3(x)
        x = self.conv4(x)
        x = F.relu(self.bn4(x))
        x = self.pool4(x)
        x = F.avg_pool1d(x, x.shape[-1])
        x = x.permute(0, 2, 1)
        x = self.fc1(x)
        return F.log_softmax(x, dim=2)


def count_parameters(model):
    return sum(p.numel() for p in model.parameters() if p.requires_grad)


labels = ["down", "go", "left", "no", "off", "on"]


def label_to_index(word):
    # Return the position of the word in labels
    return torch.tensor(labels.index(word))


def index_to_label(index):
    # Return the word corresponding to the index in labels
    # This is the inverse of label_to_index
    return labels[index]


def pad_sequence(batch):
    # Make all tensor in a batch the same length by padding with zeros
    batch = [item.t() for item in batch]
    batch = torch.nn.utils.rnn.pad_sequence(batch, batch_first=True, padding_value=0.)
    return batch.permute(0, 2, 1)


def collate_fn(batch):

    # A data tuple has the form:
    # waveform, sample_rate, label, speaker_id, utterance_number

    tensors, targets = [], []

    # Gather in lists, and encode labels as indices
    for waveform, _, label, *_ in batch:
        tensors += [waveform]
        targets += [label_to_index(label)]

    # Group the list of tensors into a batched tensor
    tensors = pad_sequence(tensors)
    targets = torch.stack(targets)

    return tensors, targets


class SyntheticSpeechCommands(torch.utils.data.Dataset):
    def __init__(self, n, seed, sample_rate=16000):
        rng = np.random.RandomState(seed)
        self.items = []
        for k in range(n):
            label = labels[rng.randint(len(labels))]
            c = labels.index(label)
            length = rng.randint(8000, 9000)
            t = np.arange(length) / sample_rate
            freq = 200 + 150 * c
            wave = np.sin(2 * np.pi * freq * t) * np.exp(-t * (5 + c)) + 0.1 * rng.randn(length)
            self.items.append((torch.from_numpy(wave.astype(np.float32)).unsqueeze(0), sample_rate, label, "spk%d" % k, 0))

    def __len__(self):
        return len(self.items)

    def __getitem__(self, n):
        return self.items[n]


def get_likely_index(tensor):
    # find most likely label index for each element in the batch
    return tensor.argmax(dim=-1)


def number_of_correct(pred, target):
    # count number of correct predictions
    return pred.squeeze().eq(target).sum().item()


def main(argv=None):
    parser = argparse.ArgumentParser()
    parser.add_argument('--epochs', type=int, default=2)
    parser.add_argument('--batch-size', type=int, default=16)
    parser.add_argument('--quiet', action='store_true')
    args = parser.parse_args(argv)
    log = (lambda *a: None) if args.quiet else print

    torch.manual_seed(0)
    device = "cpu"
    train_set = SyntheticSpeechCommands(64, 0)
    test_set = SyntheticSpeechCommands(32, 1)
    transform = lambda w: F.avg_pool1d(w, 2)  # stands for torchaudio.transforms.Resample(16000, 8000)

    num_workers, pin_memory = 0, False
    train_loader = torch.utils.data.DataLoader(train_set, batch_size=args.batch_size, shuffle=True,
                                               collate_fn=collate_fn, num_workers=num_workers, pin_memory=pin_memory)
    test_loader = torch.utils.data.DataLoader(test_set, batch_size=args.batch_size, shuffle=False, drop_last=False,
                                              collate_fn=collate_fn, num_workers=num_workers, pin_memory=pin_memory)

    model = M5(n_input=1, n_output=len(labels), stride=8, n_channel=16)
    model.to(device)
    initial_state = {k: v.clone() for k, v in model.state_dict().items()}
    n = count_parameters(model)
    optimizer = optim.Adam(model.parameters(), lr=0.01, weight_decay=0.0001)
    scheduler = optim.lr_scheduler.StepLR(optimizer, step_size=20, gamma=0.1)

    step_losses, accs = [], []
    log_interval = 2
    for epoch in range(1, args.epochs + 1):
        model.train()
        for batch_idx, (data, target) in enumerate(train_loader):
            data = data.to(device)
            target = target.to(device)
            # apply transform and model on whole batch directly on device
            data = transform(data)
            output = model(data)
            # negative log-likelihood for a tensor of size (batch x 1 x n_output)
            loss = F.nll_loss(output.squeeze(), target)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            step_losses.append(loss.item())
            if batch_idx % log_interval == 0:
                log(f"Train Epoch: {epoch} [{batch_idx * len(data)}/{len(train_loader.dataset)}"
                    f" ({100. * batch_idx / len(train_loader):.0f}%)]\tLoss: {loss.item():.6f}")
        scheduler.step()
        model.eval()
        correct = 0
        for data, target in test_loader:
            data = data.to(device)
            target = target.to(device)
            data = transform(data)
            output = model(data)
            pred = get_likely_index(output)
            correct += number_of_correct(pred, target)
        accs.append(correct)
        log(f"\nTest Epoch: {epoch}\tAccuracy: {correct}/{len(test_loader.dataset)} "
            f"({100. * correct / len(test_loader.dataset):.0f}%)\n")
    return {"initial_state": initial_state, "step_losses": step_losses, "accs": accs, "n_params": n}


if __name__ == "__main__":
    main()
