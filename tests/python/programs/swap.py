"""Loads a program written for torch with its torch imports pointed at another library, as the
held-out checks do: `import torch` -> `import kiln as torch`, `import torch.nn as nn` ->
`import kiln.nn as nn`, `from torch.utils.data import X` -> `from kiln.utils.data import X`.

    mod = load_program("word_lm", "kiln")   # or "torch": the unchanged program
    result = mod.main(["--epochs", "1"])

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


def load_program(name, lib):
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
