"""Tensors nested in tuples, lists (named tuples included) and dicts, flattened to a list and rebuilt
(torch.utils._pytree's tree_flatten / tree_unflatten): what kiln.func's transforms and
kiln.utils.checkpoint pass through autograd. Anything else is a leaf kept as it is; containers keep
their type (an OrderedDict stays one)."""
from .. import _C

__all__ = ["tree_flatten", "tree_unflatten"]


def tree_flatten(tree):
    """(the tensors in tree, in order; a spec tree_unflatten rebuilds tree from)."""
    if isinstance(tree, _C.TensorBase):
        return [tree], None
    if isinstance(tree, (tuple, list)):
        leaves, specs = [], []
        for t in tree:
            lv, sp = tree_flatten(t)
            leaves += lv
            specs.append((len(lv), sp))
        return leaves, (type(tree), specs)
    if isinstance(tree, dict):
        leaves, specs = [], []
        for k, t in tree.items():
            lv, sp = tree_flatten(t)
            leaves += lv
            specs.append((k, len(lv), sp))
        return leaves, (type(tree), specs)
    return [], ("leaf", tree)


def tree_unflatten(leaves, spec):
    """The tree tree_flatten gave `spec` for, with `leaves` in place of its tensors (a leaf may be any
    value, a tuple of tensors included)."""
    if spec is None:
        return leaves[0]
    kind, specs = spec
    if kind == "leaf":
        return specs
    if issubclass(kind, dict):
        out, i = {}, 0
        for k, n, sp in specs:
            out[k] = tree_unflatten(leaves[i:i + n], sp)
            i += n
        return out if kind is dict else kind(out)
    out, i = [], 0
    for n, sp in specs:
        out.append(tree_unflatten(leaves[i:i + n], sp))
        i += n
    return kind(*out) if hasattr(kind, "_fields") else kind(out)  # named tuples take fields
