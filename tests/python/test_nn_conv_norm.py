"""kiln.nn's 1-D/3-D and transposed convolutions, GroupNorm, InstanceNorm1d/2d/3d, Bilinear and
EmbeddingBag against torch's: each module built with the same arguments, torch's state_dict loaded
into kiln's (the keys must match), then the outputs, the gradients of the inputs and of every
parameter, and the running statistics compared, in float64 and float32; errors raise torch's types;
gradcheck and gradgradcheck of the functional forms in float64."""
import numpy as np
import pytest

import kiln
import kiln.nn.functional as KF

torch = pytest.importorskip("torch")
TF = torch.nn.functional

TOL = {torch.float64: dict(atol=1e-10, rtol=1e-8), torch.float32: dict(atol=2e-4, rtol=2e-4)}


def k(t):
    return kiln.from_numpy(t.detach().numpy().copy())


def paired(name, *args, dtype=torch.float64, **kwargs):
    """torch's module and kiln's, with torch's weights and buffers loaded (same state_dict keys)."""
    torch.manual_seed(0)
    tm = getattr(torch.nn, name)(*args, **kwargs).to(dtype)
    km = getattr(kiln.nn, name)(*args, **kwargs)
    km = km.double() if dtype == torch.float64 else km.float()
    tsd = tm.state_dict()
    assert list(km.state_dict().keys()) == list(tsd.keys())
    for key, v in km.state_dict().items():
        assert tuple(v.shape) == tuple(tsd[key].shape), key
    km.load_state_dict({n: k(v) for n, v in tsd.items()})
    return tm, km


def compare(tm, km, t_inputs, dtype=torch.float64, kwargs=None, grad_inputs=True):
    """Forward, then the gradients of sum(output * w) for every input that is floating and every
    parameter, then the buffers (running statistics)."""
    tol = TOL[dtype]
    kwargs = kwargs or {}
    t_in = [t.detach().to(dtype).requires_grad_() if t.is_floating_point() and grad_inputs else t for t in t_inputs]
    k_in = [k(t).requires_grad_() if t.is_floating_point() and grad_inputs else k(t) for t in t_in]
    t_out, k_out = tm(*t_in, **kwargs), km(*k_in, **kwargs)
    assert tuple(t_out.shape) == tuple(k_out.shape)
    assert str(k_out.dtype).split(".")[-1] == str(t_out.dtype).split(".")[-1]
    np.testing.assert_allclose(k_out.detach().numpy(), t_out.detach().numpy(), **tol)
    w = np.random.default_rng(1).standard_normal(tuple(t_out.shape))
    (t_out * torch.from_numpy(w).to(dtype)).sum().backward()
    (k_out * kiln.from_numpy(w).to(k_out.dtype)).sum().backward()
    for (name, tp), (kname, kp) in zip(tm.named_parameters(), km.named_parameters()):
        assert name == kname
        np.testing.assert_allclose(kp.grad.numpy(), tp.grad.numpy(), err_msg=name, **tol)
    for a, b in zip(t_in, k_in):
        if a.requires_grad:
            np.testing.assert_allclose(b.grad.numpy(), a.grad.numpy(), **tol)
    for (name, tb), (_, kb) in zip(tm.named_buffers(), km.named_buffers()):
        np.testing.assert_allclose(kb.numpy(), tb.numpy(), err_msg=name, **tol)


def randn(*shape):
    return torch.randn(*shape, dtype=torch.float64)


DTYPES = [torch.float64, torch.float32]

