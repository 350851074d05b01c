"""Regression tests for the fifth differential hunt (argument forms, containers, devices, data
collation, serialization errors, gradient/einsum/round forms, the gamma family). Each snippet runs
with `torch` bound to kiln and to torch; both must raise the same exception class or give the same
dtypes, shapes and values (differential/snippets.py). Results that are not tensors (Python values,
module and container structure) are compared directly, kiln against torch."""
import math

import numpy as np
import pytest

torch_ref = pytest.importorskip("torch", reason="torch is the oracle")

import kiln  # noqa: E402
from differential.snippets import assert_same_outcome, run  # noqa: E402

CASES = [
    # polygamma(0/1) went through `_C.no_grad`, which does not exist (AttributeError for every call)
    "r = torch.polygamma(1, torch.tensor([0., -0., -1., -2.5, 1., 2., inf, -inf, nan, 1e-30, 1e30, -1e30]))",
    "r = torch.polygamma(1, torch.tensor([-1e-300, -170.5, 171.7, 2.5e305, 1e-160], dtype=torch.float64))",
    "r = torch.polygamma(0, torch.tensor([0., -1., 2.5]))",
    "r = torch.polygamma(1, torch.tensor([1, 2, 3]))",
    "r = torch.polygamma(1, torch.tensor([True, False]))",
    "r = torch.polygamma(1, torch.arange(6.).reshape(2, 3).t() - 2.5)",
    "r = torch.polygamma(1, torch.tensor([1., 2.]), out=torch.empty(5, dtype=torch.float64))",
    ("x = torch.tensor([0.5, -1.5, 3., 0., -2.], dtype=torch.float64, requires_grad=True); "
     "torch.polygamma(1, x).sum().backward(); r = x.grad"),
    "r = torch.tensor([0.5, -1.5, 300.]).polygamma(1)",
    # Tensor.__array_wrap__: a NumPy ufunc of a tensor gives a tensor (bool as uint8)
    "r = np.add(torch.arange(6.).reshape(2, 3), 1)",
    "r = np.greater(torch.arange(6.).reshape(2, 3), 1)",
    "r = np.sqrt(torch.arange(6).reshape(2, 3))",
    # fill_ takes a 0-dim tensor only (RuntimeError, was the parser's TypeError)
    "a = torch.arange(3); a.fill_(torch.tensor([2])); r = a",
    "a = torch.arange(3.); a.fill_(torch.tensor(2.5)); r = a",
    # x[i] = list: torch assigns tensors and numbers only
    "x = torch.arange(12.).reshape(3, 4); x[1] = [1., 2., 3., 4.]; r = x",
    "x = torch.arange(12.).reshape(3, 4); x[[0, 1]] = (1., 2., 3., 4.); r = x",
    "x = torch.arange(12.).reshape(3, 4); x[1] = np.float64(3.); r = x",
    # circular padding after a crop on the other side wraps within what is left
    ("x = torch.arange(16.).reshape(1, 1, 4, 4); "
     "r = torch.nn.functional.pad(x, (-1, 1, 0, -2), mode='circular')"),
    "x = torch.arange(10.).reshape(1, 2, 5); r = torch.nn.functional.pad(x, (2, -1), mode='circular')",
    ("x = torch.arange(10., requires_grad=True); y = torch.nn.functional.pad(x.reshape(1, 2, 5), (-2, 1), "
     "mode='circular'); (y * torch.arange(8.).reshape(1, 2, 4)).sum().backward(); r = (y, x.grad)"),
    # F.layer_norm takes a list of ints (an int is a TypeError; nn.LayerNorm makes the tuple itself)
    "r = torch.nn.functional.layer_norm(torch.arange(6.).reshape(2, 3), 3)",
    "r = torch.nn.functional.layer_norm(torch.arange(6.).reshape(2, 3), [3])",
    # default_collate: ints give torch.tensor(batch)'s inferred dtype; a tuple field of strings stays
    "r = torch.utils.data.default_collate([2, 1.5])",
    "r = torch.utils.data.default_collate([True, 3])",
    # torch.device's checks
    "r = torch.device('cpu', -1)",
    "r = torch.device('cuda', 1.5)",
    "r = torch.device('cuda:x')",
    "r = torch.device('bogus')",
    "r = torch.zeros(2, 3).to(0)",
    "r = torch.zeros(2, 3).to(-1)",
    # tensor()/as_tensor() on 'cuda': AssertionError (as_tensor ignored the device)
    "r = torch.tensor([1, 2], device='cuda')",
    "r = torch.as_tensor(np.array([1, 2]), device='cuda')",
    "r = torch.as_tensor(torch.ones(2), device='cuda')",
    "r = torch.tensor([1, 2], device='cpu')",
    # tensor() of a NumPy array with negative strides: ValueError; requires_grad must be a bool
    "r = torch.tensor(np.array([1., 2.])[::-1])",
    "r = torch.tensor([1.], requires_grad=1)",
    # torch.gradient (was missing)
    "r = torch.gradient(torch.arange(6.).reshape(2, 3), dim=1)",
    "r = torch.gradient(torch.tensor([[1., 4., 9., 16.], [2., 3., 7., 1.], [0., 5., 5., 3.]]))",
    ("r = torch.gradient(torch.tensor([[1., 4., 9., 16.], [2., 3., 7., 1.], [0., 5., 5., 3.]]), spacing=2., "
     "edge_order=2, dim=1)"),
    ("r = torch.gradient(torch.tensor([[1., 4., 9., 16.], [2., 3., 7., 1.], [0., 5., 5., 3.]]), "
     "spacing=[torch.tensor([0., 1., 3.]), torch.tensor([0., 0.5, 2., 2.5])])"),
    ("r = torch.gradient(torch.tensor([[1., 4., 9., 16.], [2., 3., 7., 1.], [0., 5., 5., 3.]]), "
     "spacing=[torch.tensor([0., 1., 3.]), torch.tensor([0., 0.5, 2., 2.5])], edge_order=2)"),
    ("r = torch.gradient(torch.tensor([[1., 4., 9., 16.], [2., 3., 7., 1.], [0., 5., 5., 3.]]), "
     "spacing=(2., 0.5), edge_order=2)"),
    "r = torch.gradient(torch.tensor([[1., 4.], [2., 3.]]), spacing=(2., 0.5, 1.))",
    "r = torch.gradient(torch.tensor([1., 4., 5.]), edge_order=3)",
    "r = torch.gradient(torch.tensor([1., 4.]), edge_order=2)",
    "r = torch.gradient(torch.tensor([1., 4., 5.]), dim=1)",
    "r = torch.gradient(torch.tensor([1, 4, 9, 16]), spacing=2)",
    "r = torch.gradient(torch.tensor([1., 4., 5.], dtype=torch.float16))",
    "x = torch.tensor([1., 4., 5., 2.], requires_grad=True); torch.gradient(x)[0].pow(2).sum().backward(); r = x.grad",
    # einsum's sublist format
    "x = torch.arange(6.).reshape(2, 3); r = torch.einsum(x, [0, 1], x, [2, 1], [0, 2])",
    "x = torch.arange(6.).reshape(2, 3); r = torch.einsum(x, [0, 1], x, [2, 1])",
    "x = torch.arange(6.).reshape(2, 3); r = torch.einsum(x, [Ellipsis, 1], [Ellipsis])",
    "x = torch.arange(6.).reshape(2, 3); r = torch.einsum(x, [30, 51], [51, 30])",
    "x = torch.arange(6.).reshape(2, 3); r = torch.einsum(x, [0, 52])",
    # round(decimals=, out=): the out must have the result's dtype
    "r = torch.round(torch.tensor([1.25, 2.5, -0.5, 1234.5678]), decimals=1, out=torch.empty(4))",
    "r = torch.round(torch.tensor([1.25, 2.5, -0.5, 1234.5678]), decimals=1, out=torch.empty(0, dtype=torch.float64))",
    "r = torch.round(torch.tensor([12, 25]), decimals=-1, out=torch.empty(2, dtype=torch.int64))",
    "r = torch.round(torch.tensor([1.25, 2.5]), out=torch.empty(2))",
    # torch.load of bytes that are not a checkpoint: torch reads a legacy pickle stream
    "import io; r = torch.load(io.BytesIO(b'garbage'))",
    "import io; r = torch.load(io.BytesIO(b''))",
    "import io; r = torch.load(io.BytesIO(b'not a checkpoint at all, just text'))",
    # backward(inputs=...) (was NotImplementedError): only the inputs' .grad accumulate
    "x = torch.ones(2, requires_grad=True); (x * 2).sum().backward(); (x * 2).sum().backward(inputs=[x]); r = x.grad",
    ("x = torch.ones(2, requires_grad=True); y = torch.ones(2, requires_grad=True); "
     "(x * y * 3).sum().backward(inputs=[y]); r = (x.grad, y.grad)"),
    ("x = torch.ones(2, requires_grad=True); y = torch.ones(2, requires_grad=True); "
     "(x * y * 3).sum().backward(inputs=y); r = (x.grad, y.grad)"),
    ("x = torch.ones(2, requires_grad=True); y = torch.ones(2, requires_grad=True); "
     "(x * 3).sum().backward(inputs=[x, y]); r = (x.grad, y.grad)"),
    "x = torch.ones(2, requires_grad=True); (x * 3).sum().backward(inputs=[])",
    "x = torch.ones(2, requires_grad=True); z = x * 2; (z * z).sum().backward(inputs=[z]); r = (x.grad, z.grad)",
    "x = torch.ones(2, requires_grad=True); torch.autograd.backward([(x * 3).sum()], inputs=[x]); r = x.grad",
    ("x = torch.ones(2, requires_grad=True); (x ** 3).sum().backward(inputs=[x], create_graph=True); "
     "r = x.grad"),
    "r = torch.tensor([1., 2.]) * None",
    # torch.split is a Python function in torch: its keywords; a 0-dim tensor is a chunk size
    "x = torch.arange(6.).reshape(2, 3); r = torch.split(x, split_size_or_sections=1)",
    "x = torch.arange(6.).reshape(2, 3); r = torch.split(tensor=x, split_size_or_sections=[1, 2], dim=1)",
    "x = torch.arange(6.).reshape(2, 3); r = torch.split(x, torch.tensor(1))",
    "x = torch.arange(6.).reshape(2, 3); r = x.split(torch.tensor(2), 1)",
    "x = torch.arange(6.).reshape(2, 3); r = torch.split(x, [1, 1])",
    # slice bounds beyond int64 clamp (Python's PySlice_Unpack), in reads and writes
    "x = torch.zeros(2, 3, 4); r = x[1:2**70]",
    "x = torch.arange(5.); r = x[2**70:]",
    "x = torch.arange(5.); x[1:2**64] = 7; r = x",
    "x = torch.arange(6.).reshape(2, 3); r = x[:, 1:2**65]",
    # factories and random functions take out= (made in out's dtype, out resized)
    'r = torch.eye(2, out=torch.empty(5))',
    'r = torch.eye(2, 3, out=torch.empty(5, dtype=torch.int64))',
    'r = torch.zeros((2, 3), out=torch.empty(1, dtype=torch.int64))',
    'r = torch.ones(2, 3, out=torch.empty(6)[:0])',
    'r = torch.ones(2, 3, out=[1])',
    'r = torch.full((2,), 3, out=torch.empty(0))',
    'r = torch.full((2,), 3.5, out=torch.empty(0, dtype=torch.float64))',
    'torch.manual_seed(0); r = torch.rand(3, out=torch.empty(0))',
    'torch.manual_seed(0); r = torch.rand(3, out=torch.empty(0, dtype=torch.float64))',
    'torch.manual_seed(0); r = torch.randn(2, 2, out=torch.empty(7))',
    'torch.manual_seed(0); r = torch.randint(10, (3,), out=torch.empty(0, dtype=torch.int64))',
    'torch.manual_seed(0); r = torch.randint(10, (3,), out=torch.empty(0, dtype=torch.int32))',
    'torch.manual_seed(0); r = torch.randperm(5, out=torch.empty(0, dtype=torch.int64))',
    'torch.manual_seed(0); r = torch.normal(0., 1., size=(2,), out=torch.empty(3))',
    'torch.manual_seed(0); r = torch.bernoulli(torch.full((4,), 0.5), out=torch.empty(3))',
    'torch.manual_seed(0); r = torch.multinomial(torch.ones(2, 3), 2, out=torch.empty(5, dtype=torch.int64))',
    'torch.manual_seed(0); r = torch.rand(3)',
    'torch.manual_seed(0); r = torch.zeros(2, dtype=torch.int8)',
    # Tensor.type(non_blocking=), bad types ValueError; Tensor(2.5) TypeError; iinfo(bool);
    # set_default_tensor_type; Python floats take a float16/bfloat16 default dtype
    'r = torch.ones(2).type(torch.int64, non_blocking=True)',
    'r = torch.ones(2).type(np.float64)',
    'r = torch.ones(2).type(float)',
    "r = torch.ones(2).type('bogus')",
    "r = torch.ones(2).type('torch.IntTensor')",
    'r = torch.ones(2).type(torch.DoubleTensor)',
    'r = torch.Tensor(2.5)',
    'r = torch.iinfo(torch.bool)',
    "torch.set_default_tensor_type('torch.DoubleTensor'); r = torch.tensor([1.5]); torch.set_default_tensor_type('torch.FloatTensor')",
    'r = torch.set_default_tensor_type(torch.LongTensor)',
    'torch.set_default_dtype(torch.float16); r = torch.tensor([1.5, 1 + 2**-11 + 2**-40]); torch.set_default_dtype(torch.float32)',
    'torch.set_default_dtype(torch.float16); r = torch.tensor(1.5); torch.set_default_dtype(torch.float32)',
    'torch.set_default_dtype(torch.float16); r = torch.tensor([[1, 2.5]]); torch.set_default_dtype(torch.float32)',
    'torch.set_default_dtype(torch.float16); r = torch.tensor([1, 2]); torch.set_default_dtype(torch.float32)',
    'torch.set_default_dtype(torch.float16); r = torch.tensor(np.array([1.5])); torch.set_default_dtype(torch.float32)',
    'torch.set_default_dtype(torch.float16); r = torch.tensor([1.5], requires_grad=True); torch.set_default_dtype(torch.float32)',
    # BatchNorm loads a state_dict without num_batches_tracked (the count becomes 0)
    "nn = torch.nn; m = nn.BatchNorm1d(2); m(torch.randn(3, 2)); m.load_state_dict({'weight': torch.ones(2), 'bias': torch.ones(2), 'running_mean': torch.ones(2), 'running_var': torch.ones(2)}); r = m.num_batches_tracked",
]


