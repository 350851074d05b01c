// The node at the end of every path: adds the incoming gradient into leaf.grad.
#pragma once

#include "runtime/autograd/node.h"

namespace kiln {

class AccumulateGrad : public Node {
 public:
  explicit AccumulateGrad(TensorBase variable);
  variable_list apply(variable_list&& grads) override;
  // torch's name() (its class name, `AccumulateGrad`, is the part after the last "::").
  std::string name() const override { return "torch::autograd::AccumulateGrad"; }
  const TensorBase& variable() const { return variable_; }

 private:
  TensorBase variable_;
};

}  // namespace kiln
