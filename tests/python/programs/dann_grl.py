"""fungtion/DANN (domain-adversarial training of neural networks): functions.py's ReverseLayerF (a
torch.autograd.Function whose forward returns x.view_as(x) and stores ctx.alpha, backward grad_output.neg() *
ctx.alpha, None), model.py's CNNModel of nn.Sequential()s filled by add_module('f_conv1', ...) with
BatchNorm2d / MaxPool2d / ReLU(True) / Dropout2d and a LogSoftmax(dim=1) class and domain head, main.py's loop:
p = float(i + epoch * len_dataloader) / n_epoch / len_dataloader, alpha = 2. / (1. + np.exp(-10 * p)) - 1,
the source batch's class and domain NLLLoss, the target batch's domain loss, torch.zeros(batch_size).long()
labels, and test.py's accuracy (pred.eq(t_label.data.view_as(pred)).cpu().sum()). MNIST / MNIST-M are
synthetic 28x28 images: the target domain is the source recoloured with noise."""
import argparse

import numpy as np
import torch
import torch.nn as nn
import torch.optim as optim
import torch.utils.data
from torch.autograd import Function


class ReverseLayerF(Function):

    @staticmethod
    def forward(ctx, x, alpha):
        ctx.alpha = alpha

        return x.view_as(x)

    @staticmethod
    def backward(ctx, grad_output):
        output = grad_output.neg() * ctx.alpha

        return output, None


class CNNModel(nn.Module):

    def __init__(self):
        super(CNNModel, self).__init__()
        self.feature = nn.Sequential()
        self.feature.add_module('f_conv1', nn.Conv2d(3, 16, kernel_size=5))
        self.feature.add_module('f_bn1', nn.BatchNorm2d(16))
        self.feature.add_module('f_pool1', nn.MaxPool2d(2))
        self.feature.add_module('f_relu1', nn.ReLU(True))
        self.feature.add_module('f_conv2', nn.Conv2d(16, 12, kernel_size=5))
        self.feature.add_module('f_bn2', nn.BatchNorm2d(12))
        self.feature.add_module('f_drop1', nn.Dropout2d())
        self.feature.add_module('f_pool2', nn.MaxPool2d(2))
        self.feature.add_module('f_relu2', nn.ReLU(True))

        self.class_classifier = nn.Sequential()
        self.class_classifier.add_module('c_fc1', nn.Linear(12 * 4 * 4, 32))
        self.class_classifier.add_module('c_bn1', nn.BatchNorm1d(32))
        self.class_classifier.add_module('c_relu1', nn.ReLU(True))
        self.class_classifier.add_module('c_drop1', nn.Dropout())
        self.class_classifier.add_module('c_fc2', nn.Linear(32, 32))
        self.class_classifier.add_module('c_bn2', nn.BatchNorm1d(32))
        self.class_classifier.add_module('c_relu2', nn.ReLU(True))
        self.class_classifier.add_module('c_fc3', nn.Linear(32, 10))
        self.class_classifier.add_module('c_softmax', nn.LogSoftmax(dim=1))

        self.domain_classifier = nn.Sequential()
        self.domain_classifier.add_module('d_fc1', nn.Linear(12 * 4 * 4, 32))
        self.domain_classifier.add_module('d_bn1', nn.BatchNorm1d(32))
        self.domain_classifier.add_module('d_relu1', nn.ReLU(True))
        self.domain_classifier.add_module('d_fc2', nn.Linear(32, 2))
        self.domain_classifier.add_module('d_softmax', nn.LogSoftmax(dim=1))

    def forward(self, input_data, alpha):
        input_data = input_data.expand(input_data.data.shape[0], 3, 28, 28)
        feature = self.feature(input_data)
        feature = feature.view(-1, 12 * 4 * 4)
        reverse_feature = ReverseLayerF.apply(feature, alpha)
        class_output = self.class_classifier(feature)
        domain_output = self.domain_classifier(reverse_feature)

        return class_output, domain_output


def make_domains(n, seed):
    rng = np.random.RandomState(seed)
    labels = rng.randint(0, 10, n)
    yy, xx = np.mgrid[0:28, 0:28]
    src = np.zeros((n, 1, 28, 28), np.float32)
    for i, c in enumerate(labels):
        src[i, 0] = np.exp(-((yy - 5 - 2 * c) ** 2 + (xx - 20 + c) ** 2) / 10.0)
    src += 0.1 * rng.rand(n, 1, 28, 28).astype(np.float32)
    colours = rng.rand(n, 3, 1, 1).astype(np.float32)
    tgt = np.abs(src * 2 - colours) + 0.2 * rng.rand(n, 3, 28, 28).astype(np.float32)
    return (torch.utils.data.TensorDataset(torch.from_numpy(src), torch.from_numpy(labels)),
            torch.utils.data.TensorDataset(torch.from_numpy(tgt.astype(np.float32)), torch.from_numpy(labels)))