@pytest.mark.parametrize("src", CASES)
def test_same_outcome_as_torch(src):
    assert_same_outcome(src, kiln, torch_ref)


# Snippets whose results are Python values (bools, dtypes, lists of names, lengths): compared as is.
VALUE_CASES = [
    # `in`: (element == tensor).any() for tensors and numbers; other types RuntimeError
    "r = 3. in torch.arange(6.).reshape(2, 3)",
    "r = 7 in torch.arange(6.).reshape(2, 3)",
    "r = torch.tensor([0., 1., 2.]) in torch.arange(6.).reshape(2, 3)",
    "r = 'a' in torch.arange(6.)",
    "r = None in torch.arange(6.)",
    # torch.Size checks and converts its items
    "r = tuple(torch.Size([2, torch.tensor(3)]))",
    "r = [type(v).__name__ for v in torch.Size([2, torch.tensor(3)])]",
    "r = torch.Size([2, 3.5])",
    "r = torch.Size([2, torch.tensor(3.)])",
    "r = tuple(torch.Size([True, 2]))",
    # Module.type casts every parameter and buffer (integer ones too)
    ("m = torch.nn.BatchNorm1d(2); m2 = m.type(torch.float64); "
     "r = (m2 is m, str(m.weight.dtype)[-7:], str(m.num_batches_tracked.dtype)[-7:], type(m.weight).__name__)"),
    # ModuleList / Sequential list operations
    ("nn = torch.nn; m = nn.ModuleList([nn.ReLU(), nn.Tanh()]); m.insert(1, nn.Sigmoid()); m.insert(3, nn.ReLU()); "
     "r = [(k, type(x).__name__) for k, x in m.named_children()]"),
    ("nn = torch.nn; m = nn.ModuleList([nn.ReLU(), nn.Tanh()]) + nn.ModuleList([nn.ReLU()]); "
     "r = [(k, type(x).__name__) for k, x in m.named_children()]"),
    ("nn = torch.nn; m = nn.ModuleList([nn.ReLU(), nn.Tanh()]); p = m.pop(0); "
     "r = (type(p).__name__, len(m), [k for k, _ in m.named_children()])"),
    "nn = torch.nn; m = nn.ModuleList([nn.ReLU()]); m += [nn.Tanh()]; r = len(m)",
    ("nn = torch.nn; m = nn.Sequential(nn.ReLU(), nn.Tanh(), nn.Sigmoid()); m.insert(0, nn.ELU()); "
     "r = [(k, type(x).__name__) for k, x in m.named_children()]"),
    "nn = torch.nn; m = nn.Sequential(nn.ReLU(), nn.Tanh()) + nn.Sequential(nn.ReLU()); r = len(m)",
    "nn = torch.nn; m = nn.Sequential(nn.ReLU(), nn.Tanh()) + nn.ModuleList([nn.ReLU()]); r = len(m)",
    "nn = torch.nn; m = nn.Sequential(nn.ReLU(), nn.Tanh()) * 2; r = (len(m), m[0] is m[2])",
    "nn = torch.nn; m = nn.Sequential(nn.ReLU(), nn.Tanh()) * 0; r = len(m)",
    "nn = torch.nn; m = nn.Sequential(nn.ReLU(), nn.Tanh()); m *= 3; r = len(m)",
    "nn = torch.nn; m = nn.Sequential(nn.ReLU(), nn.Tanh()); m += nn.Sequential(nn.ReLU()); r = len(m)",
    "nn = torch.nn; m = nn.Sequential(nn.ReLU(), nn.Tanh()); r = type(m.pop(1)).__name__",
    # default_collate: a tuple field of strings stays a tuple
    "r = torch.utils.data.default_collate([(1, 'a'), (2, 'b')])[1]",
    ("from collections import namedtuple; P = namedtuple('P', 'x y'); "
     "r = torch.utils.data.default_collate([P(1, 'a'), P(2, 'b')]).y"),
    # devices: an int is a CUDA ordinal; devices equal devices only
    "r = str(torch.device(0))",
    "r = torch.device('cpu') == 'cpu'",
    "r = torch.device('cpu:0') == torch.device('cpu', 0)",
    "r = torch.device('cpu') != 'cpu'",
    # result_type of two numbers
    "r = str(torch.result_type(2, 3.))[-7:]",
    "r = str(torch.result_type(2, 3))[-5:]",
    "r = str(torch.result_type(True, False))[-4:]",
    "r = torch.result_type('a', 3)",
    ("torch.set_default_tensor_type(torch.DoubleTensor); r = str(torch.ones(1).dtype)[-7:]; "
     "torch.set_default_tensor_type(torch.FloatTensor)"),
    # a sequence times a one-element integer tensor repeats (the operator gives NotImplemented)
    "r = torch.tensor(2) * [1, 2]",
    "r = [1, 2] * torch.tensor(2)",
    "r = torch.tensor([2]) * (1, 2)",
    "r = 'ab' * torch.tensor(2)",
    "r = torch.tensor(2.) * [1, 2]",
    "r = torch.tensor([1, 2]) * [1, 2]",
    # state_dict()._metadata: each module's version (BatchNorm 2), passed to state_dict hooks
    "nn = torch.nn; m = nn.Linear(2, 2); r = hasattr(m.state_dict(), '_metadata')",
    'nn = torch.nn; m = nn.Sequential(nn.Linear(2, 2)); r = dict(m.state_dict()._metadata)',
    'nn = torch.nn; m = nn.BatchNorm1d(2); r = dict(m.state_dict()._metadata)',
    'nn = torch.nn; m = nn.Sequential(nn.Linear(2, 2), nn.Sequential(nn.BatchNorm1d(2), nn.ReLU())); r = dict(m.state_dict()._metadata)',
    "nn = torch.nn; m = nn.Sequential(nn.Linear(2, 2)); r = dict(m.state_dict(prefix='x.')._metadata)",
    'nn = torch.nn; m = nn.InstanceNorm1d(2); r = dict(m.state_dict()._metadata)',
    'nn = torch.nn; m = nn.LayerNorm(2); r = dict(m.state_dict()._metadata)',
    'nn = torch.nn; m = nn.Linear(2, 2); seen = []; m._register_state_dict_hook(lambda mod, sd, prefix, md: seen.append(dict(md))); m.state_dict(); r = seen',
    'nn = torch.nn; m = nn.Linear(2, 2); sd = m.state_dict(); m.load_state_dict(sd); r = list(sd.keys())',
    "nn = torch.nn; import copy; m = nn.Linear(2, 2); sd = copy.deepcopy(m.state_dict()); r = hasattr(sd, '_metadata')",
    # BatchNorm without num_batches_tracked in the state_dict; ParameterDict's dict methods
    "nn = torch.nn; m = nn.BatchNorm1d(2); r = m.load_state_dict({'weight': torch.ones(2), 'bias': torch.ones(2), 'running_mean': torch.ones(2), 'running_var': torch.ones(2)})",
    "nn = torch.nn; m = nn.Sequential(nn.BatchNorm1d(2)); r = str(m.load_state_dict({'0.weight': torch.ones(2), '0.bias': torch.ones(2), '0.running_mean': torch.ones(2), '0.running_var': torch.ones(2)}, strict=False))",
    "nn = torch.nn; m = nn.BatchNorm1d(2, track_running_stats=False); r = str(m.load_state_dict({'weight': torch.ones(2), 'bias': torch.ones(2)}))",
    "nn = torch.nn; m = nn.ParameterDict({'a': torch.ones(1)}); r = (m.get('z', 5), m.get('a').shape)",
    "nn = torch.nn; m = nn.ParameterDict({'a': torch.ones(1)}); r = (type(m.pop('a')).__name__, len(m))",
    "nn = torch.nn; m = nn.ParameterDict({'a': torch.ones(1)}) | nn.ParameterDict({'b': torch.ones(2)}); r = sorted(m.keys())",
    "nn = torch.nn; m = nn.ParameterDict({'a': torch.ones(1), 'b': torch.ones(2)}); r = (m.popitem()[0], list(m.keys()))",
    "nn = torch.nn; m = nn.ParameterDict({'a': torch.ones(1)}); m.setdefault('b', torch.zeros(2)); r = sorted(m.state_dict().keys())",
    "nn = torch.nn; m = nn.ParameterDict({'a': torch.ones(1)}); m.update({'c': torch.zeros(3)}); del m['a']; r = list(m.keys())",
    "nn = torch.nn; m = nn.ParameterDict({'a': torch.ones(1)}); m.clear(); r = len(m)",
    "nn = torch.nn; m = nn.ParameterDict({'a': torch.ones(1)}); c = m.copy(); r = (c['a'] is m['a'], type(c).__name__)",
]


