"""kiln.func: torch.func's (functorch's) function transforms, computed eagerly with kiln.autograd.grad.

``grad``, ``grad_and_value``, ``vjp``, ``jvp``, ``jacrev``, ``jacfwd``, ``hessian``, ``vmap`` and
``functional_call`` take and return what torch.func's do, and nest (``grad(grad(f))``, ``jacrev(jacrev(f))``,
``hessian``). How they differ from torch's, which transform a function level by level:

* Each transform differentiates with reverse-mode autograd: it makes its inputs fresh leaves that require
  grad, runs the function with grad mode on and calls ``kiln.autograd.grad(create_graph=True)``.
  ``jvp`` and ``jacfwd`` use the double-backward trick (as ``torch.autograd.functional.jvp``), so they
  need the function to be twice differentiable in kiln, and give the same values as forward mode.
* Results are detached unless an input they were taken at requires grad (a nested transform, or a
  tensor of the caller's graph), so a top-level ``grad(f)(x)`` is a plain tensor. A gradient taken at
  inputs that do not require grad does not carry a graph back to tensors ``f`` captures (torch's does).
* ``vmap`` runs the function once per index of the mapped dimension and stacks the results (what
  torch's vmap does for operators without a batching rule), so it is a loop, not one batched call;
  ``randomness='different'`` follows from the loop, ``'same'`` is refused (NotImplementedError).
"""
import functools

from .. import _C
from ..autograd.grad_mode import enable_grad
from ..utils._pytree import tree_flatten as _flatten, tree_unflatten as _unflatten

__all__ = ["grad", "grad_and_value", "vjp", "jvp", "jacrev", "jacfwd", "hessian", "vmap", "functional_call"]


def _is_tensor(x):
    return isinstance(x, _C.TensorBase)


def _non_tensor_leaf(spec):
    """The first non-tensor leaf of a tree_flatten spec, as (value,); None when every leaf is a tensor."""
    if spec is None:
        return None
    kind, specs = spec
    if kind == "leaf":
        return (specs,)
    for entry in specs:
        found = _non_tensor_leaf(entry[-1])
        if found is not None:
            return found
    return None


def _prepare(x):
    """A new tensor object to differentiate at: still connected to x's graph when x requires grad."""
    if x.requires_grad:
        return x.view_as(x)
    return x.detach().requires_grad_(True)


def _grads(outputs, inputs, grad_outputs, retain_graph=True):
    from ..autograd import grad as autograd_grad
    pairs = [(o, g) for o, g in zip(outputs, grad_outputs) if o.requires_grad]
    if not pairs:
        return [_C.zeros_like(i) for i in inputs]
    res = autograd_grad([o for o, _ in pairs], list(inputs), [g for _, g in pairs], retain_graph=retain_graph,
                        create_graph=True, allow_unused=True)
    return [_C.zeros_like(i) if r is None else r for r, i in zip(res, inputs)]


def _finish(tree, keep_graph):
    if keep_graph:
        return tree
    leaves, spec = _flatten(tree)
    return _unflatten([t.detach() for t in leaves], spec)


def _argnums_tuple(argnums, nargs, fn_name):
    nums = argnums if isinstance(argnums, tuple) else (argnums,)
    if not nums:
        raise RuntimeError(f"{fn_name}: argnums must be non-empty")
    for a in nums:
        if not isinstance(a, int):
            raise RuntimeError(f"{fn_name}: argnums must be int or Tuple[int, ...], got: {type(a)}")
        if not -nargs <= a < nargs:
            raise RuntimeError(f"Got argnum={a}, but only {nargs} positional inputs")
    if len(set(a % nargs for a in nums)) != len(nums):
        raise RuntimeError(f"argnums elements must be unique, got {argnums}")
    return tuple(a % nargs for a in nums)


def _diff_args(args, argnums, fn_name):
    """The args with those at argnums replaced by fresh leaves; the flat leaves and their specs."""
    nums = _argnums_tuple(argnums, len(args), fn_name)
    args = list(args)
    flat, specs, keep = [], [], False
    for a in nums:
        leaves, spec = _flatten(args[a])
        bad = _non_tensor_leaf(spec)
        if bad is not None:
            raise ValueError(f"Thing passed to transform API must be Tensor, got {type(bad[0])}")
        keep = keep or any(t.requires_grad for t in leaves)
        prepared = [_prepare(t) for t in leaves]
        args[a] = _unflatten(prepared, spec)
        flat.append(prepared)
        specs.append(spec)
    return args, nums, flat, specs, keep


