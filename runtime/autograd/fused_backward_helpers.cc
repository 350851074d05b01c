// The gradients of the fused RNN and attention kernels: their fused backward kernels, or, while a
// graph of the gradient is built (create_graph=True), the gradient of the same forward written with
// differentiable ops (fused_backward_helpers.h).
#include "runtime/autograd/fused_backward_helpers.h"

#include <algorithm>
#include <cmath>
#include <functional>

#include "generated/api/_batch_norm_train_backward.h"
#include "generated/api/_conv2d_backward_weight_bias.h"
#include "generated/api/_group_norm_backward.h"
#include "generated/api/_gru_cell_fused_backward.h"
#include "generated/api/_lstm_cell_fused_backward.h"
#include "generated/api/_lstm_layer_backward.h"
#include "generated/api/_scaled_dot_product_attention_backward.h"
#include "generated/api/abs.h"
#include "generated/api/add.h"
#include "generated/api/cat.h"
#include "generated/api/conv2d_backward_weight.h"
#include "generated/api/div.h"
#include "generated/api/eq.h"
#include "generated/api/exp.h"
#include "generated/api/full_like.h"
#include "generated/api/ge.h"
#include "generated/api/gt.h"
#include "generated/api/isnan.h"
#include "generated/api/masked_fill.h"
#include "generated/api/matmul.h"
#include "generated/api/mean.h"
#include "generated/api/mm.h"
#include "generated/api/mul.h"
#include "generated/api/narrow.h"
#include "generated/api/neg.h"
#include "generated/api/reciprocal.h"
#include "generated/api/rsqrt.h"
#include "generated/api/sigmoid.h"
#include "generated/api/softmax.h"
#include "generated/api/sqrt.h"
#include "generated/api/sub.h"
#include "generated/api/sum.h"
#include "generated/api/t.h"
#include "generated/api/tanh.h"
#include "generated/api/unsqueeze.h"
#include "generated/api/where.h"
#include "generated/api/zeros.h"
#include "runtime/api/attention_scores.h"
#include "runtime/autograd/engine.h"
#include "runtime/autograd/formula_helpers.h"
#include "runtime/dispatch/grad_mode.h"

namespace kiln {
namespace {

using Composite = std::function<Tensor(const std::vector<Tensor>&)>;

// The gradient of forward(inputs) for `grad`, with a graph (the engine called again, from inside the
// backward pass, with create_graph). Each input that requires grad enters the composition through a
// view of its own: the view's node is where the nested pass captures the input's gradient and stops,
// so it neither runs the input's own graph (which the outer pass will run) nor fires its hooks, while
// the gradient's graph still leads back to the input through the view.
std::vector<Tensor> composite_gradient(const Composite& forward, const std::vector<Tensor>& inputs, const Tensor& grad) {
  std::vector<Tensor> args(inputs);
  std::vector<TensorBase> wrt;
  std::vector<size_t> slots;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!inputs[i].defined() || !inputs[i].requires_grad()) continue;
    args[i] = inputs[i].view(inputs[i].sizes());
    wrt.push_back(args[i]);
    slots.push_back(i);
  }
  std::vector<Tensor> grads(inputs.size());
  if (wrt.empty()) return grads;
  BackwardOptions options;
  options.retain_graph = true;
  options.create_graph = true;
  const std::vector<TensorBase> found = kiln::grad({forward(args)}, wrt, {grad}, options, /*allow_unused=*/true);
  for (size_t k = 0; k < slots.size(); ++k) grads[slots[k]] = Tensor(found[k]);
  return grads;
}

Tensor part(const Tensor& t, int64_t k, int64_t width) { return kiln::narrow(t, 1, k * width, width); }

// _gru_cell_fused: r = s(ir + hr), z = s(iz + hz), n = tanh(in + r hn), hy = (hx - n) z + n.
Tensor gru_cell(const std::vector<Tensor>& x) {
  const int64_t H = x[2].sizes()[1];
  const Tensor r = kiln::sigmoid(kiln::add(part(x[0], 0, H), part(x[1], 0, H)));
  const Tensor z = kiln::sigmoid(kiln::add(part(x[0], 1, H), part(x[1], 1, H)));
  const Tensor n = kiln::tanh(kiln::add(part(x[0], 2, H), kiln::mul(r, part(x[1], 2, H))));
  return kiln::add(kiln::mul(kiln::sub(x[2], n), z), n);
}

