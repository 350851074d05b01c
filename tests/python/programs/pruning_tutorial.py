"""The PyTorch "Pruning Tutorial" (intermediate/pruning_tutorial.py) made into a prune-then-fine-tune run, with the
iterative magnitude pruning loop of the lottery-ticket re-implementations: LeNet, prune.random_unstructured(module,
name="weight", amount=0.3), prune.l1_unstructured(module, name="bias", amount=3), prune.ln_structured(module,
name="weight", amount=0.5, n=2, dim=0) on top (a PruningContainer), list(module.named_parameters()) /
named_buffers() showing weight_orig / weight_mask, module._forward_pre_hooks, prune.remove making it permanent,
prune.global_unstructured(parameters_to_prune, pruning_method=prune.L1Unstructured, amount=0.2) with the global
sparsity printout (torch.sum(module.weight == 0) / module.weight.nelement()), a custom
prune.BasePruningMethod (PRUNING_TYPE = 'unstructured', compute_mask keeping every other entry) applied by
FooBarPruningMethod.apply, prune.is_pruned, the state_dict of a pruned model, and SGD fine-tuning through
weight_orig with the masks fixed, re-pruned each round."""
import argparse

import torch
import torch.nn.functional as F
import torch.nn.utils.prune as prune
from torch import nn


class LeNet(nn.Module):
    def __init__(self):
        super(LeNet, self).__init__()
        self.conv1 = nn.Conv2d(1, 6, 3)
        self.conv2 = nn.Conv2d(6, 16, 3)
        self.fc1 = nn.Linear(16 * 5 * 5, 120)
        self.fc2 = nn.Linear(120, 84)
        self.fc3 = nn.Linear(84, 10)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv1(x)), (2, 2))
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        x = x.view(-1, int(x.nelement() / x.shape[0]))
        x = F.relu(self.fc1(x))
        x = F.relu(self.fc2(x))
        x = self.fc3(x)
        return x


class FooBarPruningMethod(prune.BasePruningMethod):
    """Prune every other entry in a tensor"""
    PRUNING_TYPE = 'unstructured'

    def compute_mask(self, t, default_mask):
        mask = default_mask.clone()
        mask.view(-1)[::2] = 0
        return mask


def foobar_unstructured(module, name):
    FooBarPruningMethod.apply(module, name)
    return module


def sparsity(model):
    out = []
    for name in ("conv1", "conv2", "fc1", "fc2", "fc3"):
        w = getattr(model, name).weight
        out.append(100. * float(torch.sum(w == 0)) / float(w.nelement()))
    return out


def main(argv=None):
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--steps", type=int, default=5)
    parser.add_argument("--quiet", action="store_true")
    args = parser.parse_args(argv)
    log = (lambda *a: None) if args.quiet else print
    torch.manual_seed(42)
    model = LeNet()
    initial_state = {k: v.clone() for k, v in model.state_dict().items()}
    module = model.conv1
    log(list(module.named_parameters()))
    prune.random_unstructured(module, name="weight", amount=0.3)
    names_after_random = ([n for n, _ in module.named_parameters()], [n for n, _ in module.named_buffers()])
    prune.l1_unstructured(module, name="bias", amount=3)
    n_hooks = len(module._forward_pre_hooks)
    prune.ln_structured(module, name="weight", amount=0.5, n=2, dim=0)
    for hook in module._forward_pre_hooks.values():
        if hook._tensor_name == "weight":
            history = [type(h).__name__ for h in hook]
            break
    conv1_mask = module.weight_mask.clone()
    conv1_bias_mask = module.bias_mask.clone()
    sd_keys = list(model.state_dict().keys())
    prune.remove(module, 'weight')
    prune.remove(module, 'bias')
    removed_names = [n for n, _ in module.named_parameters()]
    parameters_to_prune = ((model.conv2, 'weight'), (model.fc1, 'weight'), (model.fc2, 'weight'),
                           (model.fc3, 'weight'))
    g = torch.Generator().manual_seed(0)
    x = torch.randn(64, 1, 28 // 2 + 4, 28 // 2 + 4, generator=g)[:, :, :16, :16]
    x = torch.randn(64, 1, 16, 16, generator=g) + 0 * x
    y = torch.randint(0, 10, (64,), generator=g)
    x = F.pad(x, (8, 8, 8, 8))[:, :, 2:-2, 2:-2]
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    step_losses, sparsities = [], []
    for r in range(args.rounds):
        prune.global_unstructured(parameters_to_prune, pruning_method=prune.L1Unstructured, amount=0.2)
        sparsities.append(sparsity(model))
        optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
        for step in range(args.steps):
            b = (step * 16) % 64
            optimizer.zero_grad()
            loss = F.cross_entropy(model(x[b:b + 16]), y[b:b + 16])
            loss.backward()
            optimizer.step()
            step_losses.append(loss.item())
        log("round", r, "sparsity", sparsities[-1], "loss", step_losses[-1])
        pruned = [prune.is_pruned(m) for m in (model.conv2, model.fc3)]
    for m, name in parameters_to_prune:
        prune.remove(m, name)
    foobar_unstructured(model.fc3, name='bias')
    fc3_bias_mask = model.fc3.bias_mask.clone()
    with torch.no_grad():
        out = model(x[:4])
    return {"initial_state": initial_state, "step_losses": step_losses, "sparsities": sparsities,
            "names_after_random": names_after_random, "n_hooks": n_hooks, "history": history,
            "conv1_mask": conv1_mask, "conv1_bias_mask": conv1_bias_mask, "sd_keys": sd_keys,
            "removed_names": removed_names, "pruned": pruned, "fc3_bias_mask": fc3_bias_mask, "out": out,
            "final_keys": list(model.state_dict().keys())}


if __name__ == "__main__":
    main()
