"""The namespaces scripts touch on every machine (cuda, backends, amp/autocast, distributed,
nn.parallel, onnx, nn.modules.* paths, version) behave as torch 1.13 without a GPU.

Each table row is checked against kiln and, when PyTorch is installed, against torch too, so the
expected outcomes written here are torch's. Messages differ only in naming kiln for torch."""
import importlib
import warnings
from collections import OrderedDict

import pytest

import kiln

try:
    import torch
except ImportError:
    torch = None

LIBS = ["kiln", pytest.param("torch", marks=pytest.mark.skipif(torch is None, reason="PyTorch is not installed"))]
needs_torch = pytest.mark.skipif(torch is None, reason="PyTorch is not installed")


@pytest.fixture
def lib(request):
    return kiln if request.param == "kiln" else torch


def run(fn):
    """(value or raised exception, [(category, message) of warnings]) for fn()."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            result = fn()
        except Exception as e:  # noqa: BLE001  (the exception is the outcome under test)
            result = e
    return result, [(w.category, str(w.message)) for w in caught]


NO_CUDA = "not compiled with CUDA enabled"

# (call, expected): a value, or (exception type, text in its message).
CUDA_CALLS = [
    ("is_available()", False),
    ("device_count()", 0),
    ("is_initialized()", False),
    ("manual_seed(3)", None),
    ("manual_seed('3')", None),
    ("manual_seed('x')", (ValueError, "invalid literal")),
    ("manual_seed_all(3)", None),
    ("seed()", None),
    ("seed_all()", None),
    ("initial_seed()", (AssertionError, NO_CUDA)),
    ("get_rng_state()", (AssertionError, NO_CUDA)),
    ("get_rng_state_all()", []),
    ("synchronize()", (AssertionError, NO_CUDA)),
    ("current_device()", (AssertionError, NO_CUDA)),
    ("get_device_name()", (AssertionError, NO_CUDA)),
    ("get_device_name(0)", (AssertionError, NO_CUDA)),
    ("get_device_capability()", (AssertionError, NO_CUDA)),
    ("get_device_properties(0)", (AssertionError, NO_CUDA)),
    ("is_bf16_supported()", (AssertionError, NO_CUDA)),
    ("init()", (AssertionError, NO_CUDA)),
    ("current_stream()", (AssertionError, NO_CUDA)),
    ("mem_get_info()", (AssertionError, NO_CUDA)),
    ("empty_cache()", None),
    ("memory_allocated()", 0),
    ("memory_allocated(0)", 0),
    ("max_memory_allocated()", 0),
    ("memory_reserved()", 0),
    ("max_memory_reserved()", 0),
    ("memory_stats()", OrderedDict()),
    ("reset_peak_memory_stats()", (AttributeError, "")),
    ("reset_max_memory_allocated()", (AttributeError, "")),
    ("get_arch_list()", []),
    ("set_device(-1)", None),
    ("set_device(0)", (AttributeError, "")),
    ("set_device('cpu')", (ValueError, "Expected a cuda device, but got: cpu")),
    ("set_device('cuda')", (ValueError, "with a specified index or an integer")),
    ("device(0).idx", 0),
    ("device('cuda:1').idx", 1),
    ("device('cpu')", (ValueError, "Expected a cuda device")),
    ("device(-1).__enter__()", None),
    ("device(0).__enter__()", (AssertionError, NO_CUDA)),
    ("FloatTensor([1.0])", (TypeError, "FloatTensor not available")),
    ("issubclass(OutOfMemoryError, RuntimeError)", True),
    ("default_generators", ()),
]


def check(result, expected):
    if isinstance(expected, tuple) and len(expected) == 2 and isinstance(expected[0], type):
        exc_type, text = expected
        assert type(result) is exc_type, f"expected {exc_type.__name__}, got {result!r}"
        assert text in str(result)
    else:
        assert not isinstance(result, Exception), f"raised {result!r}"
        assert result == expected and type(result) is type(expected), f"{result!r} != {expected!r}"


@pytest.mark.parametrize("lib", LIBS, indirect=True)
@pytest.mark.parametrize("call,expected", CUDA_CALLS, ids=[c for c, _ in CUDA_CALLS])
def test_cuda_call_succeeds_or_raises_as_torch_without_cuda(lib, call, expected):
    result, _ = run(lambda: eval(call, {}, vars(lib.cuda)))
    check(result, expected)


def test_cuda_is_a_real_submodule_and_no_cuda_message_names_kiln():
    assert importlib.import_module("kiln.cuda") is kiln.cuda and kiln.cuda.__name__ == "kiln.cuda"
    with pytest.raises(AssertionError, match="^kiln not compiled with CUDA enabled"):
        kiln.cuda.current_device()


@pytest.mark.parametrize("lib", LIBS, indirect=True)
def test_cuda_device_of_a_cpu_tensor_is_a_no_op(lib):
    with lib.cuda.device_of(lib.ones(1)):
        pass
    with lib.cuda.stream(None):
        pass


@pytest.mark.parametrize("lib", LIBS, indirect=True)
def test_cuda_memory_cached_is_a_deprecated_alias(lib):
    result, caught = run(lib.cuda.memory_cached)
    assert result == 0 and [c for c, _ in caught] == [FutureWarning] and "memory_reserved" in caught[0][1]


# --- backends --------------------------------------------------------------------------------

@pytest.fixture
def restore_flags():
    """Tests flip global flags of kiln and torch: put them back."""
    libs = [kiln] + ([torch] if torch is not None else [])
    saved = [(m, {k: getattr(m.backends.cudnn, k) for k in ("enabled", "benchmark", "deterministic", "allow_tf32")},
              m.get_float32_matmul_precision(), m.are_deterministic_algorithms_enabled(),
              m.is_deterministic_algorithms_warn_only_enabled(),
              m.backends.cuda.matmul.allow_fp16_reduced_precision_reduction) for m in libs]
    yield
    for m, cudnn, precision, det, warn_only, fp16 in saved:
        for k, v in cudnn.items():
            setattr(m.backends.cudnn, k, v)
        m.set_float32_matmul_precision(precision)
        m.use_deterministic_algorithms(det, warn_only=warn_only)
        m.backends.cuda.matmul.allow_fp16_reduced_precision_reduction = fp16


@pytest.mark.parametrize("lib", LIBS, indirect=True)
def test_backends_defaults(lib):
    b = lib.backends
    assert (b.cudnn.enabled, b.cudnn.benchmark, b.cudnn.deterministic, b.cudnn.allow_tf32) == (True, False, False, True)
    assert b.cudnn.is_available() is False and b.cudnn.version() is None and b.cudnn.benchmark_limit is None
    assert b.cuda.matmul.allow_tf32 is False and b.cuda.matmul.allow_fp16_reduced_precision_reduction is True
    assert b.cuda.is_built() is False
    assert b.mps.is_available() is False and b.mps.is_built() is False
    assert b.openmp.is_available() is True
    assert lib.get_float32_matmul_precision() == "highest"
    assert lib.are_deterministic_algorithms_enabled() is False
    assert lib.is_deterministic_algorithms_warn_only_enabled() is False


def test_backends_kiln_has_onednn_but_no_mkl():
    """kiln links OpenBLAS (no MKL) and oneDNN, as Debian's torch 1.13 does (torch's answers depend on its build)."""
    assert kiln.backends.mkl.is_available() is False and kiln.backends.mkldnn.is_available() is True
    assert kiln.has_mkldnn is True


def test_mkldnn_enabled_flag_round_trips_as_torch():
    import torch
    for lib in (kiln, torch):
        assert lib.backends.mkldnn.enabled is True and lib._C._get_mkldnn_enabled() is True
        with lib.backends.mkldnn.flags(enabled=False):
            assert lib.backends.mkldnn.enabled is False and lib._C._get_mkldnn_enabled() is False
        assert lib.backends.mkldnn.enabled is True
        with pytest.raises(RuntimeError, match="expects a bool"):
            lib._C._set_mkldnn_enabled(1)
        with pytest.raises(RuntimeError, match="expects a bool"):
            lib.backends.mkldnn.enabled = 1
        assert lib.backends.mkldnn.enabled is True


@pytest.mark.parametrize("lib", LIBS, indirect=True)
@pytest.mark.parametrize("flag", ["enabled", "benchmark", "deterministic", "allow_tf32"])
def test_cudnn_flags_are_settable_bools(lib, flag, restore_flags):
    cudnn = lib.backends.cudnn
    setattr(cudnn, flag, not getattr(cudnn, flag))
    assert getattr(cudnn, flag) is not {"enabled": True, "benchmark": False, "deterministic": False,
                                        "allow_tf32": True}[flag]
    with pytest.raises(RuntimeError, match="expects a bool, but got int"):
        setattr(cudnn, flag, 1)


@pytest.mark.parametrize("lib", LIBS, indirect=True)
def test_matmul_tf32_follows_float32_matmul_precision(lib, restore_flags):
    matmul = lib.backends.cuda.matmul
    lib.set_float32_matmul_precision("high")
    assert lib.get_float32_matmul_precision() == "high" and matmul.allow_tf32 is True
    lib.set_float32_matmul_precision("medium")
    assert matmul.allow_tf32 is True
    lib.set_float32_matmul_precision("highest")
    assert matmul.allow_tf32 is False
    matmul.allow_tf32 = True
    assert lib.get_float32_matmul_precision() == "high"
    matmul.allow_tf32 = False
    assert lib.get_float32_matmul_precision() == "highest"
    with pytest.raises(RuntimeError, match="expects a bool, but got int"):
        matmul.allow_tf32 = 1
    with pytest.raises(AssertionError, match="Unknown attribute foo"):
        matmul.foo
    with pytest.raises(AssertionError, match="Unknown attribute foo"):
        matmul.foo = True
    matmul.allow_fp16_reduced_precision_reduction = False
    assert matmul.allow_fp16_reduced_precision_reduction is False


@pytest.mark.parametrize("lib", LIBS, indirect=True)
def test_float32_matmul_precision_validates(lib, restore_flags):
    lib.set_float32_matmul_precision("high")
    run(lambda: lib.set_float32_matmul_precision("low"))  # torch warns through its C++ log; no effect
    run(lambda: lib.set_float32_matmul_precision("HIGH"))
    assert lib.get_float32_matmul_precision() == "high"
    with pytest.raises(RuntimeError, match="expects a str, but got int"):
        lib.set_float32_matmul_precision(3)


def test_float32_matmul_precision_warns_on_a_bad_name(restore_flags):
    with pytest.warns(UserWarning, match="low is not one of 'highest', 'high', or 'medium'"):
        kiln.set_float32_matmul_precision("low")


@pytest.mark.parametrize("lib", LIBS, indirect=True)
def test_deterministic_algorithms(lib, restore_flags):
    lib.use_deterministic_algorithms(True)
    assert lib.are_deterministic_algorithms_enabled() and not lib.is_deterministic_algorithms_warn_only_enabled()
    assert lib.get_deterministic_debug_mode() == 2
    lib.use_deterministic_algorithms(True, warn_only=True)
    assert lib.is_deterministic_algorithms_warn_only_enabled() and lib.get_deterministic_debug_mode() == 1
    lib.use_deterministic_algorithms(False)
    assert not lib.are_deterministic_algorithms_enabled() and lib.get_deterministic_debug_mode() == 0
    for bad in (1, None, "x"):
        with pytest.raises(TypeError, match="argument 'mode' .*must be bool"):
            lib.use_deterministic_algorithms(bad)
    with pytest.raises(TypeError, match="argument 'warn_only' must be bool"):
        lib.use_deterministic_algorithms(False, warn_only=1)
    with pytest.raises(TypeError, match="positional argument"):
        lib.use_deterministic_algorithms(False, True)
    lib.set_deterministic_debug_mode("warn")
    assert lib.are_deterministic_algorithms_enabled() and lib.is_deterministic_algorithms_warn_only_enabled()
    with pytest.raises(RuntimeError, match="expected 0, 1, or 2, but got 5"):
        lib.set_deterministic_debug_mode(5)


# --- autocast and GradScaler -----------------------------------------------------------------

@pytest.mark.parametrize("lib", LIBS, indirect=True)
def test_autocast_cuda_without_cuda_warns_and_is_a_no_op(lib):
    for make in (lambda: lib.autocast("cuda"), lambda: lib.cuda.amp.autocast(), lambda: lib.amp.autocast("cuda")):
        ctx, caught = run(make)
        assert [c for c, _ in caught] == [UserWarning] and "CUDA is not available. Disabling" in caught[0][1]
        with ctx:
            assert lib.is_autocast_enabled() is False
    ctx, caught = run(lambda: lib.autocast("cuda", enabled=False))
    assert caught == []
    with ctx:
        assert lib.is_autocast_enabled() is False


@pytest.mark.parametrize("lib", LIBS, indirect=True)
def test_autocast_disabled_is_a_decorator_and_context_manager(lib):
    @lib.autocast("cpu", enabled=False)
    def f(x, y=1):
        return x + y
    assert f(1, y=2) == 3 and f.__name__ == "f"
    with lib.cpu.amp.autocast(enabled=False), lib.cuda.amp.autocast(enabled=False):
        assert lib.is_autocast_enabled() is False
    with pytest.raises(RuntimeError, match="device_type must be 'cuda' or 'cpu'"):
        lib.autocast("xla")


@pytest.mark.parametrize("lib", LIBS, indirect=True)
def test_autocast_cpu_float16_warns_and_disables(lib):
    ctx, caught = run(lambda: lib.autocast("cpu", dtype=lib.float16))
    assert [c for c, _ in caught] == [UserWarning] and "target dtype is not supported" in caught[0][1]
    if lib is kiln:  # torch 1.13 then raises on entry (set_autocast_cpu_dtype); torch 2.x and kiln do not
        with ctx:
            assert not kiln.is_autocast_cpu_enabled()


class RecordingOptimizer:
    def __init__(self):
        self.calls = []

    def step(self, closure=None):
        self.calls.append(closure)
        return "stepped"


@pytest.mark.parametrize("lib", LIBS, indirect=True)
def test_cuda_grad_scaler_without_cuda_warns_and_passes_through(lib):
    scaler, caught = run(lambda: lib.cuda.amp.GradScaler(init_scale=1024.0))
    assert caught == [(UserWarning, caught[0][1])] and caught[0][1].endswith(
        "GradScaler is enabled, but CUDA is not available.  Disabling.")
    x = lib.ones(2, requires_grad=True)
    assert scaler.is_enabled() is False and scaler.scale(x) is x and scaler.scale([x])[0] is x
    opt = RecordingOptimizer()
    assert scaler.unscale_(opt) is None and opt.calls == []
    assert scaler.step(opt) == "stepped" and scaler.step(opt, closure=len) == "stepped" and opt.calls == [None, len]
    assert scaler.update() is None and scaler.update(4.0) is None
    assert scaler.get_scale() == 1.0 and scaler.state_dict() == {}
    assert scaler.load_state_dict({"scale": 2.0}) is None and scaler.get_scale() == 1.0
    assert run(lambda: lib.cuda.amp.GradScaler(enabled=False))[1] == []
    with pytest.raises(TypeError):
        lib.cuda.amp.GradScaler(foo=1)


def test_grad_scaler_step_trains_like_plain_sgd():
    w = kiln.nn.Parameter(kiln.tensor([1.0, 2.0]))
    opt = kiln.optim.SGD([w], lr=0.5)
    scaler = kiln.amp.GradScaler("cpu")
    scaler.scale((w * w).sum()).backward()
    scaler.unscale_(opt)
    scaler.step(opt)
    scaler.update()
    assert w.tolist() == [0.0, 0.0]  # w - 0.5 * 2w


def test_amp_grad_scaler_device_cpu_is_a_silent_pass_through():
    scaler, caught = run(lambda: kiln.amp.GradScaler("cpu", init_scale=8.0, growth_interval=10))
    assert caught == [] and scaler.is_enabled() is False and scaler.get_scale() == 1.0
    assert scaler.get_growth_interval() == 10 and scaler.get_growth_factor() == 2.0
    scaler.set_backoff_factor(0.25)
    assert scaler.get_backoff_factor() == 0.25
    _, caught = run(kiln.amp.GradScaler)  # device="cuda", as in torch 2.x
    assert [c for c, _ in caught] == [UserWarning]


# --- distributed and nn.parallel -------------------------------------------------------------

NOT_INITIALIZED = "Default process group has not been initialized, please make sure to call init_process_group."


@pytest.mark.parametrize("lib", LIBS, indirect=True)
def test_distributed_before_init_process_group(lib):
    dist = importlib.import_module(f"{lib.__name__}.distributed")
    assert dist.is_initialized() is False
    for call in (dist.get_rank, dist.get_world_size, dist.barrier, dist.get_backend,
                 lambda: dist.all_reduce(lib.ones(1)), lambda: dist.broadcast(lib.ones(1), 0)):
        with pytest.raises(RuntimeError) as info:
            call()
        assert str(info.value) == NOT_INITIALIZED
    with pytest.raises(AssertionError):
        dist.destroy_process_group()
    with pytest.raises(ValueError, match="Invalid backend: 'foo'"):
        dist.init_process_group("foo")
    assert dist.Backend("GLOO") == "gloo" and dist.Backend.NCCL == "nccl"
    for name, value in [("SUM", 0), ("AVG", 1), ("PRODUCT", 2), ("MIN", 3), ("MAX", 4), ("BAND", 5),
                        ("BOR", 6), ("BXOR", 7), ("PREMUL_SUM", 8)]:
        assert int(getattr(dist.ReduceOp.RedOpType, name)) == value
        assert getattr(dist.ReduceOp, name) == getattr(dist.ReduceOp.RedOpType, name)


def test_kiln_distributed_has_no_backend():
    import kiln.distributed as dist
    assert dist.is_available() is False and not dist.is_gloo_available() and not dist.is_nccl_available()
    for backend in ("gloo", "nccl", "mpi", None):
        with pytest.raises(RuntimeError, match=r"kiln has no distributed backend \(gloo/nccl/mpi\) yet"):
            dist.init_process_group(backend)
    assert dist.is_initialized() is False


@pytest.mark.parametrize("lib", LIBS, indirect=True)
def test_data_parallel_without_gpus_wraps_and_forwards(lib):
    lib.manual_seed(0)
    m = lib.nn.Linear(2, 3)
    for dp in (lib.nn.DataParallel(m), lib.nn.parallel.DataParallel(m, device_ids=[0], dim=1)):
        assert dp.module is m and dp.device_ids == [] and not hasattr(dp, "output_device")
        x = lib.ones(4, 2)
        assert lib.equal(dp(x), m(x))
        assert list(dp.state_dict()) == ["module.weight", "module.bias"] and len(list(dp.parameters())) == 2
    assert lib.nn.DataParallel is lib.nn.parallel.DataParallel
    assert lib.nn.DataParallel.__module__ == f"{lib.__name__}.nn.parallel.data_parallel"
    assert lib.nn.parallel.DistributedDataParallel.__module__ == f"{lib.__name__}.nn.parallel.distributed"


@pytest.mark.parametrize("lib", LIBS, indirect=True)
def test_ddp_needs_a_process_group(lib):
    with pytest.raises(RuntimeError, match="^Default process group has not been initialized"):
        lib.nn.parallel.DistributedDataParallel(lib.nn.Linear(2, 2))
    frozen = lib.nn.Linear(2, 2).requires_grad_(False)
    with pytest.raises(RuntimeError, match="doesn't have any parameter that requires a gradient"):
        lib.nn.parallel.DistributedDataParallel(frozen)
    with pytest.raises(ValueError, match="device_ids can only be None or contain a single element"):
        lib.nn.parallel.DistributedDataParallel(lib.nn.Linear(2, 2), device_ids=[0, 1])


# --- nn.modules paths, onnx, cpu, version ----------------------------------------------------

def test_every_nn_class_resolves_at_its_module_path():
    for name in kiln.nn.modules.__all__:
        cls = getattr(kiln.nn, name)
        assert cls.__module__.startswith("kiln.nn.modules.")
        assert getattr(importlib.import_module(cls.__module__), name) is cls
    from kiln.nn.modules.batchnorm import BatchNorm2d
    from kiln.nn.modules.dropout import Dropout
    from kiln.nn.modules.flatten import Flatten
    from kiln.nn.modules.linear import Linear
    from kiln.nn.modules.sparse import Embedding
    assert (Linear, Dropout, Embedding, BatchNorm2d, Flatten) == (
        kiln.nn.Linear, kiln.nn.Dropout, kiln.nn.Embedding, kiln.nn.BatchNorm2d, kiln.nn.Flatten)


# Modules torch 1.13 lacks (added in 2.x), with the module torch 2.x defines them in.
TORCH2_CLASS_MODULES = {"RMSNorm": "kiln.nn.modules.normalization",
                        **{name: "kiln.nn.modules.padding" for name in ("ZeroPad1d", "ZeroPad3d", "CircularPad1d",
                                                                        "CircularPad2d", "CircularPad3d")}}


@needs_torch
def test_nn_class_paths_match_torch():
    for name in kiln.nn.modules.__all__ + ["Parameter"]:
        if not hasattr(torch.nn, name):
            assert getattr(kiln.nn, name).__module__ == TORCH2_CLASS_MODULES[name], name
            continue
        expected = getattr(torch.nn, name).__module__.replace("torch", "kiln", 1)
        assert getattr(kiln.nn, name).__module__ == expected, name


@needs_torch
@pytest.mark.parametrize("path", ["autocast", "amp.autocast", "cuda.amp.autocast", "cuda.amp.GradScaler",
                                  "cpu.amp.autocast", "nn.parallel.DataParallel",
                                  "nn.parallel.DistributedDataParallel"])
def test_class_paths_match_torch(path):
    def resolve(root):
        obj = root
        for part in path.split("."):
            obj = getattr(obj, part)
        return obj
    kiln_cls, torch_cls = resolve(kiln), resolve(torch)
    assert (kiln_cls.__module__, kiln_cls.__qualname__) == (
        torch_cls.__module__.replace("torch", "kiln", 1), torch_cls.__qualname__)
    assert getattr(importlib.import_module(kiln_cls.__module__), kiln_cls.__name__) is kiln_cls


def test_onnx_export_is_not_implemented():
    import kiln.onnx
    with pytest.raises(NotImplementedError, match="ONNX export lands with the compiler"):
        kiln.onnx.export(kiln.nn.Linear(1, 1), kiln.ones(1, 1), "model.onnx")


def test_cpu_namespace():
    assert kiln.cpu.is_available() is True and kiln.cpu.device_count() == 1 and kiln.cpu.synchronize() is None


def test_version_compares_as_a_version():
    v = kiln.__version__
    assert isinstance(v, str) and v == "1.13.1+kiln" and kiln.version.__version__ is v
    assert v >= "1.13" and v >= "1.9" and v > "1.13.0a0" and v < "2.0" and v >= (1, 13) and not v >= (2, 0)
    assert v.split("+")[0] == "1.13.1"
    assert kiln.version.cuda is None and kiln.version.hip is None and kiln.version.debug is False
