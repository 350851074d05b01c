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
}  // namespace kiln
