// What a generated vector formula kernel (generated/cpu/<op>.cc) needs, once per Highway target:
// the formula intrinsics over vectors (kv::Exp, kv::Log, ...) and the loop that runs a formula over
// a contiguous float32 run, in one of three kinds of lanes (codegen/pointwise.py, vector_kind):
//
// * float lanes on Sleef, for formulas with exp, log, log1p, sin, cos, erf, tanh or another of
//   SLEEF_INTRINSICS (codegen/pointwise.py: the trigonometric, hyperbolic, log2/log10 and erfc
//   functions torch's CPU kernels take from Sleef, and asinh/acosh/atanh): the intrinsics are
//   Sleef's u10 float functions (vector_sleef-inl.h; erf and tanh on AVX2 and AVX3 are kiln's own,
//   vector_erf-inl.h, vector_tanh-inl.h), the ones torch's CPU kernels call, at full
//   float32 width; the formula is rounded after every step, as torch does. Double lanes lost to
//   torch on speed there (docs/ARCHITECTURE.md: exp 24.9 ms against torch's 13.6), and torch is
//   the accuracy bar (tests/python/test_vector_formulas.py: never more ulps than torch on the same
//   inputs). On SSE4 (no FMA, where Sleef's builds are less accurate than torch's) they compute in
//   double instead: FloatLanes below.
// * double lanes, for formulas with another transcendental intrinsic (expm1, exp2; hypot and atan2
//   run in double lanes only), where they are
//   faster than torch: each input is widened, the whole formula is evaluated in double with
//   Highway's vector math, and the result is rounded to float32 once. Highway's float32 functions
//   are 1 to 4 ulp off (tanh measured 2.7 ulp); in double they are ~1e-15 off, so the float32
//   result is the formula's float64 value correctly rounded on every float32 input (measured
//   exhaustively; the test asserts 0.501 ulp).
// * float lanes, for formulas of exact operations only (+ - * /, sqrt, comparisons, selects): IEEE
//   rounds each of them the same in a vector and in the scalar functor, so these lanes give the
//   scalar functor's bits, at full float32 width.
//
// Every transcendental kv:: function takes both lanes (a formula mixing exp and tanh runs all of
// it on Sleef in float lanes). In double lanes, Highway's math functions have valid ranges (exp up
// to 706, log on (0, inf), sin and cos within +-39000) and leave NaN, infinities, the poles and some
// signed zeros to the caller. The kv:: wrappers give every input the C library's IEEE answer:
// exp(inf) = inf, exp(nan) = nan, log(0) = -inf, log(-1) = nan, log1p(-1) = -inf, expm1(-0) =
// sin(-0) = -0, sin(inf) = nan, and sin/cos of a large argument computed lane by lane with the C
// library's double sin/cos (a vector goes that way only if one of its lanes is that large). Sleef
// gives those answers itself (but log1p from 1e38 up: SleefLog1p).
//
// This header is included once per target by hwy/foreach_target.h (hence no #pragma once: the
// guard below toggles with HWY_TARGET_TOGGLE, Highway's convention for -inl.h headers).
#include <stddef.h>
#include <stdint.h>

#include <limits>
#include <type_traits>

#include <hwy/highway.h>
#include <hwy/contrib/math/math-inl.h>

#include "runtime/kernels/cpu/vector_erf-inl.h"
#include "runtime/kernels/cpu/vector_sleef-inl.h"
#include "runtime/kernels/cpu/vector_tanh-inl.h"
#include "runtime/core/half.h"
#include "runtime/kernels/pointwise_math.h"

#if defined(KILN_CPU_VECTOR_FORMULA_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef KILN_CPU_VECTOR_FORMULA_INL_H_
#undef KILN_CPU_VECTOR_FORMULA_INL_H_
#else
#define KILN_CPU_VECTOR_FORMULA_INL_H_
#endif

