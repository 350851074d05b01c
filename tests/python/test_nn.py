"""kiln.nn: Parameter, the Module machinery, Linear/activations/containers, and the
functional ops and losses, checked against NumPy formulas written out by hand."""
import copy
from collections import OrderedDict

import numpy as np
import pytest

import kiln
import kiln.nn.functional as F
from kiln import nn

F64 = kiln.float64


def t64(a, requires_grad=False):
    return kiln.tensor(np.asarray(a, dtype=np.float64), requires_grad=requires_grad)


def rand(shape, seed=0, low=-2.0, high=2.0):
    return np.random.default_rng(seed).uniform(low, high, size=shape)


def np_softmax(x, axis):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


class Net(nn.Module):
    """fc1 -> act -> fc2, plus a buffer and a plain attribute."""

    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(3, 4)
        self.act = nn.Tanh()
        self.fc2 = nn.Linear(4, 2)
        self.register_buffer("running", kiln.zeros([2]))
        self.scale = 2.0

    def forward(self, x):
        return self.fc2(self.act(self.fc1(x))) * self.scale


# ---------------------------------------------------------------- Parameter
def test_parameter_basics_and_aliasing():
    data = kiln.tensor([1.0, 2.0])
    p = nn.Parameter(data)
    assert type(p) is nn.Parameter and isinstance(p, kiln.Tensor)
    assert p.requires_grad and p.is_leaf and not data.requires_grad
    assert p.data_ptr() == data.data_ptr()
    assert not nn.Parameter(data, requires_grad=False).requires_grad
    assert nn.Parameter().shape == (0,)


def test_parameter_repr():
    p = nn.Parameter(kiln.tensor([1.0, 2.0]))
    assert repr(p) == "Parameter containing:\ntensor([1., 2.], requires_grad=True)"


def test_parameter_deepcopy_is_independent():
    p = nn.Parameter(kiln.tensor([1.0, 2.0]))
    q = copy.deepcopy(p)
    assert type(q) is nn.Parameter and q.requires_grad and q.data_ptr() != p.data_ptr()
    np.testing.assert_array_equal(q.detach().numpy(), [1.0, 2.0])


# ---------------------------------------------------------------- registration
def test_attribute_assignment_registers():
    net = Net()
    assert list(net._modules) == ["fc1", "act", "fc2"]
    assert list(net._buffers) == ["running"]
    assert "scale" in net.__dict__ and net.scale == 2.0
    assert net.fc1.weight is net.fc1._parameters["weight"]
    net.extra = nn.Parameter(kiln.ones([1]))
    assert "extra" in net._parameters and "extra" not in net.__dict__
    net.plain = kiln.ones([1])  # a plain tensor is just an attribute
    assert "plain" in net.__dict__ and "plain" not in net._buffers


def test_reassignment_rules():
    net = Net()
    net.running = kiln.ones([2])  # an existing buffer takes any tensor
    np.testing.assert_array_equal(net.running.numpy(), [1.0, 1.0])
    with pytest.raises(TypeError, match="buffer 'running'"):
        net.running = 3
    with pytest.raises(TypeError, match="parameter 'weight'"):
        net.fc1.weight = kiln.ones([4, 3])
    net.fc1.bias = None
    assert net.fc1.bias is None and "bias" in net.fc1._parameters
    with pytest.raises(TypeError, match="child module 'act'"):
        net.act = 3
    net.act = None
    assert net.act is None
    net.act = nn.Parameter(kiln.ones([1]))  # a Parameter replaces a module of the same name
    assert "act" in net._parameters and "act" not in net._modules


def test_register_errors():
    m = nn.Module()
    with pytest.raises(TypeError, match="kiln.nn.Parameter or None required"):
        m.register_parameter("w", kiln.ones([1]))
    with pytest.raises(KeyError, match="contain"):
        m.register_parameter("a.b", None)
    with pytest.raises(KeyError, match="empty string"):
        m.register_buffer("", None)
    m.x = 1
    with pytest.raises(KeyError, match="already exists"):
        m.register_buffer("x", kiln.ones([1]))
    with pytest.raises(TypeError):
        m.register_buffer("b", [1.0])
    with pytest.raises(TypeError, match="is not a Module subclass"):
        m.add_module("c", 3)
    p = nn.Parameter(kiln.ones([2]), requires_grad=False)
    p.add_(kiln.ones([2], requires_grad=True))  # now a non-leaf Parameter
    with pytest.raises(ValueError, match="non-leaf"):
        m.register_parameter("nl", p)

    class Early(nn.Module):
        def __init__(self):
            self.w = nn.Parameter(kiln.ones([1]))

    with pytest.raises(AttributeError, match="before Module.__init__"):
        Early()


