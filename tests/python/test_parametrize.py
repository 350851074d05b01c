"""nn.utils.parametrize and nn.utils.parametrizations against torch 1.13 (the same weights in both):
registration, the class swap, chained parametrizations, right_inverse, tensors parametrized by
several originals, removal, cached(), state_dict keys and checkpoints both ways, forward values
and gradients; spectral_norm and orthogonal against torch's; weight_norm (torch 2.1+, absent from
torch 1.13) against torch 1.13's hook-based weight_norm and hand-computed values."""
import copy
import pickle

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import kiln  # noqa: E402
from kiln.nn.utils import parametrizations as kP  # noqa: E402
from kiln.nn.utils import parametrize as kparam  # noqa: E402
import torch.nn.utils.parametrizations as tP  # noqa: E402
import torch.nn.utils.parametrize as tparam  # noqa: E402


def _k(t):
    return kiln.tensor(t.detach().numpy())


def _t(k):
    return torch.tensor(k.detach().numpy())


def _close(k, t, **kw):
    np.testing.assert_allclose(k.detach().numpy(), t.detach().numpy(), **{"rtol": 1e-5, "atol": 1e-6, **kw})


def _pair(make):
    t = make(torch)
    k = make(kiln)
    k.load_state_dict({n: _k(v) for n, v in t.state_dict().items()})
    return t, k


def _state_to_kiln(t, k):
    k.load_state_dict({n: _k(v) for n, v in t.state_dict().items()})


# parametrizations written once, for both libraries (L is torch or kiln)
def symmetric(L):
    class Symmetric(L.nn.Module):
        def forward(self, X):
            return X.triu() + X.triu(1).transpose(-1, -2)

        def right_inverse(self, A):
            return A.triu()
    return Symmetric()


def scaled(L, s):
    class Scale(L.nn.Module):
        def forward(self, X):
            return X * s

        def right_inverse(self, A):
            return A / s
    return Scale()


def split_sum(L):
    """weight = A + B, right_inverse splits it in two halves: two originals."""
    class SplitSum(L.nn.Module):
        def forward(self, A, B):
            return A + 2 * B

        def right_inverse(self, W):
            return W * 0.5, W * 0.25
    return SplitSum()


def test_register_class_swap_and_keys():
    t, k = _pair(lambda L: L.nn.Linear(4, 4))
    tparam.register_parametrization(t, "weight", symmetric(torch))
    kparam.register_parametrization(k, "weight", symmetric(kiln))
    assert type(k).__name__ == type(t).__name__ == "ParametrizedLinear"
    assert isinstance(k, kiln.nn.Linear)
    assert kparam.type_before_parametrizations(k) is kiln.nn.Linear
    assert type(kiln.nn.Linear(2, 2)) is kiln.nn.Linear  # other instances keep their class
    assert list(k.state_dict()) == list(t.state_dict()) == ["bias", "parametrizations.weight.original"]
    assert [n for n, _ in k.named_parameters()] == [n for n, _ in t.named_parameters()]
    assert kparam.is_parametrized(k) and kparam.is_parametrized(k, "weight")
    assert not kparam.is_parametrized(k, "bias") and not kparam.is_parametrized(kiln.nn.Linear(2, 2))
    assert "weight" not in k._parameters
    # registering keeps the value (right_inverse then forward), which is symmetric now
    _close(k.parametrizations.weight.original, t.parametrizations.weight.original)
    _close(k.weight, t.weight)
    np.testing.assert_allclose(k.weight.detach().numpy(), k.weight.detach().numpy().T)


def test_forward_and_gradients_match_torch():
    t, k = _pair(lambda L: L.nn.Linear(5, 5))
    tparam.register_parametrization(t, "weight", symmetric(torch))
    kparam.register_parametrization(k, "weight", symmetric(kiln))
    x = np.random.RandomState(0).randn(3, 5).astype(np.float32)
    t(torch.tensor(x)).pow(2).sum().backward()
    k(kiln.tensor(x)).pow(2).sum().backward()
    _close(k.parametrizations.weight.original.grad, t.parametrizations.weight.original.grad)
    _close(k.bias.grad, t.bias.grad)


