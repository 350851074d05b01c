"""gram-ai/capsule-networks' capsule_network.py: softmax(input, dim) by transpose / F.softmax /
transpose, augmentation by a random shift of F.pad'ed images, CapsuleLayer (primary capsules as a
ModuleList of Conv2d whose outputs are view'ed, cat'ed and squashed; routing capsules with
nn.Parameter(torch.randn(...)) route weights, priors = x[None, :, :, None, :] @ route_weights[:, None, :, :, :],
logits = Variable(torch.zeros(*priors.size())), dynamic routing with softmax over dim=2 and
(priors * outputs).sum(dim=-1, keepdim=True)), squash, CapsuleNet's reconstruction decoder masked by
torch.eye(NUM_CLASSES).index_select(dim=0, index=max_length_indices.data), and CapsuleLoss (F.relu(0.9 -
classes, inplace=True) ** 2 margins, nn.MSELoss(reduction='sum') reconstruction, / images.size(0)).
Sizes are reduced (and MNIST is random 20x20 digits); torchnet's engine is a plain loop."""
import argparse

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn
from torch.autograd import Variable

BATCH_SIZE = 16
NUM_CLASSES = 10
NUM_ROUTING_ITERATIONS = 3


def softmax(input, dim=1):
    transposed_input = input.transpose(dim, len(input.size()) - 1)
    softmaxed_output = F.softmax(transposed_input.contiguous().view(-1, transposed_input.size(-1)), dim=-1)
    return softmaxed_output.view(*transposed_input.size()).transpose(dim, len(input.size()) - 1)


def augmentation(x, max_shift=2):
    _, _, height, width = x.size()

    h_shift, w_shift = np.random.randint(-max_shift, max_shift + 1, size=2)
    source_height_slice = slice(max(0, h_shift), h_shift + height)
    source_width_slice = slice(max(0, w_shift), w_shift + width)
    target_height_slice = slice(max(0, -h_shift), -h_shift + height)
    target_width_slice = slice(max(0, -w_shift), -w_shift + width)

    shifted_image = torch.zeros(*x.size())
    shifted_image[:, :, source_height_slice, source_width_slice] = x[:, :, target_height_slice, target_width_slice]
    return shifted_image.float()


class CapsuleLayer(nn.Module):
    def __init__(self, num_capsules, num_route_nodes, in_channels, out_channels, kernel_size=None, stride=None,
                 num_iterations=NUM_ROUTING_ITERATIONS):
        super(CapsuleLayer, self).__init__()

        self.num_route_nodes = num_route_nodes
        self.num_iterations = num_iterations

        self.num_capsules = num_capsules

        if num_route_nodes != -1:
            self.route_weights = nn.Parameter(torch.randn(num_capsules, num_route_nodes, in_channels, out_channels))
        else:
            self.capsules = nn.ModuleList(
                [nn.Conv2d(in_channels, out_channels, kernel_size=kernel_size, stride=stride, padding=0) for _ in
                 range(num_capsules)])

    def squash(self, tensor, dim=-1):
        squared_norm = (tensor ** 2).sum(dim=dim, keepdim=True)
        scale = squared_norm / (1 + squared_norm)
        return scale * tensor / torch.sqrt(squared_norm)

    def forward(self, x):
        if self.num_route_nodes != -1:
            priors = x[None, :, :, None, :] @ self.route_weights[:, None, :, :, :]

            logits = Variable(torch.zeros(*priors.size()))
            for i in range(self.num_iterations):
                probs = softmax(logits, dim=2)
                outputs = self.squash((probs * priors).sum(dim=2, keepdim=True))

                if i != self.num_iterations - 1:
                    delta_logits = (priors * outputs).sum(dim=-1, keepdim=True)
                    logits = logits + delta_logits
        else:
            outputs = [capsule(x).view(x.size(0), -1, 1) for capsule in self.capsules]
            outputs = torch.cat(outputs, dim=-1)
            outputs = self.squash(outputs)

        return outputs


