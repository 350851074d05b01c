// Formula helpers of the nn ops' derivatives (convolution, pooling, losses).
#include <vector>

#include "generated/api/adaptive_avg_pool2d.h"
#include "generated/api/adaptive_avg_pool3d.h"
#include "generated/api/add.h"
#include "generated/api/arange.h"
#include "generated/api/clamp.h"
#include "generated/api/div.h"
#include "generated/api/index_select.h"
#include "generated/api/log.h"
#include "generated/api/mean.h"
#include "generated/api/mul.h"
#include "generated/api/native_layer_norm_backward.h"
#include "generated/api/neg.h"
#include "generated/api/rsqrt.h"
#include "generated/api/sigmoid.h"
#include "generated/api/softplus.h"
#include "generated/api/sub.h"
#include "generated/api/sum.h"
#include "runtime/autograd/formula_helpers.h"
#include "runtime/dispatch/grad_mode.h"

namespace kiln {

std::vector<Tensor> layer_norm_backward(const Tensor& grad, const Tensor& input, IntArrayRef normalized_shape,
                                        const Tensor& mean, const Tensor& rstd, const Tensor& weight,
                                        const Tensor& bias, double eps) {
  if (!GradMode::is_enabled()) return kiln::native_layer_norm_backward(grad, input, normalized_shape, mean, rstd, weight, bias);
  // With ops: x^ = (x - mu) * rstd, g = grad * w, dx = rstd * (g - mean(g) - x^ * mean(g * x^)).
  std::vector<int64_t> dims;
  for (int64_t d = input.dim() - static_cast<int64_t>(normalized_shape.size()); d < input.dim(); ++d) dims.push_back(d);
  const IntArrayRef over(dims);
  const Tensor centered = kiln::sub(input, kiln::mean(input, over, true));
  const Tensor inv_std = kiln::rsqrt(kiln::add(kiln::mean(kiln::mul(centered, centered), over, true), eps));
  const Tensor xhat = kiln::mul(centered, inv_std);
  const Tensor g = weight.defined() ? kiln::mul(grad, weight) : grad;
  const Tensor dx = kiln::mul(inv_std, kiln::sub(kiln::sub(g, kiln::mean(g, over, true)),
                                                 kiln::mul(xhat, kiln::mean(kiln::mul(g, xhat), over, true))));
  return {dx, weight.defined() ? sum_to(kiln::mul(grad, xhat), weight.sizes()) : Tensor(),
          bias.defined() ? sum_to(grad, bias.sizes()) : Tensor()};
}

Tensor conv_bias_backward(const Tensor& grad) {
  // (N, C, H, W) or unbatched (C, H, W): keep the channel dim.
  const std::vector<int64_t> dims = grad.dim() == 4 ? std::vector<int64_t>{0, 2, 3} : std::vector<int64_t>{1, 2};
  return kiln::sum(grad, IntArrayRef(dims));
}

Tensor max_pool_double_backward(const Tensor& grad, const Tensor& indices) {
  // grad has the input's shape, indices the output's; both end in one plane per (n, c).
  const int64_t nd = indices.dim();
  const int64_t plane_in = grad.sizes()[nd - 2] * grad.sizes()[nd - 1];
  const int64_t plane_out = indices.sizes()[nd - 2] * indices.sizes()[nd - 1];
  const int64_t planes = plane_out == 0 ? 0 : indices.numel() / plane_out;
  // Flat position of each index in grad: plane * (H * W) + index.
  const Tensor offsets = kiln::mul(kiln::arange(planes, ScalarType::Int64), plane_in).view({planes, 1});
  const Tensor flat = kiln::add(indices.reshape({planes, plane_out}), offsets).reshape({-1});
  return kiln::index_select(grad.reshape({-1}), 0, flat).view(indices.sizes());
}

Tensor adaptive_avg_pool_double_backward(const Tensor& grad, IntArrayRef grad_output_sizes) {
  const size_t nd = grad_output_sizes.size();
  return kiln::adaptive_avg_pool2d(grad, {grad_output_sizes[nd - 2], grad_output_sizes[nd - 1]});
}

// indices flat in each D * H * W volume: max_pool_double_backward over volumes flattened to one row.
Tensor max_pool3d_double_backward(const Tensor& grad, const Tensor& indices) {
  const int64_t nd = indices.dim();
  std::vector<int64_t> g_rows(grad.sizes().begin(), grad.sizes().end() - 3), i_rows(indices.sizes().begin(),
                                                                                    indices.sizes().end() - 3);
  g_rows.insert(g_rows.end(), {1, grad.sizes()[nd - 3] * grad.sizes()[nd - 2] * grad.sizes()[nd - 1]});
  i_rows.insert(i_rows.end(), {1, indices.sizes()[nd - 3] * indices.sizes()[nd - 2] * indices.sizes()[nd - 1]});
  return max_pool_double_backward(grad.reshape(g_rows), indices.reshape(i_rows)).reshape(indices.sizes());
}

Tensor adaptive_avg_pool3d_double_backward(const Tensor& grad, IntArrayRef grad_output_sizes) {
  const size_t nd = grad_output_sizes.size();
  return kiln::adaptive_avg_pool3d(grad, {grad_output_sizes[nd - 3], grad_output_sizes[nd - 2], grad_output_sizes[nd - 1]});
}

namespace {
Tensor one_minus(const Tensor& t) { return kiln::add(kiln::neg(t), 1); }

// g * weight, / numel for a mean.
Tensor weighted_mean_gradient(Tensor g, const Tensor& weight, int64_t reduction, int64_t numel) {
  if (weight.defined()) g = kiln::mul(g, weight);
  return reduction == 1 ? kiln::div(g, static_cast<double>(numel)) : g;
}

// (term * grad) * weight, divided by numel for a mean: the per-element gradient of a reduced loss, in
// torch's order (its backward functions multiply by grad, then by the weight, then divide).
Tensor loss_gradient(const Tensor& grad, const Tensor& term, const Tensor& weight, int64_t reduction, int64_t numel) {
  return weighted_mean_gradient(kiln::mul(term, grad), weight, reduction, numel);
}
}  // namespace

Tensor binary_cross_entropy_backward(const Tensor& grad, const Tensor& self, const Tensor& target,
                                     const Tensor& weight, int64_t reduction) {
  // torch's EPSILON is the float 1e-12 (9.9999999600e-13), which shows in the gradient at p = 0 or 1.
  const Tensor denominator = kiln::clamp(kiln::mul(one_minus(self), self), Scalar(static_cast<double>(1e-12f)));
  // torch's kernel: grad * (x - t) / max((1 - x) x, eps)
  return weighted_mean_gradient(kiln::div(kiln::mul(grad, kiln::sub(self, target)), denominator), weight, reduction,
                                self.numel());
}

Tensor binary_cross_entropy_target_backward(const Tensor& grad, const Tensor& self, const Tensor& target,
                                            const Tensor& weight, int64_t reduction) {
  // Unclamped logs, as torch: infinite at p = 0 or 1.
  return loss_gradient(grad, kiln::sub(kiln::log(one_minus(self)), kiln::log(self)), weight, reduction, self.numel());
}

Tensor binary_cross_entropy_with_logits_backward(const Tensor& grad, const Tensor& self, const Tensor& target,
                                                 const Tensor& weight, const Tensor& pos_weight, int64_t reduction) {
  const Tensor s = kiln::sigmoid(self);
  Tensor term;
  if (pos_weight.defined()) {  // ((pos_weight t + 1) - t) sigmoid(x) - pos_weight t
    const Tensor pt = kiln::mul(pos_weight, target);
    term = kiln::sub(kiln::mul(kiln::sub(kiln::add(pt, 1), target), s), pt);
  } else {
    term = kiln::sub(s, target);
  }
  return loss_gradient(grad, term, weight, reduction, self.numel());
}

Tensor binary_cross_entropy_with_logits_target_backward(const Tensor& grad, const Tensor& self, const Tensor& target,
                                                        const Tensor& weight, const Tensor& pos_weight,
                                                        int64_t reduction) {
  Tensor term;
  if (pos_weight.defined()) {  // log_sigmoid(-x) - pos_weight log_sigmoid(x)
    const Tensor log_sigmoid_neg = kiln::neg(kiln::softplus(self, 1, 20));
    const Tensor log_sigmoid = kiln::neg(kiln::softplus(kiln::neg(self), 1, 20));
    term = kiln::sub(log_sigmoid_neg, kiln::mul(pos_weight, log_sigmoid));
  } else {
    term = kiln::neg(self);
  }
  return loss_gradient(grad, term, weight, reduction, self.numel());
}

}  // namespace kiln
