#include "runtime/autograd/accumulate_grad.h"

#include <algorithm>
#include <vector>

#include "generated/api/empty_strided.h"
#include "runtime/dispatch/grad_mode.h"
#include "runtime/autograd/ops_seam.h"
#include "runtime/autograd/tensor_hooks.h"
#include "runtime/core/error.h"

namespace kiln {

namespace {

// Whether t's elements fill its storage span exactly once in some order of its dims (torch's
// is_non_overlapping_and_dense): dims of size < 2 aside, the strides sorted are the running products.
bool dense_non_overlapping(const TensorBase& t) {
  if (t.is_contiguous()) return true;
  std::vector<int64_t> dims;
  for (int64_t d = 0; d < t.dim(); ++d)
    if (t.sizes()[d] >= 2) dims.push_back(d);
  std::sort(dims.begin(), dims.end(), [&](int64_t a, int64_t b) { return t.strides()[a] < t.strides()[b]; });
  int64_t expected = 1;
  for (int64_t d : dims) {
    if (t.strides()[d] != expected) return false;
    expected *= t.sizes()[d];
  }
  return true;
}

// torch's layout contract for .grad: the variable's strides when the variable is dense and
// non-overlapping (a channels_last or transposed weight gets a gradient laid out the same way, so
// in-place optimizer updates walk both alike), else row-major.
bool obeys_layout(const TensorBase& grad, const TensorBase& variable) {
  if (!dense_non_overlapping(variable)) return grad.is_contiguous();
  for (int64_t d = 0; d < grad.dim(); ++d) {
    if (grad.sizes()[d] != 1) {
      if (grad.strides()[d] != variable.strides()[d]) return false;
    } else if (grad.strides()[d] == 0) {
      return false;  // a broadcast size-1 dim: a view of something else
    }
  }
  return true;
}

TensorBase copy_in_layout(const TensorBase& grad, const TensorBase& variable) {
  if (!dense_non_overlapping(variable)) return ops_seam::contiguous_copy(grad);
  TensorBase out = kiln::empty_strided(variable.sizes(), variable.strides(), grad.scalar_type(), grad.device());
  ops_seam::copy_(out, grad);
  return out;
}

}  // namespace

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
    // otherwise it is detached. .grad is always a tensor of its own in the variable's layout
    // (never a broadcast view), so in-place updates of it work: the incoming gradient is kept
    // only when nobody else can see it and it already has that layout.
    const bool plain = obeys_layout(new_grad, variable_);
    if (GradMode::is_enabled()) {
      meta.grad = plain ? new_grad : copy_in_layout(new_grad, variable_);
    } else {
      const bool private_grad = new_grad.use_count() == 1 && !new_grad.requires_grad();
      meta.grad = private_grad && plain ? new_grad : copy_in_layout(new_grad, variable_);
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
