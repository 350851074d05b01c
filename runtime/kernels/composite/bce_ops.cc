// binary_cross_entropy and binary_cross_entropy_with_logits: written with other ops, but with
// their own derivatives (schema/derivatives.yaml), as torch's: autodiff through the clamped logs
// and the softplus would give nan at p = 0 or 1 and at logits of +-inf, where torch's formulas
// stay finite.
#include "generated/api/add.h"
#include "generated/api/binary_cross_entropy.h"
#include "generated/api/binary_cross_entropy_with_logits.h"
#include "generated/api/clamp.h"
#include "generated/api/clamp_min.h"
#include "generated/api/exp.h"
#include "generated/api/ge.h"
#include "generated/api/le.h"
#include "generated/api/log.h"
#include "generated/api/logical_and.h"
#include "generated/api/mul.h"
#include "generated/api/neg.h"
#include "generated/api/sub.h"
#include "generated/api/where.h"
#include "generated/kernels/binary_cross_entropy.h"
#include "generated/kernels/binary_cross_entropy_with_logits.h"
#include "runtime/kernels/composite/reduce_loss.h"
#include "runtime/kernels/shape_rules.h"

namespace kiln {
namespace composite_explicit {
namespace {

Tensor one_minus(const Tensor& t) { return kiln::add(kiln::neg(t), 1); }

void check_loss_inputs(const Tensor& self, const Tensor& target, int64_t reduction, const char* op) {
  KILN_CHECK(self.is_floating_point(), op, "(): expected a floating point input, got ", scalar_type_name(self.dtype()));
  KILN_CHECK(target.sizes() == self.sizes(), op, "(): Target size (", shape_str(target.sizes()),
             ") must be the same as input size (", shape_str(self.sizes()), ")");
  check_loss_reduction(reduction, op);  // before any work, as torch
}

}  // namespace

// -(t log p + (1 - t) log(1 - p)), each log clamped at -100 as torch's, so p = 0 or 1 is finite.
TensorBase binary_cross_entropy(const TensorBase& self_, const TensorBase& target_, const TensorBase& weight_,
                                int64_t reduction) {
  const Tensor self(self_), target(target_), weight(weight_);
  const char* op = "binary_cross_entropy";
  check_loss_inputs(self, target, reduction, op);
  if (self.numel() > 0) {
    KILN_CHECK(kiln::logical_and(kiln::ge(self, 0), kiln::le(self, 1)).all().item().to_bool(),
               "all elements of input should be between 0 and 1");
  }
  const Tensor log_p = kiln::clamp(kiln::log(self), Scalar(-100.0));
  const Tensor log_1mp = kiln::clamp(kiln::log(one_minus(self)), Scalar(-100.0));
  Tensor loss = kiln::neg(kiln::add(kiln::mul(target, log_p), kiln::mul(one_minus(target), log_1mp)));
  if (weight.defined()) loss = kiln::mul(loss, weight);
  return reduce_loss(loss, reduction, op);
}

// (1 - t) x + w_pos softplus(-x), with w_pos = 1 + (pos_weight - 1) t, in torch's operations and
// order (so its bits): softplus(-x) = m + log(exp(-m) + exp(-x - m)) with m = max(-x, 0), stable
// for any x. Its gradient is the op's own (derivatives.yaml), so the forward need not be one that
// autodiff could differentiate.
TensorBase binary_cross_entropy_with_logits(const TensorBase& self_, const TensorBase& target_,
                                            const TensorBase& weight_, const TensorBase& pos_weight_,
                                            int64_t reduction) {
  const Tensor self(self_), target(target_), weight(weight_), pos_weight(pos_weight_);
  const char* op = "binary_cross_entropy_with_logits";
  check_loss_inputs(self, target, reduction, op);
  // torch computes in place on (1 - target): input, pos_weight and weight may not broadcast it bigger
  for (const Tensor* t : {&self, &pos_weight, &weight}) {
    if (!t->defined()) continue;
    const DimVector shape = broadcast_shapes(target.sizes(), t->sizes(), op);
    KILN_CHECK(IntArrayRef(shape) == target.sizes(), "output with shape ", shape_str(target.sizes()),
               " doesn't match the broadcast shape ", shape_str(shape));
  }
  const Tensor neg_self = kiln::neg(self);
  const Tensor max_val = kiln::clamp_min(neg_self, Scalar(0));
  const Tensor log_sum = kiln::log(kiln::add(kiln::exp(kiln::neg(max_val)), kiln::exp(kiln::sub(neg_self, max_val))));
  Tensor loss = kiln::mul(one_minus(target), self);
  if (pos_weight.defined()) {
    const Tensor log_weight = kiln::add(kiln::mul(kiln::sub(pos_weight, 1), target), 1);
    loss = kiln::add(loss, kiln::mul(log_weight, kiln::add(log_sum, max_val)));
  } else {
    loss = kiln::add(kiln::add(loss, max_val), log_sum);
  }
  if (weight.defined()) loss = kiln::mul(loss, weight);
  return reduce_loss(loss, reduction, op);
}

}  // namespace composite_explicit
}  // namespace kiln