def test_getattr_and_delattr():
    net = Net()
    with pytest.raises(AttributeError, match="'Net' object has no attribute 'nope'"):
        net.nope
    del net.fc2
    del net.running
    assert "fc2" not in net._modules and "running" not in net._buffers
    assert not hasattr(net, "fc2")
    assert {"fc1", "act"} <= set(dir(net))


def test_get_submodule():
    net = nn.Sequential(Net())
    assert net.get_submodule("0.fc1") is net[0].fc1
    assert net.get_submodule("") is net
    with pytest.raises(AttributeError):
        net.get_submodule("0.nope")


# ---------------------------------------------------------------- iteration
def test_named_parameters_names_and_order():
    net = Net()
    assert [n for n, _ in net.named_parameters()] == ["fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias"]
    assert [tuple(p.shape) for p in net.parameters()] == [(4, 3), (4,), (2, 4), (2,)]
    assert [n for n, _ in net.named_parameters(prefix="model")][0] == "model.fc1.weight"
    assert list(net.named_parameters(recurse=False)) == []
    assert [n for n, _ in net.fc1.named_parameters(recurse=False)] == ["weight", "bias"]


def test_shared_parameters_and_modules_are_deduplicated():
    lin = nn.Linear(2, 2)
    seq = nn.Sequential(lin, nn.Tanh(), lin)
    assert [n for n, _ in seq.named_parameters()] == ["0.weight", "0.bias"]
    assert [n for n, _ in seq.named_modules()] == ["", "0", "1"]
    assert [n for n, _ in seq.named_children()] == ["0", "1"]
    tied = nn.Module()
    tied.a, tied.b = nn.Linear(2, 2), nn.Linear(2, 2)
    tied.b.weight = tied.a.weight
    assert [n for n, _ in tied.named_parameters()] == ["a.weight", "a.bias", "b.bias"]
    assert len(list(tied.named_parameters(remove_duplicate=False))) == 4


def test_buffers_children_modules():
    net = Net()
    net.fc1.register_buffer("scratch", kiln.ones([1]), persistent=False)
    assert [n for n, _ in net.named_buffers()] == ["running", "fc1.scratch"]
    assert len(list(net.buffers(recurse=False))) == 1
    assert [n for n, _ in net.named_children()] == ["fc1", "act", "fc2"]
    assert list(net.children()) == [net.fc1, net.act, net.fc2]
    assert [n for n, _ in net.named_modules()] == ["", "fc1", "act", "fc2"]
    assert [type(m).__name__ for m in net.modules()] == ["Net", "Linear", "Tanh", "Linear"]


# ---------------------------------------------------------------- modes and gradients
def test_train_eval_propagate():
    net = nn.Sequential(Net(), nn.Sequential(nn.Tanh()))
    assert all(m.training for m in net.modules())
    assert net.eval() is net
    assert not any(m.training for m in net.modules())
    net.train()
    assert all(m.training for m in net.modules())
    net[1].train(False)
    assert net.training and not net[1].training and not net[1][0].training
    with pytest.raises(ValueError, match="boolean"):
        net.train("yes")


def test_zero_grad_and_requires_grad():
    net = Net()
    net(kiln.ones([5, 3])).sum().backward()
    assert all(p.grad is not None for p in net.parameters())
    grads = [p.grad for p in net.parameters()]
    net.zero_grad(set_to_none=False)
    for p, g in zip(net.parameters(), grads):
        assert p.grad is g and not np.any(g.numpy())
    net.zero_grad()  # torch 2.x's default: None
    assert all(p.grad is None for p in net.parameters())
    assert net.requires_grad_(False) is net
    assert not any(p.requires_grad for p in net.parameters())


