"""torch.autograd.graph.saved_tensors_hooks, save_on_cpu and disable_saved_tensors_hooks against torch:
the same tensors packed and unpacked for the same graphs, the same gradients (first and second order)
through hooks that move the data, and torch's errors for bad hooks."""
import pytest
import torch

import kiln


def both(fn):
    """fn(lib) for kiln and torch."""
    return fn(kiln), fn(torch)


def make_inputs(lib):
    g = torch.Generator().manual_seed(0)
    a = torch.randn(3, 4, generator=g, dtype=torch.float64)
    b = torch.randn(3, 4, generator=g, dtype=torch.float64)
    w = torch.randn(4, 2, generator=g, dtype=torch.float64)
    conv = lambda t: lib.tensor(t.tolist(), dtype=lib.float64, requires_grad=True)  # noqa: E731
    return conv(a), conv(b), conv(w)


GRAPHS = {
    "mul": lambda lib, a, b, w: (a * b).sum(),
    "exp": lambda lib, a, b, w: a.exp().sum(),
    "sin": lambda lib, a, b, w: a.sin().sum(),
    "mm": lambda lib, a, b, w: a.mm(w).sum(),
    "chain": lambda lib, a, b, w: (a * b).sin().mm(w).tanh().sum(),
}


@pytest.mark.parametrize("graph", sorted(GRAPHS))
def test_pack_and_unpack_calls_and_gradients_are_torchs(graph):
    def run(lib):
        a, b, w = make_inputs(lib)
        packed, unpacked = [], []

        def pack(t):
            packed.append(tuple(t.shape))
            return ("box", t.clone())

        def unpack(box):
            unpacked.append(tuple(box[1].shape))
            return box[1]

        with lib.autograd.graph.saved_tensors_hooks(pack, unpack):
            y = GRAPHS[graph](lib, a, b, w)
        y.backward()
        grads = [None if t.grad is None else t.grad.tolist() for t in (a, b, w)]
        return sorted(packed), sorted(unpacked), grads

    k, t = both(run)
    assert k[0] == t[0]  # the shapes of what was packed
    assert k[1] == t[1]
    assert _close(k[2], t[2])


def _close(x, y):
    import numpy as np
    for p, q in zip(x, y):
        if (p is None) != (q is None):
            return False
        if p is not None and not np.allclose(p, q, rtol=1e-12, atol=1e-12):
            return False
    return True


def test_pack_hook_sees_the_saved_inputs_themselves():
    def run(lib):
        a = lib.ones(2, 3, requires_grad=True)
        seen = []
        with lib.autograd.graph.saved_tensors_hooks(lambda t: seen.append(t) or t, lambda t: t):
            (a * 2).sum()
        return [(s is a, s.requires_grad, s.is_leaf) for s in seen]

    k, t = both(run)
    assert k == t
    # A saved output arrives without its history (torch passes it with its grad_fn; kiln leaves that
    # out so that a hook keeping the tensor makes no reference cycle through the saving node).
    x = kiln.ones(2, requires_grad=True)
    seen = []
    with kiln.autograd.graph.saved_tensors_hooks(lambda t: seen.append(t) or t, lambda t: t):
        y = x.exp()
    assert len(seen) == 1 and seen[0].grad_fn is None and seen[0].tolist() == y.tolist()


def test_packed_tensor_is_what_backward_uses():
    """The node keeps only what pack returned: modifying the input afterwards is no error and does not change
    the gradient (the version check is skipped, as torch's), while without hooks it is an error."""
    def run(lib):
        a = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        x = a * 1
        with lib.autograd.graph.saved_tensors_hooks(lambda t: t.clone(), lambda t: t):
            y = (x * x).sum()
        with lib.no_grad():
            x.add_(10)
        y.backward()
        return a.grad.tolist()

    k, t = both(run)
    assert k == t == [2.0, 4.0, 6.0]
    a = kiln.tensor([1.0, 2.0], requires_grad=True)
    x = a * 1
    y = (x * x).sum()
    with kiln.no_grad():
        x.add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.backward()


