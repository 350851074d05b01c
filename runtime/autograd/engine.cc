#include "runtime/autograd/engine.h"

#include <queue>
#include <unordered_map>
#include <unordered_set>

#include "runtime/autograd/accumulate_grad.h"
#include "runtime/autograd/node_post_hooks.h"
#include "runtime/dispatch/grad_mode.h"
#include "runtime/dispatch/profiler.h"
#include "runtime/autograd/ops_seam.h"
#include "runtime/core/error.h"

namespace kiln {
namespace {

// Feeds the user's root gradients into the graph when there are several roots.
class GraphRoot : public Node {
 public:
  GraphRoot(const std::vector<Edge>& roots, variable_list grads) : grads_(std::move(grads)) {
    for (const Edge& e : roots) add_next_edge(e);
  }
  variable_list apply(variable_list&&) override { return grads_; }
  std::string name() const override { return "GraphRoot"; }

 private:
  variable_list grads_;
};

struct Capture {
  Node* fn;
  uint32_t input_nr;
  size_t output_index;
};

struct ByNewestFirst {
  bool operator()(const Node* a, const Node* b) const { return a->sequence_nr() < b->sequence_nr(); }
};

// Brings a gradient to the shape/dtype the receiving node expects (undoing broadcasting).
TensorBase validate_grad(const TensorBase& grad, const InputMetadata& meta, const Node& producer) {
  TensorBase g = grad;
  if (!(IntArrayRef(meta.shape) == g.sizes())) {
    // Expandable: meta.shape broadcasts to g's shape.
    bool expandable = static_cast<int64_t>(meta.shape.size()) <= g.dim();
    for (size_t i = 0; expandable && i < meta.shape.size(); ++i) {
      int64_t gs = g.sizes()[g.dim() - meta.shape.size() + i];
      expandable = meta.shape[i] == gs || meta.shape[i] == 1;
    }
    KILN_CHECK(expandable, "Function ", producer.name(), " returned an invalid gradient - got ", shape_str(g.sizes()),
               " but expected shape compatible with ", shape_str(meta.shape));
    g = ops_seam::sum_to(g, meta.shape);
  }
  if (g.dtype() != meta.dtype) g = ops_seam::to_dtype(g, meta.dtype);
  return g;
}

// Whether a gradient arriving for a slot that already holds one can be added into it in place,
// as torch's InputBuffer does: no graph is being built, and nothing else holds the slot's tensor or
// its memory (a gradient a node returned twice, a view, one a hook kept: those are added out of
// place). Saves a full-size allocation per extra gradient (a weight used at every step of a loop).
bool accumulates_in_place(const TensorBase& slot, const TensorBase& g) {
  return !GradMode::is_enabled() && slot.use_count() == 1 && slot.impl()->storage()->use_count() == 1 &&
         slot.sizes() == g.sizes() && slot.dtype() == g.dtype() && slot.numel() > 0 && slot.is_contiguous() &&
         !slot.requires_grad();  // (an empty tensor counts as contiguous whatever its strides)
}

void run_hooks(Node& node, variable_list& grads) {
  for (const auto& [nr, hook] : node.pre_hooks()) {
    if (nr < grads.size() && grads[nr].defined()) {
      TensorBase replaced = (*hook)(grads[nr]);
      if (replaced.defined()) grads[nr] = replaced;
    }
  }
  for (const auto& [nr, hook] : node.retain_grad_hooks()) {
    if (nr < grads.size() && grads[nr].defined()) (*hook)(grads[nr]);
  }
}

// Runs the graph below `roots`. With `captures`, only nodes that lead to a captured
// edge run, AccumulateGrad is skipped, and captured gradients are returned.
variable_list execute(const std::vector<Edge>& roots, variable_list root_grads, BackwardOptions options,
                      const std::vector<Capture>& captures, size_t num_captured) {
  std::shared_ptr<Node> root = make_node<GraphRoot>(roots, std::move(root_grads));
  const bool capturing = !captures.empty() || num_captured > 0;

  // 1. Reachable nodes (iterative DFS), and which of them are needed.
  std::vector<Node*> order;  // post-order: children before parents
  std::unordered_set<Node*> seen;
  {
    std::vector<std::pair<Node*, size_t>> stack{{root.get(), 0}};
    seen.insert(root.get());
    while (!stack.empty()) {
      auto& [node, next] = stack.back();
      if (next < node->next_edges().size()) {
        Node* child = node->next_edges()[next++].function.get();
        if (child && seen.insert(child).second) stack.push_back({child, 0});
      } else {
        order.push_back(node);
        stack.pop_back();
      }
    }
  }
  // A node runs when one of its edges leads to a captured input or to a node that runs; a node whose
  // inputs are captured but that leads to no other capture only receives its gradients (torch's
  // exec_info: `grad(z, y)` does not run y's grad_fn, so it frees none of y's saved tensors).
  std::unordered_set<Node*> runs, targets;
  if (capturing) {
    for (const Capture& c : captures) targets.insert(c.fn);
    for (Node* n : order) {  // children first
      bool run = false;
      for (const Edge& e : n->next_edges())
        run = run || (e.function && (runs.count(e.function.get()) > 0 || targets.count(e.function.get()) > 0));
      if (run) runs.insert(n);
    }
  }
  auto is_needed = [&](Node* n) { return !capturing || runs.count(n) > 0 || targets.count(n) > 0; };
  auto is_run = [&](Node* n) { return !capturing || runs.count(n) > 0; };

  // 2. Dependencies: incoming edges from needed nodes.
  std::unordered_map<Node*, int> dependencies;
  for (Node* n : order) {
    if (!is_needed(n)) continue;
    for (const Edge& e : n->next_edges())
      if (e.function && is_needed(e.function.get())) ++dependencies[e.function.get()];
  }

  // 3. Run ready nodes, newest first.
  AutoGradMode grad_mode(options.create_graph);
  variable_list captured(num_captured);
  std::unordered_map<Node*, variable_list> buffers;
  std::priority_queue<Node*, std::vector<Node*>, ByNewestFirst> ready;
  ready.push(root.get());
  buffers[root.get()] = {};
  while (!ready.empty()) {
    Node* node = ready.top();
    ready.pop();
    variable_list grads = std::move(buffers[node]);
    buffers.erase(node);
    grads.resize(node->num_inputs());
    run_hooks(*node, grads);
    for (const Capture& c : captures)
      if (c.fn == node) captured[c.output_index] = grads[c.input_nr];
    if (!is_run(node)) continue;  // autograd.grad never accumulates, nor runs a node below every capture

    // torch's two events per node: the engine's evaluation and, inside it, the node itself.
    profiler::Scope evaluate_scope, node_scope;
    if (profiler::enabled() && node != root.get()) {  // torch records no event for the graph's root
      evaluate_scope.open("autograd::engine::evaluate_function: " + node->name());
      node_scope.open(node->name());
    }
    // grad_fn.register_hook's hooks see what the node received and may replace what it computed.
    const bool post_hooks = node_has_post_hooks(node);
    variable_list received = post_hooks ? grads : variable_list();
    variable_list outputs = node->apply(std::move(grads));
    if (!options.retain_graph) node->release_variables();
    KILN_CHECK(outputs.size() == node->num_outputs() || node->num_outputs() == 0, "Function ", node->name(),
               " returned an incorrect number of gradients (expected ", node->num_outputs(), ", got ",
               outputs.size(), ")");
    if (post_hooks) {  // as torch: the hooks see the gradients already reduced / cast to their inputs' metadata
      for (size_t i = 0; i < node->num_outputs(); ++i) {
        const Edge& e = node->next_edges()[i];
        if (e.function && outputs[i].defined())
          outputs[i] = validate_grad(outputs[i], e.function->input_metadata(e.input_nr), *node);
      }
      run_node_post_hooks(node, outputs, received);
      KILN_CHECK(outputs.size() == node->num_outputs() || node->num_outputs() == 0, "a hook of ", node->name(),
                 " returned ", outputs.size(), " gradients, expected ", node->num_outputs());
    }
    for (size_t i = 0; i < node->num_outputs(); ++i) {
      const Edge& e = node->next_edges()[i];
      if (!e.function || !is_needed(e.function.get())) continue;
      Node* next = e.function.get();
      variable_list& buf = buffers[next];
      if (buf.size() < next->num_inputs()) buf.resize(next->num_inputs());
      if (outputs[i].defined()) {
        TensorBase g = validate_grad(outputs[i], next->input_metadata(e.input_nr), *node);
        TensorBase& slot = buf[e.input_nr];
        if (!slot.defined()) {
          slot = g;
        } else if (accumulates_in_place(slot, g)) {
          ops_seam::add_(slot, g);
        } else {
          slot = ops_seam::add(slot, g);
        }
      }
      if (--dependencies[next] == 0) ready.push(next);
    }
  }
  return captured;
}

void make_roots(const std::vector<TensorBase>& outputs, const std::vector<TensorBase>& grad_outputs,
                std::vector<Edge>* roots, variable_list* root_grads) {
  KILN_CHECK(grad_outputs.empty() || grad_outputs.size() == outputs.size(), "grad can be implicitly created only for "
             "scalar outputs; got ", grad_outputs.size(), " gradients for ", outputs.size(), " tensors");
  for (size_t i = 0; i < outputs.size(); ++i) {
    const TensorBase& out = outputs[i];
    KILN_CHECK(out.defined(), "backward(): tensor ", i, " is undefined");
    Edge e = gradient_edge(out);
    KILN_CHECK(e.is_valid(), "element ", i, " of tensors does not require grad and does not have a grad_fn");
    TensorBase g = grad_outputs.empty() ? TensorBase() : grad_outputs[i];
    if (!g.defined()) {
      KILN_CHECK(out.numel() == 1, "grad can be implicitly created only for scalar outputs");
      g = ops_seam::ones_like(out);
    } else {
      KILN_CHECK(g.sizes() == out.sizes(), "Mismatch in shape: grad_output[", i, "] has a shape of ",
                 shape_str(g.sizes()), " and output[", i, "] has a shape of ", shape_str(out.sizes()), ".");
    }
    roots->push_back(std::move(e));
    root_grads->push_back(std::move(g));
  }
}

}  // namespace

void backward(const std::vector<TensorBase>& outputs, const std::vector<TensorBase>& grad_outputs,
              BackwardOptions options) {
  std::vector<Edge> roots;
  variable_list root_grads;
  make_roots(outputs, grad_outputs, &roots, &root_grads);
  execute(roots, std::move(root_grads), options, {}, 0);
}

std::vector<TensorBase> grad(const std::vector<TensorBase>& outputs, const std::vector<TensorBase>& inputs,
                             const std::vector<TensorBase>& grad_outputs, BackwardOptions options,
                             bool allow_unused) {
  std::vector<Edge> roots;
  variable_list root_grads;
  make_roots(outputs, grad_outputs, &roots, &root_grads);
  std::vector<Capture> captures;
  std::vector<std::shared_ptr<Node>> keep_alive;
  for (size_t i = 0; i < inputs.size(); ++i) {
    KILN_CHECK(inputs[i].defined() && inputs[i].requires_grad(), "One of the differentiated Tensors does not require grad");
    Edge e = gradient_edge(inputs[i]);
    keep_alive.push_back(e.function);
    captures.push_back({e.function.get(), e.input_nr, i});
  }
  variable_list result = execute(roots, std::move(root_grads), options, captures, inputs.size());
  for (size_t i = 0; i < result.size(); ++i) {
    KILN_CHECK(result[i].defined() || allow_unused,
               "One of the differentiated Tensors appears to not have been used in the graph. Set allow_unused=True "
               "if this is the desired behavior.");
  }
  return result;
}

}  // namespace kiln