def grad_and_value(func, argnums=0, has_aux=False):
    """torch.func.grad_and_value: f(*args) -> (gradient of f's scalar output at args[argnums], f's output)."""
    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        with enable_grad():
            args, nums, flat, specs, keep = _diff_args(args, argnums, "grad_and_value")
            out = func(*args, **kwargs)
            aux = None
            if has_aux:
                if not (isinstance(out, tuple) and len(out) == 2):
                    raise RuntimeError("grad_and_value(f)(*args): output of function f should be a tuple: "
                                       "(output, aux) if has_aux is True")
                out, aux = out
            if not _is_tensor(out):
                raise RuntimeError(f"grad_and_value(f)(*args): Expected f(*args) to return a Tensor, got {type(out)}")
            if out.dim() != 0:
                raise RuntimeError("grad_and_value(f)(*args): Expected f(*args) to return a scalar Tensor, "
                                   f"got tensor with {out.dim()} dims. Maybe you wanted to use the vjp or "
                                   "jacrev APIs instead?")
            all_inputs = [t for leaves in flat for t in leaves]
            grads = _grads([out], all_inputs, [_C.ones_like(out)])
        i, results = 0, []
        for leaves, spec in zip(flat, specs):
            results.append(_unflatten(grads[i:i + len(leaves)], spec))
            i += len(leaves)
        g = results[0] if not isinstance(argnums, tuple) else tuple(results)
        g = _finish(g, keep)
        out = _finish(out, keep)
        if has_aux:
            return g, (out, _finish(aux, keep) if _flatten(aux)[0] else aux)
        return g, out
    return wrapper


def grad(func, argnums=0, has_aux=False):
    """torch.func.grad: the gradient of f's scalar output with respect to args[argnums] (a tuple for a
    tuple of argnums; with has_aux=True, (gradient, aux))."""
    gv = grad_and_value(func, argnums, has_aux)

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        g, value = gv(*args, **kwargs)
        if has_aux:
            return g, value[1]
        return g
    return wrapper


def _check_float_outputs(leaves, fn_name):
    for o in leaves:
        if not _is_tensor(o):
            raise RuntimeError(f"{fn_name}: Expected f(*primals) to return only tensors, got unsupported type "
                               f"{type(o)}")
        if not o.is_floating_point():
            raise RuntimeError(f"{fn_name}: All outputs of f must be floating-point or complex Tensors, got Tensor "
                               f"with dtype {o.dtype}")


def vjp(func, *primals, has_aux=False):
    """torch.func.vjp: (func(*primals), vjp_fn[, aux]); vjp_fn(cotangents) is the tuple of vector-Jacobian
    products, one per primal."""
    keep = any(t.requires_grad for p in primals for t in _flatten(p)[0])
    with enable_grad():
        flat, specs, args = [], [], []
        for p in primals:
            leaves, spec = _flatten(p)
            prepared = [_prepare(t) for t in leaves]
            flat.append(prepared)
            specs.append(spec)
            args.append(_unflatten(prepared, spec))
        out = func(*args)
        aux = None
        if has_aux:
            if not (isinstance(out, tuple) and len(out) == 2):
                raise RuntimeError("vjp(f, *primals): output of function f should be a tuple: (output, aux) "
                                   "if has_aux is True")
            out, aux = out
    out_leaves, out_spec = _flatten(out)
    if not out_leaves:
        raise RuntimeError(f"vjp(f, *primals): Expected f to be a function that has non-empty output, got {out}")
    _check_float_outputs(out_leaves, "vjp(f, ...)")

    def vjp_fn(*cotangents):
        ct = cotangents[0] if len(cotangents) == 1 else cotangents
        ct_leaves, _ = _flatten(ct)
        if len(ct_leaves) != len(out_leaves):
            raise RuntimeError("Expected pytree structure of cotangents to be the same as pytree structure of "
                               "outputs to the function")
        for c, o in zip(ct_leaves, out_leaves):
            if c.shape != o.shape:
                raise RuntimeError(f"Mismatch in shape: grad_output[0] has a shape of {c.shape} and output[0] "
                                   f"has a shape of {o.shape}.")
        with enable_grad():
            all_inputs = [t for leaves in flat for t in leaves]
            grads = _grads(out_leaves, all_inputs, ct_leaves)
        i, results = 0, []
        for leaves, spec in zip(flat, specs):
            results.append(_unflatten(grads[i:i + len(leaves)], spec))
            i += len(leaves)
        return _finish(tuple(results), keep or any(c.requires_grad for c in ct_leaves))

    result = (_finish(out, keep), vjp_fn)
    if has_aux:
        return result + (_finish(aux, keep) if _flatten(aux)[0] else aux,)
    return result


