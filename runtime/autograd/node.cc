#include "runtime/autograd/node.h"
#include "runtime/autograd/node_post_hooks.h"

#include <atomic>

#include "runtime/autograd/accumulate_grad.h"
#include "runtime/dispatch/grad_mode.h"
#include "runtime/autograd/view_nodes.h"
#include "runtime/autograd/tensor_hooks.h"
#include "runtime/core/error.h"

namespace kiln {
namespace {
std::atomic<uint64_t> g_next_sequence_nr{0};
}  // namespace

Node::Node() : sequence_nr_(g_next_sequence_nr.fetch_add(1, std::memory_order_relaxed)) {}

uint32_t Node::add_input_metadata(const TensorBase& t) {
  InputMetadata m;
  m.shape.assign(t.sizes().begin(), t.sizes().end());
  m.dtype = t.dtype();
  m.device = t.device();
  input_metadata_.push_back(std::move(m));
  return static_cast<uint32_t>(input_metadata_.size() - 1);
}

void delete_node(Node* node) {
  // Destroying a node can destroy the tensors it saved and, through them, earlier
  // nodes: done recursively, a long chain overflows the stack. Queue them instead.
  thread_local std::vector<Node*> pending;
  thread_local bool draining = false;
  pending.push_back(node);
  if (draining) return;
  draining = true;
  while (!pending.empty()) {
    Node* n = pending.back();
    pending.pop_back();
    drop_node_post_hooks(n);  // (grad_fn.register_hook's side table)
    delete n;
  }
  draining = false;
}

std::shared_ptr<Node> grad_accumulator(const TensorBase& leaf) {
  AutogradMeta& meta = leaf.impl()->ensure_autograd_meta();
  if (auto acc = meta.grad_accumulator.lock()) return acc;
  auto acc = make_node<AccumulateGrad>(leaf);
  meta.grad_accumulator = acc;
  return acc;
}

namespace {
// torch's handle_view_on_rebase: the message for writing in place into a view whose creation
// forbids it; `indirect` when the write went through its base or another view.
[[noreturn]] void refuse_view_rebase(const AutogradMeta& meta, bool indirect) {
  const char* modified = indirect ? "its base or another view of its base has been" : "is being";
  std::string msg;
  if (meta.view_creation == ViewCreation::kNoGrad || !meta.grad_fn) {
    msg = detail::str_cat("A view was created in no_grad mode and ", modified, " modified inplace with grad mode enabled.");
  } else {
    msg = detail::str_cat("Output ", meta.output_nr, " of ", meta.grad_fn->name(), " is a view and ", modified,
              " modified inplace.");
  }
  if (meta.view_creation == ViewCreation::kMultiOutput) {
    msg += " This view is the output of a function that returns multiple views. Such functions do not allow the"
           " output views to be modified inplace. You should replace the inplace operation by an out-of-place one.";
  } else {
    msg += " Given that this use case is ambiguous and error-prone, it is forbidden. You can clarify your code by"
           " moving both the view and the inplace either both inside the no_grad block (if you don't want the"
           " inplace to be tracked) or both outside (if you want the inplace to be tracked).";
  }
  throw Error(msg);
}

// A view whose base changed in place (through another view) since its grad_fn
// was set: its gradient now flows through the base's current history.
void refresh_view_grad_fn(const TensorBase& t, AutogradMeta& meta) {
  auto fn = make_node<AsStridedBackward>(meta.base, view_geometry(t, meta.base, "view"));
  meta.grad_fn = fn;
  meta.output_nr = fn->add_input_metadata(t);
  meta.attr_version = t._version();
}

// The same, when due: the view's base was modified in place since its grad_fn was set.
void refresh_if_base_modified(const TensorBase& t, AutogradMeta& meta) {
  if (!meta.is_view || meta.attr_version == t._version() || !meta.base.requires_grad()) return;
  if (meta.view_creation != ViewCreation::kDefault) refuse_view_rebase(meta, /*indirect=*/true);
  refresh_view_grad_fn(t, meta);
}
}  // namespace

void check_view_rebase(const TensorBase& t) {
  AutogradMeta* meta = t.impl()->autograd_meta();
  if (meta && meta->is_view && meta->view_creation != ViewCreation::kDefault && GradMode::is_enabled())
    refuse_view_rebase(*meta, /*indirect=*/false);
}

std::shared_ptr<Node> current_grad_fn(const TensorBase& t) {
  AutogradMeta* meta = t.defined() ? t.impl()->autograd_meta() : nullptr;
  if (!meta) return nullptr;
  refresh_if_base_modified(t, *meta);
  return meta->grad_fn;
}

Edge gradient_edge(const TensorBase& t) {
  if (!t.defined()) return Edge();
  AutogradMeta* meta = t.impl()->autograd_meta();
  if (!meta) return Edge();
  refresh_if_base_modified(t, *meta);
  if (meta->grad_fn) return Edge(meta->grad_fn, meta->output_nr);
  // A view made in no-grad mode requires grad through its base but has no history: its gradient
  // goes nowhere, as in torch.
  if (meta->requires_grad) return Edge(grad_accumulator(t), 0);
  return Edge();
}

void set_history(const TensorBase& t, const std::shared_ptr<Node>& fn) {
  AutogradMeta& meta = t.impl()->ensure_autograd_meta();
  meta.grad_fn = fn;
  meta.output_nr = fn->add_input_metadata(t);
}

void check_inplace(const TensorBase& t, const char* /*op_name*/) {
  if (!GradMode::is_enabled()) return;
  AutogradMeta* meta = t.impl()->autograd_meta();
  if (!meta) return;
  if (meta->is_view && meta->base.defined()) {
    if (meta->view_creation != ViewCreation::kDefault && t.requires_grad())
      refuse_view_rebase(*meta, /*indirect=*/false);  // torch checks this first
    // torch: a view that requires grad over a leaf base, whether the base requires grad or not
    // (x = base.reshape(...).requires_grad_(): x's views have the leaf `base` as theirs)
    const bool leaf_base = meta->base.is_leaf();
    // torch's messages, without the op's name (its check runs before it knows one)
    KILN_CHECK(!(leaf_base && (meta->base.requires_grad() || t.requires_grad())),
               "a view of a leaf Variable that requires grad is being used in an in-place operation.");
  }
  KILN_CHECK(!(meta->requires_grad && meta->grad_fn == nullptr),
             "a leaf Variable that requires grad is being used in an in-place operation.");
}

void rebase_history(const TensorBase& t, const std::shared_ptr<Node>& fn, const char* op_name) {
  check_inplace(t, op_name);
  AutogradMeta& meta = t.impl()->ensure_autograd_meta();
  if (meta.is_view && meta.base.defined()) {
    // The base's history goes through CopySlices; the view becomes a view of it again.
    const TensorBase base = meta.base;
    auto copy_slices = make_node<CopySlices>(base, view_geometry(t, base, op_name), fn);
    set_history(base, copy_slices);
    base.impl()->autograd_meta()->attr_version = base._version();
    refresh_view_grad_fn(t, meta);
    move_retain_grad(t);
    return;
  }
  set_history(t, fn);
  move_retain_grad(t);
}

void mark_view(const TensorBase& view, const TensorBase& base, bool multi_output) {
  AutogradMeta* base_meta = base.impl()->autograd_meta();
  const bool base_is_view = base_meta && base_meta->is_view;
  const TensorBase& root = base_is_view ? base_meta->base : base;
  ViewCreation creation = multi_output ? ViewCreation::kMultiOutput : ViewCreation::kDefault;
  if (!GradMode::is_enabled()) {
    if (!root.requires_grad()) return;
    creation = ViewCreation::kNoGrad;
  }
  AutogradMeta& meta = view.impl()->ensure_autograd_meta();
  if (meta.is_view) return;
  meta.is_view = true;
  meta.base = root;
  // A view of a restricted view keeps the restriction (torch's propagate_creation_meta).
  if (base_is_view && base_meta->view_creation != ViewCreation::kDefault) creation = base_meta->view_creation;
  meta.view_creation = creation;
  meta.attr_version = view._version();
}

}  // namespace kiln
