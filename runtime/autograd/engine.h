// The backward engine: runs the graph from some roots down to the leaves.
//
// Iterative (no recursion, so a chain of 100,000 nodes is fine): it counts, for
// every reachable node, how many edges lead into it, and runs a node once all its
// incoming gradients have arrived, latest-created first.
#pragma once

#include <vector>

#include "runtime/autograd/node.h"

namespace kiln {

struct BackwardOptions {
  bool retain_graph = false;
  bool create_graph = false;
};

// tensor.backward() / kiln.autograd.backward(): accumulates into leaves' .grad.
// `grad_outputs[i]` may be undefined for a one-element output (then it is 1).
void backward(const std::vector<TensorBase>& outputs, const std::vector<TensorBase>& grad_outputs,
              BackwardOptions options);

// kiln.autograd.grad(): returns d(outputs)/d(inputs) without touching .grad.
std::vector<TensorBase> grad(const std::vector<TensorBase>& outputs, const std::vector<TensorBase>& inputs,
                             const std::vector<TensorBase>& grad_outputs, BackwardOptions options,
                             bool allow_unused);

}  // namespace kiln
