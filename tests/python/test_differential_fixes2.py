"""Regression tests for the second round of differential fixes (known leftovers, then seeds 41-46 at
scale 3 and hand-written edge-value probes). Each case is a snippet run with `torch` bound to kiln
and to torch; both must raise the same exception class or give the same dtypes, shapes and values
(NaNs in place)."""
import math

import numpy as np
import pytest

torch_ref = pytest.importorskip("torch", reason="torch is the oracle")

import kiln  # noqa: E402
from differential.snippets import assert_same_outcome  # noqa: E402

CASES = [
    # clamp with one Scalar bound that is NaN: torch's one-bound loop (std::max(a, min)) ignores it;
    # with both bounds a NaN one fills NaN. The gradient still compares with the NaN (0).
    "r = torch.clamp(torch.tensor([1., 2., nan]), min=nan)",
    "r = torch.clamp(torch.tensor([1., 2., nan]), max=nan, out=torch.empty(3))",
    "r = torch.clamp(torch.arange(40.), min=nan, out=torch.empty(40))",
    "r = torch.clamp(torch.tensor([1, 2, 3]), min=nan)",
    "r = torch.clamp(torch.tensor([1., 2., nan]), min=nan, max=1., out=torch.empty(3))",
    "r = torch.clamp(torch.tensor([1., 2., nan]), min=0., max=nan)",
    "x = torch.tensor([1., 2., 3.]); x.clamp_(max=nan); r = x",
    "x = torch.tensor([1., 2., 3.], dtype=torch.bfloat16); x.clip_(min=nan); r = x",
    "r = torch.clamp_min(torch.tensor([1., 2., 3.]), nan)",
    ("x = torch.tensor([1., -2.], dtype=torch.float64, requires_grad=True); y = x.clamp(min=nan); "
     "y.sum().backward(); r = (y, x.grad)"),
    # nansum(out=): out's dtype is the dtype= (an integral input sums into bool; a floating one
    # has no kernel for a non-floating dtype)
    "r = torch.nansum(torch.tensor([1, 2]), 0, out=torch.empty((), dtype=torch.bool))",
    "r = torch.nansum(torch.tensor([True, False]), out=torch.empty((), dtype=torch.bool))",
    "r = torch.nansum(torch.tensor([1., nan]), 0, out=torch.empty((), dtype=torch.bool))",
    "r = torch.nansum(torch.tensor([1., 2.]), out=torch.empty((), dtype=torch.int64))",
    "r = torch.nansum(torch.tensor([1e30, nan, 1e30, -1e30]), out=torch.empty((), dtype=torch.float64))",
    "r = torch.nansum(torch.tensor([3, 4]), out=torch.empty((), dtype=torch.float16))",
    # ... a dtype= other than out's is refused; an empty floating input runs no kernel (any dtype=)
    "r = torch.nansum(torch.tensor([[False, True], [True, False]]).t(), dtype=torch.int32, out=torch.empty((), dtype=torch.float64))",
    "r = torch.nansum(torch.tensor([1., 2.]), dtype=torch.float64, out=torch.empty((), dtype=torch.float32))",
    "r = torch.nansum(torch.empty((2, 2, 0), dtype=torch.float64), dim=(0, 1, -1), dtype=torch.int64)",
    # nanmean(out=) likewise (it is torch's nansum_out divided); the dtype= check comes before the dim's
    ("r = torch.nanmean(torch.tensor([[1., 2.], [3., nan]], dtype=torch.float64), dtype=torch.float32, "
     "out=torch.empty((), dtype=torch.float16))"),
    "r = torch.nanmean(torch.tensor([[1e30, 3e38], [3e38, nan]]), out=torch.empty((), dtype=torch.float64))",
    "r = torch.nanmean(torch.tensor([[1., 2.], [3., nan]]), 1, out=torch.empty(2, dtype=torch.int64))",
    "r = torch.nanmean(torch.empty((3, 1, 0)), dim=-1, keepdim=True, dtype=torch.int32)",
    ("r = torch.nansum(torch.tensor([-2.5], dtype=torch.float64), dim=1, dtype=torch.float32, "
     "out=torch.empty((), dtype=torch.float16))"),
    # pow(Tensor, Scalar, out=) takes exactly the result dtype; the Tensor-Tensor forms cast
    "r = torch.pow(torch.tensor([1, 2]), 2, out=torch.empty(2))",
    "r = torch.pow(torch.tensor([1., 2.]), 2, out=torch.empty(2, dtype=torch.float64))",
    "r = torch.pow(torch.tensor([1., 2.]), 0.25, out=torch.empty(2, dtype=torch.float16))",
    "r = torch.pow(torch.tensor([1, 2], dtype=torch.int32), 2, out=torch.empty(2, dtype=torch.int64))",
    "r = torch.pow(torch.tensor([True, False]), 2, out=torch.empty(2, dtype=torch.int64))",
    "r = torch.pow(torch.tensor([1, 2]), 2.5, out=torch.empty(2))",
    "r = torch.pow(torch.tensor([1, 2]), torch.tensor([2, 3]), out=torch.empty(2, dtype=torch.float64))",
    "r = torch.pow(2.5, torch.tensor([2, 3]), out=torch.empty(2, dtype=torch.float64))",
    # in place into an expanded tensor: threshold_ and tril_/triu_ of <= 3 dims (or packed batch dims)
    # write where the elements lie, as torch; tril_ of other 4-d layouts copies back and raises
    "r = torch.arange(3.).expand(3, 3).tril_()",
    "r = torch.arange(3.).expand(3, 3).triu_()",
    "r = torch.arange(3.).expand(2, 3, 3).tril_(-1)",
    "r = torch.arange(3.).reshape(3, 1).expand(3, 3).tril_()",
    "r = torch.arange(9.).reshape(3, 3).expand(2, 3, 3).tril_()",
    "r = torch.arange(9.).reshape(1, 3, 3).expand(2, 1, 3, 3).triu_(1)",
    "r = torch.arange(3.).expand(2, 2, 3, 3).tril_()",
    "r = torch.arange(9.).reshape(3, 3).expand(2, 2, 3, 3).tril_()",
    "r = torch.nn.functional.threshold_(torch.arange(3.).expand(3, 3), 0.5, 9.)",
    "r = torch.nn.functional.threshold_(torch.arange(3).reshape(3, 1).expand(3, 3), 1, 9)",
    "r = torch.threshold_(torch.tensor([3.40625]).expand(4), 0.5, 20.0)",
    "r = torch.nn.functional.threshold(torch.arange(3.).expand(3, 3), 0.5, 9., inplace=True)",
    "r = torch.arange(3.).expand(3, 3).relu_()",
    # solve_triangular of a singular triangle: trsm's inf/nan, no error (a batch with one singular
    # matrix too; left=False, unitriangular, and gradients through the substitution)
    "r = torch.linalg.solve_triangular(torch.tensor([[1., 0.], [1., 0.]]), torch.tensor([[1.], [2.]]), upper=False)",
    "r = torch.linalg.solve_triangular(torch.tensor([[0., 1.], [0., 1.]]), torch.tensor([[1.], [2.]]), upper=True)",
    "r = torch.linalg.solve_triangular(torch.zeros(2, 2), torch.tensor([[1.], [0.]]), upper=True)",
    ("r = torch.linalg.solve_triangular(torch.tensor([[[1., 0.], [1., 0.]], [[2., 0.], [1., 3.]]]), "
     "torch.tensor([[1., 3.], [2., 4.]]), upper=False)"),
    ("r = torch.linalg.solve_triangular(torch.tensor([[2., 1., 2.], [0., 0., 1.], [0., 0., 4.]]), "
     "torch.tensor([[1., 0., 2.], [2., 1., 3.]]), upper=True, left=False)"),
    ("r = torch.linalg.solve_triangular(torch.tensor([[0., 1., 2.], [0., 0., 1.], [0., 0., 0.]]), "
     "torch.tensor([[1.], [2.], [0.]]), upper=True, unitriangular=True)"),
    ("A = torch.tensor([[1., 0.], [1., 0.]], dtype=torch.float64, requires_grad=True); "
     "B = torch.tensor([[1.], [1.]], dtype=torch.float64, requires_grad=True); "
     "y = torch.linalg.solve_triangular(A, B, upper=False); y.sum().backward(); r = (y, A.grad, B.grad)"),
    # no bool kernel: pow of bool by a bool, clamp with two bool tensor bounds, clamp_min/clamp_max
    # with a Scalar bound (one tensor bound is maximum/minimum, which has one)
    "r = torch.tensor([True]).expand(3).pow(True)",
    "r = torch.tensor([True]) ** True",
    "r = torch.tensor([True]) ** 2",
    "r = torch.tensor(False).clamp(min=torch.tensor(True), max=torch.tensor(False))",
    "r = torch.tensor([False, True]).clamp(min=torch.tensor(True))",
    "r = torch.tensor([1., 2.]).clamp(min=torch.tensor([True]), max=torch.tensor([False]))",
    "r = torch.tensor([False, True]).clamp_min(True)",
    "r = torch.tensor([False, True]).clamp_max(True)",
    "r = torch.tensor([False, True]).clamp_min(torch.tensor(True))",
    # an integer divisor is read in the compute dtype: int32 by 2**32 divides by 0 (ZeroDivisionError)
    "r = torch.tensor(-2147483648, dtype=torch.int32).fmod(-1099511627776)",
    "r = torch.tensor([5], dtype=torch.int32).remainder(2**32)",
    "r = torch.tensor([5], dtype=torch.int32) // (2**32)",
    "r = torch.tensor([5], dtype=torch.int32).div(2**32, rounding_mode='trunc')",
    "r = torch.tensor([5], dtype=torch.int32) % 4294967297",
    "r = torch.tensor([5], dtype=torch.int32) // torch.tensor(2**32)",
    # where of two numbers: both are converted to their result dtype (1e300 does not fit float32)
    "r = torch.where(torch.tensor([[[False]]]), 1e300, True)",
    "r = torch.where(torch.tensor([False]), 1e300, 1)",
    "r = torch.where(torch.tensor([True]), 2**40, True)",
    "r = torch.where(torch.tensor([True]), 1.5, 2)",
    # heaviside: out= of another dtype is refused too; addmm checks mat1/mat2 dtypes even when empty
    # (F.linear's path); constant padding to an empty result keeps self in the graph; index_add_/
    # index_copy_ check the dim before the overlap of an expanded self, and the overlap before indices
    "r = torch.heaviside(torch.tensor(1), torch.tensor([0]), out=torch.empty(1, dtype=torch.float64))",
    "r = torch.heaviside(torch.tensor([1, 2]), torch.tensor([0]), out=torch.empty(2, dtype=torch.int64))",
    "r = torch.addmm(torch.tensor([2.5]), torch.empty((0, 3)), torch.ones(3, 1, dtype=torch.float64))",
    ("r = torch.nn.functional.linear(torch.empty((0, 3)), torch.tensor([[-1.25, -3.75, 0.5]], dtype=torch.float64), "
     "torch.tensor([2.5]))"),
    "r = torch.mm(torch.empty((0, 3)), torch.ones(3, 1, dtype=torch.float64))",
    ("x = torch.tensor([[1.5], [-1.0], [4.0], [2.0]], dtype=torch.float64, requires_grad=True); "
     "y = torch.nn.functional.pad(x[::2], (0, -1), mode='constant', value=0.0); (y.sum() + x.sum()).backward(); "
     "r = (y, torch.tensor(y.requires_grad), x.grad)"),
    "r = torch.constant_pad_nd(torch.ones(2, 1, dtype=torch.bool), (0, -1))",
    "r = torch.tensor([8]).expand(2).index_add_(3, torch.tensor([0]), torch.tensor([-5, 3]))",
    "r = torch.tensor([8]).expand(2).index_copy_(3, torch.tensor([0]), torch.tensor([-5]))",
    "r = torch.tensor([8]).expand(2).index_add_(0, torch.tensor([5]), torch.tensor([-5]))",
    # binary_cross_entropy_with_logits: torch computes in place on (1 - target), so a weight or
    # pos_weight that broadcasts to a bigger shape raises; F's size check is a ValueError
    ("r = torch.nn.functional.binary_cross_entropy_with_logits(torch.tensor([-0.28, 1.375]), torch.tensor([0.7, 0.6]), "
     "weight=torch.tensor([[1.9, 0.2], [0.1, 0.1]]))"),
    ("r = torch.nn.functional.binary_cross_entropy_with_logits(torch.tensor([-0.28, 1.375]), torch.tensor([0.7, 0.6]), "
     "pos_weight=torch.tensor([[1.9, 0.2], [0.1, 0.1]]))"),
    "r = torch.nn.functional.binary_cross_entropy_with_logits(torch.tensor(1.), torch.tensor(0.5), pos_weight=torch.tensor([2.]))",
    ("r = torch.nn.functional.binary_cross_entropy_with_logits(torch.tensor([1., 2.]), torch.tensor([0.5, 0.1]), "
     "weight=torch.tensor([2.]), pos_weight=torch.tensor(3.), reduction='none')"),
    "r = torch.nn.functional.binary_cross_entropy_with_logits(torch.tensor([[1., 2.]]), torch.tensor([0.5, 0.1]))",
    # embedding_bag: left-out positions (padding_idx, past a bag's end) are skipped, not multiplied by
    # 0 (an inf row there changes nothing); max keeps torch's first-then-greater order (NaN first stays)
    ("r = torch.nn.functional.embedding_bag(torch.tensor([0, 0, 0, 0, 0]), torch.tensor([[-0.90625, inf, -3.0625]]), "
     "torch.tensor([0, 1]), mode='sum')"),
    ("r = torch.nn.functional.embedding_bag(torch.tensor([0]), torch.tensor([[inf, -0.71875], [-2.0625, 1.5]], "
     "dtype=torch.float64), torch.tensor([0]), mode='sum', padding_idx=0)"),
    ("r = torch.nn.functional.embedding_bag(torch.tensor([[1, 1, 3], [2, 1, 2], [1, 0, 2]]), torch.tensor([[-2.5, 1.5, "
     "3.84375], [2.0, -0.0, nan], [3.40625, -1.03125, 2.40625], [0.5, inf, -3.53125]]), mode='mean', padding_idx=1)"),
    ("w = torch.tensor([[-3.53125, 1.5]], dtype=torch.float64, requires_grad=True); "
     "p = torch.tensor([-1.0, 0.0, inf, -inf, -3.9375, -3.0625], dtype=torch.float64, requires_grad=True); "
     "y = torch.nn.functional.embedding_bag(torch.tensor([0, 0, 0, 0, 0, 0]), w, torch.tensor([0, 4]), mode='sum', "
     "per_sample_weights=p, padding_idx=0); y.sum().backward(); r = (y, w.grad, p.grad)"),
    ("w = torch.tensor([[-0.40625, nan, -1.875], [-2.9375, -1.375, -1.3125]], dtype=torch.float64, requires_grad=True); "
     "y = torch.nn.functional.embedding_bag(torch.tensor([[0, 1], [1, 0]]), w, mode='max'); "
     "(y * torch.tensor([[1., 2., 3.], [4., 5., 6.]], dtype=torch.float64)).sum().backward(); r = (y, w.grad)"),
    # diag_embed / diag of an empty input requiring grad: the (empty) result is in its graph
    ("x = torch.empty((0,), dtype=torch.float64, requires_grad=True); y = torch.diag_embed(x); "
     "(y.sum() + x.sum()).backward(); r = (y, torch.tensor(y.requires_grad), x.grad)"),
    "x = torch.empty((0,), dtype=torch.float64, requires_grad=True); y = torch.diag(x); r = (y, torch.tensor(y.requires_grad))",
    # constant padding: every negative pad narrows first (an IndexError for a start past the dim),
    # then the sizes are checked
    "r = torch.nn.functional.pad(torch.empty((3, 0, 4)), (0, -1, -1, 0, 0, 1), mode='constant', value=1.5)",
    "r = torch.constant_pad_nd(torch.empty((4, 0), dtype=torch.int32), (2, 1, -1, 1, 2, 0), value=1.5)",
    "r = torch.constant_pad_nd(torch.empty((4, 0)), (-1, 1))",
    "r = torch.constant_pad_nd(torch.ones((4, 2)), (-3, 1))",
    "r = torch.constant_pad_nd(torch.ones((4, 2)), (-2, 1))",
    "r = torch.constant_pad_nd(torch.ones((4, 2)), (1, -3))",
    "r = torch.constant_pad_nd(torch.ones((4, 2)), (0, 0, -5, 2))",
    # norm with p='fro' (the default) over more than 2 dims raises (torch's matrix norm)
    "r = torch.norm(torch.ones(2, 3, 4), dim=(1, 2, 0), p='fro')",
    "r = torch.ones(2, 3, 4).norm(dim=(0, 1, -1))",
    "r = torch.ones(2, 3, 4).norm(p=2, dim=(0, 1, 2))",
    "r = torch.ones(2, 3, 4).norm(dim=(0, 1))",
    # repeat_interleave: the dim first, and a negative count only where something is repeated
    "r = torch.repeat_interleave(torch.empty((0, 2)), -1, dim=-2)",
    "r = torch.repeat_interleave(torch.tensor(-2.5), -1, dim=0)",
    "r = torch.repeat_interleave(torch.tensor([-6]).expand(2, 1), -1, dim=-3)",
    "r = torch.repeat_interleave(torch.tensor([1, 2]), -1)",
]

