// erf over a full Highway vector of float on targets with FMA (AVX2, AVX3): kiln's own, about four
// times faster than Sleef's erff (which torch.erf calls; it computes in double-float pairs) and
// within torch's error bound on the same inputs (tests/python/test_vector_formulas.py; all 2^32
// inputs measured in docs/ARCHITECTURE.md). gelu spends nearly all its time here.
//
// The scheme is that of Arm's optimized-routines erff, with polynomials fitted by tools/fit_erf.py:
//   |x| <  kErfSplit:  erf(x) = x + x * P(x^2)
//   |x| >= kErfSplit:  erf(x) = sign(x) * (1 - exp(-q)),  q = a + a * Q(a),  a = min(|x|, 4)
// Both halves are computed for every lane and blended. q is carried as a sum of two floats (qh +
// ql, error-free transformations) so that its rounding does not reach the result, and exp(-q) is
// computed here too: q's range needs none of a general expf's special cases. Included by vector_formula-inl.h, once per target (hence
// no #pragma once).
#include <hwy/highway.h>


#if defined(KILN_CPU_VECTOR_ERF_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef KILN_CPU_VECTOR_ERF_INL_H_
#undef KILN_CPU_VECTOR_ERF_INL_H_
#else
#define KILN_CPU_VECTOR_ERF_INL_H_
#endif

HWY_BEFORE_NAMESPACE();
namespace kiln {
namespace cpu {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// Where the polynomial in x^2 hands over to exp: erfc(0.921875) = 0.19, so exp's rounding error
// reaches the result divided by about four.
constexpr float kErfSplit = 0.921875f;
// tools/fit_erf.py's output (lowest degree first).
constexpr float kErfP[] = {0x1.06eba8p-3f,   -0x1.812744p-2f, 0x1.ce2e3p-4f,   -0x1.b811c2p-6f,
                           0x1.54e656p-8f,   -0x1.ab48fep-11f, 0x1.603b14p-14f};
constexpr float kErfQ[] = {0x1.07796cp-3f,   0x1.4531fcp-1f,   0x1.b32dp-4f,    -0x1.856b6p-6f,
                           0x1.ddcf42p-9f,   -0x1.533e1ep-12f, 0x1.7b490ap-17f};
constexpr float kErfExp[] = {0x1p+0f,        0x1p+0f,         0x1.fffffap-2f,  0x1.55540ap-3f,
                             0x1.55589ap-5f, 0x1.126d0cp-7f,  0x1.6ab98p-10f};
// ln 2 = kLn2High + kLn2Low, kLn2High with 9 significant bits (n * kLn2High is exact for |n| < 2^15).
constexpr float kLn2High = 0x1.63p-1f;
constexpr float kLn2Low = -0x1.bd0106p-13f;

// c[0] + c[1] t + ... + c[6] t^6, by Horner's rule with fused multiply-adds.
template <class D, class V>
HWY_INLINE V ErfPolynomial(D d, const float (&c)[7], V t) {
  V r = hn::Set(d, c[6]);
  for (int k = 5; k >= 0; --k) r = hn::MulAdd(r, t, hn::Set(d, c[k]));
  return r;
}

// exp(-(qh + ql)) for qh in [0.9, 19] and |ql| <= 2^-20: n = round(-qh / ln 2), r = -qh - n ln 2 -
// ql (ln 2 in two parts: the first difference is exact, ql joins the small one), exp(r) by a
// polynomial on |r| <= ln(2)/2, times 2^n by adding n to the exponent (the result is normal).
template <class D, class V>
HWY_INLINE V ExpOfNegativeSum(D d, V qh, V ql) {
  const hn::RebindToSigned<D> di;
  const V n = hn::Round(hn::Mul(qh, hn::Set(d, -1.4426950408889634f)));
  const V r = hn::Sub(hn::NegMulSub(n, hn::Set(d, kLn2High), qh), hn::MulAdd(n, hn::Set(d, kLn2Low), ql));
  const V p = ErfPolynomial(d, kErfExp, r);
  return hn::BitCast(d, hn::Add(hn::BitCast(di, p), hn::ShiftLeft<23>(hn::ConvertTo(di, n))));
}

template <class D, class V>
HWY_INLINE V FusedErf(D d, V x) {
  const V one = hn::Set(d, 1.0f);
  // Near zero: x + x * P(x^2), one rounding at the end (subnormal x too: x^2 underflows to 0).
  const V near_zero = hn::MulAdd(ErfPolynomial(d, kErfP, hn::Mul(x, x)), x, x);
  // Away from zero: 1 - exp(-q). q = a + p with p = a * Q(a) held exactly as p + pl, and a + p
  // split into qh + ql (Fast2Sum: a >= p wherever exp(-q) is large enough for ql to matter).
  const V a = hn::Min(hn::Abs(x), hn::Set(d, 4.0f));
  const V poly = ErfPolynomial(d, kErfQ, a);
  const V p = hn::Mul(a, poly);
  const V pl = hn::MulSub(a, poly, p);
  const V qh = hn::Add(a, p);
  const V ql = hn::Add(hn::Sub(p, hn::Sub(qh, a)), pl);
  const V away = hn::CopySign(hn::Sub(one, ExpOfNegativeSum(d, qh, ql)), x);
  const V y = hn::IfThenElse(hn::Lt(hn::Abs(x), hn::Set(d, kErfSplit)), near_zero, away);
  return hn::IfThenElse(hn::IsNaN(x), hn::Add(x, x), y);  // Min(NaN, 4) gave 4; x + x is quiet
}

}  // namespace HWY_NAMESPACE
}  // namespace cpu
}  // namespace kiln
HWY_AFTER_NAMESPACE();

#endif  // KILN_CPU_VECTOR_ERF_INL_H_
