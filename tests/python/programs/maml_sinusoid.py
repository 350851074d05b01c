"""tristandeleu/pytorch-maml on the sinusoid benchmark: torchmeta's MetaModule / MetaSequential /
MetaLinear (a functional forward through F.linear with an OrderedDict of parameters, get_subdict by
name prefix), maml/utils.py's gradient_update_parameters (torch.autograd.grad(loss, params.values(),
create_graph=not first_order), params[name] - step_size * grad), train.py's outer loop (inner losses over
a batch of tasks, outer_loss.div_(batch_size), Adam on the meta parameters), and the first-order variant.
torchmeta's Sinusoid dataset is written inline (amplitude/phase from a NumPy RandomState)."""
import argparse
import re
from collections import OrderedDict

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


# ---------------------------------------------------------------- torchmeta/modules
class MetaModule(nn.Module):
    def __init__(self):
        super(MetaModule, self).__init__()
        self._children_modules_parameters_cache = dict()

    def meta_named_parameters(self, prefix='', recurse=True):
        gen = self._named_members(
            lambda module: module._parameters.items()
            if isinstance(module, MetaModule) else [],
            prefix=prefix, recurse=recurse)
        for elem in gen:
            yield elem

    def meta_parameters(self, recurse=True):
        for name, param in self.meta_named_parameters(recurse=recurse):
            yield param

    def get_subdict(self, params, key=None):
        if params is None:
            return None
        all_names = tuple(params.keys())
        if (key, all_names) not in self._children_modules_parameters_cache:
            if key is None:
                self._children_modules_parameters_cache[(key, all_names)] = all_names
            else:
                key_escape = re.escape(key)
                key_re = re.compile(r'^{0}\.(.+)'.format(key_escape))
                self._children_modules_parameters_cache[(key, all_names)] = [
                    key_re.sub(r'\1', k) for k in all_names if key_re.match(k) is not None]
        names = self._children_modules_parameters_cache[(key, all_names)]
        if not names:
            return None
        return OrderedDict([(name, params[f'{key}.{name}']) for name in names])


class MetaSequential(nn.Sequential, MetaModule):
    __doc__ = nn.Sequential.__doc__

    def forward(self, input, params=None):
        for name, module in self._modules.items():
            if isinstance(module, MetaModule):
                input = module(input, params=self.get_subdict(params, name))
            elif isinstance(module, nn.Module):
                input = module(input)
            else:
                raise TypeError('The module must be either a torch module '
                                '(inheriting from `nn.Module`), or a `MetaModule`. '
                                'Got type: `{0}`'.format(type(module)))
        return input


class MetaLinear(nn.Linear, MetaModule):
    __doc__ = nn.Linear.__doc__

    def forward(self, input, params=None):
        if params is None:
            params = OrderedDict(self.named_parameters())
        bias = params.get('bias', None)
        return F.linear(input, params['weight'], bias)


class ModelMLPSinusoid(MetaModule):
    def __init__(self, hidden_sizes=(40, 40)):
        super(ModelMLPSinusoid, self).__init__()
        layers = [1] + list(hidden_sizes)
        self.features = MetaSequential(OrderedDict([('layer{0}'.format(i + 1), MetaSequential(OrderedDict([
            ('linear', MetaLinear(hidden_size, layers[i + 1], bias=True)),
            ('relu', nn.ReLU())]))) for (i, hidden_size) in enumerate(layers[:-1])]))
        self.classifier = MetaLinear(hidden_sizes[-1], 1, bias=True)

    def forward(self, inputs, params=None):
        features = self.features(inputs, params=self.get_subdict(params, 'features'))
        logits = self.classifier(features, params=self.get_subdict(params, 'classifier'))
        return logits


# ---------------------------------------------------------------- maml/utils.py
def gradient_update_parameters(model, loss, params=None, step_size=0.5, first_order=False):
    if not isinstance(model, MetaModule):
        raise ValueError('The model must be an instance of `torchmeta.modules.'
                         'MetaModule`, got `{0}`'.format(type(model)))

    if params is None:
        params = OrderedDict(model.meta_named_parameters())

    grads = torch.autograd.grad(loss, params.values(), create_graph=not first_order)

    updated_params = OrderedDict()

    if isinstance(step_size, (dict, OrderedDict)):
        for (name, param), grad in zip(params.items(), grads):
            updated_params[name] = param - step_size[name] * grad
    else:
        for (name, param), grad in zip(params.items(), grads):
            updated_params[name] = param - step_size * grad

    return updated_params


