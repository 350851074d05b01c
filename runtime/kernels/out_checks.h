// The rules for a tensor an op writes into (out=, in-place): torch's overlap errors, and an
// out= resized to the result's shape.
#pragma once

#include <initializer_list>

#include "runtime/core/tensor_base.h"

namespace kiln {

// Throws when `in` and `out` share some memory but are not the same elements
// (x[1:] = x[:-1] would read values it already overwrote).
void check_no_partial_overlap(const TensorBase& out, const TensorBase& in, const char* op_name);
// Throws when several elements of a tensor to be written share memory (an expanded tensor).
void check_no_internal_overlap(const TensorBase& out, const char* op_name);
// Throws when an out= tensor shares memory with an input of a kernel that resizes or
// writes `out` before it has read every input (reductions, mm).
void check_out_is_not_an_input(const TensorBase& out, std::initializer_list<const TensorBase*> inputs,
                               const char* op_name);
// The out= tensor of a kernel, resized to `shape` (it must already have `dtype`), or a new
// tensor on `device` when `out` is undefined.
TensorBase resized_out(const TensorBase& out, IntArrayRef shape, ScalarType dtype, Device device, const char* op_name);
// `result` (computed in full first, so out may alias an input) copied into the out= tensor of
// its dtype, resized to its shape; `result` itself when there is no out.
TensorBase result_into_out(const TensorBase& result, const TensorBase& out, const char* op_name);

}  // namespace kiln
