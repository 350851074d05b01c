// The intrinsics of pointwise formulas (schema `pointwise:`, codegen/pointwise.py): the one math
// header the generated scalar functors use, on the host, under nvcc and under NVRTC alike. It
// includes no standard header (NVRTC has none); each intrinsic has a float and a double overload.
#pragma once

#if defined(__CUDACC__) || defined(__CUDACC_RTC__)
#define KILN_HOST_DEVICE __host__ __device__
#else
#define KILN_HOST_DEVICE
#endif

#if !defined(__CUDACC_RTC__) && !defined(__CUDA_ARCH__)
#include <cstdlib>  // erfinv's ATEN_CPU_CAPABILITY (host only)
#include <cstring>
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
KILN_PM_UNARY(exp2)

#undef KILN_PM_UNARY

// Intrinsics whose float32 version the host computes in double, rounded once: the C library's
// float functions are up to 1.75 ulps off for these (sinh, log10; erfc 2.6), more than torch's
// SLEEF kernels, while its double functions rounded to float are within 0.5 ulp plus a double
// rounding's 2^-29 (tests/python/test_vector_formulas.py holds them to torch). On a GPU, CUDA's
// float functions (torch's CUDA kernels call the same).
#if defined(__CUDA_ARCH__) || defined(__CUDACC_RTC__)
#define KILN_PM_UNARY_WIDE(name)                                                      \
  KILN_HOST_DEVICE inline float name(float x) { return ::name##f(x); }                \
  KILN_HOST_DEVICE inline double name(double x) { return ::name(x); }
#else
#define KILN_PM_UNARY_WIDE(name)                                                                     \
  KILN_HOST_DEVICE inline float name(float x) { return static_cast<float>(__builtin_##name(static_cast<double>(x))); } \
  KILN_HOST_DEVICE inline double name(double x) { return __builtin_##name(x); }
#endif

KILN_PM_UNARY_WIDE(log2)
KILN_PM_UNARY_WIDE(log10)
KILN_PM_UNARY_WIDE(asin)
KILN_PM_UNARY_WIDE(acos)
KILN_PM_UNARY_WIDE(atan)
KILN_PM_UNARY_WIDE(sinh)
KILN_PM_UNARY_WIDE(cosh)
KILN_PM_UNARY_WIDE(tan)
KILN_PM_UNARY_WIDE(asinh)
KILN_PM_UNARY_WIDE(acosh)
KILN_PM_UNARY_WIDE(atanh)
KILN_PM_UNARY_WIDE(erfc)

#undef KILN_PM_UNARY_WIDE

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

// atan2 and hypot in float32 as the intrinsics above: the double function, rounded once (the C
// library's atan2f is 1.3 ulps off), as the vector kernels compute them (double lanes).
#if defined(__CUDA_ARCH__) || defined(__CUDACC_RTC__)
KILN_PM_FLOAT2(atan2, atan2f, atan2)
KILN_PM_FLOAT2(hypot, hypotf, hypot)
#else
KILN_HOST_DEVICE inline float atan2(float y, float x) {
  return static_cast<float>(__builtin_atan2(static_cast<double>(y), static_cast<double>(x)));
}
KILN_HOST_DEVICE inline double atan2(double y, double x) { return __builtin_atan2(y, x); }
KILN_HOST_DEVICE inline float hypot(float x, float y) {
  return static_cast<float>(__builtin_hypot(static_cast<double>(x), static_cast<double>(y)));
}
KILN_HOST_DEVICE inline double hypot(double x, double y) { return __builtin_hypot(x, y); }
#endif
// copysign(a, b): a's magnitude with b's sign bit (NaN's sign bit included), as torch.copysign.
KILN_PM_FLOAT2(copysign, copysignf, copysign)

// fma(a, b, c): a * b + c rounded once (IEEE fusedMultiplyAdd), what torch's CPU kernels compute
// where GCC contracted `a * b + c` (its AVX2 + FMA builds) and what CUDA's fma computes. On the
// host the C library's fma (the FMA instruction where the CPU has one, exact software otherwise).
#if defined(__CUDA_ARCH__) || defined(__CUDACC_RTC__)
KILN_HOST_DEVICE inline float fma(float a, float b, float c) { return ::fmaf(a, b, c); }
KILN_HOST_DEVICE inline double fma(double a, double b, double c) { return ::fma(a, b, c); }
#else
KILN_HOST_DEVICE inline float fma(float a, float b, float c) { return __builtin_fmaf(a, b, c); }
KILN_HOST_DEVICE inline double fma(double a, double b, double c) { return __builtin_fma(a, b, c); }
#endif

// The inverse error function. On the host, torch's CPU algorithm (calc_erfinv, ATen's Math.h):
// a rational approximation, then two Newton steps with the C library's erf and exp, all in T (so
// float32 gives torch's bits on the same C library); NaN outside [-1, 1], +-inf at +-1. On a GPU,
// CUDA's erfinv (which torch's CUDA kernel calls).
//
// torch_madd(a, b, c) is a * b + c as torch's kernels compute it in calc_erfinv's, digamma's and
// trigamma's polynomials: fused on the host where GCC contracted it in torch's AVX2/AVX-512 builds
// (torch_kernels_use_fma below); on a GPU, a * b + c, which NVRTC and nvcc contract as they do in
// torch's CUDA kernels.
#if defined(__CUDA_ARCH__) || defined(__CUDACC_RTC__)
template <typename T>
KILN_HOST_DEVICE inline T torch_madd(T a, T b, T c) {
  return a * b + c;
}
KILN_HOST_DEVICE inline float erfinv(float y) { return ::erfinvf(y); }
KILN_HOST_DEVICE inline double erfinv(double y) { return ::erfinv(y); }
#else
// Whether torch runs its AVX2 (or AVX-512) kernels on this CPU: it does when the CPU has AVX2 and
// FMA, unless ATEN_CPU_CAPABILITY=default says otherwise. GCC compiled those kernels with -mfma and
// contraction, so each `a * b + c` in them (calc_erfinv's polynomials, add with alpha, addcmul,
// normal_'s transformation) is one fused multiply-add; kiln fuses the same ones here (host only).
inline bool torch_kernels_use_fma() {
  static const bool fused = [] {
    const char* cap = std::getenv("ATEN_CPU_CAPABILITY");
    if (cap && std::strcmp(cap, "default") == 0) return false;
#if defined(__x86_64__) || defined(__i386__)
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
#else
    return false;
#endif
  }();
  return fused;
}
template <typename T>
inline T torch_madd(T a, T b, T c) {
  return torch_kernels_use_fma() ? fma(a, b, c) : a * b + c;
}

template <typename T>
inline T erfinv_impl(T y) {
  const T a[4] = {T(0.886226899), T(-1.645349621), T(0.914624893), T(-0.140543331)};
  const T b[4] = {T(-2.118377725), T(1.442710462), T(-0.329097515), T(0.012229801)};
  const T c[4] = {T(-1.970840454), T(-1.624906493), T(3.429567803), T(1.641345311)};
  const T d[2] = {T(3.543889200), T(1.637067800)};
  const T y_abs = abs(y);
  if (y_abs > T(1)) return T(0) * (T(1) / T(0));  // NaN
  if (y_abs == T(1)) return copysign(T(1) / T(0), y);
  T x, z, num, dem;
  if (y_abs <= T(0.7)) {
    z = y * y;
    num = torch_madd(torch_madd(torch_madd(a[3], z, a[2]), z, a[1]), z, a[0]);
    dem = torch_madd(torch_madd(torch_madd(torch_madd(b[3], z, b[2]), z, b[1]), z, b[0]), z, T(1));
    x = y * num / dem;
  } else {
    z = sqrt(-log((T(1) - y_abs) / T(2)));
    num = torch_madd(torch_madd(torch_madd(c[3], z, c[2]), z, c[1]), z, c[0]);
    dem = torch_madd(torch_madd(d[1], z, d[0]), z, T(1));
    x = copysign(num, y) / dem;
  }
  const T two_over_sqrt_pi = T(2) / T(1.7724538509055159);  // 2 / sqrt(pi), as torch rounds it
  x = x - (erf(x) - y) / (two_over_sqrt_pi * exp(-x * x));
  x = x - (erf(x) - y) / (two_over_sqrt_pi * exp(-x * x));
  return x;
}
inline float erfinv(float y) { return erfinv_impl<float>(y); }
inline double erfinv(double y) { return erfinv_impl<double>(y); }
#endif

// ~x of an integer; of a bool, its negation (~true would be -2, which is true again).
template <typename T>
KILN_HOST_DEVICE inline T bit_not(T x) { return T(~x); }
KILN_HOST_DEVICE inline bool bit_not(bool x) { return !x; }

// a << b and a >> b as torch's kernels: a count below 0 or beyond the type's bits shifts everything
// out (0; a signed >> fills with the sign bit); a << works on the unsigned bits, so it wraps.
template <typename T>
KILN_HOST_DEVICE inline T left_shift(T a, T b) {
  constexpr long long bits = sizeof(T) * 8;
  const long long n = static_cast<long long>(b);
  if (n < 0 || n >= bits) return T(0);
  return T(static_cast<unsigned long long>(a) << n);
}
template <typename T>
KILN_HOST_DEVICE inline T right_shift(T a, T b) {
  constexpr long long max_shift = sizeof(T) * 8 - (T(-1) < T(0) ? 1 : 0);
  const long long n = static_cast<long long>(b);
  return T(a >> ((n < 0 || n >= max_shift) ? max_shift : n));
}
KILN_HOST_DEVICE inline bool left_shift(bool a, bool) { return a; }  // never reached: bool is refused
KILN_HOST_DEVICE inline bool right_shift(bool a, bool) { return a; }

// -1, 0 or 1 in x's type (0 for NaN, as torch's sign).
template <typename T>
KILN_HOST_DEVICE inline T sign(T x) { return T((x > T(0)) - (x < T(0))); }

// ---- division and powers, with Python's and torch's semantics ----

// Integer arithmetic that wraps as torch's kernels do (INT_MIN / -1 is INT_MIN), through unsigned
// values: no signed overflow, on the host or a GPU.
template <typename T>
KILN_HOST_DEVICE inline T wrapping_neg(T x) { return T(0ULL - static_cast<unsigned long long>(x)); }
// b is -1 in a signed type (255 is not -1 for uint8).
template <typename T>
KILN_HOST_DEVICE inline bool is_minus_one(T b) { return T(-1) < T(0) && b == T(-1); }
template <typename T>
KILN_HOST_DEVICE inline T wrapping_mul(T a, T b) {
  return T(static_cast<unsigned long long>(a) * static_cast<unsigned long long>(b));
}

// a // b: the quotient rounded toward -inf. Integer division by zero is refused before the loop
// (pointwise_meta.h: check_no_integer_zero); a zero met anyway (an out= overlapping the divisor)
// gives 0, never undefined behaviour.
template <typename T>
KILN_HOST_DEVICE inline T floor_divide(T a, T b) {
  if (is_minus_one(b)) return wrapping_neg(a);
  if (b == T(0)) return T(0);
  T q = T(a / b);
  if (T(a % b) != T(0) && ((a < T(0)) != (b < T(0)))) q = T(q - 1);
  return q;
}
KILN_HOST_DEVICE inline bool floor_divide(bool a, bool) { return a; }
// torch's div_floor: (a - fmod(a, b)) / b corrected toward -inf, so infinite operands give
// torch's answers (-1 // inf is -1, inf // 1 is nan) and a zero quotient keeps its sign.
#define KILN_PM_FLOOR_DIVIDE(T, FMOD, FLOOR, COPYSIGN)                                 \
  KILN_HOST_DEVICE inline T floor_divide(T a, T b) {                                   \
    if (b == T(0)) return a / b;                                                       \
    const T mod = FMOD(a, b);                                                          \
    T div = (a - mod) / b;                                                             \
    if (mod != T(0) && (b < T(0)) != (mod < T(0))) div -= T(1);                        \
    if (div == T(0)) return COPYSIGN(T(0), a / b);                                     \
    T floored = FLOOR(div);                                                            \
    if (div - floored > T(0.5)) floored += T(1);                                       \
    return floored;                                                                    \
  }

// C's remainder, with the dividend's sign (torch.fmod); INT_MIN % -1 is 0.
template <typename T>
KILN_HOST_DEVICE inline T fmod(T a, T b) { return (b == T(0) || is_minus_one(b)) ? T(0) : T(a % b); }
KILN_HOST_DEVICE inline bool fmod(bool, bool) { return false; }

// a % b: the remainder with the divisor's sign (Python's, torch.remainder).
template <typename T>
KILN_HOST_DEVICE inline T remainder(T a, T b) {
  const T r = fmod(a, b);
  return (r != T(0) && ((r < T(0)) != (b < T(0)))) ? T(r + b) : r;
}
#define KILN_PM_REMAINDER(T)                                                           \
  KILN_HOST_DEVICE inline T remainder(T a, T b) {                                      \
    T r = fmod(a, b);                                                                  \
    if (r != T(0) && ((r < T(0)) != (b < T(0)))) r += b;                               \
    return r;                                                                          \
  }

// base ** exp. Integers by squaring (wrapping); a negative exponent gives torch's answers
// (1 ** -n = 1, (-1) ** -n = +-1, otherwise 0; pow(Tensor, Scalar) refuses it before the loop).
template <typename T>
KILN_HOST_DEVICE inline T pow(T base, T exponent) {
  long long e = static_cast<long long>(exponent);
  if (e < 0) {
    if (base == T(1)) return T(1);
    if (is_minus_one(base)) return (e & 1) ? T(-1) : T(1);
    return T(0);
  }
  T result = T(1);
  while (e > 0) {
    if (e & 1) result = wrapping_mul(result, base);
    base = wrapping_mul(base, base);
    e >>= 1;
  }
  return result;
}
KILN_HOST_DEVICE inline bool pow(bool base, bool exponent) { return !exponent || base; }
// Floating: the math library's pow (torch's pow(Tensor, Tensor)).
#define KILN_PM_POW(T, POW) \
  KILN_HOST_DEVICE inline T pow(T x, T e) { return POW(x, e); }

// x ** e as torch computes a tensor to a Python number's power: its special exponents as products,
// square roots and reciprocals (rounded as torch's are: x ** 3 is x * x * x, x ** 0.5 is sqrt(x)
// and so -0 at -0 and NaN at -inf), else pow. 1 and 0 give pow's own values (x, and 1 even at NaN)
// without calling it: a derivative's pow(x, exponent - 1) is pow(x, 1) for x ** 2. Integers: pow.
template <typename T>
KILN_HOST_DEVICE inline T pow_scalar(T base, T exponent) { return pow(base, exponent); }
#define KILN_PM_POW_SCALAR(T, SQRT, POW)                                               \
  KILN_HOST_DEVICE inline T pow_scalar(T x, T e) {                                     \
    if (e == T(2)) return x * x;                                                       \
    if (e == T(1)) return x;                                                           \
    if (e == T(0)) return T(1);                                                        \
    if (e == T(3)) return x * x * x;                                                   \
    if (e == T(0.5)) return SQRT(x);                                                   \
    if (e == T(-0.5)) return T(1) / SQRT(x);                                           \
    if (e == T(-1)) return T(1) / x;                                                   \
    if (e == T(-2)) return T(1) / (x * x);                                             \
    return POW(x, e);                                                                  \
  }

#if defined(__CUDA_ARCH__) || defined(__CUDACC_RTC__)
KILN_PM_FLOAT2(fmod, fmodf, fmod)
KILN_PM_FLOOR_DIVIDE(float, ::fmodf, ::floorf, ::copysignf)
KILN_PM_FLOOR_DIVIDE(double, ::fmod, ::floor, ::copysign)
KILN_PM_POW(float, ::powf)
KILN_PM_POW(double, ::pow)
KILN_PM_POW_SCALAR(float, ::sqrtf, ::powf)
KILN_PM_POW_SCALAR(double, ::sqrt, ::pow)
#else
KILN_PM_FLOAT2(fmod, fmodf, fmod)
KILN_PM_FLOOR_DIVIDE(float, __builtin_fmodf, __builtin_floorf, __builtin_copysignf)
KILN_PM_FLOOR_DIVIDE(double, __builtin_fmod, __builtin_floor, __builtin_copysign)
KILN_PM_POW(float, __builtin_powf)
KILN_PM_POW(double, __builtin_pow)
KILN_PM_POW_SCALAR(float, __builtin_sqrtf, __builtin_powf)
KILN_PM_POW_SCALAR(double, __builtin_sqrt, __builtin_pow)
#endif
KILN_PM_REMAINDER(float)
KILN_PM_REMAINDER(double)

// ---- gcd and lcm of integers (torch's calc_gcd / calc_lcm, ATen's Math.h) ----
// W is the type C++ computes `T * T` in (int for int8/int16/uint8, as torch's ::abs and `a / g * b`
// promote them), so a result outside T wraps as torch's does. abs(INT_MIN) stays INT_MIN.
template <typename T>
KILN_HOST_DEVICE inline T gcd(T a_in, T b_in) {
  using W = decltype(a_in * b_in);
  T a = T(W(a_in) < W(0) ? wrapping_neg(W(a_in)) : W(a_in));
  T b = T(W(b_in) < W(0) ? wrapping_neg(W(b_in)) : W(b_in));
  while (a != T(0)) {
    const T c = a;
    a = fmod(b, a);  // b % a, without INT_MIN % -1's trap
    b = c;
  }
  return b;
}
// 0 where the gcd is 0, else |a / g * b| (wrapping). g is -1 for gcd(INT_MIN, INT_MAX): a / g goes
// through floor_divide (exact here), which wraps INT_MIN / -1 where C++'s division would trap.
template <typename T>
KILN_HOST_DEVICE inline T lcm(T a, T b) {
  using W = decltype(a * b);
  const T g = gcd(a, b);
  if (g == T(0)) return T(0);
  const W p = wrapping_mul(floor_divide(W(a), W(g)), W(b));
  return T(p < W(0) ? wrapping_neg(p) : p);
}

// nextafter(a, b): the next representable value after a toward b (the C library's; NaN if either is).
KILN_PM_FLOAT2(nextafter, nextafterf, nextafter)

// ---- the gamma function's logarithm and derivatives (torch's CPU algorithms, ATen's Math.h) ----
// lgamma: log|gamma(x)|, +inf at 0 and the negative integers. On the host float32 is the C
// library's double lgamma rounded once: within 0.51 ulp of float64 SciPy on a sample where torch's
// CPU kernel is 0.81 ulp off (6,900 near the zeros below 0) and the C library's lgammaf 2.2. On a
// GPU, CUDA's lgammaf (torch's CUDA kernel calls the same).
#if defined(__CUDA_ARCH__) || defined(__CUDACC_RTC__)
KILN_HOST_DEVICE inline float lgamma(float x) { return ::lgammaf(x); }
KILN_HOST_DEVICE inline double lgamma(double x) { return ::lgamma(x); }
#else
inline float lgamma(float x) { return static_cast<float>(__builtin_lgamma(static_cast<double>(x))); }
inline double lgamma(double x) { return __builtin_lgamma(x); }
#endif


// digamma: +-inf at -+0; NaN at the negative integers and -inf; below 0 the reflection
// digamma(1 - x) - pi / tan(pi * frac(x)) (frac(x) keeps tan's argument small: pi * x rounds badly
// for large |x|), computed in double as torch does for both types; then the recurrence
// digamma(x) = digamma(x + 1) - 1 / x up to 10 and the asymptotic series
// log(x) - 1 / (2x) - sum B_2k / (2k x^2k), its coefficients those of Cephes' psi.
template <typename T>
KILN_HOST_DEVICE inline T digamma_impl(T x) {
  if (x == T(0)) return copysign(T(1) / T(0), -x);
  T reflection = T(0);  // below 0: digamma(x) = digamma(1 - x) - reflection
  if (x < T(0)) {
    if (x == trunc(x)) return T(0) * (T(1) / T(0));  // NaN (-inf too: trunc(-inf) is -inf)
    const double pi = 3.14159265358979323846;
    const double frac = static_cast<double>(x) - trunc(static_cast<double>(x));
    reflection = static_cast<T>(pi / tan(pi * frac));
    x = T(1) - x;
  }
  T result = T(0);
  while (x < T(10)) {  // false for NaN
    result -= T(1) / x;
    x += T(1);
  }
  if (x == T(10)) return (result + T(2.25175258906672110764)) - reflection;  // digamma(10)
  const T coeffs[7] = {T(8.33333333333333333333E-2), T(-2.10927960927960927961E-2), T(7.57575757575757575758E-3),
                       T(-4.16666666666666666667E-3), T(3.96825396825396825397E-3), T(-8.33333333333333333333E-3),
                       T(8.33333333333333333333E-2)};
  T series = T(0);
  if (x < T(1.0e17)) {  // beyond, 1 / x^2 vanishes against log(x)
    const T z = T(1) / (x * x);
    T poly = T(0);
    for (int i = 0; i < 7; ++i) poly = torch_madd(poly, z, coeffs[i]);
    series = z * poly;
  }
  return (result + log(x) - (T(0.5) / x) - series) - reflection;
}
KILN_HOST_DEVICE inline float digamma(float x) { return digamma_impl<float>(x); }
KILN_HOST_DEVICE inline double digamma(double x) { return digamma_impl<double>(x); }

// trigamma (polygamma(1, x)): below 0.5 the reflection pi^2 / sin^2(pi x) - trigamma(1 - x), six
// steps of trigamma(x) = trigamma(x + 1) + 1 / x^2, then the asymptotic series
// 1/x + 1/(2x^2) + 1/(6x^3) - 1/(30x^5) + 1/(42x^7).
template <typename T>
KILN_HOST_DEVICE inline T trigamma_impl(T x) {
  const T pi = T(3.14159265358979323846);
  T sign = T(1);
  T result = T(0);
  if (x < T(0.5)) {
    sign = T(-1);
    const T sin_pi_x = sin(pi * x);
    result -= (pi * pi) / (sin_pi_x * sin_pi_x);
    x = T(1) - x;
  }
  for (int i = 0; i < 6; ++i) {
    result += T(1) / (x * x);
    x += T(1);
  }
  const T ixx = T(1) / (x * x);
  // 1 + 1/(2x) + ixx (1/6 - ixx (1/30 - ixx / 42)), each product-and-sum one torch_madd
  const T inner = torch_madd(-ixx, T(1) / T(42), T(1) / T(30));
  const T middle = torch_madd(-ixx, inner, T(1) / T(6));
  result += torch_madd(ixx, middle, T(1) + T(1) / (T(2) * x)) / x;
  return sign * result;
}
KILN_HOST_DEVICE inline float trigamma(float x) { return trigamma_impl<float>(x); }
KILN_HOST_DEVICE inline double trigamma(double x) { return trigamma_impl<double>(x); }

// ---- classification (bool results); integers hold no NaN or infinity ----
template <typename T>
KILN_HOST_DEVICE inline bool isnan(T x) { return x != x; }
// +-inf: not NaN, and x - x is NaN.
template <typename T>
KILN_HOST_DEVICE inline bool isinf(T x) { return x == x && (x - x) != (x - x); }
template <typename T>
KILN_HOST_DEVICE inline bool isfinite(T x) { return (x - x) == (x - x); }
KILN_HOST_DEVICE inline bool isinf(bool) { return false; }
KILN_HOST_DEVICE inline bool isfinite(bool) { return true; }

// The value an absent Scalar? bound takes (clamp's min and max): -inf and inf for floating types,
// the extremes of an integer type.
template <typename T>
KILN_HOST_DEVICE inline T lowest() {
  return T(-1) < T(0) ? T(1ULL << (sizeof(T) * 8 - 1)) : T(0);
}
template <typename T>
KILN_HOST_DEVICE inline T highest() { return T(~lowest<T>()); }
template <>
KILN_HOST_DEVICE inline float lowest<float>() { return -1.0f / 0.0f; }
template <>
KILN_HOST_DEVICE inline float highest<float>() { return 1.0f / 0.0f; }
template <>
KILN_HOST_DEVICE inline double lowest<double>() { return -1.0 / 0.0; }
template <>
KILN_HOST_DEVICE inline double highest<double>() { return 1.0 / 0.0; }

// ---- casts: the `cast` of formulas (to(dtype), copy_) and every conversion a kernel's loop makes ----
// C++ leaves float -> integer undefined for NaN, infinities and out-of-range values; here they
// give the integer type's minimum, which is what x86 (and so torch's CPU kernels) produces. Types
// narrower than int32 take the low bits of that int32 (uint8: of that int64, as GCC compiles
// torch's kernels: -1.0 -> 255, 300.0 -> 44; 1e10 -> 0). To bool tests != 0 (NaN is true).
// float16 and bfloat16 are not here: they convert through float (runtime/core/convert.h).
namespace cast_detail {
template <typename T>
struct IsFloating { static constexpr bool value = false; };
template <>
struct IsFloating<float> { static constexpr bool value = true; };
template <>
struct IsFloating<double> { static constexpr bool value = true; };
template <typename A, typename B>
struct IsSame { static constexpr bool value = false; };
template <typename A>
struct IsSame<A, A> { static constexpr bool value = true; };
template <bool kFirst, typename A, typename B>
struct Choose { using type = A; };
template <typename A, typename B>
struct Choose<false, A, B> { using type = B; };

// A float to int32 or int64: the minimum outside [min, -min) (both bounds exact in From).
template <typename To, typename From>
KILN_HOST_DEVICE inline To float_to_int(From v) {
  const From lo = static_cast<From>(lowest<To>());
  return v >= lo && v < -lo ? static_cast<To>(v) : lowest<To>();  // NaN fails both tests
}
}  // namespace cast_detail

template <typename To, typename From>
KILN_HOST_DEVICE inline To cast(From v) {
  if constexpr (cast_detail::IsSame<To, bool>::value) {
    return v != From(0);
  } else if constexpr (cast_detail::IsFloating<From>::value && !cast_detail::IsFloating<To>::value) {
    if constexpr (sizeof(To) < 4) {
      using Wide = typename cast_detail::Choose<(To(-1) > To(0)), long long, int>::type;
      return static_cast<To>(cast_detail::float_to_int<Wide>(v));
    } else {
      return cast_detail::float_to_int<To>(v);
    }
  } else {
    return static_cast<To>(v);
  }
}

#undef KILN_PM_FLOAT
#undef KILN_PM_FLOAT2
#undef KILN_PM_FLOOR_DIVIDE
#undef KILN_PM_REMAINDER
#undef KILN_PM_POW
#undef KILN_PM_POW_SCALAR

}  // namespace pm
}  // namespace kiln
