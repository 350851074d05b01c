// tanh over a full Highway vector of float on targets with FMA (AVX2, AVX3): kiln's own, about
// three times faster than computing it in double lanes (docs/ARCHITECTURE.md) and twice as fast as
// Sleef's tanhf (torch's: double-float arithmetic), within torch's error bound on the same inputs
// (tests/python/test_vector_formulas.py). Included by vector_formula-inl.h, once per target (hence
// no #pragma once); it reuses vector_erf-inl.h's polynomial evaluation and exp.
//
//   |x| <  kTanhSplit:  tanh(x) = x + x^3 R(x^2)        R fitted by tools/fit_tanh.py
//   |x| >= kTanhSplit:  tanh(x) = sign(x) (1 - r),  r = 2t / (1 + t),  t = exp(-2 min(|x|, 9.5))
// Both are computed for every lane and blended. Near zero the correction x^3 R is at most a
// quarter of the result, so its rounding reaches the result divided by four; away from zero r is
// below 1/4 (that is where the split lies), and so are its errors in units of the result's last
// place. 2|x| is exact, so t is exp's own error, and at 9.5 tanh is 1 in float.
#include <hwy/highway.h>

#include "runtime/kernels/cpu/vector_erf-inl.h"

#if defined(KILN_CPU_VECTOR_TANH_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef KILN_CPU_VECTOR_TANH_INL_H_
#undef KILN_CPU_VECTOR_TANH_INL_H_
#else
#define KILN_CPU_VECTOR_TANH_INL_H_
#endif

HWY_BEFORE_NAMESPACE();
namespace kiln {
namespace cpu {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// 63/64, where 2t / (1 + t) = 0.245.
constexpr float kTanhSplit = 0.984375f;
// Past it exp(-2|x|) is below half an ulp of 1: tanh rounds to 1.
constexpr float kTanhSaturated = 9.5f;
// tools/fit_tanh.py's output (lowest degree first); relative error of tanh 3.7e-9.
constexpr float kTanhR[] = {-0x1.55554p-2f, 0x1.110c9cp-3f,  -0x1.b9772p-5f, 0x1.60944p-6f,
                            -0x1.062cb2p-7f, 0x1.3378a2p-9f, -0x1.8690ep-12f};

// 1 / v for v in [1, 1.14]: the hardware's estimate refined by Newton's step, which squares its
// error: 2^-28 from AVX-512's 14-bit estimate, 2^-24 from AVX2's 12-bit one, so AVX2 takes a second
// step. A division costs several times as much (it was a quarter of FusedTanh's time).
template <class D, class V>
HWY_INLINE V Reciprocal(D d, V v) {
  const V one = hn::Set(d, 1.0f);
  V r = hn::ApproximateReciprocal(v);
  r = hn::MulAdd(r, hn::NegMulAdd(v, r, one), r);
#if HWY_TARGET != HWY_AVX3 && HWY_TARGET != HWY_AVX3_DL
  r = hn::MulAdd(r, hn::NegMulAdd(v, r, one), r);
#endif
  return r;
}

template <class D, class V>
HWY_INLINE V FusedTanh(D d, V x) {
  const V one = hn::Set(d, 1.0f);
  // Near zero (subnormal x too: x^2 underflows to 0 and x comes back).
  const V x2 = hn::Mul(x, x);
  const V near_zero = hn::MulAdd(hn::Mul(x, x2), ErfPolynomial(d, kTanhR, x2), x);
  // Away from zero (infinities saturate at 9.5).
  const V a = hn::Min(hn::Abs(x), hn::Set(d, kTanhSaturated));
  const V t = ExpOfNegativeSum(d, hn::Add(a, a), hn::Zero(d));
  const V r = hn::Mul(hn::Add(t, t), Reciprocal(d, hn::Add(one, t)));
  const V away = hn::Sub(one, r);
  // tanh is odd: x's sign on both (near_zero is +0 at x = -0).
  const V y = hn::CopySign(hn::IfThenElse(hn::Lt(hn::Abs(x), hn::Set(d, kTanhSplit)), near_zero, away), x);
  return hn::IfThenElse(hn::IsNaN(x), hn::Add(x, x), y);  // Min(NaN, 9.5) gave 9.5; x + x is quiet
}

}  // namespace HWY_NAMESPACE
}  // namespace cpu
}  // namespace kiln
HWY_AFTER_NAMESPACE();

#endif  // KILN_CPU_VECTOR_TANH_INL_H_