def test_apply_visits_children_first():
    net = Net()
    seen = []
    assert net.apply(lambda m: seen.append(type(m).__name__)) is net
    assert seen == ["Linear", "Tanh", "Linear", "Net"]


def test_call_runs_forward_and_missing_forward():
    lin = nn.Linear(3, 2)
    x = kiln.ones([1, 3])
    np.testing.assert_array_equal(lin(x).detach().numpy(), lin.forward(x).detach().numpy())
    with pytest.raises(NotImplementedError, match='missing the required "forward"'):
        nn.Module()(x)


def test_to_double():
    net = Net().to(F64)
    assert all(p.dtype == F64 and type(p) is nn.Parameter and p.requires_grad for p in net.parameters())
    assert net.running.dtype == F64
    assert net(kiln.ones([1, 3], dtype=F64)).dtype == F64
    assert nn.Linear(2, 2, dtype=F64).weight.dtype == F64


# ---------------------------------------------------------------- state dict
def test_state_dict_keys_values_detached():
    net = Net()
    net.fc1.register_buffer("scratch", kiln.ones([1]), persistent=False)
    sd = net.state_dict()
    assert isinstance(sd, OrderedDict)
    assert list(sd) == ["running", "fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias"]
    assert not any(v.requires_grad for v in sd.values())
    assert sd["fc1.weight"].data_ptr() == net.fc1.weight.data_ptr()  # shares memory, like torch
    assert net.state_dict(keep_vars=True)["fc1.weight"] is net.fc1.weight


def test_state_dict_round_trip():
    src, dst = Net(), Net()
    with kiln.no_grad():
        src.running.fill_(7.0)
    weight = dst.fc1.weight
    result = dst.load_state_dict(src.state_dict())
    assert result.missing_keys == [] and result.unexpected_keys == []
    assert repr(result) == "<All keys matched successfully>"
    assert dst.fc1.weight is weight and weight.requires_grad and weight.is_leaf  # copied in place
    for (k, a), b in zip(src.state_dict().items(), dst.state_dict().values()):
        np.testing.assert_array_equal(a.numpy(), b.numpy(), err_msg=k)
    x = kiln.ones([2, 3])
    np.testing.assert_array_equal(src(x).detach().numpy(), dst(x).detach().numpy())


def test_load_state_dict_strict_errors():
    net = Net()
    sd = net.state_dict()
    del sd["fc2.bias"]
    sd["fc3.weight"] = kiln.ones([1])
    sd["fc1.extra"] = kiln.ones([1])
    with pytest.raises(RuntimeError) as e:
        net.load_state_dict(sd)
    msg = str(e.value)
    assert msg.startswith("Error(s) in loading state_dict for Net:")
    assert 'Missing key(s) in state_dict: "fc2.bias".' in msg
    assert 'Unexpected key(s) in state_dict: "fc3.weight", "fc1.extra".' in msg
    result = net.load_state_dict(sd, strict=False)
    assert result.missing_keys == ["fc2.bias"]
    assert result.unexpected_keys == ["fc3.weight", "fc1.extra"]


def test_load_state_dict_size_mismatch_raises_even_when_not_strict():
    net = Net()
    sd = net.state_dict()
    sd["fc1.weight"] = kiln.ones([3, 4])
    for strict in (True, False):
        with pytest.raises(RuntimeError, match=r"size mismatch for fc1\.weight: copying a param with shape "
                                               r"kiln\.Size\(\[3, 4\]\) from checkpoint, the shape in current "
                                               r"model is kiln\.Size\(\[4, 3\]\)"):
            net.load_state_dict(sd, strict=strict)
    with pytest.raises(TypeError, match="dict-like"):
        net.load_state_dict([1, 2])


# ---------------------------------------------------------------- repr
def test_repr_nested():
    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.body = nn.Sequential(nn.Linear(2, 3), nn.ReLU(inplace=True))
            self.head = nn.Linear(3, 1, bias=False)

        def extra_repr(self):
            return "depth=2\nwidth=3"

    assert repr(Block()) == (
        "Block(\n"
        "  depth=2\n"
        "  width=3\n"
        "  (body): Sequential(\n"
        "    (0): Linear(in_features=2, out_features=3, bias=True)\n"
        "    (1): ReLU(inplace=True)\n"
        "  )\n"
        "  (head): Linear(in_features=3, out_features=1, bias=False)\n"
        ")")
    assert repr(nn.Tanh()) == "Tanh()"
    assert repr(nn.Softmax(dim=1)) == "Softmax(dim=1)"


