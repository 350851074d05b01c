// Shape rules every op shares: broadcasting, reduction dims, and what a tensor's strides say
// about its memory (dense, expanded).
#pragma once

#include "runtime/core/tensor_base.h"

namespace kiln {

// The broadcast shape of two shapes, or a RuntimeError naming the op.
DimVector broadcast_shapes(IntArrayRef a, IntArrayRef b, const char* op_name);
// `t` read as if broadcast to `sizes` (stride 0 where it has size 1 or lacks the dim): an
// internal alias for kernels that read it, with no autograd view tracking.
TensorBase broadcast_for_read(const TensorBase& t, IntArrayRef sizes, const char* op_name);
// Throws when a list of reduction dims names one dim twice (0 and -1 of a 0-dim tensor too).
void check_unique_dims(IntArrayRef dims, int64_t ndim, const char* op_name);
// Whether t's elements exactly tile a block of memory (some permutation of row-major).
bool is_non_overlapping_and_dense(const TensorBase& t);
// torch's has_internal_overlap() == YES: a dim of stride 0 and size > 1 (an expanded tensor).
bool is_expanded(const TensorBase& t);

}  // namespace kiln
