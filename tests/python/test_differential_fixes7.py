"""Regression tests for the seventh differential hunt (float16/bfloat16 division and remainder with
Python scalars, named-dimension arguments on unnamed tensors, strides of empty NumPy-made tensors and
of advanced-indexing and nonzero results, NumPy arrays as operator operands, Tensor dunder methods,
torch 2.x function keywords). Each snippet runs with `torch` bound to kiln and to torch (1.13, the
oracle): both must raise the same exception class or give the same dtypes, shapes and values
(differential/snippets.py); the stride cases compare strides too. Where torch 1.13 and 2.x differ, kiln
follows 2.x and the case checks 2.x's rule by hand (docs/DIFFERENTIAL_FINDINGS.md, section 0g)."""
import math

import numpy as np
import pytest

torch_ref = pytest.importorskip("torch", reason="torch is the oracle")

import kiln  # noqa: E402
from differential.snippets import assert_same_outcome, run  # noqa: E402

_PRE = "import numpy as np; "
_H = "torch.tensor([1.5, 2.0, -3.25, 7.0], dtype=torch.float16)"
_B = "torch.tensor([1.5, 2.0, -3.25, 7.0], dtype=torch.bfloat16)"

CASES = [
    # remainder and fmod of a 16-bit tensor read a Python scalar (or a 0-dim tensor of another dtype) as a
    # value of the tensor's dtype, in either position (torch 1.13 and 2.x alike: 0.1 is 0.0999755859375)
    f"r = {_H} % 0.1",
    f"r = {_H} % 1e-8",
    f"r = {_H} % 70000",
    f"r = {_H}.remainder(0.1)",
    f"r = torch.remainder({_H}, 0.3)",
    f"r = {_H}.fmod(0.1)",
    f"r = torch.fmod({_H}, -0.3)",
    f"r = 0.1 % {_H}",
    f"r = 2**31 % {_H}",
    f"r = {_H} % torch.tensor(0.1)",
    f"r = {_H} % torch.tensor(0.1, dtype=torch.float64)",
    f"x = {_H}; x %= 0.1; r = x",
    f"x = {_H}; x.fmod_(0.3); r = x",
    f"r = {_B} % 0.1",
    f"r = {_B}.fmod(0.1)",
    f"r = 0.3 % {_B}",
    # floor division with the scalar first: the scalar is a value of the tensor's dtype (2**31 is inf)
    f"r = 2**31 // {_H}",
    f"r = 0.1 // {_H}",
    f"r = 1e10 // {_B}",
    # named dims: torch's Dimname overloads take a name and fail at run time (RuntimeError), not TypeError
    "r = torch.ones(2, 3).sum(dim='a')",
    "r = torch.ones(2, 3).sum('a')",
    "r = torch.ones(2, 3).sum(['a', 'b'])",
    "r = torch.sum(torch.ones(2, 3), 'a', keepdim=True)",
    "r = torch.prod(torch.ones(2, 3), None)",
    "r = torch.ones(2, 3).mean('a')",
    "r = torch.ones(2, 3).softmax('a')",
    "r = torch.ones(2, 3).log_softmax(dim='a')",
    "r = torch.ones(2, 3).size('a')",
    "r = torch.ones(2, 3).stride('a')",
    "r = torch.ones(2, 3).transpose('a', 'b')",
    "r = torch.ones(2, 3).squeeze('a')",
    "r = torch.ones(2, 3).cumsum('a')",
    "r = torch.ones(2, 3).cumprod('a')",
    "r = torch.ones(2, 3).max('a')",
    "r = torch.ones(2, 3).min('a')",
    "r = torch.ones(2, 3).std('a')",
    "r = torch.ones(2, 3).var(['a'])",
    "r = torch.ones(2, 3).logsumexp('a')",
    "r = torch.ones(2, 3).all('a')",
    "r = torch.ones(2, 3).any('a')",
    "r = torch.ones(2, 3).unbind('a')",
    "r = torch.ones(2, 3).index_select('a', torch.tensor([0]))",
    "r = torch.ones(2, 3).gather('a', torch.zeros(2, 3, dtype=torch.long))",
    "r = torch.ones(2, 3).sort('a')",
    "r = torch.ones(2, 3).median('a')",
    "r = torch.ones(2, 3).select('a', 0)",
    "r = torch.cat([torch.ones(2, 3)], 'a')",
    "r = torch.ones(2, 3).diagonal(outdim='a', dim1='b', dim2='c')",
    # ... and ops without one stay the parser's TypeError
    "r = torch.ones(2, 3).roll(1, 'a')",
    "r = torch.ones(2, 3).nansum('a')",
    "r = torch.ones(2, 3).count_nonzero('a')",
    # NumPy arrays as operands: t op array is NumPy's (the tensor converts; float64 results), array op t
    # and comparisons are TypeErrors, as torch's operators give NotImplemented for an ndarray
    "r = torch.tensor([1., 2.]) + np.array([1, 2])",
    "r = torch.tensor([1., 2.]) * np.array([1., 2.], dtype=np.float32)",
    "r = torch.tensor([1, 2]) - np.array([1., 2.])",
    "r = torch.tensor([1., 2.]) @ np.array([1., 2.])",
    "r = torch.tensor([1., 2.]) ** np.array([1., 2.])",
    "r = torch.tensor([1, 2]) & np.array([1, 3])",
    "r = np.array([1., 2.]) + torch.tensor([1., 2.])",
    "r = np.array([1., 2.]) * torch.tensor([1., 2.])",
    "r = np.array([1., 2.]) - torch.tensor([1., 2.])",
    "r = np.array(2.) + torch.tensor([1., 2.])",
    "r = np.array([1, 2]) & torch.tensor([1, 2])",
    "r = np.array([True]) | torch.tensor([True])",
    "r = np.array([1., 2.]) / torch.tensor([1., 2.])",
    "r = np.array([1., 2.]) < torch.tensor([1., 2.])",
    "r = torch.tensor([1., 2.]) < np.array([1., 2.])",
    "r = torch.tensor([1., 2.]) >= np.array([1., 2.])",
    "x = torch.tensor([1., 2.]); x += np.array([1., 2.]); r = x",
    "x = torch.tensor([1., 2.]); x *= np.array([2, 2]); r = x",
    "r = torch.tensor([1., 2.], requires_grad=True) + np.array([1., 2.])",
    "r = torch.tensor([1., 2.]) * np.float64(2.)",
    "r = np.float64(2.) * torch.tensor([1., 2.], dtype=torch.float16)",
    "r = torch.tensor([1, 2], dtype=torch.int8) + np.int64(3)",
    # Tensor dunders
    "r = torch.tensor([2.5, 1.]).__complex__()",
    "r = torch.arange(6.).reshape(2, 3).__reversed__()",
    "r = list(reversed(torch.arange(4)))",
    "r = torch.tensor(2.5).__reversed__()",
    "r = torch.tensor(2.5).__index__()",
    # tensor_split's keyword overloads (sections=, indices=)
    "r = torch.tensor_split(torch.arange(5.), sections=2)",
    "r = torch.tensor_split(torch.arange(5.), indices=[1, 3])",
    "r = torch.arange(12).reshape(3, 4).tensor_split(indices=[1], dim=1)",
    "r = torch.tensor_split(torch.tensor(3.), 2.5)",
    "r = torch.tensor_split(torch.arange(5.), 2.5)",
]


