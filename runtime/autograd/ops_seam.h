// The one seam through which hand-written runtime code (the autograd engine and
// its nodes) calls generated operators. ops_seam.cc is the only runtime file
// that includes generated headers.
#pragma once

#include "runtime/core/tensor_base.h"

namespace kiln {
namespace ops_seam {

TensorBase add(const TensorBase& a, const TensorBase& b);
void add_(const TensorBase& self, const TensorBase& other);
TensorBase clone(const TensorBase& t);
// A contiguous tensor of its own (copied even when `t` is already contiguous); differentiable.
TensorBase contiguous_copy(const TensorBase& t);
TensorBase detach(const TensorBase& t);
TensorBase ones_like(const TensorBase& t);
TensorBase to_dtype(const TensorBase& t, ScalarType dtype);
TensorBase zeros(IntArrayRef sizes, ScalarType dtype);
TensorBase as_strided(const TensorBase& t, IntArrayRef sizes, IntArrayRef strides, int64_t offset);
void copy_(const TensorBase& dst, const TensorBase& src);
// Sums `t` over broadcast dims so that it has `shape` (undoes expand/broadcast).
TensorBase sum_to(const TensorBase& t, IntArrayRef shape);

}  // namespace ops_seam
}  // namespace kiln
