"""Numerical gradient checks (central differences in float64), as torch.autograd.gradcheck."""
from .. import _C


def _as_tuple(x):
    return (x,) if isinstance(x, _C.TensorBase) else tuple(x)


def _float_outputs(x):
    """The outputs a Jacobian is taken of: integer outputs (max's indices) have no gradient."""
    return [o for o in _as_tuple(x) if o.is_floating_point()]


def _flat(t):
    return t.detach().contiguous().view([-1])


def _numerical_jacobian(fn, inputs, i, eps):
    """Column j of d(outputs)/d(inputs[i]): central differences on element j."""
    import numpy as np
    x = inputs[i]
    flat = x.detach().numpy().reshape(-1)  # shares memory with x
    columns = []
    for j in range(flat.size):
        orig = flat[j]
        flat[j] = orig + eps
        plus = [_flat(o).numpy().copy() for o in _float_outputs(fn(*inputs))]
        flat[j] = orig - eps
        minus = [_flat(o).numpy().copy() for o in _float_outputs(fn(*inputs))]
        flat[j] = orig
        diffs = [(p - m) / (2 * eps) for p, m in zip(plus, minus)]
        columns.append(np.concatenate(diffs) if diffs else np.zeros(0))
    if not columns:  # an empty input: no columns, one row per output element
        return np.zeros((sum(o.numel() for o in _float_outputs(fn(*inputs))), 0))
    if columns[0].size == 0:
        return np.zeros((0, len(columns)))
    return np.stack(columns, axis=1)


def _analytical_jacobian(fn, inputs, i):
    import numpy as np
    from . import grad as autograd_grad
    from .. import zeros, zeros_like
    outputs = _float_outputs(fn(*inputs))
    rows = []
    for k, out in enumerate(outputs):
        for j in range(out.numel()):
            g = zeros(tuple(out.shape), dtype=out.dtype)  # row-major, so element j is g.view(-1)[j]
            g.view([-1])[j] = 1.0
            grads_out = [g if kk == k else zeros_like(o) for kk, o in enumerate(outputs)]
            (gi,) = autograd_grad(list(outputs), [inputs[i]], grads_out, retain_graph=True, allow_unused=True)
            rows.append(np.zeros(inputs[i].numel()) if gi is None else _flat(gi).numpy().astype(np.float64))
    return np.stack(rows, axis=0) if rows else np.zeros((0, inputs[i].numel()))


def gradcheck(fn, inputs, eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True):
    """Compares autograd's Jacobians with central differences for every input that requires grad.

    Inputs should be float64 tensors. Returns True, or raises (or returns False) on a mismatch.
    """
    import numpy as np
    inputs = _as_tuple(inputs)
    for i, x in enumerate(inputs):
        if not (isinstance(x, _C.TensorBase) and x.requires_grad):
            continue
        if x.dtype != _C.float64:
            raise ValueError(f"gradcheck: input {i} is {x.dtype}; use float64 inputs for precise differences")
        numerical = _numerical_jacobian(fn, inputs, i, eps)
        analytical = _analytical_jacobian(fn, inputs, i)
        if numerical.shape != analytical.shape or not np.allclose(analytical, numerical, rtol=rtol, atol=atol):
            if raise_exception:
                raise RuntimeError(f"Jacobian mismatch for output 0 with respect to input {i},\n"
                                   f"numerical:{numerical}\nanalytical:{analytical}\n")
            return False
    return True


def gradgradcheck(fn, inputs, grad_outputs=None, eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True):
    """gradcheck of the first derivative (checks double backward through create_graph)."""
    import numpy as np
    from . import grad as autograd_grad
    from .. import tensor
    inputs = _as_tuple(inputs)
    outputs = _float_outputs(fn(*inputs))
    if grad_outputs is None:
        rng = np.random.default_rng(0)
        grad_outputs = [tensor(rng.standard_normal(tuple(o.shape)), dtype=_C.float64, requires_grad=True)
                        for o in outputs]
    grad_outputs = _as_tuple(grad_outputs)
    diff_inputs = [x for x in inputs if isinstance(x, _C.TensorBase) and x.requires_grad]
    n = len(inputs)

    def first_derivative(*args):
        xs, gos = args[:n], args[n:]
        outs = _float_outputs(fn(*xs))
        wrt = [x for x in xs if isinstance(x, _C.TensorBase) and x.requires_grad]
        grads = autograd_grad(list(outs), wrt, list(gos), create_graph=True, allow_unused=True)
        # As torch's gradgradcheck: gradients without a graph (constants) are not checked.
        return tuple(g for g in grads if g is not None and g.requires_grad)

    return gradcheck(first_derivative, tuple(inputs) + tuple(grad_outputs), eps, atol, rtol, raise_exception)