CONV_CASES = [
    ("Conv1d", (4, 6, 3), {}, (2, 4, 11)),
    ("Conv1d", (4, 6, 3), dict(stride=2, padding=2, dilation=2, groups=2, bias=False), (2, 4, 12)),
    ("Conv1d", (3, 2, 4), dict(padding="same"), (2, 3, 9)),
    ("Conv1d", (3, 2, 3), dict(padding="valid"), (3, 10)),
    ("Conv1d", (2, 4, 3), dict(padding=2, padding_mode="reflect"), (2, 2, 7)),
    ("Conv1d", (2, 4, 3), dict(padding=1, padding_mode="replicate"), (2, 2, 7)),
    ("Conv1d", (2, 4, 3), dict(padding=2, padding_mode="circular"), (2, 2, 7)),
    ("Conv1d", (2, 4, 4), dict(padding="same", padding_mode="reflect", dilation=1), (2, 2, 7)),
    ("Conv2d", (2, 4, 3), dict(padding=(1, 2), padding_mode="reflect"), (2, 2, 5, 6)),
    ("Conv2d", (2, 4, 3), dict(padding=1, padding_mode="replicate", stride=2), (2, 2, 5, 6)),
    ("Conv2d", (2, 4, (3, 2)), dict(padding=(2, 1), padding_mode="circular"), (1, 2, 5, 6)),
    ("Conv3d", (4, 6, 3), {}, (2, 4, 5, 6, 5)),
    ("Conv3d", (4, 6, (3, 2, 3)), dict(stride=(2, 1, 2), padding=(1, 0, 1), dilation=(1, 2, 1), groups=2),
     (2, 4, 6, 7, 5)),
    ("Conv3d", (2, 3, 2), dict(padding="same"), (1, 2, 4, 5, 3)),
    ("Conv3d", (2, 3, 3), dict(padding=1, padding_mode="reflect", bias=False), (2, 4, 5, 4)),
    ("Conv3d", (2, 3, 3), dict(padding=(1, 2, 1), padding_mode="replicate"), (1, 2, 3, 4, 4)),
    ("Conv3d", (2, 3, 3), dict(padding=1, padding_mode="circular"), (1, 2, 3, 4, 4)),
    ("ConvTranspose1d", (4, 6, 3), {}, (2, 4, 5)),
    ("ConvTranspose1d", (4, 6, 3), dict(stride=3, padding=1, output_padding=2, groups=2, dilation=2), (2, 4, 5)),
    ("ConvTranspose1d", (3, 2, 2), dict(stride=1, dilation=3, output_padding=2, bias=False), (3, 6)),
    ("ConvTranspose2d", (4, 6, 3), {}, (2, 4, 5, 4)),
    ("ConvTranspose2d", (4, 6, (3, 2)), dict(stride=(2, 3), padding=(1, 0), output_padding=(1, 2), groups=2),
     (2, 4, 4, 3)),
    ("ConvTranspose2d", (2, 3, 3), dict(stride=2, dilation=2, padding=2, bias=False), (2, 4, 5)),
    ("ConvTranspose2d", (2, 4, 3), dict(stride=1, dilation=2, output_padding=1, groups=2), (1, 2, 3, 4)),
]


@pytest.mark.parametrize("dtype", DTYPES, ids=["float64", "float32"])
@pytest.mark.parametrize("name,args,kwargs,shape", CONV_CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CONV_CASES)])
def test_conv_modules(name, args, kwargs, shape, dtype):
    tm, km = paired(name, *args, dtype=dtype, **kwargs)
    torch.manual_seed(2)
    compare(tm, km, [randn(*shape)], dtype)
    assert repr(km) == repr(tm)


@pytest.mark.parametrize("name,shape,output_size", [
    ("ConvTranspose2d", (2, 4, 5, 4), [10, 8]), ("ConvTranspose2d", (4, 5, 4), (6, 10, 7)),
    ("ConvTranspose1d", (2, 4, 5), [10]), ("ConvTranspose1d", (2, 4, 5), (2, 6, 9))])
def test_conv_transpose_output_size(name, shape, output_size):
    tm, km = paired(name, 4, 6, 3, stride=2, padding=1)
    compare(tm, km, [randn(*shape)], kwargs={"output_size": output_size})
    t_out = tm(randn(*shape), output_size=output_size)
    assert list(t_out.shape[-len(output_size):]) == list(output_size)[-len(output_size):]
    for bad in ([30] * (len(shape) - 2), [1] * (len(shape) - 2), [12] * 5):
        with pytest.raises(ValueError):
            tm(randn(*shape), output_size=bad)
        with pytest.raises(ValueError):
            km(k(randn(*shape)), output_size=bad)


