"""Every generated pointwise functor (generated/pointwise/<op>.h) compiles under NVRTC, as the CUDA
JIT will compile it: no standard headers, only runtime/kernels/pointwise_math.h, for float and
double. No GPU is needed: NVRTC compiles to PTX on the host. Skipped, with the reason, where the
CUDA toolkit's libnvrtc is absent."""
import ctypes
import os

import pytest

import kiln
from op_db.schema_facts import _load as load_schema

REPO = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
NVRTC_PATHS = ["/usr/local/cuda/lib64/libnvrtc.so.13", "/usr/local/cuda/lib64/libnvrtc.so", "libnvrtc.so"]


def load_nvrtc():
    for path in NVRTC_PATHS:
        try:
            return ctypes.CDLL(path)
        except OSError:
            continue
    return None


NVRTC = load_nvrtc()


def read(rel):
    with open(os.path.join(REPO, rel)) as f:
        return f.read()


def compile_ptx(source, headers):
    """(ok, log, ptx) for `source` with in-memory `headers` {include name: text}."""
    prog = ctypes.c_void_p()
    names = list(headers)
    texts = (ctypes.c_char_p * len(names))(*[headers[n].encode() for n in names])
    incl = (ctypes.c_char_p * len(names))(*[n.encode() for n in names])
    assert NVRTC.nvrtcCreateProgram(ctypes.byref(prog), source.encode(), b"formula.cu", len(names), texts, incl) == 0
    opts = (ctypes.c_char_p * 2)(b"--gpu-architecture=compute_80", b"--std=c++17")
    status = NVRTC.nvrtcCompileProgram(prog, 2, opts)
    size = ctypes.c_size_t()
    NVRTC.nvrtcGetProgramLogSize(prog, ctypes.byref(size))
    log = ctypes.create_string_buffer(size.value)
    NVRTC.nvrtcGetProgramLog(prog, log)
    ptx = b""
    if status == 0:
        NVRTC.nvrtcGetPTXSize(prog, ctypes.byref(size))
        buf = ctypes.create_string_buffer(size.value)
        NVRTC.nvrtcGetPTX(prog, buf)
        ptx = buf.value
    NVRTC.nvrtcDestroyProgram(ctypes.byref(prog))
    return status == 0, log.value.decode(errors="replace"), ptx


# By functor name (generated/pointwise/<name>.h): the op's, or its overload's where it has several.
FORMULAS = {functor: (tensors, scalars, dtypes)
            for _, _, _, tensors, scalars, dtypes, functor in kiln._C._pointwise_formulas()}
# Cast formulas' functors take the input's and the result's types (test below).
CASTS = sorted(nf.schema.name for nf in load_schema()[0] if nf.pointwise is not None and nf.pointwise.cast_to)
OPS = sorted(set(FORMULAS) - set(CASTS))


@pytest.mark.skipif(NVRTC is None, reason="libnvrtc (CUDA toolkit) not found at /usr/local/cuda/lib64")
@pytest.mark.parametrize("op", OPS)
def test_functor_compiles_to_ptx_with_nvrtc(op):
    header = f"generated/pointwise/{op}.h"
    tensors, scalars, dtypes = FORMULAS[op]
    narrow, wide = ("int", "long long") if dtypes == "integral" else ("float", "double")
    xs = ", ".join("x[i]" for _ in tensors)
    us = ", ".join("u[i]" for _ in tensors)
    twos = ", ".join("2" for _ in scalars)
    source = (f'#include "{header}"\n'
              f'extern "C" __global__ void k(const {narrow}* x, {narrow}* y, const {wide}* u, {wide}* v) {{\n'
              '  const int i = blockIdx.x * blockDim.x + threadIdx.x;\n'
              f'  y[i] = kiln::formulas::{op}<{narrow}>{{{twos}}}({xs});\n'
              f'  v[i] = kiln::formulas::{op}<{wide}>{{{twos}}}({us});\n'
              '}\n')
    headers = {header: read(header), "runtime/kernels/pointwise_math.h": read("runtime/kernels/pointwise_math.h")}
    ok, log, ptx = compile_ptx(source, headers)
    assert ok, log
    assert b".entry k" in ptx


CAST_TYPES = ["bool", "unsigned char", "signed char", "short", "int", "long long", "float", "double"]


@pytest.mark.skipif(NVRTC is None, reason="libnvrtc (CUDA toolkit) not found at /usr/local/cuda/lib64")
@pytest.mark.parametrize("op", CASTS)
def test_cast_functor_compiles_to_ptx_for_every_pair_of_types(op):
    header = f"generated/pointwise/{op}.h"
    lines = [f'#include "{header}"', 'extern "C" __global__ void k(const void* x, void* y) {',
             '  const int i = blockIdx.x * blockDim.x + threadIdx.x;']
    for a, frm in enumerate(CAST_TYPES):
        for b, to in enumerate(CAST_TYPES):
            lines.append(f'  static_cast<{to}*>(y)[i * {len(CAST_TYPES) ** 2} + {a * len(CAST_TYPES) + b}] = '
                         f'kiln::formulas::{op}<{frm}, {to}>{{}}(static_cast<const {frm}*>(x)[i]);')
    source = "\n".join(lines + ["}", ""])
    headers = {header: read(header), "runtime/kernels/pointwise_math.h": read("runtime/kernels/pointwise_math.h")}
    ok, log, ptx = compile_ptx(source, headers)
    assert ok, log
    assert b".entry k" in ptx


@pytest.mark.skipif(NVRTC is None, reason="libnvrtc (CUDA toolkit) not found at /usr/local/cuda/lib64")
def test_nvrtc_reports_a_broken_functor():
    # The check can fail: a functor calling an intrinsic the math header lacks does not compile.
    source = ('#include "runtime/kernels/pointwise_math.h"\n'
              'extern "C" __global__ void k(float* y) { y[0] = kiln::pm::not_an_intrinsic(y[0]); }\n')
    ok, log, _ = compile_ptx(source, {"runtime/kernels/pointwise_math.h": read("runtime/kernels/pointwise_math.h")})
    assert not ok and "not_an_intrinsic" in log
