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

#if defined(__CUDA_ARCH__) || defined(__CUDACC_RTC__)
#define KILN_PM_FLOAT(name, f32, f64)                                                  \
  KILN_HOST_DEVICE inline float name(float x) { return ::f32(x); }                    \
  KILN_HOST_DEVICE inline double name(double x) { return ::f64(x); }
#define KILN_PM_FLOAT2(name, f32, f64)                                                 \
  KILN_HOST_DEVICE inline float name(float x, float y) { return ::f32(x, y); }        \
  KILN_HOST_DEVICE inline double name(double x, double y) { return ::f64(x, y); }
#else
#define KILN_PM_FLOAT(name, f32, f64)                                                  \
  KILN_HOST_DEVICE inline float name(float x) { return __builtin_##f32(x); }          \
  KILN_HOST_DEVICE inline double name(double x) { return __builtin_##f64(x); }
#define KILN_PM_FLOAT2(name, f32, f64)                                                 \
  KILN_HOST_DEVICE inline float name(float x, float y) { return __builtin_##f32(x, y); } \
  KILN_HOST_DEVICE inline double name(double x, double y) { return __builtin_##f64(x, y); }
#endif

// Intrinsics of every dtype: a template for the integers and bool, float and double overloads
// where floating values need their own rule.

// abs(-0.0) is +0.0.
template <typename T>
KILN_HOST_DEVICE inline T abs(T x) { return x < T(0) ? T(-x) : x; }
KILN_PM_FLOAT(abs, fabsf, fabs)

// Integers are already whole; round() is half to even (the default rounding mode), as torch.
template <typename T>
KILN_HOST_DEVICE inline T floor(T x) { return x; }
template <typename T>
KILN_HOST_DEVICE inline T ceil(T x) { return x; }
template <typename T>
KILN_HOST_DEVICE inline T trunc(T x) { return x; }
template <typename T>
KILN_HOST_DEVICE inline T round(T x) { return x; }
KILN_PM_FLOAT(floor, floorf, floor)
KILN_PM_FLOAT(ceil, ceilf, ceil)
KILN_PM_FLOAT(trunc, truncf, trunc)
KILN_PM_FLOAT(round, nearbyintf, nearbyint)

// A NaN operand wins (torch.maximum / torch.minimum), whichever side it is on.
template <typename T>
KILN_HOST_DEVICE inline T maximum(T a, T b) { return a > b ? a : b; }
template <typename T>
KILN_HOST_DEVICE inline T minimum(T a, T b) { return a < b ? a : b; }
KILN_HOST_DEVICE inline float maximum(float a, float b) { return a != a ? a : b != b ? b : a > b ? a : b; }
KILN_HOST_DEVICE inline double maximum(double a, double b) { return a != a ? a : b != b ? b : a > b ? a : b; }
KILN_HOST_DEVICE inline float minimum(float a, float b) { return a != a ? a : b != b ? b : a < b ? a : b; }
KILN_HOST_DEVICE inline double minimum(double a, double b) { return a != a ? a : b != b ? b : a < b ? a : b; }

KILN_PM_FLOAT2(atan2, atan2f, atan2)

// ~x of an integer; of a bool, its negation (~true would be -2, which is true again).
template <typename T>
KILN_HOST_DEVICE inline T bit_not(T x) { return T(~x); }
KILN_HOST_DEVICE inline bool bit_not(bool x) { return !x; }

// -1, 0 or 1 in x's type (0 for NaN, as torch's sign).
template <typename T>
KILN_HOST_DEVICE inline T sign(T x) { return T((x > T(0)) - (x < T(0))); }

#undef KILN_PM_FLOAT
#undef KILN_PM_FLOAT2

}  // namespace pm
}  // namespace kiln
