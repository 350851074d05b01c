// The intrinsics of pointwise formulas (schema `pointwise:`, codegen/pointwise.py): the one math
// header the generated scalar functors use, on the host, under nvcc and under NVRTC alike. It
// includes no standard header (NVRTC has none); each intrinsic has a float and a double overload.
#pragma once

#if defined(__CUDACC__) || defined(__CUDACC_RTC__)
#define KILN_HOST_DEVICE __host__ __device__
#else
#define KILN_HOST_DEVICE
#endif

namespace kiln {
namespace pm {

// Device code calls CUDA's math library (built into NVRTC); host code the compiler's builtins,
// which are the C library's functions (std::exp(float) is __builtin_expf too).
#if defined(__CUDA_ARCH__) || defined(__CUDACC_RTC__)
#define KILN_PM_UNARY(name)                                                           \
  KILN_HOST_DEVICE inline float name(float x) { return ::name##f(x); }                \
  KILN_HOST_DEVICE inline double name(double x) { return ::name(x); }
#else
#define KILN_PM_UNARY(name)                                                           \
  KILN_HOST_DEVICE inline float name(float x) { return __builtin_##name##f(x); }      \
  KILN_HOST_DEVICE inline double name(double x) { return __builtin_##name(x); }
#endif

KILN_PM_UNARY(exp)
KILN_PM_UNARY(expm1)
KILN_PM_UNARY(log)
KILN_PM_UNARY(log1p)
KILN_PM_UNARY(sin)
KILN_PM_UNARY(cos)
KILN_PM_UNARY(tanh)
KILN_PM_UNARY(erf)
KILN_PM_UNARY(sqrt)

#undef KILN_PM_UNARY

}  // namespace pm
}  // namespace kiln
