// Formula helpers of the running-reduction derivatives (cumsum, cumprod).
#include <vector>

#include "generated/api/add.h"
#include "generated/api/arange.h"
#include "generated/api/cat.h"
#include "generated/api/cumprod.h"
#include "generated/api/cumsum.h"
#include "generated/api/div.h"
#include "generated/api/eq.h"
#include "generated/api/mul.h"
#include "generated/api/narrow.h"
#include "generated/api/ones_like.h"
#include "generated/api/sub.h"
#include "generated/api/sum.h"
#include "generated/api/where.h"
#include "runtime/autograd/formula_helpers.h"

namespace kiln {

// d(cumsum x)_k / dx_i = [i <= k], so grad_i = sum_{k >= i} grad_k = total - cumsum(grad)_i + grad_i.
Tensor cumsum_backward(const Tensor& grad, int64_t dim) {
  if (grad.dim() == 0 || grad.numel() == 0) return grad;
  return kiln::add(kiln::sub(kiln::sum(grad, IntArrayRef({dim}), /*keepdim=*/true), kiln::cumsum(grad, dim)), grad);
}

// Without zeros: grad_i = sum_{k >= i} grad_k result_k / x_i. With zeros that division is
// undefined, so each position is done directly: grad_i = sum_{k >= i} grad_k * (cumprod of x
// with x_i replaced by 1)_k (quadratic in the length of dim, only on that path).
Tensor cumprod_backward(const Tensor& grad, const Tensor& self, int64_t dim, const Tensor& result) {
  if (self.dim() == 0 || self.numel() == 0) return grad;
  const int64_t d = wrap_dim(dim, self.dim(), "cumprod"), n = self.sizes()[d];
  if (!kiln::eq(self, 0).any().item().to_bool()) return kiln::div(cumsum_backward(kiln::mul(grad, result), d), self);
  std::vector<int64_t> shape(static_cast<size_t>(self.dim()), 1);
  shape[d] = n;
  const Tensor position = kiln::arange(n, ScalarType::Int64).view(shape);
  std::vector<Tensor> parts;
  for (int64_t i = 0; i < n; ++i) {
    const Tensor without_i = kiln::where(kiln::eq(position, i), kiln::ones_like(self), self);
    const Tensor terms = kiln::mul(grad, kiln::cumprod(without_i, d));
    parts.push_back(kiln::sum(kiln::narrow(terms, d, i, n - i), IntArrayRef({d}), /*keepdim=*/true));
  }
  return kiln::cat(parts, d);
}

}  // namespace kiln
