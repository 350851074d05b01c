"""kiln: a small, readable libtorch-like tensor library.

The operators (kiln.add, Tensor.add, ...) are generated from schema/*.yaml into
kiln._C; this package adds the Python-level pieces: the Tensor class, dtypes and
devices, kiln.tensor, grad-mode helpers, kiln.autograd, the default generator's
functions (kiln.random: manual_seed, seed, get_rng_state, ...) and saving weights
(kiln.save / load in torch's checkpoint format, kiln.save_file / load_file in safetensors), and
the namespaces scripts touch on every machine (kiln.cuda, backends, amp, distributed, ...) as
torch has them without a GPU.
"""
import builtins

import os as _os

from . import _C
from ._C import *  # noqa: F401,F403  (operators and dtypes)
from ._C import _nan_to_num  # noqa: F401  (nan_to_num's formula: the formula tests look it up here)
from ._C import _addmm_into, _blas_dot, _blas_mv, _fma, _norm2  # noqa: F401  (torch-rounded addmm, BLAS dot and gemv, fused multiply-add, 2-norm; op tests look them up here)
from ._C import _log_softmax_backward_data, _softmax_backward_data  # noqa: F401  (torch's names)
from ._C import _dirichlet_grad, _standard_gamma, _standard_gamma_grad  # noqa: F401  (torch.distributions' samplers)
from ._C import (bfloat16, bool, double, dtype, float, float16, float32, float64, half, int, int8,  # noqa: A004
                 int16, int32, int64, long, short, uint8, get_default_dtype, get_num_threads, is_grad_enabled, set_default_dtype, set_num_threads)
from .random import (Generator, default_generator, get_rng_state, initial_seed, manual_seed, seed,  # noqa: F401
                     set_rng_state)
from ._device import device, get_default_device, set_default_device
from ._size import Size
from ._dtype_info import finfo, iinfo, promote_types, result_type
from ._tensor import Tensor
from . import _tensor as _tensor_mod
from ._tensor_str import set_printoptions
from ._einsum import einsum
from ._broadcast import broadcast_shapes, broadcast_tensors
from ._linalg_norm import norm
from ._functional import cdist, unique, unique_consecutive
from ._functional_more import meshgrid, tensordot
from ._lu_legacy import lu, lu_unpack
from ._composed_ops import (addmv, addr, argwhere, atleast_1d, atleast_2d, atleast_3d, block_diag,  # noqa: F401
                            cartesian_prod, diagflat, dist, dsplit, hsplit, inner, kthvalue, msort, nanquantile,
                            quantile, take_along_dim, tensor_split, trapezoid, trapz, vsplit)
from ._composed_ops_more import (combinations, corrcoef, cov, float_power, histogram, index_reduce, mode,  # noqa: F401
                                 renorm, scatter, vander)
from ._functional_extra import (aminmax, compile, diff, gradient, randint_like, round, split, std_mean, tril_indices,  # noqa: A004
                                triu_indices, var_mean)
from ._creation import from_numpy  # noqa: F401  (an empty array's own strides, as torch)
from ._creation import (BoolTensor, ByteTensor, CharTensor, DoubleTensor, FloatTensor, IntTensor,  # noqa: F401
                        LongTensor, ShortTensor, HalfTensor, BFloat16Tensor,
                        as_tensor, set_default_tensor_type, tensor)
from ._memory_format import (channels_last, channels_last_3d, contiguous_format, empty, empty_like,  # noqa: E402,F811
                             full_like, memory_format, ones_like, preserve_format, rand_like, randn_like, zeros_like)
from .autograd.grad_mode import enable_grad, inference_mode, no_grad, set_grad_enabled
from . import autograd
from .autograd.anomaly_mode import (is_anomaly_check_nan_enabled, is_anomaly_enabled,  # noqa: E402
                                     set_anomaly_enabled)

_C._register_classes(tensor=Tensor, size=Size, device=device)

from . import nn, optim, utils  # noqa: E402  (they use the registered classes)
from .serialization import load, load_file, save, save_file  # noqa: E402
# The namespaces scripts touch on every machine (torch.cuda, torch.backends, ...), answered as torch
# without a GPU answers them.
from . import amp, backends, compiler, cpu, cuda, distributed, hub, linalg, onnx, special, version  # noqa: E402
if not hasattr(_C, "_get_tracing_state"):  # torch._C._get_tracing_state, which model code checks
    from .jit import _get_tracing_state as _jit_tracing_state
    _C._get_tracing_state = _jit_tracing_state
