// Formula helpers of the indexing ops' derivatives (masked_select, take).
#include "generated/api/index_put.h"
#include "generated/api/max.h"
#include "generated/api/sum.h"
#include "generated/api/zeros.h"
#include "runtime/autograd/formula_helpers.h"

namespace kiln {

// masked_select picks the elements of self and mask broadcast together, in row-major order:
// the gradient puts grad back at the true positions of the broadcast shape, then sums it to self.
Tensor masked_select_backward(const Tensor& grad, IntArrayRef self_sizes, const Tensor& mask) {
  std::vector<int64_t> shape(std::max(self_sizes.size(), static_cast<size_t>(mask.dim())), 1);
  const int64_t nd = static_cast<int64_t>(shape.size());
  for (int64_t i = 0; i < nd; ++i) {
    const int64_t a = i - (nd - static_cast<int64_t>(self_sizes.size()));
    const int64_t b = i - (nd - mask.dim());
    const int64_t sa = a >= 0 ? self_sizes[a] : 1, sb = b >= 0 ? mask.sizes()[b] : 1;
    shape[i] = sa == 1 ? sb : sa;
  }
  if (shape.empty()) return kiln::sum(grad);  // 0-dim: grad holds the one element, or nothing
  const Tensor full = kiln::index_put(kiln::zeros(shape, grad.scalar_type()), {mask.expand(shape)}, grad, true);
  return sum_to(full, self_sizes);
}

// take reads self flattened: the gradient adds grad into the flat positions (repeats accumulate).
Tensor take_backward(const Tensor& grad, IntArrayRef self_sizes, const Tensor& index) {
  int64_t n = 1;
  for (int64_t s : self_sizes) n *= s;
  const Tensor flat = kiln::index_put(kiln::zeros({n}, grad.scalar_type()), {index.reshape({-1})},
                                      grad.reshape({-1}), true);
  return flat.reshape(self_sizes);
}

}  // namespace kiln
