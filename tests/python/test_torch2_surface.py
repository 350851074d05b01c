"""Smaller pieces of torch's API that programs reach for: F.embedding's max_norm and
scale_grad_by_freq (against torch 1.13, bit for bit), torch 2.4's RMSNorm / F.rms_norm (against a
float64 NumPy reference and finite differences), torch.nn.modules.utils' _pair & co and
torch.nn.common_types (against torch's), Tensor.numpy(force=True)."""
import numpy as np
import pytest
import torch

import kiln

W = np.random.default_rng(0).standard_normal((6, 4)).astype(np.float32) * 2
I = np.array([[0, 2, 2], [5, 0, 1]])


@pytest.mark.parametrize("kw", [dict(max_norm=1.0), dict(max_norm=1.5, norm_type=1.0), dict(scale_grad_by_freq=True),
                                dict(max_norm=1.0, scale_grad_by_freq=True, padding_idx=2)])
def test_embedding_max_norm_and_scale_grad_by_freq(kw):
    res = []
    for lib in (torch, kiln):
        w = lib.tensor(W, requires_grad=True)
        y = lib.nn.functional.embedding(lib.tensor(I), w, **kw)
        (y * lib.arange(4.0)).sum().backward()
        res.append([y.detach().numpy().copy(), w.detach().numpy().copy(), w.grad.numpy().copy()])
    for a, b in zip(res[1], res[0]):
        np.testing.assert_array_equal(a, b)


def test_embedding_module_and_bag_renorm_in_place():
    res = []
    for lib in (torch, kiln):
        m = lib.nn.Embedding(6, 4, max_norm=1.0)
        with lib.no_grad():
            m.weight.copy_(lib.tensor(W))
        m(lib.tensor(I))
        wb = lib.tensor(W, requires_grad=True)
        yb = lib.nn.functional.embedding_bag(lib.tensor(I), wb, max_norm=1.0, mode="sum")
        yb.sum().backward()
        res.append([m.weight.detach().numpy().copy(), yb.detach().numpy(), wb.grad.numpy()])
    for a, b in zip(res[1], res[0]):
        np.testing.assert_array_equal(a, b)
    # sparse=True: the same rows (the sparse gradients: tests/python/test_sparse_grads.py)
    np.testing.assert_array_equal(kiln.nn.functional.embedding(kiln.tensor(I), kiln.tensor(W), sparse=True).numpy(),
                                  torch.nn.functional.embedding(torch.tensor(I), torch.tensor(W), sparse=True).numpy())


def _rms_ref(x, shape, w, eps):
    dims = tuple(range(x.ndim - len(shape), x.ndim))
    y = x / np.sqrt((x * x).mean(axis=dims, keepdims=True) + eps)
    return y * w if w is not None else y


@pytest.mark.parametrize("shape", [(5,), (3, 5)])
def test_rms_norm_against_numpy(shape):
    x = np.random.default_rng(1).standard_normal((2, 3, 5))
    w = np.random.default_rng(2).standard_normal(shape)
    for eps in (None, 1e-3):
        ref_eps = np.finfo(np.float64).eps if eps is None else eps
        got = kiln.nn.functional.rms_norm(kiln.tensor(x), shape, kiln.tensor(w), eps)
        np.testing.assert_allclose(got.numpy(), _rms_ref(x, shape, w, ref_eps), rtol=1e-12)
    m = kiln.nn.RMSNorm(shape, eps=1e-6)
    assert [n for n, _ in m.named_parameters()] == ["weight"] and float(m.weight.sum()) == np.prod(shape)
    np.testing.assert_allclose(m(kiln.tensor(x)).detach().numpy(), _rms_ref(x, shape, 1.0, 1e-6), rtol=1e-12)
    assert kiln.nn.RMSNorm(5, elementwise_affine=False).weight is None
    # float32 in, float32 out; bfloat16 computed in float32 and rounded once
    xf = kiln.tensor(x, dtype=kiln.float32)
    assert kiln.nn.functional.rms_norm(xf, shape).dtype == kiln.float32
    xb = xf.bfloat16()
    got = kiln.nn.functional.rms_norm(xb, shape)
    want = kiln.tensor(_rms_ref(xb.double().numpy(), shape, None, np.finfo(np.float32).eps)).bfloat16()
    assert got.dtype == kiln.bfloat16 and (got.float() - want.float()).abs().max().item() <= 2 ** -7