def test_module_init_matches_torch():
    """Same seed, same parameters: kiln draws its initialisation from torch's stream."""
    for name, args, kwargs in [("Conv1d", (4, 6, 3), {}), ("Conv3d", (2, 4, 3), {"groups": 2}),
                               ("ConvTranspose1d", (4, 6, 3), {}), ("ConvTranspose2d", (4, 6, 3), {"groups": 2}),
                               ("Bilinear", (3, 4, 5), {}), ("EmbeddingBag", (7, 3), {"padding_idx": 2}),
                               ("GroupNorm", (2, 6), {}), ("InstanceNorm2d", (3,), {"affine": True,
                                                                                  "track_running_stats": True})]:
        torch.manual_seed(5)
        tm = getattr(torch.nn, name)(*args, **kwargs)
        kiln.manual_seed(5)
        km = getattr(kiln.nn, name)(*args, **kwargs)
        tsd, ksd = tm.state_dict(), km.state_dict()
        assert list(ksd) == list(tsd), name
        for key in tsd:
            np.testing.assert_array_equal(ksd[key].numpy(), tsd[key].numpy(), err_msg=f"{name}.{key}")


@pytest.mark.parametrize("dtype", DTYPES, ids=["float64", "float32"])
@pytest.mark.parametrize("args,kwargs,shape", [
    ((3, 6), {}, (4, 6, 5, 3)), ((2, 4), {"affine": False}, (3, 4, 7)), ((1, 3), {"eps": 0.1}, (2, 3)),
    ((4, 4), {}, (2, 4, 2, 3, 2))])
def test_group_norm(args, kwargs, shape, dtype):
    tm, km = paired("GroupNorm", *args, dtype=dtype, **kwargs)
    with torch.no_grad():
        for p in tm.parameters():
            p.normal_()
    km.load_state_dict({n: k(v) for n, v in tm.state_dict().items()})
    compare(tm, km, [randn(*shape)], dtype)


@pytest.mark.parametrize("dtype", DTYPES, ids=["float64", "float32"])
@pytest.mark.parametrize("name,kwargs,shape", [
    ("InstanceNorm1d", {}, (2, 3, 6)), ("InstanceNorm1d", {"affine": True}, (3, 5)),
    ("InstanceNorm1d", {"track_running_stats": True, "momentum": 0.3}, (4, 3, 5)),
    ("InstanceNorm2d", {"affine": True, "track_running_stats": True}, (2, 3, 4, 5)),
    ("InstanceNorm2d", {"eps": 0.1}, (3, 4, 2)),
    ("InstanceNorm3d", {"affine": True}, (2, 3, 2, 3, 2)),
    ("InstanceNorm3d", {"track_running_stats": True, "momentum": 0.5}, (3, 2, 3, 2))])
def test_instance_norm(name, kwargs, shape, dtype):
    tm, km = paired(name, 3, dtype=dtype, **kwargs)
    if kwargs.get("affine"):
        with torch.no_grad():
            for p in tm.parameters():
                p.normal_()
        km.load_state_dict({n: k(v) for n, v in tm.state_dict().items()})
    compare(tm, km, [randn(*shape)], dtype)   # training: batch statistics, running ones updated
    compare(tm, km, [randn(*shape)], dtype)
    tm.eval(), km.eval()
    compare(tm, km, [randn(*shape)], dtype)   # eval: the running statistics when tracked


@pytest.mark.parametrize("dtype", DTYPES, ids=["float64", "float32"])
@pytest.mark.parametrize("bias,shapes", [(True, ((5, 3), (5, 4))), (False, ((2, 5, 3), (2, 5, 4))),
                                         (True, ((3,), (4,))), (True, ((0, 3), (0, 4)))])
def test_bilinear(bias, shapes, dtype):
    tm, km = paired("Bilinear", 3, 4, 2, bias=bias, dtype=dtype)
    compare(tm, km, [randn(*shapes[0]), randn(*shapes[1])], dtype)