def jvp(func, primals, tangents, *, strict=False, has_aux=False):
    """torch.func.jvp: (func(*primals), the Jacobian-vector product with tangents), by the double-backward trick."""
    if not isinstance(primals, tuple):
        raise RuntimeError("jvp(f, primals, tangents): Expected primals to be a tuple. "
                           "E.g. it should be valid to call f(*primals).")
    if not isinstance(tangents, tuple) or len(tangents) != len(primals):
        raise RuntimeError("jvp(f, primals, tangents): Expected primals and tangents to have the same python "
                           "structure. For example, if primals is a tuple of 3 tensors, tangents also must be. "
                           f"Got primals with structure {primals} and tangents with structure {tangents}")
    primal_leaves = [t for p in primals for t in _flatten(p)[0]]
    if not primal_leaves:
        raise RuntimeError("jvp(f, primals, tangents): Expected primals to contain at least one Tensor.")
    for kind, leaves in (("primal", primal_leaves), ("tangent", [t for p in tangents for t in _flatten(p)[0]])):
        for t in leaves:  # torch's forward AD (make_dual)
            if _is_tensor(t) and not t.is_floating_point():
                raise ValueError(f"Expected {kind} to be floating point or complex, but got: {t.dtype}")
    keep = any(t.requires_grad for p in primals + tangents for t in _flatten(p)[0])
    aux_box = []

    def f(*args):
        out = func(*args)
        if has_aux:
            out, aux = out
            aux_box.append(aux)
        return out

    out, vjp_fn = vjp(f, *primals)
    with enable_grad():
        out_leaves, out_spec = _flatten(out)
        # vjp_fn is linear in its cotangents: differentiate it with respect to them.
        us = [_C.zeros_like(o).requires_grad_(True) for o in out_leaves]
        back = vjp_fn(_unflatten(us, out_spec))
        back_leaves = _flatten(back)[0]
        tan_leaves = [t for tan in tangents for t in _flatten(tan)[0]]
        res = _grads(back_leaves, us, tan_leaves)
    result = (out, _finish(_unflatten(res, out_spec), keep))
    if has_aux:
        return result + (aux_box[0],)
    return result


def jacrev(func, argnums=0, *, has_aux=False, chunk_size=None):
    """torch.func.jacrev: the Jacobian of func's outputs with respect to args[argnums], one reverse pass per
    output element; output.shape + input.shape per (output, input) pair, nested as the outputs and argnums."""
    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        with enable_grad():
            args, nums, flat, specs, keep = _diff_args(args, argnums, "jacrev")
            out = func(*args, **kwargs)
            aux = None
            if has_aux:
                if not (isinstance(out, tuple) and len(out) == 2):
                    raise RuntimeError("vjp(f, *primals): output of function f should be a tuple: (output, aux) "
                                       "if has_aux is True")
                out, aux = out
            out_leaves, out_spec = _flatten(out)
            _check_float_outputs(out_leaves, "vjp(f, ...)")
            all_inputs = [t for leaves in flat for t in leaves]
            per_output = []
            for o in out_leaves:
                flat_o = o.reshape(-1)
                rows = [[] for _ in all_inputs]
                for j in range(o.numel()):
                    g = _grads([flat_o[j]], all_inputs, [_C.ones_like(flat_o[j])])
                    for r, gi in zip(rows, g):
                        r.append(gi)
                jacs = []
                for r, inp in zip(rows, all_inputs):
                    shape = list(o.shape) + list(inp.shape)
                    jacs.append((_C.stack(r, 0) if r else _C.zeros([0] + list(inp.shape), dtype=inp.dtype))
                                .reshape(shape))
                i, per_arg = 0, []
                for leaves, spec in zip(flat, specs):
                    per_arg.append(_unflatten(jacs[i:i + len(leaves)], spec))
                    i += len(leaves)
                per_output.append(per_arg[0] if not isinstance(argnums, tuple) else tuple(per_arg))
        if out_spec is None:
            result = per_output[0]
        else:
            result = _unflatten(per_output, out_spec)
        result = _finish_any(result, keep)
        if has_aux:
            return result, _finish(aux, keep) if _flatten(aux)[0] else aux
        return result
    return wrapper