# out= of another shape with elements: resized with torch's deprecation warning (UserWarning), or
# raised where a filter makes warnings errors; an empty or right-shaped out is silent. (With the
# error filter torch raises after the op, kiln before the resize: out's shape then differs.)
RESIZE = [
    "torch.add(torch.ones(2), 1, out=o)",
    "torch.sum(torch.ones(2, 2), 0, out=o)",
    "torch.cat([torch.ones(2), torch.ones(2)], out=o)",
    "torch.mm(torch.ones(2, 2), torch.ones(2, 2), out=o)",
    "torch.matmul(torch.ones(2, 2), torch.ones(2), out=o)",
    "torch.nansum(torch.ones(2, 2), 0, out=o)",
    "torch.clamp(torch.ones(2), 0, 1, out=o)",
    "torch.index_select(torch.ones(4), 0, torch.tensor([0, 1]), out=o)",
]


@pytest.mark.parametrize("call", RESIZE)
@pytest.mark.parametrize("out", ["torch.ones(3)", "torch.ones(2, 1)", "torch.empty(0)", "torch.ones(9)[::3]"])
def test_out_resize_warns_as_torch(call, out):
    import warnings
    got = []
    for lib in (torch_ref, kiln):
        env = {"torch": lib}
        o = eval(out, env)
        env["o"] = o
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            eval(call, env)
        resized = [str(x.message) for x in w if "was resized" in str(x.message)]
        o2 = eval(out, env)
        env["o"] = o2
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            try:
                eval(call, env)
                raised = False
            except UserWarning:
                raised = True
        got.append((tuple(o.shape), [m.split(". This")[0] for m in resized], raised))
    assert got[1] == got[0]