def test(my_net, dataset, alpha=0):
    my_net = my_net.eval()
    dataloader = torch.utils.data.DataLoader(dataset=dataset, batch_size=32, shuffle=False, num_workers=0)
    n_total = 0
    n_correct = 0
    with torch.no_grad():
        for t_img, t_label in dataloader:
            class_output, _ = my_net(input_data=t_img, alpha=alpha)
            pred = class_output.data.max(1, keepdim=True)[1]
            n_correct += pred.eq(t_label.data.view_as(pred)).cpu().sum()
            n_total += len(t_label)
    return n_correct.data.numpy() * 1.0 / n_total


def main(argv=None):
    parser = argparse.ArgumentParser()
    parser.add_argument('--lr', type=float, default=1e-3)
    parser.add_argument('--batch_size', type=int, default=32)
    parser.add_argument('--n_epoch', type=int, default=2)
    parser.add_argument('--n', type=int, default=96)
    parser.add_argument('--quiet', action='store_true')
    args = parser.parse_args(argv)
    log = (lambda *a: None) if args.quiet else print

    manual_seed = 42
    torch.manual_seed(manual_seed)
    dataset_source, dataset_target = make_domains(args.n, 0)
    dataloader_source = torch.utils.data.DataLoader(dataset=dataset_source, batch_size=args.batch_size,
                                                    shuffle=True, num_workers=0)
    dataloader_target = torch.utils.data.DataLoader(dataset=dataset_target, batch_size=args.batch_size,
                                                    shuffle=True, num_workers=0)

    my_net = CNNModel()
    initial_state = {k: v.clone() for k, v in my_net.state_dict().items()}
    optimizer = optim.Adam(my_net.parameters(), lr=args.lr)
    loss_class = torch.nn.NLLLoss()
    loss_domain = torch.nn.NLLLoss()
    for p in my_net.parameters():
        p.requires_grad = True

    step_losses, alphas, err_parts, accs = [], [], [], []
    for epoch in range(args.n_epoch):
        len_dataloader = min(len(dataloader_source), len(dataloader_target))
        data_source_iter = iter(dataloader_source)
        data_target_iter = iter(dataloader_target)

        for i in range(len_dataloader):
            my_net.train()
            p = float(i + epoch * len_dataloader) / args.n_epoch / len_dataloader
            alpha = 2. / (1. + np.exp(-10 * p)) - 1

            # training model using source data
            data_source = next(data_source_iter)
            s_img, s_label = data_source

            my_net.zero_grad()
            batch_size = len(s_label)

            domain_label = torch.zeros(batch_size).long()

            class_output, domain_output = my_net(input_data=s_img, alpha=alpha)
            err_s_label = loss_class(class_output, s_label)
            err_s_domain = loss_domain(domain_output, domain_label)

            # training model using target data
            data_target = next(data_target_iter)
            t_img, _ = data_target

            batch_size = len(t_img)

            domain_label = torch.ones(batch_size).long()

            _, domain_output = my_net(input_data=t_img, alpha=alpha)
            err_t_domain = loss_domain(domain_output, domain_label)
            err = err_t_domain + err_s_domain + err_s_label
            err.backward()
            optimizer.step()

            step_losses.append(err.item())
            alphas.append(float(alpha))
            err_parts.append([err_s_label.data.cpu().numpy().item(), err_s_domain.data.cpu().numpy().item(),
                              err_t_domain.data.cpu().item()])
            log('epoch: %d, [iter: %d / all %d], err_s_label: %f, err_s_domain: %f, err_t_domain: %f'
                % (epoch, i + 1, len_dataloader, err_s_label.data.cpu().numpy(),
                   err_s_domain.data.cpu().numpy(), err_t_domain.data.cpu().item()))
        accs.append([test(my_net, dataset_source), test(my_net, dataset_target)])

    # the reversal itself: d/dx of ReverseLayerF.apply(x, a).sum() is -a everywhere
    x = torch.ones(3, requires_grad=True)
    ReverseLayerF.apply(x * 2, 0.25).pow(2).sum().backward()
    return {"initial_state": initial_state, "step_losses": step_losses, "alphas": alphas, "err_parts": err_parts,
            "accs": accs, "grl_grad": x.grad.clone()}


if __name__ == "__main__":
    main()
