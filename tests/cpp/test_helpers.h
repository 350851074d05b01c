// Small helpers shared by the runtime tests.
#pragma once

#include <vector>

#include "generated/api/kiln.h"

namespace kiln_test {

// A float32 tensor with the given values and shape.
inline kiln::api::Tensor floats(std::vector<float> values, std::vector<int64_t> shape) {
  kiln::api::Tensor t = kiln::api::empty(shape, kiln::ScalarType::Float32);
  float* p = t.data_ptr<float>();
  for (size_t i = 0; i < values.size(); ++i) p[i] = values[i];
  return t;
}

// Element values of any float32 tensor in row-major order.
inline std::vector<float> values(const kiln::api::Tensor& t) {
  kiln::api::Tensor c = t.contiguous().to(kiln::ScalarType::Float32);
  const float* p = c.data_ptr<float>();
  return std::vector<float>(p, p + c.numel());
}

}  // namespace kiln_test
