// Tensors made, zeroed, filled, copied and cast through the device registry
// (runtime/core/device_backend.h): the one way code above the backends touches tensor memory.
#pragma once

#include "runtime/core/device_backend.h"
#include "runtime/core/tensor_base.h"

namespace kiln {

// A fresh contiguous tensor on `device` (no zeroing, except bool: an arbitrary byte is not a bool).
TensorBase empty_tensor(IntArrayRef sizes, ScalarType dtype, Device device);
// A fresh contiguous tensor on `device` filled with zeros (gradient accumulators).
TensorBase zeros_tensor(IntArrayRef sizes, ScalarType dtype, Device device);
// A fresh tensor shaped like `t` on t's device, keeping t's memory layout when t is dense and
// non-overlapping (a transposed tensor stays transposed), as PyTorch's preserve_format;
// contiguous otherwise.
TensorBase empty_tensor_like(const TensorBase& t, ScalarType dtype);
TensorBase empty_tensor_like(const TensorBase& t, ScalarType dtype, Device device);
// Copies (with casting and broadcasting) src into dst, on one device or between two.
void copy_into(const TensorBase& dst, const TensorBase& src, const char* op_name);
// Every element of `dst` set to `value` (the caller has checked that it fits dst's dtype).
void fill_tensor(const TensorBase& dst, const Scalar& value);
// `t` converted to `dtype` (itself when it already has it).
TensorBase cast_to(const TensorBase& t, ScalarType dtype);
// `t` in the dtype kernels compute in: float32 for float16/bfloat16 (undefined stays undefined).
TensorBase to_opmath(const TensorBase& t);
// `t` itself if contiguous, else a contiguous copy on its device.
TensorBase contiguous_tensor(const TensorBase& t);

}  // namespace kiln