# torch's build flags (torch.has_cuda, ...), answered from the backends kiln was built with; no fft (spectral) ops
# (plain `bool` is kiln.bool, the dtype, in this module)
has_cuda = backends.cuda.is_built() is True
has_cudnn = backends.cudnn.is_available() is True
has_mps = backends.mps.is_available() is True
has_mkl = backends.mkl.is_available() is True
has_mkldnn = backends.mkldnn.is_available() is True
has_openmp = backends.openmp.is_available() is True
has_lapack = True
has_spectral = False
from . import __config__  # noqa: E402  (torch.__config__.show() / parallel_info())
from . import distributions  # noqa: E402
# Sparse COO tensors (a Python type: kiln/sparse/_coo.py); mm and matmul take a sparse first operand.
from . import sparse  # noqa: E402
from . import func  # noqa: E402  (torch.func.functional_call)
from . import profiler  # noqa: E402
from . import multiprocessing  # noqa: E402  (torch imports it too)
from .storage import TypedStorage, UntypedStorage  # noqa: E402
from ._layout import layout, sparse_coo, strided  # noqa: E402
from .sparse import sparse_coo_tensor  # noqa: E402
from .version import __version__  # noqa: E402,F401
from .amp.autocast_mode import (autocast, get_autocast_cpu_dtype, get_autocast_gpu_dtype,  # noqa: E402
                                is_autocast_cache_enabled, is_autocast_cpu_enabled, is_autocast_enabled,
                                set_autocast_cpu_dtype, set_autocast_cpu_enabled)
from ._global_flags import (are_deterministic_algorithms_enabled, get_deterministic_debug_mode,  # noqa: E402
                            get_float32_matmul_precision, is_deterministic_algorithms_warn_only_enabled,
                            set_deterministic_debug_mode, set_float32_matmul_precision,
                            use_deterministic_algorithms)


def allclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    """Whether all elements are close (a Python bool, as torch.allclose)."""
    return builtins.bool(isclose(input, other, rtol, atol, equal_nan).all())  # kiln.bool is a dtype here


concat = cat  # noqa: F405  (torch.concat is an alias of torch.cat)
clip = clamp  # noqa: F405  (torch.clip is an alias of torch.clamp: bounds may be tensors)


def normal(mean, std=1.0, size=None, *, generator=None, out=None, **kwargs):
    """normal(mean, std, size) with numbers, or with a tensor mean and/or std: one sample per element
    of their broadcast shape (the tensor's dtype)."""
    if not isinstance(mean, Tensor) and not isinstance(std, Tensor):
        if out is not None:  # the size form into out: drawn in out's dtype, out resized
            kwargs.setdefault("dtype", out.dtype)
            return _copy_into_out(_C.normal(mean, std, size, generator=generator, **kwargs), out)
        return _C.normal(mean, std, size, generator=generator, **kwargs)
    ref = mean if isinstance(mean, Tensor) else std
    if not ref.is_floating_point():
        raise RuntimeError(f"normal expects floating point tensors, got {ref.dtype}")
    if isinstance(std, Tensor):
        shape = broadcast_shapes(mean.shape, std.shape) if isinstance(mean, Tensor) else std.shape
        if std.numel() and not builtins.bool(std.min() >= 0):  # as torch's check (a NaN fails it too)
            raise RuntimeError("normal expects all elements of std >= 0.0")
    else:
        if std < 0:
            raise RuntimeError(f"normal expects std >= 0.0, but found std {std}")
        shape = mean.shape
    noise = _C.randn(list(shape), generator=generator, dtype=ref.dtype)
    result = mean + std * noise
    if out is not None:
        return _copy_into_out(result, out)
    return result


def _copy_into_out(result, out):
    """out= of a function kiln computes first: out is resized to the result (torch's resize_output)
    and takes its values."""
    if not isinstance(out, Tensor):
        raise TypeError(f"argument 'out' must be Tensor, not {type(out).__name__}")
    if tuple(out.shape) != tuple(result.shape):
        out.resize_(list(result.shape))
    with no_grad():
        out.copy_(result)
    return out


