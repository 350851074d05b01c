#include "runtime/autograd/accumulate_grad.h"

#include "runtime/autograd/grad_mode.h"
#include "runtime/autograd/ops_seam.h"

namespace kiln {

AccumulateGrad::AccumulateGrad(TensorBase variable) : variable_(std::move(variable)) {
  add_input_metadata(variable_);
}

variable_list AccumulateGrad::apply(variable_list&& grads) {
  TensorBase new_grad = std::move(grads[0]);
  if (!new_grad.defined()) return {};
  AutogradMeta& meta = variable_.impl()->ensure_autograd_meta();
  for (const GradHook& hook : meta.leaf_hooks) {
    TensorBase replaced = (*hook)(new_grad);
    if (replaced.defined()) new_grad = replaced;
  }
  if (!meta.grad.defined()) {
    // Under create_graph the gradient keeps its graph (for double backward);
    // otherwise it is detached, and copied unless nobody else can see it.
    if (GradMode::is_enabled()) {
      meta.grad = new_grad;
    } else {
      meta.grad = new_grad.use_count() == 1 && !new_grad.requires_grad() ? new_grad : ops_seam::clone(new_grad);
    }
  } else if (GradMode::is_enabled()) {
    meta.grad = ops_seam::add(meta.grad, new_grad);
  } else {
    ops_seam::add_(meta.grad, new_grad);
  }
  return {};
}

}  // namespace kiln