class CapsuleNet(nn.Module):
    def __init__(self, image_size=20, conv_channels=32, primary_channels=8):
        super(CapsuleNet, self).__init__()
        side = ((image_size - 8) - 9) // 2 + 1
        self.conv1 = nn.Conv2d(in_channels=1, out_channels=conv_channels, kernel_size=9, stride=1)
        self.primary_capsules = CapsuleLayer(num_capsules=8, num_route_nodes=-1, in_channels=conv_channels,
                                             out_channels=primary_channels, kernel_size=9, stride=2)
        self.digit_capsules = CapsuleLayer(num_capsules=NUM_CLASSES, num_route_nodes=primary_channels * side * side,
                                           in_channels=8, out_channels=16)

        self.decoder = nn.Sequential(
            nn.Linear(16 * NUM_CLASSES, 64),
            nn.ReLU(inplace=True),
            nn.Linear(64, 128),
            nn.ReLU(inplace=True),
            nn.Linear(128, image_size * image_size),
            nn.Sigmoid()
        )

    def forward(self, x, y=None):
        x = F.relu(self.conv1(x), inplace=True)
        x = self.primary_capsules(x)
        x = self.digit_capsules(x).squeeze().transpose(0, 1)

        classes = (x ** 2).sum(dim=-1) ** 0.5
        classes = F.softmax(classes, dim=-1)

        if y is None:
            # In all batches, get the most active capsule.
            _, max_length_indices = classes.max(dim=1)
            y = Variable(torch.eye(NUM_CLASSES)).index_select(dim=0, index=max_length_indices.data)

        reconstructions = self.decoder((x * y[:, :, None]).reshape(x.size(0), -1))

        return classes, reconstructions


class CapsuleLoss(nn.Module):
    def __init__(self):
        super(CapsuleLoss, self).__init__()
        self.reconstruction_loss = nn.MSELoss(reduction='sum')

    def forward(self, images, labels, classes, reconstructions):
        left = F.relu(0.9 - classes, inplace=True) ** 2
        right = F.relu(classes - 0.1, inplace=True) ** 2

        margin_loss = labels * left + 0.5 * (1. - labels) * right
        margin_loss = margin_loss.sum()

        assert torch.numel(images) == torch.numel(reconstructions)
        images = images.view(reconstructions.size()[0], -1)
        reconstruction_loss = self.reconstruction_loss(reconstructions, images)

        return (margin_loss + 0.0005 * reconstruction_loss) / images.size(0)


def main(argv=None):
    p = argparse.ArgumentParser()
    p.add_argument('--epochs', type=int, default=2)
    p.add_argument('--n', type=int, default=96)
    p.add_argument('--image_size', type=int, default=20)
    p.add_argument('--quiet', action='store_true')
    args = p.parse_args(argv)

    torch.manual_seed(0)
    np.random.seed(0)
    rng = np.random.RandomState(1)
    labels_all = rng.randint(0, NUM_CLASSES, size=args.n)
    data_all = rng.rand(args.n, args.image_size, args.image_size).astype(np.float32) * 0.2
    for i, c in enumerate(labels_all):
        data_all[i, c + 2, 3:17] = 1.0
        data_all[i, 3:17, c + 4] = 0.8
    data_all = torch.from_numpy(data_all * 255).byte()

    model = CapsuleNet(args.image_size)
    initial_state = {k: v.clone() for k, v in model.state_dict().items()}
    optimizer = torch.optim.Adam(model.parameters())
    capsule_loss = CapsuleLoss()

    def processor(sample):
        data, labels, training = sample

        data = augmentation(data.unsqueeze(1).float() / 255.0)
        labels = torch.LongTensor(labels)

        labels = torch.eye(NUM_CLASSES).index_select(dim=0, index=labels)

        data = Variable(data)
        labels = Variable(labels)

        if training:
            classes, reconstructions = model(data, labels)
        else:
            classes, reconstructions = model(data)

        loss = capsule_loss(data, labels, classes, reconstructions)

        return loss, classes

    step_losses, test_losses, accs = [], [], []
    for epoch in range(args.epochs):
        model.train()
        perm = torch.randperm(args.n)
        for b in range(0, args.n, BATCH_SIZE):
            idx = perm[b:b + BATCH_SIZE]
            optimizer.zero_grad()
            loss, classes = processor((data_all[idx], labels_all[idx.numpy()], True))
            loss.backward()
            optimizer.step()
            step_losses.append(loss.item())
        model.eval()
        with torch.no_grad():
            loss, classes = processor((data_all[:32], labels_all[:32], False))
            test_losses.append(loss.item())
            accs.append((classes.max(dim=1)[1].numpy() == labels_all[:32]).mean())
    return {"initial_state": initial_state, "step_losses": step_losses, "test_losses": test_losses, "accs": accs,
            "final_state": model.state_dict()}


if __name__ == '__main__':
    main()
