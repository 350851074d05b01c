// Formula helpers of the running-reduction derivatives (cumsum, cumprod, cummax/cummin, logcumsumexp).
#include <limits>
#include <vector>

#include "generated/api/abs.h"
#include "generated/api/add.h"
#include "generated/api/arange.h"
#include "generated/api/cat.h"
#include "generated/api/cumprod.h"
#include "generated/api/cumsum.h"
#include "generated/api/div.h"
#include "generated/api/eq.h"
#include "generated/api/exp.h"
#include "generated/api/flip.h"
#include "generated/api/le.h"
#include "generated/api/log.h"
#include "generated/api/logcumsumexp.h"
#include "generated/api/masked_fill.h"
#include "generated/api/mul.h"
#include "generated/api/narrow.h"
#include "generated/api/ones_like.h"
#include "generated/api/scatter_add.h"
#include "generated/api/sub.h"
#include "generated/api/sum.h"
#include "generated/api/where.h"
#include "generated/api/zeros_like.h"
#include "generated/api/ge.h"
#include "runtime/autograd/formula_helpers.h"

namespace kiln {

// d(cumsum x)_k / dx_i = [i <= k], so grad_i = sum_{k >= i} grad_k = total - cumsum(grad)_i + grad_i.
Tensor cumsum_backward(const Tensor& grad, int64_t dim) {
  if (grad.dim() == 0 || grad.numel() == 0) return grad;
  // torch's reversed cumsum: the suffix sums, which also round as torch's do
  const int64_t dims[] = {dim};
  return kiln::flip(kiln::cumsum(kiln::flip(grad, IntArrayRef(dims, 1)), dim), IntArrayRef(dims, 1));
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

// Each position gets the gradients of the outputs that took their value from it.
Tensor cummaxmin_backward(const Tensor& grad, const Tensor& self, const Tensor& indices, int64_t dim) {
  if (self.dim() == 0 || self.numel() == 0) return grad;
  return kiln::scatter_add(kiln::zeros_like(grad), dim, indices, grad);
}

// torch's formula: grad_i = sum_{k >= i} grad_k exp(x_i - result_k), with the positive and
// negative parts of grad each summed in log space (a reversed logcumsumexp), so nothing overflows.
Tensor logcumsumexp_backward(const Tensor& grad, const Tensor& self, const Tensor& result, int64_t dim) {
  if (grad.dim() == 0 || grad.numel() == 0) return grad;
  const int64_t d = wrap_dim(dim, grad.dim(), "logcumsumexp");
  const double lowest = grad.scalar_type() == ScalarType::Float64 ? std::numeric_limits<double>::lowest()
                        : grad.scalar_type() == ScalarType::Float16 ? -65504.0
                                                                     : double(std::numeric_limits<float>::lowest());
  auto reversed_scan = [&](const Tensor& x) { return kiln::flip(kiln::logcumsumexp(kiln::flip(x, {d}), d), {d}); };
  const Tensor log_abs = kiln::log(kiln::abs(grad));
  const Tensor log_pos = kiln::masked_fill(log_abs, kiln::le(grad, 0), lowest);
  const Tensor log_neg = kiln::masked_fill(log_abs, kiln::ge(grad, 0), lowest);
  const Tensor pos = kiln::exp(kiln::add(reversed_scan(kiln::sub(log_pos, result)), self));
  const Tensor neg = kiln::exp(kiln::add(reversed_scan(kiln::sub(log_neg, result)), self));
  return kiln::sub(pos, neg);
}

}  // namespace kiln
