#include "runtime/autograd/node.h"

#include <atomic>

#include "runtime/autograd/accumulate_grad.h"
#include "runtime/dispatch/grad_mode.h"
#include "runtime/autograd/view_nodes.h"
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
// A view whose base changed in place (through another view) since its grad_fn
// was set: its gradient now flows through the base's current history.
void refresh_view_grad_fn(const TensorBase& t, AutogradMeta& meta) {
  auto fn = make_node<AsStridedBackward>(meta.base, view_geometry(t, meta.base, "view"));
  meta.grad_fn = fn;
  meta.output_nr = fn->add_input_metadata(t);
  meta.attr_version = t._version();
}
}  // namespace

Edge gradient_edge(const TensorBase& t) {
  if (!t.defined()) return Edge();
  AutogradMeta* meta = t.impl()->autograd_meta();
  if (meta && meta->is_view && meta->attr_version != t._version() && meta->base.requires_grad())
    refresh_view_grad_fn(t, *meta);
  const auto& fn = t.grad_fn();
  if (fn) return Edge(fn, t.output_nr());
  if (t.requires_grad()) return Edge(grad_accumulator(t), 0);
  return Edge();
}

void set_history(const TensorBase& t, const std::shared_ptr<Node>& fn) {
  AutogradMeta& meta = t.impl()->ensure_autograd_meta();
  meta.grad_fn = fn;
  meta.output_nr = fn->add_input_metadata(t);
}

void check_inplace(const TensorBase& t, const char* op_name) {
  if (!GradMode::is_enabled()) return;
  AutogradMeta* meta = t.impl()->autograd_meta();
  if (!meta) return;
  if (meta->is_view && meta->base.defined()) {
    KILN_CHECK(!(meta->base.is_leaf() && meta->base.requires_grad()), op_name,
               "(): a view of a leaf Variable that requires grad is being used in an in-place operation.");
  }
  KILN_CHECK(!(meta->requires_grad && meta->grad_fn == nullptr), op_name,
             "(): a leaf Variable that requires grad is being used in an in-place operation.");
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
    return;
  }
  set_history(t, fn);
}

void mark_view(const TensorBase& view, const TensorBase& base) {
  if (!GradMode::is_enabled()) return;  // as in PyTorch, such views do not require grad
  AutogradMeta& meta = view.impl()->ensure_autograd_meta();
  if (meta.is_view) return;
  meta.is_view = true;
  AutogradMeta* base_meta = base.impl()->autograd_meta();
  meta.base = (base_meta && base_meta->is_view) ? base_meta->base : base;
  meta.attr_version = view._version();
}

}  // namespace kiln
