#include "runtime/kernels/out_checks.h"

#include "runtime/core/error.h"
#include "runtime/core/warning.h"
#include "runtime/kernels/shape_rules.h"
#include "runtime/kernels/tensor_memory.h"

namespace kiln {

void check_no_internal_overlap(const TensorBase& out, const char* op_name) {
  // Nothing is written to an empty tensor, whatever its strides (NumPy gives empty arrays stride 0).
  KILN_CHECK(out.numel() == 0 || !is_expanded(out), op_name,
             "(): unsupported operation: more than one element of the written-to tensor refers to a single "
             "memory location. Please clone() the tensor before performing the operation.");
}

void check_no_partial_overlap(const TensorBase& out, const TensorBase& in, const char* op_name) {
  // PyTorch's rule: only dense tensors (each filling its memory range) are compared; sparser
  // ones may interleave without sharing elements (two columns), which is common and fine.
  if (out.numel() == 0 || in.numel() == 0) return;
  if (out.impl()->storage().get() != in.impl()->storage().get()) return;  // the cheap test first
  if (!is_non_overlapping_and_dense(out) || !is_non_overlapping_and_dense(in)) return;
  const char* a = static_cast<const char*>(out.data_ptr());
  const char* b = static_cast<const char*>(in.data_ptr());
  const char* a_end = a + out.numel() * out.element_size();
  const char* b_end = b + in.numel() * in.element_size();
  // x.add_(x): each element reads itself. (x += x.t() shares the range with other strides.)
  const bool same = a == b && out.sizes() == in.sizes() && out.strides() == in.strides();
  KILN_CHECK(same || a_end <= b || b_end <= a, op_name,
             "(): unsupported operation: some elements of the input tensor and the written-to tensor refer to a "
             "single memory location. Please clone() the tensor before performing the operation.");
}

void check_out_is_not_an_input(const TensorBase& out, std::initializer_list<const TensorBase*> inputs,
                               const char* op_name) {
  if (!out.defined()) return;
  for (const TensorBase* in : inputs)
    KILN_CHECK(!in->defined() || in->impl()->storage().get() != out.impl()->storage().get(), op_name,
               "(): unsupported operation: the out= tensor shares memory with an input. Please clone() the input "
               "or use another out tensor.");
}

TensorBase resized_out(const TensorBase& out, IntArrayRef shape, ScalarType dtype, Device device, const char* op_name) {
  if (!out.defined()) return empty_tensor(shape, dtype, device);
  KILN_CHECK(out.dtype() == dtype, op_name, "(): Expected out tensor to have dtype ", scalar_type_name(dtype),
             ", but got ", scalar_type_name(out.dtype()), " instead");
  warn_if_out_resized(out.sizes(), shape);
  if (!(out.sizes() == shape)) out.impl()->set_sizes_contiguous(shape);
  return out;
}

TensorBase result_into_out(const TensorBase& result, const TensorBase& out, const char* op_name) {
  if (!out.defined()) return result;
  TensorBase dst = resized_out(out, result.sizes(), result.dtype(), result.device(), op_name);
  copy_into(dst, result, op_name);
  return dst;
}

}  // namespace kiln
