""""Adversarial Example Generation" (PyTorch tutorial, FGSM): the LeNet of pytorch/examples mnist,
model.eval(), a batch_size=1 shuffling test loader, data.requires_grad = True, init_pred =
output.max(1, keepdim=True)[1], F.nll_loss, model.zero_grad(), data.grad.data.sign(), fgsm_attack's
torch.clamp, denorm with torch.tensor(mean).view(1, -1, 1, 1), and transforms.Normalize re-applied to the
perturbed batch. The pretrained lenet_mnist_model.pth is replaced by a few Adadelta steps on synthetic
digits (saved with torch.save and loaded with map_location, as the tutorial loads it), MNIST by
synthetic digits, torchvision's Normalize by its few lines below."""
import argparse
import os
import tempfile

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim

device = torch.device("cpu")


class Normalize:
    """torchvision.transforms.Normalize on a tensor image or batch: (t - mean[:, None, None]) / std[:, None, None]."""

    def __init__(self, mean, std):
        self.mean, self.std = mean, std

    def __call__(self, tensor):
        tensor = tensor.clone()
        mean = torch.as_tensor(self.mean, dtype=tensor.dtype, device=tensor.device)
        std = torch.as_tensor(self.std, dtype=tensor.dtype, device=tensor.device)
        return tensor.sub_(mean.view(-1, 1, 1)).div_(std.view(-1, 1, 1))


# LeNet Model definition
class Net(nn.Module):
    def __init__(self):
        super(Net, self).__init__()
        self.conv1 = nn.Conv2d(1, 32, 3, 1)
        self.conv2 = nn.Conv2d(32, 64, 3, 1)
        self.dropout1 = nn.Dropout(0.25)
        self.dropout2 = nn.Dropout(0.5)
        self.fc1 = nn.Linear(9216, 128)
        self.fc2 = nn.Linear(128, 10)

    def forward(self, x):
        x = self.conv1(x)
        x = F.relu(x)
        x = self.conv2(x)
        x = F.relu(x)
        x = F.max_pool2d(x, 2)
        x = self.dropout1(x)
        x = torch.flatten(x, 1)
        x = self.fc1(x)
        x = F.relu(x)
        x = self.dropout2(x)
        x = self.fc2(x)
        output = F.log_softmax(x, dim=1)
        return output


# FGSM attack code
def fgsm_attack(image, epsilon, data_grad):
    # Collect the element-wise sign of the data gradient
    sign_data_grad = data_grad.sign()
    # Create the perturbed image by adjusting each pixel of the input image
    perturbed_image = image + epsilon*sign_data_grad
    # Adding clipping to maintain [0,1] range
    perturbed_image = torch.clamp(perturbed_image, 0, 1)
    # Return the perturbed image
    return perturbed_image


# restores the tensors to their original scale
def denorm(batch, mean=[0.1307], std=[0.3081]):
    """
    Convert a batch of tensors to their original scale.
    """
    if isinstance(mean, list):
        mean = torch.tensor(mean).to(device)
    if isinstance(std, list):
        std = torch.tensor(std).to(device)

    return batch * std.view(1, -1, 1, 1) + mean.view(1, -1, 1, 1)


