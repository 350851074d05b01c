// The reductions' vector loops (runtime/kernels/cpu/vector_reduce-inl.h), compiled for every
// target of runtime/kernels/cpu/vector_targets.h and run on the best this CPU has (Highway's
// dynamic dispatch, as the pointwise formula kernels; kiln._C._simd_use_target forces one).
// Each takes a contiguous run, or a [n, inner] block whose columns it reduces: the two layouts a
// reduction plan gives a contiguous input (runtime/kernels/reduction_plan.h). Results do not
// depend on the target: the orders of the additions are fixed (see the -inl.h).
#pragma once

#include <cstdint>
#include <type_traits>

#include "runtime/core/half.h"

namespace kiln {
namespace cpu {
namespace vec {

// The sum of n contiguous values in independent lanes, element i in lane i % lanes (float64: 16
// lanes); float32 and the 16-bit floats (widened exactly) in 1024-element chunks of 64 float32
// lanes whose totals add in double, so the rounding error stays that of a 16-element sum and a
// 64-lane fold per chunk.
double sum(const float* x, int64_t n);
double sum(const double* x, int64_t n);
double sum(const BFloat16* x, int64_t n);
double sum(const Half* x, int64_t n);

// acc[c] (c < width) = the sum, in double and rows in order, of column c of the [n, inner] block at x.
void sum_columns(const float* x, int64_t n, int64_t inner, int64_t width, double* acc);
void sum_columns(const double* x, int64_t n, int64_t inner, int64_t width, double* acc);

// prod: the product of n contiguous values in 16 double lanes (element i in lane i % 16, lanes
// folded as the sum's). prod_columns: acc[c] = the product, in double and rows in order, of column c.
double prod(const float* x, int64_t n);
double prod(const double* x, int64_t n);
void prod_columns(const float* x, int64_t n, int64_t inner, int64_t width, double* acc);
void prod_columns(const double* x, int64_t n, int64_t inner, int64_t width, double* acc);

// The dtypes with vector amax/amin/argmax/argmin (others stay scalar).
template <typename T>
constexpr bool has_extremes = std::is_same<T, float>::value || std::is_same<T, double>::value ||
                              std::is_same<T, int32_t>::value || std::is_same<T, int64_t>::value;

// For T of has_extremes, n >= 1:
// extreme: the largest (max) or smallest of n contiguous values; NaN if there is one.
// extreme_columns: out[c] = the extreme of column c (c < width) of the [n, inner] block at x.
// arg_extreme: the index of the first NaN, else of the first extreme value (torch's argmax/argmin).
// arg_extreme_columns: out[c] = arg_extreme of column c; n must fit the signed integer as wide as T.
// first_zero_or_not: the index of the first zero (zero) or nonzero (NaN included) value, n if none.
#define KILN_VEC_EXTREMES(T)                                                                      \
  T extreme(const T* x, int64_t n, bool max);                                                     \
  void extreme_columns(const T* x, int64_t n, int64_t inner, int64_t width, T* out, bool max);    \
  int64_t arg_extreme(const T* x, int64_t n, bool max);                                           \
  void arg_extreme_columns(const T* x, int64_t n, int64_t inner, int64_t width, int64_t* out, bool max); \
  int64_t first_zero_or_not(const T* x, int64_t n, bool zero);
KILN_VEC_EXTREMES(float)
KILN_VEC_EXTREMES(double)
KILN_VEC_EXTREMES(int32_t)
KILN_VEC_EXTREMES(int64_t)
#undef KILN_VEC_EXTREMES

}  // namespace vec
}  // namespace cpu
}  // namespace kiln
