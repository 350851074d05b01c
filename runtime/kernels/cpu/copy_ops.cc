// clone, copy_, _to_copy, and the backward ops of select/slice.

#include "generated/kernels/_to_copy.h"
#include "generated/kernels/clone.h"
#include "generated/kernels/copy.h"
#include "generated/kernels/select.h"
#include "generated/kernels/select_backward.h"
#include "generated/kernels/slice.h"
#include "generated/kernels/slice_backward.h"
#include "runtime/kernels/cpu/cpu_tensors.h"
#include "runtime/kernels/memory_format_strides.h"

namespace kiln {
namespace cpu {
// torch's clone(preserve_format): self's strides when dense, else dense strides in self's order.
TensorBase clone(const TensorBase& self) {
  TensorBase out = empty_tensor_preserving(self, self.dtype(), self.device());
  copy_into(out, self, "clone");
  return out;
}

// Between devices too: copy_into moves the elements through the device registry.
TensorBase copy_(const TensorBase& self, const TensorBase& src, bool /*non_blocking*/) {
  if (self.is_same(src)) return self;
  copy_into(self, src, "copy_");
  return self;
}

TensorBase _to_copy(const TensorBase& self, const std::optional<ScalarType>& dtype, const std::optional<Device>& device) {
  // torch's _to_copy(preserve_format), as clone.
  TensorBase out = empty_tensor_preserving(self, dtype.value_or(self.dtype()), device.value_or(self.device()));
  copy_into(out, self, "to");
  return out;
}

TensorBase select_backward(const TensorBase& grad_output, IntArrayRef input_sizes, int64_t dim, int64_t index) {
  TensorBase grad_input = zeros_cpu(input_sizes, grad_output.dtype());
  copy_into(composite_explicit::select(grad_input, dim, index), grad_output, "select_backward");
  return grad_input;
}

TensorBase slice_backward(const TensorBase& grad_output, IntArrayRef input_sizes, int64_t dim, int64_t start,
                          int64_t end, int64_t step) {
  TensorBase grad_input = zeros_cpu(input_sizes, grad_output.dtype());
  copy_into(composite_explicit::slice(grad_input, dim, start, end, step), grad_output, "slice_backward");
  return grad_input;
}

}  // namespace cpu
}  // namespace kiln
