"""Loads a program written for torch with its torch imports pointed at another library, as the
held-out checks do: `import torch` -> `import kiln as torch`, `import torch.nn as nn` ->
`import kiln.nn as nn`, `from torch.utils.data import X` -> `from kiln.utils.data import X`.

    mod = load_program("word_lm", "kiln")   # or "torch": the unchanged program
    result = mod.main(["--epochs", "1"])

The torch the programs run under is Debian's 1.13, whose zero_grad() default is set_to_none=False;
kiln follows torch 2.x (set_to_none=True: a parameter a step does not reach keeps grad None, and the
optimizers skip it). torch2_zero_grad_default() gives the oracle torch 2.x's default, so a script
with such a parameter (the DynamicNet of "Learning PyTorch with Examples") is compared with what
torch 2.x computes.

The module is registered in sys.modules under a name of its own (word_lm__kiln), so classes it
defines pickle and unpickle by name (torch.save(model, f) / torch.load(f, weights_only=False)).
"""
import importlib.util
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def swap_imports(source, lib):
    if lib == "torch":
        return source
    source = re.sub(r"\bimport torch\.", "import %s." % lib, source)
    source = re.sub(r"\bfrom torch\b", "from %s" % lib, source)
    source = re.sub(r"\bimport torch\b(?! as)", "import %s as torch" % lib, source)
    source = re.sub(r"\bimport torch as\b", "import %s as" % lib, source)
    return source


def torch2_zero_grad_default():
    """Makes torch 1.13's Optimizer.zero_grad and Module.zero_grad default to set_to_none=True, as
    torch 2.x's do (idempotent)."""
    import torch
    for cls in (torch.optim.Optimizer, torch.nn.Module):
        original = cls.zero_grad
        if getattr(original, "_kiln_torch2_default", False):
            continue

        def zero_grad(self, set_to_none=True, _original=original):
            return _original(self, set_to_none=set_to_none)
        zero_grad._kiln_torch2_default = True
        cls.zero_grad = zero_grad


def load_program(name, lib):
    if lib == "torch":
        torch2_zero_grad_default()
    path = os.path.join(HERE, name + ".py")
    with open(path, encoding="utf8") as f:
        source = swap_imports(f.read(), lib)
    modname = "%s__%s" % (name, lib)
    spec = importlib.util.spec_from_loader(modname, loader=None, origin=path)
    module = importlib.util.module_from_spec(spec)
    module.__file__ = path
    sys.modules[modname] = module
    exec(compile(source, path, "exec"), module.__dict__)
    return module
