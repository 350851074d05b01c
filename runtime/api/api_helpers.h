// Small helpers used by generated API code (generated/ops/*.cc).
#pragma once

#include <tuple>
#include <utility>
#include <vector>

#include "generated/api/tensor.h"

namespace kiln {

// Tensor[] arguments as kernels take them.
inline std::vector<TensorBase> to_bases(const std::vector<Tensor>& v) { return {v.begin(), v.end()}; }

// Kernel results (TensorBase) converted to API results (Tensor).
inline std::vector<Tensor> to_api(std::vector<TensorBase>&& v) {
  std::vector<Tensor> out;
  out.reserve(v.size());
  for (auto& t : v) out.emplace_back(std::move(t));
  return out;
}
inline std::tuple<Tensor, Tensor> to_api(std::tuple<TensorBase, TensorBase>&& t) {
  return {Tensor(std::move(std::get<0>(t))), Tensor(std::move(std::get<1>(t)))};
}
inline std::tuple<Tensor, Tensor, Tensor> to_api(std::tuple<TensorBase, TensorBase, TensorBase>&& t) {
  return {Tensor(std::move(std::get<0>(t))), Tensor(std::move(std::get<1>(t))), Tensor(std::move(std::get<2>(t)))};
}

}  // namespace kiln
