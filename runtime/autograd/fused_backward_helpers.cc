// The gradients of the fused RNN and attention kernels: their fused backward kernels, or, while a
// graph of the gradient is built (create_graph=True), the gradient of the same forward written with
// differentiable ops (fused_backward_helpers.h).
#include "runtime/autograd/fused_backward_helpers.h"

#include <functional>

#include "generated/api/_batch_norm_train_backward.h"
#include "generated/api/_conv2d_backward_weight_bias.h"
#include "generated/api/_group_norm_backward.h"
#include "generated/api/_gru_cell_fused_backward.h"
#include "generated/api/_lstm_cell_fused_backward.h"
#include "generated/api/_lstm_layer_backward.h"
#include "generated/api/_scaled_dot_product_attention_backward.h"
#include "generated/api/add.h"
#include "generated/api/cat.h"
#include "generated/api/conv2d_backward_weight.h"
#include "generated/api/div.h"
#include "generated/api/eq.h"
#include "generated/api/masked_fill.h"
#include "generated/api/matmul.h"
#include "generated/api/mean.h"
#include "generated/api/mm.h"
#include "generated/api/mul.h"
#include "generated/api/narrow.h"
#include "generated/api/rsqrt.h"
#include "generated/api/sigmoid.h"
#include "generated/api/softmax.h"
#include "generated/api/sub.h"
#include "generated/api/t.h"
#include "generated/api/tanh.h"
#include "generated/api/unsqueeze.h"
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

}  // namespace kiln