def test_rms_norm_gradients_by_finite_differences():
    x = kiln.tensor(np.random.default_rng(3).standard_normal((2, 4)), requires_grad=True)
    w = kiln.tensor(np.random.default_rng(4).standard_normal(4), requires_grad=True)
    assert kiln.autograd.gradcheck(lambda a, b: kiln.nn.functional.rms_norm(a, [4], b, 1e-5), (x, w))


def test_rms_norm_errors():
    with pytest.raises(RuntimeError, match=r"Given normalized_shape=\[4\], expected input with shape \[\*, 4\]"):
        kiln.nn.functional.rms_norm(kiln.ones(2, 3), [4])
    with pytest.raises(RuntimeError, match="Expected weight to be of same shape as normalized_shape"):
        kiln.nn.functional.rms_norm(kiln.ones(2, 4), [4], kiln.ones(3))


def test_modules_utils_and_common_types_as_torch():
    from torch.nn.modules import utils as tu
    from kiln.nn.modules import utils as ku
    for name in ("_single", "_pair", "_triple", "_quadruple"):
        for v in (3, (1, 2), [4, 5, 6]):
            assert getattr(ku, name)(v) == getattr(tu, name)(v)
    assert ku._reverse_repeat_tuple((1, 2, 3), 2) == tu._reverse_repeat_tuple((1, 2, 3), 2)
    assert ku._ntuple(5)(7) == tu._ntuple(5)(7)
    import kiln.nn.common_types as kt
    import torch.nn.common_types as tt
    assert {n for n in dir(tt) if n.startswith("_size")} <= {n for n in dir(kt) if n.startswith("_size")}


def test_numpy_force():
    for lib in (torch, kiln):
        t = lib.ones(2, requires_grad=True)
        with pytest.raises(RuntimeError):
            t.numpy()
        np.testing.assert_array_equal(t.numpy(force=True), [1.0, 1.0])


def test_legacy_tensor_types():
    for lib in (torch, kiln):
        x = lib.ones(2)
        assert isinstance(x, lib.FloatTensor) and not isinstance(x, lib.DoubleTensor)
        assert isinstance(lib.tensor([1, 2]), lib.LongTensor) and not isinstance(3, lib.FloatTensor)
        assert lib.FloatTensor.dtype == lib.float32 and lib.ByteTensor.dtype == lib.uint8
        assert x.type(lib.DoubleTensor).dtype == lib.float64 and x.type(lib.LongTensor).dtype == lib.int64
        assert tuple(lib.FloatTensor().shape) == (0,) and tuple(lib.LongTensor(2, 3).shape) == (2, 3)
        np.testing.assert_array_equal(lib.IntTensor([1, 2]).numpy(), np.array([1, 2], np.int32))
        with pytest.raises(TypeError, match="argument 'size' must be tuple of ints"):
            lib.FloatTensor(2, 3.0)
    with pytest.raises(TypeError, match="not available"):
        kiln.ones(2).type(kiln.cuda.FloatTensor)


def test_sdpa_kernel_selection():
    # torch 2.x's kiln.nn.attention.sdpa_kernel (1.13 lacks it): kiln's CPU kernel runs when MATH or
    # FLASH_ATTENTION is allowed, and torch's "No available kernel" error otherwise; the switches are
    # restored on leaving the block, errors included.
    from kiln.nn.attention import SDPBackend, sdpa_kernel
    F = kiln.nn.functional
    q = kiln.tensor(np.random.default_rng(5).standard_normal((1, 2, 3, 4)).astype(np.float32))
    want = F.scaled_dot_product_attention(q, q, q).numpy()
    for allowed in (SDPBackend.MATH, [SDPBackend.FLASH_ATTENTION], [SDPBackend.MATH, SDPBackend.CUDNN_ATTENTION]):
        with sdpa_kernel(allowed):
            np.testing.assert_array_equal(F.scaled_dot_product_attention(q, q, q).numpy(), want)
    with pytest.raises(RuntimeError, match="No available kernel"):
        with pytest.warns(UserWarning), sdpa_kernel([SDPBackend.EFFICIENT_ATTENTION]):
            F.scaled_dot_product_attention(q, q, q)
    assert kiln.backends.cuda.math_sdp_enabled() and kiln.backends.cuda.flash_sdp_enabled()
    with pytest.raises(AssertionError, match="Backend must be an instance of SDPBackend"):
        with sdpa_kernel("math"):
            pass
    with kiln.backends.cuda.sdp_kernel(enable_math=False):
        assert not kiln.backends.cuda.math_sdp_enabled()
        np.testing.assert_array_equal(F.scaled_dot_product_attention(q, q, q).numpy(), want)  # flash still on
    assert kiln.backends.cuda.math_sdp_enabled()


