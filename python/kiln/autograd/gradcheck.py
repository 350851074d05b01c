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


def _forward_jacobian(fn, inputs, i):
    """d(outputs)/d(inputs[i]) by forward-mode AD: one unit tangent per element of inputs[i]."""
    import numpy as np
    from . import forward_ad as fwAD
    from .. import zeros_like
    x = inputs[i]
    columns = []
    for j in range(x.numel()):
        tangent = zeros_like(x)
        tangent.view([-1])[j] = 1.0
        with fwAD.dual_level():
            args = list(inputs)
            args[i] = fwAD.make_dual(x.detach(), tangent)
            outs = _float_outputs(fn(*args))
            parts = []
            for o in outs:
                t = fwAD.unpack_dual(o).tangent
                parts.append(np.zeros(o.numel()) if t is None else _flat(t).numpy().astype(np.float64))
        columns.append(np.concatenate(parts) if parts else np.zeros(0))
    if not columns:
        return np.zeros((sum(o.numel() for o in _float_outputs(fn(*inputs))), 0))
    return np.stack(columns, axis=1)


def _fail(raise_exception, message):
    if raise_exception:
        raise RuntimeError(message)
    return False


def gradcheck(fn, inputs, *, eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True, check_sparse_nnz=False,
              nondet_tol=0.0, check_undefined_grad=True, check_grad_dtypes=False, check_batched_grad=False,
              check_batched_forward_grad=False, check_forward_ad=False, check_backward_ad=True, fast_mode=False):
    """Compares autograd's Jacobians with central differences for every input that requires grad.

    Inputs should be float64 tensors. Returns True, or raises (or returns False) on a mismatch.
    torch's keyword arguments: check_backward_ad / check_forward_ad pick the reverse- and forward-mode
    Jacobians checked; nondet_tol bounds how far two backward passes may differ (torch's reentrancy
    check); check_grad_dtypes checks each gradient's dtype. fast_mode checks the full Jacobians (torch's
    fast mode checks one random projection of them, which the full check implies). The undefined-grad
    check has nothing to look at in kiln (a backward never receives undefined gradients) and the batched
    checks need vmap, which kiln's gradcheck does not run: asking for them raises.
    """
    import numpy as np
    if check_batched_grad or check_batched_forward_grad:
        raise NotImplementedError("gradcheck: check_batched_grad / check_batched_forward_grad (vmap) are not "
                                  "supported by kiln")
    if check_sparse_nnz:
        raise NotImplementedError("gradcheck: check_sparse_nnz is not supported by kiln")
    if not (check_forward_ad or check_backward_ad):  # torch asserts it
        raise AssertionError("Expected at least one of check_forward_ad or check_backward_ad to be True")
    inputs = _as_tuple(inputs)
    for i, x in enumerate(inputs):
        if not (isinstance(x, _C.TensorBase) and x.requires_grad):
            continue
        if x.dtype != _C.float64:
            raise ValueError(f"gradcheck: input {i} is {x.dtype}; use float64 inputs for precise differences")
        numerical = _numerical_jacobian(fn, inputs, i, eps)
        if check_backward_ad:
            analytical = _analytical_jacobian(fn, inputs, i)
            if numerical.shape != analytical.shape or not np.allclose(analytical, numerical, rtol=rtol, atol=atol):
                return _fail(raise_exception, f"Jacobian mismatch for output 0 with respect to input {i},\n"
                                              f"numerical:{numerical}\nanalytical:{analytical}\n")
            again = _analytical_jacobian(fn, inputs, i)
            if again.shape != analytical.shape or np.abs(again - analytical).max(initial=0.0) > nondet_tol:
                return _fail(raise_exception, "Backward is not reentrant, i.e., running backward with same input "
                                              "and grad_output multiple times gives different values, although "
                                              "analytical gradient matches numerical gradient.The tolerance for "
                                              f"nondeterminism was {nondet_tol}.")
        if check_forward_ad:
            forward = _forward_jacobian(fn, inputs, i)
            if numerical.shape != forward.shape or not np.allclose(forward, numerical, rtol=rtol, atol=atol):
                return _fail(raise_exception, f"Jacobian computed with forward mode mismatch for output 0 with "
                                              f"respect to input {i},\nnumerical:{numerical}\nanalytical:{forward}\n")
    if check_grad_dtypes and check_backward_ad:
        from . import grad as autograd_grad
        outputs = [o for o in _float_outputs(fn(*inputs)) if o.requires_grad]
        wrt = [x for x in inputs if isinstance(x, _C.TensorBase) and x.requires_grad]
        if outputs and wrt:
            from .. import ones_like
            grads = autograd_grad(outputs, wrt, [ones_like(o) for o in outputs], allow_unused=True)
            for x, g in zip(wrt, grads):
                if g is not None and (g.dtype != x.dtype or g.shape != x.shape):
                    return _fail(raise_exception, "Gradient has dtype mismatch" if g.dtype != x.dtype
                                 else "Gradient has shape mismatch")
    return True


def gradgradcheck(fn, inputs, grad_outputs=None, *, eps=1e-6, atol=1e-5, rtol=1e-3,
                  gen_non_contig_grad_outputs=False, raise_exception=True, nondet_tol=0.0, check_undefined_grad=True,
                  check_grad_dtypes=False, check_batched_grad=False, check_fwd_over_rev=False,
                  check_rev_over_rev=True, fast_mode=False):
    """gradcheck of the first derivative (checks double backward through create_graph).

    torch's keyword arguments as in gradcheck; check_fwd_over_rev checks the first derivative's Jacobian by
    forward mode too, check_rev_over_rev by reverse mode; gen_non_contig_grad_outputs passes the random
    grad_outputs as non-contiguous tensors (same values)."""
    from . import grad as autograd_grad
    if not (check_fwd_over_rev or check_rev_over_rev):  # torch asserts it
        raise AssertionError("Expected at least one of check_fwd_over_rev or check_rev_over_rev to be True")
    inputs = _as_tuple(inputs)
    if grad_outputs is None:
        # drawn as torch's gradgradcheck draws them (make_tensor in [-1, 1) for each output that requires
        # grad), so a program seeded like torch's sees the same random stream afterwards
        from ..testing import make_tensor
        grad_outputs = [make_tensor(tuple(o.shape), dtype=o.dtype if o.is_floating_point() else _C.float64, low=-1,
                                    high=1, requires_grad=True, noncontiguous=gen_non_contig_grad_outputs)
                        for o in _as_tuple(fn(*inputs)) if o.requires_grad]
    grad_outputs = _as_tuple(grad_outputs)
    n = len(inputs)

    def first_derivative(*args):
        xs, gos = args[:n], args[n:]
        outs = [o for o in _as_tuple(fn(*xs)) if o.requires_grad]  # torch's _differentiable_outputs
        wrt = [x for x in xs if isinstance(x, _C.TensorBase) and x.requires_grad]
        grads = autograd_grad(list(outs), wrt, list(gos), create_graph=True, allow_unused=True)
        # As torch's gradgradcheck: gradients without a graph (constants) are not checked.
        return tuple(g for g in grads if g is not None and g.requires_grad)

    return gradcheck(first_derivative, tuple(inputs) + tuple(grad_outputs), eps=eps, atol=atol, rtol=rtol,
                     raise_exception=raise_exception, nondet_tol=nondet_tol, check_undefined_grad=check_undefined_grad,
                     check_grad_dtypes=check_grad_dtypes, check_batched_grad=check_batched_grad,
                     check_forward_ad=check_fwd_over_rev, check_backward_ad=check_rev_over_rev, fast_mode=fast_mode)
