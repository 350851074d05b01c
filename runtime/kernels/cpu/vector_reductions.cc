// The entry points of runtime/kernels/cpu/vector_reductions.h: hwy/foreach_target.h compiles
// the loops of vector_reduce-inl.h once per target (vector_targets.h), HWY_EXPORT tables them,
// and HWY_DYNAMIC_DISPATCH calls the best this CPU supports.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "runtime/kernels/cpu/vector_reductions.cc"
#include "runtime/kernels/cpu/vector_targets.h"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include "runtime/kernels/cpu/vector_reduce-inl.h"

HWY_BEFORE_NAMESPACE();
namespace kiln {
namespace cpu {
namespace HWY_NAMESPACE {

double SumF32(const float* x, int64_t n) { return SumRun(x, n); }
double SumF64(const double* x, int64_t n) { return SumRun(x, n); }
double SumBF16(const BFloat16* x, int64_t n) { return SumRun(x, n); }
double SumF16(const Half* x, int64_t n) { return SumRun(x, n); }
void SumColumnsF32(const float* x, int64_t n, int64_t inner, int64_t width, double* acc) {
  ReduceColumns(x, n, inner, width, acc);
}
void SumColumnsF64(const double* x, int64_t n, int64_t inner, int64_t width, double* acc) {
  ReduceColumns(x, n, inner, width, acc);
}
double ProdF32(const float* x, int64_t n) { return ProdRun(x, n); }
double ProdF64(const double* x, int64_t n) { return ProdRun(x, n); }
void ProdColumnsF32(const float* x, int64_t n, int64_t inner, int64_t width, double* acc) {
  ReduceColumns<MulOp>(x, n, inner, width, acc);
}
void ProdColumnsF64(const double* x, int64_t n, int64_t inner, int64_t width, double* acc) {
  ReduceColumns<MulOp>(x, n, inner, width, acc);
}

// The max/min choice made once per call, outside the loops.
#define KILN_TARGET_EXTREMES(T, S)                                                                   \
  T Extreme##S(const T* x, int64_t n, bool max) {                                                    \
    return max ? ExtremeRun<true>(x, n) : ExtremeRun<false>(x, n);                                   \
  }                                                                                                  \
  void ExtremeColumns##S(const T* x, int64_t n, int64_t inner, int64_t width, T* out, bool max) {    \
    max ? ExtremeColumns<true>(x, n, inner, width, out) : ExtremeColumns<false>(x, n, inner, width, out); \
  }                                                                                                  \
  int64_t ArgExtreme##S(const T* x, int64_t n, bool max) {                                           \
    return max ? ArgExtremeRun<true>(x, n) : ArgExtremeRun<false>(x, n);                             \
  }                                                                                                  \
  void ArgExtremeColumns##S(const T* x, int64_t n, int64_t inner, int64_t width, int64_t* out, bool max) { \
    max ? ArgExtremeColumns<true>(x, n, inner, width, out) : ArgExtremeColumns<false>(x, n, inner, width, out); \
  }                                                                                                  \
  int64_t FirstZeroOrNot##S(const T* x, int64_t n, bool zero) {                                      \
    return zero ? FirstZeroOrNot<true>(x, n) : FirstZeroOrNot<false>(x, n);                          \
  }
KILN_TARGET_EXTREMES(float, F32)
KILN_TARGET_EXTREMES(double, F64)
KILN_TARGET_EXTREMES(int32_t, I32)
KILN_TARGET_EXTREMES(int64_t, I64)
#undef KILN_TARGET_EXTREMES

}  // namespace HWY_NAMESPACE
}  // namespace cpu
}  // namespace kiln
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include "runtime/kernels/cpu/vector_reductions.h"

