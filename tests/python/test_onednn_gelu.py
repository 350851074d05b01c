"""gelu through oneDNN, as torch 1.13: its gelu_out_cpu and gelu_backward_out_cpu hand a contiguous
float32 tensor of two or more elements (approximate='none', torch.backends.mkldnn.enabled) to oneDNN's
eltwise_gelu_erf, and so does kiln (runtime/kernels/cpu/onednn_eltwise.cc, the `library:` of gelu's
formula). There kiln's output and gradient are torch's bits; elsewhere gelu is its formula."""
import numpy as np
import pytest
import torch

import kiln

F, KF = torch.nn.functional, kiln.nn.functional


def bits(t):
    return (t.numpy() if isinstance(t, torch.Tensor) else t.detach().numpy()).view(np.int32)


@pytest.fixture(params=[1, 2], ids=["1 thread", "2 threads"])
def threads(request):
    old_t, old_k = torch.get_num_threads(), kiln.get_num_threads()
    torch.set_num_threads(request.param)
    kiln.set_num_threads(request.param)
    yield request.param
    torch.set_num_threads(old_t)
    kiln.set_num_threads(old_k)


@pytest.mark.parametrize("shape", [(2,), (7,), (8,), (17,), (100,), (3, 5, 7), (64, 1031), (1 << 18,)])
def test_forward_and_gradient_are_torch_bits(shape, threads):
    g = torch.Generator().manual_seed(sum(shape))
    x = torch.randn(shape, generator=g) * 4
    grad = torch.randn(shape, generator=g)
    xt = x.clone().requires_grad_()
    yt = F.gelu(xt)
    yt.backward(grad)
    xk = kiln.tensor(x.numpy(), requires_grad=True)
    yk = KF.gelu(xk)
    yk.backward(kiln.tensor(grad.numpy()))
    np.testing.assert_array_equal(bits(yk), bits(yt.detach()))
    np.testing.assert_array_equal(bits(xk.grad), bits(xt.grad))


def test_special_values_are_torch_bits():
    x = torch.tensor([0.0, -0.0, float("inf"), -float("inf"), float("nan"), 1e-45, -1e-45, 3.4e38, -3.4e38,
                      -10.0, -5.0, 10.0, 1e-20, -1e-20])
    got = KF.gelu(kiln.tensor(x.numpy())).numpy()
    want = F.gelu(x).numpy()
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    ok = ~np.isnan(want)
    np.testing.assert_array_equal(got[ok].view(np.int32), want[ok].view(np.int32))


def test_module_in_a_network():
    x = torch.randn(6, 9, generator=torch.Generator().manual_seed(3))
    w = torch.randn(6, 9, generator=torch.Generator().manual_seed(4))
    xt, xk = x.clone().requires_grad_(), kiln.tensor(x.numpy(), requires_grad=True)
    (torch.nn.GELU()(xt) * w).sum().backward()
    (kiln.nn.GELU()(xk) * kiln.tensor(w.numpy())).sum().backward()
    np.testing.assert_array_equal(bits(xk.grad), bits(xt.grad))


def test_a_strided_gradient_gives_the_contiguous_gradients_bits():
    """torch 1.13 hands a transposed gradient to oneDNN as if it were contiguous (its gelu_backward then
    reads the wrong elements); kiln makes it contiguous first: torch's bits for the contiguous one."""
    x = torch.randn(6, 9, generator=torch.Generator().manual_seed(7))
    g = torch.randn(9, 6, generator=torch.Generator().manual_seed(8)).t()
    want = torch.ops.aten.gelu_backward(g.contiguous(), x)
    got = kiln._C._gelu_self_backward(kiln.tensor(g.numpy().T.copy()).t(), kiln.tensor(x.numpy()), "none")
    np.testing.assert_array_equal(bits(got), bits(want))


def test_out_forms_give_the_functional_bits():
    x = torch.randn(5, 8, generator=torch.Generator().manual_seed(5)) * 3
    xk = kiln.tensor(x.numpy())
    want = bits(F.gelu(x))
    empty = kiln.empty(0)
    assert kiln.gelu(xk, out=empty) is empty
    np.testing.assert_array_equal(bits(empty), want)
    # A strided out= holds the same values (torch 1.13's oneDNN call leaves such an out unwritten).
    strided = kiln.zeros(8, 5).t()
    kiln.gelu(xk, out=strided)
    assert strided.stride() == (1, 5)
    np.testing.assert_array_equal(bits(strided.contiguous()), want)


def close_to_torch(got, want):
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=2e-6, atol=1e-6)


def test_where_torch_runs_its_own_kernel_kiln_runs_the_formula():
    """Strided inputs, float64, the tanh form, one element and the flag off: torch's vectorized kernel
    (another erf than oneDNN's), kiln's formula; both near float32 rounding of the exact gelu (torch's
    erf loses relative accuracy in the negative tail, where 1 + erf cancels: hence atol)."""
    x = torch.randn(64, 33, generator=torch.Generator().manual_seed(6)) * 3
    xk = kiln.tensor(x.numpy())
    close_to_torch(KF.gelu(xk.t()), F.gelu(x.t()))
    close_to_torch(KF.gelu(xk, approximate="tanh"), F.gelu(x, approximate="tanh"))
    np.testing.assert_allclose(KF.gelu(xk.double()).numpy(), F.gelu(x.double()).numpy(), rtol=1e-14, atol=1e-15)
    close_to_torch(KF.gelu(xk[:1, :1]), F.gelu(x[:1, :1]))
    with kiln.backends.mkldnn.flags(enabled=False):
        off = KF.gelu(xk)
    close_to_torch(off, F.gelu(x))
    assert (bits(off) != bits(KF.gelu(xk))).any()  # the flag did switch the library off


def test_bad_arguments_still_raise_as_torch():
    x = kiln.randn(4)
    with pytest.raises(RuntimeError):
        KF.gelu(x, approximate="sigmoid")
    with pytest.raises(RuntimeError):
        kiln.gelu(x, out=kiln.empty(4, dtype=kiln.int64))