def _finish_any(tree, keep):
    if keep:
        return tree
    if _is_tensor(tree):
        return tree.detach()
    if isinstance(tree, dict):
        return {k: _finish_any(v, keep) for k, v in tree.items()}
    if isinstance(tree, (tuple, list)):
        return type(tree)(_finish_any(v, keep) for v in tree)
    return tree


def jacfwd(func, argnums=0, has_aux=False, *, randomness="error"):
    """torch.func.jacfwd: the same Jacobian as jacrev (kiln computes both in reverse mode)."""
    return jacrev(func, argnums, has_aux=has_aux)


def hessian(func, argnums=0):
    """torch.func.hessian: jacfwd(jacrev(func)), here the Jacobian of the Jacobian in reverse mode."""
    return jacfwd(jacrev(func, argnums), argnums)


def vmap(func, in_dims=0, out_dims=0, randomness="error", *, chunk_size=None):
    """torch.func.vmap, as a loop: func runs once per index of the mapped dims and the results are stacked
    along out_dims. in_dims: an int or None for every argument, or a tuple with one per argument (an int,
    None, or a nested structure matching the argument)."""
    if randomness not in ("error", "different", "same"):
        raise RuntimeError(f"Only allowed values for randomness are 'error', 'different', or 'same'. Got {randomness}")
    if randomness == "same":
        raise NotImplementedError("kiln.func.vmap runs the function once per batch element: randomness='same' "
                                  "is not supported")

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        name = getattr(func, '__name__', func)
        if not (in_dims is None or isinstance(in_dims, (int, tuple))) or isinstance(in_dims, bool):
            raise ValueError(f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): expected `in_dims` to be int or a "
                             f"(potentially nested) tuple matching the structure of inputs, got: {type(in_dims)}.")
        dims = in_dims if isinstance(in_dims, tuple) else (in_dims,) * len(args)
        if len(dims) != len(args):
            raise ValueError(f"vmap({getattr(func, '__name__', func)}, in_dims={in_dims}, ...)(<inputs>): "
                             f"in_dims is not compatible with the structure of `inputs`. in_dims has structure "
                             f"{dims} but inputs has {len(args)} elements.")
        flat_args, flat_dims = [], []
        specs = []
        for a, d in zip(args, dims):
            leaves, spec = _flatten(a)
            if isinstance(d, int) and _non_tensor_leaf(spec) is not None:
                raise ValueError(f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): Got in_dim={d} for an input but "
                                 f"the input is of type {type(_non_tensor_leaf(spec)[0])}. We cannot vmap over "
                                 "non-Tensor arguments, please use None as the respective in_dim")
            specs.append(spec)
            if isinstance(d, (tuple, list, dict)):
                d_leaves = _flatten_dims(d)
            else:
                d_leaves = [d] * len(leaves)
            flat_args.append(leaves)
            flat_dims.append(d_leaves)
        sizes = set()
        for leaves, ds in zip(flat_args, flat_dims):
            for t, d in zip(leaves, ds):
                if d is not None:
                    if not -t.dim() <= d < max(t.dim(), 1) or t.dim() == 0:
                        raise ValueError(f"vmap({getattr(func, '__name__', func)}, in_dims={in_dims}, ...)(<inputs>): "
                                         f"Got in_dim={d} for an input but the input is of type {type(t)}. We cannot "
                                         f"vmap over non-Tensor arguments, please use None as the respective in_dim")
                    sizes.add(t.shape[d])
        if not sizes:
            raise ValueError(f"vmap({getattr(func, '__name__', func)}, in_dims={in_dims}, ...)(<inputs>): at least one "
                             "input must be batched (in_dims all None)")
        if len(sizes) != 1:
            raise ValueError("vmap: Expected all tensors to have the same size in the mapped dimension, got sizes "
                             f"{sorted(sizes)} for the mapped dimension")
        n = sizes.pop()
        results = []
        for b in range(max(n, 1)):
            call_args = []
            for leaves, ds, spec in zip(flat_args, flat_dims, specs):
                # an empty batch: one call on zeros of an element's shape, for the results' shapes and dtypes
                sliced = [t if d is None else t.select(d, b) if n else
                          _C.zeros([s for i, s in enumerate(t.shape) if i != d % t.dim()], dtype=t.dtype)
                          for t, d in zip(leaves, ds)]
                call_args.append(_unflatten(sliced, spec))
            results.append(func(*call_args, **kwargs))
        out_leaves_per_b = [_flatten(r) for r in results]
        spec = out_leaves_per_b[0][1]
        n_out = len(out_leaves_per_b[0][0])
        if n_out == 0:
            raise ValueError(f"vmap({getattr(func, '__name__', func)}, ...): `{getattr(func, '__name__', func)}` must "
                             "only return Tensors, got type " + str(type(results[0])))
        od = out_dims if isinstance(out_dims, tuple) else (out_dims,) * n_out
        if len(od) != n_out:
            raise ValueError(f"vmap({getattr(func, '__name__', func)}, ..., out_dims={out_dims})(<inputs>): out_dims "
                             "is not compatible with the structure of `outputs`.")
        if n == 0:
            stacked = [_C.stack([lv[0][k] for lv in out_leaves_per_b], dim=od[k]).narrow(od[k], 0, 0)
                       for k in range(n_out)]
        else:
            stacked = [_C.stack([lv[0][k] for lv in out_leaves_per_b], dim=od[k]) for k in range(n_out)]
        return _unflatten(stacked, spec)
    return wrapper


