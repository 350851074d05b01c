"""The "Training a Classifier" (CIFAR-10) tutorial: Net (Conv2d(3, 6, 5), MaxPool2d(2, 2),
Conv2d(6, 16, 5), torch.flatten, three Linear layers), CrossEntropyLoss, SGD(lr=0.001,
momentum=0.9), the running loss printed every 2000 mini-batches, torch.save of the state_dict and
load_state_dict into a new Net, next(iter(testloader)), torch.max(outputs, 1), the overall accuracy
and the per-class accuracy dicts filled through classes[label] with 0-dim tensor labels. CIFAR-10
(torchvision, ToTensor + Normalize((0.5,)*3, (0.5,)*3)) is replaced by synthetic 32x32 colour
images in [-1, 1]."""
import argparse
import os
import tempfile

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 6, 5)
        self.pool = nn.MaxPool2d(2, 2)
        self.conv2 = nn.Conv2d(6, 16, 5)
        self.fc1 = nn.Linear(16 * 5 * 5, 120)
        self.fc2 = nn.Linear(120, 84)
        self.fc3 = nn.Linear(84, 10)

    def forward(self, x):
        x = self.pool(F.relu(self.conv1(x)))
        x = self.pool(F.relu(self.conv2(x)))
        x = torch.flatten(x, 1)  # flatten all dimensions except batch
        x = F.relu(self.fc1(x))
        x = F.relu(self.fc2(x))
        x = self.fc3(x)
        return x


def synthetic_cifar(n, seed):
    rng = np.random.RandomState(seed)
    labels = rng.randint(0, 10, size=n)
    images = rng.rand(n, 3, 32, 32).astype(np.float32) * 0.5
    for k, c in enumerate(labels):
        images[k, c % 3, 2 * c:2 * c + 8, :] += 0.5
        images[k, (c + 1) % 3, :, 3 * c:3 * c + 4] += 0.4
    images = (np.clip(images, 0, 1) - 0.5) / 0.5
    return torch.utils.data.TensorDataset(torch.tensor(images), torch.tensor(labels))


def main(argv=None):
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--batch_size", type=int, default=4)
    parser.add_argument("--n-train", type=int, default=50000)
    parser.add_argument("--n-test", type=int, default=10000)
    parser.add_argument("--print-every", type=int, default=2000)
    parser.add_argument("--quiet", action="store_true")
    args = parser.parse_args(argv)
    log = (lambda *a, **k: None) if args.quiet else print
    torch.manual_seed(0)

    batch_size = args.batch_size
    trainset = synthetic_cifar(args.n_train, 0)
    trainloader = torch.utils.data.DataLoader(trainset, batch_size=batch_size, shuffle=True, num_workers=0)
    testset = synthetic_cifar(args.n_test, 1)
    testloader = torch.utils.data.DataLoader(testset, batch_size=batch_size, shuffle=False, num_workers=0)

    classes = ('plane', 'car', 'bird', 'cat',
               'deer', 'dog', 'frog', 'horse', 'ship', 'truck')

    # get some random training images
    dataiter = iter(trainloader)
    images, labels = next(dataiter)
    first_labels = ' '.join(f'{classes[labels[j]]:5s}' for j in range(batch_size))
    log(first_labels)

    net = Net()
    initial_state = {k: v.clone() for k, v in net.state_dict().items()}
    criterion = nn.CrossEntropyLoss()
    optimizer = optim.SGD(net.parameters(), lr=0.001, momentum=0.9)
    step_losses, running = [], []

    for epoch in range(args.epochs):  # loop over the dataset multiple times
        running_loss = 0.0
        for i, data in enumerate(trainloader, 0):
            # get the inputs; data is a list of [inputs, labels]
            inputs, labels = data

            # zero the parameter gradients
            optimizer.zero_grad()

            # forward + backward + optimize
            outputs = net(inputs)
            loss = criterion(outputs, labels)
            loss.backward()
            optimizer.step()

            # print statistics
            running_loss += loss.item()
            step_losses.append(loss.item())
            if i % args.print_every == args.print_every - 1:
                log(f'[{epoch + 1}, {i + 1:5d}] loss: {running_loss / args.print_every:.3f}')
                running.append(running_loss / args.print_every)
                running_loss = 0.0

    log('Finished Training')
    tmp = tempfile.TemporaryDirectory()
    PATH = os.path.join(tmp.name, 'cifar_net.pth')
    torch.save(net.state_dict(), PATH)

    dataiter = iter(testloader)
    images, labels = next(dataiter)
    truth = ' '.join(f'{classes[labels[j]]:5s}' for j in range(batch_size))
    log('GroundTruth: ', truth)

    net = Net()
    net.load_state_dict(torch.load(PATH))
    tmp.cleanup()

    outputs = net(images)
    _, predicted = torch.max(outputs, 1)
    first_predicted = ' '.join(f'{classes[predicted[j]]:5s}' for j in range(batch_size))
    log('Predicted: ', first_predicted)

    correct = 0
    total = 0
    # since we're not training, we don't need to calculate the gradients for our outputs
    with torch.no_grad():
        for data in testloader:
            images, labels = data
            # calculate outputs by running images through the network
            outputs = net(images)
            # the class with the highest energy is what we choose as prediction
            _, predicted = torch.max(outputs.data, 1)
            total += labels.size(0)
            correct += (predicted == labels).sum().item()

    log(f'Accuracy of the network on the {total} test images: {100 * correct // total} %')

    # prepare to count predictions for each class
    correct_pred = {classname: 0 for classname in classes}
    total_pred = {classname: 0 for classname in classes}

    # again no gradients needed
    with torch.no_grad():
        for data in testloader:
            images, labels = data
            outputs = net(images)
            _, predictions = torch.max(outputs, 1)
            # collect the correct predictions for each class
            for label, prediction in zip(labels, predictions):
                if label == prediction:
                    correct_pred[classes[label]] += 1
                total_pred[classes[label]] += 1

    per_class = {}
    for classname, correct_count in correct_pred.items():
        accuracy = 100 * float(correct_count) / max(total_pred[classname], 1)
        per_class[classname] = accuracy
        log(f'Accuracy for class: {classname:5s} is {accuracy:.1f} %')

    return {"initial_state": initial_state, "step_losses": step_losses, "running": running,
            "labels": (first_labels, truth, first_predicted), "correct": correct, "per_class": per_class}


if __name__ == "__main__":
    main()
