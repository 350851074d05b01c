// Sleef's vector math (libsleef, the library torch's CPU kernels call) for the Highway target being
// compiled: sleef::exp(v) etc. on a full Highway vector of float, calling the Sleef function
// written for the target's instruction set (Sleef_expf16_u10avx512f on AVX3, Sleef_expf8_u10avx2
// on AVX2, Sleef_expf4_u10sse4 on SSE4). All are the u10 versions (erfc: u15), which torch calls: about 1 ulp
// from the exact result at most, with IEEE answers at infinities, NaN and zeros. Included by vector_formula-inl.h, once per target (hence no #pragma once).
//
// <sleef.h> declares the AVX and AVX-512 functions only when the whole file is compiled for them
// (-mavx2, -mavx512f), which kiln never is: Highway enables an instruction set per function. So
// the functions of the target being compiled are declared here, inside its target region.
#include <sleef.h>
// ... which leaves these behind.
#undef CONST
#undef IMPORT

#include <hwy/highway.h>

#if defined(KILN_CPU_VECTOR_SLEEF_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef KILN_CPU_VECTOR_SLEEF_INL_H_
#undef KILN_CPU_VECTOR_SLEEF_INL_H_
#else
#define KILN_CPU_VECTOR_SLEEF_INL_H_
#endif

#if HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL
#define KILN_SLEEF_F(fn, u) Sleef_##fn##f16_##u##avx512f
#define KILN_SLEEF_VF __m512
#elif HWY_TARGET == HWY_AVX2
#define KILN_SLEEF_F(fn, u) Sleef_##fn##f8_##u##avx2
#define KILN_SLEEF_VF __m256
#elif HWY_TARGET == HWY_SSE4
#define KILN_SLEEF_F(fn, u) Sleef_##fn##f4_##u##sse4
#define KILN_SLEEF_VF __m128
#endif

HWY_BEFORE_NAMESPACE();
namespace kiln {
namespace cpu {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;
namespace sleef {

#ifdef KILN_SLEEF_F
// fn(v): Sleef's function of accuracy u (u10: 1.0 ulp) on a full vector of float (a partial one
// does not compile). The declaration is <sleef.h>'s to the letter (a const return type: clang
// tells them apart).
#define KILN_SLEEF_UNARY_U(fn, u)                                    \
  extern "C" const KILN_SLEEF_VF KILN_SLEEF_F(fn, u)(KILN_SLEEF_VF); \
  template <class V>                                                 \
  HWY_INLINE V fn(V x) {                                             \
    static_assert(sizeof(hn::TFromV<V>) == 4, "float");              \
    return V{KILN_SLEEF_F(fn, u)(x.raw)};                            \
  }
#else
// Highway's baseline (SCALAR, EMU128): the formula loops run the scalar functors there, so these
// only need to compile.
#define KILN_SLEEF_UNARY_U(fn, u) \
  template <class V>              \
  HWY_INLINE V fn(V x) {          \
    return x;                     \
  }
#endif
#define KILN_SLEEF_UNARY(fn) KILN_SLEEF_UNARY_U(fn, u10)

KILN_SLEEF_UNARY(exp)
KILN_SLEEF_UNARY(expm1)
KILN_SLEEF_UNARY(log)
KILN_SLEEF_UNARY(log1p)
#if HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL
// sin, cos and tan: Sleef's u10 float functions take their slower argument reduction (rempif) for
// a whole vector when any lane is beyond 125 (vtestallones), which rounds the vector's other lanes
// differently (sin(4.11f) beside a 5000 is 1 ulp off the Cody-Waite result). torch's AVX2 kernels
// decide it per 8 lanes, so AVX3 computes them as two AVX2 halves: torch's bits, whatever the
// neighbouring values (the transformer tutorial's positional-encoding table).
#define KILN_SLEEF_UNARY_HALVES(fn)                                                          \
  extern "C" const __m256 Sleef_##fn##f8_u10avx2(__m256);                                   \
  template <class V>                                                                         \
  HWY_INLINE V fn(V x) {                                                                     \
    static_assert(sizeof(hn::TFromV<V>) == 4, "float");                                      \
    const __m256 lo = Sleef_##fn##f8_u10avx2(_mm512_castps512_ps256(x.raw));                 \
    const __m256 hi = Sleef_##fn##f8_u10avx2(_mm512_extractf32x8_ps(x.raw, 1));              \
    return V{_mm512_insertf32x8(_mm512_castps256_ps512(lo), hi, 1)};                         \
  }
KILN_SLEEF_UNARY_HALVES(sin)
KILN_SLEEF_UNARY_HALVES(cos)
KILN_SLEEF_UNARY_HALVES(tan)
#undef KILN_SLEEF_UNARY_HALVES
#else
KILN_SLEEF_UNARY(sin)
KILN_SLEEF_UNARY(cos)
KILN_SLEEF_UNARY(tan)
#endif
KILN_SLEEF_UNARY(tanh)
KILN_SLEEF_UNARY(erf)
KILN_SLEEF_UNARY(log2)
KILN_SLEEF_UNARY(log10)
KILN_SLEEF_UNARY(exp2)
KILN_SLEEF_UNARY(asin)
KILN_SLEEF_UNARY(acos)
KILN_SLEEF_UNARY(atan)
KILN_SLEEF_UNARY(sinh)
KILN_SLEEF_UNARY(cosh)
KILN_SLEEF_UNARY(asinh)
KILN_SLEEF_UNARY(acosh)
KILN_SLEEF_UNARY(atanh)
KILN_SLEEF_UNARY_U(erfc, u15)  // torch calls the u15 (1.5 ulp) erfc: Sleef has no u10 one

// pow(x, e) lane by lane: Sleef's powf, which torch's Vectorized<float>::pow calls (so
// pow(Tensor, Tensor) and x ** 4 round as torch's vector loop does).
#ifdef KILN_SLEEF_F
extern "C" const KILN_SLEEF_VF KILN_SLEEF_F(pow, u10)(KILN_SLEEF_VF, KILN_SLEEF_VF);
template <class V>
HWY_INLINE V pow(V x, V e) {
  static_assert(sizeof(hn::TFromV<V>) == 4, "float");
  return V{KILN_SLEEF_F(pow, u10)(x.raw, e.raw)};
}
#else
template <class V>
HWY_INLINE V pow(V x, V e) {
  return x;
}
#endif

#undef KILN_SLEEF_UNARY
#undef KILN_SLEEF_UNARY_U

}  // namespace sleef
}  // namespace HWY_NAMESPACE
}  // namespace cpu
}  // namespace kiln
HWY_AFTER_NAMESPACE();

#undef KILN_SLEEF_F
#undef KILN_SLEEF_VF

#endif  // KILN_CPU_VECTOR_SLEEF_INL_H_
