#include "runtime/autograd/tensor_hooks.h"

#include "runtime/dispatch/grad_mode.h"
#include "runtime/autograd/node.h"
#include "runtime/autograd/ops_seam.h"

namespace kiln {

void register_hook(const TensorBase& t, GradHook hook) {
  KILN_CHECK(t.requires_grad(), "cannot register a hook on a tensor that doesn't require gradient");
  if (t.grad_fn()) {
    t.grad_fn()->add_pre_hook(t.output_nr(), std::move(hook));
  } else {
    t.impl()->ensure_autograd_meta().leaf_hooks.push_back(std::move(hook));
  }
}

void retain_grad(const TensorBase& t) {
  KILN_CHECK(t.requires_grad(), "can't retain_grad on Tensor that has requires_grad=False");
  if (t.is_leaf()) return;
  AutogradMeta& meta = t.impl()->ensure_autograd_meta();
  if (meta.retains_grad) return;
  meta.retains_grad = true;
  if (!meta.self_cell) meta.self_cell = std::make_shared<TensorImpl*>(t.impl());
  // The hook finds the tensor through a cell its meta clears on destruction:
  // holding the tensor itself would make a cycle through grad_fn.
  std::shared_ptr<TensorImpl*> cell = meta.self_cell;
  t.grad_fn()->add_retain_grad_hook(t.output_nr(), make_grad_hook([cell](const TensorBase& grad) -> TensorBase {
    TensorImpl* impl = *cell;
    if (impl == nullptr) return TensorBase();
    AutogradMeta& m = impl->ensure_autograd_meta();
    if (!m.grad.defined()) {
      m.grad = GradMode::is_enabled() ? grad : ops_seam::contiguous_copy(grad);
    } else {
      m.grad = ops_seam::add(m.grad, grad);
    }
    return TensorBase();
  }));
}

void move_retain_grad(const TensorBase& t) {
  AutogradMeta* meta = t.impl()->autograd_meta();
  if (meta == nullptr || !meta->retains_grad || t.is_leaf()) return;
  if (meta->self_cell) *meta->self_cell = nullptr;  // the hook on the old node finds no tensor now
  meta->self_cell.reset();
  meta->retains_grad = false;
  retain_grad(t);
}

}  // namespace kiln

namespace kiln {

void register_post_accumulate_grad_hook(const TensorBase& t, GradHook hook) {
  KILN_CHECK(t.requires_grad(), "cannot register a hook on a tensor that doesn't require gradient");
  KILN_CHECK(t.is_leaf(), "post accumulate grad hooks cannot be registered on non-leaf tensors");
  t.impl()->ensure_autograd_meta().leaf_hooks.push_back(std::make_shared<PostAccumulateGradHook>(std::move(hook)));
}

}  // namespace kiln
