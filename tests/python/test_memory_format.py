"""Memory formats (kiln.channels_last ...): strides of contiguous/clone/empty_like/zeros_like/to/... with and
without memory_format=, is_contiguous(memory_format=), errors, and values of ops on channels-last inputs, all
against torch 1.13. kiln's ops need not lay out their results as torch's do (only values are compared there;
the strides torch gives are written next to each case)."""
import pickle

import numpy as np
import pytest

import kiln

torch = pytest.importorskip("torch")

FORMATS = ["contiguous_format", "channels_last", "channels_last_3d", "preserve_format"]


def both(fn):
    """fn(lib) for kiln and torch: (result, exception type and message) each."""
    out = []
    for lib in (kiln, torch):
        try:
            out.append((fn(lib), None))
        except Exception as e:  # noqa: BLE001  (the exception is the outcome under test)
            out.append((None, (type(e), str(e).replace("kiln", "torch"))))
    return out


def same_outcome(fn, check=lambda a, b: a == b):
    (k, ke), (t, te) = both(fn)
    if te is not None or ke is not None:
        assert ke is not None and te is not None, (ke, te)
        assert ke[0].__name__ == te[0].__name__ and ke[1] == te[1], (ke, te)
        return
    assert check(k, t), (k, t)


# Inputs as code over a lib: dense, permuted, sliced (not dense), expanded, size-1 and size-0 dims.
INPUTS = {
    "contig4": lambda L: L.arange(120.).reshape(2, 3, 4, 5),
    "nhwc_view": lambda L: L.arange(120.).reshape(2, 4, 5, 3).permute(0, 3, 1, 2),
    "nhwc_sliced": lambda L: L.arange(240.).reshape(2, 4, 10, 3).permute(0, 3, 1, 2)[:, :, :, ::2],
    "permuted_sliced": lambda L: L.arange(120.).reshape(4, 6, 5).permute(2, 0, 1)[:, :, ::2],
    "transposed": lambda L: L.arange(30.).reshape(6, 5)[::2].t(),
    "size1_odd": lambda L: L.arange(6.).reshape(2, 3, 1, 1).permute(0, 2, 3, 1),
    "size1_c": lambda L: L.arange(6.).reshape(1, 3, 1, 2).permute(0, 2, 3, 1),
    "n111": lambda L: L.arange(4.).reshape(4, 1, 1, 1),
    "expanded": lambda L: L.arange(12.).reshape(4, 3).expand(2, 4, 3),
    "expanded4": lambda L: L.arange(3.).reshape(1, 3, 1, 1).expand(2, 3, 4, 5),
    "empty_dim": lambda L: L.zeros(0, 3, 2).permute(2, 0, 1),
    "empty4": lambda L: L.zeros(2, 0, 3, 3),
    "contig5": lambda L: L.arange(240.).reshape(2, 3, 2, 4, 5),
    "ndhwc_view": lambda L: L.arange(240.).reshape(2, 2, 4, 5, 3).permute(0, 4, 1, 2, 3),
    "scalar": lambda L: L.tensor(3.0),
    "vector_step": lambda L: L.arange(10.)[::3],
}


def fmt(L, name):
    return getattr(L, name)


def test_memory_format_objects():
    for name in FORMATS:
        k, t = getattr(kiln, name), getattr(torch, name)
        assert repr(k) == repr(t) == str(t) == f"torch.{name}"
        assert isinstance(k, kiln.memory_format)
        assert pickle.loads(pickle.dumps(k)) is k
    assert kiln.channels_last != kiln.contiguous_format


@pytest.mark.parametrize("inp", sorted(INPUTS))
@pytest.mark.parametrize("op", ["clone", "empty_like", "zeros_like", "ones_like", "full_like", "rand_like",
                                "randn_like", "to_double", "to_same", "contiguous"])
def test_default_strides_are_torchs(inp, op):
    """preserve_format, the default: dense inputs keep their strides, others get torch's inferred ones."""
    calls = {
        "clone": lambda L, x: x.clone(),
        "empty_like": lambda L, x: L.empty_like(x),
        "zeros_like": lambda L, x: L.zeros_like(x),
        "ones_like": lambda L, x: L.ones_like(x),
        "full_like": lambda L, x: L.full_like(x, 2.0),
        "rand_like": lambda L, x: L.rand_like(x),
        "randn_like": lambda L, x: L.randn_like(x),
        "to_double": lambda L, x: x.to(L.float64),
        "to_same": lambda L, x: x.to(L.float32, copy=True),
        "contiguous": lambda L, x: x.contiguous(),
    }
    (k, _), (t, _) = both(lambda L: calls[op](L, INPUTS[inp](L)))
    assert k.stride() == t.stride()
    if op not in ("empty_like", "rand_like", "randn_like"):
        np.testing.assert_array_equal(k.numpy(), t.numpy())


