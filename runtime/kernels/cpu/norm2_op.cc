// _norm2 / _norm2_lastdim: torch 1.13's CPU 2-norm of a whole float32 tensor or of each last-dim row, to the bit (float64 takes another
// order in torch, not reproduced: norm() keeps its own sum there). torch reduces a
// contiguous tensor's elements as one last dim (norm_kernel_tensor_iterator_impl): each 32-byte
// vector's squares accumulated into a vector by multiply-adds (fused where torch's AVX2 kernels
// fuse: torch_vec::madd, compiled for AVX2 + FMA there), the lanes summed in order, then the tail's squares added one at a time, and sqrt.
// The scalar tail as GCC compiled torch's loop: its first four squares as one unfused 4-lane product added
// one at a time, the rest fused. Exact for every length (tested up to 100).
#include <cmath>
#include <type_traits>

#include "generated/kernels/_norm2.h"
#include "generated/kernels/_norm2_lastdim.h"
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
  if constexpr (std::is_same_v<T, float>) {
    // torch's scalar tail loop as GCC compiled it: the first four squares as one 4-lane product (not
    // fused), added one at a time; the rest fused into the sum
    if (n - d >= 4) {
      T sq[4];
      for (int64_t k = 0; k < 4; ++k) sq[k] = x[d + k] * x[d + k];
      for (int64_t k = 0; k < 4; ++k) sum = sum + sq[k];
      d += 4;
    }
  }
  for (; d < n; ++d) sum = torch_vec::madd<kFused>(x[d], x[d], sum);
  return std::sqrt(sum);
}

template <typename T>
[[gnu::flatten]] __attribute__((target("avx2,fma"))) T norm2_fma(const T* x, int64_t n) {
  return norm2_of<true>(x, n);
}

template <typename T>
T norm2(const T* x, int64_t n) {
  return torch_kernels_use_fma() ? norm2_fma(x, n) : norm2_of<false>(x, n);
}

template <typename T>
void row_norms(const T* x, T* out, int64_t rows, int64_t n) {
#pragma omp parallel for if (rows * n > 32768)
  for (int64_t r = 0; r < rows; ++r) out[r] = norm2(x + r * n, n);
}

// float32 is what norm() sends here; float64 computes the same way (torch's double order differs).
void check_dtype(const TensorBase& self, const char* op) {
  KILN_CHECK(self.dtype() == ScalarType::Float32 || self.dtype() == ScalarType::Float64, op,
             "(): not implemented for '", scalar_type_name(self.dtype()), "' (float32 and float64 only)");
}

}  // namespace

TensorBase norm2_torch_order(const TensorBase& self) {
  check_dtype(self, "_norm2");
  const TensorBase x = contiguous_cpu(self);
  TensorBase out = empty_cpu({}, self.dtype());
  if (self.dtype() == ScalarType::Float32)
    *static_cast<float*>(out.data_ptr()) = norm2(static_cast<const float*>(x.data_ptr()), x.numel());
  else
    *static_cast<double*>(out.data_ptr()) = norm2(static_cast<const double*>(x.data_ptr()), x.numel());
  return out;
}

TensorBase norm2_lastdim_torch_order(const TensorBase& self, bool keepdim) {
  const char* op = "_norm2_lastdim";
  check_dtype(self, op);
  KILN_CHECK(self.dim() > 0, op, "(): expected a tensor with at least one dim");
  const int64_t n = self.sizes()[self.dim() - 1];
  DimVector shape(self.sizes().begin(), self.sizes().end() - (keepdim ? 0 : 1));
  if (keepdim) shape[self.dim() - 1] = 1;
  TensorBase out = empty_cpu(shape, self.dtype());
  if (out.numel() == 0) return out;
  const TensorBase x = contiguous_cpu(self);
  if (self.dtype() == ScalarType::Float32)
    row_norms(static_cast<const float*>(x.data_ptr()), static_cast<float*>(out.data_ptr()), out.numel(), n);
  else
    row_norms(static_cast<const double*>(x.data_ptr()), static_cast<double*>(out.data_ptr()), out.numel(), n);
  return out;
}

}  // namespace cpu
}  // namespace kiln