# ---------------------------------------------------------------- Linear
def test_linear_shapes_and_init_bounds():
    lin = nn.Linear(16, 5)
    assert tuple(lin.weight.shape) == (5, 16) and tuple(lin.bias.shape) == (5,)
    bound = 1 / np.sqrt(16)
    for p in (lin.weight, lin.bias):
        a = p.detach().numpy()
        assert np.all(np.abs(a) <= bound) and np.std(a) > 0
    w = nn.Linear(400, 100).weight.detach().numpy()  # U(-b, b): mean 0, std b/sqrt(3)
    assert abs(w.mean()) < 0.002 and abs(w.std() - 0.05 / np.sqrt(3)) < 0.002
    assert nn.Linear(3, 2, bias=False).bias is None


def test_linear_init_follows_manual_seed():
    kiln.manual_seed(123)
    a = nn.Linear(4, 3)
    kiln.manual_seed(123)
    b = nn.Linear(4, 3)
    np.testing.assert_array_equal(a.weight.detach().numpy(), b.weight.detach().numpy())
    np.testing.assert_array_equal(a.bias.detach().numpy(), b.bias.detach().numpy())


@pytest.mark.parametrize("shape", [(3,), (5, 3), (2, 4, 3)])
def test_linear_forward_against_numpy(shape):
    lin = nn.Linear(3, 2).to(F64)
    x = rand(shape)
    w, b = lin.weight.detach().numpy(), lin.bias.detach().numpy()
    out = lin(t64(x))
    assert tuple(out.shape) == shape[:-1] + (2,)
    np.testing.assert_allclose(out.detach().numpy(), x @ w.T + b, rtol=1e-12)
    np.testing.assert_allclose(F.linear(t64(x), lin.weight).detach().numpy(), x @ w.T, rtol=1e-12)


def test_linear_backward_against_numpy():
    lin = nn.Linear(3, 2).to(F64)
    x_np, g_np = rand((5, 3), 1), rand((5, 2), 2)
    x = t64(x_np, requires_grad=True)
    lin(x).backward(t64(g_np))
    w = lin.weight.detach().numpy()
    np.testing.assert_allclose(lin.weight.grad.numpy(), g_np.T @ x_np, rtol=1e-12)
    np.testing.assert_allclose(lin.bias.grad.numpy(), g_np.sum(0), rtol=1e-12)
    np.testing.assert_allclose(x.grad.numpy(), g_np @ w, rtol=1e-12)


# ---------------------------------------------------------------- containers
def test_sequential_indexing_and_forward():
    a, b, c = nn.Linear(2, 3), nn.Tanh(), nn.Linear(3, 1)
    seq = nn.Sequential(a, b, c)
    assert len(seq) == 3 and list(seq) == [a, b, c]
    assert seq[0] is a and seq[-1] is c
    sub = seq[1:]
    assert type(sub) is nn.Sequential and list(sub) == [b, c] and list(sub._modules) == ["1", "2"]
    with pytest.raises(IndexError, match="out of range"):
        seq[3]
    x = kiln.ones([4, 2])
    np.testing.assert_array_equal(seq(x).detach().numpy(), c(b(a(x))).detach().numpy())
    d = nn.Sigmoid()
    assert seq.append(d) is seq and seq[3] is d and len(seq) == 4
    seq[1] = nn.Sigmoid()
    assert type(seq[1]) is nn.Sigmoid
    del seq[0]
    assert list(seq._modules) == ["0", "1", "2"] and seq[0] is not a


def test_sequential_from_ordered_dict():
    seq = nn.Sequential(OrderedDict([("fc", nn.Linear(2, 2)), ("act", nn.Tanh())]))
    assert [n for n, _ in seq.named_parameters()] == ["fc.weight", "fc.bias"]
    assert seq.fc is seq[0]
    assert repr(seq).splitlines()[1] == "  (fc): Linear(in_features=2, out_features=2, bias=True)"


