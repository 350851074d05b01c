"""functional_call (torch.nn.utils.stateless, torch.func): calls a module with some of its parameters
and buffers replaced by the given tensors, which gradients then flow to; the module is restored after."""
import contextlib




def _split(module, name):
    *path, leaf = name.split(".")
    sub = module
    for p in path:
        sub = getattr(sub, p)
    return sub, leaf


@contextlib.contextmanager
def _reparametrize(module, parameters_and_buffers, strict=False):
    if strict:
        expected = set(dict(module.named_parameters())) | set(dict(module.named_buffers()))
        given = set(parameters_and_buffers)
        missing, unexpected = sorted(expected - given), sorted(given - expected)
        if missing or unexpected:
            msg = "Error(s) in reparametrizing for {}:\n\t".format(module._get_name())
            parts = []
            if unexpected:
                parts.append("Unexpected key(s): {}.".format(", ".join(map(repr, unexpected))))
            if missing:
                parts.append("Missing key(s): {}.".format(", ".join(map(repr, missing))))
            raise RuntimeError(msg + "\n\t".join(parts))
    saved = []
    try:
        for name, tensor in parameters_and_buffers.items():
            sub, leaf = _split(module, name)
            for store_name in ("_parameters", "_buffers"):
                store = sub.__dict__[store_name]
                if leaf in store:
                    saved.append((store, leaf, store[leaf], True))
                    store[leaf] = tensor
                    break
            else:
                saved.append((sub.__dict__, leaf, sub.__dict__.get(leaf), leaf in sub.__dict__))
                sub.__dict__[leaf] = tensor
        yield
    finally:
        for store, leaf, old, existed in reversed(saved):
            if existed:
                store[leaf] = old
            else:
                store.pop(leaf, None)


def functional_call(module, parameters_and_buffers, args=(), kwargs=None, *, tie_weights=True, strict=False):
    """module(*args, **kwargs) with module's named parameters and buffers taken from the dict (or the
    tuple of dicts, as torch.func's) where it names them."""
    if isinstance(parameters_and_buffers, (list, tuple)):
        merged = {}
        for d in parameters_and_buffers:
            for k, v in d.items():
                if k in merged:
                    raise ValueError(f"{k} appeared in multiple dictionaries; behavior of functional call is "
                                     "ambiguous")
                merged[k] = v
        parameters_and_buffers = merged
    if kwargs is None:
        kwargs = {}
    if not isinstance(args, tuple):
        args = (args,)
    with _reparametrize(module, parameters_and_buffers, strict):
        return module(*args, **kwargs)


__all__ = ["functional_call"]