HWY_BEFORE_NAMESPACE();
namespace kiln {
namespace cpu {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// The intrinsics of pointwise formulas over vectors, as codegen/pointwise.py's render_vector names
// them; + - * / and comparisons are Highway's own (hn::Add, hn::Lt, ...). The transcendental ones
// call Sleef in float lanes and Highway in double lanes (erf: float lanes only).
namespace kv {

template <class D>
constexpr bool kFloatLanes = sizeof(hn::TFromD<D>) == 4;

// A formula literal as the scalar functor sees it in float32 (T(0.1) rounds to float), in the
// lanes' type: a comparison with a literal then gives the same answer on both paths.
template <class D>
HWY_INLINE hn::Vec<D> Literal(D d, double value) {
  return hn::Set(d, static_cast<hn::TFromD<D>>(static_cast<float>(value)));
}

// A transcendental intrinsic in float lanes: Sleef's float function where the target has FMA
// (AVX2, AVX3: the builds torch runs). SSE4 has none, and Sleef's SSE4 builds are less accurate
// than torch's on the same inputs (cos 0.908 ulp against 0.900, erf 1.98 against 1.09), so there
// the vector is widened and `in_double` (the function's double-lane version) rounded once.
template <class D, class V, class SleefF, class DoubleF>
HWY_INLINE V FloatLanes(D d, V x, SleefF sleef_f, DoubleF in_double) {
#if HWY_TARGET == HWY_SSE4
  const hn::Half<D> dh;
  const hn::Rebind<double, decltype(dh)> dd;
  const auto lo = hn::DemoteTo(dh, in_double(dd, hn::PromoteTo(dd, hn::LowerHalf(dh, x))));
  const auto hi = hn::DemoteTo(dh, in_double(dd, hn::PromoteTo(dd, hn::UpperHalf(dh, x))));
  return hn::Combine(d, hi, lo);
#else
  return sleef_f(x);
#endif
}

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// Above log(DBL_MAX) exp overflows; Highway's Exp is valid only up to 706 (and returns 0 for NaN).
// As for log below, a vector without such a lane (nearly all) skips the blends.
constexpr double kExpOverflow = 709.782712893384;

template <class D, class V>
HWY_INLINE V Exp(D d, V x) {
  if constexpr (kFloatLanes<D>) {
    return FloatLanes(d, x, [](V v) { return sleef::exp(v); }, [](auto dd, auto w) { return kv::Exp(dd, w); });
  } else {
    const V y = hn::Exp(d, x);
    if (HWY_LIKELY(hn::AllTrue(d, hn::Le(x, hn::Set(d, kExpOverflow))))) return y;  // NaN: false
    return hn::IfThenElse(hn::Gt(x, hn::Set(d, kExpOverflow)), hn::Set(d, kInf), hn::IfThenElse(hn::IsNaN(x), x, y));
  }
}

// expm1 as exp, and expm1(-0) = -0 (Highway gives +0).
template <class D, class V>
HWY_INLINE V Expm1(D d, V x) {
  if constexpr (kFloatLanes<D>) {
    return FloatLanes(d, x, [](V v) { return sleef::expm1(v); }, [](auto dd, auto w) { return kv::Expm1(dd, w); });
  } else {
    const V y = hn::Expm1(d, x);
    const auto usual = hn::And(hn::Le(x, hn::Set(d, kExpOverflow)), hn::Ne(x, hn::Zero(d)));  // NaN: false
    if (HWY_LIKELY(hn::AllTrue(d, usual))) return y;
    const V special = hn::IfThenElse(hn::Gt(x, hn::Set(d, kExpOverflow)), hn::Set(d, kInf), x);  // inf, NaN, +-0
    return hn::IfThenElse(usual, y, special);
  }
}

// Where Highway's log is undefined, the C library's answers: -inf at the pole, NaN below it, and
// inf and NaN returned as they came. Vectors with no such lane (nearly all) skip the blends.
template <class D, class V>
HWY_INLINE V Log(D d, V x) {
  if constexpr (kFloatLanes<D>) {
    return FloatLanes(d, x, [](V v) { return sleef::log(v); }, [](auto dd, auto w) { return kv::Log(dd, w); });
  } else {
    const auto defined = hn::And(hn::Gt(x, hn::Zero(d)), hn::Lt(x, hn::Set(d, kInf)));  // NaN: false
    const V y = hn::Log(d, x);
    if (HWY_LIKELY(hn::AllTrue(d, defined))) return y;
    const V pole = hn::Zero(d);
    const V below = hn::IfThenElse(hn::Eq(x, pole), hn::Set(d, -kInf), hn::Set(d, kNaN));
    return hn::IfThenElse(defined, y, hn::IfThenElse(hn::Le(x, pole), below, x));
  }
}

// Sleef's log1pf (and so torch's log1p) returns inf from 1e38 up, where log1p(x) is log(x) to far
// beyond float precision, and is 1 ulp off on subnormals; below 2^-24, x - x^2/2 rounds to x.
template <class D, class V>
HWY_INLINE V SleefLog1p(D d, V x) {
  const V y = hn::IfThenElse(hn::Lt(hn::Abs(x), hn::Set(d, 0x1p-24f)), x, sleef::log1p(x));
  const auto huge = hn::Gt(x, hn::Set(d, 1e38f));
  if (HWY_LIKELY(hn::AllFalse(d, huge))) return y;
  return hn::IfThenElse(huge, sleef::log(x), y);
}

template <class D, class V>
HWY_INLINE V Log1p(D d, V x) {
  if constexpr (kFloatLanes<D>) {
    return FloatLanes(d, x, [d](V v) { return SleefLog1p(d, v); }, [](auto dd, auto w) { return kv::Log1p(dd, w); });
  } else {
    const auto defined = hn::And(hn::Gt(x, hn::Set(d, -1.0)), hn::Lt(x, hn::Set(d, kInf)));
    const V y = hn::Log1p(d, x);
    if (HWY_LIKELY(hn::AllTrue(d, defined))) return y;
    const V pole = hn::Set(d, -1.0);
    const V below = hn::IfThenElse(hn::Eq(x, pole), hn::Set(d, -kInf), hn::Set(d, kNaN));
    return hn::IfThenElse(defined, y, hn::IfThenElse(hn::Le(x, pole), below, x));
  }
}

// Highway's sin and cos reduce the argument for |x| <= 39000 only; a vector with a lane beyond
// (or infinite, or NaN) is computed lane by lane with the C library's double functions.
constexpr double kTrigRange = 39000.0;

template <class D, class V, class F>
HWY_NOINLINE V LaneByLane(D d, V x, F f) {
  HWY_ALIGN hn::TFromD<D> xs[hn::MaxLanes(d)];
  hn::Store(x, d, xs);
  for (size_t i = 0; i < hn::Lanes(d); ++i) xs[i] = f(xs[i]);
  return hn::Load(d, xs);
}

// sin(-0) = -0 (Highway gives +0).
template <class D, class V>
HWY_INLINE V Sin(D d, V x) {
  if constexpr (kFloatLanes<D>) {
    return FloatLanes(d, x, [](V v) { return sleef::sin(v); }, [](auto dd, auto w) { return kv::Sin(dd, w); });
  } else {
    if (HWY_UNLIKELY(!hn::AllTrue(d, hn::Le(hn::Abs(x), hn::Set(d, kTrigRange))))) {
      return LaneByLane(d, x, [](double v) { return pm::sin(v); });
    }
    return hn::IfThenElse(hn::Eq(x, hn::Zero(d)), x, hn::Sin(d, x));
  }
}

template <class D, class V>
HWY_INLINE V Cos(D d, V x) {
  if constexpr (kFloatLanes<D>) {
    return FloatLanes(d, x, [](V v) { return sleef::cos(v); }, [](auto dd, auto w) { return kv::Cos(dd, w); });
  } else {
    if (HWY_UNLIKELY(!hn::AllTrue(d, hn::Le(hn::Abs(x), hn::Set(d, kTrigRange))))) {
      return LaneByLane(d, x, [](double v) { return pm::cos(v); });
    }
    return hn::Cos(d, x);
  }
}

// exp2 in double lanes: exp(x log 2), whose product is off by 2^-53 relatively, far below float's
// last bit (and exact at integers, as a power of two must be). Float lanes (a formula with a Sleef
// intrinsic too): Sleef's exp2f, 0.85 ulp off where the C library's exp2f, torch's here, is
// correctly rounded.
template <class D, class V>
HWY_INLINE V Exp2(D d, V x) {
  if constexpr (kFloatLanes<D>) {
    return FloatLanes(d, x, [](V v) { return sleef::exp2(v); }, [](auto dd, auto w) { return kv::Exp2(dd, w); });
  } else {
    return kv::Exp(d, hn::Mul(x, hn::Set(d, 0.6931471805599453)));
  }
}

// Float lanes: kiln's FusedTanh (vector_tanh-inl.h; Sleef's tanhf, torch's, computes in
// double-float pairs and was no faster than double lanes). Double lanes: Highway's, valid on every
// double, infinities and NaN included (tanh(+-inf) = +-1).
template <class D, class V>
HWY_INLINE V Tanh(D d, V x) {
  if constexpr (kFloatLanes<D>) {
    return FloatLanes(d, x, [d](V v) { return FusedTanh(d, v); }, [](auto dd, auto w) { return kv::Tanh(dd, w); });
  } else {
    return hn::Tanh(d, x);
  }
}

// Highway 1.0.3 has no erf. On AVX2 and AVX3, kiln's FusedErf (vector_erf-inl.h: Sleef's erf took
// 40 ms on 16M inputs, torch 63, FusedErf about 10). SSE4 has no FMA, which FusedErf's accuracy
// needs: Sleef's erf there (Sleef's double erf took 150 ms on 16M inputs). Below |x| = 1e-37
// Sleef's is up to 1.98 ulp off on SSE4; there erf(x) = 2/sqrt(pi) x to far beyond float
// precision, so lanes under kErfTiny (where the x^3 term is below 2^-33 of the result) take that
// product in double.
constexpr float kErfTiny = 0x1p-16f;

template <class D, class V>
HWY_INLINE V Erf(D d, V x) {
  static_assert(kFloatLanes<D>, "erf runs in float lanes (codegen/pointwise.py, SLEEF_INTRINSICS)");
#if HWY_TARGET == HWY_SSE4
  const V y = sleef::erf(x);
  const auto tiny = hn::Lt(hn::Abs(x), hn::Set(d, kErfTiny));
  if (HWY_LIKELY(hn::AllFalse(d, tiny))) return y;
  const V linear = LaneByLane(d, x, [](float v) { return static_cast<float>(v * 1.1283791670955126); });
  return hn::IfThenElse(tiny, linear, y);
#else
  return FusedErf(d, x);
#endif
}

// Intrinsics that run on Sleef in float lanes only, the same u10 functions torch's CPU kernels
// call (erfc: u15, torch's too). On SSE4, whose Sleef builds lack FMA, lane by lane with the
// scalar functor's function (the C library's double function, rounded once).
#define KILN_KV_SLEEF_ONLY(Name, fn)                                                                  \
  template <class D, class V>                                                                         \
  HWY_INLINE V Name(D d, V x) {                                                                       \
    static_assert(kFloatLanes<D>, #fn " runs in float lanes (codegen/pointwise.py, SLEEF_INTRINSICS)"); \
    if constexpr (HWY_TARGET == HWY_SSE4) {                                                           \
      return LaneByLane(d, x, [](float v) { return pm::fn(v); });                                     \
    } else {                                                                                          \
      return sleef::fn(x);                                                                            \
    }                                                                                                 \
  }
KILN_KV_SLEEF_ONLY(Log2, log2)
KILN_KV_SLEEF_ONLY(Log10, log10)
KILN_KV_SLEEF_ONLY(Asin, asin)
KILN_KV_SLEEF_ONLY(Acos, acos)
KILN_KV_SLEEF_ONLY(Atan, atan)
KILN_KV_SLEEF_ONLY(SleefSinh, sinh)
KILN_KV_SLEEF_ONLY(SleefCosh, cosh)
KILN_KV_SLEEF_ONLY(Tan, tan)
KILN_KV_SLEEF_ONLY(SleefAsinh, asinh)
KILN_KV_SLEEF_ONLY(SleefAcosh, acosh)
KILN_KV_SLEEF_ONLY(Atanh, atanh)
KILN_KV_SLEEF_ONLY(Erfc, erfc)
#undef KILN_KV_SLEEF_ONLY

// Sleef's asinhf and acoshf overflow to inf from 2^64 up (they square x). Beyond 2^62,
// asinh(x) = sign(x) (log|x| + log 2) and acosh(x) = log x + log 2 to far beyond float precision.
constexpr float kArcHyperbolicLarge = 0x1p62f;
constexpr float kLog2f = 0.693147182f;

template <class D, class V>
HWY_INLINE V Asinh(D d, V x) {
  const V y = SleefAsinh(d, x);
  if constexpr (HWY_TARGET == HWY_SSE4) return y;  // lane by lane there: right at every x
  const auto large = hn::Gt(hn::Abs(x), hn::Set(d, kArcHyperbolicLarge));  // NaN: false
  if (HWY_LIKELY(hn::AllFalse(d, large))) return y;
  return hn::IfThenElse(large, hn::CopySign(hn::Add(kv::Log(d, hn::Abs(x)), hn::Set(d, kLog2f)), x), y);
}

template <class D, class V>
HWY_INLINE V Acosh(D d, V x) {
  const V y = SleefAcosh(d, x);
  if constexpr (HWY_TARGET == HWY_SSE4) return y;
  const auto large = hn::Gt(x, hn::Set(d, kArcHyperbolicLarge));
  if (HWY_LIKELY(hn::AllFalse(d, large))) return y;
  return hn::IfThenElse(large, hn::Add(kv::Log(d, x), hn::Set(d, kLog2f)), y);
}

// Sleef's sinhf and coshf (torch's too) overflow from |x| = 88.72, where exp(x) does, though the
// result is finite up to 89.41: vectors with such a lane (or an infinite or NaN one) go lane by
// lane with the scalar functor's function.
constexpr float kHyperbolicLarge = 88.5f;

template <class D, class V, class SleefF, class ScalarF>
HWY_INLINE V HyperbolicBelowOverflow(D d, V x, SleefF sleef_f, ScalarF scalar_f) {
  if (HWY_UNLIKELY(!hn::AllTrue(d, hn::Lt(hn::Abs(x), hn::Set(d, kHyperbolicLarge))))) {
    return LaneByLane(d, x, scalar_f);
  }
  return sleef_f(d, x);
}

template <class D, class V>
HWY_INLINE V Sinh(D d, V x) {
  return HyperbolicBelowOverflow(d, x, [](D dd, V v) { return SleefSinh(dd, v); }, [](float v) { return pm::sinh(v); });
}

template <class D, class V>
HWY_INLINE V Cosh(D d, V x) {
  return HyperbolicBelowOverflow(d, x, [](D dd, V v) { return SleefCosh(dd, v); }, [](float v) { return pm::cosh(v); });
}

template <class D, class V, class F>
HWY_NOINLINE V LaneByLane2(D d, V a, V b, F f) {
  HWY_ALIGN hn::TFromD<D> as[hn::MaxLanes(d)];
  HWY_ALIGN hn::TFromD<D> bs[hn::MaxLanes(d)];
  hn::Store(a, d, as);
  hn::Store(b, d, bs);
  for (size_t i = 0; i < hn::Lanes(d); ++i) as[i] = f(as[i], bs[i]);
  return hn::Load(d, as);
}

// The two-argument intrinsics in double lanes (codegen/pointwise.py, DOUBLE_ONLY_INTRINSICS):
// float32 inputs widened to double make them nearly exact there, so the float32 result is the
// correctly rounded one (torch's Sleef hypotf is 0.5 ulp, its atan2f 1 ulp). A vector with a lane
// outside the range the shortcut covers (infinities, NaN, zeros, magnitudes whose squares or
// quotients would leave double's range) is computed lane by lane with the C library's double
// function: rare, and the IEEE answers (hypot(inf, nan) = inf, atan2's signed zeros) are its.
constexpr double kWideTiny = 1e-150, kWideHuge = 1e150;

template <class D, class V>
HWY_INLINE V Hypot(D d, V x, V y) {
  static_assert(!kFloatLanes<D>, "hypot runs in double lanes (codegen/pointwise.py, DOUBLE_ONLY_INTRINSICS)");
  const V big = hn::Max(hn::Abs(x), hn::Abs(y));
  const auto usual = hn::Or(hn::And(hn::Gt(big, hn::Set(d, kWideTiny)), hn::Lt(big, hn::Set(d, kWideHuge))),
                            hn::Eq(big, hn::Zero(d)));  // NaN: false
  if (HWY_UNLIKELY(!hn::AllTrue(d, usual))) {
    return LaneByLane2(d, x, y, [](double a, double b) { return pm::hypot(a, b); });
  }
  // The smaller square may underflow only where it is below the larger's last bit.
  return hn::Sqrt(hn::Add(hn::Mul(x, x), hn::Mul(y, y)));
}

// atan2(y, x): atan(y / x), plus pi with y's sign in the left half plane.
template <class D, class V>
HWY_INLINE V Atan2(D d, V y, V x) {
  static_assert(!kFloatLanes<D>, "atan2 runs in double lanes (codegen/pointwise.py, DOUBLE_ONLY_INTRINSICS)");
  const V q = hn::Div(y, x);
  const V aq = hn::Abs(q);
  const auto finite = hn::And(hn::IsFinite(x), hn::IsFinite(y));
  const auto nonzero = hn::And(hn::Ne(x, hn::Zero(d)), hn::Ne(y, hn::Zero(d)));
  const auto in_range = hn::And(hn::Gt(aq, hn::Set(d, kWideTiny)), hn::Lt(aq, hn::Set(d, kWideHuge)));
  if (HWY_UNLIKELY(!hn::AllTrue(d, hn::And(hn::And(finite, nonzero), in_range)))) {
    return LaneByLane2(d, y, x, [](double a, double b) { return pm::atan2(a, b); });
  }
  const V r = hn::Atan(d, q);
  const V pi = hn::CopySign(hn::Set(d, 3.141592653589793), y);
  return hn::IfThenElse(hn::Lt(x, hn::Zero(d)), hn::Add(r, pi), r);
}

// copysign(a, b): a's magnitude, b's sign bit (NaN's included): exact in either lanes.
template <class D, class V>
HWY_INLINE V CopySign(D, V a, V b) {
  return hn::CopySign(a, b);
}

// fma(a, b, c): a * b + c rounded once, exact in either lanes. Targets without the FMA instruction
// (SSE4, the emulated baseline) have Highway's MulAdd round twice, so there it is the C library's
// fma lane by lane: the scalar functor's bits on every target.
template <class D, class V>
HWY_INLINE V Fma(D d, V a, V b, V c) {
#if HWY_NATIVE_FMA
  (void)d;
  return hn::MulAdd(a, b, c);
#else
  HWY_ALIGN hn::TFromD<D> as[hn::MaxLanes(d)];
  HWY_ALIGN hn::TFromD<D> bs[hn::MaxLanes(d)];
  HWY_ALIGN hn::TFromD<D> cs[hn::MaxLanes(d)];
  hn::Store(a, d, as);
  hn::Store(b, d, bs);
  hn::Store(c, d, cs);
  for (size_t i = 0; i < hn::Lanes(d); ++i) as[i] = pm::fma(as[i], bs[i], cs[i]);
  return hn::Load(d, as);
#endif
}

// pow in float lanes: torch's special exponents (pm::pow_scalar: 2 and 3 as products, 1 and 0, +-0.5
// through sqrt, -1 and -2 as reciprocals) with exact operations, the scalar functor's bits; any
// other exponent as torch's Vectorized<float>::pow: SLEEF's vector powf on AVX2 and AVX-512 (x ** 4
// gives torch's bits: pytorch/examples regression/main.py's features), the C library's powf lane
// by lane elsewhere (torch's default build maps std::pow). Under clang the C library's too: clang
// 14 passed SLEEF's second vector argument so that only lane 0 arrived (the sanitizer build), which
// GCC does not; the unary SLEEF calls are unaffected.
template <class D, class V>
HWY_INLINE V PowGeneral(D d, V x, V e) {
  static_assert(kFloatLanes<D>, "pow runs in float lanes (codegen/pointwise.py, SLEEF_INTRINSICS)");
#if !defined(__clang__) && (HWY_TARGET == HWY_AVX2 || HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL)
  return sleef::pow(x, e);
#endif
  HWY_ALIGN float xs[hn::MaxLanes(d)];
  HWY_ALIGN float es[hn::MaxLanes(d)];
  hn::Store(x, d, xs);
  hn::Store(e, d, es);
  for (size_t i = 0; i < hn::Lanes(d); ++i) xs[i] = pm::pow(xs[i], es[i]);  // no special exponents
  return hn::Load(d, xs);
}

// pow(Tensor, Tensor): pow itself (SLEEF's, as torch's).
template <class D, class V>
HWY_INLINE V Pow(D d, V x, V e) {
  return PowGeneral(d, x, e);
}

// pow_scalar with a tensor of exponents (lane by lane, as the scalar functor).
template <class D, class V>
HWY_INLINE V PowScalar(D d, V x, V e) {
  const V one = hn::Set(d, 1.0f), square = hn::Mul(x, x), root = hn::Sqrt(x);
  V r = PowGeneral(d, x, e);
  r = hn::IfThenElse(hn::Eq(e, hn::Set(d, 2.0f)), square, r);
  r = hn::IfThenElse(hn::Eq(e, hn::Set(d, 1.0f)), x, r);
  r = hn::IfThenElse(hn::Eq(e, hn::Set(d, 0.0f)), one, r);
  r = hn::IfThenElse(hn::Eq(e, hn::Set(d, 3.0f)), hn::Mul(square, x), r);
  r = hn::IfThenElse(hn::Eq(e, hn::Set(d, 0.5f)), root, r);
  r = hn::IfThenElse(hn::Eq(e, hn::Set(d, -0.5f)), hn::Div(one, root), r);
  r = hn::IfThenElse(hn::Eq(e, hn::Set(d, -1.0f)), hn::Div(one, x), r);
  return hn::IfThenElse(hn::Eq(e, hn::Set(d, -2.0f)), hn::Div(one, square), r);
}

// pow with one exponent for every lane (a Scalar): the special exponents are a C++ branch.
template <class D, class V>
HWY_INLINE V PowUniform(D d, V x, float e) {
  const V one = hn::Set(d, 1.0f);
  if (e == 2.0f) return hn::Mul(x, x);
  if (e == 1.0f) return x;
  if (e == 0.0f) return one;
  if (e == 3.0f) return hn::Mul(hn::Mul(x, x), x);
  if (e == 0.5f) return hn::Sqrt(x);
  if (e == -0.5f) return hn::Div(one, hn::Sqrt(x));
  if (e == -1.0f) return hn::Div(one, x);
  if (e == -2.0f) return hn::Div(one, hn::Mul(x, x));
  return PowGeneral(d, x, hn::Set(d, e));
}

// IEEE square root: exact, and sqrt(-0) = -0.
template <class D, class V>
HWY_INLINE V Sqrt(D d, V x) {
  return hn::Sqrt(x);
}

// The exact intrinsics (float lanes: the scalar functor's bits). abs clears the sign (abs(-0) is
// +0); round is half to even, as nearbyint; a NaN operand of minimum/maximum wins, and otherwise
// the comparison picks as pm::minimum's `a < b ? a : b` does (so at -0 vs +0, b).
template <class D, class V>
HWY_INLINE V Abs(D, V x) { return hn::Abs(x); }
template <class D, class V>
HWY_INLINE V Floor(D, V x) { return hn::Floor(x); }
template <class D, class V>
HWY_INLINE V Ceil(D, V x) { return hn::Ceil(x); }
template <class D, class V>
HWY_INLINE V Trunc(D, V x) { return hn::Trunc(x); }
template <class D, class V>
HWY_INLINE V Round(D, V x) { return hn::Round(x); }
template <class D, class V>
HWY_INLINE V Minimum(D, V a, V b) {
  return hn::IfThenElse(hn::IsNaN(a), a, hn::IfThenElse(hn::IsNaN(b), b, hn::IfThenElse(hn::Lt(a, b), a, b)));
}
template <class D, class V>
HWY_INLINE V Maximum(D, V a, V b) {
  return hn::IfThenElse(hn::IsNaN(a), a, hn::IfThenElse(hn::IsNaN(b), b, hn::IfThenElse(hn::Gt(a, b), a, b)));
}

// A value of the Scalars alone (alpha, 1 - weight), computed once in C++ in the compute dtype as
// the scalar functor computes it, in every lane; and such a condition as a mask.
template <class D>
HWY_INLINE hn::Vec<D> Uniform(D d, float value) {
  return hn::Set(d, static_cast<hn::TFromD<D>>(value));
}
template <class D>
HWY_INLINE hn::Mask<D> UniformMask(D d, bool value) {
  return hn::Eq(hn::Set(d, hn::TFromD<D>(value ? 1 : 0)), hn::Set(d, hn::TFromD<D>(1)));
}

// A bool used as a number (1 or 0), and a number used as a bool (nonzero), as in C++.
template <class D, class M>
HWY_INLINE hn::Vec<D> FromBool(D d, M m) {
  return hn::IfThenElseZero(m, hn::Set(d, hn::TFromD<D>(1)));
}
// a != b as C++ has it: true when either is NaN (Highway's Ne is an ordered compare on AVX2 and
// AVX3, false there).
template <class V>
HWY_INLINE auto Ne(V a, V b) {
  return hn::Not(hn::Eq(a, b));
}
template <class D, class V>
HWY_INLINE hn::Mask<D> ToBool(D d, V v) {
  return kv::Ne(v, hn::Zero(d));  // NaN is true, as in C++
}

}  // namespace kv

// A run's elements as float lanes: float32 as stored, bfloat16 widened in registers (its bits are a
// float32's upper half).
template <class DF>
HWY_INLINE hn::Vec<DF> LoadFloats(DF df, const float* p) {
  return hn::LoadU(df, p);
}
template <class DF>
HWY_INLINE hn::Vec<DF> LoadFloats(DF df, const BFloat16* p) {
  const hn::Rebind<uint16_t, DF> d16;
  const hn::RebindToUnsigned<DF> du;
  return hn::BitCast(df, hn::ShiftLeft<16>(hn::PromoteTo(du, hn::LoadU(d16, reinterpret_cast<const uint16_t*>(p)))));
}

// Float lanes stored to a run: bfloat16 rounded to nearest even, NaN kept quiet with its upper
// payload, as half.h's float_to_bfloat16_bits (Highway's DemoteTo truncates).
template <class DF>
HWY_INLINE void StoreFloats(hn::Vec<DF> v, DF df, float* p) {
  hn::StoreU(v, df, p);
}
template <class DF>
HWY_INLINE void StoreFloats(hn::Vec<DF> v, DF, BFloat16* p) {
  const hn::RebindToUnsigned<DF> du;
  const hn::RebindToSigned<DF> di;
  const hn::Rebind<uint16_t, DF> d16;
  const auto u = hn::BitCast(du, v);
  const auto upper = hn::ShiftRight<16>(u);
  const auto rounded = hn::ShiftRight<16>(hn::Add(u, hn::Add(hn::Set(du, 0x7FFFu), hn::And(upper, hn::Set(du, 1u)))));
  const auto quiet_nan = hn::Or(upper, hn::Set(du, 0x40u));
  const auto is_nan = hn::Gt(hn::BitCast(di, hn::And(u, hn::Set(du, 0x7FFFFFFFu))), hn::Set(di, 0x7F800000));
  const auto bits = hn::IfThenElse(is_nan, hn::BitCast(di, quiet_nan), hn::BitCast(di, rounded));  // 0 to 0xFFFF
  hn::StoreU(hn::DemoteTo(d16, bits), d16, reinterpret_cast<uint16_t*>(p));
}

// A lambda GCC must inline: the per-vector lambdas below wrap a whole formula (gelu's erf is ~170
// instructions), which GCC otherwise calls once per vector, reloading every constant of the
// polynomials in each call (gelu ran 1.6x torch's time so).
#define KILN_LAMBDA_INLINE __attribute__((always_inline))

// out[i] = formula(in[i]) for a contiguous run of float32 or bfloat16 (computed in float32),
// computed in `Lanes` (double or float, see the top of this file); in == out is fine: each vector
// is read before it is written. `vector` is the formula over vectors, `scalar` the scalar functor.
template <typename Lanes, class VectorF, class ScalarF, typename S>
HWY_INLINE void unary_float_run(VectorF vector, ScalarF scalar, const S* in, S* out, int64_t n) {
#if HWY_TARGET == HWY_SCALAR || HWY_TARGET == HWY_EMU128
  // Highway's portable baseline (SCALAR with GCC 12, EMU128 with clang): this CPU has none of the
  // vector targets kiln compiles, so the scalar functor, as for float64.
  for (int64_t i = 0; i < n; ++i) out[i] = S(scalar(static_cast<float>(in[i])));
#else
  static_assert(std::is_same<Lanes, double>::value || std::is_same<Lanes, float>::value, "double or float lanes");
  const hn::ScalableTag<Lanes> d;           // a full vector of the lanes' type
  const hn::Rebind<float, decltype(d)> df;  // as many floats (half a vector for double lanes)
  const auto one = [&](hn::Vec<decltype(df)> x) KILN_LAMBDA_INLINE {
    if constexpr (std::is_same<Lanes, float>::value) {
      return vector(d, x);
    } else {
      return hn::DemoteTo(df, vector(d, hn::PromoteTo(d, x)));
    }
  };
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  int64_t i = 0;
  // Two vectors per iteration (as torch's loop): two independent chains for the out-of-order core,
  // half the loop overhead for the cheap formulas.
  for (; i + 2 * lanes <= n; i += 2 * lanes) {
    const auto x0 = LoadFloats(df, in + i), x1 = LoadFloats(df, in + i + lanes);
    StoreFloats(one(x0), df, out + i);
    StoreFloats(one(x1), df, out + i + lanes);
  }
  if (i + lanes <= n) {
    StoreFloats(one(LoadFloats(df, in + i)), df, out + i);
    i += lanes;
  }
  if (i < n) {
    // The last partial vector goes through the same code, from a padded copy: an element's
    // result never depends on where the run (or a thread's share of it) starts or ends.
    HWY_ALIGN S buffer[hn::MaxLanes(df)] = {};
    for (int64_t k = 0; k < n - i; ++k) buffer[k] = in[i + k];
    StoreFloats(one(LoadFloats(df, buffer)), df, buffer);
    for (int64_t k = 0; k < n - i; ++k) out[i + k] = buffer[k];
  }
  (void)scalar;
#endif
}

// out[i] = formula(a[i * a_step], b[i * b_step]) for a run of float32 or bfloat16, a_step and
// b_step 1 (contiguous) or 0 (one value broadcast), computed in `Lanes` as unary_float_run; out may
// be a or b.
template <typename Lanes, class VectorF, class ScalarF, typename S>
HWY_INLINE void binary_float_run(VectorF vector, ScalarF scalar, const S* a, int64_t a_step, const S* b,
                                 int64_t b_step, S* out, int64_t n) {
#if HWY_TARGET == HWY_SCALAR || HWY_TARGET == HWY_EMU128
  for (int64_t i = 0; i < n; ++i)
    out[i] = S(scalar(static_cast<float>(a[i * a_step]), static_cast<float>(b[i * b_step])));
#else
  static_assert(std::is_same<Lanes, double>::value || std::is_same<Lanes, float>::value, "double or float lanes");
  if (n <= 0) return;
  const hn::ScalableTag<Lanes> d;
  const hn::Rebind<float, decltype(d)> df;
  using VF = hn::Vec<decltype(df)>;
  const auto one = [&](VF x, VF y) KILN_LAMBDA_INLINE {
    if constexpr (std::is_same<Lanes, float>::value) {
      return vector(d, x, y);
    } else {
      return hn::DemoteTo(df, vector(d, hn::PromoteTo(d, x), hn::PromoteTo(d, y)));
    }
  };
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  // A broadcast operand is loaded once; the loop reads it from a register.
  const VF a_one = hn::Set(df, static_cast<float>(*a)), b_one = hn::Set(df, static_cast<float>(*b));
  int64_t i = 0;
  // The whole vectors, two per iteration as unary_float_run, in a loop compiled for each layout of
  // the operands (both contiguous, or one broadcast): no test of a step per vector.
  const auto whole_vectors = [&](auto a_contiguous, auto b_contiguous) KILN_LAMBDA_INLINE {
    const auto load = [&](int64_t at, auto contiguous, const S* p, VF broadcast) KILN_LAMBDA_INLINE {
      if constexpr (decltype(contiguous)::value) {
        return LoadFloats(df, p + at);
      } else {
        (void)p;
        return broadcast;
      }
    };
    for (; i + 2 * lanes <= n; i += 2 * lanes) {
      const VF x0 = load(i, a_contiguous, a, a_one), x1 = load(i + lanes, a_contiguous, a, a_one);
      const VF y0 = load(i, b_contiguous, b, b_one), y1 = load(i + lanes, b_contiguous, b, b_one);
      StoreFloats(one(x0, y0), df, out + i);
      StoreFloats(one(x1, y1), df, out + i + lanes);
    }
    if (i + lanes <= n) {
      StoreFloats(one(load(i, a_contiguous, a, a_one), load(i, b_contiguous, b, b_one)), df, out + i);
      i += lanes;
    }
  };
  if (a_step != 0 && b_step != 0) {
    whole_vectors(std::true_type{}, std::true_type{});
  } else if (a_step != 0) {
    whole_vectors(std::true_type{}, std::false_type{});
  } else if (b_step != 0) {
    whole_vectors(std::false_type{}, std::true_type{});
  } else {
    // Both broadcast: every element is the same value (the padded tail below gives it again).
    const VF same = one(a_one, b_one);
    for (; i + lanes <= n; i += lanes) StoreFloats(same, df, out + i);
  }
  if (i < n) {
    // The last partial vector from padded copies, as in unary_float_run.
    HWY_ALIGN S xa[hn::MaxLanes(df)] = {};
    HWY_ALIGN S xb[hn::MaxLanes(df)] = {};
    for (int64_t k = 0; k < n - i; ++k) {
      xa[k] = a[(i + k) * a_step];
      xb[k] = b[(i + k) * b_step];
    }
    StoreFloats(one(LoadFloats(df, xa), LoadFloats(df, xb)), df, xa);
    for (int64_t k = 0; k < n - i; ++k) out[i + k] = xa[k];
  }
  (void)scalar;
#endif
}

// out[i] = formula(a[i * a_step], b[i * b_step], c[i * c_step]) for a float32 run of a formula of
// exact operations (float lanes), steps 1 or 0 as binary_float_run; `a` may be bool (where's
// condition), read as 1 or 0.
template <class VectorF, class ScalarF, typename A>
HWY_INLINE void ternary_float_run(VectorF vector, ScalarF scalar, const A* a, int64_t a_step, const float* b,
                                  int64_t b_step, const float* c, int64_t c_step, float* out, int64_t n) {
#if HWY_TARGET == HWY_SCALAR || HWY_TARGET == HWY_EMU128
  for (int64_t i = 0; i < n; ++i) out[i] = scalar(a[i * a_step], b[i * b_step], c[i * c_step]);
#else
  static_assert(std::is_same<A, bool>::value || std::is_same<A, float>::value, "a bool or float first operand");
  if (n <= 0) return;
  const hn::ScalableTag<float> d;
  using V = hn::Vec<decltype(d)>;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  // The first operand as float lanes: bools widened to 1.0 or 0.0.
  const auto load_a = [&](const A* p) -> V {
    if constexpr (std::is_same<A, bool>::value) {
      const hn::Rebind<uint8_t, decltype(d)> d8;
      const hn::Rebind<int32_t, decltype(d)> di;
      return hn::ConvertTo(d, hn::PromoteTo(di, hn::LoadU(d8, reinterpret_cast<const uint8_t*>(p))));
    } else {
      return hn::LoadU(d, p);
    }
  };
  const V a_one = hn::Set(d, static_cast<float>(*a)), b_one = hn::Set(d, *b), c_one = hn::Set(d, *c);
  int64_t i = 0;
  for (; i + lanes <= n; i += lanes) {
    const V x = a_step != 0 ? load_a(a + i) : a_one;
    const V y = b_step != 0 ? hn::LoadU(d, b + i) : b_one;
    const V z = c_step != 0 ? hn::LoadU(d, c + i) : c_one;
    hn::StoreU(vector(d, x, y, z), d, out + i);
  }
  if (i < n) {
    HWY_ALIGN float xa[hn::MaxLanes(d)] = {};
    HWY_ALIGN float xb[hn::MaxLanes(d)] = {};
    HWY_ALIGN float xc[hn::MaxLanes(d)] = {};
    for (int64_t k = 0; k < n - i; ++k) {
      xa[k] = static_cast<float>(a[(i + k) * a_step]);
      xb[k] = b[(i + k) * b_step];
      xc[k] = c[(i + k) * c_step];
    }
    hn::Store(vector(d, hn::Load(d, xa), hn::Load(d, xb), hn::Load(d, xc)), d, xa);
    for (int64_t k = 0; k < n - i; ++k) out[i + k] = xa[k];
  }
  (void)scalar;
#endif
}

}  // namespace HWY_NAMESPACE
}  // namespace cpu
}  // namespace kiln
HWY_AFTER_NAMESPACE();

#endif  // KILN_CPU_VECTOR_FORMULA_INL_H_
