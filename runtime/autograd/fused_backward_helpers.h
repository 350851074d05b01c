// Formula helpers of the fused kernels whose backward kernels have no derivative of their own: the
// LSTM and GRU cells, the LSTM layer, scaled dot-product attention, batch_norm's training pass, group_norm and conv2d's weight and bias
// (derivatives.yaml names them;
// codegen includes this header only where a formula calls one).
//
// Without a graph of the gradient (grad mode off during backward, the engine's default) each calls
// its fused backward kernel. With create_graph=True the engine leaves grad mode on, and the helper
// recomputes the op's forward as a composition of differentiable ops and returns that composition's
// gradient, built with a graph (docs/ARCHITECTURE.md, "Double backward through fused kernels"), so
// the gradient can be differentiated again, to any order.
#pragma once

#include <optional>
#include <vector>

#include "generated/api/tensor.h"

namespace kiln {

// [input_gates, hidden_gates, hx]
std::vector<Tensor> gru_cell_fused_backward(const Tensor& grad, const Tensor& input_gates, const Tensor& hidden_gates,
                                            const Tensor& hx);
// [gates, cx]; state is the forward's [hy | cy]
std::vector<Tensor> lstm_cell_fused_backward(const Tensor& grad, const Tensor& gates, const Tensor& cx,
                                             const Tensor& state);
// [input_gates, h0, c0, w_hh, w_hr]; output is the forward's result
std::vector<Tensor> lstm_layer_backward(const Tensor& grad, const Tensor& input_gates, const Tensor& h0,
                                        const Tensor& c0, const Tensor& w_hh, const Tensor& w_hr,
                                        IntArrayRef batch_sizes, bool reverse, const Tensor& output);
// [query, key, value]
std::vector<Tensor> scaled_dot_product_attention_backward(const Tensor& grad, const Tensor& query, const Tensor& key,
                                                          const Tensor& value, const Tensor& attn_mask, bool is_causal,
                                                          const std::optional<double>& scale, const Tensor& output,
                                                          const Tensor& logsumexp);

// [input, weight, bias] of _batch_norm_train
std::vector<Tensor> batch_norm_train_backward(const Tensor& grad, const Tensor& input, const Tensor& weight,
                                              const Tensor& bias, double eps, const Tensor& mean,
                                              const Tensor& var_sum);

// [input, weight, bias] of _group_norm
std::vector<Tensor> group_norm_fused_backward(const Tensor& grad, const Tensor& input, const Tensor& weight,
                                              const Tensor& bias, int64_t num_groups, double eps, const Tensor& mean,
                                              const Tensor& rstd);

// [weight, bias] of conv2d (bias undefined: no bias gradient)
std::vector<Tensor> conv2d_weight_bias_backward(const Tensor& grad, const Tensor& input, const Tensor& weight,
                                                const Tensor& bias, IntArrayRef stride, IntArrayRef padding,
                                                IntArrayRef dilation, int64_t groups);
// self of _norm2 / _norm2_lastdim: torch's norm_backward for p = 2, grad * (self / norm) with 0
// where the norm is 0; keepdim false: grad and norm lack the reduced last dim (a whole-tensor norm
// passes true: its 0-dim grad broadcasts as it is)
Tensor norm2_backward(const Tensor& grad, const Tensor& self, const Tensor& norm, bool keepdim);
// self of _var / _std / _logsumexp: torch's var_backward, std_backward and logsumexp_backward, op for
// op (their bits): (2 / (N - correction)) * grad * (self - mean), with grad / (2 std) masked to 0
// where std is 0 first for std, and grad * exp(self - result).
Tensor var_backward(const Tensor& grad, const Tensor& self, const std::optional<std::vector<int64_t>>& dim,
                    double correction, bool keepdim);
Tensor std_backward(const Tensor& result, const Tensor& grad, const Tensor& self,
                    const std::optional<std::vector<int64_t>>& dim, double correction, bool keepdim);
Tensor logsumexp_backward(const Tensor& grad, const Tensor& self, const Tensor& result, IntArrayRef dim, bool keepdim);
// self (and, with the two swapped, target) of mse_loss: torch's mse_loss_backward,
// (norm * (self - target)) * grad with norm = 2 / N for the mean (N the broadcast size) or 2, summed
// back to self's shape where target broadcast it.
Tensor mse_loss_backward(const Tensor& grad, const Tensor& self, const Tensor& target, int64_t reduction);
// Likewise torch's smooth_l1_loss_backward and huber_loss_backward: (norm * deriv) * grad, deriv the
// slope of the loss at d = self - target (+-1 where |d| >= beta, else d / beta; +-delta where
// |d| >= delta, else d; the sign is -1 at 0), norm 1 / N for the mean or 1.
Tensor smooth_l1_loss_backward(const Tensor& grad, const Tensor& self, const Tensor& target, int64_t reduction,
                               double beta);
Tensor huber_loss_backward(const Tensor& grad, const Tensor& self, const Tensor& target, int64_t reduction,
                           double delta);
// self of glu: torch's glu_backward, [sigmoid(b) * grad, (((1 - sigmoid(b)) * sigmoid(b)) * a) * grad]
// for the halves a, b of self along dim.
Tensor glu_backward(const Tensor& grad, const Tensor& self, int64_t dim);
// [input, weight, bias] of _batch_norm_eval, as torch's batch_norm backward in evaluation mode:
// (dy * invstd) * w with invstd = 1 / sqrt(running_var + eps) in double (rounded to the parameters'
// dtype); the weight's sum((x - mean) dy) * invstd and the bias's sum(dy) per channel.
std::vector<Tensor> batch_norm_eval_backward(const Tensor& grad, const Tensor& input, const Tensor& weight,
                                             const Tensor& running_mean, const Tensor& running_var, double eps);
}  // namespace kiln