EBAG_CASES = [
    ({"mode": "sum"}, [[1, 2, 4], [4, 3, 0]], None, None),
    ({"mode": "mean"}, [[1, 2, 4], [4, 3, 0]], None, None),
    ({"mode": "max"}, [[1, 2, 4], [4, 3, 0]], None, None),
    ({"mode": "mean"}, [1, 2, 4, 5, 4, 3, 2, 9, 0], [0, 4, 4, 6], None),
    ({"mode": "sum"}, [1, 2, 4, 5, 4, 3, 2, 9, 0], [0, 4, 4, 6], None),
    ({"mode": "max"}, [1, 2, 4, 5, 4, 3, 2, 9, 0], [0, 4, 4, 6], None),
    ({"mode": "sum"}, [1, 2, 4, 5, 4, 3, 2, 9, 0], [0, 4, 4, 6], [.5, 1, 2, -1, 3, .1, .2, .3, 1.5]),
    ({"mode": "sum"}, [[1, 2], [4, 3]], None, [[.5, 2], [-1, 3]]),
    ({"mode": "mean", "include_last_offset": True}, [1, 2, 4, 5, 4, 3, 2, 9, 0], [0, 4, 4, 6, 9], None),
    ({"mode": "mean", "padding_idx": 4}, [1, 2, 4, 5, 4, 4, 2, 9, 0], [0, 4, 4, 6], None),
    ({"mode": "sum", "padding_idx": 4}, [[1, 4, 4], [4, 3, 0]], None, None),
    ({"mode": "max", "padding_idx": -1}, [[1, 9, 9], [4, 3, 0], [9, 9, 9]], None, None),
]


@pytest.mark.parametrize("dtype", DTYPES, ids=["float64", "float32"])
@pytest.mark.parametrize("kwargs,idx,offsets,psw", EBAG_CASES, ids=[str(i) for i in range(len(EBAG_CASES))])
def test_embedding_bag(kwargs, idx, offsets, psw, dtype):
    tm, km = paired("EmbeddingBag", 10, 3, dtype=dtype, **kwargs)
    inputs = [torch.tensor(idx)]
    call = {}
    if offsets is not None:
        call["offsets"] = (torch.tensor(offsets), kiln.tensor(offsets))
    if psw is not None:
        call["per_sample_weights"] = torch.tensor(psw, dtype=dtype, requires_grad=True)
    tin = torch.tensor(idx)
    t_kw = {n: (v[0] if isinstance(v, tuple) else v) for n, v in call.items()}
    k_kw = {n: (v[1] if isinstance(v, tuple) else k(v).requires_grad_()) for n, v in call.items()}
    t_out, k_out = tm(tin, **t_kw), km(kiln.tensor(idx), **k_kw)
    tol = TOL[dtype]
    np.testing.assert_allclose(k_out.detach().numpy(), t_out.detach().numpy(), **tol)
    w = np.random.default_rng(1).standard_normal(tuple(t_out.shape))
    (t_out * torch.from_numpy(w).to(dtype)).sum().backward()
    (k_out * kiln.from_numpy(w).to(k_out.dtype)).sum().backward()
    np.testing.assert_allclose(km.weight.grad.numpy(), tm.weight.grad.numpy(), **tol)
    if psw is not None:
        np.testing.assert_allclose(k_kw["per_sample_weights"].grad.numpy(),
                                   t_kw["per_sample_weights"].grad.numpy(), **tol)
    del inputs


def test_embedding_bag_functional_and_pretrained():
    w = randn(6, 2)
    tb = torch.nn.EmbeddingBag.from_pretrained(w, mode="sum")
    kb = kiln.nn.EmbeddingBag.from_pretrained(k(w), mode="sum")
    assert kb.weight.requires_grad is False
    idx = [[0, 5], [2, 2]]
    np.testing.assert_allclose(kb(kiln.tensor(idx)).numpy(), tb(torch.tensor(idx)).numpy())
    np.testing.assert_allclose(KF.embedding_bag(kiln.tensor([1, 2, 3]), k(w), kiln.tensor([0, 1])).numpy(),
                               TF.embedding_bag(torch.tensor([1, 2, 3]), w, torch.tensor([0, 1])).numpy())


def test_identity():
    x = kiln.randn(2, 3)
    assert kiln.nn.Identity(54, unused="x")(x) is x