@pytest.mark.parametrize("inp", sorted(INPUTS))
@pytest.mark.parametrize("name", FORMATS)
@pytest.mark.parametrize("op", ["contiguous", "clone", "empty_like", "zeros_like", "ones_like", "full_like",
                                "rand_like", "to", "to_double", "is_contiguous"])
def test_explicit_format(inp, name, op):
    calls = {
        "contiguous": lambda L, x, f: x.contiguous(memory_format=f),
        "clone": lambda L, x, f: x.clone(memory_format=f),
        "empty_like": lambda L, x, f: L.empty_like(x, memory_format=f),
        "zeros_like": lambda L, x, f: L.zeros_like(x, memory_format=f),
        "ones_like": lambda L, x, f: L.ones_like(x, memory_format=f),
        "full_like": lambda L, x, f: L.full_like(x, 7, memory_format=f),
        "rand_like": lambda L, x, f: L.rand_like(x, memory_format=f),
        "to": lambda L, x, f: x.to(memory_format=f),
        "to_double": lambda L, x, f: x.to(L.float64, memory_format=f),
        "is_contiguous": lambda L, x, f: x.is_contiguous(memory_format=f),
    }

    def go(L):
        x = INPUTS[inp](L)
        r = calls[op](L, x, fmt(L, name))
        if isinstance(r, bool):
            return r
        values = None if op in ("empty_like", "rand_like") else r.numpy().copy()
        return r.stride(), r.dtype.is_floating_point, values, r is x

    def check(a, b):
        if isinstance(a, bool):
            return a == b
        assert a[0] == b[0] and a[3] == b[3]
        if a[2] is not None:
            np.testing.assert_array_equal(a[2], b[2])
        return True
    same_outcome(go, check)


@pytest.mark.parametrize("name", ["contiguous_format", "channels_last", "channels_last_3d", "preserve_format"])
@pytest.mark.parametrize("shape", [(2, 3, 4, 5), (2, 0, 3, 3), (0, 3, 0, 3), (2, 3, 2, 4, 5), (2, 3)])
def test_empty_memory_format(name, shape):
    same_outcome(lambda L: L.empty(*shape, memory_format=fmt(L, name)).stride())
    same_outcome(lambda L: L.empty(size=shape, memory_format=fmt(L, name)).stride())
    same_outcome(lambda L: (str(L.empty(shape, dtype=L.float64, memory_format=fmt(L, name)).dtype).split(".")[1],
                            L.empty(shape, dtype=L.float64, memory_format=fmt(L, name)).stride()))


def test_bad_memory_format_argument():
    x = kiln.ones(2, 3, 4, 5)
    for call in (lambda: x.contiguous(memory_format=3), lambda: x.clone(memory_format="channels_last"),
                 lambda: kiln.empty_like(x, memory_format=1), lambda: x.to(memory_format=0),
                 lambda: x.is_contiguous(memory_format=2)):
        with pytest.raises(TypeError, match="must be torch.memory_format"):
            call()


def test_contiguous_channels_last_autograd():
    def go(L):
        x = L.arange(120., dtype=L.float64).reshape(2, 3, 4, 5).requires_grad_()
        y = x.contiguous(memory_format=L.channels_last)
        z = x.clone(memory_format=L.channels_last)
        w = x.to(memory_format=L.channels_last)
        ((y * y).sum() + (z * 3).sum() + w.sin().sum()).backward()
        return y.stride(), z.stride(), w.stride(), x.grad.stride(), x.grad.numpy().copy()
    (k, _), (t, _) = both(go)
    assert k[:4] == t[:4]
    np.testing.assert_allclose(k[4], t[4], rtol=1e-12)