# ---------------------------------------------------------------- torchmeta's Sinusoid (inline)
def sinusoid_batch(rng, batch_size, shots, test_shots):
    amplitude = rng.uniform(0.1, 5.0, size=batch_size)
    phase = rng.uniform(0, np.pi, size=batch_size)
    inputs = rng.uniform(-5.0, 5.0, size=(batch_size, shots + test_shots, 1))
    targets = amplitude[:, None, None] * np.sin(inputs - phase[:, None, None])
    x = torch.tensor(inputs, dtype=torch.float32)
    y = torch.tensor(targets, dtype=torch.float32)
    return (x[:, :shots], y[:, :shots]), (x[:, shots:], y[:, shots:])


def main(argv=None):
    parser = argparse.ArgumentParser('MAML')
    parser.add_argument('--num-shots', type=int, default=10)
    parser.add_argument('--num-steps', type=int, default=1)
    parser.add_argument('--step-size', type=float, default=0.01)
    parser.add_argument('--batch-size', type=int, default=8)
    parser.add_argument('--num-batches', type=int, default=30)
    parser.add_argument('--meta-lr', type=float, default=0.001)
    parser.add_argument('--hidden-size', type=int, default=40)
    parser.add_argument('--first-order', action='store_true')
    parser.add_argument('--seed', type=int, default=1)
    parser.add_argument('--quiet', action='store_true')
    args = parser.parse_args(argv)
    log = (lambda *a: None) if args.quiet else print

    torch.manual_seed(args.seed)
    rng = np.random.RandomState(args.seed)
    model = ModelMLPSinusoid(hidden_sizes=[args.hidden_size, args.hidden_size])
    initial_state = {k: v.clone() for k, v in model.state_dict().items()}
    meta_optimizer = torch.optim.Adam(model.parameters(), lr=args.meta_lr)

    step_losses, inner_losses, accs = [], [], []
    model.train()
    for batch_idx in range(args.num_batches):
        model.zero_grad()
        (train_inputs, train_targets), (test_inputs, test_targets) = sinusoid_batch(
            rng, args.batch_size, args.num_shots, args.num_shots)
        outer_loss = torch.tensor(0., device='cpu')
        for task_idx, (train_input, train_target, test_input, test_target) in enumerate(
                zip(train_inputs, train_targets, test_inputs, test_targets)):
            params = None
            for _ in range(args.num_steps):
                train_output = model(train_input, params=params)
                inner_loss = F.mse_loss(train_output, train_target)
                model.zero_grad()
                params = gradient_update_parameters(model, inner_loss, params=params,
                                                    step_size=args.step_size, first_order=args.first_order)
            inner_losses.append(inner_loss.item())
            test_output = model(test_input, params=params)
            outer_loss += F.mse_loss(test_output, test_target)

        outer_loss.div_(args.batch_size)
        outer_loss.backward()
        meta_optimizer.step()
        step_losses.append(outer_loss.item())
        log('batch {} loss {:.4f}'.format(batch_idx, outer_loss.item()))

    # adaptation curve on a fresh task
    (xa, ya), (xt, yt) = sinusoid_batch(rng, 1, args.num_shots, 50)
    params = None
    curve = []
    for _ in range(5):
        loss = F.mse_loss(model(xa[0], params=params), ya[0])
        params = gradient_update_parameters(model, loss, params=params, step_size=args.step_size, first_order=True)
        with torch.no_grad():
            curve.append(F.mse_loss(model(xt[0], params=params), yt[0]).item())
    return {"initial_state": initial_state, "step_losses": step_losses, "inner_losses": inner_losses,
            "curve": curve, "final_state": model.state_dict(),
            "names": [n for n, _ in model.meta_named_parameters()]}


if __name__ == '__main__':
    main()