# group_norm's values are torch's kernel's to the bit (a constant group is 0; with an affine,
# scale * x + (-scale * mean + b), fused where torch's build fuses it); gradients as before.
GROUP_NORM = [
    ("torch.full((2, 4, 3), 0.1)", 2, None, None),
    ("torch.full((2, 4, 3), -3.7, dtype=torch.float64)", 1, None, None),
    ("torch.full((2, 2, 5), 7.77, dtype=torch.float64)", 2, "torch.tensor([0.5, 2.], dtype=torch.float64)", None),
    ("torch.full((1, 2, 3), 0.3)", 2, "torch.tensor([0.5, 2.])", "torch.tensor([1., -1.])"),
    ("torch.tensor([[0.9375, -1.40625], [-3.375, 3.03125]], dtype=torch.float64)", 2,
     "torch.tensor([0.71875, inf], dtype=torch.float64)", None),
    # (a bias without a weight: torch 1.13's backward raises "tensor does not have a device", its bug)
    ("torch.tensor([[[1., inf, 2.], [3., 4., 5.]]])", 1, "torch.tensor([3., 2.])", "torch.tensor([1., 2.])"),
    ("torch.linspace(-3, 5, 24).reshape(2, 4, 3)", 2, "torch.linspace(-1, 1, 4)", "torch.linspace(0, 1, 4)"),
    ("torch.linspace(-3, 5, 48, dtype=torch.float64).reshape(2, 4, 6) ** 3", 4, "torch.linspace(-1, 1, 4, dtype=torch.float64)",
     "torch.linspace(0, 1, 4, dtype=torch.float64)"),
]