// One LSTM step from pre-activation gates (i, f, g, o) and c: the activated gates, cy and o tanh(cy).
struct LstmStep {
  Tensor acts, cy, hy;
};
LstmStep lstm_step(const Tensor& gates, const Tensor& cx) {
  const int64_t H = cx.sizes()[1];
  const Tensor i = kiln::sigmoid(part(gates, 0, H)), f = kiln::sigmoid(part(gates, 1, H));
  const Tensor g = kiln::tanh(part(gates, 2, H)), o = kiln::sigmoid(part(gates, 3, H));
  const Tensor cy = kiln::add(kiln::mul(f, cx), kiln::mul(i, g));
  return {kiln::cat({i, f, g, o}, 1), cy, kiln::mul(o, kiln::tanh(cy))};
}

// _lstm_cell_fused: [hy | cy].
Tensor lstm_cell(const std::vector<Tensor>& x) {
  const LstmStep s = lstm_step(x[0], x[1]);
  return kiln::cat({s.hy, s.cy}, 1);
}

// Rows [0, b) of state replaced by `rows` (the sequences that ran this step).
Tensor update_rows(const Tensor& state, const Tensor& rows) {
  const int64_t B = state.sizes()[0], b = rows.sizes()[0];
  return b == B ? rows : kiln::cat({rows, kiln::narrow(state, 0, b, B - b)}, 0);
}

// _lstm_layer (runtime/kernels/cpu/rnn_layer_ops.cc has the layout): x = [input_gates, h0, c0,
// w_hh, w_hr]; every step's row [h | c | activated gates | h before the projection (zeros without
// one)], then each sequence's final [h | c | zeros].
Tensor lstm_layer(const std::vector<Tensor>& x, IntArrayRef batch_sizes, bool reverse) {
  const Tensor &input_gates = x[0], &w_hh = x[3], &w_hr = x[4];
  const int64_t H = x[2].sizes()[1], B = x[1].sizes()[0];
  const int64_t steps = static_cast<int64_t>(batch_sizes.size());
  std::vector<int64_t> offsets{0};
  for (int64_t b : batch_sizes) offsets.push_back(offsets.back() + b);
  Tensor h = x[1], c = x[2];
  std::vector<Tensor> rows(steps);
  for (int64_t k = 0; k < steps; ++k) {
    const int64_t t = reverse ? steps - 1 - k : k, b = batch_sizes[t];
    const Tensor gates = kiln::add(kiln::narrow(input_gates, 0, offsets[t], b),
                                   kiln::mm(kiln::narrow(h, 0, 0, b), kiln::t(w_hh)));
    const LstmStep s = lstm_step(gates, kiln::narrow(c, 0, 0, b));
    const Tensor h_new = w_hr.defined() ? kiln::mm(s.hy, kiln::t(w_hr)) : s.hy;
    const Tensor pre = w_hr.defined() ? s.hy : kiln::zeros({b, H}, input_gates.dtype());
    rows[t] = kiln::cat({h_new, s.cy, s.acts, pre}, 1);
    h = update_rows(h, h_new);
    c = update_rows(c, s.cy);
  }
  rows.push_back(kiln::cat({h, c, kiln::zeros({B, 5 * H}, input_gates.dtype())}, 1));
  return kiln::cat(rows, 0);
}

// _scaled_dot_product_attention's output: softmax(q k^T scale + mask) v (torch's math path).
Tensor attention(const std::vector<Tensor>& x, const Tensor& attn_mask, bool is_causal,
                 const std::optional<double>& scale) {
  return kiln::matmul(kiln::softmax(masked_attention_scores(x[0], x[1], attn_mask, is_causal, scale), -1), x[2]);
}

}  // namespace

std::vector<Tensor> gru_cell_fused_backward(const Tensor& grad, const Tensor& input_gates, const Tensor& hidden_gates,
                                            const Tensor& hx) {
  if (!GradMode::is_enabled()) return kiln::_gru_cell_fused_backward(grad, input_gates, hidden_gates, hx);
  return composite_gradient(gru_cell, {input_gates, hidden_gates, hx}, grad);
}

std::vector<Tensor> lstm_cell_fused_backward(const Tensor& grad, const Tensor& gates, const Tensor& cx,
                                             const Tensor& state) {
  if (!GradMode::is_enabled()) return kiln::_lstm_cell_fused_backward(grad, gates, cx, state);
  return composite_gradient(lstm_cell, {gates, cx}, grad);
}

