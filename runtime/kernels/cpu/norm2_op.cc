// _norm2: torch 1.13's CPU 2-norm of a whole float32 tensor, to the bit (float64 takes another
// order in torch, not reproduced: norm() keeps its own sum there). torch reduces a
// contiguous tensor's elements as one last dim (norm_kernel_tensor_iterator_impl): each 32-byte
// vector's squares accumulated into a vector by multiply-adds (fused where torch's AVX2 kernels
// fuse: torch_vec::madd, compiled for AVX2 + FMA there), the lanes summed in order, then the tail's squares added one at a time, and sqrt.
// Exact for every length that is a multiple of 8 (tested); with a tail of 4 to 7 elements torch
// rounds differently about one time in 30 (its order there is not reproduced).
#include <cmath>

#include "generated/kernels/_norm2.h"
#include "runtime/kernels/cpu/cpu_tensors.h"
#include "runtime/kernels/cpu/random_utils.h"
#include "runtime/kernels/cpu/torch_vec_reduce.h"

namespace kiln {
namespace cpu {
namespace {

template <bool kFused, typename T>
T norm2_of(const T* x, int64_t n) {
  constexpr int64_t L = 32 / static_cast<int64_t>(sizeof(T));
  T acc[L] = {};
  int64_t d = 0;
  for (; d < n - n % L; d += L)
    for (int64_t l = 0; l < L; ++l) acc[l] = torch_vec::madd<kFused>(x[d + l], x[d + l], acc[l]);
  T sum = acc[0];
  for (int64_t l = 1; l < L; ++l) sum = sum + acc[l];
  for (; d < n; ++d) sum = torch_vec::madd<kFused>(x[d], x[d], sum);
  return std::sqrt(sum);
}

[[gnu::flatten]] __attribute__((target("avx2,fma"))) float norm2_fma(const float* x, int64_t n) {
  return norm2_of<true>(x, n);
}

}  // namespace

TensorBase norm2_torch_order(const TensorBase& self) {
  KILN_CHECK(self.dtype() == ScalarType::Float32, "_norm2(): not implemented for '", scalar_type_name(self.dtype()),
             "' (torch's order is reproduced for float32 only)");
  const TensorBase x = contiguous_cpu(self);
  TensorBase out = empty_cpu({}, self.dtype());
  const float* p = static_cast<const float*>(x.data_ptr());
  *static_cast<float*>(out.data_ptr()) = torch_kernels_use_fma() ? norm2_fma(p, x.numel()) : norm2_of<false>(p, x.numel());
  return out;
}

}  // namespace cpu
}  // namespace kiln