def _factory_with_out(fn, takes_dtype=True):
    """torch's factories and random functions take out=: the result is made in out's dtype (unless
    dtype= says otherwise) and copied into out, resized."""
    def wrapper(*args, out=None, **kwargs):
        if out is None:
            return fn(*args, **kwargs)
        if not isinstance(out, Tensor):
            raise TypeError(f"{fn.__name__}(): argument 'out' must be Tensor, not {type(out).__name__}")
        if takes_dtype and kwargs.get("dtype") is None:
            kwargs["dtype"] = out.dtype
        elif takes_dtype and kwargs["dtype"] != out.dtype:  # torch's python binding checks the two agree
            from .nn.utils._orthogonal_maps import _cname
            raise RuntimeError(f"dtype {_cname(kwargs['dtype'])} does not match dtype of out parameter "
                               f"({_cname(out.dtype)})")
        return _copy_into_out(fn(*args, **kwargs), out)
    wrapper.__name__ = wrapper.__qualname__ = fn.__name__
    wrapper.__doc__ = fn.__doc__
    wrapper.__wrapped__ = fn
    return wrapper


zeros, ones, eye, full, rand, randn, randint, randperm = (  # noqa: F811
    _factory_with_out(f) for f in (zeros, ones, eye, full, rand, randn, randint, randperm))  # noqa: F405
bernoulli, multinomial = (_factory_with_out(f, takes_dtype=False)  # noqa: F811
                          for f in (bernoulli, multinomial))  # noqa: F405
# arange(end, out=), linspace(out=), empty(out=): torch's forms kiln's bindings lack
arange, linspace, empty = (_factory_with_out(f) for f in (arange, linspace, empty))  # noqa: F811,F405


def nonzero(input, *, as_tuple=False):
    """Indices of the non-zero elements: an (n, ndim) tensor, or one 1-D tensor per dim with as_tuple=True."""
    return input.nonzero(as_tuple=as_tuple)


def _where_scalar_fits(scalar, t):
    """torch converts a number beside a tensor to their result dtype, with its overflow check
    (RuntimeError: 70000 into float16, 1e300 into float32); _C.full makes the same conversion."""
    if not isinstance(scalar, (builtins.int, builtins.float)) or isinstance(scalar, builtins.bool):
        return
    if isinstance(t, Tensor):
        _C.full([], scalar, dtype=result_type(t, scalar))
    elif isinstance(t, (builtins.int, builtins.float)):  # two numbers: where(c, 1e300, True) is float32
        floating = isinstance(scalar, builtins.float) or isinstance(t, builtins.float)
        _C.full([], scalar, dtype=get_default_dtype() if floating else int64)


def where(condition, input=None, other=None, *, out=None):
    """where(c, x, y) picks from x where c holds, else from y; where(c) is nonzero(c, as_tuple=True)."""
    if input is None and other is None:
        return nonzero(condition, as_tuple=True)
    _where_scalar_fits(input, other)
    _where_scalar_fits(other, input)
    if out is not None:
        return _C.where(condition, input, other, out=out)
    return _C.where(condition, input, other)


def embedding(weight, indices, padding_idx=-1, scale_grad_by_freq=False, sparse=False):
    """torch.embedding: rows of weight at indices (nn.functional.embedding with torch's argument
    order; padding_idx -1 means none)."""
    return nn.functional.embedding(indices, weight, None if padding_idx == -1 else padding_idx,
                                   scale_grad_by_freq=scale_grad_by_freq, sparse=sparse)


def equal(input, other):
    """True when both have the same shape and values."""
    return input.equal(other)


def ravel(input):
    return input.ravel()


def numel(input):
    return input.numel()


def is_floating_point(input):
    return input.is_floating_point()


def is_tensor(obj):
    return isinstance(obj, (Tensor, sparse.SparseCooTensor))


def _assert(condition, message):
    """torch._assert: Python's assert as a function (torchvision's models call it)."""
    assert condition, message


def mm(input, mat2, *, out=None):
    """Matrix product; input may be a sparse COO matrix (kiln.sparse.mm)."""
    if out is None:
        return sparse.mm(input, mat2)
    return _C.mm(input, mat2, out=out)