std::vector<Tensor> lstm_layer_backward(const Tensor& grad, const Tensor& input_gates, const Tensor& h0,
                                        const Tensor& c0, const Tensor& w_hh, const Tensor& w_hr,
                                        IntArrayRef batch_sizes, bool reverse, const Tensor& output) {
  if (!GradMode::is_enabled())
    return kiln::_lstm_layer_backward(grad, input_gates, h0, c0, w_hh, w_hr, batch_sizes, reverse, output);
  const std::vector<int64_t> sizes(batch_sizes.begin(), batch_sizes.end());  // outlives the call
  const auto forward = [&](const std::vector<Tensor>& x) { return lstm_layer(x, sizes, reverse); };
  return composite_gradient(forward, {input_gates, h0, c0, w_hh, w_hr}, grad);
}

std::vector<Tensor> scaled_dot_product_attention_backward(const Tensor& grad, const Tensor& query, const Tensor& key,
                                                          const Tensor& value, const Tensor& attn_mask, bool is_causal,
                                                          const std::optional<double>& scale, const Tensor& output,
                                                          const Tensor& logsumexp) {
  if (!GradMode::is_enabled())
    return kiln::_scaled_dot_product_attention_backward(grad, query, key, value, attn_mask, is_causal, scale, output,
                                                        logsumexp);
  const auto forward = [&](const std::vector<Tensor>& x) { return attention(x, attn_mask, is_causal, scale); };
  return composite_gradient(forward, {query, key, value}, grad);
}

// (x - mean) / sqrt(var + eps) with the mean and biased variance over `dims`, then per channel (dim
// 1) * w + b where given: the normalizations' forward written with ops, for their gradients' graphs.
Tensor standardize(const Tensor& x, IntArrayRef dims, double eps) {
  const Tensor mean = kiln::mean(x, dims, /*keepdim=*/true);
  const Tensor centered = kiln::sub(x, mean);
  const Tensor var = kiln::mean(kiln::mul(centered, centered), dims, /*keepdim=*/true);
  return kiln::mul(centered, kiln::rsqrt(kiln::add(var, eps)));
}

Tensor affine_per_channel(Tensor y, const Tensor& weight, const Tensor& bias) {
  std::vector<int64_t> channel_shape(static_cast<size_t>(y.dim()), 1);
  channel_shape[1] = y.sizes()[1];
  if (weight.defined()) y = kiln::mul(y, weight.reshape(channel_shape));
  if (bias.defined()) y = kiln::add(y, bias.reshape(channel_shape));
  return y;
}

// batch_norm's training pass: the statistics over every dim but 1.
Tensor batch_norm_train_math(const std::vector<Tensor>& t, double eps) {
  std::vector<int64_t> dims;
  for (int64_t d = 0; d < t[0].dim(); ++d)
    if (d != 1) dims.push_back(d);
  return affine_per_channel(standardize(t[0], IntArrayRef(dims), eps), t[1], t[2]);
}

std::vector<Tensor> batch_norm_train_backward(const Tensor& grad, const Tensor& input, const Tensor& weight,
                                              const Tensor& bias, double eps, const Tensor& mean,
                                              const Tensor& var_sum) {
  if (!GradMode::is_enabled()) return kiln::_batch_norm_train_backward(grad, input, weight, mean, var_sum, eps);
  const auto forward = [eps](const std::vector<Tensor>& x) { return batch_norm_train_math(x, eps); };
  return composite_gradient(forward, {input, weight, bias}, grad);
}

// group_norm: the statistics over each (sample, group)'s elements.
Tensor group_norm_math(const std::vector<Tensor>& t, int64_t groups, double eps) {
  const Tensor& x = t[0];
  const int64_t last[] = {-1};
  const Tensor y = standardize(x.reshape({x.sizes()[0], groups, -1}), IntArrayRef(last, 1), eps).reshape(x.sizes());
  return affine_per_channel(y, t[1], t[2]);
}

std::vector<Tensor> group_norm_fused_backward(const Tensor& grad, const Tensor& input, const Tensor& weight,
                                              const Tensor& bias, int64_t num_groups, double eps, const Tensor& mean,
                                              const Tensor& rstd) {
  if (!GradMode::is_enabled()) return kiln::_group_norm_backward(grad, input, weight, mean, rstd, num_groups);
  const auto forward = [num_groups, eps](const std::vector<Tensor>& x) { return group_norm_math(x, num_groups, eps); };
  return composite_gradient(forward, {input, weight, bias}, grad);
}

