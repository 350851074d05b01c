// softmax's and log_softmax's vector loops (runtime/kernels/cpu/vector_softmax.cc), compiled for
// every target of runtime/kernels/cpu/vector_targets.h and run on the best this CPU has (Highway's
// dynamic dispatch, as the reductions; kiln._C._simd_use_target forces one). float32 only: the
// 16-bit floats are widened to float32 rows by the caller (runtime/kernels/cpu/nn_ops.cc), float64
// keeps the scalar loops.
//
// exp is Sleef's u10 float function (kv::Exp, the one torch's softmax calls; in double on SSE4,
// the scalar std::exp on Highway's portable baseline). Sums of a row run in four float vector
// accumulators over 1024-element chunks whose totals add in double (torch: one float vector over
// the whole row), so accuracy is at least torch's; a column's sum is one float per column, rows in
// order, as torch's. NaN and infinities as torch: the max is subtracted first, so a row holding NaN
// or +inf, or only -inf, is all NaN.
#pragma once

#include <cstdint>

namespace kiln {
namespace cpu {
namespace vec {

// y = softmax (log: log_softmax) of the n >= 1 contiguous floats at x; y may be x.
void softmax_row(const float* x, float* y, int64_t n, bool log);

// The same along the columns of a [n, inner] block at x (y: its output block), columns [0, width)
// (width <= 1024): element k of column c is x[k * inner + c]. n >= 1; y must not overlap x.
void softmax_columns(const float* x, float* y, int64_t n, int64_t inner, int64_t width, bool log);

// softmax's gradient along one row of n contiguous floats, from the incoming gradient g and the
// forward's output o: gi = o * (g - sum(g * o)); log: gi = g - exp(o) * sum(g). gi may be g.
void softmax_backward_row(const float* g, const float* o, float* gi, int64_t n, bool log);
// The same given sum(g * o) (log: sum(g)), computed by the caller in torch's order: gi = (g - sum) * o;
// log: gi = g - exp(o) * sum fused as torch's AVX2 build (torch 1.13's bits).
void softmax_backward_row_given_sum(const float* g, const float* o, float* gi, int64_t n, bool log, float sum);
// The gradient down the columns of a [n, inner] block (element k of column c at k * inner + c), columns
// [0, width) (width <= 1024, the block starting at a multiple of 8 columns), as torch 1.13's kernel for a
// dim that is not the last; gi must not overlap g or o.
void softmax_backward_columns(const float* g, const float* o, float* gi, int64_t n, int64_t inner, int64_t width,
                              bool log);

}  // namespace vec
}  // namespace cpu
}  // namespace kiln
