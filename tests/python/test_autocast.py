"""kiln.autocast('cpu') against torch.autocast('cpu') (torch 1.13, bfloat16): which ops run in
bfloat16, which in float32, which promote, what is left alone; values and gradients through the
casts; the thread-local, nesting state."""
import threading

import numpy as np
import pytest

import kiln
import kiln.nn.functional as KF

torch = pytest.importorskip("torch", reason="torch.autocast is the oracle")
TF = torch.nn.functional

RNG = np.random.default_rng(0)
A = RNG.standard_normal((4, 4)).astype(np.float32)
X4 = RNG.standard_normal((1, 2, 5, 5)).astype(np.float32)
W4 = RNG.standard_normal((3, 2, 3, 3)).astype(np.float32)
P = (1 / (1 + np.exp(-A))).astype(np.float32)


def lib_args(lib, dtype_name):
    dt = getattr(lib, dtype_name)
    t = lambda a: lib.tensor(a.tolist()).to(dt)  # noqa: E731
    return lib, (lib.nn.functional if lib is kiln else TF), t


CASES = {
    "mm": lambda lib, F, t: lib.mm(t(A), t(A)),
    "bmm": lambda lib, F, t: lib.bmm(t(A)[None], t(A)[None]),
    "addmm": lambda lib, F, t: lib.addmm(t(A), t(A), t(A)),
    "matmul": lambda lib, F, t: lib.matmul(t(A), t(A)),
    "linear": lambda lib, F, t: F.linear(t(A), t(A), t(A[0])),
    "conv2d": lambda lib, F, t: F.conv2d(t(X4), t(W4)),
    "prod": lambda lib, F, t: t(A).prod(),
    "prod_dim": lambda lib, F, t: t(A).prod(1),
    "nll_loss": lambda lib, F, t: F.nll_loss(t(A), lib.tensor([0, 1, 2, 3])),
    "cross_entropy": lambda lib, F, t: F.cross_entropy(t(A), lib.tensor([0, 1, 2, 3])),
    "binary_cross_entropy": lambda lib, F, t: F.binary_cross_entropy(t(P), t(P)),
    "bce_with_logits": lambda lib, F, t: F.binary_cross_entropy_with_logits(t(A), t(P)),
    "mse_loss": lambda lib, F, t: F.mse_loss(t(A), t(P)),
    "l1_loss": lambda lib, F, t: F.l1_loss(t(A), t(P)),
    "cat_mixed": lambda lib, F, t: lib.cat([t(A), lib.tensor(A.tolist())]),
    "stack_mixed": lambda lib, F, t: lib.stack([t(A), lib.tensor(A.tolist())]),
    "exp": lambda lib, F, t: t(A).exp(),
    "sum": lambda lib, F, t: t(A).sum(),
    "softmax": lambda lib, F, t: t(A).softmax(0),
    "layer_norm": lambda lib, F, t: F.layer_norm(t(A), (4,)),
    "mm_float64": lambda lib, F, t: lib.mm(t(A).double(), t(A).double()),
    "add": lambda lib, F, t: t(A) + t(A),
}


def dtype_name(x):
    return str(x.dtype).split(".")[-1]


@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("input_dtype", ["float32", "bfloat16"])
def test_result_dtype_as_torch(case, input_dtype):
    with torch.autocast("cpu", dtype=torch.bfloat16):
        want = CASES[case](*lib_args(torch, input_dtype))
    with kiln.autocast("cpu", dtype=kiln.bfloat16):
        got = CASES[case](*lib_args(kiln, input_dtype))
    assert dtype_name(got) == dtype_name(want)
    np.testing.assert_allclose(np.asarray(got.float().tolist()), np.asarray(want.float().tolist()),
                               rtol=2e-2, atol=5e-2)  # bfloat16 sums: torch's AVX2 and AVX-512 kernels round apart


def test_outside_autocast_nothing_is_cast():
    assert kiln.mm(kiln.ones(2, 2), kiln.ones(2, 2)).dtype == kiln.float32
    with kiln.autocast("cpu"):
        assert kiln.mm(kiln.ones(2, 2), kiln.ones(2, 2)).dtype == kiln.bfloat16
    assert kiln.mm(kiln.ones(2, 2), kiln.ones(2, 2)).dtype == kiln.float32


def test_gradients_flow_through_the_casts_as_in_torch():
    grads = []
    for lib, F in ((torch, TF), (kiln, KF)):
        w = lib.tensor(A.tolist(), requires_grad=True)
        x = lib.tensor(P.tolist())
        with lib.autocast("cpu", dtype=lib.bfloat16):
            loss = F.mse_loss(F.linear(x, w).relu(), x)
        loss.backward()
        assert dtype_name(loss) == "float32" and dtype_name(w.grad) == "float32"
        grads.append(np.asarray(w.grad.tolist()))
    np.testing.assert_allclose(grads[1], grads[0], rtol=3e-2, atol=3e-3)


def test_state_nests_and_is_restored():
    assert not kiln.is_autocast_cpu_enabled()
    with kiln.autocast("cpu"):
        assert kiln.is_autocast_cpu_enabled() and kiln.get_autocast_cpu_dtype() == kiln.bfloat16
        with kiln.autocast("cpu", enabled=False):
            assert not kiln.is_autocast_cpu_enabled()
            assert kiln.mm(kiln.ones(2, 2), kiln.ones(2, 2)).dtype == kiln.float32
        assert kiln.is_autocast_cpu_enabled()
        with kiln.cpu.amp.autocast():
            assert kiln.is_autocast_cpu_enabled()
    assert not kiln.is_autocast_cpu_enabled()
    with pytest.raises(ValueError):
        with kiln.autocast("cpu"):
            raise ValueError("inside")
    assert not kiln.is_autocast_cpu_enabled()
    assert kiln.is_autocast_enabled() is False  # the CUDA state, as torch without CUDA


def test_decorator_and_threads():
    @kiln.autocast("cpu")
    def product(a, b):
        return kiln.mm(a, b)

    assert product(kiln.ones(2, 2), kiln.ones(2, 2)).dtype == kiln.bfloat16
    seen = []
    with kiln.autocast("cpu"):
        thread = threading.Thread(target=lambda: seen.append(kiln.is_autocast_cpu_enabled()))
        thread.start()
        thread.join()
    assert seen == [False]  # thread-local, as torch's
