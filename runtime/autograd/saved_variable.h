// A tensor saved by a backward Node, with PyTorch's safety checks:
// - unpacking after the graph was freed raises the "backward through the graph a second time" error;
// - unpacking after the tensor was modified in place raises the version-counter error.
// A saved *output* is stored without its autograd meta, so a node never keeps itself alive
// through its own output (no reference cycle); unpack() reattaches the node.
#pragma once

#include <memory>
#include <string>

#include "runtime/core/tensor_base.h"

namespace kiln {

class Node;

class SavedVariable {
 public:
  SavedVariable() = default;
  SavedVariable(const TensorBase& t, bool is_output);

  // `saved_for`: the node doing the unpacking (becomes grad_fn of an unpacked output).
  TensorBase unpack(const std::shared_ptr<Node>& saved_for = nullptr) const;
  void reset_data();
  bool defined() const { return data_.defined() || released_; }

 private:
  TensorBase data_;
  uint32_t saved_version_ = 0;
  uint32_t output_nr_ = 0;
  bool is_output_ = false;
  bool requires_grad_ = false;
  bool released_ = false;
  std::string producer_name_;  // for the version error message
};

}  // namespace kiln