@pytest.mark.parametrize("x, groups, w, b", GROUP_NORM)
def test_group_norm_values_and_gradients_match_torch(x, groups, w, b):
    out = []
    for lib in (torch_ref, kiln):
        env = {"torch": lib, "inf": math.inf}
        xs = eval(x, env).requires_grad_()
        ws = eval(w, env).requires_grad_() if w else None
        bs = eval(b, env).requires_grad_() if b else None
        y = lib.nn.functional.group_norm(xs, groups, ws, bs)
        (y * lib.arange(y.numel(), dtype=y.dtype).reshape(y.shape)).sum().backward()
        out.append([y.detach().numpy()] + [t.grad.numpy() for t in (xs, ws, bs) if t is not None])
    np.testing.assert_array_equal(out[1][0], out[0][0])  # the values, to the bit
    for got, want in zip(out[1][1:], out[0][1:]):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5, equal_nan=True)


# batch_norm / instance_norm values are torch's kernel's: alpha = invstd * w, beta = b - mean * alpha,
# y = x * alpha + beta (fused where torch fuses), statistics accumulated in double. So a constant
# channel gives torch's residue, an infinite weight torch's inf - inf; gradients as before.
BATCH_NORM = [
    "torch.nn.functional.batch_norm(X(torch.full((2, 2, 3), 1e10)), None, None, training=True)",
    "torch.nn.functional.batch_norm(X(torch.full((2, 2, 3), -3.7)), None, None, torch.tensor([2., 3.]), training=True)",
    "torch.nn.functional.instance_norm(X(torch.full((2, 2, 3), 0.3)))",
    "torch.nn.functional.instance_norm(X(torch.full((2, 2, 5), 7.77, dtype=torch.float64)))",
    ("torch.nn.functional.instance_norm(torch.tensor([[[-3.875, nan]], [[-0.3125, 3.65625]], [[3.625, 0.9375]]], "
     "dtype=torch.float64).transpose(0, 1), torch.tensor([-3.28125, -4.0, 2.3125], dtype=torch.float64), "
     "torch.tensor([0.46875, 0.71875, 1.21875], dtype=torch.float64), torch.tensor([0.4375, -2.25, inf], "
     "dtype=torch.float64), None, use_input_stats=True, momentum=0.1, eps=0.1)"),
    ("torch.nn.functional.batch_norm(torch.tensor([[[[-0.875, -1.8125], [1.59375, -0.0]], [[nan, -1.0], [-0.53125, "
     "1.21875]]], [[[-1.59375, 1.625], [0.0, 1.1754943508222875e-38]], [[-2.0, 2.96875], [1.0, 3.53125]]]]), "
     "torch.tensor([-3.9375, -1.625]), torch.tensor([0.65625, 0.46875]), torch.tensor([inf, -4.0]), None, "
     "training=False, momentum=0.5, eps=0.1)"),
    ("torch.nn.functional.batch_norm(X(torch.linspace(-3, 7, 30).reshape(3, 2, 5) ** 2), torch.zeros(2), torch.ones(2), "
     "W(torch.tensor([0.5, -2.])), W(torch.tensor([1., 0.25])), training=True, momentum=0.3)"),
    ("torch.nn.functional.batch_norm(X(torch.linspace(-3, 7, 30, dtype=torch.float64).reshape(3, 2, 5) ** 3), "
     "torch.tensor([0.5, -1.], dtype=torch.float64), torch.tensor([2., 0.5], dtype=torch.float64), "
     "W(torch.tensor([0.5, -2.], dtype=torch.float64)), W(torch.tensor([1., 0.25], dtype=torch.float64)))"),
    "torch.nn.functional.batch_norm(torch.full((4, 3), 2.5), None, None, training=True, eps=0.)",  # torch's invstd 0
]


@pytest.mark.parametrize("src", BATCH_NORM)
def test_batch_norm_values_and_gradients_match_torch(src):
    out = []
    for lib in (torch_ref, kiln):
        leaves = []
        def leaf(t):
            leaves.append(t.requires_grad_())
            return t
        y = eval(src, {"torch": lib, "inf": math.inf, "nan": math.nan, "X": leaf, "W": leaf})
        grads = []
        if leaves:
            (y * lib.arange(y.numel(), dtype=y.dtype).reshape(y.shape)).sum().backward()
            grads = [t.grad.numpy() for t in leaves]
        out.append([y.detach().numpy()] + grads)
    np.testing.assert_array_equal(out[1][0], out[0][0])  # the values, to the bit
    for got, want in zip(out[1][1:], out[0][1:]):
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4, equal_nan=True)


@pytest.mark.parametrize("src", CASES)
def test_matches_torch(src):
    assert_same_outcome(src, kiln, torch_ref)