# add/sub with alpha and addcmul round as torch's CPU kernels do (one fused multiply-add on AVX2 +
# FMA CPUs) when no gradient is recorded: the functions as the Tensor methods (kiln/_tensor.py).
# Any other call form goes to the binding as it is (its overloads and errors).
def _fused_call(name, fused_of, args, kwargs, keys, scalar, plain_without_keywords=False):
    if plain_without_keywords and (not kwargs or (len(kwargs) == 1 and "out" in kwargs)):
        # add/sub without alpha: the binding itself, no fusing
        return getattr(_C, name)(*args, **kwargs)
    fused = None
    if len(args) == len(keys) and isinstance(args[0], Tensor) and set(kwargs) <= {scalar, "out"}:
        fused = fused_of(*args, **{k: v for k, v in kwargs.items() if k != "out"})
    if fused is None:
        return getattr(_C, name)(*args, **kwargs)
    out = kwargs.get("out")
    if out is None:
        return fused
    return getattr(_C, name)(*args, **kwargs).copy_(fused)  # out='s checks and resizing, then the fused values


def add(*args, **kwargs):
    return _fused_call("add", lambda input, other, alpha=1: _tensor_mod._fused_alpha(input, (other,), {"alpha": alpha}, 1),
                       args, kwargs, ("input", "other"), "alpha", plain_without_keywords=True)


def sub(*args, **kwargs):
    return _fused_call("sub", lambda input, other, alpha=1: _tensor_mod._fused_alpha(input, (other,), {"alpha": alpha}, -1),
                       args, kwargs, ("input", "other"), "alpha", plain_without_keywords=True)


def addcmul(*args, **kwargs):
    return _fused_call("addcmul", lambda input, t1, t2, value=1: _tensor_mod._fused_addcmul(input, t1, t2, value),
                       args, kwargs, ("input", "tensor1", "tensor2"), "value")


def spmm(input, mat2):
    """torch.spmm (pygcn's GraphConvolution): sparse COO x dense as kiln.sparse.mm, dense x dense as mm."""
    return sparse.mm(input, mat2)


def matmul(input, other, *, out=None):
    """Matrix product with broadcasting; input may be a sparse COO matrix (kiln.sparse.matmul)."""
    if out is None:
        return sparse.matmul(input, other)
    return _C.matmul(input, other, out=out)


def threshold_(input, threshold, value):
    return input.threshold_(threshold, value)


def rrelu(input, lower=1.0 / 8, upper=1.0 / 3, training=False, generator=None):
    """torch.rrelu: nn.functional.rrelu with a generator= for the training slopes."""
    return nn.functional._rrelu(input, lower, upper, training, False, generator)


def rrelu_(input, lower=1.0 / 8, upper=1.0 / 3, training=False, generator=None):
    return nn.functional._rrelu(input, lower, upper, training, True, generator)


import math as _math  # noqa: E402

inf, nan, pi, e = _math.inf, _math.nan, _math.pi, _math.e


def square(input):
    return input.square()


def count_nonzero(input, dim=None):
    return input.count_nonzero(dim)


# torch's names of the ops these aliases stand for: their out= forms go there
_ALIAS_OF = {"negative": "neg", "absolute": "abs", "greater": "gt", "greater_equal": "ge", "less": "lt",
             "less_equal": "le", "not_equal": "ne", "arcsin": "asin", "arccos": "acos", "arctan": "atan",
             "arcsinh": "asinh", "arccosh": "acosh", "arctanh": "atanh"}


def _alias(method):
    def fn(input, *args, out=None, **kwargs):
        if out is not None and method in _ALIAS_OF:
            return globals()[_ALIAS_OF[method]](input, *args, out=out, **kwargs)
        if out is not None:
            raise TypeError(f"{method}() got an unexpected keyword argument 'out'")
        return getattr(Tensor, method)(input, *args, **kwargs)
    fn.__name__ = fn.__qualname__ = method
    fn.__doc__ = f"torch.{method}: see Tensor.{method}."
    return fn


negative, absolute = (_alias(n) for n in ("negative", "absolute"))


# torch's aliases of mul/sub/div are in its arg parser's allowlist: a Python number may stand for
# either operand (torch.multiply(2, t), torch.true_divide(1.5, t)), so they call the functions.
def _out_kw(out):
    return {} if out is None else {"out": out}