def test_module_list():
    ml = nn.ModuleList([nn.Linear(2, 2) for _ in range(3)])
    assert len(ml) == 3
    assert [n for n, _ in ml.named_parameters()][-1] == "2.bias"
    ml.append(nn.Tanh()).extend([nn.Sigmoid()])
    assert len(ml) == 5 and type(ml[-1]) is nn.Sigmoid
    assert type(ml[1:3]) is nn.ModuleList and len(ml[1:3]) == 2


# ---------------------------------------------------------------- activations
ACTIVATIONS = [
    (nn.ReLU, lambda x: np.maximum(x, 0), lambda x: (x > 0).astype(float)),
    (nn.Tanh, np.tanh, lambda x: 1 - np.tanh(x) ** 2),
    (nn.Sigmoid, lambda x: 1 / (1 + np.exp(-x)), lambda x: np.exp(-x) / (1 + np.exp(-x)) ** 2),
]


@pytest.mark.parametrize("cls,fn,dfn", ACTIVATIONS, ids=["ReLU", "Tanh", "Sigmoid"])
def test_activation_modules(cls, fn, dfn):
    x_np = rand((4, 5), 3)
    x = t64(x_np, requires_grad=True)
    y = cls()(x)
    np.testing.assert_allclose(y.detach().numpy(), fn(x_np), rtol=1e-12)
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), dfn(x_np), rtol=1e-10)


def test_relu_inplace():
    x = kiln.tensor([-1.0, 2.0])
    assert nn.ReLU(inplace=True)(x) is x
    np.testing.assert_array_equal(x.numpy(), [0.0, 2.0])


# ---------------------------------------------------------------- softmax family
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_softmax_and_log_softmax_values(dim):
    x_np = rand((3, 4), 4, -5, 5)
    s = F.softmax(t64(x_np), dim).numpy()
    np.testing.assert_allclose(s, np_softmax(x_np, dim), rtol=1e-12)
    np.testing.assert_allclose(s.sum(axis=dim), 1.0, rtol=1e-12)
    ls = F.log_softmax(t64(x_np), dim).numpy()
    np.testing.assert_allclose(ls, np.log(np_softmax(x_np, dim)), rtol=1e-12, atol=1e-12)


def test_softmax_is_stable_for_large_inputs():
    x = kiln.tensor([[1000.0, 1001.0, 1002.0], [-1000.0, -1000.0, -1000.0]])
    s = F.softmax(x, 1).numpy()
    ls = F.log_softmax(x, 1).numpy()
    assert np.all(np.isfinite(s)) and np.all(np.isfinite(ls))
    np.testing.assert_allclose(s[0], np_softmax(np.array([0.0, 1.0, 2.0]), 0), rtol=1e-6)
    np.testing.assert_allclose(s[1], [1 / 3] * 3, rtol=1e-6)


def test_softmax_gradients_against_formula():
    x_np, g_np = rand((3, 4), 5), rand((3, 4), 6)
    x = t64(x_np, requires_grad=True)
    F.softmax(x, 1).backward(t64(g_np))
    s = np_softmax(x_np, 1)
    np.testing.assert_allclose(x.grad.numpy(), s * (g_np - (g_np * s).sum(1, keepdims=True)), rtol=1e-10)
    x = t64(x_np, requires_grad=True)
    F.log_softmax(x, 1).backward(t64(g_np))
    np.testing.assert_allclose(x.grad.numpy(), g_np - s * g_np.sum(1, keepdims=True), rtol=1e-10, atol=1e-12)
    mod = nn.LogSoftmax(dim=1)
    np.testing.assert_allclose(mod(t64(x_np)).detach().numpy(), np.log(s), rtol=1e-12)


# ---------------------------------------------------------------- losses
def np_nll(logp, target, weight=None, ignore_index=-100):
    """Per-element losses and weights, written as loops."""
    n = logp.shape[0]
    losses, ws = np.zeros(n), np.zeros(n)
    for i in range(n):
        if target[i] != ignore_index:
            ws[i] = 1.0 if weight is None else weight[target[i]]
            losses[i] = -logp[i, target[i]] * ws[i]
    return losses, ws


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_nll_loss_reductions(reduction):
    logp_np = np.log(np_softmax(rand((6, 4), 7), 1))
    target = np.array([0, 3, 1, 1, 2, 0])
    out = F.nll_loss(t64(logp_np), kiln.tensor(target), reduction=reduction).numpy()
    losses, ws = np_nll(logp_np, target)
    ref = {"none": losses, "sum": losses.sum(), "mean": losses.sum() / ws.sum()}[reduction]
    np.testing.assert_allclose(out, ref, rtol=1e-12)