def test_module_to_memory_format():
    def go(L):
        L.manual_seed(0)
        m = L.nn.Sequential(L.nn.Conv2d(3, 4, 3), L.nn.BatchNorm2d(4), L.nn.Linear(2, 2))
        w = m[0].weight
        out = m.to(memory_format=L.channels_last)
        return (out is m, m[0].weight is w, m[0].weight.stride(), m[0].bias.stride(), m[2].weight.stride(),
                m[0].weight.is_contiguous(memory_format=L.channels_last), isinstance(m[0].weight, L.nn.Parameter))
    same_outcome(go)

    def go_dtype(L):
        m = L.nn.Conv2d(3, 4, 3).to(L.float64, memory_format=L.channels_last)
        return m.weight.dtype == L.float64, m.weight.stride()
    same_outcome(go_dtype)
    same_outcome(lambda L: L.nn.Conv2d(3, 4, 3).to(memory_format=L.channels_last_3d))
    same_outcome(lambda L: L.nn.Conv3d(3, 4, 3).to(memory_format=L.channels_last_3d).weight.stride())


def _channels_last_case(L):
    L.manual_seed(0)
    x = L.randn(2, 3, 8, 8, dtype=L.float64).contiguous(memory_format=L.channels_last)
    w = L.randn(4, 3, 3, 3, dtype=L.float64)
    F = L.nn.functional
    return {
        # torch 1.13's output strides (kiln's are row-major: only values are compared):
        "conv2d": F.conv2d(x, w, padding=1),                                      # (256, 1, 32, 4)
        "conv2d_cl_weight": F.conv2d(x, w.contiguous(memory_format=L.channels_last), stride=2),  # (36, 1, 12, 4)
        "batch_norm": F.batch_norm(x, L.zeros(3, dtype=L.float64), L.ones(3, dtype=L.float64),
                                   L.randn(3, dtype=L.float64), L.randn(3, dtype=L.float64), training=True),  # (192, 1, 24, 3)
        "relu": F.relu(x),                                                        # (192, 1, 24, 3)
        "add": x + x.contiguous(),                                                # (192, 1, 24, 3)
        "add_scalar": x + 1,                                                      # (192, 1, 24, 3)
        "mul_broadcast": x * L.arange(3., dtype=L.float64).reshape(3, 1, 1),      # (192, 1, 24, 3)
        "max_pool2d": F.max_pool2d(x, 2),                                         # (48, 1, 12, 3)
        "avg_pool2d": F.avg_pool2d(x, 2),                                         # (48, 1, 12, 3)
        "adaptive_avg_pool2d": F.adaptive_avg_pool2d(x, 1),                       # (3, 1, 3, 3)
        "interpolate": F.interpolate(x, scale_factor=2, mode="nearest"),         # (768, 1, 48, 3)
        "sum_hw": x.sum(dim=(2, 3)),
        "view_after_contiguous": x.contiguous().view(2, -1),
    }


def test_ops_on_channels_last_inputs_give_torchs_values():
    k, t = _channels_last_case(kiln), _channels_last_case(torch)
    for name in k:
        np.testing.assert_allclose(k[name].detach().numpy(), t[name].detach().numpy(), rtol=1e-10, atol=1e-12,
                                   err_msg=name)


def test_channels_last_model_training_step_matches_torch():
    """A conv block trained one step on channels-last input and weights: same loss and gradients."""
    def go(L):
        L.manual_seed(0)
        m = L.nn.Sequential(L.nn.Conv2d(3, 4, 3, padding=1), L.nn.BatchNorm2d(4), L.nn.ReLU(), L.nn.MaxPool2d(2),
                            L.nn.Flatten(), L.nn.Linear(4 * 4 * 4, 3)).double()
        m = m.to(memory_format=L.channels_last)
        x = L.randn(5, 3, 8, 8, dtype=L.float64).to(memory_format=L.channels_last)
        loss = L.nn.functional.cross_entropy(m(x), L.tensor([0, 1, 2, 1, 0]))
        loss.backward()
        return loss.item(), [p.grad.numpy().copy() for p in m.parameters()]
    (k, _), (t, _) = both(go)
    assert k[0] == pytest.approx(t[0], rel=1e-12)
    for a, b in zip(k[1], t[1]):
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-12)


def test_is_contiguous_channels_last_rules():
    cases = [(2, 3, 4, 5), (2, 1, 4, 5), (1, 3, 1, 1), (2, 3, 1, 1), (4, 1, 1, 1), (0, 3, 2, 2)]

    def go(L):
        out = []
        for s in cases:
            x = L.zeros(*s)
            cl = x.contiguous(memory_format=L.channels_last)
            out.append((x.is_contiguous(memory_format=L.channels_last), cl.is_contiguous(),
                        cl.is_contiguous(memory_format=L.channels_last), cl.stride(),
                        x.permute(0, 2, 3, 1).is_contiguous(memory_format=L.channels_last)))
        return out
    same_outcome(go)
