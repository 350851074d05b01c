// A tensor saved by a backward Node, with PyTorch's safety checks:
// - unpacking after the graph was freed raises the "backward through the graph a second time" error;
// - unpacking after the tensor was modified in place raises the version-counter error.
// A saved *output* is stored without its autograd meta, so a node never keeps itself alive
// through its own output (no reference cycle); unpack() reattaches the node.
// Saved while pack/unpack hooks are installed (runtime/autograd/saved_tensor_hooks.h), it keeps only
// what the pack hook returned, and no version check is possible (torch skips it too).
#pragma once

#include <memory>
#include <string>

#include "runtime/core/tensor_base.h"

namespace kiln {

class Node;
class PackedTensor;
class SavedTensorHooks;

class SavedVariable {
 public:
  SavedVariable() = default;
  SavedVariable(const TensorBase& t, bool is_output);

  // `saved_for`: the node doing the unpacking (becomes grad_fn of an unpacked output).
  TensorBase unpack(const std::shared_ptr<Node>& saved_for = nullptr) const;
  void reset_data();
  bool defined() const { return data_.defined() || packed_ || released_; }

 private:
  void pack_with(SavedTensorHooks& hooks, const TensorBase& t);
  TensorBase unpack_packed(const std::shared_ptr<Node>& saved_for) const;
  static TensorBase with_grad_fn(const TensorBase& data, const std::shared_ptr<Node>& fn, uint32_t nr);

  TensorBase data_;
  std::shared_ptr<PackedTensor> packed_;  // what the pack hook returned, when hooks were installed
  // A packed input that requires grad: where its gradient goes (its grad_fn, or its leaf's
  // accumulator), attached to the unpacked tensor so double backward reaches it.
  std::shared_ptr<Node> grad_node_;
  uint32_t grad_input_nr_ = 0;
  uint32_t saved_version_ = 0;
  uint32_t output_nr_ = 0;
  bool is_output_ = false;
  bool requires_grad_ = false;
  bool released_ = false;
  std::string producer_name_;  // for the version error message
};

}  // namespace kiln