def _value(lib, src):
    out = run(lib, src)
    if isinstance(out, tuple) and len(out) == 2 and out[0] == "raised":
        return out
    return out


@pytest.mark.parametrize("src", VALUE_CASES)
def test_same_value_as_torch(src):
    got, want = _value(kiln, src), _value(torch_ref, src)
    assert got == want, f"kiln {got!r}, torch {want!r}"


def test_load_errors_are_the_classes_checkpoint_loops_catch():
    """A resume loop's `except (EOFError, pickle.UnpicklingError)` skips a truncated checkpoint."""
    import io
    import pickle
    with pytest.raises(EOFError):
        kiln.load(io.BytesIO(b""))
    with pytest.raises(pickle.UnpicklingError):
        kiln.load(io.BytesIO(b"\x00" * 3))


def test_gradient_matches_numpy_for_unequal_coordinates():
    """torch.gradient's documented formulas are NumPy's: check against np.gradient too."""
    f = np.array([1., 4., 9., 16., 3.])
    x = np.array([0., 0.5, 2., 2.5, 4.])
    for order in (1, 2):
        got = kiln.gradient(kiln.tensor(f, dtype=kiln.float64), spacing=[kiln.tensor(x, dtype=kiln.float64)],
                            edge_order=order)[0]
        np.testing.assert_allclose(got.numpy(), np.gradient(f, x, edge_order=order), rtol=1e-12)
    got = kiln.gradient(kiln.tensor(f, dtype=kiln.float64), spacing=0.5, edge_order=2)[0]
    np.testing.assert_allclose(got.numpy(), np.gradient(f, 0.5, edge_order=2), rtol=1e-12)
    assert math.isclose(float(kiln.gradient(kiln.tensor([0., 2.]))[0][0]), 2.0)
