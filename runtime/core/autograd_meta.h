// Per-tensor autograd state, created lazily (plain tensors carry none).
#pragma once

#include <memory>
#include <vector>

#include "runtime/core/tensor_base.h"

namespace kiln {

class Node;

// How a view was made, for torch's rule on in-place writes (its CreationMeta): the outputs of an op
// that returns several views (unbind, split), and views made in no-grad mode of a tensor that
// requires grad, may not be modified in place while autograd records, directly or through their base.
enum class ViewCreation : uint8_t { kDefault, kMultiOutput, kNoGrad };

// A gradient hook: returns a replacement gradient, or an undefined tensor to keep it.
// (A small interface instead of std::function keeps <functional> out of every file
// that includes autograd headers.)
class GradHookFunction {
 public:
  virtual ~GradHookFunction() = default;
  virtual TensorBase operator()(const TensorBase& grad) = 0;
};
using GradHook = std::shared_ptr<GradHookFunction>;

template <typename F>
GradHook make_grad_hook(F f) {
  struct Hook final : GradHookFunction {
    explicit Hook(F fn) : fn(std::move(fn)) {}
    TensorBase operator()(const TensorBase& grad) override { return fn(grad); }
    F fn;
  };
  return std::make_shared<Hook>(std::move(f));
}

struct AutogradMeta {
  TensorBase grad;
  // The node that produced this tensor (null for leaves).
  std::shared_ptr<Node> grad_fn;
  // For leaves that require grad: the node that accumulates into `grad`.
  // Weak, so a leaf does not keep graph nodes alive.
  std::weak_ptr<Node> grad_accumulator;
  uint32_t output_nr = 0;
  bool requires_grad = false;
  bool retains_grad = false;
  // Hooks of a leaf, run by its AccumulateGrad (hooks of non-leaves live on grad_fn).
  std::vector<GradHook> leaf_hooks;
  // Set when this tensor is a view of `base` created while autograd was recording.
  bool is_view = false;
  ViewCreation view_creation = ViewCreation::kDefault;
  TensorBase base;
  // The version at which grad_fn was last set: a view whose base was modified
  // since (through another view) gets a fresh grad_fn when next used.
  uint32_t attr_version = 0;
  // Shared with retain_grad hooks so they can find this tensor while it lives,
  // without keeping it alive (that would be a reference cycle through grad_fn).
  std::shared_ptr<TensorImpl*> self_cell;

  ~AutogradMeta() {
    if (self_cell) *self_cell = nullptr;
  }
};

}  // namespace kiln
