#include "runtime/kernels/tensor_memory.h"

#include "runtime/core/error.h"
#include "runtime/kernels/shape_rules.h"

namespace kiln {

TensorBase empty_tensor(IntArrayRef sizes, ScalarType dtype, Device device) {
  int64_t n = checked_numel(sizes, "empty");
  int64_t nbytes = 0;
  KILN_CHECK(!__builtin_mul_overflow(n, element_size(dtype), &nbytes), "empty(): shape ", shape_str(sizes),
             " needs more bytes than int64 can count");
  DeviceBackend& backend = device_backend(device.type, "empty");
  Storage storage = Storage::make(static_cast<size_t>(nbytes), backend.allocator(), device);
  if (dtype == ScalarType::Bool) backend.zero_bytes(storage->data(), static_cast<size_t>(nbytes));
  return TensorBase(Ref<TensorImpl>::make(std::move(storage), dtype, sizes, contiguous_strides(sizes), 0));
}

TensorBase zeros_tensor(IntArrayRef sizes, ScalarType dtype, Device device) {
  TensorBase t = empty_tensor(sizes, dtype, device);
  if (t.numel() > 0 && dtype != ScalarType::Bool)
    device_backend(device.type, "zeros").zero_bytes(t.data_ptr(), static_cast<size_t>(t.numel()) * element_size(dtype));
  return t;
}

TensorBase empty_tensor_like(const TensorBase& t, ScalarType dtype, Device device) {
  if (t.is_contiguous() || t.numel() == 0 || !is_non_overlapping_and_dense(t)) return empty_tensor(t.sizes(), dtype, device);
  TensorBase out = empty_tensor({t.numel()}, dtype, device);
  out.impl()->set_sizes_and_strides(t.sizes(), t.strides(), 0);
  return out;
}

TensorBase empty_tensor_like(const TensorBase& t, ScalarType dtype) { return empty_tensor_like(t, dtype, t.device()); }

void fill_tensor(const TensorBase& dst, const Scalar& value) { device_backend(dst.device().type, "fill_").fill(dst, value); }

void copy_into(const TensorBase& dst, const TensorBase& src_in, const char* op_name) {
  // The source broadcasts to the destination's shape (never the other way).
  const TensorBase src =
      src_in.sizes() == dst.sizes() ? src_in : broadcast_for_read(src_in, dst.sizes(), op_name);
  if (src.device() == dst.device()) {
    device_backend(dst.device().type, op_name).copy_elements(dst, src, op_name);
    return;
  }
  // Between devices: cast and compact on the source's device, move the bytes through host
  // memory (one hop when either side is the host), then lay them out on the destination.
  const Device host(DeviceType::CPU);
  TensorBase packed = src;  // already compact and of dst's dtype: moved as it is
  if (!src.is_contiguous() || src.dtype() != dst.dtype()) {
    packed = empty_tensor(src.sizes(), dst.dtype(), src.device());
    copy_into(packed, src, op_name);
  }
  const size_t nbytes = static_cast<size_t>(packed.numel()) * element_size(dst.dtype());
  TensorBase staged = packed;
  if (!src.device().is_cpu()) {
    staged = empty_tensor(src.sizes(), dst.dtype(), host);
    if (nbytes) device_backend(src.device().type, op_name).copy_bytes(staged.data_ptr(), packed.data_ptr(), nbytes, CopyDirection::DeviceToHost);
  }
  TensorBase landed = staged;
  if (!dst.device().is_cpu()) {
    landed = empty_tensor(src.sizes(), dst.dtype(), dst.device());
    if (nbytes) device_backend(dst.device().type, op_name).copy_bytes(landed.data_ptr(), staged.data_ptr(), nbytes, CopyDirection::HostToDevice);
  }
  copy_into(dst, landed, op_name);
}

TensorBase cast_to(const TensorBase& t, ScalarType dtype) {
  if (t.dtype() == dtype) return t;
  TensorBase out = empty_tensor_like(t, dtype);
  copy_into(out, t, "to");
  if (t.impl()->is_wrapped_number()) out.impl()->set_wrapped_number(true);
  return out;
}

TensorBase to_opmath(const TensorBase& t) { return t.defined() ? cast_to(t, opmath_type(t.dtype())) : t; }

TensorBase contiguous_tensor(const TensorBase& t) {
  if (t.is_contiguous()) return t;
  TensorBase out = empty_tensor(t.sizes(), t.dtype(), t.device());
  copy_into(out, t, "contiguous");
  return out;
}

}  // namespace kiln
