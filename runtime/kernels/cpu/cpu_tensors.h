// Shorthands of the CPU kernels for tensors in host memory (the device registry's functions
// with the CPU named), so a kernel reads `empty_cpu(shape, dtype)`.
#pragma once

#include "runtime/kernels/out_checks.h"
#include "runtime/kernels/tensor_memory.h"

namespace kiln {
namespace cpu {

inline const Device kCpu(DeviceType::CPU);

inline TensorBase empty_cpu(IntArrayRef sizes, ScalarType dtype) { return empty_tensor(sizes, dtype, kCpu); }
inline TensorBase zeros_cpu(IntArrayRef sizes, ScalarType dtype) { return zeros_tensor(sizes, dtype, kCpu); }
inline TensorBase empty_like_cpu(const TensorBase& t, ScalarType dtype) { return empty_tensor_like(t, dtype, kCpu); }
inline TensorBase contiguous_cpu(const TensorBase& t) { return contiguous_tensor(t); }
// resized_out with a new tensor (when `out` is undefined) in host memory.
inline TensorBase resized_out(const TensorBase& out, IntArrayRef shape, ScalarType dtype, const char* op_name) {
  return kiln::resized_out(out, shape, dtype, kCpu, op_name);
}

}  // namespace cpu
}  // namespace kiln