// conv2d: with a bias, its gradient and the weight's from one kernel (torch's bits where oneDNN computes
// both); with create_graph, the two differentiable ops.
std::vector<Tensor> conv2d_weight_bias_backward(const Tensor& grad, const Tensor& input, const Tensor& weight,
                                                const Tensor& bias, IntArrayRef stride, IntArrayRef padding,
                                                IntArrayRef dilation, int64_t groups) {
  if (!bias.defined() || GradMode::is_enabled())
    return {kiln::conv2d_backward_weight(grad, input, weight.sizes(), stride, padding, dilation, groups),
            bias.defined() ? conv_bias_backward(grad) : Tensor()};
  const auto [grad_weight, grad_bias] =
      kiln::_conv2d_backward_weight_bias(grad, input, weight.sizes(), stride, padding, dilation, groups);
  return {grad_weight, grad_bias};
}

Tensor norm2_backward(const Tensor& grad, const Tensor& self, const Tensor& norm, bool keepdim) {
  const Tensor g = keepdim ? grad : kiln::unsqueeze(grad, -1);
  const Tensor n = keepdim ? norm : kiln::unsqueeze(norm, -1);
  return kiln::mul(g, kiln::masked_fill(kiln::div(self, n), kiln::eq(n, 0), 0));
}

namespace {
// `t` with the dims a reduction over `dims` (of a tensor of nd dims) dropped put back, as torch's
// unsqueeze_multiple; nothing to do with keepdim.
Tensor unsqueeze_reduced_dims(const Tensor& t, int64_t nd, IntArrayRef dims, bool keepdim, const char* op) {
  if (keepdim || nd == 0) return t;
  std::vector<int64_t> wrapped;
  for (int64_t d : dims) wrapped.push_back(wrap_dim(d, nd, op));
  std::sort(wrapped.begin(), wrapped.end());
  wrapped.erase(std::unique(wrapped.begin(), wrapped.end()), wrapped.end());
  Tensor r = t;
  for (int64_t d : wrapped) r = kiln::unsqueeze(r, d);
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
  std::vector<int64_t> wrapped;
  for (int64_t d : *dim) wrapped.push_back(wrap_dim(d, self.dim(), "var"));
  std::sort(wrapped.begin(), wrapped.end());
  wrapped.erase(std::unique(wrapped.begin(), wrapped.end()), wrapped.end());
  for (int64_t d : wrapped) n *= self.sizes()[d];
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

Tensor mse_loss_backward(const Tensor& grad, const Tensor& self, const Tensor& target, int64_t reduction) {
  const Tensor diff = kiln::sub(self, target);
  const double norm = reduction == 1 ? 2.0 / static_cast<double>(diff.numel()) : 2.0;
  return sum_to(kiln::mul(kiln::mul(diff, Scalar(norm)), grad), self.sizes());
}

namespace {
// The loss's per-element slope times the reduction's factor, then grad (broadcast), summed back to
// self's shape where target broadcast it: torch's vectorized loop. (Its scalar loop, which takes the
// last n mod 16 elements of a run, multiplies by beta or delta in double and can round one ulp
// apart; kiln does not copy that dependence on an element's place.)
Tensor scaled_loss_gradient(const Tensor& deriv, const Tensor& grad, const Tensor& self, int64_t reduction) {
  const double norm = reduction == 1 ? 1.0 / static_cast<double>(deriv.numel()) : 1.0;
  return sum_to(kiln::mul(kiln::mul(deriv, Scalar(norm)), grad), self.sizes());
}

Tensor plus_or_minus(const Tensor& d, double magnitude) {
  return kiln::where(kiln::gt(d, 0), kiln::full_like(d, Scalar(magnitude)), kiln::full_like(d, Scalar(-magnitude)));
}
}  // namespace

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
  Tensor grad_weight, grad_bias;
  if (weight.defined()) {
    const Tensor centered = kiln::sub(input.to(ct), running_mean.to(ct).reshape(channel_shape));
    const Tensor dotp = kiln::sum(kiln::mul(centered, dy), IntArrayRef(reduced));
    grad_weight = kiln::mul(dotp, invstd).to(weight.scalar_type());
    grad_bias = kiln::sum(dy, IntArrayRef(reduced)).to(weight.scalar_type());
  }
  return {grad_input, grad_weight, grad_bias};
}

}  // namespace kiln
