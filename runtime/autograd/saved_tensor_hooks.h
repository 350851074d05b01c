// Pack/unpack hooks for the tensors autograd saves for backward (torch.autograd.graph.
// saved_tensors_hooks): while hooks are installed on a thread, every tensor a node saves there is
// handed to pack(), and the node keeps only what pack returned; backward asks it for the tensor
// again (unpack). The Python layer implements them over Python callables
// (runtime/python/saved_tensor_hooks.cc); save_on_cpu and offloading schemes are built on them.
#pragma once

#include <memory>

#include "runtime/core/tensor_base.h"

namespace kiln {

// What a pack hook returned, for one saved tensor.
class PackedTensor {
 public:
  virtual ~PackedTensor() = default;
  virtual TensorBase unpack() const = 0;
};

class SavedTensorHooks {
 public:
  virtual ~SavedTensorHooks() = default;
  // `t` is the saved tensor (a saved output without its history).
  virtual std::shared_ptr<PackedTensor> pack(const TensorBase& t) = 0;
};

// This thread's installed hooks, innermost last; the innermost packs.
void push_saved_tensor_hooks(std::shared_ptr<SavedTensorHooks> hooks);
void pop_saved_tensor_hooks();
std::shared_ptr<SavedTensorHooks> current_saved_tensor_hooks();  // null when none

}  // namespace kiln