def test_chained_parametrizations_and_assignment():
    t, k = _pair(lambda L: L.nn.Linear(3, 3))
    for L, m, P in ((torch, t, tparam), (kiln, k, kparam)):
        P.register_parametrization(m, "weight", symmetric(L))
        P.register_parametrization(m, "weight", scaled(L, 3.0))
    assert len(k.parametrizations.weight) == 2
    _close(k.weight, t.weight)
    # assignment runs right_inverse through the chain, last parametrization first
    value = np.arange(9, dtype=np.float32).reshape(3, 3)
    original = k.parametrizations.weight.original
    t.weight = torch.tensor(value)
    k.weight = kiln.tensor(value)
    assert k.parametrizations.weight.original is original  # same object, new data (torch's set_)
    _close(k.parametrizations.weight.original, t.parametrizations.weight.original)
    _close(k.weight, t.weight)
    x = torch.randn(2, 3)
    t(x).sum().backward()
    k(_k(x)).sum().backward()
    _close(k.parametrizations.weight.original.grad, t.parametrizations.weight.original.grad)


def test_chained_registration_checks_shape():
    class Bad(kiln.nn.Module):
        def forward(self, X):
            return X[:1]
    k = kiln.nn.Linear(3, 3)
    kparam.register_parametrization(k, "weight", symmetric(kiln))
    with pytest.raises(ValueError, match="may not change the shape"):
        kparam.register_parametrization(k, "weight", Bad())
    with pytest.raises(ValueError, match="may not change the shape"):
        kparam.register_parametrization(kiln.nn.Linear(3, 3), "weight", Bad())
    kparam.register_parametrization(kiln.nn.Linear(3, 3), "weight", Bad(), unsafe=True)
    with pytest.raises(ValueError, match="does not have a parameter, a buffer"):
        kparam.register_parametrization(kiln.nn.Linear(3, 3), "nothing", symmetric(kiln))


def test_several_originals():
    t, k = _pair(lambda L: L.nn.Linear(3, 2))
    tparam.register_parametrization(t, "weight", split_sum(torch))
    kparam.register_parametrization(k, "weight", split_sum(kiln))
    assert list(k.state_dict()) == list(t.state_dict())
    assert "parametrizations.weight.original1" in k.state_dict()
    assert isinstance(k.parametrizations.weight.original0, kiln.nn.Parameter)
    _close(k.weight, t.weight)
    x = torch.randn(4, 3)
    t(x).sum().backward()
    k(_k(x)).sum().backward()
    for i in range(2):
        _close(getattr(k.parametrizations.weight, f"original{i}").grad,
               getattr(t.parametrizations.weight, f"original{i}").grad)


def test_buffer_parametrization():
    k = kiln.nn.Module()
    k.register_buffer("w", kiln.tensor([[1.0, 2.0], [3.0, 4.0]]))
    kparam.register_parametrization(k, "w", symmetric(kiln))
    assert list(k.state_dict()) == ["parametrizations.w.original"]
    assert not k.parametrizations.w.original.requires_grad
    np.testing.assert_allclose(k.w.numpy(), [[1.0, 2.0], [2.0, 4.0]])


@pytest.mark.parametrize("leave", [True, False])
def test_remove_parametrizations(leave):
    t, k = _pair(lambda L: L.nn.Linear(3, 3))
    tparam.register_parametrization(t, "weight", scaled(torch, 2.0))
    kparam.register_parametrization(k, "weight", scaled(kiln, 2.0))
    original = k.parametrizations.weight.original
    tparam.remove_parametrizations(t, "weight", leave_parametrized=leave)
    kparam.remove_parametrizations(k, "weight", leave_parametrized=leave)
    assert type(k) is kiln.nn.Linear and not hasattr(k, "parametrizations")
    assert k.weight is original and isinstance(k.weight, kiln.nn.Parameter)
    assert list(k.state_dict()) == list(t.state_dict()) == ["bias", "weight"]
    _close(k.weight, t.weight)
    with pytest.raises(ValueError, match="does not have a parametrization"):
        kparam.remove_parametrizations(k, "weight")


def test_remove_one_of_two_keeps_class():
    k = kiln.nn.Linear(3, 3)
    kparam.register_parametrization(k, "weight", scaled(kiln, 2.0))
    kparam.register_parametrization(k, "bias", scaled(kiln, 2.0))
    kparam.remove_parametrizations(k, "weight")
    assert type(k).__name__ == "ParametrizedLinear" and kparam.is_parametrized(k, "bias")
    kparam.remove_parametrizations(k, "bias")
    assert type(k) is kiln.nn.Linear


def test_remove_several_originals():
    k = kiln.nn.Linear(3, 2)
    kparam.register_parametrization(k, "weight", split_sum(kiln))
    w = k.weight.detach().clone()
    with pytest.raises(ValueError, match="sequence of tensors"):
        kparam.remove_parametrizations(k, "weight", leave_parametrized=False)
    kparam.remove_parametrizations(k, "weight")
    assert isinstance(k.weight, kiln.nn.Parameter) and k.weight.grad_fn is None
    np.testing.assert_allclose(k.weight.detach().numpy(), w.numpy())