# ------------------------------------------------------------------ functional forms: values and gradcheck
def _functional_cases():
    r = np.random.default_rng(3)

    def t(*s):
        return r.standard_normal(s)

    yield "conv1d", (t(2, 4, 7), t(6, 2, 3), t(6)), dict(stride=2, padding=1, dilation=1, groups=2)
    yield "conv1d", (t(3, 6), t(2, 3, 2), None), dict(padding="same", dilation=2)
    yield "conv3d", (t(1, 2, 4, 3, 4), t(2, 2, 2, 2, 2), t(2)), dict(stride=(1, 2, 1), padding=1)
    yield "conv3d", (t(2, 3, 4, 3), t(4, 1, 2, 1, 2), None), dict(groups=2, dilation=(2, 1, 1))
    yield "conv_transpose1d", (t(2, 4, 5), t(4, 3, 3), t(3)), dict(stride=2, padding=1, output_padding=1)
    yield "conv_transpose2d", (t(1, 4, 3, 3), t(4, 1, 2, 3), t(2)), dict(stride=(2, 1), groups=2, dilation=(1, 2))
    yield "conv_transpose2d", (t(2, 3, 3), t(2, 2, 2, 2), None), dict(stride=1, dilation=2, output_padding=1)
    yield "group_norm", (t(2, 4, 3), 2, t(4), t(4)), dict(eps=1e-3)
    yield "instance_norm", (t(2, 3, 4), None, None, t(3), t(3)), {}
    yield "bilinear", (t(3, 2), t(3, 4), t(5, 2, 4), t(5)), {}
    yield "pad", (t(1, 2, 4, 3), (2, 1, 1, 2)), dict(mode="reflect")
    yield "pad", (t(1, 2, 4, 3), (2, 1, 1, 2)), dict(mode="replicate")
    yield "pad", (t(1, 2, 3, 4, 3), (2, 1, 1, 2, 0, 1)), dict(mode="circular")


FUNCTIONAL = list(_functional_cases())


@pytest.mark.parametrize("name,args,kwargs", FUNCTIONAL, ids=[f"{c[0]}-{i}" for i, c in enumerate(FUNCTIONAL)])
def test_functional_against_torch_and_gradcheck(name, args, kwargs):
    t_args = [torch.tensor(a) if isinstance(a, np.ndarray) else a for a in args]
    k_args = [kiln.tensor(a) if isinstance(a, np.ndarray) else a for a in args]
    np.testing.assert_allclose(getattr(KF, name)(*k_args, **kwargs).numpy(),
                               getattr(TF, name)(*t_args, **kwargs).numpy(), atol=1e-10, rtol=1e-8)
    pos = [i for i, a in enumerate(args) if isinstance(a, np.ndarray)]

    def fn(*ts):
        full = list(k_args)
        for i, v in zip(pos, ts):
            full[i] = v
        return getattr(KF, name)(*full, **kwargs)

    leaves = [k_args[i].clone().requires_grad_() for i in pos]
    assert kiln.autograd.gradcheck(fn, leaves)
    assert kiln.autograd.gradgradcheck(fn, leaves)


def test_embedding_bag_gradcheck():
    w = kiln.randn(6, 3, dtype=kiln.float64, requires_grad=True)
    psw = kiln.randn(5, dtype=kiln.float64, requires_grad=True)
    idx, off = kiln.tensor([0, 2, 5, 2, 1]), kiln.tensor([0, 2, 2])
    for mode in ("sum", "mean", "max"):
        assert kiln.autograd.gradcheck(lambda w: KF.embedding_bag(idx, w, off, mode=mode), [w])
    assert kiln.autograd.gradcheck(lambda w, p: KF.embedding_bag(idx, w, off, mode="sum", per_sample_weights=p),
                                   [w, psw])


def test_float32_module_stays_float32():
    m = kiln.nn.Conv3d(2, 3, 2)
    out = m(kiln.randn(1, 2, 3, 3, 3))
    assert out.dtype == kiln.float32 and m.weight.dtype == kiln.float32


# ------------------------------------------------------------------ errors: torch's exception types
def _both_raise(fn_t, fn_k, exc):
    with pytest.raises(exc):
        fn_t()
    with pytest.raises(exc) as info:
        fn_k()
    return str(info.value)