def test_nll_loss_ignore_index_and_weight():
    logp_np = rand((5, 3), 8)
    target = np.array([2, -100, 0, 1, 2])
    weight = np.array([0.5, 2.0, 1.5])
    losses, ws = np_nll(logp_np, target, weight)
    out = F.nll_loss(t64(logp_np), kiln.tensor(target), weight=t64(weight))
    np.testing.assert_allclose(out.numpy(), losses.sum() / ws.sum(), rtol=1e-12)
    target2 = np.array([2, 1, 0, 1, 2])
    losses, ws = np_nll(logp_np, target2, ignore_index=1)
    out = F.nll_loss(t64(logp_np), kiln.tensor(target2), ignore_index=1, reduction="none")
    np.testing.assert_allclose(out.numpy(), losses, rtol=1e-12)
    assert np.isnan(F.nll_loss(t64(logp_np), kiln.full([5], -100, dtype=kiln.int64)).item())
    x = t64(logp_np, requires_grad=True)  # d(mean)/dx[i, t_i] = -w[t_i] / sum(w), 0 elsewhere
    F.nll_loss(x, kiln.tensor(target), weight=t64(weight)).backward()
    _, ws = np_nll(logp_np, target, weight)
    expected = np.zeros_like(logp_np)
    for i, c in enumerate(target):
        if c != -100:
            expected[i, c] = -weight[c] / ws.sum()
    np.testing.assert_allclose(x.grad.numpy(), expected, rtol=1e-12)


def test_nll_loss_spatial_and_unbatched():
    logp_np = rand((2, 3, 4), 9)  # [N, C, d]
    target = np.array([[0, 1, 2, 1], [2, 2, 0, 1]])
    out = F.nll_loss(t64(logp_np), kiln.tensor(target), reduction="none").numpy()
    ref = -np.take_along_axis(logp_np, target[:, None, :], axis=1)[:, 0, :]
    np.testing.assert_allclose(out, ref, rtol=1e-12)
    logp4 = rand((2, 3, 2, 2), 15)  # [N, C, d1, d2]
    target4 = np.array([[[0, 2], [1, 1]], [[2, 0], [-100, 1]]])
    out = F.nll_loss(t64(logp4), kiln.tensor(target4), reduction="none").numpy()
    ref = -np.take_along_axis(logp4, np.maximum(target4, 0)[:, None], axis=1)[:, 0] * (target4 != -100)
    np.testing.assert_allclose(out, ref, rtol=1e-12)
    np.testing.assert_allclose(F.nll_loss(t64(logp4), kiln.tensor(target4)).item(), ref.sum() / 7, rtol=1e-12)
    single = F.nll_loss(t64([0.1, -0.2, 0.3]), kiln.tensor(1))
    assert single.dim() == 0 and abs(single.item() - 0.2) < 1e-12


def test_nll_loss_errors():
    logp = t64(rand((2, 3)))
    with pytest.raises(IndexError, match="out of bounds"):
        F.nll_loss(logp, kiln.tensor([0, 3]))
    with pytest.raises(ValueError, match="to match target batch_size"):  # torch 1.13: a ValueError
        F.nll_loss(logp, kiln.tensor([0, 1, 2]))
    with pytest.raises(RuntimeError, match="integer target of dtype int64"):
        F.nll_loss(logp, kiln.tensor([0.0, 1.0]))
    with pytest.raises(ValueError, match="not a valid value for reduction"):
        F.nll_loss(logp, kiln.tensor([0, 1]), reduction="avg")


