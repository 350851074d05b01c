// torch_backward_helpers.h: torch's backward functions, op for op.
#include "runtime/autograd/torch_backward_helpers.h"

#include <algorithm>
#include <cmath>

#include "generated/api/abs.h"
#include "generated/api/add.h"
#include "generated/api/cat.h"
#include "generated/api/div.h"
#include "generated/api/eq.h"
#include "generated/api/exp.h"
#include "generated/api/full_like.h"
#include "generated/api/ge.h"
#include "generated/api/gt.h"
#include "generated/api/isnan.h"
#include "generated/api/masked_fill.h"
#include "generated/api/mean.h"
#include "generated/api/mul.h"
#include "generated/api/narrow.h"
#include "generated/api/neg.h"
#include "generated/api/reciprocal.h"
#include "generated/api/sigmoid.h"
#include "generated/api/sqrt.h"
#include "generated/api/sub.h"
#include "generated/api/sum.h"
#include "generated/api/unsqueeze.h"
#include "generated/api/where.h"
#include "runtime/autograd/formula_helpers.h"

namespace kiln {

namespace {
// `dims` wrapped into [0, nd), sorted, each once.
std::vector<int64_t> reduced_dims(IntArrayRef dims, int64_t nd, const char* op) {
  std::vector<int64_t> wrapped;
  for (int64_t d : dims) wrapped.push_back(wrap_dim(d, nd, op));
  std::sort(wrapped.begin(), wrapped.end());
  wrapped.erase(std::unique(wrapped.begin(), wrapped.end()), wrapped.end());
  return wrapped;
}

// `t` with the dims a reduction over `dims` (of a tensor of nd dims) dropped put back, as torch's
// unsqueeze_multiple; nothing to do with keepdim.
Tensor unsqueeze_reduced_dims(const Tensor& t, int64_t nd, IntArrayRef dims, bool keepdim, const char* op) {
  if (keepdim || nd == 0) return t;
  Tensor r = t;
  for (int64_t d : reduced_dims(dims, nd, op)) r = kiln::unsqueeze(r, d);
  return r;
}
}  // namespace

Tensor var_backward(const Tensor& grad, const Tensor& self, const std::optional<std::vector<int64_t>>& dim,
                    double correction, bool keepdim) {
  if (self.dim() == 0 || !dim || dim->empty()) {
    const double dof = static_cast<double>(self.numel()) - correction;
    const Tensor mean = kiln::mean(self);
    if (dof <= 0)  // 2 / 0: inf times the centred values, NaN where they are 0
      return kiln::mul(grad, kiln::where(kiln::eq(self, mean), kiln::full_like(self, Scalar(std::nan(""))),
                                         kiln::full_like(self, Scalar(INFINITY))));
    return kiln::mul(kiln::mul(grad, Scalar(2.0 / dof)), kiln::sub(self, mean));
  }
  int64_t n = 1;
  for (int64_t d : reduced_dims(*dim, self.dim(), "var")) n *= self.sizes()[d];
  const Tensor g = unsqueeze_reduced_dims(grad, self.dim(), *dim, keepdim, "var");
  const Tensor mean = kiln::mean(self, std::optional<IntArrayRef>(IntArrayRef(*dim)), /*keepdim=*/true);
  return kiln::mul(kiln::mul(g, Scalar(2.0 / (static_cast<double>(n) - correction))), kiln::sub(self, mean));
}

Tensor std_backward(const Tensor& result, const Tensor& grad, const Tensor& self,
                    const std::optional<std::vector<int64_t>>& dim, double correction, bool keepdim) {
  const Tensor grad_var = kiln::masked_fill(kiln::div(grad, kiln::mul(result, Scalar(2))), kiln::eq(result, 0), 0);
  return var_backward(grad_var, self, dim, correction, keepdim);
}

Tensor logsumexp_backward(const Tensor& grad, const Tensor& self, const Tensor& result, IntArrayRef dim, bool keepdim) {
  const Tensor g = unsqueeze_reduced_dims(grad, self.dim(), dim, keepdim, "logsumexp");
  const Tensor r = unsqueeze_reduced_dims(result, self.dim(), dim, keepdim, "logsumexp");
  return kiln::mul(g, kiln::exp(kiln::sub(self, r)));
}

namespace {
// The loss's per-element slope times the reduction's factor (scale / N for the mean, else scale),
// then grad (broadcast), summed back to self's shape where target broadcast it: torch's vectorized
// loop. (For smooth_l1/huber its scalar loop, which takes the last n mod 16 elements of a run,
// multiplies by beta or delta in double and can round one ulp apart; kiln does not copy that
// dependence on an element's place.)
Tensor scaled_loss_gradient(const Tensor& deriv, const Tensor& grad, const Tensor& self, int64_t reduction,
                            double scale = 1.0) {
  const double norm = reduction == 1 ? scale / static_cast<double>(deriv.numel()) : scale;
  return sum_to(kiln::mul(kiln::mul(deriv, Scalar(norm)), grad), self.sizes());
}

Tensor plus_or_minus(const Tensor& d, double magnitude) {
  return kiln::where(kiln::gt(d, 0), kiln::full_like(d, Scalar(magnitude)), kiln::full_like(d, Scalar(-magnitude)));
}
}  // namespace

Tensor mse_loss_backward(const Tensor& grad, const Tensor& self, const Tensor& target, int64_t reduction) {
  return scaled_loss_gradient(kiln::sub(self, target), grad, self, reduction, 2.0);
}

Tensor smooth_l1_loss_backward(const Tensor& grad, const Tensor& self, const Tensor& target, int64_t reduction,
                               double beta) {
  const Tensor d = kiln::sub(self, target);
  // beta 0: +-1 everywhere but NaN (whose d / 0 is NaN), without the division, whose own derivative
  // (0 / 0 through where's unselected branch) would make the second derivative NaN.
  const Tensor deriv = beta == 0 ? kiln::where(kiln::isnan(d), d, plus_or_minus(d, 1.0))
                                 : kiln::where(kiln::ge(kiln::abs(d), beta), plus_or_minus(d, 1.0), kiln::div(d, Scalar(beta)));
  return scaled_loss_gradient(deriv, grad, self, reduction);
}

Tensor huber_loss_backward(const Tensor& grad, const Tensor& self, const Tensor& target, int64_t reduction,
                           double delta) {
  const Tensor d = kiln::sub(self, target);
  const Tensor deriv = kiln::where(kiln::ge(kiln::abs(d), delta), plus_or_minus(d, delta), d);
  return scaled_loss_gradient(deriv, grad, self, reduction);
}

Tensor glu_backward(const Tensor& grad, const Tensor& self, int64_t dim) {
  const int64_t d = wrap_dim(dim, self.dim(), "glu");
  const int64_t half = self.sizes()[d] / 2;
  const Tensor s = kiln::sigmoid(kiln::narrow(self, d, half, half));
  const Tensor grad_first = kiln::mul(s, grad);
  const Tensor slope = kiln::mul(kiln::add(kiln::neg(s), 1), s);  // (1 - s) s
  const Tensor grad_second = kiln::mul(kiln::mul(slope, kiln::narrow(self, d, 0, half)), grad);
  return kiln::cat({grad_first, grad_second}, d);
}

std::vector<Tensor> batch_norm_eval_backward(const Tensor& grad, const Tensor& input, const Tensor& weight,
                                             const Tensor& running_mean, const Tensor& running_var, double eps) {
  const int64_t nd = input.dim();
  std::vector<int64_t> channel_shape(static_cast<size_t>(nd), 1), reduced;
  channel_shape[1] = input.sizes()[1];
  for (int64_t d = 0; d < nd; ++d)
    if (d != 1) reduced.push_back(d);
  const ScalarType ct = is_reduced_floating_type(input.scalar_type()) ? ScalarType::Float32 : input.scalar_type();
  const Tensor invstd = kiln::reciprocal(kiln::sqrt(kiln::add(running_var.to(ScalarType::Float64), eps))).to(ct);
  const Tensor dy = grad.to(ct);
  Tensor grad_input = kiln::mul(dy, invstd.reshape(channel_shape));
  if (weight.defined()) grad_input = kiln::mul(grad_input, weight.to(ct).reshape(channel_shape));
  grad_input = grad_input.to(input.scalar_type());
  Tensor grad_weight;
  if (weight.defined()) {
    const Tensor centered = kiln::sub(input.to(ct), running_mean.to(ct).reshape(channel_shape));
    const Tensor dotp = kiln::sum(kiln::mul(centered, dy), IntArrayRef(reduced));
    grad_weight = kiln::mul(dotp, invstd).to(weight.scalar_type());
  }
  // (a bias without a weight has its gradient too; unused when there is no bias)
  const Tensor grad_bias = kiln::sum(dy, IntArrayRef(reduced)).to(input.scalar_type());
  return {grad_input, grad_weight, grad_bias};
}

}  // namespace kiln
