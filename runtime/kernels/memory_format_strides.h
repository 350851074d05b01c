// The strides torch's memory formats give new tensors (empty_like, clone, to), for the kernels that
// make copies; the Python layer (python/kiln/_memory_format.py) handles explicit memory_format= arguments.
#pragma once

#include "runtime/core/tensor_base.h"

namespace kiln {

// torch's TensorImpl::compute_non_overlapping_and_dense: t's elements exactly tile a block of memory
// (some permutation of row-major); dims of size 0 or 1 do not count.
bool is_dense_for_memory_format(const TensorBase& t);
// The strides torch's preserve_format gives a new tensor like `t` (empty_like, clone, the *_like
// factories): t's own when t is dense and non-overlapping, else dense strides in t's order of strides
// (torch's infer_dense_strides: a stable insertion sort, stride-0 dims keep their place, equal strides
// put the smaller size inside).
DimVector preserve_format_strides(const TensorBase& t);
// A fresh tensor like `t` with preserve_format_strides(t) (clone, _to_copy: torch's preserve_format).
TensorBase empty_tensor_preserving(const TensorBase& t, ScalarType dtype, Device device);

}  // namespace kiln
