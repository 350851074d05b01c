// The autograd graph: Nodes (backward functions) linked by Edges.
//
// A Node is created by an operation's autograd wrapper. It receives the
// gradients of the op's outputs ("inputs" of the node, one per forward output)
// and returns gradients for the op's inputs, which flow along `next_edges`.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "runtime/core/autograd_meta.h"
#include "runtime/autograd/view_tracking.h"
#include "runtime/core/tensor_base.h"

namespace kiln {

class Node;
using variable_list = std::vector<TensorBase>;

struct Edge {
  std::shared_ptr<Node> function;
  uint32_t input_nr = 0;
  Edge() = default;
  Edge(std::shared_ptr<Node> f, uint32_t nr) : function(std::move(f)), input_nr(nr) {}
  bool is_valid() const { return function != nullptr; }
};

// Shape/dtype/device of one forward output; the engine reduces (sum_to) or
// casts incoming gradients to match it, which is how broadcasting is undone.
struct InputMetadata {
  DimVector shape;
  ScalarType dtype = ScalarType::Undefined;
  Device device;
};

class Node : public std::enable_shared_from_this<Node> {
 public:
  Node();
  virtual ~Node() = default;
  Node(const Node&) = delete;
  Node& operator=(const Node&) = delete;

  // Computes gradients for next_edges from gradients of this node's inputs.
  virtual variable_list apply(variable_list&& grads) = 0;
  virtual std::string name() const = 0;
  // Frees saved tensors after a backward pass without retain_graph.
  virtual void release_variables() {}

  const std::vector<Edge>& next_edges() const { return next_edges_; }
  std::vector<Edge>& mutable_next_edges() { return next_edges_; }
  void add_next_edge(Edge e) { next_edges_.push_back(std::move(e)); }
  size_t num_outputs() const { return next_edges_.size(); }
  // Whether any of the `count` edges from `first` on (one Tensor[] input) needs a gradient.
  bool any_edge_valid(size_t first, size_t count) const {
    for (size_t i = first; i < first + count; ++i)
      if (next_edges_[i].is_valid()) return true;
    return false;
  }

  uint32_t add_input_metadata(const TensorBase& t);
  const InputMetadata& input_metadata(size_t i) const { return input_metadata_[i]; }
  size_t num_inputs() const { return input_metadata_.size(); }

  // Later nodes run first when several are ready (as in PyTorch).
  uint64_t sequence_nr() const { return sequence_nr_; }

  // Hooks on the gradient of input `input_nr` (registered through Tensor.register_hook).
  void add_pre_hook(uint32_t input_nr, GradHook hook) { pre_hooks_.emplace_back(input_nr, std::move(hook)); }
  const std::vector<std::pair<uint32_t, GradHook>>& pre_hooks() const { return pre_hooks_; }
  // Hooks that keep a non-leaf's .grad (retain_grad) run after the others.
  void add_retain_grad_hook(uint32_t input_nr, GradHook hook) {
    retain_grad_hooks_.emplace_back(input_nr, std::move(hook));
  }
  const std::vector<std::pair<uint32_t, GradHook>>& retain_grad_hooks() const { return retain_grad_hooks_; }

 private:
  std::vector<Edge> next_edges_;
  std::vector<InputMetadata> input_metadata_;
  std::vector<std::pair<uint32_t, GradHook>> pre_hooks_;
  std::vector<std::pair<uint32_t, GradHook>> retain_grad_hooks_;
  uint64_t sequence_nr_;
};

// Nodes are destroyed through delete_node, which never recurses (a chain of
// 100,000 nodes would otherwise overflow the stack). Create them with make_node.
void delete_node(Node* node);
template <typename T, typename... Args>
std::shared_ptr<T> make_node(Args&&... args) {
  return std::shared_ptr<T>(new T(std::forward<Args>(args)...), [](T* p) { delete_node(p); });
}

// Where the gradient of `t` should go: its grad_fn, its AccumulateGrad, or nowhere.
Edge gradient_edge(const TensorBase& t);
// The AccumulateGrad node of a leaf that requires grad (created on first use).
std::shared_ptr<Node> grad_accumulator(const TensorBase& leaf);
// Makes `t` an output of `fn` (sets grad_fn and output_nr, records its metadata).
void set_history(const TensorBase& t, const std::shared_ptr<Node>& fn);
// For in-place ops: the same, after checking that `t` may be modified in place.
void rebase_history(const TensorBase& t, const std::shared_ptr<Node>& fn, const char* op_name);
// Before an in-place op: throws if modifying `t` would make gradients wrong.
void check_inplace(const TensorBase& t, const char* op_name);
// Before recording an in-place op on `t`: throws, as torch, when `t` is a view that may not be
// modified in place (an output of unbind/split, or made in no-grad mode; see ViewCreation).
void check_view_rebase(const TensorBase& t);
// t.grad_fn, rebuilt first when `t` is a view whose base was modified in place since (torch's
// grad_fn getter): what Python's Tensor.grad_fn shows.
std::shared_ptr<Node> current_grad_fn(const TensorBase& t);
// Whether autograd must record an op with these inputs.
template <typename Range>  // TensorRefs for ops with Tensor[] inputs
bool any_requires_grad(const Range& tensors) {
  for (const TensorBase* t : tensors)
    if (t->defined() && t->requires_grad()) return true;
  return false;
}
inline bool any_requires_grad(std::initializer_list<const TensorBase*> tensors) {
  return any_requires_grad<std::initializer_list<const TensorBase*>>(tensors);
}

}  // namespace kiln
