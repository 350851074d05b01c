// _fma: self + tensor1 * tensor2 rounded once where torch's CPU kernels fuse the multiply-add
// (torch_kernels_use_fma: AVX2 + FMA, ATEN_CPU_CAPABILITY not "default"), else rounded twice.
#include <cmath>

#include "generated/kernels/_fma.h"
#include "runtime/kernels/cpu/cpu_tensors.h"
#include "runtime/kernels/cpu/random_utils.h"
#include "runtime/kernels/tensor_memory.h"

namespace kiln {
namespace cpu {
namespace {

// The fused loop, compiled for AVX2 + FMA (called only on CPUs that have them): vfmadd, one
// rounding per element. b_step is 0 for a one-element tensor2 (its own loop, so both vectorize).
template <typename T>
__attribute__((target("avx2,fma"))) void fused_loop(const T* a, const T* x, const T* b, int64_t b_step, T* out,
                                                     int64_t n) {
  if (b_step == 0) {
    const T s = b[0];
    for (int64_t i = 0; i < n; ++i) out[i] = __builtin_fma(x[i], s, a[i]);
  } else {
    for (int64_t i = 0; i < n; ++i) out[i] = __builtin_fma(x[i], b[i], a[i]);
  }
}
template <>
__attribute__((target("avx2,fma"))) void fused_loop<float>(const float* a, const float* x, const float* b,
                                                           int64_t b_step, float* out, int64_t n) {
  if (b_step == 0) {
    const float s = b[0];
    for (int64_t i = 0; i < n; ++i) out[i] = __builtin_fmaf(x[i], s, a[i]);
  } else {
    for (int64_t i = 0; i < n; ++i) out[i] = __builtin_fmaf(x[i], b[i], a[i]);
  }
}

template <typename T>
void unfused_loop(const T* a, const T* x, const T* b, int64_t b_step, T* out, int64_t n) {
  if (b_step == 0) {
    const T s = b[0];
    for (int64_t i = 0; i < n; ++i) out[i] = a[i] + x[i] * s;
  } else {
    for (int64_t i = 0; i < n; ++i) out[i] = a[i] + x[i] * b[i];
  }
}

}  // namespace

TensorBase fused_multiply_add(const TensorBase& self, const TensorBase& tensor1, const TensorBase& tensor2) {
  KILN_CHECK(self.dtype() == tensor1.dtype() && self.dtype() == tensor2.dtype(),
             "_fma(): expected self, tensor1 and tensor2 of one dtype, got ", scalar_type_name(self.dtype()), ", ",
             scalar_type_name(tensor1.dtype()), " and ", scalar_type_name(tensor2.dtype()));
  if (is_reduced_floating_type(self.dtype())) {  // float16/bfloat16: in float32, rounded once
    const ScalarType f32 = ScalarType::Float32;
    return cast_to(fused_multiply_add(cast_to(self, f32), cast_to(tensor1, f32), cast_to(tensor2, f32)), self.dtype());
  }
  KILN_CHECK(self.dtype() == ScalarType::Float32 || self.dtype() == ScalarType::Float64,
             "_fma(): \"fma\" not implemented for '", scalar_type_name(self.dtype()), "'");
  KILN_CHECK(tensor1.sizes() == self.sizes(), "_fma(): tensor1 of shape ", shape_str(tensor1.sizes()),
             " for self of shape ", shape_str(self.sizes()));
  KILN_CHECK(tensor2.sizes() == self.sizes() || tensor2.numel() == 1, "_fma(): tensor2 of shape ",
             shape_str(tensor2.sizes()), " for self of shape ", shape_str(self.sizes()),
             " (it must match, or hold one element)");
  const TensorBase a = contiguous_cpu(self), x = contiguous_cpu(tensor1), b = contiguous_cpu(tensor2);
  TensorBase out = empty_cpu(self.sizes(), self.dtype());
  const int64_t n = self.numel(), b_step = tensor2.sizes() == self.sizes() ? 1 : 0;
  if (n == 0) return out;
  const bool fused = torch_kernels_use_fma();
  KILN_DISPATCH_FLOATING_TYPES(self.dtype(), "_fma", [&] {
    const scalar_t* ap = static_cast<const scalar_t*>(a.data_ptr());
    const scalar_t* xp = static_cast<const scalar_t*>(x.data_ptr());
    const scalar_t* bp = static_cast<const scalar_t*>(b.data_ptr());
    scalar_t* op = static_cast<scalar_t*>(out.data_ptr());
    if (fused) {
      fused_loop<scalar_t>(ap, xp, bp, b_step, op, n);
    } else {
      unfused_loop<scalar_t>(ap, xp, bp, b_step, op, n);
    }
  });
  return out;
}

}  // namespace cpu
}  // namespace kiln
