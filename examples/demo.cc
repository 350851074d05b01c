// A short tour of kiln's C++ API: tensors, views, ops, and autograd.
#include <cstdio>

#include "generated/api/kiln.h"

int main() {
  using namespace kiln::api;
  Tensor w = ones({2, 3}, ScalarType::Float32, std::nullopt, /*requires_grad=*/true);
  Tensor x = arange(6, ScalarType::Float32).view({3, 2});
  Tensor y = mm(w, x).tanh().sum();
  y.backward();
  std::printf("y = %.6f\n", y.item<double>());
  Tensor g = w.grad();
  for (int64_t i = 0; i < 2; ++i) {
    std::printf("dy/dw[%lld] =", static_cast<long long>(i));
    for (int64_t j = 0; j < 3; ++j) std::printf(" %.6f", g.select(0, i).select(0, j).item<double>());
    std::printf("\n");
  }
  return 0;
}