@pytest.mark.parametrize("name,args,kwargs,exc", [
    ("Conv1d", (4, 6, 3), {"groups": 3}, ValueError),
    ("Conv1d", (4, 6, 3), {"padding": "full"}, ValueError),
    ("Conv3d", (4, 6, 3), {"padding": "same", "stride": 2}, ValueError),
    ("Conv3d", (4, 6, 3), {"padding_mode": "mirror"}, ValueError),
    ("Conv1d", (4, 6, 3), {"groups": 0}, ValueError),
    ("ConvTranspose2d", (4, 6, 3), {"padding_mode": "reflect"}, ValueError),
    ("ConvTranspose1d", (4, 6, 3), {"groups": 4}, ValueError),
    ("GroupNorm", (4, 6), {}, ValueError),
])
def test_constructor_errors(name, args, kwargs, exc):
    _both_raise(lambda: getattr(torch.nn, name)(*args, **kwargs), lambda: getattr(kiln.nn, name)(*args, **kwargs), exc)


def _functional_errors():
    yield "conv1d", ((2, 4, 7), (6, 4, 3)), {"groups": 2}, RuntimeError, "conv1d"            # channels
    yield "conv1d", ((2, 4, 7, 3), (6, 4, 3)), {}, RuntimeError, "conv1d"                    # input dims
    yield "conv1d", ((2, 4, 7), (6, 4, 3, 1)), {}, RuntimeError, "weight"                    # weight dims
    yield "conv1d", ((2, 4, 2), (6, 4, 3)), {}, RuntimeError, "Kernel size"                  # too small
    yield "conv1d", ((2, 4, 7), (6, 4, 3)), {"stride": 0}, RuntimeError, "stride"
    yield "conv1d", ((2, 4, 7), (6, 4, 3)), {"padding": -1}, RuntimeError, "padding"
    yield "conv1d", ((2, 4, 7), (6, 4, 3)), {"padding": "same", "stride": 2}, RuntimeError, "same"
    yield "conv1d", ((2, 4, 7), (6, 4, 3)), {"padding": "full"}, RuntimeError, "padding"
    yield "conv3d", ((2, 4, 3, 3), (6, 4, 2, 2, 2)), {}, RuntimeError, "conv3d"
    yield "conv3d", ((1, 4, 3, 3, 3), (6, 4, 2, 2, 2)), {"dilation": 0}, RuntimeError, "dilation"
    yield "conv3d", ((1, 4, 3, 3, 3), (6, 4, 2, 2, 2), (5,)), {}, RuntimeError, "bias"
    yield "conv3d", ((1, 4, 1, 3, 3), (6, 4, 2, 2, 2)), {}, RuntimeError, "Kernel size"
    yield "conv_transpose2d", ((1, 4, 3, 3), (3, 2, 2, 2)), {}, RuntimeError, "channels"
    yield "conv_transpose2d", ((1, 4, 3, 3), (4, 2, 2, 2)), {"output_padding": 1}, RuntimeError, "output padding"
    yield "conv_transpose2d", ((1, 4, 3, 3), (4, 2, 2, 2)), {"groups": 3}, RuntimeError, "groups"
    yield "conv_transpose1d", ((1, 4, 3, 3), (4, 2, 2)), {}, RuntimeError, "conv_transpose1d"
    yield "conv_transpose1d", ((1, 4, 3), (4, 2, 2)), {"stride": -1}, RuntimeError, "stride"
    yield "group_norm", ((2, 6, 3), 4), {}, RuntimeError, "num_groups"
    yield "group_norm", ((1, 6), 6), {}, ValueError, "per channel"
    yield "instance_norm", ((2, 3, 1),), {}, ValueError, "spatial"
    yield "bilinear", ((2, 3), (2, 4), (5, 3, 3)), {}, RuntimeError, "input2"
    yield "bilinear", ((2, 3), (3, 4), (5, 3, 4)), {}, RuntimeError, "bilinear"
    yield "pad", ((1, 2, 3), (3, 3)), {"mode": "reflect"}, RuntimeError, "Padding size"
    yield "pad", ((2, 3), (1, 1, 1, 1)), {"mode": "replicate"}, NotImplementedError, "padding"
    yield "pad", ((2, 3, 3), (1, 1, 1, 1, 1, 1)), {"mode": "reflect"}, NotImplementedError, "padding"


