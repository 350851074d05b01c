// scaled_dot_product_attention: the fused kernel (_scaled_dot_product_attention,
// runtime/kernels/cpu/attention_ops.cc) unless dropout is asked for or a float mask needs a gradient;
// then torch 2.x's math path (softmax of the masked scores, dropout on the weights, times value),
// whose random draws are torch's.
#include <tuple>

#include "generated/api/_scaled_dot_product_attention.h"
#include "generated/api/dropout.h"
#include "generated/api/matmul.h"
#include "generated/api/softmax.h"
#include "generated/kernels/composite/scaled_dot_product_attention.h"
#include "runtime/api/attention_scores.h"

namespace kiln {
namespace composite_implicit {

Tensor scaled_dot_product_attention(const Tensor& query, const Tensor& key, const Tensor& value,
                                    const Tensor& attn_mask, double dropout_p, bool is_causal,
                                    const std::optional<double>& scale) {
  KILN_CHECK_VALUE(dropout_p >= 0 && dropout_p <= 1, "scaled_dot_product_attention(): dropout_p must be in [0, 1], got ",
                   dropout_p);
  // A float mask that needs a gradient (a learned bias) takes the math path, whose ops give it one.
  const bool mask_needs_grad = attn_mask.defined() && attn_mask.requires_grad() && attn_mask.is_floating_point();
  if (dropout_p == 0 && !mask_needs_grad)
    return std::get<0>(kiln::_scaled_dot_product_attention(query, key, value, attn_mask, is_causal, scale));
  KILN_CHECK(query.dim() >= 2 && key.dim() >= 2, "scaled_dot_product_attention(): expected query and key of at least 2 dims");
  KILN_CHECK(!(is_causal && attn_mask.defined()),
             "scaled_dot_product_attention(): Explicit attn_mask should not be set when is_causal=True");
  const Tensor scores = masked_attention_scores(query, key, attn_mask, is_causal, scale);
  const Tensor weights = kiln::dropout(kiln::softmax(scores, -1), dropout_p, true);
  return kiln::matmul(weights, value);
}

}  // namespace composite_implicit
}  // namespace kiln