def test_double_backward_through_hooks_is_torchs():
    def run(lib):
        x = lib.tensor([0.5, -1.0, 2.0], dtype=lib.float64, requires_grad=True)
        store = []

        def pack(t):
            store.append(t)
            return len(store) - 1

        with lib.autograd.graph.saved_tensors_hooks(pack, lambda i: store[i]):
            y = (x * x * x).sin().sum()
        (g,) = lib.autograd.grad(y, x, create_graph=True)
        (gg,) = lib.autograd.grad(g.sum(), x)
        return g.tolist(), gg.tolist()

    k, t = both(run)
    assert _close(k[0:1], t[0:1]) and _close(k[1:], t[1:])


def test_custom_function_save_for_backward_goes_through_hooks():
    def run(lib):
        class Square(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                return x * x

            @staticmethod
            def backward(ctx, g):
                (x,) = ctx.saved_tensors
                return 2 * x * g

        seen = []
        x = lib.tensor([1.0, 3.0], requires_grad=True)
        with lib.autograd.graph.saved_tensors_hooks(lambda t: seen.append("pack") or t,
                                                    lambda t: seen.append("unpack") or t):
            y = Square.apply(x).sum()
        y.backward()
        return seen, x.grad.tolist()

    k, t = both(run)
    assert k == t


def test_innermost_hooks_pack_and_scope_ends():
    def run(lib):
        log = []
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        with lib.autograd.graph.saved_tensors_hooks(lambda t: log.append("outer") or t, lambda t: t):
            with lib.autograd.graph.saved_tensors_hooks(lambda t: log.append("inner") or t, lambda t: t):
                y = x.exp().sum()
            z = x.sin().sum()
        w = x.cos().sum()  # no hooks any more
        (y + z + w).backward()
        return log, x.grad.tolist()

    k, t = both(run)
    assert k[0] == t[0] == ["inner", "outer"]
    assert _close([k[1]], [t[1]])


def test_unpack_hook_must_return_a_tensor():
    for lib in (kiln, torch):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        with lib.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: "not a tensor"):
            y = x.exp().sum()
        with pytest.raises(TypeError, match="Output of saved tensor unpack_hook expected to be a Tensor but got "
                                            "result of type str"):
            y.backward()


def test_pack_hook_modifying_its_input_is_refused():
    for lib in (kiln, torch):
        x = lib.tensor([1.0, 2.0], requires_grad=True)

        def pack(t):
            t.add_(1)
            return t

        with lib.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
            with pytest.raises(RuntimeError, match="A saved tensor pack hook is modifying its input in place"):
                (x * 1).exp()


def test_errors_raised_by_hooks_propagate():
    def bad_pack(t):
        raise ValueError("pack failed")

    x = kiln.tensor([1.0], requires_grad=True)
    with kiln.autograd.graph.saved_tensors_hooks(bad_pack, lambda t: t):
        with pytest.raises(ValueError, match="pack failed"):
            x.exp()
    y = x.exp().sum()  # the hooks are gone after the block, even after an error inside
    y.backward()
    assert x.grad.tolist() == pytest.approx([2.718281828])


def test_save_on_cpu_gradients_are_torchs():
    def run(lib):
        a, b, w = make_inputs(lib)
        with lib.autograd.graph.save_on_cpu():
            y = GRAPHS["chain"](lib, a, b, w)
        with lib.no_grad():
            b.add_(1)  # the copies are what backward reads
        y.backward()
        return [a.grad.tolist(), w.grad.tolist()]

    k, t = both(run)
    assert _close(k, t)


def test_disable_saved_tensors_hooks():
    for lib in (kiln, torch):
        with lib.autograd.graph.disable_saved_tensors_hooks("hooks are off here"):
            with pytest.raises(RuntimeError, match="hooks are off here"):
                with lib.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):
                    pass
        with lib.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):
            pass


def test_hooks_must_be_callable():
    with pytest.raises(TypeError, match="callable"):
        with kiln.autograd.graph.saved_tensors_hooks(1, lambda t: t):
            pass


def test_grad_fn_is_a_graph_node():
    x = kiln.tensor([1.0], requires_grad=True)
    y = x.exp()
    assert isinstance(y.grad_fn, kiln.autograd.graph.Node)
    assert not isinstance(1, kiln.autograd.graph.Node)


def test_identity_hooks_leak_no_tensors():
    import gc
    x = kiln.ones(100, requires_grad=True)
    gc.collect()
    before = kiln._C._live_tensor_count()
    for _ in range(20):
        with kiln.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):
            y = x.exp().sin().mul(x).sum()
        del y  # the graph, its nodes and everything they packed go with it
    gc.collect()
    assert kiln._C._live_tensor_count() == before
