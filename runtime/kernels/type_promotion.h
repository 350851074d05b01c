// PyTorch's type promotion between the operands of an op, and the Python numbers that take part
// in it as "wrapped" 0-dim tensors.
#pragma once

#include <vector>

#include "runtime/core/tensor_base.h"

namespace kiln {

// PyTorch's result_type: dims > 0 tensors beat 0-dim tensors, which beat wrapped
// Python numbers, unless the weaker one is of a higher category (bool < int < float).
ScalarType result_type(const std::vector<TensorBase>& inputs);
// A 0-dim CPU tensor holding a Python number, marked as a wrapped number for promotion (it may
// join tensors of any device, as in torch).
TensorBase wrap_scalar(const Scalar& s);

}  // namespace kiln