def multiply(input, other, *, out=None):
    return mul(input, other, **_out_kw(out))


def subtract(input, other, *, alpha=1, out=None):
    return sub(input, other, alpha=alpha, **_out_kw(out))


def divide(input, other, *, rounding_mode=None, out=None):
    return div(input, other, rounding_mode=rounding_mode, **_out_kw(out))


def true_divide(input, other, *, out=None):
    return div(input, other, **_out_kw(out))


def rsub(input, other, *, alpha=1):
    """other - alpha * input (torch.rsub); input must be a Tensor."""
    if not isinstance(input, Tensor):
        raise TypeError(f"rsub(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}")
    return sub(other, input, alpha=alpha)
greater, greater_equal, less, less_equal, not_equal = (
    _alias(n) for n in ("greater", "greater_equal", "less", "less_equal", "not_equal"))
arcsin, arccos, arctan, arcsinh, arccosh, arctanh = (
    _alias(n) for n in ("arcsin", "arccos", "arctan", "arcsinh", "arccosh", "arctanh"))
swapaxes, swapdims, is_same_size, is_signed = (_alias(n) for n in ("swapaxes", "swapdims", "is_same_size",
                                                                    "is_signed"))


def explain(enabled=True):
    """Prints every step of each call (binding, dispatch key, autograd node, kernel) to stderr."""
    _C._explain(enabled)


__all__ = [
    "Tensor", "TypedStorage", "UntypedStorage", "Size", "device", "get_default_device", "set_default_device", "dtype", "tensor", "from_numpy", "autograd", "no_grad", "enable_grad",
    "set_grad_enabled", "inference_mode", "is_grad_enabled", "allclose", "is_tensor", "cuda", "nn", "optim", "utils", "bool", "uint8", "int8", "int16", "short", "int32", "int64", "float32", "float64", "float", "double",
    "float16", "half", "bfloat16", "finfo", "iinfo", "promote_types", "result_type", "long", "int", "Generator", "default_generator", "manual_seed", "seed", "initial_seed", "get_rng_state",
    "set_rng_state", "get_default_dtype", "set_default_dtype", "set_default_tensor_type", "set_num_threads", "get_num_threads", "explain",
    "set_printoptions", "save", "load", "save_file", "load_file",
    "amp", "backends", "cpu", "distributed", "onnx", "version", "autocast", "is_autocast_enabled",
    "set_float32_matmul_precision", "get_float32_matmul_precision", "use_deterministic_algorithms",
    "are_deterministic_algorithms_enabled", "is_deterministic_algorithms_warn_only_enabled",
    "get_deterministic_debug_mode", "set_deterministic_debug_mode", "is_autocast_cpu_enabled",
    "get_autocast_gpu_dtype", "get_autocast_cpu_dtype", "is_autocast_cache_enabled",
    "set_autocast_cpu_enabled", "set_autocast_cpu_dtype",
    "concat", "clip", "normal", "meshgrid", "tensordot", "lu", "linalg", "einsum", "broadcast_shapes", "broadcast_tensors", "embedding", "norm", "cdist", "unique", "unique_consecutive", "nonzero", "where", "equal", "ravel", "numel", "is_floating_point", "as_tensor", "threshold_", "rrelu", "rrelu_", "FloatTensor", "DoubleTensor", "LongTensor", "IntTensor", "ShortTensor", "CharTensor", "ByteTensor", "BoolTensor", "HalfTensor", "BFloat16Tensor",
    "inf", "nan", "pi", "e", "square", "count_nonzero", "multiply", "subtract", "divide", "true_divide", "rsub", "negative",
    "absolute", "greater", "greater_equal", "less", "less_equal", "not_equal", "swapaxes", "swapdims",
    "is_same_size", "is_signed", "special", "sparse", "sparse_coo_tensor", "layout", "strided", "sparse_coo",
    "mm", "spmm", "matmul", "diff", "gradient", "aminmax", "var_mean", "std_mean", "randint_like", "tril_indices", "triu_indices",
    "compile", "is_anomaly_enabled", "arcsin", "arccos", "arctan", "arcsinh", "arccosh", "arctanh",
]


