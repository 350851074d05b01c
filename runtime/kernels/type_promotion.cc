#include "runtime/kernels/type_promotion.h"

#include "runtime/kernels/tensor_memory.h"

namespace kiln {

ScalarType result_type(const std::vector<TensorBase>& inputs) {
  ScalarType dim_result = ScalarType::Undefined, zero_result = ScalarType::Undefined,
             wrapped_result = ScalarType::Undefined;
  for (const TensorBase& t : inputs) {
    if (!t.defined()) continue;
    if (t.impl()->is_wrapped_number()) {
      // A Python float counts as the default dtype, not as float64.
      ScalarType s = is_floating_type(t.dtype()) ? default_dtype() : t.dtype();
      wrapped_result = promote_types(wrapped_result, s);
    } else if (t.dim() == 0) {
      zero_result = promote_types(zero_result, t.dtype());
    } else {
      dim_result = promote_types(dim_result, t.dtype());
    }
  }
  // A weaker group only matters when it is of a higher category.
  auto combine = [](ScalarType higher, ScalarType lower) {
    if (is_floating_type(higher)) return higher;
    if (higher == ScalarType::Bool || is_floating_type(lower)) return promote_types(higher, lower);
    if (higher != ScalarType::Undefined) return higher;
    return lower;
  };
  return combine(dim_result, combine(zero_result, wrapped_result));
}

TensorBase wrap_scalar(const Scalar& s) {
  // Host memory by definition: the number is read on the host by every backend's kernel setup.
  TensorBase t = empty_tensor({}, s.type(), Device(DeviceType::CPU));
  switch (s.type()) {
    case ScalarType::Bool: *static_cast<bool*>(t.data_ptr()) = s.to_bool(); break;
    case ScalarType::Int64: *static_cast<int64_t*>(t.data_ptr()) = s.to_long(); break;
    default: *static_cast<double*>(t.data_ptr()) = s.to_double(); break;
  }
  t.impl()->set_wrapped_number(true);
  return t;
}

}  // namespace kiln
