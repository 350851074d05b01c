// y = x * scale + shift over a run, the multiply-add fused where torch's AVX2 build fuses it (the
// output pass of batch_norm's and group_norm's kernels). scale_shift_run picks the build: the fused
// one compiled for AVX2 + FMA (fma instructions, not calls into the C library).
#pragma once

#include <cstdint>

#include "runtime/kernels/cpu/torch_vec_reduce.h"

namespace kiln {
namespace cpu {

template <bool kFused, typename T>
void scale_shift_loop(const T* x, T* y, int64_t n, T scale, T shift) {
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) y[i] = torch_vec::madd<kFused>(x[i], scale, shift);
}

template <typename T>
[[gnu::flatten]] __attribute__((target("avx2,fma"))) void scale_shift_loop_fma(const T* x, T* y, int64_t n, T scale,
                                                                               T shift) {
  scale_shift_loop<true>(x, y, n, scale, shift);
}

template <typename T>
void scale_shift_run(bool fused, const T* x, T* y, int64_t n, T scale, T shift) {
  if (fused) {
    scale_shift_loop_fma(x, y, n, scale, shift);
  } else {
    scale_shift_loop<false>(x, y, n, scale, shift);
  }
}

}  // namespace cpu
}  // namespace kiln