def _flatten_dims(d):
    if isinstance(d, (tuple, list)):
        return [x for e in d for x in _flatten_dims(e)]
    if isinstance(d, dict):
        return [x for e in d.values() for x in _flatten_dims(e)]
    return [d]


def functional_call(module, parameter_and_buffer_dicts, args=None, kwargs=None, *, tie_weights=True, strict=False):
    """torch.func.functional_call: module(*args, **kwargs) with its parameters and buffers replaced by the
    tensors of the dict (or a tuple of dicts) for the duration of the call."""
    if isinstance(parameter_and_buffer_dicts, dict):
        replacements = dict(parameter_and_buffer_dicts)
    else:
        replacements = {}
        for d in parameter_and_buffer_dicts:
            for k, v in d.items():
                if k in replacements:
                    raise ValueError(f"{k} appeared in multiple dictionaries; behavior of functional call is ambiguous")
                replacements[k] = v
    if strict:
        expected = {n for n, _ in module.named_parameters(remove_duplicate=False)}
        expected |= {n for n, _ in module.named_buffers(remove_duplicate=False)}
        missing = sorted(expected - set(replacements))
        unexpected = sorted(set(replacements) - expected)
        if missing or unexpected:
            msg = []
            if unexpected:
                msg.append("Unexpected key(s): " + ", ".join(repr(k) for k in unexpected) + ".")
            if missing:
                msg.append("Missing key(s): " + ", ".join(repr(k) for k in missing) + ".")
            raise RuntimeError("Error(s) in reparametrizing for {}:\n\t{}".format(module._get_name(), "\n\t".join(msg)))
    if tie_weights:  # a tensor shared under two names is replaced under both
        by_id = {}
        for name, p in list(module.named_parameters(remove_duplicate=False)) + list(module.named_buffers(remove_duplicate=False)):
            by_id.setdefault(id(p), []).append(name)
        for names in by_id.values():
            given = [n for n in names if n in replacements]
            if given:
                for n in names:
                    if n not in replacements:
                        replacements[n] = replacements[given[0]]
    saved = []
    try:
        for name, value in replacements.items():
            path, _, attr = name.rpartition(".")
            mod = module.get_submodule(path)
            for store in ("_parameters", "_buffers"):
                d = mod.__dict__.get(store)
                if d is not None and attr in d:
                    saved.append((d, attr, d[attr]))
                    d[attr] = value
                    break
            else:
                saved.append((mod.__dict__, attr, mod.__dict__.get(attr, _MISSING)))
                mod.__dict__[attr] = value
        if args is None:
            args = ()
        elif not isinstance(args, tuple):
            args = (args,)
        return module(*args, **(kwargs or {}))
    finally:
        for d, attr, old in reversed(saved):
            if old is _MISSING:
                d.pop(attr, None)
            else:
                d[attr] = old


_MISSING = object()