def test_default_device():
    # torch 2.x: set_default_device / get_default_device; kiln computes on the CPU only
    kiln.set_default_device("cpu")
    try:
        assert kiln.get_default_device() == kiln.device("cpu")
        assert kiln.ones(2).device == kiln.device("cpu")
    finally:
        kiln.set_default_device(None)
    with pytest.raises(AssertionError, match="not compiled with CUDA"):
        kiln.set_default_device("cuda")
    assert kiln.get_default_device().type == "cpu"


def test_nn_buffer():
    # torch 2.5's nn.Buffer (1.13 lacks it): assigning one registers a buffer; persistent=False keeps it
    # out of state_dict; the data is detached, keeping requires_grad
    m = kiln.nn.Linear(2, 2)
    m.steps = kiln.nn.Buffer(kiln.zeros(3))
    m.tmp = kiln.nn.Buffer(kiln.ones(1), persistent=False)
    assert list(m.state_dict()) == ["weight", "bias", "steps"]
    assert [n for n, _ in m.named_buffers()] == ["steps", "tmp"]
    assert isinstance(m.steps, kiln.nn.Buffer) and not isinstance(kiln.ones(1), kiln.nn.Buffer)
    assert type(m.steps) is kiln.Tensor
    g = kiln.nn.Buffer(kiln.ones(2, requires_grad=True) * 2)
    assert g.requires_grad and g.is_leaf
    m.steps = kiln.nn.Buffer(kiln.ones(3), persistent=False)  # re-registered as non-persistent
    assert "steps" not in m.state_dict()


def test_compiler_namespace():
    # torch.compiler's questions and decorators, answered for an eager library (kiln.compile runs
    # models as they are)
    assert kiln.compiler.is_compiling() is False and kiln.compiler.is_dynamo_compiling() is False

    def f(x):
        return x * 2
    assert kiln.compiler.disable(f) is f and kiln.compiler.disable()(f) is f
    assert kiln.compiler.allow_in_graph(f) is f and kiln.compiler.assume_constant_result(f) is f
    m = kiln.nn.Linear(2, 2)
    assert kiln.compiler.compile(m) is m
    kiln.compiler.reset()


def test_as_subclass():
    res = []
    for lib in (torch, kiln):
        class M(lib.Tensor):
            pass
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = x.as_subclass(M)
        assert type(y) is M and y.requires_grad and not y.is_leaf and y.data_ptr() == x.data_ptr()
        (y * y).sum().backward()
        res.append(x.grad.numpy())
        with pytest.raises(RuntimeError, match="does not inherit from Tensor"):
            x.as_subclass(int)
    np.testing.assert_array_equal(res[1], res[0])


def test_small_names():
    # kiln.vmap (torch 2.x's torch.vmap; a loop, kiln.func), autograd.inference_mode / is_tensor_like,
    # the device and kind flags kiln has none of, and the deprecated nn.NLLLoss2d, against torch where
    # 1.13 has them
    x = kiln.tensor([[1.0, 2.0], [3.0, 4.0]])
    np.testing.assert_array_equal(kiln.vmap(lambda r: r * r.sum())(x).numpy(), [[3.0, 6.0], [21.0, 28.0]])
    assert kiln.autograd.inference_mode is kiln.inference_mode
    for lib in (torch, kiln):
        t = lib.ones(2)
        assert lib.autograd.is_tensor_like(t) and not lib.autograd.is_tensor_like(3)
        assert not (t.is_meta or t.is_quantized or t.is_nested or t.is_mkldnn or t.is_sparse_csr)
        with pytest.warns(UserWarning, match="NLLLoss2d has been deprecated"):
            loss = lib.nn.NLLLoss2d()
        inp = lib.tensor(np.log(np.full((1, 2, 2, 2), 0.5, np.float32)))
        assert abs(float(loss(inp, lib.zeros(1, 2, 2, dtype=lib.int64))) - np.log(2)) < 1e-6