def test_cached_computes_once():
    counts = {"kiln": 0, "torch": 0}

    def counting(L, key):
        class Counting(L.nn.Module):
            def forward(self, X):
                counts[key] += 1
                return X * 2
        return Counting()

    t, k = _pair(lambda L: L.nn.Linear(3, 3))
    tparam.register_parametrization(t, "weight", counting(torch, "torch"))
    kparam.register_parametrization(k, "weight", counting(kiln, "kiln"))
    counts.update(kiln=0, torch=0)
    with tparam.cached():
        a = t.weight, t.weight
    with kparam.cached():
        b = k.weight, k.weight
        with kparam.cached():  # nested: still one computation
            k.weight
    assert b[0] is b[1]
    k.weight
    t.weight
    assert counts == {"kiln": 2, "torch": 2}
    _close(b[0], a[0])


def test_pickle_refused_deepcopy_works():
    k = kiln.nn.Linear(3, 3)
    kparam.register_parametrization(k, "weight", scaled(kiln, 2.0))
    with pytest.raises(RuntimeError, match="only supported through state_dict"):
        pickle.dumps(k)
    c = copy.deepcopy(k)
    assert type(c).__name__ == "ParametrizedLinear"
    assert c.parametrizations.weight.original is not k.parametrizations.weight.original
    _close(c.weight, _t(k.weight))


def test_transfer_parametrizations():
    a, b = kiln.nn.Linear(3, 3), kiln.nn.Linear(3, 3)
    kparam.register_parametrization(a, "weight", scaled(kiln, 2.0))
    kparam.transfer_parametrizations_and_params(a, b)
    assert b.parametrizations.weight.original is a.parametrizations.weight.original
    _close(b.weight, _t(a.weight))


# ---- spectral_norm ----
SN_MODULES = [
    (lambda L: L.nn.Linear(5, 4), (3, 5)),
    (lambda L: L.nn.Conv2d(3, 4, 3), (2, 3, 6, 6)),
    (lambda L: L.nn.ConvTranspose2d(3, 4, 3), (2, 3, 5, 5)),
]


@pytest.mark.parametrize("make,shape", SN_MODULES)
def test_spectral_norm_matches_torch_seeded(make, shape):
    torch.manual_seed(0)
    kiln.manual_seed(0)
    t, k = make(torch), make(kiln)
    torch.manual_seed(1)
    kiln.manual_seed(1)
    t = tP.spectral_norm(t)
    k = kP.spectral_norm(k)
    assert list(k.state_dict()) == list(t.state_dict())
    for name, v in t.state_dict().items():  # the same generator stream: the same u, v
        _close(k.state_dict()[name], v, rtol=1e-4, atol=1e-5)
    x = np.random.RandomState(2).randn(*shape).astype(np.float32)
    for step in range(3):
        t.zero_grad()
        k.zero_grad()
        yt, yk = t(torch.tensor(x)), k(kiln.tensor(x))
        _close(yk, yt, rtol=1e-4, atol=1e-5)
        yt.pow(2).sum().backward()
        yk.pow(2).sum().backward()
        _close(k.parametrizations.weight.original.grad, t.parametrizations.weight.original.grad, rtol=1e-3, atol=1e-4)
        _close(k.parametrizations.weight[0]._u, t.parametrizations.weight[0]._u, rtol=1e-4, atol=1e-5)
    t.eval()
    k.eval()
    _close(k(kiln.tensor(x)), t(torch.tensor(x)), rtol=1e-4, atol=1e-5)


def test_spectral_norm_state_dict_both_ways():
    t = tP.spectral_norm(torch.nn.Linear(4, 3))
    k = kP.spectral_norm(kiln.nn.Linear(4, 3))
    _state_to_kiln(t, k)  # torch -> kiln
    t.eval()
    k.eval()
    x = torch.randn(2, 4)
    _close(k(_k(x)), t(x))
    k2 = kP.spectral_norm(kiln.nn.Linear(4, 3))
    t2 = tP.spectral_norm(torch.nn.Linear(4, 3))
    t2.load_state_dict({n: _t(v) for n, v in k2.state_dict().items()})  # kiln -> torch
    t2.eval()
    k2.eval()
    _close(k2(_k(x)), t2(x))


