// Tensor.register_hook and Tensor.retain_grad.
#pragma once

#include <utility>

#include "runtime/core/autograd_meta.h"

namespace kiln {

// Runs `hook` on the gradient of `t` during backward (it may return a replacement).
void register_hook(const TensorBase& t, GradHook hook);
// Keeps the gradient of a non-leaf in its .grad (leaves always keep theirs).
void retain_grad(const TensorBase& t);
// After an in-place op gave t a new grad_fn: a retained .grad follows t's new history (torch 1.13
// moves the hook when t itself is rebased), the old node's hook no longer writes it.
void move_retain_grad(const TensorBase& t);

// Runs `hook` with the leaf `t` itself once its .grad has been accumulated (torch's
// register_post_accumulate_grad_hook); its result is ignored.
void register_post_accumulate_grad_hook(const TensorBase& t, GradHook hook);

// How such a hook sits among the leaf's hooks: AccumulateGrad runs it after accumulating, the
// other leaf hooks before.
class PostAccumulateGradHook final : public GradHookFunction {
 public:
  explicit PostAccumulateGradHook(GradHook hook) : hook_(std::move(hook)) {}
  TensorBase operator()(const TensorBase& leaf) override { return (*hook_)(leaf); }

 private:
  GradHook hook_;
};

}  // namespace kiln