# A process forked after kiln's OpenMP kernels ran hangs in its first parallel region (libgomp's
# thread pool does not survive fork; torch's children hang the same way): forked children (hogwild
# training under the fork start method, DataLoader workers) run single-threaded instead.
_os.register_at_fork(after_in_child=lambda: _C.set_num_threads(1))


# out= for the functions returning named tuples (and argmax/argmin), which the bindings take without it.
from .linalg._out import with_out as _with_out  # noqa: E402
for _name in ("sort", "topk", "max", "min", "argmax", "argmin", "kthvalue", "mode", "median", "nanmedian",
              "cummax", "cummin", "aminmax", "var_mean", "std_mean", "histogram"):
    globals()[_name] = _with_out(globals()[_name], _name, n_outputs=None)
from ._composed_ops import logspace, triangular_solve  # noqa: E402,F401
from ._lowrank import pca_lowrank, svd_lowrank  # noqa: E402,F401  (randomized low-rank SVD / PCA)


def relu_(input):
    return input.relu_()


def sigmoid_(input):
    return input.sigmoid_()


def tanh_(input):
    return input.tanh_()


# torch-level names programs use that kiln had under other names or not at all (_api_breadth.py).
import sys as _sys  # noqa: E402
from . import _special_numpy  # noqa: E402  (lgamma, digamma, polygamma, mvlgamma, i0)
_special_numpy.install(globals(), Tensor)
from .special import _scaled as _special_scaled  # noqa: E402  (igamma, igammac and their methods)
_special_scaled.install(globals(), Tensor)
from . import _api_breadth  # noqa: E402
_api_breadth.install(globals(), _sys.modules[__name__])
from . import _stft  # noqa: E402  (stft / istft in their real, return_complex=False form)
_stft.install(globals(), Tensor)
from . import _deprecated_linalg  # noqa: E402  (symeig; solve, lstsq, eig, matrix_rank raise as torch's)
_deprecated_linalg.install(globals(), Tensor)


def _sample_dirichlet(self, generator=None):
    """torch._sample_dirichlet: Gamma(alpha) draws in float64 (one per element, in order, as
    _standard_gamma of the float64 alphas), normalized over the last dim, then rounded to the
    dtype and kept inside (0, 1) as torch's CPU kernel keeps them."""
    if not self.is_floating_point():
        raise RuntimeError(f"\"dirichlet\" not implemented for '{str(self.dtype).split('.')[-1].capitalize()}'")
    with no_grad():
        g = _standard_gamma(self.detach().to(float64), generator=generator)
        r = (g / g.sum(-1, keepdim=True)).to(self.dtype)
        info = finfo(self.dtype)
        return r.clamp(min=info.tiny, max=1.0 - info.eps / 2)

from . import func, jit, testing  # noqa: E402  (torch.func transforms, eager torch.jit, torch.testing)
vmap = func.vmap  # torch.vmap (torch 2.x), a loop here: see kiln.func

# out= (out=None too) for the functions kiln composes in Python without one (_out_forms.py).
from . import _out_forms  # noqa: E402
_out_forms.install(globals())


def clone(input, *, memory_format=preserve_format):  # noqa: F811  (torch.clone takes memory_format=)
    return Tensor.clone(input, memory_format=memory_format)

# Python-level functions raise torch's TypeError for an argument of the wrong type (_arg_errors.py).
from ._arg_errors import type_methods as _type_methods, type_namespace as _type_namespace  # noqa: E402
_type_namespace(globals(), list(globals()))
_type_methods(Tensor)  # again: methods other modules attached after _tensor.py

# torch.functional (torch/__init__ imports it too): its ops and its F, for `from torch.functional import F`
from . import functional  # noqa: E402,F401

# torch's deprecated scalar-first overloads (add_(alpha, other), addcmul_(value, t1, t2), addmm_(beta, alpha, m1, m2)):
# outermost, so they see the TypeError of every layer above
from . import _deprecated_overloads  # noqa: E402
_deprecated_overloads.install(globals(), Tensor)

# The __torch_function__ protocol (_torch_function.py): last, so the wrappers are the outermost layer
# of the public functions (torch.functional's and F's names of the same functions get the same wrapper).
from . import overrides  # noqa: E402
overrides._wrap_public_functions()