def test_spectral_norm_1d_and_errors():
    k = kiln.nn.Module()
    k.w = kiln.nn.Parameter(kiln.tensor([3.0, 4.0]))
    kP.spectral_norm(k, "w")
    np.testing.assert_allclose(k.w.detach().numpy(), [0.6, 0.8], rtol=1e-6)
    with pytest.raises(IndexError, match="Dimension out of range"):
        kP.spectral_norm(kiln.nn.Linear(3, 3), dim=2)
    with pytest.raises(ValueError, match="n_power_iterations to be positive"):
        kP.spectral_norm(kiln.nn.Linear(3, 3), n_power_iterations=0)
    with pytest.raises(ValueError, match="has no parameter or buffer"):
        kP.spectral_norm(kiln.nn.Linear(3, 3), "nothing")


# ---- orthogonal ----
ORTH_CASES = [((4, 4), "matrix_exp"), ((5, 3), "matrix_exp"), ((3, 5), "matrix_exp"),
              ((5, 3), "householder"), ((3, 5), "householder"), ((4, 4), "householder"),
              ((2, 4, 3), "matrix_exp"), ((4, 4), "cayley"), ((5, 3), "cayley"), ((3, 5), "cayley"),
              ((2, 4, 3), "cayley")]


def _orth_module(L, shape):
    m = L.nn.Module()
    m.weight = L.nn.Parameter(L.randn(*shape))
    return m


def _orthonormal(Q):
    q = Q.detach().numpy().astype(np.float64)
    if q.shape[-2] < q.shape[-1]:
        q = np.swapaxes(q, -1, -2)
    gram = np.swapaxes(q, -1, -2) @ q
    np.testing.assert_allclose(gram, np.broadcast_to(np.eye(q.shape[-1]), gram.shape), atol=1e-5)


@pytest.mark.parametrize("triv", [True, False])
@pytest.mark.parametrize("shape,omap", ORTH_CASES)
def test_orthogonal_matches_torch(shape, omap, triv):
    torch.manual_seed(0)
    t = _orth_module(torch, shape)
    k = kiln.nn.Module()
    k.weight = kiln.nn.Parameter(_k(t.weight))
    torch.manual_seed(1)
    kiln.manual_seed(1)
    tP.orthogonal(t, orthogonal_map=omap, use_trivialization=triv)
    kP.orthogonal(k, orthogonal_map=omap, use_trivialization=triv)
    assert list(k.state_dict()) == list(t.state_dict())
    _orthonormal(k.weight)
    # the registration (QR of the weight, random completion for non-square) as torch's
    for name, v in t.state_dict().items():
        _close(k.state_dict()[name], v, rtol=1e-4, atol=1e-4)
    # with torch's exact state, forward and gradients agree
    _state_to_kiln(t, k)
    _close(k.weight, t.weight, rtol=1e-4, atol=1e-5)
    g = torch.randn(*shape)
    (t.weight * g).sum().backward()
    (k.weight * _k(g)).sum().backward()
    _close(k.parametrizations.weight.original.grad, t.parametrizations.weight.original.grad, rtol=1e-4, atol=1e-4)


def test_orthogonal_assignment_and_training_step():
    torch.manual_seed(0)
    t, k = _pair(lambda L: L.nn.Linear(4, 4))
    torch.manual_seed(3)
    kiln.manual_seed(3)
    tP.orthogonal(t)
    kP.orthogonal(k)
    _state_to_kiln(t, k)
    Q = torch.linalg.qr(torch.randn(4, 4))[0]
    t.weight = Q
    k.weight = _k(Q)
    _close(k.weight, t.weight, atol=1e-5)
    _close(k.parametrizations.weight[0].base, t.parametrizations.weight[0].base, atol=1e-6)
    ot = torch.optim.SGD(t.parameters(), lr=0.1)
    ok = kiln.optim.SGD(k.parameters(), lr=0.1)
    x = torch.randn(3, 4)
    for _ in range(3):
        ot.zero_grad()
        ok.zero_grad()
        t(x).pow(3).sum().backward()
        k(_k(x)).pow(3).sum().backward()
        ot.step()
        ok.step()
    # matrix_exp is kiln's Taylor series, torch's a Pade-type one: rounding differs, and 3 steps of a
    # cubic loss amplify it
    _close(k.weight, t.weight, rtol=1e-3, atol=3e-4)
    _orthonormal(k.weight)


def test_orthogonal_matrix_exp_hand_value():
    # exp([[0, -a], [a, 0]]) is the rotation by a
    a = 0.7
    k = kiln.nn.Module()
    k.weight = kiln.nn.Parameter(kiln.zeros(2, 2))
    kP.orthogonal(k, orthogonal_map="matrix_exp", use_trivialization=False)
    with kiln.no_grad():
        k.parametrizations.weight.original.copy_(kiln.tensor([[0.0, 0.0], [a, 0.0]]))
    np.testing.assert_allclose(k.weight.detach().numpy(),
                               [[np.cos(a), -np.sin(a)], [np.sin(a), np.cos(a)]], rtol=1e-6, atol=1e-7)