def test_cross_entropy_value_and_gradient():
    x_np = rand((4, 5), 10, -3, 3)
    target = np.array([4, 0, 2, 2])
    x = t64(x_np, requires_grad=True)
    loss = F.cross_entropy(x, kiln.tensor(target))
    s = np_softmax(x_np, 1)
    np.testing.assert_allclose(loss.item(), -np.log(s[np.arange(4), target]).mean(), rtol=1e-12)
    loss.backward()
    onehot = np.eye(5)[target]
    np.testing.assert_allclose(x.grad.numpy(), (s - onehot) / 4, rtol=1e-10, atol=1e-14)
    mod = nn.CrossEntropyLoss(reduction="sum")
    np.testing.assert_allclose(mod(t64(x_np), kiln.tensor(target)).item(), loss.item() * 4, rtol=1e-12)


def test_cross_entropy_probability_targets():
    x_np = rand((3, 4), 11)
    p_np = np_softmax(rand((3, 4), 12), 1)
    out = F.cross_entropy(t64(x_np), t64(p_np))
    ref = -(p_np * np.log(np_softmax(x_np, 1))).sum(1).mean()
    np.testing.assert_allclose(out.item(), ref, rtol=1e-12)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_mse_loss(reduction):
    a_np, b_np = rand((3, 4), 13), rand((3, 4), 14)
    a = t64(a_np, requires_grad=True)
    out = F.mse_loss(a, t64(b_np), reduction=reduction)
    sq = (a_np - b_np) ** 2
    ref = {"none": sq, "sum": sq.sum(), "mean": sq.mean()}[reduction]
    np.testing.assert_allclose(out.detach().numpy(), ref, rtol=1e-12)
    if reduction == "mean":
        out.backward()
        np.testing.assert_allclose(a.grad.numpy(), 2 * (a_np - b_np) / a_np.size, rtol=1e-12)
        np.testing.assert_allclose(nn.MSELoss()(t64(a_np), t64(b_np)).item(), ref, rtol=1e-12)


# ---------------------------------------------------------------- end to end
def test_training_a_small_classifier():
    kiln.manual_seed(0)
    rng = np.random.default_rng(0)
    x_np = rng.normal(size=(64, 2))
    y_np = (x_np[:, 0] + x_np[:, 1] > 0).astype(np.int64)
    model = nn.Sequential(nn.Linear(2, 8), nn.ReLU(), nn.Linear(8, 2))
    opt = kiln.optim.SGD(model.parameters(), lr=0.5, momentum=0.9)
    x, y = kiln.tensor(x_np, dtype=kiln.float32), kiln.tensor(y_np)
    losses = []
    for _ in range(60):
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    assert losses[-1] < 0.25 * losses[0]
    pred = F.softmax(model(x), 1).detach().numpy().argmax(1)
    assert (pred == y_np).mean() > 0.9


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("weighted", [False, True])
def test_cross_entropy_label_smoothing(reduction, weighted):
    x = rand((5, 4), 11)
    target = np.array([0, 3, -100, 1, 3])
    w = np.array([0.5, 1.0, 2.0, 1.5]) if weighted else np.ones(4)
    eps = 0.2
    logp = x - np.log(np.exp(x).sum(1, keepdims=True))
    keep = target != -100
    safe = np.where(keep, target, 0)
    nll = -logp[np.arange(5), safe] * w[safe] * keep
    smooth = -(logp * w).sum(1) * keep
    if reduction == "none":
        expected = (1 - eps) * nll + eps / 4 * smooth
    elif reduction == "sum":
        expected = (1 - eps) * nll.sum() + eps / 4 * smooth.sum()
    else:
        denom = (w[safe] * keep).sum()
        expected = ((1 - eps) * nll.sum() + eps / 4 * smooth.sum()) / denom
    got = F.cross_entropy(t64(x), kiln.tensor(target), weight=t64(w) if weighted else None, reduction=reduction,
                          label_smoothing=eps)
    np.testing.assert_allclose(got.numpy(), expected, rtol=1e-10)


def test_legacy_size_average_and_reduce_flags():
    x, y = t64(np.array([1.0, 2.0, 4.0])), t64(np.zeros(3))
    assert F.mse_loss(x, y, size_average=False).item() == 21.0
    np.testing.assert_array_equal(F.mse_loss(x, y, reduce=False).numpy(), [1.0, 4.0, 16.0])
    assert F.mse_loss(x, y).item() == 7.0
    with pytest.raises(RuntimeError, match="label_smoothing"):
        F.cross_entropy(t64(np.zeros((2, 3))), kiln.tensor([0, 1]), label_smoothing=1.5)
