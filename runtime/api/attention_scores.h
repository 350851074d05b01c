// The scores of scaled dot-product attention as torch 2.x's math path computes them: q k^T times
// the scale (1/sqrt(head size) by default), with the causal or given mask applied (a bool mask's
// false and the causal mask's upper triangle become -inf; a float mask is added). Shared by the
// math path of scaled_dot_product_attention (runtime/kernels/composite/attention_ops.cc) and the gradient with a graph of the
// fused kernel (runtime/autograd/fused_backward_helpers.cc).
#pragma once

#include <cmath>
#include <limits>
#include <optional>

#include "generated/api/add.h"
#include "generated/api/logical_not.h"
#include "generated/api/masked_fill.h"
#include "generated/api/matmul.h"
#include "generated/api/mul.h"
#include "generated/api/ones.h"
#include "generated/api/transpose.h"
#include "generated/api/tril.h"

namespace kiln {

inline Tensor masked_attention_scores(const Tensor& query, const Tensor& key, const Tensor& attn_mask, bool is_causal,
                                      const std::optional<double>& scale) {
  const int64_t L = query.sizes()[query.dim() - 2], S = key.sizes()[key.dim() - 2];
  const double factor = scale.has_value() ? *scale : 1.0 / std::sqrt(static_cast<double>(query.sizes().back()));
  const Tensor scores = kiln::mul(kiln::matmul(query, kiln::transpose(key, -2, -1)), factor);
  const double minus_inf = -std::numeric_limits<double>::infinity();
  if (is_causal) {
    const Tensor keep = kiln::tril(kiln::ones({L, S}, ScalarType::Bool));
    return kiln::masked_fill(scores, kiln::logical_not(keep), minus_inf);
  }
  if (attn_mask.defined()) {
    return attn_mask.dtype() == ScalarType::Bool ? kiln::masked_fill(scores, kiln::logical_not(attn_mask), minus_inf)
                                                 : kiln::add(scores, attn_mask);
  }
  return scores;
}

}  // namespace kiln