def test_orthogonal_cayley_hand_value():
    # the Cayley map of A = [[0, -a], [a, 0]], (I - A/2)^{-1} (I + A/2), is the rotation by 2 atan(a / 2)
    a = 0.7
    k = kiln.nn.Module()
    k.weight = kiln.nn.Parameter(kiln.zeros(2, 2))
    kP.orthogonal(k, orthogonal_map="cayley", use_trivialization=False)
    with kiln.no_grad():
        k.parametrizations.weight.original.copy_(kiln.tensor([[0.0, 0.0], [a, 0.0]]))
    t = 2 * np.arctan(a / 2)
    np.testing.assert_allclose(k.weight.detach().numpy(),
                               [[np.cos(t), -np.sin(t)], [np.sin(t), np.cos(t)]], rtol=1e-6, atol=1e-7)


def test_orthogonal_errors():
    m = kP.orthogonal(kiln.nn.Linear(3, 3), orthogonal_map="cayley", use_trivialization=False)
    with pytest.raises(NotImplementedError, match="Cayley parametrizations when use_trivialization=False"):
        m.weight = kiln.eye(3)
    with pytest.raises(ValueError, match="orthogonal_map has to be one of"):
        kP.orthogonal(kiln.nn.Linear(3, 3), orthogonal_map="qr")
    k = kiln.nn.Module()
    k.w = kiln.nn.Parameter(kiln.ones(3))
    with pytest.raises(ValueError, match="Expected a matrix"):
        kP.orthogonal(k, "w")
    m = kP.orthogonal(kiln.nn.Linear(3, 3), use_trivialization=False)
    with pytest.raises(NotImplementedError, match="matrix exponential"):
        m.weight = kiln.eye(3)


# ---- weight_norm (torch 2.1+; torch 1.13 has only the hook-based one to compare against) ----
@pytest.mark.parametrize("dim", [0, 1, None])
@pytest.mark.parametrize("make,shape", [(lambda L: L.nn.Linear(5, 4), (3, 5)),
                                        (lambda L: L.nn.Conv2d(3, 4, 3), (2, 3, 6, 6))])
def test_weight_norm_matches_hook_based_torch(make, shape, dim):
    t, k = _pair(make)
    torch.nn.utils.weight_norm(t, dim=dim)
    kP.weight_norm(k, dim=dim)
    assert list(k.state_dict()) == ["bias", "parametrizations.weight.original0", "parametrizations.weight.original1"]
    g, v = k.parametrizations.weight.original0, k.parametrizations.weight.original1
    _close(g, t.weight_g)
    _close(v, t.weight_v)
    x = torch.randn(*shape)
    yt, yk = t(x), k(_k(x))
    _close(yk, yt, rtol=1e-5, atol=1e-5)
    yt.pow(2).sum().backward()
    yk.pow(2).sum().backward()
    _close(g.grad, t.weight_g.grad, rtol=1e-4, atol=1e-5)
    _close(v.grad, t.weight_v.grad, rtol=1e-4, atol=1e-5)


def test_weight_norm_hand_values_and_old_checkpoint():
    k = kiln.nn.Linear(2, 2)
    kP.weight_norm(k)
    # an old hook-style checkpoint (weight_g, weight_v) loads into original0 / original1
    k.load_state_dict({"weight_g": kiln.tensor([[2.0], [10.0]]), "weight_v": kiln.tensor([[3.0, 4.0], [0.0, 5.0]]),
                       "bias": kiln.zeros(2)})
    np.testing.assert_allclose(k.parametrizations.weight.original0.detach().numpy(), [[2.0], [10.0]])
    np.testing.assert_allclose(k.weight.detach().numpy(), [[1.2, 1.6], [0.0, 10.0]], rtol=1e-6)
    # assignment: g = ||w|| row by row, v = w
    k.weight = kiln.tensor([[0.0, 2.0], [6.0, 8.0]])
    np.testing.assert_allclose(k.parametrizations.weight.original0.detach().numpy(), [[2.0], [10.0]], rtol=1e-6)
    np.testing.assert_allclose(k.weight.detach().numpy(), [[0.0, 2.0], [6.0, 8.0]], rtol=1e-6)
    kparam.remove_parametrizations(k, "weight")
    assert list(k.state_dict()) == ["bias", "weight"]
    np.testing.assert_allclose(k.weight.detach().numpy(), [[0.0, 2.0], [6.0, 8.0]], rtol=1e-6)