@pytest.mark.parametrize("src", CASES)
def test_same_outcome_as_torch(src):
    assert_same_outcome(_PRE + src, kiln, torch_ref)


VALUE_CASES = [
    # Python values: __complex__, a bool tensor as an index (True is 1), complex operands of == / !=
    "r = complex(torch.tensor(2.5))",
    "r = complex(torch.tensor([-1]))",
    "r = torch.tensor(True).__index__()",
    "r = [10, 20][torch.tensor(True)]",
    "r = hex(torch.tensor(True))",
    "r = type(iter(torch.ones(2))).__name__",
    "r = (torch.tensor([1., 2.]) == 1j).tolist()",
    "r = (torch.tensor([1., 2.]) == (2 + 0j)).tolist()",
    "r = (torch.tensor([1, 2]) != 1j).tolist()",
    "r = (torch.tensor([True, False]) == complex(1, 0)).tolist()",
]


@pytest.mark.parametrize("src", VALUE_CASES)
def test_same_python_value_as_torch(src):
    assert run(kiln, src) == run(torch_ref, src)


def _float_floor_div_2x(x, s):
    """torch 2.x's f16 // s (a Python scalar s): floor division of float32 values by float32(s)
    (original_scalar_value), rounded once to float16; computed with torch 1.13 in float32."""
    return (torch_ref.tensor(x, dtype=torch_ref.float32) // torch_ref.tensor(s, dtype=torch_ref.float32)).half()


@pytest.mark.parametrize("s", [0.1, 0.3, 1e-3, 7.0, 2.0 ** 31])
def test_float16_floor_divide_keeps_scalar_divisor_in_float32(s):
    x = [1.5, 2.0, -3.25, 7.0]
    got = kiln.tensor(x, dtype=kiln.float16) // s
    want = _float_floor_div_2x(x, s)
    np.testing.assert_array_equal(got.float().numpy(), want.float().numpy())


STRIDE_CASES = [
    # empty arrays keep NumPy's own strides (np.zeros((3, 0, 2)).strides is (0, 0, 0)), as torch reads them
    "r = torch.from_numpy(np.zeros((3, 0, 2)))",
    "r = torch.from_numpy(np.zeros((0, 3), dtype=np.float32))",
    "r = torch.as_tensor(np.zeros((3, 0, 2)))",
    "r = torch.tensor(np.zeros((3, 0)))",
    "r = torch.tensor(np.zeros((3, 0, 2)))",
    "r = torch.tensor([[], []])",
    # advanced indexing lays the result out as torch's TensorIterator does: in the order of self's strides
    "r = torch.arange(24.).reshape(2, 3, 4).permute(2, 0, 1)[:, [0, 1]]",
    "r = torch.arange(24.).reshape(2, 3, 4).permute(2, 0, 1)[:, :, [0, 1]]",
    "r = torch.arange(24.).reshape(2, 3, 4).permute(2, 0, 1)[[0, 1]]",
    "r = torch.arange(24.).reshape(2, 3, 4).permute(2, 0, 1)[[0, 1], :, [0, 1]]",
    "r = torch.arange(24.).reshape(2, 3, 4).transpose(0, 2)[:, torch.tensor([True, False, True])]",
    "r = torch.arange(24.).reshape(2, 3, 4).transpose(1, 2)[:, [0, 1]]",
    "r = torch.arange(12.).reshape(3, 4).t()[[0, 1]]",
    "r = torch.arange(12.).reshape(3, 4).t()[:, [0, 1]]",
    "r = torch.arange(12.).reshape(3, 4).t()[[0, 1], [1, 2]]",
    "r = torch.arange(24.).reshape(2, 3, 4)[:, [0, 1]]",
    "r = torch.arange(24.).reshape(2, 3, 4)[:, [[0, 1]]]",
    "r = torch.arange(24.).reshape(2, 3, 4)[[0], :, [1]]",
    "r = torch.arange(24.).reshape(2, 3, 4)[..., [0, 1]]",
    "r = torch.arange(24.).reshape(2, 3, 4)[None, :, [0, 1]]",
    "r = torch.arange(24.).reshape(2, 3, 4)[::2, [0, 1]]",
    "r = torch.zeros(0, 3)[:, [0, 1]]",
    "r = torch.zeros(3, 0, 2).transpose(0, 2)[:, :, [0, 1]]",
    # nonzero / argwhere are column-major (strides (1, n)), as torch's
    "r = torch.nonzero(torch.tensor([[1., 0.], [2., 3.]]))",
    "r = torch.argwhere(torch.arange(12).reshape(3, 4))",
    "r = torch.argwhere(torch.zeros(0, 4))",
    "r = torch.arange(5.).nonzero()",
]


def _strides(r):
    if isinstance(r, (tuple, list)):
        return [_strides(e) for e in r]
    return tuple(r.stride())


@pytest.mark.parametrize("src", STRIDE_CASES)
def test_same_strides_as_torch(src):
    assert_same_outcome(_PRE + src, kiln, torch_ref)
    assert _strides(run(kiln, _PRE + src)) == _strides(run(torch_ref, _PRE + src))


def test_masked_index_after_nonzero_layout():
    """Bool masks become nonzero()'s coordinate columns: with the column-major layout the values stay."""
    x = np.arange(24.).reshape(2, 3, 4)
    mask = x.sum(-1) > 20
    got = kiln.from_numpy(x)[kiln.from_numpy(mask)]
    np.testing.assert_array_equal(got.numpy(), x[mask])
    got = kiln.from_numpy(x)[:, kiln.from_numpy(x[0, :, 0] > 2)]
    np.testing.assert_array_equal(got.numpy(), x[:, x[0, :, 0] > 2])
    t = kiln.from_numpy(x.copy())
    t[kiln.from_numpy(mask)] = -1.
    y = x.copy()
    y[mask] = -1.
    np.testing.assert_array_equal(t.numpy(), y)


def test_iter_is_a_tuple_iterator_of_unbind_views():
    x = kiln.arange(6.).reshape(2, 3)
    it = iter(x)
    assert type(it) is type(iter(torch_ref.arange(6.).reshape(2, 3)))
    rows = list(it)
    assert [r.tolist() for r in rows] == [[0., 1., 2.], [3., 4., 5.]]
    rows[0][0] = 9.
    assert x[0, 0].item() == 9.  # views
    assert math.isclose(complex(kiln.tensor(1.5)).real, 1.5)