namespace kiln {
namespace cpu {

HWY_EXPORT(SumF32);
HWY_EXPORT(SumF64);
HWY_EXPORT(SumBF16);
HWY_EXPORT(SumF16);
HWY_EXPORT(SumColumnsF32);
HWY_EXPORT(SumColumnsF64);
HWY_EXPORT(ProdF32);
HWY_EXPORT(ProdF64);
HWY_EXPORT(ProdColumnsF32);
HWY_EXPORT(ProdColumnsF64);

namespace vec {

double sum(const float* x, int64_t n) { return HWY_DYNAMIC_DISPATCH(SumF32)(x, n); }
double sum(const double* x, int64_t n) { return HWY_DYNAMIC_DISPATCH(SumF64)(x, n); }
double sum(const BFloat16* x, int64_t n) { return HWY_DYNAMIC_DISPATCH(SumBF16)(x, n); }
double sum(const Half* x, int64_t n) { return HWY_DYNAMIC_DISPATCH(SumF16)(x, n); }
void sum_columns(const float* x, int64_t n, int64_t inner, int64_t width, double* acc) {
  HWY_DYNAMIC_DISPATCH(SumColumnsF32)(x, n, inner, width, acc);
}
void sum_columns(const double* x, int64_t n, int64_t inner, int64_t width, double* acc) {
  HWY_DYNAMIC_DISPATCH(SumColumnsF64)(x, n, inner, width, acc);
}
double prod(const float* x, int64_t n) { return HWY_DYNAMIC_DISPATCH(ProdF32)(x, n); }
double prod(const double* x, int64_t n) { return HWY_DYNAMIC_DISPATCH(ProdF64)(x, n); }
void prod_columns(const float* x, int64_t n, int64_t inner, int64_t width, double* acc) {
  HWY_DYNAMIC_DISPATCH(ProdColumnsF32)(x, n, inner, width, acc);
}
void prod_columns(const double* x, int64_t n, int64_t inner, int64_t width, double* acc) {
  HWY_DYNAMIC_DISPATCH(ProdColumnsF64)(x, n, inner, width, acc);
}

}  // namespace vec

#define KILN_DISPATCH_EXTREMES(T, S)                                                                \
  HWY_EXPORT(Extreme##S);                                                                           \
  HWY_EXPORT(ExtremeColumns##S);                                                                    \
  HWY_EXPORT(ArgExtreme##S);                                                                        \
  HWY_EXPORT(ArgExtremeColumns##S);                                                                 \
  HWY_EXPORT(FirstZeroOrNot##S);                                                                    \
  T vec::extreme(const T* x, int64_t n, bool max) { return HWY_DYNAMIC_DISPATCH(Extreme##S)(x, n, max); } \
  void vec::extreme_columns(const T* x, int64_t n, int64_t inner, int64_t width, T* out, bool max) { \
    HWY_DYNAMIC_DISPATCH(ExtremeColumns##S)(x, n, inner, width, out, max);                          \
  }                                                                                                 \
  int64_t vec::arg_extreme(const T* x, int64_t n, bool max) {                                       \
    return HWY_DYNAMIC_DISPATCH(ArgExtreme##S)(x, n, max);                                          \
  }                                                                                                 \
  void vec::arg_extreme_columns(const T* x, int64_t n, int64_t inner, int64_t width, int64_t* out, bool max) { \
    HWY_DYNAMIC_DISPATCH(ArgExtremeColumns##S)(x, n, inner, width, out, max);                       \
  }                                                                                                 \
  int64_t vec::first_zero_or_not(const T* x, int64_t n, bool zero) {                               \
    return HWY_DYNAMIC_DISPATCH(FirstZeroOrNot##S)(x, n, zero);                                     \
  }
KILN_DISPATCH_EXTREMES(float, F32)
KILN_DISPATCH_EXTREMES(double, F64)
KILN_DISPATCH_EXTREMES(int32_t, I32)
KILN_DISPATCH_EXTREMES(int64_t, I64)
#undef KILN_DISPATCH_EXTREMES

}  // namespace cpu
}  // namespace kiln
#endif  // HWY_ONCE