def test(model, device, test_loader, epsilon, log, grads):

    # Accuracy counter
    correct = 0
    adv_examples = []

    # Loop over all examples in test set
    for data, target in test_loader:

        # Send the data and label to the device
        data, target = data.to(device), target.to(device)

        # Set requires_grad attribute of tensor. Important for Attack
        data.requires_grad = True

        # Forward pass the data through the model
        output = model(data)
        init_pred = output.max(1, keepdim=True)[1]  # get the index of the max log-probability

        # If the initial prediction is wrong, don't bother attacking, just move on
        if init_pred.item() != target.item():
            continue

        # Calculate the loss
        loss = F.nll_loss(output, target)

        # Zero all existing gradients
        model.zero_grad()

        # Calculate gradients of model in backward pass
        loss.backward()

        # Collect ``datagrad``
        data_grad = data.grad.data
        grads.append(data_grad.abs().sum().item())

        # Restore the data to its original scale
        data_denorm = denorm(data)

        # Call FGSM Attack
        perturbed_data = fgsm_attack(data_denorm, epsilon, data_grad)

        # Reapply normalization
        perturbed_data_normalized = Normalize((0.1307,), (0.3081,))(perturbed_data)

        # Re-classify the perturbed image
        output = model(perturbed_data_normalized)

        # Check for success
        final_pred = output.max(1, keepdim=True)[1]  # get the index of the max log-probability
        if final_pred.item() == target.item():
            correct += 1
            # Special case for saving 0 epsilon examples
            if epsilon == 0 and len(adv_examples) < 5:
                adv_ex = perturbed_data.squeeze().detach().cpu().numpy()
                adv_examples.append((init_pred.item(), final_pred.item(), adv_ex))
        else:
            # Save some adv examples for visualization later
            if len(adv_examples) < 5:
                adv_ex = perturbed_data.squeeze().detach().cpu().numpy()
                adv_examples.append((init_pred.item(), final_pred.item(), adv_ex))

    # Calculate final accuracy for this epsilon
    final_acc = correct/float(len(test_loader))
    log(f"Epsilon: {epsilon}\tTest Accuracy = {correct} / {len(test_loader)} = {final_acc}")

    # Return the accuracy and an adversarial example
    return final_acc, adv_examples


def synthetic_mnist(n, seed):
    rng = np.random.RandomState(seed)
    labels = rng.randint(0, 10, size=n)
    images = rng.rand(n, 1, 28, 28).astype(np.float32) * 0.2
    for k, c in enumerate(labels):
        images[k, 0, 3 + 2 * c:5 + 2 * c, 4:24] = 1.0
        images[k, 0, 4:24, 3 + c:5 + c] = 0.8
    return torch.tensor(images), torch.tensor(labels)


def main(argv=None):
    parser = argparse.ArgumentParser()
    parser.add_argument('--epsilons', type=float, nargs='+', default=[0, .05, .1, .15, .2, .25, .3])
    parser.add_argument('--n-test', type=int, default=10000)
    parser.add_argument('--n-pretrain', type=int, default=512)
    parser.add_argument('--pretrain-steps', type=int, default=16)
    parser.add_argument('--quiet', action='store_true')
    args = parser.parse_args(argv)
    log = (lambda *a: None) if args.quiet else print

    # Set random seed for reproducibility
    torch.manual_seed(42)

    normalize = Normalize((0.1307,), (0.3081,))
    # (harness) the "pretrained" LeNet: a few Adadelta steps, saved as the tutorial's .pth
    x, y = synthetic_mnist(args.n_pretrain, 0)
    net = Net()
    initial_state = {k: v.clone() for k, v in net.state_dict().items()}
    opt = optim.Adadelta(net.parameters(), lr=1.0)
    step_losses = []
    for i in range(args.pretrain_steps):
        idx = torch.randint(0, args.n_pretrain, (32,))
        opt.zero_grad()
        loss = F.nll_loss(net(normalize(x[idx])), y[idx])
        loss.backward()
        opt.step()
        step_losses.append(loss.item())
    tmp = tempfile.TemporaryDirectory()
    pretrained_model = os.path.join(tmp.name, "lenet_mnist_model.pth")
    torch.save(net.state_dict(), pretrained_model)

    xt, yt = synthetic_mnist(args.n_test, 1)
    test_loader = torch.utils.data.DataLoader(
        torch.utils.data.TensorDataset(normalize(xt), yt), batch_size=1, shuffle=True)

    # Initialize the network
    model = Net().to(device)

    # Load the pretrained model
    model.load_state_dict(torch.load(pretrained_model, map_location=device))

    # Set the model in evaluation mode. In this case this is for the Dropout layers
    model.eval()

    accuracies = []
    examples = []
    grads = []

    # Run test for each epsilon
    for eps in args.epsilons:
        acc, ex = test(model, device, test_loader, eps, log, grads)
        accuracies.append(acc)
        examples.append(ex)
    tmp.cleanup()
    return {"initial_state": initial_state, "step_losses": step_losses, "accuracies": accuracies,
            "examples": examples, "grads": grads}


if __name__ == '__main__':
    main()
