"""pytorch/examples regression/main.py: fit a degree-4 polynomial with one nn.Linear on features
torch.cat([x ** i for i in ...], 1), F.smooth_l1_loss, manual SGD (param.data.add_(-0.1 * param.grad)),
itertools.count until the loss is below 1e-3, and poly_desc formatting 0-d tensors with '{:+.2f}'.
The older version of the same script is also here (--legacy): fc.weight.grad.data.zero_(),
fc.weight.data.add_(-0.1 * fc.weight.grad.data), Variable, loss.data.item()."""
from __future__ import print_function

import argparse
from itertools import count

import torch
import torch.nn.functional as F
from torch.autograd import Variable

POLY_DEGREE = 4


def main(argv=None):
    parser = argparse.ArgumentParser()
    parser.add_argument('--max-batches', type=int, default=0)
    parser.add_argument('--legacy', action='store_true')
    parser.add_argument('--quiet', action='store_true')
    args = parser.parse_args(argv)
    log = (lambda *a: None) if args.quiet else print

    torch.manual_seed(0)
    W_target = torch.randn(POLY_DEGREE, 1) * 5
    b_target = torch.randn(1) * 5

    def make_features(x):
        """Builds features i.e. a matrix with columns [x, x^2, x^3, x^4]."""
        x = x.unsqueeze(1)
        return torch.cat([x ** i for i in range(1, POLY_DEGREE + 1)], 1)

    def f(x):
        """Approximated function."""
        return x.mm(W_target) + b_target.item()

    def poly_desc(W, b):
        """Creates a string description of a polynomial."""
        result = 'y = '
        for i, w in enumerate(W):
            result += '{:+.2f} x^{} '.format(w, i + 1)
        result += '{:+.2f}'.format(b[0])
        return result

    def get_batch(batch_size=32):
        """Builds a batch i.e. (x, f(x)) pair."""
        random = torch.randn(batch_size)
        x = make_features(random)
        y = f(x)
        if args.legacy:
            return Variable(x), Variable(y)
        return x, y

    # Define model
    fc = torch.nn.Linear(W_target.size(0), 1)
    initial_state = {k: v.clone() for k, v in fc.state_dict().items()}
    losses = []

    for batch_idx in count(1):
        # Get data
        batch_x, batch_y = get_batch()

        if args.legacy:
            # Reset gradients
            if fc.weight.grad is not None:
                fc.weight.grad.data.zero_()
                fc.bias.grad.data.zero_()
            # Forward pass
            output = F.smooth_l1_loss(fc(batch_x), batch_y)
            loss = output.data.item()
            # Backward pass
            output.backward()
            # Apply gradients
            for param in fc.parameters():
                param.data.add_(-0.1 * param.grad.data)
        else:
            # Reset gradients
            fc.zero_grad()
            # Forward pass
            output = F.smooth_l1_loss(fc(batch_x), batch_y)
            loss = output.item()
            # Backward pass
            output.backward()
            # Apply gradients
            for param in fc.parameters():
                param.data.add_(-0.1 * param.grad)
        losses.append(loss)

        # Stop criterion
        if loss < 1e-3 or (args.max_batches and batch_idx >= args.max_batches):
            break

    log('Loss: {:.6f} after {} batches'.format(loss, batch_idx))
    learned = poly_desc(fc.weight.view(-1), fc.bias)
    actual = poly_desc(W_target.view(-1), b_target)
    log('==> Learned function:\t' + learned)
    log('==> Actual function:\t' + actual)
    return {"initial_state": initial_state, "step_losses": losses, "batches": batch_idx, "learned": learned,
            "actual": actual}


if __name__ == '__main__':
    main()
