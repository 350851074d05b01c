#include "runtime/autograd/accumulate_grad.h"

#include "runtime/dispatch/grad_mode.h"
#include "runtime/autograd/ops_seam.h"
#include "runtime/autograd/tensor_hooks.h"
#include "runtime/core/error.h"

namespace kiln {

AccumulateGrad::AccumulateGrad(TensorBase variable) : variable_(std::move(variable)) {
  add_input_metadata(variable_);
}

variable_list AccumulateGrad::apply(variable_list&& grads) {
  TensorBase new_grad = std::move(grads[0]);
  if (!new_grad.defined()) return {};
  AutogradMeta& meta = variable_.impl()->ensure_autograd_meta();
  for (const GradHook& hook : meta.leaf_hooks) {
    if (dynamic_cast<const PostAccumulateGradHook*>(hook.get()) != nullptr) continue;  // after accumulating
    TensorBase replaced = (*hook)(new_grad);
    if (!replaced.defined()) continue;
    KILN_CHECK(replaced.sizes() == new_grad.sizes(), "hook 'hook' has changed the size of value (was ",
               shape_str(new_grad.sizes()), " got ", shape_str(replaced.sizes()), ")");
    KILN_CHECK(replaced.dtype() == new_grad.dtype(), "hook 'hook' has changed the type of value (was ",
               scalar_type_name(new_grad.dtype()), " got ", scalar_type_name(replaced.dtype()), ")");
    new_grad = replaced;
  }
  if (!meta.grad.defined()) {
    // Under create_graph the gradient keeps its graph (for double backward);
    // otherwise it is detached. .grad is always a tensor of its own with a plain
    // layout (never a broadcast or transposed view), so in-place updates of it work:
    // the incoming gradient is kept only when nobody else can see it and it is contiguous.
    const bool plain = new_grad.is_contiguous();
    if (GradMode::is_enabled()) {
      meta.grad = plain ? new_grad : ops_seam::contiguous_copy(new_grad);
    } else {
      const bool private_grad = new_grad.use_count() == 1 && !new_grad.requires_grad();
      meta.grad = private_grad && plain ? new_grad : ops_seam::contiguous_copy(new_grad);
    }
  } else if (GradMode::is_enabled()) {
    meta.grad = ops_seam::add(meta.grad, new_grad);
  } else {
    ops_seam::add_(meta.grad, new_grad);
  }
  // A copy of the list: a hook may register or remove hooks.
  const std::vector<GradHook> hooks = meta.leaf_hooks;
  for (const GradHook& hook : hooks)
    if (dynamic_cast<const PostAccumulateGradHook*>(hook.get()) != nullptr) (*hook)(variable_);
  return {};
}

}  // namespace kiln