ERRORS = list(_functional_errors())


@pytest.mark.parametrize("name,shapes,kwargs,exc,word", ERRORS, ids=[f"{e[0]}-{i}" for i, e in enumerate(ERRORS)])
def test_functional_errors(name, shapes, kwargs, exc, word):
    t_args = [randn(*s) if isinstance(s, tuple) and not (name == "pad" and i == 1) else s for i, s in enumerate(shapes)]
    k_args = [k(a) if isinstance(a, torch.Tensor) else a for a in t_args]
    msg = _both_raise(lambda: getattr(TF, name)(*t_args, **kwargs), lambda: getattr(KF, name)(*k_args, **kwargs), exc)
    assert word.lower() in msg.lower(), msg


def test_module_forward_errors():
    x3 = randn(2, 3, 4)
    for tm, km, x, exc in [
        (torch.nn.InstanceNorm2d(3), kiln.nn.InstanceNorm2d(3), x3[0], ValueError),           # 2-D for 2d
        (torch.nn.Conv3d(3, 2, 2), kiln.nn.Conv3d(3, 2, 2), x3, RuntimeError),
        (torch.nn.ConvTranspose2d(3, 2, 2), kiln.nn.ConvTranspose2d(3, 2, 2), randn(3), RuntimeError),
    ]:
        _both_raise(lambda: tm(x), lambda: km(k(x)), exc)
    eb_t, eb_k = torch.nn.EmbeddingBag(5, 2, mode="mean"), kiln.nn.EmbeddingBag(5, 2, mode="mean")
    idx = torch.tensor([0, 1, 2])
    _both_raise(lambda: eb_t(idx), lambda: eb_k(k(idx)), ValueError)                          # 1-D, no offsets
    _both_raise(lambda: eb_t(idx.reshape(1, 3), torch.tensor([0])), lambda: eb_k(k(idx).reshape(1, 3), kiln.tensor([0])),
                ValueError)
    _both_raise(lambda: eb_t(idx, torch.tensor([0]), per_sample_weights=torch.ones(3)),
                lambda: eb_k(k(idx), kiln.tensor([0]), per_sample_weights=kiln.ones(3)), NotImplementedError)
    _both_raise(lambda: eb_t(torch.tensor([[0, 5]])), lambda: eb_k(kiln.tensor([[0, 5]])), (IndexError, RuntimeError))
    with pytest.raises(AssertionError):
        kiln.nn.EmbeddingBag(5, 2, padding_idx=5)
    with pytest.raises(AssertionError):
        torch.nn.EmbeddingBag(5, 2, padding_idx=5)


def test_torch2_behaviour_torch_113_lacks():
    """torch 2.x's rules where Debian's torch 1.13 differs: a 1-D group_norm input is a RuntimeError
    (1.13: IndexError), an InstanceNorm with affine weights checks the channel count (ValueError), its
    momentum=None means no running-statistics update, and a pad longer than the input's dims is a
    RuntimeError naming the padding."""
    with pytest.raises(RuntimeError, match="at least 2 dimensions"):
        KF.group_norm(kiln.randn(6), 3)
    with pytest.raises(ValueError, match="num_features"):
        kiln.nn.InstanceNorm1d(4, affine=True)(kiln.randn(2, 3, 4))
    m = kiln.nn.InstanceNorm1d(3, track_running_stats=True, momentum=None)
    out = m(kiln.randn(2, 3, 5) * 3 + 1)
    assert abs(float(out.mean())) < 1e-6
    np.testing.assert_array_equal(m.running_mean.numpy(), np.zeros(3))
    np.testing.assert_array_equal(m.running_var.numpy(), np.ones(3))
    with pytest.raises(RuntimeError, match="[Pp]adding length"):
        KF.pad(kiln.randn(2, 3), (1, 1, 1, 1, 1, 1), mode="replicate")
    # InstanceNorm without affine warns (as torch 2.x) on a channel mismatch, and still normalizes
    with pytest.warns(UserWarning):
        kiln.nn.InstanceNorm1d(4)(kiln.randn(2, 3, 4))
